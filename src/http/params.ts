/**
 * Query strings and form bodies as WordPress reads them, normalised against the operation's schemas before
 * openapi-backend validates them: `a[]=1&a[]=2`, `a=1&a=2` and `a=1,2` all become `[1, 2]` for array parameters;
 * `true/false/1/0` (any case) become booleans; digit strings become numbers where the schema wants a number;
 * `venue[venue]=Hall` becomes `{venue: {venue: "Hall"}}`. Values that do not fit are left as they are, so the
 * validator reports them.
 */

/** The values one key received in a query string or form body, in order (a key may repeat). */
export class TextValues {
  /** Sent as a list (`a[]=1`): PHP reads it as an array, so a parameter of one value refuses it; `a=1&a=2` is its last. */
  listed = false;
  constructor(readonly values: string[]) {}
  get last(): string {
    return this.values[this.values.length - 1] ?? '';
  }
}

export type TextTree = { [key: string]: TextValues | TextTree };

/** Parses `a=1&a[]=2&b[c]=3&d[0][e]=4` into a tree whose leaves are TextValues. `+` is a space, as in PHP. */
export function parseTextTree(text: string): TextTree {
  return textTreeOf(decodedPairs(text));
}

/** The `key=value` pairs of a URL-encoded text, decoded (those that do not decode left out, as PHP drops them). */
function* decodedPairs(text: string): Generator<[string, string]> {
  if (!text) return;
  for (const pair of text.split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const key = decode(eq < 0 ? pair : pair.slice(0, eq));
    const value = decode(eq < 0 ? '' : pair.slice(eq + 1));
    if (key !== null && value !== null) yield [key, value];
  }
}

/** Decoded form fields (`b[c]`, `a[]`) as a tree whose leaves are TextValues, as PHP builds its parameters. */
export function textTreeOf(pairs: Iterable<[string, string]>): TextTree {
  const root: TextTree = Object.create(null);
  for (const [key, value] of pairs) {
    const m = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
    const path = m ? [m[1]!, ...Array.from(m[2]!.matchAll(/\[([^[\]]*)\]/g), (x) => x[1]!)] : [key];
    insert(root, path.slice(0, 6), value);
  }
  return root;
}

/** The raw key of the first `key=value` pair that is not valid percent-encoded UTF-8, or null. */
export function undecodablePair(text: string): string | null {
  for (const pair of text.split('&')) {
    const eq = pair.indexOf('=');
    const key = eq < 0 ? pair : pair.slice(0, eq);
    if (decode(key) === null || (eq >= 0 && decode(pair.slice(eq + 1)) === null)) return decode(key) ?? key;
  }
  return null;
}

const UNSAFE_TEXT = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The first top-level name whose value holds a NUL character or a lone surrogate (anywhere inside), or null. */
export function unsafeTextParameter(values: Record<string, unknown>): string | null {
  const has = (v: unknown): boolean =>
    typeof v === 'string' ? UNSAFE_TEXT.test(v) : Array.isArray(v) ? v.some(has) : v !== null && typeof v === 'object' ? Object.values(v).some(has) : false;
  return Object.keys(values).find((k) => has(values[k])) ?? null;
}

function decode(text: string): string | null {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return null; // malformed escapes: the pair is dropped, as PHP drops undecodable input silently
  }
}

function insert(node: TextTree, path: string[], value: string): void {
  const [head, ...rest] = path as [string, ...string[]];
  const existing = node[head];
  if (rest.length === 0 || (rest.length === 1 && rest[0] === '')) {
    const values = existing instanceof TextValues ? existing : (node[head] = new TextValues([]));
    values.values.push(value);
    if (rest.length === 1) values.listed = true;
    return;
  }
  let child: TextTree;
  if (existing && !(existing instanceof TextValues)) child = existing;
  else node[head] = child = Object.create(null);
  const next = rest[0] === '' ? String(Object.keys(child).length) : rest[0]!;
  insert(child, [next, ...rest.slice(1)], value);
}

