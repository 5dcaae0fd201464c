import createClient, { type Middleware } from 'openapi-fetch';
import { mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { Agent, request as httpRequest, type Server } from 'node:http';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { paths } from '../../generated/api.js';
import { createApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { Engine, Repositories } from '../../src/db/engine.js';
import { openEngine } from '../../src/db/open.js';
import type { Role } from '../../src/domain/capabilities.js';
import { addGeneratedPassword, ensureBootstrapAdmin } from '../../src/domain/passwords.js';
import { createLogger } from '../../src/log.js';
import { createHttpServer } from '../../src/server.js';
import { answerBody, ContractChecker } from './contract.js';
import { lockoutSql as lockoutSqlOn, rawSql, testDatabase, TEST_ENGINE, type TestDatabase } from './engines.js';

export const NS = '/wp-json/tribe/events/v1';
export interface Credentials { login: string; password: string }
export interface RawResponse<T = any> { status: number; headers: Headers; body: T; text: string }

const contract = new ContractChecker();

/**
 * A running Almanac on a fresh database of the engine under test (`ALMANAC_TEST_ENGINE`: a temporary SQLite file, or
 * a new database of the throwaway PostgreSQL cluster), listening on 127.0.0.1 with a random port.
 */
export class TestServer {
  readonly admin: Credentials = { login: 'admin', password: 'bootstrap-secret' };
  private constructor(
    readonly baseUrl: string,
    readonly engine: Engine,
    readonly config: Config,
    private readonly server: Server,
    private readonly dir: string,
    private readonly database: TestDatabase,
    /** The server's log lines (JSON), at the level asked for (`logLevel`; none by default). */
    readonly logs: string[],
  ) {}

  /** The engine under test. */
  static readonly engine = TEST_ENGINE;

  static async start(overrides: Partial<Config> = {}): Promise<TestServer> {
    const dir = mkdtempSync(join(tmpdir(), 'almanac-test-'));
    return TestServer.on(dir, await testDatabase(join(dir, 'almanac.sqlite')), overrides);
  }

  /**
   * Another server on this one's database, with a process's state of its own (engine, caches): what a second worker
   * or node is. Closing it leaves the database to this one.
   */
  beside(overrides: Partial<Config> = {}): Promise<TestServer> {
    const dir = mkdtempSync(join(tmpdir(), 'almanac-test-'));
    return TestServer.on(dir, { ...this.database, drop: async () => undefined }, overrides);
  }

  private static async on(dir: string, database: TestDatabase, overrides: Partial<Config>): Promise<TestServer> {
    const config: Config = {
      ...loadConfig({}), dbPath: database.path, databaseUrl: database.url, port: 0, logLevel: 'silent', validateResponses: true, ...overrides,
    };
    const engine = await openEngine(config);
    const logs: string[] = [];
    const { listener } = await createApp({ engine, config, log: createLogger(config.logLevel, (line) => logs.push(line)) });
    await ensureBootstrapAdmin(engine, 'admin', 'bootstrap-secret');
    const server = createHttpServer(listener, config);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    return new TestServer(`http://127.0.0.1:${port}`, engine, config, server, dir, database, logs);
  }

  /** Whether the front answer (front.ts), not the pipeline, answered the request of this id (its debug log line says so). */
  frontAnswered(requestId: string): boolean {
    const line = this.logs.map((l) => JSON.parse(l) as { requestId?: string; msg?: string; front?: boolean }).find((l) => l.requestId === requestId && l.msg === 'request');
    if (!line) throw new Error(`no log line of request ${requestId} (start the server with logLevel 'debug')`);
    return line.front === true;
  }

  /** A new user with this role and a generated application password. */
  async user(role: Role, login = `${role}-${Math.random().toString(36).slice(2, 8)}`): Promise<Credentials> {
    const password = await this.engine.write(async (repos) => {
      const user = await repos.users.create({ login, email: `${login}@example.test`, role });
      return addGeneratedPassword(repos.users, user.id, 'test');
    });
    return { login, password: password.display };
  }

  /** Reads through the engine's repositories (what the server itself would read). */
  read<T>(work: (repos: Repositories) => Promise<T>): Promise<T> {
    return this.engine.read(work);
  }

  /**
   * Raw SQL on the test's database, `?` for parameters, on either engine (for what no route can do: ageing a record,
   * checking a row). A statement that writes also appends to the change log, as every writer of Almanac does, so
   * the server's caches see it.
   */
  sql<T = Record<string, unknown>>(text: string, ...params: unknown[]): Promise<T[]> {
    return rawSql<T>(this.database, text, params);
  }

  /** A typed client generated from the spec; every response it receives is checked against the spec. */
  client(as?: Credentials) {
    const client = createClient<paths>({ baseUrl: this.baseUrl, headers: as ? { Authorization: basic(as) } : {} });
    const check: Middleware = {
      async onResponse({ request, response }) {
        await checkResponse(request.method, response);
        return undefined;
      },
    };
    client.use(check);
    return client;
  }

  /** Any request, for what a typed client cannot send (bad JSON, form bodies, odd methods); checked too. */
  async raw<T = any>(method: string, path: string, options: { as?: Credentials; json?: unknown; form?: string; body?: string; headers?: Record<string, string> } = {}): Promise<RawResponse<T>> {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (options.as) headers.Authorization = basic(options.as);
    let body: string | undefined = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['Content-Type'] ??= 'application/json';
    }
    if (options.form !== undefined) {
      body = options.form;
      headers['Content-Type'] ??= 'application/x-www-form-urlencoded';
    }
    const url = this.baseUrl + path;
    const response = await fetch(url, { method, headers, body });
    const text = await response.text();
    const parsed = parseBody(text, response.headers);
    // the method as the server takes it: `_method` is read by the contract, the header here
    const override = Object.entries(headers).find(([name]) => name.toLowerCase() === 'x-http-method-override')?.[1];
    await contract.check(override?.toUpperCase() || method, url, response.status, parsed, response.headers.get('Content-Type'));
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }

  /** A request over node:http, for headers fetch will not send (Host); the answer's headers in the order sent; checked too. */
  http(method: string, path: string, headers: Record<string, string> = {}): Promise<RawResponse & { lines: [string, string][] }> {
    return httpCall(this.baseUrl, method, path, headers);
  }

  /**
   * A connection of its own for raw HTTP/1.1, for what no client sends (a lying Content-Length, a body trickled, many
   * requests landing at once); the answer is checked too. Send `Connection: close`: the answer is read to the close.
   */
  async connect(): Promise<RawConnection> {
    const socket = createConnection({ host: '127.0.0.1', port: Number(new URL(this.baseUrl).port) });
    await once(socket, 'connect');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now())));
    socket.on('error', () => undefined); // a reset shows as a close without an answer
    let sentAt = 0;
    let request = '';
    return {
      send: (text) => {
        if (sentAt === 0) sentAt = performance.now();
        request += text;
        return socket.writable && socket.write(text);
      },
      answer: async (withinMs = 30_000) => {
        const timer = setTimeout(() => socket.destroy(), withinMs);
        const at = await closed;
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        const [head = '', ...rest] = text.split('\r\n\r\n');
        const [statusLine = '', ...headerLines] = head.split('\r\n');
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0);
        const headers = headersOf(headerLines);
        const body = parseBody(rest.join('\r\n\r\n'), headers);
        if (status > 0) {
          const [method = '', target = '/'] = request.split(' ', 2);
          await checkAnswer(method, this.baseUrl + target, status, body, headers.get('Content-Type'));
        }
        return { status, headers, body, ms: at - sentAt };
      },
    };
  }

  /**
   * Requests (a path alone is a GET) pipelined over one connection, sent at once, whose answers are not read until
   * `read` is called, as a client that stops reading does; `read` then reads every answer (each checked) and closes
   * the connection. `close` closes it without reading any.
   */
  async pipelined(requests: (string | PipelinedRequest)[]): Promise<{ read: (withinMs?: number) => Promise<{ status: number; body: any }[]>; close: () => void }> {
    const sent = requests.map((r) => (typeof r === 'string' ? { method: 'GET', path: r } : r));
    const socket = createConnection({ host: '127.0.0.1', port: Number(new URL(this.baseUrl).port) });
    await once(socket, 'connect');
    socket.pause();
    socket.write(sent.map(({ method, path, as, json }) => {
      const body = json === undefined ? '' : JSON.stringify(json);
      const headers = [`Host: 127.0.0.1`, ...(as ? [`Authorization: ${basic(as)}`] : []), ...(body ? ['Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`] : [])];
      return `${method} ${path} HTTP/1.1\r\n${headers.join('\r\n')}\r\n\r\n${body}`;
    }).join(''));
    socket.on('error', () => undefined); // closed with answers unread, the server's side may reset
    return {
      close: () => void socket.destroy(),
      read: async (withinMs = 60_000) => {
        const answers: { status: number; headers: Headers; text: string }[] = [];
        let pending = Buffer.alloc(0);
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`${answers.length} answers of ${sent.length} within ${withinMs} ms`)), withinMs);
          socket.on('data', (chunk: Buffer) => {
            pending = Buffer.concat([pending, chunk]);
            for (let end = pending.indexOf('\r\n\r\n'); end >= 0; end = pending.indexOf('\r\n\r\n')) {
              const [statusLine = '', ...lines] = pending.subarray(0, end).toString('latin1').split('\r\n');
              const headers = headersOf(lines);
              const length = Number(headers.get('content-length'));
              if (!Number.isInteger(length)) return reject(new Error(`an answer without Content-Length: ${statusLine}`));
              if (pending.length < end + 4 + length) break;
              answers.push({ status: Number(statusLine.split(' ')[1]), headers, text: pending.subarray(end + 4, end + 4 + length).toString('utf8') });
              pending = pending.subarray(end + 4 + length);
            }
            if (answers.length === sent.length) {
              clearTimeout(timer);
              resolve();
            }
          });
          socket.resume();
        }).finally(() => socket.destroy());
        return Promise.all(answers.map(async ({ status, headers, text }, i) => {
          const body = parseBody(text, headers);
          await checkAnswer(sent[i]!.method, this.baseUrl + sent[i]!.path, status, body, headers.get('Content-Type'));
          return { status, body };
        }));
      },
    };
  }

  /**
   * GETs over one kept-alive connection (node:http, one socket), for what depends on the connection; checked too.
   * `reused` says whether a request went over the socket of an earlier one.
   */
  keptAlive(): { get: (path: string, as?: Credentials, headers?: Record<string, string>) => Promise<{ status: number; reused: boolean }>; close: () => void } {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = (path: string, as?: Credentials, headers: Record<string, string> = {}) => new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
      const url = this.baseUrl + path;
      const req = httpRequest(url, { agent, headers: as ? { ...headers, Authorization: basic(as) } : headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const headers = new Headers(Object.entries(res.headers).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)] as [string, string]])));
          const parsed = parseBody(Buffer.concat(chunks).toString('utf8'), headers);
          contract.check('GET', url, res.statusCode!, parsed, headers.get('Content-Type')).then(() => resolve({ status: res.statusCode!, reused: req.reusedSocket }), reject);
        });
      });
      req.on('error', reject);
      req.end();
    });
    return { get, close: () => agent.destroy() };
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.closeAllConnections();
      this.server.close(() => resolve());
    });
    await this.engine.close();
    await this.database.drop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A request over node:http to any server (see `TestServer.http`); checked against the spec. */
