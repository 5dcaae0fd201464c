import { createServer, type Server } from 'node:http';
import { createApp } from './app.js';
import type { Config } from './config.js';
import { openDatabase } from './db/connection.js';
import { migrate } from './db/migrate.js';
import { UsersRepository } from './db/users.js';
import { ensureBootstrapAdmin } from './domain/passwords.js';
import { createLogger, type Logger } from './log.js';

/** Migrates the database and ensures the bootstrap administrator (once, before any worker serves). */
export async function prepareDatabase(config: Config, log: Logger): Promise<void> {
  const db = openDatabase(config.dbPath);
  try {
    const applied = migrate(db);
    if (applied.length > 0) log.info('database migrated', { db: config.dbPath, versions: applied });
    if (config.adminUser && config.adminPassword) {
      const outcome = await ensureBootstrapAdmin(new UsersRepository(db), config.adminUser, config.adminPassword);
      if (outcome !== 'unchanged') log.info('bootstrap administrator ' + outcome, { login: config.adminUser });
    }
  } finally {
    db.close();
  }
}

/** Serves Almanac on the configured address; stops cleanly on SIGTERM/SIGINT (requests in flight finish first). */
export async function serve(config: Config, options: { prepared?: boolean } = {}): Promise<Server> {
  const log = createLogger(config.logLevel);
  if (!options.prepared) await prepareDatabase(config, log);
  const db = openDatabase(config.dbPath);
  const { koa } = await createApp({ db, config, log });
  const server = createServer(koa.callback());
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  log.info('almanac listening', { url: `http://${config.host}:${port}/wp-json/tribe/events/v1`, db: config.dbPath });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    server.close(() => {
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.close();
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  return server;
}
