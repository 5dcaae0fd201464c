import pg from 'pg';
import { expect } from 'vitest';
import { WRITE_LOCK } from '../../src/db/postgres/groupCommit.js';

/**
 * PostgreSQL only: holds the lock every write of every node takes, from a connection of its own, while `during`
 * runs, then lets it go. Writes sent meanwhile read what they read before the lock, then wait for it: `during` can
 * change the database under them, or queue more writes behind them (one batch).
 */
export async function withWriteLockHeld<T>(url: string, during: (holder: pg.Client) => Promise<T>): Promise<T> {
  const holder = new pg.Client({ connectionString: url });
  await holder.connect();
  try {
    await holder.query('SELECT pg_advisory_lock($1)', [WRITE_LOCK]);
    try {
      return await during(holder);
    } finally {
      await holder.query('SELECT pg_advisory_unlock($1)', [WRITE_LOCK]);
    }
  } finally {
    await holder.end();
  }
}

/** Resolves once a write waits for the lock `withWriteLockHeld` holds (within 10 s). */
export async function writeWaiting(holder: pg.Client): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await holder.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`)).rowCount === 0) {
    expect(Date.now()).toBeLessThan(deadline);
    await new Promise((r) => setTimeout(r, 20));
  }
}
