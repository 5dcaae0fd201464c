import { setImmediate as nextTurn } from 'node:timers/promises';
import { ChangeTracker, MAX_CHANGES_READ, type LoggedChange } from './changes.js';

/**
 * A process's view of the data's generation, as one token: equal tokens mean that nothing an answer can depend on
 * changed in between. Two things move it: a new change log sequence (any write of any process or node), and a
 * scheduled record falling due (its effective status turns to `publish` with no write at all). Engines feed it the
 * latest sequence they read; it asks for the next due time only when one of the two moved. What moved is passed on to
 * `changes`, which the caches consult to retire only the answers a change can alter.
 */
export class GenerationTracker {
  readonly changes = new ChangeTracker();
  private seq = -1;
  private epoch = 0;
  private nextDue: string | null = null;

  /**
   * `rowsFrom(seq)`: the change log rows from `seq` on, oldest first, as `readChanges` checks them (called only when
   * the sequence moved).
   */
  advance(seq: number, rowsFrom: (seq: number) => LoggedChange[] | null, nowUtc: string, nextDue: () => string | null): string {
    if (seq !== this.seq) {
      this.changes.observe(seq, this.seq < 0 || seq < this.seq ? null : rowsFrom(this.changes.lastSeq), false);
      this.seq = seq;
      this.nextDue = nextDue();
    } else if (this.nextDue !== null && nowUtc >= this.nextDue) {
      this.epoch++;
      this.changes.observe(this.seq, [], true);
      this.nextDue = nextDue();
    }
    return `${this.seq}.${this.epoch}`;
  }
}

/**
 * The rows after `from` among change log rows read from `from` on (at most MAX_CHANGES_READ + 1, oldest first), or
 * null when they cannot be trusted to be all of them: the row `from` itself is gone (pruned while the process was
 * idle) or there were too many to read.
 */
export function readChanges(from: number, rows: LoggedChange[]): LoggedChange[] | null {
  if (rows.length === 0 || rows[0]!.seq !== from || rows.length > MAX_CHANGES_READ) return null;
  return rows.slice(1);
}

let wireSecond = -1;
let wireText = '';
/** The current UTC time as the data layer writes times (`YYYY-MM-DD HH:MM:SS`), formatted once per second. */
export function utcNowWire(): string {
  const second = Math.floor(Date.now() / 1000);
  if (second !== wireSecond) {
    wireSecond = second;
    wireText = new Date(second * 1000).toISOString().slice(0, 19).replace('T', ' ');
  }
  return wireText;
}

/**
 * The database generation as seen by this process, read as seldom as exactness allows: a request needs a reading that
 * started after it arrived (an older one could miss a write acknowledged just before). A reading starts once the
 * requests read from the network with the first one have been seen, after the current turn of the event loop: every
 * request of a turn shares it. It does not wait for the reading of an earlier turn: a request never waits for more
 * than one round trip (PostgreSQL), and an engine applies readings that end out of order by their start (see
 * PostgresEngine.generation).
 */
export class CoalescedReader<T> {
  /** The reading that has not started yet: it starts after every request that joins it arrived. */
  private next: Promise<T> | null = null;

  constructor(private readonly read: () => Promise<T>) {}

  get(): Promise<T> {
    if (this.next === null) {
      this.next = nextTurn().then(() => {
        this.next = null;
        return this.read();
      });
    }
    return this.next;
  }
}