/** A JSON-schema node, as far as the normaliser needs to know it (the definition is dereferenced). */
export interface SchemaNode {
  type?: string;
  items?: SchemaNode;
  properties?: Record<string, SchemaNode>;
  allOf?: SchemaNode[];
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
  required?: string[];
  [keyword: string]: unknown;
}

/**
 * Folds `allOf` members into one node (properties and required lists merged). A property several members declare
 * keeps the keywords of each (a create body restates its required fields' types beside the full field schemas).
 */
export function flattenAllOf(schema: SchemaNode): SchemaNode {
  if (!schema.allOf) return schema;
  // the schemas are the spec's, fixed once loaded: each is folded once (the items of a long list share theirs)
  let merged = flattened.get(schema);
  if (!merged) flattened.set(schema, (merged = foldAllOf(schema)));
  return merged;
}

const flattened = new WeakMap<SchemaNode, SchemaNode>();

function foldAllOf(schema: SchemaNode): SchemaNode {
  const merged: SchemaNode = { ...schema, allOf: undefined, properties: { ...(schema.properties ?? {}) }, required: [...(schema.required ?? [])] };
  for (const part of (schema.allOf ?? []).map(flattenAllOf)) {
    for (const [name, property] of Object.entries(part.properties ?? {})) merged.properties![name] = { ...merged.properties![name], ...property };
    merged.required!.push(...(part.required ?? []));
    if (part.type && !merged.type) merged.type = part.type;
    if (part.enum && !merged.enum) merged.enum = part.enum;
    // a member that is a union (`allOf: [$ref: Truthy]`) keeps its branches, so values are read towards them
    for (const union of ['anyOf', 'oneOf'] as const) if (part[union] && !merged[union]) merged[union] = part[union];
  }
  return merged;
}

const TRUE_WORDS = new Set(['true', '1']);
const FALSE_WORDS = new Set(['false', '0']);
const INTEGER = /^[+-]?\d+$/;
// `\d+(?:\.\d*)?`, not `\d+\.?\d*`: the same numbers, without trying every split of a run of digits that fails at its end
const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i;

/** A scalar's value; a tree sent for a scalar becomes a plain object, which the validator then refuses. */
function scalarFor(value: unknown): unknown {
  if (value instanceof TextValues) return value.listed ? [...value.values] : value.last;
  return isTree(value) ? plain(value) : value;
}

function isTree(value: unknown): value is TextTree {
  return typeof value === 'object' && value !== null && !(value instanceof TextValues) && !Array.isArray(value);
}

/** Items of something sent for an array: lists, repeated keys, `a[0]=…` trees and comma-separated text. */
function listItems(value: unknown): unknown[] {
  if (value instanceof TextValues) return value.values.flatMap(splitCsv);
  if (typeof value === 'string') return splitCsv(value);
  if (Array.isArray(value)) return value;
  if (isTree(value)) {
    const keys = Object.keys(value);
    if (keys.every((k) => /^\d+$/.test(k))) return keys.sort((a, b) => Number(a) - Number(b)).map((k) => value[k]);
    return [value];
  }
  return value === null || value === undefined ? [] : [value];
}

