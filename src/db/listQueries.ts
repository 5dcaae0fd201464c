/**
 * The SQL of every list (events, venues and organizers, sync pages), written once for both engines: which records a
 * list holds, in which order, and what a caller may see and match of them are rules, and rules live in one place. The
 * few things SQLite and PostgreSQL spell differently go through a dialect: lists of ids, flags, the text index that
 * narrows a search, planner hints, the title part of an event's search text, folded fields of venues and organizers,
 * and the comparison of passwords. Parameters are `@name`; each engine binds them its own way.
 */
import { hidesWhenProtected } from '../domain/postRules.js';
import { foldForSearch } from '../domain/text.js';
import type {
  ChangeRights, ChangesQuery, EventListQuery, LinkedListQuery, ListViewer, OrganizerRecord, PostRecord, PostStatus, PostType, ProtectedAccess,
  VenueRecord,
} from './records.js';
import { startMonth } from './rows.js';

export type Params = Record<string, unknown>;

/** A list's two statements: one page of ids (with `@limit`, `@offset`), and how many match in all. */
export interface ListSql {
  page: string;
  count: string;
  params: Params;
  /**
   * Whether each row of the page also carries the total (`COUNT(*) OVER ()`), so that `count` runs only for a page
   * past the last: set when the list is read from few matches, every one of them read anyway to be ordered.
   */
  totalInPage?: boolean;
  /**
   * A list by several records' links: `links` counts their links in the window (up to FEW_LINKS); when fewer, the list
   * runs `page` (each row carrying the total) and `count` instead (`listThrough`).
   */
  fewLinks?: { links: string; page: string; count: string };
}

export interface SqlDialect {
  /** The condition "`column` is one of `ids`", the list bound as `@name`. */
  inIds(params: Params, name: string, column: string, ids: number[]): string;
  /** A flag column compared the way the engine's indexes can use (`= 0` on SQLite, `= false` on PostgreSQL). */
  flag(column: string, value: boolean): string;
  /**
   * What narrows an event search through the engine's text index (trigrams), or null when the index cannot help (no
   * word of three characters or more). The LIKE of each word still decides. With `months` (the window holds only
   * events starting in them), through the dated index (migration 0018): the trigrams of those months alone, so a
   * search costs the matches of its window, not those of the whole calendar.
   */
  searchIndex(params: Params, words: string[], months: MonthRange | null): SearchNarrowing | null;
  /**
   * A column the planner should not look up through an index here (SQLite: `+column`): an event's few links are
   * read and each checked against a list, rather than the index probed once for every id of the list.
   */
  unindexed(column: string): string;
  /**
   * The join that reads its tables in the order written (SQLite: `CROSS JOIN … ON`); PostgreSQL plans joins from
   * statistics and accepts no `ON` after `CROSS JOIN`: a plain `JOIN`.
   */
  joinInOrder: string;
  /**
   * The `FROM … WHERE …` of an event list read from the links of one record (`links`: `id` and `start_local` of each
   * of its events in the window, in their index's order), each event looked up by id and kept when `where` holds of
   * it (`e`); the rows have `e.post_id`, `e.date_utc` and `m.start_local`. The links of several records
   * (`throughLinks`) give each of their events once.
   */
  eachLinkedEvent(links: string, where: string): string;
  /**
   * Whether a list by several records is read through their links when they have few (see `throughLinks`): SQLite
   * checked each event of the window against them. PostgreSQL joins their links in the window to the window's events
   * itself (a hash semi join), and given the choice, gathered a category's links with a parallel worker (39 ms
   * against 4.6).
   */
  readsThroughLinks: boolean;
  /** The title part of an event's folded search text (title, excerpt and description joined by U+001F). */
  searchedTitle(column: string): string;
  /**
   * The `index`-th field of LINKED_SEARCH_FIELDS of a venue or organizer (`column` of posts `p` or details `d`),
   * folded exactly as `foldForSearch` folds it.
   */
  foldedField(column: string, index: number): string;
  /**
   * A condition true when the password in `column` is `given` (as postRules.unlocks compares them: equal octets, in
   * constant time), `given` bound as `@opener`.
   */
  unlocks(params: Params, column: string, given: string): string;
}

/** The events a search may match, from a text index. */
export interface SearchNarrowing {
  /** A statement selecting the `id` of each of them (and maybe more). */
  ids: string;
  /**
   * Whether the list is read from these ids (few: the matches of a window) rather than its window read off the
   * listing index, each event checked against them.
   */
  drives: boolean;
  /** Whether these are the matches of the window's months alone (the dated index): few, whatever the calendar's size. */
  windowed: boolean;
}

/** Months as `startMonth` counts them, first and last included. */
export interface MonthRange { first: number; last: number }

/**
 * Months a window may span and still be searched through the dated index: each month is one more index key per
 * trigram, and past a few years the whole calendar's index narrows as well.
 */
export const MAX_DATED_MONTHS = 60;

/**
 * The months the events of a list start in, when its bounds close both ends (every event ends at or after its
 * start: an upper bound on its end bounds its start too), and span at most MAX_DATED_MONTHS; else null.
 */
