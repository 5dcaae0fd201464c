/**
 * Faults of the database that are no fault of the request: each engine turns its own errors into these, and the
 * response stage answers them with a clear 503 or 507 (never a 500 with a stack).
 */

/** The database cannot be reached or is restarting: 503 with `Retry-After`; the engine reconnects by itself. */
export class DatabaseUnavailable extends Error {
  constructor(message = 'The database is unavailable.', readonly retryAfterSeconds = 2, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The database's storage is full: 507 until space frees (no restart needed). */
export class StorageFull extends Error {
  constructor(message = 'The database has no space left to store this change.', options?: { cause?: unknown }) {
    super(message, options);
  }
}
