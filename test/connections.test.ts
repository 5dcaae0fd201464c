/**
 * Clients that lie about their bodies, send them too slowly or pipeline requests they do not read the answers of:
 * answered at once, cut off after the configured timeouts, or answered one request at a time, never left holding a
 * connection or the process.
 */
import { once } from 'node:events';
import { createConnection } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
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

describe('pipelined requests', () => {
  it('are answered one at a time, in order: one client holds neither the process nor memory for answers it does not read, and a write is seen by the read after it', async () => {
    const k = await TestServer.start({ cacheBytes: 0 });
    // clients that leave with answers half sent are lines of the log, not stacks printed on stderr (as Koa prints
    // what it is not told how to report)
    const printed: string[] = [];
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (printed.push(String(chunk)), true));
    const consoleError = vi.spyOn(console, 'error').mockImplementation((...values: unknown[]) => void printed.push(values.join(' ')));
    try {
      const ids: number[] = [];
      for (let i = 0; i < 50; i++) {
        ids.push((await k.raw('POST', `${NS}/events`, { as: k.admin, json: { title: `Pipelined ${i}`, start_date: `2031-04-${10 + (i % 20)} 10:00`, end_date: `2031-04-${10 + (i % 20)} 11:00` } })).body.id);
      }
      // 600 reads of a page of 50 events with small answers (`_fields`): all were begun at once, and a read by id from
      // another client waited 4.6 s for them (3,000 pages of whole events held the process 20 s); now they are answered
      // one at a time, and the read by id waits for one at most
      const paths = Array.from({ length: 600 }, (_, i) => `${NS}/events?per_page=50&start_date=2031-04-01&end_date=2031-04-30&_fields=events.id${i % 2 ? '&search=pipelined' : ''}`);
      expect((await k.raw('GET', `${NS}/events/${ids[0]}`)).status).toBe(200);
      const client = await k.pipelined(paths);
      await sleep(200);
      const started = performance.now();
      expect((await k.raw('GET', `${NS}/events/${ids[1]}`)).status).toBe(200);
      expect(performance.now() - started, 'a read by id beside them').toBeLessThan(1_000);
      const answers = await client.read();
      expect(answers.map((a) => a.status)).toEqual(paths.map(() => 200));
      expect(answers.every((a) => a.body.events.length === 50 && a.body.events[0].id === ids[0])).toBe(true);
      // 400 pages of 50 whole events, 70 MB of answers: all were begun at once, and their answers held in memory until
      // the client read them; now none is begun while the client leaves the last one unread. Request ids count the
      // requests begun in this process
      const begun = async () => parseInt((await k.raw('GET', `${NS}/events/${ids[0]}`)).headers.get('x-request-id')!.split('-')[1]!, 36);
      const before = await begun();
      const whole = await k.pipelined(Array.from({ length: 400 }, (_, i) => `${NS}/events?per_page=50&start_date=2031-04-01&end_date=2031-04-30${i % 2 ? '&search=pipelined' : ''}`));
      await sleep(1_000);
      expect((await begun()) - before - 1, 'requests begun while the client read none of the answers').toBeLessThan(200);
      expect((await whole.read()).every((a) => a.status === 200 && a.body.events.length === 50)).toBe(true);
      // a client that goes with requests still waiting has none of them begun
      const gone = await k.pipelined(Array.from({ length: 400 }, () => `${NS}/events?per_page=50&start_date=2031-04-01&end_date=2031-04-30`));
      await sleep(500);
      gone.close();
      const closed = await begun();
      await sleep(1_000);
      expect((await begun()) - closed - 1, 'requests begun after the client went').toBeLessThan(3);
      // a pipelined write is made in its turn, and what it changed is read by the request after it
      const [made, after] = await (await k.pipelined([
        { method: 'POST', path: `${NS}/events`, as: k.admin, json: { title: 'Pipelined write', start_date: '2031-04-30 10:00', end_date: '2031-04-30 11:00' } },
        `${NS}/events?start_date=2031-04-30&end_date=2031-04-30`,
      ])).read();
      expect([made!.status, after!.status, after!.body.events.map((e: { id: number }) => e.id)]).toEqual([201, 200, [made!.body.id]]);
    } finally {
      await k.close();
      stderr.mockRestore();
      consoleError.mockRestore();
    }
    expect(printed.join('')).toBe('');
  }, 120_000);
});

describe('clients that stop reading', () => {
  it('are cut off once ALMANAC_SEND_TIMEOUT passes without the connection taking anything, the rest of the answer unsent', async () => {
    const k = await TestServer.start({ sendTimeoutMs: 2_000 });
    try {
      // an answer of 16 descriptions of 900 KB, more than a connection's buffers hold: it was held, and its memory, for good
      const description = '<p>Doors &amp; seats, <b>bring</b> “tickets”</p>\n'.repeat(18_000);
      for (let i = 0; i < 16; i++) {
        expect((await k.raw('POST', `${NS}/events`, { as: k.admin, json: { title: `Large ${i}`, description, start_date: '2031-05-01 10:00', end_date: '2031-05-01 11:00' } })).status).toBe(201);
      }
      const path = `${NS}/events?per_page=50&start_date=2031-05-01&end_date=2031-05-01`;
      const whole = Buffer.byteLength((await k.raw('GET', path)).text);
      const socket = createConnection({ host: '127.0.0.1', port: Number(new URL(k.baseUrl).port) });
      await once(socket, 'connect');
      socket.pause();
      socket.on('error', () => undefined);
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      await sleep(6_000); // the answer begun, then nothing taken for 2 s
      let received = 0;
      socket.on('data', (chunk: Buffer) => void (received += chunk.length));
      const closed = once(socket, 'close');
      socket.resume();
      await Promise.race([closed, sleep(20_000)]);
      expect(socket.destroyed, 'the server closed the connection').toBe(true);
      expect(received).toBeGreaterThan(0);
      expect(received, `${received} bytes of an answer of ${whole}`).toBeLessThan(whole);
    } finally {
      await k.close();
    }
  }, 90_000);
});

describe('ALMANAC_HEADERS_TIMEOUT, ALMANAC_REQUEST_TIMEOUT and ALMANAC_SEND_TIMEOUT', () => {
  it('default to 20, 60 and 60 seconds, and the headers cannot take longer than the request', () => {
    expect(loadConfig({})).toMatchObject({ headersTimeoutMs: 20_000, requestTimeoutMs: 60_000, sendTimeoutMs: 60_000 });
    expect(loadConfig({ ALMANAC_SEND_TIMEOUT: '5' })).toMatchObject({ sendTimeoutMs: 5_000 });
    expect(loadConfig({ ALMANAC_HEADERS_TIMEOUT: '5', ALMANAC_REQUEST_TIMEOUT: '5' })).toMatchObject({ headersTimeoutMs: 5_000, requestTimeoutMs: 5_000 });
    expect(() => loadConfig({ ALMANAC_HEADERS_TIMEOUT: '30', ALMANAC_REQUEST_TIMEOUT: '10' })).toThrow(ConfigError);
    for (const bad of ['0', '-1', 'soon', '3601']) {
      expect(() => loadConfig({ ALMANAC_REQUEST_TIMEOUT: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ ALMANAC_SEND_TIMEOUT: bad })).toThrow(ConfigError);
    }
  });
});
