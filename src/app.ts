import type { RequestListener } from 'node:http';
import Koa from 'koa';
import type { Config } from './config.js';
import { AuthFailuresRepository, lockoutPathOf } from './db/authFailures.js';
import type { Db } from './db/connection.js';
import { generationOf } from './db/generation.js';
import { MediaRepository } from './db/media.js';
import { PostsRepository } from './db/posts.js';
import { TermsRepository } from './db/terms.js';
import { UsersRepository } from './db/users.js';
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

export interface Repositories {
  users: UsersRepository;
  terms: TermsRepository;
  posts: PostsRepository;
  media: MediaRepository;
}

export function createRepositories(db: Db): Repositories {
  return { users: new UsersRepository(db), terms: new TermsRepository(db), posts: new PostsRepository(db), media: new MediaRepository(db) };
}

export interface App {
  koa: Koa;
  backend: Backend;
  repos: Repositories;
  /** What the HTTP server calls: the front answer from the response cache (front.ts), else Koa. */
  listener: RequestListener;
  /** Closes what the app opened beside the database it was given (the failure counts' file). */
  close: () => void;
}

/** The Koa application over an open, migrated database (no listen). Middleware runs in the order below. */
export async function createApp({ db, config, log }: { db: Db; config: Config; log: Logger }): Promise<App> {
  const repos = createRepositories(db);
  const handlers = {
    ...discoveryHandlers(config),
    ...docsHandlers(),
    ...healthHandlers(db),
    ...categoryHandlers(repos),
    ...tagHandlers(repos),
    ...eventHandlers({ ...repos, config }),
    ...venueHandlers({ ...repos, config }),
    ...organizerHandlers({ ...repos, config }),
    ...listHandlers({ ...repos, config }),
  } satisfies Handlers;
  const reading = db.transaction((work: () => unknown) => work());
  const backend = await createBackend(handlers, {
    validateResponses: config.validateResponses,
    readTransaction: (work) => reading.deferred(work) as ReturnType<typeof work>,
    exists: (kind, value, state) => {
      if (kind === 'category' || kind === 'tag') return repos.terms.findById(Number(value))?.taxonomy === kind;
      const id = typeof value === 'number' ? value : repos.posts.resolveSlug(kind, value, state.lang);
      return id !== null && repos.posts.typeOf(id) === kind;
    },
  });

  const verifier = new CredentialVerifier(repos.users, new ScryptGate(config.authScryptConcurrency, config.authScryptQueue));
  const failures = new AuthFailuresRepository(lockoutPathOf(config.dbPath), config.authTrackedPairs);
  const settled = new SettledCallers(verifier, () => failures.generation());
  const generation = generationOf(db);
  const cache = config.cacheBytes > 0 ? new ResponseCache(db, config.cacheBytes) : null;

  const koa = new Koa({ proxy: config.trustProxy });
  koa.use(respond(config, log)); // errors → WordPress shape, common headers, _fields, _envelope, JSON
  koa.use(resolveRoute(backend, config)); // rest_route, /de /fr, _method, route match, query normalisation
  koa.use(readBody(config.bodyLimitBytes)); // JSON and form bodies, size limit
  const lockout = { failures, maxFailures: config.authMaxFailures, lockSeconds: config.authLockSeconds };
  koa.use(authenticate(verifier, lockout, { trustProxy: config.trustProxy, log, settled, generation })); // application passwords, lock-out
  if (cache) koa.use(cache.middleware(db)); // serialised GET answers, exactly invalidated by any write
  koa.use(dispatch(backend, parseZone(config.siteTimezone)!)); // OPTIONS, openapi-backend: validate, check capabilities, typed handler

  const throughKoa = koa.callback();
  const front = cache ? frontAnswer({ cache, settled, generation, config, log }) : null;
  const listener: RequestListener = front ? (req, res) => front(req, res) || throughKoa(req, res) : throughKoa;
  return { koa, backend, repos, listener, close: () => failures.close() };
}
