import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../src/paths.js';
import { Almanac, cleanUp, tempDb } from './helpers/process.js';

afterAll(cleanUp);

const MEMORY = pathToFileURL(join(projectRoot, 'dist', 'src', 'memory.js')).href;

/**
 * The largest heap a fresh Node process reaches under a server's kind of garbage: a steady live set, and batches of
 * objects that live long enough to be promoted to the old generation (as a request's do while it is in flight), then
 * die. `setup` runs first, with `limitHeapGrowth` in scope.
 */
function peakHeapMb(setup: string): number {
  const program = `
    import { limitHeapGrowth } from ${JSON.stringify(MEMORY)};
    ${setup}
    const live = [];
    for (let i = 0; i < 150000; i++) live.push({ a: i, b: 'x' + i, c: [i] });
    const inFlight = new Array(400).fill(null);
    let peak = 0;
    for (let r = 0; r < 20000; r++) {
      const batch = [];
      for (let i = 0; i < 300; i++) batch.push({ s: 'y' + i + r, n: [i, r] });
      inFlight[r % inFlight.length] = batch;
      if (r % 100 === 0) peak = Math.max(peak, process.memoryUsage().heapTotal);
    }
    process.stdout.write(String(peak / 1048576));
  `;
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', program], { encoding: 'utf8' }));
}

describe('a serving process', () => {
  it("keeps its heap near what stays alive, and leaves an operator's own --heap-growing-percent alone", () => {
    const unlimited = peakHeapMb('');
    const limited = peakHeapMb('limitHeapGrowth();');
    const operatorsOwn = peakHeapMb("limitHeapGrowth(['--heap-growing-percent=300']);");
    // V8's default lets this heap grow to about 130 MB over 30-45 MB alive; growing by half, it stays under 80 MB
    expect(limited).toBeLessThan(unlimited * 0.75);
    expect(operatorsOwn).toBeGreaterThan(limited * 1.3);
  });

  it('sets it when it starts, and says so in the line that says it listens; a Node option of its own wins', async () => {
    const server = await Almanac.start(tempDb());
    expect((await server.waitForLog((l) => l.msg === 'almanac listening')).heapGrowingPercent).toBe(50);
    await server.stop();

    const own = await Almanac.start(tempDb(), 1, {}, { nodeArgs: ['--heap-growing-percent=80'] });
    const listening = await own.waitForLog((l) => l.msg === 'almanac listening');
    await own.stop();
    expect(listening.heapGrowingPercent).toBe(80);
  });
});
