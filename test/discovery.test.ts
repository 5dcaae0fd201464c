import { readFileSync } from 'node:fs';
import { DateTime } from 'luxon';
import { OpenAPIBackend, type Document } from 'openapi-backend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSpec, type SpecDocument } from '../src/http/spec.js';
import { NS, TestServer } from './helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await TestServer.start();
});
afterAll(() => s.close());

/** Paths and record schemas of the plugin's `/doc` (a capture), in its order. */
const PLUGIN_DOC_PATHS = ['/doc', '/events', '/events/{id}', '/events/by-slug/{slug}', '/venues', '/venues/{id}', '/venues/by-slug/{slug}', '/organizers', '/organizers/{id}', '/organizers/by-slug/{slug}', '/categories', '/categories/{id}', '/tags', '/tags/{id}'];
const PLUGIN_DOC_SCHEMAS = ['ImageSize', 'CostDetails', 'Term', 'Image', 'DateDetails', 'Event', 'Venue', 'Organizer'];

/** Route patterns and endpoint methods of the captured namespace index of the plugin, in its order. */
const PLUGIN_ROUTES: [string, string[][]][] = [
  ['/tribe/events/v1', [['GET']]],
  ['/tribe/events/v1/doc', [['GET']]],
  ['/tribe/events/v1/events', [['GET'], ['POST']]],
  ['/tribe/events/v1/events/(?P<id>\\d+)', [['GET'], ['DELETE'], ['POST', 'PUT', 'PATCH']]],
  ['/tribe/events/v1/events/by-slug/(?P<slug>[^/]+)', [['GET'], ['DELETE'], ['POST', 'PUT', 'PATCH']]],
  ['/tribe/events/v1/venues', [['GET'], ['POST']]],
  ['/tribe/events/v1/venues/(?P<id>\\d+)', [['GET'], ['DELETE'], ['POST', 'PUT', 'PATCH']]],
  ['/tribe/events/v1/venues/by-slug/(?P<slug>[^/]+)', [['GET'], ['DELETE'], ['POST', 'PUT', 'PATCH']]],
  ['/tribe/events/v1/organizers', [['GET'], ['POST']]],
  ['/tribe/events/v1/organizers/(?P<id>\\d+)', [['GET'], ['DELETE'], ['POST', 'PUT', 'PATCH']]],
  ['/tribe/events/v1/organizers/by-slug/(?P<slug>[^/]+)', [['GET'], ['DELETE'], ['POST', 'PUT', 'PATCH']]],
  ['/tribe/events/v1/categories', [['GET'], ['POST']]],
  ['/tribe/events/v1/categories/(?P<id>\\d+)', [['GET'], ['POST', 'PUT', 'PATCH'], ['DELETE']]],
  ['/tribe/events/v1/tags', [['GET'], ['POST']]],
  ['/tribe/events/v1/tags/(?P<id>\\d+)', [['GET'], ['POST', 'PUT', 'PATCH'], ['DELETE']]],
];
/** Almanac's own routes (the iCalendar feeds), after the plugin's. */
const ALMANAC_ROUTES: [string, string[][]][] = [
  ['/tribe/events/v1/events.ics', [['GET']]],
  ['/tribe/events/v1/events/(?P<id>\\d+)/ics', [['GET']]],
];

/** Arguments the plugin declares on its list and create endpoints (captured index). */
const PLUGIN_EVENT_LIST_ARGS = ['page', 'per_page', 'start_date', 'end_date', 'starts_before', 'starts_after', 'ends_before', 'ends_after', 'strict_dates', 'search', 'categories', 'tags', 'venue', 'organizer', 'featured', 'status', 'geoloc', 'geoloc_lat', 'geoloc_lng', 'include', 'post_parent', 'ticketed'];
const PLUGIN_EVENT_CREATE_ARGS = ['author', 'date', 'date_utc', 'title', 'description', 'slug', 'excerpt', 'status', 'timezone', 'all_day', 'start_date', 'end_date', 'image', 'cost', 'website', 'show_map', 'show_map_link', 'hide_from_listings', 'sticky', 'featured', 'categories', 'tags', 'venue', 'organizer'];
const PLUGIN_TERM_LIST_ARGS = ['page', 'per_page', 'search', 'exclude', 'include', 'order', 'orderby', 'hide_empty', 'parent', 'post', 'event', 'slug'];

