import { describe, expect, it } from 'vitest';
import { flattenAllOf, isFilterTrue, isTruthy, normalise, parseTextTree, TextValues, type SchemaNode, type TextTree } from '../src/http/params.js';

type Plain = { [key: string]: string[] | Plain };

/** A text tree as plain data: each leaf becomes the list of its values. */
function plain(tree: TextTree): Plain {
  const out: Plain = {};
  for (const [key, value] of Object.entries(tree)) out[key] = value instanceof TextValues ? [...value.values] : plain(value);
  return out;
}

/** The normalised value of `name` in the query string `query`. */
function fromQuery(query: string, schema: SchemaNode | undefined, name = 'p'): unknown {
  return normalise(parseTextTree(query)[name], schema);
}

const integer: SchemaNode = { type: 'integer' };
const number: SchemaNode = { type: 'number' };
const boolean: SchemaNode = { type: 'boolean' };
const string: SchemaNode = { type: 'string' };
const integers: SchemaNode = { type: 'array', items: integer };
const strings: SchemaNode = { type: 'array', items: string };

describe('parseTextTree', () => {
  it.each<[string, Plain]>([
    ['', {}],
    ['a=1', { a: ['1'] }],
    ['a=1&a=2', { a: ['1', '2'] }],
    ['a[]=1&a[]=2', { a: ['1', '2'] }],
    ['a=1&a[]=2', { a: ['1', '2'] }],
    ['a=1&b=2', { a: ['1'], b: ['2'] }],
    ['b[c]=3', { b: { c: ['3'] } }],
    ['b[c]=3&b[d]=4&b[c]=5', { b: { c: ['3', '5'], d: ['4'] } }],
    ['d[0][e]=4', { d: { '0': { e: ['4'] } } }],
    ['d[0][e]=4&d[1][e]=5&d[0][f]=6', { d: { '0': { e: ['4'], f: ['6'] }, '1': { e: ['5'] } } }],
    ['e[][n]=1&e[][n]=2', { e: { '0': { n: ['1'] }, '1': { n: ['2'] } } }],
    ['v[x][]=1&v[x][]=2', { v: { x: ['1', '2'] } }],
    ['q=hello+world', { q: ['hello world'] }],
    ['q=a%20b%2Bc', { q: ['a b+c'] }],
    ['r=1%2C2', { r: ['1,2'] }],
    ['name=Form+%26+Co', { name: ['Form & Co'] }],
    ['caf%C3%A9=cr%C3%A8me', { café: ['crème'] }],
    ['my+key=v', { 'my key': ['v'] }],
    ['a%5B%5D=1&a%5B%5D=2', { a: ['1', '2'] }],
    ['x=%zz&y=1', { y: ['1'] }],
    ['%zz=1&y=1', { y: ['1'] }],
    ['x=%E6%97&y=1', { y: ['1'] }],
    ['x=100%&y=2', { y: ['2'] }],
    ['flag&y=1', { flag: [''], y: ['1'] }],
    ['flag=&y=1', { flag: [''], y: ['1'] }],
    ['&&a=1&', { a: ['1'] }],
    ['a=1=2', { a: ['1=2'] }],
    ['=1&a=2', { '': ['1'], a: ['2'] }],
  ])('parses %j', (text, expected) => {
    expect(plain(parseTextTree(text))).toEqual(expected);
  });

  it('makes leaves TextValues and branches trees', () => {
    const tree = parseTextTree('a=1&b[c]=2');
    expect(tree.a).toBeInstanceOf(TextValues);
    expect(tree.b).not.toBeInstanceOf(TextValues);
    expect((tree.b as TextTree).c).toBeInstanceOf(TextValues);
  });

  it('lets a later scalar replace a tree and a later tree replace a scalar, as PHP does', () => {
    expect(plain(parseTextTree('a[b]=1&a=2'))).toEqual({ a: ['2'] });
    expect(plain(parseTextTree('a=1&a[b]=2'))).toEqual({ a: { b: ['2'] } });
  });

  it('keeps prototype keys as plain keys', () => {
    const tree = parseTextTree('__proto__[polluted]=1&constructor=2');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(tree).sort()).toEqual(['__proto__', 'constructor']);
    expect((tree['constructor'] as unknown as TextValues).values).toEqual(['2']);
  });
});

