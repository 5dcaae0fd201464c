import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic, checkResponse, NS, TestServer } from './helpers/server.js';

let s: TestServer;
let categoryId: number;
beforeAll(async () => {
  s = await TestServer.start({ bodyLimitBytes: 2048 });
  categoryId = (await s.raw('POST', `${NS}/categories`, { as: s.admin, json: { name: 'Music' } })).body.id;
});
afterAll(() => s.close());

describe('errors in the shapes of the reference captures', () => {
  it('unknown routes and methods: 404 rest_no_route, no Allow', async () => {
    const noRoute = { code: 'rest_no_route', message: 'No route was found matching the URL and request method.', data: { status: 404 } };
    for (const [method, path] of [['GET', `${NS}/nope`], ['DELETE', `${NS}/categories`], ['GET', `${NS}/events/by-slug/`], ['GET', '/es/wp-json/tribe/events/v1/categories'], ['GET', '/']]) {
      const r = await s.raw(method!, path!);
      expect(r.status).toBe(404);
      expect(r.body).toEqual(noRoute);
      expect(r.headers.get('Allow')).toBeNull();
    }
  });

  it('matches the captured validation errors byte for byte', async () => {
    expect((await s.raw('GET', `${NS}/events?per_page=abc`)).text).toBe('{"code":"rest_invalid_param","message":"Invalid parameter(s): per_page","data":{"status":400,"params":{"per_page":"Invalid parameter."},"details":[]}}');
    expect((await s.raw('GET', `${NS}/events?start_date=not-a-date`)).text).toBe('{"code":"rest_invalid_param","message":"Invalid parameter(s): start_date","data":{"status":400,"params":{"start_date":"Invalid parameter."},"details":[]}}');
    const missing = await s.raw('POST', `${NS}/events`, { as: s.admin, json: { start_date: '2027-02-01 10:00:00', end_date: '2027-02-01 11:00:00' } });
    expect(missing.text).toBe('{"code":"rest_missing_callback_param","message":"Missing parameter(s): title","data":{"status":400,"params":["title"]}}');
    const badDate = await s.raw('POST', `${NS}/events`, { as: s.admin, json: { title: 'Bad date', start_date: 'not-a-date', end_date: '2027-02-01 11:00:00' } });
    expect(badDate.text).toBe('{"code":"rest_invalid_param","message":"Invalid parameter(s): start_date","data":{"status":400,"params":{"start_date":"Invalid parameter."},"details":[]}}');
    expect((await s.raw('POST', `${NS}/events`, { json: {} })).body.message).toBe('Missing parameter(s): title, start_date, end_date');
  });

  it('checks permissions after validation: anonymous writes get 401 rest_forbidden with Allow: GET', async () => {
    const forbidden = '{"code":"rest_forbidden","message":"Sorry, you are not allowed to do that.","data":{"status":401}}';
    const post = await s.raw('POST', `${NS}/events`, { json: { title: 'Anonymous', start_date: '2027-02-01 10:00:00', end_date: '2027-02-01 11:00:00' } });
    expect(post.text).toBe(forbidden);
    expect(post.headers.get('Allow')).toBe('GET');
    expect((await s.raw('DELETE', `${NS}/events/22`)).text).toBe(forbidden);
  });

  it('answers invalid JSON with rest_invalid_json and a body over the limit with 413', async () => {
    const bad = await s.raw('POST', `${NS}/categories`, { as: s.admin, body: '{"name": ', headers: { 'Content-Type': 'application/json' } });
    expect(bad.body).toEqual({ code: 'rest_invalid_json', message: 'Invalid JSON body passed.', data: { status: 400, json_error_code: 4, json_error_message: 'Syntax error' } });
    const big = await s.raw('POST', `${NS}/categories`, { as: s.admin, json: { name: 'x'.repeat(4000) } });
    expect(big.status).toBe(413);
    expect(big.body.code).toBe('rest_request_too_large');
    // the key "__proto__" (a JavaScript object's prototype) is refused, said so, and nothing is written; other keys
    // no field has, "constructor" among them, are ignored as WordPress ignores them, and reach no prototype
    const categories = async () => (await s.sql<{ n: number }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM terms WHERE taxonomy = 'category'"))[0]!.n;
    const before = await categories();
    const json = (body: string) => s.raw('POST', `${NS}/categories`, { as: s.admin, body, headers: { 'Content-Type': 'application/json' } });
    expect((await json('{"name": "Polluted", "__proto__": {"role": "administrator"}}')).body).toEqual({
      code: 'rest_invalid_json', message: 'Invalid JSON body passed: the key "__proto__" is not accepted.',
      data: { status: 400, json_error_code: 4, json_error_message: 'Syntax error' },
    });
    expect(await categories()).toBe(before);
    const ignored = await json('{"name": "Constructed", "constructor": {"prototype": {"role": "administrator"}}}');
    expect(ignored).toMatchObject({ status: 201, body: { name: 'Constructed' } });
    expect(({} as Record<string, unknown>).role).toBeUndefined();
    // in a form, multipart or not, and in a query string, "__proto__" is a parameter no operation has, ignored as
    // WordPress ignores it: what it holds is none of the body's (an event sent `__proto__[status]=draft` was a draft)
    const event = 'title=Formed&start_date=2027-02-01+10%3A00&end_date=2027-02-01+11%3A00&__proto__%5Bstatus%5D=draft&__proto__%5Bfeatured%5D=1';
    expect(await s.raw('POST', `${NS}/events`, { as: s.admin, form: event })).toMatchObject({ status: 201, body: { title: 'Formed', status: 'publish', featured: false } });
    const boundary = 'almanac-proto';
    const multipart = [['name', 'Multipart'], ['__proto__[description]', 'Injected']]
      .map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`).join('') + `--${boundary}--\r\n`;
    expect(await s.raw('POST', `${NS}/categories`, { as: s.admin, body: multipart, headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` } }))
      .toMatchObject({ status: 201, body: { name: 'Multipart', description: '' } });
    expect(await s.raw('POST', `${NS}/categories?__proto__[description]=Injected&constructor[prototype][description]=Injected`, { as: s.admin, json: { name: 'Queried' } }))
      .toMatchObject({ status: 201, body: { name: 'Queried', description: '' } });
    expect((await s.raw('GET', `${NS}/categories?__proto__[per_page]=1&__proto__[hide_empty]=0`)).body).toEqual((await s.raw('GET', `${NS}/categories`)).body);
    expect(({} as Record<string, unknown>).status).toBeUndefined();
    // JSON that is not an object holds no parameters, as WordPress reads it (json_decode, then as an array)
    for (const body of ['[1,2]', '"name"', 'null', '42', 'true']) {
      const scalar = await s.raw('POST', `${NS}/categories`, { as: s.admin, body, headers: { 'Content-Type': 'application/json' } });
      expect([scalar.status, scalar.body.code], body).toEqual([400, 'rest_missing_callback_param']);
    }
    expect((await json('"unclosed')).body.code).toBe('rest_invalid_json');
    expect(await s.raw('GET', `${NS}/categories?xlate_language=es`)).toMatchObject({ status: 400, body: { code: 'rest_invalid_param', data: { params: { xlate_language: 'Invalid parameter.' } } } });
  });
});

