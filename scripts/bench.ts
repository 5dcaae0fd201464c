/**
 * `npm run bench`: Almanac's throughput and latency as ratios to a bare node:http baseline measured in the same
 * run, on SQLite and on PostgreSQL side by side (`--engine`, HELP below says what each option does). Seeds a fresh
 * database per engine, starts Almanac on each and the baseline as separate processes, loads each with autocannon
 * from another process, and writes tables, bench/results.md and SVG charts.
 */
import Database from 'better-sqlite3';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, totalmem, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { RARE_WORD } from '../src/db/seed.js';
import { commandLine, usageError, wholeNumber } from './commandLine.js';
import { cpuUsPerRequest, procStatus, processTreeCpuTicks } from './benchProc.js';
import { startCluster, type Cluster } from './postgresCluster.js';
import { projectRoot } from '../src/paths.js';

const NS = '/wp-json/tribe/events/v1';
const HELP = `npm run bench -- [options]

Seeds a fresh database per engine, then measures Almanac's throughput, latency and CPU per request beside a bare
node:http server answering bodies of the same size (the baseline), on each engine in the same run, scenario by
scenario, the engines taking turns. Writes bench/results.md, bench/requests.svg (and bench/growth.svg).

  --engine both|sqlite|postgres  the engines to measure (default both); PostgreSQL runs on a throwaway cluster on
                                 this machine (Debian's postgresql package, or ALMANAC_PG_BINDIR)
  --events N                     events in each database (default 100000)
  --duration S                   seconds measured per scenario (default 10)
  --warmup S                     seconds of load before each measurement (default 2)
  --connections N                connections of the load generator (default 32)
  --rounds N                     rounds of every read and of the 95/5 mix (each on each engine, then on the
                                 baseline; anonymous and authenticated reads by id alternate), of the reads with
                                 the cache off, and of one and two workers (default 3); each row is the median round
  --growth                       also 10,000 and 1,000,000 events on each engine, p50 growth (adds about 25 minutes
                                 per engine, most of it seeding); without it, the growth sections of bench/results.md
                                 are kept, dated
  --profile                      leave a V8 CPU profile of each engine's one-worker server in bench/profiles/
  --stall-only                   only GET /events/{id} beside the costliest anonymous requests
  --help                         this text

A default run (both engines, 100,000 events) takes about 28 minutes on an idle two-core machine, up to 40 on a
busy one.
`;
const values = commandLine('bench', {
  events: { type: 'string', default: '100000' },
  growth: { type: 'boolean', default: false },
  duration: { type: 'string', default: '10' },
  warmup: { type: 'string', default: '2' },
  connections: { type: 'string', default: '32' },
  rounds: { type: 'string', default: '3' },
  profile: { type: 'boolean', default: false },
  'stall-only': { type: 'boolean', default: false },
  engine: { type: 'string', default: 'both' },
}, HELP);
type Engine = 'sqlite' | 'postgres';
const ENGINE_NAMES: Record<Engine, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };
const engines: Engine[] = values.engine === 'both' ? ['sqlite', 'postgres'] : values.engine === 'sqlite' || values.engine === 'postgres' ? [values.engine] : [];
if (!engines.length) usageError('bench', `--engine is both, sqlite or postgres, not "${values.engine}"`, HELP);
const eventCount = wholeNumber('bench', 'events', values.events, 1, HELP);
const duration = wholeNumber('bench', 'duration', values.duration, 1, HELP);
const warmup = wholeNumber('bench', 'warmup', values.warmup, 0, HELP);
const connections = wholeNumber('bench', 'connections', values.connections, 1, HELP);
/** Rounds of every read as served and of the mix, of the reads with the cache off and of one and two workers (see `--rounds`). */
const rounds = wholeNumber('bench', 'rounds', values.rounds, 1, HELP);
/** The 95/5 read/write mix: measured in rounds, as the reads by id are (see `--rounds`). */
const MIX = '95/5 read/write mix';
/** Growth runs are shorter and alternate between the two sizes, so drift in the machine's load hits both alike. */
// three runs per size: of two, a size's p50s differed by up to 1.7 × on this machine, and the better of two
// decided a ratio alone
const GROWTH = { small: 10_000, large: 1_000_000, duration: 5, warmup: 1, rounds: 3 };
/** The rounds of one against two workers are shorter too (they alternate, so drift hits both alike). */
const SCALING = { duration: 5, warmup: 1 };
/** The two-node run on PostgreSQL: writers on one node, readers on the other. */
const TWO_NODES = { writers: 4, readers: 16, editsPerEvent: 3 };
/**
 * The reads measured once more with the response cache off, every answer computed, in rounds (see `--rounds`): their
 * targets are costs per request, which moved by up to a fifth between two runs a minute apart on this machine.
 */
const UNCACHED_SCENARIOS = ['GET /events/{id}', 'GET /events', 'GET /events?search'];
const CACHE_OFF = { ALMANAC_CACHE_MB: '0' };
const node = process.execPath;
const cli = join(projectRoot, 'dist', 'src', 'cli.js');
/** With `--profile`, the one-worker server of the main run writes a V8 CPU profile here when it stops. */
const PROFILES = join(projectRoot, 'bench', 'profiles');
const RESULTS = join(projectRoot, 'bench', 'results.md');

/** The growth sections and targets of the results file as it is, and when they were measured; null when it has none. */
function previousGrowth(): { sections: string; targets: string[]; date: string } | null {
  if (!existsSync(RESULTS)) return null;
  const old = readFileSync(RESULTS, 'utf8');
  const start = old.indexOf('\n## Growth on ');
  if (start < 0) return null;
  const date = /_Growth: from the run of (.+?) \(/.exec(old)?.[1] ?? /^Run on (.+? UTC)/m.exec(old)?.[1] ?? 'an earlier run';
  const targets = old.split('\n').filter((line) => /^- (met|missed): .*1,000,000/.test(line)).map((line) => line.replace(/ \(growth run of [^)]*\)$/, ''));
  return { sections: old.slice(start + 1), targets, date };
}
/** The results this run replaces, read before it writes, to compare SQLite's figures with. */
const previousResults = (() => {
  try {
    return readFileSync(RESULTS, 'utf8');
  } catch {
    return '';
  }
})();

interface LoadResult { requestsPerSecond: number; p50: number; p99: number; latencySamples: number; errors: number; requests: number; warmupRequests: number; generatorCpuShare: number }
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
/**
 * One load run: what the generator saw, the server's peak RSS and its CPU time per request (µs), and on PostgreSQL
 * the database server's CPU time per request (null where not sampled).
 */
