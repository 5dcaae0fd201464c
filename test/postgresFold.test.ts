import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import type { Engine } from '../src/db/engine.js';
import { plainDefaults } from '../src/db/fields.js';
import { loadMigrations } from '../src/db/migrations.js';
import { PostgresEngine } from '../src/db/postgres/engine.js';
import { startMonth } from '../src/db/rows.js';
import { migratePostgres, postgresMigrationsDir } from '../src/db/postgres/migrate.js';
import type { EventListQuery, LinkedListQuery, NewRecord, PostType, ProtectedAccess } from '../src/db/records.js';
import { SqliteEngine } from '../src/db/sqlite/engine.js';
import { unlocks } from '../src/domain/postRules.js';
import { collationKey, foldForSearch } from '../src/domain/text.js';
import { testDatabase, type TestDatabase } from './helpers/engines.js';

/**
 * PostgreSQL compares text exactly as SQLite does. SQLite runs Almanac's own `foldForSearch`, `collationKey` and
 * `unlocks` as SQL functions; PostgreSQL has no function equal to the first two, so its repositories store what
 * `foldForSearch` and `collationKey` compute when they write a record (and migration 0010 computes it for records
 * already there), and it compares passwords with a SQL function of migration 0011. These checks write the same
 * records with characters where case folding, accent removal and MySQL's collation disagree, on both engines, and
 * expect every search and every lookup by name to find exactly what the TypeScript functions say, on both.
 */

/** Texts where lower-casing, Unicode decomposition and utf8mb4_unicode_520_ci part ways. */
const TRICKY = [
  'Straße', 'STRASSE', 'strasse', 'Øresund', 'oresund', 'Łódź', 'LODZ', 'İstanbul', 'ıstanbul', 'istanbul', 'Йошкар-Ола', 'Иошкар',
  'Cre\u0300me bru\u0302le\u0301e', 'Crème brûlée', 'CREME BRULEE', 'ﬁnance', 'finance', 'Æther', 'aether', 'Ǆemal', 'džemal', '½ price',
  'Café ', 'café', 'ΣΟΦΟΣ', 'σοφος', 'Đakovo', 'đakovo', 'Ħamrun', 'Ŀlívia', 'Zero\u200bwidth', 'FFestival', 'Ǳ', 'ǈ', 'Ĳssel', 'ĳssel',
];
/** Words searched for: whole texts, and pieces of them. */
const WORDS = [...new Set([...TRICKY, 'ß', 'ss', 'ø', 'o', 'ł', 'l', 'ı', 'i', 'İ', 'й', 'и', 'è', 'e', 'ﬁ', 'fi', 'æ', 'ae', 'σ', 'ς', 'đ', 'd', 'ħ', 'ŀ', 'ĳ', 'ij', '½', 'width'])];

const NOW = '2026-06-01 00:00:00';
const PUBLIC: ProtectedAccess = { anonymous: true, edits: { event: null, venue: null, organizer: null }, password: undefined };

const base = (type: PostType, title: string, slug: string, password = '') => ({
  type, authorId: 0, status: 'publish' as const, statusBeforeTrash: null, slug, title, content: '', excerpt: '', password,
  dateLocal: NOW, dateUtc: NOW, dateFloating: false, modifiedLocal: NOW, modifiedUtc: NOW, lang: 'en' as const, parentId: 0, imageId: 0,
  globalIdLineage: [], translationOf: null,
});
const venue = (i: number, title: string, city: string, password = ''): NewRecord<'venue'> => ({
  ...base('venue', title, `venue-${i}`, password), ...plainDefaults('venue'), type: 'venue', city,
});
const organizer = (i: number, title: string, email: string): NewRecord<'organizer'> => ({
  ...base('organizer', title, `organizer-${i}`), ...plainDefaults('organizer'), type: 'organizer', email,
});
const event = (i: number, title: string, content: string, password = ''): NewRecord<'event'> => ({
  ...base('event', title, `event-${i}`, password), ...plainDefaults('event'), content, type: 'event', startLocal: '2026-07-01 10:00:00', endLocal: '2026-07-01 12:00:00',
  startUtc: '2026-07-01 10:00:00', endUtc: '2026-07-01 12:00:00', timezone: 'UTC', allDay: false, costs: [], currencySymbol: '',
  currencyPosition: '', currencyCode: '', website: null, venueId: 0, organizerIds: [], termIds: [],
});

