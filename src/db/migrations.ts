import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export class MigrationError extends Error {}

/**
 * The numbered migrations `NNNN_name.sql` of an engine, in order; numbers must run 1, 2, 3… without gaps. Both
 * engines have the same numbers: version N means the same schema on either.
 */
export function loadMigrations(dir: string): Migration[] {
  const migrations = readdirSync(dir)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({ version: Number(file.slice(0, 4)), name: file.slice(5, -4), sql: readFileSync(join(dir, file), 'utf8') }));
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new MigrationError(`migration ${m.version}_${m.name} is out of sequence (expected ${i + 1})`);
  });
  return migrations;
}
