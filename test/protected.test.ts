import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NS, TestServer, type Credentials, type RawResponse } from './helpers/server.js';

/**
 * Password-protected content, probed as an attacker would: nothing a protected record's list entry blanks (an event's
 * description, excerpt, venue, organizers, categories, tags, flags; a venue's or organizer's details) may make a list
 * select it, for a caller who may not open it — anyone who neither may edit it nor sent its password. Anonymous
 * callers get no protected record from `search` at all (WordPress core). Whoever may open it still finds it.
 *
 * The same fixture exists in each language, and every probe runs on `/`, `/de` and `/fr`.
 */

type Lang = 'en' | 'fr' | 'de';
const LANGS: [Lang, string][] = [['en', ''], ['fr', '/fr'], ['de', '/de']];
/** The window of the fixture's events (an event at the protected venue lies in April, apart). */
const MARCH = 'start_date=2027-03-01&end_date=2027-03-31&per_page=50';
const APRIL = 'start_date=2027-04-01&end_date=2027-04-30&per_page=50';
const SECRET_DESCRIPTION = 'quetzalcoatl';
const SECRET_EXCERPT = 'xylophonist';

interface Rec { id: number; slug: string; [key: string]: any }

/** The records of one language. */
interface Fixture {
  base: string;
  /** The protected event (owner's, published) and its links, which nothing else uses. */
  locked: Rec;
  hiddenVenue: Rec;
  hiddenOrganizer: Rec;
  hiddenCategory: Rec;
  hiddenTag: Rec;
  /** Open events: `open` shares the protected event's words and is featured and ticketed; `plain` is neither. */
  open: Rec;
  plain: Rec;
  openVenue: Rec;
  openOrganizer: Rec;
  openCategory: Rec;
  openTag: Rec;
  /** A protected venue and organizer (owner's), and an open event in April at that venue. */
  vault: Rec;
  guild: Rec;
  atVault: Rec;
  passwords: { event: string; venue: string; organizer: string };
}

let s: TestServer;
let owner: Credentials;
let editor: Credentials;
let otherAuthor: Credentials;
let contributor: Credentials;
let subscriber: Credentials;
const fixtures = {} as Record<Lang, Fixture>;

async function create(path: string, json: Record<string, unknown>, as: Credentials = s.admin): Promise<Rec> {
  const r = await s.raw('POST', path, { as, json });
  expect(r.status, `POST ${path} ${r.text}`).toBe(201);
  return r.body as Rec;
}

async function fixture(lang: Lang, prefix: string): Promise<Fixture> {
  const base = `${prefix}${NS}`;
  const passwords = { event: `pw-event-${lang}`, venue: `pw-venue-${lang}`, organizer: `pw-organizer-${lang}` };
  const hiddenVenue = await create(`${base}/venues`, { venue: `Cellar ${lang}`, city: 'Lisbon', geo_lat: 10.5, geo_lng: 20.5 }, owner);
  const hiddenOrganizer = await create(`${base}/organizers`, { organizer: `Circle ${lang}` }, owner);
  const hiddenCategory = await create(`${base}/categories`, { name: `Conspiracies ${lang}` });
  const hiddenTag = await create(`${base}/tags`, { name: `whispers ${lang}` });
  const openVenue = await create(`${base}/venues`, { venue: `Town hall ${lang}`, geo_lat: 50, geo_lng: 8 });
  const openOrganizer = await create(`${base}/organizers`, { organizer: `Council ${lang}` });
  const openCategory = await create(`${base}/categories`, { name: `Concerts ${lang}` });
  const openTag = await create(`${base}/tags`, { name: `loud ${lang}` });
  const day = (d: number, month = '03') => ({ start_date: `2027-${month}-${String(d).padStart(2, '0')} 19:00`, end_date: `2027-${month}-${String(d).padStart(2, '0')} 22:00` });
  const locked = await create(`${base}/events`, {
    title: `Members evening ${lang}`, ...day(10), password: passwords.event, description: `Plans of the ${SECRET_DESCRIPTION} society`,
    excerpt: `A ${SECRET_EXCERPT} plays`, cost: '99', featured: true, ticketed: false, venue: hiddenVenue.id, organizer: [hiddenOrganizer.id],
    categories: [hiddenCategory.id], tags: [hiddenTag.id],
  }, owner);
  const open = await create(`${base}/events`, {
    title: `Open evening ${lang}`, ...day(11), description: `Talk on the ${SECRET_DESCRIPTION} society`, excerpt: `A ${SECRET_EXCERPT} again`,
    featured: true, ticketed: true, venue: openVenue.id, organizer: [openOrganizer.id], categories: [openCategory.id], tags: [openTag.id],
  });
  const plain = await create(`${base}/events`, { title: `Plain evening ${lang}`, ...day(12), description: 'Nothing to hide' });
  const vault = await create(`${base}/venues`, {
    venue: `Vault ${lang}`, password: passwords.venue, city: 'Quixotown', address: '7 Obscura lane', phone: '+1 555 0142', geo_lat: -30.5, geo_lng: 60.5,
  }, owner);
  const guild = await create(`${base}/organizers`, { organizer: `Guild ${lang}`, password: passwords.organizer, email: 'hidden-guild@example.test', phone: '+1 555 0199' }, owner);
  const atVault = await create(`${base}/events`, { title: `Gathering ${lang}`, ...day(15, '04'), venue: vault.id, organizer: [guild.id] });
  return { base, locked, hiddenVenue, hiddenOrganizer, hiddenCategory, hiddenTag, open, plain, openVenue, openOrganizer, openCategory, openTag, vault, guild, atVault, passwords };
}

