import type { Middleware } from 'koa';
import { ReadSet, tag, type ChangeTracker, type Tag } from '../db/changes.js';
import type { Engine } from '../db/engine.js';
import type { RoutedRequest } from './route.js';
import type { Caller } from '../domain/context.js';
import { entityTag } from './conditional.js';
import { generationFor } from './requestGeneration.js';

/**
 * A cache of serialised GET answers that is exactly right, never merely fresh enough:
 * - every entry keeps what its answer read (tags: the rows it read by key, the tables it queried; see db/changes.ts)
 *   and the point of the change log it was computed after. A write of any process or node names what it changed in
 *   the change log; each request reads the log's new rows (`Engine.generation`) before it looks here, and an entry
 *   is served only while no change after its point names one of its tags. A scheduled record falling due retires
 *   every entry;
 * - list and index answers also belong to the second they were computed in: their time-dependent parts (default
 *   window, relative dates, "upcoming", scheduled records falling due, computed defaults) are all computed at
 *   one-second resolution; unless what computed one said how long the clock leaves it as it is (ReadSet.steadyUntil):
 *   an event list or feed whose dates are the default window or fixed dates holds until the site's midnight, or for good,
 *   and so do venue and organizer lists but those `only_with_upcoming`, and category and tag lists;
 * - the key holds the caller (user and role), the site address and the request as the handler reads it (path,
 *   language, declared parameters, `_fields`; see `requestKey`).
 * The health check is never cached. Entries are bounded in number and bytes, oldest out first. Entries with the same
 * body (one event by id and by slug, for visitors and for signed-in users) hold one copy of it, counted once.
 *
 * An answer that is stale only because counts of terms it shows moved (a new event in a category changes the count
 * every event of that category shows) is brought up to date rather than computed again: the cache knows where in its
 * bytes each count is (`CountSite`), reads the current counts with the change log's newest sequence from one snapshot
 * (`Engine.termCounts`), and writes them in when that sequence is the one this process has seen: the result is then
 * byte for byte what computing it at that point of the log would give.
 */
export interface CachedAnswer {
  status: number;
  /** The serialised body, UTF-8. */
  bytes: Buffer;
  headers: Record<string, string>;
  /** The language prefix of the answer's links (for the Link header), as the request resolved it. */
  linkPrefix: string;
  /**
   * The header lines GETs of this answer were sent (alternating names and values, as the response stage set them; no
   * request id), by `replayKey`: what the front answer replays. A few variants at most, counted in the cache's bytes
   * (`ResponseCache.keepReplay`).
   */
  replays?: Map<string, string[]>;
}

/** Header variants an answer keeps: the browsers of a few sites, not every Origin anyone sends. */
const MAX_REPLAYS = 8;

/**
 * What shapes a GET's header lines beyond its cached answer: the status it got (the answer's, or 304 when a
 * conditional request matched) and the `Origin` it sent ('' for none), which decides the CORS headers.
 */
export function replayKey(status: number, origin: string): string {
  return `${status} ${origin}`;
}

/** What a variant's header lines take in memory, roughly: their characters and a string's own overhead each. */
const linesSize = (lines: string[]) => lines.reduce((n, line) => n + line.length + 32, 0);

/** Where an answer shows a term's count: the digits' offset and length in its bytes. */
interface CountSite {
  termId: number;
  offset: number;
  length: number;
}

interface Entry {
  answer: CachedAnswer;
  /** What `check` returns for it while it is exact (made once, not per request). */
  current: { entry: Entry; stale: false };
  /**
   * Where the answer shows term counts, in order of offset, when every term object it shows was found in its bytes;
   * otherwise null: such an answer is computed again when counts move. (An answer's ETag, when it has one, is the hash
   * of its bytes, as the response stage and the documentation handler make it: new bytes get the tag of theirs.)
   */
  counts: CountSite[] | null;
  /** What the answer read, and the change tracker's stamp it was computed after. */
  reads: Tag[];
  at: number;
  /**
   * The seconds the answer holds in as far as the clock goes, [from, until): a list or index answer's is the second
   * it was computed in, or longer when what computed it said so; other answers' are unbounded.
   */
  from: number;
  until: number;
  /** What it holds alone, as counted against ALMANAC_CACHE_MB (see `pieces` for what it shares). */
  size: number;
  /** The keys of the pieces it holds (see `pieces`). */
  held: string[];
  /** The tag of its body: the hash of its bytes. */
  tag: string;
}

