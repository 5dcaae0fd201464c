import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSpec } from '../src/http/spec.js';
import { launchChromium, skipBrowserTests } from './helpers/browser.js';
import { NS, TestServer } from './helpers/server.js';

const skipBrowser = skipBrowserTests('test/docs.test.ts');

const artifacts = join(import.meta.dirname, 'artifacts');

let s: TestServer;
beforeAll(async () => {
  s = await TestServer.start();
});
afterAll(() => s.close());

describe('the documentation page', () => {
  it('is served by Almanac itself: page, script, stylesheet, all tagged', async () => {
    const page = await s.raw('GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.text).toContain(`${s.baseUrl}/docs/swagger-ui-bundle.js`);
    expect(page.text).toContain(`${s.baseUrl}/wp-json/tribe/events/v1/doc`);
    expect(page.text).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/); // no CDN
    const script = await s.raw('GET', '/docs/swagger-ui-bundle.js');
    expect(script.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    expect(script.text).not.toContain('sourceMappingURL');
    const css = await s.raw('GET', '/docs/swagger-ui.css');
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect((await s.raw('GET', '/docs/swagger-ui.css', { headers: { 'If-None-Match': css.headers.get('etag')! } })).status).toBe(304);
    expect((await s.raw('GET', '/de/docs')).text).toContain(`${s.baseUrl}/de/wp-json/tribe/events/v1/doc`);
    expect((await s.raw('GET', '/docs/other.js')).status).toBe(404);
  });

  it.skipIf(skipBrowser)('renders every operation in a real browser, offline, and leaves a screenshot', async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 2000 } });
      const outside: string[] = [];
      const failed: string[] = [];
      page.on('request', (request) => {
        if (!request.url().startsWith(s.baseUrl) && !request.url().startsWith('data:')) outside.push(request.url());
      });
      page.on('requestfailed', (request) => failed.push(request.url()));
      page.on('pageerror', (error) => failed.push(error.message));
      await page.goto(`${s.baseUrl}/docs`);

      // the page renders the namespace's document (`…/doc`): every operation of the namespace
      const operations: { tag: string; operationId: string }[] = [];
      for (const [path, item] of Object.entries(loadSpec().paths as Record<string, Record<string, { operationId?: string; tags?: string[] }>>)) {
        if (path !== NS && !path.startsWith(`${NS}/`)) continue;
        for (const op of Object.values(item)) if (op.operationId) operations.push({ tag: op.tags?.[0] ?? 'default', operationId: op.operationId });
      }
      await page.waitForSelector('.opblock', { timeout: 30_000 });
      await expect.poll(() => page.locator('.opblock').count(), { timeout: 30_000 }).toBeGreaterThanOrEqual(operations.length);
      const ids = await page.$$eval('.opblock', (blocks) => blocks.map((b) => b.id));
      for (const { tag, operationId } of operations) expect(ids, operationId).toContain(`operations-${tag}-${operationId}`);
      expect(await page.textContent('.info .title')).toContain('Almanac');

      mkdirSync(artifacts, { recursive: true });
      const file = join(artifacts, 'docs.png');
      rmSync(file, { force: true });
      await page.screenshot({ path: file, fullPage: false });
      const png = readFileSync(file);
      expect(png.length).toBeGreaterThan(10_000);
      expect(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
      expect(outside).toEqual([]); // no CDN, no telemetry
      expect(failed).toEqual([]);
    } finally {
      await browser.close(); // playwright's own temporary profile goes with it
    }
  }, 90_000);
});
