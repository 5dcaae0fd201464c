import { ApiError } from '../http/errors.js';
import type { Handlers, OperationId } from '../http/operation.js';

/**
 * Operations of the contract whose issue is still open: they answer 501 `rest_not_implemented` (declared in the
 * spec and listed in README.md). Each disappears from this list when its handler is written.
 */
export const NOT_IMPLEMENTED = ['listEvents', 'listVenues', 'listOrganizers'] as const satisfies readonly OperationId[];

type Pending = (typeof NOT_IMPLEMENTED)[number];

export function notImplementedHandlers(): Pick<Handlers, Pending> {
  const refuse = () => {
    throw new ApiError(501, 'rest_not_implemented', 'This operation is not implemented yet.');
  };
  return Object.fromEntries(NOT_IMPLEMENTED.map((id) => [id, refuse])) as unknown as Pick<Handlers, Pending>;
}
