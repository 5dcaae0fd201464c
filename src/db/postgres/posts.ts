import type pg from 'pg';
import { LANGS, langsPreferring, type Lang } from '../../domain/context.js';
import { collationKey, foldForSearch, slugForQuery } from '../../domain/text.js';
import { PostsByKey, type PostsRepository, type RecordWithLinks, type Translations, type ViewLinks, type ViewLinksQuery } from '../engine.js';
import { utcNowWire } from '../generation.js';
import { TurnBatch, type Pending } from '../turnBatch.js';
import { changesSql, eventListSql, like, linkedListSql, linkedSearchTexts, listThrough, pageAndTotal, trigramsOfText, type ListSql, type Params, type SqlDialect } from '../listQueries.js';
import type {
  Change, ChangesQuery, EventListQuery, EventRecord, LinkedListQuery, NewRecord, OrganizerRecord, PostRecord, PostType, RecordOf, TranslationMember, VenueRecord,
} from '../records.js';
import {
  baseFromRow, baseToRow, DETAIL_COLUMNS, DETAIL_TABLE, detailsRow, eventFromRow, groupMembers, langsOfMembers, organizerFromRow, POST_COLUMNS,
  POST_READ_COLUMNS, toMedia, venueFromRow, type MediaRow, type Row, type TranslationRow,
} from '../rows.js';
import { TERM_COUNT, termFromRow, type TermRow } from './terms.js';
import type { Queryable } from './connection.js';
import { named, query } from './sql.js';

/** Trigrams a search asks the dated index for, at most: each is one index key per month of the window. */
const DATED_TRIGRAMS = 3;

/**
 * Up to DATED_TRIGRAMS trigrams of the folded words that the dated index (migration 0018) keeps as they are, spread
 * over them (first, middle, last): pg_trgm keeps a trigram of three ASCII letters or digits unchanged, and one inside
 * a word of a text holding the word is in the text's keys whatever surrounds it. PostgreSQL counts no trigram's events
 * cheaply, and a word's ends narrow as well as its middle. None when no word has such a trigram.
 */
function datedTrigrams(words: string[]): string[] {
  const grams = [...new Set(words.flatMap((word) => [...trigramsOfText(foldForSearch(word))]))].filter((gram) => /^[a-z0-9]{3}$/.test(gram));
  if (grams.length <= DATED_TRIGRAMS) return grams;
  return Array.from({ length: DATED_TRIGRAMS }, (_, i) => grams[Math.round((i * (grams.length - 1)) / (DATED_TRIGRAMS - 1))]!);
}

/** How PostgreSQL spells what the shared list queries leave to each engine. */
export const POSTGRES_DIALECT: SqlDialect = {
  // as an array, not a subquery of its elements, which the planner joined as a table of unknown size: counting the
  // 3,450 events of a quarter in a category of 20,000 took 19 ms that way, 6 ms this way
  inIds(params: Params, name: string, column: string, ids: number[]) {
    params[name] = ids;
    return `${column} = ANY(@${name}::bigint[])`;
  },
  flag: (column, value) => `${column} = ${value ? 'true' : 'false'}`,
  // the trigram GIN index of posts.search_text (migration 0008) answers LIKE '%word%' for words of three characters
  // or more; it is partial (events' texts only), so the condition repeats its predicate for the planner to use it.
  // The whole search text holds whatever its title part holds: this narrows a search of titles only too.
  searchIndex(params, words, months) {
    const long = words.filter((word) => [...foldForSearch(word)].length >= 3);
    if (long.length === 0) return null;
    const grams = months === null ? [] : datedTrigrams(long);
    if (months === null || grams.length === 0) {
      const likes = long.map((word, i) => {
        params[`t${i}`] = like(word);
        return `search_text LIKE @t${i} ESCAPE '\\'`;
      });
      return { ids: `SELECT id FROM posts WHERE search_text <> '' AND ${likes.join(' AND ')}`, drives: false, windowed: false };
    }
    // in a window of a few years, the dated index (migration 0018): a few trigrams, each in the window's months.
    // `OFFSET 0` plans the subquery on its own, where only the index can answer it: joined, the planner estimated a
    // rare word's matches at one and computed the keys of each, post by post
    Object.assign(params, { firstMonth: months.first, lastMonth: months.last });
    const keys = grams.map((gram, i) => {
      params[`g${i}`] = gram;
      return `almanac_dated_keys(start_month, search_text) && almanac_month_keys(@firstMonth, @lastMonth, @g${i})`;
    });
    return { ids: `SELECT id FROM posts WHERE start_month IS NOT NULL AND search_text <> '' AND ${keys.join(' AND ')} OFFSET 0`, drives: false, windowed: true };
  },
  // PostgreSQL plans from statistics: no hint needed (nor offered)
  unindexed: (column) => column,
  joinInOrder: 'JOIN',
  // each event by its key, in a subquery the planner keeps as it is (OFFSET 0): joined, the tag on 1,400 events of
  // the window (100,000 in all) was counted by hashing the window's 16,000 events read whole, page and total 24-33 ms,
  // 5.6 this way; costed with the default random_page_cost, the lookups seemed dearer than the whole table
  eachLinkedEvent: (links, where) => `FROM (${links}) m CROSS JOIN LATERAL (SELECT e.post_id, e.date_utc FROM events e WHERE e.post_id = m.id AND ${where} OFFSET 0) e`,
  readsThroughLinks: false,
  searchedTitle: (column) => `split_part(${column}, chr(31), 1)`,
  // folded by `foldForSearch` when the record was written (posts.search_fields, migration 0010), so both engines
  // compare exactly the same folded text; PostgreSQL's own lower() and unaccent fold otherwise
  foldedField: (_column, index) => `p.search_fields[${index + 1}]`,
  unlocks(params, column, given) {
    // a PostgreSQL text cannot hold U+0000, so no stored password is such a text (and it cannot be sent as one)
    if (given.includes('\u0000')) return 'FALSE';
    params.opener = given;
    return `almanac_unlocks(${column}, @opener)`; // migration 0011: equal octets, compared as digests
  },
};

