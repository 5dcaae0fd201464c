import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flattenAllOf, type SchemaNode } from '../src/http/params.js';
import { loadSpec } from '../src/http/spec.js';
import { NS, TestServer } from './helpers/server.js';

/**
 * The spec enforced on the way in: every field the request bodies of the spec let a client write is written, with a
 * valid value derived from its schema (enum, format, type, pattern), on create and on update, and the record read
 * back by id must show it. A field added to a request schema that the code does not implement fails here; fields
 * that do not come back as sent are listed in NOT_AS_SENT, each with what becomes of it.
 */

type Resource = 'event' | 'venue' | 'organizer' | 'category' | 'tag';
/** How a record is written: by its own routes, or inline in an event's `venue` / `organizer` on its create or update. */
type Phase = 'create' | 'update' | 'inline create' | 'inline update';
interface Rec { id: number; [key: string]: any }

/** The operations of each resource whose bodies are walked, and where its records are read back. */
const ROUTES: Record<Resource, { create: string; update: string; path: string }> = {
  event: { create: 'createEvent', update: 'patchEvent', path: 'events' },
  venue: { create: 'createVenue', update: 'patchVenue', path: 'venues' },
  organizer: { create: 'createOrganizer', update: 'patchOrganizer', path: 'organizers' },
  category: { create: 'createCategory', update: 'patchCategory', path: 'categories' },
  tag: { create: 'createTag', update: 'patchTag', path: 'tags' },
};

let seq = 0;
/** A name no other write uses: venues and organizers of the same name are matched, term slugs must be unique. */
const unique = (text: string) => `${text} ${++seq}`;

/** What a create needs besides the field under test. Event dates lie before the derived date, so no end is corrected. */
const BASE: Record<Resource, () => Record<string, unknown>> = {
  event: () => ({ title: unique('Round trip event'), start_date: '2027-06-01 10:00:00', end_date: '2027-06-01 12:00:00' }),
  venue: () => ({ venue: unique('Round trip venue'), city: 'Base city' }),
  organizer: () => ({ organizer: unique('Round trip organizer'), phone: '+1 555 0100' }),
  category: () => ({ name: unique('Round trip category') }),
  tag: () => ({ name: unique('Round trip tag') }),
};

// ---------------------------------------------------------------------------------------------------------------
// Values derived from a schema
// ---------------------------------------------------------------------------------------------------------------

const spec = loadSpec() as unknown as { components: Record<string, Record<string, unknown>>; paths: Record<string, Record<string, { operationId?: string; requestBody?: unknown }>> };

/** A copy of a node with every local `$ref` replaced by what it names. */
function resolve(node: unknown): any {
  if (Array.isArray(node)) return node.map(resolve);
  if (typeof node !== 'object' || node === null) return node;
  const ref = (node as { $ref?: string }).$ref;
  if (ref) {
    const [, , kind, name] = ref.split('/') as [string, string, string, string];
    return resolve(spec.components[kind]![name]);
  }
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, resolve(v)]));
}

/** The object schema somewhere in `schema` (through anyOf, oneOf, allOf and items) that requires `name`, folded. */
function objectRequiring(schema: SchemaNode, name: string): SchemaNode | null {
  const flat = flattenAllOf(schema);
  if (flat.properties && flat.required?.includes(name)) return flat;
  for (const branch of [...(flat.anyOf ?? []), ...(flat.oneOf ?? []), ...(flat.items ? [flat.items] : [])]) {
    const found = objectRequiring(branch, name);
    if (found) return found;
  }
  return null;
}

/** The JSON body schema of an operation, `allOf` folded. */
function bodySchema(operationId: string): SchemaNode {
  for (const item of Object.values(spec.paths)) {
    for (const op of Object.values(item)) {
      if (op?.operationId !== operationId) continue;
      const body = resolve(op.requestBody) as { content: Record<string, { schema: SchemaNode }> };
      return flattenAllOf(body.content['application/json']!.schema);
    }
  }
  throw new Error(`no operation ${operationId} in the spec`);
}

