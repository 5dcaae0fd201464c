import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { run, UsageError } from '../src/commands.js';
import { loadMigrations as loadFrom, MigrationError } from '../src/db/migrations.js';
import { openDatabase } from '../src/db/sqlite/connection.js';
import { migrate, sqliteMigrationsDir } from '../src/db/sqlite/migrate.js';
import { projectRoot } from '../src/paths.js';
import { rawSql, testDatabase, type TestDatabase } from './helpers/engines.js';
import { NS, TestServer, type Credentials } from './helpers/server.js';

/** The migrations (both engines have the same numbers: version N is the same schema on either). */
const loadMigrations = () => loadFrom(sqliteMigrationsDir);

const PASSWORD = /^([A-Za-z0-9]{4} ){5}[A-Za-z0-9]{4}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const savedEnv = { ALMANAC_DB: process.env.ALMANAC_DB, ALMANAC_DATABASE_URL: process.env.ALMANAC_DATABASE_URL };
function restoreEnv(): void {
  for (const [name, value] of Object.entries(savedEnv)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
}

/** Points the in-process CLI at a database: a SQLite file, and the PostgreSQL database when there is one. */
function useDatabase(dbPath: string, url: string | null): void {
  process.env.ALMANAC_DB = dbPath;
  if (url) process.env.ALMANAC_DATABASE_URL = url;
  else delete process.env.ALMANAC_DATABASE_URL;
}

/** SQLite only: what these tests check is SQLite's file (created or not, its -wal file, a copy of it). */
const sqliteOnly = TestServer.engine === 'sqlite';

/** What the last command run by `almanac` noted on stderr. */
let notes: string[] = [];

/** Runs the CLI in-process against ALMANAC_DB, returning the lines it printed (its notes go to `notes`). */
async function almanac(...argv: string[]): Promise<string[]> {
  const lines: string[] = [];
  notes = [];
  await run(argv, (line) => lines.push(line), (line) => notes.push(line));
  return lines;
}

/** The built command as a process, in `cwd`, with the environment given (ALMANAC_DB unset unless given). */
function almanacProcess(cwd: string, argv: string[], env: Record<string, string> = {}) {
  const { ALMANAC_DB: _unset, ...inherited } = process.env;
  return spawnSync(process.execPath, [join(projectRoot, 'dist', 'src', 'cli.js'), ...argv], { cwd, env: { ...inherited, ...env }, encoding: 'utf8' });
}

describe('almanac CLI on a temporary database', () => {
  let dir: string;
  let dbPath: string;
  /** The engine's database: a SQLite file not created yet, or a new (migrated, empty) PostgreSQL database. */
  let database: TestDatabase;
  const sql = <T = Record<string, unknown>>(text: string, ...params: unknown[]) => rawSql<T>(database, text, params);

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'almanac-cli-'));
    dbPath = join(dir, 'almanac.sqlite');
    database = await testDatabase(dbPath);
    useDatabase(dbPath, database.url);
  });
  afterEach(async () => {
    restoreEnv();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const uuidsOf = async (login: string) => (await almanac('app-password', 'list', login)).map((line) => line.split('\t')[0]!);

  it.runIf(sqliteOnly)('migrate creates the schema once, at ALMANAC_DB', async () => {
    expect(await almanac('migrate')).toEqual([`migrated to version ${loadMigrations().length}`]);
    expect(existsSync(dbPath)).toBe(true);
    expect(await almanac('migrate')).toEqual(['already up to date']);
  });

  it.runIf(sqliteOnly)('says which database it opened, and creates one only for commands that add to it', async () => {
    for (const argv of [['user', 'list'], ['app-password', 'list', 'admin'], ['app-password', 'add', 'admin'], ['user', 'set-role', 'admin', 'editor'], ['trash', 'purge', '--older-than', '30d'], ['backup', join(dir, 'copy.sqlite')]]) {
      await expect(almanac(...argv), argv.join(' ')).rejects.toThrow(new UsageError(`no database at ${dbPath}: set ALMANAC_DB to the database file, or run almanac where its data/ folder is`));
    }
    expect(readdirSync(dir)).toEqual([]);
    await almanac('user', 'add', 'alice');
    expect(notes).toEqual([`created a new database at ${dbPath}`]);
    await almanac('user', 'list');
    expect(notes).toEqual([`database ${dbPath}`]);
  });

  it.runIf(sqliteOnly)('refuses to back up into a folder that does not exist', async () => {
    await almanac('migrate');
    const target = join(dir, 'missing', 'copy.sqlite');
    await expect(almanac('backup', target)).rejects.toThrow(new UsageError(`cannot write the backup ${target}: there is no folder ${join(dir, 'missing')}`));
    const copy = join(dir, 'copy.sqlite');
    const printed = await almanac('backup', copy);
    expect(printed).toHaveLength(1);
    expect(printed[0]).toMatch(/^backed up .+ to .+copy\.sqlite \(\d+ pages\)$/);
    expect(existsSync(copy)).toBe(true);
  });

  it('adds a user and lists them', async () => {
    const added = await almanac('user', 'add', 'alice', '--role', 'editor', '--email', 'alice@example.test');
    expect(added).toHaveLength(1);
    expect(added[0]).toMatch(/^user alice \(id \d+, editor\) added$/);
    const list = await almanac('user', 'list');
    expect(list).toHaveLength(1);
    expect(list[0]!.split('\t').slice(1)).toEqual(['alice', 'editor', 'alice@example.test']);
  });

  it('defaults the role to subscriber', async () => {
    await almanac('user', 'add', 'sam');
    expect((await almanac('user', 'list'))[0]!.split('\t').slice(1)).toEqual(['sam', 'subscriber', '']);
  });

  it('refuses an existing login (any case) or e-mail address', async () => {
    await almanac('user', 'add', 'alice', '--role', 'editor', '--email', 'alice@example.test');
    await expect(almanac('user', 'add', 'alice')).rejects.toThrow(UsageError);
    await expect(almanac('user', 'add', 'ALICE')).rejects.toThrow(UsageError);
    await expect(almanac('user', 'add', 'alice2', '--email', 'Alice@Example.test')).rejects.toThrow(UsageError);
    expect(await almanac('user', 'list')).toHaveLength(1);
  });

  it('refuses an invalid role, login or e-mail address', async () => {
    await expect(almanac('user', 'add', 'carol', '--role', 'overlord')).rejects.toThrow(UsageError);
    await expect(almanac('user', 'add', 'bad login')).rejects.toThrow(UsageError);
    await expect(almanac('user', 'add')).rejects.toThrow(UsageError);
    await expect(almanac('user', 'add', 'dave', '--email', 'not-an-address')).rejects.toThrow(UsageError);
    expect(await almanac('user', 'list')).toEqual([]);
  });

  it('changes a role, refusing an unknown role or user', async () => {
    await almanac('user', 'add', 'alice', '--role', 'editor');
    expect(await almanac('user', 'set-role', 'alice', 'author')).toEqual(['user alice is now author']);
    expect((await almanac('user', 'list'))[0]!.split('\t')[2]).toBe('author');
    await expect(almanac('user', 'set-role', 'alice', 'overlord')).rejects.toThrow(UsageError);
    await expect(almanac('user', 'set-role', 'alice')).rejects.toThrow(UsageError);
    await expect(almanac('user', 'set-role', 'nobody', 'author')).rejects.toThrow(UsageError);
    expect((await almanac('user', 'list'))[0]!.split('\t')[2]).toBe('author');
  });

  it('creates, lists and revokes application passwords', async () => {
    await almanac('user', 'add', 'alice', '--role', 'editor');
    const printed = await almanac('app-password', 'add', 'alice', '--name', 'laptop');
    expect(printed).toHaveLength(1);
    expect(printed[0]).toMatch(PASSWORD);

    const list = await almanac('app-password', 'list', 'alice');
    expect(list).toHaveLength(1);
    const [uuid, name, created, lastUsed] = list[0]!.split('\t');
    expect(uuid).toMatch(UUID);
    expect(name).toBe('laptop');
    expect(created).toMatch(/^created \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect(lastUsed).toBe('last used never');
    expect(list[0]).not.toContain(printed[0]!.replaceAll(' ', '')); // the secret is never shown again

    await expect(almanac('app-password', 'revoke', 'alice', '00000000-0000-4000-8000-000000000000')).rejects.toThrow(UsageError);
    await expect(almanac('app-password', 'revoke', 'alice')).rejects.toThrow(UsageError);
    expect(await almanac('app-password', 'revoke', 'alice', uuid!)).toEqual([`revoked ${uuid}`]);
    expect(await almanac('app-password', 'list', 'alice')).toEqual([]);
    await expect(almanac('app-password', 'revoke', 'alice', uuid!)).rejects.toThrow(UsageError);
  });

  it("does not revoke another user's password", async () => {
    await almanac('user', 'add', 'alice');
    await almanac('user', 'add', 'bob');
    await almanac('app-password', 'add', 'bob');
    const [bobs] = await uuidsOf('bob');
    await expect(almanac('app-password', 'revoke', 'alice', bobs!)).rejects.toThrow(UsageError);
    expect(await uuidsOf('bob')).toEqual([bobs]);
  });

  it('removes a user only with --reassign to another existing user, giving them the records', async () => {
    await almanac('user', 'add', 'alice', '--role', 'editor');
    await almanac('user', 'add', 'bob', '--role', 'editor');
    await almanac('app-password', 'add', 'alice');
    const aliceId = Number((await almanac('user', 'list'))[0]!.split('\t')[0]);
    // an event of alice's, straight into the database (no server runs here)
    const now = '2026-11-01 10:00:00';
    await sql(`INSERT INTO posts (type, status, slug, title, date_local, date_utc, modified_local, modified_utc, lang, translation_group, author_id)
               VALUES ('event', 'publish', 'alices-event', 'Alice''s event', ?, ?, ?, ?, 'en', 0, ?)`, now, now, now, now, aliceId);
    const post = Number((await sql<{ id: number }>(`SELECT id FROM posts WHERE slug = 'alices-event'`))[0]!.id);
    await sql('UPDATE posts SET translation_group = id WHERE id = ?', post);
    await sql(`INSERT INTO events (post_id, start_local, end_local, start_utc, end_utc, timezone, lang, status, date_utc, author_id)
               VALUES (?, '2027-01-01 10:00:00', '2027-01-01 12:00:00', '2027-01-01 10:00:00', '2027-01-01 12:00:00', 'UTC+0', 'en', 'publish', ?, ?)`, post, now, aliceId);

    await expect(almanac('user', 'remove', 'alice')).rejects.toThrow(UsageError);
    await expect(almanac('user', 'remove', 'alice', '--reassign', 'alice')).rejects.toThrow(UsageError);
    await expect(almanac('user', 'remove', 'alice', '--reassign', 'nobody')).rejects.toThrow(UsageError);
    expect(await almanac('user', 'list')).toHaveLength(2);

    expect(await almanac('user', 'remove', 'alice', '--reassign', 'bob')).toEqual(['user alice removed; records reassigned to bob']);
    const list = await almanac('user', 'list');
    expect(list.map((l) => l.split('\t')[1])).toEqual(['bob']);
    const bobId = Number(list[0]!.split('\t')[0]);
    expect(await sql('SELECT CAST(author_id AS INTEGER) AS author_id FROM posts WHERE id = ?', post)).toEqual([{ author_id: bobId }]);
    expect(await sql('SELECT CAST(COUNT(*) AS INTEGER) AS n FROM app_passwords WHERE user_id = ?', aliceId)).toEqual([{ n: 0 }]);
    await expect(almanac('user', 'remove', 'alice', '--reassign', 'bob')).rejects.toThrow(UsageError);
  });

  it('refuses an unknown command', async () => {
    await expect(almanac('frobnicate')).rejects.toThrow(UsageError);
    await expect(almanac('user', 'frobnicate')).rejects.toThrow(UsageError);
    await expect(almanac('user')).rejects.toThrow(/unknown command "user"/);
  });

  it('prints the usage for --help or no command', async () => {
    const help = await almanac('--help');
    expect(help).toHaveLength(1);
    expect(help[0]).toMatch(/^usage: almanac/);
    expect(await almanac()).toEqual(help);
  });

  it.runIf(!sqliteOnly)('refuses a PostgreSQL database newer than the code, and closes its connections', async () => {
    await sql('UPDATE almanac_schema SET version = ?', loadMigrations().length + 1);
    await expect(almanac('user', 'list')).rejects.toThrow(MigrationError);
    await expect(almanac('migrate')).rejects.toThrow(MigrationError);
    // a leaked pool would keep connections to the database open (a closed one's may take a moment to go)
    const others = async () => (await sql<{ n: number }>('SELECT CAST(COUNT(*) AS INTEGER) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()'))[0]!.n;
    for (let i = 0; i < 20 && (await others()) > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await others()).toBe(0);
  });

  it.runIf(sqliteOnly)('refuses a database newer than the code, and closes it', async () => {
    const db = openDatabase(dbPath);
    migrate(db);
    db.pragma(`user_version = ${loadMigrations().length + 1}`);
    db.close();
    expect(existsSync(`${dbPath}-wal`)).toBe(false);

    await expect(almanac('user', 'list')).rejects.toThrow(MigrationError);
    // Closing the last connection to a WAL database removes its -wal file; a leaked connection keeps it.
    expect(existsSync(`${dbPath}-wal`)).toBe(false);
    await expect(almanac('migrate')).rejects.toThrow(MigrationError);
    expect(existsSync(`${dbPath}-wal`)).toBe(false);
  });
});

// The CLI's own behaviour on its default engine (SQLite, no ALMANAC_DATABASE_URL): the same in either project
describe.runIf(sqliteOnly)('the almanac and server processes', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'almanac-process-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A process's stderr as lines; none may be a stack frame. */
  const stderrLines = (stderr: string) => {
    const lines = stderr.trim().split('\n');
    expect(lines.filter((l) => /^\s+at /.test(l))).toEqual([]);
    return lines;
  };

  it('outside the project, refuses to back up to a missing folder or list users, says why in one line, and creates nothing', () => {
    const backup = almanacProcess(dir, ['backup', '/missing-dir/x.sqlite']);
    expect(backup.status).toBe(2);
    expect(stderrLines(backup.stderr)).toEqual(['almanac: cannot write the backup /missing-dir/x.sqlite: there is no folder /missing-dir']);
    const list = almanacProcess(dir, ['user', 'list']);
    expect(list.status).toBe(2);
    expect(stderrLines(list.stderr)).toEqual([`almanac: no database at ${join(dir, 'data', 'almanac.sqlite')}: set ALMANAC_DB to the database file, or run almanac where its data/ folder is`]);
    expect(list.stdout).toBe('');
    expect(readdirSync(dir)).toEqual([]);
  });

  it('prints nothing but the new password on stdout, so PW=$(almanac app-password add …) captures it', () => {
    const db = join(dir, 'almanac.sqlite');
    expect(almanacProcess(dir, ['user', 'add', 'alice'], { ALMANAC_DB: db }).status).toBe(0);
    const added = almanacProcess(dir, ['app-password', 'add', 'alice'], { ALMANAC_DB: db });
    expect(added.status).toBe(0);
    expect(added.stdout).toMatch(new RegExp(`^${PASSWORD.source.slice(1, -1)}\n$`));
    expect(stderrLines(added.stderr)).toEqual([`almanac: database ${db}`]);
  });

  it.each([['npm start', 'main.js', []], ['almanac serve', 'cli.js', ['serve']]])('%s on a port in use says so in one line and exits 1', async (_name, script, argv) => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const { ALMANAC_DB: _unset, ...inherited } = process.env;
      const run = spawnSync(process.execPath, [join(projectRoot, 'dist', 'src', script), ...argv], {
        cwd: dir, encoding: 'utf8', timeout: 30_000,
        env: { ...inherited, ALMANAC_DB: join(dir, 'almanac.sqlite'), PORT: String(port), HOST: '127.0.0.1', ALMANAC_LOG_LEVEL: 'warn' },
      });
      expect(run.status).toBe(1);
      expect(stderrLines(run.stderr)).toEqual([`almanac: cannot listen on 127.0.0.1:${port}: another process is using that port (EADDRINUSE; choose another with PORT)`]);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  }, 40_000);

  it('npm start refuses, in one line with exit status 2, an ALMANAC_ADMIN_USER that `user add` would refuse', () => {
    const { ALMANAC_DB: _unset, ...inherited } = process.env;
    const run = spawnSync(process.execPath, [join(projectRoot, 'dist', 'src', 'main.js')], {
      cwd: dir, encoding: 'utf8', timeout: 30_000,
      env: { ...inherited, ALMANAC_DB: join(dir, 'admin.sqlite'), PORT: '0', ALMANAC_ADMIN_USER: 'site admin', ALMANAC_ADMIN_PASSWORD: 'a long enough secret', ALMANAC_LOG_LEVEL: 'warn' },
    });
    expect(run.status).toBe(2);
    expect(stderrLines(run.stderr)).toEqual(['almanac: ALMANAC_ADMIN_USER must be a login of letters, digits, . _ @ - (at most 60), as `almanac user add` takes']);
    expect(existsSync(join(dir, 'admin.sqlite')), 'nothing created').toBe(false);
  }, 40_000);

  it('npm start on a HOST that names no address says so in one line and exits 1', () => {
    const { ALMANAC_DB: _unset, ...inherited } = process.env;
    const run = spawnSync(process.execPath, [join(projectRoot, 'dist', 'src', 'main.js')], {
      cwd: dir, encoding: 'utf8', timeout: 30_000,
      env: { ...inherited, ALMANAC_DB: join(dir, 'almanac.sqlite'), PORT: '0', HOST: '999.1.1.1', ALMANAC_LOG_LEVEL: 'warn' },
    });
    expect(run.status).toBe(1);
    expect(stderrLines(run.stderr)).toHaveLength(1);
    expect(stderrLines(run.stderr)[0]).toMatch(/^almanac: cannot listen on 999\.1\.1\.1:0: no address goes by that name \((ENOTFOUND|EAI_AGAIN|EAI_FAIL); set HOST to an address of this machine\)$/);
  }, 40_000);
});

