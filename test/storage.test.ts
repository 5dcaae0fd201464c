/**
 * Faults of the storage under the database: a full disk (SQLite's page limit, and a real full filesystem where this
 * machine lets the tests mount one) and a database that cannot be written at start-up. These are faults of SQLite's
 * file: the sqlite project only (vitest.config.ts).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readlinkSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { storageFault } from '../src/db/faults.js';
import { openDatabase } from '../src/db/sqlite/connection.js';
import { SqliteEngine } from '../src/db/sqlite/engine.js';
import { GroupCommit } from '../src/db/sqlite/groupCommit.js';
import { TEST_ENGINE } from './helpers/engines.js';
import { migrate } from '../src/db/sqlite/migrate.js';
import { Almanac, call, cleanUp, tempDb } from './helpers/process.js';
import { NS, TestServer } from './helpers/server.js';

afterAll(cleanUp);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** An event whose description takes room: a full page, or more, of its own. */
const bulky = (title: string) => ({ title, description: `<p>${'Roomy words. '.repeat(4000)}</p>`, start_date: '2031-05-01 10:00', end_date: '2031-05-01 11:00' });

describe('a full disk', () => {
  it('refuses writes with 507 rest_insufficient_storage, changes nothing, logs once per episode, and recovers by itself', async () => {
    const s = await TestServer.start({ logLevel: 'info' });
    // the server's connection that writes: max_page_count holds for that connection
    const db = (s.engine as SqliteEngine).database;
    try {
      const kept = (await s.raw('POST', `${NS}/events`, { as: s.admin, json: bulky('Stored before') })).body;
      const counts = () => db.prepare('SELECT (SELECT COUNT(*) FROM posts) AS posts, (SELECT COUNT(*) FROM terms) AS terms').get();
      const logged = (msg: string) => s.logs.filter((l) => JSON.parse(l).msg === msg).length;

      for (let episode = 1; episode <= 2; episode++) {
        // the file may grow no further (SQLite's own limit, as a full disk shows to it); what fits in free pages fits
        db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
        let first;
        for (let i = 0; i < 50 && first?.status !== 507; i++) first = await s.raw('POST', `${NS}/events`, { as: s.admin, json: bulky(`Filling ${episode}.${i}`) });
        expect(first!.status).toBe(507);
        expect(first!.body.code).toBe('rest_insufficient_storage');
        const before = counts();
        const refused = [
          await s.raw('POST', `${NS}/events`, { as: s.admin, json: bulky('Refused') }),
          await s.raw('PATCH', `${NS}/events/${kept.id}`, { as: s.admin, json: { description: bulky('x').description.repeat(3) } }),
          await s.raw('POST', `${NS}/venues`, { as: s.admin, json: { venue: 'Refused hall', description: 'Long words. '.repeat(4000) } }),
        ];
        expect(refused.map((r) => [r.status, r.body.code])).toEqual(Array(3).fill([507, 'rest_insufficient_storage']));
        expect(counts(), 'nothing changed').toEqual(before);
        expect((await s.raw('GET', `${NS}/events/${kept.id}`)).status, 'reads go on').toBe(200);
        expect((await s.raw('GET', '/healthz')).status).toBe(200);
        expect(logged('storage full: writes are refused with 507 until space frees'), 'one error line per episode').toBe(episode);
        expect(s.logs.filter((l) => JSON.parse(l).level === 'error').length, 'no other error line').toBe(episode);

        db.pragma('max_page_count = 1073741823'); // space frees
        const created = await s.raw('POST', `${NS}/events`, { as: s.admin, json: bulky(`After episode ${episode}`) });
        expect(created.status).toBe(201);
        expect(logged('storage has room again')).toBe(episode);
      }
    } finally {
      await s.close();
    }
  });

  /** Mounts a tmpfs of `size` at `dir`; false where this machine does not let the tests mount (not root, say). */
  const mounted = (dir: string, size: string): boolean => {
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };

  it('on a real filesystem that fills up: 507 while it is full, the server keeps serving, writes succeed once space frees', async (test) => {
    const dbPath = tempDb();
    const mountPoint = dirname(dbPath);
    if (!mounted(mountPoint, '4m')) return test.skip('cannot mount a tmpfs here');
    let server: Almanac | undefined;
    try {
      server = await Almanac.start(dbPath);
      // leave the database some 600 KB
      const filler = join(mountPoint, 'filler');
      const { bavail, bsize } = statfsSync(mountPoint);
      writeFileSync(filler, Buffer.alloc(Math.max(0, bavail * bsize - 600_000)));
      let answer;
      for (let i = 0; i < 100 && answer?.status !== 507; i++) answer = await call(server, 'POST', `${NS}/events`, bulky(`Filling ${i}`));
      expect(answer!.status).toBe(507);
      expect(answer!.body.code).toBe('rest_insufficient_storage');
      expect((await call(server, 'GET', '/healthz', undefined, null)).status).toBe(200);
      rmSync(filler);
      const created = await call(server, 'POST', `${NS}/events`, bulky('After the filler went'));
      expect(created.status).toBe(201);
      expect((await call(server, 'GET', `${NS}/events/${created.body.id}`, undefined, null)).status).toBe(200);
      const errors = server.errors();
      expect(errors.length, errors.join('\n')).toBe(1);
      expect(errors[0]).toContain('storage full');
      await server.stop();
      expect(await server.exited).toBe(0);
    } finally {
      await server?.stop();
      execFileSync('umount', [mountPoint]);
    }
  }, 120_000);
});