describe('bodies of a media type the server does not read', () => {
  const refusal = (type: string) => ({
    code: 'rest_unsupported_media_type',
    message: `The request body ${type}: send application/json, application/x-www-form-urlencoded or multipart/form-data.`,
    data: { status: 415, accepted: ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'] },
  });
  const event = { title: 'Sent as text', start_date: '2027-02-01 10:00:00', end_date: '2027-02-01 11:00:00' };
  const eventCount = async () => (await s.sql<{ n: number }>("SELECT CAST(COUNT(*) AS INTEGER) AS n FROM posts WHERE type = 'event'"))[0]!.n;

  it('refuses them with 415 naming the accepted types, and changes nothing', async () => {
    const before = await eventCount();
    // JSON sent as text/plain, as a fetch call with a string body and no Content-Type sends it
    const text = await s.raw('POST', `${NS}/events`, { as: s.admin, body: JSON.stringify(event), headers: { 'Content-Type': 'text/plain;charset=UTF-8' } });
    expect(text.status).toBe(415);
    expect(text.body).toEqual(refusal('is text/plain, which this server does not read'));
    for (const type of ['multipart/mixed; boundary=x', 'application/xml']) {
      const r = await s.raw('PATCH', `${NS}/categories/${categoryId}`, { as: s.admin, body: 'name=Renamed', headers: { 'Content-Type': type } });
      expect(r.status).toBe(415);
      expect(r.body.code).toBe('rest_unsupported_media_type');
    }
    const untyped = await fetch(`${s.baseUrl}${NS}/events`, { method: 'POST', headers: { Authorization: basic(s.admin) }, body: new TextEncoder().encode(JSON.stringify(event)) });
    await checkResponse('POST', untyped);
    expect(untyped.status).toBe(415);
    expect(await untyped.json()).toEqual(refusal('has no Content-Type'));
    expect(await eventCount()).toBe(before);
    expect((await s.raw('GET', `${NS}/categories/${categoryId}`)).body.name).toBe('Music');
  });

  it('reads a multipart/form-data form as a URL-encoded one, its files left out', async () => {
    const fields: [string, string][] = [
      ['title', 'Café & friends'], ['start_date', '2027-02-02 10:00:00'], ['end_date', '2027-02-02 11:00:00'], ['categories[]', String(categoryId)],
      ['venue[venue]', 'Multipart Hall'], ['venue[city]', 'Lyon'], ['cost', '20.50'],
    ];
    const multipart = new FormData();
    for (const [name, value] of fields) multipart.append(name, value);
    // a file, which PHP keeps apart from the parameters: not the event's description
    multipart.append('description', new Blob(['<p>From a file</p>'], { type: 'text/html' }), 'description.html');
    const sent = await fetch(`${s.baseUrl}${NS}/events`, { method: 'POST', headers: { Authorization: basic(s.admin) }, body: multipart });
    await checkResponse('POST', sent);
    expect(sent.status).toBe(201);
    const created = (await sent.json()) as Record<string, any>;
    const encoded = await s.raw('POST', `${NS}/events`, { as: s.admin, form: new URLSearchParams(fields).toString() });
    const shown = (e: Record<string, any>) => [e.title, e.description, e.cost, e.categories.map((c: { id: number }) => c.id), e.venue.venue, e.venue.city];
    expect(shown(created)).toEqual(shown(encoded.body));
    expect(shown(created)).toEqual(['Café &#038; friends', '', '$20.5', [categoryId], 'Multipart Hall', 'Lyon']);

    const update = new FormData();
    update.append('cost', '15');
    const updated = await fetch(`${s.baseUrl}${NS}/events/${created.id}`, { method: 'PATCH', headers: { Authorization: basic(s.admin) }, body: update });
    await checkResponse('PATCH', updated);
    expect(((await updated.json()) as { cost: string }).cost).toBe('$15');

    // a body the multipart parser cannot read, not UTF-8, or over the limit: refused, nothing changed
    const raw = (body: string | Buffer, type = 'multipart/form-data; boundary=XyZ') =>
      s.raw('PATCH', `${NS}/events/${created.id}`, { as: s.admin, body: body as string, headers: { 'Content-Type': type } });
    const part = (value: string | Buffer) => Buffer.concat([Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="cost"\r\n\r\n'), Buffer.from(value), Buffer.from('\r\n--XyZ--\r\n')]);
    expect((await raw(part('16'))).body.cost).toBe('$16');
    for (const [body, type, status, code] of [
      ['cost=17', 'multipart/form-data', 400, 'rest_invalid_body'],
      ['cost=17', undefined, 400, 'rest_invalid_body'],
      [part(Buffer.from([0x31, 0xff, 0x37])), undefined, 400, 'rest_invalid_body'],
      [part('1'.repeat(4096)), undefined, 413, 'rest_request_too_large'],
    ] as const) {
      const r = await raw(body, type);
      expect([r.status, r.body.code], String(body).slice(0, 40)).toEqual([status, code]);
    }
    expect((await s.raw('GET', `${NS}/events/${created.id}`)).body.cost).toBe('$16');
    // an operation that takes no body ignores one, readable or not
    const trashed = await s.raw('DELETE', `${NS}/events/${created.id}`, { as: s.admin, body: 'cost=18', headers: { 'Content-Type': 'multipart/form-data' } });
    expect([trashed.status, trashed.body.status]).toEqual([200, 'trash']);
  });

  it('reads JSON of every application/…+json type and forms, and takes an empty body of any type', async () => {
    const json = await s.raw('POST', `${NS}/events`, { as: s.admin, body: JSON.stringify(event), headers: { 'Content-Type': 'application/json; charset=utf-8' } });
    expect(json.status).toBe(201);
    const merge = await s.raw('PATCH', `${NS}/events/${json.body.id}`, { as: s.admin, body: '{"cost":"12"}', headers: { 'Content-Type': 'application/merge-patch+json' } });
    expect(merge.body.cost).toContain('12');
    const form = await s.raw('POST', `${NS}/events/${json.body.id}`, { as: s.admin, form: 'cost=15' });
    expect(form.body.cost).toContain('15');
    const empty = await s.raw('POST', `${NS}/events/${json.body.id}`, { as: s.admin, body: '', headers: { 'Content-Type': 'text/plain' } });
    expect(empty.status).toBe(200);
    // an operation that takes no body ignores one, as before
    const trashed = await s.raw('DELETE', `${NS}/events/${json.body.id}`, { as: s.admin, body: 'ignored', headers: { 'Content-Type': 'text/plain' } });
    expect(trashed.status).toBe(200);
  });
});

describe('WordPress REST plumbing', () => {
  it('sends the headers of every WordPress REST answer', async () => {
    const anon = await s.raw('GET', `${NS}/categories/${categoryId}`);
    expect(anon.headers.get('content-type')).toBe('application/json; charset=UTF-8');
    expect(anon.headers.get('x-robots-tag')).toBe('noindex');
    expect(anon.headers.get('x-content-type-options')).toBe('nosniff');
    expect(anon.headers.get('link')).toBe(`<${s.baseUrl}/wp-json/>; rel="https://api.w.org/"`);
    expect(anon.headers.get('access-control-expose-headers')).toBe('X-WP-Total, X-WP-TotalPages, Link, X-TEC-Total, X-TEC-TotalPages, ETag, Last-Modified, Location, Retry-After, X-Request-Id');
    expect(anon.headers.get('access-control-allow-headers')).toBe('Authorization, X-WP-Nonce, Content-Disposition, Content-MD5, Content-Type, If-Match, If-None-Match, If-Modified-Since, X-HTTP-Method-Override');
    expect(anon.headers.get('vary')).toBe('Origin');
    expect(anon.headers.get('allow')).toBe('GET');
    // issue 9: caches may keep anonymous answers, revalidating them with their ETag
    expect(anon.headers.get('cache-control')).toBe('public, max-age=0, must-revalidate');
    const admin = await s.raw('GET', `${NS}/categories/${categoryId}`, { as: s.admin });
    expect(admin.headers.get('allow')).toBe('GET, POST, PUT, PATCH, DELETE');
    expect(admin.headers.get('cache-control')).toBe('no-cache, must-revalidate, max-age=0, no-store, private');
    expect(admin.headers.get('expires')).toBe('Wed, 11 Jan 1984 05:00:00 GMT');
  });

  it('echoes an Origin for CORS and answers preflights', async () => {
    const r = await s.raw('GET', `${NS}/categories`, { headers: { Origin: 'https://app.example.test' } });
    expect(r.headers.get('access-control-allow-origin')).toBe('https://app.example.test');
    expect(r.headers.get('access-control-allow-credentials')).toBe('true');
    const preflight = await s.raw('OPTIONS', `${NS}/categories/${categoryId}`, { headers: { Origin: 'https://app.example.test', 'Access-Control-Request-Method': 'PATCH' } });
    expect(preflight.status).toBe(200);
    expect(preflight.headers.get('access-control-allow-methods')).toBe('OPTIONS, GET, POST, PUT, PATCH, DELETE');
    expect(preflight.headers.get('allow')).toBe('GET');
    expect(preflight.body.endpoints.map((e: { methods: string[] }) => e.methods)).toEqual([['GET'], ['POST', 'PUT', 'PATCH'], ['DELETE']]);
    expect((await s.raw('OPTIONS', `${NS}/nowhere`)).status).toBe(404);
  });

  it('only echoes configured origins when ALMANAC_CORS_ORIGINS lists them', async () => {
    const strict = await TestServer.start({ corsOrigins: ['https://good.example.test'] });
    try {
      expect((await strict.raw('GET', `${NS}/categories`, { headers: { Origin: 'https://good.example.test' } })).headers.get('access-control-allow-origin')).toBe('https://good.example.test');
      expect((await strict.raw('GET', `${NS}/categories`, { headers: { Origin: 'https://evil.example.test' } })).headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await strict.close();
    }
  });

  it('answers HEAD like GET without a body', async () => {
    const r = await fetch(`${s.baseUrl}${NS}/categories/${categoryId}`, { method: 'HEAD' });
    expect(r.status).toBe(200);
    expect(r.headers.get('allow')).toBe('GET');
    expect(await r.text()).toBe('');
  });

  it('reaches the same routes through ?rest_route= and with a trailing slash', async () => {
    const viaQuery = await s.raw('GET', `/?rest_route=/tribe/events/v1/categories/${categoryId}`);
    expect(viaQuery.body.name).toBe('Music');
    expect((await s.raw('GET', `${NS}/categories/${categoryId}/`)).body.name).toBe('Music');
  });

  it('matches the route after /wp-json in any case, as WordPress does', async () => {
    for (const path of [`/wp-json/Tribe/Events/V1/CATEGORIES/${categoryId}`, `/?rest_route=/TRIBE/events/v1/Categories/${categoryId}`, `/fr/wp-json/tribe/EVENTS/v1/categories/${categoryId}`]) {
      const r = await s.raw('GET', path);
      expect([r.status, r.body.name], path).toEqual([200, 'Music']);
    }
    const made = await s.raw('POST', `${NS}/venues`, { as: s.admin, json: { venue: 'Case Hall' } });
    expect((await s.raw('GET', `${NS}/VENUES/BY-SLUG/${made.body.slug.toUpperCase()}`)).body.id).toBe(made.body.id);
    expect((await s.raw('GET', `/WP-JSON/tribe/events/v1/categories/${categoryId}`)).status).toBe(404); // the /wp-json address itself is not a route
  });

  it('keeps only _fields, wraps in _envelope, refuses _jsonp', async () => {
    expect((await s.raw('GET', `${NS}/categories/${categoryId}?_fields=id,name,urls.self`)).body).toEqual({ id: categoryId, name: 'Music', urls: { self: `${s.baseUrl}${NS}/categories/${categoryId}` } });
    const env = await s.raw('GET', `${NS}/categories/999999?_envelope`);
    expect(env.status).toBe(200);
    expect(env.body).toMatchObject({ status: 400, body: { code: 'rest_invalid_param' } });
    // the wrapped headers are the answer's, with Allow added as WordPress adds it before it wraps them
    const list = await s.raw('GET', `${NS}/categories?_envelope&hide_empty=0`);
    expect(list.body.headers).toEqual({ 'X-TEC-Total': String(list.body.body.total), 'X-TEC-TotalPages': String(list.body.body.total_pages), Allow: 'GET' });
    expect((await s.raw('GET', `${NS}/categories?_envelope`, { as: s.admin })).body.headers.Allow).toBe('GET, POST');
    // a key listed whole keeps its sub-keys whole, before or after them; keys the answer lacks are ignored
    const { urls } = (await s.raw('GET', `${NS}/categories/${categoryId}`)).body;
    const cases = { 'urls,urls.self': { urls }, 'urls.self,urls': { urls }, 'urls.self,urls.self.x,urls.missing,missing.x': { urls: { self: urls.self } } };
    for (const [fields, kept] of Object.entries(cases)) {
      expect([fields, (await s.raw('GET', `${NS}/categories/${categoryId}?_fields=${fields}`)).body]).toEqual([fields, kept]);
    }
    // read as WordPress reads it (wp_parse_list): white space separates too, a text sent twice is its last, a list's
    // items are taken whole, and a text that names no key filters nothing
    const whole = (await s.raw('GET', `${NS}/categories/${categoryId}`)).body;
    const read = { 'id%20name': { id: categoryId, name: 'Music' }, 'slug&_fields=id': { id: categoryId }, '': whole, ',': whole, '%20,%20': whole };
    for (const [fields, kept] of Object.entries(read)) {
      expect([fields, (await s.raw('GET', `${NS}/categories/${categoryId}?_fields=${fields}`)).body]).toEqual([fields, kept]);
    }
    expect((await s.raw('GET', `${NS}/categories/${categoryId}?_fields[]=id&_fields[]=name,slug`)).body).toEqual({ id: categoryId });
    // … and each is its own answer to the response cache
    expect((await s.raw('GET', `${NS}/categories/${categoryId}?_fields=id,name,slug`)).body).toEqual({ id: categoryId, name: 'Music', slug: 'music' });
    const jsonp = await s.raw('GET', `${NS}/categories?_jsonp=cb`);
    expect(jsonp.status).toBe(400);
    expect(jsonp.body.data.params).toEqual({ _jsonp: 'JSONP is not supported.' });
  });

  it('takes the method from _method or X-HTTP-Method-Override', async () => {
    const made = await s.raw('POST', `${NS}/categories`, { as: s.admin, json: { name: 'Overridden' } });
    const patched = await s.raw('POST', `${NS}/categories/${made.body.id}`, { as: s.admin, json: { description: 'via header' }, headers: { 'X-HTTP-Method-Override': 'PATCH' } });
    expect(patched.body.description).toBe('via header');
    const deleted = await s.raw('POST', `${NS}/categories/${made.body.id}?_method=DELETE`, { as: s.admin });
    expect(deleted.status).toBe(200);
    expect((await s.raw('GET', `${NS}/categories/${made.body.id}`)).status).toBe(400);
    // a method no route has matches none, as in WordPress: the POST it came on is not made instead
    const noRoute = { status: 404, body: { code: 'rest_no_route', message: 'No route was found matching the URL and request method.', data: { status: 404 } } };
    expect(await s.raw('POST', `${NS}/categories?_method=FOO`, { as: s.admin, json: { name: 'Foo' } })).toMatchObject(noRoute);
    expect(await s.raw('POST', `${NS}/categories`, { as: s.admin, json: { name: 'Proto' }, headers: { 'X-HTTP-Method-Override': '__proto__' } })).toMatchObject(noRoute);
    expect((await s.raw('GET', `${NS}/categories?search=Foo&hide_empty=0`)).body.total).toBe(0);
    expect((await s.raw('GET', `${NS}/categories?search=Proto&hide_empty=0`)).body.total).toBe(0);
    // HEAD is GET without the body, OPTIONS the route's description: neither makes the POST
    const got = await s.raw('GET', `${NS}/categories?hide_empty=0`);
    const headed = await s.raw('POST', `${NS}/categories?_method=HEAD&hide_empty=0`, { json: { name: 'Headed' } });
    expect(headed).toMatchObject({ status: 200, text: '' });
    expect(headed.headers.get('Content-Length')).toBe('0');
    for (const header of ['X-WP-Total', 'X-WP-TotalPages', 'ETag', 'Allow']) expect(headed.headers.get(header), header).toBe(got.headers.get(header));
    const optioned = await s.raw('POST', `${NS}/categories`, { as: s.admin, json: { name: 'Optioned' }, headers: { 'X-HTTP-Method-Override': 'OPTIONS' } });
    expect(optioned.status).toBe(200);
    expect(optioned.body).toEqual((await s.raw('OPTIONS', `${NS}/categories`)).body);
    expect(optioned.headers.get('Allow')).toBe('GET, POST');
    for (const name of ['Headed', 'Optioned']) expect((await s.raw('GET', `${NS}/categories?search=${name}&hide_empty=0`)).body.total).toBe(0);
  });

  it('serves the same routes under /de and /fr with the prefix in every link; the parameter wins', async () => {
    const de = await s.raw('GET', `/de${NS}/categories/${categoryId}`);
    expect(de.body.urls.self).toBe(`${s.baseUrl}/de${NS}/categories/${categoryId}`);
    expect(de.body.url).toBe(`${s.baseUrl}/de/events/category/music/`);
    expect(de.headers.get('link')).toBe(`<${s.baseUrl}/de/wp-json/>; rel="https://api.w.org/"`);
    const fr = await s.raw('GET', `/de${NS}/categories/${categoryId}?xlate_language=fr`);
    expect(fr.body.urls.self).toBe(`${s.baseUrl}/fr${NS}/categories/${categoryId}`);
    const en = await s.raw('GET', `/fr${NS}/categories/${categoryId}?wpml_language=en`);
    expect(en.body.urls.self).toBe(`${s.baseUrl}${NS}/categories/${categoryId}`);
    const list = await s.raw('GET', `/fr${NS}/categories?hide_empty=0&xlate_language=fr`);
    expect(list.body.rest_url).toBe(`${s.baseUrl}/fr${NS}/categories/?hide_empty=false`);
  });

  it('reads array parameters as lists, repeated keys and CSV, and booleans in any spelling', async () => {
    const ids: number[] = [];
    for (const name of ['One', 'Two', 'Three']) ids.push((await s.raw('POST', `${NS}/categories`, { as: s.admin, json: { name } })).body.id);
    const forms = [`include=${ids[0]},${ids[1]}`, `include[]=${ids[0]}&include[]=${ids[1]}`, `include=${ids[0]}&include=${ids[1]}`, `include=${ids[0]}%2C%20${ids[1]}`];
    for (const q of forms) {
      const r = await s.raw('GET', `${NS}/categories?hide_empty=TRUE&${q}`);
      expect(r.body.total, q).toBe(0);
      const all = await s.raw('GET', `${NS}/categories?hide_empty=0&${q}`);
      expect(all.body.categories.map((c: { id: number }) => c.id).sort(), q).toEqual([ids[0], ids[1]].sort());
    }
  });

  it('refuses a list (`a[]=`) for a parameter of one value, as PHP reads it as an array; a repeated key is its last value', async () => {
    for (const [path, name] of [
      ['categories?search[]=x', 'search'], ['categories?page[]=1', 'page'], ['categories?hide_empty[]=1', 'hide_empty'], ['events?start_date[]=2027-01-01', 'start_date'],
      ['events?search[]=jazz', 'search'], ['venues?per_page[]=5', 'per_page'],
    ]) {
      const r = await s.raw('GET', `${NS}/${path}`);
      expect([r.status, r.body.code, Object.keys(r.body.data?.params ?? {})], path).toEqual([400, 'rest_invalid_param', [name]]);
    }
    expect((await s.raw('GET', `${NS}/categories?search=nothing-like-it&search=Music&hide_empty=0`)).body.categories.map((c: { name: string }) => c.name)).toEqual(['Music']);
  });

  it('ignores unknown query parameters and body fields, as WordPress does', async () => {
    expect((await s.raw('GET', `${NS}/categories?hide_empty=0&color=blue&foo[]=1`)).status).toBe(200);
    const r = await s.raw('POST', `${NS}/categories`, { as: s.admin, json: { name: 'Extra', color: 'blue' } });
    expect(r.status).toBe(201);
    expect(r.body).not.toHaveProperty('color');
  });
});
