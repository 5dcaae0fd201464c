import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seed } from '../src/db/seed.js';
import { NS, TestServer } from './helpers/server.js';

/**
 * No anonymous request may cost without bound: Node answers on one thread, so one costly read stalls every other
 * request. Each limit answers a clear 400 naming it, before anything is read, and a request just within it works.
 */
let s: TestServer;
let venueId: number;
beforeAll(async () => {
  s = await TestServer.start({ logLevel: 'debug' });
  venueId = (await s.raw('POST', `${NS}/venues`, { as: s.admin, json: { venue: 'Limit Hall' } })).body.id;
  for (const [i, title] of ['Alpha jazz night', 'Beta rock night', 'Gamma folk morning'].entries()) {
    const r = await s.raw('POST', `${NS}/events`, { as: s.admin, json: { title, start_date: `2027-03-0${i + 1} 20:00`, end_date: `2027-03-0${i + 1} 22:00`, venue: venueId } });
    expect(r.status).toBe(201);
  }
});
afterAll(() => s.close());

/** A 400 `rest_invalid_param` whose reasons for `params` each contain `limit`. */
async function refused(path: string, params: string[], limit: string | RegExp) {
  const r = await s.raw('GET', path);
  expect(r.status, r.text).toBe(400);
  expect(r.body.code).toBe('rest_invalid_param');
  expect(Object.keys(r.body.data.params).sort()).toEqual([...params].sort());
  for (const name of params) expect(r.body.data.params[name]).toMatch(limit);
  return r.body;
}
const ok = async (path: string) => {
  const r = await s.raw('GET', path);
  expect(r.status, r.text).toBe(200);
  return r.body;
};
const words = (n: number, prefix = '') => Array.from({ length: n }, (_, i) => `${prefix}w${i}`).join(' ');
const q = encodeURIComponent;

describe('event search', () => {
  it('takes at most 10 words and quoted phrases, exclusions included', async () => {
    await ok(`${NS}/events?search=${q(`${words(4)} "a phrase" ${words(5, '-')}`)}`);
    for (const search of [words(11), `${words(6)} ${words(5, '-')}`, `${words(9)} "one phrase" "and another"`]) {
      await refused(`${NS}/events?search=${q(search)}`, ['search'], 'At most 10 words and quoted phrases, exclusions included.');
      await refused(`${NS}/events.ics?search=${q(search)}`, ['search'], 'At most 10 words');
    }
    // within the limit, it still finds exactly what it did
    expect((await ok(`${NS}/events?start_date=2027-03-01&end_date=2027-03-31&search=${q('night -rock')}`)).events.map((e: { title: string }) => e.title)).toEqual(['Alpha jazz night']);
  });

  it('of venues and organizers takes at most 10 words', async () => {
    for (const list of ['venues', 'organizers']) {
      await ok(`${NS}/${list}?search=${q(words(10))}`);
      await refused(`${NS}/${list}?search=${q(words(11))}`, ['search'], 'At most 10 words.');
    }
    expect((await ok(`${NS}/venues?search=${q('limit hall')}`)).venues.map((v: { id: number }) => v.id)).toEqual([venueId]);
  });
});

