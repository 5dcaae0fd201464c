import { DateTime } from 'luxon';
import type pg from 'pg';
import type { Engine, Repositories, WriteOptions, WriteUnit } from '../engine.js';
import { ChangeSet, MAX_CHANGES_READ, recordingReads, recordingWrites, type ChangeTracker, type LoggedChange, type ReadSet } from '../changes.js';
import { CoalescedReader, GenerationTracker, readChanges, utcNowWire } from '../generation.js';
import { PostgresLockout } from './authFailures.js';
import { classify, openPool, splitPool, type Queryable } from './connection.js';
import { ChangeSignal } from './changeSignal.js';
import { PostgresGroupCommit, type Attempt, type BatchContext } from './groupCommit.js';
import { PostgresMedia } from './media.js';
import { migratePostgres, schemaVersion } from './migrate.js';
import { EventCreates, NEXT_SCHEDULED, PostgresPosts, TurnReads, type Together } from './posts.js';
import { query } from './sql.js';
import { PostgresTerms, TERM_COUNT } from './terms.js';
import { PostgresUsers } from './users.js';
import { TurnLanes } from './turnLanes.js';

export interface PostgresOptions {
  /** Connections this process may hold (ALMANAC_DB_POOL), shared between its three pools by `splitPool`. */
  pool: number;
  /** The most (address, account) pairs the lock-out keeps (ALMANAC_AUTH_TRACKED_PAIRS). */
  trackedPairs?: number;
}

/**
 * The repositories of the pools (reads, bookkeeping: statements by key on `db`, lists on `lists`) or of one
 * transaction's connection (writes: both the same).
 */
export function repositoriesOf(db: Queryable, lists: Queryable = db, together?: Together): Repositories {
  return { posts: new PostgresPosts(db, lists, together), terms: new PostgresTerms(db, lists), users: new PostgresUsers(db), media: new PostgresMedia(db) };
}

/** One reading of the change log and of what else moves a generation. */
interface Reading {
  seq: number;
  due: string | null;
  lockout: number;
  /** The sequence the rows were read from, and the rows. */
  from: number;
  rows: LoggedChange[];
  /** When it began (Unix ms). */
  atMs: number;
  /** Readings are numbered in the order they began. */
  order: number;
}

/**
 * The longest a reading stands while no notification arrives: changes made around Almanac (a database restored
 * under running nodes, rows edited by hand) notify nothing, and are seen within this time.
 */
