import type { Statement } from 'better-sqlite3';
import type { Db } from './connection.js';
import type { GroupCommit } from './groupCommit.js';

/** The FTS5 trigram indexes: of every post's texts (migration 0008), of each event's texts by month (0018). */
const INDEXES = ['posts_search', 'events_search'] as const;

/** How long the writer must have had nothing to write before a merge step runs. */
const MERGE_AFTER_IDLE_MS = 1_000;

/** Pages of merged index (4 KB each) a step writes at most, so that a step holds the event loop a few ms at most. */
const PAGES_PER_STEP = 64;

/**
 * Merges the segments that writes leave in the trigram indexes, while nothing is being written. Each batch of writes
 * flushes a segment of its own into each index, and FTS5 merges them four of a level at a time, and only as fast as
 * new data comes (seven events created one at a time left seven segments), so that a search, which probes every
 * segment for each key it asks for, slows down as a calendar is edited: 9,000 creates on a calendar of 10,000 events
 * left 16 segments in each index, and the page and total of a search in the default window took 890–1,240 µs instead
 * of 305–450 with one segment (by hand). Once the writer has been idle for MERGE_AFTER_IDLE_MS, steps of FTS5's
 * `merge` command join the segments of a level two at a time (`usermerge` 2): those 16 became 3, one per level, in a
 * single step of 2–5 ms, and the search took 380–650 µs. Only the small, recent segments are rewritten, never the
 * whole index as `optimize` does after a bulk load.
 *
 * A step runs alone, in a transaction of its own (GroupCommit.alone): no write waits for it, joins it or fails with
 * it, and a write arriving meanwhile puts the next step off until the writer is idle again. It never waits for the
 * lock of another process either: a busy lock, like a full disk, ends the merging until the next write.
 */
export class IdleMerges {
  private timer: NodeJS.Timeout | null = null;
  private lastWrite = 0;
  private stopped = false;
  /** `usermerge` is kept in each index's configuration once a step committed it. */
  private configured = false;
  private readonly totalChanges: Statement<[], number>;
  private readonly steps: { setUp: Statement; merge: Statement }[];

  constructor(private readonly db: Db, private readonly group: GroupCommit) {
    this.totalChanges = db.prepare<[], number>('SELECT total_changes()').pluck();
    this.steps = INDEXES.map((index) => ({
      // kept in the index's configuration: it changes only what the `merge` command merges, not FTS5's own merges
      setUp: db.prepare(`INSERT INTO ${index} (${index}, rank) VALUES ('usermerge', 2)`),
      merge: db.prepare(`INSERT INTO ${index} (${index}, rank) VALUES ('merge', ${PAGES_PER_STEP})`),
    }));
  }

  /** A batch was written: its segments are merged once the writer has been idle for long enough. */
  wrote(): void {
    this.lastWrite = performance.now();
    if (this.timer === null && !this.stopped) this.after(MERGE_AFTER_IDLE_MS);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private after(ms: number): void {
    this.timer = setTimeout(() => this.step(), ms);
    this.timer.unref();
  }

  private step(): void {
    this.timer = null;
    if (this.stopped) return;
    const idleFor = performance.now() - this.lastWrite;
    if (idleFor < MERGE_AFTER_IDLE_MS) return this.after(MERGE_AFTER_IDLE_MS - idleFor);
    const busyTimeout = this.db.pragma('busy_timeout', { simple: true }) as number;
    let merged: boolean | undefined;
    try {
      this.db.pragma('busy_timeout = 0');
      merged = this.group.alone(() => this.merge());
      if (merged !== undefined) this.configured = true;
    } catch {
      return; // the next write starts the merging again
    } finally {
      this.db.pragma(`busy_timeout = ${busyTimeout}`);
    }
    // undefined: a batch was being made meanwhile; true: there may be more to merge
    if (merged !== false) this.after(merged === undefined ? MERGE_AFTER_IDLE_MS : 0);
  }

  /** One step on each index: whether any merged something (two changes or more, as FTS5's documentation says). */
  private merge(): boolean {
    let merged = false;
    for (const { setUp, merge } of this.steps) {
      if (!this.configured) setUp.run();
      const before = this.totalChanges.get()!;
      merge.run();
      if (this.totalChanges.get()! - before >= 2) merged = true;
    }
    return merged;
  }
}