describe('the date window of a feed', () => {
  it('spans at most 762 days, between two ends (include has none)', async () => {
    await ok(`${NS}/events.ics`); // the default window qualifies
    await ok(`${NS}/events.ics?start_date=2027-01-01&end_date=2029-01-01`); // two years and a day
    await ok(`${NS}/events.ics?ends_after=2027-02-28&starts_before=2027-03-02`); // overlapping a period
    const reason = /A feed's date window spans at most 762 days .* has both ends/;
    await refused(`${NS}/events.ics?start_date=2027-01-01&end_date=2029-02-02`, ['start_date', 'end_date'], reason);
    await refused(`${NS}/events.ics?ends_after=2025-01-01&starts_before=2027-03-02&featured=true`, ['ends_after', 'starts_before'], reason);
    // an explicit start long ago, with the default end 24 months ahead
    await refused(`${NS}/events.ics?start_date=2000-01-01`, ['start_date', 'end_date'], reason);
    // a window open at one end spans the whole calendar on that side
    await refused(`${NS}/events.ics?ends_before=now`, ['ends_before'], reason);
    await refused(`${NS}/events.ics?starts_after=2027-01-01&search=night`, ['starts_after'], reason);
    // strict times count to the second
    await refused(`${NS}/events.ics?strict_dates=1&start_date=${q('2027-01-01 00:00:00')}&end_date=${q('2029-02-02 00:00:01')}`, ['start_date', 'end_date'], reason);
    // include has no window
    const all = (await ok(`${NS}/events?start_date=2027-03-01&end_date=2027-03-31`)).events.map((e: { id: number }) => e.id);
    expect(await ok(`${NS}/events.ics?include=${all.join(',')}&start_date=2000-01-01`)).toContain('Gamma folk morning');
    // lists keep the plugin's open and wide windows
    await ok(`${NS}/events?ends_before=now`);
    await ok(`${NS}/events?start_date=2000-01-01&search=night`);
  });
});

describe('lists of ids and slugs', () => {
  const ids = (n: number) => Array.from({ length: n }, (_, i) => i + 1).join(',');
  it('hold at most 100 items, refused by validation with the limit named', async () => {
    await ok(`${NS}/events?include=${ids(100)}`);
    const body = await refused(`${NS}/events?include=${ids(101)}`, ['include'], 'include must contain at most 100 items.');
    expect(body.data.details.include.code).toBe('rest_too_many_items');
    for (const name of ['categories', 'tags', 'venue', 'organizer']) {
      await refused(`${NS}/events?${name}=${ids(101)}`, [name], `${name} must contain at most 100 items.`);
    }
    await refused(`${NS}/events.ics?venue=${ids(101)}`, ['venue'], 'venue must contain at most 100 items.');
    for (const name of ['include', 'exclude']) {
      await refused(`${NS}/categories?${name}=${ids(101)}`, [name], `${name} must contain at most 100 items.`);
      await refused(`${NS}/tags?${name}=${ids(101)}`, [name], `${name} must contain at most 100 items.`);
    }
  });

  it('and a text over its length is refused with the length named', async () => {
    const body = await refused(`${NS}/events?search=${'a'.repeat(501)}`, ['search'], 'search must be at most 500 characters long.');
    expect(body.data.details.search.code).toBe('rest_too_long');
  });
});

describe('pages', () => {
  it('past the end of a list are answered as such however deep they start (the plugin answers page=9999 so)', async () => {
    for (const [path, code] of [
      [`${NS}/events?per_page=50&page=200`, 'event-archive-page-not-found'], [`${NS}/events?page=9999`, 'event-archive-page-not-found'],
      [`${NS}/events?per_page=50&page=201&search=night`, 'event-archive-page-not-found'], [`${NS}/venues?page=1001`, 'venue-archive-page-not-found'],
      [`${NS}/organizers?per_page=50&page=201`, 'organizer-archive-page-not-found'],
    ] as const) {
      const r = await s.raw('GET', path);
      expect([r.status, r.body.code], path).toEqual([404, code]);
    }
    const { total: categories } = await ok(`${NS}/categories?hide_empty=0`);
    expect(await ok(`${NS}/categories?page=1001&hide_empty=0`)).toMatchObject({ categories: [], total: categories });
    expect((await ok(`${NS}/tags?per_page=100&page=201`)).tags).toEqual([]); // per_page above 50 counts as 50
    // the other limits are still named with them
    await refused(`${NS}/events?page=9999&search=${q(words(11))}`, ['search'], /At most 10 words/);
  });

  it('start at most 10,000 records into a list: a deeper page that holds records is refused, naming the limit', async () => {
    const big = await TestServer.start();
    try {
      await seed(big.engine, { events: 11_000 }); // some are drafts or hidden from listings
      const all = `${NS}/events?start_date=1970-01-01&end_date=2100-12-31&per_page=50`;
      const { total } = (await big.raw('GET', all)).body as { total: number };
      expect(total).toBeGreaterThan(10_050);
      const deep = await big.raw('GET', `${all}&page=201`);
      expect([deep.status, deep.body.code]).toEqual([400, 'rest_invalid_param']);
      expect(deep.body.data.params.page).toMatch(/at most 10,000 records into a list/);
      expect((await big.raw('GET', `${all}&page=200`)).status).toBe(200);
      const past = await big.raw('GET', `${all}&page=${Math.ceil(total / 50) + 1}`);
      expect([past.status, past.body.code]).toEqual([404, 'event-archive-page-not-found']);
    } finally {
      await big.close();
    }
  }, 120_000); // seeding 11,000 events takes 20-30 s on PostgreSQL on a loaded 2-core machine
});

