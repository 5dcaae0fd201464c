import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NS, TestServer, type Credentials } from './helpers/server.js';

let s: TestServer;
let author: Credentials;
beforeAll(async () => {
  s = await TestServer.start({ siteTimezone: 'Europe/Berlin' });
  author = await s.user('author');
});
afterAll(() => s.close());

type Item = { id: number; status: string; title?: string; venue?: string; modified: string; modified_utc: string };
type Page = { events?: Item[]; venues?: Item[]; organizers?: Item[]; rest_url: string; next_rest_url?: string; sync_rest_url: string; total: number; total_pages: number };

/** Sync only lists changes at least two seconds old. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 2100));
const utcNow = () => new Date().toISOString().slice(0, 19).replace('T', ' ');
const create = async (json: Record<string, unknown>, as: Credentials = s.admin) => {
  const r = await s.raw('POST', `${NS}/events`, { as, json: { start_date: '2027-06-01 10:00:00', end_date: '2027-06-01 11:00:00', ...json } });
  expect(r.status).toBe(201);
  return r.body as Item;
};
/** Walks a whole pass from a URL (following next_rest_url); returns the items and where the next pass starts. */
async function pass(url: string, as?: Credentials): Promise<{ items: Item[]; next: string; pages: number }> {
  const items: Item[] = [];
  let pages = 0;
  let at: string | undefined = url;
  let page!: Page;
  while (at) {
    const r = await s.raw<Page>('GET', at.slice(s.baseUrl.length), { as });
    expect(r.status, at).toBe(200);
    page = r.body;
    items.push(...(page.events ?? page.venues ?? page.organizers ?? []));
    pages++;
    at = page.next_rest_url;
  }
  return { items, next: page.sync_rest_url, pages };
}