describe('a database that cannot be written at start-up', () => {
  // root writes whatever the permissions say: the server then runs as an unprivileged user
  const asRoot = process.getuid?.() === 0;
  const NOBODY = 65534;

  /** A migrated database in a folder of its own, then `restrict` takes the rights away. */
  const prepared = (restrict: (file: string, folder: string) => void): string => {
    const dbPath = tempDb();
    const db = openDatabase(dbPath);
    migrate(db);
    db.close();
    restrict(dbPath, dirname(dbPath));
    return dbPath;
  };

  /** Starts Almanac on `dbPath` and expects the refusal; `folders` get their rights back afterwards (for clean-up). */
  const refused = async (dbPath: string, folders: string[]) => {
    try {
      const server = Almanac.spawn(dbPath, 1, {}, { uid: asRoot ? NOBODY : undefined });
      const code = await Promise.race([server.exited, sleep(60_000).then(() => 'still running')]);
      const lines = server.stderr.trim().split('\n');
      expect(code, server.stderr).toBe(2);
      expect(lines, 'one line').toHaveLength(1);
      expect(lines[0]!.startsWith(`almanac: the database ${dbPath} cannot be written (`), lines[0]).toBe(true);
      expect(lines[0]).toContain('writable by this process');
    } finally {
      for (const folder of folders) chmodSync(folder, 0o755);
    }
  };

  it('refuses to start, in one line, when the file is read-only', async () => {
    const dbPath = prepared((file, folder) => {
      chmodSync(folder, 0o777);
      chmodSync(file, 0o444);
    });
    await refused(dbPath, [dirname(dbPath)]);
  }, 90_000);

  it('refuses to start, in one line, when its folder is read-only', async () => {
    const dbPath = prepared((file, folder) => {
      chmodSync(file, 0o666);
      chmodSync(folder, 0o555);
    });
    await refused(dbPath, [dirname(dbPath)]);
  }, 90_000);

  it('refuses to start, in one line, when the file is not a SQLite database, or a damaged one', async () => {
    const notDatabase = tempDb();
    writeFileSync(notDatabase, 'name,date\nConcert,2027-05-01\n');
    const damaged = prepared(() => undefined);
    // every page but the first (the header and the schema) overwritten: the users' table is read at start-up
    const file = readFileSync(damaged);
    const pageSize = file.readUInt16BE(16);
    writeFileSync(damaged, Buffer.concat([file.subarray(0, pageSize), Buffer.alloc(file.length - pageSize, 0xff)]));
    for (const [dbPath, said] of [[notDatabase, 'is not a SQLite database (file is not a database): set ALMANAC_DB to'], [damaged, 'is damaged (database disk image is malformed): restore it from a backup']]) {
      const server = Almanac.spawn(dbPath!, 1);
      expect(await Promise.race([server.exited, sleep(60_000).then(() => 'still running')]), server.stderr).toBe(2);
      const lines = server.stderr.trim().split('\n');
      expect(lines, 'one line').toHaveLength(1);
      expect(lines[0]).toContain(`${dbPath} ${said}`);
    }
  }, 90_000);

  it('refuses to start, in one line, when its folder cannot be created', async () => {
    const parent = dirname(tempDb());
    const locked = join(parent, 'locked');
    mkdirSync(locked);
    chmodSync(locked, 0o555);
    chmodSync(parent, 0o755);
    await refused(join(locked, 'data', 'almanac.sqlite'), [locked]);
    // where the file system answers "no such file" to a new folder (Node's recursive mkdir never returned there)
    if (existsSync('/proc/self')) await refused('/proc/almanac-test/data/almanac.sqlite', []);
  }, 90_000);
});

