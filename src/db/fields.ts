/**
 * The plain detail fields of events, venues and organizers, each named once: its wire key (the spec's name, in the
 * request body and in the answer), its record key, its column in the type's detail table, and its kind. The row
 * mapping (rows.ts), the record a write builds from a request body (services/posts.ts), the answer (domain/postView.ts),
 * what a protected record shows (domain/postRules.ts BLANKED), the import (import/records.ts) and the defaults of
 * seeded records all read these tables, so a plain field is added here, in the spec and in a migration per engine.
 *
 * Each table lists the detail keys of the answer in the plugin's order: `special` entries only hold the place of keys
 * whose values the view builds itself (links, HTML, prices, derived values), as their own code does everywhere else.
 */
import type { components } from '../../generated/api.js';
import type { PostType } from './records.js';

type Schemas = components['schemas'];

/**
 * - `text`: a string, sanitised as WordPress's `sanitize_text_field` when written, `""` when not set;
 * - `url`: a string written as sent (its format is checked by the spec), `""` when not set;
 * - `flag`: a boolean, read as the plugin reads flags (truthy strings too) when written;
 * - `number`: a number, or null when not set (a write sends null to clear it where the spec allows it).
 */
export type Kind = 'text' | 'url' | 'flag' | 'number';

/** What the record holds for each kind. */
interface KindValue { text: string; url: string; flag: boolean; number: number | null }
/** What a request body may send for each kind (checked against the spec's request schema). */
interface KindWritten { text: string; url: string; flag: boolean | string; number: number | null }

/** A plain field: `default` is the value of a record created without it (flags); `imported` what an import assumes when the source leaves the flag out, where it differs. */
export type PlainField<K extends Kind = Kind> = K extends 'flag' ? { key: string; column: string; kind: K; default: boolean; imported?: boolean } : { key: string; column: string; kind: K };
/** A key of the answer the view builds itself (see the file's comment). */
export interface SpecialField { kind: 'special' }
const SPECIAL: SpecialField = { kind: 'special' };

/** The kinds whose values fit a wire key: what the request schema takes (`Written`) and the answer schema shows (`Shown`). */
type KindFor<Written, Shown> = { [K in Kind]: [Exclude<Written, undefined>] extends [KindWritten[K]] ? [NonNullable<KindValue[K]>] extends [NonNullable<Shown>] ? K : never : never }[Kind];
/**
 * A table checked against the generated types: every key is a key of the answer, a plain field's key is also one of
 * the request body, and its kind fits both schemas. A field named here but not in the spec fails `npm run check`;
 * one in the spec but not here fails test/roundtrip.test.ts (nothing writes it).
 */
type FieldTable<Fields, Shown> = { [W in keyof Shown]?: W extends keyof Fields ? PlainField<KindFor<Fields[W], Shown[W]>> | SpecialField : SpecialField };

export const DETAIL_FIELDS = {
  event: {
    website: SPECIAL,
    show_map: { key: 'showMap', column: 'show_map', kind: 'flag', default: false, imported: true },
    show_map_link: { key: 'showMapLink', column: 'show_map_link', kind: 'flag', default: false, imported: true },
    hide_from_listings: { key: 'hideFromListings', column: 'hide_from_listings', kind: 'flag', default: false },
    sticky: { key: 'sticky', column: 'sticky', kind: 'flag', default: false },
    featured: { key: 'featured', column: 'featured', kind: 'flag', default: false },
    categories: SPECIAL,
    tags: SPECIAL,
    venue: SPECIAL,
    organizer: SPECIAL,
    custom_fields: SPECIAL,
    lang: SPECIAL,
    translations: SPECIAL,
    ticketed: { key: 'ticketed', column: 'ticketed', kind: 'flag', default: false },
  },
  venue: {
    address: { key: 'address', column: 'address', kind: 'text' },
    city: { key: 'city', column: 'city', kind: 'text' },
    country: { key: 'country', column: 'country', kind: 'text' },
    province: { key: 'province', column: 'province', kind: 'text' },
    state: { key: 'state', column: 'state', kind: 'text' },
    zip: { key: 'zip', column: 'zip', kind: 'text' },
    phone: { key: 'phone', column: 'phone', kind: 'text' },
    website: { key: 'website', column: 'website', kind: 'url' },
    // derived from state, province and country when not sent (services/posts.ts linkedRecord)
    stateprovince: { key: 'stateprovince', column: 'stateprovince', kind: 'text' },
    // shown only when both are non-zero (domain/postView.ts)
    geo_lat: { key: 'geoLat', column: 'geo_lat', kind: 'number' },
    geo_lng: { key: 'geoLng', column: 'geo_lng', kind: 'number' },
    json_ld: SPECIAL,
    show_map: { key: 'showMap', column: 'show_map', kind: 'flag', default: true },
    show_map_link: { key: 'showMapLink', column: 'show_map_link', kind: 'flag', default: true },
  },
  organizer: {
    phone: { key: 'phone', column: 'phone', kind: 'text' },
    website: { key: 'website', column: 'website', kind: 'url' },
    email: { key: 'email', column: 'email', kind: 'text' },
    json_ld: SPECIAL,
  },
} as const satisfies {
  event: FieldTable<Schemas['EventFields'], Schemas['Event']>;
  venue: FieldTable<Schemas['VenueFields'], Schemas['Venue']>;
  organizer: FieldTable<Schemas['OrganizerFields'], Schemas['Organizer']>;
};

type Table<T extends PostType> = (typeof DETAIL_FIELDS)[T];
type PlainOf<T extends PostType> = Extract<Table<T>[keyof Table<T>], PlainField>;
/** The record properties of a type's plain fields, derived from its table (records.ts adds them to the record). */
export type PlainDetails<T extends PostType> = { -readonly [F in PlainOf<T> as F['key']]: KindValue[F['kind']] };

/** A type's plain fields, as [wire key, field], in the answer's order. */
export const plainFields = (type: PostType): readonly (readonly [wire: string, field: PlainField])[] => PLAIN[type];
const PLAIN = Object.fromEntries(
  (Object.keys(DETAIL_FIELDS) as PostType[]).map((type) => [
    type,
    Object.entries(DETAIL_FIELDS[type] as Record<string, PlainField | SpecialField>).filter((e): e is [string, PlainField] => e[1].kind !== 'special'),
  ]),
) as Record<PostType, [string, PlainField][]>;

/** The value of each kind on a record created without it. */
export function defaultOf(field: PlainField): KindValue[Kind] {
  if (field.kind === 'flag') return field.default;
  return field.kind === 'number' ? null : '';
}

/** The plain fields of a record created without any: what seeded and test records start from. */
export function plainDefaults<T extends PostType>(type: T): PlainDetails<T> {
  const out: Record<string, unknown> = {};
  for (const [, field] of PLAIN[type]) out[field.key] = defaultOf(field);
  return out as PlainDetails<T>;
}

/** What a password-protected record shows of a plain field to a caller who has not opened it (domain/postRules.ts). */
export function blankOf(field: PlainField): '' | null | 0 {
  return field.kind === 'flag' ? null : field.kind === 'number' ? 0 : '';
}