export function monthsOfBounds(bounds: EventListQuery['bounds']): MonthRange | null {
  const dated = bounds.filter((b) => /^\d{4}-\d{2}/.test(b.value));
  const lower = dated.filter((b) => b.column === 'start' && (b.op === '>=' || b.op === '>')).map((b) => b.value).sort().at(-1);
  const upper = dated.filter((b) => b.op === '<=' || b.op === '<').map((b) => b.value).sort()[0];
  if (lower === undefined || upper === undefined) return null;
  const range = { first: startMonth(lower), last: startMonth(upper) };
  return range.last >= range.first && range.last - range.first < MAX_DATED_MONTHS ? range : null;
}

/** The distinct trigrams (of code points) of folded text, in order of first appearance. */
export function trigramsOfText(folded: string): Set<string> {
  const chars = [...folded];
  const grams = new Set<string>();
  for (let i = 0; i + 3 <= chars.length; i++) grams.add(chars.slice(i, i + 3).join(''));
  return grams;
}

/** A LIKE pattern that finds `word` anywhere in folded text (its own wildcards escaped with `\`). */
export const like = (word: string) => `%${foldForSearch(word).replace(/[\\%_]/g, (c) => '\\' + c)}%`;

/** SQL for "status in S" over a table alias carrying `status` and `date_utc`; `publish` covers due scheduled records. */
function statusSql(alias: string, statuses: PostStatus[], params: Params): string {
  const published = `(${alias}.status = 'publish' OR (${alias}.status = 'future' AND ${alias}.date_utc <= @now))`;
  const parts = statuses.map((status, i) => {
    if (status === 'publish') return published;
    if (status === 'future') return `(${alias}.status = 'future' AND ${alias}.date_utc > @now)`;
    params[`status${i}`] = status;
    return `${alias}.status = @status${i}`;
  });
  return parts.length ? `(${parts.join(' OR ')})` : 'FALSE';
}

/** SQL for "records this viewer may see in a list" (DESIGN §5 #8). */
function viewerSql(alias: string, viewer: ListViewer, params: Params, prefix = ''): string {
  const published = `(${alias}.status = 'publish' OR (${alias}.status = 'future' AND ${alias}.date_utc <= @now))`;
  if (viewer.kind === 'public') return published;
  if (viewer.seeOthers) return 'TRUE';
  params[`${prefix}me`] = viewer.userId;
  return `(${published} OR ${alias}.author_id = @${prefix}me)`;
}

/** SQL: the caller may change the post (alias), as postRules.mayChange decides; 'TRUE' for every post, 'FALSE' for none. */
function changeableSql(alias: string, rights: ChangeRights | null, params: Params): string {
  if (!rights) return 'FALSE';
  const status = `(CASE ${alias}.status WHEN 'trash' THEN COALESCE(${alias}.status_before_trash, 'draft') ELSE ${alias}.status END)`;
  const own = `${alias}.author_id = @changer`;
  const conditions: string[] = [];
  if (!rights.published) conditions.push(`${status} NOT IN ('publish', 'future')`);
  if (!rights.others) conditions.push(own);
  else if (!rights.othersPrivate) conditions.push(`(${own} OR ${status} <> 'private')`);
  if (conditions.some((c) => c.includes('@changer'))) params.changer = rights.userId;
  return conditions.length ? `(${conditions.join(' AND ')})` : 'TRUE';
}

/** SQL conditions that each open a protected post (alias) of a type to the caller; null when it may open every one. */
function openingSql(alias: string, type: PostType, access: ProtectedAccess, params: Params, dialect: SqlDialect): string[] | null {
  const changeable = changeableSql(alias, access.edits[type], params);
  if (changeable === 'TRUE') return null;
  const ways = changeable === 'FALSE' ? [] : [changeable];
  if (access.password !== undefined) ways.push(dialect.unlocks(params, `${alias}.password`, access.password)); // constant-time, as on reads by id
  return ways;
}

/** SQL: the post (alias) has no password or the caller may open it (postRules.mayOpen); null when every post is open to it. */
function openSql(alias: string, type: PostType, access: ProtectedAccess, params: Params, dialect: SqlDialect): string | null {
  const ways = openingSql(alias, type, access, params, dialect);
  return ways === null ? null : `(${[`${alias}.password = ''`, ...ways].join(' OR ')})`;
}

/** `openSql` for an event read off a listing index (alias `e`): only a protected event's post is read. */
function openEventSql(access: ProtectedAccess, params: Params, dialect: SqlDialect): string | null {
  const ways = openingSql('pp', 'event', access, params, dialect);
  if (ways === null) return null;
  const unprotected = dialect.flag('e.protected', false);
  return ways.length ? `(${unprotected} OR EXISTS (SELECT 1 FROM posts pp WHERE pp.id = e.post_id AND (${ways.join(' OR ')})))` : unprotected;
}

/**
 * The field of an event's list entry that each filter reads. A filter on a field that a protected entry hides
 * (postRules.BLANKED) never selects an event the caller may not open: it sees that field blank.
 */
