import Database from 'better-sqlite3';
import { foldForSearch } from '../domain/text.js';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export type Db = Database.Database;

/**
 * Opens the SQLite file (creating its folder) with the settings Almanac relies on: WAL so readers never block the
 * writer, `synchronous=FULL` so an acknowledged write is on disk, foreign keys on, and a busy timeout so several
 * processes can share the file.
 */
export function openDatabase(path: string): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  // search folds text the same way in SQL (migrations, venue and organizer search) and in JavaScript
  db.function('almanac_fold', { deterministic: true }, (text: unknown) => (typeof text === 'string' ? foldForSearch(text) : text));
  return db;
}
