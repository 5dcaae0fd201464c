/**
 * The one interface between Almanac's rules and its storage. Two engines implement it: SQLite (`src/db/sqlite/`,
 * the embedded zero-configuration default) and PostgreSQL (`src/db/postgres/`, for any number of stateless nodes).
 * Services speak to repositories through units of work: `read` for one consistent view, `write` for one atomic,
 * durable change. No SQL lives outside an engine's folder.
 */
import type { DateTime } from 'luxon';
import type { ChangeTracker, ReadSet } from './changes.js';
import type { Lang } from '../domain/context.js';
import type { Role } from '../domain/capabilities.js';
import type {
  AppPassword, Change, ChangesQuery, EventListQuery, EventRecord, LinkedListQuery, MediaRecord, NewRecord, OrganizerRecord, PostRecord, PostType, RecordOf,
  Taxonomy, TermInput, TermListQuery, TermRecord, TranslationMember, User, VenueRecord,
} from './records.js';

export type Translations = Map<number, Partial<Record<Lang, number>>>;

/** What the view of a page of posts needs besides the posts themselves, asked for at once (see `viewLinks`). */
export interface ViewLinksQuery {
  /** The request's language: linked records and terms are replaced by their translation in it, when one exists. */
  lang: Lang;
  venueIds: number[];
  organizerIds: number[];
  termIds: number[];
  /** Images of the records shown (those of the linked records are added). */
  imageIds: number[];
  /** Translation groups of the records shown, by type (those of the linked records are added). */
  groups: Record<PostType, number[]>;
}

/**
 * What the view of these records (of one type) reads besides them: the venues, organizers and terms events name,
 * the records' images and translation groups.
 */
export function viewLinksQuery(records: PostRecord[], lang: Lang): ViewLinksQuery {
  const groups: ViewLinksQuery['groups'] = { event: [], venue: [], organizer: [] };
  for (const record of records) groups[record.type].push(record.translationGroup);
  const events = records.filter((r): r is EventRecord => r.type === 'event');
  return {
    lang,
    venueIds: events.map((e) => e.venueId).filter(Boolean),
    organizerIds: events.flatMap((e) => e.organizerIds),
    termIds: events.flatMap((e) => e.termIds),
    imageIds: records.map((r) => r.imageId).filter(Boolean),
    groups,
  };
}

/** A record and what its view reads besides it (`viewLinks` of `viewLinksQuery([record], lang)`). */
export interface RecordWithLinks<T extends PostType> {
  record: RecordOf<T>;
  links: ViewLinks;
}

/** What `viewLinks` read: the rules (who may read what, which translation stands in) are left to the view. */
export interface ViewLinks {
  /** The venues and organizers asked for, and the records of their translation groups in the request's language. */
  venues: Map<number, VenueRecord>;
  organizers: Map<number, OrganizerRecord>;
  /** The members of every translation group asked for and of every linked record's, by type and group (oldest first). */
  members: Record<PostType, Map<number, TranslationMember[]>>;
  /** The terms asked for, and the terms of their translation groups in the request's language. */
  terms: Map<number, TermRecord>;
  /** The images of the records shown and of the linked records read. */
  media: Map<number, MediaRecord>;
}

/**
 * The links `viewLinks(q)` reads, taken from `read`, what `viewLinks` read for queries of the same language among
 * which `q` was: each map kept to the entries `q` alone would have read (its venues, organizers and terms, each
 * with its translation in `q.lang` when it is in another language; the members of its groups and of its linked
 * records' groups; its images and its linked records').
 */
