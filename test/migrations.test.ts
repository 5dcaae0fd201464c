import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadMigrations as loadFrom, MigrationError, type Migration } from '../src/db/migrations.js';
import { openDatabase, type Db } from '../src/db/sqlite/connection.js';
import { migrate, sqliteMigrationsDir as migrationsDir } from '../src/db/sqlite/migrate.js';
import { projectRoot } from '../src/paths.js';

/** SQLite's own migrations (PRAGMA user_version, WAL, sqlite_schema): the sqlite project only (vitest.config.ts). */
const loadMigrations = (dir: string = migrationsDir): Migration[] => loadFrom(dir);

const TABLES = ['users', 'app_passwords', 'media', 'posts', 'events', 'venues', 'organizers', 'event_organizers', 'terms', 'event_terms'];

let dir: string;
let path: string;
const open: Db[] = [];

function db(): Db {
  const d = openDatabase(path);
  open.push(d);
  return d;
}

const userVersion = (d: Db) => d.pragma('user_version', { simple: true }) as number;
const tables = (d: Db) =>
  (d.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`).all() as { name: string }[]).map((r) => r.name);

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'almanac-migrations-'));
  path = join(dir, 'almanac.sqlite');
});
afterEach(() => {
  for (const d of open.splice(0)) if (d.open) d.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('migrating', () => {
  it('applies every migration to an empty database and leaves a sound schema', () => {
    const all = loadMigrations();
    expect(all.length).toBeGreaterThan(0);
    expect(all.length).toBe(readdirSync(migrationsDir).filter((f) => f.endsWith('.sql')).length);
    const d = db();
    expect(userVersion(d)).toBe(0);
    expect(migrate(d)).toEqual(all.map((m) => m.version));
    expect(all.map((m) => m.version)).toEqual(all.map((_, i) => i + 1));
    expect(userVersion(d)).toBe(all.length);
    expect(tables(d)).toEqual(expect.arrayContaining(TABLES));
    expect(d.pragma('integrity_check', { simple: true })).toBe('ok');
    expect(d.pragma('foreign_key_check')).toEqual([]);
  });

  it('opens with WAL, foreign keys on, FULL sync and a busy timeout', () => {
    const d = db();
    expect(d.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(d.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(d.pragma('synchronous', { simple: true })).toBe(2); // FULL
    expect(d.pragma('busy_timeout', { simple: true })).toBeGreaterThan(0);
  });

  it('creates the folder of the database file', () => {
    path = join(dir, 'nested', 'deeper', 'almanac.sqlite');
    migrate(db());
    expect(existsSync(path)).toBe(true);
  });

  it('is a no-op the second time, and rows survive', () => {
    const d = db();
    migrate(d);
    d.prepare(`INSERT INTO users (login, display_name, role, registered_utc) VALUES ('keeper', 'Keeper', 'editor', '2026-01-01 00:00:00')`).run();
    d.close();
    const again = db();
    expect(migrate(again)).toEqual([]);
    expect(userVersion(again)).toBe(loadMigrations().length);
    expect(again.prepare('SELECT login, role FROM users').all()).toEqual([{ login: 'keeper', role: 'editor' }]);
  });

  it('refuses a database newer than the code and changes nothing', () => {
    const d = db();
    migrate(d);
    const newer = loadMigrations().length + 1;
    d.pragma(`user_version = ${newer}`);
    d.prepare(`INSERT INTO users (login, display_name, role, registered_utc) VALUES ('keeper', 'Keeper', 'editor', '2026-01-01 00:00:00')`).run();
    const before = d.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all();
    expect(() => migrate(d)).toThrow(MigrationError);
    expect(() => migrate(d)).toThrow(/newer/);
    expect(userVersion(d)).toBe(newer);
    expect(d.prepare('SELECT type, name, sql FROM sqlite_schema ORDER BY name').all()).toEqual(before);
    expect(d.prepare('SELECT count(*) AS n FROM users').get()).toEqual({ n: 1 });
  });

  it('refuses a newer empty database without creating anything', () => {
    const d = db();
    d.pragma('user_version = 5');
    expect(() => migrate(d, [{ version: 1, name: 'one', sql: 'CREATE TABLE one (x INTEGER);' }])).toThrow(MigrationError);
    expect(tables(d)).toEqual([]);
    expect(userVersion(d)).toBe(5);
  });

  it('rolls back a migration that fails midway, keeping the last good version', () => {
    const migrations: Migration[] = [
      { version: 1, name: 'good', sql: 'CREATE TABLE good (id INTEGER PRIMARY KEY);' },
      { version: 2, name: 'bad', sql: 'CREATE TABLE half (id INTEGER PRIMARY KEY);\nINSERT INTO good (id) VALUES (1);\nCREATE TABLEX oops (id);' },
      { version: 3, name: 'later', sql: 'CREATE TABLE later (id INTEGER PRIMARY KEY);' },
    ];
    const d = db();
    expect(() => migrate(d, migrations)).toThrow();
    expect(userVersion(d)).toBe(1);
    expect(tables(d)).toEqual(['good']);
    expect(d.prepare('SELECT count(*) AS n FROM good').get()).toEqual({ n: 0 });
    expect(d.inTransaction).toBe(false);

    // Once the migration is fixed, migrating resumes from version 2.
    migrations[1] = { version: 2, name: 'bad', sql: 'CREATE TABLE half (id INTEGER PRIMARY KEY);' };
    expect(migrate(d, migrations)).toEqual([2, 3]);
    expect(tables(d)).toEqual(['good', 'half', 'later']);
    expect(userVersion(d)).toBe(3);
  });

  it('a failed first migration leaves an empty database at version 0', () => {
    const d = db();
    expect(() => migrate(d, [{ version: 1, name: 'bad', sql: 'CREATE TABLE a (x INTEGER); SELECT * FROM missing;' }])).toThrow();
    expect(userVersion(d)).toBe(0);
    expect(tables(d)).toEqual([]);
  });
});

/**
 * Another process (say the server starting while `almanac migrate` runs) that takes the write lock, applies `sql` and
 * sets user_version to `version`, then holds its transaction open for `holdMs` before committing. Resolves once it
 * holds the lock; `done` settles when it has committed and exited.
 */
async function otherProcessMigrating(file: string, sql: string, version: number, holdMs = 300): Promise<{ child: ChildProcess; done: Promise<unknown> }> {
  const script = `
    const Database = require('better-sqlite3');
    const [file, sql, version, holdMs] = process.argv.slice(1);
    const db = new Database(file, { timeout: 5000 });
    db.exec('BEGIN IMMEDIATE');
    db.exec(sql);
    db.pragma('user_version = ' + Number(version));
    process.stdout.write('locked\\n');
    setTimeout(() => { db.exec('COMMIT'); db.close(); }, Number(holdMs));`;
  const child = spawn(process.execPath, ['-e', script, file, sql, String(version), String(holdMs)], { cwd: projectRoot, stdio: ['ignore', 'pipe', 'inherit'] });
  const done = once(child, 'exit');
  await once(child.stdout!, 'data');
  return { child, done };
}

describe('two processes migrating at once', () => {
  it('the one that waited for the lock finds the migration applied and does not apply it again', async () => {
    const all = loadMigrations();
    const d = db(); // WAL: the other process's open transaction does not block reading user_version
    const other = await otherProcessMigrating(path, all[0]!.sql, 1);
    try {
      expect(migrate(d, all)).toEqual(all.slice(1).map((m) => m.version));
    } finally {
      await other.done;
    }
    expect(other.child.exitCode).toBe(0);
    expect(userVersion(d)).toBe(all.length);
    expect(tables(d)).toEqual(expect.arrayContaining(TABLES));
    expect(d.pragma('integrity_check', { simple: true })).toBe('ok');
  });

  it('with a later migration still pending, applies only that one', async () => {
    const migrations: Migration[] = [
      { version: 1, name: 'one', sql: 'CREATE TABLE one (id INTEGER PRIMARY KEY);' },
      { version: 2, name: 'two', sql: 'CREATE TABLE two (id INTEGER PRIMARY KEY);' },
    ];
    const d = db();
    const other = await otherProcessMigrating(path, migrations[0]!.sql, 1);
    try {
      expect(migrate(d, migrations)).toEqual([2]);
    } finally {
      await other.done;
    }
    expect(tables(d)).toEqual(['one', 'two']);
    expect(userVersion(d)).toBe(2);
  });
});

describe('loadMigrations', () => {
  const make = (files: Record<string, string>) => {
    const m = join(dir, 'migrations');
    rmSync(m, { recursive: true, force: true });
    mkdirSync(m);
    for (const [name, sql] of Object.entries(files)) writeFileSync(join(m, name), sql);
    return m;
  };

  it('reads numbered files in order, ignoring others', () => {
    const m = make({ '0002_second.sql': 'B', '0001_first.sql': 'A', 'README.md': 'x', '0003_third.sql.bak': 'y' });
    expect(loadMigrations(m)).toEqual([
      { version: 1, name: 'first', sql: 'A' },
      { version: 2, name: 'second', sql: 'B' },
    ]);
  });

  it('throws MigrationError on a gap in the numbering', () => {
    const m = make({ '0001_first.sql': 'A', '0003_third.sql': 'C' });
    expect(() => loadMigrations(m)).toThrow(MigrationError);
  });

  it('throws MigrationError on a duplicate number or a start other than 1', () => {
    expect(() => loadMigrations(make({ '0001_a.sql': 'A', '0001_b.sql': 'B' }))).toThrow(MigrationError);
    expect(() => loadMigrations(make({ '0002_a.sql': 'A' }))).toThrow(MigrationError);
    expect(() => loadMigrations(make({ '0000_a.sql': 'A', '0001_b.sql': 'B' }))).toThrow(MigrationError);
  });
});

describe('schema constraints', () => {
  let d: Db;
  const now = '2026-01-01 00:00:00';
  beforeEach(() => {
    d = db();
    migrate(d);
  });

  const term = (slug: string, lang = 'en', taxonomy = 'category', group = Math.floor(Math.random() * 1e9)) =>
    d.prepare('INSERT INTO terms (taxonomy, name, slug, lang, translation_group) VALUES (?, ?, ?, ?, ?)').run(taxonomy, slug, slug, lang, group);
  const post = (slug: string, opts: { type?: string; lang?: string; status?: string } = {}) =>
    Number(
      d.prepare(`INSERT INTO posts (type, status, slug, title, date_local, date_utc, modified_local, modified_utc, lang, translation_group)
                 VALUES (@type, @status, @slug, @slug, @now, @now, @now, @now, @lang, @group)`)
        .run({ type: opts.type ?? 'event', status: opts.status ?? 'publish', slug, now, lang: opts.lang ?? 'en', group: Math.floor(Math.random() * 1e9) }).lastInsertRowid,
    );

  it('keeps a term slug unique per taxonomy and language', () => {
    term('music');
    expect(() => term('music')).toThrow(/UNIQUE/);
    expect(() => term('music', 'fr')).not.toThrow();
    expect(() => term('music', 'en', 'tag')).not.toThrow();
    expect(d.prepare('SELECT count(*) AS n FROM terms WHERE slug = ?').get('music')).toEqual({ n: 3 });
  });

  it('keeps a post slug unique per type and language', () => {
    post('gala');
    expect(() => post('gala')).toThrow(/UNIQUE/);
    expect(() => post('gala', { lang: 'de' })).not.toThrow();
    expect(() => post('gala', { type: 'venue' })).not.toThrow();
  });

  it('rejects an unknown status, type, language or role', () => {
    expect(() => post('x', { status: 'published' })).toThrow(/CHECK/);
    expect(() => post('y', { type: 'page' })).toThrow(/CHECK/);
    expect(() => post('z', { lang: 'es' })).toThrow(/CHECK/);
    expect(() => d.prepare(`INSERT INTO users (login, display_name, role, registered_utc) VALUES ('u', 'U', 'superuser', ?)`).run(now)).toThrow(/CHECK/);
    expect(d.prepare('SELECT count(*) AS n FROM posts').get()).toEqual({ n: 0 });
  });

  it('cascades a deleted post to its event_terms, event row and organizer links', () => {
    const event = post('concert');
    const organizer = post('band', { type: 'organizer' });
    const t = Number(term('music').lastInsertRowid);
    d.prepare(`INSERT INTO events (post_id, start_local, end_local, start_utc, end_utc, timezone) VALUES (?, ?, ?, ?, ?, 'UTC+0')`).run(event, now, now, now, now);
    d.prepare('INSERT INTO event_terms (event_id, term_id) VALUES (?, ?)').run(event, t);
    d.prepare('INSERT INTO event_organizers (event_id, organizer_id, position) VALUES (?, ?, 0)').run(event, organizer);
    d.prepare('DELETE FROM posts WHERE id = ?').run(event);
    expect(d.prepare('SELECT count(*) AS n FROM event_terms').get()).toEqual({ n: 0 });
    expect(d.prepare('SELECT count(*) AS n FROM events').get()).toEqual({ n: 0 });
    expect(d.prepare('SELECT count(*) AS n FROM event_organizers').get()).toEqual({ n: 0 });
    expect(d.prepare('SELECT count(*) AS n FROM terms').get()).toEqual({ n: 1 });
  });

  it('enforces foreign keys: no event_terms row for a missing post', () => {
    const t = Number(term('music').lastInsertRowid);
    expect(() => d.prepare('INSERT INTO event_terms (event_id, term_id) VALUES (?, ?)').run(999, t)).toThrow(/FOREIGN KEY/);
  });
});
