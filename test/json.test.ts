import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonBytes } from '../src/http/json.js';
import { turnsDuring } from './helpers/turns.js';

describe('jsonBytes: a body as JSON, a list written an item at a time', () => {
  it('writes the bytes JSON.stringify writes, for any body and any list shape', async () => {
    const value = fc.jsonValue();
    const bodies = fc.oneof(
      value,
      fc.array(value),
      fc.record({ events: fc.array(value), rest_url: fc.string(), total: fc.integer() }),
      fc.record({ body: fc.record({ venues: fc.array(value), total: fc.integer() }), status: fc.constant(200), headers: fc.dictionary(fc.string(), fc.string()) }),
      fc.record({ items: fc.array(fc.oneof(value, fc.constant(undefined))), gone: fc.constant(undefined), kept: value }, { requiredKeys: ['items'] }),
    );
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        const expected = JSON.stringify(body) as string | undefined;
        expect((await jsonBytes(body))?.toString()).toBe(expected);
      }),
      { numRuns: 3_000 },
    );
    expect(await jsonBytes(undefined)).toBeUndefined();
  });

  it('gives the event loop a turn while it writes a large list, and the bytes are still those of one call', async () => {
    const item = { description: 'é<p>'.repeat(100_000), id: 1 };
    const body = { events: Array.from({ length: 20 }, (_, id) => ({ ...item, id })), total: 20 };
    const { result: bytes, turns } = await turnsDuring(() => jsonBytes(body));
    expect(bytes!.equals(Buffer.from(JSON.stringify(body)))).toBe(true);
    expect(turns).toBeGreaterThan(3);
  });

  it('writes a record of large texts a member at a time, with turns between, and the bytes of one call', async () => {
    const large = fc.integer({ min: 0, max: 3 }).map((n) => 'é<p>"\\\u2028'.repeat(n * 60_000));
    const record = fc.record({ id: fc.integer(), description: large, json_ld: fc.record({ description: large, gone: fc.constant(undefined), other: fc.jsonValue() }), list: fc.array(fc.jsonValue()), note: fc.string() });
    const bodies = fc.oneof(record, fc.record({ body: record, status: fc.constant(200), headers: fc.dictionary(fc.string(), fc.string()) }));
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        expect((await jsonBytes(body))!.equals(Buffer.from(JSON.stringify(body)))).toBe(true);
      }),
      { numRuns: 60 },
    );
    const event = { id: 4, description: '&lt;'.repeat(900_000), json_ld: { '@type': 'Event', description: '&lt;'.repeat(900_000) }, venue: [] };
    const { result: bytes, turns } = await turnsDuring(() => jsonBytes(event));
    expect(bytes!.equals(Buffer.from(JSON.stringify(event)))).toBe(true);
    expect(turns).toBeGreaterThanOrEqual(2); // after the description, and after the JSON-LD's
  });
});
