import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NS, TestServer, type Credentials } from './helpers/server.js';

let s: TestServer;
let editor: Credentials;
let author: Credentials;
beforeAll(async () => {
  s = await TestServer.start();
  editor = await s.user('editor');
  author = await s.user('author');
});
afterAll(() => s.close());

const create = async (path: string, json: Record<string, unknown>, as: Credentials = s.admin) => {
  const r = await s.raw('POST', `${NS}${path}`, { as, json });
  expect(r.status).toBe(201);
  return r.body as { id: number; modified_utc: string };
};
const newEvent = (json: Record<string, unknown> = {}, as?: Credentials) =>
  create('/events', { title: 'Conditional', start_date: '2027-05-01 10:00:00', end_date: '2027-05-01 12:00:00', ...json }, as);
/** The strong tag the server must send: a hash of the exact bytes, quoted. */
const tagOf = (text: string) => `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`;

describe('ETag and If-None-Match', () => {
  it('tags every single record and list answer with a hash of its exact bytes', async () => {
    const event = await newEvent();
    const venue = await create('/venues', { venue: 'Tagged hall' });
    const category = await create('/categories', { name: 'Tagged' });
    for (const path of [`/events/${event.id}`, `/events/by-slug/conditional`, `/venues/${venue.id}`, `/categories/${category.id}`, '/events', '/venues', '/organizers', '/categories', '/tags']) {
      const r = await s.raw('GET', NS + path);
      expect(r.status, path).toBe(200);
      expect(r.headers.get('etag'), path).toBe(tagOf(r.text));
    }
  });

  it('answers 304 with no body while the copy is current, and 200 once it changed', async () => {
    const event = await newEvent({ title: 'Revalidated' });
    const first = await s.raw('GET', `${NS}/events/${event.id}`);
    const tag = first.headers.get('etag')!;
    for (const header of [tag, `W/${tag}`, `"other", ${tag}`, '*']) {
      const again = await s.raw('GET', `${NS}/events/${event.id}`, { headers: { 'If-None-Match': header } });
      expect(again.status, header).toBe(304);
      expect(again.text).toBe('');
      expect(again.headers.get('etag')).toBe(tag);
      expect(again.headers.get('cache-control')).toBe('public, max-age=0, must-revalidate');
    }
    expect((await s.raw('GET', `${NS}/events/${event.id}`, { headers: { 'If-None-Match': '"stale"' } })).status).toBe(200);
    expect((await s.raw('POST', `${NS}/events/${event.id}`, { as: s.admin, json: { title: 'Revalidated again' } })).status).toBe(200);
    const changed = await s.raw('GET', `${NS}/events/${event.id}`, { headers: { 'If-None-Match': tag } });
    expect(changed.status).toBe(200);
    expect(changed.body.title).toBe('Revalidated again');
    expect(changed.headers.get('etag')).not.toBe(tag);
  });

  it('revalidates lists, HEAD and the language addresses the same way', async () => {
    const list = await s.raw('GET', `${NS}/events?per_page=3`);
    expect((await s.raw('GET', `${NS}/events?per_page=3`, { headers: { 'If-None-Match': list.headers.get('etag')! } })).status).toBe(304);
    const head = await fetch(`${s.baseUrl}${NS}/events?per_page=3`, { method: 'HEAD' });
    expect(head.headers.get('etag')).toBe(list.headers.get('etag'));
    const de = await s.raw('GET', `/de${NS}/events?per_page=3`);
    expect(de.headers.get('etag')).toBe(tagOf(de.text));
    expect(de.headers.get('etag')).not.toBe(list.headers.get('etag')); // its links differ
  });

  it('gives each caller the tag of their own answer, and never a 304 for an error', async () => {
    const event = await newEvent({ title: 'Private answer', status: 'draft' });
    expect((await s.raw('GET', `${NS}/events/${event.id}`, { headers: { 'If-None-Match': '*' } })).status).toBe(403);
    const mine = await s.raw('GET', `${NS}/events/${event.id}`, { as: s.admin });
    expect(mine.headers.get('etag')).toBe(tagOf(mine.text));
    expect(mine.headers.get('cache-control')).toBe('no-cache, must-revalidate, max-age=0, no-store, private');
  });
});

