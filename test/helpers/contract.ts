import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { OpenAPIBackend, type Document } from 'openapi-backend';
import { loadSpec } from '../../src/http/spec.js';

/**
 * Checks responses against spec/openapi.yaml from the outside, as a client would: the status must be one the
 * operation declares, the body must match that response's schema, and every error must be WordPress's shape with
 * `data.status` equal to the HTTP status. Used on every response a test receives.
 */
export class ContractChecker {
  private api: OpenAPIBackend | null = null;
  private routeDescription: ((data: unknown) => boolean) | null = null;

  private async backend(): Promise<OpenAPIBackend> {
    if (!this.api) {
      const api = new OpenAPIBackend({
        definition: structuredClone(loadSpec()) as unknown as Document,
        quick: true,
        strict: true,
        customizeAjv: (ajv) => {
          addFormats.default(ajv);
          for (const f of ['wp-date-input', 'wp-timezone', 'wp-url-or-empty']) ajv.addFormat(f, true);
          return ajv;
        },
      });
      api.register({ notImplemented: () => undefined });
      await api.init();
      const ajv = new Ajv({ strict: false });
      addFormats.default(ajv);
      const schemas = (api.definition as unknown as { components: { schemas: Record<string, object> } }).components.schemas;
      this.routeDescription = ajv.compile(schemas.RouteDescription!);
      this.api = api;
    }
    return this.api;
  }

  async check(method: string, url: string, status: number, body: unknown, contentType: string | null = 'application/json'): Promise<void> {
    const api = await this.backend();
    const where = `${method} ${url} → ${status}`;
    if (status >= 400) {
      const e = body as { code?: unknown; message?: unknown; data?: { status?: unknown } };
      if (typeof e?.code !== 'string' || typeof e.message !== 'string' || e.data?.status !== status) {
        throw new Error(`${where}: not a WordPress error body: ${JSON.stringify(body)}`);
      }
    }
    const serverError = () => new Error(`${where}: server error ${JSON.stringify(body)}`);
    const parsed = new URL(url);
    if (parsed.searchParams.has('_fields') || parsed.searchParams.has('_envelope') || method === 'HEAD') {
      if (status >= 500) throw serverError();
      return;
    }
    let path = parsed.pathname.replace(/^\/(de|fr)(?=\/)/, '').replace(/(.)\/+$/, '$1');
    const restRoute = parsed.searchParams.get('rest_route');
    if (restRoute && (path === '/' || path === '/index.php')) path = '/wp-json' + restRoute.replace(/\/+$/, '');
    const override = parsed.searchParams.get('_method')?.toUpperCase();
    const effective = override ?? method;
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
    const declared = (operation.responses[String(status)] as { content?: Record<string, unknown> }).content;
    const mediaType = (contentType ?? '').split(';')[0]!.trim();
    if (declared && !(mediaType in declared)) throw new Error(`${where}: ${operation.operationId} answers ${status} as ${Object.keys(declared).join(' or ')}, not ${contentType}`);
    if (!declared && body !== undefined) throw new Error(`${where}: ${operation.operationId} declares no body for ${status}, yet one came`);
    const result = api.validateResponse(body, operation, status);
    if (result.errors) {
      throw new Error(`${where}: body does not match the spec of ${operation.operationId}: ${JSON.stringify(result.errors.slice(0, 5))}`);
    }
  }
}
