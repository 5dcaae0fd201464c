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

const readers = new WeakMap<Db, { version: () => number; changes: () => number }>();

function readersOf(db: Db): { version: () => number; changes: () => number } {
  let r = readers.get(db);
  if (!r) {
    const version = db.prepare<[], number>('PRAGMA data_version').pluck();
    const changes = db.prepare<[], number>('SELECT total_changes()').pluck();
    readers.set(db, (r = { version: () => version.get()!, changes: () => changes.get()! }));
  }
  return r;
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
