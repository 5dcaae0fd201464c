import type { Middleware } from 'koa';
import { tag, type ChangeTracker } from '../db/changes.js';
import type { Engine } from '../db/engine.js';
import { storageFault } from '../db/faults.js';
import type { User } from '../db/records.js';
import type { Caller } from '../domain/context.js';
import { sha256Hex, type CredentialCheck, type CredentialVerifier } from '../domain/passwords.js';
import { ApiError, DatabaseUnavailable, StorageFull } from '../errors.js';
import { InFlight } from '../inFlight.js';
import { Episode, type Logger } from '../log.js';
import { clientAddress } from './origin.js';
import { generationFor } from './requestGeneration.js';

const MESSAGES = {
  invalid_username: 'Unknown username. Check again or try your email address.',
  incorrect_password: 'The provided password is an invalid application password.',
} as const;

/** The lock-out of repeated failures (DESIGN §2: ALMANAC_AUTH_MAX_FAILURES within 15 minutes, then a pause). */
export interface LockoutPolicy {
  maxFailures: number;
  lockSeconds: number;
}

const FAILURE_WINDOW_MS = 15 * 60_000;
/** What a settled caller was read from: users and their passwords. */
const USERS = [tag.users];

function tooMany(lockedUntil: number, now: number): ApiError {
  const seconds = Math.max(1, Math.ceil((lockedUntil - now) / 1000));
  return new ApiError(429, 'rest_too_many_requests', `Too many failed authentication attempts. Try again in ${seconds} seconds.`, {}, { 'Retry-After': String(seconds) });
}

const busy = (): ApiError =>
  new ApiError(429, 'rest_too_many_requests', 'Too many password checks are waiting. Try again in 1 second.', {}, { 'Retry-After': '1' });

/**
 * Whose failures an attempt counts against: the account its login or e-mail address names (both count as one), or
 * the login as sent when it names none (logins and e-mail addresses compare without case).
 */
const accountOf = (user: User | null, login: string): string => (user ? `#${user.id}` : login.toLowerCase());

/**
 * Credentials that verified, with the pair not locked and no failure on record, as of a point of the change log and
 * a generation of the failure counts: while no user or password changed since (any change to users names their
 * table, `*user`) and the counts' generation is the same, nothing they were read from has changed, so the same header
 * from the same address is the same caller, without decoding it or reading anything but the generations. Keyed by a digest of address and header, never the header itself; the address is in
 * the key because the lock-out is per address (behind a trusted proxy, one connection carries many clients). One per
 * worker, shared by the authentication stage and the front answer (front.ts).
 */
export class SettledCallers {
  private readonly settled = new Map<string, { at: number; lockout: string; until: number; check: Extract<CredentialCheck, { ok: true }>; caller: Caller }>();

  constructor(private readonly verifier: CredentialVerifier, private readonly lockoutGeneration: () => string, private readonly changes: ChangeTracker) {}

  static keyOf(address: string, header: string): string {
    return sha256Hex(`${address}\0${header}`);
  }

  /** The caller settled under `key`, if still exact as of the change log read for this request (its use noted). */
  find(key: string, now: number, ip: string | null): Caller | undefined {
    const known = this.settled.get(key);
    if (known === undefined || known.until <= now || !this.changes.isCurrent(USERS, known.at)) return undefined;
    // read only for a candidate: anonymous requests and unknown headers never pay for it
    if (known.lockout !== this.lockoutGeneration()) return undefined;
    this.verifier.noteUse(known.check, ip);
    return known.caller;
  }

  /**
   * `at`: the change tracker's stamp before the user was read; `lockout`: the failure counts' generation as read before
   * their state was.
   */
  keep(key: string, at: number, lockout: string, now: number, check: Extract<CredentialCheck, { ok: true }>, caller: Caller): void {
    if (this.settled.size >= 10_000) this.settled.clear();
    this.settled.set(key, { at, lockout, until: now + 60_000, check, caller });
  }
}

/**
 * The base64 credentials of a `Basic` Authorization header (`Basic`, white space, the token, optional white space), or
 * null. Trimmed, then matched: one pattern for it all retried its white space at each position (a header of
 * 48,000 spaces took seconds).
 */
