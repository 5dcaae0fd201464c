import type { Middleware } from 'koa';
import type { Engine } from '../db/engine.js';
import { sha256Hex, type CredentialCheck, type CredentialVerifier } from '../domain/passwords.js';
import { ApiError } from '../errors.js';
import { clientAddress } from './origin.js';
import type { Caller } from '../domain/context.js';

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

function tooMany(lockedUntil: number, now: number): ApiError {
  const seconds = Math.max(1, Math.ceil((lockedUntil - now) / 1000));
  return new ApiError(429, 'rest_too_many_requests', `Too many failed authentication attempts. Try again in ${seconds} seconds.`, {}, { 'Retry-After': String(seconds) });
}

/**
 * Credentials that verified, with the pair not locked and no failure on record, at a database generation: while the
 * generation is the same, nothing they were read from has changed (user, passwords, lock-out), so the same header
 * from the same address is the same caller, without decoding it or reading anything but the generation. Keyed by a
 * digest of address and header, never the header itself; the address is in the key because the lock-out is per
 * address (behind a trusted proxy, one connection carries many clients). One per worker, shared by the
 * authentication stage and the front answer (front.ts).
 */
export class SettledCallers {
  private readonly settled = new Map<string, { generation: string; until: number; check: Extract<CredentialCheck, { ok: true }>; caller: Caller }>();

  constructor(private readonly verifier: CredentialVerifier) {}

  static keyOf(address: string, header: string): string {
    return sha256Hex(`${address}\0${header}`);
  }

  /** The caller settled under `key` at generation `at` (its use noted), or undefined. */
  find(key: string, at: string, now: number, ip: string | null): Caller | undefined {
    const known = this.settled.get(key);
    if (known === undefined || known.generation !== at || known.until <= now) return undefined;
    this.verifier.noteUse(known.check, ip);
    return known.caller;
  }

  keep(key: string, at: string, now: number, check: Extract<CredentialCheck, { ok: true }>, caller: Caller): void {
    if (this.settled.size >= 10_000) this.settled.clear();
    this.settled.set(key, { generation: at, until: now + 60_000, check, caller });
  }
}

/**
 * HTTP Basic with an application password. No Authorization header (or another scheme): anonymous. Credentials
 * that do not verify fail the request with 401 whatever the route, as WordPress does; too many failures from one
 * address for one login lock that pair, and every attempt meanwhile (right password or not) answers 429.
 */
export function authenticate(engine: Engine, verifier: CredentialVerifier, lockout: LockoutPolicy, options: { trustProxy: boolean; settled: SettledCallers }): Middleware {
  const { trustProxy, settled } = options;
  return async (ctx, next) => {
    ctx.state.user = null;
    const header = ctx.get('Authorization');
    const basic = /^Basic\s+([A-Za-z0-9+/=_-]*)\s*$/i.exec(header);
    if (basic) {
      const ip = clientAddress(ctx.req, trustProxy) || null;
      const address = ip ?? 'unknown';
      const now = Date.now();
      const at = await engine.generation();
      ctx.state.generation = at;
      const key = SettledCallers.keyOf(address, header);
      const known = settled.find(key, at, now, ip);
      if (known !== undefined) {
        ctx.state.user = known;
        return next();
      }
      const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      const login = (colon < 0 ? decoded : decoded.slice(0, colon)).slice(0, 200);
      const password = colon < 0 ? '' : decoded.slice(colon + 1);
      // the lock-out state and, for credentials verified before, the user, in one read transaction
      const { before, remembered } = await engine.read(async (repos) => {
        const state = await repos.authFailures.state(address, login, now);
        return { before: state, remembered: state.lockedUntil ? null : await verifier.remembered(repos.users, login, password) };
      });
      if (before.lockedUntil) throw tooMany(before.lockedUntil, now);
      if (remembered) verifier.noteUse(remembered, ip);
      const check = remembered ?? (await verifier.verify(login, password, ip));
      if (!check.ok) {
        await engine.bookkeep((repos) => repos.authFailures.fail(address, login, now, { max: lockout.maxFailures, windowMs: FAILURE_WINDOW_MS, lockMs: lockout.lockSeconds * 1000 }));
        throw new ApiError(401, check.reason, MESSAGES[check.reason]);
      }
      if (before.recorded) await engine.bookkeep((repos) => repos.authFailures.clear(address, login));
      const caller: Caller = { id: check.user.id, login: check.user.login, role: check.user.role };
      ctx.state.user = caller;
      if (remembered && !before.recorded) settled.keep(key, at, now, remembered, caller);
    }
    await next();
  };
}