const linked = (type: 'venue' | 'organizer', words: string[], access: ProtectedAccess = PUBLIC): LinkedListQuery => ({
  type, lang: 'en', nowUtc: NOW, nowLocal: NOW, statuses: ['publish'], viewer: { kind: 'public' }, eventViewer: { kind: 'public' }, access, words, limit: 500, offset: 0,
});
const events = (words: string[], access: ProtectedAccess = PUBLIC): EventListQuery => ({
  lang: 'en', nowUtc: NOW, statuses: ['publish'], viewer: { kind: 'public' }, access, bounds: [], search: { include: words, exclude: [] }, limit: 500, offset: 0,
});

/** The searched fields of the i-th venue, organizer, event and tag of the fixture (see `fill`). */
const FIELDS = {
  venue: (i: number) => [`Hall ${i}`, TRICKY[i]!],
  organizer: (i: number) => [TRICKY[i]!, `o${i}@example.test`],
  event: (i: number) => [TRICKY[i]!, `about ${i}`],
  tag: (i: number) => [TRICKY[i]!, `tag-${i}`],
};
/** What search must find: the records (by index) with a field holding the word, both folded by `foldForSearch`. */
const holding = (fields: (i: number) => string[], word: string) =>
  TRICKY.flatMap((_, i) => (fields(i).some((f) => foldForSearch(f).includes(foldForSearch(word))) ? [i] : []));

interface Side {
  engine: Engine;
  venues: number[];
  organizers: number[];
  events: number[];
  terms: number[];
}

let dir: string;
let database: TestDatabase;
const sides = {} as Record<'sqlite' | 'postgres', Side>;

