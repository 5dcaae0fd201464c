import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets a serving process's heap grow past what its last full collection kept, in percent (V8's
 * `--heap-growing-percent`; it reads the flag at each collection, so setting it once the process runs takes effect).
 * Left to itself V8 grows the heap up to four times what stays alive: a server's requests leave much short-lived
 * garbage behind (a list answer's rows, views and JSON), and at a million events the main thread's heap stood at
 * 122–130 MB while 25–40 MB survived a full collection, its peak RSS at 257 MB as served and 294 MB with the cache
 * off. Growing by half instead, the heap stayed under 100 MB and the peaks were 234 and 235 MB, with the same CPU per
 * request (by hand on 100,000 events, alternating runs: a read by id with the cache off 884–960 µs against 947–988,
 * the default list 5,455–5,500 against 5,694–5,828). Read threads share the setting: V8's flags belong to the process.
 */
export const HEAP_GROWING_PERCENT = 50;

const OWN_SETTING = /^--heap[-_]growing[-_]percent(?:=(\d+))?$/;

/**
 * Sets HEAP_GROWING_PERCENT, unless the process was started with a value of its own (`node --heap-growing-percent=…`).
 * Returns the share in effect (for the start-up log line), or null when the process's own option gave none readable.
 */
export function limitHeapGrowth(execArgv: readonly string[] = process.execArgv): number | null {
  const own = execArgv.map((arg) => OWN_SETTING.exec(arg)).find((m) => m !== null);
  if (own) return own[1] === undefined ? null : Number(own[1]);
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return HEAP_GROWING_PERCENT;
}
