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

if (scenario.warmup > 0) await autocannon(options(scenario.warmup));
const cpuStart = process.cpuUsage();
const wallStart = process.hrtime.bigint();
const result = await autocannon(options(scenario.duration));
const cpu = process.cpuUsage(cpuStart);
const wall = Number(process.hrtime.bigint() - wallStart) / 1000;
process.stdout.write(JSON.stringify({
  requestsPerSecond: result.requests.average,
  p50: result.latency.p50,
  p99: result.latency.p99,
  errors: result.errors + result.timeouts + result.non2xx,
  bytes: result.throughput.total,
  requests: result.requests.total,
  generatorCpuShare: (cpu.user + cpu.system) / wall,
}) + '\n');
