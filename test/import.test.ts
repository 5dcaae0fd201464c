import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations } from '../src/db/migrations.js';
import { openDatabase } from '../src/db/sqlite/connection.js';
import { migrate, sqliteMigrationsDir } from '../src/db/sqlite/migrate.js';
import { ContractChecker } from './helpers/contract.js';
import { cleanUp, engineDb } from './helpers/process.js';
import { NS, TestServer, type Credentials, type RawResponse } from './helpers/server.js';

/**
 * `almanac import` (issue 10): a second Almanac, started here on a public address of its own, is the source; it is
 * seeded through its API with records covering every field, status, parent, translation and link, imported into a
 * fresh Almanac with the real CLI (`dist/src/cli.js`), and both are compared record by record through the API.
 *
 * What legitimately differs, and nothing else:
 * - the site address in every link (`url`, `rest_url`, term `urls` and `_links`, JSON-LD URLs, and an event's
 *   `website` when the event has none of its own, which shows its permalink): each site shows its own;
 * - `global_id`: each site names its records with its own host and path;
 * - `global_id_lineage`: the import appends the source's global id after the target's own, `[own, source's]`;
 * - password-protected records are not imported (the API shows neither their fields nor their password): they are
 *   reported as skipped, and are seeded unlinked so that nothing else depends on them.
 */

const CLI = resolve(dirname(fileURLToPath(import.meta.url)), '../dist/src/cli.js');
const SOURCE_SITE = 'http://old-site.example.test/calendar';
const SOURCE_KEY = 'old-site.example.test/calendar';
const ALL = 'publish,future,draft,pending,private,trash';
const LANGS = ['en', 'fr', 'de'] as const;
type Lang = (typeof LANGS)[number];
type Rec = Record<string, any>;

interface Run { code: number | null; stdout: string; stderr: string }

/** The environment that points the CLI at a test server's database (its SQLite file, or its PostgreSQL database). */
const databaseOf = (server: TestServer): Record<string, string> => (server.config.databaseUrl ? { ALMANAC_DATABASE_URL: server.config.databaseUrl } : {});

/** Runs the built CLI in a child process, as a user would. */
function almanac(args: string[], dbPath: string, env: Record<string, string> = {}): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ALMANAC_DB: dbPath, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/** The summary line of a resource: `events: 1 created, 2 updated, …` → numbers. */
interface Tally { created: number; updated: number; unchanged: number; skipped: number; 'not modified'?: number }
function tally(run: Run, resource: string): Tally {
  const line = run.stdout.split('\n').find((l) => l.startsWith(`${resource}: `));
  expect(line, run.stdout + run.stderr).toBeDefined();
  return Object.fromEntries([...line!.matchAll(/(\d+) (created|updated|unchanged|skipped|not modified)/g)].map((m) => [m[2]!, Number(m[1])])) as unknown as Tally;
}

let source: TestServer;
let target: TestServer;
let dir: string;
const users: Record<'editor' | 'author' | 'contributor', { id: number; creds: Credentials }> = {} as never;
/** Ids the source protects with a password (never imported). */
const protectedIds: number[] = [];
/** Events hidden from listings (no list shows them: compared by id). */
const hiddenIds: number[] = [];
/** Every post id seeded, for the comparison of single records. */
const postIds: { route: 'events' | 'venues' | 'organizers'; id: number }[] = [];

async function create(route: string, body: Record<string, unknown>, options: { lang?: Lang; as?: Credentials } = {}): Promise<Rec> {
  const prefix = options.lang && options.lang !== 'en' ? `/${options.lang}` : '';
  const r = await source.raw('POST', `${prefix}${NS}/${route}`, { as: options.as ?? source.admin, json: body });
  expect(r.status, `POST ${route} ${r.text}`).toBe(201);
  if (route !== 'categories' && route !== 'tags') postIds.push({ route: route as never, id: r.body.id });
  return r.body;
}

async function patch(route: string, id: number, body: Record<string, unknown>): Promise<Rec> {
  const r = await source.raw('PATCH', `${NS}/${route}/${id}`, { as: source.admin, json: body });
  expect(r.status, `PATCH ${route}/${id} ${r.text}`).toBe(200);
  return r.body;
}

async function trash(route: string, id: number): Promise<void> {
  const r = await source.raw('DELETE', `${NS}/${route}/${id}`, { as: source.admin });
  expect(r.status, r.text).toBe(200);
}

/**
 * The source calendar: a category tree and tags in three languages, venues and organizers with every field and
 * status, events with every field, timezone, cost form, flag, status and link, by several authors, some hidden from
 * listings, some in the trash, some translated; and a few password-protected records.
 */
