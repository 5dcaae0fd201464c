import { langsPreferring, type Lang } from '../../domain/context.js';
import { collationKey, foldForSearch, slugForQuery } from '../../domain/text.js';
import { linksAmong, PostsByKey, viewLinksQuery, type PostsRepository, type RecordWithLinks, type Translations, type ViewLinks, type ViewLinksQuery } from '../engine.js';
import { TurnBatch, type Pending } from '../turnBatch.js';
import type {
  Change, ChangesQuery, EventListQuery, EventRecord, LinkedListQuery, NewRecord, OrganizerRecord, PostRecord, PostType, RecordOf, TranslationMember, VenueRecord,
} from '../records.js';
import {
  changesSql, eventListSql, linkedListSql, listThrough, pageAndTotal, trigramsOfText, type ListSql, type MonthRange, type Params, type SearchNarrowing, type SqlDialect,
} from '../listQueries.js';
import {
  baseFromRow, baseToRow, DETAIL_COLUMNS, DETAIL_TABLE, detailsRow, eventFromRow, groupMembers, langsOfMembers, organizerFromRow, POST_COLUMNS, POST_READ_COLUMNS,
  venueFromRow, type Row, type TranslationRow,
} from '../rows.js';
import type { Statement } from 'better-sqlite3';
import type { Db } from './connection.js';
import { datedQuery, isDatedTrigram } from './datedSearch.js';
import { SqliteMedia } from './media.js';
import { explainStatement, objectRows, StatementCache } from './sql.js';
import { SqliteTerms } from './terms.js';

/**
 * Trigrams probed for a search, at most: each reads the list of every post holding it, and a handful narrow a search
 * as well as hundreds (the LIKE decides in any case).
 */
const MAX_TRIGRAMS = 12;

/** The distinct trigrams of the folded words of three characters or more (up to MAX_TRIGRAMS in all). */
function trigramsOf(words: string[]): string[] {
  const grams = new Set<string>();
  for (const word of words) {
    for (const gram of trigramsOfText(foldForSearch(word))) if (grams.size < MAX_TRIGRAMS) grams.add(gram);
  }
  return [...grams];
}

/** The trigram index query (migration 0008) that finds every post holding all of `grams`. */
const allOf = (grams: string[]) => grams.map((g) => `"${g.replace(/"/g, '""')}"`).join(' AND ');

/** Posts holding a trigram, counted up to this: a trigram held by more narrows too little to be read on its own. */
const RARE_BELOW = 20_000;
/** How long a connection trusts a trigram's count: counts only choose what narrows a search, never what matches. */
const RARITY_TTL_MS = 10 * 60_000;
/** Trigrams a connection remembers counts of; past this it forgets them all and counts afresh. */
const MAX_COUNTED = 10_000;

/**
 * Narrows a search by its rarest trigrams. The index reads the whole list of posts of every trigram it is given
 * before it intersects them: on a million events the 7 trigrams of "zephyrine" cost 3.2 ms, because "ine" is held by
 * 380,000 posts, and its rarest trigram alone 0.2 ms, for the same 5,064 posts. So each connection counts, once in a
 * while and up to RARE_BELOW, the posts of each trigram a search needs, and asks the index for the two rarest; when
 * none is rare, for all of them (their intersection is then what narrows).
 */
class RareTrigrams {
  private readonly counted = new Map<string, { posts: number; until: number }>();
  private readonly count: Statement<[string], number>;

  constructor(db: Db) {
    this.count = db.prepare<[string], number>(`SELECT COUNT(*) FROM (SELECT rowid FROM posts_search WHERE posts_search MATCH ? LIMIT ${RARE_BELOW})`).pluck();
  }

  /** Of `grams`, those that narrow a search most: the two rarest, or all when none is rare. */
  of(grams: string[]): string[] {
    const rare = grams.map((gram) => ({ gram, posts: this.postsHolding(gram) })).filter((g) => g.posts < RARE_BELOW);
    rare.sort((a, b) => a.posts - b.posts);
    return rare.length > 0 ? rare.slice(0, 2).map((g) => g.gram) : grams;
  }

