import type { AuthFailuresRepository } from '../engine.js';
import type { Db } from './connection.js';

interface Row { failures: number; window_start: number; locked_until: number }

/** Failed authentications per (client address, login), for the lock-out (migration 0006). */
export class SqliteAuthFailures implements AuthFailuresRepository {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      get: db.prepare<[string, string], Row>('SELECT failures, window_start, locked_until FROM auth_failures WHERE address = ? AND login = ?'),
      put: db.prepare(`INSERT INTO auth_failures (address, login, failures, window_start, locked_until) VALUES (@address, @login, @failures, @start, @locked)
                       ON CONFLICT (address, login) DO UPDATE SET failures = @failures, window_start = @start, locked_until = @locked`),
      clear: db.prepare('DELETE FROM auth_failures WHERE address = ? AND login = ?'),
    };
  }

  /** Until when the pair is locked (Unix ms; 0: not locked), and whether any failure is on record. */
  async state(address: string, login: string, now: number): Promise<{ lockedUntil: number; recorded: boolean }> {
    const row = this.stmts.get.get(address, login);
    return { lockedUntil: row && row.locked_until > now ? row.locked_until : 0, recorded: Boolean(row) };
  }

  /** Counts a failure; returns until when the pair is now locked (0: not locked). */
  async fail(address: string, login: string, now: number, limits: { max: number; windowMs: number; lockMs: number }): Promise<number> {
    const row = this.stmts.get.get(address, login);
    const fresh = !row || now - row.window_start > limits.windowMs;
    const failures = fresh ? 1 : row.failures + 1;
    const locked = failures >= limits.max ? now + limits.lockMs : 0;
    this.stmts.put.run({ address, login, failures: locked ? 0 : failures, start: fresh || locked ? now : row.window_start, locked });
    return locked;
  }

  async clear(address: string, login: string): Promise<void> {
    this.stmts.clear.run(address, login);
  }
}
