import type { ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import { OpenAPIBackend, OpenAPIRouter, type Context, type Document, type Operation, type ParsedRequest, type Request } from 'openapi-backend';
import { hasCapabilities } from '../domain/capabilities.js';
import { parseDateInput, parseZone } from '../domain/dates.js';
import { webUrl, withoutTrailing } from '../domain/text.js';
import { FixedOffsetZone } from 'luxon';
import { ApiError, forbidden, invalidParam, invalidParams, missingParams, noRoute } from '../errors.js';
import { flattenAllOf, setOwn, type SchemaNode } from './params.js';
import { HTTP_METHODS, loadSpec, type HttpMethod } from './spec.js';
import { prefixOf, type Lang, type RequestState } from '../domain/context.js';
import type { Handlers } from './operation.js';

/** What Almanac needs to know about one operation, computed once from the dereferenced spec. */
export interface OperationMeta {
  operationId: string;
  method: HttpMethod;
  path: string;
  /** Path parameters declared as integers: a non-digit segment is not a route. */
  integerPathParams: string[];
  queryParams: Map<string, SchemaNode>;
  /** The request body schema with `allOf` folded, if the operation takes a body. */
  body: SchemaNode | null;
  /** Every parameter name in declaration order (path, query, body), for error messages. */
  order: string[];
  /** Parameters whose only rule is their type: WordPress names the type when they fail. */
  typeOnly: Set<string>;
  capabilities: string[];
  /**
   * Path parameters that must name an existing record (`x-must-exist`): part of validation, as in the plugin; checked
   * before the handler only for an operation that needs a capability (see describeOperation).
   */
  mustExist: { name: string; kind: RecordKind }[];
}

/** Kinds of record a parameter can be required to name (`x-must-exist` in the spec). */
export type RecordKind = 'event' | 'venue' | 'organizer' | 'category' | 'tag';
/** Whether a path parameter's value names an existing record of that kind, for the request's language. */
export type RecordResolver = (kind: RecordKind, value: number | string, state: RequestState) => Promise<boolean>;

const RULE_KEYWORDS = ['format', 'minimum', 'maximum', 'minLength', 'maxLength', 'enum', 'pattern', 'minItems', 'maxItems', 'anyOf', 'oneOf'];
function isTypeOnly(schema: SchemaNode | undefined): boolean {
  return Boolean(schema && ['boolean', 'integer', 'number', 'string'].includes(schema.type ?? '') && !RULE_KEYWORDS.some((k) => k in schema));
}

/** Custom formats of the spec; the date and timezone ones are parsed by the same code that later reads the values. */
const FORMATS: Record<string, (value: string) => boolean> = {
  'wp-date-input': (v) => parseDateInput(v, FixedOffsetZone.utcInstance) !== null,
  'wp-timezone': (v) => v === '' || parseZone(v) !== null,
  'wp-url-or-empty': (v) => v === '' || webUrl(v) !== null,
};

export interface Backend {
  api: OpenAPIBackend;
  meta: Map<string, OperationMeta>;
  /** The operation for a method and path, or null (also when an integer path parameter is not digits). */
  match(method: string, path: string): OperationMeta | null;
  /** The spec path a concrete path belongs to, whatever the method. */
  matchPath(path: string): string | null;
}

type LanguageParams = { xlate_language?: Lang; wpml_language?: Lang };

export async function createBackend(handlers: Handlers, options: { validateResponses: boolean; exists: RecordResolver }): Promise<Backend> {
  const api = new OpenAPIBackend({
    definition: structuredClone(loadSpec()) as unknown as Document,
    strict: true,
    // quick: validators compile on demand (response validators are only used in tests, and compiling all of
    // them takes seconds); the definition is still validated and request validators precompiled below.
    quick: true,
    coerceTypes: true,
    ajvOpts: { allErrors: true, useDefaults: true, strict: false },
    customizeAjv: (ajv) => {
      addFormats.default(ajv);
      for (const [name, check] of Object.entries(FORMATS)) ajv.addFormat(name, { type: 'string', validate: check });
      return ajv;
    },
  });

  const meta = new Map<string, OperationMeta>();

  api.register({
    ...(handlers as unknown as Record<string, (c: Context, state: RequestState) => unknown>),
    notFound: () => {
      throw noRoute();
    },
    methodNotAllowed: () => {
      throw noRoute();
    },
    validationFail: (c: Context) => {
      throw validationError(c.validation.errors ?? [], meta.get(c.operation.operationId!)!);
    },
    preOperationHandler: async (c: Context, state: RequestState) => {
      c.request.params = c.validation.coerced.params ?? c.request.params;
      c.request.query = c.validation.coerced.query ?? c.request.query;
      // WordPress reads a parameter from the body before the query string (WP_REST_Request::get_parameter_order); the
      // body is an object only where the operation declares one (dispatch.ts), validated just now (BodyLanguage)
      const query = c.request.query as LanguageParams;
      const body = (c.request.body ?? {}) as LanguageParams;
      const chosen = body.xlate_language ?? body.wpml_language ?? query.xlate_language ?? query.wpml_language;
      if (chosen) {
        state.lang = chosen;
        state.linkPrefix = prefixOf(chosen);
        state.restBase = `${state.site}${state.linkPrefix}/wp-json/tribe/events/v1`;
      }
      const op = meta.get(c.operation.operationId!)!;
      // WordPress validates these parameters (the record must exist) before it checks permissions.
      const params = c.request.params as Record<string, number | string>;
      const unknown: string[] = [];
      for (const p of op.mustExist) if (!(await options.exists(p.kind, params[p.name]!, state))) unknown.push(p.name);
      if (unknown.length > 0) throw invalidParam(...unknown);
      if (!hasCapabilities(state.user?.role ?? null, op.capabilities)) throw forbidden(state.user !== null);
    },
    postResponseHandler: (c: Context, _state: RequestState, sink: ResponseSink) => {
      const reply = c.response as { status: number; body: unknown; headers?: Record<string, string> };
      if (options.validateResponses) {
        const check = c.api.validateResponse(reply.body, c.operation, reply.status);
        if (check.errors) {
          throw new Error(`${c.operation.operationId} answered ${reply.status} with a body that does not match the spec: ${JSON.stringify(check.errors.slice(0, 5))}`);
        }
      }
      sink(reply);
    },
  });
  // openapi-backend verifies credentials through security handlers before validation; WordPress checks the
  // request first and permissions last. Credentials are verified by the authentication middleware for every
  // route, and capabilities in preOperationHandler, after validation, so this scheme always passes.
  api.registerSecurityHandler('applicationPassword', () => true);
  await api.loadDocument();
  api.validateDefinition(); // throws on anything that is not valid OpenAPI 3.0
  await api.init();
  api.validator.preCompileRequestValidators();
  compileRoutes(api);
  // openapi-backend parses a request three times (to route, to validate, with the coerced values): each is cheap
  // this way, cheaper than remembering the parse per request (a WeakMap, tried: 3 µs more per request)
  api.router.parseRequest = parseDispatched(api);

  for (const op of api.getOperations() as Operation[]) {
    const m = describeOperation(op);
    meta.set(m.operationId, m);
  }

  const match = (method: string, path: string): OperationMeta | null => {
    const op = api.matchOperation({ method, path, headers: {} });
    if (!op) return null;
    const m = meta.get(op.operationId!)!;
    if (m.integerPathParams.length > 0) {
      const values = pathValues(op.path, path); // the path decodes (route resolution refused it otherwise), no trailing slash
      if (m.integerPathParams.some((name) => !/^\d+$/.test(values[name] ?? ''))) return null;
    }
    return m;
  };
  const matchPath = (path: string): string | null => {
    for (const method of HTTP_METHODS) {
      const m = match(method, path);
      if (m) return m.path;
    }
    return null;
  };
  return { api, meta, match, matchPath };
}

/**
 * openapi-backend's router rebuilds its operation list from the definition and compiles a RegExp per operation on
 * every match. The definition is fixed once `init()` has run, so the list and the patterns are compiled here once,
 * and the router matches with them (same operations, same most-specific-path-first order).
 */
function compileRoutes(api: OpenAPIBackend): void {
  const operations = api.router.getOperations();
  const table = operations
    .map((op) => ({
      op,
      method: op.method.toLowerCase(),
      literal: op.path.replace(/\{[^}]+\}/g, '').length,
      pattern: new RegExp('^' + op.path.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^/]+') + '$'),
    }))
    .sort((a, b) => b.literal - a.literal);
  api.router.getOperations = () => operations;
  api.router.matchOperation = ((req: { method: string; path: string }) => {
    const method = req.method.toLowerCase();
    const path = req.path.length > 1 ? withoutTrailing(req.path, '/') : req.path;
    return table.find((r) => r.method === method && r.pattern.test(path))?.op;
  }) as typeof api.router.matchOperation;
}

