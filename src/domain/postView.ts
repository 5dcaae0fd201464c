import type { components } from '../../generated/api.js';
import { viewLinksQuery, type Repositories, type ViewLinks } from '../db/engine.js';
import type { EventRecord, MediaRecord, OrganizerRecord, PostRecord, PostType, TermRecord, VenueRecord } from '../db/records.js';
import type { Lang, RequestState } from './context.js';
import { costValues, formatCost, jsonLdPrice } from './cost.js';
import { UNDATED } from './dates.js';
import { isoWithOffset, timezoneAbbreviation, utcDayStart } from './eventTimes.js';
import { autop, jsonLdText, renderTitle } from './html.js';
import { BLANKED, effectiveStatus, mayChange, mayRead, unlocks } from './postRules.js';
import { embeddedTerm } from './termView.js';
import { escapeHtml } from './text.js';
import { DETAIL_FIELDS, plainFields } from '../db/fields.js';

type Schemas = components['schemas'];
type Wire = Record<string, unknown>;

export interface ViewOptions {
  /** The single representation (GET by id or slug): `json_ld` on the event and its embedded records. */
  single: boolean;
  /** The `password` the request carries: unlocks password-protected records it matches. */
  password?: string;
  /**
   * The caller's edit context (`context=edit`, and every answer to a write): records the caller may edit are never
   * blanked, embedded ones included (DESIGN §5 #10).
   */
  edit?: boolean;
}

/** Statuses whose permalink names the id, not the slug (see `permalink`). */
const BY_ID_STATUSES = new Set(['draft', 'pending', 'future', 'trash']);

const PERMALINK_BASE: Record<PostType, { path: string; postType: string }> = {
  event: { path: 'event', postType: 'tribe_events' },
  venue: { path: 'venue', postType: 'tribe_venue' },
  organizer: { path: 'organizer', postType: 'tribe_organizer' },
};

/** A password-protected record as a caller who has not opened it sees it: the fields it hides get their blank values. */
function blank(type: PostType, wire: Wire): Wire {
  for (const [key, value] of Object.entries(BLANKED[type])) if (wire[key] !== undefined) wire[key] = typeof value === 'object' && value !== null ? structuredClone(value) : value;
  wire.json_ld = undefined;
  return wire;
}

/**
 * A function returning a new object with `keys` in that order, each undefined until the view sets it (JSON leaves
 * undefined keys out, so a key never set is not in the answer). V8 keeps an object made from one literal in its fast
 * form while its keys are set; one that gains more than a dozen keys one at a time (computed keys, Object.assign)
 * becomes a dictionary, slower to fill and to serialise: an event, its venue and its organizers were dictionaries.
 */
function shape(keys: readonly string[]): () => Wire {
  const literal = [...new Set(keys)].map((key) => `${JSON.stringify(key)}: undefined`).join(', ');
  return new Function(`return {${literal}};`) as () => Wire;
}

/**
 * The keys of a type's table (db/fields.ts) set on `wire` in the table's order: plain fields with the record's value,
 * the others (built by the view) as placeholders that keep their place when the view sets them.
 */
function plainWire(type: PostType, record: object, wire: Wire): Wire {
  for (const key of WIRE_KEYS[type]) wire[key] = undefined;
  for (const [key, field] of plainFields(type)) wire[key] = (record as Record<string, unknown>)[field.key];
  return wire;
}
const WIRE_KEYS = { event: Object.keys(DETAIL_FIELDS.event), venue: Object.keys(DETAIL_FIELDS.venue), organizer: Object.keys(DETAIL_FIELDS.organizer) };
/** The keys every record starts with (`PostView.common`): an event's global ids come after its id, and it adds `rest_url`. */
const COMMON_KEYS = {
  event: ['id', 'global_id', 'global_id_lineage', 'author', 'status', 'date', 'date_utc', 'modified', 'modified_utc', 'url', 'rest_url'],
  linked: ['id', 'author', 'status', 'date', 'date_utc', 'modified', 'modified_utc', 'url'],
};
/** The keys of each type's answer in order: the common ones, the view's own, the table's, then those set last. */
const SHAPES = {
  event: shape([
    ...COMMON_KEYS.event, 'title', 'description', 'excerpt', 'slug', 'image', 'all_day', 'start_date', 'start_date_details', 'end_date',
    'end_date_details', 'utc_start_date', 'utc_start_date_details', 'utc_end_date', 'utc_end_date_details', 'timezone', 'timezone_abbr',
    'cost', 'cost_details', ...WIRE_KEYS.event, 'json_ld',
  ]),
  venue: linkedShape('venue'),
  organizer: linkedShape('organizer'),
};
function linkedShape(type: 'venue' | 'organizer'): () => Wire {
  return shape([...COMMON_KEYS.linked, type, 'description', 'excerpt', 'slug', 'image', ...WIRE_KEYS[type], 'global_id', 'global_id_lineage', 'lang', 'translations']);
}
/** The flags of venues and organizers, which their records show even when false (unlike their other empty fields). */
const FLAG_KEYS = { venue: flagKeys('venue'), organizer: flagKeys('organizer') };
function flagKeys(type: PostType): string[] {
  return plainFields(type).filter(([, field]) => field.kind === 'flag').map(([key]) => key);
}

