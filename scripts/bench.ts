/**
 * `npm run bench`: Almanac's throughput and latency as ratios to a bare node:http baseline measured in the same
 * run. Seeds a fresh database (`--events`, default 100,000), starts Almanac and the baseline as separate processes,
 * loads each with autocannon from a third process, and writes a table, bench/results.md and SVG charts.
 * `--growth` adds runs at 10,000 and 1,000,000 events (constant density) and reports p50 growth; `--rounds` sets the
 * alternating rounds of anonymous and authenticated reads; `--profile` leaves a CPU profile of the server.
 * `--engine postgres` runs everything on PostgreSQL instead of SQLite: a throwaway cluster on this machine (Debian's
 * server, as scripts/postgresCluster.ts starts it for the tests), one fresh database per dataset.
 */
import Database from 'better-sqlite3';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, totalmem, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { RARE_WORD } from '../src/db/seed.js';
import { startCluster, type Cluster } from './postgresCluster.js';
import { projectRoot } from '../src/paths.js';

const NS = '/wp-json/tribe/events/v1';
const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '100000' },
    growth: { type: 'boolean', default: false },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
    rounds: { type: 'string', default: '3' },
    profile: { type: 'boolean', default: false },
    'stall-only': { type: 'boolean', default: false },
    engine: { type: 'string', default: 'sqlite' },
  },
});
if (values.engine !== 'sqlite' && values.engine !== 'postgres') throw new Error('--engine is sqlite or postgres');
const onPostgres = values.engine === 'postgres';
const duration = Number(values.duration);
const warmup = Number(values.warmup);
const connections = Number(values.connections);
/** Alternating rounds of anonymous and authenticated GET by id (their medians are compared). */
const rounds = Math.max(1, Number(values.rounds));
/** Growth runs are shorter and alternate between the two sizes, so drift in the machine's load hits both alike. */
const GROWTH = { small: 10_000, large: 1_000_000, duration: 5, warmup: 1, rounds: 2 };
/** The rounds of one against two workers are shorter too (they alternate, so drift hits both alike). */
const SCALING = { duration: 5, warmup: 1 };
const node = process.execPath;
const cli = join(projectRoot, 'dist', 'src', 'cli.js');
/** With `--profile`, the one-worker server of the main run writes a V8 CPU profile here when it stops. */
const PROFILES = join(projectRoot, 'bench', 'profiles');
const CLOCK_TICKS_PER_SECOND = 100; // Linux's USER_HZ, the unit of utime and stime in /proc/<pid>/stat

interface LoadResult { requestsPerSecond: number; p50: number; p99: number; errors: number; requests: number; warmupRequests: number; generatorCpuShare: number }
interface Scenario {
  name: string; paths: string[]; writeShare?: number; postPath?: string; authenticated?: boolean; read: boolean;
  /** Connections of this scenario's load, when not the run's. */
  connections?: number;
  /** Only requests sent within this span (ms into the run) count in its latencies. */
  window?: [number, number];
  /** Request headers beyond the credentials. */
  headers?: Record<string, string>;
}
/** What every request of a scenario sends: the dataset's credentials if it is authenticated, and its own headers. */
const headersOf = (sc: Scenario, auth: Record<string, string>) => ({ ...(sc.authenticated ? auth : {}), ...sc.headers });
/** One load run: what the generator saw, the server's peak RSS and its CPU time per request (µs). */
interface Measured { result: LoadResult; rssMb: number; cpuUs: number }
interface Row { scenario: string; almanac: LoadResult; baseline: LoadResult; ratio: number; rssMb: number; cpuUs: number; baselineCpuUs: number }
/** A seeded database with the scenarios to run against it, and the costliest anonymous requests the limits allow. */
interface Dataset { events: number; dir: string; /** What points Almanac and its CLI at the dataset's database. */ env: Record<string, string>; auth: Record<string, string>; scenarios: Scenario[]; costly: Scenario }

/** Clients sending the costliest requests at once, while the probe reads events by id. */
const COSTLY_CLIENTS = 16;

/**
 * The costliest requests an anonymous caller may make, each different so the response cache cannot answer it: event
 * searches of ten short words or exclusions (no trigram helps) over the whole calendar, every category and tag over
 * the whole calendar nearly 10,000 records deep, feeds of 500 events over the widest window they allow, venue searches of
 * ten words.
 */
