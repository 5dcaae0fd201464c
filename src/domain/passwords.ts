import { createHash, hash, randomBytes, randomUUID, scrypt, timingSafeEqual } from 'node:crypto';
import type { Engine, UsersRepository } from '../db/engine.js';
import type { AppPassword, User } from '../db/records.js';
import { InFlight } from '../inFlight.js';
import { Turns } from '../turns.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 } as const;
const DUMMY_SALT = 'almanac-unknown-login';

/** A random 24-character application password (≈143 bits), shown as WordPress does: six groups of four. */
export function generateSecret(): { secret: string; display: string } {
  const bytes = randomBytes(48);
  let secret = '';
  for (let i = 0; secret.length < 24 && i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b < 248) secret += ALPHABET[b % 62]; // 248 = 4 × 62: no modulo bias
  }
  while (secret.length < 24) secret += ALPHABET[randomBytes(1)[0]! % 62];
  return { secret, display: secret.match(/.{4}/g)!.join(' ') };
}

/** WordPress ignores everything but letters and digits in an application password (`abcd EFGH …`). */
export function normaliseGenerated(password: string): string {
  return password.replace(/[^A-Za-z0-9]/g, '');
}

export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex'); // one call, no Hash object (on every authenticated request)
}

function saltedSha256(salt: string, secret: string): Buffer {
  return createHash('sha256').update(salt).update('\0').update(secret).digest();
}

function scryptAsync(password: string, salt: string): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, SCRYPT.keylen, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** A stored form of a generated secret: salted SHA-256 (fast, and safe for random secrets). */
export function hashGenerated(secret: string): { scheme: 'sha256'; salt: string; hash: string } {
  const salt = randomBytes(16).toString('hex');
  return { scheme: 'sha256', salt, hash: saltedSha256(salt, normaliseGenerated(secret)).toString('hex') };
}

/** A stored form of a password a person chose: scrypt. */
export async function hashChosen(password: string): Promise<{ scheme: 'scrypt'; salt: string; hash: string }> {
  const salt = randomBytes(16).toString('hex');
  return { scheme: 'scrypt', salt, hash: (await scryptAsync(password, salt)).toString('hex') };
}

/** Whether `password` matches a stored application password, comparing in constant time. */
export async function matches(stored: AppPassword, password: string): Promise<boolean> {
  return sameDigest(stored.scheme === 'sha256' ? saltedSha256(stored.salt, normaliseGenerated(password)) : await scryptAsync(password, stored.salt), stored);
}