/** What `a.localeCompare(b, 'en', { sensitivity: 'base' })` compares with, made once instead of per comparison. */
const BY_NAME = new Intl.Collator('en', { sensitivity: 'base' });

/** The parts of a `YYYY-MM-DD HH:MM:SS` time, as strings (cut at fixed places when it has that shape, as stored times do). */
export const details = (wire: string) => {
  if (wire.length === 19 && wire[4] === '-' && wire[7] === '-' && wire[10] === ' ' && wire[13] === ':' && wire[16] === ':') {
    return { year: wire.slice(0, 4), month: wire.slice(5, 7), day: wire.slice(8, 10), hour: wire.slice(11, 13), minutes: wire.slice(14, 16), seconds: wire.slice(17, 19) };
  }
  const [date, time] = wire.split(' ') as [string, string];
  const [year, month, day] = date.split('-') as [string, string, string];
  const [hour, minutes, seconds] = time.split(':') as [string, string, string];
  return { year, month, day, hour, minutes, seconds };
};

const isEmpty = (value: unknown) =>
  value === '' || value === '0' || value === 0 || value === false || value === null || value === undefined || (Array.isArray(value) && value.length === 0);

/**
 * `wire` without the empty values a venue or organizer record never shows (`""`, `"0"`, `0`, `false`, `[]`, null)
 * unless `keep` names them: they are made undefined, not deleted (an object that lost keys becomes a dictionary).
 */
function withoutEmpty(wire: Wire, keep: ReadonlySet<string>): Wire {
  for (const key in wire) if (!keep.has(key) && isEmpty(wire[key])) wire[key] = undefined;
  return wire;
}

/** What a venue or organizer shows even when empty: its name, slug and global ids, and its flags (even when false). */
const KEEP_EMPTY = {
  venue: new Set(['venue', 'slug', 'global_id', 'global_id_lineage', ...FLAG_KEYS.venue]),
  organizer: new Set(['organizer', 'slug', 'global_id', 'global_id_lineage', ...FLAG_KEYS.organizer]),
};

/**
 * Builds the wire records of events, venues and organizers for one request. Linked records, terms, images and
 * translations are read in one call per page (PostsRepository.viewLinks), so a page costs the same queries whatever
 * its size.
 */
export class PostView {
  /** The venues and organizers events named, as stored (before any translation stands in), for `Last-Modified`. */
  private readonly linkedAsStored: (VenueRecord | OrganizerRecord)[] = [];
  /** `{host}{path}?id=` of the site, worked out once per view. */
  private globalIdBase: string | undefined;

  constructor(
    private readonly repos: Pick<Repositories, 'posts' | 'terms' | 'media'>,
    private readonly state: RequestState,
    private readonly nowUtc: string,
  ) {}

  /** The venues and organizers the events of this view named, as stored. */
  linkedRead(): readonly (VenueRecord | OrganizerRecord)[] {
    return this.linkedAsStored;
  }

