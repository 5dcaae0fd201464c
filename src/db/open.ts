import { parse as parseConnectionString } from 'pg-connection-string';
import type { Config } from '../config.js';
import type { Engine } from './engine.js';
import { PostgresEngine } from './postgres/engine.js';
import { SqliteEngine } from './sqlite/engine.js';

/**
 * The engine the configuration names, its database migrated: PostgreSQL when ALMANAC_DATABASE_URL is set, else the
 * SQLite file ALMANAC_DB (created when missing).
 */
export function openEngine(config: Pick<Config, 'databaseUrl' | 'dbPath' | 'dbPool' | 'readThreads' | 'authTrackedPairs' | 'sqliteMmapMb'>): Promise<Engine> {
  if (config.databaseUrl) return PostgresEngine.open(config.databaseUrl, { pool: config.dbPool, trackedPairs: config.authTrackedPairs });
  return SqliteEngine.open(config.dbPath, { readThreads: config.readThreads, trackedPairs: config.authTrackedPairs, mmapBytes: config.sqliteMmapMb * 1024 * 1024 });
}

/**
 * Where the data is, for logs and messages (never a password). The URL is read as the driver reads it: a server on
 * the same machine is often reached through its socket directory (`postgres://almanac@/calendar?host=/run/postgresql`),
 * a form the URL class refuses (a user without a host).
 */
export function describeDatabase(config: Pick<Config, 'databaseUrl' | 'dbPath'>): string {
  if (!config.databaseUrl) return config.dbPath;
  const { user, host, port, database } = parseConnectionString(config.databaseUrl);
  const who = user ? `${user}@` : '';
  if (host?.startsWith('/')) return `postgres://${who}/${database ?? ''}?host=${host}${port ? `&port=${port}` : ''}`;
  return `postgres://${who}${host?.includes(':') ? `[${host}]` : (host ?? '')}${port ? `:${port}` : ''}/${database ?? ''}`;
}
