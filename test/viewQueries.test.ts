import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostType } from '../src/db/records.js';
import { storageFault } from '../src/db/faults.js';
import { openReadOnly } from '../src/db/sqlite/connection.js';
import { SqlitePosts, TurnReads } from '../src/db/sqlite/posts.js';
import type { Lang } from '../src/domain/context.js';
import { NS, TestServer } from './helpers/server.js';

/**
 * The view of a page of posts reads what its records need (linked venues and organizers, their translations, terms,
 * images) a kind at a time, never a record at a time: on PostgreSQL each statement is a round trip. Counted here are
 * the statements the server runs while it answers (SQLite: executions of prepared statements; PostgreSQL: queries
 * sent), with the response cache off so that every answer is computed.
 */

let s: TestServer;
let counting = false;
let statements = 0;
/** SQLite statements prepared while counting: once per connection each, never per request. */
let prepared = 0;
const restore: (() => void)[] = [];

/** Wraps a method of a prototype so each call made while `counting` is counted. */
function countCalls(prototype: Record<string, unknown>, names: string[], count = () => statements++): void {
  for (const name of names) {
    const original = prototype[name] as (...args: unknown[]) => unknown;
    prototype[name] = function (this: unknown, ...args: unknown[]) {
      if (counting) count();
      return original.apply(this, args);
    };
    restore.push(() => (prototype[name] = original));
  }
}

async function statementsOf(path: string, json?: Record<string, unknown>): Promise<{ count: number; prepared: number; body: any }> {
  statements = 0;
  prepared = 0;
  counting = true;
  try {
    const r = json ? await s.raw('POST', `${NS}${path}`, { as: s.admin, json }) : await s.raw('GET', `${NS}${path}`);
    expect(r.status, r.text).toBe(json ? 201 : 200);
    return { count: statements, prepared, body: r.body };
  } finally {
    counting = false;
  }
}

beforeAll(async () => {
  s = await TestServer.start({ cacheBytes: 0 });
  const create = async (path: string, json: Record<string, unknown>) => {
    const r = await s.raw('POST', `${NS}${path}`, { as: s.admin, json });
    expect(r.status, r.text).toBe(201);
    return r.body as { id: number };
  };
  const french = await create('/categories?xlate_language=fr', { name: 'Concerts' });
  const category = await create('/categories', { name: 'Concerts', translation_of: french.id });
  for (let i = 1; i <= 6; i++) {
    const venue = await create('/venues', { venue: `Hall ${i}`, image: `https://cdn.example.test/venue-${i}.png` });
    await create('/venues?xlate_language=fr', { venue: `Salle ${i}`, translation_of: venue.id });
    const organizers = [];
    for (const n of [1, 2]) organizers.push((await create('/organizers', { organizer: `Band ${i}.${n}`, image: `https://cdn.example.test/band-${i}-${n}.png` })).id);
    await create('/events', {
      title: `Night ${i}`, start_date: `2031-03-0${i} 20:00:00`, end_date: `2031-03-0${i} 23:00:00`, venue: venue.id, organizer: organizers,
      categories: [category.id], tags: [`tag ${i}`], image: `https://cdn.example.test/night-${i}.png`,
    });
  }
  countCalls(Object.getPrototypeOf(new Database(':memory:').prepare('SELECT 1')) as Record<string, unknown>, ['all', 'get', 'run', 'iterate']);
  countCalls(pg.Client.prototype as unknown as Record<string, unknown>, ['query']);
  countCalls(Database.prototype as unknown as Record<string, unknown>, ['prepare'], () => prepared++);
});

afterAll(async () => {
  for (const undo of restore.splice(0)) undo();
  await s?.close();
});