  /** `read`: what `viewLinks` answers for these records, when it was read with them (PostsRepository.findWithLinks). */
  async events(records: EventRecord[], options: ViewOptions, read?: ViewLinks): Promise<Schemas['Event'][]> {
    const asked = viewLinksQuery(records, this.state.lang);
    const links = read ?? (await this.repos.posts.viewLinks(asked));
    const venues = this.localised(links.venues, asked.venueIds, links);
    const organizers = this.localised(links.organizers, asked.organizerIds, links);
    const terms = this.localisedTerms(asked.termIds, links);
    return records.map((event) => {
      const venue = venues.get(event.venueId);
      const embeddedVenue = venue && mayRead(this.state.user, venue, this.nowUtc) ? this.linked(venue, options, links) : null;
      const embeddedOrganizers = event.organizerIds
        .map((id) => organizers.get(id))
        .filter((o): o is OrganizerRecord => Boolean(o && mayRead(this.state.user, o, this.nowUtc)))
        .map((o) => this.linked(o, options, links));
      const eventTerms = event.termIds.map((id) => terms.get(id)).filter((t) => t !== undefined).sort((a, b) => BY_NAME.compare(a.name, b.name) || a.id - b.id);
      // Object.assign onto the fresh head, not a spread into a literal: V8 builds spread-then-literal objects far slower
      const wire: Wire = Object.assign(this.common(event, SHAPES.event()), {
        title: renderTitle(event.title),
        description: autop(event.content).trim(),
        excerpt: autop(event.excerpt).trim(),
        slug: event.slug,
        image: this.image(event, links.media) ?? false,
        all_day: event.allDay,
        start_date: event.startLocal,
        start_date_details: details(event.startLocal),
        end_date: event.endLocal,
        end_date_details: details(event.endLocal),
        utc_start_date: event.startUtc,
        utc_start_date_details: details(event.startUtc),
        utc_end_date: event.endUtc,
        utc_end_date_details: details(event.endUtc),
        timezone: event.timezone,
        timezone_abbr: timezoneAbbreviation(event.timezone, event.startLocal),
        cost: formatCost(event.costs, { symbol: event.currencySymbol, position: event.currencyPosition }),
        cost_details: { currency_symbol: event.currencySymbol, currency_code: event.currencyCode, currency_position: event.currencyPosition, values: costValues(event.costs) },
      });
      // the plain fields in the table's order, then the keys they hold the place of
      Object.assign(plainWire('event', event, wire), {
        website: escapeHtml(event.website ?? this.permalink(event)),
        categories: eventTerms.filter((t) => t.taxonomy === 'category').map((t) => embeddedTerm(t, this.state)),
        tags: eventTerms.filter((t) => t.taxonomy === 'tag').map((t) => embeddedTerm(t, this.state)),
        venue: embeddedVenue ?? [],
        organizer: embeddedOrganizers,
        custom_fields: [],
        lang: event.lang,
        translations: this.translationsOf(event, links),
      });
      const open = this.isOpen(event, options);
      if (options.single && open) wire.json_ld = this.eventJsonLd(event, wire, embeddedVenue, embeddedOrganizers[0] ?? null);
      return (open ? wire : blank('event', wire)) as Schemas['Event'];
    });
  }

  async venues(records: VenueRecord[], options: ViewOptions, read?: ViewLinks): Promise<Schemas['Venue'][]> {
    const links = read ?? (await this.links(records));
    return records.map((v) => this.linked(v, options, links) as Schemas['Venue']);
  }

  async organizers(records: OrganizerRecord[], options: ViewOptions, read?: ViewLinks): Promise<Schemas['Organizer'][]> {
    const links = read ?? (await this.links(records));
    return records.map((o) => this.linked(o, options, links) as Schemas['Organizer']);
  }

  /** A venue or organizer record (its own or embedded in an event). */
  private linked(record: VenueRecord | OrganizerRecord, options: ViewOptions, links: ViewLinks): Wire {
    const head = this.common(record, SHAPES[record.type]());
    const global_id = this.globalId(record.id);
    const global_id_lineage = [global_id, ...record.globalIdLineage];
    const full: Wire = Object.assign(head, {
      [record.type]: renderTitle(record.title),
      description: autop(record.content).trim(),
      excerpt: autop(record.excerpt).trim(),
      slug: record.slug,
      image: this.image(record, links.media),
    });
    plainWire(record.type, record, full);
    if (record.type === 'venue') {
      // coordinates are shown only when both are set and not both zero
      const located = record.geoLat !== null && record.geoLng !== null && (record.geoLat !== 0 || record.geoLng !== 0);
      Object.assign(full, { geo_lat: located ? record.geoLat : null, geo_lng: located ? record.geoLng : null, json_ld: options.single ? this.placeJsonLd(record, links.media) : null });
    } else {
      full.json_ld = options.single ? this.personJsonLd(record, links.media) : null;
    }
    Object.assign(full, { global_id, global_id_lineage });
    const wire = withoutEmpty(full, KEEP_EMPTY[record.type]);
    wire.lang = record.lang;
    wire.translations = this.translationsOf(record, links);
    return this.isOpen(record, options) ? wire : blank(record.type, wire);
  }

