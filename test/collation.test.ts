import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations } from '../src/db/migrations.js';
import { openDatabase } from '../src/db/sqlite/connection.js';
import { migrate, sqliteMigrationsDir } from '../src/db/sqlite/migrate.js';
import { NS, TestServer, type Credentials } from './helpers/server.js';

/**
 * Every comparison the plugin makes in SQL runs under MySQL's utf8mb4_unicode_520_ci, WordPress's collation: case and
 * accents ignored, `ß` = `ss`, `İ` = `i` but `ı` ≠ `i`, `й` ≠ `и`, trailing spaces ignored. Almanac compares the same way.
 */
let s: TestServer;
beforeAll(async () => {
  s = await TestServer.start();
});
afterAll(() => s.close());

const post = async (path: string, json: Record<string, unknown>, as: Credentials = s.admin) => {
  const r = await s.raw('POST', `${NS}${path}`, { as, json });
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  return r.body;
};
const get = (path: string) => s.raw('GET', `${NS}${path}`, { as: s.admin });
const event = (title: string, fields: Record<string, unknown>) => post('/events', { title, start_date: '2033-02-01 10:00', end_date: '2033-02-01 12:00', ...fields });

describe('duplicate venues and organizers', () => {
  it('finds the same venue whatever the case, accents, ß or trailing spaces of its name, in several scripts', async () => {
    const same: [string, string[]][] = [
      ['Café Zürich', ['cafe zurich', 'CAFÉ ZÜRICH  ', 'Cafe\u0301 Zu\u0308rich']],
      ['Straße der Musik', ['STRASSE DER MUSIK', 'strasse der musik']],
      ['İzmir Sahnesi', ['izmir sahnesi']],
      ['Łódź Ølhall Æther', ['lodz olhall aether']],
      ['Концертный зал Йошкар', ['КОНЦЕРТНЫЙ ЗАЛ ЙОШКАР']],
      ['Θέατρο Σοφός', ['ΘΕΑΤΡΟ ΣΟΦΟΣ', 'θεατρο σοφος']],
    ];
    for (const [name, variants] of same) {
      const first = await post('/venues', { venue: name });
      for (const variant of variants) expect((await post('/venues', { venue: variant })).id, `${name} = ${variant}`).toBe(first.id);
    }
    const different: [string, string][] = [['Isparta Salonu', 'ısparta salonu'], ['Йошкар клуб', 'Иошкар клуб'], ['Tab\thall', 'Tab hall']];
    for (const [name, other] of different) {
      const first = await post('/venues', { venue: name });
      expect((await post('/venues', { venue: other })).id, `${name} ≠ ${other}`).not.toBe(first.id);
    }
  });

  it('compares a sent description the same way, and finds inline organizers of events likewise', async () => {
    const hall = await post('/venues', { venue: 'Salle Pleyel', description: 'Grande salle été' });
    expect((await post('/venues', { venue: 'salle pleyel', description: 'GRANDE SALLE ETE' })).id).toBe(hall.id);
    expect((await post('/venues', { venue: 'salle pleyel', description: 'Une autre salle' })).id).not.toBe(hall.id);
    const first = await event('Œuvre night', { organizer: [{ organizer: 'Œuvres Françaises' }], venue: { venue: 'Théâtre Lumière' } });
    const second = await event('Oeuvre night again', { organizer: [{ organizer: 'oeuvres francaises' }], venue: { venue: 'THEATRE LUMIERE' } });
    expect(second.organizer[0].id).toBe(first.organizer[0].id);
    expect(second.venue.id).toBe(first.venue.id);
  });
});

