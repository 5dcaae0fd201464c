import type { Lang } from '../http/state.js';
import { hidesWhenProtected } from '../domain/postRules.js';
import { collationKey, foldForSearch, slugForQuery } from '../domain/text.js';
import type { Db } from './connection.js';
import { groupCommit } from './groupCommit.js';
import { explainStatement, StatementCache } from './sql.js';

export type PostType = 'event' | 'venue' | 'organizer';
export type PostStatus = 'publish' | 'future' | 'draft' | 'pending' | 'private' | 'trash';

/** What events, venues and organizers share (a WordPress post). Ids of absent links are 0, as WordPress reports them. */
export interface PostBase {
  id: number;
  type: PostType;
  authorId: number;
  status: PostStatus;
  statusBeforeTrash: PostStatus | null;
  slug: string;
  title: string;
  content: string;
  excerpt: string;
  password: string;
  dateLocal: string;
  dateUtc: string;
  modifiedLocal: string;
  modifiedUtc: string;
  lang: Lang;
  translationGroup: number;
  parentId: number;
  imageId: number;
  /** Ids this record had on other sites (imports), after its own. */
  globalIdLineage: string[];
}

export interface EventRecord extends PostBase {
  type: 'event';
  startLocal: string;
  endLocal: string;
  startUtc: string;
  endUtc: string;
  timezone: string;
  allDay: boolean;
  costs: string[];
  currencySymbol: string;
  currencyPosition: '' | 'prefix' | 'postfix';
  currencyCode: string;
  /** null: never set (the permalink is shown instead). */
  website: string | null;
  showMap: boolean;
  showMapLink: boolean;
  hideFromListings: boolean;
  sticky: boolean;
  featured: boolean;
  ticketed: boolean;
  venueId: number;
  organizerIds: number[];
  termIds: number[];
}

export interface VenueRecord extends PostBase {
  type: 'venue';
  address: string;
  city: string;
  country: string;
  province: string;
  state: string;
  stateprovince: string;
  zip: string;
  phone: string;
  website: string;
  showMap: boolean;
  showMapLink: boolean;
  geoLat: number | null;
  geoLng: number | null;
}

export interface OrganizerRecord extends PostBase {
  type: 'organizer';
  phone: string;
  website: string;
  email: string;
}

export type PostRecord = EventRecord | VenueRecord | OrganizerRecord;

/** Who is asking, for list visibility: anonymous (published only), or a user who sees their own records too. */
export type ListViewer = { kind: 'public' } | { kind: 'user'; userId: number; seeOthers: boolean };

/** The capabilities behind editing or deleting records of one type (postRules.changeRights). */
export interface ChangeRights {
  userId: number;
  /** Published and scheduled records too. */
  published: boolean;
  /** Other users' records too. */
  others: boolean;
  /** Other users' private records too. */
  othersPrivate: boolean;
}

/**
 * Whose password-protected records a list may match on what they protect (postRules.mayOpen, built by
 * postRules.protectedAccess): those the caller may edit, and those whose password the request carries.
 */
export interface ProtectedAccess {
  /** Anonymous callers get no protected record from a search unless they send its password (WordPress core). */
  anonymous: boolean;
  /** What the caller may edit, by type (null: nothing). */
  edits: Record<PostType, ChangeRights | null>;
  /** The request's `password`. */
  password: string | undefined;
}

/** Filters of GET /events, already resolved to ids and site-local bounds. */
export interface EventListQuery {
  lang: Lang;
  nowUtc: string;
  /** Effective statuses asked for (`publish` includes scheduled records whose date has come). */
  statuses: PostStatus[];
  viewer: ListViewer;
  access: ProtectedAccess;
  bounds: { column: 'start' | 'end'; op: '>=' | '<=' | '<' | '>'; value: string }[];
  search?: { include: string[]; exclude: string[] };
  categoryIds?: number[];
  tagIds?: number[];
  venueIds?: number[];
  organizerIds?: number[];
  featured?: boolean;
  ticketed?: boolean;
  parentId?: number;
  include?: number[];
  geo?: { lat: number; lng: number; radiusKm: number } | 'any';
  /** Leave password-protected events out (the iCalendar feed). */
  withoutPassword?: boolean;
  limit: number;
  offset: number;
}

/** Filters of GET /venues and GET /organizers. */
export interface LinkedListQuery {
  type: 'venue' | 'organizer';
  lang: Lang;
  nowUtc: string;
  /** Site-local now, for "upcoming". */
  nowLocal: string;
  statuses: PostStatus[];
  viewer: ListViewer;
  /** Events the viewer may see, for `only_with_upcoming`. */
  eventViewer: ListViewer;
  access: ProtectedAccess;
  words?: string[];
  /** Only records linked to this event; none when its links are hidden from the caller (see eventAsFilter). */
  event?: { id: number; linksHidden: boolean };
  hasEvents?: boolean;
  onlyWithUpcoming?: boolean;
  limit: number;
  offset: number;
}

/** A `modified_after` page: changes of one type and language after a position, up to a time (DESIGN: incremental sync). */
export interface ChangesQuery {
  type: PostType;
  lang: Lang;
  nowUtc: string;
  /** Which records the caller may read whole (the others are tombstones). */
  statuses: PostStatus[];
  viewer: ListViewer;
  /** The position after which changes are listed: a time, and an id among the changes at exactly that time. */
  after: string;
  afterId: number;
  /** The last time of the pass (inclusive). */
  until: string;
  limit: number;
}