/**
 * The columns of a post as this engine writes them: the shared ones, and the folded copies of what venue and
 * organizer search reads (migration 0010), computed by the same function as SQLite's `almanac_fold`.
 */
const PG_POST_COLUMNS = [...POST_COLUMNS, 'search_fields'];
function postRow(record: Omit<PostRecord, 'id' | 'translationGroup'>): Row {
  return Object.assign(baseToRow(record), { search_fields: linkedSearchTexts(record) });
}

const placeholders = (count: number, from = 1) => Array.from({ length: count }, (_, i) => `$${i + from}`).join(', ');

const POST_TYPES = ['event', 'venue', 'organizer'] as const;

/** The SQL of one type's insert and update, built once from the shared column lists. */
const STATEMENTS = Object.fromEntries(POST_TYPES.map((type) => [type, {
  updateDetails: `UPDATE ${DETAIL_TABLE[type]} SET ${DETAIL_COLUMNS[type].map((c, i) => `${c} = $${i + 2}`).join(', ')} WHERE post_id = $1`,
  rows: type === 'event'
    // an event with its organizers (in order) and terms, in one round trip
    ? `SELECT d.*, ${POST_READ_COLUMNS},
         COALESCE((SELECT json_agg(eo.organizer_id ORDER BY eo.position) FROM event_organizers eo WHERE eo.event_id = p.id), '[]') AS organizer_ids,
         COALESCE((SELECT json_agg(et.term_id) FROM event_terms et WHERE et.event_id = p.id), '[]') AS term_ids
       FROM posts p JOIN events d ON d.post_id = p.id WHERE p.id = ANY($1::bigint[])`
    : `SELECT ${POST_READ_COLUMNS}, d.* FROM posts p JOIN ${DETAIL_TABLE[type]} d ON d.post_id = p.id WHERE p.id = ANY($1::bigint[])`,
}])) as Record<PostType, { updateDetails: string; rows: string }>;

/**
 * A whole record in one round trip: the post (its id from the sequence unless given, its translation group its own
 * id unless it joins another's), its details and, for events, its organizers (in order) and terms. The links'
 * triggers (term counts) run at the end of the statement, when the event row is there to read. `create`: nothing is
 * written when the slug is taken in the type and language (the unique index posts_slug), and the row is returned
 * with its details, as `findMany` reads them but for the links, which are what was written.
 */
function insertStatement(type: PostType, create: boolean): string {
  const post = PG_POST_COLUMNS.length;
  const details = DETAIL_COLUMNS[type].length;
  const id = '$1::bigint';
  const group = `$${post + 2}::bigint`;
  const d = (i: number) => `$${post + 3 + i}`;
  const links = type === 'event'
    ? `, o AS (INSERT INTO event_organizers (event_id, organizer_id, position, start_local)
         SELECT p.id, x.organizer, x.n - 1, ${d(DETAIL_COLUMNS.event.indexOf('start_local'))} FROM p, unnest($${post + details + 3}::bigint[]) WITH ORDINALITY AS x(organizer, n))
       , t AS (INSERT INTO event_terms (event_id, term_id, start_local)
         SELECT DISTINCT p.id, x.term, ${d(DETAIL_COLUMNS.event.indexOf('start_local'))} FROM p, unnest($${post + details + 4}::bigint[]) AS x(term))`
    : '';
  return `WITH n AS (SELECT COALESCE(${id}, nextval(pg_get_serial_sequence('posts', 'id'))) AS id)
    , p AS (INSERT INTO posts (id, ${PG_POST_COLUMNS.join(', ')}, translation_group)
        SELECT n.id, ${placeholders(post, 2)}, COALESCE(${group}, n.id) FROM n
        ${create ? 'ON CONFLICT (type, lang, slug) DO NOTHING RETURNING *' : 'RETURNING id'})
    , details AS (INSERT INTO ${DETAIL_TABLE[type]} (post_id, ${DETAIL_COLUMNS[type].join(', ')}) SELECT p.id, ${Array.from({ length: details }, (_, i) => d(i)).join(', ')} FROM p
        ${create ? 'RETURNING *' : ''})
    ${links}
    ${create ? `SELECT d.*, ${POST_READ_COLUMNS} FROM p JOIN details d ON d.post_id = p.id` : 'SELECT id FROM p'}`;
}
/** Where `viewLinksSql` takes what it is asked for: statement parameters, or expressions over a record read with it. */
interface LinksAsked {
  venueIds: string;
  organizerIds: string;
  lang: string;
  termIds: string;
  imageIds: string;
  groups: Record<PostType, string>;
  /** Now, for term counts. */
  now: string;
}

