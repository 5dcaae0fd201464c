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
const create = (body: Record<string, unknown>, as: Credentials | undefined = s.admin) => s.raw('POST', `${NS}/venues`, { as, json: body });
const get = (id: number, as?: Credentials) => s.raw('GET', `${NS}/venues/${id}`, { as });
const update = (id: number, body: Record<string, unknown>, as: Credentials = s.admin, method = 'PATCH') => s.raw(method, `${NS}/venues/${id}`, { as, json: body });
const remove = (id: number, as?: Credentials) => s.raw('DELETE', `${NS}/venues/${id}`, { as });
let seq = 0;
/** A name no other test uses, so duplicate matching never joins unrelated tests. */
const unique = (name: string) => `${name} ${++seq}`;

/** Keys of `samples/venue-single.json`, in order (the capture of GET /venues/4 on a real plugin site). */
const SAMPLE_KEYS = ['id', 'author', 'status', 'date', 'date_utc', 'modified', 'modified_utc', 'url', 'venue', 'slug', 'address', 'city', 'country', 'state', 'zip', 'phone', 'website', 'stateprovince', 'json_ld', 'show_map', 'show_map_link', 'global_id', 'global_id_lineage'];
/** The sample's Place, as captured. */
const SAMPLE_JSON_LD = {
  '@type': 'Place', name: 'Riverside Hall', description: '', url: '',
  address: { '@type': 'PostalAddress', streetAddress: '1 River Rd', addressLocality: 'Springfield', addressRegion: 'IL', postalCode: '62701', addressCountry: 'United States' },
  telephone: '+1 217 555 0101', sameAs: 'https://riverside.example.test',
};
const RIVERSIDE = { venue: 'Riverside Hall', address: '1 River Rd', city: 'Springfield', country: 'United States', state: 'IL', zip: '62701', phone: '+1 217 555 0101', website: 'https://riverside.example.test' };
/** Every key a venue can have, in the wire order: the sample's, plus resources.md §2's optional ones and the extensions. */
const FULL_KEYS = ['id', 'author', 'status', 'date', 'date_utc', 'modified', 'modified_utc', 'url', 'venue', 'description', 'slug', 'image', 'address', 'city', 'country', 'province', 'state', 'zip', 'phone', 'website', 'stateprovince', 'geo_lat', 'geo_lng', 'show_map', 'show_map_link', 'global_id', 'global_id_lineage', 'lang', 'translations'];

const EVERY_FIELD = {
  description: 'A <em>big</em> hall',
  status: 'publish',
  date: '2026-01-15 09:30:00',
  date_utc: '2026-01-15 09:30:00',
  address: '10 Rue de la Paix',
  city: 'Paris',
  country: 'France',
  province: 'Ile-de-France',
  state: 'XX',
  stateprovince: 'IDF',
  zip: '75002',
  phone: '+33 1 55 55 01 01',
  website: 'https://parc.example.test',
  show_map: 'false',
  show_map_link: 'yes',
  image: 'https://cdn.example.test/uploads/parc.jpg',
  password: 'open-sesame',
  geo_lat: 48.8698,
  geo_lng: 2.3316,
};

