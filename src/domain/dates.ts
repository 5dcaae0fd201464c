import { DateTime, FixedOffsetZone, IANAZone, type Zone } from 'luxon';
import { withoutTrailing } from './text.js';

/** Wire format of every stored and returned date: `YYYY-MM-DD HH:MM:SS`. */
export const WIRE_FORMAT = 'yyyy-MM-dd HH:mm:ss';
/** WordPress's zero date: what `date_utc` shows of a draft never given a publication date. */
export const UNDATED = '0000-00-00 00:00:00';

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

/** A parsed date input: the instant, and whether the text pinned it to an instant (a zone, an offset, a timestamp). */
export interface ParsedDate {
  value: DateTime;
  /** True for Unix timestamps and strings that name a zone or offset: they name an instant, not a wall-clock time. */
  absolute: boolean;
}

/** Longest date input read: PHP has no limit, Almanac keeps the work per value bounded. */
const MAX_INPUT = 100;

/**
 * Reads a date input as the plugin does: a Unix timestamp (digits only), or anything PHP's `strtotime` accepts
 * (PHP's "Supported Date and Time Formats": time, date, compound and relative formats, `@timestamp`), with PHP's
 * semantics: `2032-02-30` rolls over to March 1, `24:00` is the next midnight, two-digit years 00–69 are 20xx and
 * 70–99 19xx, months added overflow (`+1 month` from January 31 is March 3 or 2), relative parts apply after
 * absolute ones. Wall-clock values are read in `zone` and relative phrases resolved against `now` there, unless the
 * text names its own zone or offset (which then wins). Two choices at DST changes are Almanac's: a wall-clock time
 * in the hour repeated when DST ends is its first occurrence, and `+N hours` (minutes, seconds) is elapsed time.
 * Returns null when PHP would refuse the text, or when the date falls outside years 0001–9999.
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
  const input = trimmed(text);
  if (input === '' || input.length > MAX_INPUT) return null;
  if (/^\d+$/.test(input)) {
    // the plugin takes a numeric value for a Unix timestamp before it asks strtotime
    const seconds = Number(input);
    if (!Number.isSafeInteger(seconds) || seconds > 253402300799) return null; // up to 9999-12-31
    return { value: DateTime.fromSeconds(seconds, { zone }), absolute: true };
  }
  const reading = read(input);
  if (!reading) return null;
  const value = resolve(reading, zone, now);
  return value ? { value, absolute: reading.zone !== null } : null;
}

/** What PHP trims (C's isspace), and only that: other spaces are part of the text. */
const ASCII_SPACE = ' \t\n\v\f\r';

/**
 * `text` without the ASCII white space around it, by two loops: `/[…]+$/` retried a run of spaces inside the text at
 * each of its positions (a date parameter of 24,000 spaces took 1.2 s).
 */
function trimmed(text: string): string {
  let start = 0;
  while (start < text.length && ASCII_SPACE.includes(text[start]!)) start++;
  return withoutTrailing(text.slice(start), ASCII_SPACE);
}

// --- The grammar: the symbols of PHP's "Supported Date and Time Formats", as regex sources -----------------------

/** Words PHP reads in any case (`'t'` in its grammar), as alternatives: a word before any of its prefixes. */
const anyCase = (...words: string[]) => `(?:${words.map((w) => w.replace(/[a-z]/g, (c) => `[${c}${c.toUpperCase()}]`)).join('|')})`;

