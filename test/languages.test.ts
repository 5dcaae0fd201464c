import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NS, TestServer, type Credentials, type RawResponse } from './helpers/server.js';

/**
 * Languages (DESIGN §5 #21): the request language (xlate_language > wpml_language > /de or /fr prefix > en),
 * records per language with translation groups, lists within the language, localised embedded records, and
 * links carrying the language prefix.
 *
 * `s` holds a fixed fixture (read-only tests, exact list answers); `w` is for the tests that write.
 */

type Lang = 'en' | 'fr' | 'de';
type Group = Record<Lang, number>;
interface Rec { id: number; [key: string]: any }

let s: TestServer;
let w: TestServer;
const venue = {} as Group;
const organizer = {} as Group;
const category = {} as Group;
const tag = {} as Group;
const event = {} as Group;
/** A second `fr` event (no translation), so the `fr` list has two pages with `per_page=1`. */
let frOnly: Rec;

/** Events of the fixture lie in 2031; every list of events is bounded to that year. */
const YEAR = 'start_date=2031-01-01&end_date=2031-12-31';

async function create(server: TestServer, path: string, json: Record<string, unknown>, as: Credentials = server.admin): Promise<Rec> {
  const r = await server.raw('POST', path, { as, json });
  expect(r.status, `POST ${path} ${r.text}`).toBe(201);
  return r.body as Rec;
}

/** The same record in `en`, then `fr` and `de` joining its translation group through the prefix. */
async function group(route: string, names: Record<Lang, Record<string, unknown>>): Promise<Group> {
  const en = await create(s, `${NS}/${route}`, names.en);
  const fr = await create(s, `/fr${NS}/${route}`, { ...names.fr, translation_of: en.id });
  const de = await create(s, `/de${NS}/${route}`, { ...names.de, translation_of: en.id });
  expect([en.lang, fr.lang, de.lang]).toEqual(['en', 'fr', 'de']);
  return { en: en.id, fr: fr.id, de: de.id };
}

const get = (path: string, as?: Credentials): Promise<RawResponse> => s.raw('GET', path, { as });
const ok = async (path: string): Promise<any> => {
  const r = await get(path);
  expect(r.status, `GET ${path} ${r.text}`).toBe(200);
  return r.body;
};
const ids = (items: Rec[]) => items.map((r) => r.id);

beforeAll(async () => {
  [s, w] = await Promise.all([TestServer.start(), TestServer.start()]);
  Object.assign(venue, await group('venues', { en: { venue: 'Riverside Hall' }, fr: { venue: 'Salle du fleuve' }, de: { venue: 'Flusshalle' } }));
  Object.assign(organizer, await group('organizers', { en: { organizer: 'Arts Council' }, fr: { organizer: 'Conseil des arts' }, de: { organizer: 'Kunstrat' } }));
  Object.assign(category, await group('categories', { en: { name: 'Music' }, fr: { name: 'Musique' }, de: { name: 'Musik' } }));
  Object.assign(tag, await group('tags', { en: { name: 'outdoor' }, fr: { name: 'plein air' }, de: { name: 'draussen' } }));
  const when = { start_date: '2031-05-01 19:00:00', end_date: '2031-05-01 23:00:00' };
  const en = await create(s, `${NS}/events`, { title: 'Gala night', ...when, venue: venue.en, organizer: [organizer.en], categories: [category.en], tags: [tag.en] });
  const fr = await create(s, `/fr${NS}/events`, { title: 'Soirée de gala', ...when, venue: venue.fr, organizer: [organizer.fr], categories: [category.fr], tags: [tag.fr], translation_of: en.id });
  const de = await create(s, `/de${NS}/events`, { title: 'Galaabend', ...when, venue: venue.de, organizer: [organizer.de], categories: [category.de], tags: [tag.de], translation_of: en.id });
  Object.assign(event, { en: en.id, fr: fr.id, de: de.id });
  frOnly = await create(s, `/fr${NS}/events`, { title: 'Marché aux puces', start_date: '2031-06-01 09:00:00', end_date: '2031-06-01 12:00:00' });
});
afterAll(async () => {
  await Promise.all([s?.close(), w?.close()]);
});

describe('the request language', () => {
  it('refuses an unknown language in either parameter with rest_invalid_param', async () => {
    const bad = await get(`${NS}/events?${YEAR}&xlate_language=es`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'rest_invalid_param', data: { status: 400, params: { xlate_language: 'Invalid parameter.' } } });
    const prefixed = await get(`/fr${NS}/venues?xlate_language=es`);
    expect([prefixed.status, prefixed.body.code, Object.keys(prefixed.body.data.params)]).toEqual([400, 'rest_invalid_param', ['xlate_language']]);
    const alias = await get(`${NS}/tags?wpml_language=es`);
    expect([alias.status, alias.body.code, Object.keys(alias.body.data.params)]).toEqual([400, 'rest_invalid_param', ['wpml_language']]);
    expect((await get(`${NS}/events/${event.en}?xlate_language=ES`)).status).toBe(400);
  });

  it('knows only the /de and /fr prefixes: any other is no route', async () => {
    for (const path of [`/es${NS}/events`, `/en${NS}/events`, `/en${NS}/events/${event.en}`, `/es/wp-json/`, `/it${NS}`, `/dede${NS}/events`]) {
      const r = await get(path);
      expect([r.status, r.body.code], path).toEqual([404, 'rest_no_route']);
    }
    expect((await get(`/de${NS}/events?${YEAR}`)).status).toBe(200);
    expect((await get(`/fr/wp-json/`)).status).toBe(200);
  });

  it('takes xlate_language, else wpml_language, else the prefix, else en', async () => {
    const listed = async (path: string) => ids((await ok(`${path}${path.includes('?') ? '&' : '?'}${YEAR}`)).events);
    expect(await listed(`${NS}/events`)).toEqual([event.en]);
    expect(await listed(`/de${NS}/events`)).toEqual([event.de]);
    expect(await listed(`${NS}/events?wpml_language=de`)).toEqual([event.de]);
    expect(await listed(`/fr${NS}/events?wpml_language=de`)).toEqual([event.de]);
    expect(await listed(`/fr${NS}/events?xlate_language=de`)).toEqual([event.de]);
    expect(await listed(`/de${NS}/events?xlate_language=en`)).toEqual([event.en]);
    expect(await listed(`${NS}/events?xlate_language=de&wpml_language=fr`)).toEqual([event.de]);
    expect(await listed(`/fr${NS}/events?wpml_language=en&xlate_language=de`)).toEqual([event.de]);
  });
});