const EVENT_FILTER_FIELDS: Record<'categoryIds' | 'tagIds' | 'venueIds' | 'organizerIds' | 'featured' | 'ticketed' | 'geo' | 'parentId' | 'include', string> = {
  categoryIds: 'categories', tagIds: 'tags', venueIds: 'venue', organizerIds: 'organizer', featured: 'featured', ticketed: 'ticketed',
  geo: 'venue', parentId: 'post_parent', include: 'id',
};
const FILTERS_ON_HIDDEN = (Object.keys(EVENT_FILTER_FIELDS) as (keyof typeof EVENT_FILTER_FIELDS)[]).filter((f) => hidesWhenProtected('event', EVENT_FILTER_FIELDS[f]));

type VenueSearched = Pick<VenueRecord, 'title' | 'content' | 'excerpt' | 'address' | 'city' | 'province' | 'state' | 'stateprovince' | 'zip' | 'phone'>;
type OrganizerSearched = Pick<OrganizerRecord, 'title' | 'content' | 'excerpt' | 'phone' | 'email' | 'website'>;

/**
 * The fields venue and organizer search reads, in order: the column, the field of the list entry it is (what a
 * protected entry may hide), and the record's property. Engines fold them with `foldForSearch` (SQLite as it reads
 * them, PostgreSQL in a copy written with the record: see `linkedSearchTexts`).
 */
export const LINKED_SEARCH_FIELDS: {
  venue: [column: string, field: string, property: keyof VenueSearched][];
  organizer: [column: string, field: string, property: keyof OrganizerSearched][];
} = {
  venue: [['p.title', 'venue', 'title'], ['p.content', 'description', 'content'], ['p.excerpt', 'excerpt', 'excerpt'], ['d.address', 'address', 'address'],
    ['d.city', 'city', 'city'], ['d.province', 'province', 'province'], ['d.state', 'state', 'state'], ['d.stateprovince', 'stateprovince', 'stateprovince'],
    ['d.zip', 'zip', 'zip'], ['d.phone', 'phone', 'phone']],
  organizer: [['p.title', 'organizer', 'title'], ['p.content', 'description', 'content'], ['p.excerpt', 'excerpt', 'excerpt'], ['d.phone', 'phone', 'phone'],
    ['d.email', 'email', 'email'], ['d.website', 'website', 'website']],
};

/** The folded texts of LINKED_SEARCH_FIELDS of a venue or organizer, in order; null for an event (search reads its search text). */
export function linkedSearchTexts(record: Omit<PostRecord, 'id' | 'translationGroup'>): string[] | null {
  if (record.type === 'venue') return LINKED_SEARCH_FIELDS.venue.map(([, , property]) => foldForSearch((record as VenueRecord)[property]));
  if (record.type === 'organizer') return LINKED_SEARCH_FIELDS.organizer.map(([, , property]) => foldForSearch((record as OrganizerRecord)[property]));
  return null;
}

/** The links of one kind of record to events, each carrying its event's start, indexed by (record, start, event). */
interface EventLinks {
  table: string;
  record: string;
  event: string;
  /** Whether an event may link to several records of the kind (then it is read once). */
  manyPerEvent: boolean;
}
const TERM_LINKS: EventLinks = { table: 'event_terms', record: 'term_id', event: 'event_id', manyPerEvent: true }; // event_terms_by_term
const ORGANIZER_LINKS: EventLinks = { table: 'event_organizers', record: 'organizer_id', event: 'event_id', manyPerEvent: true }; // event_organizers_by_organizer
const VENUE_LINKS: EventLinks = { table: 'events', record: 'venue_id', event: 'post_id', manyPerEvent: false }; // events_by_venue

/** `FROM … WHERE …` of the links (`l`) in the window whose record meets `recordIs`, through their index's ranges. */
const linksInWindow = ({ table }: EventLinks, recordIs: string, startBounds: ((column: string) => string)[]) =>
  `FROM ${table} l WHERE ${recordIs}${startBounds.map((bound) => ` AND ${bound('l.start_local')}`).join('')}`;

/** An event list's filter by records (`ids`, bound as `@name`), and its condition on an event `e`. */
interface RecordsFilter {
  links: EventLinks;
  name: string;
  ids: number[];
  condition: string;
}

/** Filters preferred to read a list from, those of records with fewer events first. */
const LINKS_ORDER: EventLinks[] = [ORGANIZER_LINKS, VENUE_LINKS, TERM_LINKS];
/** Links in the window below which a list is read through them (see `throughLinks`). */
export const FEW_LINKS = 2000;

/**
 * A list filtered by several records (several venues, organizers, tags, or a category and its subcategories): read
 * through their links in the window, which carry their event's start, when they have few. Off the listing index, the
 * page reads the window in order until it is full, and the total every event of the window, each one's links looked
 * up, whoever the records: for records without an event in the window, both read the whole window. So a first
 * statement counts their links in the window, at most FEW_LINKS of them (a look along their ranges of the index);
 * fewer, each of their events is read by id, once, checked against the rest of the list, and the page ordered from
 * them with the total counted in the same pass; more, the page reads the window as before and the total checks each
 * event against their links, gathered once. On SQLite, 100,000 events, default window, page and total: two
 * organizers 18.4 to 1.7 ms, two without an event in the window 31.6 to 0.6, two venues 21.0 to 1.3, ten 21.5 to 7.3,
 * two tags 19.1 to 9.2, the category music and its three subcategories (42 % of the events) 19.3 to 13.0; in a window
 * of 90 days, where that category has 1,500 links, 2.4 to 2.7 ms (near FEW_LINKS, a look and an event by id for each
 * link cost about what the window does). A filter of one venue is an equality read through that venue's range
 * already.
 */
