import { describe, expect, it } from 'vitest';
import { OpenAPIRouter, type Operation, type Request } from 'openapi-backend';
import { createBackend, parseDispatched } from '../src/http/backend.js';
import type { Handlers } from '../src/http/operation.js';
import { HTTP_METHODS, loadSpec } from '../src/http/spec.js';

/** Every operation of the spec answered by a handler that is never called: these tests only parse. */
function inertHandlers(): Handlers {
  const handlers: Record<string, () => never> = {};
  for (const item of Object.values(loadSpec().paths as Record<string, Record<string, { operationId?: string }>>)) {
    for (const method of HTTP_METHODS) {
      const id = item[method]?.operationId;
      if (id) handlers[id] = () => { throw new Error('not called'); };
    }
  }
  return handlers as unknown as Handlers;
}

/** A concrete path for a template, each parameter filled with `value`. */
const fill = (template: string, value: string) => template.replace(/\{[^}]+\}/g, value);

// dispatch hands over the query normalised for the operation: any plain data (Request's type says strings)
const QUERIES = [
  {},
  { page: '2', per_page: '5' },
  { categories: ['1', '2'], tags: 'music', search: 'café au lait' },
  { start_date: '2031-01-01 10:00', status: ['publish', 'draft'], nested: { a: ['1'], b: { c: 'x' } } },
  { xlate_language: 'fr', password: '' },
] as unknown as Request['query'][];
const PATH_VALUES = ['42', 'spring-reading', 'caf%C3%A9', '0', ''];

describe("the parse of dispatched requests is the router's own", async () => {
  const backend = await createBackend(inertHandlers(), { validateResponses: false, exists: async () => true });
  const api = backend.api;
  const routerParse = (req: Request, operation?: Operation) => OpenAPIRouter.prototype.parseRequest.call(api.router, req, operation);
  let leftToRouter = 0;
  const fast = parseDispatched(api, (req, operation) => (leftToRouter++, routerParse(req, operation)));
  const operations = api.getOperations() as Operation[];

  it.each(operations.map((op) => [op.operationId!, op] as const))('%s', (_id, operation) => {
    leftToRouter = 0;
    for (const value of PATH_VALUES) {
      for (const query of QUERIES) {
        for (const path of [fill(operation.path, value), fill(operation.path, value) + '/']) {
          const req: Request = {
            method: operation.method.toUpperCase(),
            path,
            query: structuredClone(query),
            headers: { 'content-type': 'application/json' },
            body: operation.requestBody ? { title: 'A title', categories: [1, 2], venue: { venue: 'Hall' } } : undefined,
          };
          const expected = routerParse(structuredClone(req), operation);
          expect(fast(structuredClone(req), operation)).toEqual(expected);
          expect(fast(structuredClone(req))).toEqual(routerParse(structuredClone(req)));
        }
      }
    }
    expect(leftToRouter).toBe(0);
  });

  it('copies the query, so that validation coercing the parse leaves the request as it came', () => {
    const query = { categories: ['1', '2'], nested: { a: ['1'] } };
    const parsed = fast({ method: 'GET', path: '/events', query, headers: {} } as unknown as Request, operations[0]);
    (parsed.query.categories as unknown as number[])[0] = 1;
    (parsed.query as unknown as { nested: { a: string[] } }).nested.a.push('2');
    expect(query).toEqual({ categories: ['1', '2'], nested: { a: ['1'] } });
  });

  it('leaves to the router what dispatch never sends: a cookie, a body as text, a query string', () => {
    const operation = operations.find((op) => op.requestBody)!;
    leftToRouter = 0;
    for (const req of [
      { method: 'POST', path: fill(operation.path, '7'), query: {}, headers: { Cookie: 'a=1; b=2', 'Content-Type': 'application/json' }, body: { title: 'x' } },
      { method: 'POST', path: fill(operation.path, '7'), query: {}, headers: { 'content-type': 'application/json' }, body: '{"title":"x"}' },
      { method: 'POST', path: fill(operation.path, '7') + '?page=2&tags[]=a', query: 'page=2&tags[]=a', headers: {} },
    ] as Request[]) {
      expect(fast(structuredClone(req), operation)).toEqual(routerParse(structuredClone(req), operation));
    }
    expect(fast({ method: 'GET', path: '/x', query: {}, headers: { Cookie: 'a=1' } }).cookies).toEqual({ a: '1' });
    expect(leftToRouter).toBe(4);
  });
});