async function seedSource(): Promise<void> {
  for (const role of ['editor', 'author', 'contributor'] as const) {
    const creds = await source.user(role, `${role}-one`);
    users[role] = { id: (await source.read((repos) => repos.users.findByLoginOrEmail(creds.login)))!.id, creds };
  }
  const authors = [1, users.editor.id, users.author.id, users.contributor.id];

  // categories: a tree three levels deep, names with markup characters, translations of some
  const categories: Rec[] = [];
  const top = ['Music & Dance', 'Theatre <Stage>', 'Family "Fun"', 'Sports', 'Talks', 'Food'];
  for (const [i, name] of top.entries()) categories.push(await create('categories', { name, ...(i % 2 ? { description: `About ${name}` } : {}) }));
  const jazz = await create('categories', { name: 'Jazz', parent: categories[0]!.id, description: 'Swing' });
  const bebop = await create('categories', { name: 'Bebop', parent: jazz.id });
  categories.push(jazz, bebop, await create('categories', { name: 'Running', parent: categories[3]!.id }));
  for (const lang of ['fr', 'de'] as const) {
    categories.push(await create('categories', { name: `Musique ${lang}`, translation_of: categories[0]!.id }, { lang }));
    categories.push(await create('categories', { name: `Jazz ${lang}`, translation_of: jazz.id, parent: categories[0]!.id }, { lang }));
  }
  categories.push(await create('categories', { name: 'Seulement en français' }, { lang: 'fr' }));

  const tags: Rec[] = [];
  for (const name of ['outdoor', 'indoor', 'kids & parents', 'late night', 'free', 'accessible', 'weekly', 'premiere']) tags.push(await create('tags', { name }));
  for (const lang of ['fr', 'de'] as const) tags.push(await create('tags', { name: `plein air ${lang}`, translation_of: tags[0]!.id }, { lang }));

  // venues and organizers: every field, every status, several authors, translations
  const statuses = ['publish', 'publish', 'draft', 'pending', 'private', 'future'];
  const venues: Rec[] = [];
  for (let i = 0; i < 30; i++) {
    const status = statuses[i % statuses.length]!;
    venues.push(await create('venues', {
      venue: i % 7 === 0 ? `Hall & "Annex" ${i}` : `Venue ${i}`,
      description: i % 3 ? `A place.\n\nWith ${i} rooms.` : '',
      address: `${i} Main St`, city: ['Berlin', 'Paris', 'Springfield', 'Toronto'][i % 4], country: ['Germany', 'France', 'United States', 'Canada'][i % 4],
      ...(i % 4 === 2 ? { state: 'IL' } : {}), ...(i % 4 === 3 ? { province: 'ON' } : {}), ...(i % 5 === 0 ? { stateprovince: 'Custom' } : {}),
      zip: i % 2 ? `1000${i}` : '', phone: i % 3 ? `+1 555 01${i}` : '', website: i % 2 ? `https://venue-${i}.example.test` : '',
      show_map: i % 2 ? 'true' : 'false', show_map_link: i % 3 ? 'true' : 'false',
      ...(i % 4 === 0 ? { geo_lat: 52.5 + i / 100, geo_lng: 13.4 - i / 100 } : {}),
      ...(i % 6 === 1 ? { image: `https://cdn.example.test/venues/${i}.png` } : {}),
      status, ...(status === 'future' ? { date: '2031-01-01 10:00:00' } : { date: `2024-0${1 + (i % 9)}-1${i % 10} 08:30:00` }),
      author: authors[i % authors.length],
    }));
  }
  const organizers: Rec[] = [];
  for (let i = 0; i < 30; i++) {
    const status = statuses[(i + 1) % statuses.length]!;
    organizers.push(await create('organizers', {
      organizer: i % 5 === 0 ? `O'Brien & Sons -- ${i}...` : `Organizer ${i}`,
      description: i % 2 ? `<strong>Organizer</strong> number ${i}` : '',
      phone: i % 3 ? `+1 555 02${i}` : '', website: i % 2 ? `https://org-${i}.example.test` : '', email: i % 4 ? `org-${i}@example.test` : '',
      ...(i % 7 === 3 ? { image: `https://cdn.example.test/organizers/${i}.jpg` } : {}),
      status, ...(status === 'future' ? { date: '2032-02-02 12:00:00' } : {}),
      author: authors[(i + 2) % authors.length],
    }));
  }
  const venueFr = await create('venues', { venue: 'Salle du fleuve', city: 'Paris', translation_of: venues[0]!.id }, { lang: 'fr' });
  const venueDe = await create('venues', { venue: 'Flusshalle', city: 'Köln', translation_of: venues[0]!.id }, { lang: 'de' });
  const organizerFr = await create('organizers', { organizer: 'Conseil des arts', translation_of: organizers[1]!.id }, { lang: 'fr' });
  await create('organizers', { organizer: 'Kunstrat', email: 'kunst@example.test', translation_of: organizers[1]!.id }, { lang: 'de' });
  await trash('venues', venues[5]!.id);
  await trash('organizers', organizers[4]!.id);

  // events: every field, timezone, cost form, flag, status; linked, translated, by several authors
  const zones = ['Europe/Berlin', 'America/New_York', 'UTC+5:30', 'Asia/Tokyo', 'UTC', 'UTC+0'];
  const costs: (string | string[])[] = ['', '15', '$5 - 25', '10€', 'Free', 'Donation', ['0$', '20$', '30$'], '25,55', '0'];
  const titles = ['Rock & Roll "Live" -- at O\'Brien\'s...', '<em>Gala</em> night', 'Café Müller', 'x----y', 'Plain'];
  const eventStatuses = ['publish', 'publish', 'publish', 'draft', 'pending', 'private', 'future'];
  const linkable = (list: Rec[]) => list.filter((_, i) => i !== 5 && i !== 4);
  const events: Rec[] = [];
  for (let i = 0; i < 150; i++) {
    const status = eventStatuses[i % eventStatuses.length]!;
    const year = [2001, 2019, 2026, 2027, 2028, 2040, 2095][i % 7]!;
    const day = `${year}-${String(1 + (i % 12)).padStart(2, '0')}-${String(1 + (i % 27)).padStart(2, '0')}`;
    const body: Record<string, unknown> = {
      title: `${titles[i % titles.length]} ${i}`,
      ...(i % 4 ? { description: ['One paragraph.', 'Para one.\n\nPara two\nwith a break', '<p>Already <b>HTML</b></p>'][i % 3] } : {}),
      ...(i % 5 === 0 ? { excerpt: `Short ${i}.` } : {}),
      start_date: `${day} ${String(8 + (i % 12)).padStart(2, '0')}:${i % 2 ? '30' : '00'}:00`,
      end_date: `${day} ${String(10 + (i % 12)).padStart(2, '0')}:15:00`,
      timezone: zones[i % zones.length], all_day: i % 11 === 0,
      cost: costs[i % costs.length],
      ...(i % 4 === 1 ? { website: `https://event-${i}.example.test/?a=1&b=2` } : i % 4 === 2 ? { website: '' } : {}),
      show_map: i % 2 === 0, show_map_link: i % 3 === 0, sticky: i % 13 === 0, featured: i % 6 === 0, ticketed: i % 8 === 0,
      categories: i % 3 ? [categories[i % 9]!.id] : [categories[i % 9]!.id, jazz.id],
      tags: i % 2 ? [tags[i % 8]!.id, tags[(i + 3) % 8]!.id] : [],
      ...(i % 4 !== 3 ? { venue: linkable(venues)[i % 28]!.id } : {}),
      organizer: [linkable(organizers)[i % 28]!.id, ...(i % 3 === 0 ? [linkable(organizers)[(i + 7) % 28]!.id] : [])],
      ...(i % 9 === 4 ? { image: `https://cdn.example.test/events/${i % 3}.jpg` } : {}),
      ...(i % 10 === 7 ? { slug: `custom-slug-${i}` } : {}),
      status, ...(status === 'future' ? { date: '2033-03-03 09:00:00' } : { date: `2025-0${1 + (i % 9)}-0${1 + (i % 9)} 1${i % 10}:00:00` }),
      author: authors[i % authors.length],
    };
    events.push(await create('events', body));
  }
  // written by their authors themselves (a contributor's go to review)
  events.push(await create('events', { title: 'By the author', start_date: '2027-05-05 10:00', end_date: '2027-05-05 12:00' }, { as: users.author.creds }));
  events.push(await create('events', { title: 'By the contributor', start_date: '2027-05-06 10:00', end_date: '2027-05-06 12:00', status: 'publish' }, { as: users.contributor.creds }));

  // translations, linked to records of their language, and (fr) to an English venue that has a French translation
  for (const [k, en] of events.slice(0, 12).entries()) {
    const fr = await create('events', {
      title: `Soirée ${k}`, start_date: en.start_date, end_date: en.end_date, timezone: en.timezone, translation_of: en.id,
      venue: k % 2 ? venueFr.id : venues[0]!.id, organizer: [organizerFr.id], categories: [categories[9]!.id], tags: [tags[8]!.id], cost: '12',
    }, { lang: 'fr' });
    if (k % 3 === 0) await create('events', { title: `Abend ${k}`, start_date: en.start_date, end_date: en.end_date, translation_of: fr.id, venue: venueDe.id }, { lang: 'de' });
  }

  // hidden from listings (found by id), one of them the newest record; trashed events
  for (const k of [0, 1, 2]) hiddenIds.push((await create('events', { title: `Hidden ${k}`, start_date: '2029-01-01 10:00', end_date: '2029-01-01 11:00', hide_from_listings: true, venue: venues[1]!.id, status: k === 1 ? 'draft' : 'publish' })).id);
  for (const e of events.slice(20, 26)) await trash('events', e.id);

  // password-protected records, unlinked: skipped by the import
  protectedIds.push((await create('events', { title: 'Members only', start_date: '2027-09-09 10:00', end_date: '2027-09-09 11:00', password: 'letmein' })).id);
  protectedIds.push((await create('venues', { venue: 'Secret cellar', city: 'Berlin', password: 'letmein' })).id);
  protectedIds.push((await create('organizers', { organizer: 'Secret society', phone: '+1 555 9999', password: 'letmein' })).id);
  protectedIds.push((await create('organizers', { organizer: 'Nameless circle', password: 'letmein' })).id);
  hiddenIds.push((await create('events', { title: 'Hidden latest', start_date: '2029-02-01 10:00', end_date: '2029-02-01 11:00', hide_from_listings: true })).id);
}