describe('records and their translations', () => {
  const kinds: [string, Group, string][] = [['events', event, 'event'], ['venues', venue, 'venue'], ['organizers', organizer, 'organizer'], ['categories', category, 'category'], ['tags', tag, 'tag']];

  it('carries lang and the whole translation group on every member, read by id with or without a prefix', async () => {
    for (const [route, g] of kinds) {
      for (const lang of ['en', 'fr', 'de'] as const) {
        for (const prefix of ['', '/fr', '/de']) {
          const r = await ok(`${prefix}${NS}/${route}/${g[lang]}`);
          expect([r.id, r.lang, r.translations], `${prefix} ${route} ${lang}`).toEqual([g[lang], lang, { en: g.en, fr: g.fr, de: g.de }]);
        }
      }
    }
  });

  it('lists each record of a group with its translations, in its own language', async () => {
    const e = (await ok(`/fr${NS}/events?${YEAR}`)).events.find((x: Rec) => x.id === event.fr);
    expect(e.translations).toEqual({ en: event.en, fr: event.fr, de: event.de });
    const frOnlyRead = await ok(`${NS}/events/${frOnly.id}`);
    expect([frOnlyRead.lang, frOnlyRead.translations]).toEqual(['fr', { fr: frOnly.id }]);
  });

  it('answers an id of another language as asked, through a prefix too', async () => {
    const viaEn = await ok(`${NS}/venues/${venue.fr}`);
    expect([viaEn.id, viaEn.lang, viaEn.venue]).toEqual([venue.fr, 'fr', 'Salle du fleuve']);
    const viaDe = await ok(`/de${NS}/events/${event.fr}`);
    expect([viaDe.id, viaDe.lang, viaDe.title]).toEqual([event.fr, 'fr', 'Soirée de gala']);
    const viaParam = await ok(`${NS}/categories/${category.de}?xlate_language=fr`);
    expect([viaParam.id, viaParam.lang, viaParam.name]).toEqual([category.de, 'de', 'Musik']);
  });
});

