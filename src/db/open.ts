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

/** Where the data is, for logs and messages (never a password). */
export function describeDatabase(config: Pick<Config, 'databaseUrl' | 'dbPath'>): string {
  if (!config.databaseUrl) return config.dbPath;
  const url = new URL(config.databaseUrl);
  return `postgres://${url.username ? `${decodeURIComponent(url.username)}@` : ''}${url.host}${url.pathname}`;
}
