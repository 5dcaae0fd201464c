/**
 * The one error type of Almanac: it becomes WordPress's `{code, message, data: {status, …}}`. It is an answer, not a
 * fault: it carries no stack trace (capturing one cost more than the rest of a request that answers 404).
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly data: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
    /** The data WordPress's WP_Error held for this code before `data` (its `add_data` keeps each earlier one). */
    readonly additionalData: unknown[] = [],
  ) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
  }

  toBody(): { code: string; message: string; data: Record<string, unknown> & { status: number }; additional_data?: unknown[] } {
    const body = { code: this.code, message: this.message, data: { status: this.status, ...this.data } };
    return this.additionalData.length > 0 ? Object.assign(body, { additional_data: this.additionalData }) : body;
  }
}

/** 400 `rest_invalid_param` for parameters a validator refused, each with its reason. */
export function invalidParams(reasons: Record<string, string>, details: Record<string, unknown> | [] = []): ApiError {
  return new ApiError(400, 'rest_invalid_param', `Invalid parameter(s): ${Object.keys(reasons).join(', ')}`, { params: reasons, details });
}

/** 400 `rest_invalid_param` with WordPress's plain reason, "Invalid parameter." */
export function invalidParam(...names: string[]): ApiError {
  return invalidParams(Object.fromEntries(names.map((n) => [n, 'Invalid parameter.'])));
}

export function missingParams(names: string[]): ApiError {
  return new ApiError(400, 'rest_missing_callback_param', `Missing parameter(s): ${names.join(', ')}`, { params: names });
}

export const noRoute = (): ApiError => new ApiError(404, 'rest_no_route', 'No route was found matching the URL and request method.');

/** 401 for anonymous callers, 403 for authenticated ones, as WordPress's permission callbacks answer. */
export function forbidden(authenticated: boolean): ApiError {
  return new ApiError(authenticated ? 403 : 401, 'rest_forbidden', 'Sorry, you are not allowed to do that.');
}

/** The database cannot be reached or is restarting: 503 with `Retry-After`; the engine reconnects by itself. */
export class DatabaseUnavailable extends Error {
  constructor(message = 'The database is unavailable.', readonly retryAfterSeconds = 2, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * Every connection this process may hold to the database stayed busy with other requests for as long as a request
 * waits for one: the database is overloaded or slow, not lost. 503 with a short `Retry-After`.
 */
export class DatabaseBusy extends DatabaseUnavailable {
  constructor(options?: { cause?: unknown }) {
    super('Every connection to the database stayed busy.', 1, options);
  }
}

/** The database's storage is full: 507 until space frees (no restart needed). */
export class StorageFull extends Error {
  constructor(message = 'The database has no space left to store this change.', options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * 401 / 403 `rest_forbidden_context`: `context=edit` from a caller who may not edit what is asked for, as WordPress's
 * post and term routes refuse it (`message` is theirs: "…edit this post", "…edit terms in this taxonomy", …).
 */
export function forbiddenContext(authenticated: boolean, message: string): ApiError {
  return new ApiError(authenticated ? 403 : 401, 'rest_forbidden_context', message);
}