beforeAll(async () => {
  s = await TestServer.start();
  owner = await s.user('author', 'owner');
  editor = await s.user('editor', 'editor');
  otherAuthor = await s.user('author', 'other-author');
  contributor = await s.user('contributor', 'contributor');
  subscriber = await s.user('subscriber', 'subscriber');
  for (const [lang, prefix] of LANGS) fixtures[lang] = await fixture(lang, prefix);
});
afterAll(() => s.close());

// ---- the probes --------------------------------------------------------------------------------------------------

/** Which record's password opens what a probe looks at; `edit` only: term lists take no password. */
type Lock = 'event' | 'venue' | 'organizer' | 'edit';
/** What the caller is to the record probed: it may open it; or it may not, anonymous or signed in. */
type Standing = 'opens' | 'anonymous' | 'user';

interface Probe {
  name: string;
  lock: Lock;
  path: (f: Fixture) => string;
  /** The ids of the answer's list, or whether a record is in it. */
  read: (body: any, f: Fixture) => unknown;
  expected: (standing: Standing, f: Fixture) => unknown;
}

const ids = (key: string) => (body: any) => (body[key] as Rec[]).map((r) => r.id);
const sortedIds = (key: string) => (body: any) => ids(key)(body).sort((a, b) => a - b);
const sorted = (...list: number[]) => list.sort((a, b) => a - b);
const hiddenUnlessOpen = (withLocked: (f: Fixture) => number[], without: (f: Fixture) => number[]) =>
  (standing: Standing, f: Fixture) => (standing === 'opens' ? withLocked(f) : without(f));