function throughLinks(filters: RecordsFilter[], where: string[], startBounds: ((column: string) => string)[], params: Params, dialect: SqlDialect): Pick<ListSql, 'count' | 'fewLinks'> | null {
  if (filters.some((f) => f.links === VENUE_LINKS && f.ids.length === 1)) return null;
  const several = filters.filter((f) => f.ids.length > 1);
  const chosen = LINKS_ORDER.map((links) => several.find((f) => f.links === links)).find((f) => f !== undefined);
  if (chosen === undefined) return null;
  const { record, event, manyPerEvent } = chosen.links;
  const links = linksInWindow(chosen.links, dialect.inIds(params, chosen.name, `l.${record}`, chosen.ids), startBounds);
  const rest = where.filter((c) => c !== chosen.condition);
  const eachLinked = dialect.eachLinkedEvent(`SELECT ${manyPerEvent ? 'DISTINCT ' : ''}l.${event} AS id, l.start_local ${links}`, rest.join(' AND '));
  // a venue's condition is a column of the listing index already; links of other records are gathered once
  const amongLinks = chosen.links === VENUE_LINKS ? chosen.condition : `${dialect.unindexed('e.post_id')} IN (SELECT l.${event} ${links})`;
  return {
    count: `SELECT COUNT(*) AS total FROM events e WHERE ${[...rest, amongLinks].join(' AND ')}`,
    fewLinks: {
      links: `SELECT COUNT(*) AS links FROM (SELECT 1 AS linked ${links} LIMIT ${FEW_LINKS}) f`,
      page: `SELECT e.post_id AS id, COUNT(*) OVER () AS total ${eachLinked} ORDER BY m.start_local, e.date_utc, e.post_id LIMIT @limit OFFSET @offset`,
      count: `SELECT COUNT(*) AS total ${eachLinked}`,
    },
  };
}

/**
 * The statements to run of a list: those of `fewLinks` when it has them and `linksIn` (which runs a statement of one
 * row and column) finds fewer than FEW_LINKS links.
 */
export async function listThrough(sql: ListSql, linksIn: (statement: string) => Promise<number>): Promise<ListSql> {
  if (!sql.fewLinks || (await linksIn(sql.fewLinks.links)) >= FEW_LINKS) return sql;
  return { page: sql.fewLinks.page, count: sql.fewLinks.count, params: sql.params, totalInPage: true };
}

