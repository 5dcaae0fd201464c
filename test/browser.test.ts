import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, skipBrowserTests } from './helpers/browser.js';
import { basic, checkTextAnswer, NS, TestServer } from './helpers/server.js';

/**
 * A page on another site calling Almanac from a real browser: the list totals, the caching and the concurrency
 * headers are usable only if CORS lets the page read and send them.
 */

const skipBrowser = skipBrowserTests('test/browser.test.ts');

let s: TestServer;
let site: Server;
let siteOrigin: string;
const ids: number[] = [];

beforeAll(async () => {
  s = await TestServer.start({ logLevel: 'debug' });
  for (const day of ['03', '10', '17']) {
    const made = await s.raw('POST', `${NS}/events`, { as: s.admin, json: { title: `Concert on the ${day}th`, start_date: `2031-03-${day} 20:00`, end_date: `2031-03-${day} 22:00`, cost: '15' } });
    expect(made.status).toBe(201);
    ids.push(made.body.id);
  }
  // the other site: one page, on another port of the same host, so another origin
  site = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end('<!doctype html><title>What is on</title><h1>What is on</h1>'));
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteOrigin = `http://127.0.0.1:${(site.address() as { port: number }).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => site?.close(resolve));
  await s?.close();
});

/** An answer as the page saw it: only the headers CORS let it read. */
interface Seen { method: string; url: string; status: number; text: string; headers: [string, string][] }

/** What the page does with fetch, as a widget on another site would; every answer summed up for the test. */
async function widget({ api, authorization, id }: { api: string; authorization: string; id: number }) {
  const fresh = { cache: 'no-store' } as RequestInit; // the page's own HTTP cache stays out of it
  const answers: Seen[] = [];
  const fetch = async (url: string, init: RequestInit = {}) => {
    const response = await globalThis.fetch(url, init);
    answers.push({ method: init.method ?? 'GET', url, status: response.status, text: await response.clone().text(), headers: [...response.headers] });
    return response;
  };
  const month = `${api}/events?start_date=2031-03-01&end_date=2031-03-31&per_page=2`;
  const pages = [];
  for (let i = 0; i < 2; i++) {
    const list = await fetch(month, fresh);
    pages.push({ status: list.status, total: list.headers.get('X-TEC-Total'), totalPages: list.headers.get('X-TEC-TotalPages'), shown: ((await list.json()) as { events: unknown[] }).events.length });
  }
  const read = await fetch(`${api}/events/${id}`, fresh);
  const tag = read.headers.get('ETag');
  const lastModified = read.headers.get('Last-Modified');
  const revalidated = [];
  for (let i = 0; i < 2; i++) revalidated.push((await fetch(`${api}/events/${id}`, { ...fresh, headers: { 'If-None-Match': tag ?? '' } })).status);

  const mine = await fetch(`${api}/events/${id}`, { ...fresh, headers: { Authorization: authorization } });
  const myTag = mine.headers.get('ETag') ?? '';
  const update = (cost: string) => fetch(`${api}/events/${id}`, {
    method: 'PATCH',
    headers: { Authorization: authorization, 'If-Match': myTag, 'Content-Type': 'application/json' },
    body: JSON.stringify({ cost }),
  });
  const first = await update('20');
  const second = await update('25'); // the tag it sends is stale now
  return {
    answers, pages, tag, lastModified, revalidated,
    first: { status: first.status, cost: ((await first.json()) as { cost: string }).cost, tag: first.headers.get('ETag') },
    second: { status: second.status, code: ((await second.json()) as { code: string }).code },
  };
}

describe('a page on another origin', () => {
  it.skipIf(skipBrowser)('reads list totals, revalidates with ETag, updates with If-Match and is told 412 on a stale tag', async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const blocked: string[] = [];
      page.on('console', (message) => {
        if (message.text().includes('CORS')) blocked.push(message.text());
      });
      await page.goto(`${siteOrigin}/`);
      const seen = await page.evaluate(widget, { api: `${s.baseUrl}${NS}`, authorization: basic(s.admin), id: ids[0]! });
      expect(blocked).toEqual([]); // no request refused by CORS
      // every answer the page received is checked against the spec, as in every other test
      for (const a of seen.answers) await checkTextAnswer(a.method, a.url, a.status, a.text, new Headers(a.headers));
      expect(seen.answers).toHaveLength(8);

      expect(seen.pages).toEqual([{ status: 200, total: '3', totalPages: '2', shown: 2 }, { status: 200, total: '3', totalPages: '2', shown: 2 }]);
      expect(seen.tag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      expect(seen.lastModified).toMatch(/ GMT$/);
      expect(seen.revalidated).toEqual([304, 304]);
      expect(seen.first).toEqual({ status: 200, cost: '$20', tag: null }); // a write's answer carries no tag
      expect(seen.second).toEqual({ status: 412, code: 'rest_precondition_failed' });
      expect((await s.raw('GET', `${NS}/events/${ids[0]}`)).body.cost).toBe('$20'); // the stale write changed nothing
      // the second revalidation was answered before Koa, with the header lines the pipeline sent the same origin
      const front = s.logs.map((line) => JSON.parse(line) as { front?: boolean; status?: number }).filter((l) => l.front);
      expect(front.map((l) => l.status)).toContain(304);
    } finally {
      await browser.close();
    }
  }, 90_000);
});