/** Whether a digest computed from a password is the stored one, compared in constant time. */
function sameDigest(actual: Buffer, stored: AppPassword): boolean {
  const expected = Buffer.from(stored.hash, 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

export type CredentialCheck =
  | { ok: true; user: User; password: AppPassword }
  | { ok: false; reason: 'invalid_username' | 'incorrect_password' }
  /** Not checked: too many scrypt checks are waiting already (see ScryptGate). */
  | { ok: false; reason: 'busy' };

/**
 * Runs scrypt checks at most `concurrency` at a time, with at most `queue` more waiting; a check beyond that is
 * refused at once. A scrypt takes some 50 ms of a core and 16 MB: unbounded, a flood of wrong passwords would take
 * every core (libuv runs four at once) and starve the event loop that answers everyone else.
 */
export class ScryptGate {
  private readonly turns: Turns;

  constructor(concurrency: number, private readonly queue: number) {
    this.turns = new Turns(concurrency);
  }

  /** scrypt of `password` with `salt`, or null when the queue is full. */
  async hash(password: string, salt: string): Promise<Buffer | null> {
    if (!this.turns.free && this.turns.waiting >= this.queue) return null;
    const done = await this.turns.take();
    try {
      return await scryptAsync(password, salt);
    } finally {
      done();
    }
  }
}

const VERIFIED_TTL_MS = 60_000;
const VERIFIED_MAX = 10_000;
const LAST_USED_EVERY_MS = 60_000;
const BUSY = { ok: false, reason: 'busy' } as const;

/**
 * Checks Basic credentials against application passwords. Generated secrets cost one salted SHA-256 each, a
 * password a person chose (the bootstrap one) one scrypt, through the gate. A successful check is remembered for a
 * minute, keyed by a digest of the user id, the login as sent and the password, and only while the login still names
 * that user at the same credential version (read afresh on every request): revoking a password, replacing the
 * bootstrap one or changing the role bumps the version, in any process, so it takes effect on the next request.
 * Identical checks at the same time (one login and password) are computed once and shared.
 */
export class CredentialVerifier {
  private readonly verified = new Map<string, { version: number; password: AppPassword; until: number }>();
  private readonly lastTouched = new Map<string, number>();
  /** Checks being computed, by a digest of login and password. */
  private readonly checks = new InFlight<string, CredentialCheck>();
  /** Users being looked up, by data generation and login. */
  private readonly lookups = new InFlight<string, User | null>();

  constructor(private readonly engine: Engine, private readonly gate: ScryptGate) {}

  /**
   * The user a login or an e-mail address names, or null, as of the data's `generation`: a burst of requests with the
   * same credentials reads it once.
   */
  lookup(login: string, generation: string): Promise<User | null> {
    return this.lookups.run(`${generation}\0${login}`, () => this.userNamed(login));
  }

  private userNamed(login: string): Promise<User | null> {
    return this.engine.read((repos) => repos.users.findByLoginOrEmail(login), null);
  }

  async verify(login: string, password: string, clientIp: string | null): Promise<CredentialCheck> {
    const check = await this.checks.run(sha256Hex(`${login}\0${password}`), () => this.check(login, password));
    if (check.ok) this.noteUse(check, clientIp);
    return check;
  }

  private async check(login: string, password: string): Promise<CredentialCheck> {
    // Every failure costs one scrypt, whether the login exists or not, so timing does not tell logins apart.
    const user = await this.userNamed(login);
    if (!user) return (await this.gate.hash(password, DUMMY_SALT)) === null ? BUSY : { ok: false, reason: 'invalid_username' };
    const known = this.rememberedFor(user, login, password);
    if (known) return known;
    const passwords = await this.engine.read((repos) => repos.users.passwordsOf(user.id), null);
    let found: AppPassword | undefined;
    for (const p of passwords) {
      if (p.scheme === 'sha256' && sameDigest(saltedSha256(p.salt, normaliseGenerated(password)), p)) found = p;
    }
    const chosen = passwords.filter((p) => p.scheme === 'scrypt');
    if (!found) {
      // the chosen password, or a stand-in of the same cost when the user has none
      for (const p of chosen.length > 0 ? chosen : [null]) {
        const digest = await this.gate.hash(password, p?.salt ?? DUMMY_SALT);
        if (digest === null) return BUSY;
        if (p && sameDigest(digest, p)) {
          found = p;
          break;
        }
      }
    }
    if (!found) return { ok: false, reason: 'incorrect_password' };
    if (this.verified.size >= VERIFIED_MAX) this.verified.clear();
    this.verified.set(sha256Hex(`${user.id}\0${login}\0${password}`), { version: user.credentialVersion, password: found, until: Date.now() + VERIFIED_TTL_MS });
    return { ok: true, user, password: found };
  }

  /**
   * The check of credentials verified before, while they still stand (`user`: the one `login` names now), or null
   * (then `verify`). Reads nothing; the caller then calls `noteUse`.
   */
  rememberedFor(user: User, login: string, password: string): Extract<CredentialCheck, { ok: true }> | null {
    const key = sha256Hex(`${user.id}\0${login}\0${password}`);
    const remembered = this.verified.get(key);
    if (!remembered) return null;
    if (remembered.until > Date.now() && remembered.version === user.credentialVersion) return { ok: true, user, password: remembered.password };
    this.verified.delete(key);
    return null;
  }

  /** Writes `last_used` at most once a minute per password, so authentication does not turn reads into writes. */
  noteUse(check: Extract<CredentialCheck, { ok: true }>, ip: string | null): void {
    const p = check.password;
    const now = Date.now();
    const last = this.lastTouched.get(p.uuid) ?? (p.lastUsedUtc ? Date.parse(p.lastUsedUtc.replace(' ', 'T') + 'Z') : 0);
    if (now - last < LAST_USED_EVERY_MS) return;
    this.lastTouched.set(p.uuid, now);
    // bookkeeping, not waited for: a busy database must not fail or slow an authenticated read; the next request
    // records the use
    this.engine.bookkeep((repos) => repos.users.touchPassword(p.uuid, new Date(now).toISOString().slice(0, 19).replace('T', ' '), ip))
      .catch(() => this.lastTouched.delete(p.uuid));
  }
}

/** Creates a generated application password for a user and returns it for display (shown once, never stored). */
export async function addGeneratedPassword(users: UsersRepository, userId: number, name: string): Promise<{ uuid: string; display: string }> {
  const { secret, display } = generateSecret();
  const uuid = randomUUID();
  await users.addPassword({ uuid, userId, name, ...hashGenerated(secret), isBootstrap: false, createdUtc: new Date().toISOString().slice(0, 19).replace('T', ' ') });
  return { uuid, display };
}

/**
 * Makes `login` an administrator whose application passwords include `password` (from ALMANAC_ADMIN_USER and
 * ALMANAC_ADMIN_PASSWORD). Idempotent across restarts; a changed password replaces the previous bootstrap one. The
 * scrypt hashing happens outside the write, which then checks again that nothing changed meanwhile.
 */
export async function ensureBootstrapAdmin(engine: Engine, login: string, password: string): Promise<'created' | 'updated' | 'unchanged'> {
  const before = await engine.read(async (repos) => {
    const user = await repos.users.findByLoginOrEmail(login);
    return { user, bootstrap: user ? (await repos.users.passwordsOf(user.id)).find((p) => p.isBootstrap) : undefined };
  }, null);
  const keeps = before.bootstrap !== undefined && (await matches(before.bootstrap, password));
  const fresh = keeps ? null : await hashChosen(password);
  return engine.write(async (repos) => {
    let user = await repos.users.findByLoginOrEmail(login);
    let outcome: 'created' | 'updated' | 'unchanged' = 'unchanged';
    if (!user) {
      user = await repos.users.create({ login, email: null, role: 'administrator' });
      outcome = 'created';
    } else if (user.role !== 'administrator') {
      await repos.users.setRole(user.id, 'administrator');
      outcome = 'updated';
    }
    const current = (await repos.users.passwordsOf(user.id)).find((p) => p.isBootstrap);
    if (fresh === null && current?.uuid === before.bootstrap?.uuid && current?.hash === before.bootstrap?.hash) return outcome;
    await repos.users.replaceBootstrapPassword({
      uuid: randomUUID(), userId: user.id, name: 'ALMANAC_ADMIN_PASSWORD', ...(fresh ?? (await hashChosen(password))),
      isBootstrap: true, createdUtc: new Date().toISOString().slice(0, 19).replace('T', ' '),
    });
    return outcome === 'created' ? 'created' : 'updated';
  });
}
