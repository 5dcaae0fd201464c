import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventListSql } from '../src/db/listQueries.js';
import { POSTGRES_DIALECT } from '../src/db/postgres/posts.js';
import type { EventListQuery } from '../src/db/records.js';
import { SQLITE_DIALECT } from '../src/db/sqlite/posts.js';
import { protectedAccess } from '../src/domain/postRules.js';
import { NS, TestServer } from './helpers/server.js';

/**
 * The total of a public event list bounded by dates alone is summed from day totals that triggers keep (migration
 * 0014), with the window's edge days, scheduled events and events over several days counted apart. It must stay the
 * exact count of what the list holds through every kind of write: each total here is compared with the events the
 * list's pages actually hold, after creates, moves across days, publication changes, hiding, trashing, deleting,
 * scheduling and language changes.
 */
let s: TestServer;
beforeAll(async () => {
  s = await TestServer.start({ cacheBytes: 0 }); // every total computed
});
afterAll(() => s?.close());

/** A small deterministic generator: the same writes every run. */
function generator(seed: number): () => number {
  let x = seed;
  return () => ((x = (x * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648);
}
const random = generator(2031);
const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
const day = (n: number) => `2031-05-${String(n).padStart(2, '0')}`;

interface Written { id: number; lang: 'en' | 'fr' }
const written: Written[] = [];
/** The category some of the events of each language are in. */
const categories: Partial<Record<'en' | 'fr', number>> = {};

async function create(i: number): Promise<void> {
  const lang = random() < 0.8 ? 'en' : 'fr';
  const start = 1 + Math.floor(random() * 14);
  const span = random() < 0.2 ? 1 + Math.floor(random() * 3) : 0; // some go on for days
  const hour = 8 + Math.floor(random() * 12);
  const json = {
    title: `Counted ${i}`, start_date: `${day(start)} ${hour}:00:00`, end_date: `${day(Math.min(28, start + span))} ${span ? 10 : hour + 1}:30:00`,
    status: pick(['publish', 'publish', 'publish', 'draft', 'pending', 'private'] as const), hide_from_listings: random() < 0.1,
    categories: random() < 0.6 ? [`Counted ${lang}`] : [],
  };
  const r = await s.raw('POST', `${NS}/events?xlate_language=${lang}`, { as: s.admin, json });
  expect(r.status, r.text).toBe(201);
  written.push({ id: r.body.id, lang });
  for (const c of r.body.categories as { id: number }[]) categories[lang] = c.id;
}

/** One write of every kind, on a record picked at random. */
async function change(): Promise<void> {
  const target = pick(written);
  const path = `${NS}/events/${target.id}`;
  const kind = pick(['move', 'move', 'stretch', 'status', 'hide', 'trash', 'delete', 'schedule', 'due', 'language'] as const);
  const now = new Date().toISOString().slice(0, 19).replace('T', ' ');
  switch (kind) {
    case 'move':
      await s.raw('PATCH', path, { as: s.admin, json: { start_date: `${day(1 + Math.floor(random() * 14))} 09:00:00` } });
      break;
    case 'stretch':
      await s.raw('PATCH', path, { as: s.admin, json: { end_date: `${day(15 + Math.floor(random() * 5))} 18:00:00` } });
      break;
    case 'status':
      await s.raw('PATCH', path, { as: s.admin, json: { status: pick(['publish', 'draft', 'private'] as const) } });
      break;
    case 'hide':
      await s.raw('PATCH', path, { as: s.admin, json: { hide_from_listings: random() < 0.5 } });
      break;
    case 'trash':
      await s.raw('DELETE', path, { as: s.admin });
      break;
    case 'delete':
      if ((await s.raw('DELETE', `${path}?force=true`, { as: s.admin })).status === 200) written.splice(written.indexOf(target), 1);
      break;
    case 'schedule': // scheduled for later: not listed until its date
    case 'due': { // scheduled for a date that has come (no scheduler turns it into `publish`): listed
      const date = kind === 'due' ? '2020-01-01 00:00:00' : '2040-01-01 00:00:00';
      await s.sql(`UPDATE posts SET status = 'future', date_utc = ? WHERE id = ?`, date, target.id);
      await s.sql(`UPDATE events SET status = 'future', date_utc = ? WHERE post_id = ?`, date, target.id);
      break;
    }
    case 'language': {
      const lang = target.lang === 'en' ? 'fr' : 'en';
      await s.sql('UPDATE posts SET lang = ?, modified_utc = ? WHERE id = ?', lang, now, target.id);
      await s.sql('UPDATE events SET lang = ? WHERE post_id = ?', lang, target.id);
      target.lang = lang;
      break;
    }
  }
}

/** The total the list answers, and how many events its pages hold. */
async function totalAndHeld(query: string): Promise<[number, number]> {
  const first = await s.raw('GET', `${NS}/events?${query}&per_page=50`);
  if (first.status === 404) return [0, 0]; // a window with nothing in it, past its one page
  expect(first.status, first.text).toBe(200);
  let held = first.body.events.length as number;
  for (let page = 2; page <= first.body.total_pages; page++) held += (await s.raw('GET', `${NS}/events?${query}&per_page=50&page=${page}`)).body.events.length;
  return [first.body.total, held];
}

const WINDOWS = [[1, 14], [2, 9], [3, 5], [6, 16], [1, 3], [4, 4], [9, 20]] as const;

describe('the total of a public list bounded by dates', () => {
  it('is summed from the day totals, for the public and dates alone', () => {
    const q: EventListQuery = {
      lang: 'en', nowUtc: '2031-01-01 00:00:00', statuses: ['publish'], viewer: { kind: 'public' }, access: protectedAccess(null, undefined),
      bounds: [{ column: 'start', op: '>=', value: '2031-05-01 00:00:00' }, { column: 'end', op: '<=', value: '2031-05-14 23:59:59' }], limit: 10, offset: 0,
    };
    for (const dialect of [SQLITE_DIALECT, POSTGRES_DIALECT]) {
      expect(eventListSql(q, dialect).count).toMatch(/event_days/);
      for (const other of [{ viewer: { kind: 'user', userId: 1, seeOthers: true } }, { categoryIds: [1] }, { search: { include: ['jazz'], exclude: [] } },
        { bounds: [...q.bounds, { column: 'end', op: '>=', value: '2031-05-02 00:00:00' }] }] as Partial<EventListQuery>[]) {
        expect(eventListSql({ ...q, ...other }, dialect).count).not.toMatch(/event_days/);
      }
    }
  });

  it('counts exactly what the list holds, through every kind of write', async () => {
    for (let i = 0; i < 40; i++) await create(i);
    for (let round = 0; round < 6; round++) {
      for (const [from, to] of WINDOWS) {
        for (const lang of ['en', 'fr']) {
          for (const strict of [false, true]) {
            const query = strict
              ? `start_date=${day(from)}%2012:00:00&end_date=${day(to)}%2012:00:00&strict_dates=true&xlate_language=${lang}`
              : `start_date=${day(from)}&end_date=${day(to)}&xlate_language=${lang}`;
            const [total, held] = await totalAndHeld(query);
            expect(total, `round ${round}: ${query}`).toBe(held);
            // filtered by a category: counted through the links, bounded by the start they carry (migration 0016)
            const [inCategory, heldInCategory] = await totalAndHeld(`${query}&categories=${categories[lang as 'en' | 'fr']}`);
            expect(inCategory, `round ${round}: ${query}, in a category`).toBe(heldInCategory);
          }
        }
      }
      for (let k = 0; k < 12; k++) await change();
      // every link carries its event's start, through every kind of write
      expect(await s.sql('SELECT et.event_id FROM event_terms et JOIN events e ON e.post_id = et.event_id WHERE et.start_local <> e.start_local'), `round ${round}`).toEqual([]);
    }
  }, 120_000);
});