const READING_MAX_AGE_MS = 1_000;

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
  private readonly readings: CoalescedReader<Reading>;
  private readingsBegun = 0;
  /** The newest reading applied to the tracker. */
  private newestApplied: Reading | null = null;
  private readonly signal: ChangeSignal;
  private readonly tracker = new GenerationTracker();
  readonly changes: ChangeTracker = this.tracker.changes;
  private readonly repos: Repositories;
  private closed = false;
  readonly lockout: PostgresLockout;

  private constructor(private readonly pool: pg.Pool, private readonly lists: pg.Pool, private readonly writes: pg.Pool, url: string, readonly applied: number[], trackedPairs: number) {
    const keys = new TurnLanes(pool);
    this.repos = repositoriesOf(keys, lists, { reads: new TurnReads(keys) });
    this.signal = new ChangeSignal(url);
    this.lockout = new PostgresLockout(pool, trackedPairs);
    let pruned = 0;
    this.group = new PostgresGroupCommit(writes, (changes) => {
      const now = Date.now();
      // the tags are made of letters, digits, `*` and spaces only (ChangeSet checks each): safe in the statement's text
      let sql = `INSERT INTO change_log (changed_utc, tags) VALUES (to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), '${changes.toString()}')`;
      if (now - pruned > 3_600_000) {
        pruned = now;
        sql += `; DELETE FROM change_log WHERE changed_utc < to_char((clock_timestamp() - interval '${CHANGE_LOG_DAYS} day') AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')
          AND seq < (SELECT MAX(seq) FROM change_log)`;
      }
      return sql;
    });
    // while the listening connection tells that nothing moved, the newest reading of the log stands (unless a
    // scheduled record fell due since, or it is older than READING_MAX_AGE_MS), even one still under way: it started
    // after the last reset, and nothing moved between that and the moment the round trip on the listening connection
    // began. Otherwise one round trip reads the newest sequence, the change log rows since the last one this process
    // saw (none when nothing moved), the next scheduled record and the lock-out's version
    let latest: Promise<Reading> | null = null;
    this.readings = new CoalescedReader(async () => {
      if (latest !== null && (await this.signal.quiet()) && latest !== null) {
        const last = await latest;
        if (Date.now() - last.atMs < READING_MAX_AGE_MS && (last.due === null || utcNowWire() < last.due)) return last;
      }
      this.signal.reset();
      const reading = this.readLog();
      latest = reading;
      reading.catch(() => {
        if (latest === reading) latest = null;
      });
      return reading;
    });
  }

  /** The change log and what else each generation reads, in one round trip. */
  private async readLog(): Promise<Reading> {
    const atMs = Date.now();
    const order = ++this.readingsBegun;
    const from = this.tracker.changes.lastSeq;
    const rows = await query<{ seq: number; due: string | null; lockout: number | null; changes: [number, string][] | null }>(this.pool,
      `SELECT (SELECT MAX(seq) FROM change_log) AS seq, (${NEXT_SCHEDULED}) AS due, (SELECT MAX(version) FROM auth_failures_version) AS lockout,
        (SELECT json_agg(json_build_array(c.seq, c.tags) ORDER BY c.seq) FROM (SELECT seq, tags FROM change_log WHERE seq >= $2 ORDER BY seq LIMIT ${MAX_CHANGES_READ + 1}) c) AS changes`,
      [utcNowWire(), from]);
    const row = rows[0];
    return {
      seq: row?.seq ?? 0, due: row?.due ?? null, lockout: row?.lockout ?? 0, from, atMs, order,
      rows: (row?.changes ?? []).map(([seq, tags]) => ({ seq: Number(seq), tags })),
    };
  }

  /**
   * Connects (the pools connect lazily) and brings the database to the newest schema. Three pools: statements of
   * fixed text (reads by key, the generation), each planned once per connection and those of a turn sent together
   * (see TurnLanes); list statements, each planned for its values (see `named`); and the connection writes take turns
   * on. The first and the last pipeline their statements.
   */
  static async open(url: string, options: PostgresOptions): Promise<PostgresEngine> {
    const size = splitPool(options.pool);
    const pool = openPool(url, { max: size.keys, genericPlans: true, pipeline: true }, () => undefined);
    const lists = openPool(url, { max: size.lists }, () => undefined);
    const writes = openPool(url, { max: size.writes, genericPlans: true, pipeline: true }, () => undefined);
    try {
      const applied = await migratePostgres(pool);
      return new PostgresEngine(pool, lists, writes, url, applied, options.trackedPairs ?? 100_000);
    } catch (err) {
      await Promise.all([pool.end(), lists.end(), writes.end()]);
      throw classify(err);
    }
  }

  async read<T>(work: (repos: Repositories) => Promise<T>, reads: ReadSet | null = null): Promise<T> {
    return work(reads ? recordingReads(this.repos, reads) : this.repos);
  }

  readList<T>(work: (repos: Repositories) => Promise<T>, reads: ReadSet | null = null): Promise<T> {
    return this.read(work, reads); // a read holds no connection between statements; list statements have their pool
  }

  write<T>(work: (unit: WriteUnit) => Promise<T>, options: WriteOptions = {}): Promise<T> {
    const changes = new ChangeSet();
    const nowOf = (batch: BatchContext) => DateTime.fromMillis(batch.nowMs, { zone: 'utc' });
    const attempt = options.insertOnly
      ? async (client: pg.PoolClient, batch: BatchContext): Promise<Attempt> => {
          const attempted = new ChangeSet();
          const { unit, calls } = tallied(unitOf(client, nowOf(batch), eventCreatesOf(client)));
          try {
            const value = await work(recordingWrites(unit, attempted));
            return { outcome: { ok: true, value }, changes: attempted, alongside: calls.length === 1 && calls[0] === 'posts.create' };
          } catch (error) {
            // refused before it asked the database anything: it would be refused in turn just the same
            return { outcome: { ok: false, error }, changes: attempted, alongside: calls.length === 0 };
          }
        }
      : undefined;
    return this.group.run((client, batch) => work(recordingWrites(unitOf(client, nowOf(batch)), changes)), changes, attempt);
  }

  async bookkeep<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    return work(this.repos);
  }

  async termCounts(ids: number[]): Promise<{ counts: Map<number, number>; seq: number }> {
    // one statement: one snapshot
    const [row] = await query<{ seq: number | null; counts: [number, number][] | null }>(this.pool,
      `SELECT (SELECT MAX(seq) FROM change_log) AS seq,
        (SELECT json_agg(json_build_array(t.id, ${TERM_COUNT('$2')})) FROM terms t WHERE t.id = ANY($1::bigint[])) AS counts`,
      [ids, utcNowWire()]);
    return { counts: new Map((row?.counts ?? []).map(([id, count]) => [Number(id), Number(count)])), seq: Number(row?.seq ?? 0) };
  }

  async generation(): Promise<string> {
    const read = await this.readings.get();
    // a reading that began after this one and has been applied already is as good for this request, and newer
    const reading = this.newestApplied !== null && this.newestApplied.order > read.order ? this.newestApplied : read;
    this.newestApplied = reading;
    const { seq, due, lockout, from, rows } = reading;
    this.lockout.observe(lockout);
    // rows read from an older position than the tracker's now are filtered by sequence; from a newer one (a reading
    // that started before another's rows were observed cannot be newer) they would be incomplete: read as unknown
    return this.tracker.advance(seq, (seen) => (seen >= from ? readChanges(from, rows)?.filter((r) => r.seq > seen) ?? null : null), utcNowWire(), () => due);
  }

  async bulk<T>(work: () => Promise<T>): Promise<T> {
    const result = await work();
    // what the load added to the trigram indexes still waits in their pending lists (migrations 0017, 0018): merged
    // now, the first searches after it read the indexes alone, and the statistics are taken of them as they will stay.
    // Only an index's owner may merge it (a role that does not own it leaves that to autovacuum; ANALYZE skips such tables)
    await query(this.pool, `SELECT gin_clean_pending_list(c.oid) FROM pg_class c
      WHERE c.oid IN ('posts_search'::regclass, 'posts_dated_search'::regclass) AND pg_has_role(c.relowner, 'USAGE')`);
    await query(this.pool, 'ANALYZE');
    return result;
  }

  missingReference(err: unknown): boolean {
    return (err as { code?: unknown } | null)?.code === '23503'; // foreign_key_violation
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
    await this.group.settled();
    await Promise.all([this.pool.end(), this.lists.end(), this.writes.end(), this.signal.close()]);
  }
}

