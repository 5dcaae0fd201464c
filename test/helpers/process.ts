import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';
import { rawSql, testDatabase, type TestDatabase } from './engines.js';
import { basic, checkAnswer, type Credentials } from './server.js';

/**
 * Almanac as a real process (`dist/src/main.js`, compiled by test/setup/build.ts) on a SQLite file (or on the
 * PostgreSQL database its environment names: see `engineDb`), for what only real processes show: crashes, restarts,
 * cluster workers, start-up refusals.
 */

const MAIN = join(projectRoot, 'dist', 'src', 'main.js');
export const ADMIN: Credentials = { login: 'admin', password: 'reliability-secret-1' };

const dirs: string[] = [];
const running = new Set<Almanac>();
const databases: TestDatabase[] = [];

/** A fresh folder for a database file, removed by `cleanUp`; returns the file's path. */
export function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), 'almanac-process-'));
  dirs.push(dir);
  return join(dir, 'almanac.sqlite');
}

/** Stops every server still running and removes every folder `tempDb` made and database `engineDb` made (for afterAll). */
export async function cleanUp(): Promise<void> {
  await Promise.all([...running].map((s) => s.stop()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  for (const database of databases.splice(0)) await database.drop();
}

/** A database for server processes (see `engineDb`). */
export interface ProcessDb {
  /** The SQLite file (`tempDb`), or, for PostgreSQL, a file path the server ignores. */
  dbPath: string;
  /** The environment that points a server at it: `{}` for SQLite, `ALMANAC_DATABASE_URL` for PostgreSQL. */
  env: Record<string, string>;
  /** Raw SQL on it, `?` for parameters, as `TestServer.sql` (a write appends to the change log). */
  sql<T = Record<string, unknown>>(text: string, ...params: unknown[]): Promise<T[]>;
}

/**
 * A fresh database of the engine under test for server processes, for tests of request handling that hold on either
 * engine: a SQLite file (`tempDb`) in the sqlite project, a new migrated database of the throwaway cluster in the
 * postgres project (pass `env` to `Almanac.start`). `cleanUp` drops it.
 */
export async function engineDb(): Promise<ProcessDb> {
  const database = await testDatabase(tempDb());
  databases.push(database);
  return {
    dbPath: database.path,
    env: database.url === null ? {} : { ALMANAC_DATABASE_URL: database.url },
    sql: <T>(text: string, ...params: unknown[]) => rawSql<T>(database, text, params),
  };
}

export interface SpawnOptions {
  /** Run it as that user (root can drop its rights so). */
  uid?: number;
  /** Options of Node itself, before the script. */
  nodeArgs?: string[];
}

export interface LogLine { msg: string; level: string; [field: string]: unknown }

/** Almanac as a child process on a SQLite file; `workers` > 1 runs node:cluster workers. */
export class Almanac {
  stderr = '';
  /** The exit code (or signal), once the process has exited. */
  readonly exited: Promise<number | NodeJS.Signals>;
  private alive = true;

  /** `http://127.0.0.1:port`, known once the server listens. */
  base = '';

  private constructor(readonly child: ChildProcess, readonly workers: number) {
    running.add(this);
    this.exited = new Promise((done) => child.once('exit', (code, signal) => {
      this.alive = false;
      running.delete(this);
      done(code ?? signal!);
    }));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    child.stdout!.resume();
  }

  /** Starts Almanac and resolves once every worker listens. */
  static async start(dbPath: string, workers = 1, env: Record<string, string> = {}, options: SpawnOptions = {}): Promise<Almanac> {
    const server = Almanac.spawn(dbPath, workers, env, options);
    await server.ready();
    return server;
  }

  /** Starts Almanac without waiting for anything. */
  static spawn(dbPath: string, workers = 1, env: Record<string, string> = {}, { uid, nodeArgs = [] }: SpawnOptions = {}): Almanac {
    const child = spawn(process.execPath, [...nodeArgs, MAIN], {
      env: {
        PATH: process.env.PATH ?? '',
        HOST: '127.0.0.1',
        // the kernel picks a free port when the server binds (workers share it), so no other socket can take it first
        PORT: '0',
        ALMANAC_DB: dbPath,
        ALMANAC_ADMIN_USER: ADMIN.login,
        ALMANAC_ADMIN_PASSWORD: ADMIN.password,
        ALMANAC_LOG_LEVEL: 'info',
        ALMANAC_WORKERS: String(workers),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      // its own process group, so cleanup can reach cluster workers too
      detached: true,
      ...(uid === undefined ? {} : { uid, gid: uid }),
    });
    return new Almanac(child, workers);
  }

  /** The JSON lines logged so far. */
  logs(): LogLine[] {
    return this.stderr.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as LogLine);
  }

  /** Resolves with the first log line `match` accepts, waiting up to `ms` for it. */
  waitForLog(match: (line: LogLine) => boolean, ms = 60_000): Promise<LogLine> {
    return new Promise((done, fail) => {
      const check = () => {
        const found = this.logs().find(match);
        if (!found) return false;
        clearTimeout(timer);
        this.child.stderr!.off('data', check);
        done(found);
        return true;
      };
      const timer = setTimeout(() => {
        this.child.stderr!.off('data', check);
        fail(new Error(`no such log line within ${ms} ms:\n${this.stderr}`));
      }, ms);
      this.child.stderr!.on('data', check);
      check();
    });
  }

  /** Pids of the processes that logged that they listen. */
  listeningPids(): number[] {
    return this.logs().filter((l) => l.msg === 'almanac listening').map((l) => l.pid as number);
  }

  /** Resolves once every worker logged that it listens (and on which port). */
  private ready(): Promise<void> {
    return new Promise((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`almanac did not start within 60 s:\n${this.stderr}`)), 60_000);
      const check = () => {
        const urls = [...this.stderr.matchAll(/"msg":"almanac listening","url":"(http:\/\/127\.0\.0\.1:\d+)\//g)].map((m) => m[1]!);
        if (urls.length >= this.workers) {
          this.base = urls[0]!;
          clearTimeout(timer);
          this.child.stderr!.off('data', check);
          done();
        }
      };
      this.child.stderr!.on('data', check);
      void this.exited.then(() => {
        clearTimeout(timer);
        fail(new Error(`almanac exited during start-up:\n${this.stderr}`));
      });
      check();
    });
  }

  /** SIGKILL (kill -9) and wait for the process to be gone. */
  async kill9(): Promise<void> {
    if (this.alive) this.child.kill('SIGKILL');
    await this.exited;
  }

  /** SIGTERM, then SIGKILL to the whole process group if it has not exited within 5 s. */
  async stop(): Promise<void> {
    if (!this.alive) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => {
      try {
        process.kill(-this.child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, 5_000);
    await this.exited;
    clearTimeout(timer);
  }

  /** What the server logged beyond info lines: errors and warnings (a 500 leaves one), and any crash output. */
  errors(): string[] {
    return this.stderr.split('\n').filter((line) => line.trim() !== '' && !/^\{.*"level":"(info|debug)"/.test(line));
  }
}

export interface Reply<T = any> { status: number; body: T; requestId: string }

/**
 * One request on its own connection (no keep-alive: a killed server leaves no stale sockets, and cluster workers take
 * turns), its answer checked against the spec.
 */
export function call<T = any>(server: Almanac, method: string, path: string, json?: unknown, as: Credentials | null = ADMIN): Promise<Reply<T>> {
  return new Promise((done, fail) => {
    const payload = json === undefined ? undefined : JSON.stringify(json);
    const headers: Record<string, string> = {};
    if (as) headers.Authorization = basic(as);
    if (payload !== undefined) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(payload));
    }
    const url = server.base + path;
    const req = httpRequest(url, { method, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('error', fail);
      res.on('end', () => {
        try {
          const body = text ? JSON.parse(text) : undefined;
          const status = res.statusCode ?? 0;
          checkAnswer(method, url, status, body, res.headers['content-type'] ?? null).then(() => done({ status, body, requestId: String(res.headers['x-request-id'] ?? '') }), fail);
        } catch (err) {
          fail(err);
        }
      });
    });
    req.setTimeout(15_000, () => req.destroy(new Error(`${method} ${path}: no answer within 15 s`)));
    req.on('error', fail);
    req.end(payload);
  });
}

export interface Sent<T = any> { status: number; body: T; headers: Record<string, string | string[] | undefined> }

/**
 * One request to a server at `base` on its own connection, with any headers, its answer checked against the spec and
 * its headers kept (see `call`); an answer must come within `timeoutMs`.
 */
export function send<T = any>(base: string, method: string, path: string, options: { json?: unknown; as?: Credentials | null; headers?: Record<string, string>; timeoutMs?: number } = {}): Promise<Sent<T>> {
  return new Promise((done, fail) => {
    const payload = options.json === undefined ? undefined : JSON.stringify(options.json);
    const headers: Record<string, string> = { ...options.headers };
    if (options.as) headers.Authorization = basic(options.as);
    if (payload !== undefined) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(payload));
    }
    const req = httpRequest(base + path, { method, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('error', fail);
      res.on('end', () => {
        try {
          const json = (res.headers['content-type'] ?? '').startsWith('application/json');
          const body = text && json ? JSON.parse(text) : text;
          const status = res.statusCode ?? 0;
          checkAnswer(method, base + path, status, body, res.headers['content-type'] ?? null).then(() => done({ status, body, headers: res.headers }), fail);
        } catch (err) {
          fail(err);
        }
      });
    });
    const timeout = options.timeoutMs ?? 15_000;
    req.setTimeout(timeout, () => req.destroy(new Error(`${method} ${path}: no answer within ${timeout} ms`)));
    req.on('error', fail);
    req.end(payload);
  });
}
