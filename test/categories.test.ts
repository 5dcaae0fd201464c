import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertEvent, NS, TestServer, type Credentials } from './helpers/server.js';
import { withWriteLockHeld, writeWaiting } from './helpers/writeLock.js';

let s: TestServer;
let author: Credentials;
let contributor: Credentials;
let subscriber: Credentials;

beforeAll(async () => {
  s = await TestServer.start();
  author = await s.user('author');
  contributor = await s.user('contributor');
  subscriber = await s.user('subscriber');
});
afterAll(() => s.close());

const create = (body: Record<string, unknown>, as: Credentials = s.admin) => s.raw('POST', `${NS}/categories`, { as, json: body });

describe('creating categories', () => {
  it('creates a category with the plugin shape, _links and Location', async () => {
    const { data, response } = await s.client(s.admin).POST(`${NS}/categories`, { body: { name: 'Music', description: 'Concerts and gigs' } });
    expect(response.status).toBe(201);
    expect(data).toMatchObject({ name: 'Music', slug: 'music', description: 'Concerts and gigs', taxonomy: 'tribe_events_cat', parent: 0, count: 0, meta: [], lang: 'en' });
    expect(Object.keys(data!)).toEqual(['id', 'count', 'description', 'name', 'slug', 'taxonomy', 'parent', 'meta', 'url', 'urls', 'lang', 'translations', '_links']);
    expect(data!.url).toBe(`${s.baseUrl}/events/category/music/`);
    expect(data!.urls).toEqual({ self: `${s.baseUrl}${NS}/categories/${data!.id}`, collection: `${s.baseUrl}${NS}/categories` });
    expect(data!.translations).toEqual({ en: data!.id });
    expect(data!._links!.self[0]!.targetHints.allow).toEqual(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
    expect(response.headers.get('Location')).toBe(`${s.baseUrl}${NS}/categories/${data!.id}`);
  });

  it('escapes names as WordPress stores them and strips tags', async () => {
    const r = await create({ name: '  Food <b>&</b> Drink ' });
    expect(r.status).toBe(201);
    expect(r.body.name).toBe('Food &amp; Drink');
    expect(r.body.slug).toBe('food-drink');
    const again = await create({ name: 'Caf&eacute; &amp; more' });
    expect(again.body.name).toBe('Caf&eacute; &amp; more');
  });

  it('nests children: archive URL, urls.up, _links.up', async () => {
    const parent = await create({ name: 'Performing arts' });
    const child = await create({ name: 'Opera', parent: parent.body.id });
    expect(child.status).toBe(201);
    expect(child.body.parent).toBe(parent.body.id);
    expect(child.body.url).toBe(`${s.baseUrl}/events/category/performing-arts/opera/`);
    expect(child.body.urls.up).toBe(`${s.baseUrl}${NS}/categories/${parent.body.id}`);
    expect(child.body._links.up).toEqual([{ href: `${s.baseUrl}${NS}/categories/${parent.body.id}`, embeddable: true }]);
  });

  it('refuses a duplicate name under the same parent with term_exists, any case', async () => {
    const first = await create({ name: 'Theatre' });
    const dup = await create({ name: 'THEATRE' });
    expect(dup.status).toBe(400);
    expect(dup.body).toEqual({ code: 'term_exists', message: 'A term with the name provided already exists with this parent.', data: { status: 400, term_id: first.body.id }, additional_data: [first.body.id, first.body.id] });
    const elsewhere = await create({ name: 'Theatre', parent: first.body.id });
    expect(elsewhere.status).toBe(201);
    expect(elsewhere.body.slug).toBe('theatre-theatre');
  });

  it('makes slugs unique with -2, -3 and accepts a requested slug', async () => {
    const a = await create({ name: 'Sport', slug: 'games' });
    const b = await create({ name: 'Games', slug: 'Games!' });
    const c = await create({ name: 'More games', slug: 'games' });
    expect([a.body.slug, b.body.slug, c.body.slug]).toEqual(['games', 'games-2', 'games-3']);
  });

  it('reports missing and invalid parameters the WordPress way', async () => {
    expect((await create({ description: 'no name' })).body).toEqual({ code: 'rest_missing_callback_param', message: 'Missing parameter(s): name', data: { status: 400, params: ['name'] } });
    const empty = await create({ name: '', description: '' });
    expect(empty.body).toEqual({ code: 'rest_invalid_param', message: 'Invalid parameter(s): name, description', data: { status: 400, params: { name: 'Invalid parameter.', description: 'Invalid parameter.' }, details: [] } });
    expect((await create({ name: 'Orphan', parent: 999999 })).body.data.params).toEqual({ parent: 'Invalid parameter.' });
    const typed = await create({ name: 42 });
    expect(typed.status).toBe(400);
    expect(typed.body.data.params).toEqual({ name: 'Invalid parameter.' });
    expect((await create({ name: '<b></b>' })).body.code).toBe('empty_term_name');
  });

  it('accepts form bodies, and body fields sent in the query string', async () => {
    const form = await s.raw('POST', `${NS}/categories`, { as: s.admin, form: 'name=Form+%26+Co&description=From%20a%20form' });
    expect(form.status).toBe(201);
    expect(form.body).toMatchObject({ name: 'Form &amp; Co', description: 'From a form' });
    const query = await s.raw('POST', `${NS}/categories?name=From+query`, { as: s.admin });
    expect(query.status).toBe(201);
    expect(query.body.name).toBe('From query');
  });

  it('validates before permissions, then needs author or better', async () => {
    expect((await s.raw('POST', `${NS}/categories`, { json: {} })).status).toBe(400);
    const anonymous = await s.raw('POST', `${NS}/categories`, { json: { name: 'Nope' } });
    expect(anonymous.body).toEqual({ code: 'rest_forbidden', message: 'Sorry, you are not allowed to do that.', data: { status: 401 } });
    expect((await create({ name: 'Nope' }, subscriber)).status).toBe(403);
    expect((await create({ name: 'Nope' }, contributor)).status).toBe(403);
    expect((await create({ name: 'By an author' }, author)).status).toBe(201);
  });
});

describe('reading, updating and deleting categories', () => {
  it('reads one category by id; unknown ids fail validation; non-digits are no route', async () => {
    const made = await create({ name: 'Readable' });
    const { data, response } = await s.client().GET(`${NS}/categories/{id}`, { params: { path: { id: made.body.id } } });
    expect(response.status).toBe(200);
    expect(data!.name).toBe('Readable');
    expect(data!._links!.self[0]!.targetHints.allow).toEqual(['GET']);
    expect(response.headers.get('Allow')).toBe('GET');
    expect((await s.raw('GET', `${NS}/categories/999999`)).body).toEqual({ code: 'rest_invalid_param', message: 'Invalid parameter(s): id', data: { status: 400, params: { id: 'Invalid parameter.' }, details: [] } });
    expect((await s.raw('GET', `${NS}/categories/abc`)).body.code).toBe('rest_no_route');
    expect((await s.raw('GET', `${NS}/categories/99999999999999999999`)).status).toBe(400);
  });

  it('updates partially with POST, PUT and PATCH alike', async () => {
    const made = await create({ name: 'Partial', description: 'Kept' });
    const id = made.body.id;
    const post = await s.raw('POST', `${NS}/categories/${id}`, { as: author, json: { name: 'Renamed' } });
    expect(post.body).toMatchObject({ name: 'Renamed', description: 'Kept', slug: 'partial' });
    const put = await s.raw('PUT', `${NS}/categories/${id}`, { as: author, json: { slug: 'new-slug' } });
    expect(put.body).toMatchObject({ name: 'Renamed', slug: 'new-slug' });
    const patch = await s.client(author).PATCH(`${NS}/categories/{id}`, { params: { path: { id } }, body: { description: 'Changed' } });
    expect(patch.data).toMatchObject({ name: 'Renamed', slug: 'new-slug', description: 'Changed' });
  });

  it('refuses a slug another category uses with duplicate_term_slug, and parent loops', async () => {
    const a = await create({ name: 'Slug owner' });
    const b = await create({ name: 'Slug taker', parent: a.body.id });
    const taken = await s.raw('PATCH', `${NS}/categories/${b.body.id}`, { as: s.admin, json: { slug: 'slug-owner' } });
    expect(taken.body).toEqual({ code: 'duplicate_term_slug', message: 'The slug “slug-owner” is already in use by another term.', data: { status: 400 } });
    const loop = await s.raw('PATCH', `${NS}/categories/${a.body.id}`, { as: s.admin, json: { parent: b.body.id } });
    expect(loop.body.data.params).toEqual({ parent: 'Invalid parameter.' });
    const self = await s.raw('PATCH', `${NS}/categories/${a.body.id}`, { as: s.admin, json: { parent: a.body.id } });
    expect(self.status).toBe(400);
    expect((await s.raw('GET', `${NS}/categories/${a.body.id}`)).body.parent).toBe(0);
  });

  it('deletes permanently: answers the term as it was, children move up, events lose it', async () => {
    const top = await create({ name: 'Top' });
    const middle = await create({ name: 'Middle', parent: top.body.id });
    const leaf = await create({ name: 'Leaf', parent: middle.body.id });
    const event = await insertEvent(s, { terms: [middle.body.id] });
    const del = await s.client(s.admin).DELETE(`${NS}/categories/{id}`, { params: { path: { id: middle.body.id } } });
    expect(del.response.status).toBe(200);
    expect(del.data).toMatchObject({ id: middle.body.id, name: 'Middle', count: 1 });
    expect(del.data!._links).toBeUndefined();
    expect((await s.raw('GET', `${NS}/categories/${leaf.body.id}`)).body.parent).toBe(top.body.id);
    expect(await s.sql('SELECT CAST(COUNT(*) AS INTEGER) AS n FROM event_terms WHERE event_id = ?', event)).toEqual([{ n: 0 }]);
    expect((await s.raw('DELETE', `${NS}/categories/${middle.body.id}`, { as: s.admin })).body.code).toBe('rest_invalid_param');
    expect((await s.raw('DELETE', `${NS}/categories/${top.body.id}`, { as: contributor })).status).toBe(403);
  });
});

describe('listing categories', () => {
  let fresh: TestServer;
  const ids: Record<string, number> = {};
  beforeAll(async () => {
    fresh = await TestServer.start();
    for (const [name, parent] of [['Music', null], ['Jazz', 'Music'], ['Family', null], ['Sports', null], ['Workshops', null], ['Food & Drink', null]] as const) {
      const r = await fresh.raw('POST', `${NS}/categories`, { as: fresh.admin, json: { name, parent: parent ? ids[parent] : 0 } });
      ids[name] = r.body.id;
    }
    await insertEvent(fresh, { terms: [ids.Music!, ids.Jazz!] });
    await insertEvent(fresh, { terms: [ids.Music!, ids.Family!] });
    await insertEvent(fresh, { terms: [ids.Sports!], status: 'draft' });
    await insertEvent(fresh, { terms: [ids.Workshops!], status: 'future' }); // date in the past: counts as published
  });
  afterAll(() => fresh.close());

  const list = async (query: string) => (await fresh.raw('GET', `${NS}/categories${query}`)).body;

  it('hides empty categories by default and counts published events only', async () => {
    const r = await fresh.raw('GET', `${NS}/categories`);
    expect(r.body.categories.map((c: { name: string }) => c.name)).toEqual(['Family', 'Jazz', 'Music', 'Workshops']);
    expect(r.body.categories.map((c: { count: number }) => c.count)).toEqual([1, 1, 2, 1]);
    expect(Object.keys(r.body)).toEqual(['rest_url', 'total', 'total_pages', 'categories']);
    expect(r.body.rest_url).toBe(`${fresh.baseUrl}${NS}/categories/`);
    expect(r.headers.get('X-TEC-Total')).toBe('4');
    expect(r.headers.get('X-TEC-TotalPages')).toBe('1');
  });

  it('lists everything with hide_empty in each boolean spelling', async () => {
    for (const v of ['false', '0', 'FALSE']) expect((await list(`?hide_empty=${v}`)).total).toBe(6);
    expect((await list('?hide_empty=yes')).code).toBe('rest_invalid_param');
    const typed = await list('?hide_empty=maybe');
    expect(typed.data.params).toEqual({ hide_empty: 'hide_empty is not of type boolean.' });
    expect(typed.data.details).toEqual({ hide_empty: { code: 'rest_invalid_type', message: 'hide_empty is not of type boolean.', data: { param: 'hide_empty' } } });
  });

  it('pages with next and previous links that keep the filters', async () => {
    const first = await list('?hide_empty=0&per_page=4');
    expect(first.total_pages).toBe(2);
    expect(first.next_rest_url).toBe(`${fresh.baseUrl}${NS}/categories/?per_page=4&hide_empty=false&page=2`);
    expect(first.previous_rest_url).toBeUndefined();
    const second = (await fresh.raw('GET', first.next_rest_url.slice(fresh.baseUrl.length))).body;
    expect(second.categories).toHaveLength(2);
    expect(second.next_rest_url).toBeUndefined();
    expect(second.previous_rest_url).toBe(`${fresh.baseUrl}${NS}/categories/?per_page=4&hide_empty=false`);
    const beyond = await list('?hide_empty=0&per_page=4&page=5');
    expect(beyond.categories).toEqual([]);
    expect(beyond.previous_rest_url).toBe(`${fresh.baseUrl}${NS}/categories/?per_page=4&hide_empty=false&page=4`);
    expect((await list('?per_page=200&hide_empty=0')).categories).toHaveLength(6); // clamped to 50
    for (const bad of ['?per_page=0', '?per_page=abc', '?page=0', '?page=-1', '?page=1.5']) expect((await list(bad)).code).toBe('rest_invalid_param');
  });

  it('filters by search, include, exclude (ids or slugs, every array form), parent, slug', async () => {
    const names = (r: { categories: { name: string }[] }) => r.categories.map((c) => c.name);
    expect(names(await list('?hide_empty=0&search=US'))).toEqual(['Music']);
    expect(names(await list('?hide_empty=0&search=drink'))).toEqual(['Food &amp; Drink']);
    for (const q of [`include=${ids.Jazz},family`, `include[]=${ids.Jazz}&include[]=family`, `include=${ids.Jazz}&include=family`]) {
      expect(names(await list(`?hide_empty=0&${q}`))).toEqual(['Family', 'Jazz']);
    }
    // the order of `include` either way round, whichever of the two has the lower id, and reversed by `order=desc`
    expect(names(await list(`?hide_empty=0&include=${ids.Jazz},${ids.Family}&orderby=include`))).toEqual(['Jazz', 'Family']);
    expect(names(await list(`?hide_empty=0&include=${ids.Family},${ids.Jazz}&orderby=include`))).toEqual(['Family', 'Jazz']);
    expect(names(await list(`?hide_empty=0&include=${ids.Music},${ids.Jazz},${ids.Family}&orderby=include&order=desc`))).toEqual(['Family', 'Jazz', 'Music']);
    expect(names(await list(`?hide_empty=0&include=family,${ids.Music},jazz&orderby=include_slugs`))).toEqual(['Family', 'Music', 'Jazz']);
    expect(names(await list(`?hide_empty=0&exclude=music,jazz,family,sports`))).toEqual(['Food &amp; Drink', 'Workshops']);
    expect((await list('?hide_empty=0&include=999999')).data.params).toEqual({ include: 'Invalid parameter.' });
    expect(names(await list(`?hide_empty=0&parent=${ids.Music}`))).toEqual(['Jazz']);
    expect(names(await list('?hide_empty=0&parent=0'))).toHaveLength(5);
    expect((await list('?parent=999999')).code).toBe('rest_invalid_param');
    expect(names(await list('?hide_empty=0&slug=food-drink'))).toEqual(['Food &amp; Drink']);
    expect(names(await list('?hide_empty=0&slug=nothing'))).toEqual([]);
    for (const empty of ['?slug=', '?search=', '?order=', '?orderby=']) expect((await list(empty)).code).toBe('rest_invalid_param');
  });

  it('orders by orderby and order; unknown values fall back as in WordPress', async () => {
    const names = (r: { categories: { name: string }[] }) => r.categories.map((c) => c.name);
    expect(names(await list('?orderby=count&order=desc'))).toEqual(['Music', 'Workshops', 'Family', 'Jazz']);
    expect(names(await list('?orderby=id&order=DESC&hide_empty=0'))[0]).toBe('Food &amp; Drink');
    expect(names(await list('?orderby=whatever&order=sideways'))).toEqual(['Family', 'Jazz', 'Music', 'Workshops']);
  });

  it('filters by the event a category is assigned to (post, event wins)', async () => {
    const event = await insertEvent(fresh, { terms: [ids.Sports!, ids.Family!] });
    const other = await insertEvent(fresh, { terms: [ids.Jazz!] });
    const names = (r: { categories: { name: string }[] }) => r.categories.map((c) => c.name);
    expect(names(await list(`?hide_empty=0&post=${event}`))).toEqual(['Family', 'Sports']);
    expect(names(await list(`?hide_empty=0&post=${event}&event=${other}`))).toEqual(['Jazz']);
    expect((await list('?post=999999')).data.params).toEqual({ post: 'Invalid parameter.' });
    expect((await list(`?event=${ids.Jazz}0000`)).code).toBe('rest_invalid_param');
  });
});

/**
 * An event's terms named by id are read before its write takes the write lock (PostUnits.writeEventAndShow); a term
 * deleted in between fails the write's link to it, and the write runs again, reading its terms under the lock.
 */
describe('a category deleted while an event naming it is written', () => {
  const event = (title: string, categories: number[]) => ({ title, start_date: '2031-04-01 10:00', end_date: '2031-04-01 11:00', categories });
  const categoryIds = (e: { categories: { id: number }[] }) => e.categories.map((c) => c.id);

  /** Runs `deletion` (SQL) while a write sent by `send` waits for the write lock, having read what it names. */
  async function deletedWhileWaiting<T>(send: () => Promise<T>, deletion: string, id: number): Promise<T> {
    let answer!: Promise<T>;
    await withWriteLockHeld(s.config.databaseUrl!, async (holder) => {
      answer = send();
      await writeWaiting(holder);
      await holder.query(deletion, [id]);
    });
    return answer;
  }

  it.runIf(TestServer.engine === 'postgres')('between the read of its terms and the write lock: written without it, never a 500', async () => {
    const kept = (await create({ name: 'Kept while writing' })).body.id as number;
    const doomed = (await create({ name: 'Deleted while writing' })).body.id as number;
    const r = await deletedWhileWaiting(() => s.raw('POST', `${NS}/events`, { as: s.admin, json: event('Written past a deletion', [kept, doomed]) }), 'DELETE FROM terms WHERE id = $1', doomed);
    expect(r.status).toBe(201);
    expect(categoryIds(r.body)).toEqual([kept]);
    expect(categoryIds((await s.raw('GET', `${NS}/events/${r.body.id}`)).body)).toEqual([kept]);
  });

  it.runIf(TestServer.engine === 'postgres')('a venue deleted between the read of its type and the write lock: refused as unknown, never a 500', async () => {
    const venue = (await s.raw('POST', `${NS}/venues`, { as: s.admin, json: { venue: 'Hall deleted while writing' } })).body.id as number;
    const organizer = (await s.raw('POST', `${NS}/organizers`, { as: s.admin, json: { organizer: 'Kept organizer' } })).body.id as number;
    const r = await deletedWhileWaiting(() => s.raw('POST', `${NS}/events`, { as: s.admin, json: { ...event('Held at a deleted hall', []), venue, organizer: [organizer] } }), 'DELETE FROM posts WHERE id = $1', venue);
    expect([r.status, r.body.code, Object.keys(r.body.data.params ?? {})]).toEqual([400, 'rest_invalid_param', ['venue']]);
    // with the venue still there, the same body is written, its organizer linked
    const again = await s.raw('POST', `${NS}/events`, { as: s.admin, json: { ...event('Held with its organizer', []), organizer: [organizer] } });
    expect([again.status, (again.body.organizer as { id: number }[]).map((o) => o.id)]).toEqual([201, [organizer]]);
  });

  it('after an event named it: the next event naming it is written without it, though its kind was known', async () => {
    const kept = (await create({ name: 'Kept after a deletion' })).body.id as number;
    const doomed = (await create({ name: 'Deleted after naming' })).body.id as number;
    const named = await s.raw('POST', `${NS}/events`, { as: s.admin, json: event('Naming it while it lives', [kept, doomed]) });
    expect(categoryIds(named.body).sort()).toEqual([kept, doomed].sort());
    expect((await s.raw('DELETE', `${NS}/categories/${doomed}?force=true`, { as: s.admin })).status).toBe(200);
    const after = await s.raw('POST', `${NS}/events`, { as: s.admin, json: event('Naming it once deleted', [kept, doomed]) });
    expect([after.status, categoryIds(after.body)]).toEqual([201, [kept]]);
    expect(categoryIds((await s.raw('GET', `${NS}/events/${after.body.id}`)).body)).toEqual([kept]);
  });

  it('while creates and updates naming it run at the same time: each written with or without it, never a 500', async () => {
    const kept = (await create({ name: 'Kept among writers' })).body.id as number;
    for (let round = 0; round < 5; round++) {
      const doomed = (await create({ name: `Deleted among writers ${round}` })).body.id as number;
      const first = await s.raw('POST', `${NS}/events`, { as: s.admin, json: event(`Updated past a deletion ${round}`, [kept]) });
      expect(first.status).toBe(201);
      const answers = await Promise.all([
        ...Array.from({ length: 6 }, (_, i) => s.raw('POST', `${NS}/events`, { as: s.admin, json: event(`Created past a deletion ${round}-${i}`, [doomed, kept]) })),
        s.raw('DELETE', `${NS}/categories/${doomed}?force=true`, { as: s.admin }),
        s.raw('POST', `${NS}/events/${first.body.id}`, { as: s.admin, json: { categories: [kept, doomed] } }),
      ]);
      expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 201, 201, 201, 200, 200]);
      for (const written of [...answers.slice(0, 6), answers[7]!]) {
        const now = (await s.raw('GET', `${NS}/events/${written.body.id}`)).body;
        expect(categoryIds(now)).toEqual([kept]);
        expect(categoryIds(written.body).filter((id) => id !== doomed)).toEqual([kept]);
      }
    }
  });
});

