import ICAL from 'ical.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertEvent, NS, TestServer } from './helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await TestServer.start();
});
afterAll(() => s.close());

type Wire = Record<string, any>;
const post = async (path: string, json: Record<string, unknown>) => {
  const r = await s.raw('POST', `${NS}${path}`, { as: s.admin, json });
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  return r.body as Wire;
};

/** Parses a calendar with ical.js (an independent parser) and registers its VTIMEZONEs so TZIDs resolve. */
function parse(text: string) {
  const calendar = new ICAL.Component(ICAL.parse(text));
  const zones = calendar.getAllSubcomponents('vtimezone').map((vtimezone) => {
    const zone = new ICAL.Timezone(vtimezone);
    ICAL.TimezoneService.register(zone, zone.tzid);
    return zone.tzid;
  });
  const events = calendar.getAllSubcomponents('vevent').map((vevent) => ({ vevent, event: new ICAL.Event(vevent) }));
  return { calendar, zones, events };
}
const utcWire = (date: Date) => date.toISOString().slice(0, 19).replace('T', ' ');

/** Checks every field of a VEVENT against the JSON representation of the same event. */
function expectSameEvent(vevent: ICAL.Component, event: ICAL.Event, json: Wire, expected: { description: string | null; location: string | null; sequence: number }) {
  expect(event.uid).toBe(`event-${json.id}@127.0.0.1`);
  expect(event.summary).toBe(json.title);
  expect(event.description).toBe(expected.description);
  expect(event.location).toBe(expected.location);
  expect(event.sequence).toBe(expected.sequence);
  expect(vevent.getFirstPropertyValue('url')).toBe(json.url);
  expect(utcWire((vevent.getFirstPropertyValue('dtstamp') as ICAL.Time).toJSDate())).toBe(json.modified_utc);
  const categories = vevent.getAllProperties('categories').flatMap((p) => p.getValues());
  expect(categories).toEqual(json.categories.map((c: Wire) => c.name));
  const withEmail = json.organizer.find((o: Wire) => o.email);
  const organizer = vevent.getFirstProperty('organizer');
  if (withEmail) {
    expect(organizer!.getFirstValue()).toBe(`mailto:${withEmail.email}`);
    expect(organizer!.getParameter('cn')).toBe(withEmail.organizer);
  } else {
    expect(organizer).toBeNull();
  }
  if (json.all_day) {
    expect(event.startDate.isDate).toBe(true);
    expect(event.startDate.toString()).toBe(json.start_date.slice(0, 10));
    const dayAfter = new Date(json.end_date.slice(0, 10) + 'T00:00:00Z');
    dayAfter.setUTCDate(dayAfter.getUTCDate() + 1);
    expect(event.endDate.toString()).toBe(dayAfter.toISOString().slice(0, 10));
  } else {
    expect(event.startDate.isDate).toBe(false);
    expect(utcWire(event.startDate.toJSDate())).toBe(json.utc_start_date);
    expect(utcWire(event.endDate.toJSDate())).toBe(json.utc_end_date);
    const tzid = vevent.getFirstProperty('dtstart')!.getParameter('tzid');
    if (/^UTC[+-]/.test(json.timezone) || json.timezone === 'UTC') {
      expect(tzid).toBeUndefined();
      expect(event.startDate.zone?.tzid).toBe('UTC');
    } else {
      expect(tzid).toBe(json.timezone);
      // the wall-clock time in that zone is the event's start_date
      expect(event.startDate.toString().replace('T', ' ')).toBe(json.start_date);
    }
  }
}