describe('Last-Modified and If-Modified-Since', () => {
  it('dates single records by their last change, or that of the venue or organizers they embed', async () => {
    const venue = await create('/venues', { venue: 'Dated hall' });
    const event = await newEvent({ title: 'Dated', venue: venue.id });
    const r = await s.raw('GET', `${NS}/events/${event.id}`);
    expect(r.headers.get('last-modified')).toBe(new Date(event.modified_utc.replace(' ', 'T') + 'Z').toUTCString());
    expect((await s.raw('GET', `${NS}/events/${event.id}`, { headers: { 'If-Modified-Since': r.headers.get('last-modified')! } })).status).toBe(304);
    expect((await s.raw('GET', `${NS}/events/${event.id}`, { headers: { 'If-Modified-Since': 'Thu, 01 Jan 2015 00:00:00 GMT' } })).status).toBe(200);
    // If-None-Match wins over If-Modified-Since
    expect((await s.raw('GET', `${NS}/events/${event.id}`, { headers: { 'If-Modified-Since': r.headers.get('last-modified')!, 'If-None-Match': '"x"' } })).status).toBe(200);

    await new Promise((resolve) => setTimeout(resolve, 1100));
    const renamed = (await s.raw('POST', `${NS}/venues/${venue.id}`, { as: s.admin, json: { venue: 'Dated hall, renamed' } })).body;
    const after = await s.raw('GET', `${NS}/events/${event.id}`, { headers: { 'If-Modified-Since': r.headers.get('last-modified')! } });
    expect(after.status).toBe(200);
    expect(after.headers.get('last-modified')).toBe(new Date(renamed.modified_utc.replace(' ', 'T') + 'Z').toUTCString());
    const venueAnswer = await s.raw('GET', `${NS}/venues/${venue.id}`);
    expect(venueAnswer.headers.get('last-modified')).toBe(after.headers.get('last-modified'));
  });
});

