import { FixedOffsetZone } from 'luxon';
import type { components } from '../../generated/api.js';
import type { Config } from '../config.js';
import type { Engine, Repositories } from '../db/engine.js';
import { POST_STATUSES, type EventListQuery, type EventRecord, type ListViewer, type PostStatus, type PostType, type Taxonomy } from '../db/records.js';
import { hasCapabilities } from '../domain/capabilities.js';
import { FEED_DESCRIPTION_MAX, iCalendar, iCalendarOf, renderEvents, type CalendarEntry, type RenderedEvents } from '../domain/calendar.js';
import { parseDateInput, parseZone, toWire } from '../domain/dates.js';
import { plainText, plainTextInTurns } from '../domain/html.js';
import { fromUtcWire } from '../domain/eventTimes.js';
import { depthProblem, feedWindowProblem, linkedSearchProblem, MAX_FEED_EVENTS, MAX_PER_PAGE, searchTermsProblem, totalPastDeepPage } from '../domain/listLimits.js';
import { boundsSteadyUntil, listBounds, type DateParam } from '../domain/listWindow.js';
import { CAPABILITY_TYPE, eventAsFilter, protectedAccess } from '../domain/postRules.js';
import { ApiError, invalidParams } from '../errors.js';
import { pageUrl, queryString } from '../http/links.js';
import { isFilterTrue, isTruthy } from '../http/params.js';
import type { OperationContext, QueryOf } from '../http/operation.js';
import type { RequestState } from '../domain/context.js';
import { isEditContext, PostService } from './posts.js';

const ANY: PostStatus[] = ['publish', 'future', 'draft', 'pending', 'private'];

type Pairs = [string, unknown][];
type OperationParams = { name: string; in: string }[];

/**
 * The envelope of a post list (reference resources.md §6.1, DESIGN §5 #4): `rest_url` is the list base with
 * `page` first and then the effective query; next/previous drop `page` and append it last (none for page 1).
 */
function envelope(key: string, items: unknown[], total: number, page: number, perPage: number, base: string, pairs: Pairs) {
  const totalPages = Math.ceil(total / perPage);
  const rest = queryString(pairs);
  const at = (n: number | null) => `${base}?${[rest, n === null ? '' : `page=${n}`].filter(Boolean).join('&')}`;
  const body: Record<string, unknown> = { [key]: items, rest_url: `${base}?${queryString([['page', page], ...pairs])}` };
  if (page < totalPages) body.next_rest_url = at(page + 1);
  if (page > 1 && page - 1 <= totalPages) body.previous_rest_url = at(page - 1 > 1 ? page - 1 : null);
  body.total = total;
  body.total_pages = totalPages;
  return { body, headers: { 'X-TEC-Total': String(total), 'X-TEC-TotalPages': String(totalPages) } };
}

/** The plugin's parameters first (effective values), then every other parameter the request sent, in spec order. */
function withSent(pairs: Pairs, sent: ReadonlySet<string>, query: Record<string, unknown>, declared: OperationParams): Pairs {
  const done = new Set(['page', 'password', 'xlate_language', 'wpml_language', ...pairs.map(([n]) => n)]);
  const rest = declared.filter((p) => p.in === 'query' && sent.has(p.name) && !done.has(p.name) && query[p.name] !== undefined).map((p): [string, unknown] => [p.name, query[p.name]]);
  return [...pairs, ...rest];
}

/** Statuses a caller may list and who they may see (behaviour.md §5.1, DESIGN §5 #8). */
function visibility(state: RequestState, capType: string, requested: string[] | undefined): { statuses: PostStatus[]; viewer: ListViewer; shown: string | string[] } | null {
  const role = state.user?.role ?? null;
  const mayEdit = hasCapabilities(role, [`edit_${capType}`]);
  if (!mayEdit || !state.user) {
    if (requested && !(requested.length === 1 && requested[0] === 'publish')) return null;
    return { statuses: ['publish'], viewer: { kind: 'public' }, shown: 'publish' };
  }
  // WordPress's other registered statuses (auto-draft, inherit, …) are valid filters that no record has here
  const statuses = requested ? [...new Set(requested.flatMap((s) => (s === 'any' ? ANY : POST_STATUSES.includes(s as PostStatus) ? [s as PostStatus] : [])))] : ANY;
  return {
    statuses,
    viewer: { kind: 'user', userId: state.user.id, seeOthers: hasCapabilities(role, [`edit_others_${capType}`]) },
    shown: requested ?? 'any',
  };
}