export async function httpCall(base: string, method: string, path: string, headers: Record<string, string> = {}): Promise<RawResponse & { lines: [string, string][] }> {
  const url = base + path;
  const { status, rawHeaders, text } = await new Promise<{ status: number; rawHeaders: string[]; text: string }>((resolve, reject) => {
    const req = httpRequest(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, rawHeaders: res.rawHeaders, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
  const lines: [string, string][] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) lines.push([rawHeaders[i]!, rawHeaders[i + 1]!]);
  const responseHeaders = new Headers(lines);
  const body = parseBody(text, responseHeaders);
  await contract.check(method, url, status, body, responseHeaders.get('Content-Type'));
  return { status, headers: responseHeaders, body, text, lines };
}

/** Checks a response any client received against the spec (see ContractChecker). */
export async function checkResponse(method: string, response: Response): Promise<void> {
  const text = await response.clone().text();
  await checkAnswer(method, response.url, response.status, parseBody(text, response.headers), response.headers.get('Content-Type'));
}

/** Checks an answer received by other means (node:http, a raw socket) against the spec; `body` as parsed. */
export function checkAnswer(method: string, url: string, status: number, body: unknown, contentType: string | null): Promise<void> {
  return contract.check(method, url, status, body, contentType);
}

/** Checks an answer received as text with its headers (from a browser, a proxy) against the spec. */
export function checkTextAnswer(method: string, url: string, status: number, text: string, headers: Headers): Promise<void> {
  return checkAnswer(method, url, status, parseBody(text, headers), headers.get('Content-Type'));
}

/** The header lines of a raw HTTP answer (`Name: value`) as Headers. */
const headersOf = (lines: string[]): Headers => new Headers(lines.map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()] as [string, string]));