/**
 * `viewLinks` as common table expressions (to follow a `WITH`) and the columns of one row: every kind of row a view
 * reads, each aggregated into one JSON column. Groups are unique per (type, group, lang) and (taxonomy, group, lang).
 */
function viewLinksSql(a: LinksAsked): { ctes: string; columns: string } {
  const ids = (expression: string) => `(${expression})::bigint[]`;
  // Every lookup enters its table by key, as the generic plan kept for the statement sees it: asked as an OR of two
  // types, the venues and organizers were read through every organizer's entry of the translation index (90 µs with
  // 200 organizers); the images, as an OR of an array and a subquery, by a sequential scan (3 ms with 50,000 images).
  // A link already in the language asked for is its own translation there, so only the others are looked up in the
  // translation indexes, and the venues and organizers are read by the ids of their own type: the links of ten English
  // events took 1.30-1.35 ms of PostgreSQL's time a page, now 1.03-1.05 (100,000 events, 32 clients).
  return {
    ctes: `asked AS (
    SELECT id, type, translation_group, lang FROM posts WHERE id = ANY(${ids(a.venueIds)} || ${ids(a.organizerIds)})
      AND ((type = 'venue' AND id = ANY(${ids(a.venueIds)})) OR (type = 'organizer' AND id = ANY(${ids(a.organizerIds)})))
  ), wanted_groups AS (
    SELECT type, translation_group FROM asked
    UNION SELECT 'event', unnest(${ids(a.groups.event)}) UNION SELECT 'venue', unnest(${ids(a.groups.venue)}) UNION SELECT 'organizer', unnest(${ids(a.groups.organizer)})
  ), members AS (
    SELECT p.translation_group, p.lang, p.id, p.author_id, p.status, p.status_before_trash, p.date_utc, p.type
    FROM posts p JOIN wanted_groups g ON p.type = g.type AND p.translation_group = g.translation_group
  ), linked AS (
    SELECT id, type FROM asked
    UNION SELECT p.id, p.type FROM asked a JOIN posts p ON p.type = a.type AND p.translation_group = a.translation_group AND p.lang = ${a.lang}
    WHERE a.lang <> ${a.lang}
  ), asked_terms AS (
    SELECT id, taxonomy, translation_group, lang FROM terms WHERE id = ANY(${ids(a.termIds)})
  ), shown_terms AS (
    SELECT id FROM asked_terms
    UNION SELECT t.id FROM asked_terms a JOIN terms t ON t.taxonomy = a.taxonomy AND t.translation_group = a.translation_group AND t.lang = ${a.lang}
    WHERE a.lang <> ${a.lang}
  )`,
    columns: `(SELECT json_agg(r) FROM (SELECT ${POST_READ_COLUMNS}, d.* FROM posts p JOIN venues d ON d.post_id = p.id WHERE p.id IN (SELECT id FROM linked WHERE type = 'venue')) r) AS venues,
    (SELECT json_agg(r) FROM (SELECT ${POST_READ_COLUMNS}, d.* FROM posts p JOIN organizers d ON d.post_id = p.id WHERE p.id IN (SELECT id FROM linked WHERE type = 'organizer')) r) AS organizers,
    (SELECT json_agg(m ORDER BY m.id) FROM members m) AS members,
    (SELECT json_agg(r) FROM (SELECT t.*, ${TERM_COUNT(a.now)} AS count FROM terms t WHERE t.id IN (SELECT id FROM shown_terms)) r) AS terms,
    (SELECT json_agg(m) FROM media m WHERE m.id IN (SELECT unnest(${ids(a.imageIds)}) UNION SELECT image_id FROM posts WHERE id IN (SELECT id FROM linked))) AS media`,
  };
}

/**
 * `viewLinks` in one round trip. $1 venues, $2 organizers, $3 the language, $4 terms, $5 images, $6-$8 translation
 * groups of events, venues and organizers shown, $9 now (term counts).
 */
export const VIEW_LINKS = (() => {
  const { ctes, columns } = viewLinksSql({ venueIds: '$1', organizerIds: '$2', lang: '$3', termIds: '$4', imageIds: '$5', groups: { event: '$6', venue: '$7', organizer: '$8' }, now: '$9' });
  return `WITH ${ctes} SELECT ${columns}`;
})();

/**
 * `viewLinks` of several queries in one statement: a row of links for each, as VIEW_LINKS reads it alone, in their
 * order (`ord`, from 1). $1-$8 text arrays of one element per query (id lists as array literals: `{1,2}`) in
 * VIEW_LINKS's order, $9 now.
 */
export const VIEW_LINKS_EACH = (() => {
  const { ctes, columns } = viewLinksSql({ venueIds: 'q.venues', organizerIds: 'q.organizers', lang: 'q.lang', termIds: 'q.terms', imageIds: 'q.images', groups: { event: 'q.events', venue: 'q.venue_groups', organizer: 'q.organizer_groups' }, now: '$9' });
  return `SELECT q.ord, l.* FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
      WITH ORDINALITY AS q(venues, organizers, lang, terms, images, events, venue_groups, organizer_groups, ord)
    CROSS JOIN LATERAL (WITH ${ctes} SELECT ${columns}) l ORDER BY q.ord`;
})();