const PROBES: Probe[] = [
  // event search: the description and excerpt are protected, the title is not (but anonymous callers get none)
  ...[SECRET_DESCRIPTION, SECRET_EXCERPT, 'tzalc', 'phonis', `${SECRET_DESCRIPTION} society`].map((word): Probe => ({
    name: `search=${word}`, lock: 'event', path: (f) => `${f.base}/events?${MARCH}&search=${encodeURIComponent(word)}`, read: ids('events'),
    expected: hiddenUnlessOpen((f) => [f.locked.id, f.open.id], (f) => [f.open.id]),
  })),
  {
    name: 'search by title', lock: 'event', path: (f) => `${f.base}/events?${MARCH}&search=members`, read: ids('events'),
    expected: (standing, f) => (standing === 'anonymous' ? [] : [f.locked.id]),
  },
  {
    name: 'search excluding a protected word', lock: 'event', path: (f) => `${f.base}/events?${MARCH}&search=${encodeURIComponent(`evening -${SECRET_DESCRIPTION}`)}`, read: ids('events'),
    expected: (standing, f) => (standing === 'user' ? [f.locked.id, f.plain.id] : [f.plain.id]),
  },
  // filters on what the list blanks
  ...([
    ['venue', (f: Fixture) => `venue=${f.hiddenVenue.id},${f.openVenue.id}`],
    ['organizer', (f: Fixture) => `organizer=${f.hiddenOrganizer.id},${f.openOrganizer.id}`],
    ['categories', (f: Fixture) => `categories=${f.hiddenCategory.id},${f.openCategory.id}`],
    ['categories by slug', (f: Fixture) => `categories=${f.hiddenCategory.slug},${f.openCategory.slug}`],
    ['tags', (f: Fixture) => `tags=${f.hiddenTag.id},${f.openTag.id}`],
    ['tags by slug', (f: Fixture) => `tags=${f.hiddenTag.slug},${f.openTag.slug}`],
    ['featured=true', () => 'featured=true'],
  ] as const).map(([name, query]): Probe => ({
    name, lock: 'event', path: (f) => `${f.base}/events?${MARCH}&${query(f)}`, read: ids('events'),
    expected: hiddenUnlessOpen((f) => [f.locked.id, f.open.id], (f) => [f.open.id]),
  })),
  {
    name: 'ticketed=false', lock: 'event', path: (f) => `${f.base}/events?${MARCH}&ticketed=false`, read: ids('events'),
    expected: hiddenUnlessOpen((f) => [f.locked.id, f.plain.id], (f) => [f.plain.id]),
  },
  {
    name: 'featured and search together', lock: 'event', path: (f) => `${f.base}/events?${MARCH}&featured=1&search=evening`, read: ids('events'),
    expected: hiddenUnlessOpen((f) => [f.locked.id, f.open.id], (f) => [f.open.id]),
  },
  {
    name: 'geoloc near its venue', lock: 'event', path: (f) => `${f.base}/events?${MARCH}&geoloc=1&geoloc_lat=10.5&geoloc_lng=20.5`, read: ids('events'),
    expected: hiddenUnlessOpen((f) => [f.locked.id], () => []),
  },
  {
    name: 'geoloc, any venue with coordinates', lock: 'event', path: (f) => `${f.base}/events?${MARCH}&geoloc=1&geoloc_lat=10.5`, read: ids('events'),
    expected: hiddenUnlessOpen((f) => [f.locked.id, f.open.id], (f) => [f.open.id]),
  },
  // the iCalendar feed leaves protected events out, for everyone and whatever the filter
  ...[`search=${SECRET_DESCRIPTION}`, 'featured=1', 'ticketed=0'].map((query): Probe => ({
    name: `events.ics?${query}`, lock: 'event', path: (f) => `${f.base}/events.ics?${MARCH}&${query}`,
    read: (body: string, f) => body.includes(`UID:event-${f.locked.id}@`) || body.includes('Members evening'), expected: () => false,
  })),
  // the links of a protected event, from the other side
  { name: 'venues?event=', lock: 'event', path: (f) => `${f.base}/venues?event=${f.locked.id}`, read: ids('venues'), expected: hiddenUnlessOpen((f) => [f.hiddenVenue.id], () => []) },
  { name: 'organizers?event=', lock: 'event', path: (f) => `${f.base}/organizers?event=${f.locked.id}`, read: ids('organizers'), expected: hiddenUnlessOpen((f) => [f.hiddenOrganizer.id], () => []) },
  ...(['event', 'post'] as const).flatMap((param) => [
    { name: `categories?${param}=`, lock: 'edit', path: (f: Fixture) => `${f.base}/categories?hide_empty=0&${param}=${f.locked.id}`, read: ids('categories'), expected: hiddenUnlessOpen((f) => [f.hiddenCategory.id], () => []) },
    { name: `tags?${param}=`, lock: 'edit', path: (f: Fixture) => `${f.base}/tags?hide_empty=0&${param}=${f.locked.id}`, read: ids('tags'), expected: hiddenUnlessOpen((f) => [f.hiddenTag.id], () => []) },
  ] satisfies Probe[]),
  ...(['venues', 'organizers'] as const).flatMap((route) => ['has_events=1', 'only_with_upcoming=1'].map((query): Probe => ({
    name: `${route}?${query}`, lock: 'event', path: (f) => `${f.base}/${route}?${query}&per_page=50`,
    read: (body, f) => ids(route)(body).includes(route === 'venues' ? f.hiddenVenue.id : f.hiddenOrganizer.id),
    expected: (standing) => standing === 'opens',
  }))),
  {
    name: 'venues?has_events=0', lock: 'event', path: (f) => `${f.base}/venues?has_events=0&per_page=50`,
    read: (body, f) => ids('venues')(body).includes(f.hiddenVenue.id), expected: (standing) => standing !== 'opens',
  },
  // term counts and hide_empty: a count is what every caller finds through the term
  {
    name: 'categories, hide_empty', lock: 'edit', path: (f) => `${f.base}/categories?per_page=50`,
    read: (body, f) => [ids('categories')(body).includes(f.hiddenCategory.id), ids('categories')(body).includes(f.openCategory.id)], expected: () => [false, true],
  },
  {
    name: 'tag counts', lock: 'edit', path: (f) => `${f.base}/tags?hide_empty=0&include=${f.hiddenTag.id},${f.openTag.id}&orderby=include`,
    read: (body) => (body.tags as Rec[]).map((t) => t.count), expected: () => [0, 1],
  },
  // protected venues and organizers: their details are not searchable (their names are, by callers signed in)
  ...['Quixotown', 'obscura', '555 0142'].map((word): Probe => ({
    name: `venues?search=${word}`, lock: 'venue', path: (f) => `${f.base}/venues?search=${encodeURIComponent(word)}`, read: ids('venues'),
    expected: hiddenUnlessOpen((f) => [f.vault.id], () => []),
  })),
  { name: 'venues?search=<name>', lock: 'venue', path: (f) => `${f.base}/venues?search=vault`, read: ids('venues'), expected: (standing, f) => (standing === 'anonymous' ? [] : [f.vault.id]) },
  ...['hidden-guild', 'example', '0199'].map((word): Probe => ({
    name: `organizers?search=${word}`, lock: 'organizer', path: (f) => `${f.base}/organizers?search=${encodeURIComponent(word)}`, read: ids('organizers'),
    expected: hiddenUnlessOpen((f) => [f.guild.id], () => []),
  })),
  { name: 'organizers?search=<name>', lock: 'organizer', path: (f) => `${f.base}/organizers?search=guild`, read: ids('organizers'), expected: (standing, f) => (standing === 'anonymous' ? [] : [f.guild.id]) },
  // a protected venue's coordinates select no event for a caller who may not open the venue
  {
    name: 'geoloc near a protected venue', lock: 'venue', path: (f) => `${f.base}/events?${APRIL}&geoloc=1&geoloc_lat=-30.5&geoloc_lng=60.5`, read: ids('events'),
    expected: hiddenUnlessOpen((f) => [f.atVault.id], () => []),
  },
  {
    name: 'geoloc, a protected venue with coordinates', lock: 'venue', path: (f) => `${f.base}/events?${APRIL}&geoloc=1&geoloc_lng=60.5`, read: ids('events'),
    expected: hiddenUnlessOpen((f) => [f.atVault.id], () => []),
  },
];

