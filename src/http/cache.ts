import type { Middleware } from 'koa';
import type { Db } from '../db/connection.js';
import { changesOf, generationOf } from '../db/generation.js';
import type { RoutedRequest } from './route.js';

/**
 * A cache of serialised GET answers that is exactly right, never merely fresh enough:
 * - every entry belongs to one database generation: `PRAGMA data_version` (changes when another connection or
 *   process commits) and `total_changes()` (this connection's writes, triggers included). Any write anywhere makes
 *   every entry unreachable;
 * - list answers also belong to the current second: their time-dependent parts (default window, relative dates,
 *   "upcoming", scheduled records falling due) are all computed at one-second resolution;
 * - other answers stay valid until the next scheduled record falls due (its effective status changes then);
 * - the key holds the caller (user and role), the site address and the full URL (language, password, `_fields`).
 * The health check is never cached. Entries are bounded in number and bytes, oldest out first.
 */
export interface CachedAnswer {
  status: number;
  /** The serialised body, UTF-8. */
  bytes: Buffer;
  headers: Record<string, string>;
  /** The language prefix of the answer's links (for the Link header), as the request resolved it. */
  linkPrefix: string;
}

const MAX_ENTRIES = 20_000;

/** `maxBytes`: the most serialised bytes kept (ALMANAC_CACHE_MB); 0 keeps nothing. */
export function responseCache(db: Db, maxBytes = 16 * 1024 * 1024): Middleware {
  if (maxBytes === 0) return (_ctx, next) => next();
  const maxEntry = Math.min(1024 * 1024, maxBytes / 4); // a page of 50 events fits; no one answer crowds out the rest
  const generation = generationOf(db);
  const ownChanges = changesOf(db);
  // through the partial indexes of scheduled events and of venue and organizer posts, never a scan of every post
  const nextDueOf = db.prepare<{ now: string }, { due: string | null }>(`SELECT MIN(due) AS due FROM (
    SELECT MIN(date_utc) AS due FROM events WHERE status = 'future' AND date_utc > @now
    UNION ALL
    SELECT MIN(date_utc) FROM posts WHERE type <> 'event' AND status = 'future' AND date_utc > @now)`);
  const entries = new Map<string, CachedAnswer>();
  let bytes = 0;
  let current = '';
  let nextDue: string | null = null;

  let second = 0;
  let secondText = '';
  const nowWire = () => {
    const s = Math.floor(Date.now() / 1000);
    if (s !== second) secondText = new Date((second = s) * 1000).toISOString().slice(0, 19).replace('T', ' ');
    return secondText;
  };
  return async (ctx, next) => {
    const routed = ctx.state.routed as RoutedRequest;
    const operation = routed.operation;
    if ((routed.method !== 'GET' && routed.method !== 'HEAD') || !operation || operation.operationId === 'getHealth') return next();

    // authentication may have read data_version for this request already (see auth.ts): one read lock, not two
    const version = (ctx.state.dataVersion as number | undefined) ?? generation().version;
    const seen = `${version}:${ownChanges()}`;
    const now = nowWire();
    if (seen !== current || (nextDue !== null && now >= nextDue)) {
      entries.clear();
      bytes = 0;
      current = seen;
      nextDue = nextDueOf.get({ now })?.due ?? null;
    }
    const list = operation.operationId.startsWith('list');
    const user = ctx.state.user as { id: number; role: string } | null;
    const key = `${list ? now : ''}|${user ? `${user.id}:${user.role}` : '-'}|${routed.site}|${ctx.url}`;
    const hit = entries.get(key);
    if (hit) {
      ctx.state.cached = hit;
      return;
    }
    await next();
    // the response stage hands the serialised answer back for storing (2xx only)
    ctx.state.store = (answer: CachedAnswer) => {
      if (answer.bytes.length > maxEntry) return;
      // a small Buffer is a slice of a shared pool: keep a copy of its own, so an entry holds only its bytes
      if (answer.bytes.buffer.byteLength !== answer.bytes.length) {
        const own = Buffer.allocUnsafeSlow(answer.bytes.length);
        answer.bytes.copy(own);
        answer = { ...answer, bytes: own };
      }
      entries.set(key, answer);
      bytes += answer.bytes.length;
      for (const [oldest, value] of entries) {
        if (entries.size <= MAX_ENTRIES && bytes <= maxBytes) break;
        entries.delete(oldest);
        bytes -= value.bytes.length;
      }
    };
  };
}