/**
 * A write's unit that notes each call it makes (`posts.create`, and `savepoint` too): what a write attempted beside
 * others did (see PostgresGroupCommit.run).
 */
function tallied(unit: WriteUnit): { unit: WriteUnit; calls: string[] } {
  const calls: string[] = [];
  const noted = Object.assign({}, unit) as unknown as Record<string, unknown>; // own members: recordingWrites copies them
  for (const name of ['posts', 'terms', 'users', 'media'] as const) {
    const repository = unit[name] as unknown as Record<string, unknown>;
    noted[name] = new Proxy(repository, {
      get(target, method, receiver) {
        const value = Reflect.get(target, method, receiver) as unknown;
        if (typeof value !== 'function' || typeof method !== 'string') return value;
        return (...args: unknown[]) => {
          calls.push(`${name}.${method}`);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  }
  noted.savepoint = <T>(work: () => Promise<T>) => {
    calls.push('savepoint');
    return unit.savepoint(work);
  };
  return { unit: noted as unknown as WriteUnit, calls };
}

/** Where the new events of writes run beside one another on a connection are written together (EventCreates). */
const eventCreatesByClient = new WeakMap<pg.PoolClient, EventCreates>();
function eventCreatesOf(client: pg.PoolClient): EventCreates {
  let creates = eventCreatesByClient.get(client);
  if (!creates) eventCreatesByClient.set(client, (creates = new EventCreates(client)));
  return creates;
}

/** A write's view: the repositories of its transaction's connection, its time, and nested savepoints. */
function unitOf(client: pg.PoolClient, now: DateTime, eventCreates?: EventCreates): WriteUnit {
  let depth = 0;
  return Object.assign(repositoriesOf(client, client, { eventCreates }), {
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
