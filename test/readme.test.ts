import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, rmSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ensureBootstrapAdmin } from '../src/domain/passwords.js';
import { checkTextAnswer, checkResponse, NS, TestServer } from './helpers/server.js';

const root = join(import.meta.dirname, '..');
const artifacts = join(import.meta.dirname, 'artifacts');
const readme = () => readFileSync(join(root, 'README.md'), 'utf8');

/** The README's typed-client example, exactly as printed. */
function clientExample(): string {
  const block = /<!-- client-example:start -->\n```ts\n([\s\S]*?)```\n<!-- client-example:end -->/.exec(readme());
  if (!block) throw new Error('README.md has no client example between its markers');
  return block[1]!;
}

let s: TestServer;
beforeAll(async () => {
  s = await TestServer.start();
});
afterAll(() => s.close());

describe('the README client example', () => {
  it('type-checks against generated/', () => {
    mkdirSync(artifacts, { recursive: true });
    // the same code, beside a copy of the import path that resolves from the artifacts folder
    const file = join(artifacts, 'client-example.check.ts');
    writeFileSync(file, clientExample().replace("from './generated/api.js'", "from '../../generated/api.js'"));
    execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '--noEmit', '--strict', '--skipLibCheck', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node', file], { cwd: root, stdio: 'pipe' });
  }, 60_000);

  it("runs as written and lists next week's events", async () => {
    const day = (ahead: number) => new Date(Date.now() + ahead * 86_400_000).toISOString().slice(0, 10);
    for (const [title, ahead] of [['In three days', 3], ['In three weeks', 21], ['Tomorrow morning', 1]] as const) {
      const r = await s.raw('POST', `${NS}/events`, { as: s.admin, json: { title, start_date: `${day(ahead)} 09:00:00`, end_date: `${day(ahead)} 10:00:00` } });
      expect(r.status).toBe(201);
    }
    mkdirSync(artifacts, { recursive: true });
    const file = join(artifacts, 'client-example.ts');
    writeFileSync(file, clientExample());

    const printed: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => void printed.push(args.join(' ')));
    const realFetch = globalThis.fetch;
    // every answer the example receives is checked against the spec, as in every other test
    globalThis.fetch = async (input, init) => {
      const response = await realFetch(input, init);
      await checkResponse(new Request(input, init).method, response);
      return response;
    };
    process.env.ALMANAC_URL = s.baseUrl;
    try {
      await import(file);
    } finally {
      log.mockRestore();
      globalThis.fetch = realFetch;
      delete process.env.ALMANAC_URL;
    }
    expect(printed).toEqual([`${day(1)} 09:00:00 Tomorrow morning`, `${day(3)} 09:00:00 In three days`]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The shell examples
// ---------------------------------------------------------------------------------------------------------------

/** The address the README's examples call; the test runs them against a server of its own there instead. */
const README_SITE = 'http://127.0.0.1:8080';

/** One command of the examples, and what the README says it prints (`# → …`; `…` stands for anything). */
interface Step { command: string; expected: string | null }

/** What a comment says a command prints: the text after its last `→`. */
const arrow = (comment: string) => (comment.includes('→') ? comment.slice(comment.lastIndexOf('→') + 1).trim() : null);

/**
 * The commands of a shell text, as bash splits them at line ends: a line ending in `\` and a newline inside
 * quotes continue a command. A comment on a command's last line, or on the lines right after it, may say what
 * it prints.
 */
function commands(script: string): Step[] {
  const steps: Step[] = [];
  let command = '';
  let quote: "'" | '"' | null = null;
  for (const line of script.split('\n')) {
    if (command === '' && /^\s*#/.test(line)) {
      const said = arrow(line);
      if (said !== null) steps.at(-1)!.expected = said;
      continue;
    }
    let code = line;
    let comment = '';
    for (let i = 0; i < line.length; i++) {
      const c = line[i]!;
      if (quote === "'") {
        if (c === "'") quote = null;
      } else if (quote === '"') {
        if (c === '\\') i++;
        else if (c === '"') quote = null;
      } else if (c === '\\') {
        i++;
      } else if (c === "'" || c === '"') {
        quote = c;
      } else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) {
        code = line.slice(0, i);
        comment = line.slice(i);
        break;
      }
    }
    command += (command ? '\n' : '') + (quote === null ? code.trimEnd() : code);
    if (quote !== null || command.endsWith('\\')) continue;
    if (command.trim()) steps.push({ command, expected: arrow(comment) });
    command = '';
  }
  return steps;
}

/** Every shell block of the README that calls the API (with curl), in order. */
function shellExamples(): string {
  return [...readme().matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).filter((block) => /\bcurl\b/.test(block)).join('\n');
}

/** The administrator of the Quick start, as the README starts the server. */
function readmeAdmin(): { login: string; password: string } {
  const m = /ALMANAC_ADMIN_USER=(\S+) ALMANAC_ADMIN_PASSWORD='([^']+)' npm start/.exec(readme());
  if (!m) throw new Error('README.md no longer starts the server with a first administrator');
  return { login: m[1]!, password: m[2]! };
}

/** An answer the examples received, and the command that asked for it. */
interface Received { step: number; method: string; path: string; status: number }

/**
 * A proxy between the examples and the test server: checks every answer against the spec (as every test does) and
 * notes which command received it. `GET /__step/N` marks the start of command N and goes no further.
 */
async function checkingProxy(target: TestServer): Promise<{ server: Server; url: string; received: Received[]; failures: string[] }> {
  const received: Received[] = [];
  const failures: string[] = [];
  let step = -1;
  const server = createServer((req, res) => {
    const marker = /^\/__step\/(\d+)$/.exec(req.url ?? '');
    if (marker) {
      step = Number(marker[1]);
      res.writeHead(204).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const forward = request(target.baseUrl + req.url, { method: req.method, headers: req.headers }, (answer) => {
        const body: Buffer[] = [];
        answer.on('data', (c: Buffer) => body.push(c));
        answer.on('end', () => {
          const text = Buffer.concat(body).toString('utf8');
          const headers = new Headers(Object.entries(answer.headers).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)] as [string, string]])));
          received.push({ step, method: req.method!, path: req.url!, status: answer.statusCode! });
          checkTextAnswer(req.method!, target.baseUrl + req.url, answer.statusCode!, text, headers)
            .catch((err: Error) => failures.push(err.message))
            .finally(() => res.writeHead(answer.statusCode!, answer.rawHeaders).end(Buffer.concat(body)));
        });
      });
      forward.on('error', (err) => failures.push(err.message));
      forward.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, received, failures };
}