const ajv = new Ajv({ strict: false });
addFormats.default(ajv);
// the server's own checks of these formats decide; a derived value is checked by the server when it is written
for (const f of ['wp-date-input', 'wp-timezone', 'wp-url-or-empty']) ajv.addFormat(f, true);
const valid = (schema: SchemaNode, value: unknown) => ajv.validate(schema, value);

const BY_FORMAT: Record<string, (field: string) => string> = {
  'wp-date-input': () => '2028-02-03 04:05:06',
  'wp-timezone': () => 'Europe/Berlin',
  'wp-url-or-empty': (field) => `https://example.test/${field}`,
  uri: (field) => `https://example.test/${field}`,
  email: () => 'round.trip@example.test',
};

/** A valid, non-empty value for a field, from its schema alone; undefined when none can be derived. */
function derive(schema: SchemaNode, field: string): unknown {
  const candidates: unknown[] = [];
  if (Array.isArray(schema.enum)) candidates.push(...(schema.enum as unknown[]).filter((v) => v !== '' && v !== null).reverse());
  for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) candidates.push(derive(flattenAllOf(branch), field));
  switch (schema.type) {
    case 'boolean':
      candidates.push(true); // every flag defaults to false but the venue's maps, which are strings
      break;
    case 'integer':
    case 'number': {
      const min = typeof schema.minimum === 'number' ? schema.minimum : -Infinity;
      const max = typeof schema.maximum === 'number' ? schema.maximum : Infinity;
      candidates.push(Math.min(Math.max(42, min), max));
      break;
    }
    case 'string': {
      const format = typeof schema.format === 'string' ? BY_FORMAT[schema.format] : undefined;
      if (format) candidates.push(format(field));
      const text = `${field.replaceAll('_', ' ')} round trip`;
      candidates.push(text.slice(0, typeof schema.maxLength === 'number' ? schema.maxLength : undefined), '42', `https://example.test/${field}.jpg`);
      break;
    }
    case 'array':
      if (schema.items) candidates.push([derive(schema.items, field)]);
      break;
    case 'object':
      candidates.push(Object.fromEntries((schema.required ?? []).map((name) => [name, derive(flattenAllOf(schema.properties![name]!), name)])));
      break;
  }
  return candidates.find((value) => value !== undefined && valid(schema, value));
}

// ---------------------------------------------------------------------------------------------------------------
// Fields that do not come back as sent
// ---------------------------------------------------------------------------------------------------------------

interface Fixtures {
  s: TestServer;
  /** Ids of records the writes may refer to. */
  editorId: number;
  category: number;
  /** A new record of this kind in French, for `translation_of` (a group holds one record per language). */
  french: (resource: Resource) => Promise<number>;
  /** An event to set as parent. */
  parentEvent: number;
}

interface Context extends Fixtures {
  phase: Phase;
  /** The value sent. */
  sent: any;
  /** The record as read back by id, with credentials. */
  record: Rec;
}

interface NotAsSent {
  /** Sent instead of the derived value (a derived value may not name an existing record, say). */
  send?: (f: Fixtures) => unknown | Promise<unknown>;
  /** Sent along with it. */
  with?: Record<string, unknown>;
  /** The query of the read by id that follows the write. */
  read?: (sent: any) => string;
  /** What the record read back shows (or what the write changed, for fields no record shows). */
  expect: (c: Context) => void | Promise<void>;
}