export function linksAmong(q: ViewLinksQuery, read: ViewLinks): ViewLinks {
  type Translatable = { id: number; lang: Lang; translationGroup: number };
  // what an asked record stands for in the language: itself, and the record of its translation group in it
  const askedWithTranslations = <T extends Translatable>(ids: number[], all: Map<number, T>, sameKind: (asked: T, other: T) => boolean): Map<number, T> => {
    const askedIds = new Set(ids);
    const elsewhere = ids.map((id) => all.get(id)).filter((r): r is T => r !== undefined && r.lang !== q.lang);
    const kept = new Map<number, T>();
    for (const [id, r] of all) {
      if (askedIds.has(id) || (r.lang === q.lang && elsewhere.some((a) => a.translationGroup === r.translationGroup && sameKind(a, r)))) kept.set(id, r);
    }
    return kept;
  };
  const venues = askedWithTranslations(q.venueIds, read.venues, () => true);
  const organizers = askedWithTranslations(q.organizerIds, read.organizers, () => true);
  const only = <K, V>(all: Map<K, V>, keys: Set<K>) => new Map([...all].filter(([key]) => keys.has(key)));
  const groupsWith = (type: PostType, linked: Map<number, PostRecord>) => new Set([...q.groups[type], ...[...linked.values()].map((r) => r.translationGroup)]);
  const images = new Set([...q.imageIds, ...[...venues.values(), ...organizers.values()].map((r) => r.imageId)].filter(Boolean));
  return {
    venues,
    organizers,
    members: {
      event: only(read.members.event, groupsWith('event', new Map())),
      venue: only(read.members.venue, groupsWith('venue', venues)),
      organizer: only(read.members.organizer, groupsWith('organizer', organizers)),
    },
    terms: askedWithTranslations(q.termIds, read.terms, (asked, other) => asked.taxonomy === other.taxonomy),
    media: only(read.media, images),
  };
}

/** What each engine's posts repository derives from its own `typeOf` and `findMany`. */
export abstract class PostsByKey {
  abstract typeOf(id: number): Promise<PostType | null>;
  abstract findMany<T extends PostType>(type: T, ids: number[]): Promise<Map<number, RecordOf<T>>>;

  async findById(id: number): Promise<PostRecord | null> {
    const type = await this.typeOf(id);
    return type ? ((await this.findMany(type, [id])).get(id) ?? null) : null;
  }

  async findOfType<T extends PostType>(type: T, id: number): Promise<RecordOf<T> | null> {
    return (await this.findMany(type, [id])).get(id) ?? null;
  }
}

/** Events, venues and organizers (one id space), their links to each other and to terms. */
export interface PostsRepository {
  typeOf(id: number): Promise<PostType | null>;
  findById(id: number): Promise<PostRecord | null>;
  findOfType<T extends PostType>(type: T, id: number): Promise<RecordOf<T> | null>;
  /** Records of one type by id, in a bounded number of queries however many are asked for. */
  findMany<T extends PostType>(type: T, ids: number[]): Promise<Map<number, RecordOf<T>>>;
  /**
   * The id a slug names as WordPress looks it up (`slugForQuery`: decoded, percent-encoded, lower-cased), in the
   * preferred language first, then the others.
   */
  resolveSlug(type: PostType, raw: string, preferred: Lang): Promise<number | null>;
  slugOwner(type: PostType, lang: Lang, slug: string): Promise<number | null>;
  /**
   * The slugs of the type and language that continue `slug` with `-` and a digit (`slug-2`, `slug-10`, `slug-3-b`),
   * with their owners: one range of the slug index, where slugs compare as bytes.
   */
  numberedSlugs(type: PostType, lang: Lang, slug: string): Promise<{ id: number; slug: string }[]>;
  /**
   * Non-trashed venues or organizers of a language whose title WordPress's collation finds equal (`collationKey`:
   * case and accents ignored, `ß` = `ss`), oldest first, through the index of title keys.
   */
  sameName(type: 'venue' | 'organizer', lang: Lang, title: string): Promise<number[]>;
  /** The query plan of `sameName` (tests check that it reads the index of title keys). */
  explainSameName(): Promise<string[]>;
  /** `{lang: id}` of each translation group asked for. */
  translations(type: PostType, groups: number[]): Promise<Translations>;
  /** The records of each translation group asked for, with what tells who may read them (oldest first). */
  translationMembers(type: PostType, groups: number[]): Promise<Map<number, TranslationMember[]>>;
  /**
   * Everything the view of a page of posts reads besides the posts (linked records, translations, terms, images), in
   * a bounded number of queries whatever the page holds: one round trip on PostgreSQL.
   */
  viewLinks(q: ViewLinksQuery): Promise<ViewLinks>;
  /**
   * A record of a type by id with what its view in a language reads besides it, or null when there is no such
   * record: `findOfType`, then `viewLinks`, in one round trip on PostgreSQL (a GET of one record).
   */
  findWithLinks<T extends PostType>(type: T, id: number, lang: Lang): Promise<RecordWithLinks<T> | null>;
  /** How many times each record was changed after its creation (iCalendar `SEQUENCE`). */
  revisions(ids: number[]): Promise<Map<number, number>>;
  /** Ids of the records whose lineage holds their own id on a site (`example.org/blog?id=N` for record N). */
  idsWithLineageFrom(site: string): Promise<number[]>;
  /** The earliest publication time after `nowUtc` of a scheduled record, or null. */
  nextScheduled(nowUtc: string): Promise<string | null>;

