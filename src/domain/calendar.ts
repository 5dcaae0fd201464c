import { getVtimezoneComponent } from '@touch4it/ical-timezones';
import { IANAZone } from 'luxon';
import type { components } from '../../generated/api.js';
import { plainText, plainTextStart } from './html.js';

type EventWire = components['schemas']['Event'];
type VenueWire = components['schemas']['Venue'];

/** What an iCalendar object is built from: the event's JSON representation and facts the JSON does not carry. */
export interface CalendarEntry {
  event: EventWire;
  /** How many times the event was changed after its creation (`SEQUENCE`). */
  revision: number;
  /** The description as plain text, when made beforehand (`plainTextInTurns`). */
  descriptionText?: string;
}

// ---- RFC 5545 values. Every text a user wrote goes through one of these, so none can start a line of its own.

/** Line breaks of any kind: each becomes the two characters `\n` of a TEXT value (§3.3.11), never a line. */
const LINE_BREAK = /\r\n|[\n\v\f\r\u0085\u2028\u2029]/g;
/** Control characters a content line may not hold (§3.1: CONTROL, bar HTAB), once line breaks are out. */
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f-\x9f]/g;

/** A TEXT value: backslash, semicolon and comma escaped, line breaks as `\n`, other control characters dropped. */
function textValue(value: string): string {
  return value.replace(LINE_BREAK, '\n').replace(/[\\;,]/g, '\\$&').replace(/\n/g, '\\n').replace(CONTROL, '');
}

/**
 * A parameter value (`CN=`), always quoted: RFC 6868 carets for what a quoted string cannot hold (`^` as `^^`, a
 * line break as `^n`, `"` as `^'`), other control characters dropped.
 */
