/**
 * Faults of the storage under the database, as SQLite reports them, which no request can mend: a retry later may,
 * but for damage, which needs a restore:
 * - `full`: the disk (or the file's size limit) is full (SQLITE_FULL); space that frees ends it, without a restart;
 * - `read-only`: the file or its folder cannot be written (SQLITE_READONLY, _DIRECTORY, …);
 * - `busy`: another process held the write lock longer than the busy timeout (SQLITE_BUSY, SQLITE_LOCKED);
 * - `damaged`: the file's pages do not make a database (SQLITE_CORRUPT, SQLITE_NOTADB; PostgreSQL's XX001, XX002): a
 *   disk, a copy or another program damaged it, and only a restore from a backup mends it;
 * - `io`: the storage reports an input/output error (SQLITE_IOERR, EIO; PostgreSQL's 58030), or the file cannot be
 *   opened (SQLITE_CANTOPEN: removed, its permissions changed, or no file descriptor left for a new connection).
 */
export type StorageFault = 'full' | 'read-only' | 'busy' | 'damaged' | 'io';

/**
 * The storage fault an error of SQLite (or of the file system, making its log durable; or PostgreSQL's damage and I/O
 * errors, which its engine passes on as they are) reports, or null for any other error.
 */
export function storageFault(err: unknown): StorageFault | null {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return null;
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT') return 'full';
  if (code.startsWith('SQLITE_READONLY') || code === 'EROFS') return 'read-only';
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'busy';
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB' || code === 'XX001' || code === 'XX002') return 'damaged';
  if (code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_CANTOPEN') || code === 'EIO' || code === '58030') return 'io';
  return null;
}