/**
 * `findWithLinks` of a type as one statement: the record (`id`, of the type), as `findMany` reads it, as a JSON
 * column, and `viewLinks` of what `viewLinksQuery` would ask for it, taken from it in the statement; `lang` the
 * language, `now` now (expressions). No record of the type: a null record and no links.
 */
function withLinksSql(type: PostType, id: string, lang: string, now: string): string {
  const none = `'{}'`;
  const shown = type === 'event'
    ? `SELECT d.*, ${POST_READ_COLUMNS},
         ARRAY(SELECT eo.organizer_id FROM event_organizers eo WHERE eo.event_id = p.id ORDER BY eo.position) AS organizer_ids,
         ARRAY(SELECT et.term_id FROM event_terms et WHERE et.event_id = p.id) AS term_ids
       FROM posts p JOIN events d ON d.post_id = p.id WHERE p.id = ${id}`
    : `SELECT d.*, ${POST_READ_COLUMNS} FROM posts p JOIN ${DETAIL_TABLE[type]} d ON d.post_id = p.id WHERE p.id = ${id}`;
  const { ctes, columns } = viewLinksSql({
    venueIds: type === 'event' ? 'ARRAY(SELECT venue_id FROM shown WHERE venue_id <> 0)' : none,
    organizerIds: type === 'event' ? `COALESCE((SELECT organizer_ids FROM shown), ${none})` : none,
    termIds: type === 'event' ? `COALESCE((SELECT term_ids FROM shown), ${none})` : none,
    imageIds: 'ARRAY(SELECT image_id FROM shown WHERE image_id <> 0)',
    groups: { event: none, venue: none, organizer: none, [type]: 'ARRAY(SELECT translation_group FROM shown)' },
    lang,
    now,
  });
  return `WITH shown AS (${shown}), ${ctes} SELECT (SELECT row_to_json(shown) FROM shown) AS record, ${columns}`;
}

/** `findWithLinks` of each type in one round trip: $1 the id, $2 the language, $3 now. */
export const WITH_LINKS = Object.fromEntries(POST_TYPES.map((type) => [type, withLinksSql(type, '$1', '$2', '$3')])) as Record<PostType, string>;

/**
 * `findWithLinks` of several records of a type in one statement, a row for each as WITH_LINKS reads it alone, in
 * their order (`ord`, from 1): $1 their ids, $2 their languages, $3 now.
 */
export const WITH_LINKS_EACH = Object.fromEntries(POST_TYPES.map((type) => [type,
  `SELECT q.ord, l.* FROM unnest($1::bigint[], $2::text[]) WITH ORDINALITY AS q(id, lang, ord)
    CROSS JOIN LATERAL (${withLinksSql(type, 'q.id', 'q.lang', '$3')}) l ORDER BY q.ord`])) as Record<PostType, string>;

/** One row of `viewLinksSql`'s columns. */
interface LinksRow { venues: Row[] | null; organizers: Row[] | null; members: (TranslationRow & { type: PostType })[] | null; terms: TermRow[] | null; media: MediaRow[] | null }

function linksFromRow(row: LinksRow): ViewLinks {
  const members = row.members ?? [];
  return {
    venues: new Map((row.venues ?? []).map((r) => [r.id as number, venueFromRow(r) as VenueRecord])),
    organizers: new Map((row.organizers ?? []).map((r) => [r.id as number, organizerFromRow(r) as OrganizerRecord])),
    members: {
      event: groupMembers('event', members.filter((m) => m.type === 'event')),
      venue: groupMembers('venue', members.filter((m) => m.type === 'venue')),
      organizer: groupMembers('organizer', members.filter((m) => m.type === 'organizer')),
    },
    terms: new Map((row.terms ?? []).map((r) => [r.id, termFromRow(r)])),
    media: new Map((row.media ?? []).map((r) => [r.id, toMedia(r)])),
  };
}

/** A record of a type from its row (`findMany`'s statement, or the JSON of `WITH_LINKS`). */
function recordFromRow<T extends PostType>(type: T, r: Row): RecordOf<T> {
  return (type === 'event'
    ? eventFromRow(r, r.organizer_ids as number[], r.term_ids as number[])
    : type === 'venue' ? venueFromRow(r) : organizerFromRow(r)) as RecordOf<T>;
}

/**
 * A slug's owners in every language: one probe of the unique index (type, lang, slug) per language. Without the
 * languages named, the index cannot be entered past `type` and every post of the type is read.
 */
export const SLUG_LOOKUP = `SELECT id, lang FROM posts WHERE type = $1 AND lang IN (${LANGS.map((l) => `'${l}'`).join(', ')}) AND slug = $2`;

const SAME_NAME = `SELECT id FROM posts WHERE type = $1 AND lang = $2 AND title_key = $3 AND status <> 'trash' ORDER BY id`;
const INSERT = { event: insertStatement('event', false), venue: insertStatement('venue', false), organizer: insertStatement('organizer', false) };
const CREATE = { event: insertStatement('event', true), venue: insertStatement('venue', true), organizer: insertStatement('organizer', true) };
const UPDATE_POST = `UPDATE posts SET ${PG_POST_COLUMNS.map((c, i) => `${c} = $${i + 2}`).join(', ')} WHERE id = $1`;