/** Who asks, and with which password: `right` is the password of the record probed, `other` another record's. */
interface Asker { label: string; as?: () => Credentials; password?: 'right' | 'wrong' | 'other'; edits: boolean }
const ASKERS: Asker[] = [
  { label: 'anonymous', edits: false },
  { label: 'anonymous, wrong password', password: 'wrong', edits: false },
  { label: "anonymous, another record's password", password: 'other', edits: false },
  { label: 'anonymous, right password', password: 'right', edits: false },
  { label: 'subscriber', as: () => subscriber, edits: false },
  { label: 'subscriber, right password', as: () => subscriber, password: 'right', edits: false },
  { label: 'contributor', as: () => contributor, edits: false },
  { label: 'author, not the owner', as: () => otherAuthor, edits: false },
  { label: 'author, not the owner, wrong password', as: () => otherAuthor, password: 'wrong', edits: false },
  { label: 'owner (author)', as: () => owner, edits: true },
  { label: 'editor', as: () => editor, edits: true },
  { label: 'administrator', as: () => s.admin, edits: true },
];

function passwordFor(asker: Asker, lock: Lock, f: Fixture): string | undefined {
  if (!asker.password || lock === 'edit') return asker.password === 'wrong' ? 'wrong' : undefined;
  if (asker.password === 'wrong') return 'wrong';
  const other: Record<Exclude<Lock, 'edit'>, 'event' | 'venue' | 'organizer'> = { event: 'venue', venue: 'organizer', organizer: 'event' };
  return f.passwords[asker.password === 'right' ? lock : other[lock]];
}