describe('lists hold the current language only', () => {
  const cases: [string, string, (g: Lang) => number[]][] = [
    ['events', YEAR, (l) => (l === 'fr' ? [event.fr, frOnly.id] : [event[l]])],
    ['venues', '', (l) => [venue[l]]],
    ['organizers', '', (l) => [organizer[l]]],
    ['categories', 'hide_empty=0', (l) => [category[l]]],
    ['tags', 'hide_empty=0', (l) => [tag[l]]],
  ];

  for (const [route, query, expected] of cases) {
    it(`lists ${route} of the language, by prefix, by parameter, with the parameter winning`, async () => {
      const q = query ? `${query}&` : '';
      const ways: [Lang, string][] = [
        ['en', `${NS}/${route}?${query}`],
        ['fr', `/fr${NS}/${route}?${query}`],
        ['de', `/de${NS}/${route}?${query}`],
        ['fr', `${NS}/${route}?${q}xlate_language=fr`],
        ['de', `${NS}/${route}?${q}wpml_language=de`],
        ['en', `${NS}/${route}?${q}xlate_language=en`],
        ['de', `/fr${NS}/${route}?${q}xlate_language=de`],
        ['en', `/de${NS}/${route}?${q}xlate_language=en`],
        ['fr', `/de${NS}/${route}?${q}wpml_language=fr`],
      ];
      for (const [lang, path] of ways) {
        const r = await get(path);
        expect(r.status, path).toBe(200);
        const want = expected(lang);
        expect(ids(r.body[route]).sort(), path).toEqual([...want].sort());
        expect(r.body[route].map((x: Rec) => x.lang), path).toEqual(want.map(() => lang));
        expect([r.body.total, r.headers.get('X-TEC-Total')], path).toEqual([want.length, String(want.length)]);
      }
    });
  }

  it('resolves category and tag slugs within the language', async () => {
    expect(ids((await ok(`${NS}/events?${YEAR}&categories=music`)).events)).toEqual([event.en]);
    expect(ids((await ok(`/fr${NS}/events?${YEAR}&categories=musique`)).events)).toEqual([event.fr]);
    expect(ids((await ok(`${NS}/events?${YEAR}&xlate_language=de&categories=musik`)).events)).toEqual([event.de]);
    expect(ids((await ok(`/fr${NS}/events?${YEAR}&tags=plein-air`)).events)).toEqual([event.fr]);
    // a slug of another language names no category of this one
    const foreign = await get(`/fr${NS}/events?${YEAR}&categories=music`);
    expect([foreign.status, foreign.body.code, foreign.body.data?.params]).toEqual([400, 'rest_invalid_param', { categories: 'Invalid parameter.' }]);
    expect((await get(`${NS}/events?${YEAR}&categories=musique`)).status).toBe(400);
  });

  it('searches within the language', async () => {
    const fr = await ok(`/fr${NS}/events?${YEAR}&search=gala`);
    expect([ids(fr.events), fr.total]).toEqual([[event.fr], 1]);
    const en = await ok(`${NS}/events?${YEAR}&search=gala`);
    expect([ids(en.events), en.total]).toEqual([[event.en], 1]);
    expect((await ok(`${NS}/events?${YEAR}&search=Soir%C3%A9e`)).total).toBe(0);
    expect((await ok(`${NS}/events?${YEAR}&search=Galaabend&xlate_language=de`)).total).toBe(1);
    expect(ids((await ok(`/fr${NS}/venues?search=Salle`)).venues)).toEqual([venue.fr]);
    expect((await ok(`${NS}/venues?search=Salle`)).total).toBe(0);
    expect(ids((await ok(`${NS}/organizers?search=Kunstrat&xlate_language=de`)).organizers)).toEqual([organizer.de]);
    expect((await ok(`/fr${NS}/organizers?search=Kunstrat`)).total).toBe(0);
    expect(ids((await ok(`/fr${NS}/categories?hide_empty=0&search=mus`)).categories)).toEqual([category.fr]);
  });

  it('matches venue and organizer filters on the given ids and their translations', async () => {
    for (const lang of ['en', 'fr', 'de'] as const) {
      const prefix = lang === 'en' ? '' : `/${lang}`;
      for (const given of ['en', 'fr', 'de'] as const) {
        expect(ids((await ok(`${prefix}${NS}/events?${YEAR}&venue=${venue[given]}`)).events), `${lang} list, venue ${given}`).toEqual([event[lang]]);
        expect(ids((await ok(`${prefix}${NS}/events?${YEAR}&organizer=${organizer[given]}`)).events), `${lang} list, organizer ${given}`).toEqual([event[lang]]);
      }
    }
    const viaParam = await ok(`${NS}/events?${YEAR}&venue=${venue.en}&xlate_language=fr`);
    expect([ids(viaParam.events), viaParam.total]).toEqual([[event.fr], 1]);
  });

  it('lists venues and organizers of an event within the language', async () => {
    expect(ids((await ok(`/fr${NS}/venues?event=${event.fr}`)).venues)).toEqual([venue.fr]);
    expect(ids((await ok(`/fr${NS}/organizers?event=${event.fr}`)).organizers)).toEqual([organizer.fr]);
    expect(ids((await ok(`/fr${NS}/categories?event=${event.fr}`)).categories)).toEqual([category.fr]);
  });
});

describe('embedded records follow the language of the request', () => {
  const embedded = (e: any) => ({
    venue: [e.venue.id, e.venue.lang],
    organizer: e.organizer.map((o: Rec) => [o.id, o.lang]),
    categories: e.categories.map((c: Rec) => [c.id, c.lang]),
    tags: e.tags.map((t: Rec) => [t.id, t.lang]),
  });
  const expected = (l: Lang) => ({ venue: [venue[l], l], organizer: [[organizer[l], l]], categories: [[category[l], l]], tags: [[tag[l], l]] });

  it('embeds the translation in the current language of the venue, organizers, categories and tags', async () => {
    expect(embedded(await ok(`${NS}/events/${event.en}`))).toEqual(expected('en'));
    expect(embedded(await ok(`/fr${NS}/events/${event.en}`))).toEqual(expected('fr'));
    expect(embedded(await ok(`${NS}/events/${event.en}?xlate_language=de`))).toEqual(expected('de'));
    expect(embedded(await ok(`/fr${NS}/events/${event.en}?xlate_language=en`))).toEqual(expected('en'));
    expect(embedded(await ok(`${NS}/events/${event.fr}`))).toEqual(expected('en'));
    expect(embedded(await ok(`/de${NS}/events/by-slug/gala-night`))).toEqual(expected('de'));
    const frVenue = (await ok(`/fr${NS}/events/${event.en}`)).venue;
    expect([frVenue.venue, frVenue.translations]).toEqual(['Salle du fleuve', { en: venue.en, fr: venue.fr, de: venue.de }]);
    const frCategory = (await ok(`/fr${NS}/events/${event.en}`)).categories[0];
    expect([frCategory.name, frCategory.slug]).toEqual(['Musique', 'musique']);
  });

  it('embeds in lists too', async () => {
    const fr = await ok(`/fr${NS}/events?${YEAR}&include=${event.fr}`);
    expect(fr.events.map(embedded)).toEqual([expected('fr')]);
  });

  it('keeps the original when there is no translation in the current language', async () => {
    const hall = await create(w, `${NS}/venues`, { venue: 'Only English hall' });
    const hallFr = await create(w, `/fr${NS}/venues`, { venue: 'Salle seulement', translation_of: hall.id });
    const host = await create(w, `${NS}/organizers`, { organizer: 'Only English host' });
    const cat = await create(w, `${NS}/categories`, { name: 'Only English' });
    const e = await create(w, `${NS}/events`, { title: 'Untranslated links', start_date: '2031-08-01 10:00', end_date: '2031-08-01 11:00', venue: hall.id, organizer: [host.id], categories: [cat.id] });
    const de = (await w.raw('GET', `/de${NS}/events/${e.id}`)).body;
    expect([de.venue.id, de.venue.lang, de.organizer[0].id, de.categories[0].id]).toEqual([hall.id, 'en', host.id, cat.id]);
    const fr = (await w.raw('GET', `/fr${NS}/events/${e.id}`)).body;
    expect([fr.venue.id, fr.venue.lang, fr.organizer[0].id, fr.categories[0].id]).toEqual([hallFr.id, 'fr', host.id, cat.id]);
  });
});

