import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NS, TestServer, type Credentials } from './helpers/server.js';

let s: TestServer;
let editor: Credentials;
let author: Credentials;
let otherAuthor: Credentials;
let contributor: Credentials;
let subscriber: Credentials;

beforeAll(async () => {
  s = await TestServer.start();
  editor = await s.user('editor');
  author = await s.user('author');
  otherAuthor = await s.user('author');
  contributor = await s.user('contributor');
  subscriber = await s.user('subscriber');
});
afterAll(() => s.close());

const idOf = async (c: Credentials) => (await s.read((repos) => repos.users.findByLoginOrEmail(c.login)))!.id;
const create = (body: Record<string, unknown>, as: Credentials = s.admin) => s.raw('POST', `${NS}/organizers`, { as, json: body });
const get = (id: number, as?: Credentials) => s.raw('GET', `${NS}/organizers/${id}`, { as });
const update = (id: number, body: Record<string, unknown>, as: Credentials = s.admin, method = 'PATCH') => s.raw(method, `${NS}/organizers/${id}`, { as, json: body });
const remove = (id: number, as?: Credentials) => s.raw('DELETE', `${NS}/organizers/${id}`, { as });
let seq = 0;
/** A name no other test uses, so duplicate matching never joins unrelated tests. */
const unique = (name: string) => `${name} ${++seq}`;
/** Decodes the numeric and named entities the plugin uses to obfuscate e-mail addresses in JSON-LD. */
const decode = (text: string) => text.replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n))).replace(/&#x([0-9a-f]+);/gi, (_, n: string) => String.fromCharCode(parseInt(n, 16)));

/** Keys of `samples/organizer-single.json`, in order (the capture of GET /organizers/9 on a real plugin site). */
const SAMPLE_KEYS = ['id', 'author', 'status', 'date', 'date_utc', 'modified', 'modified_utc', 'url', 'organizer', 'slug', 'phone', 'website', 'email', 'json_ld', 'global_id', 'global_id_lineage'];
const SAMPLE_JSON_LD_KEYS = ['@type', 'name', 'description', 'url', 'telephone', 'email', 'sameAs'];
const ARTS = { organizer: 'City Arts Council', phone: '+1 217 555 0201', website: 'https://arts.example.test', email: 'arts@example.test' };
/** Every key an organizer can have, in the wire order: the sample's, plus resources.md §3's optional ones and the extensions. */
const FULL_KEYS = ['id', 'author', 'status', 'date', 'date_utc', 'modified', 'modified_utc', 'url', 'organizer', 'description', 'slug', 'image', 'phone', 'website', 'email', 'global_id', 'global_id_lineage', 'lang', 'translations'];

const EVERY_FIELD = {
  description: 'Runs the <strong>festival</strong>',
  status: 'publish',
  date: '2026-02-01 08:00:00',
  date_utc: '2026-02-01 08:00:00',
  phone: '+1 503 555 0202',
  website: 'https://jane.example.test',
  email: 'jane@example.test',
  image: 'https://cdn.example.test/uploads/jane.png',
  password: 'open-sesame',
};

describe('creating organizers', () => {
  it('creates an organizer with every field: 201, the sample key order, values as sent', async () => {
    const name = unique('Jane Doe Productions');
    const r = await create({ organizer: name, author: await idOf(editor), ...EVERY_FIELD });
    expect(r.status).toBe(201);
    const id = r.body.id as number;
    expect(Object.keys(r.body)).toEqual(FULL_KEYS);
    expect(Object.keys(r.body).filter((k) => SAMPLE_KEYS.includes(k))).toEqual(SAMPLE_KEYS.filter((k) => k !== 'json_ld'));
    expect(r.body).toMatchObject({
      author: String(await idOf(editor)),
      status: 'publish',
      date: '2026-02-01 08:00:00',
      date_utc: '2026-02-01 08:00:00',
      url: `${s.baseUrl}/organizer/${r.body.slug}/`,
      organizer: name,
      description: '<p>Runs the <strong>festival</strong></p>',
      slug: name.toLowerCase().replace(/ /g, '-'),
      phone: '+1 503 555 0202',
      website: 'https://jane.example.test',
      email: 'jane@example.test',
      global_id: `127.0.0.1?id=${id}`,
      global_id_lineage: [`127.0.0.1?id=${id}`],
      lang: 'en',
      translations: { en: id },
    });
    expect(r.body.image).toMatchObject({ url: 'https://cdn.example.test/uploads/jane.png', extension: 'png' });
    expect(r.body.password).toBeUndefined();
    expect(r.body.json_ld).toBeUndefined();
  });

  it('answers the shape of samples/organizer-single.json for the same organizer, by id and by slug', async () => {
    const made = await create(ARTS);
    expect(made.status).toBe(201);
    const id = made.body.id as number;
    const { data, response } = await s.client().GET(`${NS}/organizers/{id}`, { params: { path: { id } } });
    expect(response.status).toBe(200);
    expect(Object.keys(data!)).toEqual([...SAMPLE_KEYS, 'lang', 'translations']);
    const { date, date_utc, modified, modified_utc } = made.body;
    const { json_ld, ...rest } = data!;
    expect(rest).toEqual({
      id, author: '1', status: 'publish', date, date_utc, modified, modified_utc,
      url: `${s.baseUrl}/organizer/city-arts-council/`,
      organizer: 'City Arts Council', slug: 'city-arts-council',
      phone: '+1 217 555 0201', website: 'https://arts.example.test', email: 'arts@example.test',
      global_id: `127.0.0.1?id=${id}`, global_id_lineage: [`127.0.0.1?id=${id}`],
      lang: 'en', translations: { en: id },
    });
    expect(Object.keys(json_ld!)).toEqual(SAMPLE_JSON_LD_KEYS);
    expect(json_ld).toMatchObject({ '@type': 'Person', name: 'City Arts Council', description: '', url: 'https://arts.example.test', telephone: '+1 217 555 0201', sameAs: 'https://arts.example.test' });
    expect(decode(json_ld!.email as string)).toBe('arts@example.test');
    const bySlug = await s.client().GET(`${NS}/organizers/by-slug/{slug}`, { params: { path: { slug: 'city-arts-council' } } });
    expect(bySlug.response.status).toBe(200);
    // DESIGN §5 #23: deterministic JSON-LD, so two reads are equal.
    expect(bySlug.data).toEqual(data);
  });

  it('drops empty keys: an organizer with only a name keeps the global ids', async () => {
    const r = await create({ organizer: unique('Bare') });
    expect(Object.keys(r.body)).toEqual(['id', 'author', 'status', 'date', 'date_utc', 'modified', 'modified_utc', 'url', 'organizer', 'slug', 'global_id', 'global_id_lineage', 'lang', 'translations']);
    const cleared = await update(r.body.id, { phone: '123' });
    expect(cleared.body.phone).toBe('123');
    expect('phone' in (await update(r.body.id, { phone: '' })).body).toBe(false);
  });

  it('escapes names as WordPress renders titles', async () => {
    const r = await create({ organizer: 'Sports Club & Co' });
    expect(r.status).toBe(201);
    expect(r.body.organizer).toBe('Sports Club &#038; Co');
    expect(r.body.slug).toBe('sports-club-co');
    expect((await get(r.body.id)).body.json_ld.name).toBe('Sports Club &#038; Co');
  });

  it('stores e-mail addresses without checking them', async () => {
    const r = await create({ organizer: unique('Loose'), email: 'not an e-mail' });
    expect(r.status).toBe(201);
    expect(r.body.email).toBe('not an e-mail');
  });

  it('accepts form bodies', async () => {
    const r = await s.raw('POST', `${NS}/organizers`, { as: s.admin, form: 'organizer=Hall+%26+Friends&phone=555&website=https%3A%2F%2Fx.example.test' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ organizer: 'Hall &#038; Friends', phone: '555', website: 'https://x.example.test' });
  });
});

describe('validating organizer writes', () => {
  it('requires the name, before permissions', async () => {
    const missing = await s.raw('POST', `${NS}/organizers`, { json: {} });
    expect(missing.body).toEqual({ code: 'rest_missing_callback_param', message: 'Missing parameter(s): organizer', data: { status: 400, params: ['organizer'] } });
    const empty = await create({ organizer: '' });
    expect(empty.body).toEqual({ code: 'rest_invalid_param', message: 'Invalid parameter(s): organizer', data: { status: 400, params: { organizer: 'Invalid parameter.' }, details: [] } });
  });

  it('refuses a bad website, status, image id or author', async () => {
    expect((await create({ organizer: unique('O'), website: 'foo' })).body.data.params).toEqual({ website: 'Invalid parameter.' });
    expect((await create({ organizer: unique('O'), status: 'bogus' })).body.data.params).toEqual({ status: 'Invalid parameter.' });
    expect((await create({ organizer: unique('O'), image: 999999 })).body.data.params).toEqual({ image: 'Invalid parameter.' });
    expect((await create({ organizer: unique('O'), author: 999999 })).body.data.params).toEqual({ author: 'Invalid parameter.' });
    const made = await create({ organizer: unique('Valid') });
    expect((await update(made.body.id, { organizer: '' })).status).toBe(400);
    expect((await update(made.body.id, { status: 'bogus' })).status).toBe(400);
    expect((await get(made.body.id)).body.status).toBe('publish');
  });
});

describe('reading organizers', () => {
  it('unknown ids fail validation; non-digits are no route; unknown slugs fail validation', async () => {
    expect((await get(999999)).body).toEqual({ code: 'rest_invalid_param', message: 'Invalid parameter(s): id', data: { status: 400, params: { id: 'Invalid parameter.' }, details: [] } });
    const noRoute = await s.raw('GET', `${NS}/organizers/abc`);
    expect([noRoute.status, noRoute.body.code]).toEqual([404, 'rest_no_route']);
    const slug = await s.raw('GET', `${NS}/organizers/by-slug/non-existing-slug`);
    expect(slug.status).toBe(400);
    expect(slug.body.data.params).toEqual({ slug: 'Invalid parameter.' });
  });

  it('an event or venue id is not an organizer id', async () => {
    const event = await s.raw('POST', `${NS}/events`, { as: s.admin, json: { title: 'Not an organizer', start_date: '2027-05-01 10:00', end_date: '2027-05-01 12:00' } });
    expect(event.status).toBe(201);
    expect((await get(event.body.id)).body.data.params).toEqual({ id: 'Invalid parameter.' });
    const venue = await s.raw('POST', `${NS}/venues`, { as: s.admin, json: { venue: unique('Not an organizer') } });
    expect((await get(venue.body.id)).status).toBe(400);
    expect((await s.raw('GET', `${NS}/organizers/by-slug/${venue.body.slug}`)).status).toBe(400);
  });

  it('a draft is readable by its author and editors only', async () => {
    const draft = await create({ organizer: unique('Draft org'), status: 'draft' }, author);
    expect(draft.body.status).toBe('draft');
    expect((await get(draft.body.id)).body).toEqual({ code: 'organizer-not-accessible', message: 'The requested organizer is not accessible', data: { status: 403 } });
    expect((await get(draft.body.id, author)).status).toBe(200);
    expect((await get(draft.body.id, editor)).status).toBe(200);
    expect((await get(draft.body.id, otherAuthor)).status).toBe(403);
  });

  it('a private organizer is readable by its author and editors only', async () => {
    const priv = await create({ organizer: unique('Private org'), status: 'private' }, author);
    expect(priv.body.status).toBe('private');
    expect((await get(priv.body.id)).status).toBe(403);
    expect((await get(priv.body.id, otherAuthor)).body.code).toBe('organizer-not-accessible');
    expect((await get(priv.body.id, author)).status).toBe(200);
    expect((await get(priv.body.id, editor)).status).toBe(200);
  });
});

describe('password-protected organizers', () => {
  it('are answered blanked to anybody, admins included, but the write response is not blanked', async () => {
    const name = unique('Locked org');
    const made = await create({ organizer: name, ...EVERY_FIELD });
    expect(made.body).toMatchObject({ phone: '+1 503 555 0202', email: 'jane@example.test' });
    for (const as of [undefined, s.admin]) {
      const r = await get(made.body.id, as);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ id: made.body.id, organizer: name, slug: made.body.slug, description: '', image: false, phone: '', website: '', email: '', global_id: made.body.global_id });
      expect(r.body.json_ld).toBeUndefined();
    }
    const bySlug = await s.raw('GET', `${NS}/organizers/by-slug/${made.body.slug}`);
    expect(bySlug.body).toMatchObject({ organizer: name, email: '' });
  });

  it('updates answer unblanked to who may edit', async () => {
    const made = await create({ organizer: unique('Locked by author'), phone: '1', password: 'pw' }, author);
    expect(made.body.phone).toBe('1');
    expect((await update(made.body.id, { email: 'a@b.test' }, editor)).body).toMatchObject({ phone: '1', email: 'a@b.test' });
    expect((await get(made.body.id, author)).body.phone).toBe('');
    expect((await update(made.body.id, { password: '' }, author)).body.phone).toBe('1');
    expect((await get(made.body.id)).body.phone).toBe('1');
  });
});

