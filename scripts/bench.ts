/**
 * `npm run bench`: Almanac's throughput and latency as ratios to a bare node:http baseline measured in the same
 * run. Seeds a fresh database (`--events`, default 100,000), starts Almanac and the baseline as separate processes,
 * loads each with autocannon from a third process, and writes a table, bench/results.md and SVG charts.
 * `--growth` adds runs at 10,000 and 1,000,000 events (constant density) and reports p50 growth.
 */
import Database from 'better-sqlite3';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, totalmem, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { RARE_WORD } from '../src/db/seed.js';
import { projectRoot } from '../src/paths.js';

const NS = '/wp-json/tribe/events/v1';
const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '100000' },
    growth: { type: 'boolean', default: false },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '32' },
  },
});
const duration = Number(values.duration);
const warmup = Number(values.warmup);
const connections = Number(values.connections);
const node = process.execPath;
const cli = join(projectRoot, 'dist', 'src', 'cli.js');

interface LoadResult { requestsPerSecond: number; p50: number; p99: number; errors: number; requests: number; generatorCpuShare: number }
interface Scenario { name: string; paths: string[]; writeShare?: number; postPath?: string; authenticated?: boolean; read: boolean }
interface Row { scenario: string; almanac: LoadResult; baseline: LoadResult; ratio: number; rssMb: number }

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

