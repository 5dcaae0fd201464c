import Database from 'better-sqlite3';
import type { LockoutStore } from '../engine.js';
import type { Db } from './connection.js';

interface Row { failures: number; window_start: number; locked_until: number }

const SCHEMA_VERSION = 1;
const SCHEMA = `
  CREATE TABLE auth_failures (
    address TEXT NOT NULL,
    -- the account a login or e-mail names ('#' and its user id), or the login as sent, lower-cased, if none
    account TEXT NOT NULL,
    failures INTEGER NOT NULL,
    window_start INTEGER NOT NULL,
    locked_until INTEGER NOT NULL,
    -- when the row stops mattering: the end of its window or of its lock (Unix ms, as every time here)
    expires INTEGER NOT NULL,
    PRIMARY KEY (address, account)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX auth_failures_expiry ON auth_failures (expires);`;

/** The file of the failure counts beside a database file (`:memory:` stays in memory). */
export const lockoutPathOf = (dbPath: string): string => (dbPath === ':memory:' ? dbPath : `${dbPath}-lockout`);

/**
 * Failed authentications per (client address, account), for the lock-out, shared by every worker and process on the
 * database. They live in a SQLite file of their own beside the database (`<database>-lockout`):
 * - in a database rather than in each process's memory, so that every worker counts the same failures and a lock
 *   holds in all of them (and across restarts);
 * - not in the database itself, because any write there moves its `data_version`, which retires every cached answer
 *   and remembered caller of every worker: a flood of wrong passwords became a flood of cache misses;
 * - with `synchronous=NORMAL`: a count lost to a power cut is not worth an fsync per failed attempt, and no write
 *   here waits for the database's write lock or its group commit.
 * Rows expire with their window and lock, and at most `maxTracked` are kept (those nearest expiry, unlocked, go
 * first), so made-up logins cannot grow the file without bound. The file holds nothing worth a backup.
 */
export class SqliteLockout implements LockoutStore {
  private readonly db: Db;
  private readonly stmts;
  private readonly dataVersion: () => number;
  /** The file's `data_version` as last observed: it moves with other processes' commits. */
  private observed = 0;
  /** A reading of the data's generation began since `observed` was read: read it again before it is used. */
  private stale = false;
  /** Writes of this process that may have changed a count (they do not move its own connection's `data_version`). */
  private written = 0;
  /** Rows this process added since it last pruned. */
  private added = 0;

  constructor(path: string, private readonly maxTracked: number) {
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.transaction(() => {
      if (this.db.pragma('user_version', { simple: true }) === SCHEMA_VERSION) return;
      // counts are short-lived: a file of another shape is simply started afresh
      this.db.exec(`DROP TABLE IF EXISTS auth_failures; ${SCHEMA}`);
      this.db.pragma(`user_version = ${SCHEMA_VERSION}`);
    }).immediate();
    const dataVersion = this.db.prepare<[], number>('PRAGMA data_version').pluck();
    this.dataVersion = () => dataVersion.get()!;
    this.observed = this.dataVersion();
    this.stmts = {
      get: this.db.prepare<[string, string], Row>('SELECT failures, window_start, locked_until FROM auth_failures WHERE address = ? AND account = ?'),
      put: this.db.prepare(`INSERT INTO auth_failures (address, account, failures, window_start, locked_until, expires) VALUES (@address, @account, @failures, @start, @locked, @expires)
                            ON CONFLICT (address, account) DO UPDATE SET failures = @failures, window_start = @start, locked_until = @locked, expires = @expires`),
      clear: this.db.prepare('DELETE FROM auth_failures WHERE address = ? AND account = ?'),
      expire: this.db.prepare('DELETE FROM auth_failures WHERE expires <= ?'),
      count: this.db.prepare<[], number>('SELECT COUNT(*) FROM auth_failures').pluck(),
      dropNearestExpiry: this.db.prepare(`DELETE FROM auth_failures WHERE (address, account) IN
                                            (SELECT address, account FROM auth_failures WHERE locked_until <= @now ORDER BY expires LIMIT @excess)`),
    };
  }

  /** Until when the pair is locked (Unix ms; 0: not locked), and whether any failure is on record. */
  async state(address: string, account: string, now: number): Promise<{ lockedUntil: number; recorded: boolean }> {
    const row = this.stmts.get.get(address, account);
    return { lockedUntil: row && row.locked_until > now ? row.locked_until : 0, recorded: Boolean(row) };
  }

  /** Counts a failure; returns until when the pair is now locked (0: not locked). */
  async fail(address: string, account: string, now: number, limits: { max: number; windowMs: number; lockMs: number }): Promise<number> {
    const locked = this.db.transaction(() => {
      const row = this.stmts.get.get(address, account);
      if (!row) this.added++;
      const fresh = !row || now - row.window_start > limits.windowMs;
      const failures = fresh ? 1 : row.failures + 1;
      const lockedUntil = failures >= limits.max ? now + limits.lockMs : 0;
      const start = fresh || lockedUntil ? now : row.window_start;
      this.stmts.put.run({ address, account, failures: lockedUntil ? 0 : failures, start, locked: lockedUntil, expires: Math.max(start + limits.windowMs, lockedUntil) });
      this.written++;
      return lockedUntil;
    }).immediate();
    if (this.added >= Math.max(1, Math.floor(this.maxTracked / 10))) this.prune(now);
    return locked;
  }

  async clear(address: string, account: string): Promise<void> {
    if (this.stmts.clear.run(address, account).changes > 0) this.written++;
  }

  /** Rows kept now (what `maxTracked` bounds). */
  async tracked(): Promise<number> {
    return this.stmts.count.get()!;
  }

  /**
   * Whether any failure may have been recorded or cleared since a moment: equal generations mean equal counts, as far
   * as the last `observe` (other processes) and this process's own writes since tell.
   */
  generation(): string {
    if (this.stale) {
      this.stale = false;
      this.observed = this.dataVersion();
    }
    return `${this.observed}.${this.written}`;
  }

  /**
   * The engine calls it with every reading of the data's generation: what other processes wrote until then is read
   * when the counts' generation is next asked for, no earlier than the reading. Only requests with credentials ask,
   * so anonymous ones (most, and every cached answer's) do not pay for the file's `data_version`.
   */
  observe(): void {
    this.stale = true;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  /** Drops expired rows, then the unlocked ones nearest expiry beyond `maxTracked`. */
  private prune(now: number): void {
    this.added = 0;
    this.db.transaction(() => {
      this.stmts.expire.run(now);
      const excess = this.stmts.count.get()! - this.maxTracked;
      if (excess > 0) this.stmts.dropNearestExpiry.run({ now, excess });
    }).immediate();
    this.written++;
  }
}
