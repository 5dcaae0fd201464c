import { bodyParser } from '@koa/bodyparser';
import type { Middleware } from 'koa';
import { ApiError } from './errors.js';
import { parseTextTree, type TextTree } from './params.js';

/** A request body: JSON as parsed, a form body as a text tree (normalised later against the operation). */
export type RawBody = { kind: 'json'; value: unknown } | { kind: 'form'; value: TextTree } | { kind: 'none' };

/**
 * Reads JSON and form bodies of POST, PUT, PATCH and DELETE (WordPress reads all four) up to `limitBytes`.
 * Invalid JSON → 400 `rest_invalid_json`; a body over the limit → 413 `rest_request_too_large`.
 */
export function readBody(limitBytes: number): Middleware {
  const parse = bodyParser({
    enableTypes: ['json', 'form'],
    parsedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'],
    jsonLimit: limitBytes,
    formLimit: limitBytes,
    encoding: 'utf-8',
    jsonStrict: true,
    onError: (err) => {
      throw bodyError(err);
    },
  });
  return async (ctx, next) => {
    let raw: RawBody = { kind: 'none' };
    await parse(ctx, async () => {
      if (ctx.request.rawBody !== undefined && ctx.request.is('application/x-www-form-urlencoded')) {
        raw = { kind: 'form', value: parseTextTree(ctx.request.rawBody) };
      } else if (ctx.request.rawBody !== undefined && ctx.request.rawBody !== '') {
        raw = { kind: 'json', value: ctx.request.body };
      }
    });
    ctx.state.rawBody = raw;
    await next();
  };
}

function bodyError(err: Error & { status?: number; type?: string }): ApiError {
  if (err.status === 413 || err.type === 'entity.too.large') {
    return new ApiError(413, 'rest_request_too_large', 'The request body is larger than this server accepts.');
  }
  if (err.status === 415 || err.type === 'encoding.unsupported' || err.type === 'charset.unsupported') {
    return new ApiError(415, 'rest_unsupported_encoding', 'The request body uses an encoding this server does not read.');
  }
  return new ApiError(400, 'rest_invalid_json', 'Invalid JSON body passed.', { json_error_code: 4, json_error_message: 'Syntax error' });
}