describe('creating venues', () => {
  it('creates a venue with every field: 201, the sample key order, values as sent', async () => {
    const name = unique('Parc des Expositions');
    const r = await create({ venue: name, author: await idOf(editor), ...EVERY_FIELD });
    expect(r.status).toBe(201);
    const id = r.body.id as number;
    expect(Object.keys(r.body)).toEqual(FULL_KEYS);
    // The keys the capture has appear in the capture's order (json_ld is for single reads only).
    expect(Object.keys(r.body).filter((k) => SAMPLE_KEYS.includes(k))).toEqual(SAMPLE_KEYS.filter((k) => k !== 'json_ld'));
    expect(r.body).toMatchObject({
      author: String(await idOf(editor)),
      status: 'publish',
      date: '2026-01-15 09:30:00',
      date_utc: '2026-01-15 09:30:00',
      url: `${s.baseUrl}/venue/${r.body.slug}/`,
      venue: name,
      description: '<p>A <em>big</em> hall</p>',
      slug: name.toLowerCase().replace(/ /g, '-'),
      address: '10 Rue de la Paix',
      city: 'Paris',
      country: 'France',
      province: 'Ile-de-France',
      state: 'XX',
      zip: '75002',
      phone: '+33 1 55 55 01 01',
      website: 'https://parc.example.test',
      stateprovince: 'IDF',
      geo_lat: 48.8698,
      geo_lng: 2.3316,
      show_map: false,
      show_map_link: true,
      global_id: `127.0.0.1?id=${id}`,
      global_id_lineage: [`127.0.0.1?id=${id}`],
      lang: 'en',
      translations: { en: id },
    });
    expect(r.body.image).toMatchObject({ url: 'https://cdn.example.test/uploads/parc.jpg', extension: 'jpg' });
    expect(r.body.image.id).toBeGreaterThan(0);
    expect(r.body.password).toBeUndefined();
    expect(r.body.json_ld).toBeUndefined();
  });

  it('answers the capture of samples/venue-single.json for the same venue, by id and by slug', async () => {
    const made = await create(RIVERSIDE);
    expect(made.status).toBe(201);
    const id = made.body.id as number;
    const { data, response } = await s.client().GET(`${NS}/venues/{id}`, { params: { path: { id } } });
    expect(response.status).toBe(200);
    expect(Object.keys(data!)).toEqual([...SAMPLE_KEYS, 'lang', 'translations']);
    const { date, date_utc, modified, modified_utc } = made.body;
    expect(data).toEqual({
      id, author: '1', status: 'publish', date, date_utc, modified, modified_utc,
      url: `${s.baseUrl}/venue/riverside-hall/`,
      venue: 'Riverside Hall', slug: 'riverside-hall',
      address: '1 River Rd', city: 'Springfield', country: 'United States', state: 'IL', zip: '62701',
      phone: '+1 217 555 0101', website: 'https://riverside.example.test', stateprovince: 'IL',
      json_ld: SAMPLE_JSON_LD,
      show_map: true, show_map_link: true,
      global_id: `127.0.0.1?id=${id}`, global_id_lineage: [`127.0.0.1?id=${id}`],
      lang: 'en', translations: { en: id },
    });
    expect(Object.keys(data!.json_ld!)).toEqual(Object.keys(SAMPLE_JSON_LD));
    const bySlug = await s.client().GET(`${NS}/venues/by-slug/{slug}`, { params: { path: { slug: 'riverside-hall' } } });
    expect(bySlug.response.status).toBe(200);
    expect(bySlug.data).toEqual(data);
  });

  it('drops empty keys: a venue with only a name keeps show_map, show_map_link and the global ids', async () => {
    const r = await create({ venue: unique('Bare') });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual(['id', 'author', 'status', 'date', 'date_utc', 'modified', 'modified_utc', 'url', 'venue', 'slug', 'show_map', 'show_map_link', 'global_id', 'global_id_lineage', 'lang', 'translations']);
    expect(r.body).toMatchObject({ show_map: true, show_map_link: true });
    const read = await get(r.body.id);
    expect(read.body.json_ld).toEqual({ '@type': 'Place', name: r.body.venue, description: '', url: '', address: { '@type': 'PostalAddress' }, telephone: '', sameAs: '' });
  });

  it('derives stateprovince from state for US or empty country, from province otherwise', async () => {
    const both = { state: 'IL', province: 'Ontario' };
    expect((await create({ venue: unique('SP'), ...both, country: 'United States' })).body.stateprovince).toBe('IL');
    expect((await create({ venue: unique('SP'), ...both, country: 'US' })).body.stateprovince).toBe('IL');
    expect((await create({ venue: unique('SP'), ...both })).body.stateprovince).toBe('IL');
    expect((await create({ venue: unique('SP'), ...both, country: 'Canada' })).body.stateprovince).toBe('Ontario');
    const none = await create({ venue: unique('SP'), state: 'IL', country: 'Canada' });
    expect(none.body.stateprovince).toBeUndefined();
    expect(none.body.state).toBe('IL');
  });

  it('reads show_map and show_map_link as truthy strings, true by default', async () => {
    const off = await create({ venue: unique('Map'), show_map: 'false', show_map_link: '0' });
    expect([off.body.show_map, off.body.show_map_link]).toEqual([false, false]);
    const on = await create({ venue: unique('Map'), show_map: 'Yes', show_map_link: 'enabled' });
    expect([on.body.show_map, on.body.show_map_link]).toEqual([true, true]);
    const other = await create({ venue: unique('Map'), show_map: 'nope' });
    expect([other.body.show_map, other.body.show_map_link]).toEqual([false, true]);
  });

  it('reads JSON booleans and the numbers 1 and 0 in show_map and show_map_link, as the plugin does', async () => {
    const on = await create({ venue: unique('Map'), show_map: true, show_map_link: 1 });
    expect([on.status, on.body.show_map, on.body.show_map_link]).toEqual([201, true, true]);
    const off = await create({ venue: unique('Map'), show_map: false, show_map_link: 0 });
    expect([off.status, off.body.show_map, off.body.show_map_link]).toEqual([201, false, false]);
    expect((await update(off.body.id, { show_map: true })).body.show_map).toBe(true);
    const typed = await s.client(s.admin).POST(`${NS}/venues`, { body: { venue: unique('Typed'), show_map: false, show_map_link: 'yes' } });
    expect([typed.data!.show_map, typed.data!.show_map_link]).toEqual([false, true]);
  });

  it('escapes names as WordPress renders titles', async () => {
    const r = await create({ venue: 'Sports Club & Co' });
    expect(r.status).toBe(201);
    expect(r.body.venue).toBe('Sports Club &#038; Co');
    expect(r.body.slug).toBe('sports-club-co');
    expect((await get(r.body.id)).body.json_ld.name).toBe('Sports Club &#038; Co');
  });

  it('reads `date` in the site timezone and `date_utc` as UTC', async () => {
    const paris = await TestServer.start({ siteTimezone: 'Europe/Paris' });
    try {
      const local = await paris.raw('POST', `${NS}/venues`, { as: paris.admin, json: { venue: 'Local', date: '2026-01-15 10:00:00' } });
      expect(local.body).toMatchObject({ date: '2026-01-15 10:00:00', date_utc: '2026-01-15 09:00:00' });
      const utc = await paris.raw('POST', `${NS}/venues`, { as: paris.admin, json: { venue: 'Utc', date_utc: '2026-07-15 10:00:00' } });
      expect(utc.body).toMatchObject({ date: '2026-07-15 12:00:00', date_utc: '2026-07-15 10:00:00' });
    } finally {
      await paris.close();
    }
  });

  it('leaves a draft venue or organizer undated (`date_utc` 0000-00-00 00:00:00) until it is published', async () => {
    for (const [path, name] of [['venues', 'venue'], ['organizers', 'organizer']] as const) {
      const draft = (await s.raw('POST', `${NS}/${path}`, { as: s.admin, json: { [name]: `Undated ${name}`, status: 'draft' } })).body;
      expect(draft.date_utc, path).toBe('0000-00-00 00:00:00');
      const published = (await s.raw('POST', `${NS}/${path}/${draft.id}`, { as: s.admin, json: { status: 'publish' } })).body;
      expect(published.date_utc, path).toMatch(/^2\d{3}-/);
    }
  });

  it('accepts form bodies', async () => {
    const r = await s.raw('POST', `${NS}/venues`, { as: s.admin, form: 'venue=Hall&city=Paris&show_map=false' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ venue: 'Hall', city: 'Paris', show_map: false, show_map_link: true });
  });
});

