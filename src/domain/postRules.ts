import { timingSafeEqual, createHash } from 'node:crypto';
import type { PostBase, PostStatus, PostType } from '../db/records.js';
import type { Caller } from './context.js';
import { hasCapabilities } from './capabilities.js';

/** The capability suffix of each post type (`edit_tribe_events`, …). */
export const CAPABILITY_TYPE: Record<PostType, string> = { event: 'tribe_events', venue: 'tribe_venues', organizer: 'tribe_organizers' };

const can = (caller: Caller | null, ...caps: string[]) => caller !== null && hasCapabilities(caller.role, caps);

/** The status a record has now: a scheduled (`future`) record counts as published from its date on. */
export function effectiveStatus(post: Pick<PostBase, 'status' | 'dateUtc'>, nowUtc: string): PostStatus {
  return post.status === 'future' && post.dateUtc <= nowUtc ? 'publish' : post.status;
}

/** WordPress's `map_meta_cap` for editing (`verb` = edit) or deleting (`verb` = delete) one record. */
export function mayChange(verb: 'edit' | 'delete', caller: Caller | null, post: Pick<PostBase, 'type' | 'authorId' | 'status' | 'statusBeforeTrash'>): boolean {
  if (!caller) return false;
  const t = CAPABILITY_TYPE[post.type];
  const status = post.status === 'trash' ? (post.statusBeforeTrash ?? 'draft') : post.status;
  const caps = [`${verb}_${t}`];
  if (status === 'publish' || status === 'future') caps.push(`${verb}_published_${t}`);
  if (post.authorId !== caller.id) {
    caps.push(`${verb}_others_${t}`);
    if (status === 'private') caps.push(`${verb}_private_${t}`); // only others' private records need it
  }
  return can(caller, ...caps);
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
