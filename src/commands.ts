import { parseArgs } from 'node:util';
import { FixedOffsetZone } from 'luxon';
import { loadConfig, type Config } from './config.js';
import Database from 'better-sqlite3';
import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Engine, UsersRepository } from './db/engine.js';
import { loadMigrations } from './db/migrations.js';
import { describeDatabase, openEngine } from './db/open.js';
import type { User } from './db/records.js';
import { seed } from './db/seed.js';
import { SqliteEngine } from './db/sqlite/engine.js';
import { sqliteMigrationsDir } from './db/sqlite/migrate.js';
import { isLogin, isRole, LOGIN_RULE, ROLES, type Role } from './domain/capabilities.js';
import { parseDateInput, toWire } from './domain/dates.js';
import { addGeneratedPassword } from './domain/passwords.js';
import { webUrl, withoutTrailing } from './domain/text.js';
import { importSite, reportLines } from './import/importer.js';
import { Source, type Credentials } from './import/source.js';
import { NAMESPACE } from './http/spec.js';
import { makeFolder } from './paths.js';
import { progressBar } from './progress.js';
import { serve, unusable } from './server.js';

const USAGE = `usage: almanac <command>

  serve                                   start the server (same as npm start)
  migrate                                 bring the database to the newest schema
  user add <login> [--role R] [--email E] add a user (role: ${ROLES.join(', ')}; default subscriber)
  user list                               list users
  user set-role <login> <role>            change a user's role
  user remove <login> --reassign <login>  remove a user, giving their records to another
  app-password add <login> [--name N]     create an application password and print it (shown once)
  app-password list <login>               list a user's application passwords
  app-password revoke <login> <uuid>      revoke an application password
  seed --events N [--seed S]              fill the database with N realistic events (40 a day) and their venues,
                                          organizers, categories and tags
  backup <file>                           copy the database to <file>, consistently, while the server runs
  restore <file>                          replace the database with a backup (checked first), then migrate it
  trash purge --older-than <N>d|h|w       delete for good what has been in the trash longer than that
  import --from <REST base> [--auth login:application-password] [--since <time>] [--dry-run]
                                          copy a site running The Events Calendar (or another Almanac) through its
                                          ${NAMESPACE} API, keeping ids; safe to repeat

The database is ALMANAC_DATABASE_URL (PostgreSQL) when set, else the SQLite file ALMANAC_DB (default
./data/almanac.sqlite).`;

/** A command used wrongly: printed without a stack, exit status 2. */
export class UsageError extends Error {}

/** Where a command says what it did besides its output (stderr), so that `PW=$(almanac app-password add …)` keeps a clean stdout. */
export type Note = (line: string) => void;
const toStderr: Note = (line) => process.stderr.write(`almanac: ${line}\n`);

/**
 * Commands that may create the database when there is none: they add to it. The others only read or change what is
 * there, so run in the wrong folder they would otherwise create an empty database and report on that.
 */
const CREATES_DATABASE = new Set(['migrate', 'user add', 'seed', 'import', 'restore']);

/** 0001-01-01 00:00:00 UTC, the earliest time a stored date can say. */
const FIRST_YEAR_MS = new Date(0).setUTCFullYear(1, 0, 1); // Date.UTC reads years 0-99 as 1900-1999

/** The commands that run on the database itself (the others are handled before it is opened). */
const COMMANDS_ON_DATABASE = new Set(['user add', 'user list', 'user set-role', 'user remove', 'app-password add', 'app-password list', 'app-password revoke', 'seed', 'trash purge']);

/**
 * The configured database, opened for `command` and brought to the newest schema, and named in a note. A SQLite file
 * is created only for the commands that may create one.
 */
async function open(command: string, note: Note): Promise<Engine> {
  const config = loadConfig();
  // a database that cannot be reached or written is said in one line, as the server says it
  const opened = (which: Config) => openEngine(which).catch((err: unknown) => Promise.reject(unusable(which, err) ?? err));
  if (config.databaseUrl) {
    const engine = await opened(config);
    note(`database ${describeDatabase(config)}`);
    return engine;
  }
  const path = config.dbPath === ':memory:' ? config.dbPath : resolve(config.dbPath);
  const exists = path === ':memory:' || existsSync(path);
  if (!exists && !CREATES_DATABASE.has(command)) {
    throw new UsageError(`no database at ${path}: set ALMANAC_DB to the database file, or run almanac where its data/ folder is`);
  }
  const engine = await opened({ ...config, dbPath: path });
  note(exists ? `database ${path}` : `created a new database at ${path}`);
  return engine;
}

