/**
 * Several stateless Almanac nodes on one PostgreSQL database, each a real server process (`dist/src/main.js`) on its
 * own cluster (so that restarting PostgreSQL here disturbs no other test):
 *
 * - one truth: a write acknowledged by one node is seen by the very next read on another (no stale cached answer,
 *   no stale 304, no stale `If-Match`), credential changes and the lock-out hold on every node at once;
 * - concurrency: simultaneous creates get distinct slugs, partial updates all survive, one `If-Match` wins, sync
 *   misses nothing written on another node;
 * - faults: a node killed during writes loses nothing it acknowledged and leaves nothing half written; a restarted
 *   PostgreSQL gives 503 with `Retry-After` (never a hang, never a 500) and the nodes reconnect by themselves.
 */
import { execFile } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../scripts/postgresCluster.js';
import { Almanac, cleanUp, send, tempDb, type Sent } from './helpers/process.js';
import { NS, type Credentials } from './helpers/server.js';

const CLI = resolve(dirname(fileURLToPath(import.meta.url)), '../dist/src/cli.js');
const ADMIN: Credentials = { login: 'admin', password: 'nodes-secret-password-1' };

let cluster: Cluster;
let url: string;
let a: Almanac;
let b: Almanac;
const extra: Almanac[] = [];

const env = () => ({ ALMANAC_DATABASE_URL: url, ALMANAC_ADMIN_USER: ADMIN.login, ALMANAC_ADMIN_PASSWORD: ADMIN.password, ALMANAC_AUTH_MAX_FAILURES: '6' });

async function almanac(...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ALMANAC_DATABASE_URL: url } });
  return stdout.trim();
}

async function sql<T = Record<string, unknown>>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  cluster = await startCluster();
  const admin = new pg.Client({ connectionString: cluster.url });
  await admin.connect();
  await admin.query('CREATE DATABASE almanac');
  await admin.end();
  url = cluster.urlOf('almanac');
  // two nodes starting at the same moment on an empty database
  [a, b] = await Promise.all([Almanac.start(tempDb(), 1, env()), Almanac.start(tempDb(), 1, env())]);
}, 90_000);

afterAll(async () => {
  await Promise.all([a, b, ...extra].filter(Boolean).map((n) => n.stop()));
  await cleanUp();
  cluster?.stop();
});

const event = (title: string, day = '2027-05-01') => ({ title, start_date: `${day} 10:00`, end_date: `${day} 12:00` });
/** The database through the cluster's socket directory, as a node on the same machine as PostgreSQL may reach it. */
const socketUrl = () => `postgres://almanac@/almanac?host=${encodeURIComponent(cluster.dir)}&port=${cluster.port}`;

describe('two nodes starting at once', () => {
  it('migrate the database once and serve the same schema version', async () => {
    const migrated = [a, b].filter((n) => n.stderr.includes('"msg":"database migrated"'));
    expect(migrated).toHaveLength(1);
    const [ha, hb] = await Promise.all([send(a.base, 'GET', '/healthz'), send(b.base, 'GET', '/healthz')]);
    expect(ha.status).toBe(200);
    expect(hb.body).toEqual(ha.body);
  });
});