interface Measured { result: LoadResult; rssMb: number; cpuUs: number; databaseCpuUs: number | null }
interface Row { engine: Engine; scenario: string; almanac: LoadResult; baseline: LoadResult; ratio: number; rssMb: number; cpuUs: number; baselineCpuUs: number; databaseCpuUs: number | null }
/** A seeded database with the scenarios to run against it, and the costliest anonymous requests the limits allow. */
interface Dataset {
  engine: Engine; events: number; dir: string;
  /** What points Almanac and its CLI at the dataset's database. */
  env: Record<string, string>;
  auth: Record<string, string>; scenarios: Scenario[]; costly: Scenario;
  /** The PostgreSQL server's postmaster, whose CPU (with its children's) is part of each request's cost. */
  postmaster?: number;
}
/** The processes whose CPU a load is charged: an Almanac server, and the database server behind it. */
interface Watch { pid?: number; postmaster?: number }
interface Server { child: ChildProcess; url: string }
const watchOf = (server: Server, data: Dataset): Watch => ({ pid: server.child.pid, postmaster: data.postmaster });

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

async function startAlmanac(database: Record<string, string>, workers: number, env: Record<string, string> = {}, nodeOptions: string[] = []): Promise<Server> {
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

async function startBaseline(sizes: Record<string, number>): Promise<Server> {
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

/** Runs a helper of the benchmark in a process of its own, given `payload` as JSON in `variable`: its last line of output. */
async function runHelper(script: string, variable: string, payload: object): Promise<string> {
  const child = spawn(node, [join(projectRoot, 'dist', 'scripts', script)], { env: { ...process.env, [variable]: JSON.stringify(payload) }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`${script} failed (${code})`);
  return out.trim().split('\n').pop()!;
}

/** Runs the load process against `url`, sampling the server's resident memory and the CPU time of what `watch` names. */
async function load(url: string, scenario: Scenario, headers: Record<string, string>, watch: Watch = {}, timing = { duration, warmup }): Promise<Measured> {
  let rss = 0;
  const sample = () => (rss = Math.max(rss, procStatus(watch.pid)?.rssMb ?? 0));
  const cpuBefore = procStatus(watch.pid)?.cpuTicks;
  const databaseBefore = processTreeCpuTicks(watch.postmaster);
  const timer = watch.pid ? setInterval(sample, 200) : null;
  const result = JSON.parse(await runHelper('benchLoad.js', 'BENCH_SCENARIO', {
    url, connections: scenario.connections ?? connections, ...timing, paths: scenario.paths, window: scenario.window, writeShare: scenario.writeShare ?? 0, postPath: scenario.postPath, headers,
  })) as LoadResult;
  if (timer) clearInterval(timer);
  const served = result.requests + result.warmupRequests;
  return {
    result,
    rssMb: Math.round(rss),
    cpuUs: cpuUsPerRequest(cpuBefore, procStatus(watch.pid)?.cpuTicks, served) ?? 0,
    databaseCpuUs: cpuUsPerRequest(databaseBefore, processTreeCpuTicks(watch.postmaster), served),
  };
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

let cluster: Cluster | null = null;
let databases = 0;

/** The PostgreSQL cluster every dataset of the run lives in, started at the first need. */
async function postgresCluster(): Promise<Cluster> {
  if (!cluster) {
    // settings of a server that has the machine to itself, as one would run it
    cluster = await startCluster({ settings: { shared_buffers: '512MB', max_connections: '200', synchronous_commit: 'on' } });
    const started = cluster;
    process.once('exit', () => started.stop());
  }
  return cluster;
}

/** A fresh, empty database of `engine`, as the environment that names it (and the PostgreSQL server's process). */
async function freshDatabase(dir: string, engine: Engine): Promise<{ env: Record<string, string>; postmaster?: number }> {
  if (engine === 'sqlite') return { env: { ALMANAC_DB: join(dir, 'bench.sqlite') } };
  const { url, urlOf, dir: clusterDir } = await postgresCluster();
  const name = `bench_${++databases}`;
  await sqlOn(url, `CREATE DATABASE ${name}`);
  // postmaster.pid's first line is the server's process id
  const postmaster = Number(readFileSync(join(clusterDir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  return { env: { ALMANAC_DATABASE_URL: urlOf(name) }, postmaster };
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

/** Seeds a fresh database of `events` events on `engine`, with an administrator's application password, and its scenarios. */
async function prepare(events: number, engine: Engine): Promise<Dataset> {
  const dir = mkdtempSync(join(tmpdir(), 'almanac-bench-'));
  const { env, postmaster } = await freshDatabase(dir, engine);
  process.stderr.write(`\n== ${events.toLocaleString('en')} events on ${ENGINE_NAMES[engine]}\n`);
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
    { name: MIX, paths: sample.map((e) => `${NS}/events/${e.id}`), writeShare: 0.05, postPath: `${NS}/events`, authenticated: true, read: false },
  ];
  const costly: Scenario = { name: `costly anonymous requests (${COSTLY_CLIENTS} clients)`, paths: costlyPaths(), connections: COSTLY_CLIENTS, read: true };
  return { engine, events, dir, env, auth, scenarios, costly, postmaster };
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
  process.stderr.write(`  ${ENGINE_NAMES[data.engine]}: GET /events/{id} beside ${data.costly.name}: p50 ${probed.result.p50} ms, p99 ${probed.result.p99} ms (${probed.result.latencySamples} of ${probed.result.requests} requests sent while the costly ones ran); the costly ones ${costly.requestsPerSecond.toFixed(1)} req/s, errors ${costly.errors}\n`);
  return { probe: probed.result, costly };
}

const report = (name: string, m: Measured, note = '') =>
  process.stderr.write(`  ${name}${note}: ${Math.round(m.result.requestsPerSecond)} req/s, p50 ${m.result.p50} ms, p99 ${m.result.p99} ms, ${m.cpuUs ? `${m.cpuUs.toFixed(0)} µs CPU/req` : 'CPU not sampled (several processes)'}${m.databaseCpuUs === null ? '' : ` + ${m.databaseCpuUs.toFixed(0)} µs of PostgreSQL`}, errors ${m.result.errors}\n`);

type Stall = Awaited<ReturnType<typeof besideCostly>>;
interface Pair { anonymous: Measured[]; authenticated: Measured[] }
/**
 * What the main run measured on one engine. `rounds`: the runs of each read as served but the reads by id (those are
 * in `pair`), and of the mix.
 */
interface EngineResults { rows: Row[]; pair: Pair; rounds: Map<string, Measured[]>; uncached: Map<string, Measured[]>; stall: Stall; workers: { served: Scaling; uncached: Scaling } }

/** The bytes of one answer of a scenario (a POST scenario's: one created event), for the baseline's bodies. */
async function answerSize(url: string, data: Dataset, scenario: Scenario): Promise<number> {
  const probe = await fetch(url + scenario.paths[0], scenario.writeShare === 1
    ? { method: 'POST', headers: { ...data.auth, 'content-type': 'application/json' }, body: JSON.stringify({ title: 'Probe', start_date: '2031-01-01 10:00', end_date: '2031-01-01 11:00' }) }
    : { headers: headersOf(scenario, data.auth) });
  return (await probe.arrayBuffer()).byteLength;
}

/**
 * The main run, on every engine at once: each engine has a server as served and one with the response cache off, all
 * up together with the baseline; each scenario runs on each engine in turn and then on the baseline, so drift in
 * the machine's load hits the engines and the baseline alike, and both engines' ratios are to the same baseline.
 */
async function measure(datasets: Dataset[]): Promise<Map<Engine, EngineResults>> {
  const first = datasets[0]!;
  const uncachedIndexes = UNCACHED_SCENARIOS.map((name) => first.scenarios.findIndex((sc) => sc.name === name));
  const engineServers: { data: Dataset; served: Server; uncached: Server }[] = [];
  for (const data of datasets) {
    const served = await startAlmanac(data.env, 1, {}, values.profile ? ['--cpu-prof', `--cpu-prof-dir=${PROFILES}`] : []);
    engineServers.push({ data, served, uncached: await startAlmanac(data.env, 1, CACHE_OFF) });
  }
  // the baseline answers bodies of the size the engines answer (the mean of theirs: the same records, nearly alike);
  // measured before the warm-up, since the POST probe's write retires every cached answer
  const sizes: Record<string, number> = {};
  for (const [i] of first.scenarios.entries()) {
    let total = 0;
    for (const { data, served } of engineServers) total += await answerSize(served.url, data, data.scenarios[i]!);
    sizes[`/s${i}`] = Math.round(total / engineServers.length);
  }
  for (const { data, served, uncached } of engineServers) {
    await warmUp(served.url, data);
    await warmUp(uncached.url, data, uncachedIndexes.map((i) => data.scenarios[i]!));
  }
  const baseline = await startBaseline(sizes);
  const baselines: Measured[] = [];
  const measureBaseline = async (i: number) => {
    const sc = first.scenarios[i]!;
    baselines[i] = await load(baseline.url, { ...sc, paths: [`/s${i}`], postPath: sc.postPath && `/s${i}` }, {}, { pid: baseline.child.pid });
    report(`baseline for ${sc.name}`, baselines[i]!);
  };
  const pairIndexes = { anonymous: 0, authenticated: 1 } as const;
  const perEngine = new Map(datasets.map((data) => [data.engine, {
    measured: [] as (Measured & { scenario: string; index: number })[],
    pair: { anonymous: [], authenticated: [] } as Pair,
    rounds: new Map<string, Measured[]>(),
    uncached: new Map<string, Measured[]>(uncachedIndexes.map((i) => [first.scenarios[i]!.name, []])),
  }]));
  for (const [i] of first.scenarios.entries()) {
    if (i === pairIndexes.authenticated) continue; // in rounds with the anonymous reads
    const sc = first.scenarios[i]!;
    if (i === pairIndexes.anonymous) {
      // anonymous and authenticated reads by id alternate, so that neither gets the machine's better moments
      for (let r = 0; r < rounds; r++) {
        for (const { data, served } of engineServers) {
          for (const kind of ['anonymous', 'authenticated'] as const) {
            const pairScenario = data.scenarios[pairIndexes[kind]]!;
            const m = await load(served.url, pairScenario, headersOf(pairScenario, data.auth), watchOf(served, data));
            perEngine.get(data.engine)!.pair[kind].push(m);
            report(`${ENGINE_NAMES[data.engine]}: ${pairScenario.name}`, m, ` (round ${r + 1})`);
          }
        }
      }
      for (const { measured, pair } of perEngine.values()) {
        for (const kind of ['anonymous', 'authenticated'] as const) measured.push({ ...median(pair[kind]), scenario: first.scenarios[pairIndexes[kind]]!.name, index: pairIndexes[kind] });
      }
      await measureBaseline(pairIndexes.anonymous);
      await measureBaseline(pairIndexes.authenticated);
      continue;
    }
    if (sc.read || sc.name === MIX) {
      // a single run of a read moved by up to a third from one run to the next on this machine, and the engines are
      // compared read by read: rounds, each scenario on each engine in turn and then on the baseline, medians kept
      for (const { rounds: byName } of perEngine.values()) byName.set(sc.name, []);
      const baselineRounds: Measured[] = [];
      for (let r = 0; r < rounds; r++) {
        for (const { data, served } of engineServers) {
          const m = await load(served.url, data.scenarios[i]!, headersOf(data.scenarios[i]!, data.auth), watchOf(served, data));
          perEngine.get(data.engine)!.rounds.get(sc.name)!.push(m);
          report(`${ENGINE_NAMES[data.engine]}: ${sc.name}`, m, ` (round ${r + 1})`);
        }
        await measureBaseline(i);
        baselineRounds.push(baselines[i]!);
      }
      for (const { measured, rounds: byName } of perEngine.values()) measured.push({ ...median(byName.get(sc.name)!), scenario: sc.name, index: i });
      baselines[i] = median(baselineRounds);
      continue;
    }
    for (const { data, served } of engineServers) {
      const m = await load(served.url, data.scenarios[i]!, headersOf(data.scenarios[i]!, data.auth), watchOf(served, data));
      perEngine.get(data.engine)!.measured.push({ ...m, scenario: sc.name, index: i });
      report(`${ENGINE_NAMES[data.engine]}: ${sc.name}`, m);
    }
    await measureBaseline(i);
  }
  // the same reads with every answer computed, beside the same baselines (the bodies are the same), in rounds
  for (let r = 0; r < rounds; r++) {
    for (const i of uncachedIndexes) {
      for (const { data, uncached } of engineServers) {
        const sc = data.scenarios[i]!;
        const m = await load(uncached.url, sc, headersOf(sc, data.auth), watchOf(uncached, data));
        perEngine.get(data.engine)!.uncached.get(sc.name)!.push(m);
        report(`${ENGINE_NAMES[data.engine]}: ${sc.name}, cache off`, m, ` (round ${r + 1})`);
      }
    }
  }
  for (const { measured, uncached } of perEngine.values()) {
    for (const i of uncachedIndexes) {
      const name = first.scenarios[i]!.name;
      measured.push({ ...median(uncached.get(name)!), scenario: `${name}, cache off`, index: i });
    }
  }
  const stalls = new Map<Engine, Stall>();
  for (const { data, served } of engineServers) stalls.set(data.engine, await besideCostly(served.url, data));
  for (const { served, uncached } of engineServers) await Promise.all([stop(served.child), stop(uncached.child)]);
  await stop(baseline.child);

  const results = new Map<Engine, EngineResults>();
  for (const data of datasets) {
    const { measured, pair, rounds: runs, uncached } = perEngine.get(data.engine)!;
    const rows = measured.map((m): Row => {
      const b = baselines[m.index]!;
      return { engine: data.engine, scenario: m.scenario, almanac: m.result, baseline: b.result, ratio: m.result.requestsPerSecond / b.result.requestsPerSecond, rssMb: m.rssMb, cpuUs: m.cpuUs, baselineCpuUs: b.cpuUs, databaseCpuUs: m.databaseCpuUs };
    });
    process.stderr.write(`\n== one and two workers on ${ENGINE_NAMES[data.engine]}\n`);
    const workers = { served: await workerScaling(data, {}), uncached: await workerScaling(data, CACHE_OFF) };
    results.set(data.engine, { rows, pair, rounds: runs, uncached, stall: stalls.get(data.engine)!, workers });
  }
  return results;
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
        // the CPU of two workers is spread over processes; the database server's is sampled either way
        const m = await load(server.url, byId, {}, k === 0 ? watchOf(server, data) : { postmaster: data.postmaster }, SCALING);
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

/** What the two-node helper (scripts/benchTwoNodes.ts) reports, with the CPU per request of each node and of PostgreSQL. */
interface TwoNodes {
  seconds: number; posts: number; patches: number; preconditionFailed: number; writeErrors: number; reads: number; readErrors: number;
  staleReads: number; tagReads: number; staleTagReads: number; writesPerSecond: number; readsPerSecond: number;
  writeP50: number; writeP99: number; readP50: number; readP99: number;
  readBack: { events: number; writes: number; missing: number; behind: number };
  writerCpuUs: number | null; readerCpuUs: number | null; databaseCpuUs: number | null;
}

/**
 * Two Almanac servers on one PostgreSQL database, as two nodes behind a load balancer would be: writes on one, reads
 * on the other, then every acknowledged write read back from the reading node (scripts/benchTwoNodes.ts).
 */
async function twoNodes(data: Dataset): Promise<TwoNodes> {
  process.stderr.write(`\n== two nodes on ${ENGINE_NAMES[data.engine]}: writes on one, reads on the other\n`);
  // every node names its records after one public address, as nodes behind a load balancer do (README, Scaling
  // out); otherwise each answer's links, and so its ETag, would name the node that made it
  const nodes = { ALMANAC_PUBLIC_URL: 'https://calendar.example' };
  const writer = await startAlmanac(data.env, 1, nodes);
  const reader = await startAlmanac(data.env, 1, nodes);
  try {
    await warmUp(reader.url, data, [data.scenarios[0]!]);
    const ticks = () => [procStatus(writer.child.pid)?.cpuTicks, procStatus(reader.child.pid)?.cpuTicks, processTreeCpuTicks(data.postmaster)] as const;
    const before = ticks();
    const run = JSON.parse(await runHelper('benchTwoNodes.js', 'BENCH_TWO_NODES', {
      writeUrl: writer.url, readUrl: reader.url, eventsPath: `${NS}/events`, authorization: data.auth.Authorization, duration, ...TWO_NODES,
    })) as Omit<TwoNodes, 'writerCpuUs' | 'readerCpuUs' | 'databaseCpuUs'>;
    const after = ticks();
    const writes = run.posts + run.patches + run.preconditionFailed + run.writeErrors;
    const reads = run.reads + run.tagReads + run.readBack.events;
    const result: TwoNodes = {
      ...run,
      writerCpuUs: cpuUsPerRequest(before[0], after[0], writes),
      readerCpuUs: cpuUsPerRequest(before[1], after[1], reads),
      databaseCpuUs: cpuUsPerRequest(before[2], after[2], writes + reads),
    };
    process.stderr.write(`  ${JSON.stringify(result)}\n`);
    return result;
  } finally {
    await Promise.all([stop(writer.child), stop(reader.child)]);
  }
}

interface GrowthRow { scenario: string; small: Measured; large: Measured; uncachedSmall?: Measured; uncachedLarge?: Measured }
interface Growth { engine: Engine; rows: GrowthRow[]; peakRssMb: number }

/**
 * p50 at 10,000 and at 1,000,000 events on `engine`, from two servers up at once, runs alternating between them. Once
 * as served (the response cache on), then the reads again with the cache off, which shows what the data layer's cost
 * does.
 */
async function growth(engine: Engine): Promise<Growth> {
  const small = await prepare(GROWTH.small, engine);
  const large = await prepare(GROWTH.large, engine);
  const timing = { duration: GROWTH.duration, warmup: GROWTH.warmup };
  const rows: GrowthRow[] = small.scenarios.map((s) => ({ scenario: s.name, small: undefined!, large: undefined! }));
  let peakRssMb = 0;
  try {
    for (const cache of ['on', 'off'] as const) {
      process.stderr.write(`\n== growth on ${ENGINE_NAMES[engine]}, response cache ${cache}\n`);
      const env: Record<string, string> = cache === 'off' ? CACHE_OFF : {};
      const servers = [await startAlmanac(small.env, 1, env), await startAlmanac(large.env, 1, env)] as const;
      await warmUp(servers[0].url, small);
      await warmUp(servers[1].url, large);
      for (const [i, row] of rows.entries()) {
        if (cache === 'off' && !small.scenarios[i]!.read) continue;
        const runs: Measured[][] = [[], []];
        for (let r = 0; r < GROWTH.rounds; r++) {
          for (const [k, data] of [small, large].entries()) {
            const sc = data.scenarios[i]!;
            const m = await load(servers[k]!.url, sc, headersOf(sc, data.auth), watchOf(servers[k]!, data), timing);
            runs[k]!.push(m);
            if (k === 1) peakRssMb = Math.max(peakRssMb, m.rssMb);
            report(`${sc.name} at ${data.events.toLocaleString('en')}`, m);
          }
        }
        // the median of each size's p50s (the lower middle of an even number of runs)
        const mid = (ms: Measured[]) => [...ms].sort((a, b) => a.result.p50 - b.result.p50)[Math.floor((ms.length - 1) / 2)]!;
        if (cache === 'on') Object.assign(row, { small: mid(runs[0]!), large: mid(runs[1]!) });
        else Object.assign(row, { uncachedSmall: mid(runs[0]!), uncachedLarge: mid(runs[1]!) });
      }
      for (const server of servers) await stop(server.child);
    }
  } finally {
    for (const data of [small, large]) rmSync(data.dir, { recursive: true, force: true });
  }
  return { engine, rows, peakRssMb };
}

const rps = (m: Measured) => m.result.requestsPerSecond;
const us = (value: number | null) => (value === null ? '—' : value.toFixed(0));

/**
 * The SQLite figures of the results this run replaces, when they were measured as this run is (the same events,
 * connections and seconds per scenario): each scenario's ratio to the baseline of its own run, from the SQLite table
 * (the first of a SQLite-only run). Ratios, not req/s: the runs may be on machines of different speeds.
 */
function previousSqliteFigures(text: string): { when: string; ratios: Map<string, number> } | null {
  const head = /Run on ([^,]+ UTC).*?([\d,]+) events(?: each)?, (\d+) connections, (\d+) s per scenario/.exec(text);
  if (!head || Number(head[2]!.replace(/,/g, '')) !== eventCount || Number(head[3]) !== connections || Number(head[4]) !== duration) return null;
  const sqlite = text.indexOf('\n## SQLite\n');
  if (sqlite < 0 && /PostgreSQL \(a local server/.test(text.split('\n## ')[0]!)) return null;
  const lines = text.slice(Math.max(0, sqlite)).split('\n');
  const start = lines.findIndex((l) => l.startsWith('| scenario |'));
  const figures = new Map<string, number>();
  for (const line of lines.slice(start + 2)) {
    const cells = line.split('|').map((c) => c.trim());
    if (start < 0 || !line.startsWith('|')) break;
    figures.set(cells[1]!, Number(cells[4]!.replace(/\s*%$/, '')) / 100);
  }
  return figures.size ? { when: head[1]!, ratios: figures } : null;
}

/**
 * The server's CPU per request in units of the bare baseline's, measured in the same run: closer between machines
 * whose speed differs several times over than microseconds are, though not equal (the baseline is mostly system
 * calls, a computed answer mostly JavaScript).
 */
const cpuTimesBaseline = (r: Row) => r.cpuUs / r.baselineCpuUs;
const times = (x: number) => `${x.toFixed(1)} ×`;

/** A table of one engine's rows, with `extra` columns after the common ones. */
function table(rows: Row[], extra: [string, (r: Row) => string][] = []): string {
  const head = `| scenario | req/s | baseline req/s | ratio | p50 ms | p99 ms | errors | peak RSS MB | CPU µs/req | baseline CPU µs/req | CPU × baseline's |${extra.map(([h]) => ` ${h} |`).join('')}\n|---|${'---:|'.repeat(10 + extra.length)}`;
  return [head, ...rows.map((r) => `| ${r.scenario} | ${Math.round(r.almanac.requestsPerSecond)} | ${Math.round(r.baseline.requestsPerSecond)} | ${(r.ratio * 100).toFixed(1)} % | ${r.almanac.p50} | ${r.almanac.p99} | ${r.almanac.errors} | ${r.rssMb} | ${r.cpuUs.toFixed(0)} | ${r.baselineCpuUs.toFixed(0)} | ${times(cpuTimesBaseline(r))} |${extra.map(([, cell]) => ` ${cell(r)} |`).join('')}`)].join('\n');
}

const ENGINE_COLORS: Record<Engine, { fill: string; name: string }> = { sqlite: { fill: '#2b6cb0', name: 'blue' }, postgres: { fill: '#c05621', name: 'orange' } };

/** Requests per second of each scenario: the baseline and each engine, bar under bar. */
function barChart(rows: Row[]): string {
  const scenarios = [...new Set(rows.map((r) => r.scenario))];
  const max = Math.max(...rows.map((r) => Math.max(r.baseline.requestsPerSecond, r.almanac.requestsPerSecond)), 1);
  const bar = 13;
  // bars start right of the longest scenario name (about 6 px a character at 11 px)
  const barsFrom = 10 + 6 * Math.max(...scenarios.map((name) => name.length));
  const group = bar * (engines.length + 1) + 12;
  const bars = scenarios.map((scenario, i) => {
    const y = 30 + i * group;
    const ofScenario = rows.filter((r) => r.scenario === scenario);
    const wb = (ofScenario[0]!.baseline.requestsPerSecond / max) * 420;
    return [`<text x="5" y="${y + 12}" font-size="11">${scenario.replace(/&/g, '&amp;')}</text>`,
      `<rect x="${barsFrom}" y="${y}" width="${wb.toFixed(1)}" height="${bar - 1}" fill="#c8c8c8"/>`,
      ...ofScenario.map((r) => {
        const w = (r.almanac.requestsPerSecond / max) * 420;
        const top = y + bar * (engines.indexOf(r.engine) + 1);
        return `<rect x="${barsFrom}" y="${top}" width="${w.toFixed(1)}" height="${bar - 1}" fill="${ENGINE_COLORS[r.engine].fill}"/>
<text x="${(barsFrom + 5 + w).toFixed(1)}" y="${top + bar - 3}" font-size="10">${Math.round(r.almanac.requestsPerSecond)} (${(r.ratio * 100).toFixed(0)} %)</text>`;
      })].join('\n');
  });
  const legend = engines.map((e) => `${ENGINE_NAMES[e]} (${ENGINE_COLORS[e].name})`).join(', ');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${barsFrom + 520}" height="${40 + scenarios.length * group}" font-family="sans-serif">
<text x="5" y="16" font-size="13">Requests per second: ${legend}, and a bare node:http server with bodies of the same size (grey)</text>
${bars.join('\n')}
</svg>\n`;
}

/** p50 against size, one panel per engine: solid as served, dashed with the response cache off. */
function growthChart(grown: Growth[]): string {
  const values = grown.flatMap((g) => g.rows.filter((r) => r.uncachedSmall && r.uncachedLarge).flatMap((r) => [r.small.result.p50, r.large.result.p50, r.uncachedSmall!.result.p50, r.uncachedLarge!.result.p50]));
  const max = Math.max(1, ...values);
  const colors = ['#2b6cb0', '#c53030', '#2f855a', '#b7791f', '#6b46c1', '#319795', '#d53f8c'];
  const panel = 300;
  const panels = grown.map((g, p) => {
    const top = 30 + p * panel;
    const y = (v: number) => top + 230 - (v / max) * 220;
    const reads = g.rows.filter((r) => r.uncachedSmall && r.uncachedLarge);
    const lines = reads.map((r, k) => {
      const color = colors[k % colors.length];
      const line = (from: Measured, to: Measured, dash: string) =>
        `<line x1="80" y1="${y(from.result.p50).toFixed(0)}" x2="600" y2="${y(to.result.p50).toFixed(0)}" stroke="${color}" stroke-width="2"${dash}/>`;
      return `${line(r.small, r.large, '')}${line(r.uncachedSmall!, r.uncachedLarge!, ' stroke-dasharray="6 4"')}<text x="620" y="${top + 20 + k * 14}" font-size="10" fill="${color}">${r.scenario.replace(/&/g, '&amp;')}</text>`;
    });
    return `<text x="5" y="${top + 5}" font-size="12">${ENGINE_NAMES[g.engine]}</text>
<line x1="80" y1="${top + 230}" x2="600" y2="${top + 230}" stroke="#888"/><text x="60" y="${top + 250}" font-size="10">${GROWTH.small.toLocaleString('en')}</text><text x="570" y="${top + 250}" font-size="10">${GROWTH.large.toLocaleString('en')}</text>
${lines.join('\n')}`;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="820" height="${20 + grown.length * panel}" font-family="sans-serif">
<text x="5" y="16" font-size="13">p50 latency (ms, up to ${max}) at ${GROWTH.small.toLocaleString('en')} and ${GROWTH.large.toLocaleString('en')} events; solid: as served, dashed: response cache off</text>
${panels.join('\n')}
</svg>\n`;
}

if (values['stall-only']) {
  for (const engine of engines) {
    const data = await prepare(eventCount, engine);
    try {
      const { probe, costly } = await stallOnly(data);
      process.stdout.write(`${ENGINE_NAMES[engine]}: GET /events/{id} beside ${data.costly.name}: p50 ${probe.p50} ms, p99 ${probe.p99} ms; costly ${costly.requestsPerSecond.toFixed(1)} req/s, errors ${costly.errors}\n`);
    } finally {
      rmSync(data.dir, { recursive: true, force: true });
    }
  }
  process.exit(0);
}

const datasets: Dataset[] = [];
for (const engine of engines) datasets.push(await prepare(eventCount, engine));
let measured: Map<Engine, EngineResults>;
let twoNodeRun: TwoNodes | null = null;
try {
  measured = await measure(datasets);
  const onPostgres = datasets.find((d) => d.engine === 'postgres');
  if (onPostgres) twoNodeRun = await twoNodes(onPostgres);
} finally {
  for (const data of datasets) rmSync(data.dir, { recursive: true, force: true });
}
const grown: Growth[] = [];
if (values.growth) for (const engine of engines) grown.push(await growth(engine));

const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const allRows = [...measured.values()].flatMap((m) => m.rows);
const sqlite = measured.get('sqlite');
const postgres = measured.get('postgres');
const find = (results: EngineResults, name: string) => results.rows.find((r) => r.scenario === name)!;
const p50Growth = (r: GrowthRow, cached: boolean) => (cached ? r.large.result.p50 / r.small.result.p50 : r.uncachedLarge!.result.p50 / r.uncachedSmall!.result.p50);
/**
 * The generator and the server share two cores: with the server's CPU per request s and the generator's g, no number
 * of workers serves more than 2 / (s + g) requests a second.
 */
const scalingLines = (sc: Scaling, kind: string) => {
  const ceiling = 2e6 / (sc.one.cpuUs + (sc.one.databaseCpuUs ?? 0) + sc.generatorUs.one);
  return `- ${kind}: one worker ${Math.round(rps(sc.one))} req/s (p99 ${sc.one.result.p99} ms), two ${Math.round(rps(sc.two))} (p99 ${sc.two.result.p99} ms): ${(rps(sc.two) / rps(sc.one)).toFixed(2)} ×. `
    + `Per request, one worker used ${sc.one.cpuUs.toFixed(0)} µs of CPU${sc.one.databaseCpuUs === null ? '' : `, PostgreSQL ${sc.one.databaseCpuUs.toFixed(0)} µs`} and the generator ${sc.generatorUs.one.toFixed(0)} µs (${sc.generatorUs.two.toFixed(0)} µs against two), `
    + `so the two cores serve at most about ${Math.round(ceiling)} req/s, ${(ceiling / rps(sc.one)).toFixed(2)} × one worker.`;
};
const roundsLine = (kind: string, runs: Measured[]) => `${kind}: ${runs.map((m) => Math.round(m.result.requestsPerSecond)).join(', ')} req/s; ${runs.map((m) => m.cpuUs.toFixed(0)).join(', ')} µs of server CPU per request${runs[0]!.databaseCpuUs === null ? '' : `, ${runs.map((m) => us(m.databaseCpuUs)).join(', ')} µs of PostgreSQL's`}`;
const isCachedRead = (r: Row) => !/POST|mix|cache off/.test(r.scenario);
const previous = sqlite ? previousSqliteFigures(previousResults) : null;
/** This run's SQLite ratio to the baseline over the previous results', by scenario (those both measured). */
const againstPrevious = (r: Row) => (previous?.ratios.has(r.scenario) ? r.ratio / previous.ratios.get(r.scenario)! : null);

/** The probe's p99 beside the costly requests is under a second, taken from answers to requests sent while they ran. */
const stallMet = (stall: Stall) => stall.probe.latencySamples > 0 && stall.probe.p99 < 250;
/** A p99 within `ms`, taken from at least one answer (a load that got none has no p99 to meet a target with). */
const p99Within = (result: LoadResult, ms: number) => result.latencySamples > 0 && result.p99 <= ms;
const checks: [string, boolean][] = [];
if (sqlite) {
  const anonymous = median(sqlite.pair.anonymous);
  const authenticated = median(sqlite.pair.authenticated);
  checks.push(
    [`SQLite: GET /events/{id} ≥ 40 % of the baseline`, find(sqlite, 'GET /events/{id}').ratio >= 0.4],
    [`SQLite: default GET /events ≥ 20 % of the baseline`, find(sqlite, 'GET /events').ratio >= 0.2],
    [`SQLite: p99 ≤ 20 ms for every read but search (as served)`, sqlite.rows.filter((r) => isCachedRead(r) && !/search/.test(r.scenario)).every((r) => p99Within(r.almanac, 20))],
    [`SQLite: search p99 ≤ 100 ms (as served)`, p99Within(find(sqlite, 'GET /events?search').almanac, 100)],
    [`SQLite: POST /events ≥ 1,000/s`, find(sqlite, 'POST /events').almanac.requestsPerSecond >= 1000],
    [`SQLite: no errors`, sqlite.rows.every((r) => r.almanac.errors === 0)],
    [`SQLite: authenticated within 10 % of anonymous (medians of ${rounds} alternating rounds)`, rps(authenticated) >= 0.9 * rps(anonymous)],
    [`SQLite: two workers ≥ 1.25 × one on GET /events/{id} (medians of ${rounds} alternating rounds)`, rps(sqlite.workers.served.two) >= 1.25 * rps(sqlite.workers.served.one)],
    [`SQLite: GET /events/{id} p99 < 250 ms beside ${COSTLY_CLIENTS} clients sending the costliest anonymous requests`, stallMet(sqlite.stall)],
  );
  // reads that stay fast while the calendar changes, and a cheap miss
  const mix = find(sqlite, MIX);
  const served = sqlite.rows.filter(isCachedRead);
  const lowest = Math.min(...served.map((r) => r.ratio));
  const uncachedById = find(sqlite, 'GET /events/{id}, cache off');
  const uncachedList = find(sqlite, 'GET /events, cache off');
  checks.push(
    [`SQLite: 95/5 read/write mix ≥ 25 % of the baseline (${(mix.ratio * 100).toFixed(1)} %)`, mix.ratio >= 0.25],
    [`SQLite: 95/5 read/write mix p99 ≤ 20 ms (${mix.almanac.p99} ms)`, p99Within(mix.almanac, 20)],
    [`SQLite: every read as served ≥ 60 % of the baseline (lowest ${(lowest * 100).toFixed(1)} %)`, lowest >= 0.6],
    [`SQLite: GET /events/{id} with the cache off ≤ 150 µs of server CPU per request (${us(uncachedById.cpuUs)} µs, ${times(cpuTimesBaseline(uncachedById))} the baseline's)`, uncachedById.cpuUs <= 150],
    [`SQLite: default GET /events with the cache off ≤ 1 ms of server CPU per request (${us(uncachedList.cpuUs)} µs, ${times(cpuTimesBaseline(uncachedList))} the baseline's)`, uncachedList.cpuUs <= 1000],
  );
  if (previous) {
    const compared = sqlite.rows.map(againstPrevious).filter((x): x is number => x !== null);
    checks.push([`SQLite: no scenario's ratio to the baseline more than 10 % below the previous results' (${previous.when}; lowest ${(Math.min(...compared) * 100).toFixed(0)} %)`, compared.every((x) => x >= 0.9)]);
  }
}
if (postgres) {
  checks.push([`PostgreSQL: POST /events ≥ 1,000/s`, find(postgres, 'POST /events').almanac.requestsPerSecond >= 1000]);
  if (sqlite) {
    const cachedRatios = postgres.rows.filter(isCachedRead).map((r) => r.almanac.requestsPerSecond / find(sqlite, r.scenario).almanac.requestsPerSecond);
    const uncached = find(postgres, 'GET /events/{id}, cache off').almanac.requestsPerSecond / find(sqlite, 'GET /events/{id}, cache off').almanac.requestsPerSecond;
    checks.push(
      [`PostgreSQL: every read as served as fast as on SQLite (≥ 90 % of its req/s; lowest ${(Math.min(...cachedRatios) * 100).toFixed(0)} %)`, cachedRatios.every((x) => x >= 0.9)],
      [`PostgreSQL: GET /events/{id} with the cache off ≥ 50 % of SQLite's req/s (${(uncached * 100).toFixed(0)} %)`, uncached >= 0.5],
    );
  }
  checks.push(
    [`PostgreSQL: p99 ≤ 20 ms for every read as served (search included)`, postgres.rows.filter(isCachedRead).every((r) => p99Within(r.almanac, 20))],
    [`PostgreSQL: no errors`, postgres.rows.every((r) => r.almanac.errors === 0)],
    [`PostgreSQL: GET /events/{id} p99 < 250 ms beside ${COSTLY_CLIENTS} clients sending the costliest anonymous requests`, stallMet(postgres.stall)],
  );
}
if (twoNodeRun) {
  const t = twoNodeRun;
  checks.push([`two nodes on PostgreSQL: every acknowledged write read back from the other node (${t.readBack.writes} writes on ${t.readBack.events} events, ${t.readBack.missing} missing, ${t.readBack.behind} behind)`, t.readBack.events > 0 && t.readBack.missing === 0 && t.readBack.behind === 0]);
  checks.push([`two nodes on PostgreSQL: no read stale after a write's acknowledgement (${t.reads + t.tagReads} reads, ${t.staleReads + t.staleTagReads} stale, ${t.preconditionFailed} If-Match refused)`, t.reads > 0 && t.staleReads + t.staleTagReads + t.preconditionFailed === 0]);
}
for (const g of grown) {
  const readGrowth = g.rows.filter((r) => r.uncachedSmall);
  checks.push([`${ENGINE_NAMES[g.engine]}: p50 at 1,000,000 / at 10,000 ≤ 1.3 for every read (as served)`, readGrowth.every((r) => p50Growth(r, true) <= 1.3)]);
  checks.push([`${ENGINE_NAMES[g.engine]}: p50 at 1,000,000 / at 10,000 ≤ 1.3 for every read with the response cache off`, readGrowth.every((r) => p50Growth(r, false) <= 1.3)]);
  checks.push([`${ENGINE_NAMES[g.engine]}: peak RSS ≤ 250 MB at 1,000,000 events`, g.peakRssMb <= 250]);
}

/** One engine's section: its table, its reads by id in rounds, its workers and its stall. */
function engineSection(engine: Engine, results: EngineResults): string {
  const extra: [string, (r: Row) => string][] = [];
  if (engine === 'postgres') {
    extra.push(['PostgreSQL CPU µs/req', (r) => us(r.databaseCpuUs)]);
    extra.push(['total CPU µs/req', (r) => us(r.cpuUs + (r.databaseCpuUs ?? 0))]);
    if (sqlite) extra.push(['vs SQLite req/s', (r) => `${((r.almanac.requestsPerSecond / find(sqlite, r.scenario).almanac.requestsPerSecond) * 100).toFixed(0)} %`]);
  } else if (previous) {
    extra.push([`ratio vs ${previous.when}`, (r) => { const x = againstPrevious(r); return x === null ? '—' : `${(x * 100).toFixed(0)} %`; }]);
  }
  const anonymous = median(results.pair.anonymous);
  const authenticated = median(results.pair.authenticated);
  const { stall } = results;
  return `## ${ENGINE_NAMES[engine]}

${table(results.rows, extra)}

Anonymous and authenticated GET /events/{id} ran in ${rounds} alternating rounds; the table shows each one's median round:
- ${roundsLine('anonymous', results.pair.anonymous)}
- ${roundsLine('authenticated', results.pair.authenticated)}
- authenticated / anonymous: ${(rps(authenticated) / rps(anonymous)).toFixed(2)} in requests per second, ${(authenticated.cpuUs / anonymous.cpuUs).toFixed(2)} in CPU per request.

The reads with the cache off ran in ${rounds} rounds, each scenario in turn; the table shows each one's median round:
${[...results.uncached].map(([name, runs]) => `- ${roundsLine(name, runs)}`).join('\n')}

The other reads as served and the 95/5 read/write mix ran in ${rounds} rounds, each round of a scenario on each engine in turn and then on the baseline; the table shows each one's median round (and the baselines' median):
${[...results.rounds].map(([name, runs]) => `- ${roundsLine(name, runs)}; p99 ${runs.map((m) => m.result.p99).join(', ')} ms`).join('\n')}

One and two workers on GET /events/{id}, both up at once, ${rounds} alternating rounds of ${SCALING.duration} s each (medians); the load generator shares the two cores:
${scalingLines(results.workers.served, 'as served')}
${scalingLines(results.workers.uncached, 'response cache off (`ALMANAC_CACHE_MB=0`), every answer computed')}

GET /events/{id} from one client while ${COSTLY_CLIENTS} clients send the costliest anonymous requests the limits allow: p50 ${stall.probe.p50} ms, p99 ${stall.probe.p99} ms (of ${stall.probe.latencySamples} requests sent while they ran); the costly requests ran at ${stall.costly.requestsPerSecond.toFixed(1)} req/s with ${stall.costly.errors} errors.
`;
}

const twoNodeSection = (t: TwoNodes) => `## Two nodes on PostgreSQL

Two Almanac servers (one worker each) on one PostgreSQL database, as behind a load balancer, for ${t.seconds.toFixed(0)} s: ${TWO_NODES.writers} writers on one node each create an event (POST) and edit it ${TWO_NODES.editsPerEvent} times (PATCH with If-Match, the ETag read from the other node), while ${TWO_NODES.readers} readers on the other node read the events created last. Each write puts its version in the title, so each read tells which write it saw.

- writes on the first node: ${t.posts} POST and ${t.patches} PATCH acknowledged, ${t.writesPerSecond.toFixed(0)}/s (p50 ${t.writeP50} ms, p99 ${t.writeP99} ms); ${t.preconditionFailed} refused by If-Match, ${t.writeErrors} errors; ${us(t.writerCpuUs)} µs of CPU per write
- reads on the second node: ${t.reads + t.tagReads} (${t.tagReads} of them for the ETag of the next edit), ${t.readsPerSecond.toFixed(0)}/s (p50 ${t.readP50} ms, p99 ${t.readP99} ms), ${t.readErrors} errors; ${us(t.readerCpuUs)} µs of CPU per read; PostgreSQL ${us(t.databaseCpuUs)} µs per request of either node
- stale reads (an answer older than a write acknowledged before the read was sent, or no event): ${t.staleReads + t.staleTagReads}
- read back from the second node after the load: ${t.readBack.events} events, ${t.readBack.writes} acknowledged writes; ${t.readBack.missing} missing, ${t.readBack.behind} showing an older version than the last acknowledged

This run proves correctness under load, not scaling: both nodes, PostgreSQL and the load generator share this machine's ${cpus().length} cores${cpus().length <= 2 ? ', which one node and PostgreSQL already keep busy: a second node adds no capacity here' : ''}; scaling out needs nodes on machines of their own.
`;

const engineList = engines.map((e) => (e === 'postgres' ? 'PostgreSQL (a local server on the same machine)' : 'SQLite')).join(' and ');
let text = `# Almanac benchmark

Run on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${machine}; ${engineList}, ${eventCount.toLocaleString('en')} events${engines.length > 1 ? ' each' : ''}, ${connections} connections, ${duration} s per scenario after ${warmup} s of warm-up, one worker. ${engines.length > 1 ? 'Each scenario ran on each engine in turn, then on the baseline, so drift in the machine\'s load hits both engines alike. ' : ''}Ratios compare with a bare node:http server answering bodies of the same size in the same run. Latencies are taken from every answer (not rounded to whole milliseconds); CPU µs/req is the Almanac server process's CPU time over the requests it answered (warm-up included)${postgres ? ', and PostgreSQL CPU µs/req the database server\'s (the postmaster and all its processes) over the same requests: on one machine it is part of each request\'s cost' : ''}. The rows "cache off" are answered by a server with the response cache off (\`ALMANAC_CACHE_MB=0\`), every answer computed.

${[...measured.entries()].map(([engine, results]) => engineSection(engine, results)).join('\n')}
![requests per second](requests.svg)
${twoNodeRun ? '\n' + twoNodeSection(twoNodeRun) : ''}
## Targets

${checks.map(([t, ok]) => `- ${ok ? 'met' : 'missed'}: ${t}`).join('\n')}
`;
mkdirSync(join(projectRoot, 'bench'), { recursive: true });
// a run without --growth keeps the growth sections (and their targets) of the results it replaces, saying when they were measured
const carried = grown.length === 0 ? previousGrowth() : null;
if (carried) {
  text = text.replace(/\n$/, '\n' + carried.targets.map((t) => `${t} (growth run of ${carried.date})`).join('\n') + '\n');
  text += `\n_Growth: from the run of ${carried.date} (this run did not measure it; \`npm run bench -- --growth\` does)._\n\n${carried.sections}`;
}
for (const g of grown) {
  const line = (r: GrowthRow) => {
    const off = r.uncachedSmall ? `${r.uncachedSmall.result.p50} | ${r.uncachedLarge!.result.p50} | ${p50Growth(r, false).toFixed(2)}` : '— | — | —';
    return `| ${r.scenario} | ${r.small.result.p50} | ${r.large.result.p50} | ${p50Growth(r, true).toFixed(2)} | ${off} |`;
  };
  text += `
## Growth on ${ENGINE_NAMES[g.engine]}

${GROWTH.small.toLocaleString('en')} and ${GROWTH.large.toLocaleString('en')} events (the same density of events per day), two servers up at once, ${GROWTH.rounds} alternating runs of ${GROWTH.duration} s per size and scenario (the median of their p50s). Once as served, then the reads with the response cache off (\`ALMANAC_CACHE_MB=0\`), so every answer is computed. Peak RSS at ${GROWTH.large.toLocaleString('en')} events: ${g.peakRssMb} MB.

| scenario | p50 ms at ${GROWTH.small.toLocaleString('en')} | at ${GROWTH.large.toLocaleString('en')} | ratio | cache off: p50 ms at ${GROWTH.small.toLocaleString('en')} | at ${GROWTH.large.toLocaleString('en')} | ratio |
|---|---:|---:|---:|---:|---:|---:|
${g.rows.map(line).join('\n')}
`;
}
if (grown.length) {
  text += '\n![latency against size](growth.svg)\n';
  writeFileSync(join(projectRoot, 'bench', 'growth.svg'), growthChart(grown));
}
writeFileSync(RESULTS, text);
writeFileSync(join(projectRoot, 'bench', 'requests.svg'), barChart(allRows));
process.stdout.write('\n' + text);
if (values.profile) process.stdout.write(`\nCPU profiles of each engine's one-worker server (all scenarios): ${PROFILES} (open in Chrome DevTools or speedscope)\n`);
