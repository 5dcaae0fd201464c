import type { Statement } from 'better-sqlite3';
import { ChangeSet } from '../changes.js';
import type { Db } from './connection.js';
import { WriteBatches, type Outcome, type Settles } from '../writeBatches.js';

interface Pending extends Settles {
  work: () => Promise<unknown>;
  /** What the write changes, as it records it while it runs; null for bookkeeping (the change log is not written). */
  changes: ChangeSet | null;
}

/**
 * Group commit: the writes that arrive while the previous commit is being made durable share the next one. Each
 * write runs in a savepoint of its own inside one IMMEDIATE transaction, in arrival order, so a write that fails is
 * rolled back alone and every write sees the ones before it, exactly as if they had run one after the other. No
 * promise settles before the commit is durable, so nothing is acknowledged that a crash could lose; one fsync serves
 * a whole batch instead of one write. `durable` makes it so: given, it is called after COMMIT and waited for (the
 * SQLite engine fsyncs the write-ahead log off the event loop, with the connection at `synchronous=NORMAL`, so
 * requests are answered while the disk works); not given, COMMIT itself must be durable (`synchronous=FULL`).
 *
 * Writes are asynchronous functions, but only this queue uses the writing connection, so a batch runs alone on it
 * however its writes interleave with other work of the process; readers have connections of their own.
 */
export class GroupCommit extends WriteBatches<Pending> {
  private readonly statements: Record<'begin' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'undo', Statement>;

  /**
   * `finish` runs inside the transaction, before COMMIT, when a write that answers depend on succeeded, with what the
   * batch's successful writes changed.
   */
  constructor(private readonly db: Db, private readonly finish: (changes: ChangeSet) => void, private readonly durable: (() => Promise<void>) | null = null) {
    super();
    this.statements = {
      begin: db.prepare('BEGIN IMMEDIATE'),
      commit: db.prepare('COMMIT'),
      rollback: db.prepare('ROLLBACK'),
      savepoint: db.prepare('SAVEPOINT unit'),
      release: db.prepare('RELEASE unit'),
      undo: db.prepare('ROLLBACK TO unit'),
    };
  }

  /** Runs `work` in the next batch; resolves with its result once that batch is durable. */
  run<T>(work: () => Promise<T>, changes: ChangeSet | null): Promise<T> {
    return this.enqueue({ work, changes });
  }

  /**
   * Runs `work` at once in a transaction of its own when no batch is being made or waiting, else not at all (returns
   * undefined): upkeep that no write should wait behind, nor fail with. It runs to its end in this turn of the event
   * loop, so no write can join it. Not made durable: it acknowledges nothing, and the next batch's sync covers it.
   */
  alone<T>(work: () => T): T | undefined {
    if (!this.idle) return undefined;
    const { begin, commit, rollback } = this.statements;
    begin.run();
    try {
      const value = work();
      commit.run();
      return value;
    } catch (error) {
      if (this.db.inTransaction) rollback.run();
      throw error;
    }
  }

  protected async commit(batch: Pending[]): Promise<void> {
    const outcomes: Outcome[] = [];
    const { begin, commit, rollback, savepoint, release, undo } = this.statements;
    try {
      begin.run();
      let changed: ChangeSet | null = null;
      for (const pending of batch) {
        savepoint.run();
        try {
          const value = await pending.work();
          release.run();
          outcomes.push({ ok: true, value });
          if (pending.changes) (changed ??= new ChangeSet()).merge(pending.changes);
        } catch (error) {
          // SQLite rolls the whole transaction back on some errors (disk full, I/O): then nothing of the batch stands
          if (!this.db.inTransaction) throw error;
          undo.run();
          release.run();
          outcomes.push({ ok: false, error });
        }
      }
      if (changed) this.finish(changed);
      commit.run();
      if (this.durable) await this.durable();
    } catch (error) {
      if (this.db.inTransaction) rollback.run();
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
