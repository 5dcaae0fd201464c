import { DateTime, FixedOffsetZone, type Zone } from 'luxon';
import { parseDateInput, parseZone, toWire } from './dates.js';

/** The six date parameters of the event list, with their comparison (reference behaviour.md §2.1). */
export const DATE_BOUNDS = {
  start_date: { column: 'start', op: '>=' },
  end_date: { column: 'end', op: '<=' },
  starts_before: { column: 'start', op: '<' },
  starts_after: { column: 'start', op: '>' },
  ends_before: { column: 'end', op: '<' },
  ends_after: { column: 'end', op: '>' },
} as const;
export type DateParam = keyof typeof DATE_BOUNDS;
const RELATIVE: DateParam[] = ['starts_before', 'starts_after', 'ends_before', 'ends_after'];

export interface Bound {
  param: DateParam;
  column: 'start' | 'end';
  op: '>=' | '<=' | '<' | '>';
  /** Site-local wall-clock time, compared with each event's local start or end (event timezone mode). */
  value: string;
}

/**
 * The effective date bounds of an event list (behaviour.md §2, DESIGN §5 #1, #15):
 * - defaults, when none of the four relative parameters is sent: from yesterday 00:00 to 24 months ahead 23:59:59,
 *   in the site timezone, each default standing in only for a missing `start_date` / `end_date`;
 * - whole days unless `strict`: a value becomes its UTC calendar day, 00:00:00 for `start_date` and 23:59:59 for
 *   the others; in strict mode values keep their time, a date-time without offset being read as UTC;
 * - `include` ignores every date parameter and the default window.
 * Relative phrases are resolved against `now` in UTC, as the plugin's PHP reads them. Returns bounds in the order of
 * the parameters.
 */
export function listBounds(
  query: Partial<Record<DateParam, string>>,
  options: { strict: boolean; include: boolean; siteTimezone: string; now?: DateTime },
): Bound[] {
  if (options.include) return [];
  const site = parseZone(options.siteTimezone) ?? FixedOffsetZone.utcInstance;
  const instant = options.now ?? DateTime.utc();
  const values: Partial<Record<DateParam, string>> = {};
  if (!RELATIVE.some((p) => query[p] !== undefined)) {
    const window = defaultWindow(options.siteTimezone, site, instant);
    values.start_date = window.start;
    values.end_date = window.end;
  }
  let now: DateTime | undefined;
  for (const param of Object.keys(DATE_BOUNDS) as DateParam[]) {
    const text = query[param];
    if (text === undefined) continue;
    now ??= instant.setZone(site);
    const parsed = parseDateInput(text, FixedOffsetZone.utcInstance, now);
    if (!parsed) continue; // the validator refused it already
    if (options.strict) {
      values[param] = toWire(parsed.value.setZone(site));
    } else {
      const day = parsed.value.toUTC().startOf('day');
      values[param] = param === 'start_date' ? toWire(day) : toWire(day.set({ hour: 23, minute: 59, second: 59 }));
    }
  }
  return (Object.keys(DATE_BOUNDS) as DateParam[])
    .filter((p) => values[p] !== undefined)
    .map((param) => ({ param, ...DATE_BOUNDS[param], value: values[param]! }));
}

/** How far apart the two readings of a date are that tell a fixed moment from one relative to the clock. */
const RELATIVE_PROBE_DAYS = 1000;

/**
 * Until when (epoch ms) the bounds `listBounds` reads at `now` stay the same as the clock moves on, so that a list
 * answer computed with them holds that long as far as its dates go: the end of the site-local day when the default
 * window stands in for a bound (it moves at midnight); Infinity when every date sent names a fixed moment (or
 * `include` sets the dates aside); null when a date is relative to the clock ("today", "+1 week", "monday", "now"):
 * such a list holds for its second only. A date names a fixed moment when it reads the same a thousand days later:
 * a relative one (an offset from now, a day or weekday counted from today) moves with the clock, and not back.
 */
export function boundsSteadyUntil(query: Partial<Record<DateParam, string>>, options: { include: boolean; siteTimezone: string; now: DateTime }): number | null {
  if (options.include) return Infinity;
  const site = parseZone(options.siteTimezone) ?? FixedOffsetZone.utcInstance;
  const now = options.now.setZone(site);
  const later = now.plus({ days: RELATIVE_PROBE_DAYS });
  for (const param of Object.keys(DATE_BOUNDS) as DateParam[]) {
    const text = query[param];
    if (text === undefined) continue;
    const [read, readLater] = [parseDateInput(text, FixedOffsetZone.utcInstance, now), parseDateInput(text, FixedOffsetZone.utcInstance, later)];
    if (!read || !readLater || read.value.toMillis() !== readLater.value.toMillis()) return null;
  }
  const defaulted = !RELATIVE.some((p) => query[p] !== undefined) && (query.start_date === undefined || query.end_date === undefined);
  return defaulted ? defaultWindow(options.siteTimezone, site, options.now).until : Infinity;
}

interface DefaultWindow {
  /** The site-local day it was computed for, as instants: [from, until). */
  from: number;
  until: number;
  start: string;
  end: string;
}

/** The default window of the current site-local day, by site timezone (a process serves one; tests use a few). */
const defaultWindows = new Map<string, DefaultWindow>();

/**
 * From yesterday 00:00 to 24 months ahead 23:59:59 in the site's zone: both depend on the site-local date alone, so
 * each zone's is computed once a day. Computed at every uncached list it cost 35 µs in UTC and 100–170 µs in an IANA
 * zone (luxon asks Intl for the offset of each moment it builds): 6 % of the CPU of a default list in Europe/Paris.
 */
function defaultWindow(siteTimezone: string, site: Zone, instant: DateTime): DefaultWindow {
  const at = instant.toMillis();
  const known = defaultWindows.get(siteTimezone);
  if (known !== undefined && at >= known.from && at < known.until) return known;
  const now = instant.setZone(site);
  const today = now.startOf('day');
  const window = {
    from: today.toMillis(),
    until: today.plus({ days: 1 }).toMillis(),
    start: toWire(now.minus({ days: 1 }).startOf('day')),
    end: toWire(now.plus({ months: 24 }).set({ hour: 23, minute: 59, second: 59, millisecond: 0 })),
  };
  if (defaultWindows.size >= 64) defaultWindows.clear();
  defaultWindows.set(siteTimezone, window);
  return window;
}
