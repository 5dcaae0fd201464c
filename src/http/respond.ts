import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Middleware } from 'koa';
import type { Config } from '../config.js';
import { storageFault, type StorageFault } from '../db/faults.js';
import { Episode, type Logger } from '../log.js';
import { replayKey, type CachedAnswer } from './cache.js';
import { entityTag, notModified } from './conditional.js';
import { jsonBytes } from './json.js';
import { ApiError, DatabaseBusy, DatabaseUnavailable, StorageFull } from '../errors.js';
import type { RoutedRequest } from './route.js';
import type { RequestState } from '../domain/context.js';

const JSON_TYPE = 'application/json; charset=UTF-8';
/** The body of a HEAD given as a method override (see `respond`). */
const NO_BYTES = Buffer.alloc(0);

/**
 * WordPress's headers, with CORS lists that go beyond WordPress's own: a page on another site can read the list totals,
 * the tags and dates it revalidates with, the address of what it created, how long a lock-out lasts and the request id,
 * and may send the conditional headers (a browser sends only what the preflight allows).
 */
const COMMON_HEADERS = {
  'X-Robots-Tag': 'noindex',
  'X-Content-Type-Options': 'nosniff',
  'Access-Control-Expose-Headers': 'X-WP-Total, X-WP-TotalPages, Link, X-TEC-Total, X-TEC-TotalPages, ETag, Last-Modified, Location, Retry-After, X-Request-Id',
  'Access-Control-Allow-Headers': 'Authorization, X-WP-Nonce, Content-Disposition, Content-MD5, Content-Type, If-Match, If-None-Match, If-Modified-Since, X-HTTP-Method-Override',
};

/** What a handler or middleware leaves for the response stage. */
export interface Outcome {
  status: number;
  body: unknown;
  headers: Record<string, string>;
  /** The serialised answer (UTF-8), when it comes from the response cache. */
  bytes?: Buffer;
}

/** The answer to a storage fault: nothing was changed, and the same request may succeed later. */
const FAULT_ANSWERS: Record<Fault, () => ApiError> = {
  full: () => new ApiError(507, 'rest_insufficient_storage', 'The server has no storage left for this change, so nothing was changed. Try again later.'),
  'read-only': () => new ApiError(503, 'rest_storage_read_only', 'The database cannot be written at the moment, so nothing was changed. Try again later.', {}, { 'Retry-After': '60' }),
  busy: () => new ApiError(503, 'rest_database_busy', 'The database is busy with other writes, so nothing was changed. Try again.', {}, { 'Retry-After': '1' }),
  damaged: () => new ApiError(503, 'rest_database_damaged', 'The part of the database this request needs is damaged, so nothing was changed. It answers again once an operator restores it from a backup.'),
  io: () => new ApiError(503, 'rest_storage_error', 'The storage under the database reports an input/output error, or the database file cannot be opened, so this request could not be answered. Try again later.', {}, { 'Retry-After': '60' }),
  overloaded: () => new ApiError(503, 'rest_database_busy', 'The database is busy answering other requests: none of its connections came free in time. Try again in a moment.', {}, { 'Retry-After': '1' }),
  unavailable: () => new ApiError(503, 'rest_database_unavailable', 'The database cannot be reached at the moment (restarting, or the network to it is down). Try again in a moment.', {}, { 'Retry-After': '2' }),
};

/**
 * A fault of the storage or of the database server, which no request can mend and a retry later may: SQLite reports
 * its own (faults.ts); the PostgreSQL engine raises StorageFull, DatabaseUnavailable and DatabaseBusy.
 */
type Fault = StorageFault | 'overloaded' | 'unavailable';

function faultOf(err: unknown): Fault | null {
  if (err instanceof StorageFull) return 'full';
  if (err instanceof DatabaseBusy) return 'overloaded';
  if (err instanceof DatabaseUnavailable) return 'unavailable';
  return storageFault(err);
}

/** Storage and database faults met by requests, each run of them logged once when it starts and once when it ends. */
class StorageFaults {
  private readonly episodes: Record<Fault, Episode>;

  constructor(log: Logger) {
    this.episodes = {
      full: new Episode(log, 'error', 'storage full: writes are refused with 507 until space frees', 'storage has room again'),
      'read-only': new Episode(log, 'error', 'the database cannot be written: writes are refused with 503', 'the database can be written again'),
      busy: new Episode(log, 'warn', 'the database stayed locked by another process: writes are refused with 503', 'writes go through again'),
      damaged: new Episode(log, 'error', 'the database is damaged: requests that need its damaged part are answered 503 rest_database_damaged until it is restored from a backup (almanac restore)', 'the damaged part of the database answers again'),
      io: new Episode(log, 'error', 'the storage under the database reports input/output errors: requests that meet them are answered 503', 'the storage answers again'),
      overloaded: new Episode(log, 'warn', 'every database connection stayed busy: requests that waited too long for one are answered 503', 'database connections come free again'),
      unavailable: new Episode(log, 'error', 'the database cannot be reached: requests that need it are answered 503', 'the database answers again'),
    };
  }

