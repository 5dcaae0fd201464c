import { DateTime, FixedOffsetZone, Settings } from 'luxon';
import { describe, expect, it } from 'vitest';
import { fromWire, parseDateInput, parseZone, toWire } from '../src/domain/dates.js';
import { isoWithOffset } from '../src/domain/eventTimes.js';

/** Wednesday 2027-01-13 15:30:00 UTC. */
const NOW = DateTime.fromISO('2027-01-13T15:30:00Z');
const UTC = FixedOffsetZone.utcInstance;
const BERLIN = parseZone('Europe/Berlin')!;
/** A July instant, to read zones at a time when DST is in force. */
const JULY = DateTime.fromISO('2027-07-01T00:00:00Z').toMillis();
const JANUARY = NOW.toMillis();

/** The parsed instant as a UTC ISO string (seconds precision), or null. */
function utc(text: string, zone = UTC, now = NOW): string | null {
  const parsed = parseDateInput(text, zone, now);
  return parsed ? parsed.value.toUTC().toISO({ suppressMilliseconds: true }) : null;
}

/** The parsed value as wall-clock text in `zone`, or null. */
function wall(text: string, zone = UTC, now = NOW): string | null {
  const parsed = parseDateInput(text, zone, now);
  return parsed ? toWire(parsed.value) : null;
}

describe('parseZone', () => {
  it.each([
    ['Europe/Berlin', 'Europe/Berlin'],
    ['America/Los_Angeles', 'America/Los_Angeles'],
    ['Etc/GMT+2', 'Etc/GMT+2'],
  ])('reads the IANA id %s', (spec, name) => {
    const zone = parseZone(spec);
    expect(zone?.name).toBe(name);
    expect(zone?.isUniversal).toBe(false);
  });

  it('reads Europe/Berlin with its DST rules', () => {
    expect(BERLIN.offset(JANUARY)).toBe(60);
    expect(BERLIN.offset(JULY)).toBe(120);
  });

  it.each([
    ['UTC', 0],
    ['utc', 0],
    ['UTC+2', 120],
    ['UTC+02', 120],
    ['UTC-5', -300],
    ['UTC-5:30', -330],
    ['UTC+5:45', 345],
    ['UTC+5.5', 330],
    ['UTC-9.5', -570],
    ['UTC+5.75', 345],
    ['UTC+14', 840],
    ['UTC+0', 0],
  ])('reads %s as a fixed offset of %i minutes', (spec, minutes) => {
    const zone = parseZone(spec);
    expect(zone).not.toBeNull();
    expect(zone!.isUniversal).toBe(true);
    expect(zone!.offset(JANUARY)).toBe(minutes);
    expect(zone!.offset(JULY)).toBe(minutes);
  });

  it.each(['', 'junk zone', 'Mars/Olympus_Mons', 'Europe/Nowhere', 'UTC+', 'UTC+15', 'UTC+2:60', 'UTC+2:3', 'UTC 2', '+02:00', '../etc/passwd', 'UTC+2x'])(
    'rejects %j',
    (spec) => {
      expect(parseZone(spec)).toBeNull();
    },
  );
});

