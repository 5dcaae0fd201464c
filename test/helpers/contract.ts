import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { OpenAPIBackend, type Document, type Operation } from 'openapi-backend';
import { loadSpec } from '../../src/http/spec.js';
import { withoutTrailing } from '../../src/domain/text.js';

const CUSTOM_FORMATS = ['wp-date-input', 'wp-timezone', 'wp-url-or-empty'];

/** An answer's body as `ContractChecker.check` takes it: JSON parsed; any other (a calendar, the documentation page) its text. */
export function answerBody(text: string, contentType: string | null): unknown {
  if (!text) return undefined;
  return (contentType ?? '').startsWith('application/json') ? JSON.parse(text) : text;
}

/**
 * A response schema as a `_fields` answer must match it: every key optional (the caller chose which to keep), but
 * every key that is there of the declared type, and none that is not declared. `oneOf` becomes `anyOf`, since a
 * record cut down to `id` may match more than one of the alternatives.
 */
function partial(schema: unknown, seen = new Map<object, unknown>()): unknown {
  if (typeof schema !== 'object' || schema === null) return schema;
  if (seen.has(schema)) return seen.get(schema);
  const copy: Record<string, unknown> | unknown[] = Array.isArray(schema) ? [] : {};
  seen.set(schema, copy);
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'required' && !Array.isArray(schema)) continue;
    (copy as Record<string, unknown>)[key === 'oneOf' && !Array.isArray(schema) ? 'anyOf' : key] = partial(value, seen);
  }
  return copy;
}

/**
 * Checks responses against spec/openapi.yaml from the outside, as a client would: the status must be one the
 * operation declares, the body must match that response's schema, and every error must be WordPress's shape with
 * `data.status` equal to the HTTP status. Used on every response a test receives.
 */
export class ContractChecker {
  private api: OpenAPIBackend | null = null;
  private routeDescription: ((data: unknown) => boolean) | null = null;
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly partials = new Map<string, ValidateFunction>();

  constructor() {
    addFormats.default(this.ajv);
    for (const f of CUSTOM_FORMATS) this.ajv.addFormat(f, true);
  }

  private async backend(): Promise<OpenAPIBackend> {
    if (!this.api) {
      const api = new OpenAPIBackend({
        definition: structuredClone(loadSpec()) as unknown as Document,
        quick: true,
        strict: true,
        customizeAjv: (ajv) => {
          addFormats.default(ajv);
          for (const f of CUSTOM_FORMATS) ajv.addFormat(f, true);
          return ajv;
        },
      });
      api.register({ notImplemented: () => undefined });
      await api.init();
      const schemas = (api.definition as unknown as { components: { schemas: Record<string, object> } }).components.schemas;
      this.routeDescription = this.ajv.compile(schemas.RouteDescription!);
      this.api = api;
    }
    return this.api;
  }

  async check(method: string, url: string, status: number, body: unknown, contentType: string | null = 'application/json'): Promise<void> {
    const api = await this.backend();
    const where = `${method} ${url} → ${status}`;
    const parsed = new URL(url);
    if (parsed.searchParams.has('_envelope') && method !== 'HEAD' && (contentType ?? '').startsWith('application/json')) {
      // WordPress's envelope: always 200, the real status, headers and body inside
      const e = body as { body?: unknown; status?: unknown; headers?: unknown };
      if (status !== 200 || typeof e?.status !== 'number' || typeof e.headers !== 'object' || e.headers === null || Array.isArray(e.headers) || !('body' in e)) {
        throw new Error(`${where}: not an _envelope answer: ${JSON.stringify(body)}`);
      }
      parsed.searchParams.delete('_envelope');
      return this.check(method, parsed.href, e.status, e.body, contentType);
    }
    if (status >= 400) {
      const e = body as { code?: unknown; message?: unknown; data?: { status?: unknown } };
      if (typeof e?.code !== 'string' || typeof e.message !== 'string' || e.data?.status !== status) {
        throw new Error(`${where}: not a WordPress error body: ${JSON.stringify(body)}`);
      }
    }
    const serverError = () => new Error(`${where}: server error ${JSON.stringify(body)}`);
    let path = parsed.pathname.replace(/^\/(de|fr)(?=\/)/, '');
    path = withoutTrailing(path, '/') || '/';
    const restRoute = parsed.searchParams.get('rest_route');
    if (restRoute && (path === '/' || path === '/index.php')) path = '/wp-json' + withoutTrailing(restRoute, '/');
    if (path.startsWith('/wp-json/')) path = path.toLowerCase(); // routes match in any case, as in WordPress
    // the method `_method` sets, as the server takes it (the spec's description); HEAD is GET without the body
    const sent = parsed.searchParams.get('_method')?.toUpperCase() || method;
    const effective = sent === 'HEAD' ? 'GET' : sent;
    if (effective === 'OPTIONS') {
      if (status === 200 && !this.routeDescription!(body)) throw new Error(`${where}: not a RouteDescription: ${JSON.stringify(this.routeDescription!)}`);
      return;
    }
    // A non-digit id (`/categories/abc`) is no route, though the template `{id}` would match it.
    const noRoute = status === 404 && (body as { code?: string }).code === 'rest_no_route';
    const operation = noRoute ? undefined : api.matchOperation({ method: effective, path, headers: {} });
    if (!operation) {
      if (status >= 500) throw serverError();
      if (![400, 401, 404, 413, 429, 431].includes(status)) throw new Error(`${where}: no operation matches, yet the status is not an error`);
      return;
    }
    // a 5xx is a bug unless the operation declares it (only the health check's 503 does)
    if (status >= 500 && !operation.responses?.[String(status)]) throw serverError();
    if (!operation.responses?.[String(status)]) {
      throw new Error(`${where}: ${operation.operationId} does not declare status ${status}: ${JSON.stringify(body)}`);
    }
    if (sent === 'HEAD') {
      if (body !== undefined) throw new Error(`${where}: a HEAD answer has a body`);
      return;
    }
    const declared = (operation.responses[String(status)] as { content?: Record<string, unknown> }).content;
    const mediaType = (contentType ?? '').split(';')[0]!.trim();
    if (declared && !(mediaType in declared)) throw new Error(`${where}: ${operation.operationId} answers ${status} as ${Object.keys(declared).join(' or ')}, not ${contentType}`);
    if (!declared && body !== undefined) throw new Error(`${where}: ${operation.operationId} declares no body for ${status}, yet one came`);
    // `_fields` keeps some keys of a successful answer (errors are whole): each kept key is checked, none required
    const errors = [...parsed.searchParams.keys()].some((key) => key === '_fields' || key.startsWith('_fields[')) && status < 300 && declared
      ? this.partialErrors(operation, status, mediaType, body)
      : api.validateResponse(body, operation, status).errors;
    if (errors) {
      throw new Error(`${where}: body does not match the spec of ${operation.operationId}: ${JSON.stringify(errors.slice(0, 5))}`);
    }
  }

  private partialErrors(operation: Operation, status: number, mediaType: string, body: unknown) {
    const key = `${operation.operationId} ${status} ${mediaType}`;
    let validate = this.partials.get(key);
    if (!validate) {
      const content = (operation.responses![String(status)] as { content: Record<string, { schema: object }> }).content;
      validate = this.ajv.compile(partial(content[mediaType]!.schema) as object);
      this.partials.set(key, validate);
    }
    return validate(body) ? null : validate.errors ?? [];
  }
}
