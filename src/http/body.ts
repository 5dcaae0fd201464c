import { bodyParser } from '@koa/bodyparser';
import type { Middleware } from 'koa';
import { ApiError, invalidParams } from '../errors.js';
import { parseTextTree, textTreeOf, undecodablePair, type TextTree } from './params.js';
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
      raw = { kind: 'form', value: textTreeOf(await multipartFields(ctx.req, ctx.get('Content-Type'), limitBytes)) };
    } else {
      await parse(ctx, async () => {
        const text = ctx.request.rawBody;
        // bytes that are not UTF-8 reach us as U+FFFD: refuse them rather than store mangled text
        if (text !== undefined && text.includes('\uFFFD')) throw notUtf8();
        if (text !== undefined && ctx.request.is('application/x-www-form-urlencoded')) {
          if (occurrencesOver(text, '&', MAX_FORM_FIELDS - 1)) throw tooManyFields();
          const undecodable = undecodablePair(text);
          if (undecodable !== null) throw invalidParams({ [undecodable]: 'Not valid percent-encoded UTF-8.' });
          raw = { kind: 'form', value: parseTextTree(text) };
        } else if (text !== undefined && text !== '') {
          const shape = shapeOf(ctx.request.body);
          if (shape.depth > MAX_DEPTH) {
            throw new ApiError(400, 'rest_invalid_json', `Invalid JSON body passed: nested deeper than ${MAX_DEPTH} levels.`, { json_error_code: 1, json_error_message: 'Maximum stack depth exceeded' });
          }
          if (shape.members > MAX_JSON_MEMBERS) {
            throw new ApiError(400, 'rest_invalid_body', `The request body's objects have more than ${MAX_JSON_MEMBERS} members: no request of this API needs as many.`);
          }
          raw = { kind: 'json', value: ctx.request.body };
        }
      });
    }
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
 * The text fields of a `multipart/form-data` body (read up to `limitBytes`), in their order, to be read exactly as a
 * URL-encoded form's (`venue[venue]=Hall`, `categories[]=3`). Its files are left out: PHP puts them apart from the
 * parameters, and no operation of this API reads one.
 */
async function multipartFields(body: AsyncIterable<Buffer>, contentType: string, limitBytes: number): Promise<[string, string][]> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limitBytes) throw tooLarge();
    chunks.push(chunk);
  }
  const bytes = Buffer.concat(chunks);
  // each field opens with the boundary, and the body closes with it: counted before the parser spends 9 µs a field
  const boundary = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  if (boundary && occurrencesOver(bytes, `--${boundary[1] ?? boundary[2]}`, MAX_FORM_FIELDS + 1)) throw tooManyFields();
  let form: FormData;
  try {
    // the multipart parser of Node's own fetch (undici)
    form = await new Response(bytes, { headers: { 'Content-Type': contentType } }).formData();
  } catch {
    throw new ApiError(400, 'rest_invalid_body', 'The multipart/form-data body could not be read: it needs a boundary in its Content-Type and parts that end with it.');
  }
  const fields: [string, string][] = [];
  for (const [name, value] of form) {
    if (typeof value !== 'string') continue;
    if (name.includes('\uFFFD') || value.includes('\uFFFD')) throw notUtf8();
    fields.push([name, value]);
  }
  return fields;
}

/** The methods whose bodies are read (WordPress reads all four). */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** 413; the connection closes after it, so the rest of a body too large is never read. */
const tooLarge = (): ApiError =>
  new ApiError(413, 'rest_request_too_large', 'The request body is larger than this server accepts.', {}, { Connection: 'close' });

/** No request of this API nests deeper than a few levels; deeper bodies are refused before anything walks them. */
const MAX_DEPTH = 32;

/**
 * The most members a JSON body's objects may have in all, and the most fields a form may have, PHP's own limit
 * (`max_input_vars`), beyond which it drops them. No request of this API comes near either; past them a body is
 * refused before anything walks it: a megabyte of 90,000 members or 170,000 fields held the event loop for 0.3–0.6 s
 * while the parameters were read, every other request waiting. (The items of a list are counted by the list's own
 * limit, which names the parameter: 400 `rest_too_many_items`.)
 */
const MAX_JSON_MEMBERS = 10_000;
const MAX_FORM_FIELDS = 1000;

const tooManyFields = (): ApiError => new ApiError(400, 'rest_invalid_body', `The form has more than ${MAX_FORM_FIELDS} fields: no request of this API needs as many.`);

/** Whether `text` holds `needle` more than `limit` times, counted no further than that. */
function occurrencesOver(text: string | Buffer, needle: string, limit: number): boolean {
  let count = 0;
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) {
    if (++count > limit) return true;
  }
  return false;
}

/**
 * The nesting depth of a parsed JSON value and the members of its objects, measured without recursion (so any depth
 * is safe to measure) and no further than the first limit passed. Scalars are not walked into.
 */
function shapeOf(value: unknown): { depth: number; members: number } {
  let depth = 0;
  let members = 0;
  const stack: [object, number][] = value !== null && typeof value === 'object' ? [[value, 1]] : [];
  while (stack.length > 0) {
    const [item, level] = stack.pop()!;
    depth = Math.max(depth, level);
    if (depth > MAX_DEPTH) break;
    if (Array.isArray(item)) {
      for (const child of item) if (child !== null && typeof child === 'object') stack.push([child, level + 1]);
      continue;
    }
    // member by member: Object.values of 90,000 members took three times as long
    for (const key in item) {
      if (++members > MAX_JSON_MEMBERS) return { depth, members };
      const child = (item as Record<string, unknown>)[key];
      if (child !== null && typeof child === 'object') stack.push([child, level + 1]);
    }
  }
  return { depth, members };
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
