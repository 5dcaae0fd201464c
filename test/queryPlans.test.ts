import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../src/db/connection.js';
import { migrate } from '../src/db/migrate.js';
import { PostsRepository, type EventListQuery, type LinkedListQuery } from '../src/db/posts.js';
import { protectedAccess } from '../src/domain/postRules.js';
import { seed } from '../src/db/seed.js';
import { TermsRepository } from '../src/db/terms.js';
import { UsersRepository } from '../src/db/users.js';

/**
 * Lists must cost the same at a million events as at ten thousand: each statement of a list reads a range of an
 * index, never every event. These checks read SQLite's plans for the list shapes the API serves.
 */
let dir: string;
let db: Db;
let posts: PostsRepository;
let terms: TermsRepository;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'almanac-plans-'));
  db = openDatabase(join(dir, 'plans.sqlite'));
  migrate(db);
  posts = new PostsRepository(db);
  terms = new TermsRepository(db);
  seed(db, { posts, terms, users: new UsersRepository(db) }, { events: 20_000 }); // plans are chosen by size: test a realistic one
  db.exec('ANALYZE');
});
afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const window = [
  { column: 'start' as const, op: '>=' as const, value: '2026-11-22 00:00:00' },
  { column: 'end' as const, op: '<=' as const, value: '2028-11-23 23:59:59' },
];
const anonymous = protectedAccess(null, undefined);
/** A subscriber who sends a password: protected events it may not edit are opened by their password only. */
const subscriberWithPassword = protectedAccess({ id: 2, login: 'reader', role: 'subscriber' }, 'secret');
const query = (extra: Partial<EventListQuery> = {}): EventListQuery => ({
  lang: 'en', nowUtc: '2026-11-23 00:00:00', statuses: ['publish'], viewer: { kind: 'public' }, access: anonymous, bounds: window, limit: 10, offset: 0, ...extra,
});

/** A plan line that reads a whole table (or a whole index) of events. */
const fullScanOfEvents = (line: string) => /^SCAN (e|events)\b/.test(line);

describe('event list query plans', () => {
  const shapes: [string, () => Partial<EventListQuery>][] = [
    ['the default list', () => ({})],
    ['a category filter', () => ({ categoryIds: terms.withDescendants([terms.findBySlugOrName('category', 'en', 'music')!]) })],
    ['a venue filter', () => ({ venueIds: [firstVenue()] })],
    ['a venue filter with a password', () => ({ venueIds: [firstVenue()], access: subscriberWithPassword })],
    ['a date window', () => ({ bounds: [{ column: 'start', op: '>=', value: '2027-01-01 00:00:00' }, { column: 'end', op: '<=', value: '2027-01-31 23:59:59' }] })],
    ['an editor with every status', () => ({ statuses: ['publish', 'future', 'draft', 'pending', 'private'], viewer: { kind: 'user', userId: 1, seeOthers: true } })],
    ['a search', () => ({ search: { include: ['zephyrine'], exclude: [] } })],
    ['a search by a subscriber with a password', () => ({ search: { include: ['zephyrine'], exclude: ['storm'] }, access: subscriberWithPassword })],
    ['a category filter with a password', () => ({ categoryIds: terms.withDescendants([terms.findBySlugOrName('category', 'en', 'music')!]), access: subscriberWithPassword })],
    ['events near a point', () => ({ geo: { lat: 52.5, lng: 13.4, radiusKm: 40 }, access: subscriberWithPassword })],
  ];
  it.each(shapes)('%s reads an index range, never every event', (_name, extra) => {
    const plan = posts.explainEventList(query(extra()));
    expect(plan.length).toBeGreaterThan(0);
    expect(plan.filter(fullScanOfEvents)).toEqual([]);
    expect(plan.some((line) => /SEARCH e USING (COVERING )?INDEX events_(listing|by_venue)/.test(line))).toBe(true);
  });

  it('answers a page and its total in two statements whatever the page size', () => {
    const small = posts.explainEventList(query({ limit: 1 }));
    const large = posts.explainEventList(query({ limit: 50 }));
    expect(large).toEqual(small);
  });
});

const linked = (extra: Partial<LinkedListQuery>): LinkedListQuery => ({
  type: 'venue', lang: 'en', nowUtc: '2026-11-23 00:00:00', nowLocal: '2026-11-23 00:00:00', statuses: ['publish'],
  viewer: { kind: 'public' }, eventViewer: { kind: 'public' }, access: anonymous, limit: 10, offset: 0, ...extra,
});
const firstVenue = () => posts.listLinked(linked({ limit: 1 })).ids[0]!;

describe('venue and organizer list query plans', () => {
  it.each([
    ['venues with upcoming events', linked({ onlyWithUpcoming: true })],
    ['venues with upcoming events, for a subscriber with a password', linked({ onlyWithUpcoming: true, access: subscriberWithPassword })],
    ['organizers with events', linked({ type: 'organizer', hasEvents: true })],
    ['organizers with events, for a subscriber with a password', linked({ type: 'organizer', hasEvents: true, access: subscriberWithPassword })],
    ['a venue search by a subscriber with a password', linked({ words: ['berlin'], access: subscriberWithPassword })],
  ] as const)('%s read a range of their own type and never scan every event', (_name, q) => {
    const plan = posts.explainLinkedList(q);
    expect(plan.filter(fullScanOfEvents)).toEqual([]);
    // venue or organizer posts are read as a range of one type (never every post)
    expect(plan.filter((line) => /^(SEARCH|SCAN) p\b/.test(line)).every((line) => /^SEARCH p USING .*\(type=\?/.test(line))).toBe(true);
  });
});

describe('lookups under WordPress\'s collation', () => {
  it('find duplicate venues and organizers, and terms by name, through the collation-key indexes', () => {
    expect(posts.explainSameName()).toEqual([expect.stringMatching(/^SEARCH posts USING INDEX posts_by_title_key \(type=\? AND lang=\? AND title_key=\?\)/)]);
    const [bySlug, byName] = terms.explainNameLookups();
    expect(bySlug).toMatch(/USING (COVERING )?INDEX terms_slug/);
    expect(byName).toMatch(/USING (COVERING )?INDEX terms_by_name_key \(taxonomy=\? AND lang=\? AND name_key=\?\)/);
  });
});
