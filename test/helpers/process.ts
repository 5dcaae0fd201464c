import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { basic, type Credentials } from './server.js';

/** The compiled server (test/setup/build.ts compiles it before any test runs). */
export const MAIN = resolve(dirname(fileURLToPath(import.meta.url)), '../../dist/src/main.js');

/** Almanac as a child process (`dist/src/main.js`) with the given environment; `workers` > 1 runs node:cluster workers. */
export class AlmanacProcess {
  stderr = '';
  readonly exited: Promise<void>;
  private alive = true;
  /** `http://127.0.0.1:port`, known once the server listens. */
  base = '';

  private constructor(readonly child: ChildProcess, readonly workers: number) {
    this.exited = new Promise((done) => child.once('exit', () => {
      this.alive = false;
      done();
    }));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (this.stderr += chunk));
    child.stdout!.resume();
  }

  static async start(env: Record<string, string>, workers = 1): Promise<AlmanacProcess> {
    const child = spawn(process.execPath, [MAIN], {
      env: {
        PATH: process.env.PATH ?? '',
        HOST: '127.0.0.1',
        // the kernel picks a free port when the server binds (workers share it), so no other socket can take it first
        PORT: '0',
        ALMANAC_LOG_LEVEL: 'info',
        ALMANAC_WORKERS: String(workers),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      // its own process group, so cleanup can reach cluster workers too
      detached: true,
    });
    const server = new AlmanacProcess(child, workers);
    await server.ready();
    return server;
  }

  get running(): boolean {
    return this.alive;
  }

  /** Resolves once every worker logged that it listens (and on which port). */
  private ready(): Promise<void> {
    return new Promise((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`almanac did not start within 30 s:\n${this.stderr}`)), 30_000);
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

export interface Reply<T = any> { status: number; body: T; headers: Record<string, string | string[] | undefined> }

/**
 * One request on its own connection (no keep-alive: a killed server leaves no stale sockets, and cluster workers
 * take turns); an answer must come within `timeoutMs`.
 */
export function call<T = any>(base: string, method: string, path: string, options: { json?: unknown; as?: Credentials | null; headers?: Record<string, string>; timeoutMs?: number } = {}): Promise<Reply<T>> {
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
          done({ status: res.statusCode ?? 0, body: text && json ? JSON.parse(text) : text, headers: res.headers });
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