/** The statements of an event list (GET /events and the iCalendar feed). */
export function eventListSql(q: EventListQuery, dialect: SqlDialect): ListSql {
  const params: Params = { lang: q.lang, now: q.nowUtc };
  const listed = ['e.lang = @lang', dialect.flag('e.hide_from_listings', false), statusSql('e', q.statuses, params), viewerSql('e', q.viewer, params)];
  const where = [...listed];
  /** The bounds on the start of the events, as conditions on a column holding it (`e.start_local`, a link's copy). */
  const startBounds: ((column: string) => string)[] = [];
  q.bounds.forEach((b, i) => {
    params[`b${i}`] = b.value;
    where.push(`e.${b.column}_local ${b.op} @b${i}`);
    // every event ends at or after its start, so an upper bound on the end bounds the start too: the index range
    // on start then closes, and a list costs its window, not the rest of the calendar
    if (b.column === 'start' || b.op === '<=' || b.op === '<') startBounds.push((column) => `${column} ${b.op} @b${i}`);
    if (b.column === 'end' && (b.op === '<=' || b.op === '<')) where.push(`e.start_local ${b.op} @b${i}`);
  });
  const datesOnly = where.length;
  /** Where the list's events are read from: the events table, or the matches of a search joined to it. */
  let events = 'events e';
  let fewMatches = false;
  // a filter on what a protected event hides selects only events the caller may open
  const open = openEventSql(q.access, params, dialect);
  if (open !== null && FILTERS_ON_HIDDEN.some((filter) => q[filter] !== undefined)) where.push(open);
  if (q.search) {
    let text = 'p.search_text';
    if (open !== null && q.access.anonymous) where.push(open); // no protected event in a visitor's search (WordPress)
    else if (open !== null) text = `(CASE WHEN ${openSql('p', 'event', q.access, params, dialect)} THEN p.search_text ELSE ${dialect.searchedTitle('p.search_text')} END)`;
    const clauses: string[] = [];
    const contains = (word: string) => {
      const name = `w${clauses.length}`;
      params[name] = like(word);
      return `${text} LIKE @${name} ESCAPE '\\'`;
    };
    for (const word of q.search.include) clauses.push(contains(word));
    for (const word of q.search.exclude) clauses.push('NOT ' + contains(word));
    const narrowed = dialect.searchIndex(params, q.search.include, monthsOfBounds(q.bounds));
    if (narrowed?.drives) events = `(${narrowed.ids}) m ${dialect.joinInOrder} events e ON e.post_id = m.id`;
    else if (narrowed) where.push(`${dialect.unindexed('e.post_id')} IN (${narrowed.ids})`);
    fewMatches = narrowed?.windowed ?? false;
    if (clauses.length) where.push(`EXISTS (SELECT 1 FROM posts p WHERE p.id = e.post_id AND ${clauses.join(' AND ')})`);
  }
  const among = (name: string, column: string, list: number[]) => dialect.inIds(params, name, column, list);
  // an event's few links are read and each looked up in the list, rather than the index probed once for every id of
  // the list: one lookup per link, however long the list
  const term = dialect.unindexed('et.term_id');
  // the links carry their event's start (migration 0016): bounded by it too, a list in a window of a large calendar
  // may be read from the terms' links in that window (PostgreSQL plans so when the terms have many links)
  const linkedInWindow = startBounds.map((bound) => ` AND ${bound(dialect.unindexed('et.start_local'))}`).join('');
  // so do an organizer's (migration 0004): PostgreSQL then gathers the organizers' links in the window alone (the
  // total of two organizers of 100,000 events: 3.3-3.9 to 1.3-1.5 ms)
  const organizedInWindow = startBounds.map((bound) => ` AND ${bound(dialect.unindexed('eo.start_local'))}`).join('');
  /** Each filter by records, with the links its events may be read from (see `driving` and `throughLinks`). */
  const byRecords: RecordsFilter[] = [];
  if (q.categoryIds) {
    byRecords.push({ links: TERM_LINKS, name: 'categories', ids: q.categoryIds,
      condition: `EXISTS (SELECT 1 FROM event_terms et WHERE et.event_id = e.post_id AND ${among('categories', term, q.categoryIds)}${linkedInWindow})` });
  }
  if (q.tagIds) {
    byRecords.push({ links: TERM_LINKS, name: 'tags', ids: q.tagIds,
      condition: `EXISTS (SELECT 1 FROM event_terms et WHERE et.event_id = e.post_id AND ${among('tags', term, q.tagIds)}${linkedInWindow})` });
  }
  if (q.venueIds) byRecords.push({ links: VENUE_LINKS, name: 'venues', ids: q.venueIds, condition: among('venues', 'e.venue_id', q.venueIds) });
  if (q.organizerIds) {
    byRecords.push({ links: ORGANIZER_LINKS, name: 'organizers', ids: q.organizerIds,
      condition: `EXISTS (SELECT 1 FROM event_organizers eo WHERE eo.event_id = e.post_id AND ${among('organizers', dialect.unindexed('eo.organizer_id'), q.organizerIds)}${organizedInWindow})` });
  }
  // a filter by one organizer, tag or category (one without subcategories) reads its record's links in the window:
  // they carry their event's start, in the order of their index (event_organizers_by_organizer, event_terms_by_term),
  // and each event is then read by id, so a list costs that record's events. Checked event by event, the window's
  // events were read: on 100,000 events, page and total 11 ms for any organizer, 15 ms for a tag (0.06 and 2.5 ms)
  const driving = events !== 'events e' || q.include ? undefined
    : ['organizers', 'tags', 'categories'].map((name) => byRecords.find((f) => f.name === name && f.ids.length === 1)).find((f) => f !== undefined);
  let linked: string | null = null;
  if (driving !== undefined) {
    // an equality on both engines: PostgreSQL, given a list of one (`= ANY`), planned a tag's list 8 times dearer
    params[driving.name] = driving.ids[0]!;
    const { event, record } = driving.links;
    linked = `SELECT l.${event} AS id, l.start_local ${linksInWindow(driving.links, `l.${record} = @${driving.name}`, startBounds)}`;
  }
  where.push(...byRecords.filter((f) => f !== driving).map((f) => f.condition));
  if (q.featured !== undefined) where.push(dialect.flag('e.featured', q.featured));
  if (q.ticketed !== undefined) where.push(dialect.flag('e.ticketed', q.ticketed));
  if (q.parentId !== undefined) {
    params.parent = q.parentId;
    where.push('e.post_id IN (SELECT id FROM posts WHERE parent_id = @parent)');
  }
  if (q.include) where.push(among('include', 'e.post_id', q.include));
  if (q.withoutPassword) where.push(dialect.flag('e.protected', false));
  // the coordinates of a protected venue count only for callers who may open the venue
  const venueOpen = q.geo ? openSql('vp', 'venue', q.access, params, dialect) : null;
  const openVenue = venueOpen === null ? '' : ` AND ${venueOpen}`;
  if (q.geo === 'any') {
    where.push(`e.venue_id IN (SELECT v.post_id FROM venues v JOIN posts vp ON vp.id = v.post_id WHERE v.geo_lat IS NOT NULL AND v.geo_lng IS NOT NULL${openVenue})`);
  } else if (q.geo) {
    // a bounding box narrows the venues, then the true (haversine) distance decides
    const dLat = q.geo.radiusKm / 111.2;
    const dLng = q.geo.radiusKm / Math.max(0.01, 111.2 * Math.cos((q.geo.lat * Math.PI) / 180));
    Object.assign(params, { lat: q.geo.lat, lng: q.geo.lng, latMin: q.geo.lat - dLat, latMax: q.geo.lat + dLat, radius: q.geo.radiusKm });
    // the longitude band wraps at ±180° (and spans everything near the poles)
    let lngBand = 'TRUE';
    if (dLng < 180) {
      const [lo, hi] = [q.geo.lng - dLng, q.geo.lng + dLng];
      Object.assign(params, { lngMin: lo < -180 ? lo + 360 : lo, lngMax: hi > 180 ? hi - 360 : hi });
      lngBand = lo < -180 || hi > 180 ? '(v.geo_lng >= @lngMin OR v.geo_lng <= @lngMax)' : 'v.geo_lng BETWEEN @lngMin AND @lngMax';
    }
    where.push(`e.venue_id IN (SELECT v.post_id FROM venues v JOIN posts vp ON vp.id = v.post_id
      WHERE vp.status = 'publish'${openVenue} AND v.geo_lat BETWEEN @latMin AND @latMax AND ${lngBand}
        AND 12742.0 * asin(sqrt(pow(sin(radians(v.geo_lat - @lat) / 2), 2) + cos(radians(@lat)) * cos(radians(v.geo_lat)) * pow(sin(radians(v.geo_lng - @lng) / 2), 2))) <= @radius)`);
  }
  const filter = linked === null ? `FROM ${events} WHERE ${where.join(' AND ')}` : dialect.eachLinkedEvent(linked, where.join(' AND '));
  // driven by a record's links, in the order of their index: the same start as the event's, by which the engine then
  // need not sort
  const order = q.include ? 'e.date_utc, e.post_id' : `${driving !== undefined ? 'm' : 'e'}.start_local, e.date_utc, e.post_id`;
  // any filter adds a condition: a list of its window's listed events alone can be summed from the day totals
  const summed = where.length === datesOnly && driving === undefined ? summedTotal(q, listed, params, dialect) : null;
  const throughRecords = summed === null && dialect.readsThroughLinks && driving === undefined && events === 'events e' && !q.include
    ? throughLinks(byRecords, where, startBounds, params, dialect) : null;
  if (throughRecords) return { page: `SELECT e.post_id AS id ${filter} ORDER BY ${order} LIMIT @limit OFFSET @offset`, ...throughRecords, params };
  const count = summed ?? `SELECT COUNT(*) AS total ${filter}`;
  // a search's matches in its window are few, and all of them are read to be ordered: counted in the same pass, each
  // is looked up once, not once for the page and again for the total
  if (fewMatches) return { page: `SELECT e.post_id AS id, COUNT(*) OVER () AS total ${filter} ORDER BY ${order} LIMIT @limit OFFSET @offset`, count, params, totalInPage: true };
  return { page: `SELECT e.post_id AS id ${filter} ORDER BY ${order} LIMIT @limit OFFSET @offset`, count, params };
}