/** Whether a command's output is what the README says it prints (`…` matching anything). */
function prints(output: string, expected: string): boolean {
  const pattern = expected.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[\\s\\S]*');
  return new RegExp(`^${pattern}$`).test(output.replace(/\r/g, '').trim());
}

describe('the README shell examples', () => {
  let fresh: TestServer;
  let proxy: Awaited<ReturnType<typeof checkingProxy>>;
  beforeAll(async () => {
    fresh = await TestServer.start();
    const admin = readmeAdmin();
    await ensureBootstrapAdmin(fresh.repos.users, admin.login, admin.password);
    proxy = await checkingProxy(fresh);
  });
  afterAll(async () => {
    await new Promise((resolve) => proxy?.server.close(resolve));
    await fresh?.close();
  });

  it('parse into commands, some saying what they print', () => {
    const steps = commands(shellExamples());
    expect(steps.length).toBeGreaterThan(25);
    expect(steps.filter((s) => s.expected !== null).length).toBeGreaterThan(10);
    expect(steps.every((s) => !s.command.includes('# →'))).toBe(true);
  });

  it('run in order against a fresh server, as written, and print what they say', async () => {
    // the README's address is the proxy's; nothing else is changed
    const steps = commands(shellExamples().replaceAll(README_SITE, proxy.url));
    const script = ['set -euo pipefail', ...steps.flatMap((step, i) => [`curl -s -o /dev/null ${proxy.url}/__step/${i}; printf '\\n@@ ${i} @@\\n'`, step.command]), `printf '\\n@@ end @@\\n'`].join('\n');
    mkdirSync(artifacts, { recursive: true });
    writeFileSync(join(artifacts, 'readme-examples.sh'), script);
    // `npx almanac` runs in the checkout, on the server's database
    const child = spawn('bash', [join(artifacts, 'readme-examples.sh')], { cwd: root, env: { ...process.env, ALMANAC_DB: fresh.config.dbPath } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    // the SDK example generates a client where a reader's own project would have it: not in this checkout
    rmSync(join(root, 'almanac.json'), { force: true });
    rmSync(join(root, 'src', 'almanac'), { recursive: true, force: true });

    const outputs = new Map<string, string>();
    const parts = stdout.split(/\n@@ (\d+|end) @@\n/);
    for (let i = 1; i < parts.length; i += 2) outputs.set(parts[i]!, parts[i + 1] ?? '');
    const last = [...outputs.keys()].at(-1);
    expect(code, `the examples stopped at command ${last}: ${steps[Number(last)]?.command}\n${stderr}`).toBe(0);
    expect(outputs.has('end')).toBe(true);
    expect(proxy.failures).toEqual([]);

    steps.forEach((step, i) => {
      const output = outputs.get(String(i)) ?? '';
      const answers = proxy.received.filter((r) => r.step === i);
      // an error is shown on purpose only, with what it says
      const errors = answers.filter((a) => a.status >= 400);
      if (errors.length > 0) expect(step.expected, `${step.command}\n→ ${errors.map((e) => `${e.status} ${e.method} ${e.path}`).join(', ')}`).not.toBeNull();
      if (step.expected !== null) expect(prints(output, step.expected), `${step.command}\nprinted: ${output}\nREADME: ${step.expected}`).toBe(true);
    });
    expect(proxy.received.length).toBeGreaterThan(25);
  }, 120_000);
});