const renderedTitle: NotAsSent = {
  // titles and names are rendered as WordPress renders titles: & → &#038;, straight quotes → curly ones
  send: () => unique(`Rock & Roll "Live"`),
  expect: ({ record, sent }) => expect(nameOf(record)).toBe(sent.replace('&', '&#038;').replace('"Live"', '&#8220;Live&#8221;')),
};
const escapedTermName: NotAsSent = {
  // term names are stored with &, < and > as entities, as WordPress stores them
  send: () => unique('Food & Drink'),
  expect: ({ record, sent }) => expect(record.name).toBe(sent.replace('&', '&amp;')),
};
/** Content and excerpts are rendered with wpautop's paragraphs. */
const paragraphs = (key: 'description' | 'excerpt'): NotAsSent => ({
  send: () => 'First line\n\nSecond line',
  expect: ({ record }) => expect(record[key]).toBe('<p>First line</p>\n<p>Second line</p>'),
});
const authorId: NotAsSent = {
  // an existing user's id; records show it as a string, as WordPress shows database numbers
  send: (f) => f.editorId,
  expect: ({ record, sent }) => expect(record.author).toBe(String(sent)),
};
const sanitisedSlug: NotAsSent = {
  // slugs are sanitised: lower case, spaces and punctuation → '-'
  send: () => unique('Slug Round Trip'),
  expect: ({ record, sent }) => expect(record.slug).toBe(sent.toLowerCase().replaceAll(' ', '-')),
};
const featuredImage: NotAsSent = {
  // a URL registers a media record: the record shows it as an image object with its new id
  send: () => 'https://cdn.example.test/uploads/round-trip.jpg',
  expect: ({ record, sent }) => expect(record.image).toEqual({ url: sent, id: expect.any(Number), extension: 'jpg' }),
};
const translationOf = (resource: Resource): NotAsSent => ({
  // honoured on create only (inline records are created): the new record joins the group of the French one; an
  // update leaves the group as it is
  send: (f) => f.french(resource),
  expect: ({ record, sent, phase }) => {
    expect(record.translations).toEqual(phase === 'update' ? { en: record.id } : { fr: sent, en: record.id });
  },
});

/**
 * The request's language (BodyLanguage): a record created at the top level of the body is in it; a record never
 * changes its language on update, and an inline record is written in the request's language, not its own field's.
 */
const bodyLanguage: NotAsSent = {
  send: () => 'de',
  expect: ({ record, sent, phase }) => expect(record.lang).toBe(phase === 'create' ? sent : 'en'),
};

/** Write-only: a protected venue or organizer is shown blanked (`key`, one of its BASE fields, "") without its password. */
const blankedWithoutPassword = (resource: 'venue' | 'organizer', key: string): NotAsSent => ({
  send: () => 'open sesame',
  expect: async ({ s, record, sent }) => {
    const path = `${NS}/${ROUTES[resource].path}/${record.id}`;
    expect((await s.raw('GET', path)).body[key]).toBe('');
    expect((await s.raw('GET', `${path}?password=${encodeURIComponent(sent)}`)).body[key]).toBe(BASE[resource]()[key]);
  },
});

/** A record's name, whatever its type calls it. */
function nameOf(record: Rec): string {
  return record.title ?? record.venue ?? record.organizer ?? record.name;
}

/**
 * Every field of a request body that does not come back as sent, by resource: write-only fields (their effect is
 * checked instead), transformed ones (with the transformation), and references to other records.
 */