describe('validating venue writes', () => {
  it('requires the name, before permissions', async () => {
    const missing = await s.raw('POST', `${NS}/venues`, { json: {} });
    expect(missing.body).toEqual({ code: 'rest_missing_callback_param', message: 'Missing parameter(s): venue', data: { status: 400, params: ['venue'] } });
    const empty = await create({ venue: '' });
    expect(empty.body).toEqual({ code: 'rest_invalid_param', message: 'Invalid parameter(s): venue', data: { status: 400, params: { venue: 'Invalid parameter.' }, details: [] } });
  });

  it('refuses a bad website, status, image id or author', async () => {
    expect((await create({ venue: unique('V'), website: 'foo' })).body.data.params).toEqual({ website: 'Invalid parameter.' });
    expect((await create({ venue: unique('V'), status: 'bogus' })).body.data.params).toEqual({ status: 'Invalid parameter.' });
    expect((await create({ venue: unique('V'), status: 'trash' })).status).toBe(400);
    expect((await create({ venue: unique('V'), image: 999999 })).body.data.params).toEqual({ image: 'Invalid parameter.' });
    expect((await create({ venue: unique('V'), image: '999999' })).status).toBe(400);
    expect((await create({ venue: unique('V'), author: 999999 })).body.data.params).toEqual({ author: 'Invalid parameter.' });
    expect((await create({ venue: unique('V'), show_map: ['true'] })).body.data.params).toEqual({ show_map: 'Invalid parameter.' });
    const made = await create({ venue: unique('Valid') });
    expect((await update(made.body.id, { venue: '' })).status).toBe(400);
    expect((await update(made.body.id, { website: 'foo' })).status).toBe(400);
    expect((await get(made.body.id)).body.venue).toBe(made.body.venue);
  });
});