/** One change of a `modified_after` list, in (time, id) order. */
export interface Change {
  id: number;
  /** `modified_utc`, or when it was deleted for good. */
  changedUtc: string;
  /** Site-local `modified`, or null for a record deleted for good. */
  changedLocal: string | null;
  /** Readable whole by the caller. */
  readable: boolean;
  /** Trashed, or deleted for good. */
  removed: boolean;
}

type ListSql = { page: string; count: string; params: Record<string, unknown> };

const like = (word: string) => `%${foldForSearch(word).replace(/[\\%_]/g, (c) => '\\' + c)}%`;

/**
 * Trigrams probed for a search, at most: each reads the list of every post holding it, and a handful narrow a search
 * as well as hundreds (the LIKE decides in any case).
 */
const MAX_TRIGRAMS = 12;

/**
 * The trigram index query (migration 0008) that finds every event whose folded text may contain all of `words`: each
 * word of three characters or more needs each of its trigrams (up to MAX_TRIGRAMS in all). Null when no word is that long (the index cannot
 * help). The LIKE of each word still decides; this only narrows.
 */
function trigramQuery(words: string[]): string | null {
  const grams = new Set<string>();
  for (const word of words) {
    const chars = [...foldForSearch(word)];
    for (let i = 0; i + 3 <= chars.length && grams.size < MAX_TRIGRAMS; i++) grams.add(chars.slice(i, i + 3).join(''));
  }
  return grams.size > 0 ? [...grams].map((g) => `"${g.replace(/"/g, '""')}"`).join(' AND ') : null;
}

/** SQL for "status in S" over a table alias carrying `status` and `date_utc`; `publish` covers due scheduled records. */
function statusSql(alias: string, statuses: PostStatus[], params: Record<string, unknown>): string {
  const published = `(${alias}.status = 'publish' OR (${alias}.status = 'future' AND ${alias}.date_utc <= @now))`;
  const parts = statuses.map((status, i) => {
    if (status === 'publish') return published;
    if (status === 'future') return `(${alias}.status = 'future' AND ${alias}.date_utc > @now)`;
    params[`status${i}`] = status;
    return `${alias}.status = @status${i}`;
  });
  return parts.length ? `(${parts.join(' OR ')})` : '0';
}

function viewerSql(alias: string, viewer: ListViewer, params: Record<string, unknown>, prefix = ''): string {
  const published = `(${alias}.status = 'publish' OR (${alias}.status = 'future' AND ${alias}.date_utc <= @now))`;
  if (viewer.kind === 'public') return published;
  if (viewer.seeOthers) return '1';
  params[`${prefix}me`] = viewer.userId;
  return `(${published} OR ${alias}.author_id = @${prefix}me)`;
}
/** SQL: the caller may change the post (alias): `mayChange` over rows, '1' for every row, '0' for none. */
function changeableSql(alias: string, rights: ChangeRights | null, params: Record<string, unknown>): string {
  if (!rights) return '0';
  const status = `(CASE ${alias}.status WHEN 'trash' THEN COALESCE(${alias}.status_before_trash, 'draft') ELSE ${alias}.status END)`;
  const own = `${alias}.author_id = @changer`;
  const conditions: string[] = [];
  if (!rights.published) conditions.push(`${status} NOT IN ('publish', 'future')`);
  if (!rights.others) conditions.push(own);
  else if (!rights.othersPrivate) conditions.push(`(${own} OR ${status} <> 'private')`);
  if (conditions.some((c) => c.includes('@changer'))) params.changer = rights.userId;
  return conditions.length ? `(${conditions.join(' AND ')})` : '1';
}

/** SQL conditions that each open a protected post (alias) of a type to the caller; null when it may open every one. */
function openingSql(alias: string, type: PostType, access: ProtectedAccess, params: Record<string, unknown>): string[] | null {
  const changeable = changeableSql(alias, access.edits[type], params);
  if (changeable === '1') return null;
  const ways = changeable === '0' ? [] : [changeable];
  if (access.password !== undefined) {
    params.opener = access.password;
    ways.push(`almanac_unlocks(${alias}.password, @opener)`); // constant-time, as on reads by id
  }
  return ways;
}

/** SQL: the post (alias) has no password or the caller may open it (postRules.mayOpen); null when every post is open to it. */
function openSql(alias: string, type: PostType, access: ProtectedAccess, params: Record<string, unknown>): string | null {
  const ways = openingSql(alias, type, access, params);
  return ways === null ? null : `(${[`${alias}.password = ''`, ...ways].join(' OR ')})`;
}

