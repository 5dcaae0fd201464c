import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { projectRoot } from '../src/paths.js';
import { CHEAP_READ_CACHE_KIB, LIST_READ_CACHE_KIB, openReadOnly, type Db } from '../src/db/sqlite/connection.js';
import { SqliteEngine } from '../src/db/sqlite/engine.js';
import { TEST_ENGINE } from './helpers/engines.js';
import { cleanUp, tempDb } from './helpers/process.js';
import type pg from 'pg';
import { lockoutSql, NS, TestServer, type Credentials, type RawResponse } from './helpers/server.js';
import { withWriteLockHeld, writeWaiting } from './helpers/writeLock.js';

/** What the performance work must not change: revocations seen at once, concurrent writes each answered exactly. */

/** The built `almanac` command, in a process of its own, on the server's database (of either engine). */
function almanac(s: TestServer, ...argv: string[]): string {
  const { ALMANAC_DATABASE_URL: _unset, ...inherited } = process.env;
  return execFileSync(process.execPath, [join(projectRoot, 'dist', 'src', 'cli.js'), ...argv], {
    env: { ...inherited, ALMANAC_DB: s.config.dbPath, ...(s.config.databaseUrl ? { ALMANAC_DATABASE_URL: s.config.databaseUrl } : {}) }, encoding: 'utf8',
  }).trim();
}

describe('remembered credentials', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await TestServer.start();
  });
  afterAll(() => s.close());

  const me = async (as: Credentials) => (await s.raw('GET', `${NS}/events?per_page=1`, { as })).status;
  const draft = (as: Credentials) => s.raw('POST', `${NS}/events`, { as, json: { title: 'Memo', status: 'draft', start_date: '2031-07-01 10:00', end_date: '2031-07-01 11:00' } });

  it('stop working the moment the CLI revokes the password, from another process', async () => {
    const alice = await s.user('author', 'memo-alice');
    expect([await me(alice), await me(alice), await me(alice)]).toEqual([200, 200, 200]);
    const uuid = almanac(s, 'app-password', 'list', 'memo-alice').split('\t')[0]!;
    expect(almanac(s, 'app-password', 'revoke', 'memo-alice', uuid)).toBe(`revoked ${uuid}`);
    expect(await me(alice)).toBe(401);
    expect(await me(alice)).toBe(401);
  });

  it('on one kept-alive connection, follow a change of credentials and a revocation at once', async () => {
    const grace = await s.user('author', 'memo-grace');
    const henry = await s.user('author', 'memo-henry');
    const created = await draft(grace);
    expect(created.status).toBe(201);
    const hers = `${NS}/events/${created.body.id}`;
    const connection = s.keptAlive();
    try {
      expect((await connection.get(hers, grace)).status).toBe(200);
      expect(await connection.get(hers, grace)).toEqual({ status: 200, reused: true });
      // another header on the same connection is another caller: not her draft for another author; a wrong password fails
      expect(await connection.get(hers, henry)).toEqual({ status: 403, reused: true });
      expect(await connection.get(hers, { login: 'memo-grace', password: 'not it' })).toEqual({ status: 401, reused: true });
      expect((await connection.get(hers)).status).not.toBe(200);
      expect(await connection.get(hers, grace)).toEqual({ status: 200, reused: true });
      const uuid = almanac(s, 'app-password', 'list', 'memo-grace').split('\t')[0]!;
      almanac(s, 'app-password', 'revoke', 'memo-grace', uuid);
      expect(await connection.get(hers, grace)).toEqual({ status: 401, reused: true });
    } finally {
      connection.close();
    }
  });

  it('follow a role change made by the CLI at once', async () => {
    const bob = await s.user('author', 'memo-bob');
    expect((await draft(bob)).status).toBe(201);
    almanac(s, 'user', 'set-role', 'memo-bob', 'subscriber');
    expect((await draft(bob)).status).toBe(403);
    almanac(s, 'user', 'set-role', 'memo-bob', 'author');
    expect((await draft(bob)).status).toBe(201);
  });

  it('stop working when the user is removed, and never carry over to a new user of the same login', async () => {
    const carol = await s.user('editor', 'memo-carol');
    expect(await me(carol)).toBe(200);
    almanac(s, 'user', 'remove', 'memo-carol', '--reassign', 'admin');
    expect(await me(carol)).toBe(401);
    await s.user('editor', 'memo-carol'); // same login, another user with another password
    expect(await me(carol)).toBe(401);
  });

  it('still meet the lock-out: a pair locked by this or another process answers 429, right password or not', async () => {
    const dave = await s.user('author', 'memo-dave');
    expect([await me(dave), await me(dave), await me(dave)]).toEqual([200, 200, 200]);
    // another process locks the pair (another connection to where the failure counts are kept)
    const account = `#${(await s.read((repos) => repos.users.findByLoginOrEmail('memo-dave')))!.id}`;
    await lockoutSql(s, 'INSERT INTO auth_failures (address, account, failures, window_start, locked_until, expires) VALUES (?, ?, 0, ?, ?, ?)',
      '127.0.0.1', account, Date.now(), Date.now() + 60_000, Date.now() + 60_000);
    expect(await me(dave)).toBe(429);
    const erin = await s.user('author', 'memo-erin');
    expect([await me(erin), await me(erin)]).toEqual([200, 200]);
    for (let i = 0; i < 10; i++) expect(await me({ login: 'memo-erin', password: 'wrong' })).toBe(401);
    expect(await me(erin)).toBe(429);
  });

  it('of the bootstrap password (scrypt) end when another process replaces it', async () => {
    expect(await me(s.admin)).toBe(200);
    expect(await me(s.admin)).toBe(200);
    // another process (another connection to the database) replaces it
    const [admin] = await s.sql<{ id: number }>('SELECT CAST(id AS INTEGER) AS id FROM users WHERE login = ?', 'admin');
    await s.sql('DELETE FROM app_passwords WHERE user_id = ? AND is_bootstrap', admin!.id);
    await s.sql('UPDATE users SET credential_version = credential_version + 1 WHERE id = ?', admin!.id);
    expect(await me(s.admin)).toBe(401);
  });
});

