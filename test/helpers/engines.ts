import Database from 'better-sqlite3';
import pg from 'pg';
import { inject } from 'vitest';
import { lockoutPathOf } from '../../src/db/sqlite/authFailures.js';
import { openDatabase } from '../../src/db/sqlite/connection.js';

/** The engine the tests run against: the vitest project sets it (README "Development"). */
export const TEST_ENGINE: 'sqlite' | 'postgres' = process.env.ALMANAC_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The superuser URL of the throwaway PostgreSQL cluster (test/setup/postgres.ts), for the postgres project. */
    postgresUrl: string;
  }
}

/** The name of the migrated database each test database is copied from (test/setup/postgres.ts). */
export const TEMPLATE_DATABASE = 'almanac_template';

/** A fresh, migrated database for one test server: a file path for SQLite, or a database of the cluster. */
export interface TestDatabase {
  path: string;
  url: string | null;
  drop(): Promise<void>;
}

/** A database of its own for one test server (SQLite: `path`, created by the engine; PostgreSQL: a copy of the template). */
export async function testDatabase(path: string): Promise<TestDatabase> {
  if (TEST_ENGINE === 'sqlite') return { path, url: null, drop: async () => undefined };
  const cluster = inject('postgresUrl');
  const name = `almanac_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  await onCluster(cluster, `CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DATABASE}`);
  const url = new URL(cluster);
  url.pathname = `/${name}`;
  return {
    path,
    url: url.href,
    drop: async () => {
      await endPool(url.href);
      await onCluster(cluster, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/** A few connections per test database, kept between statements: a connection per statement made tests slow. */
const pools = new Map<string, pg.Pool>();
const poolOf = (url: string): pg.Pool => {
  let pool = pools.get(url);
  if (!pool) {
    pools.set(url, (pool = new pg.Pool({ connectionString: url, max: 2, idleTimeoutMillis: 5_000 })));
    // a connection still closing when its database is dropped hears PostgreSQL's farewell: expected, not a failure
    pool.on('error', () => undefined);
  }
  return pool;
};
async function endPool(url: string): Promise<void> {
  const pool = pools.get(url);
  pools.delete(url);
  await pool?.end();
}

async function onCluster(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

const WRITES = /^\s*(INSERT|UPDATE|DELETE|REPLACE)\b/i;
const CHANGE = `INSERT INTO change_log (changed_utc) VALUES (?)`;
const nowWire = () => new Date().toISOString().slice(0, 19).replace('T', ' ');

/** Runs one statement with `?` parameters; a write also appends to the change log in the same transaction. */
export async function rawSql<T>(database: TestDatabase, text: string, params: unknown[]): Promise<T[]> {
  const writes = WRITES.test(text);
  if (database.url === null) {
    // Almanac's own connection: the triggers of the dated search index call a function it registers
    const db = openDatabase(database.path);
    try {
      return db.transaction(() => {
        const statement = db.prepare(text);
        const rows = statement.reader ? (statement.all(...params) as T[]) : (statement.run(...params), []);
        if (writes) db.prepare(CHANGE).run(nowWire());
        return rows;
      }).immediate();
    } finally {
      db.close();
    }
  }
  const client = await poolOf(database.url).connect();
  const numbered = (sql: string) => {
    let n = 0;
    return sql.replace(/\?/g, () => `$${++n}`);
  };
  try {
    await client.query('BEGIN');
    const result = await client.query(numbered(text), params);
    if (writes) await client.query(numbered(CHANGE), [nowWire()]);
    await client.query('COMMIT');
    return result.rows as T[];
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/**
 * Runs one statement with `?` parameters on the failed-authentication counts of a database, as another process or
 * node reaches them: SQLite keeps them in a file of their own beside the database (`<database>-lockout`), PostgreSQL
 * in the table `auth_failures` of the shared database. No change-log row: no writer of Almanac leaves one for them.
 */
export async function lockoutSql<T>(database: Pick<TestDatabase, 'path' | 'url'>, text: string, params: unknown[]): Promise<T[]> {
  if (database.url === null) {
    const db = new Database(lockoutPathOf(database.path));
    try {
      db.pragma('busy_timeout = 5000');
      const statement = db.prepare(text);
      return statement.reader ? (statement.all(...params) as T[]) : (statement.run(...params), []);
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    let n = 0;
    return (await client.query(text.replace(/\?/g, () => `$${++n}`), params)).rows as T[];
  } finally {
    await client.end();
  }
}
