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
    .replace(/<[^>]*>?/g, '')
    .replace(/[\r\n\t ]+/g, ' ')
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '')
    .trim();
}

const TRANSLITERATION: Record<string, string> = {
  ß: 'ss', æ: 'ae', Æ: 'AE', ø: 'o', Ø: 'O', œ: 'oe', Œ: 'OE', đ: 'd', Đ: 'D', ð: 'd', Ð: 'D', þ: 'th', Þ: 'TH',
  ł: 'l', Ł: 'L', ı: 'i', ĸ: 'k', ŉ: 'n', ŋ: 'n', Ŋ: 'N', ſ: 's', '€': 'E',
};

/**
 * WordPress's `sanitize_title`: accents transliterated, tags and entities removed, lower-cased, anything but
 * letters, digits, `_` and `-` turned into `-`, runs collapsed, trimmed; other non-ASCII characters are kept
 * percent-encoded, as WordPress does. At most 200 characters.
 */
export function slugify(text: string): string {
  let s = text
    .replace(/<[^>]*>?/g, '')
    .replace(/&[^\s;]+;/g, '')
    .replace(/[ßæÆøØœŒđĐðÐþÞłŁıĸŉŋŊſ€]/g, (c) => TRANSLITERATION[c] ?? c)
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[\s.\/:,;'"!?()[\]{}+=*&^$#@~`|\\<>]+/g, '-');
  s = Array.from(s, (c) => (/[a-z0-9_%-]/.test(c) ? c : /[\x00-\x7f]/.test(c) ? '-' : encodeURIComponent(c).toLowerCase())).join('');
  s = s.replace(/-+/g, '-').replace(/^-|-$/g, '');
  if (s.length > 200) s = s.slice(0, 200).replace(/%[0-9a-f]?$/, '').replace(/-$/, '');
  return s;
}
