import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { run, UsageError } from '../src/commands.js';
import { openDatabase } from '../src/db/connection.js';
import { loadMigrations, migrate, MigrationError } from '../src/db/migrate.js';
import { projectRoot } from '../src/paths.js';
import { insertEvent, NS, TestServer, type Credentials } from './helpers/server.js';

const PASSWORD = /^([A-Za-z0-9]{4} ){5}[A-Za-z0-9]{4}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const savedDb = process.env.ALMANAC_DB;
function restoreEnv(): void {
  if (savedDb === undefined) delete process.env.ALMANAC_DB;
  else process.env.ALMANAC_DB = savedDb;
}

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

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'almanac-cli-'));
    dbPath = join(dir, 'almanac.sqlite');
    process.env.ALMANAC_DB = dbPath;
  });
  afterEach(() => {
    restoreEnv();
    rmSync(dir, { recursive: true, force: true });
  });

  const uuidsOf = async (login: string) => (await almanac('app-password', 'list', login)).map((line) => line.split('\t')[0]!);

  it('migrate creates the schema once, at ALMANAC_DB', async () => {
    expect(await almanac('migrate')).toEqual([`migrated to version ${loadMigrations().length}`]);
    expect(existsSync(dbPath)).toBe(true);
    expect(await almanac('migrate')).toEqual(['already up to date']);
  });

  it('says which database it opened, and creates one only for commands that add to it', async () => {
    for (const argv of [['user', 'list'], ['app-password', 'list', 'admin'], ['app-password', 'add', 'admin'], ['user', 'set-role', 'admin', 'editor'], ['trash', 'purge', '--older-than', '30d'], ['backup', join(dir, 'copy.sqlite')]]) {
      await expect(almanac(...argv), argv.join(' ')).rejects.toThrow(new UsageError(`no database at ${dbPath}: set ALMANAC_DB to the database file, or run almanac where its data/ folder is`));
    }
    expect(readdirSync(dir)).toEqual([]);
    await almanac('user', 'add', 'alice');
    expect(notes).toEqual([`created a new database at ${dbPath}`]);
    await almanac('user', 'list');
    expect(notes).toEqual([`database ${dbPath}`]);
  });

  it('refuses to back up into a folder that does not exist', async () => {
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
    const db = openDatabase(dbPath);
    try {
      const aliceId = Number((await almanac('user', 'list'))[0]!.split('\t')[0]);
      const post = insertEvent(db);
      db.prepare('UPDATE posts SET author_id = ? WHERE id = ?').run(aliceId, post);

      await expect(almanac('user', 'remove', 'alice')).rejects.toThrow(UsageError);
      await expect(almanac('user', 'remove', 'alice', '--reassign', 'alice')).rejects.toThrow(UsageError);
      await expect(almanac('user', 'remove', 'alice', '--reassign', 'nobody')).rejects.toThrow(UsageError);
      expect(await almanac('user', 'list')).toHaveLength(2);

      expect(await almanac('user', 'remove', 'alice', '--reassign', 'bob')).toEqual(['user alice removed; records reassigned to bob']);
      const list = await almanac('user', 'list');
      expect(list.map((l) => l.split('\t')[1])).toEqual(['bob']);
      const bobId = Number(list[0]!.split('\t')[0]);
      expect(db.prepare('SELECT author_id FROM posts WHERE id = ?').get(post)).toEqual({ author_id: bobId });
      expect(db.prepare('SELECT count(*) AS n FROM app_passwords WHERE user_id = ?').get(aliceId)).toEqual({ n: 0 });
      await expect(almanac('user', 'remove', 'alice', '--reassign', 'bob')).rejects.toThrow(UsageError);
    } finally {
      db.close();
    }
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

  it('refuses a database newer than the code, and closes it', async () => {
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

describe('the almanac and server processes', () => {
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
});

describe('almanac CLI against a running server', () => {
  let s: TestServer;

  beforeAll(async () => {
    s = await TestServer.start();
    process.env.ALMANAC_DB = s.config.dbPath;
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