describe('the namespace index', () => {
  it('lists the plugin routes in its order with its endpoint grouping and declared args', async () => {
    const { data, response } = await s.client().GET(NS);
    expect(response.status).toBe(200);
    expect(data!.namespace).toBe('tribe/events/v1');
    expect(Object.keys(data!.routes)).toEqual([...PLUGIN_ROUTES, ...ALMANAC_ROUTES].map(([p]) => p));
    for (const [pattern, endpoints] of [...PLUGIN_ROUTES, ...ALMANAC_ROUTES]) {
      expect(data!.routes[pattern]!.endpoints.map((e) => e.methods), pattern).toEqual(endpoints);
      expect(data!.routes[pattern]!.methods).toEqual(endpoints.flat());
    }
    const events = data!.routes['/tribe/events/v1/events']!;
    for (const header of ['If-None-Match', 'If-Modified-Since', 'If-Match']) expect(JSON.stringify(data!.routes)).not.toContain(header); // headers are not arguments
    expect(Object.keys(events.endpoints[0]!.args)).toEqual(expect.arrayContaining(['modified_after', 'modified_after_id', 'modified_before']));
    expect(Object.keys(events.endpoints[0]!.args)).toEqual(expect.arrayContaining(PLUGIN_EVENT_LIST_ARGS));
    expect(Object.keys(events.endpoints[1]!.args)).toEqual(expect.arrayContaining(PLUGIN_EVENT_CREATE_ARGS));
    expect((events.endpoints[1]!.args as Record<string, { required: boolean }>).title!.required).toBe(true);
    expect((events.endpoints[0]!.args as Record<string, { default?: unknown }>).per_page!.default).toBe(10);
    expect(events._links).toEqual({ self: [{ href: `${s.baseUrl}${NS}/events` }] });
    expect(data!.routes['/tribe/events/v1/events/(?P<id>\\d+)']!._links).toBeUndefined();
    expect(Object.keys(data!.routes['/tribe/events/v1/categories']!.endpoints[0]!.args)).toEqual(expect.arrayContaining(PLUGIN_TERM_LIST_ARGS));
    expect(data!._links).toEqual({ up: [{ href: `${s.baseUrl}/wp-json/` }] });
  });

  it('carries the language prefix in its links', async () => {
    const { data } = await s.client().GET(NS, { params: { query: { xlate_language: 'de' } } });
    expect(data!._links).toEqual({ up: [{ href: `${s.baseUrl}/de/wp-json/` }] });
  });
});

/** Route → endpoints → arguments (without descriptions) of the namespace index captured from the plugin. */
const PLUGIN_ARGS = JSON.parse(readFileSync(new URL('./fixtures/plugin-index-args.json', import.meta.url), 'utf8')) as Record<string, Record<string, Record<string, unknown>>[]>;
const KEYWORDS = ['required', 'default', 'type', 'format', 'enum', 'items'];
const keywordsOf = (arg: Record<string, unknown>) => Object.fromEntries(KEYWORDS.filter((k) => k in arg).map((k) => [k, arg[k]]));

describe('the arguments of the namespace index', () => {
  it('carry what the plugin declares for each of its arguments, and Almanac keeps its own', async () => {
    const { data } = await s.client().GET(NS);
    let compared = 0;
    for (const [pattern, endpoints] of Object.entries(PLUGIN_ARGS)) {
      endpoints.forEach((pluginArgs, i) => {
        const ours = data!.routes[pattern]!.endpoints[i]!.args as Record<string, Record<string, unknown>>;
        for (const [name, theirs] of Object.entries(pluginArgs)) {
          const expected = keywordsOf(theirs);
          if (name === 'per_page') expected.default = 10; // a number here, the string "10" there (README: differences)
          if (name === 'start_date' || name === 'end_date') {
            if (i === 0 && pattern === '/tribe/events/v1/events') expect(ours[name]!.default, name).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
            if (i === 0 && pattern === '/tribe/events/v1/events') expected.default = ours[name]!.default; // computed per request, below
          }
          expect(keywordsOf(ours[name] ?? {}), `${pattern} ${i} ${name}`).toEqual(expected);
          compared++;
        }
      });
    }
    expect(compared).toBe(257); // every argument of every endpoint of the capture
    const events = data!.routes['/tribe/events/v1/events']!.endpoints;
    // Almanac's own arguments keep the keywords of their schema
    expect(events[0]!.args).toMatchObject({ modified_after: { type: 'string', format: 'wp-date-input', required: false }, xlate_language: { type: 'string', enum: ['en', 'fr', 'de'] } });
    expect((events[1]!.args as Record<string, unknown>).translation_of).toMatchObject({ type: 'integer', required: false });
    // a write's body takes the languages too (BodyLanguage), its enum kept through the allOf that describes it
    expect((events[1]!.args as Record<string, unknown>).xlate_language).toMatchObject({ type: 'string', enum: ['en', 'fr', 'de'], required: false });
  });

  it('computes the date defaults per request as the plugin does: yesterday 23:59 UTC in site time, and 24 months ahead', async () => {
    const berlin = await TestServer.start({ siteTimezone: 'Europe/Berlin' });
    try {
      const before = DateTime.utc();
      const index = (await berlin.raw('GET', NS)).body;
      const args = index.routes['/tribe/events/v1/events'].endpoints[0].args;
      const yesterday = before.minus({ days: 1 }).set({ hour: 23, minute: 59, second: 0, millisecond: 0 }).setZone('Europe/Berlin');
      expect(args.start_date.default).toBe(yesterday.toFormat('yyyy-MM-dd HH:mm:ss'));
      const end = DateTime.fromFormat(args.end_date.default, 'yyyy-MM-dd HH:mm:ss', { zone: 'utc' });
      expect(Math.abs(end.diff(before.plus({ months: 24 }), 'seconds').seconds)).toBeLessThan(5);
      // the same on the site index and in the route's OPTIONS description
      const site = (await berlin.raw('GET', '/wp-json')).body.routes['/tribe/events/v1/events'].endpoints[0].args;
      expect(site.start_date.default).toBe(args.start_date.default);
      const options = (await berlin.raw('OPTIONS', `${NS}/events`)).body.endpoints[0].args;
      expect(options.start_date.default).toBe(args.start_date.default);
      // a cached index lives for the second it was computed in, as a list does
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const later = (await berlin.raw('GET', NS)).body.routes['/tribe/events/v1/events'].endpoints[0].args;
      expect(later.end_date.default > args.end_date.default).toBe(true);
    } finally {
      await berlin.close();
    }
  });
});