const NOT_AS_SENT: Record<Resource, Record<string, NotAsSent>> = {
  event: {
    author: authorId,
    title: renderedTitle,
    description: paragraphs('description'),
    excerpt: paragraphs('excerpt'),
    slug: sanitisedSlug,
    image: featuredImage,
    // costs are parsed: the display cost gets the site's currency symbol, the numbers go to cost_details
    cost: { send: () => ['5', '25'], expect: ({ record }) => expect([record.cost, record.cost_details.values]).toEqual(['$5 – $25', ['5', '25']]) },
    // terms are named by id, slug or name; the record embeds the terms
    categories: { send: (f) => [f.category], expect: ({ record, sent }) => expect(record.categories.map((t: Rec) => t.id)).toEqual(sent) },
    tags: { send: () => [unique('round trip tag')], expect: ({ record, sent }) => expect(record.tags.map((t: Rec) => t.name)).toEqual(sent) },
    // an inline venue (or organizer) is created and embedded; see also the inline round trips below
    venue: { send: () => ({ venue: unique('Inline hall') }), expect: ({ record, sent }) => expect(record.venue.venue).toBe(sent.venue) },
    organizer: { send: () => [{ organizer: unique('Inline club') }], expect: ({ record, sent }) => expect(record.organizer.map((o: Rec) => o.organizer)).toEqual([sent[0].organizer]) },
    // write-only: a protected event is refused to readers without its password (administrators included)
    password: {
      send: () => 'open sesame',
      read: (sent) => `?password=${encodeURIComponent(sent)}`,
      expect: async ({ s, record }) => {
        expect((await s.raw('GET', `${NS}/events/${record.id}`, { as: s.admin })).body.code).toBe('event-password-protected');
      },
    },
    // write-only: no record shows its parent; the post_parent filter finds it
    post_parent: {
      send: (f) => f.parentEvent,
      expect: async ({ s, record, sent }) => {
        const children = await s.raw('GET', `${NS}/events?post_parent=${sent}&start_date=2027-01-01&end_date=2029-12-31&status=publish,future,private`, { as: s.admin });
        expect(children.body.events.map((e: Rec) => e.id)).toContain(record.id);
      },
    },
    translation_of: translationOf('event'),
    xlate_language: bodyLanguage,
    wpml_language: bodyLanguage,
  },
  venue: {
    author: authorId,
    venue: renderedTitle,
    description: paragraphs('description'),
    // truthy strings ('true', 'yes', '1', …) read as booleans; both default to true, so false is what shows a write
    show_map: { send: () => 'false', expect: ({ record }) => expect(record.show_map).toBe(false) },
    show_map_link: { send: () => 'false', expect: ({ record }) => expect(record.show_map_link).toBe(false) },
    image: featuredImage,
    // coordinates show only in pairs
    geo_lat: { with: { geo_lng: 13.4 }, expect: ({ record, sent }) => expect([record.geo_lat, record.geo_lng]).toEqual([sent, 13.4]) },
    geo_lng: { with: { geo_lat: 52.5 }, expect: ({ record, sent }) => expect([record.geo_lat, record.geo_lng]).toEqual([52.5, sent]) },
    password: blankedWithoutPassword('venue', 'city'),
    translation_of: translationOf('venue'),
    xlate_language: bodyLanguage,
    wpml_language: bodyLanguage,
  },
  organizer: {
    author: authorId,
    organizer: renderedTitle,
    description: paragraphs('description'),
    image: featuredImage,
    password: blankedWithoutPassword('organizer', 'phone'),
    translation_of: translationOf('organizer'),
    xlate_language: bodyLanguage,
    wpml_language: bodyLanguage,
  },
  category: {
    name: escapedTermName,
    slug: sanitisedSlug,
    // an existing category
    parent: { send: (f) => f.category, expect: ({ record, sent }) => expect(record.parent).toBe(sent) },
    translation_of: translationOf('category'),
    xlate_language: bodyLanguage,
    wpml_language: bodyLanguage,
  },
  tag: {
    name: escapedTermName,
    slug: sanitisedSlug,
    translation_of: translationOf('tag'),
    xlate_language: bodyLanguage,
    wpml_language: bodyLanguage,
  },
};

// ---------------------------------------------------------------------------------------------------------------

let s: TestServer;
let fixtures: Fixtures;

async function write(method: string, path: string, json: Record<string, unknown>, status: number): Promise<Rec> {
  const r = await s.raw(method, path, { as: s.admin, json });
  expect(r.status, `${method} ${path} ${JSON.stringify(json)} → ${r.text}`).toBe(status);
  return r.body as Rec;
}

beforeAll(async () => {
  s = await TestServer.start();
  const editor = await s.user('editor');
  const editorId = (await s.read((repos) => repos.users.findByLoginOrEmail(editor.login)))!.id;
  fixtures = {
    s,
    editorId,
    category: (await write('POST', `${NS}/categories`, BASE.category(), 201)).id,
    french: async (resource) => (await write('POST', `/fr${NS}/${ROUTES[resource].path}`, BASE[resource](), 201)).id,
    parentEvent: (await write('POST', `${NS}/events`, BASE.event(), 201)).id,
  };
});
afterAll(() => s.close());

