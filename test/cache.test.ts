import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ReadSet, tag } from '../src/db/changes.js';
import { ResponseCache, replayKey } from '../src/http/cache.js';
import { basic, NS, TestServer } from './helpers/server.js';

/** The response cache must never answer with anything a fresh computation would not. */
let s: TestServer;
const ALLOWED = ['https://calendar.example', 'https://club.example'];
beforeAll(async () => {
  // debug: the log tells which answers the front gave
  s = await TestServer.start({ logLevel: 'debug', corsOrigins: [...ALLOWED, ...Array.from({ length: 10 }, (_, i) => `https://site${i}.example`)] });
});
afterAll(() => s.close());

const create = async (json: Record<string, unknown>) =>
  (await s.raw('POST', `${NS}/events`, { as: s.admin, json: { start_date: '2031-06-01 10:00', end_date: '2031-06-01 11:00', ...json } })).body;
const list = `${NS}/events?start_date=2031-06-01&end_date=2031-06-30`;

/** Whether the answer of a request (by its request id) was computed, not taken from the cache. */
const computed = (requestId: string) => {
  const line = s.logs.map((l) => JSON.parse(l) as { msg?: string; requestId?: string; cached?: boolean; front?: boolean })
    .find((l) => l.msg === 'request' && l.requestId === requestId);
  return !line!.cached && !line!.front;
};

/**
 * A cache of 16,000 bytes of its own, on the server's change tracker, and a way to keep in it an answer whose body is
 * `size` bytes of `fill`, read from nothing.
 */
async function bareCache(size: number) {
  const cache = new ResponseCache(16_000, s.engine.changes);
  await s.engine.generation();
  const moment = cache.moment;
  const store = (key: string, fill: number) => cache.store(key, { status: 200, bytes: Buffer.alloc(size, fill), headers: {}, linkPrefix: '' }, false, moment, new ReadSet());
  return { cache, store };
}