describe('password-protected organizers: unlocking', () => {
  // DESIGN §5 #25 and behaviour.md §11: the request's `password` unlocks a protected organizer on GET by id and by slug.
  it('GET by slug with the right password answers the organizer unblanked', async () => {
    const made = await create({ organizer: unique('Unlockable org'), phone: '42', password: 'right' });
    const r = await s.raw('GET', `${NS}/organizers/by-slug/${made.body.slug}?password=right`);
    expect(r.status).toBe(200);
    expect(r.body.phone).toBe('42');
    expect(r.body.json_ld).toBeDefined();
  });
});

describe('updating organizers', () => {
  it('is partial with POST, PUT and PATCH alike', async () => {
    const made = await create({ organizer: unique('Partial org'), description: 'Kept', phone: '555', email: 'k@example.test', website: 'https://k.example.test', image: 'https://cdn.example.test/k.gif' });
    const id = made.body.id as number;
    const post = await update(id, { phone: '777' }, s.admin, 'POST');
    expect(post.body).toMatchObject({ description: '<p>Kept</p>', phone: '777', email: 'k@example.test', website: 'https://k.example.test', slug: made.body.slug });
    expect(post.body.image).toEqual(made.body.image);
    const put = await update(id, { email: '' }, s.admin, 'PUT');
    expect('email' in put.body).toBe(false);
    expect(put.body).toMatchObject({ phone: '777', website: 'https://k.example.test' });
    expect(put.body.image).toEqual(made.body.image);
    const patch = await s.client(s.admin).PATCH(`${NS}/organizers/{id}`, { params: { path: { id } }, body: { organizer: 'Renamed org' } });
    expect(patch.response.status).toBe(200);
    expect(patch.data).toMatchObject({ organizer: 'Renamed org', slug: made.body.slug, phone: '777' });
    expect(patch.data!.image).toEqual(made.body.image);
    expect((await update(id, { website: '' })).body.website).toBeUndefined();
    expect((await update(id, { slug: 'renamed-org' })).body.slug).toBe('renamed-org');
    const bySlug = await s.raw('PUT', `${NS}/organizers/by-slug/renamed-org`, { as: s.admin, json: { phone: '888' } });
    expect(bySlug.body).toMatchObject({ id, phone: '888', organizer: 'Renamed org' });
  });
});

