import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Repositories } from '../src/db/engine.js';
import { FEW_LINKS } from '../src/db/listQueries.js';
import type { EventListQuery, LinkedListQuery } from '../src/db/records.js';
import { seed } from '../src/db/seed.js';
import { SqliteEngine } from '../src/db/sqlite/engine.js';
import { COUNT } from '../src/db/sqlite/terms.js';
import { protectedAccess } from '../src/domain/postRules.js';
import { NS, TestServer } from './helpers/server.js';

/**
 * Lists must cost the same at a million events as at ten thousand: each statement of a list reads a range of an
 * index, never every event. These checks read SQLite's plans for the list shapes the API serves (SQLite's own plan
 * format: the sqlite project only, vitest.config.ts).
 */
let dir: string;
let engine: SqliteEngine;
const read = <T>(work: (repos: Repositories) => Promise<T>): Promise<T> => engine.read(work);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'almanac-plans-'));
  engine = await SqliteEngine.open(join(dir, 'plans.sqlite'), { readThreads: 0 });
  await seed(engine, { events: 20_000 }); // plans are chosen by size: test a realistic one
  engine.database.exec('ANALYZE');
});
afterAll(async () => {
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
});

const window = [
  { column: 'start' as const, op: '>=' as const, value: '2026-11-22 00:00:00' },
  { column: 'end' as const, op: '<=' as const, value: '2028-11-23 23:59:59' },
];
const anonymous = protectedAccess(null, undefined);
/** A subscriber who sends a password: protected events it may not edit are opened by their password only. */
const subscriberWithPassword = protectedAccess({ id: 2, login: 'reader', role: 'subscriber' }, 'secret');
const query = (extra: Partial<EventListQuery> = {}): EventListQuery => ({
  lang: 'en', nowUtc: '2026-11-23 00:00:00', statuses: ['publish'], viewer: { kind: 'public' }, access: anonymous, bounds: window, limit: 10, offset: 0, ...extra,
});

/** A plan line that reads a whole table (or a whole index) of events. */
const fullScanOfEvents = (line: string) => /^SCAN (e|events)\b/.test(line);