describe('faults of the storage, as each engine reports them', () => {
  it('reads damage and input/output errors from SQLite, the file system and PostgreSQL alike, and nothing else', () => {
    const fault = (code: string) => storageFault(Object.assign(new Error(code), { code }));
    expect(['SQLITE_CORRUPT', 'SQLITE_CORRUPT_INDEX', 'SQLITE_NOTADB', 'XX001', 'XX002'].map(fault)).toEqual(Array(5).fill('damaged'));
    expect(['SQLITE_IOERR', 'SQLITE_IOERR_SHORT_READ', 'SQLITE_CANTOPEN', 'EIO', '58030'].map(fault)).toEqual(Array(5).fill('io'));
    expect(['SQLITE_CONSTRAINT_UNIQUE', '23505', 'ENOENT'].map(fault)).toEqual([null, null, null]);
  });
});

describe.skipIf(TEST_ENGINE !== 'sqlite')('a database damaged while it serves', () => {
  it('answers what needs the damaged part 503 rest_database_damaged, changing nothing and logging it once, and serves the rest', async () => {
    const s = await TestServer.start({ logLevel: 'info' });
    let beside: TestServer | undefined;
    try {
      const event = (await s.raw('POST', `${NS}/events`, { as: s.admin, json: { title: 'On a page that breaks', start_date: '2031-05-01 10:00', end_date: '2031-05-01 11:00' } })).body;
      const venue = (await s.raw('POST', `${NS}/venues`, { as: s.admin, json: { venue: 'Hall on a sound page' } })).body;
      // the events' table's first page, overwritten in the file as a failing disk would (its last version moved there first)
      const db = (s.engine as SqliteEngine).database;
      db.pragma('wal_checkpoint(TRUNCATE)');
      const page = (db.prepare("SELECT rootpage FROM sqlite_schema WHERE name = 'events'").pluck().get() as number) - 1;
      const pageSize = db.pragma('page_size', { simple: true }) as number;
      const file = await open(s.config.dbPath, 'r+');
      await file.write(Buffer.alloc(pageSize, 0xff), 0, pageSize, page * pageSize);
      await file.close();
      const posts = async () => (await s.sql<{ n: number }>('SELECT COUNT(*) AS n FROM posts'))[0]!.n;
      const before = await posts();

      // a process that starts now reads the page from the file (this one's connections may hold it in their caches)
      beside = await s.beside({ logLevel: 'info' });
      const refused = [
        await beside.raw('GET', `${NS}/events/${event.id}`),
        await beside.raw('POST', `${NS}/events`, { as: beside.admin, json: { title: 'Refused', start_date: '2031-05-02 10:00', end_date: '2031-05-02 11:00' } }),
        await beside.raw('GET', `${NS}/events/${event.id}`),
      ];
      for (const r of refused) {
        expect([r.status, r.body.code]).toEqual([503, 'rest_database_damaged']);
        expect(r.body.message).toContain('restores it from a backup');
      }
      expect(await posts(), 'nothing changed').toBe(before);
      expect((await beside.raw('GET', `${NS}/venues/${venue.id}`)).status, 'the rest is served').toBe(200);
      expect((await beside.raw('GET', '/healthz')).status).toBe(200);
      const lines = beside.logs.map((l) => JSON.parse(l) as { level: string; msg: string; error?: string });
      const errors = lines.filter((l) => l.level === 'error');
      expect(errors.map((l) => l.msg), 'one line, and no "unexpected error"').toEqual([expect.stringMatching(/^the database is damaged: /)]);
      expect(errors[0]!.error).toContain('malformed');
    } finally {
      await beside?.close();
      await s.close();
    }
  });
});

