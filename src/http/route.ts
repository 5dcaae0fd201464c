import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import type { Config } from '../config.js';
import { hasCapabilities, type Role } from '../domain/capabilities.js';
import { allowedMethods } from './routeIndex.js';
import type { Backend, OperationMeta } from './backend.js';
import { ApiError, invalidParams, noRoute } from '../errors.js';
import { normalise, parseTextTree, TextValues, undecodablePair, type TextTree } from './params.js';
import { requestHost, requestProtocol } from './origin.js';
import type { LangPrefix } from '../domain/context.js';
import { withoutTrailing } from '../domain/text.js';

/** A request after the WordPress plumbing: real path and method, language prefix, matched operation. */
export interface RoutedRequest {
  method: string;
  path: string;
  pathPrefix: LangPrefix;
  site: string;
  /** The parsed query string, before normalisation (form-style tree). */
  rawQuery: TextTree;
  /** The query normalised against the matched operation's parameters; unknown parameters dropped. */
  query: Record<string, unknown>;
  operation: OperationMeta | null;
  /** The spec path the URL belongs to (for OPTIONS and `Allow`), whatever the method. */
  specPath: string | null;
  /** Methods of the matched route the caller may use, for the `Allow` header. */
  allow: ((role: Role | null) => string[]) | null;
  fields: string[] | null;
  envelope: boolean;
}

const HOST = /^[A-Za-z0-9.\-]+(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/;

/** The site URL of a request: the configured public URL, else scheme and Host of the request. */
export function siteOf(config: Config, req: IncomingMessage): string {
  if (config.publicUrl) return config.publicUrl;
  const host = requestHost(req, config.trustProxy);
  const safeHost = HOST.test(host) ? host : `${config.host}:${config.port}`;
  return `${requestProtocol(req, config.trustProxy)}://${safeHost}`;
}

/**
 * The keys `_fields` names, as WordPress reads it (`wp_parse_list`): a text is split at commas and white space
 * (`_fields=id title`), and one sent more than once is its last (as PHP reads a query); a list (`_fields[]=id`) is
 * taken item by item. A text that names none (`_fields=`, `_fields=,`) filters nothing: null, the whole answer.
 */
function requestedFields(value: TextValues): string[] | null {
  const fields = value.listed ? value.values.map((field) => field.trim()) : value.last.split(/[\s,]+/).filter(Boolean);
  return fields.length > 0 ? fields : null;
}

/**
 * WordPress's request plumbing before dispatch: `?rest_route=`, the `/de` and `/fr` base addresses, trailing
 * slashes, `_method` / `X-HTTP-Method-Override`, `_fields`, `_envelope`, `_jsonp`; then the route match and the
 * query normalisation for the matched operation.
 */
export function resolveRoute(backend: Backend, config: Config): Middleware {
  return async (ctx, next) => {
    const undecodable = undecodablePair(ctx.querystring);
    if (undecodable !== null) throw invalidParams({ [undecodable]: 'Not valid percent-encoded UTF-8.' });
    const rawQuery = parseTextTree(ctx.querystring);
    let path = ctx.path;
    try {
      decodeURIComponent(path);
    } catch {
      throw noRoute(); // no route has a path that does not decode
    }
    let pathPrefix: LangPrefix = '';
    const lang = /^\/(de|fr)(\/.*)$/.exec(path);
    if (lang) {
      pathPrefix = `/${lang[1]}` as LangPrefix;
      path = lang[2]!;
    }
    const restRoute = rawQuery.rest_route;
    if (restRoute instanceof TextValues && (path === '/' || path === '/index.php')) {
      path = '/wp-json' + (restRoute.last.startsWith('/') ? '' : '/') + restRoute.last;
    }
    if (path.length > 1) path = withoutTrailing(path, '/') || '/';
    // WordPress matches the route after /wp-json case-insensitively (its patterns carry the `i` flag), and every route
    // of the spec is lower-case; a slug is looked up as WordPress sanitises it, lower-cased, in any case
    if (path.startsWith('/wp-json/')) path = '/wp-json/' + path.slice('/wp-json/'.length).toLowerCase();

    let method = ctx.method.toUpperCase();
    const override = (rawQuery._method instanceof TextValues ? rawQuery._method.last : ctx.get('X-HTTP-Method-Override')).toUpperCase();
    // as WordPress sets it, whatever it is: a method no route has (`_method=FOO`, `__proto__`) then matches no route
    // (404), and the POST it came on is not made instead; HEAD is answered as GET without the body, OPTIONS with the
    // route's description
    if (override) method = override;
    const lookupMethod = method === 'HEAD' ? 'GET' : method;

    const fieldsValue = rawQuery._fields;
    const fields = fieldsValue instanceof TextValues ? requestedFields(fieldsValue) : null;
    const envelope = '_envelope' in rawQuery;
    const jsonp = '_jsonp' in rawQuery;
    for (const plumbing of ['rest_route', '_method', '_fields', '_envelope', '_jsonp']) delete rawQuery[plumbing];

    const operation = method === 'OPTIONS' ? null : backend.match(lookupMethod, path);
    const specPath = operation?.path ?? backend.matchPath(path);

    const routed: RoutedRequest = {
      method,
      path,
      pathPrefix,
      site: siteOf(config, ctx.req),
      rawQuery,
      query: operation ? normaliseQuery(rawQuery, operation) : {},
      operation,
      specPath,
      // WordPress sends no Allow with rest_no_route, so a known path with a method it lacks gets none either.
      allow: specPath && (operation || method === 'OPTIONS') ? (role) => allowFor(specPath, role) : null,
      fields,
      envelope,
    };
    ctx.state.routed = routed;
    if (jsonp) {
      throw new ApiError(400, 'rest_invalid_param', 'Invalid parameter(s): _jsonp', { params: { _jsonp: 'JSONP is not supported.' }, details: [] });
    }
    await next();
  };
}

const allowed = new Map<string, string[]>();

/** The methods of a spec path a role may use, worked out once per path and role (both sets are fixed). */
function allowFor(specPath: string, role: Role | null): string[] {
  const key = `${specPath}\0${role ?? ''}`;
  let methods = allowed.get(key);
  if (!methods) allowed.set(key, (methods = allowedMethods(specPath, (caps) => hasCapabilities(role, caps))));
  return methods;
}

/** Keeps the parameters the operation declares, each normalised to its schema (see params.ts). */
export function normaliseQuery(raw: TextTree, operation: OperationMeta): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  for (const [name, schema] of operation.queryParams) {
    if (name in raw) query[name] = normalise(raw[name], schema);
  }
  return query;
}
