import type { Lang } from '../http/state.js';
import type { Db } from './connection.js';

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
export type RecordOf<T extends PostType> = Extract<PostRecord, { type: T }>;
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
  };
}

function eventFromRow(r: Row, organizerIds: number[], termIds: number[]): EventRecord {
  return {
    ...baseFromRow(r), type: 'event', startLocal: r.start_local as string, endLocal: r.end_local as string, startUtc: r.start_utc as string,
    endUtc: r.end_utc as string, timezone: r.timezone as string, allDay: bool(r.all_day), costs: JSON.parse(r.costs as string) as string[],
    currencySymbol: r.currency_symbol as string, currencyPosition: r.currency_position as EventRecord['currencyPosition'],
    currencyCode: r.currency_code as string, website: (r.website as string | null) ?? null, showMap: bool(r.show_map),
    showMapLink: bool(r.show_map_link), hideFromListings: bool(r.hide_from_listings), sticky: bool(r.sticky), featured: bool(r.featured),
    ticketed: bool(r.ticketed), venueId: (r.venue_id as number | null) ?? 0, organizerIds, termIds,
  };
}

function eventToRow(e: Omit<EventRecord, 'id' | 'translationGroup'>): Row {
  return {
    start_local: e.startLocal, end_local: e.endLocal, start_utc: e.startUtc, end_utc: e.endUtc, timezone: e.timezone, all_day: bit(e.allDay),
    costs: JSON.stringify(e.costs), currency_symbol: e.currencySymbol, currency_position: e.currencyPosition, currency_code: e.currencyCode,
    website: e.website, show_map: bit(e.showMap), show_map_link: bit(e.showMapLink), hide_from_listings: bit(e.hideFromListings),
    sticky: bit(e.sticky), featured: bit(e.featured), ticketed: bit(e.ticketed), venue_id: e.venueId || null,
  };
}

function venueFromRow(r: Row): VenueRecord {
  return {
    ...baseFromRow(r), type: 'venue', address: r.address as string, city: r.city as string, country: r.country as string,
    province: r.province as string, state: r.state as string, stateprovince: r.stateprovince as string, zip: r.zip as string,
    phone: r.phone as string, website: r.website as string, showMap: bool(r.show_map), showMapLink: bool(r.show_map_link),
    geoLat: (r.geo_lat as number | null) ?? null, geoLng: (r.geo_lng as number | null) ?? null,
  };
}

function venueToRow(v: Omit<VenueRecord, 'id' | 'translationGroup'>): Row {
  return {
    address: v.address, city: v.city, country: v.country, province: v.province, state: v.state, stateprovince: v.stateprovince,
    zip: v.zip, phone: v.phone, website: v.website, show_map: bit(v.showMap), show_map_link: bit(v.showMapLink), geo_lat: v.geoLat, geo_lng: v.geoLng,
  };
}

function organizerFromRow(r: Row): OrganizerRecord {
  return { ...baseFromRow(r), type: 'organizer', phone: r.phone as string, website: r.website as string, email: r.email as string };
}

function organizerToRow(o: Omit<OrganizerRecord, 'id' | 'translationGroup'>): Row {
  return { phone: o.phone, website: o.website, email: o.email };
}

const DETAIL_TABLE: Record<PostType, string> = { event: 'events', venue: 'venues', organizer: 'organizers' };
const POST_COLUMNS = ['type', 'author_id', 'status', 'status_before_trash', 'slug', 'title', 'content', 'excerpt', 'password', 'date_local', 'date_utc', 'modified_local', 'modified_utc', 'lang', 'parent_id', 'image_id', 'global_id_lineage'];
const DETAIL_COLUMNS: Record<PostType, string[]> = {
  event: ['start_local', 'end_local', 'start_utc', 'end_utc', 'timezone', 'all_day', 'costs', 'currency_symbol', 'currency_position', 'currency_code', 'website', 'show_map', 'show_map_link', 'hide_from_listings', 'sticky', 'featured', 'ticketed', 'venue_id'],
  venue: ['address', 'city', 'country', 'province', 'state', 'stateprovince', 'zip', 'phone', 'website', 'show_map', 'show_map_link', 'geo_lat', 'geo_lng'],
  organizer: ['phone', 'website', 'email'],
};

/** Events, venues and organizers (one id space), their links to each other and to terms. */
export class PostsRepository {
  private readonly stmts;