  private postsHolding(gram: string): number {
    const now = Date.now();
    const known = this.counted.get(gram);
    if (known && known.until > now) return known.posts;
    if (this.counted.size >= MAX_COUNTED) this.counted.clear();
    const posts = this.count.get(allOf([gram]))!;
    this.counted.set(gram, { posts, until: now + RARITY_TTL_MS });
    return posts;
  }
}

/**
 * What narrows an event search through one of the trigram indexes: with `months`, the dated index (migration 0018),
 * when a word has a trigram it files; else the whole calendar's (0008). `narrowest` picks the trigrams to ask for.
 * Null when no word has a trigram.
 */
function narrowedBy(params: Params, words: string[], months: MonthRange | null, narrowest: (grams: string[]) => string[]): SearchNarrowing | null {
  const grams = trigramsOf(words);
  const dated = months === null ? [] : grams.filter(isDatedTrigram);
  if (months !== null && dated.length > 0) {
    params.trigrams = datedQuery(narrowest(dated), months);
    // the matches of the window's months are few: the list is read from them, each event then checked against the
    // window (SQLite's statistics favoured the window off the listing index, 29,000 events at a million)
    return { ids: 'SELECT rowid AS id FROM events_search WHERE events_search MATCH @trigrams', drives: true, windowed: true };
  }
  if (grams.length === 0) return null;
  params.trigrams = allOf(narrowest(grams));
  // still read the window off the listing index (the set of matches is probed, through a Bloom filter), so a list
  // costs its window whatever the word; driving from the matches would cost every event holding it
  return { ids: 'SELECT rowid FROM posts_search WHERE posts_search MATCH @trigrams', drives: false, windowed: false };
}

/** How SQLite spells what the shared list queries leave to each engine. */
export const SQLITE_DIALECT: SqlDialect = {
  inIds(params: Params, name: string, column: string, ids: number[]) {
    // one id is an equality: SQLite then reads the index the column leads (a venue's range of events_by_venue). Given
    // json_each's rows, whose number it cannot know, it chose by its statistics, and on 100,000 events and 20,200
    // venues read the window's 29,000 events off the listing index (12 ms, 44 from a cold cache, for a venue with no
    // event in the default window; 0.1 ms by its own range)
    if (ids.length === 1) {
      params[name] = ids[0]!;
      return `${column} = @${name}`;
    }
    params[name] = JSON.stringify(ids);
    return `${column} IN (SELECT value FROM json_each(@${name}))`;
  },
  flag: (column, value) => `${column} = ${value ? 1 : 0}`,
  searchIndex: (params, words, months) => narrowedBy(params, words, months, (grams) => grams),
  unindexed: (column) => `+${column}`,
  joinInOrder: 'CROSS JOIN',
  eachLinkedEvent: (links, where) => `FROM (${links}) m CROSS JOIN events e ON e.post_id = m.id WHERE ${where}`,
  readsThroughLinks: true,
  searchedTitle: (column) => `substr(${column}, 1, instr(${column}, char(31)) - 1)`,
  // almanac_fold is foldForSearch itself, registered on every connection (connection.ts)
  foldedField: (column) => `almanac_fold(${column})`,
  unlocks(params, column, given) {
    params.opener = given;
    return `almanac_unlocks(${column}, @opener)`; // postRules.unlocks, registered on every connection
  },
};

/** The earliest publication time after a moment of a scheduled record, or null (one statement, two index seeks). */
export function nextScheduledOf(db: Db): (nowUtc: string) => string | null {
  // through the partial indexes of scheduled events and of venue and organizer posts, never a scan of every post
  const statement = db.prepare<{ now: string }, { due: string | null }>(`SELECT MIN(due) AS due FROM (
    SELECT MIN(date_utc) AS due FROM events WHERE status = 'future' AND date_utc > @now
    UNION ALL
    SELECT MIN(date_utc) FROM posts WHERE type <> 'event' AND status = 'future' AND date_utc > @now)`);
  return (now) => statement.get({ now })?.due ?? null;
}