describe('reading venues', () => {
  it('unknown ids fail validation; non-digits are no route; unknown slugs fail validation', async () => {
    expect((await get(999999)).body).toEqual({ code: 'rest_invalid_param', message: 'Invalid parameter(s): id', data: { status: 400, params: { id: 'Invalid parameter.' }, details: [] } });
    expect((await s.raw('GET', `${NS}/venues/abc`)).body.code).toBe('rest_no_route');
    expect((await s.raw('GET', `${NS}/venues/abc`)).status).toBe(404);
    const slug = await s.raw('GET', `${NS}/venues/by-slug/non-existing-slug`);
    expect(slug.status).toBe(400);
    expect(slug.body.data.params).toEqual({ slug: 'Invalid parameter.' });
  });

  it('an event or organizer id is not a venue id', async () => {
    const venue = await create({ venue: unique('Host') });
    const event = await s.raw('POST', `${NS}/events`, { as: s.admin, json: { title: 'Not a venue', start_date: '2027-05-01 10:00', end_date: '2027-05-01 12:00' } });
    expect(event.status).toBe(201);
    const byEvent = await get(event.body.id);
    expect(byEvent.status).toBe(400);
    expect(byEvent.body.data.params).toEqual({ id: 'Invalid parameter.' });
    const organizer = await s.raw('POST', `${NS}/organizers`, { as: s.admin, json: { organizer: unique('Not a venue') } });
    expect((await get(organizer.body.id)).status).toBe(400);
    expect((await update(event.body.id, { city: 'X' })).status).toBe(400);
    expect((await remove(event.body.id, s.admin)).status).toBe(400);
    expect((await get(venue.body.id)).status).toBe(200);
  });

  it('a draft is readable by its author and editors only', async () => {
    const draft = await create({ venue: unique('Draft hall'), status: 'draft' }, author);
    expect(draft.body.status).toBe('draft');
    const anonymous = await get(draft.body.id);
    expect(anonymous.body).toEqual({ code: 'venue-not-accessible', message: 'The requested venue is not accessible', data: { status: 403 } });
    expect((await get(draft.body.id, author)).status).toBe(200);
    expect((await get(draft.body.id, editor)).status).toBe(200);
    expect((await get(draft.body.id, otherAuthor)).status).toBe(403);
    expect((await get(draft.body.id, subscriber)).status).toBe(403);
    expect((await s.raw('GET', `${NS}/venues/by-slug/${draft.body.slug}`)).status).toBe(403);
  });

  it('a private venue is readable by its author and editors only', async () => {
    const priv = await create({ venue: unique('Private hall'), status: 'private' }, author);
    expect(priv.body.status).toBe('private');
    expect((await get(priv.body.id)).status).toBe(403);
    expect((await get(priv.body.id, otherAuthor)).body.code).toBe('venue-not-accessible');
    expect((await get(priv.body.id, author)).status).toBe(200);
    expect((await get(priv.body.id, editor)).status).toBe(200);
  });
});