describe('parseDateInput: absolute forms', () => {
  it('reads a Unix timestamp as an absolute instant shown in the zone', () => {
    const parsed = parseDateInput('1800000000', BERLIN, NOW)!;
    expect(parsed.absolute).toBe(true);
    expect(parsed.value.toUTC().toISO()).toBe('2027-01-15T08:00:00.000Z');
    expect(toWire(parsed.value)).toBe('2027-01-15 09:00:00');
  });

  it('reads 0 as the epoch', () => {
    expect(utc('0')).toBe('1970-01-01T00:00:00Z');
  });

  it.each([
    ['2027-01-20', '2027-01-20 00:00:00'],
    ['2027-01-20 16:30', '2027-01-20 16:30:00'],
    ['2027-01-20 16:30:15', '2027-01-20 16:30:15'],
    ['2027-01-20T16:30:15', '2027-01-20 16:30:15'],
    ['2027-01-20T16:30', '2027-01-20 16:30:00'],
    ['2027-01-20T16:30:15.250', '2027-01-20 16:30:15'],
    ['  2027-01-20 16:30:15  ', '2027-01-20 16:30:15'],
    ['2028-02-29', '2028-02-29 00:00:00'],
  ])('reads the wall-clock text %j in the zone', (text, expected) => {
    const parsed = parseDateInput(text, BERLIN, NOW)!;
    expect(parsed).not.toBeNull();
    expect(parsed.absolute).toBe(false);
    expect(toWire(parsed.value)).toBe(expected);
    expect(parsed.value.zone.equals(BERLIN)).toBe(true);
  });

  it('reads wall-clock text in the given zone, not in UTC', () => {
    expect(utc('2027-01-20 16:30:00', BERLIN)).toBe('2027-01-20T15:30:00Z');
    expect(utc('2027-01-20 16:30:00', parseZone('America/New_York')!)).toBe('2027-01-20T21:30:00Z');
    expect(utc('2027-01-20 16:30:00', parseZone('UTC-5:30')!)).toBe('2027-01-20T22:00:00Z');
    expect(utc('2027-01-20 16:30:00', UTC)).toBe('2027-01-20T16:30:00Z');
  });

  it.each([
    ['2027-01-20T16:30:00Z', '2027-01-20T16:30:00Z'],
    ['2027-01-20T16:30:00z', '2027-01-20T16:30:00Z'],
    ['2027-01-20T16:30:00+02:00', '2027-01-20T14:30:00Z'],
    ['2027-01-20T16:30:00+0200', '2027-01-20T14:30:00Z'],
    ['2027-01-20T16:30:00+02', '2027-01-20T14:30:00Z'],
    ['2027-01-20T16:30:00-05:30', '2027-01-20T22:00:00Z'],
    ['2027-01-20 16:30:00 +01:00', '2027-01-20T15:30:00Z'],
    ['2027-01-20T16:30:00.5Z', '2027-01-20T16:30:00Z'], // fractions of a second are dropped
  ])('reads %j with an explicit offset as an absolute instant', (text, expected) => {
    const parsed = parseDateInput(text, BERLIN, NOW)!;
    expect(parsed).not.toBeNull();
    expect(parsed.absolute).toBe(true);
    expect(parsed.value.toUTC().toISO({ suppressMilliseconds: true })).toBe(expected);
    expect(parsed.value.zone.equals(BERLIN)).toBe(true); // shown in the requested zone
  });
});

