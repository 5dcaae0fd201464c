import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protectedAccess } from '../src/domain/postRules.js';
import { foldForSearch } from '../src/domain/text.js';
import { NS, TestServer } from './helpers/server.js';

/**
 * Event search narrows through a trigram index (migration 0008; in a window of a few years, the dated index of 0018)
 * and decides with LIKE on the folded text: the answers must be exactly those of a plain substring test of the folded
 * title, excerpt and description, for words of any length and alphabet, through either index, and stay so as records
 * are created, changed, moved to another month and deleted.
 */
let s: TestServer;
beforeAll(async () => {
  s = await TestServer.start();
});
afterAll(() => s.close());

const WINDOW = 'start_date=2032-03-01&end_date=2032-03-31&per_page=50';
/** The same events, in a window too wide for the dated index (more than MAX_DATED_MONTHS): the whole calendar's. */
const WIDE_WINDOW = 'start_date=2032-03-01&end_date=2099-12-31&per_page=50';
const texts: { title: string; description?: string; excerpt?: string }[] = [
  { title: 'Café Zürich evening', description: 'Jazz & wine' },
  { title: 'Zurich morning run', excerpt: 'Ölmühle — Straße' },
  { title: 'Ünïcödé fest', description: 'Ελληνικά γράμματα and 日本語のテキスト' },
  { title: '100% ab_cd "quoted" test', description: 'a*b?c[d]e' },
  { title: 'Short ab', description: 'xy z' },
  { title: 'Night market', description: 'Lanterns, noodles and jazz until late' },
];
const words = ['zürich', 'ZURICH', 'café', 'cafe', 'jazz', 'Straße', 'strasse', 'mühle', 'γράμ', 'ΓΡΑΜΜΑΤΑ', 'テキスト', 'ünï', 'unicode',
  '100%', 'ab_cd', 'a*b?c[d]', 'ab', 'z', 'xy', '"quoted"', 'night market', 'market night', '"night market"', '"market night"', 'e', 'late', 'nothing here', 'ing', '&'];

async function create(body: Record<string, unknown>, day: number): Promise<number> {
  const date = `2032-03-${String(day).padStart(2, '0')}`;
  const r = await s.raw('POST', `${NS}/events`, { as: s.admin, json: { start_date: `${date} 10:00`, end_date: `${date} 11:00`, ...body } });
  expect(r.status).toBe(201);
  return r.body.id as number;
}

async function searchIn(window: string, word: string): Promise<number[]> {
  const r = await s.raw('GET', `${NS}/events?${window}&search=${encodeURIComponent(word)}`);
  expect(r.status).toBe(200);
  // one page holds every match: the total counts exactly them
  expect([word, r.body.total ?? 0]).toEqual([word, (r.body.events as unknown[]).length]);
  return (r.body.events as { id: number }[]).map((e) => e.id).sort((a, b) => a - b);
}

/** The events of March 2032 holding `word`, through the dated index, and the same through the whole calendar's. */
async function search(word: string): Promise<number[]> {
  const dated = await searchIn(WINDOW, word);
  expect([word, await searchIn(WIDE_WINDOW, word)]).toEqual([word, dated]);
  return dated;
}

/** The reference: every word (a quoted phrase is one) must be a substring of the folded text. */
function expected(records: Map<number, { title: string; description?: string; excerpt?: string }>, search: string): number[] {
  const needles = [...search.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => foldForSearch(m[1] ?? m[2]!)).filter(Boolean);
  return [...records]
    .filter(([, r]) => needles.every((n) => foldForSearch(`${r.title}\u001f${r.excerpt ?? ''}\u001f${r.description ?? ''}`).includes(n)))
    .map(([id]) => id)
    .sort((a, b) => a - b);
}

/**
 * The index is whole. SQLite: FTS5's integrity check of the external-content index against the posts it indexes
 * (throws when they differ). PostgreSQL: the trigram index is an ordinary GIN index over posts.search_text that the
 * database keeps itself, so nothing can drift; what can go wrong is an index left invalid (a failed build).
 */
async function integrity(): Promise<void> {
  if (TestServer.engine === 'sqlite') {
    await s.sql("INSERT INTO posts_search (posts_search) VALUES ('integrity-check')");
    // the dated index is contentless: it holds exactly the events' posts that have a month and a text
    await s.sql("INSERT INTO events_search (events_search) VALUES ('integrity-check')");
    const held = await s.sql<{ id: number }>('SELECT rowid AS id FROM events_search ORDER BY rowid');
    expect(held).toEqual(await s.sql<{ id: number }>("SELECT id FROM posts WHERE start_month IS NOT NULL AND search_text <> '' ORDER BY id"));
    return;
  }
  for (const index of ['posts_search', 'posts_dated_search']) {
    expect(await s.sql(`SELECT CASE WHEN i.indisvalid THEN 1 ELSE 0 END AS valid FROM pg_index i WHERE i.indexrelid = '${index}'::regclass`)).toEqual([{ valid: 1 }]);
  }
}