describe('If-Match on updates and deletes', () => {
  const read = async (path: string, as: Credentials = s.admin) => (await s.raw('GET', NS + path, { as })).headers.get('etag')!;

  it('applies a write whose If-Match is current, and refuses a stale one with 412 changing nothing', async () => {
    const event = await newEvent({ title: 'Edited by two' });
    const path = `/events/${event.id}`;
    const tag = await read(path);
    const first = await s.raw('PATCH', NS + path, { as: s.admin, json: { title: 'First editor wins' }, headers: { 'If-Match': tag } });
    expect(first.status).toBe(200);
    const second = await s.raw('PUT', NS + path, { as: editor, json: { title: 'Second editor loses' }, headers: { 'If-Match': tag } });
    expect(second.status).toBe(412);
    expect(second.body).toEqual({
      code: 'rest_precondition_failed',
      message: 'The record has changed since it was read: If-Match names none of its current versions.',
      data: { status: 412 },
    });
    const now = await s.raw('GET', NS + path, { as: s.admin });
    expect(now.body.title).toBe('First editor wins');
    expect(now.body.modified_utc).toBe(first.body.modified_utc);
    // `*` and a list holding the current tag pass
    expect((await s.raw('POST', NS + path, { as: editor, json: { title: 'Any version' }, headers: { 'If-Match': '*' } })).status).toBe(200);
    const current = await read(path, editor);
    expect((await s.raw('POST', NS + path, { as: editor, json: { title: 'Listed' }, headers: { 'If-Match': `"old", ${current}` } })).status).toBe(200);
    // the weak form never matches If-Match (strong comparison)
    const latest = await read(path, editor);
    expect((await s.raw('POST', NS + path, { as: editor, json: { title: 'Weak' }, headers: { 'If-Match': `W/${latest}` } })).status).toBe(412);
  });

  it('compares with the tag the same caller GET by id gets (their answers differ)', async () => {
    const event = await newEvent({ title: 'Per caller' }, author);
    const path = `/events/${event.id}`;
    const anonymousTag = await read(path, undefined as unknown as Credentials);
    const authorTag = await read(path, author);
    expect((await s.raw('POST', NS + path, { as: author, json: { title: 'Per caller 2' }, headers: { 'If-Match': authorTag } })).status).toBe(200);
    const adminTag = await read(path, s.admin);
    expect((await s.raw('POST', NS + path, { as: s.admin, json: { title: 'Per caller 3' }, headers: { 'If-Match': anonymousTag } })).status).toBe(412);
    expect((await s.raw('POST', NS + path, { as: s.admin, json: { title: 'Per caller 3' }, headers: { 'If-Match': adminTag } })).status).toBe(200);
  });

  it('checks validation, authentication and permission first', async () => {
    const event = await newEvent({ title: 'Checked first' }, s.admin);
    const path = `${NS}/events/${event.id}`;
    expect((await s.raw('POST', path, { as: s.admin, json: { start_date: 'not a date' }, headers: { 'If-Match': '"stale"' } })).status).toBe(400);
    expect((await s.raw('POST', path, { json: { title: 'x' }, headers: { 'If-Match': '"stale"' } })).status).toBe(401);
    expect((await s.raw('POST', path, { as: author, json: { title: 'x' }, headers: { 'If-Match': '"stale"' } })).status).toBe(403);
    expect((await s.raw('DELETE', path, { as: author, headers: { 'If-Match': '"stale"' } })).status).toBe(403);
    expect((await s.raw('GET', path, { as: s.admin })).body.title).toBe('Checked first');
  });

  it('guards deletes, by id and by slug, venues, organizers and terms too', async () => {
    const event = await newEvent({ title: 'Guarded delete', slug: 'guarded-delete' });
    expect((await s.raw('DELETE', `${NS}/events/by-slug/guarded-delete`, { as: s.admin, headers: { 'If-Match': '"stale"' } })).status).toBe(412);
    expect((await s.raw('GET', `${NS}/events/${event.id}`)).status).toBe(200);
    const tag = await read(`/events/${event.id}`);
    const trashed = await s.raw('DELETE', `${NS}/events/by-slug/guarded-delete`, { as: s.admin, headers: { 'If-Match': tag } });
    expect(trashed.status).toBe(200);
    expect(trashed.body.status).toBe('trash');

    const organizer = await create('/organizers', { organizer: 'Guarded organizer' });
    expect((await s.raw('PATCH', `${NS}/organizers/${organizer.id}`, { as: s.admin, json: { phone: '1' }, headers: { 'If-Match': '"stale"' } })).status).toBe(412);
    expect((await s.raw('PATCH', `${NS}/organizers/${organizer.id}`, { as: s.admin, json: { phone: '1' }, headers: { 'If-Match': await read(`/organizers/${organizer.id}`) } })).status).toBe(200);

    const tagTerm = await create('/tags', { name: 'guarded' });
    const termTag = await read(`/tags/${tagTerm.id}`);
    expect((await s.raw('POST', `${NS}/tags/${tagTerm.id}`, { as: s.admin, json: { name: 'guarded-2' }, headers: { 'If-Match': termTag } })).status).toBe(200);
    expect((await s.raw('DELETE', `${NS}/tags/${tagTerm.id}`, { as: s.admin, headers: { 'If-Match': termTag } })).status).toBe(412);
    expect((await s.raw('GET', `${NS}/tags/${tagTerm.id}`)).body.name).toBe('guarded-2');
    expect((await s.raw('DELETE', `${NS}/tags/${tagTerm.id}`, { as: s.admin, headers: { 'If-Match': await read(`/tags/${tagTerm.id}`) } })).status).toBe(200);
  });

  it('lets exactly one of many concurrent conditional writers through', async () => {
    const event = await newEvent({ title: 'Race' });
    const tag = await read(`/events/${event.id}`);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => s.raw('POST', `${NS}/events/${event.id}`, { as: s.admin, json: { title: `Racer ${i}` }, headers: { 'If-Match': tag } })),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 412)).toHaveLength(7);
    const winner = answers.find((a) => a.status === 200)!.body.title;
    expect((await s.raw('GET', `${NS}/events/${event.id}`)).body.title).toBe(winner);
  });
});
