import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PostgresEngine } from '../src/db/postgres/engine.js';
import { testDatabase, type TestDatabase } from './helpers/engines.js';

/**
 * A node knows that nothing changed without reading the change log: it listens for the notification migration 0015
 * sends when the log or the lock-out's counts move, and one empty round trip on that connection proves that nothing
 * committed before it is still on its way. Here another connection of the database plays the other node.
 */
let dir: string;
let database: TestDatabase;
let engine: PostgresEngine;
let other: pg.Client;

/** Readings of the change log sent by this process while counting. */
let readings = 0;
let counting = false;
const query = pg.Client.prototype.query;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'almanac-pgsignal-'));
  database = await testDatabase(join(dir, 'unused.sqlite'));
  engine = await PostgresEngine.open(database.url!, { pool: 3 });
  other = new pg.Client({ connectionString: database.url! });
  await other.connect();
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const config = args[0] as string | { text?: string };
    const text = typeof config === 'string' ? config : config?.text ?? '';
    if (counting && text.includes('FROM change_log')) readings++;
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
}, 60_000);
afterAll(async () => {
  pg.Client.prototype.query = query;
  await other?.end();
  await engine?.close();
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  counting = false;
});

/** The pid of this engine's listening connection, once it listens (it starts with the first reading); not `gone`. */
async function listening(gone = 0): Promise<number> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    await engine.generation();
    const rows = (await other.query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'almanac-listen' AND pid <> $1`, [gone])).rows as { pid: number }[];
    if (rows.length === 1) {
      await engine.generation(); // the reading that follows the start of listening
      return rows[0]!.pid;
    }
    if (Date.now() > deadline) throw new Error('the engine never listened');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function readingsDuring(work: () => Promise<void>): Promise<number> {
  readings = 0;
  counting = true;
  try {
    await work();
  } finally {
    counting = false;
  }
  return readings;
}

const appendChange = (client: pg.Client = other) =>
  client.query(`INSERT INTO change_log (changed_utc, tags) VALUES (to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), '*event')`);

describe('the change signal', () => {
  it('answers requests while nothing changes without reading the change log', async () => {
    await listening();
    const before = await engine.generation();
    const started = performance.now();
    const count = await readingsDuring(async () => {
      for (let i = 0; i < 50; i++) expect(await engine.generation()).toBe(before);
    });
    const seconds = (performance.now() - started) / 1000;
    // a reading stands for at most a second, however quiet the database: one for 50 requests in less than a second,
    // one more for each further second a loaded machine makes them take (CI once took three)
    expect(count, `${count} readings in ${seconds.toFixed(2)} s`).toBeLessThanOrEqual(Math.max(1, Math.ceil(seconds)));
  });

  it('sees a change committed on another connection at the very next request, and not before its commit', async () => {
    await listening();
    for (let round = 0; round < 20; round++) {
      const before = await engine.generation();
      await other.query('BEGIN');
      await appendChange();
      expect(await engine.generation(), 'a change not yet committed').toBe(before);
      await other.query('COMMIT');
      expect(await engine.generation(), `round ${round}`).not.toBe(before);
    }
  });

  it('sees the lock-out\'s counts move on another connection at the very next request', async () => {
    await listening();
    for (let round = 0; round < 5; round++) {
      await engine.generation();
      const before = engine.lockout.generation();
      await other.query('UPDATE auth_failures_version SET version = version + 1');
      await engine.generation();
      expect(engine.lockout.generation()).not.toBe(before);
    }
  });

  it('reads the log for every request while its listening connection is lost, then listens again', async () => {
    const pid = await listening();
    const before = await engine.generation();
    await other.query('SELECT pg_terminate_backend($1)', [pid]);
    await appendChange();
    expect(await engine.generation()).not.toBe(before);
    // not listening: every request reads (the connection comes back within a second or so)
    const lost = await readingsDuring(async () => {
      for (let i = 0; i < 3; i++) await engine.generation();
    });
    expect(lost).toBeGreaterThanOrEqual(1);
    await listening(pid);
    const after = await engine.generation();
    await appendChange();
    expect(await engine.generation()).not.toBe(after);
    expect(await readingsDuring(async () => {
      for (let i = 0; i < 20; i++) await engine.generation();
    })).toBeLessThanOrEqual(1);
  });
});