/** A body or a variant's header lines that entries hold one copy of, its size and how many entries hold it. */
interface Piece {
  value: Buffer | string[];
  size: number;
  holders: number;
}

/** The key of an answer: caller, site address and the request as `requestKey` sums it up. */
export function cacheKey(caller: Caller | null, site: string, request: string): string {
  return `${caller ? `${caller.id}:${caller.role}` : '-'}|${site}|${request}`;
}

/**
 * What a GET's answer depends on besides caller and site: its path, the parameters its operation declares (decoded,
 * in the spec's order: what the handler reads and links echo) and `_fields` / `_envelope`. Parameters the operation
 * does not declare are ignored, as in WordPress, so they cannot change the answer, and adding a random one does not
 * make a request miss the cache; neither does the order or the encoding of the parameters.
 */
export function requestKey(routed: RoutedRequest): string {
  // each key as JSON: a key of a `_fields[]` list may hold a comma (`_fields[]=id,name` keeps a key "id,name")
  const plumbing = `${routed.fields ? `&_fields=${JSON.stringify(routed.fields)}` : ''}${routed.envelope ? '&_envelope' : ''}`;
  return `${routed.pathPrefix}${routed.path}?${JSON.stringify(routed.query)}${plumbing}`;
}

/** URLs longer than this are not remembered as aliases of a key (their GETs go through the pipeline). */
const MAX_ALIASED_URL = 2048;

const MAX_ENTRIES = 20_000;

/**
 * Operations whose answers hold times computed to the second: the lists (default window, relative dates, "upcoming")
 * and the indexes (the date defaults the plugin computes per request). An answer of one holds for the second it was
 * computed in, unless what computed it said it holds longer (ReadSet.steadyUntil).
 */
// lists, the feed and the indexes hold dates that move with the clock (default windows, argument defaults)
const computedToTheSecond = (operationId: string) =>
  operationId.startsWith('list') || operationId === 'getEventsCalendar' || operationId === 'getNamespaceIndex' || operationId === 'getRestIndex';

const currentSecond = () => Math.floor(Date.now() / 1000);

export class ResponseCache {
  private readonly entries = new Map<string, Entry>();
  /** The `requestKey` of URLs as sent, for the front answer, which reads nothing but the URL (never stale: it depends on the spec alone). */
  private readonly aliases = new Map<string, string>();
  /**
   * Bodies (under their tag) and variants' header lines (under their body's tag and the variant) held once for every
   * entry with the same:
   * one event by id and by slug, for visitors and for signed-in users, is one body and the same lines. Counted once.
   */
  private readonly pieces = new Map<string, Piece>();
  /**
   * The strings of the header lines the pieces hold, each counted once: most (names, CORS lists, `nosniff`) are the
   * same in every answer, and an answer's own are its tag, length, dates and links.
   */
  private readonly strings = new Map<string, { value: string; holders: number }>();
  private readonly maxEntry: number;
  private bytes = 0;
  /**
   * The answers being computed, by key: a request that finds its answer being computed waits for it rather than
   * computing it again (a popular list, when its second turns, was computed by every request that arrived meanwhile).
   */
  private readonly computing = new Map<string, Promise<void>>();

  /**
   * `maxBytes`: the most serialised bytes kept (ALMANAC_CACHE_MB); `changes`: the engine's view of the change log,
   * brought up to date by each request's generation reading.
   */
  constructor(private readonly maxBytes: number, private readonly changes: ChangeTracker) {
    this.maxEntry = Math.min(1024 * 1024, maxBytes / 4); // a page of 50 events fits; no one answer crowds out the rest
  }

  /**
   * The answer under `key` if it is still exactly right, as of the change log read for this request (the caller
   * read the generation first).
   */
  find(key: string): CachedAnswer | undefined {
    const found = this.check(key);
    return found === undefined || found.stale ? undefined : found.entry.answer;
  }

  /**
   * The answer under `key` if it is exactly right as of the change log read for this request, brought up to date
   * first when counts it shows are all that moved (then asynchronously).
   */
  current(key: string, engine: Engine): CachedAnswer | undefined | Promise<CachedAnswer | undefined> {
    const found = this.check(key);
    if (found === undefined) return undefined;
    return found.stale ? this.withCurrentCounts(key, found.entry, engine) : found.entry.answer;
  }

