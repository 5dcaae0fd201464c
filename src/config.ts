import { parse as parseConnectionString } from 'pg-connection-string';
import { isLogin, LOGIN_RULE } from './domain/capabilities.js';
import { withoutTrailing } from './domain/text.js';
import { parseZone } from './domain/dates.js';
import type { LogLevel } from './log.js';

/** Almanac's configuration; every field comes from an optional environment variable (README "Configuration"). */
export interface Config {
  port: number;
  host: string;
  dbPath: string;
  /** `postgres://…` selects the PostgreSQL engine (ALMANAC_DATABASE_URL); null: SQLite at `dbPath`. */
  databaseUrl: string | null;
  /** Connections each process may hold to PostgreSQL (ALMANAC_DB_POOL). */
  dbPool: number;
  /** Worker threads each SQLite process runs costly reads in (ALMANAC_READ_THREADS; 0: on the event loop). */
  readThreads: number;
  /** MiB of the SQLite file each read connection maps into memory (ALMANAC_SQLITE_MMAP_MB; 0: none). */
  sqliteMmapMb: number;
  /** Site timezone as given: an IANA id or `UTC±N`. */
  siteTimezone: string;
  /** Site URL for absolute links, without a trailing slash; null → from the request's Host header. */
  publicUrl: string | null;
  trustProxy: boolean;
  adminUser: string | null;
  adminPassword: string | null;
  geofenceKm: number;
  workers: number;
  /** Starts in a row that may fail in every worker place before the primary gives up (ALMANAC_WORKER_START_ATTEMPTS). */
  workerStartAttempts: number;
  bodyLimitBytes: number;
  /** A client's time to send its headers (ALMANAC_HEADERS_TIMEOUT) and its whole request (ALMANAC_REQUEST_TIMEOUT). */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** How long a connection may neither send nor take anything while a request is answered (ALMANAC_SEND_TIMEOUT). */
  sendTimeoutMs: number;
  /** `*` echoes any Origin; otherwise the allowed origins. */
  corsOrigins: '*' | string[];
  authMaxFailures: number;
  authLockSeconds: number;
  /** Scrypt checks each worker runs at once (ALMANAC_AUTH_SCRYPT_CONCURRENCY), and how many more may wait. */
  authScryptConcurrency: number;
  authScryptQueue: number;
  /** The most (address, account) pairs whose failures are kept (ALMANAC_AUTH_TRACKED_PAIRS). */
  authTrackedPairs: number;
  /** Bytes of serialised answers the response cache of each worker may hold (ALMANAC_CACHE_MB; 0 turns it off). */
  cacheBytes: number;
  logLevel: LogLevel;
  /** Check every handler response against the spec (on in tests; costs time in production). */
  validateResponses: boolean;
}

