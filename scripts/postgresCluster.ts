/**
 * A throwaway PostgreSQL cluster for the tests and the benchmark: `initdb` into a temporary folder, `pg_ctl start`
 * on a free loopback port (Unix socket in the same folder), a superuser `almanac` trusted on loopback only, and
 * `stop()` that removes everything. PostgreSQL refuses to run as root, so as root (CI) the cluster belongs to the
 * `postgres` system account that Debian's package creates and is started through `runuser`.
 *
 * The binaries come from Debian's `postgresql` package (`/usr/lib/postgresql/<version>/bin`, newest version first),
 * or from `ALMANAC_PG_BINDIR`, or from the PATH.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

export interface Cluster {
  /** A superuser connection URL to the `postgres` database (`postgres://almanac@127.0.0.1:<port>/postgres`). */
  url: string;
  port: number;
  dir: string;
  /** The URL of another database of the same cluster. */
  urlOf(database: string): string;
  /** Stops the server the way a crash would (`immediate`) or cleanly (`fast`), keeping the data. */
  stopServer(mode?: 'fast' | 'immediate'): void;
  /** Starts the server again on the same port and data. */
  startServer(): void;
  /** Stops the server and removes the cluster. */
  stop(): void;
}

export class PostgresUnavailable extends Error {}

/** The folder holding `initdb` and `pg_ctl`, or null when PostgreSQL's server binaries are not installed. */
export function findBinDir(): string | null {
  const configured = process.env.ALMANAC_PG_BINDIR;
  if (configured) return existsSync(join(configured, 'initdb')) ? configured : null;
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
    for (const v of versions) if (existsSync(join(root, v, 'bin', 'initdb'))) return join(root, v, 'bin');
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  const found = which.status === 0 ? which.stdout.trim() : '';
  return found ? found.slice(0, found.lastIndexOf('/')) : null;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
    s.once('error', reject);
  });
}

/** Settings of a throwaway cluster: small, quiet, and as durable as production (`fsync`, `synchronous_commit` on). */
const SETTINGS: Record<string, string> = {
  listen_addresses: '127.0.0.1',
  max_connections: '200',
  shared_buffers: '128MB',
  logging_collector: 'off',
  log_min_messages: 'warning',
  // several test files each start their own servers against one cluster: no autovacuum surprises in query plans
  autovacuum_naptime: '10s',
};

export async function startCluster(options: { settings?: Record<string, string> } = {}): Promise<Cluster> {
  const bin = findBinDir();
  if (!bin) throw new PostgresUnavailable("PostgreSQL's server is not installed (Debian: apt-get install postgresql), or set ALMANAC_PG_BINDIR");
  const asRoot = userInfo().uid === 0;
  const dir = mkdtempSync(join(tmpdir(), 'almanac-pg-'));
  const data = join(dir, 'data');
  let owner: { uid: number; gid: number } | null = null;
  if (asRoot) {
    const ids = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    if (ids.status !== 0) throw new PostgresUnavailable('running as root, and there is no `postgres` account to run PostgreSQL as');
    owner = { uid: Number(ids.stdout.trim()), gid: Number(gid.stdout.trim()) };
    chownSync(dir, owner.uid, owner.gid);
    chmodSync(dir, 0o700);
  }
  // as root, through runuser (util-linux, on every Debian) as the postgres account; otherwise as ourselves
  const exec = (tool: string, args: string[]) => {
    const [command, all] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]] : [join(bin, tool), args];
    try {
      return execFileSync(command, all, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', cwd: dir });
    } catch (err) {
      const e = err as { stderr?: string; stdout?: string; message: string };
      throw new Error(`${tool} failed: ${(e.stderr || e.stdout || e.message).trim()}`);
    }
  };
  exec('initdb', ['-D', data, '-U', 'almanac', '-A', 'trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync']);
  const port = await freePort();
  const settings = { ...SETTINGS, ...options.settings, port: String(port), unix_socket_directories: dir };
  const flags = Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`).join(' ');
  const log = join(dir, 'server.log');
  const startServer = () => {
    try {
      exec('pg_ctl', ['-D', data, '-l', log, '-o', flags, '-w', '-t', '60', 'start']);
    } catch (err) {
      const tail = existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-15).join('\n') : '';
      throw new Error(`${(err as Error).message}\n${tail}`);
    }
  };
  const stopServer = (mode: 'fast' | 'immediate' = 'fast') => {
    exec('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
  };
  startServer();
  const urlOf = (database: string) => `postgres://almanac@127.0.0.1:${port}/${database}`;
  let stopped = false;
  return {
    url: urlOf('postgres'),
    port,
    dir,
    urlOf,
    stopServer,
    startServer,
    stop: () => {
      if (stopped) return;
      stopped = true;
      try {
        stopServer('immediate');
      } catch {
        // already down
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