/** `backup` and `restore` copy SQLite files; a PostgreSQL database has its own tools for that. */
function sqliteOnly(command: string): void {
  const config = loadConfig();
  if (!config.databaseUrl) return;
  const tool = command === 'backup' ? 'pg_dump (e.g. pg_dump --format=custom --file=almanac.dump "$ALMANAC_DATABASE_URL")' : 'pg_restore (e.g. pg_restore --clean --dbname="$ALMANAC_DATABASE_URL" almanac.dump)';
  throw new UsageError(`${command} copies the SQLite file of ALMANAC_DB; the database here is PostgreSQL (${describeDatabase(config)}): use ${tool}`);
}

/** The folder a file is to be written in must exist: better-sqlite3 would throw a TypeError with a stack. */
function writableTarget(file: string, what: string): string {
  const folder = dirname(resolve(file));
  if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new UsageError(`cannot write ${what} ${file}: there is no folder ${folder}`);
  return file;
}

function role(value: string | undefined): Role {
  if (!value || !isRole(value)) throw new UsageError(`role must be one of ${ROLES.join(', ')}${value ? `, not "${value}"` : ''}`);
  return value;
}

/** The site's REST base (`https://example.org/wp-json/tribe/events/v1`, or a `?rest_route=/tribe/events/v1` one). */
function restBase(text: string | undefined): string {
  const wanted = `--from must be the REST base of the site, such as https://example.org/wp-json/${NAMESPACE}`;
  if (!text) throw new UsageError(wanted);
  const href = webUrl(text);
  const url = href === null ? null : new URL(href);
  const route = url ? (url.searchParams.get('rest_route') ?? url.pathname) : '';
  if (!withoutTrailing(route, '/').endsWith(`/${NAMESPACE}`)) throw new UsageError(`${wanted}, not "${text}"`);
  return href!;
}

function credentials(text: string | undefined): Credentials | null {
  if (text === undefined) return null;
  const m = /^([^:]+):(.+)$/s.exec(text);
  if (!m) throw new UsageError('--auth must be login:application-password (quote it: the password has spaces)');
  return { login: m[1]!, password: m[2]! };
}

/** `--since`: any date Almanac reads (`2026-11-01`, ISO 8601, `yesterday`, `-2 weeks`), in UTC unless it says otherwise. */
function sinceTime(text: string | undefined): string | null {
  if (text === undefined) return null;
  const parsed = parseDateInput(text, FixedOffsetZone.utcInstance);
  if (!parsed) throw new UsageError(`--since must be a time such as 2026-11-01, 2026-11-01T08:00:00+01:00 or "-2 days", not "${text}"`);
  return toWire(parsed.value.toUTC());
}

/**
 * The engine a dry run reads, which writes nothing: for SQLite a migrated copy in memory of the file (or an empty
 * database when there is none); PostgreSQL is only read (a dry run decides on reads and writes nothing), so its
 * schema must be current.
 */
async function dryRunEngine(note: Note): Promise<Engine> {
  const config = loadConfig();
  if (!config.databaseUrl) {
    if (!existsSync(config.dbPath)) note(`no database at ${resolve(config.dbPath)}: the dry run compares with an empty one`);
    return SqliteEngine.copyOf(config.dbPath);
  }
  return openEngine(config);
}

async function userNamed(users: UsersRepository, login: string | undefined): Promise<User> {
  if (!login) throw new UsageError('a login is required');
  const user = await users.findByLoginOrEmail(login);
  if (!user) throw new UsageError(`no user "${login}"`);
  return user;
}

