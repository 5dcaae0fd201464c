import type { AuthFailuresRepository } from '../engine.js';
import type { Queryable } from './connection.js';
import { query } from './sql.js';

interface Row { failures: number; window_start: number; locked_until: number }

/** Failed authentications per (client address, login), for the lock-out every node shares (migration 0006). */
export class PostgresAuthFailures implements AuthFailuresRepository {
  constructor(private readonly db: Queryable) {}

  async state(address: string, login: string, now: number): Promise<{ lockedUntil: number; recorded: boolean }> {
    const rows = await query<Row>(this.db, 'SELECT failures, window_start, locked_until FROM auth_failures WHERE address = $1 AND login = lower($2)', [address, login]);
    const row = rows[0];
    return { lockedUntil: row && row.locked_until > now ? row.locked_until : 0, recorded: Boolean(row) };
  }

  /** One statement: concurrent failures of the same pair on several nodes each count. */
  async fail(address: string, login: string, now: number, limits: { max: number; windowMs: number; lockMs: number }): Promise<number> {
    const rows = await query<{ locked_until: number }>(this.db,
      `INSERT INTO auth_failures AS f (address, login, failures, window_start, locked_until)
       VALUES ($1, lower($2), 1, $3::bigint, CASE WHEN 1 >= $4::integer THEN $3::bigint + $6::bigint ELSE 0 END)
       ON CONFLICT (address, login) DO UPDATE SET
         failures = CASE WHEN (CASE WHEN $3::bigint - f.window_start > $5::bigint THEN 1 ELSE f.failures + 1 END) >= $4::integer THEN 0
                         ELSE (CASE WHEN $3::bigint - f.window_start > $5::bigint THEN 1 ELSE f.failures + 1 END) END,
         window_start = CASE WHEN $3::bigint - f.window_start > $5::bigint OR (f.failures + 1) >= $4::integer THEN $3::bigint ELSE f.window_start END,
         locked_until = CASE WHEN (CASE WHEN $3::bigint - f.window_start > $5::bigint THEN 1 ELSE f.failures + 1 END) >= $4::integer THEN $3::bigint + $6::bigint ELSE 0 END
       RETURNING locked_until`,
      [address, login, now, limits.max, limits.windowMs, limits.lockMs]);
    return rows[0]?.locked_until ?? 0;
  }

  async clear(address: string, login: string): Promise<void> {
    await query(this.db, 'DELETE FROM auth_failures WHERE address = $1 AND login = lower($2)', [address, login]);
  }
}