/** `openSql` for an event read off a listing index (alias `e`): only a protected event's post is read. */
function openEventSql(access: ProtectedAccess, params: Record<string, unknown>): string | null {
  const ways = openingSql('pp', 'event', access, params);
  if (ways === null) return null;
  return ways.length ? `(e.protected = 0 OR EXISTS (SELECT 1 FROM posts pp WHERE pp.id = e.post_id AND (${ways.join(' OR ')})))` : 'e.protected = 0';
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

/** The columns venue and organizer search reads, with the field of the list entry each one is. */
const LINKED_SEARCH_FIELDS: Record<'venue' | 'organizer', [column: string, field: string][]> = {
  venue: [['p.title', 'venue'], ['p.content', 'description'], ['p.excerpt', 'excerpt'], ['d.address', 'address'], ['d.city', 'city'], ['d.province', 'province'],
    ['d.state', 'state'], ['d.stateprovince', 'stateprovince'], ['d.zip', 'zip'], ['d.phone', 'phone']],
  organizer: [['p.title', 'organizer'], ['p.content', 'description'], ['p.excerpt', 'excerpt'], ['d.phone', 'phone'], ['d.email', 'email'], ['d.website', 'website']],
};

/**
 * The part of an event's folded search text (title, excerpt, description: see baseToRow) that a caller who may not
 * open the event matches on: its title, the one of the three a protected entry does not hide.
 */
const SEARCHED_TITLE = `substr(p.search_text, 1, instr(p.search_text, char(31)) - 1)`;

export type RecordOf<T extends PostType> = Extract<PostRecord, { type: T }>;

/** A record of a translation group, with what `mayRead` needs. */
export type TranslationMember = Pick<PostBase, 'id' | 'type' | 'lang' | 'authorId' | 'status' | 'statusBeforeTrash' | 'dateUtc'>;
type TranslationRow = { translation_group: number; lang: string; id: number; author_id: number | null; status: string; status_before_trash: string | null; date_utc: string };
/** A record about to be created: everything but the id and translation group. */
export type NewRecord<T extends PostType> = Omit<RecordOf<T>, 'id' | 'translationGroup'> & { translationOf: number | null };

type Row = Record<string, unknown>;
const bool = (v: unknown) => v === 1;
const bit = (v: boolean) => (v ? 1 : 0);

function baseFromRow(r: Row): PostBase {
  return {
    id: r.id as number, type: r.type as PostType, authorId: (r.author_id as number | null) ?? 0, status: r.status as PostStatus,
    statusBeforeTrash: (r.status_before_trash as PostStatus | null) ?? null, slug: r.slug as string, title: r.title as string,
    content: r.content as string, excerpt: r.excerpt as string, password: r.password as string,
    dateLocal: r.date_local as string, dateUtc: r.date_utc as string, modifiedLocal: r.modified_local as string, modifiedUtc: r.modified_utc as string,
    lang: r.lang as Lang, translationGroup: r.translation_group as number, parentId: (r.parent_id as number | null) ?? 0,
    imageId: (r.image_id as number | null) ?? 0, globalIdLineage: JSON.parse(r.global_id_lineage as string) as string[],
  };
}

function baseToRow(p: Omit<PostBase, 'id' | 'translationGroup'>): Row {
  return {
    type: p.type, author_id: p.authorId || null, status: p.status, status_before_trash: p.statusBeforeTrash, slug: p.slug, title: p.title,
    content: p.content, excerpt: p.excerpt, password: p.password, date_local: p.dateLocal, date_utc: p.dateUtc,
    modified_local: p.modifiedLocal, modified_utc: p.modifiedUtc, lang: p.lang, parent_id: p.parentId || null,
    image_id: p.imageId || null, global_id_lineage: JSON.stringify(p.globalIdLineage),
    // what event search reads (migration 0005): the three searched fields, folded
    search_text: p.type === 'event' ? foldForSearch(`${p.title}\u001f${p.excerpt}\u001f${p.content}`) : '',
    // what duplicate venues and organizers are found by (migration 0010)
    title_key: p.type === 'event' ? null : collationKey(p.title),
  };
}

function eventFromRow(r: Row, organizerIds: number[], termIds: number[]): EventRecord {
  // Object.assign onto the fresh base, not a spread into a literal: V8 builds spread-then-literal objects ~40× slower
  return Object.assign(baseFromRow(r), {
    type: 'event' as const, startLocal: r.start_local as string, endLocal: r.end_local as string, startUtc: r.start_utc as string,
    endUtc: r.end_utc as string, timezone: r.timezone as string, allDay: bool(r.all_day), costs: JSON.parse(r.costs as string) as string[],
    currencySymbol: r.currency_symbol as string, currencyPosition: r.currency_position as EventRecord['currencyPosition'],
    currencyCode: r.currency_code as string, website: (r.website as string | null) ?? null, showMap: bool(r.show_map),
    showMapLink: bool(r.show_map_link), hideFromListings: bool(r.hide_from_listings), sticky: bool(r.sticky), featured: bool(r.featured),
    ticketed: bool(r.ticketed), venueId: (r.venue_id as number | null) ?? 0, organizerIds, termIds,
  });
}

function eventToRow(e: Omit<EventRecord, 'id' | 'translationGroup'>): Row {
  return {
    start_local: e.startLocal, end_local: e.endLocal, start_utc: e.startUtc, end_utc: e.endUtc, timezone: e.timezone, all_day: bit(e.allDay),
    costs: JSON.stringify(e.costs), currency_symbol: e.currencySymbol, currency_position: e.currencyPosition, currency_code: e.currencyCode,
    website: e.website, show_map: bit(e.showMap), show_map_link: bit(e.showMapLink), hide_from_listings: bit(e.hideFromListings),
    sticky: bit(e.sticky), featured: bit(e.featured), ticketed: bit(e.ticketed), venue_id: e.venueId || null,
    // copies of post columns for the listing index (migration 0002)
    lang: e.lang, status: e.status, date_utc: e.dateUtc, author_id: e.authorId || null, protected: bit(e.password !== ''),
  };
}

function venueFromRow(r: Row): VenueRecord {
  return Object.assign(baseFromRow(r), {
    type: 'venue' as const, address: r.address as string, city: r.city as string, country: r.country as string,
    province: r.province as string, state: r.state as string, stateprovince: r.stateprovince as string, zip: r.zip as string,
    phone: r.phone as string, website: r.website as string, showMap: bool(r.show_map), showMapLink: bool(r.show_map_link),
    geoLat: (r.geo_lat as number | null) ?? null, geoLng: (r.geo_lng as number | null) ?? null,
  });
}

function venueToRow(v: Omit<VenueRecord, 'id' | 'translationGroup'>): Row {
  return {
    address: v.address, city: v.city, country: v.country, province: v.province, state: v.state, stateprovince: v.stateprovince,
    zip: v.zip, phone: v.phone, website: v.website, show_map: bit(v.showMap), show_map_link: bit(v.showMapLink), geo_lat: v.geoLat, geo_lng: v.geoLng,
  };
}

function organizerFromRow(r: Row): OrganizerRecord {
  return Object.assign(baseFromRow(r), { type: 'organizer' as const, phone: r.phone as string, website: r.website as string, email: r.email as string });
}

function organizerToRow(o: Omit<OrganizerRecord, 'id' | 'translationGroup'>): Row {
  return { phone: o.phone, website: o.website, email: o.email };
}

const DETAIL_TABLE: Record<PostType, string> = { event: 'events', venue: 'venues', organizer: 'organizers' };
const POST_COLUMNS = ['type', 'author_id', 'status', 'status_before_trash', 'slug', 'title', 'content', 'excerpt', 'password', 'date_local', 'date_utc', 'modified_local', 'modified_utc', 'lang', 'parent_id', 'image_id', 'global_id_lineage', 'search_text', 'title_key'];
const DETAIL_COLUMNS: Record<PostType, string[]> = {
  event: ['start_local', 'end_local', 'start_utc', 'end_utc', 'timezone', 'all_day', 'costs', 'currency_symbol', 'currency_position', 'currency_code', 'website', 'show_map', 'show_map_link', 'hide_from_listings', 'sticky', 'featured', 'ticketed', 'venue_id', 'lang', 'status', 'date_utc', 'author_id', 'protected'],
  venue: ['address', 'city', 'country', 'province', 'state', 'stateprovince', 'zip', 'phone', 'website', 'show_map', 'show_map_link', 'geo_lat', 'geo_lng'],
  organizer: ['phone', 'website', 'email'],
};

/** Events, venues and organizers (one id space), their links to each other and to terms. */
export class PostsRepository {
  private readonly stmts;
  private readonly lists: StatementCache;

  constructor(private readonly db: Db) {
    this.lists = new StatementCache(db);
    const insertDetails = (type: PostType) =>
      db.prepare(`INSERT INTO ${DETAIL_TABLE[type]} (post_id, ${DETAIL_COLUMNS[type].join(', ')}) VALUES (@id, ${DETAIL_COLUMNS[type].map((c) => '@' + c).join(', ')})`);
    const updateDetails = (type: PostType) =>
      db.prepare(`UPDATE ${DETAIL_TABLE[type]} SET ${DETAIL_COLUMNS[type].map((c) => `${c} = @${c}`).join(', ')} WHERE post_id = @id`);
    this.stmts = {
      typeOf: db.prepare<[number], { type: string }>('SELECT type FROM posts WHERE id = ?'),
      idBySlug: db.prepare<[string, string, string], { id: number }>('SELECT id FROM posts WHERE type = ? AND lang = ? AND slug = ?'),
      rows: {
        event: db.prepare<{ ids: string }, Row>('SELECT d.*, p.* FROM posts p JOIN events d ON d.post_id = p.id WHERE p.id IN (SELECT value FROM json_each(@ids))'),
        venue: db.prepare<{ ids: string }, Row>('SELECT * FROM posts p JOIN venues d ON d.post_id = p.id WHERE p.id IN (SELECT value FROM json_each(@ids))'),
        organizer: db.prepare<{ ids: string }, Row>('SELECT * FROM posts p JOIN organizers d ON d.post_id = p.id WHERE p.id IN (SELECT value FROM json_each(@ids))'),
      },
      organizersOf: db.prepare<{ ids: string }, { event_id: number; organizer_id: number }>(
        'SELECT event_id, organizer_id FROM event_organizers WHERE event_id IN (SELECT value FROM json_each(@ids)) ORDER BY event_id, position',
      ),
      termsOf: db.prepare<{ ids: string }, { event_id: number; term_id: number }>(
        'SELECT event_id, term_id FROM event_terms WHERE event_id IN (SELECT value FROM json_each(@ids))',
      ),
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
      addTerm: db.prepare('INSERT OR IGNORE INTO event_terms (event_id, term_id) VALUES (?, ?)'),
      unlinkVenue: db.prepare('UPDATE events SET venue_id = NULL WHERE venue_id = ?'),
      unlinkOrganizer: db.prepare('DELETE FROM event_organizers WHERE organizer_id = ?'),
      translations: db.prepare<{ type: string; groups: string }, TranslationRow>(
        `SELECT translation_group, lang, id, author_id, status, status_before_trash, date_utc FROM posts
         WHERE type = @type AND translation_group IN (SELECT value FROM json_each(@groups)) ORDER BY id`,
      ),
      sameName: db.prepare<{ type: string; lang: string; key: string }, { id: number }>(
        `SELECT id FROM posts WHERE type = @type AND lang = @lang AND title_key = @key AND status <> 'trash' ORDER BY id`,
      ),
    };
  }

  typeOf(id: number): PostType | null {
    return (this.stmts.typeOf.get(id)?.type as PostType | undefined) ?? null;
  }

  findById(id: number): PostRecord | null {
    const type = this.typeOf(id);
    return type ? (this.findMany(type, [id]).get(id) ?? null) : null;
  }

  findOfType<T extends PostType>(type: T, id: number): RecordOf<T> | null {
    return this.findMany(type, [id]).get(id) ?? null;
  }

  /**
   * The id a slug names, as WordPress looks it up (`slugForQuery`), in the preferred language first, then in the
   * others.
   */
  resolveSlug(type: PostType, raw: string, preferred: Lang): number | null {
    const slug = slugForQuery(raw);
    if (!slug) return null;
    for (const lang of [preferred, ...(['en', 'fr', 'de'] as const).filter((l) => l !== preferred)]) {
      const id = this.stmts.idBySlug.get(type, lang, slug)?.id;
      if (id !== undefined) return id;
    }
    return null;
  }

  /** Records of one type by id, in one query per table however many are asked for. */
  findMany<T extends PostType>(type: T, ids: number[]): Map<number, RecordOf<T>> {
    const out = new Map<number, RecordOf<T>>();
    if (ids.length === 0) return out;
    const json = JSON.stringify([...new Set(ids)]);
    const rows = this.stmts.rows[type].all({ ids: json });
    if (type === 'event') {
      const organizers = new Map<number, number[]>();
      for (const r of this.stmts.organizersOf.all({ ids: json })) organizers.set(r.event_id, [...(organizers.get(r.event_id) ?? []), r.organizer_id]);
      const terms = new Map<number, number[]>();
      for (const r of this.stmts.termsOf.all({ ids: json })) terms.set(r.event_id, [...(terms.get(r.event_id) ?? []), r.term_id]);
      for (const r of rows) out.set(r.id as number, eventFromRow(r, organizers.get(r.id as number) ?? [], terms.get(r.id as number) ?? []) as RecordOf<T>);
    } else {
      for (const r of rows) out.set(r.id as number, (type === 'venue' ? venueFromRow(r) : organizerFromRow(r)) as RecordOf<T>);
    }
    return out;
  }

  slugOwner(type: PostType, lang: Lang, slug: string): number | null {
    return this.stmts.idBySlug.get(type, lang, slug)?.id ?? null;
  }

  /** Non-trashed venues or organizers of a language whose title WordPress's collation finds equal, oldest first. */
  sameName(type: 'venue' | 'organizer', lang: Lang, title: string): number[] {
    return this.stmts.sameName.all({ type, lang, key: collationKey(title) }).map((r) => r.id);
  }

  /** The plan of `sameName`. */
  explainSameName(): string[] {
    return explainStatement(this.db, this.stmts.sameName, { type: 'venue', lang: 'en', key: 'x' });
  }

  /** `{lang: id}` of each translation group asked for. */
  translations(type: PostType, groups: number[]): Map<number, Partial<Record<Lang, number>>> {
    const out = new Map<number, Partial<Record<Lang, number>>>();
    for (const [group, members] of this.translationMembers(type, groups)) {
      const entry: Partial<Record<Lang, number>> = {};
      for (const member of members) entry[member.lang] = member.id;
      out.set(group, entry);
    }
    return out;
  }

  /** The records of each translation group asked for, with what tells who may read them. */
  translationMembers(type: PostType, groups: number[]): Map<number, TranslationMember[]> {
    const out = new Map<number, TranslationMember[]>();
    if (groups.length === 0) return out;
    for (const r of this.stmts.translations.all({ type, groups: JSON.stringify([...new Set(groups)]) })) {
      const member: TranslationMember = {
        id: r.id, type, lang: r.lang as Lang, authorId: r.author_id ?? 0, status: r.status as PostStatus,
        statusBeforeTrash: (r.status_before_trash as PostStatus | null) ?? null, dateUtc: r.date_utc,
      };
      const members = out.get(r.translation_group);
      if (members) members.push(member);
      else out.set(r.translation_group, [member]);
    }
    return out;
  }

  /** Inserts a record with its details and links; run inside `transaction`. Returns the new id. */
  insert<T extends PostType>(record: NewRecord<T>): number {
    const row = baseToRow(record);
    row.translation_group = record.translationOf === null ? null : this.findById(record.translationOf)!.translationGroup;
    const id = Number(this.stmts.insertPost.run(row).lastInsertRowid);
    this.insertDetails(id, record);
    return id;
  }

  /**
   * Inserts a record under a given id and translation group (an import keeps the ids of its source); run inside
   * `transaction`. The id must be free.
   */
  insertAs<T extends PostType>(id: number, translationGroup: number, record: Omit<RecordOf<T>, 'id' | 'translationGroup'>): void {
    this.stmts.insertPostAs.run({ ...baseToRow(record), id, translation_group: translationGroup });
    this.insertDetails(id, record);
  }

  private insertDetails(id: number, record: Omit<PostRecord, 'id' | 'translationGroup'>): void {
    this.stmts.insertDetails[record.type].run({ ...this.detailsRow(record), id });
    if (record.type === 'event') this.writeLinks(id, record as EventRecord, true);
  }

  /** Moves a record into another translation group; run inside `transaction`. */
  setTranslationGroup(id: number, group: number): void {
    this.stmts.setGroup.run({ id, group });
  }

  /** Ids of the records whose lineage holds their own id on a site (`example.org/blog?id=N` for record N). */
  idsWithLineageFrom(site: string): number[] {
    const pattern = `%${JSON.stringify(`${site}?id=`).slice(1, -1).replace(/[\\%_]/g, (c) => '\\' + c)}%`;
    return this.stmts.withLineage.all({ pattern })
      .filter((r) => (JSON.parse(r.global_id_lineage) as string[]).includes(`${site}?id=${r.id}`))
      .map((r) => r.id);
  }

  /** Writes a whole record back (base, details and, for events, links); run inside `transaction`. */
  update(record: PostRecord): void {
    this.stmts.updatePost.run({ id: record.id, ...baseToRow(record) });
    this.stmts.updateDetails[record.type].run({ id: record.id, ...this.detailsRow(record) });
    if (record.type === 'event') this.writeLinks(record.id, record);
  }

  /** After a venue or organizer is trashed, no event links to it any more. */
  unlinkFromEvents(record: PostRecord): void {
    if (record.type === 'venue') this.stmts.unlinkVenue.run(record.id);
    if (record.type === 'organizer') this.stmts.unlinkOrganizer.run(record.id);
  }

  transaction<T>(work: () => T): T {
    return this.db.transaction(work).immediate();
  }

  /**
   * Runs `work` (which may call `transaction`) in the connection's next group commit, and resolves once it is
   * durable: concurrent writes share one fsync (see GroupCommit).
   */
  committed<T>(work: () => T): Promise<T> {
    return groupCommit(this.db).run(work);
  }

  /** One page of event ids matching the filters, and how many match in all (two statements). */
  listEvents(q: EventListQuery): { ids: number[]; total: number } {
    return this.run(this.eventListSql(q), q.limit, q.offset);
  }

  /** `EXPLAIN QUERY PLAN` of the two statements of an event list (tests check that no list scans every event). */
  explainEventList(q: EventListQuery): string[] {
    return this.explain(this.eventListSql(q));
  }

  private eventListSql(q: EventListQuery): ListSql {
    const params: Record<string, unknown> = { lang: q.lang, now: q.nowUtc };
    const where = ['e.lang = @lang', 'e.hide_from_listings = 0', statusSql('e', q.statuses, params), viewerSql('e', q.viewer, params)];
    q.bounds.forEach((b, i) => {
      params[`b${i}`] = b.value;
      where.push(`e.${b.column}_local ${b.op} @b${i}`);
      // every event ends at or after its start, so an upper bound on the end bounds the start too: the index range
      // on start then closes, and a list costs its window, not the rest of the calendar
      if (b.column === 'end' && (b.op === '<=' || b.op === '<')) where.push(`e.start_local ${b.op} @b${i}`);
    });
    const open = openEventSql(q.access, params);
    if (open !== null && FILTERS_ON_HIDDEN.some((filter) => q[filter] !== undefined)) where.push(open);
    if (q.search) {
      let text = 'p.search_text';
      if (open !== null && q.access.anonymous) where.push(open); // no protected event in a visitor's search (WordPress)
      else if (open !== null) text = `(CASE WHEN ${openSql('p', 'event', q.access, params)} THEN p.search_text ELSE ${SEARCHED_TITLE} END)`;
      const clauses: string[] = [];
      const contains = (word: string) => {
        const name = `w${clauses.length}`;
        params[name] = like(word);
        return `${text} LIKE @${name} ESCAPE '\\'`;
      };
      for (const word of q.search.include) clauses.push(contains(word));
      for (const word of q.search.exclude) clauses.push('NOT ' + contains(word));
      const trigrams = trigramQuery(q.search.include);
      if (trigrams !== null) {
        params.trigrams = trigrams;
        // `+`: still read the window off the listing index (the set of matches is probed, through a Bloom filter),
        // so a list costs its window whatever the word; driving from the matches would cost every event holding it
        where.push('+e.post_id IN (SELECT rowid FROM posts_search WHERE posts_search MATCH @trigrams)');
      }
      if (clauses.length) where.push(`EXISTS (SELECT 1 FROM posts p WHERE p.id = e.post_id AND ${clauses.join(' AND ')})`);
    }
    const jsonList = (name: string, ids: number[]) => {
      params[name] = JSON.stringify(ids);
      return `(SELECT value FROM json_each(@${name}))`;
    };
    // `+`: an event's few links are read and each looked up in the list, rather than the index probed once for every
    // id of the list: one lookup per link, however long the list
    if (q.categoryIds) where.push(`EXISTS (SELECT 1 FROM event_terms et WHERE et.event_id = e.post_id AND +et.term_id IN ${jsonList('categories', q.categoryIds)})`);
    if (q.tagIds) where.push(`EXISTS (SELECT 1 FROM event_terms et WHERE et.event_id = e.post_id AND +et.term_id IN ${jsonList('tags', q.tagIds)})`);
    if (q.venueIds) where.push(`e.venue_id IN ${jsonList('venues', q.venueIds)}`);
    if (q.organizerIds) where.push(`EXISTS (SELECT 1 FROM event_organizers eo WHERE eo.event_id = e.post_id AND +eo.organizer_id IN ${jsonList('organizers', q.organizerIds)})`);
    if (q.featured !== undefined) where.push(`e.featured = ${q.featured ? 1 : 0}`);
    if (q.ticketed !== undefined) where.push(`e.ticketed = ${q.ticketed ? 1 : 0}`);
    if (q.parentId !== undefined) {
      params.parent = q.parentId;
      where.push('e.post_id IN (SELECT id FROM posts WHERE parent_id = @parent)');
    }
    if (q.include) where.push(`e.post_id IN ${jsonList('include', q.include)}`);
    if (q.withoutPassword) where.push('e.protected = 0');
    // the coordinates of a protected venue count only for callers who may open the venue
    const venueOpen = q.geo ? openSql('vp', 'venue', q.access, params) : null;
    const openVenue = venueOpen === null ? '' : ` AND ${venueOpen}`;
    if (q.geo === 'any') {
      where.push(`e.venue_id IN (SELECT v.post_id FROM venues v JOIN posts vp ON vp.id = v.post_id WHERE v.geo_lat IS NOT NULL AND v.geo_lng IS NOT NULL${openVenue})`);
    } else if (q.geo) {
      // a bounding box narrows the venues, then the true (haversine) distance decides
      const dLat = q.geo.radiusKm / 111.2;
      const dLng = q.geo.radiusKm / Math.max(0.01, 111.2 * Math.cos((q.geo.lat * Math.PI) / 180));
      Object.assign(params, { lat: q.geo.lat, lng: q.geo.lng, latMin: q.geo.lat - dLat, latMax: q.geo.lat + dLat, radius: q.geo.radiusKm });
      // the longitude band wraps at ±180° (and spans everything near the poles)
      let lngBand = '1';
      if (dLng < 180) {
        const [lo, hi] = [q.geo.lng - dLng, q.geo.lng + dLng];
        Object.assign(params, { lngMin: lo < -180 ? lo + 360 : lo, lngMax: hi > 180 ? hi - 360 : hi });
        lngBand = lo < -180 || hi > 180 ? '(v.geo_lng >= @lngMin OR v.geo_lng <= @lngMax)' : 'v.geo_lng BETWEEN @lngMin AND @lngMax';
      }
      where.push(`e.venue_id IN (SELECT v.post_id FROM venues v JOIN posts vp ON vp.id = v.post_id
        WHERE vp.status = 'publish'${openVenue} AND v.geo_lat BETWEEN @latMin AND @latMax AND ${lngBand}
          AND 12742.0 * asin(sqrt(pow(sin(radians(v.geo_lat - @lat) / 2), 2) + cos(radians(@lat)) * cos(radians(v.geo_lat)) * pow(sin(radians(v.geo_lng - @lng) / 2), 2))) <= @radius)`);
    }
    const filter = `FROM events e WHERE ${where.join(' AND ')}`;
    const order = q.include ? 'e.date_utc, e.post_id' : 'e.start_local, e.date_utc, e.post_id';
    return { page: `SELECT e.post_id AS id ${filter} ORDER BY ${order} LIMIT @limit OFFSET @offset`, count: `SELECT COUNT(*) AS total ${filter}`, params };
  }

  private run(sql: ListSql, limit: number, offset: number): { ids: number[]; total: number } {
    const ids = this.lists.get<{ id: number }>(sql.page).all({ ...sql.params, limit, offset }).map((r) => r.id);
    const { total } = this.lists.get<{ total: number }>(sql.count).get(sql.params)!;
    return { ids, total };
  }

  private explain(sql: ListSql): string[] {
    return [sql.page, sql.count].flatMap((statement) =>
      this.db.prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${statement}`).all({ ...sql.params, limit: 10, offset: 0 }).map((r) => r.detail),
    );
  }

  /**
   * One page of changes (records modified, and records deleted for good) after a position, in (time, id) order,
   * and how many changes are left in the pass. Both sides walk their (type, time, id) index from the position.
   */
  listChanges(q: ChangesQuery): { changes: Change[]; total: number } {
    const window = { type: q.type, lang: q.lang, after: q.after, afterId: q.afterId, until: q.until };
    const params: Record<string, unknown> = { ...window, now: q.nowUtc, limit: q.limit };
    const readable = `${statusSql('p', q.statuses, params)} AND ${viewerSql('p', q.viewer, params)}`;
    const range = (time: string, id: string) => `(${time} > @after OR (${time} = @after AND ${id} > @afterId)) AND ${time} <= @until`;
    const modified = `FROM posts p WHERE p.type = @type AND p.lang = @lang AND ${range('p.modified_utc', 'p.id')}`;
    const deleted = `FROM deleted_posts d WHERE d.type = @type AND d.lang = @lang AND ${range('d.deleted_utc', 'd.id')}`;
    const rows = this.lists.get<{ id: number; changed_utc: string; changed_local: string | null; readable: number; removed: number }>(
      `SELECT p.id, p.modified_utc AS changed_utc, p.modified_local AS changed_local, (${readable}) AS readable, p.status = 'trash' AS removed ${modified}
       UNION ALL SELECT d.id, d.deleted_utc, NULL, 0, 1 ${deleted}
       ORDER BY changed_utc, id LIMIT @limit`,
    ).all(params);
    const { total } = this.lists.get<{ total: number }>(`SELECT (SELECT COUNT(*) ${modified}) + (SELECT COUNT(*) ${deleted}) AS total`).get(window)!;
    return {
      changes: rows.map((r) => ({ id: r.id, changedUtc: r.changed_utc, changedLocal: r.changed_local, readable: r.readable === 1, removed: r.removed === 1 })),
      total,
    };
  }

  /** How many times each record was changed after its creation (iCalendar `SEQUENCE`). */
  revisions(ids: number[]): Map<number, number> {
    const rows = this.lists.get<{ id: number; revision: number }>('SELECT id, revision FROM posts WHERE id IN (SELECT value FROM json_each(@ids))').all({ ids: JSON.stringify(ids) });
    return new Map(rows.map((r) => [r.id, r.revision]));
  }

  /** One page of venue or organizer ids matching the filters (newest first), and the total. */
  listLinked(q: LinkedListQuery): { ids: number[]; total: number } {
    return this.run(this.linkedListSql(q), q.limit, q.offset);
  }

  explainLinkedList(q: LinkedListQuery): string[] {
    return this.explain(this.linkedListSql(q));
  }

  private linkedListSql(q: LinkedListQuery): ListSql {
    const params: Record<string, unknown> = { lang: q.lang, now: q.nowUtc };
    // the type as a literal, so SQLite can use the partial index of venue and organizer posts
    const where = [`p.type = '${q.type === 'venue' ? 'venue' : 'organizer'}'`, 'p.lang = @lang', statusSql('p', q.statuses, params), viewerSql('p', q.viewer, params)];
    const detail = q.type === 'venue' ? 'venues' : 'organizers';
    if (q.words && q.words.length > 0) {
      q.words.forEach((w, i) => (params[`w${i}`] = like(w)));
      const all = ([column]: [string, string]) => `(${q.words!.map((_, i) => `almanac_fold(${column}) LIKE @w${i} ESCAPE '\\'`).join(' AND ')})`;
      const fields = LINKED_SEARCH_FIELDS[q.type];
      const open = openSql('p', q.type, q.access, params);
      if (open === null || q.access.anonymous) {
        if (open !== null) where.push(open); // no protected record in a visitor's search (WordPress)
        where.push(`(${fields.map(all).join(' OR ')})`);
      } else {
        // a protected record the caller may not open is matched on what its entry shows: its name
        const hidden = fields.filter(([, field]) => hidesWhenProtected(q.type, field));
        const matches = fields.filter(([, field]) => !hidesWhenProtected(q.type, field)).map(all);
        if (hidden.length > 0) matches.push(`(${open} AND (${hidden.map(all).join(' OR ')}))`);
        where.push(`(${matches.join(' OR ')})`);
      }
    }
    // events linked to the record; `since` narrows to those starting then or later, through the linked indexes
    const linkedEvents = (since: string | null) => q.type === 'venue'
      ? `SELECT 1 FROM events e WHERE e.venue_id = p.id${since ? ` AND e.start_local >= ${since}` : ''}`
      : `SELECT 1 FROM event_organizers eo CROSS JOIN events e ON e.post_id = eo.event_id WHERE eo.organizer_id = p.id${since ? ` AND eo.start_local >= ${since}` : ''}`;
    if (q.event?.linksHidden) where.push('0');
    else if (q.event) {
      params.event = q.event.id;
      where.push(q.type === 'venue' ? 'p.id = (SELECT venue_id FROM events WHERE post_id = @event)' : 'p.id IN (SELECT organizer_id FROM event_organizers WHERE event_id = @event)');
    }
    // an event whose links the caller may not see (protected, not opened) does not link it to the record
    const eventOpen = q.hasEvents !== undefined || q.onlyWithUpcoming ? openEventSql(q.access, params) : null;
    const openEvent = eventOpen === null ? '' : ` AND ${eventOpen}`;
    if (q.hasEvents !== undefined) {
      where.push(`${q.hasEvents ? '' : 'NOT '}EXISTS (${linkedEvents(null)} AND e.status NOT IN ('draft', 'pending')${openEvent})`);
    }
    if (q.onlyWithUpcoming) {
      params.nowLocal = q.nowLocal;
      where.push(`EXISTS (${linkedEvents('@nowLocal')} AND e.hide_from_listings = 0 AND e.status <> 'trash' AND ${viewerSql('e', q.eventViewer, params, 'e')}${openEvent})`);
    }
    const filter = `FROM posts p JOIN ${detail} d ON d.post_id = p.id WHERE ${where.join(' AND ')}`;
    return { page: `SELECT p.id ${filter} ORDER BY p.date_utc DESC, p.id DESC LIMIT @limit OFFSET @offset`, count: `SELECT COUNT(*) AS total ${filter}`, params };
  }

  private detailsRow(record: Omit<PostRecord, 'id' | 'translationGroup'>): Row {
    if (record.type === 'event') return eventToRow(record as EventRecord);
    if (record.type === 'venue') return venueToRow(record as VenueRecord);
    return organizerToRow(record as OrganizerRecord);
  }

  private writeLinks(id: number, event: Pick<EventRecord, 'organizerIds' | 'termIds' | 'startLocal'>, fresh = false): void {
    if (!fresh) {
      this.stmts.clearOrganizers.run(id);
      this.stmts.clearTerms.run(id);
    }
    event.organizerIds.forEach((organizer, position) => this.stmts.addOrganizer.run(id, organizer, position, event.startLocal));
    for (const term of event.termIds) this.stmts.addTerm.run(id, term);
  }
}