describe('a node on the same machine as PostgreSQL', () => {
  it('connects through the socket directory (a URL with a user and no host) and shares the database with the others', async () => {
    const node = await Almanac.start(tempDb(), 1, { ...env(), ALMANAC_DATABASE_URL: socketUrl() });
    extra.push(node);
    const listening = node.logs().find((l) => l.msg === 'almanac listening')!;
    expect(listening.db).toBe(`postgres://almanac@/almanac?host=${cluster.dir}&port=${cluster.port}`);
    const created = await send(node.base, 'POST', `${NS}/events`, { json: event('Through the socket'), as: ADMIN });
    expect(created.status).toBe(201);
    expect((await send(a.base, 'GET', `${NS}/events/${created.body.id}`)).body.title).toBe('Through the socket');
    // the other nodes and this test connect over TCP: connections without a client address are the new node's
    const [row] = await sql<{ sockets: number }>(`SELECT COUNT(*)::int AS sockets FROM pg_stat_activity
      WHERE datname = 'almanac' AND backend_type = 'client backend' AND client_addr IS NULL`);
    expect(row!.sockets).toBeGreaterThan(0);
  });
  it('refuses to start, in one line, when the socket directory has no server in it, the database or role does not exist or has no rights, TLS is refused or the URL cannot be read; so do the commands of the CLI', async () => {
    const refused = Almanac.spawn(tempDb(), 1, { ...env(), ALMANAC_DATABASE_URL: `postgres://almanac@/almanac?host=${encodeURIComponent(cluster.dir)}&port=1` });
    expect(await refused.exited).toBe(2);
    expect(refused.stderr.trim()).toMatch(/^almanac: the database postgres:\/\/almanac@\/almanac\?host=\S+&port=1 cannot be reached \(connect ENOENT [^)]*\): check ALMANAC_DATABASE_URL/);
    // a database, role or encryption the server does not have: said as it says it
    const tcp = `postgres://almanac@127.0.0.1:${cluster.port}`;
    for (const [url, reason] of [[`${tcp}/nowhere`, 'database "nowhere" does not exist'], [`postgres://nobody@127.0.0.1:${cluster.port}/almanac`, 'role "nobody" does not exist'],
      [`${tcp}/almanac?ssl=true`, 'The server does not support SSL connections']]) {
      const node = Almanac.spawn(tempDb(), 1, { ...env(), ALMANAC_DATABASE_URL: url! });
      expect(await node.exited).toBe(2);
      expect(node.stderr.trim()).toBe(`almanac: the database ${url!.replace(/\?.*/, '')} cannot be reached (${reason}): check ALMANAC_DATABASE_URL and that the server runs`);
    }
    // a role that may log in but not create or read Almanac's tables
    await sql('CREATE ROLE stranger LOGIN');
    const stranger = Almanac.spawn(tempDb(), 1, { ...env(), ALMANAC_DATABASE_URL: `postgres://stranger@127.0.0.1:${cluster.port}/almanac` });
    expect(await stranger.exited).toBe(2);
    expect(stranger.stderr.trim()).toMatch(/^almanac: the database postgres:\/\/stranger@127\.0\.0\.1:\d+\/almanac refuses its role \(permission denied [^)]*\): the role of ALMANAC_DATABASE_URL must own the database[^\n]*$/);
    // and a command of the CLI says it the same way
    const command = await promisify(execFile)(process.execPath, [CLI, 'user', 'list'], { env: { PATH: process.env.PATH ?? '', ALMANAC_DATABASE_URL: `${tcp}/nowhere` } })
      .then(() => null, (err: { code: number; stderr: string }) => err);
    expect(command?.code).toBe(2);
    expect(command?.stderr.trim()).toBe(`almanac: the database ${tcp}/nowhere cannot be reached (database "nowhere" does not exist): check ALMANAC_DATABASE_URL and that the server runs`);
    const unreadable = Almanac.spawn(tempDb(), 1, { ...env(), ALMANAC_DATABASE_URL: 'postgres://almanac@[db/almanac' });
    expect(await unreadable.exited).toBe(2);
    expect(unreadable.stderr.trim()).toMatch(/^almanac: ALMANAC_DATABASE_URL must be a PostgreSQL URL such as [^\n]*$/);
  });
});

