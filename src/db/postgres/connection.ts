import type { Socket } from 'node:net';
import pg from 'pg';
import { DatabaseBusy, DatabaseUnavailable, StorageFull } from '../../errors.js';

/** What a pool or a checked-out client both offer: one statement, its rows. */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>>;
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

/**
 * Rows as the repositories map them, the same on both engines: 64-bit integers (ids, counts) and numerics as
 * numbers (every id and count fits in 2^53), everything else as node-postgres reads it.
 */
const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
    if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as 'text');
  }) as typeof pg.types.getTypeParser,
};

export interface PoolOptions {
  /** Connections this process may hold (ALMANAC_DB_POOL). Nodes × workers × this must stay under max_connections. */
  max: number;
  /** How long a request waits for a connection before it is answered 503. */
  connectTimeoutMs?: number;
  /** The longest any one statement may run before PostgreSQL cancels it (a request never hangs). */
  statementTimeoutMs?: number;
  /**
   * Plan each prepared statement once per connection, whatever its values (`plan_cache_mode=force_generic_plan`):
   * for statements that read by key, whose best plan never depends on the values. Left to PostgreSQL's choice, a
   * statement taking a list of ids is planned afresh on every call (about 1 ms for the view's links).
   */
  genericPlans?: boolean;
  /**
   * Send each statement as soon as it is asked for, not after the previous one's answer: statements issued together
   * share one round trip (the group commit's savepoints travel with the next write's first statement).
   */
  pipeline?: boolean;
}

/**
 * A pool of connections to the database of `url`. Connections that break (a restarted server, a network fault) are
 * dropped and replaced on the next checkout; the pool itself never crashes the process.
 */
export function openPool(url: string, options: PoolOptions, onError: (err: Error) => void): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    idleTimeoutMillis: 30_000,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
    idle_in_transaction_session_timeout: 60_000,
    application_name: 'almanac',
    // no parallel workers: an API answers many short statements at once, and a worker costs more to start than such
    // a statement takes (a search of a rare word at a million events: 7.6 ms with one worker, 1.1 ms of work in
    // each; 32 clients got 90 searches a second with them, 215 without), and takes a core another request needs. No
    // JIT compilation either: it starts above a cost estimate, and compiling takes longer than any of these statements
    // runs (the links of 14 views as one statement, estimated above it, took 100 ms to compile and under 1 to run)
    options: ['-c max_parallel_workers_per_gather=0 -c jit=off', ...(options.genericPlans ? ['-c plan_cache_mode=force_generic_plan'] : [])].join(' '),
    ...(options.pipeline ? { pipeline: true } : {}),
    types: TYPES,
  });
  // an idle connection that breaks emits here; without a listener Node would end the process
  pool.on('error', onError);
  return pool;
}

/**
 * How a process shares its connections (ALMANAC_DB_POOL) between its three pools: statements by key, list
 * statements (planned for their values on every call), and the one connection its writes take turns on (writes are
 * serialised, batch after batch). A fifth for lists, at least one each: costly lists queue among themselves and
 * never hold every connection a read by id needs, nor every core of the database. With a third (four of ten), 16
 * clients sending the costliest lists got 13.3 a second against 11.8 with two, and a read by id beside them waited
 * for the database's cores: p99 476 ms against 137 (one machine of two cores).
 */
export function splitPool(total: number): { keys: number; lists: number; writes: number } {
  const lists = Math.max(1, Math.floor(total / 5));
  return { keys: Math.max(1, total - lists - 1), lists, writes: 1 };
}

/**
 * The socket of a client. node-postgres writes each statement to it as the statement is queried: corked, the
 * statements of several callers go in one write, and on a virtual machine each write to another process (which it
 * wakes) costs tens of microseconds of CPU on both sides. Not part of the client's typed interface (node-postgres 8).
 */
export function socketOf(client: pg.ClientBase): Socket {
  return (client as unknown as { connection: { stream: Socket } }).connection.stream;
}

/**
 * SQLSTATE classes and codes that mean "the database, not the request": connection lost, shutting down, overloaded;
 * and a role, password or database the server does not know (28000, 28P01, 3D000) or a right the role lacks (42501):
 * any of these may change while nodes run, and the database then refuses this node as a stopped one would.
 */
const UNAVAILABLE = new Set(['57P01', '57P02', '57P03', '53300', '08000', '08001', '08003', '08004', '08006', '08007', '08P01', '57014', '28000', '28P01', '3D000', '42501']);
/** TLS asked for and refused, or a certificate that does not verify (Node's codes): the connection cannot be made. */
const TLS_FAILURE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|SELF_SIGNED_CERT|DEPTH_ZERO_SELF_SIGNED_CERT|HOSTNAME_MISMATCH)/;
// ENOENT and EACCES: a socket directory's socket that is not there (the server is down, or restarting) or not ours to use
const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ENOENT', 'EACCES']);

/** Errors a transaction may simply run again for: serialisation failures and deadlocks. */
export function isRetryable(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return code === '40001' || code === '40P01';
}

/** The engine-neutral error for a driver error, or the error itself when the request caused it. */
export function classify(err: unknown): unknown {
  if (err instanceof DatabaseUnavailable || err instanceof StorageFull) return err;
  const e = err as { code?: string; message?: string } | null;
  const code = e?.code ?? '';
  if (code === '53100') return new StorageFull(undefined, { cause: err });
  if (UNAVAILABLE.has(code) || NETWORK.has(code)) return new DatabaseUnavailable(undefined, 2, { cause: err });
  const message = e?.message ?? '';
  // the pool's wait for one of its connections (all in use) ran out: node-postgres says only this
  if (message === 'timeout exceeded when trying to connect') return new DatabaseBusy({ cause: err });
  if (/Connection terminated|connection timeout|Client has encountered a connection error|Client was closed|not queryable|does not support SSL/i.test(message) || TLS_FAILURE.test(code)) {
    return new DatabaseUnavailable(undefined, 2, { cause: err });
  }
  return err;
}
