import type { Db } from './connection.js';

/**
 * Whether the database may have changed since a moment: `data_version` moves when another connection (any process)
 * commits, `total_changes()` when this connection writes (triggers included). Equal generations mean equal contents,
 * so what was read under one still holds. Only `data_version` takes a read lock; `changes` is free.
 */
export interface Generation {
  version: number;
  changes: number;
}

interface Readers {
  version: () => number;
  /** total_changes() less the rows of unseen writes. */
  changes: () => number;
  totalChanges: () => number;
  unseen: number;
}

const readers = new WeakMap<Db, Readers>();

function readersOf(db: Db): Readers {
  let r = readers.get(db);
  if (!r) {
    const version = db.prepare<[], number>('PRAGMA data_version').pluck();
    const changes = db.prepare<[], number>('SELECT total_changes()').pluck();
    const made: Readers = { version: () => version.get()!, changes: () => changes.get()! - made.unseen, totalChanges: () => changes.get()!, unseen: 0 };
    readers.set(db, (r = made));
  }
  return r;
}

/**
 * Runs a write on this connection that no answer and no credential check depends on (when an application password
 * was last used), so it leaves this connection's generation as it was: bookkeeping does not retire every cached
 * answer and remembered caller. Other processes still see it as a change (`data_version` cannot tell tables apart).
 */
export function unseenWrite<T>(db: Db, work: () => T): T {
  const r = readersOf(db);
  const before = r.totalChanges();
  try {
    return work();
  } finally {
    r.unseen += r.totalChanges() - before;
  }
}

/** Reads the generation of a connection (one read lock). */
export function generationOf(db: Db): () => Generation {
  const r = readersOf(db);
  return () => ({ version: r.version(), changes: r.changes() });
}

/** This connection's own writes so far (no lock). */
export function changesOf(db: Db): () => number {
  return readersOf(db).changes;
}
