import { setTimeout as sleep } from 'node:timers/promises';
import { NAMESPACE } from '../http/spec.js';
import type { Wire } from './records.js';
import { withoutTrailing } from '../domain/text.js';

/**
 * The source of an import: a site speaking the plugin's `tribe/events/v1` API (WordPress with The Events Calendar,
 * or another Almanac), read with Node's fetch. Network failures, 5xx and 429 answers are retried with exponential
 * backoff (a 429's `Retry-After` is honoured); anything else is an answer.
 */

/** The import cannot go on: the source is unreachable, is not the plugin's API, refused the credentials, or failed. */
export class ImportError extends Error {}

/** The source answered a request with an error the caller may handle (e.g. a status filter the caller may not use). */
export class SourceRefusal extends ImportError {
  constructor(message: string, readonly status: number, readonly code: string, readonly params: string[]) {
    super(message);
  }
}

export interface Credentials {
  login: string;
  password: string;
}

export interface SourceOptions {
  /** Attempts per request before giving up (network errors, 5xx, 429). */
  attempts?: number;
  /** Delay before the first retry; doubled for each further one. */
  retryDelayMs?: number;
  timeoutMs?: number;
  /** Told about each retry (for a note on stderr). */
  onRetry?: (message: string) => void;
}

/** What the namespace index says about the source. */
export interface SourceInfo {
  /** The parameter that chooses the language of a request (`xlate_language`, `wpml_language`), when the source has languages. */
  languageParam: string | null;
  /** The site as global ids name it: host and path, no scheme or port (`example.org/blog`). */
  site: string;
}

export interface Answer {
  status: number;
  headers: Headers;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  json: unknown;
  contentType: string;
}

export interface ListPage {
  items: Wire[];
  total: number;
  totalPages: number;
}

export type Params = Record<string, string | number | undefined>;

const ROUTE_KEYS: Record<string, string> = { events: 'events', venues: 'venues', organizers: 'organizers', categories: 'categories', tags: 'tags' };

/** The site key of a URL as global ids write it: host and path without scheme, port or trailing slash. */
function siteKey(url: URL, path: string): string {
  return `${url.hostname}${withoutTrailing(path, '/')}`;
}

