import autocannon from 'autocannon';

/**
 * The benchmark's load generator, in a process of its own: autocannon against one scenario, requests chosen at
 * random from the scenario's list (GET paths, or POST bodies), then one JSON line of results on stdout, with the
 * generator's own CPU share.
 */
interface Scenario {
  url: string;
  connections: number;
  duration: number;
  warmup: number;
  /** Paths to GET, picked at random per request. */
  paths: string[];
  /** Share of requests that POST `postPath` (0..1). */
  writeShare: number;
  postPath?: string;
  headers?: Record<string, string>;
  /** Only requests sent within this span (ms after the measured run starts) count in the latencies. */
  window?: [number, number];
}

const scenario = JSON.parse(process.env.BENCH_SCENARIO!) as Scenario;
let sequence = 0;
const request = () => {
  if (scenario.postPath && Math.random() < scenario.writeShare) {
    sequence++;
    const day = String(1 + (sequence % 28)).padStart(2, "0");
    return {
      method: 'POST' as const,
      path: scenario.postPath,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: `Bench event ${process.pid}-${sequence}`, start_date: `2031-02-${day} 10:00`, end_date: `2031-02-${day} 12:00`, categories: [1], cost: '10' }),
    };
  }
  return { method: 'GET' as const, path: scenario.paths[Math.floor(Math.random() * scenario.paths.length)]! };
};
const options = (duration: number) => ({
  url: scenario.url,
  connections: scenario.connections,
  duration,
  headers: scenario.headers,
  requests: [{
    setupRequest: (req: autocannon.Request): autocannon.Request => {
      const next = request();
      return { ...req, ...next, headers: { ...(req.headers ?? {}), ...('headers' in next ? next.headers : {}) } } as autocannon.Request;
    },
  }],
});

/** Runs one load; latencies (ms, as fine as the clock) come from every answer, not from autocannon's whole-ms histogram. */
async function run(duration: number): Promise<{ result: autocannon.Result; latencies: Float64Array }> {
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  let done!: (r: autocannon.Result) => void;
  let failed!: (e: unknown) => void;
  const finished = new Promise<autocannon.Result>((resolve, reject) => ((done = resolve), (failed = reject)));
  const instance = autocannon(options(duration), (err, r) => (err ? failed(err) : done(r)));
  const started = performance.now();
  instance.on('response', (_client, _status, _bytes, ms) => {
    const sent = performance.now() - ms - started;
    if (scenario.window && (sent < scenario.window[0] || sent > scenario.window[1])) return;
    if (count === latencies.length) {
      const grown = new Float64Array(latencies.length * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[count++] = ms;
  });
  const result = await finished;
  return { result, latencies: latencies.subarray(0, count).sort() };
}

const quantile = (sorted: Float64Array, q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : 0);
const warm = scenario.warmup > 0 ? (await run(scenario.warmup)).result.requests.total : 0;
const cpuStart = process.cpuUsage();
const wallStart = process.hrtime.bigint();
const { result, latencies } = await run(scenario.duration);
const cpu = process.cpuUsage(cpuStart);
const wall = Number(process.hrtime.bigint() - wallStart) / 1000;
process.stdout.write(JSON.stringify({
  requestsPerSecond: result.requests.average,
  p50: Math.round(quantile(latencies, 0.5) * 100) / 100,
  p99: Math.round(quantile(latencies, 0.99) * 100) / 100,
  /** The answers the latencies were taken from (those of requests sent within the window, if any). */
  latencySamples: latencies.length,
  errors: result.errors + result.timeouts + result.non2xx,
  bytes: result.throughput.total,
  requests: result.requests.total,
  warmupRequests: warm,
  generatorCpuShare: (cpu.user + cpu.system) / wall,
}) + '\n');
