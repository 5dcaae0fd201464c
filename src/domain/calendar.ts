import { getVtimezoneComponent } from '@touch4it/ical-timezones';
import ical, { type ICalEventData } from 'ical-generator';
import { DateTime, IANAZone } from 'luxon';
import type { components } from '../../generated/api.js';
import { plainText } from './html.js';

type EventWire = components['schemas']['Event'];
type VenueWire = components['schemas']['Venue'];

/** What an iCalendar object is built from: the event's JSON representation and facts the JSON does not carry. */
export interface CalendarEntry {
  event: EventWire;
  /** How many times the event was changed after its creation (`SEQUENCE`). */
  revision: number;
}

/** An IANA timezone that has a VTIMEZONE definition; other zones (`UTC+2`, `UTC`) are written as UTC times. */
function definedZone(timezone: string): string | null {
  return timezone !== 'UTC' && IANAZone.isValidZone(timezone) && getVtimezoneComponent(timezone) ? timezone : null;
}

const utc = (wire: string) => DateTime.fromSQL(wire, { zone: 'utc' });

/** The venue as one line: name, street, city, region, postcode, country (the parts it has). */
export function venueLine(venue: VenueWire): string {
  const region = venue.stateprovince || venue.state || venue.province;
  return [venue.venue, venue.address, venue.city, region, venue.zip, venue.country].map((part) => plainText(part ?? '')).filter(Boolean).join(', ');
}

function eventData({ event, revision }: CalendarEntry, host: string): ICalEventData {
  const venue = Array.isArray(event.venue) ? null : (event.venue as VenueWire | undefined) ?? null;
  const organizer = (event.organizer ?? []).find((o) => o.email);
  const zone = definedZone(event.timezone);
  const data: Omit<ICalEventData, 'start'> = {
    id: `event-${event.id}@${host}`,
    sequence: revision,
    stamp: utc(event.modified_utc),
    summary: plainText(event.title),
    description: plainText(event.description) || null,
    location: venue ? venueLine(venue) || null : null,
    url: event.url,
    categories: (event.categories ?? []).map((c) => ({ name: plainText(c.name) })),
    organizer: organizer?.email ? { name: plainText(organizer.organizer ?? '') || organizer.email, email: organizer.email } : null,
  };
  if (event.all_day) {
    // DATE values: the first day, and the day after the last one (DTEND is exclusive)
    const first = DateTime.fromISO(event.start_date.slice(0, 10), { zone: 'utc' });
    const last = DateTime.fromISO(event.end_date.slice(0, 10), { zone: 'utc' });
    return { ...data, allDay: true, start: first, end: (last < first ? first : last).plus({ days: 1 }) };
  }
  if (zone) return { ...data, timezone: zone, start: utc(event.utc_start_date).setZone(zone), end: utc(event.utc_end_date).setZone(zone) };
  return { ...data, start: utc(event.utc_start_date), end: utc(event.utc_end_date) };
}

/**
 * An iCalendar (RFC 5545) object with one VEVENT per entry and the VTIMEZONE of every timezone they use. The output
 * depends only on the entries (DTSTAMP is the last change, not the time of the request), so its ETag is stable.
 */
export function iCalendar(entries: CalendarEntry[], options: { name: string; host: string }): string {
  const calendar = ical({ prodId: { company: 'Almanac', product: 'Almanac', language: 'EN' }, name: options.name });
  calendar.timezone({ name: null, generator: getVtimezoneComponent });
  for (const entry of entries) calendar.createEvent(eventData(entry, options.host));
  return calendar.toString();
}
