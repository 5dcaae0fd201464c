import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cleanHtml, plainText, plainTextInTurns, plainTextStart, urlAsChecked } from '../src/domain/html.js';
import { collationKey, escapeTermName, foldForSearch, sanitizeTextField, slugify, withoutTrailing } from '../src/domain/text.js';
import { turnsDuring } from './helpers/turns.js';

describe('escapeTermName', () => {
  it.each([
    ['Food & Drink', 'Food &amp; Drink'],
    ['Food &amp; Drink', 'Food &amp; Drink'],
    ['Caf&eacute;', 'Caf&eacute;'],
    ['A &#038; B', 'A &#038; B'],
    ['A &#x26; B', 'A &#x26; B'],
    ['&', '&amp;'],
    ['&&', '&amp;&amp;'],
    ['&amp', '&amp;amp'],
    ['& amp;', '&amp; amp;'],
    ['&#;', '&amp;#;'],
    ['&#x;', '&amp;#x;'],
    ['&#xZZ;', '&amp;#xZZ;'],
    ['&1a;', '&amp;1a;'],
    ['a < b > c', 'a &lt; b &gt; c'],
    ['<b>Bold</b>', '&lt;b&gt;Bold&lt;/b&gt;'],
    ['&lt;tag&gt; & more', '&lt;tag&gt; &amp; more'],
    ['Rock &amp; Roll & Blues', 'Rock &amp; Roll &amp; Blues'],
    ['"quotes" and \'apostrophes\'', '"quotes" and \'apostrophes\''],
    ['Crème brûlée', 'Crème brûlée'],
    ['', ''],
  ])('escapes %j as %j', (name, expected) => {
    expect(escapeTermName(name)).toBe(expected);
  });

  it('is idempotent', () => {
    const once = escapeTermName('Fish & Chips <special> &amp; more');
    expect(escapeTermName(once)).toBe(once);
  });
});

describe('sanitizeTextField', () => {
  it.each([
    ['  Food <b>&</b> Drink ', 'Food & Drink'],
    ['<p>Hello</p>\n<br/>World', 'Hello World'],
    ['<a href="https://example.test/?a=1&b=2">link</a> text', 'link text'],
    ['<b></b>', ''],
    ['line\none\r\n\ttwo', 'line one two'],
    ['a    b', 'a b'],
    ['\n\t  padded  \r\n', 'padded'],
    ['a\u0000b\u0007c\u007fd', 'abcd'],
    ['a\u000bb\u000cc\u001fd', 'abcd'],
    ['a \u0001 b', 'a b'],
    ['a\u0001 \u0002 \u0003b', 'a b'],
    [' \u0001 lead', 'lead'],
    ['trail \u0001 ', 'trail'],
    ['1 < 2', '1 < 2'],
    ['a < b > c', 'a < b > c'],
    ['x <y', 'x <y'],
    ['Café & Crème', 'Café & Crème'],
    ['&amp; stays', '&amp; stays'],
    ['日本語', '日本語'],
    ['', ''],
  ])('sanitises %j as %j', (text, expected) => {
    expect(sanitizeTextField(text)).toBe(expected);
  });
});