  /** One page of event ids matching the filters, and how many match in all. */
  listEvents(q: EventListQuery): Promise<{ ids: number[]; total: number }>;
  /** One page of venue or organizer ids matching the filters (newest first), and the total. */
  listLinked(q: LinkedListQuery): Promise<{ ids: number[]; total: number }>;
  /** One page of changes after a position, in (time, id) order, and how many are left in the pass. */
  listChanges(q: ChangesQuery): Promise<{ changes: Change[]; total: number }>;
  /** The query plans of an event list (tests check that no list reads every event). */
  explainEventList(q: EventListQuery): Promise<string[]>;
  explainLinkedList(q: LinkedListQuery): Promise<string[]>;

  /** Inserts a record with its details and links; returns the new id. */
  insert<T extends PostType>(record: NewRecord<T>): Promise<number>;
  /**
   * Inserts a record as `insert` does, unless a record of its type and language holds its slug (then nothing is
   * written: null), and returns it as stored: a new record's answer without reading it back.
   */
  create<T extends PostType>(record: NewRecord<T>): Promise<RecordOf<T> | null>;
  /** Inserts a record under a given (free) id and translation group: an import keeping its source's ids. */
  insertAs<T extends PostType>(id: number, translationGroup: number, record: Omit<RecordOf<T>, 'id' | 'translationGroup'>): Promise<void>;
  setTranslationGroup(id: number, group: number): Promise<void>;
  /** Writes a whole record back (base, details and, for events, links). */
  update(record: PostRecord): Promise<void>;
  /** After a venue or organizer is trashed, no event links to it any more. */
  unlinkFromEvents(record: PostRecord): Promise<void>;
  /** Deletes for good what was trashed before `cutoffUtc` (links and term counts follow); returns how many. */
  purgeTrash(cutoffUtc: string): Promise<number>;
}