describe('embedded records whose translation is gone or hidden', () => {
  async function fixture(title: string) {
    const hall = await create(w, `${NS}/venues`, { venue: `${title} hall` });
    const salle = await create(w, `/fr${NS}/venues`, { venue: `${title} salle`, translation_of: hall.id });
    const cat = await create(w, `${NS}/categories`, { name: `${title} cat` });
    const catFr = await create(w, `/fr${NS}/categories`, { name: `${title} catégorie`, translation_of: cat.id });
    const e = await create(w, `${NS}/events`, { title, start_date: '2031-08-02 10:00', end_date: '2031-08-02 11:00', venue: hall.id, categories: [cat.id] });
    return { hall, salle, cat, catFr, e };
  }

  it('falls back to the original term when its translation is deleted', async () => {
    const { cat, catFr, e } = await fixture('Deleted term');
    expect((await w.raw('GET', `/fr${NS}/events/${e.id}`)).body.categories.map((c: Rec) => c.id)).toEqual([catFr.id]);
    expect((await w.raw('DELETE', `${NS}/categories/${catFr.id}`, { as: w.admin })).status).toBe(200);
    expect((await w.raw('GET', `/fr${NS}/events/${e.id}`)).body.categories.map((c: Rec) => c.id)).toEqual([cat.id]);
  });

  // A trashed translation does not stand in for the original: GET /fr/…/events/<en event> embeds the published en
  // venue, for an anonymous reader and for an admin alike.
  it('falls back to the original venue when its translation is trashed', async () => {
    const { hall, salle, e } = await fixture('Trashed venue');
    expect((await w.raw('GET', `/fr${NS}/events/${e.id}`)).body.venue.id).toBe(salle.id);
    expect((await w.raw('DELETE', `${NS}/venues/${salle.id}`, { as: w.admin })).status).toBe(200);
    const anon = (await w.raw('GET', `/fr${NS}/events/${e.id}`)).body.venue;
    const admin = (await w.raw('GET', `/fr${NS}/events/${e.id}`, { as: w.admin })).body.venue;
    expect([anon.id, admin.id, admin.status]).toEqual([hall.id, hall.id, 'publish']);
  });

  // A draft translation stands in only for readers who may see it; others get the published original.
  it('shows the original venue to readers who may not see its draft translation', async () => {
    const { hall, e } = await fixture('Draft venue');
    const saal = await create(w, `/de${NS}/venues`, { venue: 'Draft venue saal', status: 'draft', translation_of: hall.id });
    expect((await w.raw('GET', `/de${NS}/events/${e.id}`, { as: w.admin })).body.venue.id).toBe(saal.id);
    expect((await w.raw('GET', `/de${NS}/events/${e.id}`)).body.venue.id).toBe(hall.id);
  });
});

