/** How WordPress renders stored text on the wire (titles, content), reproduced closely enough for clients. */

const ENTITY_AHEAD = /^&(?:[a-zA-Z][a-zA-Z0-9]*|#\d+|#x[0-9a-fA-F]+);/;

/**
 * Title formatting (`wptexturize` for titles): `&` → `&#038;` (entities kept), straight quotes → curly ones,
 * `--` → en dash, `...` → ellipsis, all as numeric entities, trimmed. Markup is kept as it is.
 */
export function renderTitle(raw: string): string {
  const text = raw.trim();
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    const prev = i > 0 ? text[i - 1]! : '';
    if (ch === '<') {
      const end = text.indexOf('>', i);
      if (end > i) {
        out += text.slice(i, end + 1);
        i = end;
        continue;
      }
    }
    if (ch === '&') out += ENTITY_AHEAD.test(text.slice(i)) ? '&' : '&#038;';
    else if (ch === '.' && text.startsWith('...', i)) {
      out += '&#8230;';
      i += 2;
    } else if (ch === '-' && text[i + 1] === '-' && text[i + 2] !== '-') {
      out += '&#8211;';
      i += 1;
    } else if (ch === '"') out += prev === '' || /[\s([{\-]/.test(prev) ? '&#8220;' : '&#8221;';
    else if (ch === "'") out += prev === '' || /[\s([{\-"]/.test(prev) ? '&#8216;' : '&#8217;';
    else out += ch;
  }
  return out;
}

const BLOCK = /<(?:p|div|h[1-6]|ul|ol|li|table|blockquote|pre|figure|section|article|dl|hr|form|address|fieldset)[\s>/]/i;

/**
 * Content formatting (`wpautop`): text separated by blank lines becomes `<p>` paragraphs, single line breaks
 * become `<br />`; content that already has block markup is kept. Ends with a newline, as WordPress's does.
 */
export function autop(raw: string): string {
  const text = raw.replace(/\r\n?/g, '\n').trim();
  if (text === '') return '';
  if (BLOCK.test(text)) return text + '\n';
  return text
    .split(/\n\s*\n/)
    .map((para) => `<p>${para.trim().replace(/\n/g, '<br />\n')}</p>`)
    .join('\n') + '\n';
}

/** Escapes for JSON-LD values as the plugin does: HTML special characters as entities, line breaks as `\n`. */
export function jsonLdText(text: string): string {
  return text
    .replace(/&(?!(?:[a-zA-Z][a-zA-Z0-9]*|#\d+|#x[0-9a-fA-F]+);)/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/\n/g, '\\n');
}
