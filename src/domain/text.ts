/** Text rules of WordPress that the wire format depends on: slugs, escaping of names, plain-text fields. */

const ENTITY = /&(?:[a-zA-Z][a-zA-Z0-9]*|#\d+|#x[0-9a-fA-F]+);/y;

/** Escapes `&`, `<`, `>` as WordPress stores term names (`Food & Drink` → `Food &amp; Drink`); entities stay as they are. */
export function escapeTermName(name: string): string {
  let out = '';
  for (let i = 0; i < name.length; i++) {
    const ch = name[i]!;
    if (ch === '&') {
      ENTITY.lastIndex = i;
      out += ENTITY.test(name) ? '&' : '&amp;';
    } else if (ch === '<') out += '&lt;';
    else if (ch === '>') out += '&gt;';
    else out += ch;
  }
  return out;
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
    .replace(/%(?![0-9a-fA-F]{2})/g, '') // percent signs that start no octet
    .replace(/&[^\s;]+;/g, '')
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
  s = Array.from(s, (c) => (/[a-z0-9_%-]/.test(c) ? c : /[\x00-\x7f]/.test(c) ? '' : encodeURIComponent(c).toLowerCase())).join('');
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

/**
 * Text as search compares it, like MySQL's `_ci` collations under WordPress: lower case and without accents, for
 * every script (`ZÜRICH` and `zurich` match `Zürich`; `CAFÉ` matches `café`).
 */
export function foldForSearch(text: string): string {
  return text.normalize('NFD').replace(/\p{M}+/gu, '').toLowerCase();
}

/** An absolute http(s) URL with a real host name (or IP address), as WordPress's URL checks want; normalised, or null. */
export function webUrl(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (!/^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])$/i.test(url.hostname)) return null;
  return url.href;
}
