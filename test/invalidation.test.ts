/**
 * The response cache retires exactly what a write can change:
 * - narrow: a write leaves cached the answers it cannot change (another event, another venue), so the calendar
 *   stays fast while it is being edited;
 * - exact: a differential test runs random sequences of writes and reads against two servers on one database, one
 *   with the response cache and one without, and expects the same status, bytes and ETag from both for every read.
 *   Writes go through either server, so the cached one must also see what the other process wrote. A third server,
 *   a process of two workers with caches of their own, answers every read as well.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Almanac, cleanUp } from './helpers/process.js';
import { basic, httpCall, NS, TestServer, type Credentials } from './helpers/server.js';

let cached: TestServer;
let fresh: TestServer;
let workers: Almanac;
beforeAll(async () => {
  // debug: the log tells which answers the front gave
  cached = await TestServer.start({ logLevel: 'debug' });
  fresh = await cached.beside({ cacheBytes: 0 });
  const { dbPath, databaseUrl } = cached.config;
  workers = await Almanac.start(dbPath, 2, {
    ALMANAC_ADMIN_USER: cached.admin.login, ALMANAC_ADMIN_PASSWORD: cached.admin.password, ...(databaseUrl ? { ALMANAC_DATABASE_URL: databaseUrl } : {}),
  });
}, 90_000);
afterAll(async () => {
  await cleanUp();
  await fresh?.close();
  await cached?.close();
});

const DAY = '2032-03-';
const eventBody = (title: string, day: number, extra: Record<string, unknown> = {}) =>
  ({ title, start_date: `${DAY}${String(day).padStart(2, '0')} 10:00`, end_date: `${DAY}${String(day).padStart(2, '0')} 12:00`, ...extra });

async function write<T = any>(server: TestServer, method: string, path: string, json?: unknown): Promise<{ status: number; body: T }> {
  const { status, body } = await server.raw<T>(method, `${NS}${path}`, { as: server.admin, json });
  return { status, body };
}

/** A GET through the cached server: its answer and whether the front answer (the cache, before Koa) gave it. */
async function cachedGet(path: string, as?: Credentials) {
  const answer = await cached.raw('GET', `${NS}${path}`, { as });
  return { body: answer.body, front: cached.frontAnswered(answer.headers.get('X-Request-Id')!) };
}