/** The fields of a body schema, each with what is sent for it and how the record read back must show it. */
async function* cases(resource: Resource, schema: SchemaNode): AsyncGenerator<{ field: string; value: unknown; along: Record<string, unknown>; query: string; check: NotAsSent['expect'] }> {
  for (const [field, property] of Object.entries(schema.properties ?? {})) {
    const special = NOT_AS_SENT[resource][field];
    const value = special?.send ? await special.send(fixtures) : derive(flattenAllOf(property), field);
    if (value === undefined) throw new Error(`no valid value for ${resource} ${field} can be derived from its schema: list it in NOT_AS_SENT`);
    expect(valid(flattenAllOf(property), value), `${resource}: the value sent for ${field} is valid for its schema`).toBe(true);
    const check = special?.expect ?? (({ record, sent }: Context) => expect(record[field], `${resource} ${field}`).toEqual(sent));
    yield { field, value, along: special?.with ?? {}, query: special?.read?.(value) ?? '', check };
  }
}

/** Where an event's body takes inline venues and organizers, and the field that names one. */
const INLINE = { venue: { field: 'venue', name: 'venue' }, organizer: { field: 'organizer', name: 'organizer' } } as const;

/** The schema an inline venue or organizer of an event write must match. */
function inlineSchema(resource: 'venue' | 'organizer', eventOperationId: string): SchemaNode {
  const { field, name } = INLINE[resource];
  const found = objectRequiring(bodySchema(eventOperationId).properties![field]!, name);
  if (!found) throw new Error(`${eventOperationId} takes no inline ${resource}`);
  return found;
}

/** Writes a record of `resource` with `fields` (in a new event for the inline phases); answers its id. */
async function writeRecord(resource: Resource, phase: Phase, fields: Record<string, unknown>): Promise<number> {
  const { path } = ROUTES[resource];
  switch (phase) {
    case 'create':
      return (await write('POST', `${NS}/${path}`, { ...BASE[resource](), ...fields }, 201)).id;
    case 'update':
      return (await write('PATCH', `${NS}/${path}/${(await write('POST', `${NS}/${path}`, BASE[resource](), 201)).id}`, fields, 200)).id;
    default: {
      const inline = { ...BASE[resource](), ...fields };
      const linked = resource === 'venue' ? { venue: inline } : { organizer: [inline] };
      const event = phase === 'inline create'
        ? await write('POST', `${NS}/events`, { ...BASE.event(), ...linked }, 201)
        : await write('PATCH', `${NS}/events/${(await write('POST', `${NS}/events`, BASE.event(), 201)).id}`, linked, 200);
      return resource === 'venue' ? event.venue.id : event.organizer[0].id;
    }
  }
}

async function roundTrip(resource: Resource, phase: Phase): Promise<void> {
  const { path, create, update } = ROUTES[resource];
  const schema = phase === 'create' ? bodySchema(create)
    : phase === 'update' ? bodySchema(update)
    : inlineSchema(resource as 'venue' | 'organizer', phase === 'inline create' ? ROUTES.event.create : ROUTES.event.update);
  for await (const { field, value, along, query, check } of cases(resource, schema)) {
    const id = await writeRecord(resource, phase, { ...along, [field]: value });
    const read = await s.raw('GET', `${NS}/${path}/${id}${query}`, { as: s.admin });
    expect(read.status, `${resource} ${field}: ${read.text}`).toBe(200);
    await check({ ...fixtures, phase, sent: value, record: read.body });
  }
}

describe('every field a request body declares is written and read back', () => {
  it('lists in NOT_AS_SENT only fields the request bodies declare', () => {
    for (const resource of Object.keys(ROUTES) as Resource[]) {
      const declared = new Set([...Object.keys(bodySchema(ROUTES[resource].create).properties ?? {}), ...Object.keys(bodySchema(ROUTES[resource].update).properties ?? {})]);
      expect(Object.keys(NOT_AS_SENT[resource]).filter((f) => !declared.has(f)), resource).toEqual([]);
      expect((bodySchema(ROUTES[resource].create).required ?? []).filter((f) => !(f in BASE[resource]())), `${resource}: BASE holds what a create requires`).toEqual([]);
    }
  });

  for (const resource of Object.keys(ROUTES) as Resource[]) {
    const phases: Phase[] = resource in INLINE ? ['create', 'update', 'inline create', 'inline update'] : ['create', 'update'];
    for (const phase of phases) it(`${resource}: ${phase}`, () => roundTrip(resource, phase), 120_000);
  }
});