describe('parseDateInput: relative forms (now = Wednesday 2027-01-13 15:30 UTC)', () => {
  it.each([
    ['now', '2027-01-13 15:30:00'],
    ['NOW', '2027-01-13 15:30:00'],
    ['today', '2027-01-13 00:00:00'],
    ['midnight', '2027-01-13 00:00:00'],
    ['noon', '2027-01-13 12:00:00'],
    ['tomorrow', '2027-01-14 00:00:00'],
    ['Tomorrow', '2027-01-14 00:00:00'],
    ['yesterday', '2027-01-12 00:00:00'],
    // weekdays: the coming one, today included, at 00:00
    ['monday', '2027-01-18 00:00:00'],
    ['wednesday', '2027-01-13 00:00:00'],
    ['thursday', '2027-01-14 00:00:00'],
    ['sunday', '2027-01-17 00:00:00'],
    ['mon', '2027-01-18 00:00:00'],
    ['wed', '2027-01-13 00:00:00'],
    ['fri', '2027-01-15 00:00:00'],
    ['Saturday', '2027-01-16 00:00:00'],
    // next: strictly after today
    ['next monday', '2027-01-18 00:00:00'],
    ['next wednesday', '2027-01-20 00:00:00'],
    ['next thursday', '2027-01-14 00:00:00'],
    ['next fri', '2027-01-15 00:00:00'],
    // last: strictly before today
    ['last monday', '2027-01-11 00:00:00'],
    ['last wednesday', '2027-01-06 00:00:00'],
    ['last thursday', '2027-01-07 00:00:00'],
    ['last tue', '2027-01-12 00:00:00'],
    // this: as the bare weekday
    ['this wednesday', '2027-01-13 00:00:00'],
    ['this monday', '2027-01-18 00:00:00'],
    // next/last/this with units keep the time of day
    ['next day', '2027-01-14 15:30:00'],
    ['last day', '2027-01-12 15:30:00'],
    ['next week', '2027-01-20 15:30:00'],
    ['last week', '2027-01-06 15:30:00'],
    ['next month', '2027-02-13 15:30:00'],
    ['last month', '2026-12-13 15:30:00'],
    ['next year', '2028-01-13 15:30:00'],
    ['last year', '2026-01-13 15:30:00'],
    ['this month', '2027-01-13 15:30:00'],
    // [+-]N units keep the time of day
    ['+1 day', '2027-01-14 15:30:00'],
    ['+1 days', '2027-01-14 15:30:00'],
    ['1 day', '2027-01-14 15:30:00'],
    ['-1 day', '2027-01-12 15:30:00'],
    ['+2 days', '2027-01-15 15:30:00'],
    ['+1day', '2027-01-14 15:30:00'],
    ['+30 sec', '2027-01-13 15:30:30'],
    ['+30 secs', '2027-01-13 15:30:30'],
    ['+45 seconds', '2027-01-13 15:30:45'],
    ['+1 second', '2027-01-13 15:30:01'],
    ['+90 min', '2027-01-13 17:00:00'],
    ['+5 mins', '2027-01-13 15:35:00'],
    ['-15 minutes', '2027-01-13 15:15:00'],
    ['+1 minute', '2027-01-13 15:31:00'],
    ['+3 hours', '2027-01-13 18:30:00'],
    ['-1 hour', '2027-01-13 14:30:00'],
    ['+1 week', '2027-01-20 15:30:00'],
    ['-2 weeks', '2026-12-30 15:30:00'],
    ['+1 fortnight', '2027-01-27 15:30:00'],
    ['+2 fortnights', '2027-02-10 15:30:00'],
    ['+1 month', '2027-02-13 15:30:00'],
    ['-3 months', '2026-10-13 15:30:00'],
    ['+1 year', '2028-01-13 15:30:00'],
    ['-1 years', '2026-01-13 15:30:00'],
    // chains
    ['+1 week +2 days', '2027-01-22 15:30:00'],
    ['+1 week 2 days 3 hours', '2027-01-22 18:30:00'],
    ['+1 day -1 hour', '2027-01-14 14:30:00'],
    ['+1 month -1 day', '2027-02-12 15:30:00'],
    ['tomorrow +2 hours', '2027-01-14 02:00:00'],
    ['next monday +1 week', '2027-01-25 00:00:00'],
    // times set hour, minute and second
    ['9am', '2027-01-13 09:00:00'],
    ['9 am', '2027-01-13 09:00:00'],
    ['9AM', '2027-01-13 09:00:00'],
    ['9pm', '2027-01-13 21:00:00'],
    ['4:30pm', '2027-01-13 16:30:00'],
    ['4:30:15pm', '2027-01-13 16:30:15'],
    ['12am', '2027-01-13 00:00:00'],
    ['12pm', '2027-01-13 12:00:00'],
    ['12:45am', '2027-01-13 00:45:00'],
    ['16:30', '2027-01-13 16:30:00'],
    ['16:30:15', '2027-01-13 16:30:15'],
    ['0:05', '2027-01-13 00:05:00'],
    ['23:59:59', '2027-01-13 23:59:59'],
    ['tomorrow 9am', '2027-01-14 09:00:00'],
    ['tomorrow 16:30', '2027-01-14 16:30:00'],
    ['yesterday noon', '2027-01-12 12:00:00'],
    ['today 4:30pm', '2027-01-13 16:30:00'],
    ['monday 9am', '2027-01-18 09:00:00'],
    ['next friday 4:30pm', '2027-01-15 16:30:00'],
    ['last sunday 12am', '2027-01-10 00:00:00'],
    ['+1 day 9am', '2027-01-14 09:00:00'],
    ['+2 weeks 16:30:15', '2027-01-27 16:30:15'],
    ['  tomorrow   9am  ', '2027-01-14 09:00:00'],
  ])('reads %j as %s', (text, expected) => {
    const parsed = parseDateInput(text, UTC, NOW);
    expect(parsed).not.toBeNull();
    expect(parsed!.absolute).toBe(false);
    expect(toWire(parsed!.value)).toBe(expected);
  });

  it('drops milliseconds of now', () => {
    const now = DateTime.fromISO('2027-01-13T15:30:00.789Z');
    expect(parseDateInput('now', UTC, now)!.value.millisecond).toBe(0);
    expect(parseDateInput('+1 hour', UTC, now)!.value.toUTC().toISO()).toBe('2027-01-13T16:30:00.000Z');
  });

  it('defaults now to the current time', () => {
    const before = DateTime.utc().startOf('second').toMillis();
    const parsed = parseDateInput('now', UTC)!;
    expect(parsed.value.toMillis()).toBeGreaterThanOrEqual(before);
    expect(parsed.value.toMillis()).toBeLessThanOrEqual(DateTime.utc().toMillis());
  });

  it('resolves relative phrases against now in the zone', () => {
    // 15:30 UTC is already Thursday 04:30 in Auckland (UTC+13 in January)
    const auckland = parseZone('Pacific/Auckland')!;
    expect(wall('today', auckland)).toBe('2027-01-14 00:00:00');
    expect(utc('today', auckland)).toBe('2027-01-13T11:00:00Z');
    expect(wall('tomorrow 9am', auckland)).toBe('2027-01-15 09:00:00');
    expect(wall('thursday', auckland)).toBe('2027-01-14 00:00:00');
    expect(wall('next thursday', auckland)).toBe('2027-01-21 00:00:00');
    // and 07:30 Wednesday in Los Angeles
    const la = parseZone('America/Los_Angeles')!;
    expect(utc('tomorrow', la)).toBe('2027-01-14T08:00:00Z');
    expect(utc('9am', la)).toBe('2027-01-13T17:00:00Z');
    expect(utc('noon', parseZone('UTC+5.5')!)).toBe('2027-01-13T06:30:00Z');
    // now stays the same instant whatever the zone
    expect(utc('now', la)).toBe('2027-01-13T15:30:00Z');
  });

  it('uses the zone it was given for the value', () => {
    const parsed = parseDateInput('tomorrow', BERLIN, NOW)!;
    expect(parsed.value.zone.equals(BERLIN)).toBe(true);
    expect(toWire(parsed.value)).toBe('2027-01-14 00:00:00');
  });
});

