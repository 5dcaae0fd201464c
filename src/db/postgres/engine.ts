import { DateTime } from 'luxon';
import type pg from 'pg';
import type { Engine, Repositories, WriteUnit } from '../engine.js';
import { GenerationTracker, utcNowWire } from '../generation.js';
import { PostgresLockout } from './authFailures.js';
import { classify, openPool, type Queryable } from './connection.js';
import { CoalescedReader } from './generation.js';
import { PostgresGroupCommit } from './groupCommit.js';
import { PostgresMedia } from './media.js';
import { migratePostgres, schemaVersion } from './migrate.js';
import { NEXT_SCHEDULED, PostgresPosts } from './posts.js';
import { query } from './sql.js';
import { PostgresTerms } from './terms.js';
import { PostgresUsers } from './users.js';

export interface PostgresOptions {
  /** Connections this process may hold (ALMANAC_DB_POOL). */
  pool: number;
  /** The most (address, account) pairs the lock-out keeps (ALMANAC_AUTH_TRACKED_PAIRS). */
  trackedPairs?: number;
}

/** The repositories of a pool (reads, bookkeeping) or of one transaction's connection (writes). */
export function repositoriesOf(db: Queryable): Repositories {
  return { posts: new PostgresPosts(db), terms: new PostgresTerms(db), users: new PostgresUsers(db), media: new PostgresMedia(db) };
}

/** Change log rows older than this are pruned (a node that missed that many changes starts its caches afresh). */
const CHANGE_LOG_DAYS = 1;

/**
 * The PostgreSQL engine: any number of stateless nodes (each with its own pool) on one database. Reads are pooled
 * statements; every write of every node is one transaction that takes the same advisory lock, per-node batches
 * sharing one commit (see PostgresGroupCommit), and appends to the change log, whose highest sequence is the data's
 * generation everywhere. A lost connection or a restarting server is a 503 for the requests it touches; the pool
 * connects again by itself.
 */
export class PostgresEngine implements Engine {
  readonly kind = 'postgres' as const;
  private readonly group: PostgresGroupCommit;
  private readonly readings: CoalescedReader<{ seq: number; due: string | null; lockout: number }>;
  private readonly tracker = new GenerationTracker();
  private readonly repos: Repositories;
  private closed = false;
  readonly lockout: PostgresLockout;

  private constructor(private readonly pool: pg.Pool, readonly applied: number[], trackedPairs: number) {
    this.repos = repositoriesOf(pool);
    this.lockout = new PostgresLockout(pool, trackedPairs);
    let pruned = 0;
    this.group = new PostgresGroupCommit(pool, () => {
      const now = Date.now();
      let sql = `INSERT INTO change_log (changed_utc) VALUES (to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'))`;
      if (now - pruned > 3_600_000) {
        pruned = now;
        sql += `; DELETE FROM change_log WHERE changed_utc < to_char((clock_timestamp() - interval '${CHANGE_LOG_DAYS} day') AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')
          AND seq < (SELECT MAX(seq) FROM change_log)`;
      }
      return sql;
    });
    this.readings = new CoalescedReader(async () => {
      const rows = await query<{ seq: number; due: string | null; lockout: number | null }>(pool,
        `SELECT (SELECT MAX(seq) FROM change_log) AS seq, (${NEXT_SCHEDULED}) AS due, (SELECT MAX(version) FROM auth_failures_version) AS lockout`,
        [utcNowWire()]);
      return { seq: rows[0]?.seq ?? 0, due: rows[0]?.due ?? null, lockout: rows[0]?.lockout ?? 0 };
    });
  }

  /** Connects (the pool connects lazily) and brings the database to the newest schema. */
  static async open(url: string, options: PostgresOptions): Promise<PostgresEngine> {
    const pool = openPool(url, { max: options.pool }, () => undefined);
    try {
      const applied = await migratePostgres(pool);
      return new PostgresEngine(pool, applied, options.trackedPairs ?? 100_000);
    } catch (err) {
      await pool.end();
      throw classify(err);
    }
  }

  async read<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    return work(this.repos);
  }

  write<T>(work: (unit: WriteUnit) => Promise<T>): Promise<T> {
    return this.group.run((client, batch) => work(unitOf(client, DateTime.fromMillis(batch.nowMs, { zone: 'utc' }))));
  }

  async bookkeep<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    return work(this.repos);
  }

  async generation(): Promise<string> {
    const { seq, due, lockout } = await this.readings.get();
    this.lockout.observe(lockout);
    return this.tracker.advance(seq, utcNowWire(), () => due);
  }

  async bulk<T>(work: () => Promise<T>): Promise<T> {
    const result = await work();
    await query(this.pool, 'ANALYZE');
    return result;
  }

  async schemaVersion(): Promise<number> {
    try {
      return await schemaVersion(this.pool);
    } catch (err) {
      throw classify(err);
    }
  }

  async migrate(): Promise<number[]> {
    return migratePostgres(this.pool);
  }

  async checkWritable(): Promise<void> {
    try {
      await query(this.pool, 'UPDATE almanac_schema SET version = version', []);
    } catch (err) {
      throw classify(err);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }
}

/** A write's view: the repositories of its transaction's connection, its time, and nested savepoints. */
function unitOf(client: pg.PoolClient, now: DateTime): WriteUnit {
  let depth = 0;
  return Object.assign(repositoriesOf(client), {
    now,
    async savepoint<T>(work: () => Promise<T>): Promise<T> {
      const name = `nested_${++depth}`;
      await client.query(`SAVEPOINT ${name}`);
      try {
        const value = await work();
        await client.query(`RELEASE SAVEPOINT ${name}`);
        return value;
      } catch (err) {
        await client.query(`ROLLBACK TO SAVEPOINT ${name}`);
        throw err;
      } finally {
        depth--;
      }
    },
  });
}