/**
 * New events' inserts made in one turn of the event loop on one connection, written by one statement (one row each,
 * in the order they were asked for): for writes run beside one another in a batch (PostgresGroupCommit.run), which
 * are undone and run again one by one, as any write runs, if one of them fails. PostgreSQL's CPU per event went most
 * into preparing the statement's execution (its four inserts, their tables' indexes, CHECK constraints, index
 * predicates and expressions, triggers), once per statement: 14 events a statement took 420-450 µs each instead of
 * 940-970 as 14 statements (by hand, 100,000 events). The rows as `CREATE` returns them; null: the slug was taken.
 */
export class EventCreates {
  private readonly turn = new TurnBatch<unknown[], Row | null>((batch) => this.flush(batch));

  constructor(private readonly db: Queryable) {}

  create(values: unknown[]): Promise<Row | null> {
    return this.turn.add(values);
  }

  private async flush(batch: Pending<unknown[], Row | null>[]): Promise<void> {
    if (batch.length === 1) {
      const [row] = await query<Row>(this.db, CREATE.event, batch[0]!.call);
      batch[0]!.resolve(row ?? null);
      return;
    }
    const post = PG_POST_COLUMNS.length;
    const details = DETAIL_COLUMNS.event.length;
    const rows = batch.map(({ call: values }) => ({
      id: values[0], group: values[post + 1],
      p: Object.fromEntries(PG_POST_COLUMNS.map((c, i) => [c, values[1 + i]])),
      d: Object.fromEntries(DETAIL_COLUMNS.event.map((c, i) => [c, values[post + 2 + i]])),
      o: values[post + details + 2], t: values[post + details + 3],
    }));
    const found = await query<Row & { almanac_ord: number }>(this.db, CREATE_EVENTS, [JSON.stringify(rows)]);
    // the extra column is left on the row: a record is read from its columns by name
    const byOrd = new Map(found.map((r) => [Number(r.almanac_ord), r]));
    batch.forEach(({ resolve }, i) => resolve(byOrd.get(i + 1) ?? null));
  }
}

/**
 * `CREATE.event` for several events ($1: a JSON array of {id, group, p: post columns, d: event columns, o: organizer
 * ids, t: term ids}), as that statement writes each in turn: ids from the sequence in their order, the same conflicts
 * skipped, links with their positions. Each row also carries its event's place in the array (`almanac_ord`, from 1).
 */
const CREATE_EVENTS = `WITH a AS (SELECT e, ord FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS a(e, ord))
    , n AS MATERIALIZED (SELECT a.ord, a.e, COALESCE((a.e->>'id')::bigint, nextval((SELECT pg_get_serial_sequence('posts', 'id'))::regclass)) AS id FROM a ORDER BY a.ord)
    , v AS MATERIALIZED (SELECT n.ord, n.id, COALESCE((n.e->>'group')::bigint, n.id) AS grp, jsonb_populate_record(NULL::posts, n.e->'p') AS p,
        jsonb_populate_record(NULL::events, n.e->'d') AS d, n.e->'o' AS o, n.e->'t' AS t FROM n)
    , p AS (INSERT INTO posts (id, ${PG_POST_COLUMNS.join(', ')}, translation_group)
        SELECT v.id, ${PG_POST_COLUMNS.map((c) => `(v.p).${c}`).join(', ')}, v.grp FROM v ORDER BY v.ord
        ON CONFLICT (type, lang, slug) DO NOTHING RETURNING *)
    , details AS (INSERT INTO events (post_id, ${DETAIL_COLUMNS.event.join(', ')})
        SELECT p.id, ${DETAIL_COLUMNS.event.map((c) => `(v.d).${c}`).join(', ')} FROM p JOIN v ON v.id = p.id ORDER BY v.ord RETURNING *)
    , o AS (INSERT INTO event_organizers (event_id, organizer_id, position, start_local)
        SELECT p.id, x.organizer::bigint, x.n - 1, (v.d).start_local FROM p JOIN v ON v.id = p.id, jsonb_array_elements_text(v.o) WITH ORDINALITY AS x(organizer, n)
        ORDER BY v.ord, x.n)
    , t AS (INSERT INTO event_terms (event_id, term_id, start_local)
        SELECT DISTINCT p.id, x.term::bigint, (v.d).start_local FROM p JOIN v ON v.id = p.id, jsonb_array_elements_text(v.t) AS x(term))
    SELECT d.*, ${POST_READ_COLUMNS}, v.ord AS almanac_ord FROM p JOIN details d ON d.post_id = p.id JOIN v ON v.id = p.id`;

/**
 * Reads by key asked for in one turn of the event loop, made by one statement per kind: a view's links (VIEW_LINKS
 * alone, VIEW_LINKS_EACH for several) and a record with its links (WITH_LINKS, WITH_LINKS_EACH), each answered with
 * exactly the row its own statement would read. Much of such a statement's cost is PostgreSQL's work to start it and
 * this process's to send it and read its answer: the answers of a batch of writes, once it has committed, read their
 * records' links in the same turn, and by hand the links of 14 new events (100,000 events) cost 850-950 µs of this
 * process's CPU and 1,700-1,800 µs of PostgreSQL's as 14 statements, 250-410 and 480-800 as one.
 */