describe('parseDateInput: DST in Europe/Berlin', () => {
  const at = (iso: string) => DateTime.fromISO(iso, { setZone: true });

  it.each([
    ['2027-03-27 12:00:00', '2027-03-27T11:00:00Z'],
    ['2027-03-28 12:00:00', '2027-03-28T10:00:00Z'],
    ['2027-03-28 01:59:59', '2027-03-28T00:59:59Z'],
    ['2027-03-28 03:00:00', '2027-03-28T01:00:00Z'],
    ['2027-10-30 12:00:00', '2027-10-30T10:00:00Z'],
    ['2027-10-31 12:00:00', '2027-10-31T11:00:00Z'],
    ['2027-10-31 01:59:59', '2027-10-30T23:59:59Z'],
    ['2027-10-31 03:00:00', '2027-10-31T02:00:00Z'],
    ['2027-03-28', '2027-03-27T23:00:00Z'],
    ['2027-10-31', '2027-10-30T22:00:00Z'],
  ])('reads %j in Berlin as %s', (text, expected) => {
    expect(utc(text, BERLIN)).toBe(expected);
  });

  it('moves a time in the skipped hour forward, as PHP does', () => {
    expect(utc('2027-03-28 02:30:00', BERLIN)).toBe('2027-03-28T01:30:00Z');
    expect(wall('2027-03-28 02:30:00', BERLIN)).toBe('2027-03-28 03:30:00');
    expect(utc('tomorrow 2:30am', BERLIN, at('2027-03-27T12:00:00+01:00'))).toBe('2027-03-28T01:30:00Z');
  });

  // luxon guesses the offset of a wall-clock time from the current date; the result must not depend on it
  it.each([
    ['in winter', JANUARY],
    ['in summer', JULY],
  ])('reads a time in the repeated hour as its first (summer time) occurrence, as PHP does, when run %s', (_, today) => {
    const realNow = Settings.now;
    Settings.now = () => today;
    try {
      expect(utc('2027-10-31 02:30:00', BERLIN)).toBe('2027-10-31T00:30:00Z');
      expect(utc('2027-10-31T02:30', BERLIN)).toBe('2027-10-31T00:30:00Z');
      expect(utc('tomorrow 2:30am', BERLIN, at('2027-10-30T12:00:00+02:00'))).toBe('2027-10-31T00:30:00Z');
      expect(utc('yesterday 2:30am', BERLIN, at('2027-11-01T12:00:00+01:00'))).toBe('2027-10-31T00:30:00Z');
      expect(utc('2:30am', BERLIN, at('2027-10-31T12:00:00+01:00'))).toBe('2027-10-31T00:30:00Z');
      expect(utc('2027-10-31 03:30:00', BERLIN)).toBe('2027-10-31T02:30:00Z');
    } finally {
      Settings.now = realNow;
    }
  });

  it('keeps the wall clock for days across spring forward, not for hours', () => {
    const saturdayNoon = at('2027-03-27T12:00:00+01:00');
    expect(wall('+1 day', BERLIN, saturdayNoon)).toBe('2027-03-28 12:00:00');
    expect(utc('+1 day', BERLIN, saturdayNoon)).toBe('2027-03-28T10:00:00Z');
    expect(wall('tomorrow noon', BERLIN, saturdayNoon)).toBe('2027-03-28 12:00:00');
    expect(wall('+24 hours', BERLIN, saturdayNoon)).toBe('2027-03-28 13:00:00');
    expect(wall('+1 week', BERLIN, saturdayNoon)).toBe('2027-04-03 12:00:00');
    expect(utc('tomorrow', BERLIN, saturdayNoon)).toBe('2027-03-27T23:00:00Z');
    expect(utc('sunday', BERLIN, saturdayNoon)).toBe('2027-03-27T23:00:00Z');
    expect(utc('tomorrow +1 day', BERLIN, saturdayNoon)).toBe('2027-03-28T22:00:00Z');
  });

  it('keeps the wall clock for days across fall back, not for hours', () => {
    const saturdayNoon = at('2027-10-30T12:00:00+02:00');
    expect(wall('+1 day', BERLIN, saturdayNoon)).toBe('2027-10-31 12:00:00');
    expect(utc('+1 day', BERLIN, saturdayNoon)).toBe('2027-10-31T11:00:00Z');
    expect(wall('+24 hours', BERLIN, saturdayNoon)).toBe('2027-10-31 11:00:00');
    expect(wall('next sunday 4:30pm', BERLIN, saturdayNoon)).toBe('2027-10-31 16:30:00');
    expect(utc('next sunday 4:30pm', BERLIN, saturdayNoon)).toBe('2027-10-31T15:30:00Z');
    expect(wall('-1 day', BERLIN, at('2027-11-01T12:00:00+01:00'))).toBe('2027-10-31 12:00:00');
  });
});

