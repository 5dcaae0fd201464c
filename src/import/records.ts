import { DateTime, type Zone } from 'luxon';
import type { MediaRecord } from '../db/records.js';
import { POST_STATUSES, type EventRecord, type OrganizerRecord, type PostBase, type PostStatus, type PostType, type VenueRecord } from '../db/records.js';
import type { Taxonomy, TermRecord } from '../db/records.js';
import { costValues, formatCost, type CostCurrency } from '../domain/cost.js';
import { toWire, UNDATED, WIRE_FORMAT } from '../domain/dates.js';
import { fromUtcWire } from '../domain/eventTimes.js';
import { autop, renderTitle } from '../domain/html.js';
import { mayFloat } from '../domain/postRules.js';
import { escapeTermName, unescapeHtml, webUrl } from '../domain/text.js';
import { LANGS, type Lang } from '../domain/context.js';
import { plainFields, type PlainDetails } from '../db/fields.js';

/**
 * Records of the plugin's API (reference resources.md §1–4) read back into Almanac's records. The wire shows text
 * rendered (titles texturized, descriptions through wpautop, term names escaped) and costs formatted; each stored
 * value is chosen so that Almanac renders it exactly as the source showed it.
 */

export type Wire = Record<string, unknown>;

/** A record the importer cannot read (a field missing or of the wrong kind). */
export class WireError extends Error {}

const NAME_KEY: Record<PostType, string> = { event: 'title', venue: 'venue', organizer: 'organizer' };

/** A post as the source showed it, with links named by source ids (the importer checks them). */
export interface SourcePost<R extends EventRecord | VenueRecord | OrganizerRecord = EventRecord | VenueRecord | OrganizerRecord> {
  id: number;
  globalId: string;
  /** Ids of the same record in other languages, on the source. */
  siblings: number[];
  image: MediaRecord | null;
  /** Linked venue and organizers with the global ids the source gave them (events only). */
  linked: { type: 'venue' | 'organizer'; id: number; globalId: string | null }[];
  /** What Almanac cannot show exactly as the source did. */
  notes: string[];
  /** The record to store, but for id, translation group and image; its lineage is the source's earlier one. */
  record: Omit<R, 'id' | 'translationGroup'>;
}

/** A category or tag as Almanac would store it, with the ids of its translations on the source. */
export type SourceTerm = Pick<TermRecord, 'id' | 'taxonomy' | 'name' | 'slug' | 'description' | 'parentId' | 'lang'> & { siblings: number[] };

// ---- fields ----------------------------------------------------------------------------------------------------

function text(w: Wire, key: string, fallback?: string): string {
  const value = w[key];
  if (typeof value === 'string') return value;
  if (value === undefined && fallback !== undefined) return fallback;
  throw new WireError(`${key} is not a string`);
}

function flag(w: Wire, key: string, fallback: boolean): boolean {
  const value = w[key];
  if (typeof value === 'boolean') return value;
  if (value === undefined) return fallback;
  throw new WireError(`${key} is not true or false`);
}

function positive(value: unknown, key: string): number {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw new WireError(`${key} is not an id`);
  return n;
}

/** `YYYY-MM-DD HH:MM:SS` naming a real calendar day and time (checked without a date library: it runs per field). */
function isWireDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/.exec(value);
  if (!m) return false;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const at = new Date(0);
  at.setUTCFullYear(y, mo - 1, d);
  return at.getUTCFullYear() === y && at.getUTCMonth() === mo - 1 && at.getUTCDate() === d && y >= 1 && h < 24 && mi < 60 && s < 60;
}

function wireDate(w: Wire, key: string): string {
  const value = text(w, key);
  if (value !== UNDATED && !isWireDate(value)) throw new WireError(`${key} is not a date`);
  return value;
}

/** The record's id: a positive integer, or null. */
export function idOf(w: Wire): number | null {
  return typeof w.id === 'number' && Number.isSafeInteger(w.id) && w.id > 0 ? w.id : null;
}

function langOf(w: Wire, passLang: Lang): Lang {
  if (w.lang === undefined) return passLang;
  if (typeof w.lang === 'string' && (LANGS as string[]).includes(w.lang)) return w.lang as Lang;
  throw new WireError(`its language ${JSON.stringify(w.lang)} is not one of ${LANGS.join(', ')}`);
}