  answer(fault: Fault, requestId: string, err: Error): ApiError {
    this.episodes[fault].fail({ requestId, error: err.message });
    return FAULT_ANSWERS[fault]();
  }

  /**
   * A request succeeded: the database answers again; after a write, every run of faults has ended but damage's, which
   * lasts as long as the process: a request that succeeds may just not have needed the damaged part.
   */
  recovered(wrote: boolean): void {
    if (!wrote) {
      this.episodes.overloaded.end();
      return this.episodes.unavailable.end();
    }
    for (const [fault, episode] of Object.entries(this.episodes)) if (fault !== 'damaged') episode.end();
  }
}

/**
 * Any thrown value as a WordPress error. A storage fault becomes a clear 507 or 503; any other unknown error is logged
 * and becomes a 500 that leaks nothing.
 */
function toApiError(err: unknown, log: Logger, requestId: string, storage: StorageFaults): ApiError {
  if (err instanceof ApiError) return err;
  const fault = faultOf(err);
  if (fault) return storage.answer(fault, requestId, err as Error);
  log.error('unexpected error', { requestId, error: err instanceof Error ? err.stack ?? err.message : String(err) });
  return new ApiError(500, 'rest_internal_error', 'The server could not answer this request.');
}

let sequence = 0;
/** A request's id: the worker's process id and a running count (both base 36), unique while the logs are read. */
export function nextRequestId(): string {
  return `${process.pid.toString(36)}-${(++sequence).toString(36)}`;
}

/**
 * Whether a request is a GET whose answer depends on nothing but its URL, caller and site (the cache key), and on the
 * request headers the response stage reads: `Origin` (CORS) and `If-None-Match` / `If-Modified-Since` (304). A method
 * override makes it another method. Its whole answer can be replayed from the cache (see front.ts).
 */
export function isReplayableGet(method: string | undefined, headers: IncomingHttpHeaders): boolean {
  return method === 'GET' && headers['x-http-method-override'] === undefined;
}

/** The headers set on a response so far, as alternating names (as set) and values. */
function headerLines(res: ServerResponse): string[] {
  const lines: string[] = [];
  // Node has it on every outgoing message; its types declare it on ClientRequest only
  for (const name of (res as ServerResponse & { getRawHeaderNames(): string[] }).getRawHeaderNames()) {
    const value = res.getHeader(name);
    if (Array.isArray(value)) for (const v of value) lines.push(name, v);
    else if (value !== undefined) lines.push(name, String(value));
  }
  return lines;
}

/**
 * The outermost middleware: runs the rest, turns any error into WordPress's error shape, applies `_fields` and
 * `_envelope`, adds the headers every WordPress REST answer carries, and writes the JSON.
 */