describe('iCalendar', () => {
  let berlin: Wire;
  let allDay: Wire;
  let fixedOffset: Wire;
  let feedCategory: Wire;

  beforeAll(async () => {
    feedCategory = await post('/categories', { name: 'Feed music' });
    const venue = await post('/venues', { venue: 'Philharmonie', address: 'Herbert-von-Karajan-Str. 1', city: 'Berlin', zip: '10785', country: 'Germany' });
    const organizer = await post('/organizers', { organizer: 'Kulturamt', email: 'kultur@example.test' });
    berlin = await post('/events', {
      title: 'Winter concert', description: '<p>Doors at <b>7</b> &amp; music.</p>\n<p>Second line</p>',
      start_date: '2027-01-15 19:30:00', end_date: '2027-01-15 22:00:00', timezone: 'Europe/Berlin',
      venue: venue.id, organizer: [organizer.id], categories: [feedCategory.id, 'Feed evening'], tags: ['feed'],
    });
    // two edits: SEQUENCE 2
    await post(`/events/${berlin.id}`, { excerpt: 'Edited once' });
    berlin = await post(`/events/${berlin.id}`, { excerpt: 'Edited twice' });
    allDay = await post('/events', { title: 'Summer fair', all_day: true, start_date: '2027-07-03', end_date: '2027-07-04', timezone: 'America/New_York', organizer: [{ organizer: 'No mail' }] });
    fixedOffset = await post('/events', { title: 'Offset talk', start_date: '2027-02-01 09:00:00', end_date: '2027-02-01 10:00:00', timezone: 'UTC+5:30' });
    await post('/events', { title: 'Feed secret draft', status: 'draft', start_date: '2027-02-02 09:00:00', end_date: '2027-02-02 10:00:00' });
    await post('/events', { title: 'Feed protected', password: 'opensesame', start_date: '2027-02-03 09:00:00', end_date: '2027-02-03 10:00:00' });
  });

  it('serves the event list as a feed an independent parser reads back field for field', async () => {
    const feed = await s.raw('GET', `${NS}/events.ics?start_date=2027-01-01&end_date=2027-12-31`);
    expect(feed.status).toBe(200);
    expect(feed.headers.get('content-type')).toBe('text/calendar; charset=utf-8');
    expect(feed.text.startsWith('BEGIN:VCALENDAR\r\n')).toBe(true);
    const { calendar, zones, events } = parse(feed.text);
    expect(calendar.getFirstPropertyValue('version')).toBe('2.0');
    expect(zones.sort()).toEqual(['Europe/Berlin']); // all-day dates and fixed offsets need none
    const list = (await s.raw('GET', `${NS}/events?start_date=2027-01-01&end_date=2027-12-31&per_page=50`)).body.events as Wire[];
    expect(events.map((e) => e.event.summary)).toEqual(list.filter((e) => e.title !== 'Feed protected').map((e) => e.title));
    const byUid = new Map(events.map((e) => [e.event.uid, e]));
    const check = (json: Wire, expected: { description: string | null; location: string | null; sequence: number }) => {
      const found = byUid.get(`event-${json.id}@127.0.0.1`)!;
      expectSameEvent(found.vevent, found.event, list.find((e) => e.id === json.id)!, expected);
    };
    check(berlin, { description: 'Doors at 7 & music.\n\nSecond line', location: 'Philharmonie, Herbert-von-Karajan-Str. 1, Berlin, 10785, Germany', sequence: 2 });
    check(allDay, { description: null, location: null, sequence: 0 });
    check(fixedOffset, { description: null, location: null, sequence: 0 });
    expect(feed.text).not.toContain('secret');
    expect(feed.text).not.toContain('Feed protected');
  });

  it('takes the list filters, and shows a caller what they may read', async () => {
    const filtered = parse((await s.raw('GET', `${NS}/events.ics?categories=${feedCategory.id}&start_date=2027-01-01`)).text);
    expect(filtered.events.map((e) => e.event.summary)).toEqual(['Winter concert']);
    const admin = parse((await s.raw('GET', `${NS}/events.ics?start_date=2027-01-01`, { as: s.admin })).text);
    expect(admin.events.map((e) => e.event.summary)).toContain('Feed secret draft');
    expect(admin.events.map((e) => e.event.summary)).not.toContain('Feed protected');
    const bad = await s.raw('GET', `${NS}/events.ics?start_date=whenever`);
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toBe('application/json; charset=UTF-8');
  });

  it('has no pages: the first 1,000 events by start', async () => {
    const other = await TestServer.start();
    try {
      other.db.transaction(() => {
        for (let i = 0; i < 1005; i++) insertEvent(other.db, { title: `Bulk ${String(i).padStart(4, '0')}` });
      })();
      // the fixture events share a start; the list orders them by date, then id
      const r = await other.raw('GET', `${NS}/events.ics?start_date=2026-12-01&end_date=2027-12-31`);
      const { events } = parse(r.text);
      expect(events).toHaveLength(1000);
      expect(events[0]!.event.summary).toBe('Bulk 0000');
      expect(events.at(-1)!.event.summary).toBe('Bulk 0999');
    } finally {
      await other.close();
    }
  });

  it('serves one event, with the read rules and errors of GET /events/{id}', async () => {
    const one = await s.raw('GET', `${NS}/events/${berlin.id}/ics`);
    expect(one.status).toBe(200);
    const { events, zones } = parse(one.text);
    expect(events).toHaveLength(1);
    expect(zones).toEqual(['Europe/Berlin']);
    const json = (await s.raw('GET', `${NS}/events/${berlin.id}`)).body;
    expectSameEvent(events[0]!.vevent, events[0]!.event, json, { description: 'Doors at 7 & music.\n\nSecond line', location: 'Philharmonie, Herbert-von-Karajan-Str. 1, Berlin, 10785, Germany', sequence: 2 });

    const list = (await s.raw('GET', `${NS}/events?start_date=2027-02-03&end_date=2027-02-03`)).body.events as Wire[];
    const protectedId = list.find((e) => e.title === 'Feed protected')!.id;
    expect((await s.raw('GET', `${NS}/events/${protectedId}/ics`)).status).toBe(403);
    const unlocked = await s.raw('GET', `${NS}/events/${protectedId}/ics?password=opensesame`);
    expect(unlocked.status).toBe(200);
    expect(parse(unlocked.text).events[0]!.event.summary).toBe('Feed protected');
    expect((await s.raw('GET', `${NS}/events/999999/ics`)).status).toBe(404);
    const notAnEvent = await s.raw('GET', `${NS}/events/${berlin.venue.id}/ics`);
    expect([notAnEvent.status, notAnEvent.body.code]).toEqual([400, 'rest-invalid-event-id']);
  });

  it('is tagged and revalidated like every other answer, with a stable body', async () => {
    const first = await s.raw('GET', `${NS}/events/${berlin.id}/ics`);
    const again = await s.raw('GET', `${NS}/events/${berlin.id}/ics`);
    expect(again.text).toBe(first.text);
    expect((await s.raw('GET', `${NS}/events/${berlin.id}/ics`, { headers: { 'If-None-Match': first.headers.get('etag')! } })).status).toBe(304);
  });
});
