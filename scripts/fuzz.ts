/**
 * `npm run fuzz -- --runs N --seed S`: the fuzz property of test/fuzz.test.ts (scripts/fuzzGenerators.ts) for a long
 * run against an Almanac started in this process on a temporary SQLite file, listening on 127.0.0.1 only. Unlike the
 * test, a failure does not stop the run: failures are grouped by kind and printed with one request each (and the
 * server's stack for a 5xx). Exits 1 when anything failed. `--all` also sends the requests that reproduce known
 * server bugs (left out by default, see `knownBug`); `--verbose` lists the valid requests the server refused, to see
 * what the generators miss.
 */
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { createHttpServer } from '../src/server.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../src/app.js';
import { commandLine, wholeNumber } from './commandLine.js';
import { loadConfig, type Config } from '../src/config.js';
import { openEngine } from '../src/db/open.js';
import { addGeneratedPassword, ensureBootstrapAdmin } from '../src/domain/passwords.js';
import { createLogger } from '../src/log.js';
import { answerBody, ContractChecker } from '../test/helpers/contract.js';
import { basicAuth, createFixtures, describeRequest, fuzzProperty, settings, type Credentials, type FuzzContext, type FuzzFailure, type FuzzRequest, type FuzzTarget, type RawAnswer } from './fuzzGenerators.js';

const USAGE = `npm run fuzz -- [options]

Sends requests generated from the spec (valid ones, and ones broken in one way) to an Almanac started in this
process on a temporary SQLite file, and checks every answer against the spec and the server's rules. Failures are
grouped by kind, each with one request that shows it. Exits 1 when anything failed.

  --runs N      requests to send (default 2000)
  --seed S      the generators' seed, to replay a run (default: a random one, printed at the end)
  --all         also send the requests that reproduce known server bugs (left out by default)
  --verbose     list the valid requests the server refused, to see what the generators miss
  --help        this text
`;
const values = commandLine('fuzz', {
  runs: { type: 'string', default: '2000' },
  seed: { type: 'string' },
  all: { type: 'boolean', default: false },
  verbose: { type: 'boolean', default: false },
}, USAGE);
const runs = wholeNumber('fuzz', 'runs', values.runs, 1, USAGE);
const seed = values.seed !== undefined ? wholeNumber('fuzz', 'seed', values.seed, 0, USAGE) : Math.floor(Math.random() * 2 ** 31);
settings.excludeKnownBugs = !values.all;

const dir = mkdtempSync(join(tmpdir(), 'almanac-fuzz-'));
const config: Config = { ...loadConfig({}), dbPath: join(dir, 'almanac.sqlite'), port: 0, logLevel: 'error', validateResponses: true, authMaxFailures: 1_000_000_000 };
const engine = await openEngine(config);
// unexpected errors are logged with the request id; keep the last ones to show with the failing request
const serverErrors = new Map<string, string>();
const log = createLogger('error', (line) => {
  const entry = JSON.parse(line) as { requestId?: string; error?: string; msg?: string };
  serverErrors.set(entry.requestId ?? '?', entry.error ?? entry.msg ?? line);
  if (serverErrors.size > 100) serverErrors.delete(serverErrors.keys().next().value!);
});
const { listener } = await createApp({ engine, config, log });
const admin: Credentials = { login: 'admin', password: 'fuzz-bootstrap-secret' };
await ensureBootstrapAdmin(engine, admin.login, admin.password);
const author: Credentials = {
  login: 'fuzz-author',
  password: (await engine.write(async (unit) => addGeneratedPassword(unit.users, (await unit.users.create({ login: 'fuzz-author', email: 'fuzz-author@example.test', role: 'author' })).id, 'fuzz'))).display,
};
const server = createHttpServer(listener, config);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;