describe('the view of a page of posts', () => {
  it('runs as many statements for six events with their venues, organizers, terms, images and translations as for one', async () => {
    const window = 'start_date=2031-03-01&end_date=2031-03-31';
    const one = await statementsOf(`/events?${window}&per_page=1`);
    const six = await statementsOf(`/events?${window}&per_page=6`);
    expect(one.body.events).toHaveLength(1);
    expect(six.body.events).toHaveLength(6);
    for (const event of six.body.events) {
      expect(event.image).toMatchObject({ extension: 'png' });
      expect(event.venue.image).toMatchObject({ extension: 'png' });
      expect(event.organizer.map((o: any) => o.image.extension)).toEqual(['png', 'png']);
      expect(event.venue.translations).toHaveProperty('fr');
    }
    expect(one.count).toBeGreaterThan(0);
    expect(six.count).toBe(one.count);
  });

  it('reads the translations that stand in for linked records and terms in the same statements', async () => {
    const [first] = (await statementsOf('/events?start_date=2031-03-01&end_date=2031-03-31')).body.events;
    const english = await statementsOf(`/events/${first.id}`);
    const french = await statementsOf(`/events/${first.id}?xlate_language=fr`);
    expect(english.body.venue.venue).toMatch(/^Hall /);
    expect(french.body.venue.venue).toMatch(/^Salle /);
    expect(french.body.categories[0].id).not.toBe(english.body.categories[0].id);
    expect(french.count).toBe(english.count);
  });
});

describe('a GET of one record', () => {
  it('reads the record with what its view reads in one statement on PostgreSQL, after the slug\'s lookup by slug', async () => {
    const [event] = (await statementsOf('/events?start_date=2031-03-01&end_date=2031-03-31')).body.events;
    const venue = event.venue;
    const organizer = event.organizer[0];
    const byId = [await statementsOf(`/events/${event.id}`), await statementsOf(`/venues/${venue.id}`), await statementsOf(`/organizers/${organizer.id}`)];
    const bySlug = [await statementsOf(`/events/by-slug/${event.slug}`), await statementsOf(`/venues/by-slug/${venue.slug}`), await statementsOf(`/organizers/by-slug/${organizer.slug}`)];
    expect(byId.map((r) => r.body.id)).toEqual([event.id, venue.id, organizer.id]);
    expect(bySlug.map((r) => r.body.id)).toEqual([event.id, venue.id, organizer.id]);
    expect(byId[0]!.body.venue.venue).toBe(venue.venue);
    if (TestServer.engine !== 'postgres') return; // SQLite's statements cost no round trip: it reads each kind apart
    expect(byId.map((r) => r.count)).toEqual([1, 1, 1]);
    expect(bySlug.map((r) => r.count)).toEqual([2, 2, 2]);
  });
});

describe('records read by id or slug in one turn', () => {
  /** Events in English and French, venues and organizers asked in other languages than theirs, and two misses. */
  async function askedInOneTurn(): Promise<[PostType, number, Lang][]> {
    const events = (await statementsOf('/events?start_date=2031-03-01&end_date=2031-03-31')).body.events as any[];
    const french = (await statementsOf(`/events/${events[0].id}?xlate_language=fr`)).body;
    return [
      ...events.slice(0, 3).map((e): [PostType, number, Lang] => ['event', e.id, 'en']),
      ...events.slice(3).map((e): [PostType, number, Lang] => ['event', e.id, 'fr']),
      ['venue', events[0].venue.id, 'fr'], ['venue', french.venue.id, 'en'], ['venue', events[1].venue.id, 'de'],
      ['organizer', events[1].organizer[0].id, 'de'], ['organizer', events[2].organizer[1].id, 'en'],
      ['event', events[0].venue.id, 'en'], // not an event: no record
      ['event', 999_999_999, 'fr'],
    ];
  }

  it('are each read as alone, by statements that do not grow with their number', async () => {
    const asked = await askedInOneTurn();
    const alone = [];
    for (const [type, id, lang] of asked) alone.push(await s.engine.read((repos) => repos.posts.findWithLinks(type, id, lang)));
    expect(alone.filter((found) => found !== null)).toHaveLength(asked.length - 2);
    expect(alone.filter((found) => found && found.links.venues.size > 1 && found.links.terms.size > 1)).not.toHaveLength(0);
    statements = 0;
    counting = true;
    let together;
    try {
      together = await s.engine.read((repos) => Promise.all(asked.map(([type, id, lang]) => repos.posts.findWithLinks(type, id, lang))));
    } finally {
      counting = false;
    }
    expect(together).toEqual(alone);
    // PostgreSQL: one statement per type. SQLite: the records of each type, then each language's links (venues,
    // organizers, translation members, images, terms), in a transaction of their own inside the read's
    const types = new Set(asked.map(([type]) => type)).size;
    const languages = new Set(asked.map(([, , lang]) => lang)).size;
    expect(statements).toBeLessThanOrEqual(TestServer.engine === 'postgres' ? types : 2 + 2 + types + 5 * languages);
  });

  it('fail together, each call with the fault, when their connection cannot be opened (SQLite)', async () => {
    if (TestServer.engine === 'postgres') return; // its turn's reads go to the pool, which answers a fault per statement
    const db = openReadOnly(s.config.dbPath);
    try {
      const posts = new SqlitePosts(db);
      const turn = new TurnReads(() => {
        throw Object.assign(new Error('unable to open database file'), { code: 'SQLITE_CANTOPEN' });
      });
      const calls = [turn.read(posts, 'event', 1, 'en'), turn.read(posts, 'venue', 2, 'fr')];
      for (const call of calls) await expect(call).rejects.toMatchObject({ code: 'SQLITE_CANTOPEN' });
      // a storage fault: each request is answered 503 with Retry-After, not 500
      expect(storageFault(await calls[0]!.catch((e: unknown) => e))).toBe('io');
    } finally {
      db.close();
    }
  });

  it('answer concurrent GETs as they answer each alone', async () => {
    const paths = (await askedInOneTurn()).map(([type, id, lang]) => `/${type === 'event' ? 'events' : `${type}s`}/${id}?xlate_language=${lang}`);
    const answer = async (path: string) => {
      const r = await s.raw('GET', `${NS}${path}`);
      return { status: r.status, etag: r.headers.get('etag'), body: r.body };
    };
    const alone = [];
    for (const path of paths) alone.push(await answer(path));
    expect(alone.map((a) => a.status)).toEqual([...paths.slice(0, -2).map(() => 200), 400, 404]); // the id of a venue, no id
    for (let round = 0; round < 3; round++) expect(await Promise.all(paths.map(answer))).toEqual(alone);
  });
});

