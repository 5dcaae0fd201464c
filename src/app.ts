import type { RequestListener } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import Koa from 'koa';
import type { Config } from './config.js';
import type { Engine } from './db/engine.js';
import { parseZone } from './domain/dates.js';
import { CredentialVerifier, ScryptGate } from './domain/passwords.js';
import { discoveryHandlers } from './handlers/discovery.js';
import { docsHandlers } from './handlers/docs.js';
import { eventHandlers } from './handlers/events.js';
import { healthHandlers } from './handlers/health.js';
import { organizerHandlers, venueHandlers } from './handlers/linked.js';
import { listHandlers } from './handlers/lists.js';
import { categoryHandlers, tagHandlers } from './handlers/terms.js';
import { authenticate, SettledCallers } from './http/auth.js';
import { createBackend, type Backend } from './http/backend.js';
import { readBody } from './http/body.js';
import { ResponseCache } from './http/cache.js';
import { dispatch } from './http/dispatch.js';
import { frontAnswer } from './http/front.js';
import type { Handlers } from './http/operation.js';
import { respond } from './http/respond.js';
import { resolveRoute } from './http/route.js';
import type { Logger } from './log.js';
import { PostUnits } from './services/posts.js';

/** Socket errors that mean the client closed the connection. */
const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE', 'ERR_STREAM_DESTROYED']);

export interface App {
  koa: Koa;
  backend: Backend;
  /** What the HTTP server calls: the front answer from the response cache (front.ts), else Koa. */
  listener: RequestListener;
  /**
   * Resolves once no request is being answered: a process that stops waits for it before it closes the database, so
   * a request taken in (a write above all) finishes even when its client has gone.
   */
  settled(): Promise<void>;
}

/** The Koa application over an engine with a migrated database (no listen). Middleware runs in the order below. */
export async function createApp({ engine, config, log }: { engine: Engine; config: Config; log: Logger }): Promise<App> {
  const posts = new PostUnits(engine, config);
  const handlers = {
    ...discoveryHandlers(config),
    ...docsHandlers(),
    ...healthHandlers(engine),
    ...categoryHandlers(engine),
    ...tagHandlers(engine),
    ...eventHandlers(posts),
    ...venueHandlers(posts),
    ...organizerHandlers(posts),
    ...listHandlers(engine, config),
  } satisfies Handlers;
  const backend = await createBackend(handlers, {
    validateResponses: config.validateResponses,
    exists: (kind, value, state) => engine.read(async (repos) => {
      if (kind === 'category' || kind === 'tag') return (await repos.terms.findById(Number(value)))?.taxonomy === kind;
      const id = typeof value === 'number' ? value : await repos.posts.resolveSlug(kind, value, state.lang);
      return id !== null && (await repos.posts.typeOf(id)) === kind;
    }, state.reads),
  });

  const verifier = new CredentialVerifier(engine, new ScryptGate(config.authScryptConcurrency, config.authScryptQueue));
  const settled = new SettledCallers(verifier, () => engine.lockout.generation(), engine.changes);
  const cache = config.cacheBytes > 0 ? new ResponseCache(config.cacheBytes, engine.changes) : null;

  const koa = new Koa({ proxy: config.trustProxy });
  koa.use(respond(config, log)); // errors → WordPress shape, common headers, _fields, _envelope, JSON
  koa.use(resolveRoute(backend, config)); // rest_route, /de /fr, _method, route match, query normalisation
  koa.use(readBody(config.bodyLimitBytes)); // JSON and form bodies, size limit
  const lockout = { maxFailures: config.authMaxFailures, lockSeconds: config.authLockSeconds };
  koa.use(authenticate(engine, verifier, lockout, { trustProxy: config.trustProxy, log, settled })); // application passwords, lock-out
  if (cache) koa.use(cache.middleware(engine)); // serialised GET answers, exactly invalidated by any write
  koa.use(dispatch(backend, parseZone(config.siteTimezone)!)); // OPTIONS, openapi-backend: validate, check capabilities, typed handler

  // What Koa reports past the pipeline's own error handling is met while an answer is sent, almost always a client
  // gone mid-answer (its default printed a bare stack to stderr): one line of the log, at debug for a client gone
  koa.on('error', (err: NodeJS.ErrnoException, ctx?: Koa.Context) => {
    const fields = { requestId: ctx?.state.requestId as string | undefined, path: ctx?.path, error: err.code ?? err.message };
    if (err.code !== undefined && CLIENT_GONE.has(err.code)) log.debug('client went before its answer was sent', fields);
    else log.error('answer not sent', { ...fields, error: err.stack ?? err.message });
  });
  const throughKoa = koa.callback();
  const frontAnswerOf = cache ? frontAnswer({ cache, settled, engine, config, log }) : null;
  let answering = 0;
  let whenIdle: (() => void)[] = [];
  const answered = () => {
    if (--answering > 0 || whenIdle.length === 0) return;
    const waiting = whenIdle;
    whenIdle = [];
    for (const resume of waiting) resume();
  };
  // The requests read from the network in one turn of the event loop go through the pipeline together, once the turn
  // is over, as the front answer's wait for the turn's reading of the generation already had them do. Measured by hand
  // on 100,000 events with the cache off, an anonymous read by id cost 701 µs of CPU started at once, 346 µs this way
  // (an authenticated one, which waited for that reading, 345): one stage after another for a turn's requests, rather
  // than each request's stages between other requests' socket callbacks.
  let turn: Promise<void> | null = null;
  const afterTurn = () => (turn ??= nextTurn().then(() => void (turn = null)));
  const listener: RequestListener = (req, res) => {
    const front = frontAnswerOf ? frontAnswerOf(req, res) : false;
    if (front === true) return;
    answering++;
    const throughPipeline = () => throughKoa(req, res).then(answered, answered);
    if (front === false) return void afterTurn().then(throughPipeline);
    // the front answer could not give it (or failed): the pipeline answers, and reports any failure
    void front.then((sent) => (sent ? answered() : throughPipeline()), throughPipeline);
  };
  const idle = () => (answering === 0 ? Promise.resolve() : new Promise<void>((resume) => whenIdle.push(resume)));
  return { koa, backend, listener, settled: idle };
}