/** Event search as WordPress splits it: words, `"quoted phrases"`, and `-word` to exclude. */
function searchTerms(search: string): { include: string[]; exclude: string[] } {
  const include: string[] = [];
  const exclude: string[] = [];
  for (const m of search.matchAll(/"([^"]*)"|(\S+)/g)) {
    const term = (m[1] ?? m[2] ?? '').trim();
    if (!term) continue;
    if (m[2] && term.startsWith('-') && term.length > 1) exclude.push(term.slice(1));
    else include.push(term);
  }
  return { include, exclude };
}

type EventListParams = QueryOf<'listEvents'>;
/** The filters GET /events and the iCalendar feed share. */
type EventFilterParams = QueryOf<'getEventsCalendar'>;
type EventWire = components['schemas']['Event'];
type SyncParams = Pick<EventListParams, 'page' | 'per_page' | 'status' | 'password' | 'context' | 'modified_after' | 'modified_after_id' | 'modified_before'>;

/** What a `modified_after` request may also carry: the view (`status`, `context`), the page size, the language, a password. */
const SYNC_PARAMS = new Set(['page', 'per_page', 'status', 'password', 'context', 'xlate_language', 'wpml_language', 'modified_after', 'modified_after_id', 'modified_before']);
/** How old a change must be before a pass lists it: older than any write still being committed. */
const SETTLE_SECONDS = 2;
const syncRequested = (state: RequestState) => ['modified_after', 'modified_after_id', 'modified_before'].some((name) => state.sent.has(name));
type LinkedListParams = QueryOf<'listVenues'> & QueryOf<'listOrganizers'>;

/** A page of a list as its operation answers it: the envelope and the totals' headers. */
export interface ListAnswer {
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

/**
 * The lists of events, venues and organizers (GET /events, /venues, /organizers: pages, filters, incremental sync)
 * and the iCalendar feeds: who sees which records, what each filter means, how deep a page may be, what the envelope
 * links to. Each runs in one read of the engine.
 */
export class ListService {
  constructor(private readonly engine: Engine, private readonly config: Config) {}

  /** GET /events: a page of the events the filters select, or a page of an incremental sync (`modified_after`). */
  events(c: OperationContext<'listEvents'>, state: RequestState): Promise<ListAnswer> {
    return this.engine.readList(async (repos) => {
      const q = c.request.query as EventListParams;
      if (syncRequested(state)) return changes(repos, this.config, 'event', q, state);
      const page = q.page ?? 1;
      const perPage = Math.min(q.per_page ?? 10, MAX_PER_PAGE);
      const s = new PostService(repos, this.config, state);
      const { query, seen, bounds } = await eventFilters(repos, this.config, q, state, s, { feed: false, password: q.password });
      this.heldWhileTheDatesHold(q, state, s);
      const edit = isEditContext(q);
      if (edit) s.requireEditContextOf('event');
      const offset = (page - 1) * perPage;
      const tooDeep = depthProblem(page, perPage);
      if (tooDeep) {
        await totalPastDeepPage(tooDeep, offset, async () => (await repos.posts.listEvents({ ...query, limit: 1, offset: 0 })).total);
        throw pageNotFound('event');
      }
      const { ids, total } = await repos.posts.listEvents({ ...query, limit: perPage, offset });
      if (page > 1 && ids.length === 0) throw pageNotFound('event');
      const { wire: events } = await s.viewPage('event', ids, { single: false, password: q.password, edit });

      const bound = (p: DateParam) => bounds.find((b) => b.param === p)?.value;
      const pairs: Pairs = [
        ['per_page', perPage], ['start_date', bound('start_date')], ['end_date', bound('end_date')], ['search', q.search],
        ['geoloc', q.geoloc ? 1 : undefined], ['geoloc_lat', q.geoloc_lat], ['geoloc_lng', q.geoloc_lng], ['status', seen.shown],
        ['post_parent', q.post_parent], ['include', q.include], ['starts_before', bound('starts_before')], ['starts_after', bound('starts_after')],
        ['ends_before', bound('ends_before')], ['ends_after', bound('ends_after')], ['ticketed', q.ticketed ? 1 : undefined],
        ['venue', q.venue], ['organizer', q.organizer], ['featured', q.featured ? 1 : undefined],
      ].filter(([, v]) => v !== undefined) as Pairs;
      const all = withSent(pairs, state.sent, q as Record<string, unknown>, c.operation.parameters as OperationParams);
      return envelope('events', events, total, page, perPage, `${state.restBase}/events/`, all);
    }, state.reads);
  }