describe('slugify', () => {
  it.each([
    ['An Event!', 'an-event'],
    ['Food & Drink', 'food-drink'],
    ['Crème brûlée', 'creme-brulee'],
    ['Straße', 'strasse'],
    ['Ærøskøbing', 'aeroskobing'],
    ['Łódź', 'lodz'],
    ['Ünïcödé Façade', 'unicode-facade'],
    ['Hello_World', 'hello_world'],
    ['Music', 'music'],
    ['music-2', 'music-2'],
    ['  spaced   out  ', 'spaced-out'],
    ['--a--b--', 'a-b'],
    ['a - b -- c', 'a-b-c'],
    ['v1.2.3', 'v1-2-3'],
    ['what? (really) [yes]', 'what-really-yes'],
    ['path/to:thing', 'path-tothing'],
    ['<b>Bold</b> move', 'bold-move'],
    ['Rock <em>&amp;</em> Roll', 'rock-roll'],
    ['Tom &amp; Jerry', 'tom-jerry'],
    ['Caf&eacute;', 'caf'],
    ['A &#038; B', 'a-b'],
    ['日本', '%e6%97%a5%e6%9c%ac'],
    ['Tokyo 日本', 'tokyo-%e6%97%a5%e6%9c%ac'],
    ['Москва', '%d0%bc%d0%be%d1%81%d0%ba%d0%b2%d0%b0'],
    ['€5 entry', 'e5-entry'],
    ['!!!', ''],
    ['', ''],
  ])('slugifies %j as %j', (text, expected) => {
    expect(slugify(text)).toBe(expected);
  });

  it.each([
    // non-Latin letters keep their identity, percent-encoded as WordPress encodes them
    ['Київ', '%d0%ba%d0%b8%d1%97%d0%b2'],
    ['Йошкар-Ола', '%d0%b9%d0%be%d1%88%d0%ba%d0%b0%d1%80-%d0%be%d0%bb%d0%b0'],
    ['한국', '%ed%95%9c%ea%b5%ad'],
    ['ガ', '%e3%82%ac'],
    // decomposed input is read as the composed text
    ['Cre\u0300me', 'creme'],
    ['\u0418\u0306', '%d0%b9'],
  ])('percent-encodes the non-Latin %j as WordPress does: %j', (text, expected) => {
    expect(slugify(text)).toBe(expected);
  });

  it.each([
    ['100% fun', '100-fun'],
    ['50%off', '50off'],
    ['%', ''],
    ['already %E6%97%A5 encoded', 'already-%e6%97%a5-encoded'],
  ])('keeps only percent signs that start an octet: %j → %j', (text, expected) => {
    expect(slugify(text)).toBe(expected);
  });

  it('cuts at 200 characters', () => {
    expect(slugify('a'.repeat(250))).toBe('a'.repeat(200));
    expect(slugify('a'.repeat(200))).toBe('a'.repeat(200));
    expect(slugify('a'.repeat(199) + ' b')).toBe('a'.repeat(199));
  });

  it('never leaves a partial %xx at the cut', () => {
    expect(slugify('a'.repeat(199) + '日')).toBe('a'.repeat(199));
    expect(slugify('a'.repeat(198) + '日')).toBe('a'.repeat(198));
  });

  it('never cuts a character between its octets', () => {
    expect(slugify('a'.repeat(191) + '日本')).toBe('a'.repeat(191) + '%e6%97%a5');
    expect(slugify('a'.repeat(197) + '日')).toBe('a'.repeat(197));
    expect(slugify('a'.repeat(194) + '日本')).toBe('a'.repeat(194));
    expect(slugify('a'.repeat(196) + '日本')).toBe('a'.repeat(196));
    expect(slugify('a'.repeat(198) + 'ö日')).toBe('a'.repeat(198) + 'o');
  });

  it.each(Array.from({ length: 25 }, (_, i) => 180 + i))('gives a decodable slug of at most 200 characters for %i letters then non-Latin text', (n) => {
    const slug = slugify('a'.repeat(n) + ' 日本語 Київ 한국');
    expect(slug.length).toBeLessThanOrEqual(200);
    expect(slug.startsWith('a'.repeat(Math.min(n, 200)))).toBe(true);
    expect(slug).not.toMatch(/-$/);
    expect(slug).not.toMatch(/%[0-9a-f]?$/);
    expect(() => decodeURIComponent(slug)).not.toThrow();
  });
});

/** The classes of utf8mb4_unicode_520_ci over the Latin, Greek and Cyrillic blocks: weights → characters. */
const CLASSES = readFileSync(new URL('./fixtures/unicode-520-classes.tsv', import.meta.url), 'utf8')
  .split('\n')
  .filter((line) => line && !line.startsWith('#'))
  .map((line) => {
    const [weights, points] = line.split('\t') as [string, string];
    return { weights: weights === '-' ? '' : weights, chars: points.split(' ').map((p) => String.fromCodePoint(parseInt(p, 16))) };
  });