/**
 * The venues or organizers (`details`) `@ids` names, and for those in another language than `@lang` the records of
 * their translation groups in it (unique per group): the second part stops at each record already in the language.
 */
const linkedInLang = (details: string) => `SELECT ${POST_READ_COLUMNS}, d.* FROM posts p JOIN ${details} d ON d.post_id = p.id WHERE p.id IN (SELECT value FROM json_each(@ids))
  UNION ALL
  SELECT ${POST_READ_COLUMNS}, d.* FROM json_each(@ids) j CROSS JOIN posts a ON a.id = j.value AND a.lang <> @lang
    CROSS JOIN posts p ON p.type = a.type AND p.translation_group = a.translation_group AND p.lang = @lang CROSS JOIN ${details} d ON d.post_id = p.id`;

/** An event row's organizers, by their position, and its terms, by id (as the `rows` statement reads them, unordered). */
function eventLinks(r: Row): [organizerIds: number[], termIds: number[]] {
  const organizers = (JSON.parse(r.organizer_ids as string) as [position: number, id: number][]).sort((a, b) => a[0] - b[0]);
  return [organizers.map(([, id]) => id), (JSON.parse(r.term_ids as string) as number[]).sort((a, b) => a - b)];
}

/**
 * The reads of records with their links (`findWithLinks`: a GET by id or slug) asked for in one turn of the event
 * loop, made together once the turn is over: a call alone is read on its own connection, in its own transaction, as
 * before; several are read by one `manyWithLinks`, on a connection of their own in a transaction begun then, after
 * every call was made (so that no call is answered from a snapshot older than its request: the callers' own
 * transactions may have begun turns before). Each of SQLite's statements costs little, but not nothing: on 100,000
 * events, 32 clients reading events by id with the cache off, SQLite's statements took 63 µs per read instead of 120
 * (about 12 reads a turn), and a read cost 230 µs of the server's CPU instead of 262 (alternating by hand; by slug,
 * 228 instead of 264).
 */
export class TurnReads {
  private readonly turn = new TurnBatch<TurnRead, RecordWithLinks<PostType> | null>((calls) => this.flush(calls));
  private own: { db: Db; posts: SqlitePosts; begin: Statement; commit: Statement } | null = null;

  /** `open`: a new read connection and its posts repository (made on the first turn that needs it). */
  constructor(private readonly open: () => { db: Db; posts: SqlitePosts }) {}

  read<T extends PostType>(posts: SqlitePosts, type: T, id: number, lang: Lang): Promise<RecordWithLinks<T> | null> {
    return this.turn.add({ posts, type, id, lang }) as Promise<RecordWithLinks<T> | null>;
  }

  /** Closes the connection of its own (no call is pending: the engine closes once every request was answered). */
  close(): void {
    this.own?.db.close();
    this.own = null;
  }

  private async flush(calls: Pending<TurnRead, RecordWithLinks<PostType> | null>[]): Promise<void> {
    if (calls.length === 1) {
      const { call: { posts, type, id, lang }, resolve } = calls[0]!;
      return resolve(await posts.withLinksAlone(type, id, lang));
    }
    if (this.own === null) {
      const { db, posts } = this.open();
      this.own = { db, posts, begin: db.prepare('BEGIN'), commit: db.prepare('COMMIT') };
    }
    const { db, posts, begin, commit } = this.own;
    // its statements run without a wait between them: no other flush can begin while this one's transaction is open
    begin.run();
    let found: (RecordWithLinks<PostType> | null)[];
    try {
      found = await posts.manyWithLinks(calls.map(({ call }) => call));
    } finally {
      if (db.inTransaction) commit.run();
    }
    calls.forEach(({ resolve }, i) => resolve(found[i]!));
  }
}

/** A read of TurnReads: a record of a type by id, with its links in a language, through the caller's repository. */
interface TurnRead {
  posts: SqlitePosts;
  type: PostType;
  id: number;
  lang: Lang;
}

