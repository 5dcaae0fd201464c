import { DateTime } from 'luxon';
import { invalidParams } from '../errors.js';
import type { Bound } from './listWindow.js';

/**
 * What one list or feed may cost. Node answers every request on one thread and a SQLite statement holds it, so an
 * anonymous request that reads without bound stalls everyone else's. Each limit is far above what a calendar client
 * asks for, and each is refused with a 400 that names it before the costly part is read (a page too deep once the
 * list's first page has told that the list reaches that deep). Lists of ids and slugs are bounded in the spec
 * (`maxItems`), where validation refuses them.
 */

/** Records per page; more is read as this many (as in the plugin). */
export const MAX_PER_PAGE = 50;
/** How deep into a list a page may start (`(page − 1) × per_page`): an offset is read past, record by record. */
export const MAX_LIST_DEPTH = 10_000;
/** Words, quoted phrases and exclusions of an event search, together: each is a test of every event in the window. */
export const MAX_SEARCH_TERMS = 10;
/** Words of a venue or organizer search: each is a test of every field of every record. */
export const MAX_LINKED_SEARCH_WORDS = 10;
/** Days the date window of a feed may span: the default window (yesterday to 24 months ahead) and a month to spare. */
export const MAX_WINDOW_DAYS = 762;
/** Events in an iCalendar feed, the first by start (the feed has no pages). */
export const MAX_FEED_EVENTS = 500;

/** Why the page a list asks for starts too deep, or null. */
export function depthProblem(page: number, perPage: number): string | null {
  return (page - 1) * perPage >= MAX_LIST_DEPTH
    ? `Pages start at most ${MAX_LIST_DEPTH.toLocaleString('en')} records into a list ((page - 1) × per_page); narrow it with dates or filters instead.`
    : null;
}

/**
 * The total of a list whose page starts too deep (`problem`, from depthProblem) when that page lies past the list's
 * end: it is then answered as any page past the end (the plugin's 404 for `page=9999`, a term list's empty page),
 * which `totalOf` (the list's first page, as cheap as any) tells without reading down to the offset. A deep page that
 * holds records is refused with the 400 naming the limit.
 */
export async function totalPastDeepPage(problem: string, offset: number, totalOf: () => Promise<number>): Promise<number> {
  const total = await totalOf();
  if (offset < total) throw invalidParams({ page: problem });
  return total;
}

/** Why an event search has too many terms, or null. */
export function searchTermsProblem(terms: { include: string[]; exclude: string[] }): string | null {
  return terms.include.length + terms.exclude.length > MAX_SEARCH_TERMS
    ? `At most ${MAX_SEARCH_TERMS} words and quoted phrases, exclusions included.`
    : null;
}

/** Why a venue or organizer search has too many words, or null. */
export function linkedSearchProblem(words: string[]): string | null {
  return words.length > MAX_LINKED_SEARCH_WORDS ? `At most ${MAX_LINKED_SEARCH_WORDS} words.` : null;
}

/**
 * Why the date window of an iCalendar feed is too wide, or null: from its latest lower bound (on the start or on the
 * end) to its earliest upper bound, defaults included, and closed at both ends. Lists are not held to it: the
 * plugin's clients ask a list for everything before or after a date (`ends_before=now`, `start_date=2000-01-01`).
 */
export function feedWindowProblem(bounds: Bound[], include: boolean): { params: string[]; reason: string } | null {
  if (include) return null;
  const lower = bounds.filter((b) => b.op === '>=' || b.op === '>');
  const upper = bounds.filter((b) => b.op === '<=' || b.op === '<');
  const reason = `A feed's date window spans at most ${MAX_WINDOW_DAYS} days (about 25 months) and has both ends: subscribe to the dates in parts.`;
  if (lower.length === 0 || upper.length === 0) return { params: [...lower, ...upper].map((b) => b.param), reason };
  const from = lower.reduce((a, b) => (b.value > a.value ? b : a));
  const to = upper.reduce((a, b) => (b.value < a.value ? b : a));
  const days = DateTime.fromSQL(to.value, { zone: 'utc' }).diff(DateTime.fromSQL(from.value, { zone: 'utc' }), 'days').days;
  return days > MAX_WINDOW_DAYS ? { params: [...new Set([from.param, to.param])], reason } : null;
}