export function respond(config: Config, log: Logger): Middleware {
  const storage = new StorageFaults(log);
  return async (ctx, next) => {
    const started = Date.now();
    const requestId = nextRequestId();
    ctx.state.requestId = requestId;
    let outcome: Outcome;
    try {
      await next();
      const cached = ctx.state.cached as CachedAnswer | undefined;
      outcome = cached ? { status: cached.status, body: undefined, headers: cached.headers, bytes: cached.bytes } : (ctx.state.outcome as Outcome);
      if (!outcome) throw new Error('no handler produced an answer');
    } catch (err) {
      const apiError = toApiError(err, log, requestId, storage);
      outcome = { status: apiError.status, body: apiError.toBody(), headers: { ...apiError.headers } };
    }
    const routed = ctx.state.routed as RoutedRequest | undefined;
    const authenticated = Boolean(ctx.state.user);
    // the method as the request set it (`_method`, `X-HTTP-Method-Override`)
    const method = routed?.method ?? ctx.method;
    const reading = method === 'GET' || method === 'HEAD';
    if (method !== 'OPTIONS' && outcome.status < 400) storage.recovered(!reading);

    ctx.set(COMMON_HEADERS);
    const cachedPrefix = (ctx.state.cached as CachedAnswer | undefined)?.linkPrefix;
    const linkPrefix = cachedPrefix ?? (ctx.state.request as RequestState | undefined)?.linkPrefix ?? routed?.pathPrefix ?? '';
    if (routed) ctx.set('Link', `<${routed.site}${linkPrefix}/wp-json/>; rel="https://api.w.org/"`);
    // a record's answer says what this caller may do with that record; any other, what its role allows on the route
    const allow = outcome.headers.Allow ?? (routed?.allow ? routed.allow(ctx.state.user?.role ?? null).join(', ') : null);
    if (allow !== null) ctx.set('Allow', allow);
    if (authenticated) {
      ctx.set('Expires', 'Wed, 11 Jan 1984 05:00:00 GMT');
      ctx.set('Cache-Control', 'no-cache, must-revalidate, max-age=0, no-store, private');
    } else if (reading) {
      ctx.vary('Origin');
    }
    const origin = ctx.get('Origin');
    if (origin && (config.corsOrigins === '*' || config.corsOrigins.includes(origin))) {
      ctx.set('Access-Control-Allow-Origin', origin);
      ctx.set('Access-Control-Allow-Methods', 'OPTIONS, GET, POST, PUT, PATCH, DELETE');
      ctx.set('Access-Control-Allow-Credentials', 'true');
      ctx.vary('Origin');
    }

    let { status, body } = outcome;
    // sent as bytes: encoded once (and kept encoded in the cache), never measured or flattened again on the way out
    let bytes = outcome.bytes;
    // the cached answer this request was served from or has stored
    let kept = ctx.state.cached as CachedAnswer | undefined;
    const contentType = outcome.headers['Content-Type'] ?? JSON_TYPE;
    // a cached answer's headers are final (its ETag included); a fresh one gets its ETag added to a copy
    let headers = outcome.headers;
    if (bytes === undefined) {
      headers = Object.assign({}, outcome.headers); // not a spread: keys added to a spread's copy are slow on Node 20
      if (typeof body === 'string' && contentType !== JSON_TYPE) {
        bytes = Buffer.from(body); // calendars, the documentation page: served as the handler wrote them
      } else {
        if (routed?.fields && status < 300) body = keepFields(body, routed.fields);
        if (routed?.envelope) {
          // WordPress adds Allow to the answer's headers before it wraps them
          body = { body, status, headers: allow === null ? outcome.headers : { ...outcome.headers, Allow: allow } };
          status = 200;
        }
        bytes = await jsonBytes(body);
      }
      if (status === 200 && reading && bytes) headers.ETag ??= entityTag(bytes);
      if (status < 300 && bytes) kept = (ctx.state.store as ((a: CachedAnswer) => CachedAnswer | undefined) | undefined)?.({ status, bytes, headers: routed?.envelope ? {} : headers, linkPrefix });
    }
    if (reading && status === 200) {
      // the tag of the exact bytes; an enveloped answer has its own
      const tag = headers.ETag ?? entityTag(bytes ?? '');
      ctx.set('ETag', tag);
      if (notModified(ctx.get('If-None-Match'), ctx.get('If-Modified-Since'), tag, headers['Last-Modified'])) {
        status = 304;
        bytes = undefined;
      }
      if (!authenticated) ctx.set('Cache-Control', routed?.query.password !== undefined ? 'private, max-age=0, must-revalidate' : 'public, max-age=0, must-revalidate');
    }
    if (!routed?.envelope || outcome.bytes !== undefined) ctx.set(headers);
    ctx.status = status;
    if (status === 304) {
      ctx.remove('Content-Type');
    } else {
      ctx.set('Content-Type', contentType);
      // a HEAD given as an override answers without a body, and with a length of 0: the client reads the answer to
      // the method it sent
      ctx.body = method === 'HEAD' && ctx.method !== 'HEAD' ? NO_BYTES : bytes;
    }
    if (kept && (status === kept.status || status === 304) && routed?.method === 'GET' && isReplayableGet(ctx.method, ctx.headers)) {
      const keepReplay = ctx.state.keepReplay as ((answer: CachedAnswer, variant: string, lines: () => string[]) => void) | undefined;
      keepReplay?.(kept, replayKey(status, origin), () => headerLines(ctx.res));
    }
    ctx.set('X-Request-Id', requestId);
    log.debug('request', { requestId, method: ctx.method, path: ctx.path, status, user: ctx.state.user?.login, ms: Date.now() - started, cached: ctx.state.cached !== undefined || undefined });
  };
}

/**
 * WordPress's `_fields`: keep only the listed keys (`a.b` reaches into nested objects); lists are filtered per item.
 * The list is read once into a tree of keys, as WordPress does, so the cost grows with the answer and the list added,
 * not multiplied: checked key by key against the whole list, 3,000 nested fields on a page of 50 events took 160 ms.
 */
export function keepFields(body: unknown, fields: string[]): unknown {
  return keepKeys(body, fieldTree(fields));
}

/** Each key to keep: whole (`true`), or the keys to keep inside it. */
type FieldTree = Map<string, FieldTree | true>;

function fieldTree(fields: string[]): FieldTree {
  const tree: FieldTree = new Map();
  fields: for (const field of fields) {
    const parts = field.split('.');
    const last = parts.pop()!;
    let node = tree;
    for (const part of parts) {
      const next = node.get(part) ?? new Map<string, FieldTree | true>();
      if (next === true) continue fields; // kept whole already: `a` before `a.b`
      node.set(part, next);
      node = next;
    }
    node.set(last, true); // `a` after `a.b` keeps it whole
  }
  return tree;
}

function keepKeys(body: unknown, tree: FieldTree): unknown {
  if (Array.isArray(body)) return body.map((item) => keepKeys(item, tree));
  if (typeof body !== 'object' || body === null) return body;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    const kept = tree.get(key);
    if (kept === true) out[key] = value;
    else if (kept !== undefined) out[key] = keepKeys(value, kept);
  }
  return out;
}