// ---- reading both sites ------------------------------------------------------------------------------------------

const get = async (server: TestServer, path: string): Promise<RawResponse> => server.raw('GET', path, { as: server.admin });

/** Every record of a list in one language, all statuses, all dates, all pages. */
async function listAll(server: TestServer, route: string, lang: Lang): Promise<Rec[]> {
  const query = route === 'categories' || route === 'tags' ? 'hide_empty=0&orderby=id'
    : route === 'events' ? `status=${ALL}&start_date=0001-01-01&end_date=9999-12-31` : `status=${ALL}`;
  const items: Rec[] = [];
  for (let page = 1; ; page++) {
    const r = await get(server, `${NS}/${route}?${query}&per_page=50&page=${page}&xlate_language=${lang}`);
    expect(r.status, r.text).toBe(200);
    items.push(...r.body[route]);
    if (!r.body.next_rest_url) return items;
  }
}

/**
 * What the target should show for a record of the source: the same, but for the site address in links and global
 * ids, and a lineage of `[target's global id, source's global id]`.
 */
function expected(value: unknown): unknown {
  if (typeof value === 'string') return value.replaceAll(SOURCE_SITE, target.baseUrl).replaceAll(`${SOURCE_KEY}?id=`, '127.0.0.1?id=');
  if (Array.isArray(value)) return value.map(expected);
  if (value && typeof value === 'object') {
    const out = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expected(v)]));
    const record = value as Rec;
    if (Array.isArray(record.global_id_lineage)) {
      expect(record.global_id_lineage).toEqual([record.global_id]);
      out.global_id_lineage = [`127.0.0.1?id=${record.id}`, record.global_id];
    }
    return out;
  }
  return value;
}

