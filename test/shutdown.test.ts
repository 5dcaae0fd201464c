import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../src/paths.js';
import { cleanUp, engineDb } from './helpers/process.js';
import { basic, NS, TestServer } from './helpers/server.js';

afterAll(cleanUp);

/** Starts the built server (test/setup/build.ts builds it) and resolves with its address once it listens. */
function start(db: string, workers = 1, extraEnv: Record<string, string> = {}) {
  const child = spawn(process.execPath, [join(projectRoot, 'dist', 'src', 'main.js')], {
    env: { ...process.env, ...extraEnv, ALMANAC_DB: db, PORT: '0', ALMANAC_WORKERS: String(workers), ALMANAC_ADMIN_USER: 'admin', ALMANAC_ADMIN_PASSWORD: 'shutdown-secret', ALMANAC_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  const url = new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      const m = /"almanac listening","url":"http:\/\/[^:]+:(\d+)/.exec(log);
      if (m) resolve(`http://127.0.0.1:${m[1]}`);
    });
    child.once('exit', (code) => reject(new Error(`exited early (${code}): ${log}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, url, exited, log: () => log };
}

describe('graceful shutdown', () => {
  it.each([1, 2])('with %i worker(s), SIGTERM exits 0, keeps every acknowledged write and checkpoints the log', async (workers) => {
    const database = await engineDb(); // a SQLite file, or a database of the throwaway PostgreSQL cluster
    const db = database.dbPath;
    const server = start(db, workers, database.env);
    const url = await server.url;
    const auth = { Authorization: basic({ login: 'admin', password: 'shutdown-secret' }), 'Content-Type': 'application/json' };
    const created = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      fetch(`${url}${NS}/events`, { method: 'POST', headers: auth, body: JSON.stringify({ title: `Before shutdown ${i}`, start_date: '2031-01-01 10:00', end_date: '2031-01-01 11:00' }) }).then((r) => r.status)));
    expect(created.every((s) => s === 201)).toBe(true);
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    if (TestServer.engine === 'sqlite') {
      // SQLite's write-ahead log is emptied into the file, and the file is sound (PostgreSQL has no such file to check)
      const wal = (() => {
        try {
          return statSync(`${db}-wal`).size;
        } catch {
          return 0;
        }
      })();
      expect(wal).toBe(0);
      const check = new Database(db, { readonly: true });
      expect(check.pragma('integrity_check', { simple: true })).toBe('ok');
      check.close();
    }
    expect(await database.sql(`SELECT CAST(COUNT(*) AS INTEGER) AS n FROM posts WHERE title LIKE 'Before shutdown %'`)).toEqual([{ n: 20 }]);
  });

  it('makes the writes it took in before it stops, even when their clients have gone, and logs no error', async () => {
    const database = await engineDb();
    const server = start(database.dbPath, 1, database.env);
    const url = await server.url;
    const auth = { Authorization: basic({ login: 'admin', password: 'shutdown-secret' }), 'Content-Type': 'application/json' };
    const clients = Array.from({ length: 40 }, () => new AbortController());
    const sent = clients.map((client, i) => fetch(`${url}${NS}/events`, {
      method: 'POST', headers: auth, signal: client.signal,
      body: JSON.stringify({ title: `Left behind ${i}`, start_date: '2031-01-01 10:00', end_date: '2031-01-01 11:00' }),
    }).then((r) => r.status, () => 'gone'));
    // the writes are queued or being made when their clients leave and the process is told to stop
    await new Promise((resolve) => setTimeout(resolve, 30));
    for (const client of clients) client.abort();
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    const answered = (await Promise.all(sent)).filter((status) => status !== 'gone');
    expect(answered.every((status) => status === 201)).toBe(true);
    expect(server.log()).not.toMatch(/"level":"error"/);
    // every write acknowledged was kept (those whose clients left may or may not have been made, none halfway)
    const [made] = await database.sql<{ n: number }>(`SELECT CAST(COUNT(*) AS INTEGER) AS n FROM posts WHERE title LIKE 'Left behind %'`);
    expect(made!.n).toBeGreaterThanOrEqual(answered.length);
  });
});