  /** GET /venues or /organizers. */
  linked(type: 'venue' | 'organizer', c: OperationContext<'listVenues'> | OperationContext<'listOrganizers'>, state: RequestState): Promise<ListAnswer> {
    return this.engine.readList((repos) => linkedPage(repos, this.config, type, c.request.query as LinkedListParams, c.operation.parameters as OperationParams, state), state.reads);
  }

  /** The iCalendar feed of the events a list with the same filters would show (bounded by MAX_FEED_EVENTS). */
  eventsCalendar(c: OperationContext<'getEventsCalendar'>, state: RequestState): Promise<string> {
    return this.engine.readList(async (repos) => {
      const s = new PostService(repos, this.config, state);
      const { query } = await eventFilters(repos, this.config, c.request.query, state, s, { feed: true });
      this.heldWhileTheDatesHold(c.request.query, state, s); // DTSTAMP is each event's last change, not the clock
      const { ids } = await repos.posts.listEvents({ ...query, withoutPassword: true, limit: MAX_FEED_EVENTS, offset: 0 });
      // read and rendered a run at a time, letting the event loop answer others in between (eight descriptions of
      // 3.6 MB at once held it for 4 s)
      const host = new URL(state.site).hostname;
      const parts: RenderedEvents[] = [];
      for await (const run of s.recordRuns('event', ids)) parts.push(renderEvents(await calendarEntries(repos, s, run), host, FEED_DESCRIPTION_MAX));
      return iCalendarOf('Events', parts);
    }, state.reads);
  }

  /**
   * Tells the response cache how long the clock leaves an event list or feed as it is: as long as its dates (see
   * boundsSteadyUntil). Nothing else in it moves with the clock but scheduled records, whose falling due retires
   * every answer.
   */
  private heldWhileTheDatesHold(q: EventFilterParams, state: RequestState, s: PostService): void {
    if (!state.reads) return;
    const steady = boundsSteadyUntil(q, { include: q.include !== undefined, siteTimezone: this.config.siteTimezone, now: s.now });
    if (steady !== null) state.reads.steadyUntil(steady);
  }