describe('the response cache is exact', () => {
  it('sees every write through the API at once, in single reads and lists', async () => {
    const e = await create({ title: 'Cached once' });
    expect((await s.raw('GET', `${NS}/events/${e.id}`)).body.title).toBe('Cached once');
    expect((await s.raw('GET', `${NS}/events/${e.id}`)).body.title).toBe('Cached once');
    await s.raw('PATCH', `${NS}/events/${e.id}`, { as: s.admin, json: { title: 'Changed' } });
    expect((await s.raw('GET', `${NS}/events/${e.id}`)).body.title).toBe('Changed');
    const before = (await s.raw('GET', list)).body.total;
    await create({ title: 'One more' });
    expect((await s.raw('GET', list)).body.total).toBe(before + 1);
  });

  it('sees writes made by another connection or process', async () => {
    const e = await create({ title: 'Before the other process' });
    expect((await s.raw('GET', `${NS}/events/${e.id}`)).body.title).toBe('Before the other process');
    // a connection of its own (s.sql), which appends to the change log as every writer does
    await s.sql('UPDATE posts SET title = ? WHERE id = ?', 'Written elsewhere', e.id);
    expect((await s.raw('GET', `${NS}/events/${e.id}`)).body.title).toBe('Written elsewhere');
  });

  it("sees another process's write in the very next read while other requests keep the server busy", async () => {
    // requests that arrive in one turn of the event loop share one reading of the generation, taken after all of them
    // arrived: a reading kept any longer would miss a write acknowledged between two turns
    const e = await create({ title: 'Read under load' });
    const other = await create({ title: 'Read by everyone else' });
    let busy = true;
    const background = Array.from({ length: 12 }, async () => {
      while (busy) expect((await s.raw('GET', `${NS}/events/${other.id}`)).status).toBe(200);
    });
    try {
      for (let round = 0; round < 40; round++) {
        await s.sql('UPDATE posts SET title = ? WHERE id = ?', `Round ${round}`, e.id);
        expect((await s.raw('GET', `${NS}/events/${e.id}`)).body.title).toBe(`Round ${round}`);
      }
    } finally {
      busy = false;
      await Promise.all(background);
    }
  });

  it('publishes a scheduled record the moment its date comes', async () => {
    const due = new Date(Date.now() + 2500).toISOString().slice(0, 19).replace('T', ' ');
    const e = await create({ title: 'Scheduled', date_utc: due });
    expect(e.status).toBe('future');
    expect((await s.raw('GET', `${NS}/events/${e.id}`)).body.code).toBe('event-not-accessible');
    const unlisted = (await s.raw('GET', list)).body.events.map((x: { id: number }) => x.id);
    expect(unlisted).not.toContain(e.id);
    await new Promise((resolve) => setTimeout(resolve, 3200));
    expect((await s.raw('GET', `${NS}/events/${e.id}`)).body.status).toBe('publish');
    expect((await s.raw('GET', list)).body.events.map((x: { id: number }) => x.id)).toContain(e.id);
  });

  it('keeps an event list or feed whose dates stay as they are past its second, and one with a date relative to the clock for its second only', async () => {
    await create({ title: 'Listed past its second', start_date: '2031-12-01 10:00', end_date: '2031-12-01 11:00' });
    const lists = {
      'fixed dates': list, 'the feed of fixed dates': `${NS}/events.ics?start_date=2031-06-01&end_date=2031-06-30`, 'the default window': `${NS}/events`,
      'a relative date': `${NS}/events?start_date=today&end_date=2031-12-31`, 'a feed from a relative date': `${NS}/events.ics?start_date=today&end_date=2031-12-31`,
    };
    const firstDay = new Date().toISOString().slice(0, 10);
    const first = await Promise.all(Object.values(lists).map((path) => s.raw('GET', path)));
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const again = await Promise.all(Object.values(lists).map((path) => s.raw('GET', path)));
    const midnightPassed = new Date().toISOString().slice(0, 10) !== firstDay;
    Object.keys(lists).forEach((what, i) => {
      const relative = /relative/.test(what);
      const movesAtMidnight = relative || what === 'the default window'; // the site is in UTC
      if (!(movesAtMidnight && midnightPassed)) {
        expect(again[i]!.text, what).toBe(first[i]!.text);
        expect(again[i]!.headers.get('etag'), what).toBe(first[i]!.headers.get('etag'));
      }
      if (what === 'the default window' && midnightPassed) return; // computed again then, rightly
      expect(computed(again[i]!.headers.get('x-request-id')!), what).toBe(relative);
    });
  });

  it('keeps venue, organizer, category and tag lists past their second, but one only with upcoming events for its second, and counts a scheduled event once it is due', async () => {
    const category = (await s.raw('POST', `${NS}/categories`, { as: s.admin, json: { name: 'Kept past its second' } })).body.id as number;
    const dueMs = Date.now() + 4000;
    const scheduled = await create({ title: 'Due soon', start_date: '2032-01-05 10:00', end_date: '2032-01-05 11:00', categories: [category], date_utc: new Date(dueMs).toISOString().slice(0, 19).replace('T', ' ') });
    expect(scheduled.status).toBe('future');
    const categories = `${NS}/categories?include=${category}&hide_empty=0`;
    const lists = { venues: `${NS}/venues`, organizers: `${NS}/organizers`, categories, tags: `${NS}/tags?hide_empty=0`, 'venues with upcoming events': `${NS}/venues?only_with_upcoming=1` };
    const first = await Promise.all(Object.values(lists).map((path) => s.raw('GET', path)));
    expect(first[2]!.body.categories[0].count).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const again = await Promise.all(Object.values(lists).map((path) => s.raw('GET', path)));
    expect(Date.now()).toBeLessThan(dueMs); // else the event falling due retired them all
    Object.keys(lists).forEach((what, i) => {
      expect(again[i]!.text, what).toBe(first[i]!.text);
      expect(again[i]!.headers.get('etag'), what).toBe(first[i]!.headers.get('etag'));
      expect(computed(again[i]!.headers.get('x-request-id')!), what).toBe(what === 'venues with upcoming events');
    });
    await new Promise((resolve) => setTimeout(resolve, dueMs + 700 - Date.now()));
    const due = await s.raw('GET', categories);
    expect(computed(due.headers.get('x-request-id')!)).toBe(true);
    expect(due.body.categories[0].count).toBe(1);
  });

  it('computes an answer once for the requests that ask for it together, and each gets it', async () => {
    for (let round = 0; round < 3; round++) {
      const e = await create({ title: `Asked together ${round}` });
      const replies = await Promise.all(Array.from({ length: 8 }, () => s.raw('GET', `${NS}/events/${e.id}`)));
      expect(replies.map((r) => r.status)).toEqual(Array(8).fill(200));
      expect(new Set(replies.map((r) => r.text)).size).toBe(1);
      expect(new Set(replies.map((r) => r.headers.get('etag'))).size).toBe(1);
      const ids = replies.map((r) => r.headers.get('x-request-id'));
      const lines = s.logs.map((l) => JSON.parse(l) as { msg: string; requestId?: string; cached?: boolean; front?: boolean })
        .filter((l) => l.msg === 'request' && ids.includes(l.requestId ?? ''));
      expect(lines).toHaveLength(8);
      expect(lines.filter((l) => !l.cached && !l.front), `round ${round}: answers computed`).toHaveLength(1);
    }
  });

  it('keeps each caller\'s answers apart', async () => {
    const author = await s.user('author', 'cache-author');
    const draft = (await s.raw('POST', `${NS}/events`, { as: author, json: { title: 'Author draft', status: 'draft', start_date: '2031-06-02 10:00', end_date: '2031-06-02 11:00' } })).body;
    const mine = (await s.raw('GET', list, { as: author })).body.events.map((x: { id: number }) => x.id);
    const theirs = (await s.raw('GET', list)).body.events.map((x: { id: number }) => x.id);
    expect(mine).toContain(draft.id);
    expect(theirs).not.toContain(draft.id);
    expect((await s.raw('GET', list, { as: author })).body.events.map((x: { id: number }) => x.id)).toContain(draft.id);
  });
});