export class ConfigError extends Error {}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, not "${raw}"`);
  }
  return Number(raw);
}

/** `1mb`, `512kb`, `2048` (bytes). */
export function parseByteSize(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i.exec(text.trim());
  if (!m) return null;
  const unit = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[(m[2] ?? 'b').toLowerCase() as 'b'];
  return Math.floor(Number(m[1]) * unit);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const timezone = env.ALMANAC_TIMEZONE || 'UTC+0';
  if (!parseZone(timezone)) throw new ConfigError(`ALMANAC_TIMEZONE must be an IANA timezone or UTC±N, not "${timezone}"`);

  let publicUrl: string | null = null;
  if (env.ALMANAC_PUBLIC_URL) {
    let url: URL;
    try {
      url = new URL(env.ALMANAC_PUBLIC_URL);
    } catch {
      throw new ConfigError(`ALMANAC_PUBLIC_URL must be an absolute URL, not "${env.ALMANAC_PUBLIC_URL}"`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError('ALMANAC_PUBLIC_URL must be http or https');
    publicUrl = withoutTrailing(url.origin + url.pathname, '/');
  }

  const bodyLimit = parseByteSize(env.ALMANAC_BODY_LIMIT || '1mb');
  if (bodyLimit === null || bodyLimit < 1) throw new ConfigError(`ALMANAC_BODY_LIMIT must be a size such as 1mb or 512kb, not "${env.ALMANAC_BODY_LIMIT}"`);

  const geofence = Number(env.ALMANAC_GEOFENCE_KM || '40.2');
  if (!Number.isFinite(geofence) || geofence <= 0) throw new ConfigError(`ALMANAC_GEOFENCE_KM must be a positive number, not "${env.ALMANAC_GEOFENCE_KM}"`);

  const headersTimeout = integer(env, 'ALMANAC_HEADERS_TIMEOUT', 20, 1, 3600);
  const requestTimeout = integer(env, 'ALMANAC_REQUEST_TIMEOUT', 60, 1, 3600);
  if (headersTimeout > requestTimeout) {
    throw new ConfigError(`ALMANAC_HEADERS_TIMEOUT (${headersTimeout}) cannot be longer than ALMANAC_REQUEST_TIMEOUT (${requestTimeout}): the headers are part of the request`);
  }

  const workersRaw = env.ALMANAC_WORKERS || '1';
  const workers = workersRaw === 'auto' ? 0 : integer(env, 'ALMANAC_WORKERS', 1, 1, 256);

  const logLevel = (env.ALMANAC_LOG_LEVEL || 'info') as LogLevel;
  if (!['debug', 'info', 'warn', 'error', 'silent'].includes(logLevel)) {
    throw new ConfigError(`ALMANAC_LOG_LEVEL must be debug, info, warn, error or silent, not "${logLevel}"`);
  }

  const databaseUrl = env.ALMANAC_DATABASE_URL || null;
  if (databaseUrl !== null && (!/^postgres(ql)?:\/\//.test(databaseUrl) || !readableConnectionString(databaseUrl))) {
    throw new ConfigError('ALMANAC_DATABASE_URL must be a PostgreSQL URL such as postgres://user:password@host:5432/almanac (or postgres://user@/almanac?host=/var/run/postgresql for a socket directory)');
  }

  const cors = (env.ALMANAC_CORS_ORIGINS ?? '*').trim();
  const adminUser = env.ALMANAC_ADMIN_USER || null;
  const adminPassword = env.ALMANAC_ADMIN_PASSWORD || null;
  if ((adminUser === null) !== (adminPassword === null)) {
    throw new ConfigError('ALMANAC_ADMIN_USER and ALMANAC_ADMIN_PASSWORD go together: set both or neither');
  }
  if (adminUser !== null && !isLogin(adminUser)) throw new ConfigError(`ALMANAC_ADMIN_USER must be a login of ${LOGIN_RULE}, as \`almanac user add\` takes`);

  return {
    port: integer(env, 'PORT', 8080, 0, 65535),
    host: env.HOST || '127.0.0.1',
    dbPath: env.ALMANAC_DB || './data/almanac.sqlite',
    databaseUrl,
    dbPool: integer(env, 'ALMANAC_DB_POOL', 10, 1, 1000),
    readThreads: integer(env, 'ALMANAC_READ_THREADS', 2, 0, 64),
    sqliteMmapMb: integer(env, 'ALMANAC_SQLITE_MMAP_MB', 0, 0, 1_048_576),
    siteTimezone: timezone,
    publicUrl,
    trustProxy: env.ALMANAC_TRUST_PROXY === '1',
    adminUser,
    adminPassword,
    geofenceKm: geofence,
    workers,
    workerStartAttempts: integer(env, 'ALMANAC_WORKER_START_ATTEMPTS', 5, 1, 1000),
    bodyLimitBytes: bodyLimit,
    headersTimeoutMs: headersTimeout * 1000,
    requestTimeoutMs: requestTimeout * 1000,
    sendTimeoutMs: integer(env, 'ALMANAC_SEND_TIMEOUT', 60, 1, 3600) * 1000,
    corsOrigins: cors === '*' ? '*' : cors.split(',').map((o) => o.trim()).filter(Boolean),
    authMaxFailures: integer(env, 'ALMANAC_AUTH_MAX_FAILURES', 10, 1, 1_000_000),
    authLockSeconds: integer(env, 'ALMANAC_AUTH_LOCK_SECONDS', 900, 1, 31_536_000),
    authScryptConcurrency: integer(env, 'ALMANAC_AUTH_SCRYPT_CONCURRENCY', 1, 1, 64),
    authScryptQueue: integer(env, 'ALMANAC_AUTH_SCRYPT_QUEUE', 32, 0, 100_000),
    authTrackedPairs: integer(env, 'ALMANAC_AUTH_TRACKED_PAIRS', 100_000, 10, 100_000_000),
    cacheBytes: integer(env, 'ALMANAC_CACHE_MB', 16, 0, 65_536) * 1024 * 1024,
    logLevel,
    validateResponses: false,
  };
}

/** Whether the driver can read a connection URL (it reads libpq's forms, such as a socket directory as `host`). */
function readableConnectionString(url: string): boolean {
  try {
    parseConnectionString(url);
    return true;
  } catch {
    return false;
  }
}
