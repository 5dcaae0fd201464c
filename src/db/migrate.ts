import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { migrationsDir } from '../paths.js';
import type { Db } from './connection.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export class MigrationError extends Error {}

/** The numbered migrations `NNNN_name.sql`, in order; numbers must run 1, 2, 3… without gaps. */
export function loadMigrations(dir: string = migrationsDir): Migration[] {
  const migrations = readdirSync(dir)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({ version: Number(file.slice(0, 4)), name: file.slice(5, -4), sql: readFileSync(join(dir, file), 'utf8') }));
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new MigrationError(`migration ${m.version}_${m.name} is out of sequence (expected ${i + 1})`);
  });
  return migrations;
}

/**
 * Brings the database to the newest schema: each pending migration runs in its own transaction together with the
 * `user_version` bump, so a crash leaves the database at a whole version. Refuses a database newer than this code.
 * Returns the versions applied.
 */
export function migrate(db: Db, migrations: Migration[] = loadMigrations()): number[] {
  const latest = migrations.length;
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > latest) {
    throw new MigrationError(`the database is at schema version ${current}, newer than this Almanac (${latest}); upgrade Almanac`);
  }
  const applied: number[] = [];
  for (const m of migrations.slice(current)) {
    const ran = db.transaction(() => {
      // Re-read under the write lock: another process may have applied this migration since `current` was read.
      if ((db.pragma('user_version', { simple: true }) as number) >= m.version) return false;
      db.exec(m.sql);
      db.pragma(`user_version = ${m.version}`);
      return true;
    }).immediate();
    if (ran) applied.push(m.version);
  }
  return applied;
}
