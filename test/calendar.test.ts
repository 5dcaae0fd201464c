import ICAL from 'ical.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NS, readsDuring, TestServer } from './helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await TestServer.start();
});
afterAll(() => s.close());

/**
 * Inserts published events of these titles straight into the database, in this order (ids ascending), as
 * `insertEvent` does one by one, in three statements whatever their number.
 */
async function insertEvents(server: TestServer, titles: string[]): Promise<void> {
  const now = '2026-11-01 10:00:00';
  const prefix = `bulk-${Math.random().toString(36).slice(2)}-`;
  await server.sql(`INSERT INTO posts (type, status, slug, title, date_local, date_utc, modified_local, modified_utc, lang, translation_group)
                    VALUES ${titles.map(() => "('event', 'publish', ?, ?, ?, ?, ?, ?, 'en', ?)").join(', ')}`,
  // a translation group of its own for each (unique by type and language) until it is set to the id
  ...titles.flatMap((title, i) => [`${prefix}${i}`, title, now, now, now, now, -1 - i]));
  await server.sql('UPDATE posts SET translation_group = id WHERE slug LIKE ?', `${prefix}%`);
  await server.sql(`INSERT INTO events (post_id, start_local, end_local, start_utc, end_utc, timezone, lang, status, date_utc)
                    SELECT id, '2027-01-01 10:00:00', '2027-01-01 12:00:00', '2027-01-01 10:00:00', '2027-01-01 12:00:00', 'UTC+0', 'en', 'publish', ?
                    FROM posts WHERE slug LIKE ?`, now, `${prefix}%`);
}

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

  it('has no pages: the first 500 events by start', async () => {
    const other = await TestServer.start();
    try {
      await insertEvents(other, Array.from({ length: 505 }, (_, i) => `Bulk ${String(i).padStart(4, '0')}`));
      // the fixture events share a start; the list orders them by date, then id
      const r = await other.raw('GET', `${NS}/events.ics?start_date=2026-12-01&end_date=2027-12-31`);
      const { events } = parse(r.text);
      expect(events).toHaveLength(500);
      expect(events[0]!.event.summary).toBe('Bulk 0000');
      expect(events.at(-1)!.event.summary).toBe('Bulk 0499');
      // read and rendered in slices: every one once, in order
      expect(events.map((e) => e.event.summary)).toEqual(Array.from({ length: 500 }, (_, i) => `Bulk ${String(i).padStart(4, '0')}`));
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

describe('iCalendar text written by users', () => {
  // what a hostile author would put in every field that reaches a calendar file: line breaks of each kind (raw and as
  // HTML entities, which the plain-text rendering decodes), the separators of iCalendar values, and long Unicode
  const breakOut = 'BEGIN:VALARM\r\nACTION:AUDIO\r\nATTACH:https://evil.example/x.mp3\r\nEND:VALARM';
  const separators = 'semi;colon, comma \\ backslash "quoted" ^caret\ttab';
  const unicode = 'Fête de la musique 🎷🎺 東京ジャズ ñandú e\u0301te '.repeat(6).trim(); // 1-, 2-, 3- and 4-octet characters
  const hostile = (label: string) => `${label} ${separators}\r\n${breakOut}\nX-INJECTED:${label}\rDESCRIPTION:forged ${unicode}`;
  /** A hostile name as WordPress renders titles and names (curly quotes). */
  const rendered = (label: string) => hostile(label).replace('"quoted"', '“quoted”');
  const entities = (label: string) => `${label} &#13;&#10;X-INJECTED:${label}&#10;BEGIN:VEVENT`;
  /** A text as an iCalendar value carries it: every line break is one escaped `\n`. */
  const asRead = (text: string) => text.replace(/\r\n?/g, '\n');
  /** A TEXT value ical.js does not know the type of (NAME, X-WR-CALNAME: RFC 7986), unescaped as RFC 5545 says. */
  const text = (raw: unknown) => String(raw).replace(/\\([\\;,nN])/g, (_, c: string) => (c === 'n' || c === 'N' ? '\n' : c));

  let event: Wire;
  beforeAll(async () => {
    const category = await post('/categories', { name: `Cat ${separators} &#10;X-INJECTED:category` });
    const venue = await post('/venues', { venue: hostile('Venue'), address: entities('Street'), city: `City ${separators}`, zip: entities('Zip'), country: 'Côte d’Ivoire 🎷' });
    const organizer = await post('/organizers', { organizer: hostile('Organizer'), email: `x";CN=forged;\r\nATTACH:https://evil.example/${separators}@example.test` });
    event = await post('/events', {
      title: hostile('Title'), description: `<p>${hostile('Description')}</p><p>${entities('Paragraph')}</p>`,
      start_date: '2027-05-10 19:00:00', end_date: '2027-05-10 21:00:00', timezone: 'America/Argentina/Buenos_Aires',
      venue: venue.id, organizer: [organizer.id], categories: [category.id],
    });
  });

  /** The raw lines: CRLF only, 75 octets at most, continuation lines start with a space; unfolded, every line is a property. */
  function expectWellFormedLines(text: string): string[] {
    expect(text.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
    expect(text).not.toContain('\uFFFD'); // no UTF-8 sequence was split (the server would have sent a replacement)
    const physical = text.split('\r\n');
    for (const line of physical) expect(Buffer.byteLength(line), line).toBeLessThanOrEqual(75);
    const unfolded = text.replace(/\r\n /g, '').split('\r\n');
    expect(physical.length).toBeGreaterThan(unfolded.length); // the long texts were folded
    const names = unfolded.map((line) => /^[A-Z-]+/.exec(line)?.[0]);
    expect(names.filter((name) => name === undefined)).toEqual([]);
    expect(unfolded.filter((line) => /^(X-INJECTED|ACTION|ATTACH)|^BEGIN:V(ALARM|EVENT)$/.test(line) && line !== 'BEGIN:VEVENT')).toEqual([]);
    expect(unfolded.filter((line) => line === 'BEGIN:VEVENT')).toHaveLength(1);
    return unfolded;
  }

  it('decodes the character references it knows, once, and leaves any other as it is', async () => {
    // `&constructor;` names no character, but it is a key of every JavaScript object: a lookup in an object literal
    // put the source of Object's constructor in the file
    const references = 'Tom &constructor; Jerry &amp;amp; &#8220;q&#8221; &#x1F3B7; &bogus; &#0; &#x110000; &Copy; end';
    const e = await post('/events', { title: `References ${references}`, description: `<p>${references.repeat(400)}</p>`, start_date: '2027-05-11 19:00:00', end_date: '2027-05-11 21:00:00' });
    const r = await s.raw('GET', `${NS}/events/${e.id}/ics`);
    expectWellFormedLines(r.text);
    const { event: parsed } = parse(r.text).events[0]!;
    const decoded = 'Tom &constructor; Jerry &amp; “q” 🎷 &bogus; &#0; &#x110000; © end';
    expect(parsed.summary).toBe(`References ${decoded}`);
    expect(parsed.description).toBe(decoded.repeat(400));
    expect(r.text).not.toContain('function');
  });

  it('cannot add a line, a component or a parameter through any field of an event file', async () => {
    const r = await s.raw('GET', `${NS}/events/${event.id}/ics`);
    expect(r.status).toBe(200);
    const lines = expectWellFormedLines(r.text);
    const { calendar, events, zones } = parse(r.text);
    expect(events).toHaveLength(1);
    const { vevent, event: parsed } = events[0]!;
    expect(vevent.getAllSubcomponents()).toEqual([]); // no VALARM
    expect(vevent.getAllProperties().map((p) => p.name).sort()).toEqual(
      ['categories', 'description', 'dtend', 'dtstamp', 'dtstart', 'location', 'organizer', 'sequence', 'summary', 'uid', 'url'],
    );

    // every value reads back as the text the JSON representation shows, line breaks included
    const json = (await s.raw('GET', `${NS}/events/${event.id}`)).body as Wire;
    const title = `Title ${separators.replace('"quoted"', '&#8220;quoted&#8221;')}`; // the title as WordPress renders it
    expect(json.title.startsWith(title)).toBe(true);
    const summary = rendered('Title');
    expect(parsed.summary).toBe(asRead(summary));
    expect(text(calendar.getFirstPropertyValue('name'))).toBe(asRead(summary));
    expect(text(calendar.getFirstPropertyValue('x-wr-calname'))).toBe(asRead(summary));
    expect(parsed.description).toBe(asRead(`${hostile('Description')}\nParagraph \r\nX-INJECTED:Paragraph\nBEGIN:VEVENT`));
    expect(parsed.location).toBe(asRead([
      rendered('Venue'),
      'Street \r\nX-INJECTED:Street\nBEGIN:VEVENT', `City ${separators.replace('\t', ' ')}`, 'Zip \r\nX-INJECTED:Zip\nBEGIN:VEVENT', 'Côte d’Ivoire 🎷',
    ].join(', ')));
    expect(vevent.getAllProperties('categories').flatMap((p) => p.getValues())).toEqual([`Cat ${separators.replace('\t', ' ')}\nX-INJECTED:category`]);
    const organizer = vevent.getFirstProperty('organizer')!;
    expect(organizer.getParameter('cn')).toBe(asRead(rendered('Organizer')));
    expect(Object.keys(organizer.toJSON()[1])).toEqual(['cn']); // no parameter of the author's making
    const mailto = organizer.getFirstValue() as string;
    expect(mailto).toMatch(/^mailto:[A-Za-z0-9\-._~!$'()*+:@%]+$/);
    expect(decodeURIComponent(mailto.slice('mailto:'.length))).toBe(json.organizer[0].email);
    expect(vevent.getFirstPropertyValue('url')).toBe(json.url);
    // the timezone the author chose names the VTIMEZONE and the times' TZID
    expect(zones).toEqual(['America/Argentina/Buenos_Aires']);
    expect(vevent.getFirstProperty('dtstart')!.getParameter('tzid')).toBe('America/Argentina/Buenos_Aires');
    expect(parsed.startDate.toString()).toBe('2027-05-10T19:00:00');
    expect(lines.filter((line) => line.startsWith('DTSTART;'))).toEqual(['DTSTART;TZID=America/Argentina/Buenos_Aires:20270510T190000']);
  });

  it('escapes the same way in the feed', async () => {
    const r = await s.raw('GET', `${NS}/events.ics?start_date=2027-05-10&end_date=2027-05-10`);
    expectWellFormedLines(r.text);
    const { calendar, events } = parse(r.text);
    expect(calendar.getFirstPropertyValue('name')).toBe('Events');
    expect(events.map((e) => e.event.uid)).toEqual([`event-${event.id}@127.0.0.1`]);
    expect(events[0]!.event.summary).toBe(asRead(rendered('Title')));
    // the e-mail address, as stored (not validated), is a mailto: URI whose characters need no escaping
    const mailto = events[0]!.vevent.getFirstPropertyValue('organizer') as string;
    expect(mailto).toMatch(/^mailto:[A-Za-z0-9\-._~!$'()*+:@%]+$/);
    expect(decodeURIComponent(mailto.slice('mailto:'.length))).toBe(event.organizer[0].email);
    expect(event.organizer[0].email).toContain('";CN=forged;');
  });
});

describe('iCalendar feeds of large descriptions', () => {
  const words = (n: number) => 'lorem ipsum dolor sit amet '.repeat(Math.ceil(n / 27)).slice(0, n).trim();

  it('cuts a description past 65,536 characters in the feed, with …, and keeps it whole in the event\'s own calendar', async () => {
    const long = words(70_000);
    const e = await post('/events', { title: 'Long read', description: long, start_date: '2027-06-01 10:00:00', end_date: '2027-06-01 11:00:00' });
    const own = parse((await s.raw('GET', `${NS}/events/${e.id}/ics`)).text).events[0]!.event;
    expect(own.description).toBe(long);
    const feed = parse((await s.raw('GET', `${NS}/events.ics?start_date=2027-06-01&end_date=2027-06-01`)).text).events;
    expect(feed.map((f) => f.event.uid)).toEqual([`event-${e.id}@127.0.0.1`]);
    expect(feed[0]!.event.description).toBe(`${long.slice(0, 65_536)}…`);
  });

  it('renders a few events between turns of the event loop: other requests are answered while it works', async () => {
    // twelve descriptions of 900 KB: one turn for all held the event loop for seconds
    const markup = '<p>Doors &amp; seats &lt;limited&gt;, <b>bring</b> &#8220;tickets&#8221;<br>and a <a href="https://example.org/">map</a></p>';
    const description = markup.repeat(Math.floor(900_000 / markup.length));
    for (let i = 0; i < 12; i++) await post('/events', { title: `Heavy ${i}`, description, start_date: '2027-07-01 10:00:00', end_date: '2027-07-01 11:00:00' });
    const probe = await post('/events', { title: 'Probe', start_date: '2027-08-01 10:00:00', end_date: '2027-08-01 11:00:00' });
    await s.raw('GET', `${NS}/events/${probe.id}`);

    const started = performance.now();
    const { result: feed, reads, slowest } = await readsDuring(s.raw('GET', `${NS}/events.ics?start_date=2027-07-01&end_date=2027-07-01`), async () => {
      expect((await s.raw('GET', `${NS}/events/${probe.id}`)).status).toBe(200);
    });
    const whole = performance.now() - started;
    const events = parse(feed.text).events;
    expect(events.map((e) => e.event.summary)).toEqual(Array.from({ length: 12 }, (_, i) => `Heavy ${i}`));
    expect(events[0]!.event.description.endsWith('…')).toBe(true);
    expect(reads).toBeGreaterThan(2);
    expect(slowest, `the slowest read took ${slowest.toFixed(0)} ms of the feed's ${whole.toFixed(0)}`).toBeLessThan(whole / 2);
  });

  it('makes an event\'s own calendar of a description of megabytes a piece at a time: other requests are answered meanwhile', async () => {
    // 900,000 `<` are kept as 3.6 MB of `&lt;`: made text at once, they held the event loop for a quarter of a second
    const e = await post('/events', { title: 'Angles', description: '<'.repeat(900_000), start_date: '2027-09-01 10:00:00', end_date: '2027-09-01 11:00:00' });
    const probe = await post('/events', { title: 'Probe', start_date: '2027-09-02 10:00:00', end_date: '2027-09-02 11:00:00' });
    await s.raw('GET', `${NS}/events/${probe.id}`);
    const { result: own, reads } = await readsDuring(s.raw('GET', `${NS}/events/${e.id}/ics`), async () => {
      expect((await s.raw('GET', `${NS}/events/${probe.id}`)).status).toBe(200);
    });
    expect(parse(own.text).events[0]!.event.description).toBe('<'.repeat(900_000));
    expect(reads).toBeGreaterThan(2);
  });
});