  /** The keys every record starts with (`COMMON_KEYS`), set on `wire` (made by its type's shape). */
  private common(record: PostRecord, wire: Wire): Wire {
    wire.id = record.id;
    if (record.type === 'event') {
      const globalId = this.globalId(record.id);
      Object.assign(wire, { global_id: globalId, global_id_lineage: [globalId, ...record.globalIdLineage] });
    }
    Object.assign(wire, {
      author: String(record.authorId),
      status: effectiveStatus(record, this.nowUtc),
      date: record.dateLocal,
      date_utc: record.dateFloating ? UNDATED : record.dateUtc,
      modified: record.modifiedLocal,
      modified_utc: record.modifiedUtc,
      url: this.permalink(record),
    });
    if (record.type === 'event') wire.rest_url = `${this.state.restBase}/events/${record.id}`;
    return wire;
  }

  private isOpen(record: PostRecord, options: ViewOptions): boolean {
    if (unlocks(record, options.password)) return true;
    return Boolean(options.edit && mayChange('edit', this.state.user, record));
  }

  /** `{host}{path}?id=N` of the site, scheme and port dropped. */
  private globalId(id: number): string {
    if (this.globalIdBase === undefined) {
      const site = new URL(this.state.site);
      this.globalIdBase = `${site.hostname}${site.pathname.replace(/\/$/, '')}?id=`;
    }
    return `${this.globalIdBase}${id}`;
  }

  /**
   * WordPress's permalink of a post of its own type (`get_post_permalink`): by id while the record is not public yet
   * (draft, pending, or scheduled and not yet due) or trashed, though Almanac gives drafts slugs; by slug otherwise.
   */
  private permalink(record: PostRecord): string {
    const base = PERMALINK_BASE[record.type];
    if (BY_ID_STATUSES.has(effectiveStatus(record, this.nowUtc))) return `${this.state.site}/?post_type=${base.postType}&p=${record.id}`;
    return `${this.state.site}${this.state.linkPrefix}/${base.path}/${record.slug}/`;
  }

  /** The record's translation group as the caller may read it; the record itself always (it is being shown). */
  private translationsOf(record: PostRecord, links: ViewLinks): Partial<Record<Lang, number>> {
    const group = this.readableGroup(links, record.type, record.translationGroup);
    return group?.[record.lang] === record.id ? group : Object.assign({}, group, { [record.lang]: record.id });
  }

  /**
   * `{lang: id}` of a translation group, only the records the caller may read, so a draft or private translation
   * shows neither its id nor that it exists.
   */
  private readableGroup(links: ViewLinks, type: PostType, group: number): Partial<Record<Lang, number>> | undefined {
    const members = links.members[type].get(group);
    if (!members) return undefined;
    const langs: Partial<Record<Lang, number>> = {};
    for (const member of members) if (mayRead(this.state.user, member, this.nowUtc)) langs[member.lang] = member.id;
    return langs;
  }

  /** Reads at once what the records shown need besides themselves (see PostsRepository.viewLinks). */
  private links(records: PostRecord[]): Promise<ViewLinks> {
    return this.repos.posts.viewLinks(viewLinksQuery(records, this.state.lang));
  }

  /**
   * Linked records by id (those that exist), each replaced by its translation in the request's language when one
   * exists and the caller may read it; else the linked record itself is shown.
   */
  private localised<R extends VenueRecord | OrganizerRecord>(read: Map<number, R>, ids: number[], links: ViewLinks): Map<number, R> {
    const found = new Map<number, R>();
    for (const id of ids) {
      const record = read.get(id);
      if (!record || found.has(id)) continue;
      this.linkedAsStored.push(record);
      const translated = this.readableGroup(links, record.type, record.translationGroup)?.[this.state.lang];
      const standIn = translated !== undefined && translated !== id ? read.get(translated) : undefined;
      found.set(id, standIn && standIn.status !== 'trash' && mayRead(this.state.user, standIn, this.nowUtc) ? standIn : record);
    }
    return found;
  }

