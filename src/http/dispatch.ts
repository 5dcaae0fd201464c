import type { Zone } from 'luxon';
import type { Middleware } from 'koa';
import type { ReadSet } from '../db/changes.js';
import type { Backend, OperationMeta } from './backend.js';
import type { RawBody } from './body.js';
import { invalidParams, noRoute } from '../errors.js';
import { normalise, unsafeTextParameter } from './params.js';
import type { Outcome } from './respond.js';
import type { RoutedRequest } from './route.js';
import { describeRoute, withComputedDefaults } from './routeIndex.js';
import type { Lang, RequestState } from '../domain/context.js';

/**
 * Hands the request to openapi-backend (route, validate, coerce, dispatch by operationId) with the body
 * normalised for the operation, and answers `OPTIONS` with the route's description.
 */
export function dispatch(backend: Backend, siteZone: Zone): Middleware {
  return async (ctx) => {
    const routed = ctx.state.routed as RoutedRequest;
    const state: RequestState = {
      requestId: ctx.state.requestId,
      user: ctx.state.user ?? null,
      lang: (routed.pathPrefix.slice(1) || 'en') as Lang,
      pathPrefix: routed.pathPrefix,
      linkPrefix: routed.pathPrefix,
      site: routed.site,
      restBase: `${routed.site}${routed.pathPrefix}/wp-json/tribe/events/v1`,
      sent: new Set(Object.keys(routed.query)),
      ifMatch: ctx.get('If-Match') || null,
      reads: (ctx.state.reads as ReadSet | undefined) ?? null,
    };
    ctx.state.request = state; // the response stage reads the language the request resolved to
    if (routed.method === 'OPTIONS') {
      if (!routed.specPath) throw noRoute();
      const description = withComputedDefaults({ route: describeRoute(routed.specPath, routed.site + routed.pathPrefix) }, siteZone).route;
      ctx.state.outcome = { status: 200, body: description, headers: {} } satisfies Outcome;
      return;
    }
    const operation = routed.operation;
    if (!operation) throw noRoute();
    const body = operation.body ? requestBody(ctx.state.rawBody as RawBody, routed, operation) : undefined;
    const unsafe = unsafeTextParameter(routed.query) ?? (body ? unsafeTextParameter(body) : null);
    if (unsafe !== null) throw invalidParams({ [unsafe]: 'Contains a NUL character or text that is not valid Unicode.' });
    await backend.api.handleRequest(
      {
        method: operation.method,
        path: routed.path,
        query: routed.query as Record<string, string>,
        headers: { 'content-type': 'application/json' },
        body,
      },
      state,
      (reply: { status: number; body: unknown; headers?: Record<string, string> }) => {
        ctx.state.outcome = { status: reply.status, body: reply.body, headers: reply.headers ?? {} } satisfies Outcome;
      },
    );
  };
}

/**
 * The body's named parameters, normalised to the operation's schema. As in WordPress a body parameter may also come
 * from the query string (the body wins); a JSON body that is not an object carries no named parameters.
 */
function requestBody(raw: RawBody, routed: RoutedRequest, operation: OperationMeta): Record<string, unknown> {
  const source = raw.kind === 'none' || typeof raw.value !== 'object' || raw.value === null || Array.isArray(raw.value) ? {} : raw.value;
  const body = normalise(source, { ...operation.body!, type: 'object' }) as Record<string, unknown>;
  const properties = operation.body!.properties ?? {};
  for (const [name, value] of Object.entries(routed.rawQuery)) {
    if (!Object.hasOwn(body, name) && Object.hasOwn(properties, name) && !operation.queryParams.has(name)) body[name] = normalise(value, properties[name]);
  }
  return body;
}
