import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertEvent, NS, TestServer, type Credentials } from './helpers/server.js';

let s: TestServer;
let editor: Credentials;
let author: Credentials;
beforeAll(async () => {
  s = await TestServer.start();
  editor = await s.user('editor');
  author = await s.user('author');
});
afterAll(() => s.close());

describe('tags', () => {
  it('creates, reads, updates and deletes a tag in the plugin shape (no parent)', async () => {
    const client = s.client(editor);
    const created = await client.POST(`${NS}/tags`, { body: { name: 'Outdoor & fun', description: 'Fresh air' } });
    expect(created.response.status).toBe(201);
    const tag = created.data!;
    expect(Object.keys(tag)).toEqual(['id', 'count', 'description', 'name', 'slug', 'taxonomy', 'meta', 'url', 'urls', 'lang', 'translations', '_links']);
    expect(tag).toMatchObject({ name: 'Outdoor &amp; fun', slug: 'outdoor-fun', taxonomy: 'post_tag', url: `${s.baseUrl}/tag/outdoor-fun/` });
    expect(created.response.headers.get('Location')).toBe(`${s.baseUrl}${NS}/tags/${tag.id}`);

    const read = await s.client().GET(`${NS}/tags/{id}`, { params: { path: { id: tag.id } } });
    expect(read.data!._links!.self[0]!.targetHints.allow).toEqual(['GET']);
    const updated = await client.PUT(`${NS}/tags/{id}`, { params: { path: { id: tag.id } }, body: { name: 'Open air' } });
    expect(updated.data).toMatchObject({ name: 'Open air', slug: 'outdoor-fun', description: 'Fresh air' });
    const deleted = await client.DELETE(`${NS}/tags/{id}`, { params: { path: { id: tag.id } } });
    expect(deleted.data).toMatchObject({ id: tag.id, name: 'Open air' });
    expect((await s.raw('GET', `${NS}/tags/${tag.id}`)).status).toBe(400);
  });

  it('refuses parent on a flat taxonomy', async () => {
    const r = await s.raw('POST', `${NS}/tags`, { as: editor, json: { name: 'Child', parent: 1 } });
    expect(r.body).toEqual({ code: 'rest_taxonomy_not_hierarchical', message: 'Cannot set parent term, taxonomy is not hierarchical.', data: { status: 400 } });
    const made = await s.raw('POST', `${NS}/tags`, { as: editor, json: { name: 'Flat' } });
    expect((await s.raw('PATCH', `${NS}/tags/${made.body.id}`, { as: editor, json: { parent: 0 } })).body.code).toBe('rest_taxonomy_not_hierarchical');
  });

  it('refuses a duplicate name in the taxonomy with term_exists', async () => {
    const first = await s.raw('POST', `${NS}/tags`, { as: editor, json: { name: 'kids' } });
    const dup = await s.raw('POST', `${NS}/tags`, { as: editor, json: { name: 'Kids' } });
    expect(dup.body).toEqual({ code: 'term_exists', message: 'A term with the name provided already exists in this taxonomy.', data: { status: 400, term_id: first.body.id }, additional_data: [first.body.id, first.body.id] });
  });

  it('needs an editor or better: authors may manage categories but not tags', async () => {
    expect((await s.raw('POST', `${NS}/tags`, { as: author, json: { name: 'Nope' } })).status).toBe(403);
    expect((await s.raw('POST', `${NS}/categories`, { as: author, json: { name: 'Yes' } })).status).toBe(201);
    const tag = await s.raw('POST', `${NS}/tags`, { as: s.admin, json: { name: 'Admin made' } });
    expect((await s.raw('DELETE', `${NS}/tags/${tag.body.id}`, { as: author })).status).toBe(403);
    expect((await s.raw('GET', `${NS}/tags/${tag.body.id}`, { as: author })).headers.get('allow')).toBe('GET');
    expect((await s.raw('GET', `${NS}/tags/${tag.body.id}`, { as: editor })).headers.get('allow')).toBe('GET, POST, PUT, PATCH, DELETE');
  });

  it('lists tags with counts of published events, tags key, ignoring a category-only parent filter', async () => {
    const fresh = await TestServer.start();
    try {
      const a = (await fresh.raw('POST', `${NS}/tags`, { as: fresh.admin, json: { name: 'indoor' } })).body.id;
      await fresh.raw('POST', `${NS}/tags`, { as: fresh.admin, json: { name: 'adults only' } });
      await insertEvent(fresh, { terms: [a] });
      await insertEvent(fresh, { terms: [a], status: 'private' });
      const { data, response } = await fresh.client().GET(`${NS}/tags`, { params: { query: { hide_empty: false } } });
      expect(data!.tags.map((t) => [t.name, t.count])).toEqual([['adults only', 0], ['indoor', 1]]);
      expect(response.headers.get('X-TEC-Total')).toBe('2');
      expect((await fresh.raw('GET', `${NS}/tags?parent=5`)).body.total).toBe(1);
    } finally {
      await fresh.close();
    }
  });

  it('keeps terms of each language apart: same slug allowed, lists show the current language, translations link', async () => {
    const en = await s.raw('POST', `${NS}/tags`, { as: editor, json: { name: 'market' } });
    const fr = await s.raw('POST', `/fr${NS}/tags`, { as: editor, json: { name: 'market', translation_of: en.body.id } });
    expect(fr.status).toBe(201);
    expect(fr.body).toMatchObject({ slug: 'market', lang: 'fr', translations: { en: en.body.id, fr: fr.body.id } });
    expect((await s.raw('GET', `${NS}/tags/${en.body.id}`)).body.translations).toEqual({ en: en.body.id, fr: fr.body.id });
    const again = await s.raw('POST', `${NS}/tags?xlate_language=fr`, { as: editor, json: { name: 'marché', translation_of: en.body.id } });
    expect(again.body.code).toBe('rest_invalid_param');
    expect(Object.keys(again.body.data.params)).toEqual(['translation_of']);
    const frList = await s.raw('GET', `${NS}/tags?hide_empty=0&xlate_language=fr`);
    expect(frList.body.tags.map((t: { id: number }) => t.id)).toEqual([fr.body.id]);
    expect((await s.raw('POST', `${NS}/tags`, { as: editor, json: { name: 'x', translation_of: 99999 } })).status).toBe(400);
  });
});