  /** The iCalendar file of one event. */
  eventCalendar(c: OperationContext<'getEventCalendar'>, state: RequestState): Promise<string> {
    return this.engine.read(async (repos) => {
      const s = new PostService(repos, this.config, state);
      const event = await s.readableEvent(c.request.params.id, c.request.query.password);
      const entries = await calendarEntries(repos, s, [event], c.request.query.password);
      // its description whole, made text a piece at a time (3.6 MB of `&lt;` at once held the event loop 250 ms)
      entries[0]!.descriptionText = await plainTextInTurns(entries[0]!.event.description);
      return iCalendar(entries, { name: plainText(entries[0]!.event.title), host: new URL(state.site).hostname });
    }, state.reads);
  }
}

/** The calendar entries of events as this caller reads them in a list (a `password` unlocks a protected one). */
async function calendarEntries(repos: Repositories, s: PostService, events: EventRecord[], password?: string): Promise<CalendarEntry[]> {
  const wire = (await s.view(events, { single: false, password })) as EventWire[];
  const revisions = await repos.posts.revisions(events.map((e) => e.id));
  return wire.map((event, i) => ({ event, revision: revisions.get(events[i]!.id) ?? 0 }));
}
/** Term ids of a filter (ids, slugs or names in the request's language); categories include their descendants. */
async function termFilter(repos: Repositories, taxonomy: Taxonomy, refs: (number | string)[] | undefined, state: RequestState): Promise<number[] | null | undefined> {
  if (!refs) return undefined;
  const ids: number[] = [];
  for (const ref of refs) {
    const id = typeof ref === 'number' ? await repos.terms.resolve(taxonomy, state.lang, ref) : await repos.terms.findBySlugOrName(taxonomy, state.lang, ref);
    if (id === null) return null;
    ids.push(id);
  }
  return taxonomy === 'category' ? repos.terms.withDescendants(ids) : ids;
}
/** Venue or organizer ids of a filter, each with its translations; null when one is not of that type. */
async function linkedFilter(repos: Repositories, type: 'venue' | 'organizer', ids: number[] | undefined): Promise<number[] | null | undefined> {
  if (!ids) return undefined;
  const found = await repos.posts.findMany(type, ids);
  if (found.size !== new Set(ids).size) return null;
  const groups = await repos.posts.translations(type, [...found.values()].map((r) => r.translationGroup));
  return [...new Set([...ids, ...[...groups.values()].flatMap((g) => Object.values(g))])];
}

/**
 * The event-list filters of a request, resolved (ids, site-local bounds); invalid ones → 400 naming each. The
 * `password` (lists only) opens the protected records it matches to the filters too.
 */
async function eventFilters(repos: Repositories, config: Config, q: EventFilterParams, state: RequestState, s: PostService, options: { feed: boolean; password?: string }) {
  // what bounds the cost of the list is checked before anything is read
  const problems: Record<string, string> = {};
  const search = q.search !== undefined ? searchTerms(q.search) : undefined;
  const tooManyTerms = search && searchTermsProblem(search);
  if (tooManyTerms) problems.search = tooManyTerms;
  const bounds = listBounds(q, { strict: isFilterTrue(q.strict_dates), include: q.include !== undefined, siteTimezone: config.siteTimezone, now: s.now });
  const tooWide = options.feed ? feedWindowProblem(bounds, q.include !== undefined) : null;
  for (const param of tooWide?.params ?? []) problems[param] = tooWide!.reason;
  if (Object.keys(problems).length > 0) throw invalidParams(problems);

  const seen = visibility(state, CAPABILITY_TYPE.event, q.status);
  if (!seen) problems.status = 'Invalid parameter.';
  const categoryIds = await termFilter(repos, 'category', q.categories, state);
  if (categoryIds === null) problems.categories = 'Invalid parameter.';
  const tagIds = await termFilter(repos, 'tag', q.tags, state);
  if (tagIds === null) problems.tags = 'Invalid parameter.';
  const venueIds = await linkedFilter(repos, 'venue', q.venue);
  if (venueIds === null) problems.venue = 'Invalid parameter.';
  const organizerIds = await linkedFilter(repos, 'organizer', q.organizer);
  if (organizerIds === null) problems.organizer = 'Invalid parameter.';
  if (q.post_parent !== undefined && (await repos.posts.typeOf(q.post_parent)) !== 'event') problems.post_parent = 'Invalid parameter.';
  if (Object.keys(problems).length > 0) throw invalidParams(problems);

  let geo: { lat: number; lng: number; radiusKm: number } | 'any' | undefined;
  if (q.geoloc) {
    if (q.geoloc_lat !== undefined && q.geoloc_lng !== undefined) geo = { lat: q.geoloc_lat, lng: q.geoloc_lng, radiusKm: config.geofenceKm };
    else if (q.geoloc_lat !== undefined || q.geoloc_lng !== undefined) geo = 'any';
  }
  const query: Omit<EventListQuery, 'limit' | 'offset'> = {
    lang: state.lang, nowUtc: s.nowUtc, statuses: seen!.statuses, viewer: seen!.viewer, access: protectedAccess(state.user, options.password), bounds,
    search,
    categoryIds: categoryIds ?? undefined, tagIds: tagIds ?? undefined, venueIds: venueIds ?? undefined, organizerIds: organizerIds ?? undefined,
    featured: q.featured, ticketed: q.ticketed, parentId: q.post_parent, include: q.include, geo,
  };
  return { query, seen: seen!, bounds };
}

/**
 * A `modified_after` page (incremental sync): every change of the type and language after a position, in
 * (`modified_utc`, `id`) order, whole when the caller may read the record and as a tombstone otherwise. Pages are
 * walked by position (`next_rest_url`), never by number, so a record changed during a pass cannot push another
 * off a page; a pass ends at a settled time, so a change still being committed is never skipped.
 */
async function changes(repos: Repositories, config: Config, type: PostType, q: SyncParams, state: RequestState): Promise<ListAnswer> {
  const problems: Record<string, string> = {};
  for (const name of state.sent) {
    if (!SYNC_PARAMS.has(name)) problems[name] = 'Cannot be combined with modified_after: a record that stopped matching it could not be reported.';
  }
  if (q.modified_after === undefined) {
    for (const name of ['modified_after_id', 'modified_before']) if (state.sent.has(name)) problems[name] = 'Only with modified_after.';
  }
  if ((q.page ?? 1) > 1) problems.page = 'Not with modified_after: follow next_rest_url.';
  const seen = visibility(state, CAPABILITY_TYPE[type], q.status);
  if (!seen) problems.status = 'Invalid parameter.';
  if (Object.keys(problems).length > 0) throw invalidParams(problems);

  const s = new PostService(repos, config, state);
  const edit = isEditContext(q);
  if (edit) s.requireEditContextOf(type);
  const utc = (text: string) => toWire(parseDateInput(text, FixedOffsetZone.utcInstance, s.now)!.value.toUTC());
  const settled = toWire(s.now.minus({ seconds: SETTLE_SECONDS }));
  const until = q.modified_before !== undefined && utc(q.modified_before) < settled ? utc(q.modified_before) : settled;
  const after = q.modified_after !== undefined ? utc(q.modified_after) : '';
  // without an id, every change at exactly `modified_after` is excluded
  const afterId = q.modified_after_id ?? Number.MAX_SAFE_INTEGER;
  const perPage = Math.min(q.per_page ?? 10, MAX_PER_PAGE);
  const { changes, total } = await repos.posts.listChanges({
    type, lang: state.lang, nowUtc: s.nowUtc, statuses: seen!.statuses, viewer: seen!.viewer, after, afterId, until, limit: perPage,
  });

  const page = await s.viewPage(type, changes.filter((ch) => ch.readable).map((ch) => ch.id), { single: false, password: q.password, edit });
  const wire = new Map(page.records.map((record, i) => [record.id, page.wire[i]]));
  const siteZone = parseZone(config.siteTimezone)!;
  const items = changes.map((ch) => wire.get(ch.id) ?? {
    id: ch.id,
    status: ch.removed ? 'trash' : 'unavailable',
    modified: ch.changedLocal ?? toWire(fromUtcWire(ch.changedUtc).setZone(siteZone)),
    modified_utc: ch.changedUtc,
  });

  const base = `${state.restBase}/${type}s/`;
  const shown: Pairs = [['per_page', perPage], ['status', seen!.shown]];
  const last = changes.at(-1);
  const body: Record<string, unknown> = {
    [`${type}s`]: items,
    rest_url: pageUrl(base, [...shown, ['modified_after', after], ...(q.modified_after_id !== undefined ? [['modified_after_id', afterId] as [string, unknown]] : []), ['modified_before', until]]),
  };
  if (last && total > changes.length) body.next_rest_url = pageUrl(base, [...shown, ['modified_after', last.changedUtc], ['modified_after_id', last.id], ['modified_before', until]]);
  body.sync_rest_url = pageUrl(base, [...shown, ['modified_after', until]]);
  body.total = total;
  body.total_pages = Math.ceil(total / perPage);
  return { body, headers: { 'X-TEC-Total': String(total), 'X-TEC-TotalPages': String(body.total_pages) } };
}

async function linkedPage(repos: Repositories, config: Config, type: 'venue' | 'organizer', q: LinkedListParams, declared: OperationParams, state: RequestState): Promise<ListAnswer> {
  if (syncRequested(state)) return changes(repos, config, type, q, state);
  const onlyWithUpcoming = q.only_with_upcoming !== undefined && isTruthy(q.only_with_upcoming);
  // only `only_with_upcoming` moves with the clock; scheduled records falling due retire every answer
  if (!onlyWithUpcoming) state.reads?.steadyUntil(Infinity);
  const page = q.page ?? 1;
  const perPage = Math.min(q.per_page ?? 10, MAX_PER_PAGE);
  const problems: Record<string, string> = {};
  const words = q.search?.split(/[^\p{L}\p{N}-]+/u).filter(Boolean);
  const tooManyWords = words && linkedSearchProblem(words);
  if (tooManyWords) problems.search = tooManyWords;
  if (Object.keys(problems).length > 0) throw invalidParams(problems);
  const seen = visibility(state, CAPABILITY_TYPE[type], q.status);
  if (!seen) problems.status = 'Invalid parameter.';
  const s = new PostService(repos, config, state);
  // an event the caller may not read is answered as an unknown one
  const event = q.event === undefined ? null : eventAsFilter(await repos.posts.findOfType('event', q.event), state.user, s.nowUtc, q.password);
  if (q.event !== undefined && !event) problems.event = 'Invalid parameter.';
  if (Object.keys(problems).length > 0) throw invalidParams(problems);

  const edit = isEditContext(q);
  if (edit) s.requireEditContextOf(type);
  const eventSeen = visibility(state, CAPABILITY_TYPE.event, undefined)!;
  const query = {
    type, lang: state.lang, nowUtc: s.nowUtc, nowLocal: toWire(s.now.setZone(parseZone(config.siteTimezone)!)),
    statuses: seen!.statuses, viewer: seen!.viewer, eventViewer: eventSeen.viewer, access: protectedAccess(state.user, q.password),
    words,
    event: event ?? undefined,
    hasEvents: q.has_events !== undefined ? isTruthy(q.has_events) : undefined,
    onlyWithUpcoming,
  };
  const offset = (page - 1) * perPage;
  const tooDeep = depthProblem(page, perPage);
  if (tooDeep) {
    await totalPastDeepPage(tooDeep, offset, async () => (await repos.posts.listLinked({ ...query, limit: 1, offset: 0 })).total);
    throw pageNotFound(type);
  }
  const { ids, total } = await repos.posts.listLinked({ ...query, limit: perPage, offset });
  if (page > 1 && ids.length === 0) throw pageNotFound(type);
  const { wire: items } = await s.viewPage(type, ids, { single: false, password: q.password, edit });
  const pairs = ([['per_page', perPage], ['event', q.event], ['has_events', q.has_events], ['status', seen!.shown]] as Pairs).filter(([, v]) => v !== undefined);
  const { body, headers } = envelope(`${type}s`, items, total, page, perPage, `${state.restBase}/${type}s/`, withSent(pairs, state.sent, q as Record<string, unknown>, declared));
  return { body, headers };
}

/** A page past the end of an event, venue or organizer list, as the plugin answers it. */
const pageNotFound = (type: PostType) => new ApiError(404, `${type}-archive-page-not-found`, `The requested ${type} archive page does not exist`);