describe('creating and updating', () => {
  it('stores the current language, by prefix or parameter, and the parameter wins', async () => {
    const cases: [string, Lang][] = [[`${NS}`, 'en'], [`/fr${NS}`, 'fr'], [`/de${NS}`, 'de'], [`${NS}`, 'de'], [`/fr${NS}`, 'de'], [`/de${NS}`, 'en']];
    let n = 0;
    for (const [base, lang] of cases) {
      n++;
      const param = base === `${NS}` && lang === 'en' ? '' : base.startsWith(`/${lang}`) ? '' : `?xlate_language=${lang}`;
      for (const [route, json] of [
        ['events', { title: `Stored ${n}`, start_date: '2031-09-01 10:00', end_date: '2031-09-01 11:00' }],
        ['venues', { venue: `Stored venue ${n}` }],
        ['organizers', { organizer: `Stored organizer ${n}` }],
        ['categories', { name: `Stored category ${n}` }],
        ['tags', { name: `Stored tag ${n}` }],
      ] as const) {
        const made = await create(w, `${base}/${route}${param}`, json);
        expect(made.lang, `${base}/${route}${param}`).toBe(lang);
        expect(made.translations).toEqual({ [lang]: made.id });
        expect((await w.raw('GET', `${NS}/${route}/${made.id}`)).body.lang).toBe(lang);
      }
    }
  });

  it('reads the language from a write\'s body too, JSON or form, the body winning over the query string', async () => {
    for (const [route, json] of [
      ['events', { title: 'Body language', start_date: '2031-09-02 10:00', end_date: '2031-09-02 11:00', venue: { venue: 'Salle du corps' } }],
      ['venues', { venue: 'Body language venue' }],
      ['organizers', { organizer: 'Body language organizer' }],
      ['categories', { name: 'Body language category' }],
      ['tags', { name: 'Body language tag' }],
    ] as const) {
      const r = await w.raw('POST', `${NS}/${route}?xlate_language=de`, { as: w.admin, json: { ...json, xlate_language: 'fr' } });
      expect([r.status, r.body.lang], route).toEqual([201, 'fr']);
      if (route === 'events') expect([r.body.rest_url, r.body.venue.lang]).toEqual([`${w.baseUrl}/fr${NS}/events/${r.body.id}`, 'fr']);
      if (route === 'categories' || route === 'tags') expect(r.headers.get('Location'), route).toBe(`${w.baseUrl}/fr${NS}/${route}/${r.body.id}`);
      // on an update, the links the answer carries are the body's language's
      const updated = await w.raw('PATCH', `${NS}/${route}/${r.body.id}`, { as: w.admin, json: { description: 'Mis à jour', wpml_language: 'fr' } });
      expect(updated.body.url ?? updated.body.urls.self, route).toContain(`${w.baseUrl}/fr/`);
    }
    const form = await w.raw('POST', `/de${NS}/tags`, { as: w.admin, form: 'name=Formulaire&xlate_language=fr' });
    expect([form.status, form.body.lang]).toEqual([201, 'fr']);
    const wrong = await w.raw('POST', `${NS}/tags`, { as: w.admin, json: { name: 'Falsch', xlate_language: 'es' } });
    expect([wrong.status, wrong.body.code, Object.keys(wrong.body.data.params)]).toEqual([400, 'rest_invalid_param', ['xlate_language']]);
  });

  it('creates inline venues, organizers and terms of an event in the current language', async () => {
    const e = await create(w, `/fr${NS}/events`, {
      title: 'Bal populaire', start_date: '2031-09-03 20:00', end_date: '2031-09-03 23:00',
      venue: { venue: 'Place du village' }, organizer: [{ organizer: 'Comité des fêtes' }], categories: ['Danse'], tags: ['nuit'],
    });
    expect([e.lang, e.venue.lang, e.organizer[0].lang, e.categories[0].lang, e.tags[0].lang]).toEqual(['fr', 'fr', 'fr', 'fr', 'fr']);
    expect(ids((await w.raw('GET', `/fr${NS}/venues?search=village`)).body.venues)).toEqual([e.venue.id]);
    expect((await w.raw('GET', `${NS}/venues?search=village`)).body.total).toBe(0);
    expect(ids((await w.raw('GET', `/fr${NS}/categories?search=danse`)).body.categories)).toEqual([e.categories[0].id]);
    expect((await w.raw('GET', `${NS}/categories?hide_empty=0&search=danse`)).body.total).toBe(0);
  });

  it('gives the Location of a created term the language prefix', async () => {
    const r = await w.raw('POST', `/fr${NS}/tags`, { as: w.admin, json: { name: 'étiquette' } });
    expect(r.headers.get('Location')).toBe(`${w.baseUrl}/fr${NS}/tags/${r.body.id}`);
    const c = await w.raw('POST', `${NS}/categories?xlate_language=de`, { as: w.admin, json: { name: 'Ort' } });
    expect(c.headers.get('Location')).toBe(`${w.baseUrl}/de${NS}/categories/${c.body.id}`);
    const en = await w.raw('POST', `/fr${NS}/categories?xlate_language=en`, { as: w.admin, json: { name: 'Place' } });
    expect(en.headers.get('Location')).toBe(`${w.baseUrl}${NS}/categories/${en.body.id}`);
  });

  it('links translation_of into the group; a second member of a language, or another type, is refused', async () => {
    const types: [string, (name: string) => Record<string, unknown>][] = [
      ['events', (name) => ({ title: name, start_date: '2031-10-01 10:00', end_date: '2031-10-01 11:00' })],
      ['venues', (name) => ({ venue: name })],
      ['organizers', (name) => ({ organizer: name })],
      ['categories', (name) => ({ name })],
      ['tags', (name) => ({ name })],
    ];
    const originals: Record<string, Rec> = {};
    for (const [route, body] of types) {
      const en = await create(w, `${NS}/${route}`, body(`Group ${route}`));
      originals[route] = en;
      const fr = await create(w, `/fr${NS}/${route}`, { ...body(`Groupe ${route}`), translation_of: en.id });
      // joining through the fr member works just as well
      const de = await create(w, `${NS}/${route}?xlate_language=de`, { ...body(`Gruppe ${route}`), translation_of: fr.id });
      const group = { en: en.id, fr: fr.id, de: de.id };
      expect([fr.translations, de.translations], route).toEqual([{ en: en.id, fr: fr.id }, group]);
      for (const member of [en.id, fr.id, de.id]) expect((await w.raw('GET', `${NS}/${route}/${member}`)).body.translations, route).toEqual(group);

      for (const [path, target] of [[`/fr${NS}/${route}`, en.id], [`/fr${NS}/${route}`, de.id], [`${NS}/${route}`, fr.id]] as const) {
        const again = await w.raw('POST', path, { as: w.admin, json: { ...body(`Again ${route} ${target}`), translation_of: target } });
        expect([again.status, again.body.code, Object.keys(again.body.data?.params ?? {})], `${path} translation_of ${target}`).toEqual([400, 'rest_invalid_param', ['translation_of']]);
      }
      const none = await w.raw('POST', `/fr${NS}/${route}`, { as: w.admin, json: { ...body(`Nowhere ${route}`), translation_of: 987654 } });
      expect([none.status, none.body.code], route).toEqual([400, 'rest_invalid_param']);
    }
    // translation_of naming a record of another type
    const crossed: [string, string][] = [['events', 'venues'], ['venues', 'events'], ['organizers', 'venues'], ['venues', 'organizers'], ['categories', 'tags'], ['tags', 'categories']];
    for (const [route, other] of crossed) {
      const body = types.find(([r]) => r === route)![1](`Crossed ${route} ${other}`);
      const r = await w.raw('POST', `/de${NS}/${route}`, { as: w.admin, json: { ...body, translation_of: originals[other]!.id } });
      expect([r.status, r.body.code, Object.keys(r.body.data?.params ?? {})], `${route} translation_of a ${other}`).toEqual([400, 'rest_invalid_param', ['translation_of']]);
    }
    // nothing was added to the groups by the refused requests
    for (const [route] of types) expect(Object.keys((await w.raw('GET', `${NS}/${route}/${originals[route]!.id}`)).body.translations)).toEqual(['en', 'fr', 'de']);
  });

  it('never changes the language of a record on update, whatever the request language', async () => {
    const made = {
      events: await create(w, `${NS}/events`, { title: 'Keeps English', start_date: '2031-11-01 10:00', end_date: '2031-11-01 11:00' }),
      venues: await create(w, `${NS}/venues`, { venue: 'Keeps English venue' }),
      organizers: await create(w, `${NS}/organizers`, { organizer: 'Keeps English organizer' }),
      categories: await create(w, `${NS}/categories`, { name: 'Keeps English category' }),
      tags: await create(w, `${NS}/tags`, { name: 'Keeps English tag' }),
    };
    const renames: Record<string, Record<string, unknown>> = { events: { title: 'Renamed' }, venues: { venue: 'Renamed venue' }, organizers: { organizer: 'Renamed organizer' }, categories: { name: 'Renamed category' }, tags: { name: 'Renamed tag' } };
    for (const [route, rec] of Object.entries(made)) {
      for (const [method, path] of [['PATCH', `/fr${NS}/${route}/${rec.id}`], ['PUT', `${NS}/${route}/${rec.id}?xlate_language=de`], ['POST', `/de${NS}/${route}/${rec.id}`]] as const) {
        const r = await w.raw(method, path, { as: w.admin, json: renames[route] });
        expect([r.status, r.body.lang, r.body.translations], `${method} ${path}`).toEqual([200, 'en', { en: rec.id }]);
      }
      // translation_of is honoured on create only
      const other = await create(w, `/fr${NS}/${route}`, { ...renames[route], ...(route === 'events' ? { start_date: '2031-12-02 10:00', end_date: '2031-12-02 11:00' } : {}) });
      const linked = await w.raw('PATCH', `/fr${NS}/${route}/${rec.id}`, { as: w.admin, json: { translation_of: other.id } });
      expect([linked.status, linked.body.lang, linked.body.translations], `${route} translation_of on update`).toEqual([200, 'en', { en: rec.id }]);
      expect((await w.raw('GET', `${NS}/${route}/${rec.id}`)).body.lang).toBe('en');
    }
    // still listed in en only
    expect((await w.raw('GET', `/fr${NS}/events?start_date=2031-11-01&end_date=2031-11-30`)).body.total).toBe(0);
    expect((await w.raw('GET', `${NS}/events?start_date=2031-11-01&end_date=2031-11-30`)).body.events.map((e: Rec) => e.id)).toEqual([made.events.id]);
  });

  it('keeps the slug of an updated record unique within its own language', async () => {
    const en = await create(w, `${NS}/venues`, { venue: 'Slug keeper' });
    await create(w, `/fr${NS}/venues`, { venue: 'Garde', slug: 'taken-in-fr' });
    const r = await w.raw('PATCH', `/fr${NS}/venues/${en.id}`, { as: w.admin, json: { slug: 'taken-in-fr' } });
    expect([r.status, r.body.slug, r.body.lang]).toEqual([200, 'taken-in-fr', 'en']);
  });
});

