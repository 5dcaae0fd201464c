import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { run, UsageError } from '../src/commands.js';
import { loadMigrations } from '../src/db/migrations.js';
import { sqliteMigrationsDir } from '../src/db/sqlite/migrate.js';
import { NS, TestServer } from './helpers/server.js';

let s: TestServer;
let dir: string;
const saved = { ALMANAC_DB: process.env.ALMANAC_DB, ALMANAC_DATABASE_URL: process.env.ALMANAC_DATABASE_URL };
const cli = async (...args: string[]) => {
  const lines: string[] = [];
  await run(args, (line) => lines.push(line));
  return lines.join('\n');
};
const event = (title: string, extra: Record<string, unknown> = {}) =>
  s.raw('POST', `${NS}/events`, { as: s.admin, json: { title, start_date: '2031-03-01 10:00', end_date: '2031-03-01 11:00', ...extra } });

beforeAll(async () => {
  s = await TestServer.start();
  dir = mkdtempSync(join(tmpdir(), 'almanac-ops-'));
});
afterAll(async () => {
  await s.close();
  rmSync(dir, { recursive: true, force: true });
});
// the CLI works on the test server's database, of either engine
beforeEach(() => {
  process.env.ALMANAC_DB = s.config.dbPath;
  if (s.config.databaseUrl) process.env.ALMANAC_DATABASE_URL = s.config.databaseUrl;
  else delete process.env.ALMANAC_DATABASE_URL;
});
afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('health', () => {
  it('answers 200 with the schema version while the database answers, 503 when it does not', async () => {
    const { data, response } = await s.client().GET('/healthz');
    expect(response.status).toBe(200);
    // both engines number their migrations alike: version N is the same schema on either
    expect(data).toEqual({ status: 'ok', database: 'ok', schema_version: loadMigrations(sqliteMigrationsDir).length });
    const broken = await TestServer.start();
    await broken.engine.close();
    const r = await broken.raw('GET', '/healthz');
    expect(r.status).toBe(503);
    expect(r.body.code).toBe('rest_database_unavailable');
    await broken.close().catch(() => undefined);
  });
});

// `backup` and `restore` copy SQLite files (a PostgreSQL database has pg_dump and pg_restore)
describe.runIf(TestServer.engine === 'sqlite')('backup and restore', () => {
  it('backs up a consistent copy while serving, and restores it into the running service', async () => {
    const kept = (await event('Kept by the backup', { categories: ['Backups'] })).body;
    const file = join(dir, 'backup.sqlite');
    expect(await cli('backup', file)).toContain('backed up');
    const copy = new Database(file, { readonly: true });
    expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(copy.prepare('SELECT title FROM posts WHERE id = ?').get(kept.id)).toEqual({ title: 'Kept by the backup' });
    copy.close();

    const later = (await event('Made after the backup')).body;
    expect(await cli('restore', file)).toContain('restored');
    expect((await s.raw('GET', `${NS}/events/${kept.id}`)).body.title).toBe('Kept by the backup');
    expect((await s.raw('GET', `${NS}/events/${later.id}`)).status).toBe(404);
    expect((await s.raw('GET', `${NS}/categories?slug=backups&hide_empty=0`)).body.categories[0].count).toBe(1);
  });

  it('refuses to restore what is not a sound Almanac database', async () => {
    const junk = join(dir, 'junk.sqlite');
    writeFileSync(junk, 'not a database at all');
    await expect(cli('restore', junk)).rejects.toThrow(UsageError);
    await expect(cli('restore', join(dir, 'missing.sqlite'))).rejects.toThrow(UsageError);
    const future = join(dir, 'future.sqlite');
    const f = new Database(future);
    f.pragma('user_version = 999');
    f.close();
    await expect(cli('restore', future)).rejects.toThrow(/newer/);
    await expect(cli('backup')).rejects.toThrow(UsageError);
    expect((await s.raw('GET', '/healthz')).status).toBe(200);
  });
});

describe('trash purge', () => {
  it('deletes for good what has been trashed longer than asked, keeping term counts right', async () => {
    const old = (await event('Long trashed', { categories: ['Purged'] })).body;
    const recent = (await event('Just trashed', { categories: ['Purged'] })).body;
    const alive = (await event('Still here', { categories: ['Purged'] })).body;
    await s.raw('DELETE', `${NS}/events/${old.id}`, { as: s.admin });
    await s.raw('DELETE', `${NS}/events/${recent.id}`, { as: s.admin });
    await s.sql(`UPDATE posts SET modified_utc = '2020-01-01 00:00:00' WHERE id = ?`, old.id);
    expect(await cli('trash', 'purge', '--older-than', '30d')).toMatch(/^purged 1 record /);
    expect(await s.sql('SELECT CAST(COUNT(*) AS INTEGER) AS n FROM posts WHERE id = ?', old.id)).toEqual([{ n: 0 }]);
    expect(await s.sql('SELECT CAST(COUNT(*) AS INTEGER) AS n FROM event_terms WHERE event_id = ?', old.id)).toEqual([{ n: 0 }]);
    expect((await s.raw('GET', `${NS}/events/${recent.id}`, { as: s.admin })).body.code).toBe('event-no-longer-available');
    expect((await s.raw('GET', `${NS}/categories?slug=purged&hide_empty=0`)).body.categories[0].count).toBe(1);
    expect((await s.raw('GET', `${NS}/events/${alive.id}`)).status).toBe(200);
    await expect(cli('trash', 'purge', '--older-than', 'soon')).rejects.toThrow(UsageError);
    // older than any date can say: nothing is, and nothing is purged
    expect(await cli('trash', 'purge', '--older-than', '99999999999d')).toBe('purged 0 records trashed before 0001-01-01 00:00:00 UTC');
    expect((await s.raw('GET', `${NS}/events/${recent.id}`, { as: s.admin })).body.code).toBe('event-no-longer-available');
  });
});