describe('an answer stale by the counts it shows alone', () => {
  /**
   * A cache holding one answer that read an event and its category and shows the category's count, and another event
   * in that category since: the answer is stale by its count alone.
   */
  async function staleByCount(name: string) {
    const category = (await s.raw('POST', `${NS}/categories`, { as: s.admin, json: { name } })).body.id as number;
    const event = (await create({ title: name, categories: [category] })).id as number;
    const cache = new ResponseCache(1_000_000, s.engine.changes);
    await s.engine.generation();
    const moment = cache.moment;
    const reads = new ReadSet();
    reads.add([tag.post(event), tag.term(category), tag.termCount(category)]);
    const term = { id: category, count: 1 };
    reads.shownCounts.push({ termId: category, wire: term });
    const bytes = Buffer.from(JSON.stringify({ id: event, categories: [term] }));
    cache.store('answer', { status: 200, bytes, headers: {}, linkPrefix: '' }, false, moment, reads);
    await create({ title: `${name} again`, categories: [category] });
    await s.engine.generation();
    return { cache, category, event };
  }

  it('gets the counts of now written in, and is kept so', async () => {
    const { cache, category, event } = await staleByCount('Patched');
    expect(cache.find('answer')).toBeUndefined();
    const current = (await cache.current('answer', s.engine))!;
    expect(JSON.parse(current.bytes.toString())).toEqual({ id: event, categories: [{ id: category, count: 2 }] });
    expect(cache.find('answer')).toBe(current);
  });

  it('is computed again when anything else it read changed while the counts were read', async () => {
    const { cache, event } = await staleByCount('Raced');
    // the event itself is written, and seen, while the counts are being read
    const racing = Object.create(s.engine) as typeof s.engine;
    racing.termCounts = async (ids) => {
      await s.raw('POST', `${NS}/events/${event}`, { as: s.admin, json: { title: 'Renamed meanwhile' } });
      await s.engine.generation();
      return s.engine.termCounts(ids);
    };
    expect(await cache.current('answer', racing)).toBeUndefined();
    expect(cache.find('answer')).toBeUndefined();
  });
});

describe('what retires cached answers', () => {
  it('not the record of when a password was last used, which no answer shows; any other write does', async () => {
    const generation = async () => s.engine.generation();
    const reader = await s.user('subscriber', 'last-used-reader');
    const lastUsed = async () => (await s.sql<{ at: string | null }>('SELECT p.last_used_utc AS at FROM app_passwords p JOIN users u ON u.id = p.user_id WHERE u.login = ?', 'last-used-reader'))[0]!.at;
    expect(await lastUsed()).toBeNull();
    const before = await generation();
    expect((await s.raw('GET', list, { as: reader })).status).toBe(200);
    // the use is recorded by bookkeeping the answer does not wait for
    await vi.waitFor(async () => expect(await lastUsed()).not.toBeNull(), { timeout: 5_000, interval: 20 });
    expect(await generation()).toEqual(before);
    await create({ title: 'A change every answer may show' });
    expect(await generation()).not.toEqual(before);
  });
});

