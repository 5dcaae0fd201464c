import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NS, TestServer, type Credentials } from './helpers/server.js';

/**
 * `context=edit` (reference behaviour.md §11): a caller who may edit a password-protected record gets it whole, as
 * the plugin answers; WordPress refuses the edit context to callers without the right to edit (rest_forbidden_context).
 */
let s: TestServer;
let contributor: Credentials;
let author: Credentials;
let editor: Credentials;
let subscriber: Credentials;
beforeAll(async () => {
  s = await TestServer.start();
  contributor = await s.user('contributor');
  author = await s.user('author');
  editor = await s.user('editor');
  subscriber = await s.user('subscriber');
});
afterAll(() => s.close());

const get = (path: string, as?: Credentials) => s.raw('GET', `${NS}${path}`, { as });
const create = async (path: string, json: Record<string, unknown>, as: Credentials = s.admin) => {
  const r = await s.raw('POST', `${NS}${path}`, { as, json });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
};
const expectRefused = (r: { status: number; body: { code: string; message: string } }, status: number, message: string) =>
  expect([r.status, r.body.code, r.body.message]).toEqual([status, 'rest_forbidden_context', message]);

describe('the edit context of events', () => {
  it('gives a password-protected event whole to who may edit it, by id and by slug', async () => {
    const venue = await create('/venues', { venue: 'Vault', city: 'Basel', password: 'v-pw' });
    const e = await create('/events', { title: 'Sealed', description: 'Inside', cost: '12', start_date: '2032-05-01 10:00', end_date: '2032-05-01 11:00', password: 'pw', venue: venue.id });
    expect((await get(`/events/${e.id}`, s.admin)).body.code).toBe('event-password-protected');
    expect((await get(`/events/${e.id}?context=view`, s.admin)).body.code).toBe('event-password-protected');
    for (const path of [`/events/${e.id}?context=edit`, `/events/by-slug/${e.slug}?context=edit`]) {
      const r = await get(path, s.admin);
      expect(r.status, path).toBe(200);
      expect(r.body).toMatchObject({ id: e.id, description: '<p>Inside</p>', cost: '$12', venue: { id: venue.id, city: 'Basel' } });
    }
    // its author may edit it while it is a draft, and so reads it whole
    const own = await create('/events', { title: 'Own sealed', description: 'Mine', start_date: '2032-05-02 10:00', end_date: '2032-05-02 11:00', password: 'pw', status: 'draft' }, contributor);
    expect((await get(`/events/${own.id}?context=edit`, contributor)).body.description).toBe('<p>Mine</p>');
  });

  it('refuses the edit context to callers who may not edit the event: 401 anonymous, 403 signed in, after a 404', async () => {
    const e = await create('/events', { title: 'Not for you', start_date: '2032-05-03 10:00', end_date: '2032-05-03 11:00' });
    expectRefused(await get(`/events/${e.id}?context=edit`), 401, 'Sorry, you are not allowed to edit this post.');
    expectRefused(await get(`/events/${e.id}?context=edit`, contributor), 403, 'Sorry, you are not allowed to edit this post.');
    expectRefused(await get(`/events/by-slug/${e.slug}?context=edit`, subscriber), 403, 'Sorry, you are not allowed to edit this post.');
    expect((await get(`/events/${e.id}?context=edit`, editor)).status).toBe(200);
    expect((await get(`/events/${e.id}?context=anything`)).status).toBe(200);
    expect((await get('/events/999999?context=edit')).body.code).toBe('rest-event-not-found');
  });

  it('leaves protected events of a list whole for who may edit them, blanked for the others', async () => {
    const window = 'start_date=2032-06-01&end_date=2032-06-30';
    const admins = await create('/events', { title: 'Admin gala', description: 'Secret', start_date: '2032-06-10 19:00', end_date: '2032-06-10 23:00', password: 'pw' });
    const theirs = await create('/events', { title: 'Contributor gala', description: 'Also secret', start_date: '2032-06-11 19:00', end_date: '2032-06-11 23:00', password: 'pw', status: 'draft' }, contributor);
    const byId = (body: { events: { id: number; description: string }[] }) => new Map(body.events.map((e) => [e.id, e.description]));
    const plain = byId((await get(`/events?${window}`, s.admin)).body);
    expect([plain.get(admins.id), plain.get(theirs.id)]).toEqual(['', '']);
    const edited = byId((await get(`/events?${window}&context=edit`, s.admin)).body);
    expect([edited.get(admins.id), edited.get(theirs.id)]).toEqual(['<p>Secret</p>', '<p>Also secret</p>']);
    const asContributor = byId((await get(`/events?${window}&context=edit`, contributor)).body);
    expect([asContributor.get(admins.id), asContributor.get(theirs.id)]).toEqual(['', '<p>Also secret</p>']);
    const next = (await get(`/events?${window}&context=edit&per_page=1`, s.admin)).body;
    expect(next.next_rest_url).toContain('context=edit');
    expectRefused(await get(`/events?${window}&context=edit`), 401, 'Sorry, you are not allowed to edit posts in this post type.');
    expectRefused(await get(`/events?${window}&context=edit`, subscriber), 403, 'Sorry, you are not allowed to edit posts in this post type.');
    // a mirror kept in sync with edit rights receives them whole too
    const sync = await get(`/events?modified_after=2000-01-01&context=edit&per_page=50`, s.admin);
    expect(sync.status).toBe(200);
  });
});