describe('one truth across nodes', () => {
  it('a write acknowledged on one node is what the next read on the other answers: no stale answer, 304 or If-Match', async () => {
    const created = await send(a.base, 'POST', `${NS}/events`, { json: event('Read your writes'), as: ADMIN });
    expect(created.status).toBe(201);
    const path = `${NS}/events/${created.body.id}`;
    for (let round = 0; round < 5; round++) {
      // B caches its answer (read twice, so the second comes from its cache)
      const before = await send(b.base, 'GET', path);
      expect((await send(b.base, 'GET', path)).headers.etag).toBe(before.headers.etag);
      const title = `Read your writes, round ${round}`;
      const patched = await send(a.base, 'PATCH', path, { json: { title }, as: ADMIN });
      expect(patched.status).toBe(200);
      const after = await send(b.base, 'GET', path);
      expect(after.body.title).toBe(title);
      expect(after.headers.etag).not.toBe(before.headers.etag);
      expect((await send(b.base, 'GET', path, { headers: { 'If-None-Match': String(before.headers.etag) } })).status).toBe(200);
      const stale = await send(b.base, 'PATCH', path, { json: { cost: '5' }, as: ADMIN, headers: { 'If-Match': String(before.headers.etag) } });
      expect(stale.status).toBe(412);
      // lists too
      const list = await send(b.base, 'GET', `${NS}/events?start_date=2027-05-01&end_date=2027-05-01`);
      expect(list.body.events.map((e: { title: string }) => e.title)).toContain(title);
    }
  });

  it('with their listening connections cut, the nodes read the change log for every request: still no stale answer', async () => {
    const created = await send(a.base, 'POST', `${NS}/events`, { json: event('Heard or read'), as: ADMIN });
    const path = `${NS}/events/${created.body.id}`;
    for (let round = 0; round < 3; round++) {
      await send(b.base, 'GET', path);
      const cut = await sql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'almanac-listen'`);
      // each node listens once it has read the log (round 0: since it started; later: since the last cut)
      expect(cut.length).toBeGreaterThanOrEqual(round === 0 ? 2 : 1);
      const title = `Heard or read, round ${round}`;
      expect((await send(a.base, 'PATCH', path, { json: { title }, as: ADMIN })).status).toBe(200);
      expect((await send(b.base, 'GET', path)).body.title).toBe(title);
      // and once listening again (within a second), the next change is heard
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      await send(b.base, 'GET', path);
      expect((await send(a.base, 'PATCH', path, { json: { title: `${title}, heard` }, as: ADMIN })).status).toBe(200);
      expect((await send(b.base, 'GET', path)).body.title).toBe(`${title}, heard`);
    }
  });

  it('a role change and a revoked password take effect at once on every node', async () => {
    await almanac('user', 'add', 'nodes-editor', '--role', 'editor');
    const editor: Credentials = { login: 'nodes-editor', password: await almanac('app-password', 'add', 'nodes-editor') };
    for (const node of [a, b]) {
      // settled on both nodes: their caches of this caller must be retired by the change
      expect((await send(node.base, 'POST', `${NS}/events`, { json: event('By the editor'), as: editor })).status).toBe(201);
      expect((await send(node.base, 'GET', `${NS}/events?status=draft`, { as: editor })).status).toBe(200);
    }
    await almanac('user', 'set-role', 'nodes-editor', 'subscriber');
    for (const node of [a, b]) expect((await send(node.base, 'POST', `${NS}/events`, { json: event('Not any more'), as: editor })).status).toBe(403);
    const uuid = (await almanac('app-password', 'list', 'nodes-editor')).split('\t')[0]!;
    await almanac('app-password', 'revoke', 'nodes-editor', uuid);
    for (const node of [a, b]) expect((await send(node.base, 'GET', `${NS}/events`, { as: editor })).status).toBe(401);
  });

  it('shares the lock-out of failed logins between nodes', async () => {
    const wrong: Credentials = { login: 'admin', password: 'not the password' };
    for (let i = 0; i < 3; i++) expect((await send(a.base, 'GET', `${NS}/events`, { as: wrong })).status).toBe(401);
    for (let i = 0; i < 3; i++) expect((await send(b.base, 'GET', `${NS}/events`, { as: wrong })).status).toBe(401);
    const locked = await send(a.base, 'GET', `${NS}/events`, { as: ADMIN });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    expect((await send(b.base, 'GET', `${NS}/events`, { as: ADMIN })).status).toBe(429);
    await sql('DELETE FROM auth_failures');
  });
});

describe('concurrent writers on two nodes', () => {
  it('simultaneous creates of one title get distinct slugs', async () => {
    const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => send(i % 2 ? a.base : b.base, 'POST', `${NS}/events`, { json: event('Same Title Everywhere'), as: ADMIN })));
    expect(replies.map((r) => r.status)).toEqual(Array(8).fill(201));
    expect(new Set(replies.map((r) => r.body.slug)).size).toBe(8);
    expect(new Set(replies.map((r) => r.body.id)).size).toBe(8);
  });

  it('concurrent partial updates all survive', async () => {
    const created = await send(a.base, 'POST', `${NS}/events`, { json: event('Partial'), as: ADMIN });
    const path = `${NS}/events/${created.body.id}`;
    const changes = [{ cost: '12' }, { website: 'https://partial.example.test/' }, { description: 'Both nodes wrote.' }, { featured: true }, { all_day: true }, { sticky: true }];
    const replies = await Promise.all(changes.map((json, i) => send(i % 2 ? a.base : b.base, 'PATCH', path, { json, as: ADMIN })));
    expect(replies.map((r) => r.status)).toEqual(Array(changes.length).fill(200));
    const final = (await send(b.base, 'GET', path, { as: ADMIN })).body;
    expect(final).toMatchObject({ website: 'https://partial.example.test/', featured: true, all_day: true, sticky: true });
    expect(final.cost_details.values).toEqual(['12']);
    expect(final.description).toContain('Both nodes wrote.');
  });

  it('of eight writers holding the same ETag, exactly one wins', async () => {
    const created = await send(a.base, 'POST', `${NS}/events`, { json: event('One winner'), as: ADMIN });
    const path = `${NS}/events/${created.body.id}`;
    const etag = String((await send(b.base, 'GET', path, { as: ADMIN })).headers.etag);
    const replies = await Promise.all(Array.from({ length: 8 }, (_, i) =>
      send(i % 2 ? a.base : b.base, 'PATCH', path, { json: { title: `Winner ${i}` }, as: ADMIN, headers: { 'If-Match': etag } })));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    expect(replies.filter((r) => r.status === 412)).toHaveLength(7);
  });

  it('sync (modified_after) never skips a change committed on another node', async () => {
    const since = (await sql<{ now: string }>(`SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC' - interval '1 second', 'YYYY-MM-DD HH24:MI:SS') AS now`))[0]!.now;
    const acknowledged = new Map<number, { title: string; venue: number }>();
    let writing = true;
    const writer = async (node: Almanac, n: number) => {
      for (let i = 0; writing; i++) {
        const r = await send(node.base, 'POST', `${NS}/events`, { json: event(`Sync ${n}-${i}`), as: ADMIN });
        if (r.status === 201) acknowledged.set(r.body.id, r.body.modified_utc);
      }
    };
    const seen = new Set<number>();
    const reader = async () => {
      let next: string | null = `${NS}/events?modified_after=${encodeURIComponent(since)}&per_page=50`;
      while (next) {
        const page: Sent = await send(a.base, 'GET', next.replace(/^https?:\/\/[^/]+/, ''), { as: ADMIN });
        expect(page.status).toBe(200);
        for (const item of page.body.events) seen.add(item.id);
        next = page.body.next_rest_url ?? (writing ? page.body.sync_rest_url : null);
        if (!page.body.next_rest_url) await new Promise((r) => setTimeout(r, 200));
      }
    };
    const writers = [writer(a, 1), writer(b, 2), writer(a, 3), writer(b, 4)];
    const reading = reader();
    await new Promise((r) => setTimeout(r, 3_000));
    writing = false;
    await Promise.all(writers);
    // a pass ends at a settled time (two seconds ago): wait that long and read once more
    await new Promise((r) => setTimeout(r, 2_500));
    await reading;
    let tail: string | null = `${NS}/events?modified_after=${encodeURIComponent(since)}&per_page=50`;
    while (tail) {
      const page: Sent = await send(b.base, 'GET', tail.replace(/^https?:\/\/[^/]+/, ''), { as: ADMIN });
      for (const item of page.body.events) seen.add(item.id);
      tail = page.body.next_rest_url ?? null;
    }
    expect(acknowledged.size).toBeGreaterThan(10);
    expect([...acknowledged.keys()].filter((id) => !seen.has(id))).toEqual([]);
  }, 30_000);
});

describe('faults', () => {
  it('a right taken from the role of a running node: 503 with Retry-After while it lacks it, never a 500; answers again once given back', async () => {
    await sql('CREATE ROLE keeper LOGIN');
    await sql('GRANT USAGE, CREATE ON SCHEMA public TO keeper');
    await sql('GRANT ALL ON ALL TABLES IN SCHEMA public TO keeper');
    await sql('GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO keeper');
    const node = await Almanac.start(tempDb(), 1, { ...env(), ALMANAC_DATABASE_URL: `postgres://keeper@127.0.0.1:${cluster.port}/almanac`, ALMANAC_CACHE_MB: '0' });
    extra.push(node);
    const created = await send(a.base, 'POST', `${NS}/events`, { json: event('Kept from its keeper'), as: ADMIN });
    const path = `${NS}/events/${created.body.id}`;
    expect((await send(node.base, 'GET', path)).status).toBe(200);
    await sql('REVOKE SELECT ON posts FROM keeper');
    try {
      const refused = await send(node.base, 'GET', path, { timeoutMs: 10_000 });
      expect(refused.status).toBe(503);
      expect(refused.body.code).toBe('rest_database_unavailable');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await sql('GRANT SELECT ON posts TO keeper');
    }
    expect((await send(node.base, 'GET', path)).body.title).toBe('Kept from its keeper');
    expect(node.errors().filter((line) => /"status":500|rest_internal_error/.test(line))).toEqual([]);
  }, 60_000);
  it('a node killed during writes loses nothing it acknowledged and leaves nothing half written', async () => {
    const victim = await Almanac.start(tempDb(), 1, env());
    extra.push(victim);
    const acknowledged = new Map<number, { title: string; venue: number }>();
    let stop = false;
    // half the writers name what exists by id (their creates go to the database together), half make it inline
    const hall = (await send(b.base, 'POST', `${NS}/venues`, { json: { venue: 'Crash Hall by id' }, as: ADMIN })).body.id as number;
    const category = (await send(b.base, 'POST', `${NS}/categories`, { json: { name: 'Crash by id' }, as: ADMIN })).body.id as number;
    const writer = async (n: number) => {
      for (let i = 0; !stop; i++) {
        try {
          const title = `Crash ${n}-${i}`;
          const named = n % 2 === 0 ? { venue: hall, categories: [category] } : { venue: { venue: `Crash Hall ${n}` }, categories: ['Crash'] };
          const r = await send(victim.base, 'POST', `${NS}/events`, { json: { ...event(title), ...named }, as: ADMIN, timeoutMs: 5_000 });
          if (r.status === 201) acknowledged.set(r.body.id, { title, venue: n % 2 === 0 ? hall : r.body.venue.id });
        } catch {
          return; // the node is gone
        }
      }
    };
    const writers = Array.from({ length: 6 }, (_, n) => writer(n));
    // while writes are in flight: once some were acknowledged, at a moment the test does not choose
    const deadline = Date.now() + 15_000;
    while (acknowledged.size < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, Math.random() * 200));
    await victim.kill9();
    stop = true;
    await Promise.all(writers);
    expect(acknowledged.size).toBeGreaterThan(0);
    for (const [id, written] of acknowledged) {
      const got = await send(b.base, 'GET', `${NS}/events/${id}`, { as: ADMIN });
      expect(got.status).toBe(200);
      expect([got.body.title, got.body.venue.id, got.body.categories.length]).toEqual([written.title, written.venue, 1]);
    }
    // every event post has its event row and every link its record: no write stopped halfway
    expect(await sql(`SELECT id FROM posts p WHERE type = 'event' AND NOT EXISTS (SELECT 1 FROM events e WHERE e.post_id = p.id)`)).toEqual([]);
    expect(await sql(`SELECT event_id FROM event_terms WHERE event_id NOT IN (SELECT post_id FROM events)`)).toEqual([]);
  }, 30_000);

  it('a node whose connections all stay busy answers 503 rest_database_busy with Retry-After, /healthz too, not "unreachable"', async () => {
    // ALMANAC_DB_POOL=2: one connection for lists; a table lock held here keeps it busy on the first list
    const node = await Almanac.start(tempDb(), 1, { ...env(), ALMANAC_DB_POOL: '2', ALMANAC_CACHE_MB: '0' });
    extra.push(node);
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE terms IN ACCESS EXCLUSIVE MODE');
      const held = send(node.base, 'GET', `${NS}/categories?per_page=1`, { timeoutMs: 20_000 });
      await new Promise((r) => setTimeout(r, 200));
      const waiting = await send(node.base, 'GET', `${NS}/categories?per_page=2`, { timeoutMs: 20_000 });
      expect(waiting.status).toBe(503);
      expect(waiting.body.code).toBe('rest_database_busy');
      expect(Number(waiting.headers['retry-after'])).toBeGreaterThan(0);
      await locker.query('COMMIT');
      expect((await held).status).toBe(200);
    } finally {
      await locker.end();
    }
    expect((await send(node.base, 'GET', `${NS}/categories?per_page=2`)).status).toBe(200);
    // the health check's read waits for the same connections: busy, not "does not answer"
    const health = new pg.Client({ connectionString: url });
    await health.connect();
    try {
      await health.query('BEGIN');
      await health.query('LOCK TABLE almanac_schema IN ACCESS EXCLUSIVE MODE');
      const first = send(node.base, 'GET', '/healthz', { timeoutMs: 20_000 });
      await new Promise((r) => setTimeout(r, 200));
      const second = await send(node.base, 'GET', '/healthz', { timeoutMs: 20_000 });
      expect([second.status, second.body.code, Number(second.headers['retry-after']) > 0]).toEqual([503, 'rest_database_busy', true]);
      await health.query('COMMIT');
      expect((await first).status).toBe(200);
    } finally {
      await health.end();
    }
    expect(node.logs().map((l) => l.msg)).toEqual(expect.arrayContaining([expect.stringMatching(/^every database connection stayed busy/), 'database connections come free again']));
    expect(node.logs().filter((l) => /cannot be reached/.test(String(l.msg)))).toEqual([]);
  }, 40_000);

  it('a restarted PostgreSQL: 503 with Retry-After meanwhile, never a hang or a 500; the nodes reconnect by themselves', async () => {
    // a node through the socket directory too: while the server is down, its socket is not there at all
    const viaSocket = await Almanac.start(tempDb(), 1, { ...env(), ALMANAC_DATABASE_URL: socketUrl() });
    extra.push(viaSocket);
    const nodes = [a, b, viaSocket];
    const created = await send(a.base, 'POST', `${NS}/events`, { json: event('Before the restart'), as: ADMIN });
    const path = `${NS}/events/${created.body.id}`;
    cluster.stopServer('fast');
    try {
      for (const node of nodes) {
        const health = await send(node.base, 'GET', '/healthz', { timeoutMs: 10_000 });
        expect(health.status).toBe(503);
        const read = await send(node.base, 'GET', path, { timeoutMs: 10_000 });
        expect(read.status).toBe(503);
        expect(read.body.code).toBe('rest_database_unavailable');
        expect(Number(read.headers['retry-after'])).toBeGreaterThan(0);
        const write = await send(node.base, 'POST', `${NS}/events`, { json: event('During the restart'), as: ADMIN, timeoutMs: 10_000 });
        expect(write.status).toBe(503);
        expect(write.headers['retry-after']).toBeDefined();
      }
    } finally {
      cluster.startServer();
    }
    for (const node of nodes) {
      const deadline = Date.now() + 15_000;
      let status = 0;
      while (Date.now() < deadline && status !== 200) {
        status = (await send(node.base, 'GET', '/healthz', { timeoutMs: 10_000 })).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 250));
      }
      expect(status).toBe(200);
      expect((await send(node.base, 'GET', path)).status).toBe(200);
      expect((await send(node.base, 'POST', `${NS}/events`, { json: event('After the restart'), as: ADMIN })).status).toBe(201);
    }
    for (const node of nodes) expect(node.errors().filter((line) => /"status":500|rest_internal_error|Error:/.test(line))).toEqual([]);
  }, 60_000);
});