/** Events, venues and organizers (one id space), their links to each other and to terms. */
export class SqlitePosts extends PostsByKey implements PostsRepository {
  private readonly stmts;
  private readonly lists: StatementCache;
  /** SQLITE_DIALECT, with searches narrowed by their rarest trigrams on this connection. */
  private readonly dialect: SqlDialect;
  /**
   * `related`: the terms and images a view reads (`viewLinks`), repositories of the same connection. Given, never
   * made later on `this`: a write's recording view (changes.ts) calls these methods with itself, made anew for each
   * write, as `this`, so a repository made there on first use was made, with all its statements, for every write.
   */
  constructor(
    private readonly db: Db,
    private readonly related: { terms: SqliteTerms; media: SqliteMedia } = { terms: new SqliteTerms(db), media: new SqliteMedia(db) },
    /** Where `findWithLinks` joins the other calls of its turn (the engine's read connections); null: read at once. */
    private readonly together: TurnReads | null = null,
  ) {
    super();
    this.lists = new StatementCache(db);
    const rare = new RareTrigrams(db);
    this.dialect = { ...SQLITE_DIALECT, searchIndex: (params, words, months) => narrowedBy(params, words, months, (grams) => rare.of(grams)) };
    const insertDetails = (type: PostType) =>
      db.prepare(`INSERT INTO ${DETAIL_TABLE[type]} (post_id, ${DETAIL_COLUMNS[type].join(', ')}) VALUES (@id, ${DETAIL_COLUMNS[type].map((c) => '@' + c).join(', ')})`);
    const updateDetails = (type: PostType) =>
      db.prepare(`UPDATE ${DETAIL_TABLE[type]} SET ${DETAIL_COLUMNS[type].map((c) => `${c} = @${c}`).join(', ')} WHERE post_id = @id`);
    this.stmts = {
      typeOf: db.prepare<[number], { type: string }>('SELECT type FROM posts WHERE id = ?'),
      idBySlug: db.prepare<[string, string, string], { id: number }>('SELECT id FROM posts WHERE type = ? AND lang = ? AND slug = ?'),
      numberedSlugs: db.prepare<[string, string, string, string], { id: number; slug: string }>('SELECT id, slug FROM posts WHERE type = ? AND lang = ? AND slug >= ? AND slug < ?'),
      rows: {
        // an event's organizers and terms with its row: one statement instead of three took a read by id's rows from
        // 47 to 31 µs, and 50 events' from 1.4 to 1.1-1.3 ms (by hand, 100,000 events). Each is put in order here
        // (eventLinks): an aggregate's own ORDER BY builds a sorter for each row (6 µs of an event's 52 in a read's
        // transaction, 150 of 200 outside one).
        event: objectRows(db.prepare<[{ ids: string }], Row>(`SELECT d.*, ${POST_READ_COLUMNS},
          (SELECT json_group_array(json_array(position, organizer_id)) FROM event_organizers WHERE event_id = p.id) AS organizer_ids,
          (SELECT json_group_array(term_id) FROM event_terms WHERE event_id = p.id) AS term_ids
          FROM posts p JOIN events d ON d.post_id = p.id WHERE p.id IN (SELECT value FROM json_each(@ids))`)),
        venue: objectRows(db.prepare<[{ ids: string }], Row>(`SELECT ${POST_READ_COLUMNS}, d.* FROM posts p JOIN venues d ON d.post_id = p.id WHERE p.id IN (SELECT value FROM json_each(@ids))`)),
        organizer: objectRows(db.prepare<[{ ids: string }], Row>(`SELECT ${POST_READ_COLUMNS}, d.* FROM posts p JOIN organizers d ON d.post_id = p.id WHERE p.id IN (SELECT value FROM json_each(@ids))`)),
      },
      // AUTOINCREMENT: the new id is the sequence + 1, so a record starting its own translation group names it at once
      insertPost: db.prepare(`INSERT INTO posts (${POST_COLUMNS.join(', ')}, translation_group) VALUES (${POST_COLUMNS.map((c) => '@' + c).join(', ')},
        COALESCE(@translation_group, (SELECT seq FROM sqlite_sequence WHERE name = 'posts'), 0) + (@translation_group IS NULL))`),
      insertPostAs: db.prepare(`INSERT INTO posts (id, ${POST_COLUMNS.join(', ')}, translation_group) VALUES (@id, ${POST_COLUMNS.map((c) => '@' + c).join(', ')}, @translation_group)`),
      setGroup: db.prepare('UPDATE posts SET translation_group = @group WHERE id = @id'),
      withLineage: db.prepare<{ pattern: string }, { id: number; global_id_lineage: string }>(
        `SELECT id, global_id_lineage FROM posts WHERE global_id_lineage LIKE @pattern ESCAPE '\\'`,
      ),
      updatePost: db.prepare(`UPDATE posts SET ${POST_COLUMNS.map((c) => `${c} = @${c}`).join(', ')} WHERE id = @id`),
      insertDetails: { event: insertDetails('event'), venue: insertDetails('venue'), organizer: insertDetails('organizer') },
      updateDetails: { event: updateDetails('event'), venue: updateDetails('venue'), organizer: updateDetails('organizer') },
      clearOrganizers: db.prepare('DELETE FROM event_organizers WHERE event_id = ?'),
      addOrganizer: db.prepare('INSERT INTO event_organizers (event_id, organizer_id, position, start_local) VALUES (?, ?, ?, ?)'),
      clearTerms: db.prepare('DELETE FROM event_terms WHERE event_id = ?'),
      addTerm: db.prepare('INSERT OR IGNORE INTO event_terms (event_id, term_id, start_local) VALUES (?, ?, ?)'),
      unlinkVenue: db.prepare('UPDATE events SET venue_id = NULL WHERE venue_id = ?'),
      unlinkOrganizer: db.prepare('DELETE FROM event_organizers WHERE organizer_id = ?'),
      linked: {
        venue: objectRows(db.prepare<[{ ids: string; lang: string }], Row>(linkedInLang('venues'))),
        organizer: objectRows(db.prepare<[{ ids: string; lang: string }], Row>(linkedInLang('organizers'))),
      },
      // each group looked up with its type: `type IN (…) AND translation_group IN (SELECT … json_each)` cost 20-35 µs
      // for an event's three groups, this 15-25 (its rows come in no useful order: viewLinks sorts them by id)
      members: objectRows(db.prepare<[{ event: string; venue: string; organizer: string }], TranslationRow & { type: PostType }>(
        (['event', 'venue', 'organizer'] as const).map((type) => `SELECT p.type, p.translation_group, p.lang, p.id, p.author_id, p.status, p.status_before_trash, p.date_utc
           FROM json_each(@${type}) j CROSS JOIN posts p ON p.type = '${type}' AND p.translation_group = j.value`).join(' UNION ALL '),
      )),
      translations: db.prepare<{ type: string; groups: string }, TranslationRow>(
        `SELECT translation_group, lang, id, author_id, status, status_before_trash, date_utc FROM posts
         WHERE type = @type AND translation_group IN (SELECT value FROM json_each(@groups)) ORDER BY id`,
      ),
      nextScheduled: nextScheduledOf(db),
      // a trashed record's modification time is when it was trashed; links and term counts follow (cascades, triggers)
      purgeTrash: db.prepare<[string]>(`DELETE FROM posts WHERE status = 'trash' AND modified_utc < ?`),
      // through posts_by_title_key (migration 0010)
      sameName: db.prepare<{ type: string; lang: string; key: string }, { id: number }>(
        `SELECT id FROM posts WHERE type = @type AND lang = @lang AND title_key = @key AND status <> 'trash' ORDER BY id`,
      ),
    };
  }