export class TurnReads {
  readonly links: InOneStatement<ViewLinksQuery, LinksRow>;
  readonly records: Record<PostType, InOneStatement<{ id: number; lang: Lang }, LinksRow & { record: Row | null }>>;

  constructor(db: Queryable) {
    this.links = new InOneStatement(db, viewLinksAlone, (asked) => {
      const each = (ids: (q: ViewLinksQuery) => number[]) => asked.map((q) => `{${ids(q).join(',')}}`);
      return [VIEW_LINKS_EACH, [each((q) => q.venueIds), each((q) => q.organizerIds), asked.map((q) => q.lang), each((q) => q.termIds), each((q) => q.imageIds),
        each((q) => q.groups.event), each((q) => q.groups.venue), each((q) => q.groups.organizer), utcNowWire()]];
    });
    this.records = Object.fromEntries(POST_TYPES.map((type) => [type, new InOneStatement<{ id: number; lang: Lang }, LinksRow & { record: Row | null }>(db,
      (asked) => withLinksAlone(type, asked),
      (asked) => [WITH_LINKS_EACH[type], [asked.map((a) => a.id), asked.map((a) => a.lang), utcNowWire()]])])) as TurnReads['records'];
  }
}

/** VIEW_LINKS and its values for one query. */
const viewLinksAlone = (q: ViewLinksQuery): [string, unknown[]] =>
  [VIEW_LINKS, [q.venueIds, q.organizerIds, q.lang, q.termIds, q.imageIds, q.groups.event, q.groups.venue, q.groups.organizer, utcNowWire()]];

/** WITH_LINKS of a type and its values for one record. */
const withLinksAlone = (type: PostType, { id, lang }: { id: number; lang: Lang }): [string, unknown[]] => [WITH_LINKS[type], [id, lang, utcNowWire()]];

/**
 * The calls of one kind asked for in one turn of the event loop, read by one statement: `one`'s for a single call,
 * `each`'s for several (a row per call, numbered by `ord` from 1 in the order of the calls).
 */
class InOneStatement<A, R extends pg.QueryResultRow> {
  private readonly turn = new TurnBatch<A, R>((calls) => this.flush(calls));

  constructor(private readonly db: Queryable, private readonly one: (asked: A) => [string, unknown[]], private readonly each: (asked: A[]) => [string, unknown[]]) {}

  read(asked: A): Promise<R> {
    return this.turn.add(asked);
  }

  private async flush(calls: Pending<A, R>[]): Promise<void> {
    if (calls.length === 1) {
      const [row] = await query<R>(this.db, ...this.one(calls[0]!.call));
      calls[0]!.resolve(row!);
      return;
    }
    const rows = await query<R & { ord: number }>(this.db, ...this.each(calls.map((c) => c.call)));
    const byOrd = new Map(rows.map((row) => [Number(row.ord), row]));
    calls.forEach(({ resolve }, i) => resolve(byOrd.get(i + 1)!));
  }
}

/** What PostgresPosts makes together with the other calls of its turn: new events (EventCreates), reads by key (TurnReads). */
export interface Together {
  eventCreates?: EventCreates;
  reads?: TurnReads;
}

/** Events, venues and organizers on PostgreSQL: the same records and rules as the SQLite engine's repository. */
export class PostgresPosts extends PostsByKey implements PostsRepository {
  /**
   * `lists`: where list statements go (the lists pool, or the same transaction's connection as `db`). `together`:
   * new events are written through its `eventCreates` (writes run beside one another), records with their links and
   * views' links read through its `reads` (reads of the pool), else each by its own statement.
   */
  constructor(private readonly db: Queryable, private readonly lists: Queryable = db, private readonly together: Together = {}) {
    super();
  }

  async typeOf(id: number): Promise<PostType | null> {
    const rows = await query<{ type: PostType }>(this.db, 'SELECT type FROM posts WHERE id = $1', [id]);
    return rows[0]?.type ?? null;
  }

  async resolveSlug(type: PostType, raw: string, preferred: Lang): Promise<number | null> {
    const slug = slugForQuery(raw);
    if (!slug) return null;
    const rows = await query<{ id: number; lang: Lang }>(this.db, SLUG_LOOKUP, [type, slug]);
    for (const lang of langsPreferring(preferred)) {
      const found = rows.find((r) => r.lang === lang);
      if (found) return found.id;
    }
    return null;
  }

  async findMany<T extends PostType>(type: T, ids: number[]): Promise<Map<number, RecordOf<T>>> {
    const out = new Map<number, RecordOf<T>>();
    if (ids.length === 0) return out;
    const rows = await query<Row>(this.db, STATEMENTS[type].rows, [[...new Set(ids)]]);
    for (const r of rows) out.set(r.id as number, recordFromRow(type, r));
    return out;
  }

  async slugOwner(type: PostType, lang: Lang, slug: string): Promise<number | null> {
    const rows = await query<{ id: number }>(this.db, 'SELECT id FROM posts WHERE type = $1 AND lang = $2 AND slug = $3', [type, lang, slug]);
    return rows[0]?.id ?? null;
  }

  async numberedSlugs(type: PostType, lang: Lang, slug: string): Promise<{ id: number; slug: string }[]> {
    // ':' follows '9' in slugs' collation, "C" (migration 0001)
    return query<{ id: number; slug: string }>(this.db, 'SELECT id, slug FROM posts WHERE type = $1 AND lang = $2 AND slug >= $3 AND slug < $4',
      [type, lang, `${slug}-0`, `${slug}-:`]);
  }