describe('event list query plans', () => {
  const music = () => read(async ({ terms }) => terms.withDescendants([(await terms.findBySlugOrName('category', 'en', 'music'))!]));
  const shapes: [string, () => Promise<Partial<EventListQuery>>][] = [
    ['the default list', async () => ({})],
    ['a category filter', async () => ({ categoryIds: await music() })],
    ['a venue filter', async () => ({ venueIds: [await firstVenue()] })],
    ['a venue filter with a password', async () => ({ venueIds: [await firstVenue()], access: subscriberWithPassword })],
    ['a date window', async () => ({ bounds: [{ column: 'start', op: '>=', value: '2027-01-01 00:00:00' }, { column: 'end', op: '<=', value: '2027-01-31 23:59:59' }] })],
    ['an editor with every status', async () => ({ statuses: ['publish', 'future', 'draft', 'pending', 'private'], viewer: { kind: 'user', userId: 1, seeOthers: true } })],
    ['a search over the whole calendar', async () => ({ search: { include: ['zephyrine'], exclude: [] }, bounds: window.slice(0, 1) })],
    ['a category filter with a password', async () => ({ categoryIds: await music(), access: subscriberWithPassword })],
    ['events near a point', async () => ({ geo: { lat: 52.5, lng: 13.4, radiusKm: 40 }, access: subscriberWithPassword })],
  ];
  it.each(shapes)('%s reads an index range, never every event', async (_name, extra) => {
    const q = query(await extra());
    const plan = await read(({ posts }) => posts.explainEventList(q));
    expect(plan.length).toBeGreaterThan(0);
    expect(plan.filter(fullScanOfEvents)).toEqual([]);
    expect(plan.some((line) => /SEARCH e USING (COVERING )?INDEX events_(listing|by_venue)/.test(line))).toBe(true);
  });

  it.each([
    ['a search', { include: ['zephyrine'], exclude: [] }, anonymous],
    ['a search by a subscriber with a password', { include: ['zephyrine'], exclude: ['storm'] }, subscriberWithPassword],
  ] as const)('%s in a window reads the matches of its months from the dated index, then each event by id', async (_name, search, access) => {
    const plan = await read(({ posts }) => posts.explainEventList(query({ search: { include: [...search.include], exclude: [...search.exclude] }, access })));
    expect(plan.filter(fullScanOfEvents)).toEqual([]);
    expect(plan.filter((line) => /SCAN events_search VIRTUAL TABLE/.test(line))).toHaveLength(2);
    expect(plan.filter((line) => /^SEARCH e USING INTEGER PRIMARY KEY/.test(line))).toHaveLength(2);
    expect(plan.some((line) => /posts_search/.test(line))).toBe(false);
  });

  it('reads one venue\'s events off that venue\'s range of its index, not the window\'s events', async () => {
    const plan = await read(async ({ posts }) => posts.explainEventList(query({ venueIds: [await firstVenue()] })));
    // asked as a list of one (json_each, whose rows SQLite cannot count), the choice went by the statistics: on
    // 100,000 events and 20,200 venues it read the window's 29,000 events off the listing index (12 ms warm, by hand)
    expect(plan.join('\n')).not.toMatch(/json_each/);
    expect(plan.filter((line) => /^SEARCH e /.test(line))).toEqual([
      expect.stringMatching(/^SEARCH e USING (COVERING )?INDEX events_by_venue \(venue_id=\? AND start_local>\? AND start_local<\?\)/),
      expect.stringMatching(/^SEARCH e USING (COVERING )?INDEX events_by_venue \(venue_id=\? AND start_local>\? AND start_local<\?\)/),
    ]);
  });

  /** One id of a kind of record that can drive a list: an organizer, a tag, a category without subcategories. */
  const oneOf = async (kind: 'organizer' | 'tag' | 'category'): Promise<Partial<EventListQuery>> => {
    if (kind === 'organizer') return { organizerIds: [await firstOrganizer()] };
    const { id } = engine.database.prepare<[string], { id: number }>(`SELECT id FROM terms t WHERE taxonomy = ? AND lang = 'en'
      AND NOT EXISTS (SELECT 1 FROM terms c WHERE c.parent_id = t.id) ORDER BY event_count DESC LIMIT 1`).get(kind)!;
    return kind === 'tag' ? { tagIds: [id] } : { categoryIds: [id] };
  };
  it.each([
    ['organizer', 'event_organizers_by_organizer \\(organizer_id', anonymous],
    ['organizer', 'event_organizers_by_organizer \\(organizer_id', subscriberWithPassword],
    ['tag', 'event_terms_by_term \\(term_id', anonymous],
    ['category', 'event_terms_by_term \\(term_id', subscriberWithPassword],
  ] as const)('reads one %s\'s events off its links in the window, each event by id', async (kind, index, access) => {
    const plan = await read(async ({ posts }) => posts.explainEventList(query({ ...(await oneOf(kind)), access })));
    // checked event by event, SQLite read the window's events off the listing index: on 100,000 events 11 ms for page
    // and total whoever the organizer, one with no event in the window included (0.06 ms by its links), 15 ms for a tag
    const links = new RegExp(`^SEARCH l USING COVERING INDEX ${index}=\\? AND start_local>\\? AND start_local<\\?\\)`);
    expect(plan.filter((line) => /^SEARCH (e|l) /.test(line))).toEqual([
      expect.stringMatching(links), 'SEARCH e USING INTEGER PRIMARY KEY (rowid=?)',
      expect.stringMatching(links), 'SEARCH e USING INTEGER PRIMARY KEY (rowid=?)',
    ]);
    expect(plan.filter(fullScanOfEvents)).toEqual([]);
  });

  /** Two organizers, two venues, or the category music with its subcategories, and the links they are read from. */
  const several = async (kind: 'organizers' | 'venues' | 'categories'): Promise<{ extra: Partial<EventListQuery>; links: string }> => {
    if (kind === 'categories') return { extra: { categoryIds: await music() }, links: 'event_terms_by_term \\(term_id' };
    const type = kind === 'organizers' ? 'organizer' : 'venue';
    const ids = (await read(({ posts }) => posts.listLinked(linked({ type, limit: 2 })))).ids;
    return kind === 'organizers'
      ? { extra: { organizerIds: ids }, links: 'event_organizers_by_organizer \\(organizer_id' }
      : { extra: { venueIds: ids }, links: 'events_by_venue \\(venue_id' };
  };
  it.each(['organizers', 'venues', 'categories'] as const)('reads several %s\'s events through their links in the window when they have few', async (kind) => {
    const { extra, links } = await several(kind);
    const plan = await read(({ posts }) => posts.explainEventList(query(extra)));
    // a look along their ranges (at most FEW_LINKS links); then, fewer, page and total from each of their events by
    // id; more, the page off the listing index and the total checking each event against their links gathered once.
    // Checked event by event against the filter, page and total read the window's events and looked up their links
    // (two organizers without an event in the window: 31.6 ms on 100,000 events, 0.6 this way)
    const range = new RegExp(`^SEARCH l USING (COVERING )?INDEX ${links}=\\? AND start_local>\\? AND start_local<\\?\\)`);
    expect(plan.filter((line) => range.test(line)).length).toBeGreaterThanOrEqual(3);
    expect(plan.filter((line) => line === 'SEARCH e USING INTEGER PRIMARY KEY (rowid=?)')).toHaveLength(2);
    expect(plan.some((line) => /^SEARCH e USING (COVERING )?INDEX events_(listing|by_venue) /.test(line))).toBe(true);
    expect(plan.filter(fullScanOfEvents)).toEqual([]);
  });
  it.each(['organizers', 'venues', 'categories'] as const)('counts as many events of several %s as their pages hold, by their links or off the window', async (kind) => {
    const { extra } = await several(kind);
    for (const access of [anonymous, subscriberWithPassword]) {
      const q = query({ ...extra, access });
      const all = await read(({ posts }) => posts.listEvents({ ...q, limit: 100_000 }));
      expect((await read(({ posts }) => posts.listEvents(q))).total).toBe(all.ids.length);
      expect(all.ids.length).toBeGreaterThan(0);
      expect(await read(({ posts }) => posts.listEvents({ ...q, offset: all.ids.length + 5 }))).toEqual({ ids: [], total: all.ids.length });
      const middle = await read(({ posts }) => posts.listEvents({ ...q, offset: Math.floor(all.ids.length / 2), limit: 3 }));
      expect(middle.ids).toEqual(all.ids.slice(Math.floor(all.ids.length / 2), Math.floor(all.ids.length / 2) + 3));
    }
  });
  it('reads the window rather than the links when several records have many events in it', async () => {
    // the two branches of the count: here the category music and its subcategories have more than FEW_LINKS links in
    // the window, two organizers far fewer; each total above is exact either way
    const linksIn = (ids: number[], table: string, column: string) => engine.database.prepare<unknown[], { n: number }>(
      `SELECT COUNT(*) AS n FROM ${table} WHERE ${column} IN (SELECT value FROM json_each(?)) AND start_local >= ? AND start_local <= ?`,
    ).get(JSON.stringify(ids), window[0]!.value, window[1]!.value)!.n;
    expect(linksIn(await music(), 'event_terms', 'term_id')).toBeGreaterThan(FEW_LINKS);
    expect(linksIn((await several('organizers')).extra.organizerIds!, 'event_organizers', 'organizer_id')).toBeLessThan(FEW_LINKS);
  });

  it('answers a page and its total in two statements whatever the page size', async () => {
    const small = await read(({ posts }) => posts.explainEventList(query({ limit: 1 })));
    const large = await read(({ posts }) => posts.explainEventList(query({ limit: 50 })));
    expect(large).toEqual(small);
  });
});

