import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { checkResponse, NS, TestServer } from './helpers/server.js';

const root = join(import.meta.dirname, '..');
const artifacts = join(import.meta.dirname, 'artifacts');

/** The README's typed-client example, exactly as printed. */
function clientExample(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const block = /<!-- client-example:start -->\n```ts\n([\s\S]*?)```\n<!-- client-example:end -->/.exec(readme);
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
