import type pg from 'pg';
import { DatabaseUnavailable } from '../../errors.js';
import { TurnBatch, type Pending } from '../turnBatch.js';
import { classify, socketOf, type Queryable } from './connection.js';

/** The most statements of a turn one connection carries: more go on another, so the database's cores share them. */
export const STATEMENTS_PER_LANE = 16;

type Queued = Pending<pg.QueryConfig, pg.QueryResult>;

/**
 * The statements by key that one turn of the event loop asks for (every request of the turn reads its records, then
 * their links), sent together: up to STATEMENTS_PER_LANE on one pipelined connection of the pool, in one socket
 * write. Sent one by one, each statement was a write to the socket and a wake-up of a PostgreSQL backend, and on a
 * virtual machine each such system call costs tens of microseconds of CPU on both sides. Each statement keeps its
 * own answer and its own error (the extended protocol syncs after every statement); a connection that breaks fails
 * the statements it carries, and the pool replaces it.
 */
export class TurnLanes implements Queryable {
  private readonly turn = new TurnBatch<pg.QueryConfig, pg.QueryResult>((queued) => {
    for (let i = 0; i < queued.length; i += STATEMENTS_PER_LANE) {
      const lane = queued.slice(i, i + STATEMENTS_PER_LANE);
      this.send(lane).catch((err: unknown) => lane.forEach((statement) => statement.reject(err)));
    }
  });

  /** `pool`: connections opened with `pipeline` (openPool), so a connection sends a statement without waiting. */
  constructor(private readonly pool: pg.Pool) {}

  query<R extends pg.QueryResultRow = pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<R>>;
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
  query<R extends pg.QueryResultRow>(configOrText: pg.QueryConfig | string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    const config = typeof configOrText === 'string' ? { text: configOrText, values } : configOrText;
    return this.turn.add(config) as Promise<pg.QueryResult<R>>;
  }

  private async send(statements: Queued[]): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      for (const statement of statements) statement.reject(err);
      return;
    }
    let broken: Error | undefined;
    const socket = socketOf(client);
    socket.cork();
    const answered = statements.map((statement) => client.query(statement.call).then(statement.resolve, (err: unknown) => {
      if (classify(err) instanceof DatabaseUnavailable) broken = err as Error;
      statement.reject(err);
    }));
    socket.uncork();
    await Promise.all(answered);
    client.release(broken);
  }
}