/**
 * The ids of a list's page and its total, from the rows of its page statement (`id`, and `total` when `totalInPage`)
 * and, only when they cannot tell it, its count statement.
 */
export async function pageAndTotal(sql: ListSql, offset: number, rows: { id: number; total?: number }[], counted: () => Promise<number>): Promise<{ ids: number[]; total: number }> {
  const ids = rows.map((r) => r.id);
  if (sql.totalInPage && (rows.length > 0 || offset === 0)) return { ids, total: rows[0]?.total ?? 0 };
  return { ids, total: await counted() };
}

const WIRE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
/** The day after a `YYYY-MM-DD` day. */
const nextDay = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);

/**
 * The window of a list whose total the day totals can give (see summedTotal): a public list of published events,
 * bounded below by its start and above by its start or end, in stored times. Null otherwise.
 */
function summableWindow(q: EventListQuery): { lower: string; upper: string } | null {
  if (q.viewer.kind !== 'public' || q.statuses.length !== 1 || q.statuses[0] !== 'publish') return null;
  if (q.bounds.some((b) => !WIRE_TIME.test(b.value) || (b.column === 'end' && (b.op === '>=' || b.op === '>')))) return null;
  const lower = q.bounds.filter((b) => b.column === 'start' && (b.op === '>=' || b.op === '>')).map((b) => b.value).sort().at(-1);
  // every event ends at or after its start: an upper bound on its end bounds its start too
  const upper = q.bounds.filter((b) => b.op === '<=' || b.op === '<').map((b) => b.value).sort()[0];
  return lower === undefined || upper === undefined ? null : { lower, upper };
}

/** Rows into a list a page may end and still count as bounded (see boundedEventList). */
const BOUNDED_LIST_ROWS = 200;
/** Days a bounded list's window may span: its total reads the day totals of the window one by one. */
const BOUNDED_LIST_DAYS = 1_100;
/** What an event list filtered by its dates alone sets (any other field is a filter, or a search). */
const DATES_ONLY: ReadonlySet<string> = new Set<keyof EventListQuery>(['lang', 'nowUtc', 'statuses', 'viewer', 'access', 'bounds', 'limit', 'offset']);

