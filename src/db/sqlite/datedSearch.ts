/**
 * The keys of the dated search index (migration 0018): each trigram of letters and digits of an event's folded search
 * text (no space, punctuation or other ASCII character in it), filed under the month the event starts in. A search in
 * a window asks for such trigrams of its words in the window's months only. A key is one word of FTS5's `ascii`
 * tokenizer, whose words are ASCII letters and digits and any character beyond ASCII: the month's number, `t`, and
 * the trigram as it is.
 */
import type { MonthRange } from '../listQueries.js';

/** Whether a character may be part of a key: an ASCII letter or digit, or any character beyond ASCII. */
function keeps(code: number): boolean {
  return code > 0x7f || (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a);
}

/** Whether the dated index files a trigram (of three code points). */
export function isDatedTrigram(gram: string): boolean {
  for (const char of gram) if (!keeps(char.codePointAt(0)!)) return false;
  return true;
}

/**
 * The index keys of an event's folded search text (`almanac_dated_keys`, registered on every connection): the
 * trigrams of `trigramsOfText` that `isDatedTrigram` keeps, after the month.
 */
export function datedKeys(month: number, folded: string): string {
  const prefix = `${month}t`;
  const keys = new Set<string>();
  let a = '';
  let b = '';
  let run = 0; // characters kept in a row, up to this one
  for (const char of folded) {
    if (!keeps(char.codePointAt(0)!)) {
      run = 0;
      continue;
    }
    if (++run >= 3) keys.add(prefix + a + b + char);
    a = b;
    b = char;
  }
  return [...keys].join(' ');
}

/** The index query that finds every event starting in `months` whose text holds all of `grams` (dated trigrams). */
export function datedQuery(grams: string[], months: MonthRange): string {
  const inMonths = (gram: string) => {
    const keys: string[] = [];
    for (let month = months.first; month <= months.last; month++) keys.push(`"${month}t${gram}"`);
    return `(${keys.join(' OR ')})`;
  };
  return grams.map(inMonths).join(' AND ');
}