const space = '(?:[ \\t]+|\\u00a0+|\\u202f+)';
const hour24 = '(?:2[0-4]|[01]?[0-9])';
const hour24lz = '(?:[01][0-9]|2[0-4])';
const hour12 = '(?:1[0-2]|0?[1-9])';
const minute = '[0-5]?[0-9]';
const minutelz = '[0-5][0-9]';
const second = '(?:60|[0-5]?[0-9])';
const secondlz = '(?:60|[0-5][0-9])';
const meridian = '[AaPp]\\.?[Mm]\\.?[\\0\\t ]';
const tz = '(?:[A-Z][a-z]+(?:[_/-][A-Za-z]+)+|\\(?[A-Za-z]{1,6}\\)?)';
const tzcorrection = `(?:GMT)?[+-](?:${hour24lz}:${minutelz}:${secondlz}|${hour24lz}${minutelz}${secondlz}|${hour24}(?::?${minute})?)`;
const month = '(?:1[0-2]|0?[0-9])';
const day = '(?:3[01]|[0-2]?[0-9])(?:st|nd|rd|th)?';
const year = '[0-9]{1,4}';
const year2 = '[0-9]{2}';
const year4 = '[0-9]{4}';
const monthlz = '(?:0[0-9]|1[0-2])';
const daylz = '(?:0[0-9]|[12][0-9]|3[01])';
const dayofyear = '(?:36[0-6]|3[0-5][0-9]|[12][0-9][0-9]|0[1-9][0-9]|00[1-9])';
const weekofyear = '(?:5[0-3]|[1-4][0-9]|0[1-9])';
const dayname = anyCase(
  'sundays', 'mondays', 'tuesdays', 'wednesdays', 'thursdays', 'fridays', 'saturdays',
  'sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday',
  'sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat',
);
const daytext = `(?:${dayname}|${anyCase('weekdays', 'weekday')})`;
const monthword = anyCase(
  'january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december',
  'jan', 'feb', 'mar', 'apr', 'jun', 'jul', 'aug', 'sept', 'sep', 'oct', 'nov', 'dec',
);
const monthtext = `(?:${monthword}|XII|XI|X|IX|IV|VIII|VII|VI|V|III|II|I)`;
const monthabbr = anyCase('jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sept', 'sep', 'oct', 'nov', 'dec');
const timeshort12 = `${hour12}[:.]${minutelz}${space}?${meridian}`;
const timelong12 = `${hour12}[:.]${minute}[:.]${secondlz}${space}?${meridian}`;
const timeshort24 = `[tT]?${hour24}[:.]${minute}`;
const timelong24 = `[tT]?${hour24}[:.]${minute}[:.]${second}`;
const iso8601normtz = `[tT]?${hour24}[:.]${minute}[:.]${secondlz}${space}?(?:${tzcorrection}|${tz})`;
const datenoyear = `${monthtext}[ .\\t-]*${day}(?:[,.stndrh\\t ]+|\\0)`;
const ordinal = anyCase('first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'eight', 'ninth', 'tenth', 'eleventh', 'twelfth');
const reltext = anyCase('next', 'last', 'previous', 'this');
const unit = `(?:${anyCase('millisecond', 'microsecond', 'fortnight', 'forthnight', 'minute', 'second', 'msec', 'usec', 'month', 'hour', 'year', 'day', 'sec', 'min')}[sS]?|µsec[sS]?|${anyCase('weeks')}|${daytext}|${anyCase('ms')}|µ[sS])`;

// --- The tables: words and their values ---------------------------------------------------------------------------

const MONTHS: Record<string, number> = {
  jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, sept: 9, oct: 10, nov: 11, dec: 12,
  january: 1, february: 2, march: 3, april: 4, june: 6, july: 7, august: 8, september: 9, october: 10, november: 11, december: 12,
  i: 1, ii: 2, iii: 3, iv: 4, v: 5, vi: 6, vii: 7, viii: 8, ix: 9, x: 10, xi: 11, xii: 12,
};

type UnitKind = 'us' | 's' | 'i' | 'h' | 'd' | 'm' | 'y' | 'weekday' | 'weekdays';
const UNITS = new Map<string, { kind: UnitKind; times: number }>();
for (const [words, kind, times] of [
  ['ms msec msecs millisecond milliseconds', 'us', 1000], ['µs usec usecs µsec µsecs microsecond microseconds', 'us', 1],
  ['sec secs second seconds', 's', 1], ['min mins minute minutes', 'i', 1], ['hour hours', 'h', 1], ['day days', 'd', 1],
  ['week weeks', 'd', 7], ['fortnight fortnights forthnight forthnights', 'd', 14], ['month months', 'm', 1], ['year years', 'y', 1],
  ['sunday sundays sun', 'weekday', 0], ['monday mondays mon', 'weekday', 1], ['tuesday tuesdays tue', 'weekday', 2],
  ['wednesday wednesdays wed', 'weekday', 3], ['thursday thursdays thu', 'weekday', 4], ['friday fridays fri', 'weekday', 5],
  ['saturday saturdays sat', 'weekday', 6], ['weekday weekdays', 'weekdays', 1],
] as const) {
  for (const word of words.split(' ')) UNITS.set(word, { kind, times });
}

/** Ordinal and relative words: the count, and whether the current day counts for a weekday (PHP's "behavior"). */
const RELATIVE_WORDS: Record<string, { amount: number; behavior: number }> = {
  first: { amount: 1, behavior: 0 }, next: { amount: 1, behavior: 0 }, second: { amount: 2, behavior: 0 },
  third: { amount: 3, behavior: 0 }, fourth: { amount: 4, behavior: 0 }, fifth: { amount: 5, behavior: 0 },
  sixth: { amount: 6, behavior: 0 }, seventh: { amount: 7, behavior: 0 }, eight: { amount: 8, behavior: 0 },
  eighth: { amount: 8, behavior: 0 }, ninth: { amount: 9, behavior: 0 }, tenth: { amount: 10, behavior: 0 },
  eleventh: { amount: 11, behavior: 0 }, twelfth: { amount: 12, behavior: 0 }, last: { amount: -1, behavior: 0 },
  previous: { amount: -1, behavior: 0 }, this: { amount: 0, behavior: 1 },
};

/** The zone abbreviations PHP knows, with the UTC offset (in seconds) it reads for each. */
const ABBREVIATIONS = new Map<string, number>();
{
  const table =
    'acdt 37800 acst 34200 addt -7200 adt -10800 aedt 39600 aest 36000 ahdt -32400 ahst -36000 akdt -28800 akst -32400 ' +
    'amt -13840 apt -10800 ast -14400 awdt 32400 awst 28800 awt -10800 bdst 7200 bdt -36000 bmt -14309 bst 3600 ' +
    'cast 34200 cat 7200 cddt -14400 cdt -18000 cemt 10800 cest 7200 cet 3600 cmt -15408 cpt -18000 cst -21600 ' +
    'cwt -18000 chst 36000 dmt -1521 eat 10800 eddt -10800 edt -14400 eest 10800 eet 7200 emt -26248 ept -14400 ' +
    'est -18000 ewt -14400 ffmt -14660 fmt -4056 gdt 39600 gmt 0 gst 36000 hdt -34200 hkst 32400 hkt 28800 ' +
    'hmt -19776 hpt -34200 hst -36000 hwt -34200 iddt 14400 idt 10800 imt 25025 ist 7200 jdt 36000 jmt 8440 ' +
    'jst 32400 kdt 36000 kmt 5736 kst 30600 lst 9394 mddt -18000 mdst 16279 mdt -21600 mest 7200 met 3600 mmt 9017 ' +
    'mpt -21600 msd 14400 msk 10800 mst -25200 mwt -21600 nddt -5400 ndt -9052 npt -9000 nst -12600 nwt -9000 ' +
    'nzdt 46800 nzmt 41400 nzst 43200 pddt -21600 pdt -25200 pkst 21600 pkt 18000 plmt 25590 pmt -13236 ' +
    'ppmt -17340 ppt -25200 pst -28800 pwt -25200 qmt -18840 rmt 5794 sast 7200 sdmt -16800 sjmt -20173 ' +
    'smt -13884 sst -39600 tbmt 10751 tmt 12344 uct 0 utc 0 wast 7200 wat 3600 wemt 7200 west 3600 wet 0 ' +
    'wib 25200 wita 28800 wit 32400 wmt 5040 yddt -25200 ydt -28800 ypt -28800 yst -32400 ywt -28800 ' +
    'a 3600 b 7200 c 10800 d 14400 e 18000 f 21600 g 25200 h 28800 i 32400 k 36000 l 39600 m 43200 n -3600 ' +
    'o -7200 p -10800 q -14400 r -18000 s -21600 t -25200 u -28800 v -32400 w -36000 x -39600 y -43200 z 0';
  const items = table.split(' ');
  for (let i = 0; i < items.length; i += 2) ABBREVIATIONS.set(items[i]!, Number(items[i + 1]));
}

/**
 * The zone ids of one word in PHP's time zone database. The runtime's database also knows legacy ids such as `NET`
 * or `PLT`, which PHP refuses; ids with an area (`Europe/Berlin`) are the same in both.
 */
const SINGLE_WORD_ZONES = new Set(
  ('cet cst6cdt cuba eet egypt eire est est5edt gb gb-eire gmt gmt+0 gmt-0 gmt0 greenwich hongkong hst iceland iran ' +
    'israel jamaica japan kwajalein libya met mst mst7mdt navajo nz nz-chat poland portugal prc pst8pdt roc rok ' +
    'singapore turkey uct universal utc w-su wet zulu').split(' '),
);

/** Zone ids named in date texts, resolved once each (a bounded memo: the text is the caller's). */
const NAMED_ZONES = new Map<string, Zone | null>();
function namedZone(name: string): Zone | null {
  let zone = NAMED_ZONES.get(name);
  if (zone === undefined) {
    // not IANAZone.create, whose cache would keep every name ever sent
    const candidate = name.includes('/') || SINGLE_WORD_ZONES.has(name.toLowerCase()) ? new IANAZone(name) : null;
    zone = candidate?.isValid ? candidate : null;
    if (NAMED_ZONES.size >= 512) NAMED_ZONES.clear();
    NAMED_ZONES.set(name, zone);
  }
  return zone;
}

// --- What a text says: the fields PHP's parser collects ---------------------------------------------------------

/** Kinds of `special` relative parts, and of `firstLast`. */
const WEEKDAYS = 1;
const DAY_OF_WEEK_IN_MONTH = 2;
const LAST_DAY_OF_WEEK_IN_MONTH = 3;
const FIRST_DAY = 1;
const LAST_DAY = 2;

class Reading {
  y: number | null = null;
  m: number | null = null;
  d: number | null = null;
  h: number | null = null;
  i: number | null = null;
  s: number | null = null;
  /** 0, 1 or 2: a bare `HHMM` after a time is a year. */
  timeCount = 0;
  hasDate = false;
  zoneCount = 0;
  /** Seconds east of UTC, or a zone, when the text names one. */
  zone: number | Zone | null = null;
  hasRelative = false;
  /** Microseconds of the time (they matter only with relative ones: `+500 ms`). */
  us = 0;
  rel = { y: 0, m: 0, d: 0, h: 0, i: 0, s: 0, us: 0 };
  weekday = 0;
  /** 0: the day itself does not count; 1: it does; 2: a weekday of a week (`monday next week`). */
  weekdayBehavior = 0;
  hasWeekday = false;
  special = 0;
  specialAmount = 0;
  /** FIRST_DAY or LAST_DAY of the month, or 0. */
  firstLast = 0;

  /** A time: refused when the text already has one. */
  setTime(): boolean {
    if (this.timeCount > 0) return false;
    this.timeCount = 1;
    this.h = this.i = this.s = this.us = 0;
    return true;
  }
  clearTime(): void {
    this.timeCount = 0;
    this.h = this.i = this.s = this.us = 0;
  }
  /** A date: refused when the text already has one. */
  setDate(): boolean {
    if (this.hasDate) return false;
    return (this.hasDate = true);
  }
  /** A zone: the second one is ignored, a third refused. */
  addZone(): 'read' | 'ignore' | 'refuse' {
    this.zoneCount++;
    return this.zoneCount === 1 ? 'read' : this.zoneCount === 2 ? 'ignore' : 'refuse';
  }
  /** A unit with its count (`+2 weeks`, `next monday`); `keepTime` is false for texts that name no number. */
  addRelative(amount: number, behavior: number, word: string, keepTime: boolean): void {
    const unit = UNITS.get(word.toLowerCase());
    if (!unit) return;
    if (unit.kind === 'weekday') {
      this.hasRelative = this.hasWeekday = true;
      if (!keepTime) this.clearTime();
      this.rel.d += (amount > 0 ? amount - 1 : amount) * 7;
      this.weekday = unit.times;
      this.weekdayBehavior = behavior;
    } else if (unit.kind === 'weekdays') {
      this.hasRelative = true;
      if (!keepTime) this.clearTime();
      this.special = WEEKDAYS;
      this.specialAmount = amount;
    } else {
      this.rel[unit.kind] += amount * unit.times;
    }
  }
}

/** Reads the text of one token left to right, as each format's action needs it. */
class Token {
  pos = 0;
  /** Digits the last `number` read. */
  digits = 0;
  constructor(readonly text: string) {}

  get char(): string {
    return this.text[this.pos] ?? '';
  }
  is(c: string): boolean {
    return this.text[this.pos] === c;
  }
  /** The next number of at most `max` digits, past anything else; null when none is left. */
  number(max: number): number | null {
    while (this.pos < this.text.length && !isDigit(this.char)) this.pos++;
    const start = this.pos;
    while (this.pos < this.text.length && isDigit(this.char) && this.pos - start < max) this.pos++;
    this.digits = this.pos - start;
    return this.digits > 0 ? Number(this.text.slice(start, this.pos)) : null;
  }
  /** A year of `max` digits, two-digit ones placed as PHP does (00–69 → 20xx, 70–99 → 19xx). */
  year(max: number): number | null {
    const value = this.number(max);
    if (value === null || this.digits >= 4 || value >= 100) return value;
    return value + (value < 70 ? 2000 : 1900);
  }
  /** A number after any run of signs (each `-` flips it); NaN when there is none or it overflows 64 bits. */
  signed(max: number): number {
    while (this.pos < this.text.length && !isDigit(this.char) && this.char !== '+' && this.char !== '-') this.pos++;
    let sign = 1;
    while (this.char === '+' || this.char === '-') {
      if (this.char === '-') sign = -sign;
      this.pos++;
    }
    const value = this.number(max);
    return value === null || value > 9223372036854775807 ? NaN : sign * value;
  }
  /** A fraction of a second (`.532453`) as microseconds. */
  fraction(): number {
    while (this.pos < this.text.length && !'.:'.includes(this.char) && !isDigit(this.char)) this.pos++;
    const start = this.pos;
    this.word(/[.:0-9]/);
    const digits = parseFloat(this.text.slice(start + 1, this.pos));
    return Number.isNaN(digits) ? 0 : Math.trunc(digits * 10 ** (7 - (this.pos - start)));
  }
  skipSpaces(): void {
    while (this.char === ' ' || this.char === '\t' || this.char === '\u00a0' || this.char === '\u202f') this.pos++;
  }
  skipDaySuffix(): void {
    if (/^(?:st|nd|rd|th)/i.test(this.text.slice(this.pos, this.pos + 2))) this.pos += 2;
  }
  word(chars: RegExp): string {
    const start = this.pos;
    while (this.pos < this.text.length && chars.test(this.char)) this.pos++;
    return this.text.slice(start, this.pos);
  }
  month(): number {
    while (' \t-./'.includes(this.char) && this.pos < this.text.length) this.pos++;
    return MONTHS[this.word(/[A-Za-z]/).toLowerCase()] ?? 0;
  }
  /** `am`/`pm` (with dots) after an hour: what to add to it. */
  meridian(hour: number): number {
    while (this.pos < this.text.length && !'AaPp'.includes(this.char)) this.pos++;
    const pm = this.char === 'p' || this.char === 'P';
    this.pos++;
    for (const c of ['.', 'm', '.']) if (this.char.toLowerCase() === c) this.pos++;
    return pm ? (hour === 12 ? 0 : 12) : hour === 12 ? -12 : 0;
  }
  relativeWord(): { amount: number; behavior: number } {
    while (' \t-/'.includes(this.char) && this.pos < this.text.length) this.pos++;
    return RELATIVE_WORDS[this.word(/[A-Za-z]/).toLowerCase()] ?? { amount: 0, behavior: 0 };
  }
  unitWord(): string {
    return this.word(/[^ ,\t;:/.\-()\0]/);
  }
  /** A zone or offset (`CEST`, `Europe/Berlin`, `+02:00`, `GMT-7`, `(EST)`): false when it names none. */
  zone(r: Reading): boolean {
    let parens = 0;
    while (this.char === ' ' || this.char === '\t' || this.char === '(') {
      if (this.char === '(') parens++;
      this.pos++;
    }
    if (/^GMT[+-]/.test(this.text.slice(this.pos, this.pos + 4))) this.pos += 3;
    if (this.char === '+' || this.char === '-') {
      const sign = this.char === '-' ? -1 : 1;
      this.pos++;
      const offset = offsetSeconds(this.word(/[0-9:]/));
      if (offset === null) return false;
      r.zone = sign * offset;
    } else {
      const word = this.word(/[A-Za-z0-9/_+-]/);
      const abbreviation = word.length < 6 ? ABBREVIATIONS.get(word.toLowerCase()) : undefined;
      if (abbreviation !== undefined) {
        r.zone = abbreviation;
      } else {
        const named = namedZone(word);
        if (!named) return false;
        r.zone = named;
      }
    }
    while (parens > 0 && this.char === ')') {
      this.pos++;
      parens--;
    }
    return true;
  }
}

const isDigit = (c: string) => c >= '0' && c <= '9';

/** An offset's digits as PHP reads them: `H`, `HH`, `H:MM`, `HH:M`, `HHMM`, `HH:MM`, `HHMMSS`, `HH:MM:SS`. */
function offsetSeconds(text: string): number | null {
  const n = (from: number, to?: number) => parseInt(text.slice(from, to), 10) || 0;
  switch (text.length) {
    case 1:
    case 2:
      return n(0) * 3600;
    case 3:
    case 4:
      if (text[1] === ':') return n(0, 1) * 3600 + n(2) * 60;
      if (text[2] === ':') return n(0, 2) * 3600 + n(3) * 60;
      return Math.floor(n(0) / 100) * 3600 + (n(0) % 100) * 60;
    case 5:
      return text[2] === ':' ? n(0, 2) * 3600 + n(3) * 60 : null;
    case 6:
      return n(0, 2) * 3600 + n(2, 4) * 60 + n(4);
    case 8:
      return text[2] === ':' && text[5] === ':' ? n(0, 2) * 3600 + n(3, 5) * 60 + n(6) : null;
    default:
      return null;
  }
}

// --- The formats, in PHP's order: the longest match wins, and the earlier format on a tie -------------------------

interface Format {
  /** The characters a token of this format may start with (a regex character class): the others skip it. */
  starts: string;
  /** The documented formats this action reads, each an alternative spelling of the token. */
  patterns: string[];
  /** Applies the token; false refuses the whole text. */
  read(t: Token, r: Reading): boolean;
}

type Field = 'y' | 'm' | 'd' | 'h' | 'i' | 's';
/** How a field comes out of a token: read by a function, or a fixed value. */
type FieldReader = ((t: Token) => number | null) | number;

const num = (max: number) => (t: Token) => t.number(max);
const yearOf = (max: number) => (t: Token) => t.year(max);
const signedNum = (max: number) => (t: Token) => t.signed(max);
const monthWord = (t: Token) => t.month();
const dayAndSuffix = (t: Token) => {
  const day = t.number(2);
  t.skipDaySuffix();
  return day;
};

/** Reads the fields of a token in the order given. */
function readFields(t: Token, r: Reading, fields: Partial<Record<Field, FieldReader>>): true {
  for (const [key, reader] of Object.entries(fields) as [Field, FieldReader][]) r[key] = typeof reader === 'number' ? reader : reader(t);
  return true;
}

/** A format naming a date, read field by field: refused when the text already has one. */
const aDate = (fields: Partial<Record<Field, FieldReader>>) => (t: Token, r: Reading) => r.setDate() && readFields(t, r, fields);

/** A format naming a time, read field by field: refused when the text already has one. */
const aTime = (fields: Partial<Record<Field, FieldReader>>) => (t: Token, r: Reading) => r.setTime() && readFields(t, r, fields);

/** A time of day: hour, then minute, second and fraction when separated by one of `separators`. */
function readClock(t: Token, r: Reading, separators: string, fractionSeparators = ''): void {
  const separated = (chars: string) => t.char !== '' && chars.includes(t.char);
  r.h = t.number(2);
  if (!separated(separators)) return;
  r.i = t.number(2);
  if (!separated(separators)) return;
  r.s = t.number(2);
  if (separated(fractionSeparators)) r.us = t.fraction();
}

/** A relative word and its unit (`next monday`, `third day`, `this week`). */
function readRelativeWords(t: Token, r: Reading): void {
  const { amount, behavior } = t.relativeWord();
  t.skipSpaces();
  r.hasRelative = true;
  r.addRelative(amount, behavior, t.unitWord(), false);
}

/** A zone token: the second one of a text is ignored, a third refused. */
function readZone(t: Token, r: Reading): boolean {
  const zone = r.addZone();
  if (zone !== 'read') return zone === 'ignore';
  t.skipSpaces();
  return t.zone(r);
}

const FORMATS: Format[] = [
  {
    starts: 'yY',
    patterns: [anyCase('yesterday')],
    read(_, r) {
      r.hasRelative = true;
      r.clearTime();
      r.rel.d = -1;
      return true;
    },
  },
  { starts: 'nN', patterns: [anyCase('now')], read: () => true },
  {
    starts: 'nN',
    patterns: [anyCase('noon')],
    read(_, r) {
      r.clearTime();
      r.setTime();
      r.h = 12;
      return true;
    },
  },
  {
    starts: 'mMtT',
    patterns: [anyCase('midnight', 'today')],
    read(_, r) {
      r.clearTime();
      return true;
    },
  },
  {
    starts: 'tT',
    patterns: [anyCase('tomorrow')],
    read(_, r) {
      r.hasRelative = true;
      r.clearTime();
      r.rel.d = 1;
      return true;
    },
  },
  {
    // Unix timestamp, and with microseconds: "@1215282385", "@1607974647.503686" (UTC)
    starts: '@',
    patterns: ['@-?[0-9]+', '@-?[0-9]+\\.[0-9]{0,6}'],
    read(t, r) {
      r.hasRelative = true;
      r.hasDate = false;
      [r.y, r.m, r.d] = [0, 0, 0];
      r.clearTime();
      const zone = r.addZone();
      if (zone !== 'read') return zone === 'ignore';
      const seconds = t.signed(24);
      if (Number.isNaN(seconds)) return false;
      [r.y, r.m, r.d] = [1970, 1, 1];
      r.rel.s += seconds;
      if (t.is('.')) {
        const negative = t.text[1] === '-';
        const start = t.pos;
        const fraction = t.signed(6);
        if (Number.isNaN(fraction)) return false;
        r.rel.us = (negative ? -1 : 1) * fraction * 10 ** (7 - (t.pos - start));
      }
      r.zone = 0;
      return true;
    },
  },
  {
    // "first day of next month", "last day of february"
    starts: 'fFlL',
    patterns: [anyCase('first day of', 'last day of')],
    read(t, r) {
      r.hasRelative = true;
      r.firstLast = t.is('l') || t.is('L') ? LAST_DAY : FIRST_DAY;
      return true;
    },
  },
  {
    // "back of 7pm": 19:15; "front of 7pm": 18:45
    starts: 'bBfF',
    patterns: [`${anyCase('back of ', 'front of ')}${hour24}(?:${space}?${meridian})?`],
    read(t, r) {
      const back = t.is('b'); // PHP checks the lower case only
      r.clearTime();
      r.setTime();
      r.h = t.number(2)! - (back ? 0 : 1);
      r.i = back ? 15 : 45;
      if (t.pos < t.text.length) {
        t.skipSpaces();
        r.h += t.meridian(r.h);
      }
      return true;
    },
  },
  {
    // "first sat of July 2008", "last wed of next month": that weekday of the month
    starts: 'A-Za-z',
    patterns: [`(?:${ordinal}|${reltext})${space}${dayname}${space}${anyCase('of')}`],
    read(t, r) {
      const { amount, behavior } = t.relativeWord();
      t.skipSpaces();
      r.hasRelative = true;
      r.special = amount > 0 ? DAY_OF_WEEK_IN_MONTH : LAST_DAY_OF_WEEK_IN_MONTH;
      r.addRelative(amount, amount > 0 ? 1 : behavior, t.unitWord(), false);
      return true;
    },
  },
  {
    // 12-hour times: "4 am", "4:08 pm", "4:08:37 p.m."
    starts: '0-9',
    patterns: [`${hour12}${space}?${meridian}`, timeshort12, timelong12],
    read(t, r) {
      if (!r.setTime()) return false;
      readClock(t, r, ':.');
      t.skipSpaces();
      r.h! += t.meridian(r.h!);
      return true;
    },
  },
  {
    // MS SQL: "4:08:39:12313am"
    starts: '0-9',
    patterns: [`${hour12}:${minutelz}:${secondlz}[:.][0-9]+${meridian}`],
    read(t, r) {
      if (!r.setTime()) return false;
      readClock(t, r, ':.', ':.');
      r.h! += t.meridian(r.h!);
      return true;
    },
  },
  {
    // 24-hour times: "t9", "04:08", "19.19", "T23:43", "04.08.37", "19:19:19.532453"
    starts: '0-9tT',
    patterns: [`[tT]${hour24}`, timeshort24, timelong24, `${timelong24}\\.[0-9]+`],
    read(t, r) {
      if (!r.setTime()) return false;
      readClock(t, r, ':.', '.');
      return true;
    },
  },
  {
    // "0408", "t1919": a time; after a time, a year
    starts: '0-9tT',
    patterns: [`[tT]?${hour24lz}${minutelz}`],
    read(t, r) {
      if (r.timeCount === 0) readFields(t, r, { h: num(2), i: num(2), s: 0 });
      else if (r.timeCount === 1) r.y = t.number(4);
      else return false;
      r.timeCount++;
      return true;
    },
  },
  // "040837", "T191919"
  { starts: '0-9tT', patterns: [`[tT]?${hour24lz}${minutelz}${secondlz}`], read: aTime({ h: num(2), i: num(2), s: num(2) }) },
  {
    // American: "5/12", "12/22/78", "1/17/2006"
    starts: '0-9',
    patterns: [`${month}/${day}`, `${month}/${day}/${year}`],
    read(t, r) {
      if (!r.setDate()) return false;
      readFields(t, r, { m: num(2), d: num(2) });
      if (t.is('/')) r.y = t.year(4);
      return true;
    },
  },
  // "2008-06-30", "+1978-04-17", "2008/06/30", "2008/6/30"
  {
    starts: '0-9+-',
    patterns: [`[+-]?${year4}-${monthlz}-${daylz}`, `${year4}/${monthlz}/${daylz}/?`, `${year4}/${month}/${day}`],
    read: aDate({ y: signedNum(4), m: num(2), d: num(2) }),
  },
  // "08-06-30"
  { starts: '0-9', patterns: [`${year2}-${monthlz}-${daylz}`], read: aDate({ y: yearOf(4), m: num(2), d: num(2) }) },
  // "-81120-02-26", "+20192-04-17"
  { starts: '+-', patterns: [`[+-][0-9]{5,19}-${monthlz}-${daylz}`], read: aDate({ y: signedNum(19), m: num(2), d: num(2) }) },
  // "2008-6", "2008-06": the first of the month
  { starts: '0-9', patterns: [`${year4}-${month}`], read: aDate({ y: yearOf(4), m: num(2), d: 1 }) },
  // "2008-6-30", "78-12-22", "8-6-21"
  { starts: '0-9', patterns: [`${year}-${month}-${day}`], read: aDate({ y: yearOf(4), m: num(2), d: num(2) }) },
  // "30-June 2008", "22DEC78", "14 III 1879"
  { starts: '0-9', patterns: [`${day}[ \\t.-]*${monthtext}[ \\t.-]*${year}`], read: aDate({ d: dayAndSuffix, m: monthWord, y: yearOf(4) }) },
  // "30-6-2008", "22.12.1978"
  { starts: '0-9', patterns: [`${day}[.\\t-]${month}[.-]${year4}`], read: aDate({ d: num(2), m: num(2), y: num(4) }) },
  // "30.6.08"
  { starts: '0-9', patterns: [`${day}[.\\t]${month}\\.${year2}`], read: aDate({ d: num(2), m: num(2), y: yearOf(2) }) },
  // "June 2008", "DEC1978": the first of the month
  { starts: 'A-Za-z', patterns: [`${monthtext}[ .\\t-]*${year4}`], read: aDate({ m: monthWord, y: yearOf(4), d: 1 }) },
  // "2008 June", "1978-XII": the first of the month
  { starts: '0-9', patterns: [`${year4}[ .\\t-]*${monthtext}`], read: aDate({ y: yearOf(4), m: monthWord, d: 1 }) },
  // "July 1st, 2008", "April 17, 1790", "May.9,78"; without a year: "July 1st,", "Apr 17"
  {
    starts: 'A-Za-z',
    patterns: [`${monthtext}[ .\\t-]*${day}[,.stndrh\\t ]+${year}`, datenoyear],
    read: aDate({ m: monthWord, d: num(2), y: yearOf(4) }),
  },
  // "1 July", "17 Apr", "9.May"
  { starts: '0-9', patterns: [`${day}[ .\\t-]*${monthtext}`], read: aDate({ d: dayAndSuffix, m: monthWord }) },
  // "15810726"
  { starts: '0-9', patterns: [`${year4}${monthlz}${daylz}`], read: aDate({ y: num(4), m: num(2), d: num(2) }) },
  {
    // XMLRPC "20080701T22:38:07", "20080701t223807"; SOAP "2008-07-01T22:35:17.02+08:00"; WDDX "2008-7-1T9:3:37";
    // EXIF "2008:08:07 18:11:31"
    starts: '0-9',
    patterns: [
      `${year4}${monthlz}${daylz}T${hour24}:${minutelz}:${secondlz}`,
      `${year4}${monthlz}${daylz}[tT]${hour24}${minutelz}${secondlz}`,
      `${year4}-${monthlz}-${daylz}T${hour24lz}:${minutelz}:${secondlz}\\.[0-9]+(?:${tzcorrection})?`,
      `${year4}-${month}-${day}T${hour24}:${minute}:${second}`,
      `${year4}:${monthlz}:${daylz} ${hour24lz}:${minutelz}:${secondlz}`,
    ],
    read(t, r) {
      if (!r.setTime() || !r.setDate()) return false;
      readFields(t, r, { y: num(4), m: num(2), d: num(2), h: num(2), i: num(2), s: num(2) });
      if (!t.is('.')) return true;
      r.us = t.fraction();
      return t.pos >= t.text.length || t.zone(r);
    },
  },
  // PostgreSQL year and day of the year: "2008.197", "2008197"
  { starts: '0-9', patterns: [`${year4}[.-]?${dayofyear}`], read: aDate({ y: yearOf(4), d: num(3), m: 1 }) },
  {
    // ISO year, week and day: "2008W273", "2008-W28-3"; year and week: "2008W27" (its Monday)
    starts: '0-9',
    patterns: [`${year4}-?W${weekofyear}-?[0-7]`, `${year4}-?W${weekofyear}`],
    read(t, r) {
      if (!r.setDate()) return false;
      r.hasRelative = true;
      const [y, week] = [t.number(4)!, t.number(2)!];
      const weekday = t.number(1) ?? 1;
      const jan1 = dayOfWeek(y, 1, 1);
      readFields(t, r, { y, m: 1, d: 1 });
      r.rel.d = -(jan1 > 4 ? jan1 - 7 : jan1) + (week - 1) * 7 + weekday;
      return true;
    },
  },
  // "May-09-78", "Apr-17-1790"
  { starts: 'A-Za-z', patterns: [`${monthabbr}-${daylz}-${year}`], read: aDate({ m: monthWord, d: num(2), y: yearOf(4) }) },
  // "78-Dec-22", "1814-MAY-17"
  { starts: '0-9', patterns: [`${year}-${monthabbr}-${daylz}`], read: aDate({ y: yearOf(4), m: monthWord, d: num(2) }) },
  {
    // Common Log Format: "10/Oct/2000:13:55:36 -0700"
    starts: '0-9',
    patterns: [`${day}/${monthabbr}/${year4}:${hour24lz}:${minutelz}:${secondlz}${space}${tzcorrection}`],
    read(t, r) {
      if (!r.setTime() || !r.setDate()) return false;
      readFields(t, r, { d: num(2), m: monthWord, y: num(4), h: num(2), i: num(2), s: num(2) });
      t.skipSpaces();
      return t.zone(r);
    },
  },
  // a year alone, "1978" (PHP reads "2008" as 20:08 first)
  { starts: '0-9', patterns: [year4], read: (t, r) => readFields(t, r, { y: num(4) }) },
  {
    // "2 days ago": every relative part so far, backwards
    starts: 'aA',
    patterns: [anyCase('ago')],
    read(_, r) {
      for (const key of ['y', 'm', 'd', 'h', 'i', 's'] as const) r.rel[key] = -r.rel[key];
      r.weekday = -r.weekday || -7;
      if (r.special === WEEKDAYS) r.specialAmount = -r.specialAmount;
      return true;
    },
  },
  {
    // "Monday": the next such day, today included
    starts: 'A-Za-z',
    patterns: [daytext],
    read(t, r) {
      r.hasRelative = r.hasWeekday = true;
      r.clearTime();
      r.weekday = UNITS.get(t.text.toLowerCase())!.times;
      if (r.weekdayBehavior !== 2) r.weekdayBehavior = 1;
      return true;
    },
  },
  {
    // "next week", "last week", "this week": counted from the Monday of the week
    starts: 'A-Za-z',
    patterns: [`${reltext}${space}${anyCase('week')}`],
    read(t, r) {
      readRelativeWords(t, r);
      r.weekdayBehavior = 2;
      if (!r.hasWeekday) {
        r.hasWeekday = true;
        r.weekday = 1;
      }
      return true;
    },
  },
  {
    // "fifth day", "second month", "last day", "previous year", "next monday"
    starts: 'A-Za-z',
    patterns: [`(?:${ordinal}|${reltext})${space}${unit}`],
    read(t, r) {
      readRelativeWords(t, r);
      return true;
    },
  },
  // "March", "jun", "DEC": that month, today's day
  { starts: 'A-Za-z', patterns: [monthword], read: aDate({ m: monthWord }) },
  // "CEST", "Europe/Amsterdam", "+0430", "GMT-06:00"
  { starts: 'A-Za-z(+-', patterns: [tzcorrection, tz], read: readZone },
  {
    // a month and day, then a 12-hour time: "Jan 5 10:30pm"
    starts: 'A-Za-z',
    patterns: [`${datenoyear}${timeshort12}`, `${datenoyear}${timelong12}`],
    read(t, r) {
      if (!r.setDate()) return false;
      readFields(t, r, { m: monthWord, d: num(2) });
      if (!r.setTime()) return false;
      readFields(t, r, { h: num(2), i: num(2) });
      if (t.is(':') || t.is('.')) {
        r.s = t.number(2);
        if (t.is('.')) r.us = t.fraction();
      }
      r.h! += t.meridian(r.h!);
      return true;
    },
  },
  {
    // a month and day, then a 24-hour time: "Jan 5 10:30", "Jan 5 10:30:15 CEST"
    starts: 'A-Za-z',
    patterns: [`${datenoyear}${timeshort24}`, `${datenoyear}${timelong24}`, `${datenoyear}${iso8601normtz}`],
    read(t, r) {
      if (!r.setDate()) return false;
      readFields(t, r, { m: monthWord, d: num(2) });
      if (!r.setTime()) return false;
      readFields(t, r, { h: num(2), i: num(2) });
      if (t.is(':')) {
        r.s = t.number(2);
        if (t.is('.')) r.us = t.fraction();
      }
      return t.pos >= t.text.length || t.zone(r);
    },
  },
  {
    // "+5 weeks", "12 day", "-7 weekdays", "+1 week 2 days" (a token per number)
    starts: '0-9+ \\t-',
    patterns: [`[+-]*[ \\t]*[0-9]{1,13}${space}?(?:${unit}|${anyCase('week')})`],
    read(t, r) {
      r.hasRelative = true;
      const amount = t.signed(24);
      if (Number.isNaN(amount)) return false;
      t.skipSpaces();
      r.addRelative(amount, 1, t.unitWord(), true);
      return true;
    },
  },
  // separators
  { starts: '.,\\0\\n \\t', patterns: ['[.,]', space, '[\\0\\n]'], read: () => true },
];

/** Each format's patterns, compiled once: sticky, so each is tried exactly at the reading position. */
const PATTERNS = FORMATS.flatMap((format, index) => format.patterns.map((p) => ({ index, pattern: new RegExp(p, 'y') })));

/** For each ASCII character, the patterns of the formats that may start with it; other characters try them all. */
const CANDIDATES = Array.from({ length: 128 }, (_, code) => {
  const c = String.fromCharCode(code);
  return PATTERNS.filter(({ index }) => new RegExp(`^[${FORMATS[index]!.starts}]$`).test(c));
});

/** Readings of recent texts: a date is read once to validate it and again to use it. Bounded, as the text is the caller's. */
const READINGS = new Map<string, Reading | null>();

/** What the text says (shared: read-only), or null when PHP would refuse it. */
function read(input: string): Reading | null {
  let reading = READINGS.get(input);
  if (reading === undefined) {
    reading = scan(input);
    if (READINGS.size >= 1024) READINGS.clear();
    READINGS.set(input, reading);
  }
  return reading;
}

/**
 * The wire form `YYYY-MM-DD[ HH:MM[:SS]]` (also with `T`), which Almanac's own links carry and most clients send,
 * read directly: the scanner would read the same fields from it (a date, then a 24-hour time; with `T` and
 * seconds, WDDX), only slower.
 */
const WIRE_INPUT = new RegExp(`^(${year4})-(${monthlz})-(${daylz})(?:[ T](${hour24lz}):(${minutelz})(?::(${secondlz}))?)?$`);

function scan(input: string): Reading | null {
  const wire = WIRE_INPUT.exec(input);
  if (wire) {
    const reading = new Reading();
    [reading.y, reading.m, reading.d] = [+wire[1]!, +wire[2]!, +wire[3]!];
    reading.hasDate = true;
    if (wire[4] !== undefined) {
      reading.setTime();
      [reading.h, reading.i, reading.s] = [+wire[4], +wire[5]!, +(wire[6] ?? 0)];
    }
    return reading;
  }
  const text = input + '\0'; // PHP's formats may end on the string's terminator ("4pm", "Jan 5")
  const reading = new Reading();
  let pos = 0;
  while (pos < input.length) {
    let best = -1;
    let length = 0;
    for (const { index, pattern } of CANDIDATES[text.charCodeAt(pos)] ?? PATTERNS) {
      pattern.lastIndex = pos;
      if (!pattern.test(text)) continue;
      // the longest token wins; on a tie, the format listed first
      const matched = pattern.lastIndex - pos;
      if (matched > length || (matched === length && index < best)) [best, length] = [index, matched];
    }
    if (best < 0 || !FORMATS[best]!.read(new Token(text.slice(pos, pos + length)), reading)) return null;
    pos += length;
  }
  return reading;
}

// --- Resolving a reading into an instant, in PHP's order ----------------------------------------------------------

/** A wall-clock date and time whose fields may overflow (day 0, day 31 of February, hour 24), as PHP keeps them. */
interface Civil {
  y: number;
  m: number;
  d: number;
  h: number;
  i: number;
  s: number;
}

/**
 * The same date and time with every field in range: overflows carry into the next field, as in PHP. This is the
 * proleptic Gregorian calendar in UTC, where no DST applies; zones come later, through luxon.
 */
function normalized(c: Civil): Civil | null {
  if (c.m >= 1 && c.m <= 12 && c.d >= 1 && c.d <= 28 && c.h >= 0 && c.h < 24 && c.i >= 0 && c.i < 60 && c.s >= 0 && c.s < 60) return c;
  const t = new Date(0);
  t.setUTCFullYear(c.y, c.m - 1, c.d);
  t.setUTCHours(c.h, c.i, c.s);
  if (Number.isNaN(t.getTime())) return null;
  return { y: t.getUTCFullYear(), m: t.getUTCMonth() + 1, d: t.getUTCDate(), h: t.getUTCHours(), i: t.getUTCMinutes(), s: t.getUTCSeconds() };
}

/** 0 for Sunday to 6 for Saturday, as PHP counts. */
function dayOfWeek(y: number, m: number, d: number): number {
  const t = new Date(0);
  t.setUTCFullYear(y, m - 1, d);
  return t.getUTCDay();
}

/** Moves to the weekday a text names (`monday`, `next friday`, `sunday this week`). */
function toWeekday(c: Civil, r: Reading): void {
  const today = dayOfWeek(c.y, c.m, c.d);
  let weekday = r.weekday;
  if (r.weekdayBehavior === 2) {
    // weeks run Monday to Sunday
    if (today === 0 && weekday !== 0) weekday -= 7;
    if (weekday === 0 && today !== 0) weekday = 7;
    c.d += weekday - today;
    return;
  }
  let difference = weekday - today;
  if ((r.rel.d < 0 && difference < 0) || (r.rel.d >= 0 && difference <= -r.weekdayBehavior)) difference += 7;
  c.d += weekday >= 0 ? difference : -(7 - (Math.abs(weekday) - today));
}

/** The days to move by a number of weekdays (Monday to Friday) from a day of the week, as `+3 weekdays` does. */
function weekdaysAhead(today: number, count: number): number {
  const rest = count % 5;
  let days = Math.trunc(count / 5) * 7 + rest;
  if (count > 0) {
    if (rest === 0) days -= today === 0 ? 2 : today === 6 ? 1 : 0;
    else if (today === 6) days += 1;
    else if (today + rest > 5) days += 2;
  } else {
    if (rest === 0) days += today === 6 ? 2 : today === 0 ? 1 : 0;
    else if (today === 0) days -= 1;
    else if (today + rest < 1) days -= 2;
  }
  return days;
}

function applyFirstLast(c: Civil, firstLast: number): void {
  if (firstLast === FIRST_DAY) c.d = 1;
  else if (firstLast === LAST_DAY) [c.d, c.m] = [0, c.m + 1];
}

/** A wall-clock time read at a fixed offset (seconds east of UTC) or in a zone; shown in `shown`. */
function place(c: Civil, at: number | Zone, shown: Zone): DateTime {
  if (typeof at === 'number') {
    const t = new Date(0);
    t.setUTCFullYear(c.y, c.m - 1, c.d);
    t.setUTCHours(c.h, c.i, c.s);
    return DateTime.fromMillis(t.getTime() - at * 1000, { zone: shown });
  }
  return firstOccurrence(DateTime.fromObject({ year: c.y, month: c.m, day: c.d, hour: c.h, minute: c.i, second: c.s }, { zone: at }));
}

/** The day of the week of an instant where the text reads it. */
function dayOfWeekAt(value: DateTime, at: number | Zone): number {
  return (typeof at === 'number' ? value.toUTC().plus({ seconds: at }) : value.setZone(at)).weekday % 7;
}

/**
 * The instant a reading names, as PHP resolves it: the fields the text left out come from `now` in `zone` (a date
 * without a time is at 00:00); then a weekday of a month (`first monday of`) and the first or last day of the month
 * apply, then the weekday (`next friday`), then the relative days, months and years with overflow, then the first
 * or last day again; the wall-clock time is read in the text's zone or else `zone`; relative hours, minutes and
 * seconds are added as elapsed time; weekdays (`+3 weekdays`) count last.
 */
function resolve(r: Reading, zone: Zone, now: DateTime): DateTime | null {
  const here = r.y === null || r.m === null || r.d === null || r.h === null || r.i === null || r.s === null ? now.setZone(zone) : now;
  const dateOnly = r.hasDate && r.timeCount === 0;
  let c: Civil | null = {
    y: r.y ?? here.year,
    m: r.m ?? here.month,
    d: r.d ?? here.day,
    h: dateOnly ? 0 : (r.h ?? here.hour),
    i: dateOnly ? 0 : (r.i ?? here.minute),
    s: dateOnly ? 0 : (r.s ?? here.second),
  };
  let relativeMonths = r.rel.m;
  if (r.special === DAY_OF_WEEK_IN_MONTH || r.special === LAST_DAY_OF_WEEK_IN_MONTH) {
    c.d = 1;
    c.m += relativeMonths + (r.special === LAST_DAY_OF_WEEK_IN_MONTH ? 1 : 0);
    relativeMonths = 0;
  }
  applyFirstLast(c, r.firstLast);
  if (!(c = normalized(c))) return null;
  if (r.hasWeekday) {
    toWeekday(c, r);
    if (!(c = normalized(c))) return null;
  }
  if (r.hasRelative) [c.y, c.m, c.d] = [c.y + r.rel.y, c.m + relativeMonths, c.d + r.rel.d];
  applyFirstLast(c, r.firstLast);
  if (!(c = normalized(c))) return null;

  const at = r.zone ?? zone;
  let value = place(c, at, zone);
  const elapsed = Math.floor(((r.rel.h * 60 + r.rel.i) * 60 + r.rel.s) * 1000 + (r.rel.us + r.us) / 1000);
  if (elapsed !== 0) value = DateTime.fromMillis(value.toMillis() + elapsed, { zone: value.zone });
  if (r.special === WEEKDAYS) {
    const days = weekdaysAhead(dayOfWeekAt(value, at), r.specialAmount);
    // at a fixed offset a day is 24 hours; in a zone, the same wall-clock time
    value = typeof at === 'number' ? DateTime.fromMillis(value.toMillis() + days * 86_400_000, { zone: value.zone }) : value.plus({ days });
  }
  if (!value.isValid) return null;
  if (value.millisecond !== 0) value = value.startOf('second');
  return value.zone.equals(zone) ? value : value.setZone(zone);
}

/**
 * A wall-clock time in the hour repeated when DST ends is read as its first occurrence (summer time).
 * Luxon would pick an occurrence from its offset guess, which depends on the current date or on the date changed.
 */
function firstOccurrence<T extends DateTime>(value: T): T {
  return value.getPossibleOffsets().reduce((a, b) => (b.toMillis() < a.toMillis() ? b : a));
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