describe('a write retires only the answers it can change', () => {
  it('keeps other events cached while one is written, and retires the lists and whatever embeds what changed', async () => {
    const venue = (await write(cached, 'POST', '/venues', { venue: 'Narrow Hall', city: 'Lyon' })).body;
    const kept = (await write(cached, 'POST', '/events', eventBody('Kept cached', 1, { venue: venue.id }))).body;
    const other = (await write(cached, 'POST', '/events', eventBody('Written meanwhile', 2))).body;
    const list = `/events?start_date=${DAY}01&end_date=${DAY}28`;
    await cachedGet(list);
    // (a list is kept for the second it was computed in only: whether the front gives it again depends on the clock)
    for (const path of [`/events/${kept.id}`, `/venues/${venue.id}`]) {
      await cachedGet(path);
      expect((await cachedGet(path)).front).toBe(true);
    }

    await write(fresh, 'POST', `/events/${other.id}`, { title: 'Written elsewhere' });
    expect(await cachedGet(`/events/${kept.id}`)).toMatchObject({ front: true, body: { title: 'Kept cached' } });
    expect((await cachedGet(`/venues/${venue.id}`)).front).toBe(true);
    const listed = await cachedGet(list);
    expect(listed.front).toBe(false);
    expect(listed.body.events.map((e: { title: string }) => e.title)).toContain('Written elsewhere');

    // the venue the cached event embeds changes: the event's answer goes, the list's too
    await write(fresh, 'POST', `/venues/${venue.id}`, { city: 'Grenoble' });
    const reread = await cachedGet(`/events/${kept.id}`);
    expect(reread.front).toBe(false);
    expect(reread.body.venue.city).toBe('Grenoble');
    expect((await cachedGet(list)).front).toBe(false);
  });

  it('keeps authenticated callers settled while records are written, and not once users change', async () => {
    const e = (await write(cached, 'POST', '/events', eventBody('Seen by an editor', 3))).body;
    const editor = await cached.user('editor');
    // the first request verifies the password, the second settles the caller, the third is answered at the front
    await cachedGet(`/events/${e.id}`, editor);
    await cachedGet(`/events/${e.id}`, editor);
    expect((await cachedGet(`/events/${e.id}`, editor)).front).toBe(true);
    await write(fresh, 'POST', '/events', eventBody('Another one', 4));
    expect((await cachedGet(`/events/${e.id}`, editor)).front).toBe(true);
    await fresh.user('subscriber');
    expect((await cachedGet(`/events/${e.id}`, editor)).front).toBe(false);
  });

  it('brings up to date, without computing them again, the answers a write left stale by the counts they show', async () => {
    const category = (await write(cached, 'POST', '/categories', { name: 'Counted' })).body;
    const tagged = (await write(cached, 'POST', '/tags', { name: 'counted' })).body;
    const e = (await write(cached, 'POST', '/events', eventBody('Counted once', 5, { categories: [category.id], tags: [tagged.id] }))).body;
    const paths = [`/events/${e.id}`, `/events/${e.id}?_envelope`, `/categories/${category.id}`, `/events/${e.id}?_fields=id,categories,tags`, `/events/${e.id}?_fields=categories.count`, `/events/${e.id}?_fields=id,categories`];
    // one site address for both servers, so that their links are the same
    const get = (server: TestServer, path: string, headers: Record<string, string> = {}) => httpCall(server.baseUrl, 'GET', `${NS}${path}`, { Host: 'calendar.example', ...headers });
    const before: Record<string, { body: any; etag: string | null }> = {};
    for (const path of paths) {
      await get(cached, path);
      const again = await get(cached, path);
      before[path] = { body: JSON.parse(again.text), etag: again.headers.get('ETag') };
    }
    expect(before[paths[0]!]!.body.categories[0].count).toBe(1);

    // another event in the category: its count moves, the tag's does not
    await write(fresh, 'POST', '/events', eventBody('Counted twice', 6, { categories: [category.id] }));
    for (const path of paths) {
      const answer = await get(cached, path, { 'If-None-Match': before[path]!.etag! });
      const computed = await get(fresh, path);
      // what a server without a cache answers, bytes and tag; a client holding the old tag gets the new answer
      expect(answer.status, path).toBe(200);
      expect(answer.text, path).toBe(computed.text);
      expect(answer.headers.get('ETag'), path).toBe(computed.headers.get('ETag'));
      expect(answer.headers.get('Content-Length'), path).toBe(String(Buffer.byteLength(computed.text)));
      // written in where the answer shows every term object it was built with; computed again where _fields took
      // some of their keys or left some out (the cache cannot tell where the counts are then)
      const patched = !/_fields=(categories\.count|id,categories$)/.test(path);
      expect(cached.frontAnswered(answer.headers.get('X-Request-Id')!), path).toBe(patched);
    }
    const event = (await cachedGet(`/events/${e.id}`)).body;
    expect(event.categories[0].count).toBe(2);
    expect(event.tags[0].count).toBe(1);
    expect((await cachedGet(`/categories/${category.id}`)).body.count).toBe(2);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The differential test

type Kind = 'events' | 'venues' | 'organizers' | 'categories' | 'tags';
interface Known { events: number[]; venues: number[]; organizers: number[]; categories: number[]; tags: number[]; slugs: string[] }

/** An index into a list that may grow: resolved against the list when the step runs. */
const pick = fc.nat(1000);
const of = (list: number[], n: number): number | undefined => (list.length === 0 ? undefined : list[n % list.length]);
const word = fc.constantFrom('Jazz', 'Opéra', 'Marché', 'Film', 'Talk', 'Café');
const someIds = fc.array(pick, { maxLength: 2 });

type Step = (known: Known) => Promise<void>;

/**
 * What one run knows: the records it made, and the reads it made so far (re-read after every write, when the cache
 * holds them and the write may have retired them).
 */
interface Run extends Known {
  reads: Map<string, () => Promise<void>>;
}

/** Writes, through either server: creates, partial updates, trash and delete of every kind, links between them. */
const writeStep: fc.Arbitrary<{ label: string; run: Step }> = fc.oneof(
  fc.record({ server: fc.boolean(), title: word, day: fc.integer({ min: 1, max: 28 }), venue: fc.option(pick), organizers: someIds, categories: someIds, tags: someIds, status: fc.constantFrom('publish', 'publish', 'draft'), password: fc.constantFrom('', '', 'secret') })
    .map((w) => ({
      label: `create event ${JSON.stringify(w)}`,
      run: async (k: Known) => {
        const body = eventBody(w.title, w.day, {
          status: w.status, post_password: w.password,
          ...(w.venue !== null && of(k.venues, w.venue) ? { venue: of(k.venues, w.venue) } : {}),
          organizer: w.organizers.map((n) => of(k.organizers, n)).filter(Boolean),
          categories: w.categories.map((n) => of(k.categories, n)).filter(Boolean),
          tags: w.tags.map((n) => of(k.tags, n)).filter(Boolean),
        });
        const { status, body: created } = await write(w.server ? cached : fresh, 'POST', '/events', body);
        expect(status).toBe(201);
        k.events.push(created.id);
        k.slugs.push(created.slug);
      },
    })),
  fc.record({ server: fc.boolean(), target: pick, title: fc.option(word), venue: fc.option(pick), categories: fc.option(someIds), status: fc.option(fc.constantFrom('publish', 'draft')), featured: fc.option(fc.boolean()) })
    .map((w) => ({
      label: `update event ${JSON.stringify(w)}`,
      run: async (k: Known) => {
        const id = of(k.events, w.target);
        if (id === undefined) return;
        const body: Record<string, unknown> = {};
        if (w.title !== null) body.title = `${w.title} again`;
        if (w.venue !== null) body.venue = of(k.venues, w.venue) ?? 0;
        if (w.categories !== null) body.categories = w.categories.map((n) => of(k.categories, n)).filter(Boolean);
        if (w.status !== null) body.status = w.status;
        if (w.featured !== null) body.featured = w.featured;
        await write(w.server ? cached : fresh, 'POST', `/events/${id}`, body);
      },
    })),
  fc.record({ server: fc.boolean(), kind: fc.constantFrom<Kind>('venues', 'organizers'), name: word, city: word })
    .map((w) => ({
      label: `create ${w.kind} ${JSON.stringify(w)}`,
      run: async (k: Known) => {
        const body = w.kind === 'venues' ? { venue: `${w.name} Hall`, city: w.city } : { organizer: `${w.name} Club`, phone: '555-0100' };
        const { body: created } = await write(w.server ? cached : fresh, 'POST', `/${w.kind}`, body);
        // the same name gives back the same record (as the plugin does)
        if (!k[w.kind].includes(created.id)) k[w.kind].push(created.id);
      },
    })),
  fc.record({ server: fc.boolean(), kind: fc.constantFrom<Kind>('venues', 'organizers'), target: pick, value: word })
    .map((w) => ({
      label: `update ${w.kind} ${JSON.stringify(w)}`,
      run: async (k: Known) => {
        const id = of(k[w.kind], w.target);
        if (id === undefined) return;
        await write(w.server ? cached : fresh, 'POST', `/${w.kind}/${id}`, w.kind === 'venues' ? { city: w.value } : { phone: `555-01${w.value.length}` });
      },
    })),
  fc.record({ server: fc.boolean(), kind: fc.constantFrom<Kind>('events', 'events', 'venues', 'organizers'), target: pick })
    .map((w) => ({
      label: `trash ${w.kind} ${JSON.stringify(w)}`,
      run: async (k: Known) => {
        const id = of(k[w.kind], w.target);
        if (id !== undefined) await write(w.server ? cached : fresh, 'DELETE', `/${w.kind}/${id}`);
      },
    })),
  fc.record({ server: fc.boolean(), kind: fc.constantFrom<Kind>('categories', 'tags'), name: word, parent: fc.option(pick) })
    .map((w) => ({
      label: `create ${w.kind} ${JSON.stringify(w)}`,
      run: async (k: Known) => {
        const parent = w.kind === 'categories' && w.parent !== null ? of(k.categories, w.parent) : undefined;
        const { status, body } = await write(w.server ? cached : fresh, 'POST', `/${w.kind}`, { name: `${w.name} ${k[w.kind].length}`, ...(parent ? { parent } : {}) });
        if (status === 201) k[w.kind].push(body.id);
      },
    })),
  fc.record({ server: fc.boolean(), kind: fc.constantFrom<Kind>('categories', 'tags'), target: pick, name: word, remove: fc.boolean() })
    .map((w) => ({
      label: `${w.remove ? 'delete' : 'rename'} ${w.kind} ${JSON.stringify(w)}`,
      run: async (k: Known) => {
        const id = of(k[w.kind], w.target);
        if (id === undefined) return;
        const server = w.server ? cached : fresh;
        if (w.remove) {
          await write(server, 'DELETE', `/${w.kind}/${id}`);
          k[w.kind].splice(k[w.kind].indexOf(id), 1);
        } else await write(server, 'POST', `/${w.kind}/${id}`, { name: `${w.name} renamed ${id}`, description: `About ${w.name}` });
      },
    })),
);

/** Reads of every kind, anonymous or as the administrator (who sees drafts and protected content). */
const readStep = fc.record({
  admin: fc.boolean(),
  target: pick,
  path: fc.constantFrom(
    (k: Known, n: number) => `/events/${of(k.events, n) ?? 1}`,
    (k: Known, n: number) => `/events/${of(k.events, n) ?? 1}?_envelope`,
    (k: Known, n: number) => `/events/${of(k.events, n) ?? 1}?_fields=id,categories,tags`,
    (k: Known, n: number) => `/events/by-slug/${k.slugs[n % Math.max(1, k.slugs.length)] ?? 'none'}`,
    () => `/events?start_date=${DAY}01&end_date=${DAY}28&per_page=50`,
    () => `/events?start_date=${DAY}01&end_date=${DAY}28&status=draft`,
    (k: Known, n: number) => `/events?start_date=${DAY}01&categories=${of(k.categories, n) ?? 1}`,
    (k: Known, n: number) => `/events?start_date=${DAY}01&tags=${of(k.tags, n) ?? 1}`,
    (k: Known, n: number) => `/events?start_date=${DAY}01&venue=${of(k.venues, n) ?? 1}`,
    () => `/events?start_date=${DAY}01&search=jazz`,
    () => `/events?start_date=${DAY}01&featured=true`,
    (k: Known, n: number) => `/venues/${of(k.venues, n) ?? 1}`,
    () => '/venues?per_page=50',
    (k: Known, n: number) => `/organizers/${of(k.organizers, n) ?? 1}`,
    () => '/organizers',
    () => '/categories?hide_empty=false&per_page=50',
    () => '/categories?per_page=50',
    (k: Known, n: number) => `/categories/${of(k.categories, n) ?? 1}`,
    (k: Known, n: number) => `/tags/${of(k.tags, n) ?? 1}`,
    () => '/tags?hide_empty=false',
    (k: Known, n: number) => `/events/${of(k.events, n) ?? 1}/ics`,
  ),
}).map((r) => ({
  label: `read ${r.admin ? 'as admin ' : ''}#${r.path.toString().slice(0, 60)}…(${r.target})`,
  run: async (k: Known) => {
    const path = `${NS}${r.path(k, r.target)}`;
    const again = async () => {
    // one site address for both servers, so that their links are the same
    const headers: Record<string, string> = { Host: 'calendar.example' };
    if (r.admin) headers.Authorization = basic(cached.admin);
    const answer = async (base: string) => {
      const got = await httpCall(base, 'GET', path, headers);
      if (base === cached.baseUrl) cachedReads.push(got.headers.get('X-Request-Id')!);
      return { path, status: got.status, etag: got.headers.get('ETag'), body: got.text };
    };
    // the uncached answers taken just before and just after bracket the cached ones: they differ only when a second
    // turned in between (list links echo the default dates, computed to the second)
    const before = await answer(fresh.baseUrl);
    const got = [await answer(cached.baseUrl), await answer(workers.base)];
    let after: unknown;
    for (const one of got) {
      if (JSON.stringify(one) === JSON.stringify(before)) continue;
      after ??= await answer(fresh.baseUrl);
      expect(one).toEqual(after);
    }
    };
    await again();
    await again();
    (k as Run).reads.set(`${r.admin} ${path}`, again);
  },
}));

/** Every run starts from records of each kind linked to each other, so that most writes touch what reads embed. */
async function furnish(run: Run): Promise<void> {
  const made = async (path: string, json: Record<string, unknown>) => (await write(fresh, 'POST', path, json)).body.id as number;
  const n = run.events.length + Math.floor(Math.random() * 1e6);
  for (let i = 0; i < 2; i++) {
    run.venues.push(await made('/venues', { venue: `Furnished Hall ${n}-${i}`, city: 'Nantes' }));
    run.organizers.push(await made('/organizers', { organizer: `Furnished Club ${n}-${i}` }));
    run.categories.push(await made('/categories', { name: `Furnished ${n}-${i}` }));
    run.tags.push(await made('/tags', { name: `furnished-${n}-${i}` }));
  }
  for (let i = 0; i < 3; i++) {
    const { body } = await write(fresh, 'POST', '/events', eventBody(`Furnished ${i}`, 10 + i, {
      venue: run.venues[i % 2], organizer: [run.organizers[i % 2]], categories: [run.categories[i % 2]], tags: [run.tags[(i + 1) % 2]],
    }));
    run.events.push(body.id);
    run.slugs.push(body.slug);
  }
}

/** The request ids of the cached server's answers to the differential test's reads. */
const cachedReads: string[] = [];

describe('the cache answers exactly what a server without it answers', () => {
  it('after any sequence of writes through either server, for every read', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof({ weight: 2, arbitrary: writeStep }, { weight: 3, arbitrary: readStep }), { minLength: 10, maxLength: 40 }), async (steps) => {
        const run: Run = { events: [], venues: [], organizers: [], categories: [], tags: [], slugs: [], reads: new Map() };
        await furnish(run);
        for (const step of steps) {
          await step.run(run);
          // every answer read so far is cached now: after a write, each must still be what a fresh computation gives
          if (!step.label.startsWith('read')) for (const read of run.reads.values()) await read();
        }
      }),
      { numRuns: Number(process.env.ALMANAC_DIFF_RUNS ?? 12), endOnFailure: true },
    );
    // not a vacuous comparison: most of the cached server's answers came from its cache (before Koa)
    const front = cachedReads.filter((id) => cached.frontAnswered(id)).length;
    console.log(`differential: ${front} of ${cachedReads.length} cached answers given at the front`);
    expect(front / cachedReads.length).toBeGreaterThan(0.15);
  }, 600_000);
});