function paramValue(value: string): string {
  const caret = value.replace(LINE_BREAK, '\n').replace(/[\^\n"]/g, (c) => (c === '^' ? '^^' : c === '\n' ? '^n' : "^'"));
  return `"${caret.replace(CONTROL, '')}"`;
}

/** Characters a `mailto:` address keeps as they are (RFC 6068 `qchar` without `,` and `;`); the rest is percent-encoded. */
const MAILTO_SAFE = /[A-Za-z0-9\-._~!$'()*+:@]/;
const MAILTO_PLAIN = /^[A-Za-z0-9\-._~!$'()*+:@]*$/;

/** A CAL-ADDRESS for an e-mail address as stored (not validated, as in the plugin): a `mailto:` URI (RFC 6068). */
function mailto(email: string): string {
  if (MAILTO_PLAIN.test(email)) return 'mailto:' + email;
  let out = 'mailto:';
  for (const ch of email) out += MAILTO_SAFE.test(ch) ? ch : [...Buffer.from(ch)].map((b) => '%' + b.toString(16).toUpperCase().padStart(2, '0')).join('');
  return out;
}

/** A URI value (§3.3.13) is not escaped: the URL's own encoding keeps spaces, quotes and controls out of it. */
const uriValue = (url: string) => new URL(url).href;

const octets = (codePoint: number) => (codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4);

/**
 * A content line folded at 75 octets (§3.1): continuation lines start with a space, and a break never falls inside
 * a character's UTF-8 sequence.
 */
function fold(line: string): string {
  if (Buffer.byteLength(line) <= 75) return line;
  // cut by slices of the line, not built character by character: a description of megabytes is folded in milliseconds
  const parts: string[] = [];
  let start = 0;
  let size = 0;
  let room = 75;
  for (let i = 0; i < line.length;) {
    const codePoint = line.codePointAt(i)!;
    const n = octets(codePoint);
    if (size + n > room) {
      parts.push(line.slice(start, i));
      [start, size, room] = [i, 0, 74]; // the leading space takes the 75th octet
    }
    size += n;
    i += codePoint > 0xffff ? 2 : 1;
  }
  parts.push(line.slice(start));
  return parts.join('\r\n ');
}

// ---- Times

const vtimezones = new Map<string, string | null>();

/** An IANA id as a TZID needs no quoting: letters, digits, `_`, `+`, `-` and `/` only. */
const ZONE_ID = /^[A-Za-z][A-Za-z0-9_+\-/]*$/;

/**
 * The VTIMEZONE of an IANA zone (read from its file once), or null for zones without one (`UTC+2`, `UTC`). Only ids
 * the timezone library defines have one, so a TZID is always one of its names.
 */
function vtimezone(timezone: string): string | null {
  let component = vtimezones.get(timezone);
  if (component !== undefined) return component;
  component = timezone !== 'UTC' && ZONE_ID.test(timezone) && IANAZone.isValidZone(timezone) ? getVtimezoneComponent(timezone)?.trim() ?? null : null;
  // ids of zones that have one are a fixed set; the others are remembered only while there are few
  if (component !== null || vtimezones.size < 1000) vtimezones.set(timezone, component);
  return component;
}

/** `YYYY-MM-DD HH:MM:SS` as an iCalendar DATE-TIME (`YYYYMMDDTHHMMSS`), by position: it runs for every event of a feed. */
const dateTime = (wire: string) => `${wire.slice(0, 4)}${wire.slice(5, 7)}${wire.slice(8, 10)}T${wire.slice(11, 13)}${wire.slice(14, 16)}${wire.slice(17, 19)}`;
/** `YYYY-MM-DD…` as an iCalendar DATE, `days` later. */
const date = (wire: string, days = 0) => new Date(Date.parse(wire.slice(0, 10) + 'T00:00:00Z') + days * 86_400_000).toISOString().slice(0, 10).replace(/-/g, '');

/**
 * DTSTART and DTEND: dates for all-day events (DTEND the day after the last), else the local times (which are in the
 * event's timezone) with its TZID, or UTC times for zones without a definition.
 */
function times(event: EventWire, zone: string | null): string[] {
  if (event.all_day) {
    const last = event.end_date.slice(0, 10) < event.start_date.slice(0, 10) ? event.start_date : event.end_date;
    return [
      `DTSTART;VALUE=DATE:${date(event.start_date)}`, `DTEND;VALUE=DATE:${date(last, 1)}`,
      'X-MICROSOFT-CDO-ALLDAYEVENT:TRUE', 'X-MICROSOFT-MSNCALENDAR-ALLDAYEVENT:TRUE',
    ];
  }
  if (zone) return [`DTSTART;TZID=${zone}:${dateTime(event.start_date)}`, `DTEND;TZID=${zone}:${dateTime(event.end_date)}`];
  return [`DTSTART:${dateTime(event.utc_start_date)}Z`, `DTEND:${dateTime(event.utc_end_date)}Z`];
}

/** The venue as one line: name, street, city, region, postcode, country (the parts it has). */
export function venueLine(venue: VenueWire): string {
  const region = venue.stateprovince || venue.state || venue.province;
  return [venue.venue, venue.address, venue.city, region, venue.zip, venue.country].map((part) => plainText(part ?? '')).filter(Boolean).join(', ');
}

/**
 * The most characters of an event's DESCRIPTION in a feed of several events, where it is cut with `…` (the event's
 * own calendar has it whole): a feed holds up to 500 events, and descriptions of a megabyte each would make it too
 * large to build.
 */
export const FEED_DESCRIPTION_MAX = 65_536;

/** `text` cut to `max` characters with `…`, never between the two halves of a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text[max - 1]!) ? max - 1 : max;
  return text.slice(0, end) + '…';
}

/** The content lines of one VEVENT (unfolded). */
function vevent({ event, revision, descriptionText }: CalendarEntry, host: string, zone: string | null, descriptionMax: number): string[] {
  const venue = Array.isArray(event.venue) ? null : (event.venue as VenueWire | undefined) ?? null;
  const organizer = (event.organizer ?? []).find((o) => o.email);
  const description = cut(descriptionText ?? plainTextStart(event.description, descriptionMax + 1), descriptionMax);
  const location = venue ? venueLine(venue) : '';
  const categories = (event.categories ?? []).map((c) => textValue(plainText(c.name)));
  const lines = ['BEGIN:VEVENT', `UID:${textValue(`event-${event.id}@${host}`)}`, `SEQUENCE:${revision}`, `DTSTAMP:${dateTime(event.modified_utc)}Z`, ...times(event, zone)];
  lines.push(`SUMMARY:${textValue(plainText(event.title))}`);
  if (location) lines.push(`LOCATION:${textValue(location)}`);
  if (description) lines.push(`DESCRIPTION:${textValue(description)}`);
  if (organizer?.email) lines.push(`ORGANIZER;CN=${paramValue(plainText(organizer.organizer ?? '') || organizer.email)}:${mailto(organizer.email)}`);
  if (categories.length > 0) lines.push(`CATEGORIES:${categories.join(',')}`);
  lines.push(`URL;VALUE=URI:${uriValue(event.url)}`, 'END:VEVENT');
  return lines;
}

/** Some of a calendar's events as text: their VEVENTs, folded, and the timezones they use (with a VTIMEZONE). */
export interface RenderedEvents {
  text: string;
  zones: Set<string>;
}

/** The VEVENTs of `entries`, a DESCRIPTION cut at `descriptionMax` characters (see FEED_DESCRIPTION_MAX). */
export function renderEvents(entries: CalendarEntry[], host: string, descriptionMax = Infinity): RenderedEvents {
  const zones = new Set<string>();
  const lines: string[] = [];
  for (const entry of entries) {
    const zone = entry.event.all_day ? null : vtimezone(entry.event.timezone) && entry.event.timezone;
    if (zone) zones.add(zone);
    lines.push(...vevent(entry, host, zone, descriptionMax));
  }
  return { text: lines.map(fold).join('\r\n'), zones };
}

/**
 * An iCalendar (RFC 5545) object called `name` around events rendered by `renderEvents` (a feed renders them a few at
 * a time, between turns of the event loop), with the VTIMEZONE of every timezone they use. The output depends only on
 * the events (DTSTAMP is the last change, not the time of the request), so its ETag is stable. Written here rather
 * than through a generator library, so that every value is escaped for its type and a feed of a thousand events costs
 * milliseconds.
 */
export function iCalendarOf(name: string, parts: RenderedEvents[]): string {
  const title = textValue(name);
  const head = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//Almanac//Almanac//EN', `NAME:${title}`, `X-WR-CALNAME:${title}`];
  for (const zone of new Set(parts.flatMap((part) => [...part.zones]))) head.push(...vtimezone(zone)!.split(/\r?\n/).filter(Boolean));
  return [...head.map(fold), ...parts.map((part) => part.text).filter(Boolean), 'END:VCALENDAR'].join('\r\n');
}

/** An iCalendar object of `entries`, each description whole (one event's calendar). */
export function iCalendar(entries: CalendarEntry[], options: { name: string; host: string }): string {
  return iCalendarOf(options.name, [renderEvents(entries, options.host)]);
}