function siblingsOf(w: Wire, id: number): number[] {
  if (w.translations === undefined || Array.isArray(w.translations)) return [];
  if (!w.translations || typeof w.translations !== 'object') throw new WireError('translations is not an object');
  return Object.values(w.translations as Record<string, unknown>).map((v) => positive(v, 'translations')).filter((v) => v !== id);
}

/**
 * A publication or modification date: UTC as sent, and local in this site's timezone (a WordPress draft that never
 * got a date shows 0000-00-00 in UTC: its local date is then read here).
 */
function siteDates(w: Wire, local: string, utc: string, zone: Zone): { local: string; utc: string } {
  const sentUtc = wireDate(w, utc);
  if (sentUtc !== UNDATED) return { local: toWire(fromUtcWire(sentUtc).setZone(zone)), utc: sentUtc };
  const sentLocal = wireDate(w, local);
  if (sentLocal === UNDATED) throw new WireError(`${local} is not a date`);
  const at = DateTime.fromFormat(sentLocal, WIRE_FORMAT, { zone });
  return { local: sentLocal, utc: toWire(at.toUTC()) };
}

/** The first candidate that renders exactly as `shown` (`exact`), else the last one. */
function reproducing<T>(shown: string, render: (value: T) => string, candidates: T[]): { value: T; exact: boolean } {
  const found = candidates.find((c) => render(c) === shown);
  return found !== undefined ? { value: found, exact: true } : { value: candidates[candidates.length - 1]!, exact: false };
}

/**
 * The stored form of a title shown as `shown`: un-texturized (`&#038;` → `&`, curly quotes → straight, `&#8211;`
 * → `--`, `&#8230;` → `...`) when that renders back to it, else as shown.
 */