  /** Terms by id (those that exist), each replaced by its translation in the request's language when one exists. */
  private localisedTerms(ids: number[], links: ViewLinks): Map<number, TermRecord> {
    const inLang = new Map<string, TermRecord>();
    for (const term of links.terms.values()) if (term.lang === this.state.lang) inLang.set(`${term.taxonomy} ${term.translationGroup}`, term);
    const found = new Map<number, TermRecord>();
    for (const id of ids) {
      const term = links.terms.get(id);
      if (term) found.set(id, inLang.get(`${term.taxonomy} ${term.translationGroup}`) ?? term);
    }
    return found;
  }

  private image(record: PostRecord, images: Images): Schemas['Image'] | null {
    const media = record.imageId ? images.get(record.imageId) : undefined;
    if (!media) return null;
    const image: Schemas['Image'] = { url: media.url, id: media.id, extension: media.extension };
    if (media.width !== null) image.width = media.width;
    if (media.height !== null) image.height = media.height;
    if (media.filesize !== null) image.filesize = media.filesize;
    if (media.sizes) image.sizes = media.sizes as Schemas['Image']['sizes'];
    return image;
  }

  private eventJsonLd(event: EventRecord, wire: Wire, venue: Wire | null, organizer: Wire | null): Schemas['EventJsonLd'] {
    const url = this.permalink(event);
    const ld: Wire = {
      '@context': 'http://schema.org',
      '@type': 'Event',
      name: jsonLdText(wire.title as string),
      description: jsonLdText(event.excerpt ? autop(event.excerpt) : autop(event.content)),
    };
    const image = wire.image as Schemas['Image'] | false;
    if (image) ld.image = image.url;
    Object.assign(ld, {
      url,
      eventAttendanceMode: 'https://schema.org/OfflineEventAttendanceMode',
      eventStatus: 'https://schema.org/EventScheduled',
      startDate: isoWithOffset(event.startLocal, event.timezone),
      endDate: isoWithOffset(event.endLocal, event.timezone),
    });
    if (venue?.json_ld) ld.location = venue.json_ld;
    if (organizer?.json_ld) ld.organizer = organizer.json_ld;
    const price = jsonLdPrice(event.costs);
    if (price !== '') {
      ld.offers = {
        '@type': 'Offer',
        price,
        priceCurrency: event.currencyCode || 'USD',
        url,
        category: 'primary',
        availability: 'inStock',
        validFrom: utcDayStart(event.dateUtc),
      };
    }
    ld.performer = 'Organization';
    return ld as Schemas['EventJsonLd'];
  }

  private placeJsonLd(venue: VenueRecord, images: Images): Wire {
    const address: Wire = { '@type': 'PostalAddress' };
    const parts: [string, string][] = [['streetAddress', venue.address], ['addressLocality', venue.city], ['addressRegion', venue.stateprovince || venue.state || venue.province], ['postalCode', venue.zip], ['addressCountry', venue.country]];
    for (const [key, value] of parts) if (value) address[key] = value;
    const ld: Wire = { '@type': 'Place', name: jsonLdText(renderTitle(venue.title)), description: jsonLdText(autop(venue.content)) };
    const image = this.image(venue, images);
    if (image) ld.image = image.url;
    ld.url = '';
    ld.address = address;
    if (venue.geoLat !== null && venue.geoLng !== null) ld.geo = { '@type': 'GeoCoordinates', latitude: venue.geoLat, longitude: venue.geoLng };
    Object.assign(ld, { telephone: venue.phone, sameAs: venue.website });
    return ld;
  }

  private personJsonLd(organizer: OrganizerRecord, images: Images): Wire {
    const ld: Wire = { '@type': 'Person', name: jsonLdText(renderTitle(organizer.title)), description: jsonLdText(autop(organizer.content)) };
    const image = this.image(organizer, images);
    if (image) ld.image = image.url;
    Object.assign(ld, { url: organizer.website, telephone: organizer.phone, email: organizer.email, sameAs: organizer.website });
    return ld;
  }
}

type Images = Map<number, MediaRecord>;