/** TLS failures no later attempt mends: the certificate is what it is. */
const CERTIFICATE_FAILURES = new Set(['CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'ERR_TLS_CERT_ALTNAME_INVALID']);

/** A failed fetch in words, and whether it would fail the same way however often it is tried again (`final`). */
function failureOf(err: unknown, url: string): { text: string; final: boolean } {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError') return { text: 'no answer in time', final: false };
  // the Fetch standard's blocked ports (those of other protocols: 1, 25, 6000, …), refused before any connection
  if (e?.cause?.message === 'bad port') return { text: `port ${new URL(url).port} is one fetch refuses to connect to (the port of another protocol): serve the site on another one`, final: true };
  const code = e?.cause?.code;
  const final = code !== undefined && CERTIFICATE_FAILURES.has(code);
  const known: Record<string, string> = {
    ECONNREFUSED: 'connection refused', ENOTFOUND: 'no such host', EAI_AGAIN: 'no such host (DNS lookup failed)',
    ECONNRESET: 'connection reset', ETIMEDOUT: 'connection timed out', EHOSTUNREACH: 'host unreachable',
    UND_ERR_SOCKET: 'connection closed', CERT_HAS_EXPIRED: 'its TLS certificate has expired',
  };
  if (code && known[code]) return { text: known[code]!, final };
  return { text: code ?? e?.cause?.message ?? e?.message ?? String(err), final };
}

export class Source {
  readonly base: URL;
  private readonly attempts: number;
  private readonly retryDelayMs: number;
  private readonly timeoutMs: number;
  private readonly headers: Record<string, string>;

  constructor(base: string, private readonly auth: Credentials | null, private readonly options: SourceOptions = {}) {
    this.base = new URL(base);
    this.attempts = options.attempts ?? 5;
    this.retryDelayMs = options.retryDelayMs ?? 250;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.headers = { Accept: 'application/json', 'User-Agent': 'almanac-import' };
    if (auth) this.headers.Authorization = 'Basic ' + Buffer.from(`${auth.login}:${auth.password}`).toString('base64');
  }

  /** The URL of a route under the base (`events/12`), with its query; `?rest_route=` bases keep that form. */
  url(route: string, params: Params = {}): string {
    const url = new URL(this.base);
    const restRoute = url.searchParams.get('rest_route');
    if (restRoute !== null) url.searchParams.set('rest_route', [withoutTrailing(restRoute, '/'), route].filter(Boolean).join('/'));
    else url.pathname = [withoutTrailing(url.pathname, '/'), route].filter(Boolean).join('/');
    for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, String(value));
    return url.toString();
  }

  /** GET a route, retrying network failures, 5xx and 429 with backoff. */
  async get(route: string, params: Params = {}): Promise<Answer> {
    const url = this.url(route, params);
    let failure = '';
    for (let attempt = 1; ; attempt++) {
      let wait = this.retryDelayMs * 2 ** (attempt - 1);
      try {
        const response = await fetch(url, { headers: this.headers, signal: AbortSignal.timeout(this.timeoutMs) });
        if (response.status < 500 && response.status !== 429) {
          const body = await response.text();
          const contentType = response.headers.get('content-type') ?? '';
          let json: unknown;
          try {
            json = body ? JSON.parse(body) : undefined;
          } catch {
            json = undefined;
          }
          return { status: response.status, headers: response.headers, json, contentType };
        }
        await response.body?.cancel();
        failure = `HTTP ${response.status}`;
        const retryAfter = Number(response.headers.get('retry-after'));
        if (response.status === 429 && Number.isFinite(retryAfter) && retryAfter > 0) wait = Math.min(60_000, retryAfter * 1000);
      } catch (err) {
        const failed = failureOf(err, url);
        failure = failed.text;
        if (failed.final) throw new ImportError(`${url} did not answer: ${failure}`);
      }
      if (attempt >= this.attempts) throw new ImportError(`${url} did not answer: ${failure} (${this.attempts} attempts)`);
      this.options.onRetry?.(`${url}: ${failure}; trying again in ${wait} ms`);
      await sleep(wait);
    }
  }

  /**
   * Checks that the base is the plugin's namespace index and that it accepts the credentials; what the import needs
   * to know about the site. Fails with one clear sentence otherwise.
   */
  async describe(): Promise<SourceInfo> {
    const where = this.base.toString();
    let answer: Answer;
    try {
      answer = await this.get('');
    } catch (err) {
      throw new ImportError(`cannot reach ${where}: ${(err as Error).message.replace(/^\S+ did not answer: /, '')}`);
    }
    const error = answer.json as { code?: unknown; message?: unknown } | undefined;
    const said = typeof error?.code === 'string' ? ` (${error.code}${typeof error.message === 'string' ? `: ${error.message}` : ''})` : '';
    if (answer.status === 401 || answer.status === 403) {
      if (this.auth) throw new ImportError(`${where} refused the credentials of "${this.auth.login}"${said}`);
      throw new ImportError(`${where} requires credentials: give --auth login:application-password${said}`);
    }
    const notPlugin = `${where} is not the REST API of The Events Calendar (${NAMESPACE})`;
    if (answer.status !== 200) throw new ImportError(`${notPlugin}: it answered HTTP ${answer.status}${said}`);
    if (answer.json === undefined) throw new ImportError(`${notPlugin}: it answered ${answer.contentType.split(';')[0] || 'something'} that is not JSON`);
    const index = answer.json as { namespace?: unknown; routes?: Record<string, { endpoints?: { args?: Record<string, unknown> }[] }>; _links?: { up?: { href?: unknown }[] } };
    const events = index?.routes?.[`/${NAMESPACE}/events`];
    if (index?.namespace !== NAMESPACE || !events) throw new ImportError(`${notPlugin}: its answer is JSON but not the ${NAMESPACE} index`);

    const args = new Set((events.endpoints ?? []).flatMap((e) => Object.keys(e.args ?? {})));
    const languageParam = ['xlate_language', 'wpml_language'].find((p) => args.has(p)) ?? null;
    // the site from the index's link up to the REST root (`{site}/wp-json/`), else from the base
    let site: string;
    const up = index._links?.up?.[0]?.href;
    if (typeof up === 'string' && URL.canParse(up)) {
      const url = new URL(up);
      site = siteKey(url, url.searchParams.has('rest_route') ? url.pathname.replace(/\/index\.php$/, '') : url.pathname.replace(/\/[^/]+\/?$/, ''));
    } else {
      site = siteKey(this.base, this.base.pathname.replace(new RegExp(`/[^/]+/${NAMESPACE}/?$`), ''));
    }
    return { languageParam, site };
  }

  /** One page of a list (`events`, `venues`, `organizers`, `categories`, `tags`), or null past the last page. */
  async list(route: string, params: Params, page: number): Promise<ListPage | null> {
    const answer = await this.get(route, { ...params, page });
    const body = answer.json as Record<string, unknown> | undefined;
    if (answer.status === 404 && page > 1 && typeof body?.code === 'string' && body.code.endsWith('archive-page-not-found')) return null;
    if (answer.status !== 200) throw this.refusal(route, answer);
    const items = body?.[ROUTE_KEYS[route]!];
    if (!Array.isArray(items) || items.some((i) => !i || typeof i !== 'object')) {
      throw new ImportError(`${this.url(route, params)} did not answer a list of ${route}`);
    }
    const header = (name: string) => (answer.headers.get(name) !== null ? Number(answer.headers.get(name)) : NaN);
    const total = typeof body!.total === 'number' ? body!.total : header('x-tec-total');
    const totalPages = typeof body!.total_pages === 'number' ? body!.total_pages : header('x-tec-totalpages');
    return { items: items as Wire[], total: Number.isFinite(total) ? total : items.length, totalPages: Number.isFinite(totalPages) ? totalPages : 1 };
  }

  /** One event by id: its record, or the source's error code (`event-password-protected`, `rest-event-not-found`, …). */
  async event(id: number, params: Params = {}): Promise<{ record: Wire } | { code: string; status: number }> {
    const answer = await this.get(`events/${id}`, params);
    if (answer.status === 200 && answer.json && typeof answer.json === 'object') return { record: answer.json as Wire };
    const code = (answer.json as { code?: unknown } | undefined)?.code;
    if (answer.status === 401) throw this.refusal(`events/${id}`, answer);
    return { code: typeof code === 'string' ? code : `http-${answer.status}`, status: answer.status };
  }

  private refusal(route: string, answer: Answer): SourceRefusal {
    const body = answer.json as { code?: unknown; message?: unknown; data?: { params?: Record<string, unknown> } } | undefined;
    const code = typeof body?.code === 'string' ? body.code : '';
    const message = typeof body?.message === 'string' ? body.message : '';
    return new SourceRefusal(
      `${this.url(route)} answered HTTP ${answer.status}${code ? ` (${code}${message ? `: ${message}` : ''})` : ''}`,
      answer.status, code, Object.keys(body?.data?.params ?? {}),
    );
  }
}
