/**
 * Clients that lie about their bodies or send them too slowly: answered at once, or cut off after the configured
 * timeouts, never left holding a connection.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { basic, NS, TestServer, type RawConnection } from './helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await TestServer.start({ headersTimeoutMs: 1000, requestTimeoutMs: 2000 });
});
afterAll(() => s.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const posts = async () => (await s.sql<{ n: number }>('SELECT CAST(COUNT(*) AS INTEGER) AS n FROM posts'))[0]!.n;
const head = (method: string, contentLength: number, path = `${NS}/events`) =>
  `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${basic(s.admin)}\r\nContent-Type: application/json\r\nContent-Length: ${contentLength}\r\nConnection: close\r\n\r\n`;

/** Sends `text` a character every `everyMs` until the server closes the connection or the text ends. */
async function trickle(connection: RawConnection, text: string, everyMs: number): Promise<void> {
  for (const char of text) {
    if (!connection.send(char)) return;
    await sleep(everyMs);
  }
}

describe('a Content-Length larger than the body limit', () => {
  it.each([2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 53])('of %i, with a short body, gets 413 at once and the connection closed', async (length) => {
    const before = await posts();
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const c = await s.connect();
      c.send(head(method, length, method === 'POST' ? `${NS}/events` : `${NS}/events/1`) + '{"title":"x"}');
      const answer = await c.answer(5_000);
      expect([method, answer.status, answer.body?.code]).toEqual([method, 413, 'rest_request_too_large']);
      expect(answer.ms, 'answered at once').toBeLessThan(1_500);
    }
    expect(await posts()).toBe(before);
  });
});

describe('slow clients', () => {
  it('a body trickled a byte at a time gets 408 once ALMANAC_REQUEST_TIMEOUT has passed, and is cut off; a slow one in time is served', async () => {
    const before = await posts();
    const c = await s.connect();
    const body = JSON.stringify({ title: 'Trickled', start_date: '2031-01-01 10:00', end_date: '2031-01-01 11:00' });
    c.send(head('POST', Buffer.byteLength(body)));
    void trickle(c, body, 300);
    const answer = await c.answer(8_000);
    expect(answer.status).toBe(408);
    expect(answer.body.code).toBe('rest_request_timeout');
    expect(answer.ms).toBeGreaterThanOrEqual(1_900);
    expect(answer.ms).toBeLessThan(4_500);
    expect(await posts()).toBe(before);

    // slow, but whole within the timeout: served
    const inTime = await s.connect();
    inTime.send(head('POST', Buffer.byteLength(body)));
    for (const part of [body.slice(0, 20), body.slice(20, 50), body.slice(50)]) {
      await sleep(250);
      inTime.send(part);
    }
    const served = await inTime.answer(8_000);
    expect(served.status).toBe(201);
    expect(served.body.title).toBe('Trickled');
  });

  it('headers trickled a byte at a time get 408 once ALMANAC_HEADERS_TIMEOUT has passed, and are cut off', async () => {
    const c = await s.connect();
    const text = head('POST', 2);
    c.send(text.slice(0, 40));
    void trickle(c, text.slice(40), 200);
    const answer = await c.answer(8_000);
    expect(answer.status).toBe(408);
    expect(answer.body.code).toBe('rest_request_timeout');
    expect(answer.ms).toBeGreaterThanOrEqual(900);
    expect(answer.ms).toBeLessThan(3_500);
  });
});

describe('ALMANAC_HEADERS_TIMEOUT and ALMANAC_REQUEST_TIMEOUT', () => {
  it('default to 20 and 60 seconds, and the headers cannot take longer than the request', () => {
    expect(loadConfig({})).toMatchObject({ headersTimeoutMs: 20_000, requestTimeoutMs: 60_000 });
    expect(loadConfig({ ALMANAC_HEADERS_TIMEOUT: '5', ALMANAC_REQUEST_TIMEOUT: '5' })).toMatchObject({ headersTimeoutMs: 5_000, requestTimeoutMs: 5_000 });
    expect(() => loadConfig({ ALMANAC_HEADERS_TIMEOUT: '30', ALMANAC_REQUEST_TIMEOUT: '10' })).toThrow(ConfigError);
    for (const bad of ['0', '-1', 'soon', '3601']) expect(() => loadConfig({ ALMANAC_REQUEST_TIMEOUT: bad })).toThrow(ConfigError);
  });
});