describe('password-protected venues', () => {
  it('are answered blanked to anybody, admins included, but the write response is not blanked', async () => {
    const name = unique('Locked hall');
    const made = await create({ venue: name, ...EVERY_FIELD });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ description: '<p>A <em>big</em> hall</p>', city: 'Paris', state: 'XX', show_map: false });
    for (const as of [undefined, s.admin]) {
      const r = await get(made.body.id, as);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        id: made.body.id, venue: name, slug: made.body.slug, status: 'publish',
        description: '', image: false, address: '', city: '', country: '', province: '', state: '', zip: '', phone: '', website: '', stateprovince: '',
        geo_lat: 0, geo_lng: 0, show_map: null, show_map_link: null,
        global_id: made.body.global_id,
      });
      expect(r.body.json_ld).toBeUndefined();
      expect(r.body.password).toBeUndefined();
    }
    const bySlug = await s.raw('GET', `${NS}/venues/by-slug/${made.body.slug}`);
    expect(bySlug.body).toMatchObject({ venue: name, city: '', state: '', show_map: null });
    expect(bySlug.body.json_ld).toBeUndefined();
  });

  it('updates answer unblanked to who may edit; "" removes the password', async () => {
    const made = await create({ venue: unique('Locked by author'), city: 'Oslo', password: 'pw' }, author);
    expect(made.body.city).toBe('Oslo');
    const edited = await update(made.body.id, { zip: '0150' }, editor);
    expect(edited.body).toMatchObject({ city: 'Oslo', zip: '0150' });
    expect((await get(made.body.id, author)).body.city).toBe('');
    const opened = await update(made.body.id, { password: '' }, author);
    expect(opened.body.city).toBe('Oslo');
    const read = await get(made.body.id);
    expect(read.body.city).toBe('Oslo');
    expect(read.body.json_ld).toBeDefined();
  });
});

describe('password-protected venues: unlocking', () => {
  // DESIGN §5 #25 and behaviour.md §11: the request's `password` unlocks a protected venue on GET by id and by slug.
  it('GET by id with the right password answers the venue unblanked', async () => {
    const made = await create({ venue: unique('Unlockable hall'), city: 'Paris', password: 'right' });
    const r = await s.raw('GET', `${NS}/venues/${made.body.id}?password=right`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ city: 'Paris', show_map: true });
    expect(r.body.json_ld).toBeDefined();
  });

  it('a wrong password leaves it blanked', async () => {
    const made = await create({ venue: unique('Still locked hall'), city: 'Paris', password: 'right' });
    const r = await s.raw('GET', `${NS}/venues/${made.body.id}?password=wrong`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ city: '', show_map: null });
  });
});

describe('HTML in venue writes', () => {
  // DESIGN §5 #13: stored HTML is sanitised for roles without unfiltered_html.
  it('a contributor\'s script tags do not survive in the description', async () => {
    const r = await create({ venue: unique('Scripted hall'), description: 'Hi <script>alert(1)</script>' }, contributor);
    expect(r.status).toBe(201);
    expect(r.body.description).not.toContain('<script');
  });

  it('an administrator\'s HTML is kept', async () => {
    const r = await create({ venue: unique('Marked-up hall'), description: 'Hi <em>there</em>' });
    expect(r.body.description).toBe('<p>Hi <em>there</em></p>');
  });
});