describe('slugs are unique per type and language', () => {
  it('allows the same slug in en and fr and reads it in the current language first', async () => {
    const en = await create(w, `${NS}/events`, { title: 'Fete', start_date: '2031-07-14 10:00', end_date: '2031-07-14 11:00' });
    const fr = await create(w, `/fr${NS}/events`, { title: 'Fête', slug: 'fete', start_date: '2031-07-14 10:00', end_date: '2031-07-14 11:00', translation_of: en.id });
    expect([en.slug, fr.slug]).toEqual(['fete', 'fete']);
    const read = async (path: string) => (await w.raw('GET', path)).body.id;
    expect(await read(`${NS}/events/by-slug/fete`)).toBe(en.id);
    expect(await read(`/fr${NS}/events/by-slug/fete`)).toBe(fr.id);
    expect(await read(`${NS}/events/by-slug/fete?xlate_language=fr`)).toBe(fr.id);
    expect(await read(`/fr${NS}/events/by-slug/fete?xlate_language=en`)).toBe(en.id);
    expect(await read(`/de${NS}/events/by-slug/fete`)).toBe(en.id);
    // a second fr record of that slug gets a suffix; the en one is untouched
    const fr2 = await create(w, `/fr${NS}/events`, { title: 'Fête encore', slug: 'fete', start_date: '2031-07-15 10:00', end_date: '2031-07-15 11:00' });
    expect(fr2.slug).toBe('fete-2');
  });

  it('finds a slug that exists only in another language', async () => {
    const fr = await create(w, `/fr${NS}/events`, { title: 'Seulement en français', start_date: '2031-07-16 10:00', end_date: '2031-07-16 11:00' });
    const r = await w.raw('GET', `${NS}/events/by-slug/${fr.slug}`);
    expect([r.status, r.body.id, r.body.lang]).toEqual([200, fr.id, 'fr']);
    const de = await w.raw('GET', `/de${NS}/events/by-slug/${fr.slug}`);
    expect([de.status, de.body.id]).toEqual([200, fr.id]);
  });

  it('does the same for venues, organizers, categories and tags', async () => {
    for (const [route, field] of [['venues', 'venue'], ['organizers', 'organizer']] as const) {
      const en = await create(w, `${NS}/${route}`, { [field]: `Twin ${route}` });
      const fr = await create(w, `/fr${NS}/${route}`, { [field]: `Jumeau ${route}`, slug: en.slug, translation_of: en.id });
      expect(fr.slug, route).toBe(en.slug);
      expect((await w.raw('GET', `${NS}/${route}/by-slug/${en.slug}`)).body.id, route).toBe(en.id);
      expect((await w.raw('GET', `/fr${NS}/${route}/by-slug/${en.slug}`)).body.id, route).toBe(fr.id);
      const only = await create(w, `/de${NS}/${route}`, { [field]: `Nur deutsch ${route}` });
      expect((await w.raw('GET', `${NS}/${route}/by-slug/${only.slug}`)).body.id, route).toBe(only.id);
    }
    for (const route of ['categories', 'tags']) {
      const en = await create(w, `${NS}/${route}`, { name: `Twin ${route}` });
      const fr = await create(w, `/fr${NS}/${route}`, { name: `Twin ${route}`, translation_of: en.id });
      expect([fr.slug, fr.lang], route).toEqual([en.slug, 'fr']);
      const bySlugFr = await w.raw('GET', `/fr${NS}/${route}?hide_empty=0&slug=${en.slug}`);
      expect(bySlugFr.body[route].map((t: Rec) => t.id), route).toEqual([fr.id]);
      const bySlugEn = await w.raw('GET', `${NS}/${route}?hide_empty=0&slug=${en.slug}`);
      expect(bySlugEn.body[route].map((t: Rec) => t.id), route).toEqual([en.id]);
    }
  });
});