export function storedTitle(shown: string): { value: string; exact: boolean } {
  const plain = shown
    .replace(/&#0?38;/g, '&')
    .replace(/&#822[01];/g, '"')
    .replace(/&#821[67];/g, "'")
    .replace(/&#8211;/g, '--')
    .replace(/&#8230;/g, '...');
  return reproducing(shown, renderTitle, [plain, shown]);
}

/** The stored form of a term name shown escaped (`Food &amp; Drink` → `Food & Drink`). */
export function storedTermName(shown: string): string {
  const plain = shown.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  return reproducing(shown, escapeTermName, [plain, shown]).value;
}

/**
 * Cost strings that format as the source showed them: its `cost` and `cost_details.values` (and the currency, stored
 * as the source stored it). The values themselves when they reproduce both, else the shown cost, else the values.
 */
export function storedCosts(cost: string, values: string[], currency: CostCurrency): { value: string[]; exact: boolean } {
  const shown = JSON.stringify([cost, values]);
  const render = (costs: string[]) => JSON.stringify([formatCost(costs, currency), costValues(costs)]);
  return reproducing(shown, render, [values, cost ? [cost] : [], values]);
}

// ---- records ---------------------------------------------------------------------------------------------------

/**
 * Whether the source blanked a password-protected record (behaviour.md §11): its fields and its password are not
 * readable through the API, so it cannot be copied.
 */
export function isBlanked(type: PostType, w: Wire): boolean {
  if (typeof w[NAME_KEY[type]] !== 'string') return true;
  if (type === 'event') return w.all_day === null;
  if (type === 'venue') return w.show_map === null || w.show_map_link === null;
  // an organizer drops its empty fields, so a blanked one shows a field emptied, or `image: false`
  return ['description', 'excerpt', 'website', 'email', 'phone'].some((k) => w[k] === '') || w.image === false;
}

function imageOf(w: Wire): MediaRecord | null {
  const image = w.image;
  if (image === undefined || image === false || image === null || (Array.isArray(image) && image.length === 0)) return null;
  if (typeof image !== 'object') throw new WireError('image is not an image');
  const i = image as Wire;
  const url = webUrl(text(i, 'url'));
  if (url === null) throw new WireError('image has no URL');
  return { id: positive(i.id, 'image.id'), url, extension: text(i, 'extension', ''), width: pixels(i.width), height: pixels(i.height), filesize: pixels(i.filesize), sizes: sizesOf(i.sizes) };
}

/** A width, height or file size as the answers show one (a whole number, 0 or more), or null. */
const pixels = (value: unknown): number | null => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null);

/**
 * The generated sizes of a source's image, as the answers show them (spec: ImageSize): each with the URL of its file,
 * normalised as an image's own (`webUrl`), and of the rest only what has the right kind; a size without a usable URL
 * is left out, and so are sizes when none is left.
 */
function sizesOf(value: unknown): Record<string, unknown> | null {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return null;
  const sizes: Record<string, unknown> = {};
  for (const [name, size] of Object.entries(value as Wire)) {
    if (!size || typeof size !== 'object' || Array.isArray(size)) continue;
    const s = size as Wire;
    const url = typeof s.url === 'string' ? webUrl(s.url) : null;
    if (url === null) continue;
    const kept: Wire = {};
    for (const key of ['width', 'height', 'filesize'] as const) if (pixels(s[key]) !== null) kept[key] = s[key];
    if (typeof s['mime-type'] === 'string') kept['mime-type'] = s['mime-type'];
    sizes[name] = { ...kept, url };
  }
  return Object.keys(sizes).length > 0 ? sizes : null;
}

function base(type: PostType, w: Wire, passLang: Lang, zone: Zone, notes: string[]): { id: number; globalId: string; record: Omit<PostBase, 'id' | 'translationGroup'> } {
  const id = idOf(w);
  if (id === null) throw new WireError('id is not an id');
  const globalId = text(w, 'global_id');
  const lineage = w.global_id_lineage === undefined ? [] : w.global_id_lineage;
  if (!Array.isArray(lineage) || lineage.some((g) => typeof g !== 'string')) throw new WireError('global_id_lineage is not a list of ids');
  const status = text(w, 'status') as PostStatus;
  if (!POST_STATUSES.includes(status)) throw new WireError(`status ${JSON.stringify(status)} is not one Almanac keeps`);
  const date = siteDates(w, 'date', 'date_utc', zone);
  const modified = siteDates(w, 'modified', 'modified_utc', zone);
  const content = text(w, 'description', '');
  const excerpt = text(w, 'excerpt', '');
  for (const [key, shown] of [['description', content], ['excerpt', excerpt]] as const) {
    if (autop(shown).trim() !== shown) notes.push(`its ${key} will be shown with paragraphs added`);
  }
  const title = storedTitle(text(w, NAME_KEY[type]));
  if (!title.exact) notes.push(`its ${NAME_KEY[type]} will be shown formatted slightly differently`);
  return {
    id,
    globalId,
    record: {
      type,
      authorId: positive(w.author ?? '0', 'author'),
      status,
      statusBeforeTrash: null,
      slug: text(w, 'slug'),
      title: title.value,
      content,
      excerpt,
      password: '',
      dateLocal: date.local,
      dateUtc: date.utc,
      // a draft or pending record the site shows undated (`0000-00-00 00:00:00`) stays undated
      dateFloating: mayFloat(status) && wireDate(w, 'date_utc') === UNDATED,
      modifiedLocal: modified.local,
      modifiedUtc: modified.utc,
      lang: langOf(w, passLang),
      parentId: 0,
      imageId: 0,
      // what the source keeps after its own id: ids the record had on other sites before
      globalIdLineage: (lineage as string[]).filter((g) => g !== globalId),
    },
  };
}

/** The plain fields (db/fields.ts) of a record of the source; a number of another kind, or none, is null. */
function plainFromWire<T extends PostType>(type: T, w: Wire): PlainDetails<T> {
  const out: Record<string, unknown> = {};
  for (const [key, field] of plainFields(type)) {
    if (field.kind === 'flag') out[field.key] = flag(w, key, field.imported ?? field.default);
    else if (field.kind === 'number') out[field.key] = typeof w[key] === 'number' ? w[key] : null;
    else out[field.key] = text(w, key, '');
  }
  return out as PlainDetails<T>;
}

/** An event, venue or organizer of the source, as Almanac would store it. */
export function postFromWire(type: PostType, w: Wire, passLang: Lang, zone: Zone): SourcePost {
  const notes: string[] = [];
  const { id, globalId, record } = base(type, w, passLang, zone, notes);
  const common = { id, globalId, siblings: siblingsOf(w, id), image: imageOf(w), notes };
  if (type === 'venue') return { ...common, linked: [], record: { ...record, type, ...plainFromWire(type, w) } };
  if (type === 'organizer') return { ...common, linked: [], record: { ...record, type, ...plainFromWire(type, w) } };

  const details = w.cost_details && typeof w.cost_details === 'object' ? (w.cost_details as Wire) : {};
  const position = text(details, 'currency_position', '');
  if (position !== '' && position !== 'prefix' && position !== 'postfix') throw new WireError('cost_details.currency_position is not prefix or postfix');
  const currency: CostCurrency = { symbol: text(details, 'currency_symbol', ''), position };
  const values = Array.isArray(details.values) ? details.values.filter((v): v is string => typeof v === 'string') : [];
  const linkedOf = (item: unknown, linkType: 'venue' | 'organizer') => {
    const o = item as Wire;
    return { type: linkType, id: positive(o?.id, linkType), globalId: typeof o?.global_id === 'string' ? o.global_id : null };
  };
  // the plugin shows one venue as an object, none as []; a site with several (customised) as a list
  const venues = Array.isArray(w.venue) ? w.venue : w.venue && typeof w.venue === 'object' ? [w.venue] : [];
  const organizers = Array.isArray(w.organizer) ? w.organizer : [];
  if (venues.length > 1) notes.push(`it has ${venues.length} venues: Almanac keeps the first`);
  const linked = [...venues.slice(0, 1).map((v) => linkedOf(v, 'venue')), ...organizers.map((o) => linkedOf(o, 'organizer'))];
  const costs = storedCosts(text(w, 'cost', ''), values, currency);
  if (!costs.exact) notes.push('its cost will be shown formatted differently');
  if (w.custom_fields && typeof w.custom_fields === 'object' && !Array.isArray(w.custom_fields) && Object.keys(w.custom_fields).length > 0) {
    notes.push('its additional fields (custom_fields) are not kept: Almanac has none');
  }
  const terms = [...(Array.isArray(w.categories) ? w.categories : []), ...(Array.isArray(w.tags) ? w.tags : [])].map((t) => positive((t as Wire)?.id, 'categories'));
  const website = unescapeHtml(text(w, 'website', '')); // shown HTML-escaped
  const event: Omit<EventRecord, 'id' | 'translationGroup'> = {
    ...record,
    type,
    startLocal: wireDate(w, 'start_date'),
    endLocal: wireDate(w, 'end_date'),
    startUtc: wireDate(w, 'utc_start_date'),
    endUtc: wireDate(w, 'utc_end_date'),
    timezone: text(w, 'timezone', ''),
    allDay: flag(w, 'all_day', false),
    costs: costs.value,
    currencySymbol: currency.symbol,
    currencyPosition: currency.position,
    currencyCode: text(details, 'currency_code', ''),
    // an event without a website of its own shows its permalink: here it shows Almanac's
    website: website === w.url ? null : website,
    ...plainFromWire(type, w),
    venueId: linked.find((l) => l.type === 'venue')?.id ?? 0,
    organizerIds: linked.filter((l) => l.type === 'organizer').map((l) => l.id),
    termIds: [...new Set(terms)],
  };
  return { ...common, linked, record: event };
}

/** A category or tag of the source, as Almanac would store it. */
export function termFromWire(taxonomy: Taxonomy, w: Wire, passLang: Lang): SourceTerm {
  const id = idOf(w);
  if (id === null) throw new WireError('id is not an id');
  return {
    id,
    taxonomy,
    name: storedTermName(text(w, 'name')),
    slug: text(w, 'slug'),
    description: text(w, 'description', ''),
    parentId: taxonomy === 'category' ? positive(w.parent ?? 0, 'parent') : 0,
    lang: langOf(w, passLang),
    siblings: siblingsOf(w, id),
  };
}