  /** Through posts_by_title_key (migration 0010): keys computed by `collationKey` when the records were written. */
  async sameName(type: 'venue' | 'organizer', lang: Lang, title: string): Promise<number[]> {
    const rows = await query<{ id: number }>(this.db, SAME_NAME, [type, lang, collationKey(title)]);
    return rows.map((r) => r.id);
  }

  async explainSameName(): Promise<string[]> {
    const rows = await query<{ 'QUERY PLAN': string }>(this.db, `EXPLAIN ${SAME_NAME}`, ['venue', 'en', 'x']);
    return rows.map((r) => r['QUERY PLAN']);
  }

  async translations(type: PostType, groups: number[]): Promise<Translations> {
    return langsOfMembers(await this.translationMembers(type, groups));
  }

  async translationMembers(type: PostType, groups: number[]): Promise<Map<number, TranslationMember[]>> {
    if (groups.length === 0) return new Map();
    const rows = await query<TranslationRow>(this.db,
      `SELECT translation_group, lang, id, author_id, status, status_before_trash, date_utc FROM posts
       WHERE type = $1 AND translation_group = ANY($2::bigint[]) ORDER BY id`, [type, [...new Set(groups)]]);
    return groupMembers(type, rows);
  }

  async viewLinks(q: ViewLinksQuery): Promise<ViewLinks> {
    if (this.together.reads) return linksFromRow(await this.together.reads.links.read(q));
    const [row] = await query<LinksRow>(this.db, ...viewLinksAlone(q));
    return linksFromRow(row!);
  }

  async findWithLinks<T extends PostType>(type: T, id: number, lang: Lang): Promise<RecordWithLinks<T> | null> {
    const row = this.together.reads
      ? await this.together.reads.records[type].read({ id, lang })
      : (await query<LinksRow & { record: Row | null }>(this.db, ...withLinksAlone(type, { id, lang })))[0];
    return row!.record ? { record: recordFromRow(type, row!.record), links: linksFromRow(row!) } : null;
  }

  async revisions(ids: number[]): Promise<Map<number, number>> {
    const rows = await query<{ id: number; revision: number }>(this.db, 'SELECT id, revision FROM posts WHERE id = ANY($1::bigint[])', [ids]);
    return new Map(rows.map((r) => [r.id, r.revision]));
  }

  async idsWithLineageFrom(site: string): Promise<number[]> {
    const pattern = `%${JSON.stringify(`${site}?id=`).slice(1, -1).replace(/[\\%_]/g, (c) => '\\' + c)}%`;
    const rows = await query<{ id: number; global_id_lineage: string }>(this.db,
      `SELECT id, global_id_lineage FROM posts WHERE global_id_lineage LIKE $1 ESCAPE '\\'`, [pattern]);
    return rows.filter((r) => (JSON.parse(r.global_id_lineage) as string[]).includes(`${site}?id=${r.id}`)).map((r) => r.id);
  }

  async nextScheduled(nowUtc: string): Promise<string | null> {
    const rows = await query<{ due: string | null }>(this.db, NEXT_SCHEDULED, [nowUtc]);
    return rows[0]?.due ?? null;
  }

  async listEvents(q: EventListQuery): Promise<{ ids: number[]; total: number }> {
    return this.run(eventListSql(q, POSTGRES_DIALECT), q.limit, q.offset);
  }

  async listLinked(q: LinkedListQuery): Promise<{ ids: number[]; total: number }> {
    return this.run(linkedListSql(q, POSTGRES_DIALECT), q.limit, q.offset);
  }

  async listChanges(q: ChangesQuery): Promise<{ changes: Change[]; total: number }> {
    const sql = changesSql(q);
    const rows = await named<{ id: number; changed_utc: string; changed_local: string | null; readable: boolean; removed: boolean }>(this.lists, sql.page, sql.params);
    const [count] = await named<{ total: number }>(this.lists, sql.count, sql.countParams);
    return {
      changes: rows.map((r) => ({ id: r.id, changedUtc: r.changed_utc, changedLocal: r.changed_local, readable: r.readable, removed: r.removed })),
      total: count!.total,
    };
  }

  async explainEventList(q: EventListQuery): Promise<string[]> {
    return this.explain(eventListSql(q, POSTGRES_DIALECT));
  }

  async explainLinkedList(q: LinkedListQuery): Promise<string[]> {
    return this.explain(linkedListSql(q, POSTGRES_DIALECT));
  }

  async insert<T extends PostType>(record: NewRecord<T>): Promise<number> {
    return this.insertRow(null, await this.groupJoined(record), record);
  }

  async create<T extends PostType>(record: NewRecord<T>): Promise<RecordOf<T> | null> {
    const values = this.insertValues(null, await this.groupJoined(record), record);
    const row = record.type === 'event' && this.together.eventCreates ? await this.together.eventCreates.create(values) : (await query<Row>(this.db, CREATE[record.type], values))[0];
    if (!row) return null;
    const created = record.type === 'event'
      ? eventFromRow(row, (record as unknown as EventRecord).organizerIds, [...new Set((record as unknown as EventRecord).termIds)])
      : record.type === 'venue' ? venueFromRow(row) : organizerFromRow(row);
    return created as RecordOf<T>;
  }