  async typeOf(id: number): Promise<PostType | null> {
    return (this.stmts.typeOf.get(id)?.type as PostType | undefined) ?? null;
  }

  /** The id a slug names, as WordPress looks it up (`slugForQuery`), in the preferred language first, then in the others. */
  async resolveSlug(type: PostType, raw: string, preferred: Lang): Promise<number | null> {
    const slug = slugForQuery(raw);
    if (!slug) return null;
    for (const lang of langsPreferring(preferred)) {
      const id = this.stmts.idBySlug.get(type, lang, slug)?.id;
      if (id !== undefined) return id;
    }
    return null;
  }

  /** Records of one type by id, in one query per table however many are asked for. */
  async findMany<T extends PostType>(type: T, ids: number[]): Promise<Map<number, RecordOf<T>>> {
    const out = new Map<number, RecordOf<T>>();
    if (ids.length === 0) return out;
    const json = JSON.stringify([...new Set(ids)]);
    const rows = this.stmts.rows[type]({ ids: json });
    if (type === 'event') {
      for (const r of rows) out.set(r.id as number, eventFromRow(r, ...eventLinks(r)) as RecordOf<T>);
    } else {
      for (const r of rows) out.set(r.id as number, (type === 'venue' ? venueFromRow(r) : organizerFromRow(r)) as RecordOf<T>);
    }
    return out;
  }

