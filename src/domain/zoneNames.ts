import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Time zone abbreviations as the time zone database writes them (`JST`, `CEST`, `+04`, `LMT`), which is what PHP's
 * `T` format, and so the plugin's `timezone_abbr`, shows. The runtime's Intl names differ (`+09` for Tokyo, `GST` for
 * Dubai, `GMT+1` for Berlin in most locales), so they are read from the system's compiled database (TZif, RFC 8536),
 * in `TZDIR` or `/usr/share/zoneinfo`, where the operating system's `tzdata` keeps it.
 */

interface ZoneNames {
  /** Transition times (Unix seconds, ascending) and the local time type each starts. */
  transitions: number[];
  types: number[];
  names: string[];
  /** The POSIX TZ string of times after the last transition: its standard and daylight names and offsets (seconds east). */
  footer: { std: string; stdOffset: number; dst: string | null; dstOffset: number } | null;
}

const ZONE_NAME = /^[A-Za-z0-9_+-]+(?:\/[A-Za-z0-9_+-]+)*$/;
const loaded = new Map<string, ZoneNames | null>();

/**
 * The database's abbreviation of `zone` at an instant (Unix seconds), whose offset from UTC (seconds east) the caller
 * knows; null when the system has no compiled database for the zone.
 */
export function zoneAbbreviation(zone: string, atSeconds: number, offsetSeconds: number): string | null {
  const names = zoneNames(zone);
  if (!names) return null;
  const { transitions, types, footer } = names;
  const last = transitions.length - 1;
  if (footer && (last < 0 || atSeconds >= transitions[last]!)) {
    if (footer.dst !== null && offsetSeconds === footer.dstOffset) return footer.dst;
    if (offsetSeconds === footer.stdOffset || last < 0) return footer.std;
  }
  // RFC 8536: before the first transition, the first local time type
  if (last < 0 || atSeconds < transitions[0]!) return names.names[0] ?? null;
  let low = 0;
  let high = last;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (transitions[mid]! <= atSeconds) low = mid;
    else high = mid - 1;
  }
  return names.names[types[low]!] ?? null;
}

function zoneNames(zone: string): ZoneNames | null {
  if (loaded.has(zone)) return loaded.get(zone)!;
  let names: ZoneNames | null = null;
  if (ZONE_NAME.test(zone) && !zone.split('/').includes('..')) {
    try {
      names = parseTzif(readFileSync(join(process.env.TZDIR || '/usr/share/zoneinfo', zone)));
    } catch {
      names = null; // no such file, or not one the reader understands: the caller falls back to the runtime's names
    }
  }
  if (loaded.size > 1000) loaded.clear();
  loaded.set(zone, names);
  return names;
}

/** Reads a TZif file: its 64-bit block (version 2 and later) or its only one, and its footer. */
function parseTzif(data: Buffer): ZoneNames | null {
  if (data.toString('latin1', 0, 4) !== 'TZif') return null;
  const version = data[4]!;
  const countsAt = (at: number) => {
    const count = (i: number) => data.readUInt32BE(at + 20 + 4 * i);
    return { isut: count(0), isstd: count(1), leap: count(2), time: count(3), type: count(4), char: count(5) };
  };
  const blockLength = (c: ReturnType<typeof countsAt>, timeSize: number) => c.time * timeSize + c.time + c.type * 6 + c.char + c.leap * (timeSize + 4) + c.isstd + c.isut;
  let at = 0;
  let counts = countsAt(0);
  let timeSize = 4;
  if (version >= 0x32) {
    at = 44 + blockLength(counts, 4);
    counts = countsAt(at);
    timeSize = 8;
  }
  let p = at + 44;
  const transitions: number[] = [];
  for (let i = 0; i < counts.time; i++) transitions.push(timeSize === 8 ? Number(data.readBigInt64BE(p + 8 * i)) : data.readInt32BE(p + 4 * i));
  p += counts.time * timeSize;
  const types = [...data.subarray(p, p + counts.time)];
  p += counts.time;
  const infoAt = p;
  p += counts.type * 6;
  const chars = data.toString('latin1', p, p + counts.char);
  const names: string[] = [];
  for (let i = 0; i < counts.type; i++) {
    const index = data[infoAt + 6 * i + 5]!;
    const end = chars.indexOf('\0', index);
    names.push(chars.slice(index, end < 0 ? undefined : end));
  }
  p += counts.char + counts.leap * (timeSize + 4) + counts.isstd + counts.isut;
  let footer: ZoneNames['footer'] = null;
  if (timeSize === 8 && data[p] === 0x0a) {
    const end = data.indexOf(0x0a, p + 1);
    footer = parsePosixTz(data.toString('latin1', p + 1, end < 0 ? undefined : end));
  }
  return { transitions, types, names, footer };
}

/** The names and offsets of a POSIX TZ string (`EST5EDT,M3.2.0,M11.1.0`, `<+04>-4`); its rules are not needed. */
function parsePosixTz(text: string): ZoneNames['footer'] {
  const m = /^(<[^>]+>|[A-Za-z]+)([+-]?\d{1,3}(?::\d{1,2}){0,2})(?:(<[^>]+>|[A-Za-z]+)([+-]?\d{1,3}(?::\d{1,2}){0,2})?)?(?:,|$)/.exec(text);
  if (!m) return null;
  const name = (raw: string) => raw.replace(/^<|>$/g, '');
  // POSIX counts hours west of UTC: `EST5` is five hours behind
  const seconds = (raw: string) => {
    const [h, min = '0', s = '0'] = raw.replace(/^[+-]/, '').split(':');
    return (raw.startsWith('-') ? 1 : -1) * (Number(h) * 3600 + Number(min) * 60 + Number(s));
  };
  const stdOffset = seconds(m[2]!);
  return { std: name(m[1]!), stdOffset, dst: m[3] ? name(m[3]) : null, dstOffset: m[4] ? seconds(m[4]) : stdOffset + 3600 };
}