const contract = new ContractChecker();
let lastRequestId = '';
const files = new Database(config.dbPath);
const target: FuzzTarget = {
  sql: async <T,>(text: string, ...params: unknown[]) => files.prepare(text).all(...params) as T[],
  admin,
  async raw(method, path, options = {}): Promise<RawAnswer> {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (options.as) headers.Authorization = basicAuth(options.as);
    let body = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['Content-Type'] ??= 'application/json';
    }
    if (options.form !== undefined) {
      body = options.form;
      headers['Content-Type'] ??= 'application/x-www-form-urlencoded';
    }
    const url = baseUrl + path;
    const response = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(30_000) });
    lastRequestId = response.headers.get('x-request-id') ?? '';
    const text = await response.text();
    const parsed = answerBody(text, response.headers.get('Content-Type'));
    await contract.check(method, url, response.status, parsed, response.headers.get('Content-Type'));
    return { status: response.status, body: parsed, text };
  },
};

interface Group {
  count: number;
  operations: Set<string>;
  example: string;
}
const groups = new Map<string, Group>();
let sent = 0;
let failures = 0;
const started = performance.now();
const statuses = new Map<string, number>();
/** Valid requests the server refused, by operation, caller and code (`--verbose`): shows what the generators miss. */
const refusedValid = new Map<string, number>();
const refusedExample = new Map<string, string>();
const count = (key: string) => statuses.set(key, (statuses.get(key) ?? 0) + 1);
const ctx: FuzzContext = {
  target,
  pools: await createFixtures(target),
  author,
  onAnswer: (req, status, body) => {
    const write = req.method !== 'GET';
    count(`${write ? 'write' : 'read'} ${Math.floor(status / 100)}xx`);
    count(req.mutation === 'valid' ? 'valid' : 'broken');
    if (req.mutation === 'valid' && status >= 400) {
      const key = `${req.operationId} ${req.auth} ${status} ${(body as { code?: string } | undefined)?.code ?? ''}`;
      refusedValid.set(key, (refusedValid.get(key) ?? 0) + 1);
      if (!refusedExample.has(key)) refusedExample.set(key, `${describeRequest(req)}\n      → ${JSON.stringify(body).slice(0, 300)}`);
    }
  },
};

const record = (req: FuzzRequest, err: FuzzFailure) => {
  failures++;
  const mutation = req.mutation.split(' ').slice(0, 2).join(' ');
  const key = `${err.category} — ${mutation}`;
  let group = groups.get(key);
  if (!group) {
    const stack = serverErrors.get(lastRequestId);
    group = { count: 0, operations: new Set(), example: err.message + (stack ? `\n  server: ${stack.split('\n').slice(0, 6).join('\n          ')}` : '') };
    groups.set(key, group);
  }
  group.count++;
  group.operations.add(req.operationId);
};
try {
  const result = await fc.check(fuzzProperty(ctx, record), { seed, numRuns: runs });
  sent = result.numRuns;
  if (result.failed) {
    console.error(`the property itself threw: ${String(result.errorInstance)}`);
    failures++;
  }
} finally {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  files.close();
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
}

const seconds = (performance.now() - started) / 1000;
console.log(`fuzz: ${sent} requests in ${seconds.toFixed(1)} s (${(sent / seconds).toFixed(0)}/s), ${failures} failures, seed ${seed}`);
console.log(`  ${[...statuses].sort().map(([k, n]) => `${k}: ${n}`).join(', ')}`);
for (const [key, group] of [...groups].sort((a, b) => b[1].count - a[1].count)) {
  console.log(`\n${group.count}× ${key}\n  operations: ${[...group.operations].sort().join(', ')}\n  e.g. ${group.example.replace(/\n/g, '\n  ')}`);
}
if (values.verbose) {
  console.log('\nvalid requests refused (top 40):');
  for (const [key, n] of [...refusedValid].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`  ${n}× ${key}\n      ${refusedExample.get(key)}`);
}
console.log(`\nreplay: npm run fuzz -- --runs ${runs} --seed ${seed}`);
process.exit(failures > 0 ? 1 : 0);