describe('search through the trigram index', () => {
  const records = new Map<number, { title: string; description?: string; excerpt?: string }>();

  it('answers exactly as a substring test of the folded text, short words and accents included', async () => {
    for (const [i, t] of texts.entries()) records.set(await create(t, i + 1), t);
    for (const word of words) expect([word, await search(word)]).toEqual([word, expected(records, word)]);
    await integrity();
  });

  it('follows updates and deletions', async () => {
    const [first] = [...records.keys()];
    const changed = { title: 'Renamed gathering', description: 'Brass band' };
    expect((await s.raw('PATCH', `${NS}/events/${first}`, { as: s.admin, json: changed })).status).toBe(200);
    records.set(first!, changed);
    expect(await search('zürich')).toEqual(expected(records, 'zürich'));
    expect(await search('brass')).toEqual([first]);
    await integrity();

    const gone = [...records.keys()].at(-1)!;
    await s.sql('DELETE FROM posts WHERE id = ?', gone); // as `trash purge` deletes
    records.delete(gone);
    expect(await search('lanterns')).toEqual([]);
    for (const word of words) expect([word, await search(word)]).toEqual([word, expected(records, word)]);
    await integrity();
  });

  it('follows an event moved to another month, and a window that ends mid-month', async () => {
    const id = await create({ title: 'Quokka parade', description: 'Moves house' }, 20);
    records.set(id, { title: 'Quokka parade', description: 'Moves house' });
    expect(await search('quokka')).toEqual([id]);
    const moved = await s.raw('PATCH', `${NS}/events/${id}`, { as: s.admin, json: { start_date: '2032-05-10 10:00', end_date: '2032-05-10 11:00' } });
    expect(moved.status).toBe(200);
    records.delete(id);
    expect(await searchIn(WINDOW, 'quokka')).toEqual([]);
    expect(await searchIn(WIDE_WINDOW, 'quokka')).toEqual([id]);
    expect(await searchIn('start_date=2032-05-01&end_date=2032-05-10&per_page=50', 'quokka')).toEqual([id]);
    expect(await searchIn('start_date=2032-05-11&end_date=2032-06-30&per_page=50', 'quokka')).toEqual([]);
    expect(await searchIn('start_date=2032-04-30&end_date=2032-05-31&per_page=50', 'parade house')).toEqual([id]);
    await integrity();
    expect((await s.raw('DELETE', `${NS}/events/${id}?force=true`, { as: s.admin })).status).toBe(200);
    expect(await searchIn('start_date=2032-05-01&end_date=2032-05-31&per_page=50', 'quokka')).toEqual([]);
    await integrity();
  });

  it('gives every page of a search the whole total, through either index, and no page past the last', async () => {
    for (const [i, title] of ['Pagination walk north', 'Pagination walk south', 'Pagination walk east'].entries()) {
      records.set(await create({ title }, 24 + i), { title });
    }
    const matches = await search('pagination');
    expect(matches).toEqual(expected(records, 'pagination'));
    expect(matches).toHaveLength(3);
    // a word too short for either index: the window read event by event
    const all = await search('e');
    expect(all).toEqual(expected(records, 'e'));
    for (const window of [WINDOW, WIDE_WINDOW]) {
      for (const [w, expectedIds] of [['pagination', matches], ['e', all]] as const) {
        const seen: number[] = [];
        for (let page = 1; page <= expectedIds.length; page++) {
          const r = await s.raw('GET', `${NS}/events?${window.replace('per_page=50', 'per_page=1')}&page=${page}&search=${w}`);
          expect(r.status).toBe(200);
          expect([r.body.total, r.body.total_pages, r.headers.get('X-TEC-Total')]).toEqual([expectedIds.length, expectedIds.length, String(expectedIds.length)]);
          seen.push(...(r.body.events as { id: number }[]).map((e) => e.id));
        }
        expect(seen.sort((a, b) => a - b)).toEqual(expectedIds);
        const past = await s.raw('GET', `${NS}/events?${window.replace('per_page=50', 'per_page=1')}&page=${expectedIds.length + 1}&search=${w}`);
        expect(past.status).toBe(404);
      }
    }
  });

  it('uses the index only for words of three characters or more', async () => {
    // PostgreSQL's planner chooses the trigram index by cost, so give it a realistic number of events in the window
    // (as queryPlans.test.ts does for SQLite) and fresh statistics; SQLite's plan is the same either way. Last in
    // this file: the checks above count exactly their own records.
    const now = '2031-12-01 10:00:00';
    await s.sql(`INSERT INTO posts (type, status, slug, title, date_local, date_utc, modified_local, modified_utc, lang, translation_group, search_text)
                 WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 5000)
                 SELECT 'event', 'publish', 'plan-bulk-' || n, 'Plan bulk ' || n, ?, ?, ?, ?, 'en', 1000000 + n, 'plan bulk ' || n FROM g`, now, now, now, now);
    await s.sql(`INSERT INTO events (post_id, start_local, end_local, start_utc, end_utc, timezone, lang, status, date_utc)
                 SELECT id, '2032-03-15 10:00:00', '2032-03-15 11:00:00', '2032-03-15 10:00:00', '2032-03-15 11:00:00', 'UTC+0', 'en', 'publish', ?
                 FROM posts WHERE slug LIKE 'plan-bulk-%'`, now);
    // PostgreSQL only: a bulk insert leaves its entries in the GIN index's pending list, which the planner costs as
    // read in full; autovacuum moves them into the index in a live database, this does it now
    if (TestServer.engine === 'postgres') await s.sql("SELECT gin_clean_pending_list('posts_search'::regclass)");
    await s.sql('ANALYZE');
    const plan = async (include: string[]) => (await s.read((repos) => repos.posts.explainEventList({
      lang: 'en', nowUtc: '2032-01-01 00:00:00', statuses: ['publish'], viewer: { kind: 'public' }, access: protectedAccess(null, undefined),
      bounds: [{ column: 'start', op: '>=', value: '2032-03-01 00:00:00' }], search: { include, exclude: [] }, limit: 10, offset: 0,
    }))).join('\n');
    expect(await plan(['jazz'])).toMatch(/posts_search/);
    expect(await plan(['ab'])).not.toMatch(/posts_search/);
  });
});
