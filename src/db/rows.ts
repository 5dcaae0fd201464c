/**
 * Rows of posts and their detail tables mapped to records and back, in one place for both engines: the same column
 * names and values (times as `YYYY-MM-DD HH:MM:SS` text, lists as JSON text, flags as 0/1 or booleans).
 */
import type { Lang } from '../domain/context.js';
import { collationKey, foldForSearch } from '../domain/text.js';
import type { Role } from '../domain/capabilities.js';
import { plainFields } from './fields.js';
import type { AppPassword, EventRecord, MediaRecord, OrganizerRecord, PostBase, PostRecord, PostStatus, PostType, TranslationMember, User, VenueRecord } from './records.js';

export type Row = Record<string, unknown>;
/** A flag as either engine returns it (SQLite: 0/1, PostgreSQL: a boolean). */
const bool = (v: unknown) => v === 1 || v === true;
/** A flag as both engines accept it (PostgreSQL reads `1`/`0` as booleans). */
const bit = (v: boolean) => (v ? 1 : 0);

/**
 * The columns of `posts` a record is read from (`baseFromRow`), as `p.…`: not the search text, a folded copy of an
 * event's texts that a read has no use for (it doubled what reading a page of large descriptions moved).
 */
export const POST_READ_COLUMNS = ['id', 'type', 'author_id', 'status', 'status_before_trash', 'slug', 'title', 'content', 'excerpt', 'password', 'date_local', 'date_utc', 'date_floating', 'modified_local', 'modified_utc', 'lang', 'translation_group', 'parent_id', 'image_id', 'global_id_lineage']
  .map((column) => `p.${column}`).join(', ');

export function baseFromRow(r: Row): PostBase {
  return {
    id: r.id as number, type: r.type as PostType, authorId: (r.author_id as number | null) ?? 0, status: r.status as PostStatus,
    statusBeforeTrash: (r.status_before_trash as PostStatus | null) ?? null, slug: r.slug as string, title: r.title as string,
    content: r.content as string, excerpt: r.excerpt as string, password: r.password as string,
    dateLocal: r.date_local as string, dateUtc: r.date_utc as string, dateFloating: bool(r.date_floating), modifiedLocal: r.modified_local as string, modifiedUtc: r.modified_utc as string,
    lang: r.lang as Lang, translationGroup: r.translation_group as number, parentId: (r.parent_id as number | null) ?? 0,
    imageId: (r.image_id as number | null) ?? 0, globalIdLineage: JSON.parse(r.global_id_lineage as string) as string[],
  };
}

/**
 * The month an event starts in, counted from year 0 (year × 12 + month − 1): what the dated search index (migration
 * 0018) files an event's text under, so that a search in a window reads the months of the window, not the calendar.
 */
export const startMonth = (startLocal: string) => Number(startLocal.slice(0, 4)) * 12 + Number(startLocal.slice(5, 7)) - 1;

export function baseToRow(p: Omit<PostRecord, 'id' | 'translationGroup'>): Row {
  return {
    type: p.type, author_id: p.authorId || null, status: p.status, status_before_trash: p.statusBeforeTrash, slug: p.slug, title: p.title,
    content: p.content, excerpt: p.excerpt, password: p.password, date_local: p.dateLocal, date_utc: p.dateUtc, date_floating: bit(p.dateFloating),
    modified_local: p.modifiedLocal, modified_utc: p.modifiedUtc, lang: p.lang, parent_id: p.parentId || null,
    image_id: p.imageId || null, global_id_lineage: JSON.stringify(p.globalIdLineage),
    // what event search reads (migration 0005): the three searched fields, folded
    search_text: p.type === 'event' ? foldForSearch(`${p.title}\u001f${p.excerpt}\u001f${p.content}`) : '',
    // what duplicate venues and organizers are found by (migration 0010): computed here, the same on both engines
    title_key: p.type === 'event' ? null : collationKey(p.title),
    // the month the dated search index files the search text under (migration 0018)
    start_month: p.type === 'event' ? startMonth((p as EventRecord).startLocal) : null,
  };
}

/** The plain fields of a detail row, as record properties (fields.ts), set on `record`. */
function plainFromRow<R extends object>(type: PostType, r: Row, record: R): R {
  const out = record as Record<string, unknown>;
  for (const [, field] of plainFields(type)) {
    const value = r[field.column];
    out[field.key] = field.kind === 'flag' ? bool(value) : field.kind === 'number' ? ((value as number | null) ?? null) : value;
  }
  return record;
}

/** The plain fields of a record as detail columns, set on `row`. */
function plainToRow(type: PostType, record: object, row: Row): Row {
  for (const [, field] of plainFields(type)) {
    const value = (record as Record<string, unknown>)[field.key];
    row[field.column] = field.kind === 'flag' ? bit(value as boolean) : value;
  }
  return row;
}

