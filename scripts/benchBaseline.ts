import { createServer } from 'node:http';

/**
 * The benchmark's baseline: a bare node:http server answering each path with a pre-built JSON body of the size
 * given for it (`BASELINE_SIZES`: {"/path": bytes}), so it costs only what any Node server costs to answer.
 */
const sizes = JSON.parse(process.env.BASELINE_SIZES ?? '{}') as Record<string, number>;
const bodies = new Map(Object.entries(sizes).map(([path, size]) => [path, Buffer.from(JSON.stringify({ pad: 'x'.repeat(Math.max(0, size - 10)) }))]));
const fallback = Buffer.from('{}');
const server = createServer((req, res) => {
  const body = bodies.get((req.url ?? '/').split('?')[0]!) ?? fallback;
  const answer = () => {
    res.writeHead(200, { 'Content-Type': 'application/json; charset=UTF-8', 'Content-Length': body.length });
    res.end(body);
  };
  if (req.method === 'POST') {
    req.resume();
    req.on('end', answer);
  } else answer();
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(JSON.stringify({ port: (server.address() as { port: number }).port }) + '\n');
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