describe('TextValues', () => {
  it('gives the last value, or "" when there is none', () => {
    expect(new TextValues(['1', '2', '3']).last).toBe('3');
    expect(new TextValues([]).last).toBe('');
  });
});

describe('normalise: arrays', () => {
  it.each<[string, string, unknown]>([
    ['repeated keys', 'p=1&p=2', [1, 2]],
    ['[] keys', 'p[]=1&p[]=2', [1, 2]],
    ['a single value', 'p=7', [7]],
    ['CSV', 'p=1,2,3', [1, 2, 3]],
    ['CSV with spaces', 'p=1,+2+,+3', [1, 2, 3]],
    ['encoded CSV', 'p=1%2C2', [1, 2]],
    ['CSV in repeated keys', 'p=1,2&p=3', [1, 2, 3]],
    ['CSV with empty items', 'p=1,,2,', [1, 2]],
    ['indexed keys, in index order', 'p[10]=3&p[2]=2&p[0]=1', [1, 2, 3]],
    ['an empty value', 'p=', []],
    ['a value that does not fit', 'p=1,x,2.5', [1, 'x', '2.5']],
  ])('reads integer arrays from %s', (_, query, expected) => {
    expect(fromQuery(query, integers)).toEqual(expected);
  });

  it.each<[string, unknown, unknown]>([
    ['a JSON array of numbers', [1, 2], [1, 2]],
    ['a JSON array of digit strings', ['1', ' 2 '], [1, 2]],
    ['a JSON CSV string', '1,2', [1, 2]],
    ['a JSON CSV string with spaces', ' 1 , 2 ', [1, 2]],
    ['a JSON number', 5, [5]],
    ['an empty JSON array', [], []],
    ['an empty JSON string', '', []],
    ['JSON null', null, []],
  ])('reads integer arrays from %s', (_, value, expected) => {
    expect(normalise(value, integers)).toEqual(expected);
  });

  it('keeps string items as strings', () => {
    expect(fromQuery('p=a,+b&p=c', strings)).toEqual(['a', 'b', 'c']);
    expect(fromQuery('p=1,2', strings)).toEqual(['1', '2']);
    expect(normalise(['x', 'y'], strings)).toEqual(['x', 'y']);
  });

  it('normalises each item of an array of objects', () => {
    const schema: SchemaNode = { type: 'array', items: { type: 'object', properties: { id: integer, on: boolean } } };
    expect(fromQuery('p[0][id]=1&p[0][on]=true&p[1][id]=2', schema)).toEqual([{ id: 1, on: true }, { id: 2 }]);
    expect(normalise([{ id: '3', on: '0' }], schema)).toEqual([{ id: 3, on: false }]);
  });

  it('reads an array without items schema as plain values', () => {
    expect(fromQuery('p=a&p=b', { type: 'array' })).toEqual(['a', 'b']);
  });
});