describe('the front answer (a cached GET answered before Koa)', () => {
  /** Every header line but the two that differ by nature between any two answers. */
  const replayable = (lines: [string, string][]) => lines.filter(([name]) => !/^(x-request-id|date)$/i.test(name));
  const frontAnswered = (requestId: string) => s.frontAnswered(requestId);

  it('sends the very bytes and header lines, in order, that the full pipeline sent, with a request id of its own', async () => {
    const e = await create({ title: 'Replayed', categories: [] });
    const single = `${NS}/events/${e.id}?_fields=id,title,cost`;
    for (const [path, headers] of [[single, {}], [list, {}], [`/de${NS}/events/${e.id}`, {}], [single, { Authorization: basic(s.admin) }]] as const) {
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await s.http('GET', path, headers));
      for (const a of answers) {
        expect(a.status).toBe(200);
        expect(a.text).toBe(answers[0]!.text);
        expect(replayable(a.lines)).toEqual(replayable(answers[0]!.lines));
      }
      expect(new Set(answers.map((a) => a.headers.get('X-Request-Id'))).size).toBe(4);
    }
  });

  it('replays each Origin and each outcome of a conditional request as the pipeline first answered it', async () => {
    const e = await create({ title: 'Front variants' });
    const path = `${NS}/events/${e.id}`;
    const first = await s.http('GET', path);
    const etag = first.headers.get('ETag')!;
    const lastModified = first.headers.get('Last-Modified')!;
    const before = new Date(Date.parse(lastModified) - 3_600_000).toUTCString();
    const variants: [string, Record<string, string>, number][] = [
      ['CORS', { Origin: ALLOWED[0]! }, 200],
      ['another allowed origin', { Origin: ALLOWED[1]! }, 200],
      ['an origin not allowed', { Origin: 'https://elsewhere.example' }, 200],
      ['If-None-Match that matches', { 'If-None-Match': `"other", ${etag}` }, 304],
      ['If-None-Match that does not', { 'If-None-Match': '"other"' }, 200],
      ['If-None-Match that does not, If-Modified-Since that would', { 'If-None-Match': '"other"', 'If-Modified-Since': lastModified }, 200],
      ['If-Modified-Since, unchanged', { 'If-Modified-Since': lastModified }, 304],
      ['If-Modified-Since, changed since', { 'If-Modified-Since': before }, 200],
      ['a browser revalidating', { Origin: ALLOWED[0]!, 'If-None-Match': etag, 'If-Modified-Since': lastModified }, 304],
    ];
    // what the pipeline has answered so far, by status and Origin: the first GET of each is its own
    const seen = new Set(['200 ']);
    for (const [what, headers, status] of variants) {
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await s.http('GET', path, headers));
      const served = answers.map((a) => frontAnswered(a.headers.get('X-Request-Id')!));
      const variant = `${status} ${headers.Origin ?? ''}`;
      expect(served, what).toEqual([seen.has(variant), true, true]);
      seen.add(variant);
      for (const a of answers) {
        expect(a.status, what).toBe(status);
        expect(a.text, what).toBe(status === 304 ? '' : first.text);
        expect(replayable(a.lines), what).toEqual(replayable(answers[0]!.lines));
      }
      const allowed = headers.Origin !== undefined && ALLOWED.includes(headers.Origin);
      expect(answers[2]!.headers.get('Access-Control-Allow-Origin'), what).toBe(allowed ? headers.Origin : null);
    }
  });

  it('keeps a few origins of an answer, and answers any other through the pipeline, just as right', async () => {
    const e = await create({ title: 'Many origins' });
    const path = `${NS}/events/${e.id}`;
    await s.http('GET', path);
    const fronted: boolean[] = [];
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 10; i++) {
        const origin = `https://site${i}.example`;
        const a = await s.http('GET', path, { Origin: origin });
        expect(a.headers.get('Access-Control-Allow-Origin')).toBe(origin);
        if (round === 1) fronted.push(frontAnswered(a.headers.get('X-Request-Id')!));
      }
    }
    // the answer without Origin holds one of the eight places
    expect(fronted).toEqual([...Array(7).fill(true), ...Array(3).fill(false)]);
  });

  it('counts what the header lines of the variants take against the cache\'s bytes', async () => {
    const { cache, store } = await bareCache(2000);
    const first = store('first', 1)!;
    store('second', 2);
    const lines = (origin: string) => ['Access-Control-Allow-Origin', origin, 'X-Padding', origin.repeat(50)];
    for (let i = 0; i < 12; i++) cache.keepReplay('first', first, replayKey(200, `https://site${i}.example`), () => lines(`https://site${i}.example`));
    expect(first.replays!.size).toBe(8);
    expect(cache.find('first')).toBe(first);
    // four answers of 2,000 bytes fit in 16,000; with its variants (their own padding, about 1,050 characters each)
    // the first takes 11,000 or so, so the fourth pushes it out
    store('third', 3);
    store('fourth', 4);
    expect(cache.find('first')).toBeUndefined();
    expect(cache.find('second')).toBeDefined();
    expect(cache.find('fourth')).toBeDefined();
  });

  it('holds one copy of a body several answers share, counted once until its last holder goes', async () => {
    const { cache, store } = await bareCache(3000);
    // one event by id and by slug, for a visitor and for a signed-in user: four answers, one body
    const shared = ['by id', 'by slug', 'signed in, by id', 'signed in, by slug'];
    const held = shared.map((key) => store(key, 1)!);
    expect(new Set(held.map((a) => a.bytes)).size).toBe(1);
    // and the header lines both were sent with, once
    const variant = replayKey(200, '');
    for (const [i, key] of ['by id', 'by slug'].entries()) cache.keepReplay(key, held[i]!, variant, () => ['ETag', '"x"', 'Content-Length', '3000']);
    expect(cache.find('by id')!.replays!.get(variant)).toBe(cache.find('by slug')!.replays!.get(variant));
    // 3,000 bytes counted once: four other bodies fit beside it in 16,000 (counted four times, they would not)
    for (let n = 2; n <= 5; n++) store(`other ${n}`, n);
    for (const key of [...shared, 'other 2', 'other 5']) expect(cache.find(key)).toBeDefined();
    // a sixth body pushes out the oldest entries until the shared body's last holder is gone, and no further
    store('other 6', 6);
    for (const key of shared) expect(cache.find(key)).toBeUndefined();
    for (let n = 2; n <= 6; n++) expect(cache.find(`other ${n}`)).toBeDefined();
  });

  it('leaves to the full pipeline another address for the site and a method override', async () => {
    const e = await create({ title: 'Front bypassed' });
    const path = `${NS}/events/${e.id}`;
    const first = await s.http('GET', path);
    await s.http('GET', path);
    // another address for the site: links of its own
    const other = await s.http('GET', path, { Host: 'calendar.example:8080' });
    expect(other.body.url).toBe(first.body.url.replace(/^http:\/\/[^/]+/, 'http://calendar.example:8080'));
    expect(other.headers.get('Link')).toContain('http://calendar.example:8080/wp-json/');
    // a method override on a GET that was answered from the cache is that method
    const deleted = await s.http('GET', path, { 'X-HTTP-Method-Override': 'DELETE', Authorization: basic(s.admin) });
    expect(deleted.status).toBe(200);
    expect(deleted.body.status).toBe('trash');
    expect((await s.http('GET', path)).body.code).toBe('event-no-longer-available');
  });

  it('answers a caller it knows only while nothing was written, and credentials it cannot vouch for go through authentication', async () => {
    const author = await s.user('author', 'front-author');
    const draft = (await s.raw('POST', `${NS}/events`, { as: author, json: { title: 'Front draft', status: 'draft', start_date: '2031-06-03 10:00', end_date: '2031-06-03 11:00' } })).body;
    const path = `${NS}/events/${draft.id}`;
    for (let i = 0; i < 3; i++) expect((await s.http('GET', path, { Authorization: basic(author) })).status).toBe(200);
    expect((await s.http('GET', path, { Authorization: basic({ login: 'front-author', password: 'wrong' }) })).status).toBe(401);
    expect((await s.http('GET', path, { Authorization: 'Bearer something' })).body.code).toBe('event-not-accessible');
    expect((await s.http('GET', path)).body.code).toBe('event-not-accessible');
    const [password] = await s.sql<{ userId: number; uuid: string }>('SELECT p.user_id AS "userId", p.uuid FROM app_passwords p JOIN users u ON u.id = p.user_id WHERE u.login = ?', 'front-author');
    expect(await s.engine.write((unit) => unit.users.revokePassword(password!.userId, password!.uuid))).toBe(true);
    expect((await s.http('GET', path, { Authorization: basic(author) })).status).toBe(401);
  });
});