  async slugOwner(type: PostType, lang: Lang, slug: string): Promise<number | null> {
    return this.stmts.idBySlug.get(type, lang, slug)?.id ?? null;
  }

  async numberedSlugs(type: PostType, lang: Lang, slug: string): Promise<{ id: number; slug: string }[]> {
    return this.stmts.numberedSlugs.all(type, lang, `${slug}-0`, `${slug}-:`); // ':' follows '9' (BINARY collation)
  }

  /** Non-trashed venues or organizers of a language whose title WordPress's collation finds equal, oldest first. */
  async sameName(type: 'venue' | 'organizer', lang: Lang, title: string): Promise<number[]> {
    return this.stmts.sameName.all({ type, lang, key: collationKey(title) }).map((r) => r.id);
  }

  /** `EXPLAIN QUERY PLAN` of `sameName`. */
  async explainSameName(): Promise<string[]> {
    return explainStatement(this.db, this.stmts.sameName, { type: 'venue', lang: 'en', key: 'x' });
  }

  /** `{lang: id}` of each translation group asked for. */
  async translations(type: PostType, groups: number[]): Promise<Translations> {
    return langsOfMembers(await this.translationMembers(type, groups));
  }

  /** The records of each translation group asked for, with what tells who may read them. */
  async translationMembers(type: PostType, groups: number[]): Promise<Map<number, TranslationMember[]>> {
    if (groups.length === 0) return new Map();
    return groupMembers(type, this.stmts.translations.all({ type, groups: JSON.stringify([...new Set(groups)]) }));
  }

  /** What a view reads besides its posts: one statement per kind (statements of SQLite cost no round trip). */
  async viewLinks(q: ViewLinksQuery): Promise<ViewLinks> {
    const related = this.related;
    const linked = <T extends VenueRecord | OrganizerRecord>(type: 'venue' | 'organizer', ids: number[], fromRow: (r: Row) => T) =>
      new Map(ids.length === 0 ? [] : this.stmts.linked[type]({ ids: JSON.stringify([...new Set(ids)]), lang: q.lang }).map((r) => [r.id as number, fromRow(r)]));
    const venues = linked('venue', q.venueIds, venueFromRow);
    const organizers = linked('organizer', q.organizerIds, organizerFromRow);
    const linkedRecords = [...venues.values(), ...organizers.values()];

    const groupsOf = (type: PostType, records: PostRecord[]) => JSON.stringify([...new Set([...q.groups[type], ...records.map((r) => r.translationGroup)])]);
    const rows = this.stmts
      .members({ event: groupsOf('event', []), venue: groupsOf('venue', [...venues.values()]), organizer: groupsOf('organizer', [...organizers.values()]) })
      .sort((a, b) => a.id - b.id); // members in id order: a translation group's languages are listed in that order
    const members: ViewLinks['members'] = {
      event: groupMembers('event', rows.filter((r) => r.type === 'event')),
      venue: groupMembers('venue', rows.filter((r) => r.type === 'venue')),
      organizer: groupMembers('organizer', rows.filter((r) => r.type === 'organizer')),
    };

    const media = await related.media.findMany([...q.imageIds, ...linkedRecords.map((r) => r.imageId)].filter(Boolean));
    return { venues, organizers, members, terms: await related.terms.withTranslations(q.termIds, q.lang), media };
  }

