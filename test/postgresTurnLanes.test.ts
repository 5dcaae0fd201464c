import { Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPool } from '../src/db/postgres/connection.js';
import { query } from '../src/db/postgres/sql.js';
import { STATEMENTS_PER_LANE, TurnLanes } from '../src/db/postgres/turnLanes.js';
import { cleanUp, engineDb } from './helpers/process.js';

/** Statements by key of one turn of the event loop travel together, each with its own answer and its own error. */
let pool: pg.Pool;

beforeAll(async () => {
  const database = await engineDb();
  pool = openPool(database.env.ALMANAC_DATABASE_URL!, { max: 4, genericPlans: true, pipeline: true }, () => undefined);
});
afterAll(async () => {
  await pool?.end();
  await cleanUp();
});

/** Counts the writes to sockets from now on (a corked socket's buffered chunks go in one). */
function countWrites(): { writes: () => number; stop: () => void } {
  let writes = 0;
  const original = Socket.prototype._writeGeneric;
  Socket.prototype._writeGeneric = function (this: Socket, ...args: unknown[]) {
    writes++;
    return original.apply(this, args);
  };
  return { writes: () => writes, stop: () => void (Socket.prototype._writeGeneric = original) };
}

declare module 'node:net' {
  interface Socket {
    /** Node's one way down to the socket for `_write` and `_writev` alike. */
    _writeGeneric(...args: unknown[]): unknown;
  }
}

describe('statements by key of one turn', () => {
  const statement = 'SELECT $1::int AS n, 10 / $1::int AS tenth, pg_backend_pid() AS pid';

  it('each get their own answer, the turn\'s statements on as few connections as STATEMENTS_PER_LANE allows', async () => {
    const lanes = new TurnLanes(pool);
    const count = STATEMENTS_PER_LANE + 4;
    await Promise.all(Array.from({ length: 4 }, (_, i) => query(pool, 'SELECT $1::int', [i]))); // the pool's connections are open
    const answers = await Promise.all(Array.from({ length: count }, (_, i) => query<{ n: number; pid: number }>(lanes, statement, [i + 1])));
    expect(answers.map(([row]) => row!.n)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
    expect(new Set(answers.map(([row]) => row!.pid)).size).toBe(2);
  });

  it('are written to a connection at once, not one write each', async () => {
    const lanes = new TurnLanes(pool);
    for (let i = 1; i <= 3; i++) await query(lanes, statement, [i]); // prepared on the connections
    const counting = countWrites();
    try {
      await Promise.all(Array.from({ length: 8 }, (_, i) => query(lanes, statement, [i + 1])));
      expect(counting.writes()).toBe(1);
    } finally {
      counting.stop();
    }
  });

  it('fail alone: a statement\'s error is its own, and the connection serves the next turn', async () => {
    const lanes = new TurnLanes(pool);
    const settled = await Promise.allSettled([1, 0, 2].map((n) => query<{ tenth: number }>(lanes, statement, [n])));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((settled[2] as PromiseFulfilledResult<{ tenth: number }[]>).value[0]!.tenth).toBe(5);
    expect(((settled[1] as PromiseRejectedResult).reason as { code?: string }).code).toBe('22012'); // division by zero
    const [after] = await query<{ n: number }>(lanes, statement, [7]);
    expect(after!.n).toBe(7);
  });
});
