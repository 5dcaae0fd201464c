import type { Engine } from '../db/engine.js';
import { ApiError, DatabaseBusy } from '../errors.js';
import type { Handlers } from '../http/operation.js';

/** `GET /healthz`: the database answers a read, or 503 (unavailable, or every connection busy). */
export function healthHandlers(engine: Engine): Pick<Handlers, 'getHealth'> {
  return {
    getHealth: async () => {
      let version: number;
      try {
        version = await engine.schemaVersion();
      } catch (err) {
        // it answers, but none of this process's connections came free in time: a busy node, said as such
        if (err instanceof DatabaseBusy) throw err;
        throw new ApiError(503, 'rest_database_unavailable', 'The database does not answer.', {}, { 'Retry-After': '2' });
      }
      return { status: 200, body: { status: 'ok', database: 'ok', schema_version: version } };
    },
  };
}