describe('group commit', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await TestServer.start();
  });
  afterAll(() => s.close());

  it('answers each of many concurrent writes on its own: failures roll back alone, successes are all stored', async () => {
    const bodies = Array.from({ length: 24 }, (_, i) => ({
      title: `Concurrent ${i}`, start_date: '2031-08-01 10:00', end_date: '2031-08-01 11:00',
      ...(i % 5 === 3 ? { venue: 999_999 } : {}), // an unknown venue: 400, and nothing of it stored
    }));
    const answers = await Promise.all(bodies.map((json) => s.raw('POST', `${NS}/events`, { as: s.admin, json })));
    expect(answers.map((a) => a.status)).toEqual(bodies.map((_, i) => (i % 5 === 3 ? 400 : 201)));
    const created = answers.filter((a) => a.status === 201).map((a) => a.body as { id: number; title: string; slug: string });
    expect(new Set(created.map((e) => e.id)).size).toBe(created.length);
    expect(new Set(created.map((e) => e.slug)).size).toBe(created.length);
    // what was acknowledged is committed: another connection sees exactly those
    const stored = await s.sql<{ id: number; title: string }>("SELECT CAST(id AS INTEGER) AS id, title FROM posts WHERE title LIKE 'Concurrent %' ORDER BY id");
    expect(stored).toEqual(created.map((e) => ({ id: e.id, title: e.title })).sort((a, b) => a.id - b.id));
  });

  it('gives concurrent writes of one title distinct slugs, as one after the other would', async () => {
    const json = { title: 'Same title', start_date: '2031-08-02 10:00', end_date: '2031-08-02 11:00' };
    const answers = await Promise.all(Array.from({ length: 6 }, () => s.raw('POST', `${NS}/events`, { as: s.admin, json })));
    expect(answers.map((a) => a.body.slug).sort()).toEqual(['same-title', 'same-title-2', 'same-title-3', 'same-title-4', 'same-title-5', 'same-title-6']);
  });
  it.runIf(TestServer.engine === 'postgres')('sends the creates of a batch to the database together, with the answers they would get one after another', async () => {
    const hall = (await s.raw('POST', `${NS}/venues`, { as: s.admin, json: { venue: 'Hall of the batch' } })).body.id as number;
    const doomed = (await s.raw('POST', `${NS}/venues`, { as: s.admin, json: { venue: 'Hall gone before the batch' } })).body.id as number;
    const category = (await s.raw('POST', `${NS}/categories`, { as: s.admin, json: { name: 'Batched' } })).body.id as number;
    const at = (title: string, extra: object = {}) => ({ title, start_date: '2031-08-03 10:00', end_date: '2031-08-03 11:00', categories: [category], ...extra });
    /** Sends `bodies` while a first write holds up the next batch, so that they all queue for it; `meanwhile` runs before it goes. */
    const oneBatch = (pilot: object, sends: (() => Promise<RawResponse>)[], meanwhile = async (_holder: pg.Client) => {}) =>
      withWriteLockHeld(s.config.databaseUrl!, async (holder) => {
        const first = s.raw('POST', `${NS}/events`, { as: s.admin, json: pilot });
        await writeWaiting(holder);
        const rest = sends.map((send) => send());
        await new Promise((r) => setTimeout(r, 500)); // they read what they name, then queue behind the first
        await meanwhile(holder);
        return { first, rest };
      }).then(async ({ first, rest }) => [await first, ...(await Promise.all(rest))]);
    const create = (json: object) => () => s.raw('POST', `${NS}/events`, { as: s.admin, json });

    // nothing but inserts: stored together
    const plain = await oneBatch(at('Pilot of the batch'), Array.from({ length: 6 }, (_, i) => create(at(`Together ${i}`, { venue: hall }))));
    expect(plain.map((a) => a.status)).toEqual(Array(7).fill(201));
    expect(plain.slice(1).map((a) => [a.body.title, a.body.venue.id])).toEqual(Array.from({ length: 6 }, (_, i) => [`Together ${i}`, hall]));

    // one title twice, a body refused before it reads anything, an update, a venue deleted under the batch
    const pilot = plain[0]!.body.id as number;
    const mixed = await oneBatch(at('Second pilot'), [
      create(at('Twin of the batch')),
      create(at('Twin of the batch')),
      create(at('   ')),
      create(at('Beside the twins', { venue: hall })),
      () => s.raw('POST', `${NS}/events/${pilot}`, { as: s.admin, json: { title: 'Pilot renamed in the batch' } }),
      create(at('At a hall that is gone', { venue: doomed })),
      create(at('After the update')),
    ], async (holder) => {
      await holder.query('DELETE FROM posts WHERE id = $1', [doomed]);
    });
    expect(mixed.map((a) => [a.status, a.body.code ?? a.body.slug])).toEqual([
      [201, 'second-pilot'], [201, 'twin-of-the-batch'], [201, 'twin-of-the-batch-2'], [400, 'rest_invalid_param'], [201, 'beside-the-twins'],
      [200, 'pilot-of-the-batch'], [400, 'rest_invalid_param'], [201, 'after-the-update'],
    ]);
    expect([Object.keys(mixed[3]!.body.data.params), Object.keys(mixed[6]!.body.data.params)]).toEqual([['title'], ['venue']]);
    // what was acknowledged is what is stored, and nothing else
    const acknowledged = [...plain, ...mixed].filter((a) => a.status === 201).map((a) => a.body.id as number);
    const stored = await s.sql<{ id: number }>(`SELECT CAST(id AS INTEGER) AS id FROM posts WHERE title LIKE 'Together %' OR title IN
      ('Pilot renamed in the batch', 'Second pilot', 'Twin of the batch', 'Beside the twins', 'At a hall that is gone', 'After the update') ORDER BY id`);
    expect(stored.map((r) => r.id)).toEqual(acknowledged.sort((a, b) => a - b));
    for (const answer of [...plain.slice(1), ...mixed].filter((a) => a.status < 300)) {
      const now = await s.raw('GET', `${NS}/events/${answer.body.id}`);
      expect([now.body.title, now.body.venue?.id ?? null]).toEqual([answer.body.title, answer.body.venue?.id ?? null]);
    }
  });
});

