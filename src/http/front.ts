import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../config.js';
import type { Engine } from '../db/engine.js';
import type { Logger } from '../log.js';
import { SettledCallers } from './auth.js';
import { cacheKey, replayKey, type CachedAnswer, type ResponseCache } from './cache.js';
import { entityTag, notModified } from './conditional.js';
import { clientAddress } from './origin.js';
import { isReplayableGet, nextRequestId } from './respond.js';
import { generationFor } from './requestGeneration.js';
import { siteOf } from './route.js';
import type { Caller } from '../domain/context.js';

// the database unreadable, say: the full pipeline answers, in WordPress's shape
const unreadable = () => false;

/**
 * The front answer: a GET (see `isReplayableGet`) whose answer the response cache holds, from a caller known without
 * reading anything but the database generation (anonymous, or credentials settled and still current), is answered
 * before Koa: the same status, bytes and header lines the response stage sent an earlier GET of that answer with the
 * same `Origin` and the same outcome of `If-None-Match` / `If-Modified-Since` (200 or 304), with a request id of its
 * own. Anything else (a miss, another method, a variant not sent yet, credentials not settled) returns false and goes
 * through Koa, which may then make the next one a front answer. It waits for the reading of the generation the request
 * needs, which it shares with every request of its turn of the event loop. An answer stale by the counts it shows
 * alone is brought up to date first (ResponseCache.current), which reads the database.
 */
export function frontAnswer(deps: { cache: ResponseCache; settled: SettledCallers; engine: Engine; config: Config; log: Logger }): (req: IncomingMessage, res: ServerResponse) => boolean | Promise<boolean> {
  const { cache, settled, engine, config, log } = deps;
  type Found = { answer: CachedAnswer; caller: Caller | null; status: number; lines: string[] } | undefined;
  /** The cached answer this request may be given, or undefined (then Koa answers, and reports any failure). */
  const lookup = (req: IncomingMessage): Found | Promise<Found> => {
    let caller: Caller | null = null;
    const authorization = req.headers.authorization;
    if (authorization !== undefined) {
      const ip = clientAddress(req, config.trustProxy) || null;
      caller = settled.find(SettledCallers.keyOf(ip ?? 'unknown', authorization), Date.now(), ip) ?? null;
      if (caller === null) return undefined;
    }
    const request = cache.requestKeyOf(req.url ?? '/');
    if (request === undefined) return undefined;
    const replay = (answer: CachedAnswer | undefined): Found => {
      if (answer?.replays === undefined) return undefined;
      const status = answer.status === 200 && conditional(req, answer) ? 304 : answer.status;
      const lines = answer.replays.get(replayKey(status, req.headers.origin || ''));
      return lines === undefined ? undefined : { answer, caller, status, lines };
    };
    const current = cache.current(cacheKey(caller, siteOf(config, req), request), engine);
    return current instanceof Promise ? current.then(replay) : replay(current);
  };
  /** Called once the generation was read for this request: the change tracker is up to date. */
  const answer = (req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean> => {
    const found = lookup(req);
    return found instanceof Promise ? found.then((f) => send(req, res, f), unreadable) : send(req, res, found);
  };
  const send = (req: IncomingMessage, res: ServerResponse, found: Found): boolean => {
    if (found === undefined) return false;
    const { answer, caller, status, lines } = found;
    const requestId = nextRequestId();
    res.writeHead(status, [...lines, 'X-Request-Id', requestId]);
    res.end(status === 304 ? undefined : answer.bytes);
    log.debug('request', { requestId, method: 'GET', path: req.url!.split('?', 1)[0], status, user: caller?.login, ms: 0, front: true });
    return true;
  };
  return (req, res) => {
    if (!isReplayableGet(req.method, req.headers)) return false;
    return generationFor(req, engine).then(() => answer(req, res), unreadable);
  };
}

/** Whether a conditional GET of a 200 answer gets 304, as the response stage decides it (same headers, same tag). */
function conditional(req: IncomingMessage, answer: CachedAnswer): boolean {
  const ifNoneMatch = req.headers['if-none-match'] || '';
  const ifModifiedSince = req.headers['if-modified-since'] || '';
  if (!ifNoneMatch && !ifModifiedSince) return false;
  return notModified(ifNoneMatch, ifModifiedSince, answer.headers.ETag ?? entityTag(answer.bytes), answer.headers['Last-Modified']);
}
