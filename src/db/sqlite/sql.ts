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