  /**
   * What the cache holds under `key`: an answer still exactly right; or one stale only by counts it shows (kept until
   * brought up to date or replaced); or nothing (an answer stale otherwise is dropped).
   */
  private check(key: string): { entry: Entry; stale: boolean } | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    const second = currentSecond();
    if (second >= entry.from && second < entry.until) {
      // the common case first, without building the list of what changed
      if (this.changes.isCurrent(entry.reads, entry.at)) return entry.current;
      const changed = this.changes.changedSince(entry.reads, entry.at);
      if (changed && entry.counts && movedCounts(changed, entry.counts)) return { entry, stale: true };
    }
    this.drop(key, entry);
    return undefined;
  }

  private drop(key: string, entry: Entry): void {
    if (this.entries.get(key) !== entry) return;
    this.entries.delete(key);
    this.forget(entry);
  }

  /** Uncounts a removed entry, and each piece it held that no other entry holds. */
  private forget(entry: Entry): void {
    this.bytes -= entry.size;
    for (const key of entry.held) {
      const piece = this.pieces.get(key)!;
      if (--piece.holders > 0) continue;
      this.pieces.delete(key);
      this.bytes -= piece.size;
      if (Array.isArray(piece.value)) for (const line of piece.value) this.release(line);
    }
  }

  /**
   * What `entry` holds for `value`: the piece under `key` when it is the same (`same`), else `value`, held under `key`
   * when no piece is, or by the entry alone (other content under the same key: a tag that is not the hash of its body).
   */
  private share<T extends Buffer | string[]>(entry: Entry, key: string, value: T, size: number, same: (held: T) => boolean): T {
    const piece = this.pieces.get(key);
    if (piece !== undefined && !same(piece.value as T)) {
      entry.size += size;
      this.bytes += size;
      return value;
    }
    entry.held.push(key);
    if (piece !== undefined) {
      piece.holders++;
      return piece.value as T;
    }
    this.pieces.set(key, { value, size, holders: 1 });
    this.bytes += size;
    return value;
  }

  /** Holds a variant's header lines for `entry`, shared with any entry of the same body sent the same lines. */
  private shareLines(entry: Entry, variant: string, lines: string[]): string[] {
    const key = `l${entry.tag} ${variant}`;
    // new lines hold the cache's copy of each string, counted in `strings`: the array alone is the piece's
    if (!this.pieces.has(key)) return this.share(entry, key, lines.map((line) => this.intern(line)), 16 + 8 * lines.length, () => true);
    const same = (held: string[]) => held.length === lines.length && held.every((line, i) => line === lines[i]);
    return this.share(entry, key, lines, linesSize(lines), same);
  }

  /** The cache's copy of a header line string, counted once however many kept lines hold it. */
  private intern(line: string): string {
    const known = this.strings.get(line);
    if (known !== undefined) {
      known.holders++;
      return known.value;
    }
    this.strings.set(line, { value: line, holders: 1 });
    this.bytes += line.length + 32;
    return line;
  }

  private release(line: string): void {
    const known = this.strings.get(line)!;
    if (--known.holders > 0) return;
    this.strings.delete(line);
    this.bytes -= line.length + 32;
  }

  /**
   * Brings an answer stale by the counts it shows alone up to date (see the class comment), keeps it in place of the
   * stale one and returns it; or drops the stale one and returns undefined when the log moved meanwhile (the answer is
   * then computed as any other).
   */
  private async withCurrentCounts(key: string, stale: Entry, engine: Engine): Promise<CachedAnswer | undefined> {
    // every count it shows, not only those that moved: more may move while they are read
    const shown = [...new Set(stale.counts!.map((site) => site.termId))];
    const { counts, seq } = await engine.termCounts(shown);
    // another request brought it up to date meanwhile: that answer, if it is still exact
    if (this.entries.get(key) !== stale) return this.find(key);
    const changed = this.changes.changedSince(stale.reads, stale.at);
    const current = seq === this.changes.lastSeq && changed !== null && movedCounts(changed, stale.counts!);
    if (!current || shown.some((id) => !counts.has(id))) {
      this.drop(key, stale);
      return undefined;
    }
    const { bytes, sites } = writeCounts(stale.answer.bytes, stale.counts!, counts);
    const tag = entityTag(bytes);
    const headers = stale.answer.headers.ETag === undefined ? stale.answer.headers : { ...stale.answer.headers, ETag: tag };
    const answer: CachedAnswer = { status: stale.answer.status, bytes, headers, linkPrefix: stale.answer.linkPrefix };
    // the header lines GETs were sent differ in the tag and the length alone
    if (stale.answer.replays) {
      answer.replays = new Map();
      for (const [variant, lines] of stale.answer.replays) {
        answer.replays.set(variant, lines.map((line, i) => (i % 2 === 0 ? line : withBytes(lines[i - 1]!, line, tag, bytes.length))));
      }
    }
    this.drop(key, stale);
    return this.keep(key, { answer, tag, counts: sites, reads: stale.reads, at: this.changes.now, from: stale.from, until: stale.until });
  }

  /** What an answer computed from now on is current as of: the change tracker's stamp and the second. */
  get moment(): { at: number; second: number } {
    return { at: this.changes.now, second: currentSecond() };
  }

  /**
   * Keeps an answer computed at `moment` (as taken before computing it) that read `reads`, unless it read something
   * no rule describes or a change seen since retires it already; returns what is kept, if anything. An answer
   * `toTheSecond` is kept for the second it was computed in, or until the clock moves it when `reads` says when.
   */
  store(key: string, answer: CachedAnswer, toTheSecond: boolean, moment: { at: number; second: number }, reads: ReadSet): CachedAnswer | undefined {
    if (answer.bytes.length > this.maxEntry || reads.unknown || !this.changes.isCurrent(reads.tags, moment.at)) return undefined;
    // a list read the tables of what it lists, so a write that moves a count it shows retires it: where its counts are is never needed
    const counts = toTheSecond ? null : countSites(answer.bytes, reads.shownCounts);
    const tag = answer.headers.ETag ?? entityTag(answer.bytes);
    const steady = reads.clockSteadyUntil;
    const [from, until] = !toTheSecond ? [-Infinity, Infinity] : [moment.second, steady === null ? moment.second + 1 : Math.floor(steady / 1000)];
    return this.keep(key, { answer, tag, counts, reads: [...reads.tags], at: moment.at, from, until });
  }

  /**
   * Keeps an entry in place of any under `key`, its answer holding the pieces the cache holds for its body and header
   * lines; returns that answer.
   */
  private keep(key: string, kept: Omit<Entry, 'current' | 'size' | 'held'>): CachedAnswer {
    const replaced = this.entries.get(key);
    if (replaced) this.drop(key, replaced);
    const held = kept.answer.bytes;
    let bytes = held;
    const entry = Object.assign(kept, { size: 0, held: [] as string[] }) as unknown as Entry;
    // a small Buffer is a slice of a shared pool: the cache holds a copy of its own, so it keeps only these bytes
    if (bytes.buffer.byteLength !== bytes.length) {
      const own = Buffer.allocUnsafeSlow(bytes.length);
      bytes.copy(own);
      bytes = own;
    }
    bytes = this.share(entry, `b${entry.tag}`, bytes, bytes.length, (shared) => shared.equals(bytes));
    if (bytes !== held) entry.answer = { ...entry.answer, bytes };
    if (entry.answer.replays) entry.answer.replays = new Map([...entry.answer.replays].map(([variant, lines]) => [variant, this.shareLines(entry, variant, lines)]));
    entry.current = { entry, stale: false };
    this.entries.set(key, entry);
    this.trim();
    return entry.answer;
  }

  /**
   * Keeps the header lines a GET of `answer` (kept under `key`) was sent, under `variant` (see `replayKey`), unless
   * kept already, or the answer is no longer the one kept, or it has MAX_REPLAYS variants already.
   */
  keepReplay(key: string, answer: CachedAnswer, variant: string, lines: () => string[]): void {
    const entry = this.entries.get(key);
    if (entry?.answer !== answer) return;
    const replays = (answer.replays ??= new Map());
    if (replays.size >= MAX_REPLAYS || replays.has(variant)) return;
    replays.set(variant, this.shareLines(entry, variant, lines()));
    this.trim();
  }

  /** The `requestKey` a URL as sent was last seen to have, if it is remembered. */
  requestKeyOf(url: string): string | undefined {
    return this.aliases.get(url);
  }

  /** Remembers the `requestKey` of a URL as sent (a few thousand at most, oldest out first). */
  private alias(url: string, key: string): void {
    if (url.length > MAX_ALIASED_URL || this.aliases.get(url) === key) return;
    this.aliases.set(url, key);
    if (this.aliases.size > MAX_ENTRIES) this.aliases.delete(this.aliases.keys().next().value!);
  }

  /** Drops the oldest entries until the cache is within its bounds. */
  private trim(): void {
    for (const [oldest, value] of this.entries) {
      if (this.entries.size <= MAX_ENTRIES && this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.forget(value);
    }
  }

  /**
   * The Koa stage: answers a GET from the cache (after routing and authentication), or lets the handler compute it
   * and offers the response stage a way to keep it (2xx only).
   */
  middleware(engine: Engine): Middleware {
    return async (ctx, next) => {
      const routed = ctx.state.routed as RoutedRequest;
      const operation = routed.operation;
      if ((routed.method !== 'GET' && routed.method !== 'HEAD') || !operation || operation.operationId === 'getHealth') return next();
      await generationFor(ctx.req, engine); // once per request: the front answer or authentication may have read it
      const request = requestKey(routed);
      this.alias(ctx.url, request);
      const key = cacheKey(ctx.state.user as Caller | null, routed.site, request);
      ctx.state.keepReplay = (answer: CachedAnswer, variant: string, lines: () => string[]) => this.keepReplay(key, answer, variant, lines);
      const hit = await this.current(key, engine);
      if (hit) {
        ctx.state.cached = hit;
        return;
      }
      // the same answer being computed for another request: wait for it, then take it if it is still exact as of this
      // request's reading (find checks it against every change seen since the computation began)
      const computing = this.computing.get(key);
      if (computing) {
        await computing;
        const computed = this.find(key);
        if (computed) {
          ctx.state.cached = computed;
          return;
        }
      }
      const computedAt = this.moment;
      const reads = new ReadSet();
      ctx.state.reads = reads;
      let settled!: () => void;
      const done = new Promise<void>((resolve) => (settled = resolve));
      const settle = () => {
        if (this.computing.get(key) === done) this.computing.delete(key);
        settled();
      };
      this.computing.set(key, done);
      // settled once the response stage has kept the answer, or once the response ends whatever became of it
      ctx.res.once('close', settle);
      try {
        await next();
      } catch (err) {
        settle();
        throw err;
      }
      ctx.state.store = (answer: CachedAnswer) => {
        try {
          return this.store(key, answer, computedToTheSecond(operation.operationId), computedAt, reads);
        } finally {
          settle();
        }
      };
    };
  }
}

