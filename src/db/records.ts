/**
 * The records and queries of Almanac's data layer, the same for every engine: what repositories return and take.
 * Rows are mapped to these in one function per table in each engine's repositories.
 */
import type { Role } from '../domain/capabilities.js';
import type { Lang } from '../domain/context.js';
import type { PlainDetails } from './fields.js';

export type PostType = 'event' | 'venue' | 'organizer';
export type PostStatus = 'publish' | 'future' | 'draft' | 'pending' | 'private' | 'trash';
/** The statuses Almanac keeps records in (DESIGN §5 #29); WordPress registers others that no record of Almanac has. */
export const POST_STATUSES: readonly PostStatus[] = ['publish', 'future', 'draft', 'pending', 'private', 'trash'];

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
  /**
   * A draft or pending record never given a publication date (WordPress's "floating" date): `date_utc` shows
   * `0000-00-00 00:00:00` and the record is dated when it is published; `dateUtc` holds when it was written.
   */
  dateFloating: boolean;
  modifiedLocal: string;
  modifiedUtc: string;
  lang: Lang;
  translationGroup: number;
  parentId: number;
  imageId: number;
  /** Ids this record had on other sites (imports), after its own. */
  globalIdLineage: string[];
}

/** An event: its plain fields (show_map, featured, …) come from its table in fields.ts. */
export interface EventRecord extends PostBase, PlainDetails<'event'> {
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
  venueId: number;
  organizerIds: number[];
  termIds: number[];
}

/** A venue: every detail (address, city, …, show_map) is a plain field of its table in fields.ts. */
export interface VenueRecord extends PostBase, PlainDetails<'venue'> {
  type: 'venue';
}

/** An organizer: every detail (phone, website, email) is a plain field of its table in fields.ts. */
export interface OrganizerRecord extends PostBase, PlainDetails<'organizer'> {
  type: 'organizer';
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

/**
 * An event named by the `event` (or `post`) filter of another list (postRules.eventAsFilter): its id, and whether its
 * links (venue, organizers, terms) are hidden from the caller (protected, not opened), in which case nothing matches.
 */
export interface EventFilter {
  id: number;
  linksHidden: boolean;
}

/** Filters of GET /events, already resolved to ids and site-local bounds. */
export interface EventListQuery {
  lang: Lang;
  nowUtc: string;
  /** Effective statuses asked for (`publish` includes scheduled records whose date has come). */
  statuses: PostStatus[];
  viewer: ListViewer;
  /** Whose protected events the filters and search may match on what they protect. */
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
  /** Whose protected records (and events, for `has_events` and `only_with_upcoming`) may match on what they protect. */
  access: ProtectedAccess;
  words?: string[];
  /** Only records linked to this event; none when its links are hidden from the caller. */
  event?: EventFilter;
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

export type RecordOf<T extends PostType> = Extract<PostRecord, { type: T }>;
/** A record of a translation group, with what `mayRead` needs. */
export type TranslationMember = Pick<PostBase, 'id' | 'type' | 'lang' | 'authorId' | 'status' | 'statusBeforeTrash' | 'dateUtc'>;
/** A record about to be created: everything but the id and translation group. */
export type NewRecord<T extends PostType> = Omit<RecordOf<T>, 'id' | 'translationGroup'> & { translationOf: number | null };


export type Taxonomy = 'category' | 'tag';

export interface TermRecord {
  id: number;
  taxonomy: Taxonomy;
  name: string;
  slug: string;
  description: string;
  /** 0 for none, as WordPress reports it. */
  parentId: number;
  lang: Lang;
  translationGroup: number;
  /** Published events without a password using the term. */
  count: number;
}

export interface TermListQuery {
  taxonomy: Taxonomy;
  lang: Lang;
  search?: string;
  include?: number[];
  exclude?: number[];
  /** 0: top-level only. */
  parentId?: number;
  /** Only terms of this event; none when its links are hidden from the caller. */
  event?: EventFilter;
  /** Sanitised as WordPress sanitises slugs (`slugify`) before it is compared. */
  slug?: string;
  hideEmpty: boolean;
  orderBy: 'name' | 'id' | 'slug' | 'count' | 'description' | 'include' | 'none';
  descending: boolean;
  limit: number;
  offset: number;
}

export interface TermInput {
  taxonomy: Taxonomy;
  name: string;
  slug: string;
  description: string;
  parentId: number;
  lang: Lang;
  /** Join the translation group of this term; null: a group of its own. */
  translationOf: number | null;
}


export interface User {
  id: number;
  login: string;
  email: string | null;
  displayName: string;
  role: Role;
  credentialVersion: number;
  registeredUtc: string;
}

export interface AppPassword {
  uuid: string;
  userId: number;
  name: string;
  scheme: 'sha256' | 'scrypt';
  salt: string;
  hash: string;
  isBootstrap: boolean;
  createdUtc: string;
  lastUsedUtc: string | null;
  lastIp: string | null;
}


/** A media record: an image known by its URL (Almanac keeps no files; sizes are known only when given). */
export interface MediaRecord {
  id: number;
  url: string;
  extension: string;
  width: number | null;
  height: number | null;
  filesize: number | null;
  sizes: Record<string, unknown> | null;
}