describe('almanac CLI against a running server', () => {
  let s: TestServer;

  beforeAll(async () => {
    s = await TestServer.start();
    useDatabase(s.config.dbPath, s.config.databaseUrl);
  });
  afterAll(async () => {
    restoreEnv();
    await s?.close();
  });

  const categories = (as: Credentials) => s.raw('GET', `${NS}/categories`, { as });

  async function userWithPassword(login: string, role: string): Promise<Credentials> {
    await almanac('user', 'add', login, '--role', role, '--email', `${login}@example.test`);
    const [password] = await almanac('app-password', 'add', login, '--name', 'cli');
    expect(password).toMatch(PASSWORD);
    return { login, password: password! };
  }

  it('a password made by the CLI authenticates at once, and its revocation applies on the next request', async () => {
    const erin = await userWithPassword('erin', 'editor');
    expect((await categories(erin)).status).toBe(200);
    expect((await categories(erin)).status).toBe(200);

    const [uuid] = (await almanac('app-password', 'list', 'erin')).map((l) => l.split('\t')[0]!);
    await almanac('app-password', 'revoke', 'erin', uuid!);
    const after = await categories(erin);
    expect(after.status).toBe(401);
    expect(after.body.code).toBe('incorrect_password');
  });

  it('tells a wrong password from an unknown login', async () => {
    const fay = await userWithPassword('fay', 'author');
    const wrong = await categories({ login: 'fay', password: 'abcd efgh ijkl mnop qrst uvwx' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('incorrect_password');
    const unknown = await categories({ login: 'nobody-here', password: fay.password });
    expect(unknown.status).toBe(401);
    expect(unknown.body.code).toBe('invalid_username');
    expect((await categories(fay)).status).toBe(200);
  });

  it('accepts the password with or without its spaces, and the e-mail address as login', async () => {
    const gus = await userWithPassword('gus', 'author');
    expect(gus.password).toContain(' ');
    expect((await categories(gus)).status).toBe(200);
    expect((await categories({ login: 'gus', password: gus.password.replaceAll(' ', '') })).status).toBe(200);
    expect((await categories({ login: 'gus@example.test', password: gus.password })).status).toBe(200);
  });

  it('a role change takes effect on the next request', async () => {
    const hal = await userWithPassword('hal', 'editor');
    const ivy = await userWithPassword('ivy', 'editor');
    expect((await s.raw('POST', `${NS}/tags`, { as: hal, json: { name: 'before' } })).status).toBe(201);

    expect(await almanac('user', 'set-role', 'hal', 'subscriber')).toEqual(['user hal is now subscriber']);
    expect((await s.raw('POST', `${NS}/tags`, { as: hal, json: { name: 'x' } })).status).toBe(403);
    expect((await s.raw('POST', `${NS}/tags`, { as: ivy, json: { name: 'x' } })).status).toBe(201);
    expect((await categories(hal)).status).toBe(200); // still authenticated, only less capable
  });

  it('a removed user can no longer authenticate', async () => {
    const jo = await userWithPassword('jo', 'author');
    expect((await categories(jo)).status).toBe(200);
    await almanac('user', 'remove', 'jo', '--reassign', 'admin');
    const after = await categories(jo);
    expect(after.status).toBe(401);
    expect(after.body.code).toBe('invalid_username');
  });
});