describe('collationKey (MySQL utf8mb4_unicode_520_ci, as WordPress compares)', () => {
  it('gives the characters of one class of the collation one key, and those of different classes different keys', () => {
    const classOf = new Map<string, string>();
    for (const { weights, chars } of CLASSES) {
      const keys = new Set(chars.map(collationKey));
      expect(keys.size, `${weights}: ${chars.join(' ')}`).toBe(1);
      // a lone space weighs as a space, and PAD SPACE makes it equal to nothing: the ignorable characters share ''
      const key = [...keys][0]!;
      if (weights !== '' && weights !== '020A') {
        expect(classOf.get(key), `${JSON.stringify(key)}: ${chars.join(' ')}`).toBeUndefined();
        classOf.set(key, weights);
      }
    }
    expect(CLASSES.length).toBeGreaterThan(500);
  });

  it('weighs each character as its key does, letter by letter (ß as ss, Æ as ae)', () => {
    const single = new Map(CLASSES.flatMap(({ weights, chars }) => chars.map((c) => [c, weights] as const)));
    let checked = 0;
    for (const { weights, chars } of CLASSES) {
      if (weights === '' || weights === '020A') continue;
      for (const c of chars) {
        const parts = [...collationKey(c)].map((k) => single.get(k));
        if (parts.includes(undefined)) continue; // a key outside these blocks (Ⱥ is ⱥ)
        expect(parts.join(''), c).toBe(weights);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(1500);
  });

  it('compares whole texts as the collation does', () => {
    const equal: [string, string][] = [
      ['Straße', 'STRASSE'], ['Æon', 'aeon'], ['Œuvre', 'oeuvre'], ['ﬁlm', 'film'], ['Café ', 'cafe'], ['Café\u00a0', 'cafe'],
      ['İSTANBUL', 'istanbul'], ['Ølstue', 'olstue'], ['Łódź', 'lodz'], ['ΣΟΦΟΣ', 'σοφος'], ['Ёлка', 'елка'], ['Ａｂｃ', 'abc'],
      ['e\u0301', 'é'], ['и\u0306', 'и'], ['Zoë', 'ZOE'], ['Dvořák', 'DVORAK'],
    ];
    const different: [string, string][] = [['ısparta', 'isparta'], ['Йогурт', 'иогурт'], ['cafe\t', 'cafe'], [' lead', 'lead'], ['a b', 'a  b']];
    for (const [a, b] of equal) expect(collationKey(a), `${a} = ${b}`).toBe(collationKey(b));
    for (const [a, b] of different) expect(collationKey(a), `${a} ≠ ${b}`).not.toBe(collationKey(b));
  });
});

describe('foldForSearch (LIKE under the same collation: one character with one)', () => {
  it('folds case, accents and the variants of a letter, but expands nothing', () => {
    expect(foldForSearch('ZÜRICH Øresund İstanbul Łódź')).toBe('zurich oresund istanbul lodz');
    expect(foldForSearch('Straße')).toBe('straße'); // 'Straße' LIKE '%strasse%' is false in MySQL
    expect(foldForSearch('ẞ')).toBe(foldForSearch('ß'));
    expect(foldForSearch('ﬁlm')).not.toContain('fi');
    expect(foldForSearch('ısparta')).not.toBe(foldForSearch('isparta'));
    expect(foldForSearch('Йогурт')).toBe('йогурт');
  });
});

describe('every text rule runs in time linear in its input', () => {
  // runs a pattern once retried from each of their positions, a megabyte each (the body limit): quadratic, each took
  // from minutes to hours
  const megabyteOf = (unit: string) => `a${unit.repeat(Math.ceil(1_000_000 / unit.length))}x`;
  it.each([
    ['slugify', slugify, ['&', '&a', '&#', 'a=1&']],
    ['collationKey', collationKey, [' ']],
    ['plainText', plainText, ['<', '<li', '<br ', '<a ', '</p ', '<script>', ' \t', ' \n']],
    ['sanitizeTextField', sanitizeTextField, ['<', ' ', '<a']],
    ['withoutTrailing', (text: string) => withoutTrailing(text, '/'), ['/']],
  ] as const)('%s', (_, rule, units) => {
    for (const unit of units) {
      const started = performance.now();
      rule(megabyteOf(unit));
      expect(performance.now() - started, JSON.stringify(unit)).toBeLessThan(2_000);
    }
  });

  it('plainText reads a `<` that white space, another `<` or the end follows as text, as browsers do', () => {
    expect(plainText('Price < 10 €<br>Doors at 7')).toBe('Price < 10 €\nDoors at 7');
    expect(plainText('<<<')).toBe('<<<');
    expect(plainText('a <<b>c')).toBe('a <c');
    expect(plainText('<p>x</p><script>y()</script><script>never closed')).toBe('x\nnever closed');
  });
});

describe('plainTextStart: the start of a long text, made of only the markup it takes', () => {
  const pieces = ['<', '>', '&', ';', '#', 'x', '1', '0', 'a', 'amp', 'lt;', ' ', '\t', '\n', '\u00a0', '<br>', '<p>', '</p>', '<li>', '<b>', '</b>', '<script>', '</script>', '&amp;', '&#0000065;', '&#x1F600;', '&hellip;', 'word'];

  it('is the start of plainText of the whole, as long as asked or all of it', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 80 }).map((parts) => parts.join('')), fc.integer({ min: 0, max: 60 }), (html, length) => {
        const whole = plainText(html);
        const start = plainTextStart(html, length);
        expect(whole.startsWith(start), JSON.stringify([html, length])).toBe(true);
        expect(start.length).toBeGreaterThanOrEqual(Math.min(length, whole.length));
      }),
      { numRuns: 30_000 },
    );
  });

  it('plainTextInTurns makes the same text a piece at a time, however the pieces fall', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...pieces), { maxLength: 60 }).map((parts) => parts.join('')), fc.integer({ min: 1, max: 40 }), async (html, perTurn) => {
        expect(await plainTextInTurns(html, perTurn), JSON.stringify([html, perTurn])).toBe(plainText(html));
      }),
      { numRuns: 3_000 },
    );
    // 3.6 MB of references: other callbacks run between its pieces of 64 KiB
    const { result: text, turns } = await turnsDuring(() => plainTextInTurns('&lt;'.repeat(900_000)));
    expect(text).toBe('<'.repeat(900_000));
    expect(turns).toBeGreaterThanOrEqual(Math.floor(3_600_000 / 65_536));
  });

  it('reads of a long text what the start takes: 65,536 characters of 3.6 MB of references, at once', () => {
    const references = '&lt;'.repeat(900_000);
    const started = performance.now();
    expect(plainTextStart(references, 65_536)).toBe('<'.repeat(65_536));
    const took = performance.now() - started;
    const wholeStarted = performance.now();
    expect(plainText(references)).toHaveLength(900_000);
    expect(took * 4, 'a tenth of the text, made in less than a quarter of the time it all takes').toBeLessThan(performance.now() - wholeStarted);
  });
});

