import { DateTime } from 'luxon';
import { toWire } from '../domain/dates.js';
import { slugify } from '../domain/text.js';
import type { Engine, Repositories } from './engine.js';
import { plainDefaults } from './fields.js';
import type { NewRecord } from './records.js';

/** Events per day of calendar: N events span N / 40 days, so the size of a data set does not change its density. */
export const EVENTS_PER_DAY = 40;
/** Venues, and organizers, in a seeded calendar. */
export const LINKED_RECORDS = 200;
/** A word found in about 0.5 % of seeded descriptions, for search benchmarks. */
export const RARE_WORD = 'zephyrine';

export interface SeedOptions {
  events: number;
  /** Seed of the pseudo-random generator: the same seed gives the same data. */
  seed?: number;
  /** The first day of the calendar (default: 30 % of the span before today). */
  from?: DateTime;
  onProgress?: (done: number, total: number) => void;
}

export interface SeedResult {
  events: number;
  venues: number;
  organizers: number;
  categories: number;
  tags: number;
  seconds: number;
}

const CITIES = [
  { city: 'Berlin', country: 'Germany', lat: 52.52, lng: 13.405, tz: 'Europe/Berlin' },
  { city: 'Paris', country: 'France', lat: 48.8566, lng: 2.3522, tz: 'Europe/Paris' },
  { city: 'Springfield', country: 'United States', state: 'IL', lat: 39.7817, lng: -89.6501, tz: 'America/Chicago' },
  { city: 'Toronto', country: 'Canada', province: 'ON', lat: 43.6532, lng: -79.3832, tz: 'America/Toronto' },
  { city: 'London', country: 'United Kingdom', lat: 51.5072, lng: -0.1276, tz: 'Europe/London' },
];
const CATEGORY_TREE: [string, string | null][] = [
  ['Music', null], ['Jazz', 'Music'], ['Rock', 'Music'], ['Classical', 'Music'], ['Theatre', null], ['Family', null],
  ['Sports', null], ['Running', 'Sports'], ['Workshops', null], ['Food & Drink', null], ['Film', null], ['Talks', null],
];
const TAGS = ['free', 'outdoor', 'indoor', 'kids', 'adults only', 'online', 'weekly', 'editors pick', 'accessible', 'late night',
  'beginner', 'advanced', 'members', 'charity', 'festival', 'premiere', 'workshop', 'family friendly', 'local', 'international'];
const ADJECTIVES = ['Evening', 'Morning', 'Summer', 'Winter', 'Late', 'Open', 'Grand', 'Little', 'Community', 'Spring', 'Midnight', 'Sunday'];
const NOUNS = ['Concert', 'Market', 'Workshop', 'Reading', 'Screening', 'Session', 'Meetup', 'Festival', 'Tour', 'Class', 'Fair', 'Gala'];
const WORDS = ['music', 'friends', 'city', 'garden', 'river', 'night', 'stories', 'dance', 'light', 'food', 'art', 'history', 'wine',
  'coffee', 'books', 'children', 'walk', 'science', 'poetry', 'games', 'craft', 'film', 'voices', 'harbour', 'square', 'museum'];

/** A small, fast, seedable generator (mulberry32), so seeded data is reproducible. */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Fills the database with realistic data: `events` events at a constant density of 40 a day, with venues (with
 * coordinates), organizers, a category tree and tags, and a few hidden, featured, draft, password-protected and
 * ticketed events, in a UTC+0 calendar. Goes through the repositories, in short writes, as a bulk load.
 */
export async function seed(engine: Engine, options: SeedOptions): Promise<SeedResult> {
  return engine.bulk(() => seedAll(engine, options));
}