/** A header line's value for an answer of other bytes: the tag and the length are theirs, the rest as sent. */
function withBytes(name: string, value: string, tag: string, length: number): string {
  const lower = name.toLowerCase();
  return lower === 'etag' ? tag : lower === 'content-length' ? String(length) : value;
}

/** Whether all that changed are counts of terms the answer shows (where, `sites` knows). */
function movedCounts(changed: Tag[], sites: CountSite[]): boolean {
  return changed.every((t) => {
    const id = Number(t.slice(1));
    return t === tag.termCount(id) && sites.some((s) => s.termId === id);
  });
}

/**
 * Where `bytes` show the counts of the term objects an answer was built with (ReadSet.shownCounts); null when one of
 * them is not in the bytes as built (`_fields` took some of its keys, say): the counts it shows are then not all known.
 */
function countSites(bytes: Buffer, shown: ReadSet['shownCounts']): CountSite[] | null {
  const sites = new Map<number, CountSite>();
  for (const { termId, wire } of shown) {
    const text = JSON.stringify(wire);
    const count = String((wire as { count: number }).count);
    // the object's own count: names and descriptions are JSON strings, where a quote is escaped
    const key = `"count":${count}`;
    const inText = text.indexOf(key);
    if (inText < 0 || !/[,}]/.test(text[inText + key.length] ?? '')) return null;
    const digits = Buffer.byteLength(text.slice(0, inText + key.length - count.length));
    const object = Buffer.from(text);
    let at = bytes.indexOf(object);
    if (at < 0) return null;
    for (; at >= 0; at = bytes.indexOf(object, at + object.length)) sites.set(at + digits, { termId, offset: at + digits, length: count.length });
  }
  return [...sites.values()].sort((a, b) => a.offset - b.offset);
}

/** `bytes` with each site's count replaced by `counts`' (every site's term is in it), and where they now are. */
function writeCounts(bytes: Buffer, sites: CountSite[], counts: Map<number, number>): { bytes: Buffer; sites: CountSite[] } {
  const parts: Buffer[] = [];
  const moved: CountSite[] = [];
  let from = 0;
  let shift = 0;
  for (const site of sites) {
    const digits = Buffer.from(String(counts.get(site.termId)!));
    parts.push(bytes.subarray(from, site.offset), digits);
    moved.push({ termId: site.termId, offset: site.offset + shift, length: digits.length });
    shift += digits.length - site.length;
    from = site.offset + site.length;
  }
  parts.push(bytes.subarray(from));
  return { bytes: Buffer.concat(parts), sites: moved };
}