describe('the site index and /doc', () => {
  it('answers GET /wp-json and /wp-json/ with the namespace and its routes', async () => {
    for (const path of ['/wp-json', '/wp-json/']) {
      const r = await s.raw('GET', path);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ name: 'Almanac', url: s.baseUrl, namespaces: ['tribe/events/v1'], gmt_offset: 0, timezone_string: '' });
      expect(Object.keys(r.body.routes)).toHaveLength(PLUGIN_ROUTES.length + ALMANAC_ROUTES.length);
    }
  });

  it('reports the site timezone', async () => {
    const berlin = await TestServer.start({ siteTimezone: 'Europe/Berlin' });
    try {
      const r = await berlin.raw('GET', '/wp-json');
      expect(r.body.timezone_string).toBe('Europe/Berlin');
      expect([1, 2]).toContain(r.body.gmt_offset);
    } finally {
      await berlin.close();
    }
  });

  it("serves the namespace's document in the plugin's shape: its address as server, paths relative to it", async () => {
    const { data } = await s.client().GET(`${NS}/doc`);
    const doc = data as unknown as SpecDocument;
    expect(doc.openapi).toBe('3.0.3');
    expect(doc.servers).toEqual([{ url: `${s.baseUrl}${NS}`, description: expect.any(String) }]);
    // the plugin's paths, and its record schemas under its names (a capture of the plugin's /doc)
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(PLUGIN_DOC_PATHS));
    expect(Object.keys(doc.components!.schemas!)).toEqual(expect.arrayContaining(PLUGIN_DOC_SCHEMAS));
    // every route of the namespace, and nothing outside it, in the file's order
    const namespacePaths = Object.keys(loadSpec().paths).filter((p) => p === NS || p.startsWith(`${NS}/`));
    expect(Object.keys(doc.paths)).toEqual(namespacePaths.map((p) => p.slice(NS.length) || '/'));
    expect(doc.paths['/events']).toEqual(loadSpec().paths[`${NS}/events`]);
    // what only the routes outside the namespace use is left out, and every reference still resolves
    expect(doc.components!.schemas).not.toHaveProperty('RestIndex');
    expect(doc.components!.schemas).not.toHaveProperty('Health');
    expect((doc.tags as { name: string }[]).map((t) => t.name)).toContain('Events');
    for (const ref of JSON.stringify(doc).match(/"#\/components\/[^"]+"/g) ?? []) {
      const [kind, name] = ref.slice('"#/components/'.length, -1).split('/');
      expect(doc.components![kind!], ref).toHaveProperty([name!]);
    }
    // a valid OpenAPI 3.0 document that routes every operation of the namespace
    const api = new OpenAPIBackend({ definition: structuredClone(doc) as unknown as Document, strict: true, quick: true });
    await api.init();
    expect(api.matchOperation({ method: 'get', path: '/events/by-slug/jazz', headers: {} })?.operationId).toBe('getEventBySlug');
    expect(api.matchOperation({ method: 'get', path: '/', headers: {} })?.operationId).toBe('getNamespaceIndex');

    const fr = await s.raw('GET', `/fr${NS}/doc`);
    expect(fr.body.servers[0].url).toBe(`${s.baseUrl}/fr${NS}`);
  });

  it('uses ALMANAC_PUBLIC_URL for every absolute link, whatever the Host header says', async () => {
    const pub = await TestServer.start({ publicUrl: 'https://events.example.org/site' });
    try {
      const r = await pub.raw('GET', `${NS}/doc`, { headers: { Host: 'evil.example' } });
      expect(r.body.servers[0].url).toBe(`https://events.example.org/site${NS}`);
      expect(r.headers.get('link')).toBe('<https://events.example.org/site/wp-json/>; rel="https://api.w.org/"');
    } finally {
      await pub.close();
    }
  });
});
