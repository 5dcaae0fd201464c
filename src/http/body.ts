import { bodyParser } from '@koa/bodyparser';
import type { Middleware } from 'koa';
import { ApiError, invalidParams } from '../errors.js';
import { parseTextTree, undecodablePair, type TextTree } from './params.js';
import type { RoutedRequest } from './route.js';

/** A request body: JSON as parsed, a form body as a text tree (normalised later against the operation). */
export type RawBody = { kind: 'json'; value: unknown } | { kind: 'form'; value: TextTree } | { kind: 'none' };

/**
 * The media types of the bodies this server reads, as WordPress reads them: JSON (`application/…+json` too) and forms,
 * URL-encoded or multipart (PHP reads both into the same parameters).
 */
const READABLE = ['json', '+json', 'urlencoded', 'multipart/form-data'];
const ACCEPTED_MEDIA_TYPES = ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'];

/**
 * Reads JSON and form bodies of POST, PUT, PATCH and DELETE (WordPress reads all four) up to `limitBytes`.
 * Invalid JSON → 400 `rest_invalid_json`; a body over the limit → 413 `rest_request_too_large`; a body of another
 * media type (or of none) sent to an operation that takes one → 415 `rest_unsupported_media_type`, where WordPress
 * would answer as if no body had been sent.
 */
export function readBody(limitBytes: number): Middleware {
  const parse = bodyParser({
    enableTypes: ['json', 'form'],
    detectJSON: (ctx) => Boolean(ctx.request.is('json', '+json')),
    parsedMethods: [...BODY_METHODS],
    jsonLimit: limitBytes,
    formLimit: limitBytes,
    encoding: 'utf-8',
    // any JSON value, as PHP's json_decode reads it: a body that is not an object holds no parameters (dispatch.ts)
    jsonStrict: false,
    onError: (err) => {
      throw bodyError(err);
    },
  });
  return async (ctx, next) => {
    // refused before a byte of it is read; the parser's own check misreads a length of 2^31 or more (it truncates it
    // to 32 bits) and would wait for a body that never comes
    if (BODY_METHODS.has(ctx.method) && Number(ctx.get('Content-Length')) > limitBytes) throw tooLarge();
    const takesBody = (ctx.state.routed as RoutedRequest).operation?.body;
    if (takesBody && hasContent(ctx.request.length, ctx.get('Transfer-Encoding')) && !ctx.request.is(READABLE)) {
      throw unsupportedMediaType(ctx.request.type);
    }
    let raw: RawBody = { kind: 'none' };
    if (takesBody && BODY_METHODS.has(ctx.method) && ctx.request.is('multipart/form-data')) {
      raw = { kind: 'form', value: parseTextTree(await multipartAsForm(ctx.req, ctx.get('Content-Type'), limitBytes)) };
      ctx.state.rawBody = raw;
      return next();
    }
    await parse(ctx, async () => {
      const text = ctx.request.rawBody;
      // bytes that are not UTF-8 reach us as U+FFFD: refuse them rather than store mangled text
      if (text !== undefined && text.includes('\uFFFD')) throw notUtf8();
      if (text !== undefined && ctx.request.is('application/x-www-form-urlencoded')) {
        const undecodable = undecodablePair(text);
        if (undecodable !== null) throw invalidParams({ [undecodable]: 'Not valid percent-encoded UTF-8.' });
        raw = { kind: 'form', value: parseTextTree(text) };
      } else if (text !== undefined && text !== '') {
        if (depthOf(ctx.request.body) > MAX_DEPTH) {
          throw new ApiError(400, 'rest_invalid_json', `Invalid JSON body passed: nested deeper than ${MAX_DEPTH} levels.`, { json_error_code: 1, json_error_message: 'Maximum stack depth exceeded' });
        }
        raw = { kind: 'json', value: ctx.request.body };
      }
    });
    ctx.state.rawBody = raw;
    await next();
  };
}

/** Whether a request carries body bytes: a non-zero length, or a chunked body (whose length is not known up front). */
function hasContent(length: number | undefined, transferEncoding: string): boolean {
  return length === undefined ? transferEncoding !== '' : length > 0;
}

function unsupportedMediaType(type: string): ApiError {
  const sent = type ? `is ${type}, which this server does not read` : 'has no Content-Type';
  const choices = `${ACCEPTED_MEDIA_TYPES.slice(0, -1).join(', ')} or ${ACCEPTED_MEDIA_TYPES.at(-1)}`;
  return new ApiError(415, 'rest_unsupported_media_type', `The request body ${sent}: send ${choices}.`, { accepted: ACCEPTED_MEDIA_TYPES });
}

/** Bytes that are not UTF-8 reach the parsers as U+FFFD: refused rather than stored mangled. */
const notUtf8 = (): ApiError => new ApiError(400, 'rest_invalid_body', 'The request body is not valid UTF-8.');

/**
 * A `multipart/form-data` body (read up to `limitBytes`) as the URL-encoded form of its text fields, in their order,
 * so that it is read exactly as a URL-encoded form is (`venue[venue]=Hall`, `categories[]=3`). Its files are left
 * out: PHP puts them apart from the parameters, and no operation of this API reads one.
 */
async function multipartAsForm(body: AsyncIterable<Buffer>, contentType: string, limitBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limitBytes) throw tooLarge();
    chunks.push(chunk);
  }
  let form: FormData;
  try {
    // the multipart parser of Node's own fetch (undici)
    form = await new Response(Buffer.concat(chunks), { headers: { 'Content-Type': contentType } }).formData();
  } catch {
    throw new ApiError(400, 'rest_invalid_body', 'The multipart/form-data body could not be read: it needs a boundary in its Content-Type and parts that end with it.');
  }
  const pairs: string[] = [];
  for (const [name, value] of form) {
    if (typeof value !== 'string') continue;
    if (name.includes('\uFFFD') || value.includes('\uFFFD')) throw notUtf8();
    pairs.push(`${encodeURIComponent(name)}=${encodeURIComponent(value)}`);
  }
  return pairs.join('&');
}

/** The methods whose bodies are read (WordPress reads all four). */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** 413; the connection closes after it, so the rest of a body too large is never read. */
const tooLarge = (): ApiError =>
  new ApiError(413, 'rest_request_too_large', 'The request body is larger than this server accepts.', {}, { Connection: 'close' });

/** No request of this API nests deeper than a few levels; deeper bodies are refused before anything walks them. */
const MAX_DEPTH = 32;

/** Nesting depth of a parsed JSON value, measured without recursion (so any depth is safe to measure). */
function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== 'object') continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > MAX_DEPTH) return deepest;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return deepest;
}

function bodyError(err: Error & { status?: number; type?: string }): ApiError {
  if (err.status === 413 || err.type === 'entity.too.large') return tooLarge();
  if (err.status === 415 || err.type === 'encoding.unsupported' || err.type === 'charset.unsupported') {
    return new ApiError(415, 'rest_unsupported_encoding', 'The request body uses an encoding this server does not read.');
  }
  // the parser refuses a key "__proto__" (an object's prototype in JavaScript); no field of this API has that name
  if (/forbidden prototype property/.test(err.message)) {
    return new ApiError(400, 'rest_invalid_json', 'Invalid JSON body passed: the key "__proto__" is not accepted.', {
      json_error_code: 4, json_error_message: 'Syntax error',
    });
  }
  return new ApiError(400, 'rest_invalid_json', 'Invalid JSON body passed.', { json_error_code: 4, json_error_message: 'Syntax error' });
}
