/**
 * The primary of ALMANAC_WORKERS > 1 against kill -9 at the worst moments: a worker and then each replacement before
 * it listens, every worker at once, and a start that can never succeed. Real processes (`dist/src/main.js`), on the
 * engine under test (a SQLite file, or a database of the throwaway PostgreSQL cluster).
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { Almanac, call, cleanUp, engineDb } from './helpers/process.js';
import { NS } from './helpers/server.js';

afterAll(cleanUp);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The worker processes of a primary, as the kernel lists its children. */
function workersOf(server: Almanac): number[] {
  try {
    const pid = server.child.pid!;
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return []; // the primary is gone
  }
}

/** Waits for a worker not in `known` to appear (polling the kernel's list, so it is caught long before it listens). */
async function nextWorker(server: Almanac, known: Set<number>, ms = 30_000): Promise<number> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const fresh = workersOf(server).find((pid) => !known.has(pid));
    if (fresh !== undefined) return fresh;
    await sleep(2);
  }
  throw new Error(`no new worker within ${ms} ms:\n${server.stderr}`);
}

async function freePort(): Promise<number> {
  const probe: Server = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Asks the service again and again until `stop()`; every answer's status, or the error if none came. */
function keepAsking(server: Almanac) {
  const outcomes: string[] = [];
  let asking = true;
  const loop = (async () => {
    while (asking) {
      outcomes.push(await call(server, 'GET', `${NS}/events`, undefined, null).then((r) => String(r.status), (err: Error) => err.message));
      await sleep(20);
    }
  })();
  return { outcomes, stop: async () => { asking = false; await loop; return outcomes; } };
}

/** Resolves once `count` distinct processes answered requests (request ids start with the worker's pid). */
async function answeredByWorkers(server: Almanac, count: number, ms = 60_000): Promise<Set<string>> {
  const until = Date.now() + ms;
  const pids = new Set<string>();
  while (Date.now() < until) {
    // while no worker serves, the port refuses connections: ask again until the workers are back
    const replies = await Promise.all(Array.from({ length: 4 }, () => call(server, 'GET', `${NS}/events`, undefined, null).catch(() => null)));
    for (const r of replies) {
      if (r === null) continue;
      expect(r.status).toBe(200);
      pids.add(r.requestId.split('-')[0]!);
    }
    if (pids.size >= count) return pids;
    pids.clear();
    await sleep(100);
  }
  throw new Error(`fewer than ${count} workers answered within ${ms} ms:\n${server.stderr}`);
}

describe('ALMANAC_WORKERS=2 under kill -9', () => {
  it('keeps serving through a worker killed and each of its replacements killed before it listens', async () => {
    const db = await engineDb();
    const server = await Almanac.start(db.dbPath, 2, { ...db.env, ALMANAC_WORKER_START_ATTEMPTS: '3' });
    const known = new Set(workersOf(server));
    expect(known.size).toBe(2);
    process.kill([...known][0]!, 'SIGKILL');

    const killedBeforeListening: number[] = [];
    let asking: ReturnType<typeof keepAsking> | undefined;
    // more replacements than ALMANAC_WORKER_START_ATTEMPTS: the other worker serves, so the primary must not give up
    for (let i = 0; i < 5; i++) {
      const replacement = await nextWorker(server, known);
      known.add(replacement);
      process.kill(replacement, 'SIGKILL');
      killedBeforeListening.push(replacement);
      // from the first replacement on, the primary knows the killed worker is gone: one worker serves
      asking ??= keepAsking(server);
    }
    const outcomes = await asking!.stop();

    expect(server.listeningPids().filter((pid) => killedBeforeListening.includes(pid)), 'replacements that listened before the kill').toEqual([]);
    expect(outcomes.length).toBeGreaterThan(10);
    expect(outcomes.filter((o) => o !== '200'), 'requests while one worker served').toEqual([]);
    // the next replacement is left alone: both places serve again, and the primary logged why each start ended
    await answeredByWorkers(server, 2);
    const failed = server.logs().filter((l) => l.msg === 'a worker could not start');
    expect(failed.length, server.stderr).toBe(5);
    expect(failed.every((l) => l.reason === 'killed by SIGKILL' && l.serving === 1)).toBe(true);
    expect(failed.map((l) => l.attempt)).toEqual([1, 2, 3, 4, 5]);
    expect(server.logs().some((l) => l.msg === 'workers keep failing to start; stopping')).toBe(false);
    await server.stop();
    expect(await server.exited).toBe(0);
  }, 120_000);

  it('comes back when every worker is killed at once, and their first replacements too', async () => {
    // a fixed port: with none left listening, the primary lets go of the port, and port 0 would bind a new one
    const db = await engineDb();
    const server = await Almanac.start(db.dbPath, 2, { ...db.env, PORT: String(await freePort()), ALMANAC_WORKER_START_ATTEMPTS: '3' });
    const known = new Set(workersOf(server));
    for (const pid of known) process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 2; i++) {
      const replacement = await nextWorker(server, known);
      known.add(replacement);
      process.kill(replacement, 'SIGKILL');
    }
    await answeredByWorkers(server, 2);
    await server.stop();
    expect(await server.exited).toBe(0);
  }, 120_000);

  it('gives up, with the reason, only when every start fails ALMANAC_WORKER_START_ATTEMPTS times in a row', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const db = await engineDb();
      const server = Almanac.spawn(db.dbPath, 2, { ...db.env, PORT: String(port), ALMANAC_WORKER_START_ATTEMPTS: '3' });
      const code = await Promise.race([server.exited, sleep(150_000).then(() => 'still running')]);
      expect(code, server.stderr).toBe(1);
      const failed = server.logs().filter((l) => l.msg === 'a worker could not start');
      for (const place of [0, 1]) {
        const attempts = failed.filter((l) => l.worker === place).map((l) => l.attempt as number);
        expect(attempts.length).toBeGreaterThanOrEqual(3);
        expect(attempts).toEqual(attempts.map((_, i) => i + 1));
      }
      // the worker's reason names the address and says it is taken (src/server.ts listenError: EADDRINUSE in one line)
      const inUse = `cannot listen on 127.0.0.1:${port}: another process is using that port`;
      expect(failed.every((l) => String(l.reason).includes(inUse)), JSON.stringify(failed.map((l) => l.reason))).toBe(true);
      const last = server.logs().at(-1)!;
      expect(last).toMatchObject({ level: 'error', msg: 'workers keep failing to start; stopping', attempts: 3 });
      expect(String(last.reason)).toContain(inUse);
    } finally {
      taken.close();
    }
  }, 180_000);
});
