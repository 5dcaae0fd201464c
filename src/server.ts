import { createServer, STATUS_CODES, type RequestListener, type Server } from 'node:http';
import { createApp } from './app.js';
import type { Config } from './config.js';
import { AuthFailuresRepository, lockoutPathOf } from './db/authFailures.js';
import { openDatabase, type Db } from './db/connection.js';
import { storageFault } from './db/faults.js';
import { migrate } from './db/migrate.js';
import { UsersRepository } from './db/users.js';
import { ensureBootstrapAdmin } from './domain/passwords.js';
import { createLogger, type Logger } from './log.js';

/** A raw answer in WordPress's error shape, for what Node's parser handles before any request reaches the app. */
function errorAnswer(status: number, code: string, message: string): string {
  const body = JSON.stringify({ code, message, data: { status } });
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=UTF-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/**
 * The HTTP server of an app: URLs and headers up to 64 KiB (a long search or slug is the app's to refuse, with a
 * WordPress error), and requests Node's parser refuses still answered in WordPress's error shape. A client that has
 * not sent its headers within ALMANAC_HEADERS_TIMEOUT, or its whole request within ALMANAC_REQUEST_TIMEOUT, gets 408
 * and is cut off, so slow clients cannot hold connections (a body trickled a byte at a time, say); Node checks the
 * timeouts once a second. Idle kept-alive connections close after 65 s (longer than the 60 s load balancers keep).
 */
export function createHttpServer(listener: RequestListener, timeouts: Pick<Config, 'headersTimeoutMs' | 'requestTimeoutMs'>): Server {
  const server = createServer({
    maxHeaderSize: 64 * 1024,
    headersTimeout: timeouts.headersTimeoutMs,
    requestTimeout: timeouts.requestTimeoutMs,
    connectionsCheckingInterval: 1000,
  }, listener);
  server.keepAliveTimeout = 65_000;
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    // an answer already begun cannot be followed by another one
    const answering = (socket as typeof socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (!socket.writable || answering?.headersSent) return socket.destroy();
    const answer = err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? errorAnswer(408, 'rest_request_timeout', 'The request was not received in time.')
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? errorAnswer(431, 'rest_request_too_large', 'The request line or headers are larger than this server accepts.')
        : errorAnswer(400, 'rest_invalid_request', 'The request is not valid HTTP.');
    // closed for good once sent: a slow client must not keep the connection half open
    socket.end(answer, () => socket.destroy());
  });
  return server;
}

/** The server cannot start as configured; its message is one line for the operator. */
export class StartupError extends Error {}

/** A refusal to start, for an error met while opening or first writing the database; null for any other error. */
function unusable(dbPath: string, err: unknown): StartupError | null {
  const code = String((err as { code?: unknown } | null)?.code ?? '');
  if (!code.startsWith('SQLITE_') && !['EACCES', 'EPERM', 'EROFS', 'ENOSPC'].includes(code)) return null;
  const reason = (err as Error).message;
  return new StartupError(storageFault(err) === 'full'
    ? `the database ${dbPath} has no storage left (${reason}): free some space on its disk`
    : `the database ${dbPath} cannot be written (${reason}): Almanac writes the file and creates files beside it in its folder (-wal, -shm, -lockout); make both writable by this process`);
}

/**
 * Migrates the database, ensures the bootstrap administrator and checks that the database and the failure counts
 * beside it can be written (once, before any worker serves). A file or folder that cannot be written refuses the
 * start with one line (StartupError), rather than a server that answers reads and fails every write.
 */

/** The address cannot be listened on: said in one line, without a stack (exit status 1). */
export class ListenError extends Error {}

function listenError(err: NodeJS.ErrnoException, config: Config): Error {
  const where = `${config.host}:${config.port}`;
  if (err.code === 'EADDRINUSE') return new ListenError(`cannot listen on ${where}: another process is using that port (EADDRINUSE; choose another with PORT)`);
  if (err.code === 'EACCES') return new ListenError(`cannot listen on ${where}: not allowed to use that port (EACCES; choose one above 1023 with PORT)`);
  if (err.code === 'EADDRNOTAVAIL') return new ListenError(`cannot listen on ${where}: this machine has no such address (EADDRNOTAVAIL; set HOST)`);
  return err;
}

export async function prepareDatabase(config: Config, log: Logger): Promise<void> {
  let db: Db;
  try {
    db = openDatabase(config.dbPath);
  } catch (err) {
    throw unusable(config.dbPath, err) ?? err;
  }
  try {
    const applied = migrate(db);
    if (applied.length > 0) log.info('database migrated', { db: config.dbPath, versions: applied });
    if (config.adminUser && config.adminPassword) {
      const outcome = await ensureBootstrapAdmin(new UsersRepository(db), config.adminUser, config.adminPassword);
      if (outcome !== 'unchanged') log.info('bootstrap administrator ' + outcome, { login: config.adminUser });
    }
    // a write that changes nothing: an existing, migrated database may have needed no write so far
    db.pragma(`user_version = ${db.pragma('user_version', { simple: true }) as number}`);
    new AuthFailuresRepository(lockoutPathOf(config.dbPath), config.authTrackedPairs).close();
  } catch (err) {
    throw unusable(config.dbPath, err) ?? err;
  } finally {
    db.close();
  }
}

/** Serves Almanac on the configured address; stops cleanly on SIGTERM/SIGINT (requests in flight finish first). */
export async function serve(config: Config, options: { prepared?: boolean } = {}): Promise<Server> {
  const log = createLogger(config.logLevel);
  if (!options.prepared) await prepareDatabase(config, log);
  const db = openDatabase(config.dbPath);
  const app = await createApp({ db, config, log });
  const server = createHttpServer(app.listener, config);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(listenError(err, config)));
    server.listen(config.port, config.host, resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  log.info('almanac listening', { url: `http://${config.host}:${port}/wp-json/tribe/events/v1`, db: config.dbPath, pid: process.pid });

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
      app.close();
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  return server;
}