function costlyPaths(): string[] {
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  const shortWord = () => letters[Math.floor(Math.random() * 26)]! + letters[Math.floor(Math.random() * 26)]!;
  const words = (prefix: string) => Array.from({ length: 10 }, () => prefix + shortWord()).join('+');
  const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
  const paths: string[] = [];
  for (let i = 0; i < 400; i++) {
    const from = day(-400 + Math.floor(Math.random() * 300));
    const kinds = [
      `${NS}/events?search=${words('')}&start_date=1970-01-01&per_page=50`,
      `${NS}/events?search=${words('-')}&start_date=1970-01-01&per_page=50`,
      `${NS}/events?categories=${Array.from({ length: 12 }, (_, k) => k + 1).join(',')}&tags=${Array.from({ length: 20 }, (_, k) => k + 13).join(',')}&start_date=1970-01-01&per_page=50&page=${191 + (i % 10)}&featured=false`,
      `${NS}/events.ics?start_date=${from}&end_date=${new Date(Date.parse(from) + 761 * 86_400_000).toISOString().slice(0, 10)}`,
      `${NS}/events.ics?search=${words('-')}&start_date=${from}&end_date=${new Date(Date.parse(from) + 761 * 86_400_000).toISOString().slice(0, 10)}`,
      `${NS}/venues?search=${words('')}&per_page=50`,
    ];
    paths.push(kinds[i % kinds.length]!);
  }
  return paths;
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function run(args: string[], env: Record<string, string>): string {
  const r = spawnSync(node, args, { env: { ...process.env, ...env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed (${r.status})`);
  return r.stdout.trim();
}

async function startAlmanac(database: Record<string, string>, workers: number, env: Record<string, string> = {}, nodeOptions: string[] = []): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(node, [...nodeOptions, join(projectRoot, 'dist', 'src', 'main.js')], {
    env: { ...process.env, ...database, PORT: String(port), ALMANAC_WORKERS: String(workers), ALMANAC_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let seen = 0;
    child.stderr!.on('data', (chunk: Buffer) => {
      seen += chunk.toString().split('almanac listening').length - 1;
      if (seen >= workers) resolve();
    });
    child.once('exit', (code) => reject(new Error(`Almanac exited (${code})`)));
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

async function startBaseline(sizes: Record<string, number>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(node, [join(projectRoot, 'dist', 'scripts', 'benchBaseline.js')], { env: { ...process.env, BASELINE_SIZES: JSON.stringify(sizes) }, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => child.stdout!.once('data', (d: Buffer) => resolve(JSON.parse(d.toString()).port)));
  return { child, url: `http://127.0.0.1:${port}` };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

function procStatus(pid: number | undefined): { rssMb: number; cpuTicks: number } | null {
  if (!pid) return null;
  try {
    const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    // utime and stime: fields 14 and 15, counted after the command name (which may hold spaces) closes
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { rssMb: kb / 1024, cpuTicks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return null; // not on Linux, or the process is gone
  }
}

/** Runs the load process against `url`, sampling the server's resident memory and CPU time meanwhile. */
async function load(url: string, scenario: Scenario, headers: Record<string, string>, pid: number | undefined, timing = { duration, warmup }): Promise<Measured> {
  let rss = 0;
  const sample = () => (rss = Math.max(rss, procStatus(pid)?.rssMb ?? 0));
  const cpuBefore = procStatus(pid)?.cpuTicks;
  const timer = pid ? setInterval(sample, 200) : null;
  const child = spawn(node, [join(projectRoot, 'dist', 'scripts', 'benchLoad.js')], {
    env: {
      ...process.env,
      BENCH_SCENARIO: JSON.stringify({
        url, connections: scenario.connections ?? connections, ...timing, paths: scenario.paths, window: scenario.window, writeShare: scenario.writeShare ?? 0, postPath: scenario.postPath, headers,
      }),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise((resolve) => child.once('exit', resolve));
  if (timer) clearInterval(timer);
  const cpuAfter = procStatus(pid)?.cpuTicks;
  const result = JSON.parse(out.trim().split('\n').pop()!) as LoadResult;
  const served = result.requests + result.warmupRequests;
  const cpuUs = cpuBefore !== undefined && cpuAfter !== undefined && served > 0 ? ((cpuAfter - cpuBefore) * 1e6) / CLOCK_TICKS_PER_SECOND / served : 0;
  return { result, rssMb: Math.round(rss), cpuUs };
}

/**
 * Loads whose figures are thrown away: a freshly started server first compiles its hot paths (JIT), and each read
 * scenario is measured in its steady state, its answers cached and its pages in memory, at every size alike (a
 * scenario of many paths gets the time to touch them all).
 */
async function warmUp(url: string, data: Dataset, scenarios = data.scenarios.filter((sc) => sc.read)): Promise<void> {
  for (const sc of scenarios) await load(url, sc, headersOf(sc, data.auth), undefined, { duration: sc.paths.length > 1 ? 3 : 1, warmup: 0 });
}

/** The run of median throughput. */
function median(runs: Measured[]): Measured {
  return [...runs].sort((a, b) => a.result.requestsPerSecond - b.result.requestsPerSecond)[Math.floor(runs.length / 2)]!;
}

/** Seeds a fresh database of `events` events, with an administrator's application password, and its scenarios. */
let cluster: Cluster | null = null;
let databases = 0;

/** A fresh, empty database of the engine under test, as the environment that names it. */
async function freshDatabase(dir: string): Promise<Record<string, string>> {
  if (!onPostgres) return { ALMANAC_DB: join(dir, 'bench.sqlite') };
  // settings of a server that has the machine to itself, as one would run it
  if (!cluster) {
    cluster = await startCluster({ settings: { shared_buffers: '512MB', max_connections: '200', synchronous_commit: 'on' } });
    const started = cluster;
    process.once('exit', () => started.stop());
  }
  const name = `bench_${++databases}`;
  await sqlOn(cluster.url, `CREATE DATABASE ${name}`);
  return { ALMANAC_DATABASE_URL: cluster.urlOf(name) };
}

/** Rows of one query, on PostgreSQL (`url`) or on the SQLite file of a dataset. */
async function sqlOn<T>(target: string, text: string): Promise<T[]> {
  if (!target.startsWith('postgres')) {
    const db = new Database(target, { readonly: true });
    try {
      return db.prepare(text).all() as T[];
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: target });
  await client.connect();
  try {
    return (await client.query(text)).rows as T[];
  } finally {
    await client.end();
  }
}

async function prepare(events: number): Promise<Dataset> {
  const dir = mkdtempSync(join(tmpdir(), 'almanac-bench-'));
  const env = await freshDatabase(dir);
  process.stderr.write(`\n== ${events.toLocaleString('en')} events on ${values.engine}\n`);
  process.stderr.write(run([cli, 'seed', '--events', String(events)], env) + '\n');
  run([cli, 'user', 'add', 'bench', '--role', 'administrator'], env);
  const password = run([cli, 'app-password', 'add', 'bench', '--name', 'bench'], env);
  const auth = { Authorization: 'Basic ' + Buffer.from(`bench:${password}`).toString('base64') };

  const target = env.ALMANAC_DATABASE_URL ?? env.ALMANAC_DB!;
  const sample = await sqlOn<{ id: number; slug: string }>(target, `SELECT p.id, p.slug FROM events e JOIN posts p ON p.id = e.post_id
    WHERE p.status = 'publish' AND p.password = '' ORDER BY random() LIMIT 2000`);
  const category = Number((await sqlOn<{ id: number }>(target, `SELECT id FROM terms WHERE taxonomy = 'category' AND slug = 'music'`))[0]!.id);
  const today = new Date().toISOString().slice(0, 10);
  const later = new Date(Date.now() + 90 * 86_400_000).toISOString().slice(0, 10);
  const scenarios: Scenario[] = [
    { name: 'GET /events/{id}', paths: sample.map((e) => `${NS}/events/${e.id}`), read: true },
    { name: 'GET /events/{id} (authenticated)', paths: sample.map((e) => `${NS}/events/${e.id}`), authenticated: true, read: true },
    { name: 'GET /events/{id} (browser on another site)', paths: sample.map((e) => `${NS}/events/${e.id}`), headers: { Origin: 'https://calendar.example' }, read: true },
    { name: 'GET /events', paths: [`${NS}/events`], read: true },
    { name: 'GET /events?categories&dates', paths: [`${NS}/events?categories=${category}&start_date=${today}&end_date=${later}`], read: true },
    { name: 'GET /events?search', paths: [`${NS}/events?search=${RARE_WORD}`], read: true },
    { name: 'GET /venues', paths: [`${NS}/venues`], read: true },
    { name: 'GET /events/by-slug/{slug}', paths: sample.map((e) => `${NS}/events/by-slug/${e.slug}`), read: true },
    { name: 'POST /events', paths: [`${NS}/events`], writeShare: 1, postPath: `${NS}/events`, authenticated: true, read: false },
    { name: '95/5 read/write mix', paths: sample.map((e) => `${NS}/events/${e.id}`), writeShare: 0.05, postPath: `${NS}/events`, authenticated: true, read: false },
  ];
  const costly: Scenario = { name: `costly anonymous requests (${COSTLY_CLIENTS} clients)`, paths: costlyPaths(), connections: COSTLY_CLIENTS, read: true };
  return { events, dir, env, auth, scenarios, costly };
}

/**
 * GET /events/{id} (one client) while COSTLY_CLIENTS clients send the costliest anonymous requests the limits allow:
 * one thread answers both, so the probe's p99 is what one costly request can make everyone else wait.
 */
async function besideCostly(url: string, data: Dataset): Promise<{ probe: LoadResult; costly: LoadResult }> {
  // the probe connects first (a connection opened while the loop is busy waits as long again to be accepted), and
  // counts only the requests it sends while the costly clients are at work
  const lead = 1000;
  const probe: Scenario = { ...data.scenarios[0]!, connections: 1, window: [lead + 1000, lead + duration * 1000] };
  const probing = load(url, probe, {}, undefined, { duration: duration + 2, warmup: 0 });
  await new Promise((resolve) => setTimeout(resolve, lead));
  const costly = (await load(url, data.costly, {}, undefined, { duration: duration + 1, warmup: 0 })).result;
  const probed = await probing;
  process.stderr.write(`  GET /events/{id} beside ${data.costly.name}: p50 ${probed.result.p50} ms, p99 ${probed.result.p99} ms (${probed.result.requests} requests); the costly ones ${costly.requestsPerSecond.toFixed(1)} req/s, errors ${costly.errors}\n`);
  return { probe: probed.result, costly };
}

const report = (name: string, m: Measured, note = '') =>
  process.stderr.write(`  ${name}${note}: ${Math.round(m.result.requestsPerSecond)} req/s, p50 ${m.result.p50} ms, p99 ${m.result.p99} ms, ${m.cpuUs ? `${m.cpuUs.toFixed(0)} µs CPU/req` : 'CPU not sampled (several processes)'}, errors ${m.result.errors}\n`);

type Stall = Awaited<ReturnType<typeof besideCostly>>;

async function measure(data: Dataset): Promise<{ rows: Row[]; pair: { anonymous: Measured[]; authenticated: Measured[] }; workers: { served: Scaling; uncached: Scaling }; stall: Stall }> {
  const { scenarios, auth } = data;
  const almanac = await startAlmanac(data.env, 1, {}, values.profile ? ['--cpu-prof', `--cpu-prof-dir=${PROFILES}`] : []);
  await warmUp(almanac.url, data);
  const measured: (Measured & { scenario: Scenario; size: number })[] = [];
  // anonymous and authenticated reads by id alternate, so that neither gets the machine's better moments
  const pair = { anonymous: [] as Measured[], authenticated: [] as Measured[] };
  for (const scenario of scenarios) {
    const probe = await fetch(almanac.url + scenario.paths[0], scenario.writeShare === 1
      ? { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ title: 'Probe', start_date: '2031-01-01 10:00', end_date: '2031-01-01 11:00' }) }
      : { headers: headersOf(scenario, auth) });
    const size = (await probe.arrayBuffer()).byteLength;
    if (scenario === scenarios[0]) {
      for (let r = 0; r < rounds; r++) {
        for (const [kind, sc] of [['anonymous', scenarios[0]!], ['authenticated', scenarios[1]!]] as const) {
          const m = await load(almanac.url, sc, headersOf(sc, auth), almanac.child.pid);
          pair[kind].push(m);
          report(sc.name, m, ` (round ${r + 1})`);
        }
      }
      measured.push({ ...median(pair.anonymous), scenario, size });
      continue;
    }
    if (scenario === scenarios[1]) {
      measured.push({ ...median(pair.authenticated), scenario, size });
      continue;
    }
    const m = await load(almanac.url, scenario, headersOf(scenario, auth), almanac.child.pid);
    measured.push({ ...m, scenario, size });
    report(scenario.name, m);
  }
  const stall = await besideCostly(almanac.url, data);
  await stop(almanac.child);

  const sizes = Object.fromEntries(measured.map((m, i) => [`/s${i}`, m.size]));
  const baseline = await startBaseline(sizes);
  const rows: Row[] = [];
  for (const [i, m] of measured.entries()) {
    const b = await load(baseline.url, { ...m.scenario, paths: [`/s${i}`], postPath: m.scenario.postPath && `/s${i}` }, {}, baseline.child.pid);
    rows.push({ scenario: m.scenario.name, almanac: m.result, baseline: b.result, ratio: m.result.requestsPerSecond / b.result.requestsPerSecond, rssMb: m.rssMb, cpuUs: m.cpuUs, baselineCpuUs: b.cpuUs });
  }
  await stop(baseline.child);

  return { rows, pair, stall, workers: { served: await workerScaling(data, {}), uncached: await workerScaling(data, { ALMANAC_CACHE_MB: '0' }) } };
}

/** `--stall-only`: seeds, starts one server and measures GET /events/{id} beside the costly requests, nothing else. */
async function stallOnly(data: Dataset): Promise<Stall> {
  const almanac = await startAlmanac(data.env, 1);
  try {
    await warmUp(almanac.url, data, [data.scenarios[0]!]);
    return await besideCostly(almanac.url, data);
  } finally {
    await stop(almanac.child);
  }
}

/** One and two workers on GET /events/{id}: medians of alternating rounds, with the generator's CPU per request. */
interface Scaling { one: Measured; two: Measured; generatorUs: { one: number; two: number } }

/**
 * One and two workers over the same database, both up at once, loaded in alternating rounds with GET /events/{id}
 * (`env`: with the response cache off, every answer is computed, so the server's own work dominates).
 */
async function workerScaling(data: Dataset, env: Record<string, string>): Promise<Scaling> {
  const byId = data.scenarios[0]!;
  const servers = [await startAlmanac(data.env, 1, env), await startAlmanac(data.env, 2, env)] as const;
  const runs: [Measured[], Measured[]] = [[], []];
  try {
    for (const server of servers) await warmUp(server.url, data, [byId]);
    for (let r = 0; r < rounds; r++) {
      for (const [k, server] of servers.entries()) {
        const m = await load(server.url, byId, {}, k === 0 ? server.child.pid : undefined, SCALING);
        runs[k]!.push(m);
        report(`${byId.name}, ${k + 1} worker${k ? 's' : ''}${env.ALMANAC_CACHE_MB === '0' ? ', cache off' : ''}`, m, ` (round ${r + 1})`);
      }
    }
  } finally {
    for (const server of servers) await stop(server.child);
  }
  const [one, two] = [median(runs[0]), median(runs[1])];
  const generatorUs = (m: Measured) => (m.result.generatorCpuShare * 1e6) / m.result.requestsPerSecond;
  return { one, two, generatorUs: { one: generatorUs(one), two: generatorUs(two) } };
}

interface GrowthRow { scenario: string; small: Measured; large: Measured; uncachedSmall?: Measured; uncachedLarge?: Measured }

/**
 * p50 at 10,000 and at 1,000,000 events, from two servers up at once, runs alternating between them. Once as served
 * (the response cache on), then the reads again with the cache off, which shows what the data layer's cost does.
 */
async function growth(): Promise<{ rows: GrowthRow[]; peakRssMb: number }> {
  const small = await prepare(GROWTH.small);
  const large = await prepare(GROWTH.large);
  const timing = { duration: GROWTH.duration, warmup: GROWTH.warmup };
  const rows: GrowthRow[] = small.scenarios.map((s) => ({ scenario: s.name, small: undefined!, large: undefined! }));
  let peakRssMb = 0;
  try {
    for (const cache of ['on', 'off'] as const) {
      process.stderr.write(`\n== growth, response cache ${cache}\n`);
      const env: Record<string, string> = cache === 'off' ? { ALMANAC_CACHE_MB: '0' } : {};
      const servers = [await startAlmanac(small.env, 1, env), await startAlmanac(large.env, 1, env)] as const;
      await warmUp(servers[0].url, small);
      await warmUp(servers[1].url, large);
      for (const [i, row] of rows.entries()) {
        if (cache === 'off' && !small.scenarios[i]!.read) continue;
        const runs: Measured[][] = [[], []];
        for (let r = 0; r < GROWTH.rounds; r++) {
          for (const [k, data] of [small, large].entries()) {
            const sc = data.scenarios[i]!;
            const m = await load(servers[k]!.url, sc, headersOf(sc, data.auth), servers[k]!.child.pid, timing);
            runs[k]!.push(m);
            if (k === 1) peakRssMb = Math.max(peakRssMb, m.rssMb);
            report(`${sc.name} at ${data.events.toLocaleString('en')}`, m);
          }
        }
        // the lower middle of each size's p50s (of two runs, the better one)
        const mid = (ms: Measured[]) => [...ms].sort((a, b) => a.result.p50 - b.result.p50)[Math.floor((ms.length - 1) / 2)]!;
        if (cache === 'on') Object.assign(row, { small: mid(runs[0]!), large: mid(runs[1]!) });
        else Object.assign(row, { uncachedSmall: mid(runs[0]!), uncachedLarge: mid(runs[1]!) });
      }
      for (const server of servers) await stop(server.child);
    }
  } finally {
    for (const data of [small, large]) rmSync(data.dir, { recursive: true, force: true });
  }
  return { rows, peakRssMb };
}

function table(rows: Row[]): string {
  const head = `| scenario | req/s | baseline req/s | ratio | p50 ms | p99 ms | errors | peak RSS MB | CPU µs/req | baseline CPU µs/req |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|`;
  return [head, ...rows.map((r) => `| ${r.scenario} | ${Math.round(r.almanac.requestsPerSecond)} | ${Math.round(r.baseline.requestsPerSecond)} | ${(r.ratio * 100).toFixed(1)} % | ${r.almanac.p50} | ${r.almanac.p99} | ${r.almanac.errors} | ${r.rssMb} | ${r.cpuUs.toFixed(0)} | ${r.baselineCpuUs.toFixed(0)} |`)].join('\n');
}

function barChart(rows: Row[]): string {
  const max = Math.max(...rows.map((r) => r.baseline.requestsPerSecond), 1);
  const h = 28;
  const bars = rows.map((r, i) => {
    const y = 30 + i * h * 1.4;
    const wa = (r.almanac.requestsPerSecond / max) * 420;
    const wb = (r.baseline.requestsPerSecond / max) * 420;
    return `<text x="5" y="${y + 12}" font-size="11">${r.scenario.replace(/&/g, '&amp;')}</text>
<rect x="230" y="${y}" width="${wb.toFixed(1)}" height="${h / 2 - 1}" fill="#c8c8c8"/>
<rect x="230" y="${y + h / 2}" width="${wa.toFixed(1)}" height="${h / 2 - 1}" fill="#2b6cb0"/>
<text x="${(235 + wa).toFixed(1)}" y="${y + h - 3}" font-size="10">${Math.round(r.almanac.requestsPerSecond)} (${(r.ratio * 100).toFixed(0)} %)</text>`;
  });
  const height = 40 + rows.length * h * 1.4;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="760" height="${height}" font-family="sans-serif">
<text x="5" y="16" font-size="13">Requests per second: Almanac (blue) and a bare node:http server with bodies of the same size (grey)</text>
${bars.join('\n')}
</svg>\n`;
}

function growthChart(rows: GrowthRow[]): string {
  const reads = rows.filter((r) => r.uncachedSmall && r.uncachedLarge);
  const values = reads.flatMap((r) => [r.small.result.p50, r.large.result.p50, r.uncachedSmall!.result.p50, r.uncachedLarge!.result.p50]);
  const max = Math.max(1, ...values);
  const y = (v: number) => 260 - (v / max) * 220;
  const colors = ['#2b6cb0', '#c53030', '#2f855a', '#b7791f', '#6b46c1', '#319795', '#d53f8c'];
  const lines = reads.map((r, k) => {
    const color = colors[k % colors.length];
    const line = (from: Measured, to: Measured, dash: string) =>
      `<line x1="80" y1="${y(from.result.p50).toFixed(0)}" x2="600" y2="${y(to.result.p50).toFixed(0)}" stroke="${color}" stroke-width="2"${dash}/>`;
    return `${line(r.small, r.large, '')}${line(r.uncachedSmall!, r.uncachedLarge!, ' stroke-dasharray="6 4"')}<text x="620" y="${30 + k * 14}" font-size="10" fill="${color}">${r.scenario.replace(/&/g, '&amp;')}</text>`;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="820" height="300" font-family="sans-serif">
<text x="5" y="16" font-size="13">p50 latency (ms, up to ${max}) at ${GROWTH.small.toLocaleString('en')} and ${GROWTH.large.toLocaleString('en')} events; solid: as served, dashed: response cache off</text>
<line x1="80" y1="260" x2="600" y2="260" stroke="#888"/><text x="60" y="280" font-size="10">${GROWTH.small.toLocaleString('en')}</text><text x="570" y="280" font-size="10">${GROWTH.large.toLocaleString('en')}</text>
${lines.join('\n')}
</svg>\n`;
}

const main = await prepare(Number(values.events));
if (values['stall-only']) {
  try {
    const { probe, costly } = await stallOnly(main);
    process.stdout.write(`GET /events/{id} beside ${main.costly.name}: p50 ${probe.p50} ms, p99 ${probe.p99} ms; costly ${costly.requestsPerSecond.toFixed(1)} req/s, errors ${costly.errors}\n`);
  } finally {
    rmSync(main.dir, { recursive: true, force: true });
  }
  process.exit(0);
}
let measuredMain: Awaited<ReturnType<typeof measure>>;
try {
  measuredMain = await measure(main);
} finally {
  rmSync(main.dir, { recursive: true, force: true });
}
const { rows, pair, workers, stall } = measuredMain;
const grown = values.growth ? await growth() : null;

const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const find = (name: string) => rows.find((r) => r.scenario === name)!;
const anonymous = median(pair.anonymous);
const authenticated = median(pair.authenticated);
const p50Growth = (r: GrowthRow, cached: boolean) => (cached ? r.large.result.p50 / r.small.result.p50 : r.uncachedLarge!.result.p50 / r.uncachedSmall!.result.p50);
const readGrowth = grown?.rows.filter((r) => r.uncachedSmall) ?? [];
const rps = (m: Measured) => m.result.requestsPerSecond;
/**
 * The generator and the server share two cores: with the server's CPU per request s and the generator's g, no number
 * of workers serves more than 2 / (s + g) requests a second.
 */
const scalingLines = (sc: Scaling, kind: string) => {
  const ceiling = 2e6 / (sc.one.cpuUs + sc.generatorUs.one);
  return `- ${kind}: one worker ${Math.round(rps(sc.one))} req/s (p99 ${sc.one.result.p99} ms), two ${Math.round(rps(sc.two))} (p99 ${sc.two.result.p99} ms): ${(rps(sc.two) / rps(sc.one)).toFixed(2)} ×. `
    + `Per request, one worker used ${sc.one.cpuUs.toFixed(0)} µs of CPU and the generator ${sc.generatorUs.one.toFixed(0)} µs (${sc.generatorUs.two.toFixed(0)} µs against two), `
    + `so the two cores serve at most about ${Math.round(ceiling)} req/s, ${(ceiling / rps(sc.one)).toFixed(2)} × one worker.`;
};
const checks: [string, boolean][] = [
  [`GET /events/{id} ≥ 40 % of the baseline`, find('GET /events/{id}').ratio >= 0.4],
  [`default GET /events ≥ 20 % of the baseline`, find('GET /events').ratio >= 0.2],
  [`p99 ≤ 20 ms for every read but search`, rows.filter((r) => !/POST|mix|search/.test(r.scenario)).every((r) => r.almanac.p99 <= 20)],
  [`search p99 ≤ 100 ms`, find('GET /events?search').almanac.p99 <= 100],
  [`POST /events ≥ 1,000/s`, find('POST /events').almanac.requestsPerSecond >= 1000],
  [`no errors`, rows.every((r) => r.almanac.errors === 0)],
  [`authenticated within 10 % of anonymous (medians of ${rounds} alternating rounds)`, authenticated.result.requestsPerSecond >= 0.9 * anonymous.result.requestsPerSecond],
  [`two workers ≥ 1.25 × one on GET /events/{id} (medians of ${rounds} alternating rounds)`, rps(workers.served.two) >= 1.25 * rps(workers.served.one)],
  [`GET /events/{id} p99 < 1 s beside ${COSTLY_CLIENTS} clients sending the costliest anonymous requests`, stall.probe.p99 < 1000],
];
if (grown) {
  checks.push([`p50 at 1,000,000 / at 10,000 ≤ 1.3 for every read`, readGrowth.every((r) => p50Growth(r, true) <= 1.3)]);
  checks.push([`peak RSS ≤ 250 MB at 1,000,000 events`, grown.peakRssMb <= 250]);
}
const pairLine = (kind: string, runs: Measured[]) => `${kind}: ${runs.map((m) => Math.round(m.result.requestsPerSecond)).join(', ')} req/s; ${runs.map((m) => m.cpuUs.toFixed(0)).join(', ')} µs of server CPU per request`;
let text = `# Almanac benchmark

Run on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${machine}; ${values.engine === 'postgres' ? 'PostgreSQL (a local server)' : 'SQLite'}, ${main.events.toLocaleString('en')} events, ${connections} connections, ${duration} s per scenario after ${warmup} s of warm-up, one worker. Ratios compare with a bare node:http server answering bodies of the same size in the same run. Latencies are taken from every answer (not rounded to whole milliseconds); CPU µs/req is the server process's CPU time over the requests it answered (warm-up included).

${table(rows)}

![requests per second](requests.svg)

Anonymous and authenticated GET /events/{id} ran in ${rounds} alternating rounds; the table shows each one's median round:
- ${pairLine('anonymous', pair.anonymous)}
- ${pairLine('authenticated', pair.authenticated)}
- authenticated / anonymous: ${(authenticated.result.requestsPerSecond / anonymous.result.requestsPerSecond).toFixed(2)} in requests per second, ${(authenticated.cpuUs / anonymous.cpuUs).toFixed(2)} in CPU per request.

One and two workers on GET /events/{id}, both up at once, ${rounds} alternating rounds of ${SCALING.duration} s each (medians); the load generator shares the two cores:
${scalingLines(workers.served, 'as served')}
${scalingLines(workers.uncached, 'response cache off (`ALMANAC_CACHE_MB=0`), every answer computed')}

GET /events/{id} from one client while ${COSTLY_CLIENTS} clients send the costliest anonymous requests the limits allow (searches of ten short words or exclusions over the whole calendar, every category and tag 10,000 records deep, feeds of 500 events over 761 days, venue searches of ten words; each different, so the cache cannot answer): p50 ${stall.probe.p50} ms, p99 ${stall.probe.p99} ms; the costly requests ran at ${stall.costly.requestsPerSecond.toFixed(1)} req/s with ${stall.costly.errors} errors. One thread answers both: a costly request makes every other wait for it.

## Targets

${checks.map(([t, ok]) => `- ${ok ? 'met' : 'missed'}: ${t}`).join('\n')}
`;
mkdirSync(join(projectRoot, 'bench'), { recursive: true });
if (grown) {
  const line = (r: GrowthRow) => {
    const off = r.uncachedSmall ? `${r.uncachedSmall.result.p50} | ${r.uncachedLarge!.result.p50} | ${p50Growth(r, false).toFixed(2)}` : '— | — | —';
    return `| ${r.scenario} | ${r.small.result.p50} | ${r.large.result.p50} | ${p50Growth(r, true).toFixed(2)} | ${off} |`;
  };
  text += `
## Growth

${GROWTH.small.toLocaleString('en')} and ${GROWTH.large.toLocaleString('en')} events (the same density of events per day), two servers up at once, ${GROWTH.rounds} alternating runs of ${GROWTH.duration} s per size and scenario (the lower middle of their p50s). Once as served, then the reads with the response cache off (\`ALMANAC_CACHE_MB=0\`), so every answer is computed. Peak RSS at ${GROWTH.large.toLocaleString('en')} events: ${grown.peakRssMb} MB.

| scenario | p50 ms at ${GROWTH.small.toLocaleString('en')} | at ${GROWTH.large.toLocaleString('en')} | ratio | cache off: p50 ms at ${GROWTH.small.toLocaleString('en')} | at ${GROWTH.large.toLocaleString('en')} | ratio |
|---|---:|---:|---:|---:|---:|---:|
${grown.rows.map(line).join('\n')}

![latency against size](growth.svg)
`;
  writeFileSync(join(projectRoot, 'bench', 'growth.svg'), growthChart(grown.rows));
}
writeFileSync(join(projectRoot, 'bench', 'results.md'), text);
writeFileSync(join(projectRoot, 'bench', 'requests.svg'), barChart(rows));
process.stdout.write('\n' + text);
if (values.profile) process.stdout.write(`\nCPU profile of the one-worker server (all scenarios): ${PROFILES} (open in Chrome DevTools or speedscope)\n`);