async function seedAll(engine: Engine, options: SeedOptions): Promise<SeedResult> {
  const started = process.hrtime.bigint();
  const random = generator(options.seed ?? 42);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const days = Math.max(1, Math.ceil(options.events / EVENTS_PER_DAY));
  const from = (options.from ?? DateTime.utc().minus({ days: Math.floor(days * 0.3) })).startOf('day');
  const now = DateTime.utc();
  const nowWire = toWire(now);

  // A city has as many halls and organisers whatever the span of its calendar: constant density means a constant
  // number of venues and organizers, each with more events as the calendar grows.
  const venueCount = LINKED_RECORDS;
  const organizerCount = LINKED_RECORDS;
  const taken = async (repos: Repositories, type: 'event' | 'venue' | 'organizer', wanted: string) => {
    let slug = wanted;
    for (let n = 2; (await repos.posts.slugOwner(type, 'en', slug)) !== null; n++) slug = `${wanted}-${n}`;
    return slug;
  };

  let authorId = 0;
  const base = (type: 'event' | 'venue' | 'organizer', title: string, slug: string) => ({
    type, authorId, status: 'publish' as const, statusBeforeTrash: null, slug, title, content: '', excerpt: '', password: '',
    dateLocal: nowWire, dateUtc: nowWire, dateFloating: false, modifiedLocal: nowWire, modifiedUtc: nowWire, lang: 'en' as const, parentId: 0, imageId: 0,
    globalIdLineage: [], translationOf: null,
  });

  const { venues, organizers, categories, tags } = await engine.write(async (repos) => {
    authorId = (await repos.users.list()).find((u) => u.role === 'administrator')?.id
      ?? (await repos.users.findByLoginOrEmail('seed'))?.id
      ?? (await repos.users.create({ login: 'seed', email: null, role: 'author' })).id;
    const venues: number[] = [];
    for (let i = 0; i < venueCount; i++) {
      const c = pick(CITIES);
      const name = `${pick(ADJECTIVES)} ${c.city} Hall ${i + 1}`;
      venues.push(await repos.posts.insert({
        ...base('venue', name, await taken(repos, 'venue', slugify(name))), ...plainDefaults('venue'), type: 'venue', address: `${1 + Math.floor(random() * 200)} ${pick(WORDS)} street`,
        city: c.city, country: c.country, province: c.province ?? '', state: c.state ?? '', stateprovince: c.state ?? c.province ?? '',
        zip: String(10000 + Math.floor(random() * 89999)), phone: `+1 555 ${String(1000 + i).slice(-4)}`, website: `https://venue-${i + 1}.example.test`,
        showMap: true, showMapLink: true, geoLat: c.lat + (random() - 0.5) * 0.6, geoLng: c.lng + (random() - 0.5) * 0.9,
      } as NewRecord<'venue'>));
    }
    const organizers: number[] = [];
    for (let i = 0; i < organizerCount; i++) {
      const name = `${pick(ADJECTIVES)} ${pick(NOUNS)} Society ${i + 1}`;
      organizers.push(await repos.posts.insert({
        ...base('organizer', name, await taken(repos, 'organizer', slugify(name))), ...plainDefaults('organizer'), type: 'organizer', phone: `+1 555 ${String(2000 + i).slice(-4)}`,
        website: `https://organizer-${i + 1}.example.test`, email: `organizer-${i + 1}@example.test`,
      } as NewRecord<'organizer'>));
    }
    const categories = new Map<string, number>();
    for (const [name, parent] of CATEGORY_TREE) {
      const existing = await repos.terms.findBySlugOrName('category', 'en', name);
      categories.set(name, existing ?? await repos.terms.insert({
        taxonomy: 'category', name, slug: await repos.terms.uniqueSlug('category', 'en', slugify(name), null), description: '',
        parentId: parent ? categories.get(parent)! : 0, lang: 'en', translationOf: null,
      }));
    }
    const tags: number[] = [];
    for (const name of TAGS) {
      tags.push((await repos.terms.findBySlugOrName('tag', 'en', name)) ?? await repos.terms.insert({
        taxonomy: 'tag', name, slug: await repos.terms.uniqueSlug('tag', 'en', slugify(name), null), description: '', parentId: 0, lang: 'en', translationOf: null,
      }));
    }
    return { venues, organizers, categories: [...categories.values()], tags };
  });

  const dayCache = new Map<number, string>();
  const dayOf = (n: number) => {
    let text = dayCache.get(n);
    if (!text) dayCache.set(n, (text = from.plus({ days: n }).toISODate()!));
    return text;
  };
  const two = (n: number) => (n < 10 ? `0${n}` : String(n));
  /** Twelve words, one of them now and then the rare search word. */
  const description = () => {
    let text = pick(WORDS);
    const rare = random() < 0.005 ? 1 + Math.floor(random() * 11) : -1;
    for (let w = 1; w < 12; w++) text += ' ' + (w === rare ? RARE_WORD : pick(WORDS));
    return text + '.';
  };
  // PostgreSQL keeps every version of a row a transaction updates until it ends, and each event bumps the stored count
  // of its terms: a long transaction makes those few rows' version chains long. Short ones keep it fast there.
  // On SQLite a write runs in a savepoint (GroupCommit), and each statement that fires triggers closes a statement
  // savepoint of its own inside it at a cost that grows with all the write has changed so far: 100,000 events in writes
  // of 20,000 took 165-237 s (three quarters of it in sqlite3BtreeSavepoint), in writes of 50 48 s.
  const BATCH = engine.kind === 'postgres' ? 500 : 50;
  let done = 0;
  const slugBase = `e${Date.now().toString(36)}`;
  while (done < options.events) {
    const end = Math.min(options.events, done + BATCH);
    await engine.write(async (repos) => {
      for (let i = done; i < end; i++) {
        const dayIndex = Math.floor(i / EVENTS_PER_DAY);
        const allDay = random() < 0.05;
        const hour = 9 + Math.floor(random() * 13);
        const minute = random() < 0.5 ? 0 : 30;
        const length = 60 + Math.floor(random() * 4) * 30;
        const endMinutes = hour * 60 + minute + length;
        const startLocal = allDay ? `${dayOf(dayIndex)} 00:00:00` : `${dayOf(dayIndex)} ${two(hour)}:${two(minute)}:00`;
        const endLocal = allDay ? `${dayOf(dayIndex)} 23:59:59` : `${dayOf(dayIndex + Math.floor(endMinutes / 1440))} ${two(Math.floor(endMinutes / 60) % 24)}:${two(endMinutes % 60)}:00`;
        const organizerIds: number[] = [];
        for (let k = Math.floor(random() * 3); k > 0; k--) {
          const o = pick(organizers);
          if (!organizerIds.includes(o)) organizerIds.push(o);
        }
        const termIds = [pick(categories)];
        if (random() < 0.3) termIds.push(pick(categories));
        for (let k = Math.floor(random() * 3); k > 0; k--) termIds.push(pick(tags));
        const status = random() < 0.03 ? 'draft' : 'publish';
        const event: NewRecord<'event'> = {
          ...plainDefaults('event'), type: 'event', authorId, status, statusBeforeTrash: null, slug: `${slugBase}-${i + 1}`,
          title: `${pick(ADJECTIVES)} ${pick(NOUNS)} ${i + 1}`, content: description(), excerpt: '', password: random() < 0.01 ? 'secret' : '',
          dateLocal: nowWire, dateUtc: nowWire, dateFloating: status === 'draft', modifiedLocal: nowWire, modifiedUtc: nowWire, lang: 'en', parentId: 0, imageId: 0,
          globalIdLineage: [], translationOf: null,
          startLocal, endLocal, startUtc: startLocal, endUtc: endLocal, timezone: 'UTC+0', allDay,
          costs: random() < 0.3 ? [] : [String(5 * Math.floor(random() * 10))], currencySymbol: '', currencyPosition: '', currencyCode: '',
          website: null, showMap: true, showMapLink: true, hideFromListings: random() < 0.02, sticky: false, featured: random() < 0.1,
          ticketed: random() < 0.05, venueId: random() < 0.9 ? pick(venues) : 0, organizerIds, termIds: [...new Set(termIds)],
        };
        await repos.posts.insert(event);
      }
    });
    done = end;
    options.onProgress?.(done, options.events);
  }
  return {
    events: options.events, venues: venues.length, organizers: organizers.length, categories: categories.length, tags: tags.length,
    seconds: Number(process.hrtime.bigint() - started) / 1e9,
  };
}
