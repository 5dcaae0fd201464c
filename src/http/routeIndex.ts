import { DateTime, FixedOffsetZone, type Zone } from 'luxon';
import { parseDateInput, toWire } from '../domain/dates.js';
import { flattenAllOf, type SchemaNode } from './params.js';
import { loadSpec, NAMESPACE, NAMESPACE_PATH, REST_ROOT, type HttpMethod } from './spec.js';

/** One route as WordPress's indexes describe it (`GET /wp-json/tribe/events/v1`, `OPTIONS` on any route). */
export interface RouteDescription {
  namespace: string;
  methods: string[];
  endpoints: { methods: string[]; args: Record<string, Record<string, unknown>> | [] }[];
  _links?: { self: { href: string }[] };
}

type Parameter = { name: string; in: string; required?: boolean; description?: string; schema?: SchemaNode; 'x-wp-arg'?: WpArg };
/**
 * The keywords the plugin declares for one of its arguments (`x-wp-arg` in the spec: `type`, `format`, `items`,
 * `enum`, `default`, as its index shows them), which the index shows instead of those of Almanac's schema.
 */
type WpArg = Record<string, unknown>;
/** A default the plugin computes when the request comes: a relative time, shown in the site timezone or in UTC. */
interface ComputedDefault { 'x-computed': string; 'x-shown-in': 'site' | 'utc' }
const isComputed = (value: unknown): value is ComputedDefault => typeof value === 'object' && value !== null && 'x-computed' in value;
type OperationObject = { parameters?: (Parameter | { $ref: string })[]; requestBody?: unknown };

function resolve<T>(node: T): T {
  let current: unknown = node;
  for (let depth = 0; depth < 10 && current && typeof current === 'object' && '$ref' in current; depth++) {
    const ref = (current as { $ref: string }).$ref;
    current = ref.slice(2).split('/').reduce<unknown>((o, key) => (o as Record<string, unknown>)?.[key], loadSpec());
  }
  return current as T;
}

function resolveSchema(schema: SchemaNode | undefined): SchemaNode {
  const s = resolve(schema ?? {});
  if (s.allOf) return flattenAllOf({ ...s, allOf: s.allOf.map(resolveSchema) });
  return s;
}

/** `/wp-json/tribe/events/v1/events/{id}` → `/tribe/events/v1/events/(?P<id>\d+)`. */
export function routePattern(specPath: string): string {
  return specPath
    .slice(REST_ROOT.length)
    .replace('{id}', '(?P<id>\\d+)')
    .replace('{slug}', '(?P<slug>[^/]+)');
}

/**
 * One argument as the index describes it: the plugin's keywords for the plugin's arguments (`x-wp-arg`), those of
 * the schema for Almanac's own; then the description and `required`.
 */
function argOf(schema: SchemaNode | undefined, description: string | undefined, required: boolean, wpArg = resolve(schema ?? {})['x-wp-arg'] as WpArg | undefined): Record<string, unknown> {
  const s = resolveSchema(schema);
  if (wpArg) return { ...wpArg, description: description ?? (s.description as string | undefined) ?? 'No description provided', required };
  const arg: Record<string, unknown> = {};
  if (s.default !== undefined) arg.default = s.default;
  arg.description = description ?? (s.description as string | undefined) ?? 'No description provided';
  if (s.type) arg.type = s.type;
  if (s.format) arg.format = s.format;
  if (s.enum) arg.enum = s.enum;
  const items = s.items ? resolveSchema(s.items) : null;
  if (items?.type) arg.items = { type: items.type };
  arg.required = required;
  return arg;
}

function argsOf(op: OperationObject): Record<string, Record<string, unknown>> | [] {
  const args: Record<string, Record<string, unknown>> = {};
  for (const p of (op.parameters ?? []).map((x) => resolve(x) as Parameter)) {
    if (p.in === 'header') continue; // conditional-request headers are not WordPress arguments
    args[p.name] = argOf(p.schema, p.description, Boolean(p.required), p['x-wp-arg']);
  }
  const body = resolve(op.requestBody as { content?: Record<string, { schema?: SchemaNode }> } | undefined);
  const schema = body?.content?.['application/json']?.schema;
  if (schema) {
    const flat = resolveSchema(schema);
    for (const [name, prop] of Object.entries(flat.properties ?? {})) {
      args[name] = argOf(prop, undefined, (flat.required ?? []).includes(name));
    }
  }
  return Object.keys(args).length > 0 ? args : [];
}