async function startAlmanac(db: string, workers: number): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(node, [join(projectRoot, 'dist', 'src', 'main.js')], {
    env: { ...process.env, ALMANAC_DB: db, PORT: String(port), ALMANAC_WORKERS: String(workers), ALMANAC_LOG_LEVEL: 'info' },
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

/** Runs the load process against `url`, sampling the server's resident memory meanwhile. */
async function load(url: string, scenario: Scenario, headers: Record<string, string>, pid?: number): Promise<{ result: LoadResult; rssMb: number }> {
  let rss = 0;
  const sample = () => {
    try {
      const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
      rss = Math.max(rss, kb / 1024);
    } catch { /* not on Linux, or the process is gone */ }
  };
  const timer = pid ? setInterval(sample, 200) : null;
  const child = spawn(node, [join(projectRoot, 'dist', 'scripts', 'benchLoad.js')], {
    env: {
      ...process.env,
      BENCH_SCENARIO: JSON.stringify({
        url, connections, duration, warmup, paths: scenario.paths, writeShare: scenario.writeShare ?? 0, postPath: scenario.postPath, headers,
      }),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise((resolve) => child.once('exit', resolve));
  if (timer) clearInterval(timer);
  return { result: JSON.parse(out.trim().split('\n').pop()!) as LoadResult, rssMb: Math.round(rss) };
}

async function measure(events: number): Promise<{ rows: Row[]; workers: { one: number; two: number; generatorShare: number } }> {
  const dir = mkdtempSync(join(tmpdir(), 'almanac-bench-'));
  const db = join(dir, 'bench.sqlite');
  try {
    process.stderr.write(`\n== ${events.toLocaleString('en')} events\n`);
    process.stderr.write(run([cli, 'seed', '--events', String(events)], { ALMANAC_DB: db }) + '\n');
    run([cli, 'user', 'add', 'bench', '--role', 'administrator'], { ALMANAC_DB: db });
    const password = run([cli, 'app-password', 'add', 'bench', '--name', 'bench'], { ALMANAC_DB: db });
    const auth = { Authorization: 'Basic ' + Buffer.from(`bench:${password}`).toString('base64') };

    const sql = new Database(db, { readonly: true });
    const sample = sql.prepare(`SELECT p.id, p.slug FROM events e JOIN posts p ON p.id = e.post_id
      WHERE p.status = 'publish' AND p.password = '' ORDER BY random() LIMIT 2000`).all() as { id: number; slug: string }[];
    const category = (sql.prepare(`SELECT id FROM terms WHERE taxonomy = 'category' AND slug = 'music'`).get() as { id: number }).id;
    sql.close();
    const today = new Date().toISOString().slice(0, 10);
    const later = new Date(Date.now() + 90 * 86_400_000).toISOString().slice(0, 10);

    const scenarios: Scenario[] = [
      { name: 'GET /events/{id}', paths: sample.map((e) => `${NS}/events/${e.id}`), read: true },
      { name: 'GET /events/{id} (authenticated)', paths: sample.map((e) => `${NS}/events/${e.id}`), authenticated: true, read: true },
      { name: 'GET /events', paths: [`${NS}/events`], read: true },
      { name: 'GET /events?categories&dates', paths: [`${NS}/events?categories=${category}&start_date=${today}&end_date=${later}`], read: true },
      { name: 'GET /events?search', paths: [`${NS}/events?search=${RARE_WORD}`], read: true },
      { name: 'GET /venues', paths: [`${NS}/venues`], read: true },
      { name: 'GET /events/by-slug/{slug}', paths: sample.map((e) => `${NS}/events/by-slug/${e.slug}`), read: true },
      { name: 'POST /events', paths: [`${NS}/events`], writeShare: 1, postPath: `${NS}/events`, authenticated: true, read: false },
      { name: '95/5 read/write mix', paths: sample.map((e) => `${NS}/events/${e.id}`), writeShare: 0.05, postPath: `${NS}/events`, authenticated: true, read: false },
    ];

    const almanac = await startAlmanac(db, 1);
    const measured: { scenario: Scenario; result: LoadResult; rssMb: number; size: number }[] = [];
    for (const scenario of scenarios) {
      const probe = await fetch(almanac.url + scenario.paths[0], scenario.writeShare === 1
        ? { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ title: 'Probe', start_date: '2031-01-01 10:00', end_date: '2031-01-01 11:00' }) }
        : { headers: scenario.authenticated ? auth : {} });
      const size = (await probe.arrayBuffer()).byteLength;
      const { result, rssMb } = await load(almanac.url, scenario, scenario.authenticated ? auth : {}, almanac.child.pid);
      measured.push({ scenario, result, rssMb, size });
      process.stderr.write(`  ${scenario.name}: ${Math.round(result.requestsPerSecond)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, errors ${result.errors}\n`);
    }
    await stop(almanac.child);

    const sizes = Object.fromEntries(measured.map((m, i) => [`/s${i}`, m.size]));
    const baseline = await startBaseline(sizes);
    const rows: Row[] = [];
    for (const [i, m] of measured.entries()) {
      const { result } = await load(baseline.url, { ...m.scenario, paths: [`/s${i}`], postPath: m.scenario.postPath && `/s${i}` }, {});
      rows.push({ scenario: m.scenario.name, almanac: m.result, baseline: result, ratio: m.result.requestsPerSecond / result.requestsPerSecond, rssMb: m.rssMb });
    }
    await stop(baseline.child);

    const byId = scenarios[0]!;
    const two = await startAlmanac(db, 2);
    const { result: twoWorkers } = await load(two.url, byId, {});
    await stop(two.child);
    return { rows, workers: { one: measured[0]!.result.requestsPerSecond, two: twoWorkers.requestsPerSecond, generatorShare: twoWorkers.generatorCpuShare } };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function table(rows: Row[]): string {
  const head = `| scenario | req/s | baseline req/s | ratio | p50 ms | p99 ms | errors | peak RSS MB |\n|---|---:|---:|---:|---:|---:|---:|---:|`;
  return [head, ...rows.map((r) => `| ${r.scenario} | ${Math.round(r.almanac.requestsPerSecond)} | ${Math.round(r.baseline.requestsPerSecond)} | ${(r.ratio * 100).toFixed(1)} % | ${r.almanac.p50} | ${r.almanac.p99} | ${r.almanac.errors} | ${r.rssMb} |`)].join('\n');
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

function growthChart(series: { events: number; rows: Row[] }[]): string {
  const names = series[0]!.rows.filter((r) => !/POST|mix/.test(r.scenario)).map((r) => r.scenario);
  const maxP50 = Math.max(1, ...series.flatMap((s) => s.rows.map((r) => r.almanac.p50)));
  const x = (i: number) => 80 + i * (520 / Math.max(1, series.length - 1));
  const y = (v: number) => 260 - (v / maxP50) * 220;
  const colors = ['#2b6cb0', '#c53030', '#2f855a', '#b7791f', '#6b46c1', '#319795', '#d53f8c'];
  const lines = names.map((name, k) => {
    const pts = series.map((s, i) => `${x(i).toFixed(0)},${y(s.rows.find((r) => r.scenario === name)!.almanac.p50).toFixed(0)}`).join(' ');
    return `<polyline fill="none" stroke="${colors[k % colors.length]}" stroke-width="2" points="${pts}"/><text x="620" y="${30 + k * 14}" font-size="10" fill="${colors[k % colors.length]}">${name.replace(/&/g, '&amp;')}</text>`;
  });
  const ticks = series.map((s, i) => `<text x="${x(i) - 20}" y="280" font-size="10">${s.events.toLocaleString('en')}</text>`);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="820" height="300" font-family="sans-serif">
<text x="5" y="16" font-size="13">p50 latency (ms, up to ${maxP50}) against the number of events</text>
<line x1="80" y1="260" x2="600" y2="260" stroke="#888"/>${ticks.join('')}
${lines.join('\n')}
</svg>\n`;
}

const sizes = values.growth ? [10_000, Number(values.events), 1_000_000] : [Number(values.events)];
const series: { events: number; rows: Row[]; workers: { one: number; two: number; generatorShare: number } }[] = [];
for (const events of [...new Set(sizes)].sort((a, b) => a - b)) series.push({ events, ...(await measure(events)) });

const main = series.find((s) => s.events === Number(values.events)) ?? series[0]!;
const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
const find = (name: string) => main.rows.find((r) => r.scenario === name)!;
const checks = [
  [`GET /events/{id} ≥ 40 % of the baseline`, find('GET /events/{id}').ratio >= 0.4],
  [`default GET /events ≥ 20 % of the baseline`, find('GET /events').ratio >= 0.2],
  [`p99 ≤ 20 ms for every read but search`, main.rows.filter((r) => !/POST|mix|search/.test(r.scenario)).every((r) => r.almanac.p99 <= 20)],
  [`search p99 ≤ 100 ms`, find('GET /events?search').almanac.p99 <= 100],
  [`POST /events ≥ 1,000/s`, find('POST /events').almanac.requestsPerSecond >= 1000],
  [`no errors`, main.rows.every((r) => r.almanac.errors === 0)],
  [`authenticated within 10 % of anonymous`, find('GET /events/{id} (authenticated)').almanac.requestsPerSecond >= 0.9 * find('GET /events/{id}').almanac.requestsPerSecond],
  [`two workers ≥ 1.25 × one on GET /events/{id}`, main.workers.two >= 1.25 * main.workers.one],
] as const;
let report = `# Almanac benchmark\n\nRun on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${machine}; ${main.events.toLocaleString('en')} events, ${connections} connections, ${duration} s per scenario after ${warmup} s of warm-up, one worker. Ratios compare with a bare node:http server answering bodies of the same size in the same run.\n\n${table(main.rows)}\n\n![requests per second](requests.svg)\n\nTwo workers on GET /events/{id}: ${Math.round(main.workers.two)} req/s against ${Math.round(main.workers.one)} with one (${(main.workers.two / main.workers.one).toFixed(2)} ×); the load generator used ${(main.workers.generatorShare * 100).toFixed(0)} % of a core on the same two cores.\n\n## Targets\n\n${checks.map(([text, ok]) => `- ${ok ? 'met' : 'missed'}: ${text}`).join('\n')}\n`;
if (series.length > 1) {
  const small = series[0]!;
  const large = series[series.length - 1]!;
  const ratios = small.rows.filter((r) => !/POST|mix/.test(r.scenario)).map((r) => {
    const big = large.rows.find((x) => x.scenario === r.scenario)!;
    return `| ${r.scenario} | ${r.almanac.p50} | ${big.almanac.p50} | ${(big.almanac.p50 / Math.max(1, r.almanac.p50)).toFixed(2)} | ${big.rssMb} |`;
  });
  report += `\n## Growth\n\n| scenario | p50 ms at ${small.events.toLocaleString('en')} | p50 ms at ${large.events.toLocaleString('en')} | ratio | peak RSS MB at ${large.events.toLocaleString('en')} |\n|---|---:|---:|---:|---:|\n${ratios.join('\n')}\n\n![latency against size](growth.svg)\n`;
  writeFileSync(join(projectRoot, 'bench', 'growth.svg'), growthChart(series));
}
mkdirSync(join(projectRoot, 'bench'), { recursive: true });
writeFileSync(join(projectRoot, 'bench', 'results.md'), report);
writeFileSync(join(projectRoot, 'bench', 'requests.svg'), barChart(main.rows));
process.stdout.write('\n' + report);