describe('ALMANAC_CACHE_MB', () => {
  it('bounds the response cache (16 MB unless set; 0 turns it off) and refuses what is not a size', () => {
    expect(loadConfig({}).cacheBytes).toBe(16 * 1024 * 1024);
    expect(loadConfig({ ALMANAC_CACHE_MB: '8' }).cacheBytes).toBe(8 * 1024 * 1024);
    expect(loadConfig({ ALMANAC_CACHE_MB: '0' }).cacheBytes).toBe(0);
    for (const bad of ['-1', 'lots', '1.5', '70000']) expect(() => loadConfig({ ALMANAC_CACHE_MB: bad })).toThrow(ConfigError);
  });

  it('answers the same with the cache off', async () => {
    const s = await TestServer.start({ cacheBytes: 0 });
    try {
      const e = (await s.raw('POST', `${NS}/events`, { as: s.admin, json: { title: 'Uncached', start_date: '2031-09-01 10:00', end_date: '2031-09-01 11:00' } })).body;
      const first = await s.raw('GET', `${NS}/events/${e.id}`);
      expect(first.body.title).toBe('Uncached');
      expect((await s.raw('GET', `${NS}/events/${e.id}`)).text).toBe(first.text);
      await s.sql('UPDATE posts SET title = ? WHERE id = ?', 'Changed elsewhere', e.id); // another connection
      expect((await s.raw('GET', `${NS}/events/${e.id}`)).body.title).toBe('Changed elsewhere');
    } finally {
      await s.close();
    }
  });
});

