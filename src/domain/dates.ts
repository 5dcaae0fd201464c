import { DateTime, FixedOffsetZone, IANAZone, type Zone } from 'luxon';

/** Wire format of every stored and returned date: `YYYY-MM-DD HH:MM:SS`. */
export const WIRE_FORMAT = 'yyyy-MM-dd HH:mm:ss';

/**
 * A timezone as the plugin accepts it: an IANA id (`Europe/Berlin`, `UTC`) or a fixed offset written
 * `UTC+2`, `UTC-5:30`, `UTC+5.5`. Returns null for anything else.
 */
export function parseZone(spec: string): Zone | null {
  const offset = /^UTC([+-])(\d{1,2})(?:(?::(\d{2}))|(?:\.(\d+)))?$/i.exec(spec);
  if (offset) {
    const hours = Number(offset[2]);
    const minutes = offset[3] !== undefined ? Number(offset[3]) : offset[4] !== undefined ? Math.round(Number('0.' + offset[4]) * 60) : 0;
    if (hours > 14 || minutes >= 60) return null;
    return FixedOffsetZone.instance((offset[1] === '-' ? -1 : 1) * (hours * 60 + minutes));
  }
  if (/^UTC$/i.test(spec)) return FixedOffsetZone.utcInstance;
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(spec)) return null;
  const zone = IANAZone.create(spec);
  return zone.isValid ? zone : null;
}

const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const WEEKDAY_ABBR = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
const UNITS: Record<string, 'seconds' | 'minutes' | 'hours' | 'days' | 'weeks' | 'months' | 'years'> = {
  sec: 'seconds', second: 'seconds', min: 'minutes', minute: 'minutes', hour: 'hours', day: 'days',
  week: 'weeks', fortnight: 'weeks', month: 'months', year: 'years',
};

function weekdayIndex(word: string): number {
  const i = WEEKDAYS.indexOf(word);
  return i >= 0 ? i + 1 : WEEKDAY_ABBR.indexOf(word) + 1; // luxon: Monday = 1; 0 → not a weekday
}