  async findWithLinks<T extends PostType>(type: T, id: number, lang: Lang): Promise<RecordWithLinks<T> | null> {
    return this.together ? this.together.read(this, type, id, lang) : this.withLinksAlone(type, id, lang);
  }

  /** `findOfType`, then `viewLinks`, on this connection. */
  async withLinksAlone<T extends PostType>(type: T, id: number, lang: Lang): Promise<RecordWithLinks<T> | null> {
    const record = await this.findOfType(type, id);
    return record && { record, links: await this.viewLinks(viewLinksQuery([record], lang)) };
  }

  /**
   * `findWithLinks` of several records at once, each answered as it would be alone: the records of each type by one
   * statement, the links of each language's records by one `viewLinks`, each record's taken from them (`linksAmong`).
   */
  async manyWithLinks(asked: { type: PostType; id: number; lang: Lang }[]): Promise<(RecordWithLinks<PostType> | null)[]> {
    const found = new Map<PostType, Map<number, PostRecord>>();
    for (const type of new Set(asked.map((a) => a.type))) found.set(type, await this.findMany(type, asked.filter((a) => a.type === type).map((a) => a.id)));
    const records = asked.map((a) => found.get(a.type)!.get(a.id) ?? null);
    const linksByLang = new Map<Lang, ViewLinks>();
    // a language asked for by missing records alone reads no links
    for (const lang of new Set(asked.filter((_, i) => records[i] !== null).map((a) => a.lang))) {
      linksByLang.set(lang, await this.viewLinks(viewLinksQuery(records.filter((r, i): r is PostRecord => r !== null && asked[i]!.lang === lang), lang)));
    }
    return records.map((record, i) => record && { record, links: linksAmong(viewLinksQuery([record], asked[i]!.lang), linksByLang.get(asked[i]!.lang)!) });
  }

  /** Inserts a record with its details and links; returns the new id. */
  async insert<T extends PostType>(record: NewRecord<T>): Promise<number> {
    const row = baseToRow(record);
    row.translation_group = record.translationOf === null ? null : (await this.findById(record.translationOf))!.translationGroup;
    const id = Number(this.stmts.insertPost.run(row).lastInsertRowid);
    this.insertDetails(id, record);
    return id;
  }

  async create<T extends PostType>(record: NewRecord<T>): Promise<RecordOf<T> | null> {
    if ((await this.slugOwner(record.type, record.lang, record.slug)) !== null) return null;
    return this.findOfType(record.type as T, await this.insert(record));
  }

  /**
   * Inserts a record under a given id and translation group (an import keeps the ids of its source); The id must be free.
   */
  async insertAs<T extends PostType>(id: number, translationGroup: number, record: Omit<RecordOf<T>, 'id' | 'translationGroup'>): Promise<void> {
    this.stmts.insertPostAs.run({ ...baseToRow(record), id, translation_group: translationGroup });
    this.insertDetails(id, record);
  }

  private insertDetails(id: number, record: Omit<PostRecord, 'id' | 'translationGroup'>): void {
    this.stmts.insertDetails[record.type].run({ ...detailsRow(record), id });
    if (record.type === 'event') this.writeLinks(id, record as EventRecord, true);
  }

  /** Moves a record into another translation group. */
  async setTranslationGroup(id: number, group: number): Promise<void> {
    this.stmts.setGroup.run({ id, group });
  }

  /** Ids of the records whose lineage holds their own id on a site (`example.org/blog?id=N` for record N). */
  async idsWithLineageFrom(site: string): Promise<number[]> {
    const pattern = `%${JSON.stringify(`${site}?id=`).slice(1, -1).replace(/[\\%_]/g, (c) => '\\' + c)}%`;
    return this.stmts.withLineage.all({ pattern })
      .filter((r) => (JSON.parse(r.global_id_lineage) as string[]).includes(`${site}?id=${r.id}`))
      .map((r) => r.id);
  }

  /** Writes a whole record back (base, details and, for events, links). */
  async update(record: PostRecord): Promise<void> {
    this.stmts.updatePost.run({ id: record.id, ...baseToRow(record) });
    this.stmts.updateDetails[record.type].run({ id: record.id, ...detailsRow(record) });
    if (record.type === 'event') this.writeLinks(record.id, record);
  }