/** A JSON answer parsed; any other (a calendar, the documentation page) as its text. */
const parseBody = (text: string, headers: Headers): any => answerBody(text, headers.get('Content-Type'));

/** A request of `TestServer.pipelined`. */
export interface PipelinedRequest {
  method: string;
  path: string;
  as?: Credentials;
  json?: unknown;
}

/** A raw connection (see `TestServer.connect`). */
export interface RawConnection {
  /** Writes text; false once the server has closed its side. */
  send(text: string): boolean;
  /** The answer, once the server has closed the connection (status 0: closed, or not within `withinMs`, without one); `ms` since the first `send`. */
  answer(withinMs?: number): Promise<{ status: number; headers: Headers; body: any; ms: number }>;
}

/**
 * Raw SQL, `?` for parameters, on the failed-authentication counts of a server's database, as another process or node
 * reaches them (SQLite: the file `<database>-lockout`; PostgreSQL: the table `auth_failures`), without a change-log row.
 */
export function lockoutSql<T = Record<string, unknown>>(s: TestServer, text: string, ...params: unknown[]): Promise<T[]> {
  return lockoutSqlOn<T>({ path: s.config.dbPath, url: s.config.databaseUrl }, text, params);
}

/**
 * Sends `read` again and again while `work` runs, one at a time: how many were answered, and the slowest, tell whether
 * the server kept answering others meanwhile (what `work` settles with is given back).
 */