/** Every record of both sites through the API: lists in each language, and each post by id in each language. */
async function snapshot(server: TestServer): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  for (const lang of LANGS) {
    for (const route of ['categories', 'tags', 'venues', 'organizers', 'events']) {
      for (const item of await listAll(server, route, lang)) {
        out.set(`${lang} ${route} ${item.id}`, item);
        // a category or tag by id: with its `_links`
        if (route === 'categories' || route === 'tags') out.set(`${lang} ${route}/${item.id}`, (await get(server, `${NS}/${route}/${item.id}?xlate_language=${lang}`)).body);
      }
    }
  }
  const singles = postIds.flatMap(({ route, id }) => LANGS.map((lang) => ({ route, id, lang })));
  for (let i = 0; i < singles.length; i += 8) {
    await Promise.all(singles.slice(i, i + 8).map(async ({ route, id, lang }) => {
      const r = await get(server, `${NS}/${route}/${id}?xlate_language=${lang}`);
      out.set(`${lang} ${route}/${id}`, r.status === 200 ? r.body : { status: r.status, code: r.body.code });
    }));
  }
  return out;
}

/** Compares the target with the source, record by record (protected records excepted: they are not imported). */
async function expectSameAsSource(): Promise<void> {
  const [from, to] = await Promise.all([snapshot(source), snapshot(target)]);
  const skipped = (key: string) => protectedIds.some((id) => key.endsWith(` ${id}`) || key.endsWith(`/${id}`));
  const wanted = [...from.keys()].filter((k) => !skipped(k));
  expect(wanted.length).toBeGreaterThan(700);
  for (const key of wanted) expect(to.get(key), key).toEqual(expected(from.get(key)));
  for (const key of [...from.keys()].filter(skipped)) {
    // protected records: in no list of the target, and no record by id there
    const got = to.get(key) as Rec | undefined;
    if (key.includes('/')) expect(got).toMatchObject({ status: key.includes('events/') ? 404 : 400 });
    else expect(got).toBeUndefined();
  }
  expect([...to.keys()].filter((k) => !from.has(k))).toEqual([]);
}

/** The target's records reduced to what each record itself holds (embedded records by id), for "what changed". */
function own(snap: Map<string, unknown>): Map<string, string> {
  const strip = (r: Rec) => {
    if (!r || typeof r !== 'object' || !('id' in r)) return r;
    const out: Rec = { ...r };
    for (const k of ['venue', 'organizer', 'categories', 'tags']) {
      if (Array.isArray(out[k])) out[k] = out[k].map((x: Rec) => x.id);
      else if (out[k] && typeof out[k] === 'object') out[k] = out[k].id;
    }
    delete out.count; // term counts follow the events that use them
    delete out.json_ld; // holds the linked venue and organizer
    return out;
  };
  return new Map([...snap].map(([k, v]) => [k, JSON.stringify(strip(v as Rec))]));
}

const changedKeys = (before: Map<string, string>, after: Map<string, string>) =>
  [...after.keys()].filter((k) => before.get(k) !== after.get(k)).map((k) => k.replace(/^\w+ /, '').replace(/ (\d+)$/, '/$1')).filter((k, i, all) => all.indexOf(k) === i).sort();

