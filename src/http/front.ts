import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../config.js';
import type { Generation } from '../db/generation.js';
import type { Logger } from '../log.js';
import { generationKey, SettledCallers } from './auth.js';
import { cacheKey, replayKey, type CachedAnswer, type ResponseCache } from './cache.js';
import { entityTag, notModified } from './conditional.js';
import { clientAddress } from './origin.js';
import { isReplayableGet, nextRequestId } from './respond.js';
import { siteOf } from './route.js';
import type { Caller } from './state.js';

/**
 * The front answer: a GET (see `isReplayableGet`) whose answer the response cache holds, from a caller known without
 * reading anything but the database generation (anonymous, or credentials settled at this generation), is answered
 * before Koa: the same status, bytes and header lines the response stage sent an earlier GET of that answer with the
 * same `Origin` and the same outcome of `If-None-Match` / `If-Modified-Since` (200 or 304), with a request id of its
 * own. Anything else (a miss, another method, a variant not sent yet, credentials not settled) returns false and goes
 * through Koa, which may then make the next one a front answer.
 */
export function frontAnswer(deps: { cache: ResponseCache; settled: SettledCallers; generation: () => Generation; config: Config; log: Logger }): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { cache, settled, generation, config, log } = deps;
  /** The cached answer this request may be given, or undefined (then Koa answers, and reports any failure). */
  const lookup = (req: IncomingMessage): { answer: CachedAnswer; caller: Caller | null; status: number; lines: string[] } | undefined => {
    if (!isReplayableGet(req.method, req.headers)) return undefined;
    const g = generation();
    let caller: Caller | null = null;
    const authorization = req.headers.authorization;
    if (authorization !== undefined) {
      const ip = clientAddress(req, config.trustProxy) || null;
      caller = settled.find(SettledCallers.keyOf(ip ?? 'unknown', authorization), generationKey(g), Date.now(), ip) ?? null;
      if (caller === null) return undefined;
    }
    const request = cache.requestKeyOf(req.url ?? '/');
    if (request === undefined) return undefined;
    const answer = cache.find(cacheKey(caller, siteOf(config, req), request), g.version);
    if (answer?.replays === undefined) return undefined;
    const status = answer.status === 200 && conditional(req, answer) ? 304 : answer.status;
    const lines = answer.replays.get(replayKey(status, req.headers.origin || ''));
    return lines === undefined ? undefined : { answer, caller, status, lines };
  };
  return (req, res) => {
    let found;
    try {
      found = lookup(req);
    } catch {
      return false; // the database is unreadable, say: the full pipeline answers in WordPress's shape
    }
    if (found === undefined) return false;
    const { answer, caller, status, lines } = found;
    const requestId = nextRequestId();
    res.writeHead(status, [...lines, 'X-Request-Id', requestId]);
    res.end(status === 304 ? undefined : answer.bytes);
    log.debug('request', { requestId, method: 'GET', path: req.url!.split('?', 1)[0], status, user: caller?.login, ms: 0, front: true });
    return true;
  };
}

/** Whether a conditional GET of a 200 answer gets 304, as the response stage decides it (same headers, same tag). */
function conditional(req: IncomingMessage, answer: CachedAnswer): boolean {
  const ifNoneMatch = req.headers['if-none-match'] || '';
  const ifModifiedSince = req.headers['if-modified-since'] || '';
  if (!ifNoneMatch && !ifModifiedSince) return false;
  return notModified(ifNoneMatch, ifModifiedSince, answer.headers.ETag ?? entityTag(answer.bytes), answer.headers['Last-Modified']);
}
