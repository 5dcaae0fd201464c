import { setImmediate as nextTurn } from 'node:timers/promises';
import sanitizeHtml from 'sanitize-html';
import { withoutTrailing } from './text.js';

/** How WordPress renders stored text on the wire (titles, content), reproduced closely enough for clients. */

const ENTITY_AHEAD = /^&(?:[a-zA-Z][a-zA-Z0-9]*|#\d+|#x[0-9a-fA-F]+);/;

/**
 * Title formatting (`wptexturize` for titles): `&` → `&#038;` (entities kept), straight quotes → curly ones,
 * `--` → en dash, `...` → ellipsis, all as numeric entities, trimmed. Markup is kept as it is.
 */
export function renderTitle(raw: string): string {
  const text = raw.trim();
  return TITLE_SPECIAL.test(text) ? texturizeTitle(text) : text;
}

/** What `renderTitle` may change: without any of these a title is only trimmed (most titles, and on every read). */
const TITLE_SPECIAL = /[<&."'-]/;

/** `renderTitle` of a trimmed title, character by character. Exported for the test that compares it with the fast path. */
export function texturizeTitle(text: string): string {
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
  if (!text.includes('\n')) return `<p>${text}</p>\n`; // one paragraph, no line break: what the split below makes of it
  return text
    .split(/\n\s*\n/)
    .map((para) => `<p>${para.trim().replace(/\n/g, '<br />\n')}</p>`)
    .join('\n') + '\n';
}

/** Escapes for JSON-LD values as the plugin does: HTML special characters as entities, line breaks as `\n`. */
export function jsonLdText(text: string): string {
  if (!JSON_LD_SPECIAL.test(text)) return text;
  // one pass, not one per character: each made a copy of a description of megabytes
  return text.replace(JSON_LD_ESCAPED, (c) => JSON_LD_ESCAPES[c]!);
}

/** What `jsonLdText` escapes: a text without any is its own escape. */
const JSON_LD_SPECIAL = /[&<>"\n]/;
/** An `&` that starts no reference, and the other characters JSON-LD escapes. */
const JSON_LD_ESCAPED = /&(?!(?:[a-zA-Z][a-zA-Z0-9]*|#\d+|#x[0-9a-fA-F]+);)|[<>"\n]/g;
const JSON_LD_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', '\n': '\\n' };

/** Markup a user without `unfiltered_html` may keep in content (close to WordPress's `$allowedposttags`). */
const CONTENT_POLICY: sanitizeHtml.IOptions = {
  allowedTags: ['a', 'abbr', 'b', 'blockquote', 'br', 'cite', 'code', 'del', 'div', 'em', 'figcaption', 'figure', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'i', 'img', 'ins', 'li', 'ol', 'p', 'pre', 'q', 's', 'small', 'span', 'strike', 'strong', 'sub', 'sup', 'table', 'tbody', 'td', 'tfoot', 'th', 'thead', 'tr', 'u', 'ul'],
  allowedAttributes: { a: ['href', 'title', 'rel', 'target'], img: ['src', 'alt', 'title', 'width', 'height'], '*': ['class', 'lang', 'dir'] },
  allowedSchemes: ['http', 'https', 'mailto', 'tel'],
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  transformTags: { a: withUrlCommentsRemoved, img: withUrlCommentsRemoved },
};
/**
 * A link's or image's URL with its HTML comments removed, as the sanitizer's scheme check reads it, so that the check
 * finds none to remove: it removes them one at a time, each time copying the URL and searching it again from the start,
 * and an author's `href` of 100,000 `<!---->` held a thread for 98 s. The URL kept is the one checked.
 */
function withUrlCommentsRemoved(tagName: string, attribs: sanitizeHtml.Attributes): sanitizeHtml.Tag {
  for (const name of ['href', 'src']) {
    const value = attribs[name];
    if (value?.includes('<')) attribs[name] = urlAsChecked(value);
  }
  return { tagName, attribs };
}

/**
 * A URL as the sanitizer's scheme check (launder's `cleanHref`) reads it when it holds a comment: characters up to the
 * space removed, then each `<!--` up to the next `-->` after it, first to last, where a removal can join a new `<!--`
 * (`<!<!---->--`), until one has no `-->` after it. One pass: what is kept is a stack that a removal pops. Exported for
 * the test that compares it with that check's loop.
 */
export function urlAsChecked(url: string): string {
  const squeezed = url.replace(/[\x00-\x20]+/g, '');
  if (!squeezed.includes('<!--')) return url;
  const kept = new Uint16Array(squeezed.length);
  let length = 0;
  let next = 0;
  while (next < squeezed.length) {
    kept[length++] = squeezed.charCodeAt(next++);
    if (length >= 4 && kept[length - 1] === DASH && kept[length - 2] === DASH && kept[length - 3] === BANG && kept[length - 4] === LESS) {
      const close = squeezed.indexOf('-->', next);
      if (close === -1) break;
      length -= 4;
      next = close + 3;
    }
  }
  const pieces: string[] = [];
  for (let from = 0; from < length; from += 8192) pieces.push(String.fromCharCode(...kept.subarray(from, Math.min(from + 8192, length))));
  return pieces.join('') + squeezed.slice(next);
}
const [LESS, BANG, DASH] = ['<', '!', '-'].map((c) => c.charCodeAt(0));

/** Titles and names keep inline formatting only. */
const TITLE_POLICY: sanitizeHtml.IOptions = { ...CONTENT_POLICY, allowedTags: ['abbr', 'b', 'code', 'em', 'i', 's', 'strong', 'sub', 'sup', 'u'], allowedAttributes: {} };

/**
 * WordPress's kses for callers without `unfiltered_html` (authors, contributors): scripts, event handlers,
 * `javascript:` URLs, iframes and other markup outside the allow-list are removed; administrators and editors keep
 * their HTML as sent.
 */
export function cleanHtml(html: string, kind: 'content' | 'title', unfiltered: boolean): string {
  if (unfiltered || !/[<&]/.test(html)) return html;
  const ahead = kind === 'content' && html.length >= CLEANED_AHEAD_FROM ? cleanedAhead.get(html) : undefined;
  return ahead ?? sanitizeHtml(html, kind === 'title' ? TITLE_POLICY : CONTENT_POLICY);
}

/**
 * Texts from this many characters are cleaned ahead of their write, off the event loop (cleanAhead.ts): cleaning a
 * description of 900 KB of nested markup held it for 430-900 ms.
 */
export const CLEANED_AHEAD_FROM = 64 * 1024;
/**
 * The content cleaned ahead, by text, the latest few: the write that sent it finds it here. Each may hold megabytes
 * (a text and what cleaning made of it): a write whose text went is cleaned on the event loop, as before.
 */
const cleanedAhead = new Map<string, string>();
const CLEANED_AHEAD_KEPT = 8;

/** Keeps what `cleanHtml` would make of a content text, made elsewhere (a worker thread), for the write that sent it. */
export function keepCleaned(html: string, clean: string): void {
  cleanedAhead.delete(html);
  cleanedAhead.set(html, clean);
  if (cleanedAhead.size > CLEANED_AHEAD_KEPT) cleanedAhead.delete(cleanedAhead.keys().next().value!);
}

// a Map, not an object literal: `&constructor;` named Object's constructor, and a feed showed its source in its place
const ENTITIES = new Map(Object.entries({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', hellip: '…', ndash: '–', mdash: '—', lsquo: '‘', rsquo: '’', ldquo: '“', rdquo: '”', laquo: '«', raquo: '»', copy: '©', reg: '®', trade: '™', euro: '€' }));

/**
 * Rendered HTML as plain text (iCalendar's DESCRIPTION, SUMMARY): scripts and styles dropped, block ends and `<br>` as
 * line breaks, list items on lines of their own, other tags removed, entities decoded, runs of blank lines collapsed.
 * Linear in the text, whatever it holds (see `stripTags`).
 */
export function plainText(html: string): string {
  if (!/[<&\n]/.test(html)) return html.trim(); // most names and titles: nothing to strip, decode or collapse
  return tidied(decodeEntities(stripTags(html)));
}

/** Decoded text without its lines' blank tails, its runs of blank lines collapsed, trimmed. */
const tidied = (text: string) => withoutBlankTails(text).replace(/\n{3,}/g, '\n\n').trim();

/**
 * The start of `plainText(html)`: all of it, or its first `length` characters or more, made of only as much of the
 * markup as they take (a feed keeps 65,536 characters of a description: making text of 3.6 MB of `&lt;` to keep them
 * held the event loop for 250 ms). The markup is read up to twice `length` characters of text between tags, then
 * twice as many each time that falls short, since decoding and collapsing shorten it.
 */
export function plainTextStart(html: string, length: number): string {
  if (html.length <= length) return plainText(html);
  for (let budget = 2 * Math.max(1, length); ; budget *= 2) {
    const between = strippedStart(html, budget);
    if (between.whole) return tidied(decodeEntities(between.text));
    const settled = settledText(between.text);
    if (settled.length >= length) return settled;
  }
}

/** Characters of text made between two turns of the event loop by `plainTextInTurns` (a few milliseconds of work). */
const PLAIN_TEXT_PER_TURN = 64 * 1024;

/**
 * `plainText(html)`, made a piece of `perTurn` characters at a time with a turn of the event loop around each: an
 * event's own calendar keeps its description whole, and making text of 3.6 MB of `&lt;` at once held every other
 * request for 250 ms. Each piece is decoded up to its last `&`: a reference has no other, so none spans that point.
 */
export async function plainTextInTurns(html: string, perTurn = PLAIN_TEXT_PER_TURN): Promise<string> {
  if (html.length <= perTurn) return plainText(html);
  const decoded: string[] = [];
  let pending = '';
  for (const piece of strippedPieces(html, perTurn)) {
    await nextTurn();
    pending += piece;
    const cut = pending.lastIndexOf('&');
    if (cut !== 0) {
      const end = cut < 0 ? pending.length : cut;
      decoded.push(decodeEntities(pending.slice(0, end)));
      pending = pending.slice(end);
    }
  }
  await nextTurn();
  decoded.push(decodeEntities(pending));
  return tidied(decoded.join(''));
}

/**
 * Of the text between the tags of the markup's start, what `plainText` of the whole markup surely begins with: that
 * text without a reference the rest could finish (`&am` before `p;`), decoded and tidied (which drops the white space
 * at its end, that the rest decides to keep, drop or collapse).
 */
function settledText(between: string): string {
  let end = between.length;
  while (end > 0 && /[#0-9a-z]/i.test(between[end - 1]!)) end--;
  return tidied(decodeEntities(between[end - 1] === '&' ? between.slice(0, end - 1) : between));
}

/** What a tag becomes in plain text: a line break after `<br>` and a block's end, a list item's dash, else nothing. */
function tagAsText(inside: string): string {
  if (/^br\s*\/?$/i.test(inside) || /^\/(?:p|div|h[1-6]|li|ul|ol|blockquote|pre|tr|table|figure)\s*$/i.test(inside)) return '\n';
  return /^li\b/i.test(inside) ? '\n- ' : '';
}

/**
 * The text between tags. A tag is `<` to the next `>`, unless white space, another `<` or the end follows the `<` (`1 <
 * 2` is text, as browsers and PHP's `strip_tags` read it); a `<script>` or `<style>` element goes whole, up to its
 * closing tag. One pass: the replacements this stood for (`/<[^>]*>/g` and its kind) retried every `<` of a run with no
 * `>` after it up to the end of the text (900 KB of `<` took minutes); here the next `>` is looked for once per
 * stretch, and so is the end of each kind of element. The text comes in pieces of `pieceLength` characters or a few
 * more (all of it in one piece when that is Infinity): what comes before any piece is the start of the whole text.
 */
function* strippedPieces(html: string, pieceLength: number): Generator<string, void> {
  let out = '';
  let at = 0; // the text from here on is not written yet
  let next = 0;
  let closing = -1; // the first `>` after the current `<`
  const unclosed = new Set<string>(); // elements with no closing tag after the current point
  for (let open = html.indexOf('<'); open >= 0; open = html.indexOf('<', next)) {
    next = open + 1;
    const after = html[open + 1];
    if (after === undefined || after === '<' || /\s/.test(after)) continue;
    if (closing < open) closing = html.indexOf('>', open);
    if (closing < 0) break; // no `>` left: the rest is text
    while (out.length + open - at >= pieceLength) {
      const take = pieceLength - out.length;
      yield out + html.slice(at, at + take);
      out = '';
      at += take;
    }
    out += html.slice(at, open);
    const inside = html.slice(open + 1, closing);
    at = next = closing + 1;
    const element = /^(script|style)\b/i.exec(inside)?.[1]!.toLowerCase();
    if (element !== undefined && !unclosed.has(element)) {
      const end = new RegExp(`</${element}\\s*>`, 'gi');
      end.lastIndex = at;
      if (end.test(html)) {
        at = next = end.lastIndex;
        continue;
      }
      unclosed.add(element);
    }
    out += tagAsText(inside);
    if (out.length >= pieceLength) {
      yield out;
      out = '';
    }
  }
  while (out.length + html.length - at >= pieceLength) {
    const take = pieceLength - out.length;
    yield out + html.slice(at, at + take);
    out = '';
    at += take;
  }
  if (out !== '' || at < html.length) yield out + html.slice(at);
}

/** All the text between tags (`strippedPieces`). */
const stripTags = (html: string): string => strippedPieces(html, Infinity).next().value ?? '';

/**
 * The start of the text between tags: `limit` characters or more, or all of it (`whole`). Reads the markup up to two
 * pieces of `limit` characters of text.
 */
function strippedStart(html: string, limit: number): { text: string; whole: boolean } {
  const pieces = strippedPieces(html, limit);
  const first = pieces.next();
  if (first.done) return { text: '', whole: true };
  const second = pieces.next();
  return second.done ? { text: first.value, whole: true } : { text: first.value + second.value, whole: false };
}

/** Each line without the spaces and tabs it ends with. */
function withoutBlankTails(text: string): string {
  if (!/[ \t]\n/.test(text)) return text;
  return text.split('\n').map((line, i, lines) => (i === lines.length - 1 ? line : withoutTrailing(line, ' \t'))).join('\n');
}

const ENTITY = /&(#x[0-9a-f]+|#\d+|[a-z]+);/gi;

/**
 * Character references decoded: numeric ones, and the named ones of ENTITIES; any other is left as it is. One pass
 * of `exec`, the pieces joined once: a `replace` callback per reference cost four times as much, and a string grown
 * by `+=` twice (900,000 `&lt;`: 570, 330 and 150 ms).
 */
function decodeEntities(text: string): string {
  ENTITY.lastIndex = 0;
  const pieces: string[] = [];
  let from = 0;
  for (let m = ENTITY.exec(text); m !== null; m = ENTITY.exec(text)) {
    const name = m[1]!;
    let decoded: string | undefined;
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      decoded = code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : undefined;
    } else {
      decoded = ENTITIES.get(name.toLowerCase());
    }
    if (decoded === undefined) continue;
    if (m.index > from) pieces.push(text.slice(from, m.index));
    pieces.push(decoded);
    from = ENTITY.lastIndex;
  }
  if (from === 0) return text;
  pieces.push(text.slice(from));
  return pieces.join('');
}