describe('links carry the language prefix', () => {
  const slugOf = async (id: number) => (await ok(`${NS}/events/${id}`)).slug as string;

  it('prefixes url and rest_url of events, venues and organizers through /fr', async () => {
    const e = await ok(`/fr${NS}/events/${event.fr}`);
    const slug = await slugOf(event.fr);
    expect([e.url, e.rest_url]).toEqual([`${s.baseUrl}/fr/event/${slug}/`, `${s.baseUrl}/fr${NS}/events/${event.fr}`]);
    expect(e.venue.url).toBe(`${s.baseUrl}/fr/venue/${e.venue.slug}/`);
    expect(e.organizer[0].url).toBe(`${s.baseUrl}/fr/organizer/${e.organizer[0].slug}/`);
    expect(e.categories[0].urls).toEqual({ self: `${s.baseUrl}/fr${NS}/categories/${category.fr}`, collection: `${s.baseUrl}/fr${NS}/categories` });
    expect(e.tags[0].urls).toEqual({ self: `${s.baseUrl}/fr${NS}/tags/${tag.fr}`, collection: `${s.baseUrl}/fr${NS}/tags` });
    const v = await ok(`/fr${NS}/venues/${venue.fr}`);
    expect(v.url).toBe(`${s.baseUrl}/fr/venue/${v.slug}/`);
    const o = await ok(`/de${NS}/organizers/${organizer.de}`);
    expect(o.url).toBe(`${s.baseUrl}/de/organizer/${o.slug}/`);
    // the prefix of the request, whatever the language of the record
    const enViaFr = await ok(`/fr${NS}/events/${event.en}`);
    expect(enViaFr.rest_url).toBe(`${s.baseUrl}/fr${NS}/events/${event.en}`);
  });

  it('uses the prefix of the parameter, none for en, and never shows the parameter', async () => {
    const de = await ok(`${NS}/events/${event.de}?xlate_language=de`);
    const slug = await slugOf(event.de);
    expect([de.url, de.rest_url]).toEqual([`${s.baseUrl}/de/event/${slug}/`, `${s.baseUrl}/de${NS}/events/${event.de}`]);
    expect(de.venue.url).toBe(`${s.baseUrl}/de/venue/${de.venue.slug}/`);
    expect(de.categories[0].urls.self).toBe(`${s.baseUrl}/de${NS}/categories/${category.de}`);
    const wpml = await ok(`${NS}/events/${event.de}?wpml_language=de`);
    expect(wpml.rest_url).toBe(`${s.baseUrl}/de${NS}/events/${event.de}`);
    const en = await ok(`/fr${NS}/events/${event.en}?xlate_language=en`);
    expect([en.url, en.rest_url]).toEqual([`${s.baseUrl}/event/${await slugOf(event.en)}/`, `${s.baseUrl}${NS}/events/${event.en}`]);
    expect(en.venue.url).toBe(`${s.baseUrl}/venue/${en.venue.slug}/`);
    const frOverDe = await ok(`/de${NS}/events/${event.fr}?xlate_language=fr`);
    expect(frOverDe.rest_url).toBe(`${s.baseUrl}/fr${NS}/events/${event.fr}`);
  });

  it('prefixes term url and urls', async () => {
    const fr = await ok(`/fr${NS}/categories/${category.fr}`);
    expect([fr.url, fr.urls]).toEqual([`${s.baseUrl}/fr/events/category/musique/`, { self: `${s.baseUrl}/fr${NS}/categories/${category.fr}`, collection: `${s.baseUrl}/fr${NS}/categories` }]);
    expect(fr._links.self[0].href).toBe(`${s.baseUrl}/fr${NS}/categories/${category.fr}`);
    const de = await ok(`${NS}/tags/${tag.de}?xlate_language=de`);
    expect([de.url, de.urls.self]).toEqual([`${s.baseUrl}/de/tag/${de.slug}/`, `${s.baseUrl}/de${NS}/tags/${tag.de}`]);
    const en = await ok(`/de${NS}/tags/${tag.en}?wpml_language=en`);
    expect([en.url, en.urls.self]).toEqual([`${s.baseUrl}/tag/outdoor/`, `${s.baseUrl}${NS}/tags/${tag.en}`]);
    const listed = await ok(`/fr${NS}/tags?hide_empty=0`);
    expect(listed.tags[0].urls.self).toBe(`${s.baseUrl}/fr${NS}/tags/${tag.fr}`);
  });

  it('prefixes rest_url and next_rest_url of lists and drops the language parameter from them', async () => {
    const cases: [string, string][] = [
      [`/fr${NS}/events?${YEAR}&per_page=1`, `${s.baseUrl}/fr${NS}/events/`],
      [`${NS}/events?${YEAR}&per_page=1&xlate_language=fr`, `${s.baseUrl}/fr${NS}/events/`],
      [`/de${NS}/events?${YEAR}&per_page=1&wpml_language=fr`, `${s.baseUrl}/fr${NS}/events/`],
    ];
    for (const [path, base] of cases) {
      const r = await ok(path);
      expect(r.total, path).toBe(2);
      expect(r.rest_url, path).toBe(`${base}?page=1&per_page=1&start_date=2031-01-01%2000%3A00%3A00&end_date=2031-12-31%2023%3A59%3A59&status=publish`);
      expect(r.next_rest_url, path).toBe(`${base}?per_page=1&start_date=2031-01-01%2000%3A00%3A00&end_date=2031-12-31%2023%3A59%3A59&status=publish&page=2`);
    }
    const page2 = await ok(`${NS}/events?${YEAR}&per_page=1&page=2&xlate_language=fr`);
    expect(page2.previous_rest_url).toBe(`${s.baseUrl}/fr${NS}/events/?per_page=1&start_date=2031-01-01%2000%3A00%3A00&end_date=2031-12-31%2023%3A59%3A59&status=publish`);
    const enViaFr = await ok(`/fr${NS}/events?${YEAR}&xlate_language=en`);
    expect(enViaFr.rest_url).toBe(`${s.baseUrl}${NS}/events/?page=1&per_page=10&start_date=2031-01-01%2000%3A00%3A00&end_date=2031-12-31%2023%3A59%3A59&status=publish`);

    for (const path of [`/fr${NS}/venues?xlate_language=de`, `${NS}/organizers?wpml_language=de`, `${NS}/categories?hide_empty=0&xlate_language=de`, `/fr${NS}/tags?hide_empty=0&wpml_language=de`]) {
      const r = await ok(path);
      expect(r.rest_url, path).toMatch(new RegExp(`^${s.baseUrl}/de${NS}/(venues|organizers|categories|tags)/`));
      expect(r.rest_url, path).not.toMatch(/xlate_language|wpml_language/);
    }
  });

  it('pages term lists with prefixed links and no language parameter', async () => {
    // two de categories with this word, and an en one that must not count
    await create(w, `${NS}/categories`, { name: 'Paging one' });
    await create(w, `/de${NS}/categories`, { name: 'Paging eins' });
    await create(w, `/de${NS}/categories`, { name: 'Paging zwei' });
    const r = await w.raw('GET', `${NS}/categories?hide_empty=0&per_page=1&search=paging&xlate_language=de`);
    expect(r.body.total).toBe(2);
    expect(r.body.rest_url).toBe(`${w.baseUrl}/de${NS}/categories/?per_page=1&search=paging&hide_empty=false`);
    expect(r.body.next_rest_url).toBe(`${w.baseUrl}/de${NS}/categories/?per_page=1&search=paging&hide_empty=false&page=2`);
  });

  it('prefixes the Link header through a base address', async () => {
    expect((await get(`/fr${NS}/events/${event.fr}`)).headers.get('link')).toBe(`<${s.baseUrl}/fr/wp-json/>; rel="https://api.w.org/"`);
    expect((await get(`${NS}/events/${event.fr}`)).headers.get('link')).toBe(`<${s.baseUrl}/wp-json/>; rel="https://api.w.org/"`);
  });

  // DESIGN §5 #21: the Link header, like url/rest_url, carries the prefix of the language the parameter chose
  // (…/de/wp-json/ for xlate_language=de; none for xlate_language=en through /fr/).
  it('prefixes the Link header with the language of the parameter', async () => {
    const de = await get(`${NS}/events/${event.de}?xlate_language=de`);
    expect(de.body.rest_url).toBe(`${s.baseUrl}/de${NS}/events/${event.de}`);
    expect(de.headers.get('link')).toBe(`<${s.baseUrl}/de/wp-json/>; rel="https://api.w.org/"`);
    expect((await get(`/fr${NS}/events/${event.en}?xlate_language=en`)).headers.get('link')).toBe(`<${s.baseUrl}/wp-json/>; rel="https://api.w.org/"`);
  });

  it('prefixes the namespace index and /doc', async () => {
    expect((await ok(`/fr${NS}`))._links).toEqual({ up: [{ href: `${s.baseUrl}/fr/wp-json/` }] });
    expect((await ok(`${NS}?xlate_language=de`))._links).toEqual({ up: [{ href: `${s.baseUrl}/de/wp-json/` }] });
    expect((await ok(`/fr${NS}?xlate_language=en`))._links).toEqual({ up: [{ href: `${s.baseUrl}/wp-json/` }] });
    expect((await ok(`/fr${NS}/doc`)).servers[0].url).toBe(`${s.baseUrl}/fr${NS}`);
    expect((await ok(`${NS}/doc?xlate_language=de`)).servers[0].url).toBe(`${s.baseUrl}/de${NS}`);
    expect((await ok(`/de${NS}/doc?wpml_language=en`)).servers[0].url).toBe(`${s.baseUrl}${NS}`);
  });
});
