import { DateTime, type Zone } from 'luxon';
import type { EventRecord } from '../db/records.js';
import { fromWire, inWireRange, parseDateInput, parseZone, toWire } from './dates.js';
import { zoneAbbreviation } from './zoneNames.js';

/** The times of an event record. */
export type EventTimes = Pick<EventRecord, 'startLocal' | 'endLocal' | 'startUtc' | 'endUtc' | 'timezone' | 'allDay'>;

export interface EventTimesInput {
  start_date?: string;
  end_date?: string;
  timezone?: string;
  all_day?: boolean;
}

/** A parameter whose value could not be used (the validator accepted its form, but not in this context). */
export class TimeInputError extends Error {
  constructor(readonly param: string) {
    super(`invalid ${param}`);
  }
}

function zoneOf(name: string, param: string): Zone {
  const zone = parseZone(name);
  if (!zone) throw new TimeInputError(param);
  return zone;
}

function parseIn(text: string, zone: Zone, now: DateTime, param: string): DateTime {
  const parsed = parseDateInput(text, zone, now);
  if (!parsed) throw new TimeInputError(param);
  return parsed.value.setZone(zone);
}

const readLocal = (local: string, zone: Zone) => fromWire(local, zone);

/**
 * Start, end, timezone and all-day of an event after a create (`current` null) or a partial update (DESIGN §5 #2):
 * a lone `start_date` keeps the duration; a lone `end_date` moves only the end; a lone `timezone` keeps the local
 * times and recomputes UTC; `all_day` snaps to 00:00:00–23:59:59; an end before the start becomes the start.
 * Dates are read in the event's timezone (else the site's); Unix timestamps and offsets name instants, which are
 * converted into it; relative phrases are resolved against `now` there.
 */
export function eventTimes(input: EventTimesInput, current: EventTimes | null, siteTimezone: string, now: DateTime = DateTime.utc()): EventTimes {
  const timezone = input.timezone !== undefined && input.timezone !== '' ? input.timezone : input.timezone === '' ? siteTimezone : (current?.timezone ?? siteTimezone);
  const zone = zoneOf(timezone, 'timezone');
  const nowThere = now.setZone(zone);

  let start: DateTime;
  let end: DateTime;
  if (!current) {
    start = parseIn(input.start_date!, zone, nowThere, 'start_date');
    end = parseIn(input.end_date!, zone, nowThere, 'end_date');
  } else {
    const oldStart = readLocal(current.startLocal, zone);
    const oldEnd = readLocal(current.endLocal, zone);
    start = input.start_date !== undefined ? parseIn(input.start_date, zone, nowThere, 'start_date') : oldStart;
    if (input.end_date !== undefined) end = parseIn(input.end_date, zone, nowThere, 'end_date');
    else if (input.start_date !== undefined) end = start.plus(oldEnd.diff(oldStart));
    else end = oldEnd;
  }
  const allDay = input.all_day ?? current?.allDay ?? false;
  if (allDay) {
    start = start.startOf('day');
    end = end.set({ hour: 23, minute: 59, second: 59, millisecond: 0 });
  }
  if (end < start) end = start;
  if (!inWireRange(end)) throw new TimeInputError(input.end_date !== undefined ? 'end_date' : 'start_date');
  return { startLocal: toWire(start), endLocal: toWire(end), startUtc: toWire(start.toUTC()), endUtc: toWire(end.toUTC()), timezone, allDay };
}

/**
 * Publication date of a record: `date_utc` (read as UTC) wins over `date` (read in `zone`); none → `fallback`
 * (now on create, the stored date on update). Relative phrases are resolved against `now`. Returns site-local and
 * UTC wire times.
 */
export function publicationDate(
  input: { date?: string; date_utc?: string },
  zoneName: string,
  siteTimezone: string,
  fallback: DateTime,
  now: DateTime = DateTime.utc(),
): { local: string; utc: string } {
  const site = zoneOf(siteTimezone, 'date');
  let instant = fallback;
  if (input.date_utc !== undefined) instant = parseIn(input.date_utc, zoneOf('UTC', 'date_utc'), now, 'date_utc');
  else if (input.date !== undefined) instant = parseIn(input.date, zoneOf(zoneName, 'date'), now, 'date');
  return { local: toWire(instant.setZone(site)), utc: toWire(instant.toUTC()) };
}

/** `YYYY-MM-DD HH:MM:SS` read as UTC. */
export function fromUtcWire(utc: string): DateTime {
  return fromWire(utc, 'utc');
}

const ABBREVIATION_LOCALES = ['en-US', 'en-GB', 'en-AU', 'en-IN', 'en-NZ'];

/**
 * The zone's abbreviation at a local time as PHP shows it (`EST`, `CEST`, `JST`, `+04`), from the time zone database
 * (zoneNames.ts); for `UTC±N` zones the offset string itself, as the plugin. Without the system's database, the
 * runtime's English names where it has one, else the offset (`+0530`).
 */
export function timezoneAbbreviation(timezone: string, local: string): string {
  const zone = parseZone(timezone);
  if (!zone || zone.type !== 'iana') return timezone;
  const at = readLocal(local, zone);
  const offsetSeconds = Math.round(at.offset * 60);
  const named = zoneAbbreviation(zone.name, Math.floor(at.toSeconds()), offsetSeconds) ?? zoneAbbreviation(canonicalZone(zone.name), Math.floor(at.toSeconds()), offsetSeconds);
  if (named !== null) return named;
  for (const locale of ABBREVIATION_LOCALES) {
    const name = zone.offsetName(at.toMillis(), { format: 'short', locale });
    if (name && !/^(GMT|UTC)[+-]/.test(name)) return name;
  }
  const minutes = Math.round(Math.abs(offsetSeconds) / 60);
  return `${offsetSeconds < 0 ? '-' : '+'}${String(Math.floor(minutes / 60)).padStart(2, '0')}${minutes % 60 ? String(minutes % 60).padStart(2, '0') : ''}`;
}

/** A zone's name as the runtime spells it (`asia/tokyo` is `Asia/Tokyo`): the database's files are named so. */
function canonicalZone(name: string): string {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return name;
  }
}

/** ISO 8601 with the event's offset (`2026-12-03T15:00:00+00:00`), for JSON-LD. */
export function isoWithOffset(local: string, timezone: string): string {
  const zone = parseZone(timezone) ?? zoneOf('UTC', 'timezone');
  // a fixed offset needs no calendar: the wall time as it is, then the offset (what luxon would print)
  if (zone.isUniversal && /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(local)) return `${local.replace(' ', 'T')}${offsetText(zone.offset(0))}`;
  return readLocal(local, zone).toISO({ suppressMilliseconds: true, includeOffset: true })!.replace(/Z$/, '+00:00');
}

/** `+HH:MM` of an offset in minutes. */
function offsetText(minutes: number): string {
  const abs = Math.abs(minutes);
  return `${minutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** The start of the UTC day of a stored UTC time, in ISO 8601 (`2026-12-03T00:00:00+00:00`), for JSON-LD. */
export function utcDayStart(utc: string): string {
  return `${utc.slice(0, 10)}T00:00:00+00:00`;
}