describe('normalise: scalars', () => {
  it.each<[string, SchemaNode, unknown]>([
    ['p=42', integer, 42],
    ['p=-3', integer, -3],
    ['p=%2B3', integer, 3],
    ['p=+42+', integer, 42],
    ['p=007', integer, 7],
    ['p=1&p=2', integer, 2],
    ['p=4.2', integer, '4.2'],
    ['p=abc', integer, 'abc'],
    ['p=', integer, ''],
    ['p=1e3', integer, '1e3'],
    ['p=4.5', number, 4.5],
    ['p=-0.25', number, -0.25],
    ['p=.5', number, 0.5],
    ['p=5.', number, 5],
    ['p=1e3', number, 1000],
    ['p=12', number, 12],
    ['p=0x10', number, '0x10'],
    ['p=1,5', number, '1,5'],
    ['p=abc', number, 'abc'],
    ['p=true', boolean, true],
    ['p=TRUE', boolean, true],
    ['p=True', boolean, true],
    ['p=false', boolean, false],
    ['p=FaLsE', boolean, false],
    ['p=1', boolean, true],
    ['p=0', boolean, false],
    ['p=yes', boolean, 'yes'],
    ['p=2', boolean, '2'],
    ['p=', boolean, ''],
    ['p=a&p=b', string, 'b'],
    ['p=42', string, '42'],
    ['p=true', string, 'true'],
  ])('reads %j as %j for %j', (query, schema, expected) => {
    expect(fromQuery(query, schema)).toEqual(expected);
  });

  it.each<[unknown, SchemaNode, unknown]>([
    [7, integer, 7],
    [' 8 ', integer, 8],
    [7.5, integer, 7.5],
    [1.5, number, 1.5],
    ['1.5', number, 1.5],
    [true, boolean, true],
    [false, boolean, false],
    [1, boolean, true],
    [0, boolean, false],
    [2, boolean, 2],
    ['0', boolean, false],
    [null, boolean, null],
    [null, integer, null],
    [5, string, 5],
    [['a'], string, ['a']],
  ])('reads JSON %j as %j for %j', (value, schema, expected) => {
    expect(normalise(value, schema)).toEqual(expected);
  });

  it('reads values without a schema as their last text, or plain objects', () => {
    expect(fromQuery('p=1&p=2', undefined)).toBe('2');
    expect(fromQuery('p[a]=1&p[b][c]=2&p[b][c]=3', undefined)).toEqual({ a: '1', b: { c: '3' } });
    expect(normalise(5, undefined)).toBe(5);
    const json = { a: 'x', b: [1, '2'], c: { d: true, e: null, f: 1.5 } };
    expect(normalise(json, undefined)).toEqual(json);
    expect(normalise([{ a: 'x', n: 1 }], { type: 'array', items: {} })).toEqual([{ a: 'x', n: 1 }]);
    expect(fromQuery('p[a]=1', string)).toEqual({ a: '1' });
  });
});

describe('normalise: objects and allOf', () => {
  const venue: SchemaNode = {
    type: 'object',
    properties: { venue: string, geo_lat: number, show_map: boolean, author: integer, tags: integers },
  };

  it('recurses into the properties of a form object', () => {
    expect(fromQuery('p[venue]=Hall&p[geo_lat]=51.5&p[show_map]=1&p[author]=3&p[tags]=1,2&p[extra]=x&p[extra]=y', venue)).toEqual({
      venue: 'Hall',
      geo_lat: 51.5,
      show_map: true,
      author: 3,
      tags: [1, 2],
      extra: 'y',
    });
  });

  it('recurses into the properties of a JSON object', () => {
    expect(normalise({ venue: 'Hall', geo_lat: '51.5', show_map: 'false', nested: { a: 1 } }, venue)).toEqual({
      venue: 'Hall',
      geo_lat: 51.5,
      show_map: false,
      nested: { a: 1 },
    });
  });

  it('leaves a scalar sent for an object as it is', () => {
    expect(fromQuery('p=1&p=2', venue)).toBe('2');
    expect(normalise('Hall', venue)).toBe('Hall');
    expect(normalise(['x'], venue)).toEqual(['x']);
  });

  it('folds allOf', () => {
    const schema: SchemaNode = {
      allOf: [
        { type: 'object', properties: { a: integer }, required: ['a'] },
        { allOf: [{ properties: { b: boolean }, required: ['b'] }] },
      ],
      properties: { c: number },
    };
    const flat = flattenAllOf(schema);
    expect(flat.type).toBe('object');
    expect(flat.allOf).toBeUndefined();
    expect(Object.keys(flat.properties!).sort()).toEqual(['a', 'b', 'c']);
    expect(flat.required).toEqual(['a', 'b']);
    expect(normalise({ a: '1', b: 'TRUE', c: '2.5', d: '4' }, schema)).toEqual({ a: 1, b: true, c: 2.5, d: '4' });
    expect(fromQuery('p[a]=1&p[b]=0', schema)).toEqual({ a: 1, b: false });
  });

  it('keeps the keywords of every member that declares a property (a create body restates its required fields)', () => {
    const flat = flattenAllOf({
      allOf: [
        { type: 'object', properties: { title: { type: 'string', minLength: 1, maxLength: 1000 } } },
        { type: 'object', required: ['title'], properties: { title: { type: 'string' } } },
      ],
    });
    expect(flat.properties!.title).toEqual({ type: 'string', minLength: 1, maxLength: 1000 });
    expect(flat.required).toEqual(['title']);
  });

  it('keeps a schema without allOf as it is', () => {
    const schema: SchemaNode = { type: 'object', properties: { a: integer } };
    expect(flattenAllOf(schema)).toBe(schema);
  });

  it('keeps the type of the outer schema when folding', () => {
    expect(flattenAllOf({ type: 'object', allOf: [{ type: 'array' }] }).type).toBe('object');
  });
});

