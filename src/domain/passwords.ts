import { createHash, hash, randomBytes, randomUUID, scrypt, timingSafeEqual } from 'node:crypto';
import type { Engine, UsersRepository } from '../db/engine.js';
import type { AppPassword, User } from '../db/records.js';

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
  const expected = Buffer.from(stored.hash, 'hex');
  const actual = stored.scheme === 'sha256' ? saltedSha256(stored.salt, normaliseGenerated(password)) : await scryptAsync(password, stored.salt);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

export type CredentialCheck =
  | { ok: true; user: User; password: AppPassword }
  | { ok: false; reason: 'invalid_username' | 'incorrect_password' };

const VERIFIED_TTL_MS = 60_000;
const VERIFIED_MAX = 10_000;
const LAST_USED_EVERY_MS = 60_000;

/**
 * Checks Basic credentials against application passwords. Generated secrets cost one salted SHA-256 each, a
 * password a person chose (the bootstrap one) one scrypt. A successful check is remembered for a minute, keyed by a
 * digest of the user id, the login as sent and the password, and only while the login still names that user at the
 * same credential version (read afresh on every request): revoking a password, replacing the bootstrap one or
 * changing the role bumps the version, in any process, so it takes effect on the next request.
 */
export class CredentialVerifier {
  private readonly verified = new Map<string, { version: number; password: AppPassword; until: number }>();
  private readonly lastTouched = new Map<string, number>();

  constructor(private readonly engine: Engine) {}

  async verify(login: string, password: string, clientIp: string | null): Promise<CredentialCheck> {
    // Every failure costs one scrypt, whether the login exists or not, so timing does not tell logins apart.
    const fail = async (reason: 'invalid_username' | 'incorrect_password', scrypted: boolean): Promise<CredentialCheck> => {
      if (!scrypted) await scryptAsync(password, DUMMY_SALT);
      return { ok: false, reason };
    };
    const account = await this.engine.read(async (repos) => {
      const user = await repos.users.findByLoginOrEmail(login);
      return user ? { user, passwords: await repos.users.passwordsOf(user.id) } : null;
    });
    if (!account) return fail('invalid_username', false);
    const { user, passwords } = account;
    const known = this.rememberedFor(user, login, password);
    if (known) {
      this.noteUse(known, clientIp);
      return known;
    }
    const key = sha256Hex(`${user.id}\0${login}\0${password}`);
    const now = Date.now();
    let found: AppPassword | undefined;
    for (const p of passwords) {
      if (p.scheme === 'sha256' && (await matches(p, password))) found = p;
    }
    if (!found) {
      for (const p of passwords) {
        if (p.scheme === 'scrypt' && (await matches(p, password))) {
          found = p;
          break;
        }
      }
    }
    if (!found) return fail('incorrect_password', passwords.some((p) => p.scheme === 'scrypt'));
    if (this.verified.size >= VERIFIED_MAX) this.verified.clear();
    this.verified.set(key, { version: user.credentialVersion, password: found, until: now + VERIFIED_TTL_MS });
    const check = { ok: true as const, user, password: found };
    this.noteUse(check, clientIp);
    return check;
  }

  /**
   * The check of credentials verified before, while they still stand (one read: the user the login names), or null
   * (then `verify`). Reads only, so it can share a read with the caller's; the caller then calls `noteUse`.
   */
  async remembered(users: UsersRepository, login: string, password: string): Promise<Extract<CredentialCheck, { ok: true }> | null> {
    const user = await users.findByLoginOrEmail(login);
    return user ? this.rememberedFor(user, login, password) : null;
  }

  private rememberedFor(user: User, login: string, password: string): Extract<CredentialCheck, { ok: true }> | null {
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
  });
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
