import type { LockoutStore } from '../engine.js';
import type { Queryable } from './connection.js';
import { query } from './sql.js';

interface Row { failures: number; window_start: number; locked_until: number }

/**
 * Failed authentications per (client address, account), for the lock-out every node shares (migrations 0006 and
 * 0012), in the shared database so that a lock holds on every node. They are written straight through the pool, not
 * through the group commit, and leave no change-log row: counting a failure retires no cached answer anywhere. Rows
 * expire with their window and lock, and at most `maxTracked` are kept (unlocked ones nearest expiry go first).
 */
export class PostgresLockout implements LockoutStore {
  /** Failures this node recorded or cleared since it last read the shared version. */
  private changes = 0;
  /** The shared version of the counts (migration 0012) as last read with the data's generation. */
  private version = -1;
  /** Rows this node added since it last pruned (an upper bound: an update of an existing row counts too). */
  private added = 0;

  constructor(private readonly db: Queryable, private readonly maxTracked: number) {}

  async state(address: string, account: string, now: number): Promise<{ lockedUntil: number; recorded: boolean }> {
    const rows = await query<Row>(this.db, 'SELECT failures, window_start, locked_until FROM auth_failures WHERE address = $1 AND account = $2', [address, account]);
    const row = rows[0];
    return { lockedUntil: row && row.locked_until > now ? row.locked_until : 0, recorded: Boolean(row) };
  }

  /** One statement: concurrent failures of the same pair on several nodes each count. */
  async fail(address: string, account: string, now: number, limits: { max: number; windowMs: number; lockMs: number }): Promise<number> {
    this.changes++;
    const rows = await query<{ locked_until: number }>(this.db,
      `WITH counted AS (
         SELECT CASE WHEN f.address IS NULL OR $3::bigint - f.window_start > $5::bigint THEN 1 ELSE f.failures + 1 END AS failures,
                CASE WHEN f.address IS NULL OR $3::bigint - f.window_start > $5::bigint THEN $3::bigint ELSE f.window_start END AS window_start
         FROM (SELECT 1) one LEFT JOIN auth_failures f ON f.address = $1 AND f.account = $2
       ), decided AS (
         SELECT failures, window_start, CASE WHEN failures >= $4::integer THEN $3::bigint + $6::bigint ELSE 0 END AS locked_until FROM counted
       )
       INSERT INTO auth_failures AS f (address, account, failures, window_start, locked_until, expires)
       SELECT $1, $2, CASE WHEN locked_until > 0 THEN 0 ELSE failures END, CASE WHEN locked_until > 0 THEN $3::bigint ELSE window_start END,
              locked_until, GREATEST((CASE WHEN locked_until > 0 THEN $3::bigint ELSE window_start END) + $5::bigint, locked_until)
       FROM decided
       ON CONFLICT (address, account) DO UPDATE SET
         failures = CASE WHEN (CASE WHEN $3::bigint - f.window_start > $5::bigint THEN 1 ELSE f.failures + 1 END) >= $4::integer THEN 0
                         ELSE (CASE WHEN $3::bigint - f.window_start > $5::bigint THEN 1 ELSE f.failures + 1 END) END,
         window_start = CASE WHEN $3::bigint - f.window_start > $5::bigint OR f.failures + 1 >= $4::integer THEN $3::bigint ELSE f.window_start END,
         locked_until = CASE WHEN (CASE WHEN $3::bigint - f.window_start > $5::bigint THEN 1 ELSE f.failures + 1 END) >= $4::integer THEN $3::bigint + $6::bigint ELSE 0 END,
         expires = GREATEST(
           (CASE WHEN $3::bigint - f.window_start > $5::bigint OR f.failures + 1 >= $4::integer THEN $3::bigint ELSE f.window_start END) + $5::bigint,
           CASE WHEN (CASE WHEN $3::bigint - f.window_start > $5::bigint THEN 1 ELSE f.failures + 1 END) >= $4::integer THEN $3::bigint + $6::bigint ELSE 0 END)
       RETURNING locked_until`,
      [address, account, now, limits.max, limits.windowMs, limits.lockMs]);
    if (++this.added >= Math.max(1, Math.floor(this.maxTracked / 10))) await this.prune(now);
    return rows[0]?.locked_until ?? 0;
  }

  async clear(address: string, account: string): Promise<void> {
    this.changes++;
    await query(this.db, 'DELETE FROM auth_failures WHERE address = $1 AND account = $2', [address, account]);
  }

  async tracked(): Promise<number> {
    const rows = await query<{ n: number }>(this.db, 'SELECT COUNT(*)::integer AS n FROM auth_failures', []);
    return rows[0]?.n ?? 0;
  }

  /**
   * Equal values: no failure was recorded or cleared in between, on any node, as far as the shared version read with
   * the data's generation (`observe`) and this node's own changes since tell.
   */
  generation(): string {
    return `${this.version}.${this.changes}`;
  }

  /** The shared version, read by the engine with every generation of the data. */
  observe(version: number): void {
    this.version = version;
  }

  async close(): Promise<void> {}

  /** Drops expired rows, then the unlocked ones nearest expiry beyond `maxTracked`. */
  private async prune(now: number): Promise<void> {
    this.added = 0;
    await query(this.db, 'DELETE FROM auth_failures WHERE expires <= $1', [now]);
    await query(this.db,
      `DELETE FROM auth_failures WHERE (address, account) IN (
         SELECT address, account FROM auth_failures WHERE locked_until <= $1 ORDER BY expires
         LIMIT GREATEST(0, (SELECT COUNT(*) FROM auth_failures) - $2::bigint))`, [now, this.maxTracked]);
  }
}