/**
 * Whether an event list costs little whatever the calendar's size: filtered by its dates alone, for the public, its
 * total summed from the day totals of a window of at most three years (or counted in a window under two days), its
 * page near the start of the list. The default GET /events is one. The SQLite engine reads such a list on the
 * request's own connection rather than in a read thread: the thread's round trip cost more than the list.
 */
export function boundedEventList(q: EventListQuery): boolean {
  if (q.offset + q.limit > BOUNDED_LIST_ROWS) return false;
  for (const [key, value] of Object.entries(q)) if (value !== undefined && !DATES_ONLY.has(key)) return false;
  const window = summableWindow(q);
  return window !== null && Date.parse(`${window.upper.slice(0, 10)}T00:00:00Z`) - Date.parse(`${window.lower.slice(0, 10)}T00:00:00Z`) <= BOUNDED_LIST_DAYS * 86_400_000;
}

/**
 * The total of a public event list bounded by dates alone (the default list, a month's view), from the day totals
 * (`event_days`, migration 0014: listed events per language and day of their start, published or scheduled): the
 * window's inside days summed, its first and last day counted event by event, less the events of the inside days
 * that are scheduled and not yet due or that end after the window (each few, through an index of their own). Exact,
 * and it costs the days of the window, not its events: counted one by one, a two-year window cost its ~30,000 events.
 * Null when the list is not for the public or its bounds do not allow it; the caller asks only for lists filtered by
 * their dates alone.
 */
function summedTotal(q: EventListQuery, listed: string[], params: Params, dialect: SqlDialect): string | null {
  const window = summableWindow(q);
  if (window === null) return null;
  const { lower, upper } = window;
  const insideFrom = nextDay(lower.slice(0, 10));
  const insideTo = upper.slice(0, 10);
  if (insideFrom >= insideTo) return null; // no whole day inside: the events are few
  Object.assign(params, { insideFromDay: insideFrom, insideToDay: insideTo, insideFrom: `${insideFrom} 00:00:00`, insideTo: `${insideTo} 00:00:00` });
  const inside = (start = 'e.start_local') => `${start} >= @insideFrom AND ${start} < @insideTo`;
  const endsInside = q.bounds.flatMap((b, i) => (b.column === 'end' ? [`e.end_local ${b.op} @b${i}`] : []));
  // an edge day is one range of the listing index: the window's bounds on the other side are checked, not searched
  // (SQLite would search the range of whichever bound on start it met first: the whole window)
  const edge = (side: 'first' | 'last') => {
    const starts = q.bounds.flatMap((b, i) => {
      const lowerBound = b.op === '>=' || b.op === '>';
      const searched = lowerBound === (side === 'first');
      return b.column === 'start' || !lowerBound ? [`${searched ? 'e.start_local' : dialect.unindexed('e.start_local')} ${b.op} @b${i}`] : [];
    });
    const near = side === 'first' ? 'e.start_local < @insideFrom' : 'e.start_local >= @insideTo';
    return `(SELECT COUNT(*) FROM events e WHERE ${[...listed, ...starts, near, ...endsInside.map((c) => c.replace('e.end_local', dialect.unindexed('e.end_local')))].join(' AND ')})`;
  };
  // the listing index is entered by language, flag and start: each correction reads an index of its own instead
  const hidden = dialect.flag(dialect.unindexed('e.hide_from_listings'), false);
  const corrections = [
    // scheduled, not yet due (events_scheduled)
    `(SELECT COUNT(*) FROM events e WHERE e.status = 'future' AND e.date_utc > @now AND ${dialect.unindexed('e.lang')} = @lang AND ${hidden}
      AND ${inside(dialect.unindexed('e.start_local'))})`,
    ...(endsInside.length === 0 ? [] : [
      // listed, ending after the window: events over more than one day (events_multiday)
      `(SELECT COUNT(*) FROM events e WHERE substr(e.start_local, 1, 10) <> substr(e.end_local, 1, 10) AND e.lang = @lang
        AND ${hidden} AND ${inside()}
        AND (e.status = 'publish' OR (e.status = 'future' AND e.date_utc <= @now)) AND NOT (${endsInside.join(' AND ')}))`,
    ]),
  ];
  return `SELECT COALESCE((SELECT SUM(listed) FROM event_days WHERE lang = @lang AND day >= @insideFromDay AND day < @insideToDay), 0)
      + ${edge('first')}
      + ${edge('last')}
      - ${corrections.join(' - ')} AS total`;
}