/** Event categories and tags. */
export interface TermsRepository {
  findById(id: number): Promise<TermRecord | null>;
  /** The taxonomy of each term of these ids that exists: what a write checks of the terms it names (no counts read). */
  taxonomies(ids: number[]): Promise<Map<number, Taxonomy>>;
  /** The given categories and all their descendants. */
  withDescendants(ids: number[]): Promise<number[]>;
  /**
   * The term of this taxonomy and language a text names, as WordPress's `term_exists` finds it: the text made a slug
   * (`Live Music` → `live-music`), failing that a name WordPress's collation finds equal (`café` = `CAFE`).
   */
  findBySlugOrName(taxonomy: Taxonomy, lang: Lang, text: string): Promise<number | null>;
  /** The query plans of the two lookups of `findBySlugOrName` (slug, then name key). */
  explainNameLookups(): Promise<string[]>;
  /** WordPress's `wp_unique_term_slug`. */
  uniqueSlug(taxonomy: Taxonomy, lang: Lang, slug: string, parentSlug: string | null): Promise<string>;
  /** The term of this taxonomy and language named by an id or a slug (sanitised as WordPress does), or null. */
  resolve(taxonomy: Taxonomy, lang: Lang, ref: number | string): Promise<number | null>;
  list(q: TermListQuery): Promise<{ items: TermRecord[]; total: number }>;
  translations(taxonomy: Taxonomy, groups: number[]): Promise<Translations>;
  /** Each category's slug path from its top ancestor down (`music/jazz`). */
  slugPaths(ids: number[]): Promise<Map<number, string>>;
  /**
   * A term of the same taxonomy and language with this name (any ASCII case), under `parentId` for categories. Not the
   * collation key: WordPress's `wp_insert_term` checks its collation's matches again with `strtolower`, so `Café`
   * and `Cafe` are two terms.
   */
  findSameName(taxonomy: Taxonomy, lang: Lang, name: string, parentId: number): Promise<number | null>;
  slugOwner(taxonomy: Taxonomy, lang: Lang, slug: string): Promise<number | null>;
  isSelfOrAncestor(ancestor: number, id: number): Promise<boolean>;
  groupOf(id: number): Promise<{ group: number; langs: Partial<Record<Lang, number>> } | null>;
  insert(input: TermInput): Promise<number>;
  insertAs(id: number, translationGroup: number, input: Omit<TermInput, 'translationOf'>, source: string): Promise<void>;
  setTranslation(id: number, lang: Lang, translationGroup: number): Promise<void>;
  sourceOf(id: number): Promise<string | null>;
  update(id: number, fields: { name: string; slug: string; description: string; parentId: number }): Promise<void>;
  /** Deletes a term; its children move up to its parent and events lose it. */
  remove(term: TermRecord): Promise<void>;
}

/** Users and their application passwords. */
export interface UsersRepository {
  findByLoginOrEmail(loginOrEmail: string): Promise<User | null>;
  findById(id: number): Promise<User | null>;
  list(): Promise<User[]>;
  create(input: { id?: number; login: string; email: string | null; displayName?: string; role: Role }): Promise<User>;
  /** Changes the role and bumps the credential version: effective on the user's next request everywhere. */
  setRole(id: number, role: Role): Promise<void>;
  /** Removes a user after giving their records to another. */
  remove(id: number, reassignTo: number): Promise<void>;
  passwordsOf(userId: number): Promise<AppPassword[]>;
  addPassword(p: Omit<AppPassword, 'lastUsedUtc' | 'lastIp'>): Promise<void>;
  /** Revokes one password and bumps the credential version; false when there was none. */
  revokePassword(userId: number, uuid: string): Promise<boolean>;
  /** Replaces the bootstrap password of a user (at most one) and bumps the credential version. */
  replaceBootstrapPassword(p: Omit<AppPassword, 'lastUsedUtc' | 'lastIp'>): Promise<void>;
  /** Records a password's use (bookkeeping: no answer shows it). */
  touchPassword(uuid: string, at: string, ip: string | null): Promise<void>;
}

/** Images known by URL. */
export interface MediaRepository {
  findById(id: number): Promise<MediaRecord | null>;
  findByUrl(url: string): Promise<MediaRecord | null>;
  /** The media record of a URL, registered on first use (no download). */
  register(url: string): Promise<MediaRecord>;
  /** Stores an image as another site describes it (an import); returns the id it has here. */
  save(media: MediaRecord): Promise<number>;
}

/**
 * Failed authentications per (client address, account), for the lock-out shared by every process and node. Kept
 * apart from the data (SQLite: a file of its own; PostgreSQL: an unlogged table written outside the group commit), so
 * counting a flood of wrong passwords retires no cached answer.
 */
export interface LockoutStore {
  /** Until when the pair is locked (Unix ms; 0: not locked), and whether any failure is on record. */
  state(address: string, account: string, now: number): Promise<{ lockedUntil: number; recorded: boolean }>;
  /** Counts a failure; returns until when the pair is now locked (0: not locked). */
  fail(address: string, account: string, now: number, limits: { max: number; windowMs: number; lockMs: number }): Promise<number>;
  clear(address: string, account: string): Promise<void>;
  /** Pairs kept now (at most ALMANAC_AUTH_TRACKED_PAIRS). */
  tracked(): Promise<number>;
  /** Equal values: no failure was recorded or cleared in between (see each store for whose). */
  generation(): string;
  close(): Promise<void>;
}

