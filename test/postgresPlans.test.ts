import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPool, splitPool } from '../src/db/postgres/connection.js';
import { PostgresEngine } from '../src/db/postgres/engine.js';
import { SLUG_LOOKUP, VIEW_LINKS, WITH_LINKS, WITH_LINKS_EACH } from '../src/db/postgres/posts.js';
import { toWire } from '../src/domain/dates.js';
import { DateTime } from 'luxon';
import { named, query } from '../src/db/postgres/sql.js';
import { TERM_COUNT } from '../src/db/postgres/terms.js';
import { eventListSql, type ListSql } from '../src/db/listQueries.js';
import { POSTGRES_DIALECT } from '../src/db/postgres/posts.js';
import type { EventListQuery, LinkedListQuery, PostType } from '../src/db/records.js';
import type { Lang } from '../src/domain/context.js';
import type { ViewLinksQuery } from '../src/db/engine.js';
import { RARE_WORD, seed } from '../src/db/seed.js';
import { protectedAccess } from '../src/domain/postRules.js';
import { testDatabase, type TestDatabase } from './helpers/engines.js';

/**
 * How PostgreSQL plans Almanac's statements, on a calendar of a realistic size: reads by key enter their index by
 * every column they know, each statement of fixed text is planned once per connection, and list statements are
 * planned for their values on every call.
 */