describe('the count of a category with scheduled events', () => {
  /** Links whose copy of their event's schedule differs from the event's (migration 0019). */
  const schedulesCopiedWrong = () => s.sql(`SELECT et.event_id FROM event_terms et JOIN events e ON e.post_id = et.event_id
    WHERE et.scheduled_utc IS DISTINCT FROM (CASE WHEN e.status = 'future' AND NOT e.protected THEN e.date_utc END)`);
  const inSeconds = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString().slice(0, 19).replace('T', ' ');

  it('leaves a scheduled event out until its date comes, through every write of it, and counts it then', async () => {
    const category = (await create({ name: 'Next season' })).body.id as number;
    /** Its count read by id, which lists then show alike: ordered by count, and counted under `hide_empty`. */
    const count = async () => {
      const byId = (await s.raw('GET', `${NS}/categories/${category}`)).body.count as number;
      const byCount = (await s.raw('GET', `${NS}/categories?include=${category}&hide_empty=0&orderby=count`)).body;
      expect(byCount.categories.map((c: { count: number }) => c.count)).toEqual([byId]);
      expect((await s.raw('GET', `${NS}/categories?include=${category}&hide_empty=1`)).body.total).toBe(byId > 0 ? 1 : 0);
      return byId;
    };
    const path = (id: number) => `${NS}/events/${id}`;
    const event = (await s.raw('POST', `${NS}/events`, { as: s.admin, json: {
      title: 'Opening night', start_date: '2031-03-01 19:00', end_date: '2031-03-01 22:00', categories: [category], date_utc: inSeconds(3600),
    } })).body;
    expect(event.status).toBe('future');
    expect(await count()).toBe(0);
    const patched = async (json: Record<string, unknown>) => {
      const r = await s.raw('PATCH', path(event.id), { as: s.admin, json });
      expect(r.status, r.text).toBe(200);
      expect(await schedulesCopiedWrong()).toEqual([]);
      return r.body as { status: string; date_utc: string };
    };
    // a password leaves it out whatever its date; taken off, the date decides again
    await patched({ password: 'secret', date_utc: '2026-01-01 10:00:00' });
    expect(await count()).toBe(0);
    await patched({ password: '', date_utc: inSeconds(2) });
    expect(await count()).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 2600));
    expect(await count()).toBe(1); // its date came: no write needed
    // scheduled again, its links taken off and put back, trashed
    const again = await patched({ status: 'future', date_utc: inSeconds(3600) });
    expect(await count()).toBe(again.status === 'future' ? 0 : 1);
    await patched({ categories: [] });
    expect(await count()).toBe(0);
    const back = await patched({ categories: [category] });
    expect(await count()).toBe(back.status === 'future' ? 0 : 1);
    expect((await s.raw('DELETE', path(event.id), { as: s.admin })).status).toBe(200);
    expect(await count()).toBe(0);
    expect(await schedulesCopiedWrong()).toEqual([]);
  });
});
