import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NS, TestServer } from './helpers/server.js';

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