function standingOf(asker: Asker, lock: Lock): Standing {
  if (asker.edits || (asker.password === 'right' && lock !== 'edit')) return 'opens';
  return asker.as ? 'user' : 'anonymous';
}

describe('password-protected records cannot be found by what they hide', () => {
  for (const [lang] of LANGS) {
    it(`on the ${lang} base, for every caller and every probe`, async () => {
      const f = fixtures[lang];
      const wrong: string[] = [];
      for (const probe of PROBES) {
        for (const asker of ASKERS) {
          const password = passwordFor(asker, probe.lock, f);
          const path = probe.path(f) + (password === undefined ? '' : `&password=${encodeURIComponent(password)}`);
          const r: RawResponse = await s.raw('GET', path, { as: asker.as?.() });
          expect(r.status, `${asker.label}: GET ${path} ${r.text.slice(0, 300)}`).toBe(200);
          const got = probe.read(r.body, f);
          const expected = probe.expected(standingOf(asker, probe.lock), f);
          if (JSON.stringify(got) !== JSON.stringify(expected)) wrong.push(`${probe.name} — ${asker.label}: got ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`);
        }
      }
      expect(wrong).toEqual([]);
    });
  }
});

describe('what the lists and sync show of a protected event', () => {
  it('sync pages carry it blanked unless its password is sent', async () => {
    const f = fixtures.en;
    const find = async (query: string, as?: Credentials) => {
      const r = await s.raw('GET', `${NS}/events?modified_after=1970-01-01&per_page=50${query}`, { as });
      expect(r.status).toBe(200);
      return (r.body.events as Rec[]).find((e) => e.id === f.locked.id)!;
    };
    for (const as of [undefined, subscriber, otherAuthor, editor]) {
      expect(await find('', as)).toMatchObject({ description: '', excerpt: '', venue: [], organizer: [], categories: [], tags: [], featured: null });
    }
    expect((await find(`&password=${f.passwords.event}`)).description).toContain(SECRET_DESCRIPTION);
  });

  it('_fields picks from the blanked entry', async () => {
    const f = fixtures.fr;
    const r = await s.raw('GET', `/fr${NS}/events?${MARCH}&_fields=${['id', 'description', 'excerpt', 'venue', 'organizer', 'categories', 'featured'].map((k) => `events.${k}`).join(',')}`);
    expect(r.status).toBe(200);
    expect((r.body.events as Rec[]).find((e) => e.id === f.locked.id)).toEqual({ id: f.locked.id, description: '', excerpt: '', venue: [], organizer: [], categories: [], featured: null });
    expect(r.text).not.toContain('Plans of the');
  });
});