function basicCredentials(header: string): string | null {
  if (!/^Basic\s/i.test(header)) return null;
  const token = header.slice(5).trim();
  return /^[A-Za-z0-9+/=_-]*$/.test(token) ? token : null;
}

/**
 * HTTP Basic with an application password. No Authorization header (or another scheme): anonymous. Credentials
 * that do not verify fail the request with 401 whatever the route, as WordPress does; too many failures from one
 * address for one account lock that pair, and every attempt meanwhile (right password or not) answers 429. So does
 * an attempt that finds the scrypt checks' queue full (see ScryptGate), without counting as a failure.
 */
export function authenticate(engine: Engine, verifier: CredentialVerifier, lockout: LockoutPolicy, options: { trustProxy: boolean; log: Logger; settled: SettledCallers }): Middleware {
  const { trustProxy, log, settled } = options;
  const failures = engine.lockout;
  /** Lock-out states being read, by the counts' generation, address and account: a burst reads each once. */
  const states = new InFlight<string, { lockedUntil: number; recorded: boolean }>();
  const refusals = new Episode(log, 'warn', 'password checks refused: the scrypt queue is full (ALMANAC_AUTH_SCRYPT_QUEUE)', 'password checks keep up again');
  const unrecorded = new Episode(log, 'error', 'failed authentications cannot be recorded: their file cannot be written', 'failed authentications are recorded again');
  /**
   * Records failures (or clears them). When the storage refuses, the attempt is still answered as it should be (401,
   * or the caller let in), locks recorded before still hold, and guessing stays bound by the scrypt gate meanwhile.
   */
  const record = async (work: () => Promise<unknown>) => {
    try {
      await work();
      unrecorded.end();
    } catch (err) {
      if (storageFault(err) === null && !(err instanceof StorageFull) && !(err instanceof DatabaseUnavailable)) throw err;
      unrecorded.fail({ error: (err as Error).message });
    }
  };
  return async (ctx, next) => {
    ctx.state.user = null;
    const header = ctx.get('Authorization');
    const credentials = basicCredentials(header);
    if (credentials !== null) {
      const ip = clientAddress(ctx.req, trustProxy) || null;
      const address = ip ?? 'unknown';
      const now = Date.now();
      const { generation, at } = await generationFor(ctx.req, engine);
      const key = SettledCallers.keyOf(address, header);
      const known = settled.find(key, now, ip);
      if (known !== undefined) {
        ctx.state.user = known;
        return next();
      }
      const decoded = Buffer.from(credentials, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      const login = (colon < 0 ? decoded : decoded.slice(0, colon)).slice(0, 200);
      const password = colon < 0 ? '' : decoded.slice(colon + 1);
      const user = await verifier.lookup(login, generation);
      const account = accountOf(user, login);
      const lockoutAt = failures.generation();
      const before = await states.run(`${lockoutAt}\0${address}\0${account}`, () => failures.state(address, account, now));
      if (before.lockedUntil) throw tooMany(before.lockedUntil, now);
      const remembered = user ? verifier.rememberedFor(user, login, password) : null;
      if (remembered) verifier.noteUse(remembered, ip);
      const check = remembered ?? (await verifier.verify(login, password, ip));
      if (!check.ok && check.reason === 'busy') {
        refusals.fail({ requestId: ctx.state.requestId });
        throw busy();
      }
      if (!remembered) refusals.end();
      if (!check.ok) {
        await record(() => failures.fail(address, account, now, { max: lockout.maxFailures, windowMs: FAILURE_WINDOW_MS, lockMs: lockout.lockSeconds * 1000 }));
        throw new ApiError(401, check.reason, MESSAGES[check.reason]);
      }
      if (before.recorded) await record(() => failures.clear(address, account));
      const caller: Caller = { id: check.user.id, login: check.user.login, role: check.user.role };
      ctx.state.user = caller;
      if (remembered && !before.recorded) settled.keep(key, at, lockoutAt, now, remembered, caller);
    }
    await next();
  };
}