describe('duplicate organizers on create', () => {
  it('updates and returns the caller\'s organizer of that name, any case', async () => {
    const name = unique('Match Org');
    const first = await create({ organizer: name, phone: '1', email: 'm@example.test' });
    const again = await create({ organizer: name.toLowerCase(), phone: '2' });
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    expect(again.body).toMatchObject({ organizer: first.body.organizer, phone: '2', email: 'm@example.test' });
  });

  it('matches the description when one is sent', async () => {
    const name = unique('Described Org');
    const first = await create({ organizer: name, description: 'One' });
    expect((await create({ organizer: name, description: 'One' })).body.id).toBe(first.body.id);
    const other = await create({ organizer: name, description: 'Two' });
    expect(other.body.id).not.toBe(first.body.id);
  });

  it('never touches an organizer the caller may not edit', async () => {
    const name = unique('Admin Org');
    const admins = await create({ organizer: name, phone: '1' });
    const mine = await create({ organizer: name, phone: '2' }, contributor);
    expect(mine.status).toBe(201);
    expect(mine.body.id).not.toBe(admins.body.id);
    expect((await get(admins.body.id)).body.phone).toBe('1');
    const authors = await create({ organizer: name, phone: '3' }, author);
    expect([admins.body.id, mine.body.id]).not.toContain(authors.body.id);
  });

  it('never matches when translation_of is sent', async () => {
    const name = unique('Bridge Org');
    const other = await create({ organizer: unique('Brücke') });
    const fr = await s.raw('POST', `/fr${NS}/organizers`, { as: s.admin, json: { organizer: name, phone: '1' } });
    expect(fr.body.lang).toBe('fr');
    const translated = await s.raw('POST', `/fr${NS}/organizers`, { as: s.admin, json: { organizer: name, translation_of: other.body.id } });
    expect(translated.status).toBe(201);
    expect(translated.body.id).not.toBe(fr.body.id);
    expect(translated.body.translations).toEqual({ en: other.body.id, fr: translated.body.id });
    expect((await get(fr.body.id)).body.phone).toBe('1');
  });
});

