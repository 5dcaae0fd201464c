import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generationOf } from '../src/db/generation.js';
import { basic, NS, TestServer } from './helpers/server.js';

/** The response cache must never answer with anything a fresh computation would not. */
let s: TestServer;
beforeAll(async () => {
  s = await TestServer.start();
});
afterAll(() => s.close());

const create = async (json: Record<string, unknown>) =>
  (await s.raw('POST', `${NS}/events`, { as: s.admin, json: { start_date: '2031-06-01 10:00', end_date: '2031-06-01 11:00', ...json } })).body;
const list = `${NS}/events?start_date=2031-06-01&end_date=2031-06-30`;

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
    const other = new Database(s.config.dbPath);
    other.prepare('UPDATE posts SET title = ? WHERE id = ?').run('Written elsewhere', e.id);
    other.close();
    expect((await s.raw('GET', `${NS}/events/${e.id}`)).body.title).toBe('Written elsewhere');
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

  it('keeps each caller\'s answers apart', async () => {
    const author = s.user('author', 'cache-author');
    const draft = (await s.raw('POST', `${NS}/events`, { as: author, json: { title: 'Author draft', status: 'draft', start_date: '2031-06-02 10:00', end_date: '2031-06-02 11:00' } })).body;
    const mine = (await s.raw('GET', list, { as: author })).body.events.map((x: { id: number }) => x.id);
    const theirs = (await s.raw('GET', list)).body.events.map((x: { id: number }) => x.id);
    expect(mine).toContain(draft.id);
    expect(theirs).not.toContain(draft.id);
    expect((await s.raw('GET', list, { as: author })).body.events.map((x: { id: number }) => x.id)).toContain(draft.id);
  });
});

describe('what retires cached answers', () => {
  it('not the record of when a password was last used, which no answer shows; any other write does', async () => {
    const generation = generationOf(s.db);
    const reader = s.user('subscriber', 'last-used-reader');
    const lastUsed = () => s.db.prepare<[string], { at: string | null }>('SELECT p.last_used_utc AS at FROM app_passwords p JOIN users u ON u.id = p.user_id WHERE u.login = ?').get('last-used-reader')!.at;
    expect(lastUsed()).toBeNull();
    const before = generation();
    expect((await s.raw('GET', list, { as: reader })).status).toBe(200);
    expect(lastUsed()).not.toBeNull();
    expect(generation()).toEqual(before);
    await create({ title: 'A change every answer may show' });
    expect(generation()).not.toEqual(before);
  });
});

describe('the front answer (a cached GET answered before Koa)', () => {
  /** Every header line but the two that differ by nature between any two answers. */
  const replayable = (lines: [string, string][]) => lines.filter(([name]) => !/^(x-request-id|date)$/i.test(name));

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

  it('leaves to the full pipeline every header that changes the answer', async () => {
    const e = await create({ title: 'Front bypassed' });
    const path = `${NS}/events/${e.id}`;
    const first = await s.http('GET', path);
    await s.http('GET', path);
    // CORS
    const cors = await s.http('GET', path, { Origin: 'https://calendar.example' });
    expect(cors.headers.get('Access-Control-Allow-Origin')).toBe('https://calendar.example');
    // conditional requests
    expect((await s.http('GET', path, { 'If-None-Match': first.headers.get('ETag')! })).status).toBe(304);
    expect((await s.http('GET', path, { 'If-Modified-Since': first.headers.get('Last-Modified')! })).status).toBe(304);
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
    const author = s.user('author', 'front-author');
    const draft = (await s.raw('POST', `${NS}/events`, { as: author, json: { title: 'Front draft', status: 'draft', start_date: '2031-06-03 10:00', end_date: '2031-06-03 11:00' } })).body;
    const path = `${NS}/events/${draft.id}`;
    for (let i = 0; i < 3; i++) expect((await s.http('GET', path, { Authorization: basic(author) })).status).toBe(200);
    expect((await s.http('GET', path, { Authorization: basic({ login: 'front-author', password: 'wrong' }) })).status).toBe(401);
    expect((await s.http('GET', path, { Authorization: 'Bearer something' })).body.code).toBe('event-not-accessible');
    expect((await s.http('GET', path)).body.code).toBe('event-not-accessible');
    const password = s.db.prepare<[string], { userId: number; uuid: string }>('SELECT p.user_id AS userId, p.uuid FROM app_passwords p JOIN users u ON u.id = p.user_id WHERE u.login = ?').get('front-author')!;
    expect(s.repos.users.revokePassword(password.userId, password.uuid)).toBe(true);
    expect((await s.http('GET', path, { Authorization: basic(author) })).status).toBe(401);
  });
});