describe('the response cache', () => {
  /** Whether the server's answer to the last request came from the cache (the debug log marks such answers). */
  const lastFromCache = () => {
    const line = JSON.parse(s.logs.filter((l) => l.includes('"request"')).at(-1)!) as { cached?: boolean; front?: boolean };
    return line.cached === true || line.front === true;
  };

  it('is not missed for parameters the route does not read, nor for their order or encoding', async () => {
    const list = `${NS}/events?start_date=2027-03-01&end_date=2027-03-31&search=night`;
    const first = await ok(list);
    for (const variant of [
      `${list}&utm_source=${Math.random()}`, `${list}&cache_buster=${Math.random()}&another=1`,
      `${NS}/events?search=nigh%74&end_date=2027-03-31&start_date=2027-03-01&zz=${Math.random()}`,
    ]) {
      // a list answer is kept for the second it was computed in: the two requests must fall in one second
      let cached = false;
      for (let attempt = 0; attempt < 5 && !cached; attempt++) {
        const second = Math.floor(Date.now() / 1000);
        await ok(list);
        const r = await s.raw('GET', variant);
        expect(r.text).toBe(JSON.stringify(first)); // links echo only what the route reads
        cached = lastFromCache() && Math.floor(Date.now() / 1000) === second;
        if (Math.floor(Date.now() / 1000) === second) break;
      }
      expect(cached, variant).toBe(true);
    }
    expect(first.rest_url).not.toMatch(/utm|cache_buster/);
  });

  it('nor for single records, and an unknown parameter does not change the answer', async () => {
    const path = `${NS}/events/${(await ok(`${NS}/events?start_date=2027-03-01&end_date=2027-03-31`)).events[0].id}`;
    const plain = await s.raw('GET', path);
    const other = await s.raw('GET', `${path}?nonce=${Math.random()}`);
    expect(lastFromCache()).toBe(true);
    expect(other.text).toBe(plain.text);
    expect(other.headers.get('cache-control')).toBe(plain.headers.get('cache-control'));
    // a password is read by the route, and its answer is kept apart and private
    const locked = await s.raw('GET', `${path}?password=anything`);
    expect(locked.headers.get('cache-control')).toBe('private, max-age=0, must-revalidate');
  });
});

describe('costly reads', () => {
  it('never hold every connection a read by id needs, however many are under way', async () => {
    // lists that hold on to their turn, as a list waiting for a read thread does, or a feed between two of its slices
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const lists = Array.from({ length: 40 }, () => s.engine.readList(async (repos) => {
      await repos.posts.typeOf(venueId);
      await held;
    }));
    try {
      const read = s.engine.read((repos) => repos.posts.typeOf(venueId)).then(() => 'answered');
      const late = new Promise((resolve) => setTimeout(() => resolve('still waiting'), 2000));
      expect(await Promise.race([read, late])).toBe('answered');
      // and over HTTP: an event read for the first time (no cached answer) is answered meanwhile
      const events = await s.sql<{ id: number }>("SELECT post_id AS id FROM events ORDER BY post_id LIMIT 1");
      const answer = s.raw('GET', `${NS}/events/${events[0]!.id}?xlate_language=de`).then((r) => r.status);
      expect(await Promise.race([answer, new Promise((resolve) => setTimeout(() => resolve('still waiting'), 2000))])).toBe(200);
    } finally {
      release();
      await Promise.all(lists);
    }
  });
});