describe('a URL with comments inside, as the sanitizer checks its scheme', () => {
  // the sanitizer's own loop, as it reads a URL before checking its scheme: one comment at a time, from the start
  const checkersLoop = (url: string) => {
    let href = url.replace(/[\x00-\x20]+/g, '');
    for (;;) {
      const open = href.indexOf('<!--');
      const close = open === -1 ? -1 : href.indexOf('-->', open + 4);
      if (close === -1) return href;
      href = href.slice(0, open) + href.slice(close + 3);
    }
  };

  it('urlAsChecked reads it as that loop does, in one pass', () => {
    for (const url of ['<!<!---->--x-->y', '<!---->', 'a<!--b-->c<!--d', '<!-- x -->javascript:', 'java<!--\n-->script:', '<!--->-->z', '\ud800<!---->\udc00']) {
      expect(urlAsChecked(url), JSON.stringify(url)).toBe(checkersLoop(url));
    }
    fc.assert(
      fc.property(fc.array(fc.constantFrom('<', '!', '-', '>', 'a', ' ', '\t', ':', '<!--', '-->'), { maxLength: 40 }).map((parts) => parts.join('')), (url) => {
        const expected = url.replace(/[\x00-\x20]+/g, '').includes('<!--') ? checkersLoop(url) : url;
        expect(urlAsChecked(url)).toBe(expected);
      }),
      { numRuns: 20_000 },
    );
  });

  it('an author\'s link keeps what the check passed, drops what it refused, and costs one pass', () => {
    const clean = (html: string) => cleanHtml(html, 'content', false);
    expect(clean('<a href="https://e.test/a<!-- note -->b">x</a>')).toBe('<a href="https://e.test/ab">x</a>');
    expect(clean('<a href="java<!-- -->script:alert(1)">x</a>')).toBe('<a>x</a>');
    expect(clean('<img src="jav<!---->ascript:x" alt="y" />')).toBe('<img alt="y" />');
    expect(clean('<a href="https://e.test/a b">x</a>')).toBe('<a href="https://e.test/a b">x</a>'); // no comment: as sent
    // the schemes the spec names are kept, and relative URLs; any other scheme, and `//host`, are dropped
    for (const kept of ['mailto:a@e.test', 'tel:+15550100', 'http://e.test/', '/events/', 'page?x=1']) expect(clean(`<a href="${kept}">x</a>`)).toBe(`<a href="${kept}">x</a>`);
    for (const dropped of ['data:text/html,x', 'vbscript:x', 'ftp://e.test/', '//e.test/x']) expect(clean(`<a href="${dropped}">x</a>`)).toBe('<a>x</a>');
    const many = `<a href="${'a<!---->'.repeat(125_000)}">x</a>`; // a megabyte: 98 s in the sanitizer's loop
    const started = performance.now();
    expect(clean(many)).toBe(`<a href="${'a'.repeat(125_000)}">x</a>`);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
