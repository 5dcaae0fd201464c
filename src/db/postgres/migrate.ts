import type pg from 'pg';
import { join } from 'node:path';
import { projectRoot } from '../../paths.js';
import { loadMigrations, MigrationError, type Migration } from '../migrations.js';
import { BACKFILLS } from './backfill.js';

export const postgresMigrationsDir = join(projectRoot, 'src', 'db', 'postgres', 'migrations');

/** The key of the session lock every node takes while it migrates: two nodes starting together migrate once. */
const MIGRATION_LOCK = 7_236_512_840;

/** The schema version of the database (0 for an empty one). */
export async function schemaVersion(db: pg.Pool | pg.PoolClient): Promise<number> {
  const { rows } = await db.query<{ version: number }>(
    `SELECT CASE WHEN to_regclass('almanac_schema') IS NULL THEN 0 ELSE (SELECT version FROM almanac_schema) END AS version`,
  );
  return rows[0]?.version ?? 0;
}

/**
 * Brings the database to the newest schema. Each pending migration runs in one transaction together with its step in
 * TypeScript, if it has one (backfill.ts), and the version bump, so a crash leaves the database at a whole version;
 * the whole run holds an advisory lock, so a second node starting at the same moment waits and then finds nothing
 * left to do. Refuses a database newer than this code. Returns the versions applied.
 */
export async function migratePostgres(pool: pg.Pool, migrations: Migration[] = loadMigrations(postgresMigrationsDir)): Promise<number[]> {
  const client = await pool.connect();
  try {
    // the pool's statement timeout guards requests; a migration rewrites whole tables and builds indexes (a minute
    // at a million events), and a node waiting for another's migration waits as long
    await client.query('SET statement_timeout = 0');
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query('CREATE TABLE IF NOT EXISTS almanac_schema (version integer NOT NULL)');
      await client.query('INSERT INTO almanac_schema (version) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM almanac_schema)');
      const current = await schemaVersion(client);
      if (current > migrations.length) {
        throw new MigrationError(`the database is at schema version ${current}, newer than this Almanac (${migrations.length}); upgrade Almanac`);
      }
      const applied: number[] = [];
      for (const m of migrations.slice(current)) {
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          await BACKFILLS[m.version]?.(client);
          await client.query('UPDATE almanac_schema SET version = $1', [m.version]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw new MigrationError(`migration ${m.version}_${m.name} failed: ${(err as Error).message}`);
        }
        applied.push(m.version);
      }
      return applied;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    // a connection that cannot take the pool's timeout back is not returned to the pool
    client.release(await client.query('RESET statement_timeout').then(() => undefined, (err: Error) => err));
  }
}