describe('setting and removing a password', () => {
  it('moves the event out of and back into what filters, search and term counts find', async () => {
    const tag = await create(`${NS}/tags`, { name: 'toggled' });
    const e = await create(`${NS}/events`, { title: 'Toggled', description: 'marmalade', start_date: '2027-07-01 10:00', end_date: '2027-07-01 11:00', tags: [tag.id] }, owner);
    const seen = async () => [
      (await s.raw('GET', `${NS}/events?start_date=2027-07-01&end_date=2027-07-01&search=marmalade`)).body.total,
      (await s.raw('GET', `${NS}/events?start_date=2027-07-01&end_date=2027-07-01&tags=${tag.id}`)).body.total,
      (await s.raw('GET', `${NS}/tags/${tag.id}`)).body.count,
    ];
    expect(await seen()).toEqual([1, 1, 1]);
    for (const [password, expected] of [['now-locked', [0, 0, 0]], ['', [1, 1, 1]], ['locked-again', [0, 0, 0]]] as const) {
      expect((await s.raw('PATCH', `${NS}/events/${e.id}`, { as: owner, json: { password } })).status).toBe(200);
      expect([password, await seen()]).toEqual([password, expected]);
    }
  });
});

describe('lists filtered by an event the caller may not read', () => {
  it('answer as for an unknown event', async () => {
    const f = fixtures.en;
    const draft = await create(`${NS}/events`, {
      title: 'Unreadable draft', start_date: '2027-06-01 10:00', end_date: '2027-06-01 11:00', status: 'draft',
      venue: f.openVenue.id, organizer: [f.openOrganizer.id], categories: [f.openCategory.id], tags: [f.openTag.id],
    });
    for (const route of ['venues', 'organizers', 'categories', 'tags']) {
      const unknown = await s.raw('GET', `${NS}/${route}?event=987654`);
      for (const as of [undefined, subscriber, otherAuthor]) {
        const r = await s.raw('GET', `${NS}/${route}?event=${draft.id}`, { as });
        expect([route, r.status, r.body]).toEqual([route, unknown.status, unknown.body]);
      }
      expect((await s.raw('GET', `${NS}/${route}?event=${draft.id}`, { as: editor })).status).toBe(200);
    }
  });
});

describe('translation maps show only translations the caller may read', () => {
  it('leaves out drafts and private translations of events, venues and organizers', async () => {
    const when = { start_date: '2027-05-01 10:00', end_date: '2027-05-01 11:00' };
    const cases: [string, Record<string, unknown>][] = [['events', { title: 'Mapped', ...when }], ['venues', { venue: 'Mapped hall' }], ['organizers', { organizer: 'Mapped host' }]];
    const groups: Record<string, Record<'en' | 'fr' | 'de', Rec>> = {};
    for (const [route, body] of cases) {
      const en = await create(`${NS}/${route}`, body);
      const fr = await create(`/fr${NS}/${route}`, { ...body, status: 'draft', translation_of: en.id });
      const de = await create(`/de${NS}/${route}`, { ...body, status: 'private', translation_of: en.id });
      groups[route] = { en, fr, de };
    }
    await new Promise((resolve) => setTimeout(resolve, 2100)); // sync pages list changes two seconds old
    for (const [route] of cases) {
      const { en, fr, de } = groups[route]!;
      const mapFor = async (as?: Credentials) => (await s.raw('GET', `${NS}/${route}/${en.id}`, { as })).body.translations;
      for (const as of [undefined, subscriber, otherAuthor]) expect([route, await mapFor(as)]).toEqual([route, { en: en.id }]);
      expect([route, await mapFor(editor)]).toEqual([route, { en: en.id, fr: fr.id, de: de.id }]);
      // in its list, a sync page and `_fields`
      const list = route === 'events' ? `${NS}/events?start_date=2027-05-01&end_date=2027-05-01` : `${NS}/${route}?search=mapped`;
      for (const path of [list, `${NS}/${route}?modified_after=1970-01-01&per_page=50`, `${list}&_fields=${route}.id,${route}.translations`]) {
        const listed = (await s.raw('GET', path)).body[route] as Rec[];
        expect([path, listed.find((r) => r.id === en.id)!.translations]).toEqual([path, { en: en.id }]);
      }
      // embedded in an event
      if (route !== 'events') {
        const host = await create(`${NS}/events`, { title: `Host of ${route}`, start_date: '2027-05-02 10:00', end_date: '2027-05-02 11:00', [route === 'venues' ? 'venue' : 'organizer']: en.id });
        const embedded = (await s.raw('GET', `${NS}/events/${host.id}`)).body[route === 'venues' ? 'venue' : 'organizer'];
        expect([route, (Array.isArray(embedded) ? embedded[0] : embedded).translations]).toEqual([route, { en: en.id }]);
      }
    }
  });
});