  constructor(private readonly db: Db) {
    const insertDetails = (type: PostType) =>
      db.prepare(`INSERT INTO ${DETAIL_TABLE[type]} (post_id, ${DETAIL_COLUMNS[type].join(', ')}) VALUES (@id, ${DETAIL_COLUMNS[type].map((c) => '@' + c).join(', ')})`);
    const updateDetails = (type: PostType) =>
      db.prepare(`UPDATE ${DETAIL_TABLE[type]} SET ${DETAIL_COLUMNS[type].map((c) => `${c} = @${c}`).join(', ')} WHERE post_id = @id`);
    this.stmts = {
      typeOf: db.prepare<[number], { type: string }>('SELECT type FROM posts WHERE id = ?'),
      idBySlug: db.prepare<[string, string, string], { id: number }>('SELECT id FROM posts WHERE type = ? AND lang = ? AND slug = ?'),
      rows: {
        event: db.prepare<{ ids: string }, Row>('SELECT * FROM posts p JOIN events d ON d.post_id = p.id WHERE p.id IN (SELECT value FROM json_each(@ids))'),
        venue: db.prepare<{ ids: string }, Row>('SELECT * FROM posts p JOIN venues d ON d.post_id = p.id WHERE p.id IN (SELECT value FROM json_each(@ids))'),
        organizer: db.prepare<{ ids: string }, Row>('SELECT * FROM posts p JOIN organizers d ON d.post_id = p.id WHERE p.id IN (SELECT value FROM json_each(@ids))'),
      },
      organizersOf: db.prepare<{ ids: string }, { event_id: number; organizer_id: number }>(
        'SELECT event_id, organizer_id FROM event_organizers WHERE event_id IN (SELECT value FROM json_each(@ids)) ORDER BY event_id, position',
      ),
      termsOf: db.prepare<{ ids: string }, { event_id: number; term_id: number }>(
        'SELECT event_id, term_id FROM event_terms WHERE event_id IN (SELECT value FROM json_each(@ids))',
      ),
      insertPost: db.prepare(`INSERT INTO posts (${POST_COLUMNS.join(', ')}, translation_group) VALUES (${POST_COLUMNS.map((c) => '@' + c).join(', ')}, 0)`),
      updatePost: db.prepare(`UPDATE posts SET ${POST_COLUMNS.map((c) => `${c} = @${c}`).join(', ')} WHERE id = @id`),
      setGroup: db.prepare('UPDATE posts SET translation_group = @group WHERE id = @id'),
      insertDetails: { event: insertDetails('event'), venue: insertDetails('venue'), organizer: insertDetails('organizer') },
      updateDetails: { event: updateDetails('event'), venue: updateDetails('venue'), organizer: updateDetails('organizer') },
      clearOrganizers: db.prepare('DELETE FROM event_organizers WHERE event_id = ?'),
      addOrganizer: db.prepare('INSERT INTO event_organizers (event_id, organizer_id, position) VALUES (?, ?, ?)'),
      clearTerms: db.prepare('DELETE FROM event_terms WHERE event_id = ?'),
      addTerm: db.prepare('INSERT OR IGNORE INTO event_terms (event_id, term_id) VALUES (?, ?)'),
      unlinkVenue: db.prepare('UPDATE events SET venue_id = NULL WHERE venue_id = ?'),
      unlinkOrganizer: db.prepare('DELETE FROM event_organizers WHERE organizer_id = ?'),
      translations: db.prepare<{ type: string; groups: string }, { translation_group: number; lang: string; id: number }>(
        'SELECT translation_group, lang, id FROM posts WHERE type = @type AND translation_group IN (SELECT value FROM json_each(@groups)) ORDER BY id',
      ),
      sameName: db.prepare<{ type: string; lang: string; title: string }, { id: number }>(
        `SELECT id FROM posts WHERE type = @type AND lang = @lang AND status <> 'trash' AND title = @title COLLATE NOCASE ORDER BY id`,
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

  findBySlug<T extends PostType>(type: T, lang: Lang, slug: string): RecordOf<T> | null {
    const id = this.stmts.idBySlug.get(type, lang, slug)?.id;
    return id === undefined ? null : this.findOfType(type, id);
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

  /** Non-trashed records of a type and language with this title (any case), oldest first. */
  sameName(type: PostType, lang: Lang, title: string): number[] {
    return this.stmts.sameName.all({ type, lang, title }).map((r) => r.id);
  }

  /** `{lang: id}` of each translation group asked for. */
  translations(type: PostType, groups: number[]): Map<number, Partial<Record<Lang, number>>> {
    const out = new Map<number, Partial<Record<Lang, number>>>();
    if (groups.length === 0) return out;
    for (const r of this.stmts.translations.all({ type, groups: JSON.stringify([...new Set(groups)]) })) {
      out.set(r.translation_group, { ...(out.get(r.translation_group) ?? {}), [r.lang]: r.id });
    }
    return out;
  }

  /** Inserts a record with its details and links; run inside `transaction`. Returns the new id. */
  insert<T extends PostType>(record: NewRecord<T>): number {
    const id = Number(this.stmts.insertPost.run(baseToRow(record)).lastInsertRowid);
    const group = record.translationOf === null ? id : this.findById(record.translationOf)!.translationGroup;
    this.stmts.setGroup.run({ id, group });
    this.stmts.insertDetails[record.type].run({ id, ...this.detailsRow(record) });
    if (record.type === 'event') this.writeLinks(id, record as unknown as EventRecord);
    return id;
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

  private detailsRow(record: Omit<PostRecord, 'id' | 'translationGroup'>): Row {
    if (record.type === 'event') return eventToRow(record as EventRecord);
    if (record.type === 'venue') return venueToRow(record as VenueRecord);
    return organizerToRow(record as OrganizerRecord);
  }

  private writeLinks(id: number, event: Pick<EventRecord, 'organizerIds' | 'termIds'>): void {
    this.stmts.clearOrganizers.run(id);
    event.organizerIds.forEach((organizer, position) => this.stmts.addOrganizer.run(id, organizer, position));
    this.stmts.clearTerms.run(id);
    for (const term of event.termIds) this.stmts.addTerm.run(id, term);
  }
}
