import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../config.js';
import type { Generation } from '../db/generation.js';
import type { Logger } from '../log.js';
import { generationKey, SettledCallers } from './auth.js';
import { cacheKey, type CachedAnswer, type ResponseCache } from './cache.js';
import { clientAddress } from './origin.js';
import { isPlainGet, nextRequestId } from './respond.js';
import { siteOf } from './route.js';
import type { Caller } from './state.js';

/**
 * The front answer: a plain GET (see `isPlainGet`) whose whole answer the response cache holds, from a caller known
 * without reading anything but the database generation (anonymous, or credentials settled at this generation), is
 * answered before Koa: the same bytes and header lines the response stage sent when it computed or last served that
 * answer, with a request id of its own. Anything else (a miss, another method, a header that changes the answer,
 * credentials not settled) returns false and goes through Koa, which may then make the next one a front answer.
 */
export function frontAnswer(deps: { cache: ResponseCache; settled: SettledCallers; generation: () => Generation; config: Config; log: Logger }): (req: IncomingMessage, res: ServerResponse) => boolean {
  const { cache, settled, generation, config, log } = deps;
  /** The cached answer this request may be given, or undefined (then Koa answers, and reports any failure). */
  const lookup = (req: IncomingMessage): { answer: CachedAnswer; caller: Caller | null } | undefined => {
    if (!isPlainGet(req.method, req.headers)) return undefined;
    const g = generation();
    let caller: Caller | null = null;
    const authorization = req.headers.authorization;
    if (authorization !== undefined) {
      const ip = clientAddress(req, config.trustProxy) || null;
      caller = settled.find(SettledCallers.keyOf(ip ?? 'unknown', authorization), generationKey(g), Date.now(), ip) ?? null;
      if (caller === null) return undefined;
    }
    const answer = cache.find(cacheKey(caller, siteOf(config, req), req.url ?? '/'), g.version);
    return answer?.wire === undefined ? undefined : { answer, caller };
  };
  return (req, res) => {
    let found;
    try {
      found = lookup(req);
    } catch {
      return false; // the database is unreadable, say: the full pipeline answers in WordPress's shape
    }
    if (found === undefined) return false;
    const { answer, caller } = found;
    const requestId = nextRequestId();
    res.writeHead(answer.status, [...answer.wire!, 'X-Request-Id', requestId]);
    res.end(answer.bytes);
    log.debug('request', { requestId, method: 'GET', path: req.url!.split('?', 1)[0], status: answer.status, user: caller?.login, ms: 0 });
    return true;
  };
}
