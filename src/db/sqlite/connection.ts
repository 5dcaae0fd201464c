import Database from 'better-sqlite3';
import { unlocks } from '../../domain/postRules.js';
import { collationKey, foldForSearch } from '../../domain/text.js';
import { datedKeys } from './datedSearch.js';
import { dirname } from 'node:path';
import { makeFolder } from '../../paths.js';

export type Db = Database.Database;

/**
 * Opens the SQLite file (creating its folder) with the settings Almanac relies on: WAL so readers never block the
 * writer, `synchronous=FULL` so an acknowledged write is on disk, foreign keys on, a busy timeout so several
 * processes can share the file, and statement journals in memory.
 */
export function openDatabase(path: string): Db {
  if (path !== ':memory:') makeFolder(dirname(path));
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  // A statement that fires triggers, or runs inside a unit's savepoint, copies the pages it changes that the open
  // transaction had already changed to a statement journal, so that it can be undone alone. Past 64 KiB that journal
  // is a temporary file unless temp_store says memory: a new event in a batch of group commit touches enough pages of
  // the search indexes to spill, and writing that file cost some 50 system calls per event.
  db.pragma('temp_store = MEMORY');
  return withFunctions(db);
}

/**
 * The page cache of a read connection for cheap reads (a record and its links), in KiB. better-sqlite3 builds SQLite
 * with 16 MiB per connection, and the engine holds a dozen read connections: at a million events their caches held
 * 150 MB of the process's memory, while a read by id was as fast with 200 KiB (the operating system caches the file).
 */
export const CHEAP_READ_CACHE_KIB = 2048;
/** The page cache of a read thread's connection: a search reads long runs of the trigram index (9 % slower with 2 MiB). */
export const LIST_READ_CACHE_KIB = 16_384;

/**
 * How much of the file a read connection maps into memory (ALMANAC_SQLITE_MMAP_MB), in bytes; none by default. Mapped,
 * a page is read where the operating system caches it rather than copied into the connection's page cache first: by
 * hand on 100,000 events, the statements of a read by id took 65 µs instead of 79 (the event's row 23 instead of 30),
 * as with a page cache of 256 MiB. But each connection maps the file for itself, and the RSS counts every mapping's
 * pages: a dozen connections on a file of 110 MB showed 1.37 GB of RSS (1.22 of it those pages, held once by the
 * operating system) against 235 MB unmapped, and over HTTP the gain stayed inside the machine's noise. The writer
 * always reads through its own cache.
 */
export const DEFAULT_READ_MMAP_BYTES = 0;

/** Opens the SQLite file for reading only: nothing is written, not even the journal mode. */
export function openReadOnly(path: string, { cacheKiB = CHEAP_READ_CACHE_KIB, mmapBytes = DEFAULT_READ_MMAP_BYTES }: { cacheKiB?: number; mmapBytes?: number } = {}): Db {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  db.pragma(`cache_size = ${-cacheKiB}`);
  db.pragma(`mmap_size = ${mmapBytes}`);
  return withFunctions(db);
}

/** A private database in memory: a copy of `image` (a serialised database), or an empty one. */
export function openInMemory(image?: Buffer): Db {
  if (image) {
    // the header of a WAL database says so (file format versions 2 at offsets 18 and 19), and a database in memory
    // cannot have a WAL: the copy says "rollback journal" (1) instead
    image = Buffer.from(image);
    image[18] = 1;
    image[19] = 1;
  }
  const db = new Database(image ?? ':memory:');
  db.pragma('foreign_keys = ON');
  return withFunctions(db);
}

/**
 * SQL functions every connection has: search and the collation keys fold text the same way in SQL and in JavaScript,
 * lists compare a request's password with records' passwords as reads by id do (in constant time), and the dated
 * search index's triggers file events' texts under their months (datedSearch.ts).
 */
function withFunctions(db: Db): Db {
  db.function('almanac_fold', { deterministic: true }, (text: unknown) => (typeof text === 'string' ? foldForSearch(text) : text));
  db.function('almanac_collate', { deterministic: true }, (text: unknown) => (typeof text === 'string' ? collationKey(text) : text));
  db.function('almanac_unlocks', { deterministic: true }, (password: unknown, given: unknown) =>
    typeof password === 'string' && typeof given === 'string' && unlocks({ password }, given) ? 1 : 0);
  db.function('almanac_dated_keys', { deterministic: true }, (month: unknown, folded: unknown) =>
    (typeof month === 'number' || typeof month === 'bigint') && typeof folded === 'string' ? datedKeys(Number(month), folded) : null);
  return db;
}
