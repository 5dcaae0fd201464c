import { timingSafeEqual, createHash } from 'node:crypto';
import type { ChangeRights, EventRecord, PostBase, PostStatus, PostType, ProtectedAccess } from '../db/records.js';
import type { Caller } from './context.js';
import { hasCapabilities } from './capabilities.js';
import { blankOf, plainFields } from '../db/fields.js';

/** The capability suffix of each post type (`edit_tribe_events`, …). */
export const CAPABILITY_TYPE: Record<PostType, string> = { event: 'tribe_events', venue: 'tribe_venues', organizer: 'tribe_organizers' };

const can = (caller: Caller | null, ...caps: string[]) => caller !== null && hasCapabilities(caller.role, caps);

/** The status a record has now: a scheduled (`future`) record counts as published from its date on. */
export function effectiveStatus(post: Pick<PostBase, 'status' | 'dateUtc'>, nowUtc: string): PostStatus {
  return post.status === 'future' && post.dateUtc <= nowUtc ? 'publish' : post.status;
}

/**
 * Whether a record of this status may stay undated (WordPress's "date floating" statuses, less `auto-draft`, which
 * Almanac has no records of): `date_utc` shows `0000-00-00 00:00:00` until it is published.
 */
export const mayFloat = (status: PostStatus): boolean => status === 'draft' || status === 'pending';

/**
 * The capabilities behind `mayChange` for one post type: null when the caller may change no record of the type; else
 * whether it may change published (or scheduled) ones, others' ones, and others' private ones.
 */
export function changeRights(verb: 'edit' | 'delete', caller: Caller | null, type: PostType): ChangeRights | null {
  const t = CAPABILITY_TYPE[type];
  if (!caller || !can(caller, `${verb}_${t}`)) return null;
  return {
    userId: caller.id,
    published: can(caller, `${verb}_published_${t}`),
    others: can(caller, `${verb}_others_${t}`),
    othersPrivate: can(caller, `${verb}_private_${t}`), // only others' private records need it
  };
}

/** WordPress's `map_meta_cap` for editing (`verb` = edit) or deleting (`verb` = delete) one record. */
export function mayChange(verb: 'edit' | 'delete', caller: Caller | null, post: Pick<PostBase, 'type' | 'authorId' | 'status' | 'statusBeforeTrash'>): boolean {
  const rights = changeRights(verb, caller, post.type);
  if (!rights) return false;
  const status = post.status === 'trash' ? (post.statusBeforeTrash ?? 'draft') : post.status;
  if ((status === 'publish' || status === 'future') && !rights.published) return false;
  return post.authorId === rights.userId || (rights.others && (status !== 'private' || rights.othersPrivate));
}

/** WordPress's `read_post`: published for everybody; any record for its author; private for `read_private_*`; the rest for who may edit it. */
export function mayRead(caller: Caller | null, post: Pick<PostBase, 'type' | 'authorId' | 'status' | 'statusBeforeTrash' | 'dateUtc'>, nowUtc: string): boolean {
  const status = effectiveStatus(post, nowUtc);
  if (status === 'publish') return true;
  if (!caller) return false;
  if (post.authorId === caller.id) return true; // an author may always read their own records
  if (status === 'private') return can(caller, `read_private_${CAPABILITY_TYPE[post.type]}`);
  return mayChange('edit', caller, post);
}

/** Whether the caller may publish records of this type (else requested statuses are scaled back). */
export function mayPublish(caller: Caller | null, type: PostType): boolean {
  return can(caller, `publish_${CAPABILITY_TYPE[type]}`);
}

/**
 * The status a write stores: the requested one (or `publish` by default) for callers who may publish; `pending`
 * instead of `publish`, `future` or `private` (and `draft` by default) for the others. Then WordPress's rule: a
 * `publish` dated in the future is `future`, a `future` dated in the past is `publish`.
 */
export function resolveStatus(requested: PostStatus | undefined, current: PostStatus | null, caller: Caller | null, type: PostType, dateUtc: string, nowUtc: string): PostStatus {
  let status: PostStatus;
  if (requested === undefined) status = current ?? (mayPublish(caller, type) ? 'publish' : 'draft');
  else if (!mayPublish(caller, type) && (requested === 'publish' || requested === 'future' || requested === 'private')) status = 'pending';
  else status = requested;
  if (status === 'publish' && dateUtc > nowUtc) return 'future';
  if (status === 'future' && dateUtc <= nowUtc) return 'publish';
  return status;
}

/** Whether a password-protected record is unlocked by the password the request carries (constant-time). */
export function unlocks(post: Pick<PostBase, 'password'>, given: string | undefined): boolean {
  if (!post.password) return true;
  if (given === undefined) return false;
  const a = createHash('sha256').update(post.password).digest();
  const b = createHash('sha256').update(given).digest();
  return timingSafeEqual(a, b);
}

/**
 * Whether a caller may open a password-protected record: see and match what it protects. Whoever may edit the record
 * may, and so may a request carrying its password. (Lists still show it blanked to its editors, as WordPress does;
 * `ProtectedAccess` is this rule for the queries of lists.)
 */
export function mayOpen(caller: Caller | null, post: Pick<PostBase, 'type' | 'authorId' | 'status' | 'statusBeforeTrash' | 'password'>, password: string | undefined): boolean {
  return unlocks(post, password) || mayChange('edit', caller, post);
}

/** `mayOpen` for the records of a list query: whose protected fields this caller may match on. */
export function protectedAccess(caller: Caller | null, password: string | undefined): ProtectedAccess {
  return {
    anonymous: caller === null,
    edits: { event: changeRights('edit', caller, 'event'), venue: changeRights('edit', caller, 'venue'), organizer: changeRights('edit', caller, 'organizer') },
    password,
  };
}

/**
 * An event named by the `event` (or `post`) filter of another list: null when the caller may not read it (the
 * filter answers as for an unknown id); else whether its links to venues, organizers and terms are hidden from the
 * caller (protected, and not opened).
 */
export function eventAsFilter(event: EventRecord | null, caller: Caller | null, nowUtc: string, password: string | undefined): { id: number; linksHidden: boolean } | null {
  if (!event || !mayRead(caller, event, nowUtc)) return null;
  return { id: event.id, linksHidden: !mayOpen(caller, event, password) };
}

/**
 * What a password-protected record shows of each field to a caller who has not opened it (behaviour.md §11 as
 * amended by DESIGN §5 #10), by type. Its list entry carries these values (keys it lacks are not added), and no list
 * filter or search matches on these fields for such a caller (PostsRepository), so nothing blanked can be found out.
 */
export const BLANKED: Readonly<Record<PostType, Readonly<Record<string, unknown>>>> = {
  event: {
    description: '', excerpt: '', image: false, all_day: null, cost: '',
    cost_details: { currency_symbol: '', currency_position: '', currency_code: '', values: [] },
    website: '', categories: [], tags: [], venue: [], organizer: [], custom_fields: [], ...plainBlanks('event'),
  },
  venue: { description: '', excerpt: '', image: false, ...plainBlanks('venue') },
  organizer: { description: '', excerpt: '', image: false, ...plainBlanks('organizer') },
};

/** The blank values of a type's plain fields (db/fields.ts): `""` for texts, null for flags, 0 for numbers. */
function plainBlanks(type: PostType): Record<string, unknown> {
  return Object.fromEntries(plainFields(type).map(([key, field]) => [key, blankOf(field)]));
}

/** Whether a protected record hides this field (a wire key) from a caller who has not opened it. */
export const hidesWhenProtected = (type: PostType, field: string): boolean => field in BLANKED[type];