/** A parsed date input: the instant, and whether the text pinned it to an instant (offset or timestamp). */
export interface ParsedDate {
  value: DateTime;
  /** True for Unix timestamps and strings with an explicit offset: they name an instant, not a wall-clock time. */
  absolute: boolean;
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

/**
 * Parses the closed set of date inputs Almanac accepts (DESIGN §2), in `zone` (wall-clock values are read there,
 * relative phrases are resolved against `now` there):
 * - a Unix timestamp (digits only);
 * - `YYYY-MM-DD`, `YYYY-MM-DD HH:MM`, `YYYY-MM-DD HH:MM:SS`, ISO 8601 with or without offset;
 * - `now`, `today`, `tomorrow`, `yesterday`, `midnight`, `noon`; `next|last|this <weekday|day|week|month|year>`;
 *   `<weekday>`; chained `[+-]N unit(s)`; each optionally followed by a time (`9am`, `4:30pm`, `16:30`).
 * Returns null when the text is none of these.
 */
export function parseDateInput(text: string, zone: Zone, now: DateTime = DateTime.utc()): ParsedDate | null {
  const parsed = parseAnyDate(text, zone, now);
  return parsed && inWireRange(parsed.value) ? parsed : null;
}

/** Whether a date and its UTC instant both fit the wire format's years 0001–9999. */
export function inWireRange(value: DateTime): boolean {
  const utc = value.toUTC();
  return value.isValid && value.year >= 1 && value.year <= 9999 && utc.year >= 1 && utc.year <= 9999;
}

function parseAnyDate(text: string, zone: Zone, now: DateTime): ParsedDate | null {
  const input = text.trim();
  if (input === '' || input.length > 100) return null;

  if (/^\d+$/.test(input)) {
    const seconds = Number(input);
    if (!Number.isSafeInteger(seconds) || seconds > 253402300799) return null; // up to 9999-12-31
    return { value: DateTime.fromSeconds(seconds, { zone }), absolute: true };
  }

  const iso = ISO.exec(input);
  if (iso) {
    const [, y, mo, d, h = '00', mi = '00', s = '00', offset] = iso;
    const parts = { year: +y!, month: +mo!, day: +d!, hour: +h, minute: +mi, second: +s };
    let value: DateTime;
    if (offset) {
      const normal = offset.toUpperCase() === 'Z' ? 'UTC' : 'UTC' + offset.replace(/^([+-]\d{2})(\d{2})$/, '$1:$2');
      const fixed = parseZone(normal);
      if (!fixed) return null;
      value = DateTime.fromObject(parts, { zone: fixed });
    } else {
      value = firstOccurrence(DateTime.fromObject(parts, { zone }));
    }
    if (!value.isValid || value.year !== parts.year || value.month !== parts.month || value.day !== parts.day) return null;
    return { value: offset ? value.setZone(zone) : value, absolute: Boolean(offset) };
  }

  return parseRelative(input.toLowerCase(), zone, now);
}

/**
 * A wall-clock time in the hour repeated when DST ends is read as its first occurrence (summer time), as PHP does.
 * Luxon would pick an occurrence from its offset guess, which depends on the current date or on the date changed.
 */
function firstOccurrence<T extends DateTime>(value: T): T {
  return value.getPossibleOffsets().reduce((a, b) => (b.toMillis() < a.toMillis() ? b : a));
}

function parseRelative(input: string, zone: Zone, now: DateTime): ParsedDate | null {
  let rest = input;
  let value = now.setZone(zone);
  let matched = false;
  let time: { hour: number; minute: number; second: number } | null = null;
  const take = (re: RegExp): RegExpExecArray | null => {
    const m = re.exec(rest);
    if (m) rest = rest.slice(m[0].length).trimStart();
    return m;
  };

  for (let guard = 0; rest.length > 0 && guard < 20; guard++) {
    let m: RegExpExecArray | null;
    if ((m = take(/^(now|today|tomorrow|yesterday|midnight|noon)\b/))) {
      const word = m[1];
      if (word === 'today' || word === 'midnight') value = value.startOf('day');
      else if (word === 'tomorrow') value = value.plus({ days: 1 }).startOf('day');
      else if (word === 'yesterday') value = value.minus({ days: 1 }).startOf('day');
      else if (word === 'noon') value = value.startOf('day').set({ hour: 12 });
    } else if ((m = take(/^(next|last|this)\s+([a-z]+)\b/))) {
      const [, which, what] = m as unknown as [string, string, string];
      const step = which === 'next' ? 1 : which === 'last' ? -1 : 0;
      const weekday = weekdayIndex(what);
      if (weekday) {
        value = value.startOf('day');
        let diff = weekday - value.weekday;
        if (step > 0 && diff <= 0) diff += 7;
        if (step < 0 && diff >= 0) diff -= 7;
        if (step === 0 && diff < 0) diff += 7;
        value = value.plus({ days: diff });
      } else if (UNITS[what]) {
        value = value.plus({ [UNITS[what]!]: step * (what === 'fortnight' ? 2 : 1) });
      } else {
        return null;
      }
    } else if ((m = take(/^([+-]?\d{1,6})\s*(sec|second|min|minute|hour|day|week|fortnight|month|year)s?\b/))) {
      const unit = UNITS[m[2]!]!;
      value = value.plus({ [unit]: Number(m[1]) * (m[2] === 'fortnight' ? 2 : 1) });
    } else if ((m = take(/^(\d{1,2})(?::(\d{2}))?(?::(\d{2}))?\s*(am|pm)\b/))) {
      let hour = Number(m[1]);
      if (hour < 1 || hour > 12) return null;
      if (m[4] === 'pm' && hour !== 12) hour += 12;
      if (m[4] === 'am' && hour === 12) hour = 0;
      time = { hour, minute: Number(m[2] ?? 0), second: Number(m[3] ?? 0) };
    } else if ((m = take(/^(\d{1,2}):(\d{2})(?::(\d{2}))?\b/))) {
      time = { hour: Number(m[1]), minute: Number(m[2]), second: Number(m[3] ?? 0) };
      if (time.hour > 23) return null;
    } else if ((m = take(/^([a-z]+)\b/)) && weekdayIndex(m[1]!)) {
      value = value.startOf('day');
      let diff = weekdayIndex(m[1]!) - value.weekday;
      if (diff < 0) diff += 7;
      value = value.plus({ days: diff });
    } else {
      return null;
    }
    matched = true;
  }
  if (!matched || rest.length > 0) return null;
  if (time) {
    if (time.minute > 59 || time.second > 59) return null;
    value = firstOccurrence(value.set({ ...time, millisecond: 0 }));
  }
  return value.isValid ? { value: value.set({ millisecond: 0 }), absolute: false } : null;
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** `YYYY-MM-DD HH:MM:SS` of a date in its own zone (what `toFormat(WIRE_FORMAT)` gives, without parsing the format each time). */
export function toWire(value: DateTime): string {
  if (!value.isValid || value.year < 0) return value.toFormat(WIRE_FORMAT);
  return `${pad(value.year, 4)}-${pad(value.month, 2)}-${pad(value.day, 2)} ${pad(value.hour, 2)}:${pad(value.minute, 2)}:${pad(value.second, 2)}`;
}

const WIRE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

/**
 * A stored `YYYY-MM-DD HH:MM:SS` read as wall-clock time in `zone`, as `DateTime.fromFormat(text, WIRE_FORMAT)` reads
 * it (which hands the same numbers to `fromObject`), without building a parser per call.
 */
export function fromWire(text: string, zone: Zone | string): DateTime {
  const m = WIRE.exec(text);
  if (!m) return DateTime.fromFormat(text, WIRE_FORMAT, { zone });
  return DateTime.fromObject({ year: +m[1]!, month: +m[2]!, day: +m[3]!, hour: +m[4]!, minute: +m[5]!, second: +m[6]! }, { zone });
}