describe('lists read together', () => {
  it('each get their own answer when many wait for the same read threads at once', async () => {
    // no response cache: every list is read; two read threads, so most calls wait and travel several to a message
    const s = await TestServer.start({ cacheBytes: 0, readThreads: 2 });
    try {
      const admin = await s.user('administrator');
      for (let i = 1; i <= 12; i++) {
        const day = String(i).padStart(2, '0');
        const made = await s.raw('POST', `${NS}/events`, { as: admin, json: { title: `Batch ${i} word${i}x`, start_date: `2031-08-${day} 10:00`, end_date: `2031-08-${day} 11:00` } });
        expect(made.status).toBe(201);
      }
      const window = 'start_date=2031-08-01&end_date=2031-08-31';
      const paths = [
        ...Array.from({ length: 12 }, (_, i) => `${NS}/events?${window}&per_page=1&page=${i + 1}`),
        ...Array.from({ length: 12 }, (_, i) => `${NS}/events?${window}&search=word${i + 1}x`),
      ];
      const together = await Promise.all(paths.map((path) => s.raw('GET', path)));
      for (const [i, path] of paths.entries()) {
        const alone = await s.raw('GET', path);
        expect(together[i]!.status).toBe(200);
        expect(together[i]!.text).toBe(alone.text);
        expect(together[i]!.body.events.map((e: { title: string }) => e.title)).toEqual([`Batch ${(i % 12) + 1} word${(i % 12) + 1}x`]);
      }
    } finally {
      await s.close();
    }
  });
});

describe.skipIf(TEST_ENGINE !== 'sqlite')('SQLite\'s read connections', () => {
  it('keep a page cache of 2 MiB each, not the 16 MiB better-sqlite3 gives a connection', async () => {
    const engine = await SqliteEngine.open(tempDb());
    try {
      // reads that overlap take a connection each; the repositories keep theirs in a field TypeScript calls private
      let release!: () => void;
      const overlap = new Promise<void>((resolve) => (release = resolve));
      const sizes = Array.from({ length: 6 }, () => engine.read(async (repos) => {
        await overlap;
        return (repos.posts as unknown as { db: Db }).db.pragma('cache_size', { simple: true });
      }));
      setTimeout(release, 50);
      expect(await Promise.all(sizes)).toEqual(Array(6).fill(-CHEAP_READ_CACHE_KIB));
      expect(CHEAP_READ_CACHE_KIB).toBe(2048);
      // a read thread's connection (searches read long runs of the trigram index)
      const list = openReadOnly(engine.path, { cacheKiB: LIST_READ_CACHE_KIB });
      expect(list.pragma('cache_size', { simple: true })).toBe(-16_384);
      list.close();
    } finally {
      await engine.close();
    }
  });
  afterAll(cleanUp);
});