describe('trashing organizers', () => {
  it('answers the trashed organizer, then 410', async () => {
    const made = await create({ organizer: unique('Trash org'), phone: '5' });
    const id = made.body.id as number;
    const { data, response } = await s.client(s.admin).DELETE(`${NS}/organizers/{id}`, { params: { path: { id } } });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ id, status: 'trash', slug: `${made.body.slug}__trashed`, phone: '5', url: `${s.baseUrl}/?post_type=tribe_organizer&p=${id}` });
    expect((await remove(id, s.admin)).body).toEqual({ code: 'organizer-is-in-trash', message: 'The organizer is already trashed', data: { status: 410 } });
    expect((await get(id, s.admin)).body.status).toBe('trash');
    expect((await get(id)).status).toBe(403);
  });

  // The id is validated (it must name an existing organizer) before permissions are checked (routes.md §0.3, §2.13, §2.16).
  it('validates the id before permissions: an anonymous DELETE of an unknown organizer is 400', async () => {
    const r = await remove(999999);
    expect(r.body).toEqual({ code: 'rest_invalid_param', message: 'Invalid parameter(s): id', data: { status: 400, params: { id: 'Invalid parameter.' }, details: [] } });
  });

  it('needs permission to delete this organizer', async () => {
    expect((await remove(999999, contributor)).status).toBe(400);
    const made = await create({ organizer: unique('Kept org') });
    expect((await remove(made.body.id)).body).toEqual({ code: 'rest_forbidden', message: 'Sorry, you are not allowed to do that.', data: { status: 401 } });
    expect((await remove(made.body.id, contributor)).status).toBe(403);
    expect((await s.raw('DELETE', `${NS}/organizers/by-slug/${made.body.slug}`, { as: contributor })).status).toBe(403);
    expect((await get(made.body.id)).body.status).toBe('publish');
  });

  it('unlinks the organizer from every event, keeping the others', async () => {
    const gone = await create({ organizer: unique('Leaving org') });
    const stays = await create({ organizer: unique('Staying org') });
    const venue = await s.raw('POST', `${NS}/venues`, { as: s.admin, json: { venue: unique('Org venue') } });
    const event = await s.raw('POST', `${NS}/events`, { as: s.admin, json: { title: 'Gig', start_date: '2027-05-01 10:00', end_date: '2027-05-01 12:00', venue: venue.body.id, organizer: [gone.body.id, stays.body.id] } });
    expect(event.status).toBe(201);
    expect(event.body.organizer.map((o: { id: number }) => o.id)).toEqual([gone.body.id, stays.body.id]);
    expect((await remove(gone.body.id, s.admin)).status).toBe(200);
    const read = await s.raw('GET', `${NS}/events/${event.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body.organizer.map((o: { id: number }) => o.id)).toEqual([stays.body.id]);
    expect(read.body.venue.id).toBe(venue.body.id);
  });

  it('is undone by an update that sends a status: the original slug comes back', async () => {
    const made = await create({ organizer: unique('Phoenix org') });
    await remove(made.body.id, s.admin);
    const restored = await update(made.body.id, { status: 'publish' });
    expect(restored.body).toMatchObject({ status: 'publish', slug: made.body.slug });
    expect((await get(made.body.id)).status).toBe(200);
  });
});

describe('organizer permissions', () => {
  it('anonymous 401 (after validation), subscriber 403', async () => {
    expect((await s.raw('POST', `${NS}/organizers`, { json: { organizer: unique('Nope') } })).status).toBe(401);
    expect((await create({ organizer: unique('Nope') }, subscriber)).status).toBe(403);
  });

  it('contributors create drafts, and ask for publish in vain', async () => {
    const draft = await create({ organizer: unique('Contrib') }, contributor);
    expect(draft.body.status).toBe('draft');
    expect((await create({ organizer: unique('Contrib'), status: 'publish' }, contributor)).body.status).toBe('pending');
  });

  it('contributors may not edit others\' organizers, nor their own once published', async () => {
    const admins = await create({ organizer: unique('Admin only') });
    expect((await update(admins.body.id, { phone: '1' }, contributor)).status).toBe(403);
    const own = await create({ organizer: unique('Own') }, contributor);
    expect((await update(own.body.id, { phone: '1' }, contributor)).status).toBe(200);
    expect((await update(own.body.id, { status: 'publish' }, editor)).body.status).toBe('publish');
    expect((await update(own.body.id, { phone: '2' }, contributor)).status).toBe(403);
    expect((await get(own.body.id)).body.phone).toBe('1');
  });

  it('setting another author needs edit_others', async () => {
    const byAuthor = await create({ organizer: unique('Ghost'), author: await idOf(editor) }, author);
    expect(byAuthor.body).toEqual({ code: 'rest_cannot_edit_others', message: 'Sorry, you are not allowed to create organizers as this user.', data: { status: 403 } });
    const byEditor = await create({ organizer: unique('Ghost'), author: await idOf(author) }, editor);
    expect(byEditor.status).toBe(201);
    expect(byEditor.body.author).toBe(String(await idOf(author)));
    expect((await create({ organizer: unique('Ghost'), author: 999999 }, editor)).status).toBe(400);
  });
});
