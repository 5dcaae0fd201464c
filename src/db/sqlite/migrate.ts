import { join } from 'node:path';
import { projectRoot } from '../../paths.js';
import { loadMigrations, MigrationError, type Migration } from '../migrations.js';
import type { Db } from './connection.js';

export const sqliteMigrationsDir = join(projectRoot, 'src', 'db', 'sqlite', 'migrations');

/** The schema version of a database (`PRAGMA user_version`; 0 for an empty one). */
export function schemaVersionOf(db: Db): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/**
 * Brings the database to the newest schema: each pending migration runs in its own transaction together with the
 * `user_version` bump, so a crash leaves the database at a whole version. Refuses a database newer than this code.
 * Returns the versions applied.
 */
export function migrate(db: Db, migrations: Migration[] = loadMigrations(sqliteMigrationsDir)): number[] {
  const latest = migrations.length;
  const current = schemaVersionOf(db);
  if (current > latest) {
    throw new MigrationError(`the database is at schema version ${current}, newer than this Almanac (${latest}); upgrade Almanac`);
  }
  const applied: number[] = [];
  for (const m of migrations.slice(current)) {
    const ran = db.transaction(() => {
      // Re-read under the write lock: another process may have applied this migration since `current` was read.
      if (schemaVersionOf(db) >= m.version) return false;
      db.exec(m.sql);
      db.pragma(`user_version = ${m.version}`);
      return true;
    }).immediate();
    if (ran) applied.push(m.version);
  }
  return applied;
}
