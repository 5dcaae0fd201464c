import { describe, expect, it } from 'vitest';
import { DateTime } from 'luxon';
import { boundedEventList } from '../src/db/listQueries.js';
import type { EventListQuery } from '../src/db/records.js';
import { boundsSteadyUntil, listBounds } from '../src/domain/listWindow.js';

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

describe('the default window of an event list', () => {
  const window = (iso: string, siteTimezone: string, query: Record<string, string> = {}) =>
    listBounds(query, { strict: false, include: false, siteTimezone, now: DateTime.fromISO(iso, { zone: 'utc' }) }).map((b) => `${b.param} ${b.value}`);

  it('moves at each site-local midnight, on days of 23 and 25 hours too, back and forth in time', () => {
    // Paris: 2026-03-29 has 23 hours (02:00 → 03:00), 2026-10-25 has 25 (03:00 → 02:00)
    const paris = [
      ['2026-03-28T22:59:59.999Z', '2026-03-27 00:00:00', '2028-03-28 23:59:59'], // 23:59:59.999 on the 28th
      ['2026-03-28T23:00:00.000Z', '2026-03-28 00:00:00', '2028-03-29 23:59:59'], // midnight
      ['2026-03-29T21:59:59.999Z', '2026-03-28 00:00:00', '2028-03-29 23:59:59'], // 23:59:59.999, 23 hours later
      ['2026-03-29T22:00:00.000Z', '2026-03-29 00:00:00', '2028-03-30 23:59:59'],
      ['2026-10-25T22:59:59.999Z', '2026-10-24 00:00:00', '2028-10-25 23:59:59'], // 25 hours after midnight
      ['2026-10-25T23:00:00.000Z', '2026-10-25 00:00:00', '2028-10-26 23:59:59'],
      ['2026-03-28T22:59:59.999Z', '2026-03-27 00:00:00', '2028-03-28 23:59:59'], // back again
    ];
    for (const [now, start, end] of paris) expect(window(now!, 'Europe/Paris'), now).toEqual([`start_date ${start}`, `end_date ${end}`]);
    // a zone of its own beside it, and the last day of February two years ahead
    expect(window('2026-02-28T13:59:59Z', 'UTC+10')).toEqual(['start_date 2026-02-27 00:00:00', 'end_date 2028-02-28 23:59:59']);
    expect(window('2026-02-28T14:00:00Z', 'UTC+10')).toEqual(['start_date 2026-02-28 00:00:00', 'end_date 2028-03-01 23:59:59']);
    expect(window('2026-03-28T22:59:59.999Z', 'Europe/Paris')).toEqual(['start_date 2026-03-27 00:00:00', 'end_date 2028-03-28 23:59:59']);
  });

  it('stands in only for the date parameters not sent, and not at all beside a relative one', () => {
    expect(window('2026-03-28T23:00:00Z', 'Europe/Paris', { start_date: '2026-05-01' })).toEqual(['start_date 2026-05-01 00:00:00', 'end_date 2028-03-29 23:59:59']);
    expect(window('2026-03-28T23:00:00Z', 'Europe/Paris', { starts_after: '2026-05-01' })).toEqual(['starts_after 2026-05-01 23:59:59']);
  });
});

describe('how long the clock leaves the bounds of an event list as they are', () => {
  const steady = (iso: string, query: Record<string, string> = {}, siteTimezone = 'UTC', include = false) => {
    const until = boundsSteadyUntil(query, { include, siteTimezone, now: DateTime.fromISO(iso, { zone: 'utc' }) });
    return until === null || until === Infinity ? until : new Date(until).toISOString();
  };

  it('the default window until the next site-local midnight, on a day of 23 hours too, and the bounds read then are the same', () => {
    expect(steady('2026-11-28T10:00:00Z')).toBe('2026-11-29T00:00:00.000Z');
    expect(steady('2026-03-29T12:00:00Z', {}, 'Europe/Paris')).toBe('2026-03-29T22:00:00.000Z');
    // a zone of its own: its midnight is 10:00 UTC
    expect(steady('2026-11-28T09:59:59Z', {}, 'UTC+14')).toBe('2026-11-28T10:00:00.000Z');
    for (const [iso, zone] of [['2026-11-28T10:00:00Z', 'UTC'], ['2026-03-29T12:00:00Z', 'Europe/Paris'], ['2026-10-25T01:30:00Z', 'Europe/Paris']] as const) {
      const now = DateTime.fromISO(iso, { zone: 'utc' });
      const until = boundsSteadyUntil({}, { include: false, siteTimezone: zone, now })!;
      const read = (at: DateTime) => listBounds({}, { strict: false, include: false, siteTimezone: zone, now: at });
      expect(read(DateTime.fromMillis(until - 1, { zone: 'utc' })), iso).toEqual(read(now));
      expect(read(DateTime.fromMillis(until, { zone: 'utc' })), iso).not.toEqual(read(now));
    }
  });

  it('for good when every date sent names a fixed moment, or `include` sets the dates aside', () => {
    expect(steady('2026-11-28T10:00:00Z', { start_date: '2026-12-01', end_date: '2027-01-31 18:00' })).toBe(Infinity);
    expect(steady('2026-11-28T10:00:00Z', { starts_after: '2026-12-01T10:00:00+02:00' })).toBe(Infinity);
    expect(steady('2026-11-28T10:00:00Z', { ends_before: '@1798761600' })).toBe(Infinity);
    expect(steady('2026-11-28T10:00:00Z', { start_date: 'today' }, 'UTC', true)).toBe(Infinity);
    // one date sent: the default window stands in for the other, which moves at midnight
    expect(steady('2026-11-28T10:00:00Z', { start_date: '2026-12-01' })).toBe('2026-11-29T00:00:00.000Z');
  });

  it('for its second only when a date is relative to the clock', () => {
    for (const text of ['now', 'today', 'tomorrow', '+1 week', 'monday', 'next month', 'first day of next month', 'Dec 25', '10:00']) {
      expect(steady('2026-11-28T10:00:00Z', { start_date: text }), text).toBeNull();
      expect(steady('2026-11-28T10:00:00Z', { ends_after: text }), text).toBeNull();
    }
  });
});