export async function run(argv: string[], out: (line: string) => void = console.log, note: Note = toStderr): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      role: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' }, reassign: { type: 'string' },
      events: { type: 'string' }, seed: { type: 'string' }, 'older-than': { type: 'string' }, help: { type: 'boolean', short: 'h' },
      from: { type: 'string' }, auth: { type: 'string' }, since: { type: 'string' }, 'dry-run': { type: 'boolean' },
    },
  });
  const [command, sub, ...rest] = positionals;
  if (values.help || !command) {
    out(USAGE);
    return;
  }
  if (command === 'serve') {
    await serve(loadConfig());
    return;
  }
  if (command === 'migrate') {
    const engine = await open('migrate', note);
    await engine.close();
    out(engine.applied.length ? `migrated to version ${engine.applied.at(-1)}` : 'already up to date');
    return;
  }
  if (command === 'backup') {
    if (!sub) throw new UsageError('backup <file>: the file to write is required');
    sqliteOnly('backup');
    writableTarget(sub, 'the backup');
    const engine = (await open('backup', note)) as SqliteEngine;
    try {
      let totalPages: number;
      try {
        ({ totalPages } = await engine.database.backup(sub));
      } catch (err) {
        throw new UsageError(`cannot write the backup ${sub}: ${(err as Error).message}`);
      }
      out(`backed up ${loadConfig().dbPath} to ${sub} (${totalPages} pages)`);
    } finally {
      await engine.close();
    }
    return;
  }
  if (command === 'restore') {
    if (!sub) throw new UsageError('restore <file>: the backup to restore is required');
    sqliteOnly('restore');
    if (!existsSync(sub)) throw new UsageError(`no file ${sub}`);
    let source: Database.Database;
    try {
      source = new Database(sub, { readonly: true, fileMustExist: true });
      const check = source.pragma('integrity_check', { simple: true });
      if (check !== 'ok') throw new Error(String(check));
    } catch (err) {
      throw new UsageError(`${sub} is not a sound Almanac database (${(err as Error).message})`);
    }
    try {
      const version = source.pragma('user_version', { simple: true }) as number;
      if (version > loadMigrations(sqliteMigrationsDir).length) throw new UsageError(`${sub} is at schema version ${version}, newer than this Almanac`);
      const target = resolve(loadConfig().dbPath);
      makeFolder(dirname(target));
      // SQLite's backup API writes the target page by page under its locks, so readers see the old or the new data
      await source.backup(target);
    } finally {
      source.close();
    }
    await (await open('restore', note)).close();
    out(`restored ${loadConfig().dbPath} from ${sub}`);
    return;
  }
  if (command === 'import') {
    if (sub) throw new UsageError(`import takes no argument "${sub}"; the site is given with --from`);
    const from = restBase(values.from);
    const auth = credentials(values.auth);
    const since = sinceTime(values.since);
    const dryRun = values['dry-run'] ?? false;
    const config = loadConfig();
    const started = performance.now();
    const source = new Source(from, auth, { onRetry: (message) => process.stderr.write(`almanac: ${message}\n`) });
    // the source is checked before the database is opened: when it is unreachable, not the plugin's API or refuses
    // the credentials, nothing is written
    const info = await source.describe();
    const engine = dryRun ? await dryRunEngine(note) : await open('import', note);
    try {
      const run = () => importSite(engine, source, info, {
        since, dryRun, siteTimezone: config.siteTimezone, authenticated: auth !== null, progress: (label, total) => progressBar(label, total),
      });
      // a copy of the whole site is a bulk load, tidied up after (see Engine.bulk); what changed since a time is not
      const report = dryRun || since !== null ? await run() : await engine.bulk(run);
      for (const line of reportLines(report, { from, since, dryRun, seconds: (performance.now() - started) / 1000 })) out(line);
    } finally {
      await engine.close();
    }
    return;
  }
  const key = `${command} ${sub ?? ''}`.trim();
  if (!COMMANDS_ON_DATABASE.has(key)) throw new UsageError(`unknown command "${key}"\n\n${USAGE}`);
  const engine = await open(key, note);
  try {
    const inWrite = <T>(work: (users: UsersRepository) => Promise<T>) => engine.write((unit) => work(unit.users));
    switch (key) {
      case 'user add': {
        const login = rest[0];
        if (!login || !isLogin(login)) throw new UsageError(`a login of ${LOGIN_RULE} is required`);
        const email = values.email;
        if (email !== undefined && !/^[^\s@]+@[^\s@]+$/.test(email)) throw new UsageError(`"${email}" is not an e-mail address`);
        const user = await inWrite(async (users) => {
          if (await users.findByLoginOrEmail(login)) throw new UsageError(`a user "${login}" already exists`);
          if (email && (await users.findByLoginOrEmail(email))) throw new UsageError(`the e-mail address "${email}" is taken`);
          return users.create({ login, email: email ?? null, role: values.role ? role(values.role) : 'subscriber' });
        });
        out(`user ${user.login} (id ${user.id}, ${user.role}) added`);
        return;
      }
      case 'user list':
        for (const u of await engine.read((repos) => repos.users.list(), null)) out(`${u.id}\t${u.login}\t${u.role}\t${u.email ?? ''}`);
        return;
      case 'user set-role': {
        const wanted = role(rest[1]);
        const user = await inWrite(async (users) => {
          const user = await userNamed(users, rest[0]);
          await users.setRole(user.id, wanted);
          return user;
        });
        out(`user ${user.login} is now ${wanted}`);
        return;
      }
      case 'user remove': {
        const heirLogin = values.reassign;
        if (!heirLogin) throw new UsageError('--reassign <login> is required: their records need a new author');
        const [user, heir] = await inWrite(async (users) => {
          const user = await userNamed(users, rest[0]);
          const heir = await userNamed(users, heirLogin);
          if (heir.id === user.id) throw new UsageError('a user cannot inherit their own records');
          await users.remove(user.id, heir.id);
          return [user, heir];
        });
        out(`user ${user.login} removed; records reassigned to ${heir.login}`);
        return;
      }
      case 'app-password add': {
        out((await inWrite(async (users) => addGeneratedPassword(users, (await userNamed(users, rest[0])).id, values.name ?? 'almanac cli'))).display);
        return;
      }
      case 'app-password list': {
        const passwords = await engine.read(async (repos) => repos.users.passwordsOf((await userNamed(repos.users, rest[0])).id), null);
        for (const p of passwords) out(`${p.uuid}\t${p.name}\tcreated ${p.createdUtc}\tlast used ${p.lastUsedUtc ?? 'never'}`);
        return;
      }
      case 'app-password revoke': {
        const uuid = rest[1];
        if (!uuid) throw new UsageError('the uuid of the password is required (see app-password list)');
        await inWrite(async (users) => {
          const user = await userNamed(users, rest[0]);
          if (!(await users.revokePassword(user.id, uuid))) throw new UsageError(`${user.login} has no application password ${uuid}`);
        });
        out(`revoked ${uuid}`);
        return;
      }
      case 'seed': {
        const count = Number(values.events ?? 'x');
        if (!Number.isSafeInteger(count) || count < 1 || count > 50_000_000) throw new UsageError('--events N (a whole number from 1 to 50,000,000) is required');
        const seedValue = values.seed === undefined ? 42 : Number(values.seed);
        if (!Number.isSafeInteger(seedValue)) throw new UsageError('--seed must be a whole number');
        const bar = progressBar('seeding events', count);
        let seeded = 0;
        const progress = (done: number) => {
          bar.advance(done - seeded);
          seeded = done;
          if (done === count) bar.done();
        };
        const result = await seed(engine, { events: count, seed: seedValue, onProgress: progress });
        out(`seeded ${result.events} events, ${result.venues} venues, ${result.organizers} organizers, ${result.categories} categories, ${result.tags} tags in ${result.seconds.toFixed(1)} s (${Math.round(result.events / result.seconds)} events/s)`);
        return;
      }
      case 'trash purge': {
        const m = /^(\d+)([dhw])$/.exec(values['older-than'] ?? '');
        if (!m) throw new UsageError('--older-than N followed by d (days), h (hours) or w (weeks) is required, e.g. 30d');
        const hours = Number(m[1]) * { h: 1, d: 24, w: 168 }[m[2] as 'h' | 'd' | 'w'];
        // an age past the calendar's first year (a date cannot be written before it) purges what is older: nothing
        const cutoff = new Date(Math.max(Date.now() - hours * 3_600_000, FIRST_YEAR_MS)).toISOString().slice(0, 19).replace('T', ' ');
        const changes = await engine.write((unit) => unit.posts.purgeTrash(cutoff));
        out(`purged ${changes} record${changes === 1 ? '' : 's'} trashed before ${cutoff} UTC`);
        return;
      }
      default:
        throw new UsageError(`unknown command "${key}"\n\n${USAGE}`);
    }
  } finally {
    await engine.close();
  }
}
