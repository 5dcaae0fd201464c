import { flattenAllOf, type SchemaNode } from './params.js';
import { loadSpec, NAMESPACE, NAMESPACE_PATH, REST_ROOT, type HttpMethod } from './spec.js';

/** One route as WordPress's indexes describe it (`GET /wp-json/tribe/events/v1`, `OPTIONS` on any route). */
export interface RouteDescription {
  namespace: string;
  methods: string[];
  endpoints: { methods: string[]; args: Record<string, Record<string, unknown>> | [] }[];
  _links?: { self: { href: string }[] };
}

type Parameter = { name: string; in: string; required?: boolean; description?: string; schema?: SchemaNode };
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

function argOf(schema: SchemaNode | undefined, description: string | undefined, required: boolean): Record<string, unknown> {
  const s = resolveSchema(schema);
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
    args[p.name] = argOf(p.schema, p.description, Boolean(p.required));
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