function splitCsv(text: string): string[] {
  return text.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

function branchesOf(schema: SchemaNode): SchemaNode[] | null {
  const list = schema.anyOf ?? schema.oneOf;
  return list ? list.map(flattenAllOf) : null;
}

/** Picks the union member a value was most likely meant for, the way WordPress reads loosely typed input. */
function chooseBranch(value: unknown, branches: SchemaNode[]): SchemaNode {
  const typed = (t: string) => branches.find((b) => b.type === t);
  if (isTree(value) || (value instanceof TextValues && (value.values.length > 1 || value.listed)) || Array.isArray(value)) {
    const wantsObject = isTree(value) && !Object.keys(value).every((k) => /^\d+$/.test(k));
    if (wantsObject) {
      // of several object members (`{id}` or an inline record), the one whose required keys were all sent
      const fits = (b: SchemaNode) => b.type === 'object' && (b.required ?? []).every((k) => k in value);
      const best = branches.filter(fits).sort((a, b) => (b.required?.length ?? 0) - (a.required?.length ?? 0))[0];
      return best ?? typed('object') ?? typed('array') ?? branches[0]!;
    }
    return typed('array') ?? typed('object') ?? branches[0]!;
  }
  const text = scalarFor(value);
  if (typeof text === 'string') {
    if (INTEGER.test(text) && typed('integer')) return typed('integer')!;
    // a number branch takes text only where the union has no place for text: `cost=20.50` stays what was written
    if (NUMBER.test(text) && typed('number') && !typed('string')) return typed('number')!;
    if (text.includes(',') && typed('array')) return typed('array')!;
    if (typed('string')) return typed('string')!;
    if (text === '' && typed('array')) return typed('array')!;
  }
  if (typeof value === 'number') return typed(Number.isInteger(value) ? 'integer' : 'number') ?? typed('number') ?? branches[0]!;
  if (typeof value === 'boolean') return typed('boolean') ?? branches[0]!;
  return branches[0]!;
}

/** Normalises one value (from text or JSON) towards its schema; see the module comment. */
export function normalise(value: unknown, rawSchema: SchemaNode | undefined): unknown {
  if (!rawSchema) return value instanceof TextValues ? value.last : isTree(value) ? plain(value) : value;
  const schema = flattenAllOf(rawSchema);
  const branches = branchesOf(schema);
  if (branches) return normalise(value, chooseBranch(value, branches));

  switch (schema.type) {
    case 'array': {
      // a list longer than the spec allows is refused whatever its items: one item more than the limit says so, and
      // 400,000 organizers were not read (nor validated) one by one for it
      const items = listItems(value);
      const max = typeof schema.maxItems === 'number' ? schema.maxItems : Infinity;
      return (items.length > max ? items.slice(0, max + 1) : items).map((item) => normalise(item, schema.items));
    }
    case 'integer':
    case 'number': {
      const v = scalarFor(value);
      if (typeof v === 'string' && (schema.type === 'integer' ? INTEGER : NUMBER).test(v.trim())) return Number(v.trim());
      return v;
    }
    case 'boolean': {
      const v = scalarFor(value);
      if (typeof v === 'string' || typeof v === 'number') {
        const word = String(v).toLowerCase();
        if (TRUE_WORDS.has(word)) return true;
        if (FALSE_WORDS.has(word)) return false;
      }
      return v;
    }
    case 'object': {
      if (!isTree(value)) return scalarFor(value);
      const out: Record<string, unknown> = {};
      for (const [key, v] of Object.entries(value)) setOwn(out, key, normalise(v, Object.hasOwn(schema.properties ?? {}, key) ? schema.properties![key] : undefined));
      return out;
    }
    default:
      return isTree(value) ? plain(value) : scalarFor(value);
  }
}

/** A text tree as plain JSON (last value of each key); JSON values pass through. */
function plain(tree: TextTree): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(tree)) setOwn(out, key, v instanceof TextValues ? v.last : isTree(v) ? plain(v) : v);
  return out;
}

/**
 * Sets a key of a parameter object as a key of its own. A form or query key `__proto__` (`__proto__[status]=draft`) is
 * an unknown parameter like any other, as PHP reads it; assigned, it set the object's prototype instead, whose
 * members the object then seemed to have (an event created that way was a draft).
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/**
 * The plugin's truthy reading (`tribe_is_truthy`) of `has_events`, `only_with_upcoming` and venue `show_map` /
 * `show_map_link`: a boolean as it is, a number when not 0, a string when it is one of the truthy words.
 */
export function isTruthy(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  return typeof value === 'string' && ['true', '1', 'yes', 'y', 'on', 'enable', 'enabled'].includes(value.trim().toLowerCase());
}

/** PHP's `FILTER_VALIDATE_BOOLEAN`, which the plugin applies to `strict_dates`: `1`, `true`, `on`, `yes` (any case). */
export function isFilterTrue(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  return ['1', 'true', 'on', 'yes'].includes(String(value ?? '').trim().toLowerCase());
}