const linked = (extra: Partial<LinkedListQuery>): LinkedListQuery => ({
  type: 'venue', lang: 'en', nowUtc: '2026-11-23 00:00:00', nowLocal: '2026-11-23 00:00:00', statuses: ['publish'],
  viewer: { kind: 'public' }, eventViewer: { kind: 'public' }, access: anonymous, limit: 10, offset: 0, ...extra,
});
const firstVenue = async () => (await read(({ posts }) => posts.listLinked(linked({ limit: 1 })))).ids[0]!;
const firstOrganizer = async () => (await read(({ posts }) => posts.listLinked(linked({ type: 'organizer', limit: 1 })))).ids[0]!;

describe('venue and organizer list query plans', () => {
  it.each([
    ['venues with upcoming events', linked({ onlyWithUpcoming: true })],
    ['venues with upcoming events, for a subscriber with a password', linked({ onlyWithUpcoming: true, access: subscriberWithPassword })],
    ['organizers with events', linked({ type: 'organizer', hasEvents: true })],
    ['organizers with events, for a subscriber with a password', linked({ type: 'organizer', hasEvents: true, access: subscriberWithPassword })],
    ['a venue search by a subscriber with a password', linked({ words: ['berlin'], access: subscriberWithPassword })],
  ] as const)('%s read a range of their own type and never scan every event', async (_name, q) => {
    const plan = await read(({ posts }) => posts.explainLinkedList(q));
    expect(plan.filter(fullScanOfEvents)).toEqual([]);
    // venue or organizer posts are read as a range of one type (never every post)
    expect(plan.filter((line) => /^(SEARCH|SCAN) p\b/.test(line)).every((line) => /^SEARCH p USING .*\(type=\?/.test(line))).toBe(true);
  });
});

describe('lookups under WordPress\'s collation', () => {
  it('find duplicate venues and organizers, and terms by name, through the collation-key indexes', async () => {
    expect(await read(({ posts }) => posts.explainSameName())).toEqual([expect.stringMatching(/^SEARCH posts USING INDEX posts_by_title_key \(type=\? AND lang=\? AND title_key=\?\)/)]);
    const [bySlug, byName] = await read(({ terms }) => terms.explainNameLookups());
    expect(bySlug).toMatch(/USING (COVERING )?INDEX terms_slug/);
    expect(byName).toMatch(/USING (COVERING )?INDEX terms_by_name_key \(taxonomy=\? AND lang=\? AND name_key=\?\)/);
  });
});

describe('term counts', () => {
  it('leave out a term\'s scheduled events through its own scheduled links, not every scheduled event of the calendar', () => {
    const plan = engine.database.prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN SELECT t.id, ${COUNT} AS count FROM terms t WHERE t.taxonomy = 'tag'`)
      .all({ now: '2026-11-23 00:00:00' }).map((r) => r.detail);
    // one range per term (migration 0019): from the scheduled events, each term read all of them (30 s for a tag
    // cloud of 20,000 tags with 2,000 scheduled events)
    expect(plan).toContainEqual(expect.stringMatching(/^SEARCH et USING COVERING INDEX event_terms_scheduled \(term_id=\? AND scheduled_utc>\?\)/));
    expect(plan.join('\n')).not.toMatch(/events_scheduled|SCAN e\b/);
  });
});

describe('the trigram indexes', () => {
  it('are merged into one segment each after a bulk load, so that a search probes each key once', async () => {
    // the seed's 400 short writes flushed a segment each, which FTS5 merges only four of a level at a time
    for (const index of ['posts_search', 'events_search']) {
      expect(engine.database.prepare(`SELECT COUNT(DISTINCT segid) FROM ${index}_idx`).pluck().get(), index).toBe(1);
    }
    // what is written after it adds segments of its own, and searches find it
    const before = await read(({ posts }) => posts.listEvents(query({ search: { include: ['zephyrine'], exclude: [] } })));
    await engine.write(async ({ posts }) => {
      const [id] = before.ids;
      const { id: _id, translationGroup: _group, ...record } = (await posts.findOfType('event', id!))!;
      expect(await posts.create({ ...record, slug: `${record.slug}-again`, title: `${record.title} again`, translationOf: null })).not.toBeNull();
    });
    expect(engine.database.prepare('SELECT COUNT(DISTINCT segid) FROM events_search_idx').pluck().get()).toBe(2);
    expect((await read(({ posts }) => posts.listEvents(query({ search: { include: ['zephyrine'], exclude: [] } })))).total).toBe(before.total + 1);
  });

  it('are merged again once nothing has been written for a while, and searches find every record', async () => {
    const s = await TestServer.start();
    try {
      const segments = async () => Promise.all(['posts_search', 'events_search'].map(async (index) =>
        (await s.sql<{ n: number }>(`SELECT COUNT(DISTINCT segid) AS n FROM ${index}_idx`))[0]!.n));
      // one at a time, each write a batch of its own: each flushes a segment into each index
      for (let i = 1; i <= 7; i++) {
        const made = await s.raw('POST', `${NS}/events`, { as: s.admin, json: { title: `Quillwort recital ${i}`, start_date: `2031-04-0${i} 19:00`, end_date: `2031-04-0${i} 21:00` } });
        expect(made.status).toBe(201);
      }
      const written = await segments();
      expect(Math.min(...written)).toBeGreaterThanOrEqual(4); // FTS5 merges as it writes, in steps as small as the writes
      let merged = written;
      for (const start = Date.now(); Date.now() - start < 15_000 && merged.some((n, i) => n >= written[i]!); ) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        merged = await segments();
      }
      expect(Math.max(...merged)).toBeLessThanOrEqual(2); // one per level
      const found = await s.raw('GET', `${NS}/events?search=quillwort&start_date=2031-01-01&end_date=2031-12-31&per_page=50`);
      expect(found.body.events.map((e: { title: string }) => e.title).sort()).toEqual([1, 2, 3, 4, 5, 6, 7].map((i) => `Quillwort recital ${i}`));
    } finally {
      await s.close();
    }
  });
});