describe('modified_after: incremental sync', () => {
  it('returns the changes after a time in (modified_utc, id) order, past the date window and hide_from_listings', async () => {
    const since = utcNow();
    await settle();
    const a = await create({ title: 'Sync far past', start_date: '2001-01-01 10:00:00', end_date: '2001-01-01 11:00:00' });
    const b = await create({ title: 'Sync hidden', hide_from_listings: true });
    const c = await create({ title: 'Sync far future', start_date: '2090-01-01 10:00:00', end_date: '2090-01-01 11:00:00' });
    await settle();
    const r = await s.raw<Page>('GET', `${NS}/events?modified_after=${encodeURIComponent(since)}`);
    expect(r.status).toBe(200);
    const items = r.body.events!;
    expect(items.map((e) => e.id)).toEqual([a.id, b.id, c.id]);
    expect(items.map((e) => e.title)).toEqual(['Sync far past', 'Sync hidden', 'Sync far future']);
    const keys = items.map((e) => `${e.modified_utc}#${String(e.id).padStart(9, '0')}`);
    expect([...keys].sort()).toEqual(keys);
    expect(r.body.total).toBe(3);
    expect(r.headers.get('x-tec-total')).toBe('3');
    // exclusive: from the last change on, nothing
    const after = await s.raw<Page>('GET', `${NS}/events?modified_after=${encodeURIComponent(items[2]!.modified_utc)}&modified_after_id=${c.id}`);
    expect(after.body.events).toEqual([]);
  });

  it('sends tombstones for records the caller may not read, and nothing else of them', async () => {
    const since = utcNow();
    await settle();
    const published = await create({ title: 'Sync becomes draft' });
    const trashed = await create({ title: 'Sync trashed' });
    const draft = await create({ title: 'Sync secret draft', status: 'draft' }, author);
    expect((await s.raw('POST', `${NS}/events/${published.id}`, { as: s.admin, json: { status: 'draft' } })).status).toBe(200);
    expect((await s.raw('DELETE', `${NS}/events/${trashed.id}`, { as: s.admin })).status).toBe(200);
    await settle();
    const anonymous = await s.raw<Page>('GET', `${NS}/events?modified_after=${encodeURIComponent(since)}`);
    const byId = new Map(anonymous.body.events!.map((e) => [e.id, e]));
    expect(Object.keys(byId.get(published.id)!).sort()).toEqual(['id', 'modified', 'modified_utc', 'status']);
    expect(byId.get(published.id)!.status).toBe('unavailable');
    expect(byId.get(trashed.id)!.status).toBe('trash');
    expect(byId.get(draft.id)).toEqual({ id: draft.id, status: 'unavailable', modified: expect.any(String), modified_utc: expect.any(String) });
    expect(anonymous.text).not.toContain('secret');
    // the site-local time is the site timezone's (Europe/Berlin: UTC+1 in winter, +2 in summer)
    const t = byId.get(draft.id)!;
    const offsetHours = (Date.parse(t.modified.replace(' ', 'T') + 'Z') - Date.parse(t.modified_utc.replace(' ', 'T') + 'Z')) / 3_600_000;
    expect([1, 2]).toContain(offsetHours);

    // the author reads their own draft whole; an editor's view (any status) reads everything but the trash
    const mine = await s.raw<Page>('GET', `${NS}/events?modified_after=${encodeURIComponent(since)}`, { as: author });
    expect(mine.body.events!.find((e) => e.id === draft.id)!.title).toBe('Sync secret draft');
    const admin = await s.raw<Page>('GET', `${NS}/events?modified_after=${encodeURIComponent(since)}`, { as: s.admin });
    expect(admin.body.events!.find((e) => e.id === published.id)!.status).toBe('draft');
    expect(admin.body.events!.find((e) => e.id === trashed.id)!.status).toBe('trash');
    expect(Object.keys(admin.body.events!.find((e) => e.id === trashed.id)!)).toHaveLength(4);
    const trashView = await s.raw<Page>('GET', `${NS}/events?modified_after=${encodeURIComponent(since)}&status=trash`, { as: s.admin });
    expect(trashView.body.events!.find((e) => e.id === trashed.id)!.title).toBe('Sync trashed');
  });

  it('reports records deleted for good as trash tombstones', async () => {
    const gone = await create({ title: 'Sync purged' });
    expect((await s.raw('DELETE', `${NS}/events/${gone.id}`, { as: s.admin })).status).toBe(200);
    const since = utcNow();
    await settle();
    await s.sql("UPDATE posts SET modified_utc = '2000-01-01 00:00:00' WHERE id = ?", gone.id);
    execFileSync(process.execPath, ['dist/src/cli.js', 'trash', 'purge', '--older-than', '1d'], {
      env: { ...process.env, ALMANAC_DB: s.config.dbPath, ALMANAC_DATABASE_URL: s.config.databaseUrl ?? '' },
    });
    await settle();
    const r = await s.raw<Page>('GET', `${NS}/events?modified_after=${encodeURIComponent(since)}`);
    const tomb = r.body.events!.find((e) => e.id === gone.id)!;
    expect(tomb.status).toBe('trash');
    expect(tomb.modified_utc >= since).toBe(true);
    expect((await s.raw('GET', `${NS}/events/${gone.id}`)).status).toBe(404);
    // an import writing the record back under its id lifts the tombstone
    const now = utcNow();
    await s.sql(`INSERT INTO posts (id, type, status, slug, title, date_local, date_utc, modified_local, modified_utc, lang, translation_group)
                 VALUES (?, 'event', 'draft', 'back-again', 'Back again', ?, ?, ?, ?, 'en', ?)`, gone.id, now, now, now, now, gone.id);
    expect(await s.sql('SELECT CAST(COUNT(*) AS INTEGER) AS n FROM deleted_posts WHERE id = ?', gone.id)).toEqual([{ n: 0 }]);
  });

  it('walks a pass by position, so a change during the pass pushes nothing off a page, and resumes from sync_rest_url', async () => {
    const since = utcNow();
    await settle();
    const ids: number[] = [];
    for (let i = 0; i < 7; i++) ids.push((await create({ title: `Sync paged ${i}` })).id);
    await settle();
    const first = await s.raw<Page>('GET', `${NS}/events?modified_after=${encodeURIComponent(since)}&per_page=3`);
    expect(first.body.events!.map((e) => e.id)).toEqual(ids.slice(0, 3));
    expect(first.body.total).toBe(7);
    expect(first.body.total_pages).toBe(3);
    expect(first.body.next_rest_url).toContain('modified_after_id=' + ids[2]);
    // a record of page 1 changes during the pass: page 2 still starts right after page 1
    expect((await s.raw('POST', `${NS}/events/${ids[1]}`, { as: s.admin, json: { title: 'Sync paged 1, edited' } })).status).toBe(200);
    const rest = await pass(first.body.next_rest_url!);
    expect(rest.items.map((e) => e.id)).toEqual(ids.slice(3));
    // the next pass brings the edit
    await settle();
    const next = await pass(rest.next);
    expect(next.items.map((e) => [e.id, e.title])).toEqual([[ids[1], 'Sync paged 1, edited']]);
    expect((await pass(next.next)).items).toEqual([]);
  });

  it('keeps a mirror equal to the site through creates, edits, unpublishing and trashing', async () => {
    const mirror = new Map<number, Item>();
    const apply = (items: Item[]) => {
      for (const item of items) {
        if (item.status === 'trash' || item.status === 'unavailable') mirror.delete(item.id);
        else mirror.set(item.id, item);
      }
    };
    let cursor = `${s.baseUrl}${NS}/organizers?modified_after=${encodeURIComponent('2000-01-01 00:00:00')}&per_page=4`;
    const created: number[] = [];
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 3; i++) created.push((await s.raw('POST', `${NS}/organizers`, { as: s.admin, json: { organizer: `Mirror ${round}-${i}` } })).body.id);
      await s.raw('POST', `${NS}/organizers/${created[round]}`, { as: s.admin, json: { phone: `555-${round}` } });
      if (round === 1) await s.raw('DELETE', `${NS}/organizers/${created[0]}`, { as: s.admin });
      if (round === 2) await s.raw('POST', `${NS}/organizers/${created[1]}`, { as: s.admin, json: { status: 'draft' } });
      await settle();
      const p = await pass(cursor);
      apply(p.items);
      cursor = p.next;
    }
    const site = await s.raw<{ organizers: Item[] }>('GET', `${NS}/organizers?per_page=50`);
    expect(new Map(site.body.organizers.map((o) => [o.id, o]))).toEqual(mirror);
  });

  it('refuses content filters, page numbers and stray cursor parameters, with 400 naming each', async () => {
    const bad = async (query: string, names: string[]) => {
      const r = await s.raw('GET', `${NS}/events?${query}`);
      expect(r.status, query).toBe(400);
      expect(Object.keys(r.body.data.params).sort(), query).toEqual(names.sort());
    };
    await bad('modified_after=2026-01-01&search=x&categories=1', ['search', 'categories']);
    await bad('modified_after=2026-01-01&start_date=2026-01-01', ['start_date']);
    await bad('modified_after=2026-01-01&page=2', ['page']);
    await bad('modified_after_id=4', ['modified_after_id']);
    await bad('modified_after=not-a-time', ['modified_after']);
    const venues = await s.raw('GET', `${NS}/venues?modified_after=2026-01-01&has_events=1`);
    expect(venues.status).toBe(400);
    expect(Object.keys(venues.body.data.params)).toEqual(['has_events']);
  });

  it('ends each pass at a settled time and never later than modified_before', async () => {
    const r = await s.raw<Page>('GET', `${NS}/venues?modified_after=${encodeURIComponent('2020-01-01 00:00:00')}&modified_before=${encodeURIComponent('2099-01-01 00:00:00')}`);
    const until = decodeURIComponent(/modified_before=([^&]+)/.exec(r.body.rest_url)![1]!);
    expect(until <= utcNow()).toBe(true);
    expect(r.body.sync_rest_url).toContain('modified_after=' + encodeURIComponent(until));
    const early = await s.raw<Page>('GET', `${NS}/venues?modified_after=${encodeURIComponent('2020-01-01 00:00:00')}&modified_before=${encodeURIComponent('2020-06-01 00:00:00')}`);
    expect(early.body.venues).toEqual([]);
    expect(early.body.sync_rest_url).toContain('modified_after=' + encodeURIComponent('2020-06-01 00:00:00'));
  });
});
