/** Text rules of WordPress that the wire format depends on: slugs, escaping of names, plain-text fields. */

const ENTITY = /&(?:[a-zA-Z][a-zA-Z0-9]*|#\d+|#x[0-9a-fA-F]+);/y;

/** Escapes `&`, `<`, `>` as WordPress stores term names (`Food & Drink` → `Food &amp; Drink`); entities stay as they are. */
export function escapeTermName(name: string): string {
  return escapedKeepingEntities(name, TERM_ESCAPES);
}

/**
 * WordPress's `esc_html`: `&` (but in an entity), `<`, `>`, `"` and `'` as entities. The plugin shows an event's
 * stored website so (`?a=1&b=2` → `?a=1&amp;b=2`).
 */
export function escapeHtml(text: string): string {
  return escapedKeepingEntities(text, HTML_ESCAPES);
}

const TERM_ESCAPES: Record<string, string> = { '<': '&lt;', '>': '&gt;' };
const HTML_ESCAPES: Record<string, string> = { ...TERM_ESCAPES, '"': '&quot;', "'": '&#039;' };

/** `&` as `&amp;` unless it starts an entity, and the characters of `escapes` as it says. */
function escapedKeepingEntities(text: string, escapes: Record<string, string>): string {
  if (!/[&<>"']/.test(text)) return text; // most names and addresses
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '&') {
      ENTITY.lastIndex = i;
      out += ENTITY.test(text) ? '&' : '&amp;';
    } else out += escapes[ch] ?? ch;
  }
  return out;
}

/** The text `escapeHtml` escaped (what an import reads back from the plugin's answers). */
export function unescapeHtml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#0*39);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"' })[name] ?? "'");
}

/*
 * Every rule here runs on text a client sent, up to the body limit, so each one is linear in its length. A pattern
 * that a failing match retries at every position of a run (`/ +$/` on spaces followed by a letter, `/&[^\s;]+;/` on
 * `&&&…`) costs the square of that run: a megabyte of it held the event loop for hours. Such rules are loops instead.
 */

/** `text` without the characters of `chars` it ends with (`/[…]+$/`, without retrying the run at each of its positions). */
export function withoutTrailing(text: string, chars: string): string {
  let end = text.length;
  while (end > 0 && chars.includes(text[end - 1]!)) end--;
  return end === text.length ? text : text.slice(0, end);
}

/**
 * `text` without its character references and anything looking like one (`&` up to the next `;`, with no white space
 * between), as `sanitize_title` removes `/&.+?;/`. One pass: when the text after an `&` meets white space or its
 * end before a `;`, so does the text after every `&` until there.
 */
function withoutReferences(text: string): string {
  const run = /[^\s;]*/y;
  let out = '';
  let from = 0;
  for (let amp = text.indexOf('&'); amp >= 0;) {
    run.lastIndex = amp + 1;
    run.test(text);
    const end = run.lastIndex;
    if (end > amp + 1 && text[end] === ';') {
      out += text.slice(from, amp);
      from = end + 1;
      amp = text.indexOf('&', from);
    } else {
      amp = text.indexOf('&', text[end] === ';' ? amp + 1 : end);
    }
  }
  return from === 0 ? text : out + text.slice(from);
}

/** WordPress's `sanitize_text_field`: tags removed, line breaks and runs of white space folded, trimmed. */
export function sanitizeTextField(text: string): string {
  return text
    .replace(/<(?!\s)[^<>]*>/g, '') // a tag; a `<` that starts no tag (`1 < 2`) is text, as in WordPress
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '')
    .replace(/[\r\n\t ]+/g, ' ')
    .trim();
}

const TRANSLITERATION: Record<string, string> = {
  ß: 'ss', æ: 'ae', Æ: 'AE', ø: 'o', Ø: 'O', œ: 'oe', Œ: 'OE', đ: 'd', Đ: 'D', ð: 'd', Ð: 'D', þ: 'th', Þ: 'TH',
  ł: 'l', Ł: 'L', ı: 'i', ĸ: 'k', ŉ: 'n', ŋ: 'n', Ŋ: 'N', ſ: 's', '€': 'E',
};

/**
 * WordPress's `sanitize_title` as it saves slugs: tags and entities removed, lower-cased, Latin accents
 * transliterated, dots, slashes, dashes and white space turned into `-`, other ASCII punctuation removed, runs of
 * `-` collapsed and trimmed; other non-ASCII characters kept percent-encoded, as WordPress does. At most 200
 * characters, never cutting a character's octets apart.
 */