let dir: string;
let database: TestDatabase;
let engine: PostgresEngine;
let admin: pg.Client;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'almanac-pgplans-'));
  database = await testDatabase(join(dir, 'unused.sqlite'));
  engine = await PostgresEngine.open(database.url!, { pool: 3 });
  await seed(engine, { events: 10_000 }); // analyzed by seed: plans chosen from real statistics
  admin = new pg.Client({ connectionString: database.url! });
  await admin.connect();
}, 120_000);
afterAll(async () => {
  await admin?.end();
  await engine?.close();
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

interface PlanNode { 'Relation Name'?: string; 'Index Name'?: string; 'Actual Rows'?: number; 'Actual Loops'?: number; 'Rows Removed by Filter'?: number; Plans?: PlanNode[] }

/** The buffers a statement touched, from EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) with its values. */
async function buffersOf(statement: string, values: unknown[]): Promise<{ plan: string; buffers: number }> {
  const [row] = (await admin.query<{ 'QUERY PLAN': [{ Plan: Record<string, unknown> }] }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${statement}`, values)).rows;
  const plan = row!['QUERY PLAN'][0]!.Plan;
  return { plan: JSON.stringify(plan), buffers: (plan['Shared Hit Blocks'] as number) + (plan['Shared Read Blocks'] as number) };
}

describe('reads by key on PostgreSQL', () => {
  it('find a slug by probing the unique index once per language, not by reading every event', async () => {
    const [{ slug }] = (await admin.query<{ slug: string }>(`SELECT slug FROM posts WHERE type = 'event' ORDER BY id DESC LIMIT 1`)).rows as [{ slug: string }];
    const { plan, buffers } = await buffersOf(SLUG_LOOKUP, ['event', slug]);
    expect(plan).toMatch(/"Index Name":"posts_slug"/);
    expect(plan).toMatch(/lang = ANY/);
    // three descents of the index; asked by (type, slug) alone it read every event's entry (87 pages here)
    expect(buffers).toBeLessThan(20);
  });
});

describe('a record read with its links on PostgreSQL', () => {
  interface Node { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; 'Index Cond'?: string; 'Actual Rows'?: number; 'Actual Loops'?: number; Plans?: Node[] }
  const scans = (node: Node): Node[] => [...(/Scan$/.test(node['Node Type']) && !/^(CTE|Function|Values) Scan$/.test(node['Node Type']) ? [node] : []), ...(node.Plans ?? []).flatMap(scans)];
  /**
   * The scans of a statement's generic plan (the one the pool of reads by key keeps) run on its values, with 5,000
   * images in the library: a site imported with its media library has thousands, and none of them is shown here.
   */
  async function genericScans(statement: string, values: unknown[]): Promise<{ plan: string; scans: Node[] }> {
    await admin.query('BEGIN');
    try {
      await admin.query(`INSERT INTO media (url, created_utc) SELECT 'https://images.example/' || g || '.jpg', '2026-01-01 00:00:00' FROM generate_series(1, 5000) g`);
      await admin.query('ANALYZE media');
      await admin.query('SET LOCAL plan_cache_mode = force_generic_plan');
      await admin.query(`PREPARE links_plan AS ${statement}`);
      // EXPLAIN EXECUTE takes no bound values: they are written as literals
      const literal = (v: unknown) => (Array.isArray(v) ? `'{${v.join(',')}}'` : typeof v === 'number' ? String(v) : `'${String(v).replace(/'/g, "''")}'`);
      const [row] = (await admin.query<{ 'QUERY PLAN': [{ Plan: Node }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE links_plan(${values.map(literal).join(', ')})`)).rows;
      const plan = row!['QUERY PLAN'][0]!.Plan;
      return { plan: JSON.stringify(plan), scans: scans(plan) };
    } finally {
      await admin.query('ROLLBACK');
      await admin.query('DEALLOCATE ALL'); // a prepared statement outlives its transaction
    }
  }
  /** The large tables read whole (venues and organizers are a few dozen rows here: a sequential scan is their best plan). */
  const wholeReads = (found: Node[]) => found.filter((n) => n['Node Type'] === 'Seq Scan' && !['venues', 'organizers'].includes(n['Relation Name']!)).map((n) => n['Relation Name']);
  /**
   * Each index scan of a table that grows with the calendar, with its rows over all its loops (the terms, venues and
   * organizers are a few dozen rows here, and their plans vary with their statistics).
   */
  const rowsRead = (found: Node[]) => found.filter((n) => n['Node Type'] !== 'Seq Scan' && /^(posts|events|event_terms|event_organizers|media)(_|$)/.test(n['Relation Name'] ?? n['Index Name'] ?? '')).map((n) => [`${n['Node Type']} ${n['Relation Name'] ?? n['Index Name']}`, n['Actual Rows']! * n['Actual Loops']!] as const);

  it('read the event, its venue, organizers, terms and images by key: no table or index read whole', async () => {
    const [event] = (await admin.query<{ id: string }>(`SELECT e.post_id AS id FROM events e JOIN event_organizers o ON o.event_id = e.post_id
      WHERE e.venue_id IS NOT NULL ORDER BY e.post_id DESC LIMIT 1`)).rows;
    const { plan, scans: found } = await genericScans(WITH_LINKS.event, [Number(event!.id), 'en', toWire(DateTime.utc())]);
    // the images as one OR of an array and a subquery read every image (a sequential scan: 3 ms for 50,000); the
    // venues and organizers asked as one OR read every organizer's entry of the translation index
    expect(wholeReads(found)).toEqual([]);
    for (const [scan, rows] of rowsRead(found)) expect(rows, scan).toBeLessThan(20);
    expect(plan).toMatch(/"Relation Name":"venues"/);
  });
  it('read several events with their links in one statement by key as well', async () => {
    const ids = (await admin.query<{ id: string }>(`SELECT e.post_id AS id FROM events e JOIN event_organizers o ON o.event_id = e.post_id
      WHERE e.venue_id IS NOT NULL ORDER BY e.post_id DESC LIMIT 4`)).rows.map((r) => Number(r.id));
    const { scans: found } = await genericScans(WITH_LINKS_EACH.event, [ids, ids.map(() => 'en'), toWire(DateTime.utc())]);
    expect(wholeReads(found)).toEqual([]);
    for (const [scan, rows] of rowsRead(found)) expect(rows, scan).toBeLessThan(20 * ids.length);
  });
  it('read the links of a page of events by key as well', async () => {
    const rows = (await admin.query<{ venue_id: string; organizer_id: string; term_id: string; translation_group: string }>(`SELECT e.venue_id, o.organizer_id, t.term_id, p.translation_group
      FROM events e JOIN posts p ON p.id = e.post_id JOIN event_organizers o ON o.event_id = e.post_id JOIN event_terms t ON t.event_id = e.post_id
      WHERE e.venue_id IS NOT NULL ORDER BY e.post_id LIMIT 10`)).rows;
    const ids = (key: keyof (typeof rows)[number]) => [...new Set(rows.map((r) => Number(r[key])))];
    const { plan, scans: found } = await genericScans(VIEW_LINKS, [ids('venue_id'), ids('organizer_id'), 'en', ids('term_id'), [], ids('translation_group'), [], [], toWire(DateTime.utc())]);
    expect(wholeReads(found)).toEqual([]);
    for (const [scan, read] of rowsRead(found)) expect(read, scan).toBeLessThan(60);

    // a link already in the language asked for is its own translation there: looked up again, each venue, organizer
    // and term of a page cost a probe of a translation index (a fifth of the statement, ten English events)
    const translationProbes = async (lang: string) => (await genericScans(VIEW_LINKS, [ids('venue_id'), ids('organizer_id'), lang, ids('term_id'), [], ids('translation_group'), [], [], toWire(DateTime.utc())]))
      .scans.filter((n) => /^(posts|terms)_translation$/.test(n['Index Name'] ?? '') && /\blang = /.test(n['Index Cond'] ?? ''))
      .reduce((loops, n) => loops + n['Actual Loops']!, 0);
    expect(await translationProbes('en')).toBe(0);
    expect(await translationProbes('fr')).toBeGreaterThan(0);
  });
});

describe('the links of views asked for in one turn on PostgreSQL', () => {
  it('are read by one statement, each the links it would read alone', async () => {
    const rows = (await admin.query<{ venue_id: string; organizer_id: string; term_id: string; translation_group: string }>(`SELECT e.venue_id, o.organizer_id, t.term_id, p.translation_group
      FROM events e JOIN posts p ON p.id = e.post_id JOIN event_organizers o ON o.event_id = e.post_id JOIN event_terms t ON t.event_id = e.post_id
      WHERE e.venue_id IS NOT NULL ORDER BY e.post_id LIMIT 6`)).rows;
    const asked: ViewLinksQuery[] = rows.map((r, i) => ({
      lang: i % 2 ? 'fr' : 'en', venueIds: [Number(r.venue_id)], organizerIds: [Number(r.organizer_id)], termIds: [Number(r.term_id)], imageIds: [],
      groups: { event: [Number(r.translation_group)], venue: [], organizer: [] },
    }));
    asked.push({ lang: 'de', venueIds: [], organizerIds: [], termIds: [], imageIds: [], groups: { event: [], venue: [], organizer: [] } });
    const alone = [];
    for (const q of asked) alone.push(await engine.read((repos) => repos.posts.viewLinks(q)));
    expect(alone.filter((links) => links.venues.size > 0 && links.terms.size > 0)).toHaveLength(6);
    const sent = countQueries();
    try {
      const together = await engine.read((repos) => Promise.all(asked.map((q) => repos.posts.viewLinks(q))));
      expect(together).toEqual(alone);
      expect(sent.count).toBe(1);
    } finally {
      sent.stop();
    }
  });
});

describe('records read with their links in one turn on PostgreSQL', () => {
  it('are read by one statement per type, each as its own statement would read it', async () => {
    const ids = async (type: string) => (await admin.query<{ id: string }>(`SELECT id FROM posts WHERE type = $1 ORDER BY id DESC LIMIT 3`, [type])).rows.map((r) => Number(r.id));
    const [events, venues] = [await ids('event'), await ids('venue')];
    const asked: [PostType, number, Lang][] = [
      ...events.map((id, i): [PostType, number, Lang] => ['event', id, i % 2 ? 'fr' : 'en']),
      ...venues.map((id): [PostType, number, Lang] => ['venue', id, 'de']),
      ['event', venues[0]!, 'en'], // not an event: no record
      ['event', 999_999_999, 'en'],
    ];
    const alone = [];
    for (const [type, id, lang] of asked) alone.push(await engine.read((repos) => repos.posts.findWithLinks(type, id, lang)));
    expect(alone.map((found) => found?.record.id ?? null)).toEqual([...events, ...venues, null, null]);
    const sent = countQueries();
    try {
      const together = await engine.read((repos) => Promise.all(asked.map(([type, id, lang]) => repos.posts.findWithLinks(type, id, lang))));
      expect(together).toEqual(alone);
      expect(sent.count).toBe(2);
    } finally {
      sent.stop();
    }
  });
});

/** Counts the statements every pg client sends until stopped. */
function countQueries(): { count: number; stop: () => void } {
  const original = pg.Client.prototype.query;
  const counter = { count: 0, stop: () => void (pg.Client.prototype.query = original) };
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    counter.count++;
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  return counter;
}

describe('term counts on PostgreSQL', () => {
  it('leave out a term\'s scheduled events through its own scheduled links, not every scheduled event of the calendar', async () => {
    const { plan } = await buffersOf(`SELECT t.id, ${TERM_COUNT('$1')} AS count FROM terms t WHERE t.taxonomy = 'tag'`, [toWire(DateTime.utc())]);
    expect(plan).toMatch(/"Index Name":"event_terms_scheduled"/);
    expect(plan).not.toMatch(/events_scheduled/);
  });
});

describe('counts of venues and organizers on PostgreSQL', () => {
  const venues = (extra: Partial<LinkedListQuery> = {}): LinkedListQuery => ({
    type: 'venue', lang: 'en', nowUtc: '2026-11-23 00:00:00', nowLocal: '2026-11-23 00:00:00', statuses: ['publish'], viewer: { kind: 'public' },
    eventViewer: { kind: 'public' }, access: protectedAccess(null, undefined), limit: 10, offset: 0, ...extra,
  });
  it('count the posts of the type off their listing index, not every post joined by id', async () => {
    const plan = (await engine.read((repos) => repos.posts.explainLinkedList(venues()))).join('\n');
    const count = plan.slice(plan.lastIndexOf('Aggregate'));
    expect(count).toMatch(/Index Cond: \(\(type = 'venue'::text\) AND \(lang = 'en'::text\)/);
    expect(count).not.toMatch(/posts_pkey|Join/);
  });
  it('count as many as the page lists, with and without a filter on the details', async () => {
    for (const q of [venues(), venues({ words: ['a'] }), venues({ hasEvents: true })]) {
      const all = await engine.read((repos) => repos.posts.listLinked({ ...q, limit: 500 }));
      expect(all.total).toBe(all.ids.length);
      expect(all.total).toBeGreaterThan(0);
    }
  });
});

/** The rows of `events` a plan's scans read (kept or filtered out, over all their loops), all nodes together. */
const eventsRead = (node: PlanNode): number =>
  (node['Relation Name'] === 'events' ? ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0)) * (node['Actual Loops'] ?? 1) : 0)
  + (node.Plans ?? []).reduce((sum, child) => sum + eventsRead(child), 0);

/** How many times a plan entered an index, all its nodes together. */
const indexLoops = (node: PlanNode, index: string): number =>
  (node['Index Name'] === index ? node['Actual Loops'] ?? 1 : 0) + (node.Plans ?? []).reduce((sum, child) => sum + indexLoops(child, index), 0);

/** A list's total is the number of rows its page statement holds when the page is as long as the list, and not 0. */
async function expectTotalOfPages(pool: pg.Pool, sql: ListSql): Promise<void> {
  const [counted] = await named<{ total: number }>(pool, sql.count, sql.params);
  const [held] = await named<{ n: number }>(pool, `SELECT COUNT(*) AS n FROM (${sql.page}) page`, { ...sql.params, limit: 100_000, offset: 0 });
  expect(Number(counted!.total)).toBe(Number(held!.n));
  expect(Number(counted!.total)).toBeGreaterThan(0);
}

describe('event totals on PostgreSQL', () => {
  it('count the default window from the day totals: a few hundred events read, not every event of two years', async () => {
    const now = DateTime.utc();
    const q: EventListQuery = {
      lang: 'en', nowUtc: toWire(now), statuses: ['publish'], viewer: { kind: 'public' }, access: protectedAccess(null, undefined), limit: 10, offset: 0,
      bounds: [{ column: 'start', op: '>=', value: toWire(now.minus({ days: 1 }).startOf('day')) }, { column: 'end', op: '<=', value: toWire(now.plus({ months: 24 }).endOf('day').set({ millisecond: 0 })) }],
    };
    const sql = eventListSql(q, POSTGRES_DIALECT);
    const counted = `SELECT COUNT(*) AS total ${sql.page.slice(sql.page.indexOf('FROM events'), sql.page.indexOf('ORDER BY'))}`;
    const pool = openPool(database.url!, { max: 1 }, () => undefined);
    try {
      const run = async (statement: string) => {
        const [row] = await named<{ total: number }>(pool, statement, sql.params);
        const [explained] = await named<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(pool, `EXPLAIN (ANALYZE, FORMAT JSON) ${statement}`, sql.params);
        const plan = explained!['QUERY PLAN'][0]!.Plan;
        return { total: Number(row!.total), read: eventsRead(plan), plan: JSON.stringify(plan) };
      };
      const [summed, one] = [await run(sql.count), await run(counted)];
      expect(summed.total).toBe(one.total);
      expect(one.read).toBeGreaterThan(5000);
      // the edge days (about 40 events each) and the events over several days of the window (about 1 %), each
      // through an index that holds just them; never the listing index over the whole window
      expect(summed.plan).toMatch(/"Index Name":"events_multiday"/);
      expect(summed.read).toBeLessThan(one.read / 10);
    } finally {
      await pool.end();
    }
  });
});

describe('lists filtered by terms on PostgreSQL', () => {
  it('read the links of the terms in the window, or each event\'s own, never every link of the terms', async () => {
    const now = DateTime.utc().startOf('day');
    const categories = (await admin.query<{ id: number }>(`SELECT id FROM terms WHERE taxonomy = 'category' ORDER BY event_count DESC LIMIT 3`)).rows.map((r) => Number(r.id));
    /** The scans of event_terms in a plan, with what they were entered by. */
    const linkScans = (node: Record<string, unknown>): string[] =>
      [...(node['Relation Name'] === 'event_terms' ? [String(node['Index Cond'] ?? node['Recheck Cond'] ?? node.Filter ?? JSON.stringify(node))] : []),
        ...((node.Plans as Record<string, unknown>[] | undefined) ?? []).flatMap(linkScans)];
    const pool = openPool(database.url!, { max: 1 }, () => undefined);
    try {
      for (const [days, ids] of [[7, categories.slice(0, 1)], [90, categories.slice(0, 1)], [90, categories]] as const) {
        const q: EventListQuery = {
          lang: 'en', nowUtc: toWire(now), statuses: ['publish'], viewer: { kind: 'public' }, access: protectedAccess(null, undefined), limit: 10, offset: 0,
          categoryIds: [...ids], bounds: [{ column: 'start', op: '>=', value: toWire(now) }, { column: 'end', op: '<=', value: toWire(now.plus({ days }).endOf('day').set({ millisecond: 0 })) }],
        };
        const sql = eventListSql(q, POSTGRES_DIALECT);
        for (const statement of [sql.count, sql.page]) {
          const [explained] = await named<{ 'QUERY PLAN': [{ Plan: Record<string, unknown> }] }>(pool, `EXPLAIN (ANALYZE, FORMAT JSON) ${statement}`, { ...sql.params, limit: 10, offset: 0 });
          const scans = linkScans(explained!['QUERY PLAN'][0]!.Plan);
          expect(scans.length, `${days} days of ${ids.length} categories`).toBeGreaterThan(0);
          for (const scan of scans) expect(scan, `${days} days of ${ids.length} categories`).toMatch(/event_id = |start_local >= /);
        }
        await expectTotalOfPages(pool, sql);
      }
    } finally {
      await pool.end();
    }
  });
});

describe('a list filtered by one organizer or one tag on PostgreSQL', () => {
  it.each([
    ['organizer', 'event_organizers', 'organizer_id', 'event_organizers_by_organizer'],
    ['tag', 'event_terms', 'term_id', 'event_terms_by_term'],
  ] as const)('reads the links of the %s on most events in the window and each of their events, not the window\'s events', async (kind, table, column, index) => {
    const now = DateTime.utc().startOf('day');
    const [record] = (await admin.query<{ id: string }>(`SELECT l.${column} AS id FROM ${table} l
      WHERE ${kind === 'tag' ? `l.${column} IN (SELECT id FROM terms WHERE taxonomy = 'tag')` : 'TRUE'} GROUP BY 1 ORDER BY COUNT(*) DESC LIMIT 1`)).rows;
    const q: EventListQuery = {
      lang: 'en', nowUtc: toWire(now), statuses: ['publish'], viewer: { kind: 'public' }, access: protectedAccess(null, undefined), limit: 10, offset: 0,
      [kind === 'tag' ? 'tagIds' : 'organizerIds']: [Number(record!.id)],
      bounds: [{ column: 'start', op: '>=', value: toWire(now) }, { column: 'end', op: '<=', value: toWire(now.plus({ months: 24 }).endOf('day').set({ millisecond: 0 })) }],
    };
    const sql = eventListSql(q, POSTGRES_DIALECT);
    const [links] = (await admin.query<{ n: string }>(`SELECT COUNT(*) AS n FROM ${table} WHERE ${column} = $1 AND start_local >= $2 AND start_local <= $3`,
      [record!.id, q.bounds[0]!.value, q.bounds[1]!.value])).rows;
    const pool = openPool(database.url!, { max: 1 }, () => undefined);
    try {
      for (const statement of [sql.count, sql.page]) {
        const [explained] = await named<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(pool, `EXPLAIN (ANALYZE, FORMAT JSON) ${statement}`, { ...sql.params, limit: 10, offset: 0 });
        const plan = explained!['QUERY PLAN'][0]!.Plan;
        expect(JSON.stringify(plan)).toContain(`"Index Name":"${index}"`);
        // checked event by event, the window's events were read off the listing index; joined to the links, the
        // total of a tag was counted by hashing the window's events, read whole
        expect(eventsRead(plan)).toBeLessThanOrEqual(Number(links!.n));
      }
      await expectTotalOfPages(pool, sql);
    } finally {
      await pool.end();
    }
  });
});

describe('a list filtered by several records on PostgreSQL', () => {
  it.each([
    ['organizers', 'event_organizers', 'organizer_id', 'event_organizers_by_organizer'],
    ['venues', 'events', 'venue_id', 'events_by_venue'],
    ['categories', 'event_terms', 'term_id', 'event_terms_by_term'],
  ] as const)('counts several %s by reading their links in the window once, never event by event', async (kind, table, column, index) => {
    const now = DateTime.utc().startOf('day');
    // two organizers or venues with events, or the category on the most events and its subcategories
    const ids = kind === 'categories'
      ? (await admin.query<{ id: string }>(`SELECT id FROM terms WHERE taxonomy = 'category' AND (id = $1 OR parent_id = $1)`,
        [(await admin.query<{ id: string }>(`SELECT parent_id AS id FROM terms WHERE parent_id IS NOT NULL GROUP BY 1 ORDER BY COUNT(*) DESC LIMIT 1`)).rows[0]!.id])).rows
      : (await admin.query<{ id: string }>(`SELECT ${column} AS id FROM ${table} WHERE ${column} IS NOT NULL GROUP BY 1 ORDER BY 1 LIMIT 2`)).rows;
    const q: EventListQuery = {
      lang: 'en', nowUtc: toWire(now), statuses: ['publish'], viewer: { kind: 'public' }, access: protectedAccess(null, undefined), limit: 10, offset: 0,
      [kind === 'categories' ? 'categoryIds' : kind === 'venues' ? 'venueIds' : 'organizerIds']: ids.map((r) => Number(r.id)),
      bounds: [{ column: 'start', op: '>=', value: toWire(now) }, { column: 'end', op: '<=', value: toWire(now.plus({ months: 24 }).endOf('day').set({ millisecond: 0 })) }],
    };
    expect(ids.length).toBeGreaterThan(1);
    const sql = eventListSql(q, POSTGRES_DIALECT);
    const [links] = (await admin.query<{ n: string }>(`SELECT COUNT(*) AS n FROM ${table} WHERE ${column} = ANY($1::bigint[]) AND start_local >= $2 AND start_local <= $3`,
      [ids.map((r) => r.id), q.bounds[0]!.value, q.bounds[1]!.value])).rows;
    const pool = openPool(database.url!, { max: 1 }, () => undefined);
    try {
      const [explained] = await named<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(pool, `EXPLAIN (ANALYZE, FORMAT JSON) ${sql.count}`, sql.params);
      const plan = explained!['QUERY PLAN'][0]!.Plan;
      expect(JSON.stringify(plan)).toContain(`"Index Name":"${index}"`);
      // their links in the window read once and joined to the window's events (a hash semi join, or each of their
      // events by key): the organizers' links were read over every day of the calendar and each of their events looked
      // up, 1,031 for 287 in the window (3.3-3.9 ms on 100,000 events, 1.3-1.5 now)
      expect(indexLoops(plan, index)).toBe(1);
      // the seed's venues and organizers have few events each: only theirs are read, not the window's
      if (kind !== 'categories') expect(eventsRead(plan)).toBeLessThanOrEqual(Number(links!.n));
      await expectTotalOfPages(pool, sql);
    } finally {
      await pool.end();
    }
  });
});

describe('plans kept on PostgreSQL', () => {
  it('plan each statement of fixed text once per connection of the pool by key, whatever its values', async () => {
    const pool = openPool(database.url!, { max: 1, genericPlans: true }, () => undefined);
    try {
      const ids = (await admin.query<{ id: number }>(`SELECT id FROM posts WHERE type = 'event' ORDER BY id LIMIT 8`)).rows.map((r) => Number(r.id));
      for (const [i, id] of ids.entries()) await query(pool, 'SELECT id FROM posts WHERE id = ANY($1::bigint[])', [ids.slice(0, i + 1).concat(id)]);
      const [kept] = await query<{ generic_plans: number; custom_plans: number }>(pool,
        `SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE 'SELECT id FROM posts WHERE id = ANY%'`);
      expect(kept).toEqual({ generic_plans: ids.length, custom_plans: 0 });
    } finally {
      await pool.end();
    }
  });
  it('plan a list statement for its values on every call: none is kept as a prepared statement', async () => {
    const pool = openPool(database.url!, { max: 1 }, () => undefined);
    try {
      for (let i = 0; i < 8; i++) await named(pool, 'SELECT COUNT(*) AS total FROM posts WHERE search_text LIKE @word', { word: `%word ${i}%` });
      expect(await query(pool, `SELECT name FROM pg_prepared_statements WHERE statement NOT LIKE '%pg_prepared_statements%'`, [])).toEqual([]);
    } finally {
      await pool.end();
    }
  });
  it('never compile a statement (JIT): the links of many views, estimated above its threshold, ran 100 times longer', async () => {
    for (const options of [{ max: 1 }, { max: 1, genericPlans: true, pipeline: true }]) {
      const pool = openPool(database.url!, options, () => undefined);
      try {
        expect(await query(pool, 'SHOW jit')).toEqual([{ jit: 'off' }]);
      } finally {
        await pool.end();
      }
    }
  });
  it('share a process\'s connections between the pools, at least one each', () => {
    expect(splitPool(10)).toEqual({ keys: 7, lists: 2, writes: 1 });
    expect(splitPool(20)).toEqual({ keys: 15, lists: 4, writes: 1 });
    expect(splitPool(4)).toEqual({ keys: 2, lists: 1, writes: 1 });
    expect(splitPool(3)).toEqual({ keys: 1, lists: 1, writes: 1 });
    expect(splitPool(1)).toEqual({ keys: 1, lists: 1, writes: 1 });
  });
});

describe('event search on PostgreSQL', () => {
  const from = toWire(DateTime.utc().minus({ days: 1 }).startOf('day'));
  /** A search from yesterday on (the whole calendar's index), or in the default window of two years (the dated one). */
  const searchPlan = async (window: 'open' | 'default', word = RARE_WORD) => (await engine.read((repos) => repos.posts.explainEventList({
    lang: 'en', nowUtc: toWire(DateTime.utc()), statuses: ['publish'], viewer: { kind: 'public' }, access: protectedAccess(null, undefined),
    bounds: window === 'open'
      ? [{ column: 'start', op: '>=', value: from }]
      : [{ column: 'start', op: '>=', value: from }, { column: 'end', op: '<=', value: toWire(DateTime.utc().plus({ years: 2 }).endOf('day')) }],
    search: { include: [word], exclude: [] }, limit: 10, offset: 0,
  }))).join('\n');

  it('stays on the trigram indexes after a bulk load and while posts are written', async () => {
    // the seed (a bulk load) merged what it added to the indexes (nothing is left to merge); their pending lists must
    // not grow past a few hundred kilobytes after (migration 0017): a full list of 4 MB made the planner scan every post
    for (const index of ['posts_search', 'posts_dated_search']) {
      const [merged] = (await admin.query<{ pages: string }>(`SELECT gin_clean_pending_list('${index}'::regclass) AS pages`)).rows;
      expect(Number(merged!.pages)).toBe(0);
    }
    const onIndexes = async () => {
      expect(await searchPlan('open')).toMatch(/posts_search/);
      const dated = await searchPlan('default');
      expect(dated).toMatch(/Bitmap Index Scan on posts_dated_search/);
      expect(dated).not.toMatch(/Seq Scan on (posts|events)/);
    };
    await onIndexes();
    await admin.query(`UPDATE posts SET search_text = search_text || ' ' WHERE id IN (SELECT id FROM posts WHERE search_text <> '' ORDER BY id LIMIT 3000)`);
    await onIndexes();
  });

  it('search a window through the dated index for words with a trigram of ASCII letters or digits, else the whole calendar\'s', async () => {
    expect(await searchPlan('default', 'Zéphyrine')).toMatch(/posts_dated_search/);
    const greek = await searchPlan('default', 'γράμμα');
    expect(greek).toMatch(/posts_search/);
    expect(greek).not.toMatch(/posts_dated_search/);
  });
});