export interface Repositories {
  posts: PostsRepository;
  terms: TermsRepository;
  users: UsersRepository;
  media: MediaRepository;
}

/** What a write sees: the repositories of its transaction, the time the write lock was taken, and savepoints. */
export interface WriteUnit extends Repositories {
  /** When this write holds the write lock (UTC): modification times follow the order of commits. */
  now: DateTime;
  /** Runs `work` in a savepoint: when it throws, what it wrote is undone and the error goes on. */
  savepoint<T>(work: () => Promise<T>): Promise<T>;
}

/** What a write tells the engine about itself, beyond its work. */
export interface WriteOptions {
  /**
   * The write is expected to make one insert (`posts.create`) computed from what was read before it (nothing read
   * under the write lock): PostgreSQL may then send it together with other such writes of its batch. A write that
   * does anything else is undone and runs again in turn, so the hint changes what a write costs, never its outcome.
   */
  insertOnly?: boolean;
}

export type EngineKind = 'sqlite' | 'postgres';

export interface Engine {
  readonly kind: EngineKind;
  /** The migrations applied when the engine opened the database (it always brings it to the newest schema). */
  readonly applied: number[];
  /**
   * Reads on one consistent view of the data where the engine offers one (SQLite: one snapshot). With `reads`, what
   * the work reads is recorded there (see changes.ts): what a cached answer depends on.
   */
  read<T>(work: (repos: Repositories) => Promise<T>, reads?: ReadSet | null): Promise<T>;
  /**
   * `read` for a list, a search or a feed: costly reads queue among themselves (SQLite: for a turn, before they take
   * a connection; PostgreSQL: on the pool of list statements, as every list statement does), so however many arrive,
   * they never hold every connection a cheap read (a record by id, say) needs.
   */
  readList<T>(work: (repos: Repositories) => Promise<T>, reads?: ReadSet | null): Promise<T>;
  /**
   * One atomic change, serialised with every other write of every process and node, acknowledged once durable.
   * Writes arriving together share one commit (group commit), each in a savepoint of its own.
   */
  write<T>(work: (unit: WriteUnit) => Promise<T>, options?: WriteOptions): Promise<T>;
  /** A write no answer depends on (when a password was last used): not a change for the caches. */
  bookkeep<T>(work: (repos: Repositories) => Promise<T>): Promise<T>;
  /**
   * The data's generation: equal values mean nothing an answer can depend on was committed in between, by any
   * process or node. A reading starts after the call, so a write acknowledged before it is always seen; calls of one
   * turn of the event loop share one reading (see CoalescedReader).
   */
  generation(): Promise<string>;
  /** What changed, as this process has seen it through `generation` readings: what the caches consult. */
  readonly changes: ChangeTracker;
  /**
   * The counts these terms show (TermRecord.count; a term that no longer exists is missing) and the change log's
   * newest sequence, read together from one snapshot: the counts are those of exactly that point of the log.
   */
  termCounts(ids: number[]): Promise<{ counts: Map<number, number>; seq: number }>;
  /**
   * Runs a bulk load (seeding, an import) made of writes: the engine may tune itself for it while it runs (SQLite: a
   * large page cache, no automatic checkpoints) and tidies up after (a checkpoint, its search indexes merged, fresh
   * statistics).
   */
  bulk<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Whether a write failed because a row it links to (a foreign key) no longer exists: what a write meets when it
   * read its references before taking the write lock and one of them was deleted in between.
   */
  missingReference(err: unknown): boolean;
  /** The schema version of the database. */
  schemaVersion(): Promise<number>;
  /** Brings the database to the newest schema; returns the versions applied. */
  migrate(): Promise<number[]>;
  /** The failed authentications of the lock-out. */
  readonly lockout: LockoutStore;
  /** A write that changes nothing, to learn at start-up whether the database can be written at all. */
  checkWritable(): Promise<void>;
  /** Releases connections; a SQLite database also empties its write-ahead log when it can. */
  close(): Promise<void>;
}