export function slugify(text: string): string {
  let s = text
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '') // lone surrogates cannot be encoded
    .replace(/<(?!\s)[^>]*>?/g, '') // PHP's strip_tags: `<` followed by white space starts no tag
    .replace(/%(?![0-9a-fA-F]{2})/g, ''); // percent signs that start no octet
  s = withoutReferences(s)
    .replace(/[ßæÆøØœŒđĐðÐþÞłŁıĸŉŋŊſ€]/g, (c) => TRANSLITERATION[c] ?? c)
    .normalize('NFC')
    // accents removed from Latin letters only: `é` → `e`, but `й`, `ї`, `한` stay as they are
    .replace(/[^\x00-\x7f]/gu, (c) => {
      const bare = c.normalize('NFKD').replace(/[\u0300-\u036f]/g, '');
      return /^[\x00-\x7f]*$/.test(bare) ? bare : c;
    })
    .toLowerCase()
    // as WordPress saves titles: dots, slashes, dashes and white space become `-`; quotes and other ASCII
    // punctuation disappear (`don't` → `dont`); `×` → `x`
    .replace(/[\s./\u00a0\u2013\u2014]+/g, '-')
    .replace(/[\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u00ab\u00bb\u2039\u203a\u00a1\u00bf\u2026\u00b4\u00a8\u00b8]/g, '')
    .replace(/\u00d7/g, 'x');
  // by code point: ASCII punctuation goes, anything else non-ASCII is percent-encoded
  s = s.replace(/[^a-z0-9_%-]/gu, (c) => (c.charCodeAt(0) < 0x80 ? '' : encodeURIComponent(c).toLowerCase()));
  s = s.replace(/-+/g, '-').replace(/^-|-$/g, '');
  if (s.length > 200) {
    s = s.slice(0, 200).replace(/%[0-9a-f]?$/, '');
    // no character cut between its octets: a lead octet needs 1 (%c0-%df), 2 (%e0-%ef) or 3 (%f0-%f7) more
    const tail = /%([c-f])[0-9a-f]((?:%[89ab][0-9a-f])*)$/.exec(s);
    if (tail && tail[2]!.length / 3 < (tail[1] === 'f' ? 3 : tail[1] === 'e' ? 2 : 1)) s = s.slice(0, tail.index);
    s = s.replace(/-$/, '');
  }
  return s;
}

// ---- MySQL's utf8mb4_unicode_520_ci ---------------------------------------------------------------------------
// WordPress keeps its tables in this collation (utf8mb4_unicode_ci where the server lacks it), so every comparison the
// plugin makes in SQL ignores case and accents. The tables below are what the collation's weights (UCA 5.2.0, primary
// strength) say where lower-casing and Unicode's compatibility decomposition without combining marks say otherwise;
// test/text.test.ts checks them against the collation's classes of the Latin, Greek and Cyrillic blocks.

/** Characters the collation weighs as another: `ø` as `o`, `ł` as `l`, final `ς` as `σ`, `ґ` as `г`, … */
const WEIGHED_AS: Record<string, string> = {
  ð: 'd', đ: 'd', ø: 'o', ħ: 'h', ł: 'l', ŀ: 'l', ς: 'σ', ϲ: 'σ', ґ: 'г',
  // Greek spacing accents
  '\u037a': 'ι', '\u0384': '\u00b4', '\u0385': '\u00a8', '\u1fbf': '\u1fbd', '\u1fc1': '\u00a8', '\u1fcd': '\u1fbd',
  '\u1fce': '\u1fbd', '\u1fcf': '\u1fbd', '\u1fde': '\u1fdd', '\u1fdf': '\u1fdd', '\u1fed': '\u00a8', '\u1fee': '\u00a8',
  '\u1ffd': '\u00b4', '\u1ffe': '\u1fdd',
};
/** Letters whose weights are those of two or three letters: equal to them in `=`, never in `LIKE`, which pairs characters. */
const EXPANSIONS: Record<string, string> = {
  ß: 'ss', æ: 'ae', œ: 'oe', ỻ: 'll', ƍ: 'zw', ƾ: 'ts', ȸ: 'db', ȹ: 'qp', ʣ: 'dz', ʤ: 'dʒ', ʥ: 'dʑ', ʦ: 'ts', ʧ: 'tʃ',
  ʨ: 'tɕ', ʩ: 'fŋ', ʪ: 'ls', ʫ: 'lz', ϗ: 'και',
};
/** Letters the collation counts as letters of their own, though Unicode decomposes them into a letter and a mark. */
const OWN_LETTERS = new Set('йїѓќўѷӑӓӗӛӝӟӥӧӫӭӱӳӵӹ');
/** Characters the collation ignores besides combining marks: zero-width spaces and joiners, direction marks, invisible operators. */
const IGNORED = /^[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u206a-\u206f]$/;
const MARKS = /\p{M}+/gu;
const LONE_MARK = /^\p{M}$/u;
const ASCII = /^[\x00-\x7f]*$/;