async function fill(engine: Engine): Promise<Side> {
  return engine.write(async (repos) => {
    const side: Side = { engine, venues: [], organizers: [], events: [], terms: [] };
    for (const [i, text] of TRICKY.entries()) {
      side.venues.push(await repos.posts.insert(venue(i, `Hall ${i}`, text)));
      side.organizers.push(await repos.posts.insert(organizer(i, text, `o${i}@example.test`)));
      side.events.push(await repos.posts.insert(event(i, text, `about ${i}`)));
      side.terms.push(await repos.terms.insert({ taxonomy: 'tag', name: text, slug: `tag-${i}`, description: '', parentId: 0, lang: 'en', translationOf: null }));
    }
    return side;
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'almanac-fold-'));
  database = await testDatabase(join(dir, 'unused.sqlite'));
  sides.sqlite = await fill(await SqliteEngine.open(join(dir, 'fold.sqlite'), { readThreads: 0 }));
  sides.postgres = await fill(await PostgresEngine.open(database.url!, { pool: 2 }));
});
afterAll(async () => {
  await sides.sqlite?.engine.close();
  await sides.postgres?.engine.close();
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

/** The indexes in `ids` of the ids found. */
const positions = (ids: number[], found: number[]) => found.map((id) => ids.indexOf(id)).sort((a, b) => a - b);

describe('search folds text on PostgreSQL exactly as foldForSearch (and SQLite) does', () => {
  it.each(WORDS)('venues by city, organizers by name and e-mail: %s', async (word) => {
    for (const side of Object.values(sides)) {
      const byCity = await side.engine.read((repos) => repos.posts.listLinked(linked('venue', [word])));
      expect(positions(side.venues, byCity.ids), `${side.engine.kind}: venues with "${word}"`).toEqual(holding(FIELDS.venue, word));
      const byName = await side.engine.read((repos) => repos.posts.listLinked(linked('organizer', [word])));
      expect(positions(side.organizers, byName.ids), `${side.engine.kind}: organizers with "${word}"`).toEqual(holding(FIELDS.organizer, word));
    }
  });

  it.each(WORDS)('events by title: %s', async (word) => {
    for (const side of Object.values(sides)) {
      const found = await side.engine.read((repos) => repos.posts.listEvents(events([word])));
      expect(positions(side.events, found.ids), `${side.engine.kind}: events with "${word}"`).toEqual(holding(FIELDS.event, word));
    }
  });

  it.each(WORDS)('terms by name: %s', async (word) => {
    for (const side of Object.values(sides)) {
      const found = await side.engine.read((repos) => repos.terms.list({
        taxonomy: 'tag', lang: 'en', search: word, hideEmpty: false, orderBy: 'id', descending: false, limit: 500, offset: 0,
      }));
      expect(positions(side.terms, found.items.map((t) => t.id)), `${side.engine.kind}: tags with "${word}"`).toEqual(holding(FIELDS.tag, word));
    }
  });
});

describe('names compare on PostgreSQL exactly as collationKey (and SQLite) compares them', () => {
  it.each(TRICKY)('duplicate organizers and terms named by name: %s', async (text) => {
    const equal = TRICKY.flatMap((t, i) => (collationKey(t) === collationKey(text) ? [i] : []));
    for (const side of Object.values(sides)) {
      const same = await side.engine.read((repos) => repos.posts.sameName('organizer', 'en', text));
      expect(positions(side.organizers, same), `${side.engine.kind}: organizers named "${text}"`).toEqual(equal);
      const term = await side.engine.read((repos) => repos.terms.findBySlugOrName('tag', 'en', text));
      // no text here is a slug of these terms (`tag-N`): the name key decides, and the oldest equal term is found
      expect(term === null ? null : side.terms.indexOf(term), `${side.engine.kind}: the tag "${text}"`).toBe(equal[0] ?? null);
    }
  });

  it('orders terms by name key on both engines alike', async () => {
    const orders = await Promise.all(Object.values(sides).map(async (side) => {
      const { items } = await side.engine.read((repos) => repos.terms.list({
        taxonomy: 'tag', lang: 'en', hideEmpty: false, orderBy: 'name', descending: false, limit: 500, offset: 0,
      }));
      return items.map((t) => side.terms.indexOf(t.id));
    }));
    expect(orders[1]).toEqual(orders[0]);
  });
});

describe('passwords compare on PostgreSQL exactly as postRules.unlocks compares them', () => {
  const PASSWORDS = ['Straße', 'STRASSE', 'é', 'e\u0301', 'Secret', 'secret', 'secret ', ' secret', '🔒 lock', 'İ', 'i̇', 'x'.repeat(300)];

  it('almanac_unlocks is unlocks, for every pair', async () => {
    const client = new pg.Client({ connectionString: database.url! });
    await client.connect();
    try {
      for (const password of ['', ...PASSWORDS]) {
        for (const given of PASSWORDS) {
          const { rows } = await client.query<{ open: boolean }>('SELECT almanac_unlocks($1, $2) AS open', [password, given]);
          expect(rows[0]!.open, `${JSON.stringify(password)} opened by ${JSON.stringify(given)}`).toBe(unlocks({ password }, given));
        }
      }
    } finally {
      await client.end();
    }
  });

  it('a protected event is searched through by a caller with its password, on both engines alike', async () => {
    const found: Record<string, number[]> = {};
    for (const [kind, side] of Object.entries(sides)) {
      const id = await side.engine.write((repos) => repos.posts.insert(event(1000, 'Vault night', 'zanzibarian treasure', 'Straße')));
      const search = async (password: string | undefined) =>
        (await side.engine.read((repos) => repos.posts.listEvents(events(['zanzibarian'], { ...PUBLIC, anonymous: false, password })))).ids.includes(id);
      found[kind] = [];
      for (const [i, password] of [undefined, 'Straße', 'STRASSE', 'strasse', 'Stra\u00dfe ', 'with\u0000nul'].entries()) if (await search(password)) found[kind]!.push(i);
    }
    expect(found.sqlite).toEqual([1]);
    expect(found.postgres).toEqual([1]);
  });
});

/** Runs `work` on a pool of a new, empty database of the test cluster (no migration run), dropped afterwards. */
async function inEmptyDatabase(label: string, options: pg.PoolConfig, work: (pool: pg.Pool) => Promise<void>): Promise<void> {
  const admin = new pg.Client({ connectionString: inject('postgresUrl') });
  await admin.connect();
  const name = `almanac_${label}_${process.pid}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(inject('postgresUrl'));
  url.pathname = `/${name}`;
  const pool = new pg.Pool({ connectionString: url.href, ...options });
  // dropping the database at the end may reach a connection the pool is still closing: PostgreSQL's farewell to it
  // is expected then, not a failure
  pool.on('error', () => undefined);
  try {
    await work(pool);
  } finally {
    await pool.end();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

describe('migration 0010 on PostgreSQL', () => {
  it('computes the keys and folded copies of records already there with the TypeScript functions', async () => {
    await inEmptyDatabase('backfill', { max: 2 }, async (pool) => {
      const migrations = loadMigrations(postgresMigrationsDir);
      await migratePostgres(pool, migrations.slice(0, 9));
      const post = `INSERT INTO posts (type, status, slug, title, content, excerpt, date_local, date_utc, modified_local, modified_utc, translation_group, search_text)
        VALUES ($1, 'publish', $2, $3, $4, '', '${NOW}', '${NOW}', '${NOW}', '${NOW}', $5, $6) RETURNING id`;
      for (const [i, text] of TRICKY.entries()) {
        const [v] = (await pool.query<{ id: string }>(post, ['venue', `v${i}`, `Hall ${i}`, '', i, ''])).rows;
        await pool.query('INSERT INTO venues (post_id, city) VALUES ($1, $2)', [v!.id, text]);
        const [e] = (await pool.query<{ id: string }>(post, ['event', `e${i}`, text, 'body', i, 'stale'])).rows;
        await pool.query(`INSERT INTO events (post_id, start_local, end_local, start_utc, end_utc, timezone) VALUES ($1, '${NOW}', '${NOW}', '${NOW}', '${NOW}', 'UTC')`, [e!.id]);
        await pool.query(`INSERT INTO terms (taxonomy, name, slug, translation_group) VALUES ('tag', $1, $2, $3)`, [text, `t${i}`, i]);
      }
      expect(await migratePostgres(pool, migrations)).toEqual(migrations.slice(9).map((m) => m.version));
      const venues = (await pool.query<{ title: string; title_key: string; search_fields: string[]; city: string }>(
        `SELECT p.title, p.title_key, p.search_fields, d.city FROM posts p JOIN venues d ON d.post_id = p.id ORDER BY p.id`)).rows;
      expect(venues.map((v) => [v.title_key, v.search_fields[0], v.search_fields[4]])).toEqual(TRICKY.map((t, i) => [collationKey(`Hall ${i}`), foldForSearch(`Hall ${i}`), foldForSearch(t)]));
      const texts = (await pool.query<{ search_text: string; title_key: string | null }>(`SELECT search_text, title_key FROM posts WHERE type = 'event' ORDER BY id`)).rows;
      expect(texts).toEqual(TRICKY.map((t) => ({ search_text: foldForSearch(`${t}\u001f\u001fbody`), title_key: null })));
      const terms = (await pool.query<{ name_key: string; search_name: string }>('SELECT name_key, search_name FROM terms ORDER BY id')).rows;
      expect(terms).toEqual(TRICKY.map((t) => ({ name_key: collationKey(t), search_name: foldForSearch(t) })));
      // migration 0018 files the events already there under the month they start in
      const months = (await pool.query<{ start_month: number }>(`SELECT start_month FROM posts WHERE type = 'event' ORDER BY id`)).rows;
      expect(months).toEqual(TRICKY.map(() => ({ start_month: startMonth(NOW) })));
    });
  });
});

describe('migrations on PostgreSQL', () => {
  it('run past the statement timeout of requests, which the connection then keeps again', async () => {
    await inEmptyDatabase('slow', { max: 1, statement_timeout: 100 }, async (pool) => {
      await expect(pool.query('SELECT pg_sleep(0.3)')).rejects.toThrow(/statement timeout/);
      expect(await migratePostgres(pool, [{ version: 1, name: 'slow', sql: 'SELECT pg_sleep(0.3)' }])).toEqual([1]);
      expect((await pool.query<{ statement_timeout: string }>('SHOW statement_timeout')).rows).toEqual([{ statement_timeout: '100ms' }]);
    });
  });
});

describe('duplicate venues and organizers on PostgreSQL', () => {
  it('are found through the index of title keys (explainSameName), once there are many', async () => {
    const client = new pg.Client({ connectionString: database.url! });
    await client.connect();
    try {
      // last in this file: the other checks count exactly the fixture's records
      await client.query(`INSERT INTO posts (type, status, slug, title, date_local, date_utc, modified_local, modified_utc, translation_group, title_key)
        SELECT 'venue', 'publish', 'bulk-' || g, 'Bulk ' || g, '${NOW}', '${NOW}', '${NOW}', '${NOW}', 1000000 + g, 'bulk ' || g FROM generate_series(1, 5000) g`);
      await client.query('ANALYZE posts');
    } finally {
      await client.end();
    }
    const plan = await sides.postgres.engine.read((repos) => repos.posts.explainSameName());
    expect(plan.join('\n')).toMatch(/Index (Only )?Scan using posts_by_title_key on posts/);
  });
});