describe('terms named by name or slug', () => {
  it('assigns an existing category named in another case or without accents, and one named by its slug in any case', async () => {
    const summer = await post('/categories', { name: 'Été Musical', slug: 'summer-series' });
    const e = await event('Named terms', { categories: ['ete musical', 'SUMMER-SERIES'], tags: ['Straße'] });
    expect(e.categories.map((c: { id: number }) => c.id)).toEqual([summer.id]);
    const tagged = await event('Named tags', { tags: ['STRASSE', 'strasse'] });
    expect(tagged.tags.map((t: { id: number }) => t.id)).toEqual(e.tags.map((t: { id: number }) => t.id));
    // a list filter and a term list find it the same ways
    const ids = async (query: string) => ((await get(`/events?${query}`)).body.events as { id: number }[]).map((x) => x.id);
    expect(await ids('start_date=2033-02-01&end_date=2033-02-01&categories=SUMMER-SERIES')).toEqual([e.id]);
    expect(await ids('start_date=2033-02-01&end_date=2033-02-01&categories=ete%20musical')).toEqual([e.id]);
    const listed = (query: string) => get(`/categories?hide_empty=0&${query}`).then((r) => (r.body.categories as { id: number }[]).map((c) => c.id));
    expect(await listed('slug=Summer-Series')).toEqual([summer.id]);
    expect(await listed('include=SUMMER-SERIES')).toEqual([summer.id]);
    expect(await listed('search=ETE%20MUS')).toEqual([summer.id]);
  });
});

describe('search and slugs', () => {
  it('searches as LIKE compares: accents and letter variants folded, ß only as ß', async () => {
    const hall = await post('/venues', { venue: 'Øresund Łódź Hall' });
    const e = await event('Straße am Øresund', { description: 'Fête à Łódź' });
    const found = async (words: string) => ((await get(`/events?start_date=2033-02-01&end_date=2033-02-01&search=${encodeURIComponent(words)}`)).body.events as { id: number }[]).map((x) => x.id);
    expect(await found('oresund')).toEqual([e.id]);
    expect(await found('FETE LODZ')).toEqual([e.id]);
    expect(await found('STRAẞE')).toEqual([e.id]);
    expect(await found('strasse')).toEqual([]); // 'Straße' LIKE '%strasse%' is false in MySQL
    const venues = ((await get(`/venues?search=oresund%20lodz`)).body.venues as { id: number }[]).map((v) => v.id);
    expect(venues).toEqual([hall.id]);
  });

  it('reads an event by a slug in another script, sent as text or as the percent-encoded slug', async () => {
    const e = await event('Музыка ночью', {});
    expect(e.slug).toBe('%d0%bc%d1%83%d0%b7%d1%8b%d0%ba%d0%b0-%d0%bd%d0%be%d1%87%d1%8c%d1%8e');
    for (const sent of [encodeURIComponent('музыка-ночью'), encodeURIComponent(e.slug), e.slug.toUpperCase().replace(/%/g, '%25')]) {
      const r = await get(`/events/by-slug/${sent}`);
      expect([r.status, r.body.id], sent).toEqual([200, e.id]);
    }
    expect((await s.raw('GET', `${NS}/events/by-slug/${encodeURIComponent('Музыка-ночью')}`)).body.code).toBe('rest_invalid_param'); // as WordPress: no mb case folding of the octets
  });
});

/**
 * SQLite's own migration on a file of its own, whichever engine is under test: it runs in the sqlite project only.
 * PostgreSQL's migration 0010 computes the same keys in a step in TypeScript, checked by test/postgresFold.test.ts
 * ("migration 0010 on PostgreSQL").
 */
describe.runIf(TestServer.engine === 'sqlite')('the migration of existing names', () => {
  it('gives venues, organizers and terms stored before it their keys', () => {
    const dir = mkdtempSync(join(tmpdir(), 'almanac-collation-'));
    try {
      const db = openDatabase(join(dir, 'old.sqlite'));
      const all = loadMigrations(sqliteMigrationsDir);
      const before = all.findIndex((m) => m.name === 'collation_keys');
      migrate(db, all.slice(0, before));
      const now = '2026-01-01 00:00:00';
      db.prepare(`INSERT INTO posts (type, status, slug, title, date_local, date_utc, modified_local, modified_utc, lang, translation_group)
                  VALUES ('venue', 'publish', 'cafe', 'Café Zürich', @now, @now, @now, @now, 'en', 1)`).run({ now });
      db.prepare(`INSERT INTO terms (taxonomy, name, slug, lang, translation_group) VALUES ('category', 'Straße', 'strasse', 'en', 1)`).run();
      migrate(db, all);
      expect(db.prepare(`SELECT title_key FROM posts`).get()).toEqual({ title_key: 'cafe zurich' });
      expect(db.prepare(`SELECT name_key FROM terms`).get()).toEqual({ name_key: 'strasse' });
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