describe('normalise: anyOf unions', () => {
  const idOrSlug: SchemaNode = { anyOf: [{ type: 'integer', minimum: 1 }, { type: 'string', minLength: 1 }] };

  it.each<[string, unknown]>([
    ['p=12', 12],
    ['p=music', 'music'],
    ['p=', ''],
    ['p=12a', '12a'],
  ])('reads an id or a slug from %j', (query, expected) => {
    expect(fromQuery(query, idOrSlug)).toEqual(expected);
  });

  it('reads id-or-name items of a term list', () => {
    const terms: SchemaNode = { type: 'array', items: idOrSlug };
    expect(fromQuery('p=2,music', terms)).toEqual([2, 'music']);
    expect(fromQuery('p[]=2&p[]=Live+Music', terms)).toEqual([2, 'Live Music']);
    expect(normalise([3, '4', 'jazz'], terms)).toEqual([3, 4, 'jazz']);
  });

  it('picks number or integer by the text', () => {
    const numeric: SchemaNode = { anyOf: [{ type: 'integer' }, { type: 'number' }] };
    expect(fromQuery('p=3', numeric)).toBe(3);
    expect(fromQuery('p=3.5', numeric)).toBe(3.5);
    expect(normalise(3.5, numeric)).toBe(3.5);
  });

  it('picks the branch of a JSON scalar by its type', () => {
    expect(normalise(3, { anyOf: [string, integer] })).toBe(3);
    expect(normalise(true, { anyOf: [string, boolean] })).toBe(true);
    expect(normalise(null, idOrSlug)).toBeNull();
  });

  const cost: SchemaNode = { anyOf: [string, strings] };
  it.each<[string, unknown]>([
    ['p=20', '20'],
    ['p=Free', 'Free'],
    ['p=5,25', ['5', '25']],
    ['p=5&p=25', ['5', '25']],
    ['p=', ''],
  ])('reads a string or a list of strings from %j', (query, expected) => {
    expect(fromQuery(query, cost)).toEqual(expected);
  });

  const organizer: SchemaNode = {
    anyOf: [
      { type: 'integer', minimum: 0, nullable: true },
      { type: 'string', pattern: '^(?:[0-9]+(?: *, *[0-9]+)*)?$' },
      {
        type: 'array',
        items: {
          anyOf: [
            { type: 'integer', minimum: 1 },
            { type: 'string', pattern: '^[0-9]*$' },
            { type: 'object', required: ['id'], properties: { id: integer } },
            { allOf: [{ type: 'object', required: ['organizer'], properties: { organizer: string, author: integer } }] },
          ],
        },
      },
    ],
  };

  it.each<[string, unknown]>([
    ['p=5', 5],
    ['p=0', 0],
    ['p=', ''],
    ['p=5,6', [5, 6]],
    ['p=5&p=6', [5, 6]],
    ['p[]=5&p[]=6', [5, 6]],
    ['p[0][id]=5&p[1]=6', [{ id: 5 }, 6]],
    ['p[0][organizer]=Bob&p[0][author]=2', [{ organizer: 'Bob', author: 2 }]],
  ])('reads organizers from %j', (query, expected) => {
    expect(fromQuery(query, organizer)).toEqual(expected);
  });

  it('reads organizers from JSON', () => {
    expect(normalise([5, { id: '6' }, { organizer: 'Ann', author: '3' }], organizer)).toEqual([5, { id: 6 }, { organizer: 'Ann', author: 3 }]);
    expect(normalise(null, organizer)).toBeNull();
    expect(normalise([], organizer)).toEqual([]);
  });

  const venue: SchemaNode = {
    anyOf: [
      { type: 'integer', minimum: 0, nullable: true },
      { type: 'string', pattern: '^[0-9]*$' },
      { type: 'object', required: ['id'], properties: { id: integer } },
      {
        allOf: [
          {
            type: 'object',
            required: ['venue'],
            allOf: [{ type: 'object', properties: { venue: string, geo_lat: number, author: integer, show_map: string } }],
          },
        ],
      },
      { type: 'array', maxItems: 0, items: {} },
    ],
  };

  it.each<[string, unknown]>([
    ['p=7', 7],
    ['p=', ''],
    ['p[id]=7', { id: 7 }],
    ['p[venue]=Hall&p[geo_lat]=51.5&p[author]=2&p[show_map]=1', { venue: 'Hall', geo_lat: 51.5, author: 2, show_map: '1' }],
  ])('reads a venue from %j', (query, expected) => {
    expect(fromQuery(query, venue)).toEqual(expected);
  });

  it('reads a venue from JSON, picking the object branch the keys were meant for', () => {
    expect(normalise({ id: '7' }, venue)).toEqual({ id: 7 });
    expect(normalise({ venue: 'Hall', geo_lat: '51.5', author: '2' }, venue)).toEqual({ venue: 'Hall', geo_lat: 51.5, author: 2 });
    expect(normalise([], venue)).toEqual([]);
    expect(normalise(0, venue)).toBe(0);
  });

  it('picks object or array for a tree by its keys', () => {
    const either: SchemaNode = { anyOf: [{ type: 'array', items: integer }, { type: 'object', properties: { a: integer } }] };
    expect(fromQuery('p[a]=1', either)).toEqual({ a: 1 });
    expect(fromQuery('p[0]=1&p[1]=2', either)).toEqual([1, 2]);
    const objectFirst: SchemaNode = { anyOf: [{ type: 'object', properties: { a: integer } }, { type: 'array', items: integer }] };
    expect(fromQuery('p[0]=1&p[1]=2', objectFirst)).toEqual([1, 2]);
    expect(fromQuery('p=1&p=2', objectFirst)).toEqual([1, 2]);
  });

  it('falls back to the first branch when no branch fits', () => {
    expect(fromQuery('p=yes', { anyOf: [integer, number] })).toBe('yes');
  });
});

