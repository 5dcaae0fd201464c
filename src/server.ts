import { createServer, STATUS_CODES, type RequestListener, type Server } from 'node:http';
import { createApp } from './app.js';
import type { Config } from './config.js';
import type { Engine } from './db/engine.js';
import { describeDatabase, openEngine } from './db/open.js';
import { storageFault } from './db/faults.js';
import { DatabaseUnavailable } from './errors.js';
import { ensureBootstrapAdmin } from './domain/passwords.js';
import { createLogger, type Logger } from './log.js';
import { limitHeapGrowth } from './memory.js';
import { oneRequestAtATime } from './http/pipelining.js';

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
 * A connection that neither sends nor takes anything for ALMANAC_SEND_TIMEOUT while a request is answered is closed,
 * as nginx's send_timeout does: a client that stops reading an answer larger than the connection's buffers held it,
 * and its memory, for good. The requests a connection pipelines are answered one at a time (oneRequestAtATime).
 */
export function createHttpServer(listener: RequestListener, timeouts: Pick<Config, 'headersTimeoutMs' | 'requestTimeoutMs' | 'sendTimeoutMs'>): Server {
  const server = createServer({
    maxHeaderSize: 64 * 1024,
    headersTimeout: timeouts.headersTimeoutMs,
    requestTimeout: timeouts.requestTimeoutMs,
    connectionsCheckingInterval: 1000,
  }, oneRequestAtATime(listener));
  server.keepAliveTimeout = 65_000;
  // Node's inactivity timer of each connection, replaced by the keep-alive one between requests; closed when it fires
  server.timeout = timeouts.sendTimeoutMs;
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

/**
 * A refusal to start (of the server or a command), for an error met while opening or first writing the database; null
 * for any other error.
 */
export function unusable(config: Config, err: unknown): StartupError | null {
  const where = describeDatabase(config);
  if (err instanceof DatabaseUnavailable) {
    const cause = err.cause as (Error & { code?: string }) | undefined;
    if (cause?.code === '42501') {
      return new StartupError(`the database ${where} refuses its role (${cause.message}): the role of ALMANAC_DATABASE_URL must own the database, or have CREATE on its schema and every right on its tables`);
    }
    return new StartupError(`the database ${where} cannot be reached (${cause?.message ?? err.message}): check ALMANAC_DATABASE_URL and that the server runs`);
  }
  const code = String((err as { code?: unknown } | null)?.code ?? '');
  if (!code.startsWith('SQLITE_') && !['EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'ENOENT', 'ENOTDIR'].includes(code)) return null;
  const reason = (err as Error).message;
  if (code === 'SQLITE_NOTADB') return new StartupError(`${where} is not a SQLite database (${reason}): set ALMANAC_DB to Almanac's database file, or to a path where none exists yet to create one`);
  if (storageFault(err) === 'damaged') return new StartupError(`the database ${where} is damaged (${reason}): restore it from a backup (almanac restore <file>)`);
  return new StartupError(storageFault(err) === 'full'
    ? `the database ${where} has no storage left (${reason}): free some space on its disk`
    : `the database ${where} cannot be written (${reason}): Almanac writes the file and creates files beside it in its folder (-wal, -shm, -lockout); make both writable by this process`);
}

/** The address cannot be listened on: said in one line, without a stack (exit status 1). */
export class ListenError extends Error {}

function listenError(err: NodeJS.ErrnoException, config: Config): Error {
  const where = `${config.host}:${config.port}`;
  if (err.code === 'EADDRINUSE') return new ListenError(`cannot listen on ${where}: another process is using that port (EADDRINUSE; choose another with PORT)`);
  if (err.code === 'EACCES') return new ListenError(`cannot listen on ${where}: not allowed to use that port (EACCES; choose one above 1023 with PORT)`);
  if (err.code === 'EADDRNOTAVAIL') return new ListenError(`cannot listen on ${where}: this machine has no such address (EADDRNOTAVAIL; set HOST)`);
  // a HOST that is neither an address nor a name the resolver knows (999.1.1.1, a typo)
  if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN' || err.code === 'EAI_FAIL') {
    return new ListenError(`cannot listen on ${where}: no address goes by that name (${err.code}; set HOST to an address of this machine)`);
  }
  return err;
}

/**
 * Migrates the database, ensures the bootstrap administrator and checks that the database and the failure counts
 * beside it can be written (once, before any worker serves). A file or folder that cannot be written refuses the
 * start with one line (StartupError), rather than a server that answers reads and fails every write.
 */
export async function prepareDatabase(config: Config, log: Logger): Promise<void> {
  let engine: Engine;
  try {
    engine = await openMigrated(config, log);
  } catch (err) {
    throw unusable(config, err) ?? err;
  }
  try {
    await bootstrap(engine, config, log);
    // a write that changes nothing: an existing, migrated database may have needed no write so far
    await engine.checkWritable();
  } catch (err) {
    throw unusable(config, err) ?? err;
  } finally {
    await engine.close();
  }
}

/** The configured engine, its database migrated (and the migrations applied logged). */
async function openMigrated(config: Config, log: Logger): Promise<Engine> {
  const engine = await openEngine(config);
  if (engine.applied.length > 0) log.info('database migrated', { db: describeDatabase(config), versions: engine.applied });
  return engine;
}

async function bootstrap(engine: Engine, config: Config, log: Logger): Promise<void> {
  if (config.adminUser && config.adminPassword) {
    const outcome = await ensureBootstrapAdmin(engine, config.adminUser, config.adminPassword);
    if (outcome !== 'unchanged') log.info('bootstrap administrator ' + outcome, { login: config.adminUser });
  }
}

/** Serves Almanac on the configured address; stops cleanly on SIGTERM/SIGINT (requests in flight finish first). */
export async function serve(config: Config, options: { prepared?: boolean } = {}): Promise<Server> {
  const heapGrowingPercent = limitHeapGrowth();
  const log = createLogger(config.logLevel);
  if (!options.prepared) await prepareDatabase(config, log);
  const engine = await openEngine(config);
  const app = await createApp({ engine, config, log });
  const server = createHttpServer(app.listener, config);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(listenError(err, config)));
    server.listen(config.port, config.host, resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  log.info('almanac listening', { url: `http://${config.host}:${port}/wp-json/tribe/events/v1`, db: describeDatabase(config), engine: engine.kind, pid: process.pid, heapGrowingPercent });

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    // every connection closed, and every request taken in answered (its client may have gone): then the database
    server.close(() => {
      void app.settled().then(() => engine.close()).finally(() => process.exit(0));
    });
    server.closeIdleConnections();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  return server;
}
