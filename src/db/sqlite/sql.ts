import type { Statement } from 'better-sqlite3';
import type { Db } from './connection.js';

/**
 * Prepared statements for SQL built from a bounded set of filter combinations: each distinct text is prepared
 * once and reused, so list queries never re-parse SQL per request.
 */
export class StatementCache {
  private readonly statements = new Map<string, Statement>();
  constructor(private readonly db: Db) {}

  get<Row>(sql: string): Statement<unknown[], Row> {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = this.db.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt as Statement<unknown[], Row>;
  }
}

/** `EXPLAIN QUERY PLAN` of a prepared statement (tests check that lookups read an index). */
export function explainStatement(db: Db, statement: Statement, ...params: unknown[]): string[] {
  return db.prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${statement.source}`).all(...params).map((r) => r.detail);
}

/**
 * A statement of many columns run in raw mode, each row made an object by a literal compiled once from its column
 * names (a later column of a name wins, as in better-sqlite3's own rows). better-sqlite3 builds a row object key by
 * key through V8's API: that was most of the cost of reading ten events with their details (82 µs, 50 this way).
 */
export function objectRows<P extends object, R>(statement: Statement<[P], R>): (params: P) => R[] {
  const raw = statement.raw(true);
  const names = raw.columns().map((c) => c.name);
  // a column name is written into the code as a JSON string literal, so it cannot be anything but a key
  const build = new Function('r', `return {${names.map((name, i) => `${JSON.stringify(name)}: r[${i}]`).join(', ')}};`) as (row: unknown[]) => R;
  return (params) => (raw.all(params) as unknown as unknown[][]).map(build);
}