describe('isTruthy', () => {
  // a number is true unless 0, as PHP casts it (`tribe_is_truthy`)
  it.each([true, 1, 2, -1, 'true', 'TRUE', 'True', '1', 'yes', 'YES', 'y', 'Y', 'on', 'On', 'enable', 'ENABLE', 'enabled', 'Enabled', ' true ', '\tyes\n', '  1'])(
    'is true for %j',
    (value) => {
      expect(isTruthy(value)).toBe(true);
    },
  );

  it.each([false, 0, 'false', 'FALSE', '0', 'no', 'n', 'off', 'disable', 'disabled', '', ' ', 'truthy', 'yess', '1.0', '01', 'tru e', null, undefined, {}, ['true'], [1]])(
    'is false for %j',
    (value) => {
      expect(isTruthy(value)).toBe(false);
    },
  );
});

describe('isFilterTrue (PHP FILTER_VALIDATE_BOOLEAN, for strict_dates)', () => {
  it.each([true, '1', 'true', 'TRUE', 'on', 'On', 'yes', 'YES', ' yes '])('is true for %j', (value) => {
    expect(isFilterTrue(value)).toBe(true);
  });

  it.each([false, '0', 'false', 'off', 'no', 'y', 'enable', 'enabled', '', 'truthy', undefined])('is false for %j', (value) => {
    expect(isFilterTrue(value)).toBe(false);
  });
});