/** One character as the collation weighs it; `expand`: as `=` compares (`ß` → `ss`), else as `LIKE` does. */
function foldCharacter(c: string, expand: boolean): string {
  if (IGNORED.test(c) || LONE_MARK.test(c)) return '';
  const lower = c.toLowerCase();
  if (OWN_LETTERS.has(lower)) return lower;
  if (lower in WEIGHED_AS) return WEIGHED_AS[lower]!;
  const bare = c.normalize('NFKD').replace(MARKS, '').toLowerCase();
  if (bare.trim() === '' && c.trim() !== '') return lower; // a spacing accent (`¨`) weighs as itself
  let folded = '';
  for (const b of bare) folded += WEIGHED_AS[b] ?? (expand ? (EXPANSIONS[b] ?? b) : b);
  // LIKE pairs one character with one: a ligature (`ﬁ`) or a fraction (`½`) matches only itself
  return !expand && [...folded].length !== 1 ? lower : folded;
}

const folded = { like: new Map<string, string>(), equal: new Map<string, string>() };

function fold(text: string, expand: boolean): string {
  if (ASCII.test(text)) return text.toLowerCase();
  const memo = expand ? folded.equal : folded.like;
  let out = '';
  // code point by code point, as the collation weighs them: a decomposed `и` + breve is `и`, not `й`
  for (const c of text) {
    let f = memo.get(c);
    if (f === undefined) {
      f = foldCharacter(c, expand);
      if (memo.size < 10_000) memo.set(c, f);
    }
    out += f;
  }
  return out;
}

/**
 * Text as search compares it, as MySQL's `LIKE` under utf8mb4_unicode_520_ci does, one character with one: case and
 * accents ignored for every script (`ZÜRICH` and `zurich` match `Zürich`, `İstanbul` matches `istanbul`), the
 * collation's variants of a letter (`ø`, `ł`, `đ`) as that letter, a letter of its own (`ı`, `й`) as itself; `ß`
 * matches `ß` only.
 */
export function foldForSearch(text: string): string {
  return fold(text, false);
}

/**
 * The key under which two texts are equal exactly when utf8mb4_unicode_520_ci says they are (`=`): `foldForSearch`,
 * plus the letters it weighs as two (`Straße` = `STRASSE`, `Æ` = `ae`) and without trailing spaces (PAD SPACE).
 * Every comparison of names the plugin makes in SQL (duplicate venues and organizers, terms named on events) compares
 * these keys.
 */
export function collationKey(text: string): string {
  return withoutTrailing(fold(text, true), ' ');
}

/**
 * A slug as WordPress looks a post up by it (`get_page_by_path`, `sanitize_title_for_query`): decoded once more,
 * percent-encoded as a path segment with the octets lower-cased (so `Музыка` finds the slug `%d0%bc%d1%83…` it was
 * saved as), lower-cased, dots and white space as `-`, anything else but `a-z0-9_-%` removed. Accents are not
 * transliterated, as only saving a slug does that.
 */
export function slugForQuery(text: string): string {
  let decoded = text;
  try {
    decoded = decodeURIComponent(text);
  } catch {
    // a `%` that starts no octet: the text as it is, as PHP's urldecode leaves it
  }
  return encodeURIComponent(decoded)
    .replace(/%20/g, ' ')
    .toLowerCase()
    .replace(/\./g, '-')
    .replace(/[^%a-z0-9 _-]/g, '')
    .replace(/\s+/g, '-')
    .replace(/-+/g, '-')
    .replace(/^-|-$/g, '');
}

/**
 * What RFC 3986 does not allow as it is in a URL's parts (besides its unreserved characters, its sub-delimiters and
 * `%` starting an octet, it allows `extra`): the WHATWG parser leaves `[`, `]`, `|`, `^`, `{`, `}`, a stray `%` and a
 * fragment's second `#` as they came, and a URL holding one fails the `uri` format the answers promise.
 */
const outsideUri = (extra: string) => new RegExp(`%(?![0-9A-Fa-f]{2})|[^A-Za-z0-9\\-._~!$&'()*+,;=%${extra}]`, 'g');
const OUTSIDE_USERINFO = outsideUri('');
const OUTSIDE_PATH = outsideUri(':@/?');
/** `part` (ASCII: the WHATWG parser percent-encodes the rest) with what `outside` finds percent-encoded. */
const encodedIn = (part: string, outside: RegExp) => part.replace(outside, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);

/**
 * An absolute http(s) URL with a real host name (or IP address), as WordPress's URL checks want; normalised (by the
 * WHATWG parser, then to RFC 3986: `https://example.org/a[1]` is `https://example.org/a%5B1%5D`), or null.
 */
export function webUrl(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (!/^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])$/i.test(url.hostname)) return null;
  const password = url.password ? `:${encodedIn(url.password, OUTSIDE_USERINFO)}` : '';
  const credentials = url.username || password ? `${encodedIn(url.username, OUTSIDE_USERINFO)}${password}@` : '';
  const fragment = url.hash ? `#${encodedIn(url.hash.slice(1), OUTSIDE_PATH)}` : '';
  return `${url.protocol}//${credentials}${url.host}${encodedIn(url.pathname + url.search, OUTSIDE_PATH)}${fragment}`;
}