/** The statements of a venue or organizer list. */
export function linkedListSql(q: LinkedListQuery, dialect: SqlDialect): ListSql {
  const params: Params = { lang: q.lang, now: q.nowUtc };
  // the type as a literal, so the engine can use the partial index of venue and organizer posts
  const where = [`p.type = '${q.type === 'venue' ? 'venue' : 'organizer'}'`, 'p.lang = @lang', statusSql('p', q.statuses, params), viewerSql('p', q.viewer, params)];
  const detail = q.type === 'venue' ? 'venues' : 'organizers';
  if (q.words && q.words.length > 0) {
    q.words.forEach((w, i) => (params[`w${i}`] = like(w)));
    const fields = LINKED_SEARCH_FIELDS[q.type].map(([column, field], index) => ({ column, field, index }));
    const all = ({ column, index }: (typeof fields)[number]) =>
      `(${q.words!.map((_, i) => `${dialect.foldedField(column, index)} LIKE @w${i} ESCAPE '\\'`).join(' AND ')})`;
    const open = openSql('p', q.type, q.access, params, dialect);
    if (open === null || q.access.anonymous) {
      if (open !== null) where.push(open); // no protected record in a visitor's search (WordPress)
      where.push(`(${fields.map(all).join(' OR ')})`);
    } else {
      // a protected record the caller may not open is matched on what its entry shows: its name
      const hidden = fields.filter(({ field }) => hidesWhenProtected(q.type, field));
      const matches = fields.filter(({ field }) => !hidesWhenProtected(q.type, field)).map(all);
      if (hidden.length > 0) matches.push(`(${open} AND (${hidden.map(all).join(' OR ')}))`);
      where.push(`(${matches.join(' OR ')})`);
    }
  }
  // events linked to the record; `since` narrows to those starting then or later, through the linked indexes
  const linkedEvents = (since: string | null) => q.type === 'venue'
    ? `SELECT 1 FROM events e WHERE e.venue_id = p.id${since ? ` AND e.start_local >= ${since}` : ''}`
    : `SELECT 1 FROM event_organizers eo ${dialect.joinInOrder} events e ON e.post_id = eo.event_id WHERE eo.organizer_id = p.id${since ? ` AND eo.start_local >= ${since}` : ''}`;
  if (q.event?.linksHidden) where.push('FALSE');
  else if (q.event) {
    params.event = q.event.id;
    where.push(q.type === 'venue' ? 'p.id = (SELECT venue_id FROM events WHERE post_id = @event)' : 'p.id IN (SELECT organizer_id FROM event_organizers WHERE event_id = @event)');
  }
  // an event whose links the caller may not see (protected, not opened) does not link it to the record
  const eventOpen = q.hasEvents !== undefined || q.onlyWithUpcoming ? openEventSql(q.access, params, dialect) : null;
  const openEvent = eventOpen === null ? '' : ` AND ${eventOpen}`;
  if (q.hasEvents !== undefined) {
    where.push(`${q.hasEvents ? '' : 'NOT '}EXISTS (${linkedEvents(null)} AND e.status NOT IN ('draft', 'pending')${openEvent})`);
  }
  if (q.onlyWithUpcoming) {
    params.nowLocal = q.nowLocal;
    where.push(`EXISTS (${linkedEvents('@nowLocal')} AND ${dialect.flag('e.hide_from_listings', false)} AND e.status <> 'trash' AND ${viewerSql('e', q.eventViewer, params, 'e')}${openEvent})`);
  }
  const conditions = where.join(' AND ');
  const filter = `FROM posts p JOIN ${detail} d ON d.post_id = p.id WHERE ${conditions}`;
  // every post of the type has its row of details, written in the same statement: a count that reads no detail
  // counts the posts alone, off their listing index (joined, PostgreSQL walked every post by id to count 200 venues)
  const counted = /\bd\./.test(conditions) ? filter : `FROM posts p WHERE ${conditions}`;
  return { page: `SELECT p.id ${filter} ORDER BY p.date_utc DESC, p.id DESC LIMIT @limit OFFSET @offset`, count: `SELECT COUNT(*) AS total ${counted}`, params };
}

/**
 * The statements of a `modified_after` page: changes (records modified, and records deleted for good) after a
 * position, in (time, id) order, and how many are left in the pass. Both sides walk their (type, time, id) index.
 * The page's rows: `id`, `changed_utc`, `changed_local` (null when deleted), `readable`, `removed`.
 */
export function changesSql(q: ChangesQuery): { page: string; count: string; params: Params; countParams: Params } {
  const window = { type: q.type, lang: q.lang, after: q.after, afterId: q.afterId, until: q.until };
  const params: Params = { ...window, now: q.nowUtc, limit: q.limit };
  const readable = `${statusSql('p', q.statuses, params)} AND ${viewerSql('p', q.viewer, params)}`;
  const range = (time: string, id: string) => `(${time} > @after OR (${time} = @after AND ${id} > @afterId)) AND ${time} <= @until`;
  const modified = `FROM posts p WHERE p.type = @type AND p.lang = @lang AND ${range('p.modified_utc', 'p.id')}`;
  const deleted = `FROM deleted_posts d WHERE d.type = @type AND d.lang = @lang AND ${range('d.deleted_utc', 'd.id')}`;
  return {
    page: `SELECT p.id, p.modified_utc AS changed_utc, p.modified_local AS changed_local, (${readable}) AS readable, p.status = 'trash' AS removed ${modified}
      UNION ALL SELECT d.id, d.deleted_utc, NULL, FALSE, TRUE ${deleted}
      ORDER BY changed_utc, id LIMIT @limit`,
    count: `SELECT (SELECT COUNT(*) ${modified}) + (SELECT COUNT(*) ${deleted}) AS total`,
    params,
    countParams: window,
  };
}
