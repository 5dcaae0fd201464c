/**
 * Faults of the storage under the database, as SQLite reports them, which no request can mend and a retry later may:
 * - `full`: the disk (or the file's size limit) is full (SQLITE_FULL); space that frees ends it, without a restart;
 * - `read-only`: the file or its folder cannot be written (SQLITE_READONLY, _DIRECTORY, …);
 * - `busy`: another process held the write lock longer than the busy timeout (SQLITE_BUSY, SQLITE_LOCKED).
 */
export type StorageFault = 'full' | 'read-only' | 'busy';

/** The storage fault an error of SQLite (or of the file system, making its log durable) reports, or null for any other error. */
export function storageFault(err: unknown): StorageFault | null {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return null;
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT') return 'full';
  if (code.startsWith('SQLITE_READONLY') || code === 'EROFS') return 'read-only';
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'busy';
  return null;
}
