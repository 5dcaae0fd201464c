import { createServer, STATUS_CODES, type RequestListener, type Server } from 'node:http';
import { createApp } from './app.js';
import type { Config } from './config.js';
import { openDatabase } from './db/connection.js';
import { migrate } from './db/migrate.js';
import { UsersRepository } from './db/users.js';
import { ensureBootstrapAdmin } from './domain/passwords.js';
import { createLogger, type Logger } from './log.js';

/**
 * The HTTP server of an app: URLs and headers up to 64 KiB (a long search or slug is the app's to refuse, with a
 * WordPress error), and requests Node's parser refuses still answered in WordPress's error shape.
 */
export function createHttpServer(listener: RequestListener): Server {
  const server = createServer({ maxHeaderSize: 64 * 1024 }, listener);
  // kept-alive connections outlive a pause of the event loop (a long request, a slow machine); with Node's 5 s a
  // client could reuse a socket the server was closing at that moment and get ECONNRESET
  server.keepAliveTimeout = 65_000;
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return socket.destroy();
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
    const body = JSON.stringify(status === 431
      ? { code: 'rest_request_too_large', message: 'The request line or headers are larger than this server accepts.', data: { status } }
      : { code: 'rest_invalid_request', message: 'The request is not valid HTTP.', data: { status } });
    socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=UTF-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
  return server;
}

/** The address cannot be listened on: said in one line, without a stack (exit status 1). */
export class ListenError extends Error {}

function listenError(err: NodeJS.ErrnoException, config: Config): Error {
  const where = `${config.host}:${config.port}`;
  if (err.code === 'EADDRINUSE') return new ListenError(`cannot listen on ${where}: another process is using that port (choose another with PORT)`);
  if (err.code === 'EACCES') return new ListenError(`cannot listen on ${where}: not allowed to use that port (choose one above 1023 with PORT)`);
  if (err.code === 'EADDRNOTAVAIL') return new ListenError(`cannot listen on ${where}: this machine has no such address (set HOST)`);
  return err;
}

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
  const { listener } = await createApp({ db, config, log });
  const server = createHttpServer(listener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(listenError(err, config)));
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