describe('joining a translation group needs the right to edit the record joined', () => {
  const bodies: Record<string, (name: string) => Record<string, unknown>> = {
    events: (name) => ({ title: name, start_date: '2027-06-01 10:00', end_date: '2027-06-01 11:00' }),
    venues: (name) => ({ venue: name }),
    organizers: (name) => ({ organizer: name }),
  };
  /** Every record stored, whatever its type, language or status (what no route lists). */
  const postCount = async () => (await s.sql<{ n: number }>('SELECT CAST(COUNT(*) AS INTEGER) AS n FROM posts'))[0]!.n;

  it('answers a record the caller may not read like one that does not exist, and changes nothing', async () => {
    for (const [route, body] of Object.entries(bodies)) {
      const secret = await create(`${NS}/${route}`, { ...body(`Private ${route}`), status: 'private' });
      const draft = await create(`${NS}/${route}`, { ...body(`Draft ${route}`), status: 'draft' }, otherAuthor);
      const missing = await s.raw('POST', `/fr${NS}/${route}`, { as: contributor, json: { ...body(`Missing ${route}`), translation_of: 987654 } });
      expect(missing.status).toBe(400);
      for (const target of [secret.id, draft.id]) {
        const before = await postCount();
        const r = await s.raw('POST', `/fr${NS}/${route}`, { as: contributor, json: { ...body(`Attached ${route}`), translation_of: target } });
        expect([route, r.status, r.body.code, r.body.data?.params]).toEqual([route, 400, 'rest_invalid_param', { translation_of: missing.body.data.params.translation_of.replace('987654', String(target)) }]);
        expect(await postCount()).toEqual(before);
        expect((await s.raw('GET', `${NS}/${route}/${target}`, { as: s.admin })).body.translations).toEqual({ en: target });
      }
      // inline, in an event write
      if (route !== 'events') {
        const key = route === 'venues' ? 'venue' : 'organizer';
        const inline = route === 'venues' ? { venue: `Inline ${route}`, translation_of: secret.id } : [{ organizer: `Inline ${route}`, translation_of: secret.id }];
        const r = await s.raw('POST', `/fr${NS}/events`, { as: contributor, json: { ...bodies.events!('Inline host'), [key]: inline } });
        expect([route, r.status, r.body.code]).toEqual([route, 400, 'rest_invalid_param']);
      }
    }
  });

  it('refuses a record the caller may read but not edit with 403, and lets whoever may edit it join', async () => {
    for (const [route, body] of Object.entries(bodies)) {
      const published = await create(`${NS}/${route}`, body(`Published ${route}`));
      for (const as of [contributor, otherAuthor]) {
        const r = await s.raw('POST', `/fr${NS}/${route}`, { as, json: { ...body(`Refused ${route}`), translation_of: published.id } });
        expect([route, as.login, r.status, r.body.code]).toEqual([route, as.login, 403, 'rest_cannot_edit']);
      }
      expect((await s.raw('GET', `${NS}/${route}/${published.id}`)).body.translations).toEqual({ en: published.id });

      const own = await create(`${NS}/${route}`, body(`Own ${route}`), otherAuthor);
      const joined = await create(`/fr${NS}/${route}`, { ...body(`Joined ${route}`), translation_of: own.id }, otherAuthor);
      expect(joined.translations).toEqual({ en: own.id, fr: joined.id });
      const draft = await create(`${NS}/${route}`, body(`Contributor draft ${route}`), contributor);
      const its = await create(`/de${NS}/${route}`, { ...body(`Entwurf ${route}`), translation_of: draft.id }, contributor);
      expect(its.translations).toEqual({ en: draft.id, de: its.id });
      const byEditor = await create(`/de${NS}/${route}`, { ...body(`Redaktion ${route}`), translation_of: published.id }, editor);
      expect(byEditor.translations).toEqual({ en: published.id, de: byEditor.id });
    }
  });
});
