import { describe, expect, it } from 'vitest';
import { DateTime } from 'luxon';
import { boundedEventList } from '../src/db/listQueries.js';
import type { EventListQuery } from '../src/db/records.js';
import { listBounds } from '../src/domain/listWindow.js';

const NOW = DateTime.fromISO('2026-11-28T10:00:00Z', { zone: 'utc' });

/** The query of the default GET /events for the public, its window as the list computes it. */
function defaultList(change: Partial<EventListQuery> = {}): EventListQuery {
  return {
    lang: 'en',
    nowUtc: '2026-11-28 10:00:00',
    statuses: ['publish'],
    viewer: { kind: 'public' },
    access: { anonymous: true, edits: { event: null, venue: null, organizer: null }, password: undefined },
    bounds: listBounds({}, { strict: false, include: false, siteTimezone: 'UTC', now: NOW }),
    limit: 10,
    offset: 0,
    ...change,
  };
}

describe('event lists that cost little whatever the calendar size (read on the request connection by SQLite)', () => {
  it('the default list, and its first pages, are bounded', () => {
    expect(boundedEventList(defaultList())).toBe(true);
    expect(boundedEventList(defaultList({ offset: 150, limit: 50 }))).toBe(true);
  });

  it('a window of a day, or of three years, is bounded; of four years, or open-ended, is not', () => {
    const window = (from: string, to: string) => listBounds({ start_date: from, end_date: to }, { strict: false, include: false, siteTimezone: 'UTC', now: NOW });
    expect(boundedEventList(defaultList({ bounds: window('2026-12-01', '2026-12-01') }))).toBe(true);
    expect(boundedEventList(defaultList({ bounds: window('2026-01-01', '2028-12-31') }))).toBe(true);
    expect(boundedEventList(defaultList({ bounds: window('2026-01-01', '2029-12-31') }))).toBe(false);
    expect(boundedEventList(defaultList({ bounds: listBounds({ starts_after: '2026-01-01' }, { strict: false, include: false, siteTimezone: 'UTC', now: NOW }) }))).toBe(false);
  });

  it('a deep page, a search, any filter, or a list not for the public is not', () => {
    expect(boundedEventList(defaultList({ offset: 200 }))).toBe(false);
    expect(boundedEventList(defaultList({ search: { include: ['jazz'], exclude: [] } }))).toBe(false);
    expect(boundedEventList(defaultList({ categoryIds: [3] }))).toBe(false);
    expect(boundedEventList(defaultList({ featured: false }))).toBe(false);
    expect(boundedEventList(defaultList({ include: [1, 2] }))).toBe(false);
    expect(boundedEventList(defaultList({ geo: 'any' }))).toBe(false);
    expect(boundedEventList(defaultList({ withoutPassword: true }))).toBe(false);
    expect(boundedEventList(defaultList({ viewer: { kind: 'user', userId: 1, seeOthers: true } }))).toBe(false);
    expect(boundedEventList(defaultList({ statuses: ['publish', 'draft'] }))).toBe(false);
  });
});
