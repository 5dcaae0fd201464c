import type { Engine } from '../db/engine.js';
import { ApiError } from '../errors.js';
import type { Handlers } from '../http/operation.js';

/** `GET /healthz`: the database answers a read, or 503. */
export function healthHandlers(engine: Engine): Pick<Handlers, 'getHealth'> {
  return {
    getHealth: async () => {
      let version: number;
      try {
        version = await engine.schemaVersion();
      } catch {
        throw new ApiError(503, 'rest_database_unavailable', 'The database does not answer.', {}, { 'Retry-After': '2' });
      }
      return { status: 200, body: { status: 'ok', database: 'ok', schema_version: version } };
    },
  };
}
