import { loadSpec, NAMESPACE_PATH, type SpecDocument } from './spec.js';

/**
 * The namespace's OpenAPI document as the plugin serves it at `…/doc`: paths relative to the namespace, and only
 * the components, tags and schemas those paths use. spec/openapi.yaml stays the one source: it writes paths in full
 * and also holds the routes outside the namespace (the site index, the health check, the documentation page), which
 * the namespace's document leaves out. Built once; `withServer` adds the address of the namespace that serves it.
 */
export function namespaceDocument(): SpecDocument {
  cached ??= derive(loadSpec());
  return cached;
}

let cached: SpecDocument | null = null;

/** The document with the namespace address that answers as its only server (clients take their base URL from it). */
export function withServer(document: SpecDocument, namespaceUrl: string): SpecDocument {
  return { ...document, servers: [{ url: namespaceUrl, description: 'The namespace of this Almanac, in the language of the address that served this document.' }] };
}

function derive(spec: SpecDocument): SpecDocument {
  const paths: SpecDocument['paths'] = {};
  for (const [path, item] of Object.entries(spec.paths)) {
    if (path === NAMESPACE_PATH) paths['/'] = item;
    else if (path.startsWith(`${NAMESPACE_PATH}/`)) paths[path.slice(NAMESPACE_PATH.length)] = item;
  }
  const used = referencedComponents(spec, paths);
  const components: Record<string, Record<string, unknown>> = {};
  for (const [kind, entries] of Object.entries(spec.components ?? {})) {
    // security schemes are named by `security` lists, not by `$ref`: all of them stay
    const kept = kind === 'securitySchemes' ? entries : Object.fromEntries(Object.entries(entries).filter(([name]) => used.has(`#/components/${kind}/${name}`)));
    if (Object.keys(kept).length > 0) components[kind] = kept;
  }
  const tagsUsed = new Set(Object.values(paths).flatMap((item) => Object.values(item).flatMap((op) => (op as { tags?: string[] }).tags ?? [])));
  const tags = (spec.tags as { name: string }[] | undefined)?.filter((tag) => tagsUsed.has(tag.name));
  return { ...spec, ...(tags ? { tags } : {}), paths, components };
}

/** Every `#/components/…` reference reachable from the paths, following references inside components too. */
function referencedComponents(spec: SpecDocument, paths: SpecDocument['paths']): Set<string> {
  const found = new Set<string>();
  const pending: unknown[] = [paths];
  while (pending.length > 0) {
    const node = pending.pop();
    if (node === null || typeof node !== 'object') continue;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith('#/components/') && !found.has(value)) {
        found.add(value);
        const [kind, name] = value.slice('#/components/'.length).split('/');
        pending.push(spec.components?.[kind!]?.[name!]);
      } else {
        pending.push(value);
      }
    }
  }
  return found;
}
