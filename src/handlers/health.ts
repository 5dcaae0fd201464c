import type { Db } from '../db/connection.js';
import { ApiError } from '../http/errors.js';
import type { Handlers } from '../http/operation.js';

/** `GET /healthz`: the database answers a read, or 503. */
export function healthHandlers(db: Db): Pick<Handlers, 'getHealth'> {
  const probe = db.prepare<[], { version: number }>('SELECT user_version AS version FROM pragma_user_version');
  return {
    getHealth: () => {
      let version: number;
      try {
        version = probe.get()!.version;
      } catch {
        throw new ApiError(503, 'rest_database_unavailable', 'The database does not answer.');
      }
      return { status: 200, body: { status: 'ok', database: 'ok', schema_version: version } };
    },
  };
}