export function eventFromRow(r: Row, organizerIds: number[], termIds: number[]): EventRecord {
  // Object.assign onto the fresh base, not a spread into a literal: V8 builds spread-then-literal objects ~40× slower
  return plainFromRow('event', r, Object.assign(baseFromRow(r), {
    type: 'event' as const, startLocal: r.start_local as string, endLocal: r.end_local as string, startUtc: r.start_utc as string,
    endUtc: r.end_utc as string, timezone: r.timezone as string, allDay: bool(r.all_day), costs: JSON.parse(r.costs as string) as string[],
    currencySymbol: r.currency_symbol as string, currencyPosition: r.currency_position as EventRecord['currencyPosition'],
    currencyCode: r.currency_code as string, website: (r.website as string | null) ?? null, venueId: (r.venue_id as number | null) ?? 0, organizerIds, termIds,
  }) as EventRecord);
}

export function eventToRow(e: Omit<EventRecord, 'id' | 'translationGroup'>): Row {
  return plainToRow('event', e, {
    start_local: e.startLocal, end_local: e.endLocal, start_utc: e.startUtc, end_utc: e.endUtc, timezone: e.timezone, all_day: bit(e.allDay),
    costs: JSON.stringify(e.costs), currency_symbol: e.currencySymbol, currency_position: e.currencyPosition, currency_code: e.currencyCode,
    website: e.website, venue_id: e.venueId || null,
    // copies of post columns for the listing index (migration 0002)
    lang: e.lang, status: e.status, date_utc: e.dateUtc, author_id: e.authorId || null,
    // whether the event is password-protected, for the listing indexes and the term counts (migration 0011)
    protected: bit(e.password !== ''),
  });
}

export function venueFromRow(r: Row): VenueRecord {
  return plainFromRow('venue', r, Object.assign(baseFromRow(r), { type: 'venue' as const }) as VenueRecord);
}

export function organizerFromRow(r: Row): OrganizerRecord {
  return plainFromRow('organizer', r, Object.assign(baseFromRow(r), { type: 'organizer' as const }) as OrganizerRecord);
}

export const DETAIL_TABLE: Record<PostType, string> = { event: 'events', venue: 'venues', organizer: 'organizers' };
export const POST_COLUMNS = ['type', 'author_id', 'status', 'status_before_trash', 'slug', 'title', 'content', 'excerpt', 'password', 'date_local', 'date_utc', 'date_floating', 'modified_local', 'modified_utc', 'lang', 'parent_id', 'image_id', 'global_id_lineage', 'search_text', 'title_key', 'start_month'];
/** The columns of each detail table that a write sets: the plain fields' (fields.ts), after the events' own. */
export const DETAIL_COLUMNS: Record<PostType, string[]> = {
  event: ['start_local', 'end_local', 'start_utc', 'end_utc', 'timezone', 'all_day', 'costs', 'currency_symbol', 'currency_position', 'currency_code', 'website', 'venue_id', 'lang', 'status', 'date_utc', 'author_id', 'protected', ...plainFields('event').map(([, f]) => f.column)],
  venue: plainFields('venue').map(([, f]) => f.column),
  organizer: plainFields('organizer').map(([, f]) => f.column),
};

/** The detail row of a record (events, venues or organizers). */
export function detailsRow(record: Omit<PostRecord, 'id' | 'translationGroup'>): Row {
  return record.type === 'event' ? eventToRow(record as EventRecord) : plainToRow(record.type, record, {});
}

/** A post of a translation group, as `translationMembers` reads it. */
export interface TranslationRow { translation_group: number; lang: string; id: number; author_id: number | null; status: string; status_before_trash: string | null; date_utc: string }

/** Translation rows (in id order) as the members of each group. */
export function groupMembers(type: PostType, rows: TranslationRow[]): Map<number, TranslationMember[]> {
  const out = new Map<number, TranslationMember[]>();
  for (const r of rows) {
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

/** `{lang: id}` of each group's members. */
export function langsOfMembers(groups: Map<number, TranslationMember[]>): Map<number, Partial<Record<Lang, number>>> {
  const out = new Map<number, Partial<Record<Lang, number>>>();
  for (const [group, members] of groups) {
    const entry: Partial<Record<Lang, number>> = {};
    for (const member of members) entry[member.lang] = member.id;
    out.set(group, entry);
  }
  return out;
}

export interface UserRow { id: number; login: string; email: string | null; display_name: string; role: string; credential_version: number; registered_utc: string }
export interface PasswordRow { uuid: string; user_id: number; name: string; scheme: string; salt: string; hash: string; is_bootstrap: number | boolean; created_utc: string; last_used_utc: string | null; last_ip: string | null }

export const toUser = (r: UserRow): User => ({
  id: r.id, login: r.login, email: r.email, displayName: r.display_name, role: r.role as Role,
  credentialVersion: r.credential_version, registeredUtc: r.registered_utc,
});
export const toPassword = (r: PasswordRow): AppPassword => ({
  uuid: r.uuid, userId: r.user_id, name: r.name, scheme: r.scheme as AppPassword['scheme'], salt: r.salt, hash: r.hash,
  isBootstrap: bool(r.is_bootstrap), createdUtc: r.created_utc, lastUsedUtc: r.last_used_utc, lastIp: r.last_ip,
});

export interface MediaRow { id: number; url: string; extension: string; width: number | null; height: number | null; filesize: number | null; sizes: string | null }
export const toMedia = (r: MediaRow): MediaRecord => ({ ...r, sizes: r.sizes ? (JSON.parse(r.sizes) as Record<string, unknown>) : null });