describe('parseDateInput: invalid input', () => {
  it.each([
    'not-a-date',
    'before my birthday',
    '',
    '   ',
    '2027-02-30',
    '2029-02-29',
    '2027-13-01',
    '2027-00-10',
    '2027-01-32',
    '2027-1-5',
    '2027-01-20 24:00',
    '2027-01-20 16:60',
    '2027-01-20 16:30:60',
    '2027-01-20T',
    '2027-01-20T16:30+25:00',
    '25:00',
    '16:60',
    '16:30:61',
    '13pm',
    '0am',
    '9:60am',
    'next',
    'next monkey',
    'last fortnightly',
    'this',
    'tomorrow at 9',
    '+1 days ago',
    '+1 lightyear',
    '+ day',
    'tomorrowx',
    'monday tuesday friday x',
    '999999999999999999999',
    '253402300800',
    'x'.repeat(101),
  ])('rejects %j', (text) => {
    expect(parseDateInput(text, BERLIN, NOW)).toBeNull();
  });

  it('rejects anything over 100 characters, even a valid chain', () => {
    const chain = (n: number) => Array.from({ length: n }, () => '+1 day').join(' ');
    expect(chain(14).length).toBeLessThanOrEqual(100);
    expect(wall(chain(14))).toBe('2027-01-27 15:30:00');
    expect(chain(15).length).toBeGreaterThan(100);
    expect(parseDateInput(chain(15), UTC, NOW)).toBeNull();
  });

  it('accepts the last timestamp of 9999', () => {
    expect(utc('253402300799')).toBe('9999-12-31T23:59:59Z');
  });
});

describe('wire dates without luxon formats', () => {
  // toWire, fromWire and isoWithOffset skip luxon's format parser; they must give exactly what it gives
  const zones = ['UTC', 'UTC+5:30', 'UTC-3', 'Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu'];
  const samples: string[] = [];
  for (let i = 0; i < 400; i++) {
    const ms = Date.UTC(1, 0, 1) + Math.floor(((i * 7919) % 400) / 400 * (Date.UTC(9999, 11, 31) - Date.UTC(1, 0, 1))) + i * 3_600_000;
    samples.push(new Date(ms).toISOString().slice(0, 19).replace('T', ' '));
  }
  // the hours DST skips and repeats, where reading a wall time depends on how it is read
  samples.push('2027-03-28 02:30:00', '2027-10-31 02:30:00', '2027-03-14 02:30:00', '2027-11-07 01:30:00', '2027-04-04 02:15:00', '0001-01-01 00:00:00', '9999-12-31 23:59:59');

  it('reads and writes YYYY-MM-DD HH:MM:SS as luxon formats do', () => {
    for (const name of zones) {
      const zone = parseZone(name)!;
      for (const text of samples) {
        const luxon = DateTime.fromFormat(text, 'yyyy-MM-dd HH:mm:ss', { zone });
        expect([name, text, fromWire(text, zone).toMillis()]).toEqual([name, text, luxon.toMillis()]);
        expect([name, text, toWire(luxon)]).toEqual([name, text, luxon.toFormat('yyyy-MM-dd HH:mm:ss')]);
        expect([name, text, isoWithOffset(text, name)]).toEqual([name, text, luxon.toISO({ suppressMilliseconds: true, includeOffset: true })!.replace(/Z$/, '+00:00')]);
      }
    }
  });
});