/**
 * The router's `parseRequest` for the requests dispatch builds (an object body or none, a query object, no cookie
 * header) on operations whose query parameters need no decoding of their own (no `content`, no `explode: false`);
 * anything else goes to the router's own parse. The router's parse compiles the operation's path template into a
 * matcher, serialises the query object into a string it does not use and deep-clones it, and copies the headers
 * through lodash and parses an empty cookie header, on every call: a fifth of a 404's CPU. Here the matchers are
 * compiled once per path template (pathValues) and the result is the same (test/requestParse.test.ts compares both): 0.6-1.5 µs
 * a parse instead of 10-12.
 */
export function parseDispatched(
  api: OpenAPIBackend,
  routerParse: (req: Request, operation?: Operation) => ParsedRequest = (req, operation) => OpenAPIRouter.prototype.parseRequest.call(api.router, req, operation),
): (req: Request, operation?: Operation) => ParsedRequest {
  const plainQuery = new WeakMap<object, boolean>();
  const hasPlainQuery = (operation: Operation): boolean => {
    let plain = plainQuery.get(operation);
    if (plain === undefined) {
      const params = (operation.parameters ?? []) as { in?: string; content?: unknown; explode?: boolean }[];
      plain = !params.some((p) => p.in === 'query' && (p.content !== undefined || p.explode === false));
      plainQuery.set(operation, plain);
    }
    return plain;
  };
  return (req, operation) => {
    const headers = req.headers as Record<string, string | string[] | undefined>;
    const lowered: Record<string, string | string[] | undefined> = {};
    for (const name of Object.keys(headers)) lowered[name.toLowerCase()] = headers[name];
    const shapedByDispatch = typeof req.query === 'object' && (req.body === undefined || typeof req.body === 'object') && !('cookie' in lowered);
    if (!shapedByDispatch || (operation && !hasPlainQuery(operation))) return routerParse(req, operation);
    let path = req.path?.trim() || '';
    if (!path.startsWith('/')) path = `/${path}`;
    path = path.split('?')[0]!;
    const params = operation ? pathValues(operation.path, api.router.normalizePath(path)) : {};
    // a literal, not `{ ...req, params, … }`: on Node 20 a spread followed by new keys cost 3 µs here
    const parsed: ParsedRequest = {
      method: req.method.trim().toLowerCase(),
      path,
      params,
      headers: lowered,
      query: plainCopy(req.query) as ParsedRequest['query'],
      cookies: Object.create(null) as ParsedRequest['cookies'],
      body: req.body,
      requestBody: req.body,
    };
    for (const key of Object.keys(req) as (keyof Request)[]) if (!(key in parsed)) (parsed as unknown as Record<string, unknown>)[key] = req[key];
    return parsed;
  };
}