describe('what a new event names by id', () => {
  it('is read before the write once, then known while nothing changes it: its kind never changes', async () => {
    const made = async (path: string, json: Record<string, unknown>) => (await s.raw('POST', `${NS}${path}`, { as: s.admin, json })).body.id as number;
    const named = {
      categories: [await made('/categories', { name: 'Named by id' })],
      venue: await made('/venues', { venue: 'Hall named by id' }),
      organizer: [await made('/organizers', { organizer: 'First named by id' }), await made('/organizers', { organizer: 'Second named by id' })],
    };
    const body = (title: string) => ({ title, start_date: '2031-05-01 20:00:00', end_date: '2031-05-01 22:00:00', ...named });
    const first = await statementsOf('/events', body('Naming them first'));
    const again = await statementsOf('/events', body('Naming them again'));
    const ids = (r: { body: any }) => [r.body.categories.map((c: { id: number }) => c.id), r.body.venue.id, r.body.organizer.map((o: { id: number }) => o.id)];
    expect(ids(again)).toEqual(ids(first));
    expect(ids(again)).toEqual([named.categories, named.venue, named.organizer]);
    // one statement for the terms' taxonomies, one per post's type (a venue, two organizers), each a round trip on
    // PostgreSQL; on SQLite the read's BEGIN and COMMIT too
    const snapshot = TestServer.engine === 'postgres' ? 0 : 2;
    expect(first.count - again.count).toBe(4 + snapshot);
    // the venue changed: its type is read again, the rest stays known
    const renamed = await s.raw('POST', `${NS}/venues/${named.venue}`, { as: s.admin, json: { venue: 'Hall renamed' } });
    expect(renamed.status).toBe(200);
    const afterChange = await statementsOf('/events', body('Naming them after a change'));
    expect(afterChange.count - again.count).toBe(1 + snapshot);
    expect(afterChange.body.venue.venue).toBe('Hall renamed');
  });
});

describe('a new record', () => {
  it('finds its slug in as many statements beside thirty namesakes as beside one', async () => {
    const yoga = { title: 'Weekly yoga', start_date: '2031-04-01 08:00:00', end_date: '2031-04-01 09:00:00' };
    await statementsOf('/events', yoga);
    const second = await statementsOf('/events', yoga);
    for (let i = 3; i <= 30; i++) await statementsOf('/events', yoga);
    const last = await statementsOf('/events', yoga);
    expect([second.body.slug, last.body.slug]).toEqual(['weekly-yoga-2', 'weekly-yoga-31']);
    expect(last.count).toBe(second.count);
    // and prepares no statement (the view of a written record once prepared every statement of two repositories)
    expect(last.prepared).toBe(0);
  });
});