  async insertAs<T extends PostType>(id: number, translationGroup: number, record: Omit<RecordOf<T>, 'id' | 'translationGroup'>): Promise<void> {
    await this.insertRow(id, translationGroup, record);
    // ids given from outside (an import) must never be handed out again
    await query(this.db, `SELECT setval(pg_get_serial_sequence('posts', 'id'), GREATEST($1::bigint, (SELECT last_value FROM posts_id_seq)))`, [id]);
  }

  private async insertRow(id: number | null, group: number | null, record: Omit<PostRecord, 'id' | 'translationGroup'>): Promise<number> {
    const [inserted] = await query<{ id: number }>(this.db, INSERT[record.type], this.insertValues(id, group, record));
    return inserted!.id;
  }

  /** The translation group a new record joins (its translation's), or null when it starts its own. */
  private async groupJoined(record: NewRecord<PostType>): Promise<number | null> {
    return record.translationOf === null ? null : (await this.findById(record.translationOf))!.translationGroup;
  }

  /** The parameters of an insert statement (`insertStatement`). */
  private insertValues(id: number | null, group: number | null, record: Omit<PostRecord, 'id' | 'translationGroup'>): unknown[] {
    const row = postRow(record);
    const details = detailsRow(record);
    const values = [id, ...PG_POST_COLUMNS.map((c) => row[c]), group, ...DETAIL_COLUMNS[record.type].map((c) => details[c])];
    if (record.type === 'event') values.push((record as EventRecord).organizerIds, (record as EventRecord).termIds);
    return values;
  }

  async setTranslationGroup(id: number, group: number): Promise<void> {
    await query(this.db, 'UPDATE posts SET translation_group = $2 WHERE id = $1', [id, group]);
  }

  async update(record: PostRecord): Promise<void> {
    const row = postRow(record);
    await query(this.db, UPDATE_POST, [record.id, ...PG_POST_COLUMNS.map((c) => row[c])]);
    const details = detailsRow(record);
    await query(this.db, STATEMENTS[record.type].updateDetails, [record.id, ...DETAIL_COLUMNS[record.type].map((c) => details[c])]);
    if (record.type === 'event') await this.writeLinks(record.id, record);
  }

  async unlinkFromEvents(record: PostRecord): Promise<void> {
    if (record.type === 'venue') await query(this.db, 'UPDATE events SET venue_id = NULL WHERE venue_id = $1', [record.id]);
    if (record.type === 'organizer') await query(this.db, 'DELETE FROM event_organizers WHERE organizer_id = $1', [record.id]);
  }

  async purgeTrash(cutoffUtc: string): Promise<number> {
    const rows = await query<{ id: number }>(this.db, `DELETE FROM posts WHERE status = 'trash' AND modified_utc < $1 RETURNING id`, [cutoffUtc]);
    return rows.length;
  }

  private async run(listed: ListSql, limit: number, offset: number): Promise<{ ids: number[]; total: number }> {
    const sql = await listThrough(listed, async (statement) => Number((await named<{ links: number }>(this.lists, statement, listed.params))[0]!.links));
    const rows = await named<{ id: number; total?: number }>(this.lists, sql.page, { ...sql.params, limit, offset });
    return pageAndTotal(sql, offset, rows, async () => (await named<{ total: number }>(this.lists, sql.count, sql.params))[0]!.total);
  }

  private async explain(sql: ListSql): Promise<string[]> {
    const lines: string[] = [];
    const few = sql.fewLinks;
    for (const statement of [sql.page, sql.count, ...(few ? [few.links, few.page, few.count] : [])]) {
      const rows = await named<{ 'QUERY PLAN': string }>(this.lists, `EXPLAIN ${statement}`, { ...sql.params, limit: 10, offset: 0 });
      lines.push(...rows.map((r) => r['QUERY PLAN']));
    }
    return lines;
  }

  private async writeLinks(id: number, event: Pick<EventRecord, 'organizerIds' | 'termIds' | 'startLocal'>): Promise<void> {
    await query(this.db, 'DELETE FROM event_organizers WHERE event_id = $1', [id]);
    await query(this.db, 'DELETE FROM event_terms WHERE event_id = $1', [id]);
    if (event.organizerIds.length > 0) {
      await query(this.db, `INSERT INTO event_organizers (event_id, organizer_id, position, start_local)
        SELECT $1, o.id, o.n - 1, $3 FROM unnest($2::bigint[]) WITH ORDINALITY AS o(id, n)`, [id, event.organizerIds, event.startLocal]);
    }
    if (event.termIds.length > 0) {
      await query(this.db, `INSERT INTO event_terms (event_id, term_id, start_local) SELECT DISTINCT $1::bigint, unnest($2::bigint[]), $3 ON CONFLICT DO NOTHING`, [id, event.termIds, event.startLocal]);
    }
  }
}

/** The earliest publication time after a moment of a scheduled record: two index seeks (partial indexes). */
export const NEXT_SCHEDULED = `SELECT LEAST(
  (SELECT MIN(date_utc) FROM events WHERE status = 'future' AND date_utc > $1),
  (SELECT MIN(date_utc) FROM posts WHERE type <> 'event' AND status = 'future' AND date_utc > $1)) AS due`;