const templateMatchers = new Map<string, (path: string) => Record<string, string>>();

/**
 * The path parameters of a template read from a path, as openapi-backend's router reads them (bath): decoded, {} when
 * it does not match. Compiled once per template.
 */
function pathValues(template: string, path: string): Record<string, string> {
  let match = templateMatchers.get(template);
  if (!match) {
    const names = template.match(/\{[A-Za-z0-9_-]+\}/g)?.map((n) => n.slice(1, -1)) ?? [];
    // the template's own characters literally (a `.` in a path matches only a dot), each parameter one segment
    const literal = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
    const pattern = new RegExp('^' + literal.replace(/\{[A-Za-z0-9_-]+\}/g, '([^\\/]*)') + '$');
    match = (p) => {
      const m = pattern.exec(p);
      if (!m) return {};
      const values: Record<string, string> = {};
      names.forEach((name, i) => (values[name] = decodeURIComponent(m[i + 1]!)));
      return values;
    };
    templateMatchers.set(template, match);
  }
  return match(path);
}

/** A deep copy of parsed query data (objects, arrays, strings): validation coerces the copy in place. */
function plainCopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plainCopy);
  if (typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) setOwn(copy, key, plainCopy((value as Record<string, unknown>)[key]));
  return copy;
}

export type ResponseSink = (reply: { status: number; body: unknown; headers?: Record<string, string> }) => void;