describe.skipIf(TEST_ENGINE !== 'sqlite')('a write\'s acknowledgement', () => {
  it('waits until the batch is durable, and a batch that cannot be made durable is acknowledged to no one', async () => {
    const db = openDatabase(tempDb());
    migrate(db);
    db.pragma('synchronous = NORMAL');
    let made: (() => void)[] = [];
    let fail = false;
    const group = new GroupCommit(db, () => undefined, () => new Promise<void>((resolve, reject) => made.push(() => (fail ? reject(Object.assign(new Error('no space'), { code: 'ENOSPC' })) : resolve()))));
    const insert = db.prepare("INSERT INTO change_log (changed_utc, tags) VALUES ('2031-01-01 00:00:00', ?)");
    const settled: string[] = [];
    const writes = ['a', 'b'].map((tag) => group.run(async () => insert.run(tag), null).then(() => settled.push(tag)));
    await vi.waitFor(() => expect(made).toHaveLength(1));
    // committed but not yet durable: nobody has been told
    expect(db.prepare("SELECT COUNT(*) AS n FROM change_log WHERE tags IN ('a', 'b')").get()).toEqual({ n: 2 });
    await sleep(20);
    expect(settled).toEqual([]);
    made[0]!();
    await Promise.all(writes);
    expect(settled).toEqual(['a', 'b']);

    made = [];
    fail = true;
    const refused = group.run(async () => insert.run('c'), null);
    await vi.waitFor(() => expect(made).toHaveLength(1));
    made[0]!();
    await expect(refused).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(storageFault(await refused.catch((e: unknown) => e))).toBe('full');
    db.close();
  });

  it('is made durable off the event loop: the engine\'s writer commits at synchronous=NORMAL and fsyncs its log', async () => {
    const path = tempDb();
    const engine = await SqliteEngine.open(path);
    try {
      expect(engine.database.pragma('synchronous', { simple: true })).toBe(1); // NORMAL
      const synced: string[] = [];
      const probe = await open(path, 'r');
      const FileHandleProto = Object.getPrototypeOf(probe) as { sync: () => Promise<void> };
      await probe.close();
      const { sync } = FileHandleProto;
      FileHandleProto.sync = function (this: { fd: number }) {
        synced.push(readlinkSync(`/proc/self/fd/${this.fd}`));
        return sync.call(this);
      };
      try {
        await engine.write(async (unit) => unit.users.create({ login: 'durable', email: 'durable@example.com', role: 'editor' }));
      } finally {
        FileHandleProto.sync = sync;
      }
      expect(synced).toEqual([`${path}-wal`]);
    } finally {
      await engine.close();
    }
  });
});

describe.skipIf(TEST_ENGINE !== 'sqlite')('the read connections\' map of the file', () => {
  /** Whether this process maps the database file itself (the `-shm` index beside it is always mapped, by SQLite). */
  const mapsFile = (path: string) => readFileSync('/proc/self/maps', 'utf8').split('\n').some((line) => line.endsWith(` ${path}`));

  it.skipIf(process.platform !== 'linux')('maps the file by ALMANAC_SQLITE_MMAP_MB, not at all with 0, and reads through it see every write', async () => {
    for (const [mmap, mapped] of [[1024, true], [0, false]] as const) {
      const s = await TestServer.start({ sqliteMmapMb: mmap });
      try {
        const created = await s.raw('POST', `${NS}/events`, { as: s.admin, json: bulky('Mapped') });
        expect(created.status).toBe(201);
        // the writer's pages go to the log, then into the file at a checkpoint, under the readers' map
        const checkpointer = openDatabase(s.config.dbPath);
        checkpointer.pragma('wal_checkpoint(TRUNCATE)');
        checkpointer.close();
        const edited = await s.raw('POST', `${NS}/events/${created.body.id}`, { as: s.admin, json: { title: 'Mapped again' } });
        expect(edited.status).toBe(200);
        const read = await s.raw('GET', `${NS}/events/${created.body.id}`);
        expect([read.status, read.body.title]).toEqual([200, 'Mapped again']);
        expect(mapsFile(s.config.dbPath), `ALMANAC_SQLITE_MMAP_MB=${mmap}`).toBe(mapped);
      } finally {
        await s.close();
      }
    }
  });

  it('maps nothing by default (the RSS would count the mapped pages once per connection), and takes a whole number of MiB', () => {
    expect(loadConfig({}).sqliteMmapMb).toBe(0);
    expect(loadConfig({ ALMANAC_SQLITE_MMAP_MB: '1024' }).sqliteMmapMb).toBe(1024);
    for (const bad of ['-1', 'lots', '1.5']) expect(() => loadConfig({ ALMANAC_SQLITE_MMAP_MB: bad })).toThrow(ConfigError);
  });
});