describe('the edit context of venues and organizers', () => {
  it('gives protected venues and organizers whole to who may edit them, singly and in lists', async () => {
    const venue = await create('/venues', { venue: 'Locked hall', city: 'Zug', password: 'pw' });
    const organizer = await create('/organizers', { organizer: 'Locked club', email: 'club@example.test', password: 'pw' });
    expect((await get(`/venues/${venue.id}`, s.admin)).body.city).toBe('');
    expect((await get(`/venues/${venue.id}?context=edit`, s.admin)).body.city).toBe('Zug');
    expect((await get(`/venues/by-slug/${venue.slug}?context=edit`, editor)).body.city).toBe('Zug');
    expect((await get(`/organizers/${organizer.id}?context=edit`, s.admin)).body.email).toBe('club@example.test');
    const venues = (await get('/venues?context=edit&per_page=50', s.admin)).body.venues as { id: number; city?: string }[];
    expect(venues.find((v) => v.id === venue.id)?.city).toBe('Zug');
    const organizers = (await get('/organizers?context=edit&per_page=50', editor)).body.organizers as { id: number; email?: string }[];
    expect(organizers.find((o) => o.id === organizer.id)?.email).toBe('club@example.test');
    expectRefused(await get(`/venues/${venue.id}?context=edit`, author), 403, 'Sorry, you are not allowed to edit this post.');
    expectRefused(await get('/organizers?context=edit'), 401, 'Sorry, you are not allowed to edit posts in this post type.');
    expect((await get(`/venues/999999?context=edit`)).status).toBe(400);
  });
});

describe('the edit context of categories and tags', () => {
  it('is for who may edit terms of the taxonomy: authors for categories, editors for tags', async () => {
    const category = await create('/categories', { name: 'Context category' });
    const tag = await create('/tags', { name: 'Context tag' });
    expect((await get(`/categories/${category.id}?context=edit`, author)).body).toMatchObject({ id: category.id, name: 'Context category' });
    expect((await get('/categories?context=edit&hide_empty=0', author)).status).toBe(200);
    expectRefused(await get(`/categories/${category.id}?context=edit`, contributor), 403, 'Sorry, you are not allowed to edit this term.');
    expectRefused(await get('/categories?context=edit'), 401, 'Sorry, you are not allowed to edit terms in this taxonomy.');
    expectRefused(await get(`/tags/${tag.id}?context=edit`, author), 403, 'Sorry, you are not allowed to edit this term.');
    expectRefused(await get('/tags?context=edit', subscriber), 403, 'Sorry, you are not allowed to edit terms in this taxonomy.');
    expect((await get(`/tags/${tag.id}?context=edit`, editor)).body.name).toBe('Context tag');
    // the answer is the view context's
    expect((await get(`/tags/${tag.id}?context=edit`, editor)).body).toEqual((await get(`/tags/${tag.id}`, editor)).body);
  });
});