/** The plugin's registration order: reads, then deletes, then the three update spellings as one endpoint. */
function endpointGroups(specPath: string): HttpMethod[][] {
  const item = loadSpec().paths[specPath] ?? {};
  const onTerms = /\/(categories|tags)\/\{id\}$/.test(specPath);
  const order: HttpMethod[][] = onTerms ? [['get'], ['post', 'put', 'patch'], ['delete']] : [['get'], ['delete'], ['post', 'put', 'patch']];
  return order.map((group) => group.filter((m) => m in item)).filter((group) => group.length > 0);
}

/** The description of one spec path, with links on `site` + language prefix. */
export function describeRoute(specPath: string, linkBase: string): RouteDescription {
  const item = loadSpec().paths[specPath] as Record<string, OperationObject>;
  const groups = endpointGroups(specPath);
  const description: RouteDescription = {
    namespace: NAMESPACE,
    methods: groups.flat().map((m) => m.toUpperCase()),
    endpoints: groups.map((group) => ({ methods: group.map((m) => m.toUpperCase()), args: argsOf(item[group[0]!]!) })),
  };
  if (!specPath.includes('{')) description._links = { self: [{ href: linkBase + specPath }] };
  return description;
}

/**
 * The routes with the defaults the plugin computes per request filled in for `now` (`start_date`: yesterday 23:59 UTC
 * in site time; `end_date`: 24 months ahead, UTC). Only the routes and endpoints holding one are copied.
 */
export function withComputedDefaults(routes: Record<string, RouteDescription>, siteZone: Zone, now: DateTime = DateTime.utc()): Record<string, RouteDescription> {
  const fill = (args: Record<string, Record<string, unknown>> | []) => {
    if (Array.isArray(args) || !Object.values(args).some((a) => isComputed(a.default))) return args;
    const filled: Record<string, Record<string, unknown>> = {};
    for (const [name, arg] of Object.entries(args)) filled[name] = isComputed(arg.default) ? { ...arg, default: computedDefault(arg.default, siteZone, now) } : arg;
    return filled;
  };
  const out: Record<string, RouteDescription> = {};
  for (const [pattern, route] of Object.entries(routes)) {
    const endpoints = route.endpoints.map((e) => {
      const args = fill(e.args);
      return args === e.args ? e : { ...e, args };
    });
    out[pattern] = endpoints.every((e, i) => e === route.endpoints[i]) ? route : { ...route, endpoints };
  }
  return out;
}

function computedDefault(rule: ComputedDefault, siteZone: Zone, now: DateTime): string {
  // the plugin resolves the phrase on the UTC clock, then shows it in the site timezone or as UTC
  const instant = parseDateInput(rule['x-computed'], FixedOffsetZone.utcInstance, now)!.value;
  return toWire(rule['x-shown-in'] === 'site' ? instant.setZone(siteZone) : instant.toUTC());
}

/** Every route of the namespace, keyed by pattern, in the order of the spec (the plugin's order). */
export function describeNamespace(linkBase: string): Record<string, RouteDescription> {
  const routes: Record<string, RouteDescription> = {};
  for (const specPath of Object.keys(loadSpec().paths)) {
    if (specPath === NAMESPACE_PATH || specPath.startsWith(NAMESPACE_PATH + '/')) routes[routePattern(specPath)] = describeRoute(specPath, linkBase);
  }
  return routes;
}

const allowCache = new Map<string, { method: string; capabilities: string[] }[]>();

/**
 * Methods of a spec path the caller may use, in the plugin's order (for `Allow` and term `targetHints`). A method
 * is allowed when the role holds every capability its operation lists in `x-capabilities`.
 */
export function allowedMethods(specPath: string, holds: (capabilities: string[]) => boolean): string[] {
  let methods = allowCache.get(specPath);
  if (!methods) {
    const item = loadSpec().paths[specPath] as Record<string, { 'x-capabilities'?: string[] }> | undefined;
    methods = endpointGroups(specPath).flat().map((m) => ({ method: m.toUpperCase(), capabilities: item?.[m]?.['x-capabilities'] ?? [] }));
    allowCache.set(specPath, methods);
  }
  return methods.filter((m) => holds(m.capabilities)).map((m) => m.method);
}