  async nextScheduled(nowUtc: string): Promise<string | null> {
    return this.stmts.nextScheduled(nowUtc);
  }

  async purgeTrash(cutoffUtc: string): Promise<number> {
    return this.stmts.purgeTrash.run(cutoffUtc).changes;
  }

  /** After a venue or organizer is trashed, no event links to it any more. */
  async unlinkFromEvents(record: PostRecord): Promise<void> {
    if (record.type === 'venue') this.stmts.unlinkVenue.run(record.id);
    if (record.type === 'organizer') this.stmts.unlinkOrganizer.run(record.id);
  }

  /** One page of event ids matching the filters, and how many match in all (two statements). */
  async listEvents(q: EventListQuery): Promise<{ ids: number[]; total: number }> {
    return this.run(eventListSql(q, this.dialect), q.limit, q.offset);
  }

  /** `EXPLAIN QUERY PLAN` of the two statements of an event list (tests check that no list scans every event). */
  async explainEventList(q: EventListQuery): Promise<string[]> {
    return this.explain(eventListSql(q, this.dialect));
  }

  private async run(listed: ListSql, limit: number, offset: number): Promise<{ ids: number[]; total: number }> {
    const sql = await listThrough(listed, async (statement) => this.lists.get<number>(statement).pluck().get(listed.params)!);
    const rows = this.lists.get<{ id: number; total?: number }>(sql.page).all({ ...sql.params, limit, offset });
    return pageAndTotal(sql, offset, rows, async () => this.lists.get<{ total: number }>(sql.count).get(sql.params)!.total);
  }

  private explain(sql: ListSql): string[] {
    const few = sql.fewLinks;
    return [sql.page, sql.count, ...(few ? [few.links, few.page, few.count] : [])].flatMap((statement) =>
      this.db.prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${statement}`).all({ ...sql.params, limit: 10, offset: 0 }).map((r) => r.detail),
    );
  }

  /**
   * One page of changes (records modified, and records deleted for good) after a position, in (time, id) order,
   * and how many changes are left in the pass.
   */
  async listChanges(q: ChangesQuery): Promise<{ changes: Change[]; total: number }> {
    const sql = changesSql(q);
    const rows = this.lists.get<{ id: number; changed_utc: string; changed_local: string | null; readable: number; removed: number }>(sql.page).all(sql.params);
    const { total } = this.lists.get<{ total: number }>(sql.count).get(sql.countParams)!;
    return {
      changes: rows.map((r) => ({ id: r.id, changedUtc: r.changed_utc, changedLocal: r.changed_local, readable: r.readable === 1, removed: r.removed === 1 })),
      total,
    };
  }

  /** How many times each record was changed after its creation (iCalendar `SEQUENCE`). */
  async revisions(ids: number[]): Promise<Map<number, number>> {
    const rows = this.lists.get<{ id: number; revision: number }>('SELECT id, revision FROM posts WHERE id IN (SELECT value FROM json_each(@ids))').all({ ids: JSON.stringify(ids) });
    return new Map(rows.map((r) => [r.id, r.revision]));
  }

  /** One page of venue or organizer ids matching the filters (newest first), and the total. */
  async listLinked(q: LinkedListQuery): Promise<{ ids: number[]; total: number }> {
    return this.run(linkedListSql(q, this.dialect), q.limit, q.offset);
  }

  async explainLinkedList(q: LinkedListQuery): Promise<string[]> {
    return this.explain(linkedListSql(q, this.dialect));
  }

  private writeLinks(id: number, event: Pick<EventRecord, 'organizerIds' | 'termIds' | 'startLocal'>, fresh = false): void {
    if (!fresh) {
      this.stmts.clearOrganizers.run(id);
      this.stmts.clearTerms.run(id);
    }
    event.organizerIds.forEach((organizer, position) => this.stmts.addOrganizer.run(id, organizer, position, event.startLocal));
    for (const term of event.termIds) this.stmts.addTerm.run(id, term, event.startLocal);
  }
}
