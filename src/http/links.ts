import type { OperationContext, OperationId } from './operation.js';

const LANGUAGE_PARAMS = new Set(['xlate_language', 'wpml_language']);

function wireValue(value: unknown): string {
  if (Array.isArray(value)) return value.map((v) => encodeURIComponent(String(v))).join(',');
  return encodeURIComponent(String(value));
}

/**
 * The query parameters a request sent, in the order the spec declares them, without `page` and the language
 * parameters (the language is in the link's base address). Values are the normalised ones.
 */
export function sentParams<O extends OperationId>(c: OperationContext<O>, sent: ReadonlySet<string>): [string, unknown][] {
  const query = c.request.query as Record<string, unknown>;
  const declared = (c.operation.parameters ?? []) as { name: string; in: string }[];
  return declared
    .filter((p) => p.in === 'query' && p.name !== 'page' && !LANGUAGE_PARAMS.has(p.name) && sent.has(p.name) && query[p.name] !== undefined)
    .map((p) => [p.name, query[p.name]]);
}

/** `name=value` pairs joined with `&`, each value (or list item) URI-encoded, lists comma-joined. */
export function queryString(params: [string, unknown][]): string {
  return params.map(([name, value]) => `${name}=${wireValue(value)}`).join('&');
}

/** `base` followed by the parameters (and `page` last, when given), URI-encoded. */
export function pageUrl(base: string, params: [string, unknown][], page?: number): string {
  const query = queryString(page === undefined ? params : [...params, ['page', page]]);
  return query ? `${base}?${query}` : base;
}