function describeOperation(op: Operation): OperationMeta {
  const params = (op.parameters ?? []) as { name: string; in: string; schema?: SchemaNode }[];
  const bodyContent = (op.requestBody as { content?: Record<string, { schema?: SchemaNode }> } | undefined)?.content;
  const bodySchema = bodyContent?.['application/json']?.schema;
  const body = bodySchema ? flattenAllOf(bodySchema) : null;
  const pathParams = params.filter((p) => p.in === 'path');
  const queryParams = params.filter((p) => p.in === 'query');
  const typeOnly = new Set<string>();
  for (const p of params) if (isTypeOnly(p.schema)) typeOnly.add(p.name);
  for (const [name, schema] of Object.entries(body?.properties ?? {})) if (isTypeOnly(schema)) typeOnly.add(name);
  const capabilities = ((op as unknown as Record<string, unknown>)['x-capabilities'] as string[] | undefined) ?? [];
  return {
    operationId: op.operationId!,
    method: op.method as HttpMethod,
    path: op.path,
    integerPathParams: pathParams.filter((p) => p.schema?.type === 'integer').map((p) => p.name),
    queryParams: new Map(queryParams.map((p) => [p.name, p.schema ?? {}])),
    body,
    order: [...pathParams.map((p) => p.name), ...queryParams.map((p) => p.name), ...Object.keys(body?.properties ?? {})],
    typeOnly,
    capabilities,
    // checked before the permission check where one follows, as WordPress orders them; an operation that needs no
    // capability reads its record in its handler, which answers one that does not exist with the same 400 (a check
    // here too would be a read more per request: a round trip on PostgreSQL)
    mustExist: capabilities.length === 0 ? [] : pathParams
      .filter((p) => (p as Record<string, unknown>)['x-must-exist'])
      .map((p) => ({ name: p.name, kind: (p as Record<string, unknown>)['x-must-exist'] as RecordKind })),
  };
}

/** How WordPress words a parameter over a schema's limit (`rest_validate_value_from_schema`). */
const LIMIT_MESSAGES: Record<string, { code: string; message: (name: string, limit: number) => string }> = {
  maxItems: { code: 'rest_too_many_items', message: (name, limit) => `${name} must contain at most ${limit} item${limit === 1 ? '' : 's'}.` },
  maxLength: { code: 'rest_too_long', message: (name, limit) => `${name} must be at most ${limit} character${limit === 1 ? '' : 's'} long.` },
};

/** ajv's findings as WordPress reports them: missing parameters first, else every invalid one with its reason. */
export function validationError(errors: ErrorObject[], op: OperationMeta): ApiError {
  const missing = new Set<string>();
  const invalid = new Map<string, { message: string; detail?: unknown }>();
  for (const e of errors) {
    const path = e.instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    if (e.keyword === 'required' && path.length <= 1) {
      const name = (e.params as { missingProperty: string }).missingProperty;
      if (name === 'requestBody') for (const r of op.body?.required ?? []) missing.add(r);
      else missing.add(name);
      continue;
    }
    const name = path[1] ?? path[0] ?? 'body';
    const limit = path.length === 2 ? LIMIT_MESSAGES[e.keyword] : undefined;
    if (e.keyword === 'type' && path.length === 2 && op.typeOnly.has(name)) {
      const message = `${name} is not of type ${(e.params as { type: string }).type}.`;
      invalid.set(name, { message, detail: { code: 'rest_invalid_type', message, data: { param: name } } });
    } else if (limit) {
      // a limit is named, with WordPress's code and wording, so that a client knows what to ask for instead
      const message = limit.message(name, (e.params as { limit: number }).limit);
      invalid.set(name, { message, detail: { code: limit.code, message, data: { param: name } } });
    } else if (!invalid.has(name)) {
      invalid.set(name, { message: 'Invalid parameter.' });
    }
  }
  const rank = (n: string) => (op.order.indexOf(n) + op.order.length + 1) % (op.order.length + 1);
  if (missing.size > 0) return missingParams([...missing].sort((a, b) => rank(a) - rank(b)));
  const names = [...invalid.keys()].sort((a, b) => rank(a) - rank(b));
  const details = Object.fromEntries(names.flatMap((n) => (invalid.get(n)!.detail ? [[n, invalid.get(n)!.detail]] : [])));
  return invalidParams(Object.fromEntries(names.map((n) => [n, invalid.get(n)!.message])), Object.keys(details).length ? details : []);
}