describe('updating venues', () => {
  it('is partial with POST, PUT and PATCH alike', async () => {
    const made = await create({ venue: unique('Partial hall'), description: 'Kept', address: '1 Main St', city: 'Paris', zip: '75001', show_map: 'false', show_map_link: 'false', image: 'https://cdn.example.test/p.png', geo_lat: 10.5, geo_lng: 20.5 });
    const id = made.body.id as number;
    const kept = { description: '<p>Kept</p>', address: '1 Main St', zip: '75001', show_map: false, show_map_link: false, slug: made.body.slug, geo_lat: 10.5, geo_lng: 20.5 };

    const post = await update(id, { city: 'Lyon' }, s.admin, 'POST');
    expect(post.status).toBe(200);
    expect(post.body).toMatchObject({ ...kept, city: 'Lyon' });
    expect(post.body.image).toEqual(made.body.image);
    expect(post.body.json_ld).toBeUndefined();

    const put = await update(id, { address: '' }, s.admin, 'PUT');
    expect(put.status).toBe(200);
    expect('address' in put.body).toBe(false);
    expect(put.body).toMatchObject({ city: 'Lyon', zip: '75001', show_map: false, show_map_link: false });
    expect(put.body.image).toEqual(made.body.image);

    const patch = await s.client(s.admin).PATCH(`${NS}/venues/{id}`, { params: { path: { id } }, body: { venue: 'Completely renamed' } });
    expect(patch.response.status).toBe(200);
    expect(patch.data).toMatchObject({ venue: 'Completely renamed', slug: made.body.slug, city: 'Lyon', show_map: false });
    expect(patch.data!.image).toEqual(made.body.image);

    const slugged = await update(id, { slug: 'my-hall' });
    expect(slugged.body.slug).toBe('my-hall');
    expect(slugged.body.url).toBe(`${s.baseUrl}/venue/my-hall/`);
    expect((await s.raw('GET', `${NS}/venues/by-slug/my-hall`)).body.id).toBe(id);

    const noImage = await update(id, { image: '', show_map: 'true' });
    expect(noImage.body.image).toBeUndefined();
    expect(noImage.body.show_map).toBe(true);
    expect(noImage.body.show_map_link).toBe(false);
  });

  it('updates by slug too', async () => {
    const made = await create({ venue: unique('Slug hall'), city: 'Rome' });
    const r = await s.raw('PATCH', `${NS}/venues/by-slug/${made.body.slug}`, { as: s.admin, json: { zip: '00100' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: made.body.id, city: 'Rome', zip: '00100' });
  });

  it('re-derives stateprovince when the address parts change', async () => {
    const made = await create({ venue: unique('Moving hall'), country: 'United States', state: 'IL', province: 'ON' });
    expect(made.body.stateprovince).toBe('IL');
    expect((await update(made.body.id, { city: 'Chicago' })).body.stateprovince).toBe('IL');
    expect((await update(made.body.id, { country: 'Canada' })).body.stateprovince).toBe('ON');
  });

  it('lets two venues share a name after a rename', async () => {
    const a = await create({ venue: unique('Twin A') });
    const b = await create({ venue: unique('Twin B') });
    const renamed = await update(b.body.id, { venue: a.body.venue });
    expect(renamed.status).toBe(200);
    expect(renamed.body.id).toBe(b.body.id);
    expect(renamed.body.venue).toBe(a.body.venue);
  });
});

describe('duplicate venues on create', () => {
  it('updates and returns the caller\'s venue of that name, any case', async () => {
    const name = unique('Match Hall');
    const first = await create({ venue: name, city: 'Paris', zip: '75001' });
    const again = await create({ venue: name.toUpperCase(), city: 'Lyon', status: 'draft' });
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    // only its meta fields are written, as in the plugin: its own name (not the new case) and status stay
    expect(again.body).toMatchObject({ venue: first.body.venue, status: 'publish', city: 'Lyon', zip: '75001', slug: first.body.slug });
    expect((await get(first.body.id)).body).toMatchObject({ venue: first.body.venue, city: 'Lyon' });
  });

  it('matches the description when one is sent', async () => {
    const name = unique('Described Hall');
    const first = await create({ venue: name, description: 'One' });
    const same = await create({ venue: name, description: 'One', city: 'Bonn' });
    expect(same.body.id).toBe(first.body.id);
    const other = await create({ venue: name, description: 'Two' });
    expect(other.status).toBe(201);
    expect(other.body.id).not.toBe(first.body.id);
    expect(other.body.slug).toBe(`${first.body.slug}-2`);
  });

  it('never touches a venue the caller may not edit', async () => {
    const name = unique('Admin Hall');
    const admins = await create({ venue: name, city: 'Paris' });
    const mine = await create({ venue: name, city: 'Nice' }, contributor);
    expect(mine.status).toBe(201);
    expect(mine.body.id).not.toBe(admins.body.id);
    expect(mine.body.author).toBe(String(await idOf(contributor)));
    expect((await get(admins.body.id)).body.city).toBe('Paris');
  });

  it('never matches a trashed venue', async () => {
    const name = unique('Gone Hall');
    const first = await create({ venue: name });
    await remove(first.body.id, s.admin);
    const again = await create({ venue: name });
    expect(again.body.id).not.toBe(first.body.id);
    expect(again.body.slug).toBe(first.body.slug);
  });

  it('never matches when translation_of is sent', async () => {
    const name = unique('Bridge Hall');
    const other = await create({ venue: unique('Brücke') });
    const de = await s.raw('POST', `/de${NS}/venues`, { as: s.admin, json: { venue: name, city: 'Berlin' } });
    expect(de.status).toBe(201);
    expect(de.body.lang).toBe('de');
    const translated = await s.raw('POST', `/de${NS}/venues`, { as: s.admin, json: { venue: name, translation_of: other.body.id } });
    expect(translated.status).toBe(201);
    expect(translated.body.id).not.toBe(de.body.id);
    expect(translated.body.translations).toEqual({ en: other.body.id, de: translated.body.id });
    expect((await get(de.body.id)).body.city).toBe('Berlin');
    // Without translation_of the same request matches the German venue of that name.
    const matched = await s.raw('POST', `/de${NS}/venues`, { as: s.admin, json: { venue: name, city: 'Köln' } });
    expect([de.body.id, translated.body.id]).toContain(matched.body.id);
  });
});

describe('trashing venues', () => {
  it('answers the trashed venue, then 410; GET stays open to who may edit it', async () => {
    const made = await create({ venue: unique('Trash hall'), city: 'Paris' });
    const id = made.body.id as number;
    const { data, response } = await s.client(s.admin).DELETE(`${NS}/venues/{id}`, { params: { path: { id } } });
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ id, status: 'trash', slug: `${made.body.slug}__trashed`, city: 'Paris', url: `${s.baseUrl}/?post_type=tribe_venue&p=${id}` });
    expect(data!.json_ld).toBeUndefined();
    const again = await remove(id, s.admin);
    expect(again.body).toEqual({ code: 'venue-is-in-trash', message: 'The venue is already trashed', data: { status: 410 } });
    expect((await get(id, s.admin)).body.status).toBe('trash');
    expect((await get(id)).status).toBe(403);
    expect((await s.raw('DELETE', `${NS}/venues/by-slug/${made.body.slug}__trashed`, { as: s.admin })).status).toBe(410);
  });

  // The id is validated (it must name an existing venue) before permissions are checked (routes.md §0.3, §2.13).
  it('validates the id before permissions: an anonymous DELETE of an unknown venue is 400', async () => {
    const r = await remove(999999);
    expect(r.body).toEqual({ code: 'rest_invalid_param', message: 'Invalid parameter(s): id', data: { status: 400, params: { id: 'Invalid parameter.' }, details: [] } });
  });

  it('validates the id first for a logged-in caller, then needs permission to delete this venue', async () => {
    expect((await remove(999999, s.admin)).body.data.params).toEqual({ id: 'Invalid parameter.' });
    expect((await remove(999999, contributor)).status).toBe(400);
    const made = await create({ venue: unique('Kept hall') });
    const anonymous = await remove(made.body.id);
    expect(anonymous.body).toEqual({ code: 'rest_forbidden', message: 'Sorry, you are not allowed to do that.', data: { status: 401 } });
    expect((await remove(made.body.id, contributor)).status).toBe(403);
    expect((await remove(made.body.id, author)).status).toBe(403);
    expect((await s.raw('DELETE', `${NS}/venues/by-slug/${made.body.slug}`, { as: contributor })).status).toBe(403);
    expect((await get(made.body.id)).body.status).toBe('publish');
    const own = await create({ venue: unique('Own draft') }, contributor);
    expect((await remove(own.body.id, contributor)).status).toBe(200);
  });

  it('unlinks the venue from every event', async () => {
    const venue = await create({ venue: unique('Linked hall') });
    const other = await create({ venue: unique('Untouched hall') });
    const event = await s.raw('POST', `${NS}/events`, { as: s.admin, json: { title: 'Gig', start_date: '2027-05-01 10:00', end_date: '2027-05-01 12:00', venue: venue.body.id } });
    const second = await s.raw('POST', `${NS}/events`, { as: s.admin, json: { title: 'Other gig', start_date: '2027-05-02 10:00', end_date: '2027-05-02 12:00', venue: other.body.id } });
    expect(event.status).toBe(201);
    expect(event.body.venue.id).toBe(venue.body.id);
    expect((await remove(venue.body.id, s.admin)).status).toBe(200);
    const read = await s.raw('GET', `${NS}/events/${event.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body.venue).toEqual([]);
    expect((await s.raw('GET', `${NS}/events/${second.body.id}`)).body.venue.id).toBe(other.body.id);
  });

  it('is undone by an update that sends a status: the original slug comes back', async () => {
    const made = await create({ venue: unique('Phoenix hall'), city: 'Paris' });
    await remove(made.body.id, s.admin);
    const stillTrashed = await update(made.body.id, { city: 'Lyon' });
    expect(stillTrashed.body).toMatchObject({ status: 'trash', slug: `${made.body.slug}__trashed`, city: 'Lyon' });
    const restored = await update(made.body.id, { status: 'publish' });
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ status: 'publish', slug: made.body.slug, url: `${s.baseUrl}/venue/${made.body.slug}/`, city: 'Lyon' });
    expect((await get(made.body.id)).status).toBe(200);
  });
});

describe('venue permissions', () => {
  it('anonymous 401, subscriber 403', async () => {
    const anonymous = await s.raw('POST', `${NS}/venues`, { json: { venue: unique('Nope') } });
    expect(anonymous.body).toEqual({ code: 'rest_forbidden', message: 'Sorry, you are not allowed to do that.', data: { status: 401 } });
    const sub = await create({ venue: unique('Nope') }, subscriber);
    expect(sub.body).toEqual({ code: 'rest_forbidden', message: 'Sorry, you are not allowed to do that.', data: { status: 403 } });
  });

  it('contributors create drafts, and ask for publish in vain', async () => {
    const draft = await create({ venue: unique('Contrib') }, contributor);
    expect(draft.status).toBe(201);
    expect(draft.body.status).toBe('draft');
    expect(draft.body.author).toBe(String(await idOf(contributor)));
    const pending = await create({ venue: unique('Contrib'), status: 'publish' }, contributor);
    expect(pending.body.status).toBe('pending');
    expect((await create({ venue: unique('Contrib'), status: 'private' }, contributor)).body.status).toBe('pending');
    expect((await create({ venue: unique('Author'), status: 'draft' }, author)).body.status).toBe('draft');
    expect((await create({ venue: unique('Author') }, author)).body.status).toBe('publish');
  });

  it('contributors may not edit others\' venues, nor their own once published', async () => {
    const admins = await create({ venue: unique('Admin only'), city: 'Paris' });
    const refused = await update(admins.body.id, { city: 'Lyon' }, contributor);
    expect(refused.body).toEqual({ code: 'rest_forbidden', message: 'Sorry, you are not allowed to do that.', data: { status: 403 } });
    expect((await s.raw('PATCH', `${NS}/venues/by-slug/${admins.body.slug}`, { as: contributor, json: { city: 'Lyon' } })).status).toBe(403);
    expect((await update(admins.body.id, { city: 'Lyon' }, author)).status).toBe(403);
    expect((await update(admins.body.id, { city: 'Lyon' }, editor)).status).toBe(200);

    const own = await create({ venue: unique('Own') }, contributor);
    expect((await update(own.body.id, { city: 'Nice' }, contributor)).status).toBe(200);
    const published = await update(own.body.id, { status: 'publish' }, editor);
    expect(published.body.status).toBe('publish');
    expect((await update(own.body.id, { city: 'Nantes' }, contributor)).status).toBe(403);
    expect((await get(own.body.id)).body.city).toBe('Nice');
    expect((await s.raw('PATCH', `${NS}/venues/${own.body.id}`, { json: { city: 'Nantes' } })).status).toBe(401);
  });

  it('setting another author needs edit_others', async () => {
    const byAuthor = await create({ venue: unique('Ghost'), author: await idOf(editor) }, author);
    expect(byAuthor.body).toEqual({ code: 'rest_cannot_edit_others', message: 'Sorry, you are not allowed to create venues as this user.', data: { status: 403 } });
    expect((await create({ venue: unique('Self'), author: await idOf(author) }, author)).status).toBe(201);
    const byEditor = await create({ venue: unique('Ghost'), author: await idOf(author) }, editor);
    expect(byEditor.status).toBe(201);
    expect(byEditor.body.author).toBe(String(await idOf(author)));
    const own = await create({ venue: unique('Handover') }, author);
    const handover = await update(own.body.id, { author: await idOf(otherAuthor) }, author);
    expect(handover.status).toBe(403);
    expect(handover.body.code).toBe('rest_cannot_edit_others');
    expect((await create({ venue: unique('Ghost'), author: 999999 }, editor)).status).toBe(400);
  });
});