export async function readsDuring<T>(work: Promise<T>, read: () => Promise<void>): Promise<{ result: T; reads: number; slowest: number }> {
  let done = false;
  const settled = work.finally(() => (done = true));
  let reads = 0;
  let slowest = 0;
  while (!done) {
    const started = performance.now();
    await read();
    slowest = Math.max(slowest, performance.now() - started);
    reads++;
  }
  return { result: await settled, reads, slowest };
}

export function basic(c: Credentials): string {
  return 'Basic ' + Buffer.from(`${c.login}:${c.password}`).toString('base64');
}

/**
 * Inserts an event straight into the database, for term counts and the `post`/`event` filters without the rules of
 * the event routes. Returns its id.
 */
export async function insertEvent(s: TestServer, opts: { title?: string; status?: string; terms?: number[]; lang?: string } = {}): Promise<number> {
  const now = '2026-11-01 10:00:00';
  const lang = opts.lang ?? 'en';
  const status = opts.status ?? 'publish';
  const slug = `fixture-${Math.random().toString(36).slice(2)}`;
  await s.sql(`INSERT INTO posts (type, status, slug, title, date_local, date_utc, modified_local, modified_utc, lang, translation_group)
               VALUES ('event', ?, ?, ?, ?, ?, ?, ?, ?, 0)`, status, slug, opts.title ?? 'Fixture event', now, now, now, now, lang);
  const [{ id }] = (await s.sql<{ id: number }>('SELECT id FROM posts WHERE slug = ?', slug)) as [{ id: number }];
  await s.sql('UPDATE posts SET translation_group = id WHERE id = ?', id);
  await s.sql(`INSERT INTO events (post_id, start_local, end_local, start_utc, end_utc, timezone, lang, status, date_utc)
               VALUES (?, '2027-01-01 10:00:00', '2027-01-01 12:00:00', '2027-01-01 10:00:00', '2027-01-01 12:00:00', 'UTC+0', ?, ?, ?)`, id, lang, status, now);
  for (const term of opts.terms ?? []) await s.sql('INSERT INTO event_terms (event_id, term_id) VALUES (?, ?)', id, term);
  return id;
}
