import type { Db } from './connection.js';

interface Pending {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Group commit: the writes that arrive while the previous commit is being made durable share the next one. Each
 * write runs in a savepoint of its own inside one IMMEDIATE transaction, in arrival order, so a write that fails is
 * rolled back alone and every write sees the ones before it, exactly as if they had run one after the other. No
 * promise settles before COMMIT has returned — with `synchronous=FULL`, before the write-ahead log is on disk — so
 * nothing is acknowledged that a crash could lose; one fsync serves a whole batch instead of one write.
 */
export class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;
  private readonly begin;
  private readonly commit;
  private readonly rollback;

  constructor(private readonly db: Db) {
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
    this.rollback = db.prepare('ROLLBACK');
  }

  /** Runs `work` (synchronous) in the next batch; resolves with its result once that batch is durable. */
  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // after the poll phase: every request read meanwhile joins this batch
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    const outcomes: Outcome[] = [];
    try {
      this.begin.run();
      for (const pending of batch) {
        try {
          outcomes.push({ ok: true, value: this.db.transaction(pending.work)() }); // nested: a savepoint
        } catch (error) {
          outcomes.push({ ok: false, error });
        }
        // SQLite rolls the whole transaction back on some errors (disk full, I/O): then nothing of the batch stands
        if (!this.db.inTransaction) throw outcomes.at(-1)!.ok ? new Error('the transaction ended early') : (outcomes.at(-1) as { error: unknown }).error;
      }
      this.commit.run();
    } catch (error) {
      if (this.db.inTransaction) this.rollback.run();
      for (const pending of batch) pending.reject(error);
      return;
    }
    batch.forEach((pending, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) pending.resolve(outcome.value);
      else pending.reject(outcome.error);
    });
  }
}

const perConnection = new WeakMap<Db, GroupCommit>();

/** The group commit of a connection (one per connection, shared by every repository on it). */
export function groupCommit(db: Db): GroupCommit {
  let group = perConnection.get(db);
  if (!group) perConnection.set(db, (group = new GroupCommit(db)));
  return group;
}