// ---- tests -------------------------------------------------------------------------------------------------------

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'almanac-import-'));
  source = await TestServer.start({ publicUrl: SOURCE_SITE });
  target = await TestServer.start();
  const started = Date.now();
  await seedSource();
  console.log(`seeded the source with ${postIds.length} posts in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}, 180_000);

afterAll(async () => {
  await Promise.all([source?.close(), target?.close()]);
  rmSync(dir, { recursive: true, force: true });
  await cleanUp();
});

const fromSource = () => `${source.baseUrl}${NS}`;
const adminAuth = () => `${source.admin.login}:${source.admin.password}`;

describe('almanac import from another Almanac', () => {
  it('a dry run reports what it would do and writes nothing', async () => {
    const fresh = join(dir, 'dry.sqlite');
    const dry = await almanac(['import', '--from', fromSource(), '--auth', adminAuth(), '--dry-run'], fresh);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/^dry run from .*: nothing was written/);
    expect(tally(dry, 'events').created).toBeGreaterThan(150);
    expect(existsSync(fresh)).toBe(false);

    const before = await snapshot(target);
    const onTarget = await almanac(['import', '--from', fromSource(), '--auth', adminAuth(), '--dry-run'], target.config.dbPath, databaseOf(target));
    expect(onTarget.code, onTarget.stderr).toBe(0);
    expect(tally(onTarget, 'events')).toEqual(tally(dry, 'events'));
    expect(await snapshot(target)).toEqual(before);
    expect(await listAll(target, 'events', 'en')).toEqual([]);

    // a SQLite file at an older schema: the dry run migrates a copy in memory; the file stays as it was (a
    // PostgreSQL database is only read by a dry run: there is no copy to make, and the target above stayed unchanged)
    if (TestServer.engine !== 'sqlite') return;
    const older = join(dir, 'older.sqlite');
    const db = openDatabase(older);
    migrate(db, loadMigrations(sqliteMigrationsDir).slice(0, -1));
    db.close();
    const digest = () => createHash('sha256').update(readFileSync(older)).digest('hex');
    const was = digest();
    const onOlder = await almanac(['import', '--from', fromSource(), '--auth', adminAuth(), '--dry-run'], older);
    expect(onOlder.code, onOlder.stderr).toBe(0);
    expect(tally(onOlder, 'events')).toEqual(tally(dry, 'events'));
    expect(digest()).toBe(was);
  }, 120_000);

  it('copies every record, keeping ids, slugs and every field, into a running Almanac', async () => {
    const started = Date.now();
    const first = await almanac(['import', '--from', fromSource(), '--auth', adminAuth()], target.config.dbPath, databaseOf(target));
    const seconds = (Date.now() - started) / 1000;
    expect(first.code, first.stderr).toBe(0);
    console.log(`${first.stdout}\n(import took ${seconds.toFixed(1)} s)`);
    // a bulk load: on SQLite its trigram indexes end merged, one segment each
    if (!target.config.databaseUrl) expect(await target.sql('SELECT COUNT(DISTINCT segid) AS segments FROM events_search_idx')).toEqual([{ segments: 1 }]);

    const events = tally(first, 'events');
    expect(events).toMatchObject({ updated: 0, unchanged: 0, skipped: 1 });
    expect(tally(first, 'venues')).toMatchObject({ updated: 0, unchanged: 0, skipped: 1 });
    expect(tally(first, 'organizers')).toMatchObject({ updated: 0, unchanged: 0, skipped: 2 });
    expect(tally(first, 'categories')).toEqual({ created: 14, updated: 0, unchanged: 0, skipped: 0 });
    expect(tally(first, 'tags')).toEqual({ created: 10, updated: 0, unchanged: 0, skipped: 0 });
    const posts = postIds.length - protectedIds.length;
    expect(events.created + tally(first, 'venues').created + tally(first, 'organizers').created).toBe(posts);
    // the source's editor, author and contributor are authors here; its administrator is user 1 here too
    expect(first.stdout).toContain(`authors: 3 created (user ids ${users.editor.id}, ${users.author.id}, ${users.contributor.id}; role author, no password)`);
    for (const u of Object.values(users)) expect(await target.read((repos) => repos.users.findById(u.id))).toMatchObject({ login: `author-${u.id}`, role: 'author' });
    expect(await target.read((repos) => repos.users.passwordsOf(users.author.id))).toEqual([]);
    for (const id of protectedIds) expect(first.stdout).toMatch(new RegExp(`^  (event|venue|organizer) ${id}: password-protected`, 'm'));

    // progress on stderr: not a terminal here, so plain lines, never redrawn
    expect(first.stderr).not.toContain('\r');
    for (const resource of ['categories', 'tags', 'venues', 'organizers', 'events']) expect(first.stderr).toMatch(new RegExp(`^${resource}: (\\d+)/\\1 \\(100%\\)$`, 'm'));

    await expectSameAsSource();
  }, 120_000);

  it('finds events hidden from listings, by id', async () => {
    for (const id of hiddenIds) {
      const [s, t] = await Promise.all([get(source, `${NS}/events/${id}`), get(target, `${NS}/events/${id}`)]);
      expect([s.status, t.status]).toEqual([200, 200]);
      expect(t.body.hide_from_listings).toBe(true);
      expect(t.body).toEqual(expected(s.body));
    }
  });

  it('keeps translation groups and links across languages', async () => {
    const frEvents = await listAll(target, 'events', 'fr');
    expect(frEvents.length).toBe(12);
    for (const e of frEvents) {
      expect(e.lang).toBe('fr');
      expect(Object.keys(e.translations).sort()).toEqual(e.translations.de ? ['de', 'en', 'fr'] : ['en', 'fr']);
      expect(e.venue.lang).toBe('fr');
    }
    const jazz = (await listAll(target, 'categories', 'en')).find((c) => c.name === 'Jazz')!;
    expect(Object.keys(jazz.translations).sort()).toEqual(['de', 'en', 'fr']);
    expect((await listAll(target, 'categories', 'en')).find((c) => c.name === 'Bebop')!.parent).toBe(jazz.id);
  });

  it('a second run changes nothing', async () => {
    const before = await snapshot(target);
    const again = await almanac(['import', '--from', fromSource(), '--auth', adminAuth()], target.config.dbPath, databaseOf(target));
    expect(again.code, again.stderr).toBe(0);
    for (const resource of ['categories', 'tags', 'venues', 'organizers', 'events']) {
      const t = tally(again, resource);
      expect(t, resource).toMatchObject({ created: 0, updated: 0 });
      expect(t.unchanged, resource).toBeGreaterThan(0);
    }
    expect(again.stdout).toContain('authors: 0 created');
    // modification dates included: every record reads exactly as before
    expect(await snapshot(target)).toEqual(before);
  }, 120_000);

  it('--since takes exactly the records changed on the source since then, and the terms that changed', async () => {
    await sleep(1100); // times are kept to the second
    const since = new Date().toISOString();
    await sleep(1100);
    const before = own(await snapshot(target));

    const [e1, e2, , e4] = postIds.filter((p) => p.route === 'events').map((p) => p.id);
    await patch('events', e1!, { title: 'Renamed & moved', start_date: '2030-06-01 18:00:00', featured: true });
    await patch('events', e2!, { cost: '99', venue: 0 });
    await trash('events', e4!);
    const venue = postIds.find((p) => p.route === 'venues')!.id;
    await patch('venues', venue, { city: 'Hamburg' });
    const added = await create('events', { title: 'New since', start_date: '2028-08-08 08:00', end_date: '2028-08-08 09:00', venue, categories: [1] });
    const category = (await source.raw('PATCH', `${NS}/categories/2`, { as: source.admin, json: { name: 'Theatre & Stage' } })).body;

    const run = await almanac(['import', '--from', fromSource(), '--auth', adminAuth(), '--since', since], target.config.dbPath, databaseOf(target));
    expect(run.code, run.stderr).toBe(0);
    expect(tally(run, 'events')).toMatchObject({ created: 1, updated: 3, unchanged: 0, skipped: 0 });
    expect(tally(run, 'venues')).toMatchObject({ created: 0, updated: 1, unchanged: 0, skipped: 0 });
    expect(tally(run, 'organizers')).toMatchObject({ created: 0, updated: 0, unchanged: 0 });
    expect(tally(run, 'events')['not modified']).toBeGreaterThan(150);
    expect(tally(run, 'categories')).toEqual({ created: 0, updated: 1, unchanged: 13, skipped: 0, 'not modified': 0 });

    const after = own(await snapshot(target));
    expect(changedKeys(before, after)).toEqual([`categories/${category.id}`, `events/${added.id}`, `events/${e1}`, `events/${e2}`, `events/${e4}`, `venues/${venue}`].sort());
    await expectSameAsSource();
  }, 120_000);
});

describe('almanac import refuses what it cannot use', () => {
  let plain: Server;
  let plainUrl: string;

  beforeAll(async () => {
    plain = createServer((req, res) => {
      if (req.url?.startsWith('/json')) {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ name: 'Some API', routes: {} }));
      } else {
        res.setHeader('Content-Type', 'text/html; charset=UTF-8');
        res.end('<!doctype html><title>Welcome</title><p>Hello</p>');
      }
    });
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    plainUrl = `http://127.0.0.1:${(plain.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((r) => plain.close(() => r())));

  /** A failed import: one clear line on stderr, the exit status, and no database written. */
  async function fails(args: string[], code: number, message: RegExp): Promise<void> {
    const db = join(dir, `refused-${Math.random().toString(36).slice(2)}.sqlite`);
    const run = await almanac(args, db);
    expect(run.code, run.stdout + run.stderr).toBe(code);
    const lines = run.stderr.trim().split('\n');
    expect(lines.at(-1)).toMatch(message);
    expect(run.stdout).toBe('');
    expect(existsSync(db)).toBe(false);
  }

  it('an unreachable source, after retries', async () => {
    const gone = await TestServer.start();
    const url = `${gone.baseUrl}${NS}`;
    await gone.close();
    await fails(['import', '--from', url], 1, /^almanac: import failed: cannot reach http:\/\/127\.0\.0\.1:\d+\/wp-json\/tribe\/events\/v1: connection refused \(5 attempts\)$/);
  }, 30_000);

  it('a port fetch refuses to connect to, at once: no retry can mend it', async () => {
    const started = Date.now();
    await fails(['import', '--from', `http://127.0.0.1:6000${NS}`], 1, /^almanac: import failed: cannot reach http:\/\/127\.0\.0\.1:6000\/wp-json\/tribe\/events\/v1: port 6000 is one fetch refuses to connect to \(the port of another protocol\): serve the site on another one$/);
    expect(Date.now() - started, 'no backoff').toBeLessThan(4_000);
  });

  it('credentials the source refuses', async () => {
    await fails(['import', '--from', fromSource(), '--auth', 'admin:wrong wrong wrong'], 1, /^almanac: import failed: .* refused the credentials of "admin" \(incorrect_password: /);
    await fails(['import', '--from', fromSource(), '--auth', 'nobody:abcd efgh ijkl mnop qrst uvwx'], 1, /refused the credentials of "nobody" \(invalid_username/);
  });

  it('a site that is not the plugin API: HTML, other JSON, no such route', async () => {
    await fails(['import', '--from', `${plainUrl}/wp-json/tribe/events/v1`], 1, /is not the REST API of The Events Calendar \(tribe\/events\/v1\): it answered text\/html that is not JSON$/);
    await fails(['import', '--from', `${plainUrl}/json/tribe/events/v1`], 1, /is not the REST API of The Events Calendar \(tribe\/events\/v1\): its answer is JSON but not the tribe\/events\/v1 index$/);
    await fails(['import', '--from', `${source.baseUrl}/wp-json/other/tribe/events/v1`], 1, /is not the REST API of The Events Calendar \(tribe\/events\/v1\): it answered HTTP 404 \(rest_no_route/);
  });

  it('bad arguments: exit status 2', async () => {
    await fails(['import'], 2, /^almanac: --from must be the REST base of the site/);
    await fails(['import', '--from', 'not a url'], 2, /^almanac: --from must be the REST base of the site, such as https:\/\/example\.org\/wp-json\/tribe\/events\/v1, not "not a url"$/);
    await fails(['import', '--from', 'https://example.org/'], 2, /--from must be the REST base/);
    await fails(['import', '--from', 'ftp://example.org/wp-json/tribe/events/v1'], 2, /--from must be the REST base/);
    await fails(['import', '--from', fromSource(), '--auth', 'no-colon'], 2, /^almanac: --auth must be login:application-password/);
    await fails(['import', '--from', fromSource(), '--since', 'the other day'], 2, /^almanac: --since must be a time such as/);
    await fails(['import', 'extra', '--from', fromSource()], 2, /^almanac: import takes no argument "extra"/);
  });
});

describe('almanac import through a proxy: a flaky network, a source with odd data', () => {
  const contract = new ContractChecker();
  /** Answers of the source that the proxy passed on and that do not match the spec (none, or a test fails). */
  const drift: string[] = [];
  afterAll(() => expect(drift).toEqual([]));

  /**
   * A proxy in front of the source that fails some requests (5xx, 429, dropped connections), or all after a while;
   * what it passes on from the source is checked against the spec like every answer a test receives.
   */
  async function proxy(fail: (n: number, url: string) => 'ok' | '503' | '429' | 'drop', rewrite?: (body: unknown) => unknown): Promise<{ url: string; close: () => Promise<void> }> {
    let n = 0;
    const server = createServer(async (req, res) => {
      const what = fail(++n, req.url!);
      if (what === 'drop') return req.socket.destroy();
      if (what !== 'ok') {
        res.statusCode = Number(what);
        if (what === '429') res.setHeader('Retry-After', '1');
        res.setHeader('Content-Type', 'application/json');
        return res.end(JSON.stringify({ code: 'busy', message: 'Try again', data: { status: Number(what) } }));
      }
      const url = `${source.baseUrl}${req.url}`;
      const upstream = await fetch(url, { headers: { Authorization: req.headers.authorization ?? '' } });
      const body = await upstream.text();
      await contract.check('GET', url, upstream.status, body ? JSON.parse(body) : undefined).catch((err: Error) => drift.push(err.message));
      res.statusCode = upstream.status;
      upstream.headers.forEach((v, k) => k !== 'content-encoding' && k !== 'content-length' && k !== 'transfer-encoding' && res.setHeader(k, v));
      res.end(rewrite && body ? JSON.stringify(rewrite(JSON.parse(body))) : body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return {
      url: `http://127.0.0.1:${(server.address() as { port: number }).port}${NS}`,
      close: () => new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
    };
  }

  it('retries 5xx, 429 and dropped connections, and the result is the same', async () => {
    const seen = new Map<string, number>();
    const failures = ['503', '429', 'drop'] as const;
    let failed = 0;
    const flaky = await proxy((_n, url) => {
      const tries = (seen.get(url) ?? 0) + 1;
      seen.set(url, tries);
      // the first attempt at the first page of each language's events fails, each in another way
      if (tries === 1 && /\/events\?/.test(url) && /[?&]page=1(&|$)/.test(url)) return failures[failed++ % 3]!;
      return 'ok';
    });
    try {
      const db = await engineDb();
      const run = await almanac(['import', '--from', flaky.url, '--auth', adminAuth()], db.dbPath, db.env);
      expect(run.code, run.stderr).toBe(0);
      expect(failed).toBe(3);
      expect(run.stderr).toMatch(/HTTP 503; trying again in 250 ms/);
      expect(run.stderr).toMatch(/HTTP 429; trying again in 1000 ms/); // its Retry-After
      expect(run.stderr).toMatch(/(connection reset|connection closed|other side closed|fetch failed|socket)/i);
      expect(tally(run, 'events')).toMatchObject({ created: tally(await almanac(['import', '--from', fromSource(), '--auth', adminAuth(), '--dry-run'], join(dir, 'none.sqlite')), 'events').created });
    } finally {
      await flaky.close();
    }
  }, 60_000);

  it('an import interrupted by a failing source exits non-zero, and a re-run completes it', async () => {
    const db = await engineDb();
    const failing = await proxy((n) => (n > 12 ? '503' : 'ok'));
    try {
      const run = await almanac(['import', '--from', failing.url, '--auth', adminAuth()], db.dbPath, db.env);
      expect(run.code).toBe(1);
      expect(run.stderr.trim().split('\n').at(-1)).toMatch(/^almanac: import failed: http:\/\/127\.0\.0\.1:\d+\/wp-json\/tribe\/events\/v1\/\w+\?.* did not answer: HTTP 503 \(5 attempts\)$/);
    } finally {
      await failing.close();
    }
    // what came through before is kept (SQLite: the file was created)
    if (TestServer.engine === 'sqlite') expect(existsSync(db.dbPath)).toBe(true);
    expect((await db.sql<{ n: number }>('SELECT CAST(COUNT(*) AS INTEGER) AS n FROM terms'))[0]!.n).toBeGreaterThan(0);

    const rest = await almanac(['import', '--from', fromSource(), '--auth', adminAuth()], db.dbPath, db.env);
    expect(rest.code, rest.stderr).toBe(0);
    expect(tally(rest, 'categories')).toMatchObject({ created: 0, updated: 0 });
    const complete = await almanac(['import', '--from', fromSource(), '--auth', adminAuth()], db.dbPath, db.env);
    for (const resource of ['categories', 'tags', 'venues', 'organizers', 'events']) expect(tally(complete, resource)).toMatchObject({ created: 0, updated: 0 });
    expect(tally(rest, 'events').created + tally(rest, 'events').unchanged).toBe(tally(complete, 'events').unchanged);
  }, 60_000);

  it('an image whose URL or sizes the answers could not show: its URL percent-encoded as RFC 3986 wants, such sizes left out', async () => {
    // what a source might send that a WordPress site would: characters the WHATWG parser leaves in a URL, a stray
    // `%`, a second `#`, sizes of the wrong kind or without a usable URL
    const odd = (url: string) => `${url.replace(/\.(\w+)$/, ' [v|2]^{x}.$1')}?a[]=1&b=%#top#2`;
    const oddImages = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(oddImages);
      if (value === null || typeof value !== 'object') return value;
      const out = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, oddImages(v)])) as Rec;
      if (out.image && typeof out.image === 'object' && typeof out.image.url === 'string' && !out.image.url.includes('[')) {
        const url = out.image.url as string;
        out.image = {
          ...out.image, url: odd(url), width: -1, height: 600, filesize: 'big',
          sizes: {
            thumbnail: { width: 150, height: -150, 'mime-type': 'image/png', url: odd(url.replace(/(\.\w+)$/, '-150x150$1')) },
            medium: { width: 300, height: 200, 'mime-type': 'image/png', url: 'not a url' },
            large: 'large',
          },
        };
      }
      return out;
    };
    const oddSource = await proxy(() => 'ok', oddImages);
    const here = await TestServer.start();
    try {
      const run = await almanac(['import', '--from', oddSource.url, '--auth', adminAuth()], here.config.dbPath, databaseOf(here));
      expect(run.code, run.stderr).toBe(0);
      const encoded = (url: string) => `${url.replace(/\.(\w+)$/, '%20%5Bv%7C2%5D%5E%7Bx%7D.$1')}?a%5B%5D=1&b=%25#top%232`;
      let images = 0;
      for (const route of ['events', 'venues', 'organizers'] as const) {
        for (const record of await listAll(source, route, 'en')) {
          // the import skips password-protected records, and a trashed event is not shown by id to anyone
          if (!record.image || protectedIds.includes(record.id) || (route === 'events' && record.status === 'trash')) continue;
          images++;
          // the record by id and in a list, each answer checked against the spec (its image's `url` is a `uri`)
          const { body } = await get(here, `${NS}/${route}/${record.id}`);
          const url = record.image.url as string;
          expect(body.image).toEqual({
            url: encoded(url), id: record.image.id, extension: record.image.extension, height: 600,
            sizes: { thumbnail: { width: 150, 'mime-type': 'image/png', url: encoded(url.replace(/(\.\w+)$/, '-150x150$1')) } },
          });
        }
        await listAll(here, route, 'en');
      }
      expect(images).toBeGreaterThan(10);
    } finally {
      await Promise.all([oddSource.close(), here.close()]);
    }
  }, 60_000);
});

describe('almanac import without credentials', () => {
  it('takes what is public, and says so', async () => {
    const db = await engineDb();
    const run = await almanac(['import', '--from', fromSource()], db.dbPath, db.env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('note: only published records were readable');
    const published = async (route: string) => {
      let total = 0;
      for (const lang of LANGS) {
        const r = await source.raw('GET', `${NS}/${route}?per_page=1&xlate_language=${lang}${route === 'events' ? '&start_date=0001-01-01&end_date=9999-12-31' : ''}`);
        total += r.body.total;
      }
      return total;
    };
    // published venues less the protected one; events: listed ones less the protected one, plus the two hidden published ones
    expect(tally(run, 'venues').created).toBe((await published('venues')) - 1);
    expect(tally(run, 'events').created).toBe((await published('events')) - 1 + 3);
  }, 60_000);
});
