import { hash } from 'node:crypto';
import { ApiError } from '../errors.js';

/**
 * Conditional requests (RFC 9110 §13): strong entity tags over the exact bytes of an answer, `If-None-Match` /
 * `If-Modified-Since` for reads, `If-Match` for writes.
 */

/** The strong entity tag of a body: a hash of its exact bytes, so two answers share a tag only when identical. */
export function entityTag(text: string | Buffer): string {
  return `"${hash('sha256', text, 'base64url').slice(0, 27)}"`; // one call, no Hash object (every answer computed)
}

/**
 * The entity tags a conditional header lists (`*` as itself), each with its weakness. The pattern starts at the tag:
 * with the white space before it, a failing match retried each position of a run of spaces (16 KB of them: 0.5 s).
 */
function listedTags(header: string): { tag: string; weak: boolean }[] {
  const tags: { tag: string; weak: boolean }[] = [];
  for (const m of header.matchAll(/(W\/)?("[^"]*"|\*)\s*(?:,|$)/g)) tags.push({ tag: m[2]!, weak: Boolean(m[1]) });
  return tags;
}

/** `If-None-Match` uses the weak comparison: the caller's copy is current when any listed tag names this answer. */
function noneMatchHits(header: string, tag: string): boolean {
  return listedTags(header).some((t) => t.tag === '*' || t.tag === tag);
}

/** `If-Modified-Since`: the record has not changed since the date the caller holds (second-grained HTTP dates). */
function notModifiedSince(header: string, lastModified: string): boolean {
  const since = Date.parse(header);
  const modified = Date.parse(lastModified);
  return Number.isFinite(since) && Number.isFinite(modified) && modified <= since;
}

/**
 * Whether a read of an answer tagged `tag` gets 304: `If-None-Match` decides when sent, else `If-Modified-Since`
 * against the answer's `Last-Modified` (absent headers are empty strings).
 */
export function notModified(ifNoneMatch: string, ifModifiedSince: string, tag: string, lastModified: string | undefined): boolean {
  if (ifNoneMatch) return noneMatchHits(ifNoneMatch, tag);
  return Boolean(ifModifiedSince && lastModified && notModifiedSince(ifModifiedSince, lastModified));
}

/** A `Y-m-d H:i:s` UTC time as an HTTP date (`Mon, 23 Nov 2026 10:15:00 GMT`). */
export function httpDate(utcWire: string): string {
  return new Date(utcWire.replace(' ', 'T') + 'Z').toUTCString();
}

/**
 * Optimistic concurrency: `If-Match` (strong comparison) against the tag of what the same caller's GET of the record
 * would answer now (`null` when that GET would fail). No header: no condition. Throws 412 when nothing matches.
 */
export function requireMatch(header: string | null, current: () => string | null): void {
  if (header === null) return;
  const tags = listedTags(header);
  const tag = current();
  const hit = tag !== null && tags.some((t) => t.tag === '*' || (!t.weak && t.tag === tag));
  if (!hit) throw new ApiError(412, 'rest_precondition_failed', 'The record has changed since it was read: If-Match names none of its current versions.');
}
