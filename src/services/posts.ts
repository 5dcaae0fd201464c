import { DateTime } from 'luxon';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { components } from '../../generated/api.js';
import type { Config } from '../config.js';
import { tag, type ChangeTracker } from '../db/changes.js';
import type { Engine, Repositories, ViewLinks, WriteOptions } from '../db/engine.js';
import type { EventRecord, NewRecord, OrganizerRecord, PostBase, PostRecord, PostStatus, PostType, RecordOf, Taxonomy, VenueRecord } from '../db/records.js';
import { hasCapabilities } from '../domain/capabilities.js';
import { currencyOf, phpNumberText } from '../domain/cost.js';
import { parseZone, toWire } from '../domain/dates.js';
import { eventTimes, fromUtcWire, publicationDate, TimeInputError } from '../domain/eventTimes.js';
import { cleanAhead } from '../domain/cleanAhead.js';
import { cleanHtml } from '../domain/html.js';
import { CAPABILITY_TYPE, mayChange, mayFloat, mayRead, resolveStatus, unlocks } from '../domain/postRules.js';
import { PostView, type ViewOptions } from '../domain/postView.js';
import { defaultOf, plainFields, type PlainDetails } from '../db/fields.js';
import { TAXONOMY } from '../domain/termView.js';
import { isTruthy } from '../http/params.js';
import { collationKey, sanitizeTextField, slugify, webUrl } from '../domain/text.js';
import { entityTag, httpDate, requireMatch } from '../http/conditional.js';
import { ApiError, forbidden, forbiddenContext, invalidParam, invalidParams } from '../errors.js';
import { allowedMethods } from '../http/routeIndex.js';
import { NAMESPACE_PATH } from '../http/spec.js';
import type { RequestState } from '../domain/context.js';

type Schemas = components['schemas'];
/** Request bodies of the three post types, as the spec defines them (seed §2.2–2.4 plus Almanac's extensions). */
export type EventFields = Schemas['EventFields'];
export type VenueFields = Schemas['VenueFields'];
export type OrganizerFields = Schemas['OrganizerFields'];
/** The fields all three share. */
type CommonFields = Pick<EventFields & VenueFields & OrganizerFields, 'author' | 'date' | 'date_utc' | 'description' | 'status' | 'image' | 'password' | 'translation_of'> & { excerpt?: string; slug?: string };

const NAME_FIELD: Record<PostType, 'title' | 'venue' | 'organizer'> = { event: 'title', venue: 'venue', organizer: 'organizer' };
const NOUN: Record<PostType, string> = { event: 'event', venue: 'venue', organizer: 'organizer' };

/** Characters of descriptions and excerpts read and viewed at most between two turns of the event loop (about 10 ms). */
const TEXT_PER_TURN = 256 * 1024;
/** Records read and viewed at most between two turns (rendering 500 events of a feed at once held the loop for 30 ms). */
const RECORDS_PER_TURN = 100;
/** Records read by the first statement of a page: a default page (10) in one. */
const FIRST_READ = 10;
/** Characters of a record's description and excerpt: what its reading and viewing cost grows with. */
const textOf = (record: PostRecord) => record.content.length + record.excerpt.length;

/** The `password` a request's query carries, for the routes that declare one (an `If-Match` compares with a GET that sends it). */
export const passwordOf = (c: { request: { query: object } }) => (c.request.query as { password?: string }).password;

/** What a read of events, venues and organizers takes besides filters: the record password and the context. */
export type ReadQuery = { password?: string; context?: string };
/** `context=edit`, compared as WordPress does (exactly). */
export const isEditContext = (query: { context?: string }) => query.context === 'edit';

/** The trash suffix WordPress gives a trashed record's slug, freeing the original. */
const TRASHED = '__trashed';

/**
 * The plain fields (db/fields.ts) of a record after a write: what the body sends, read as its kind, else the stored
 * value on an update, else the default of a new record.
 */
function plainWritten<T extends PostType>(type: T, body: object, current: PlainDetails<T> | null): PlainDetails<T> {
  const sent = body as Record<string, unknown>;
  const stored = current as Record<string, unknown> | null;
  const out: Record<string, unknown> = {};
  for (const [wire, field] of plainFields(type)) {
    const value = sent[wire];
    if (value === undefined) out[field.key] = stored ? stored[field.key] : defaultOf(field);
    else if (field.kind === 'text') out[field.key] = sanitizeTextField(value as string);
    else if (field.kind === 'flag') out[field.key] = isTruthy(value);
    else out[field.key] = value;
  }
  return out as PlainDetails<T>;
}

/** Whether an item of `categories` or `tags` names a term by id (else by slug or name). */
const isTermId = (item: number | string): boolean => typeof item === 'number' || /^\d+$/.test(item);

/** What an event's write names by id, read before it takes the write lock (PostUnits.writeEventAndShow): as found. */
export interface KnownReferences {
  /** The taxonomy of each term named. */
  terms: ReadonlyMap<number, Taxonomy>;
  /** The type of each post named (venue, organizers, parent). */
  types: ReadonlyMap<number, PostType>;
}

/**
 * What a write of an event names by id and what never changes about it while it exists: a term's taxonomy, a post's
 * type (ids are never given twice, on either engine). Each is kept as it was found, with the change log's stamp from
 * before it was read, and stands while nothing has changed that term or post since (a change to it, a deletion, a
 * database restored under the process: the change tracker says so), so that a write naming only what this process
 * has met before reads nothing before the write lock: on PostgreSQL, a round trip less for each such write (POST
 * /events with a category: the statements per write were the terms' read, the insert and the answer's read, now the
 * last two). A record deleted on another node since this one last saw it fails the write's link to it, and the write
 * runs again, as when it is deleted between the read and the lock (see `writeEventAndShow`).
 */
class ReferenceKinds {
  private readonly terms = new KeptKinds<Taxonomy>(tag.term);
  private readonly types = new KeptKinds<PostType>(tag.post);

  constructor(private readonly changes: ChangeTracker) {}

  /** What `named` names, those not known here read by `read` (which finds those it can). */
  async of(named: { terms: number[]; posts: number[] }, read: (unseen: { terms: number[]; posts: number[] }) => Promise<KnownReferences>): Promise<KnownReferences> {
    const terms = this.terms.known(named.terms, this.changes);
    const types = this.types.known(named.posts, this.changes);
    const unseen = { terms: named.terms.filter((id) => !terms.has(id)), posts: named.posts.filter((id) => !types.has(id)) };
    if (unseen.terms.length === 0 && unseen.posts.length === 0) return { terms, types };
    const at = this.changes.now;
    const found = await read(unseen);
    this.terms.keep(found.terms, at, terms);
    this.types.keep(found.types, at, types);
    return { terms, types };
  }
}

/** One kind of ReferenceKinds: a value per id, as of a stamp, standing while the id's tag has not changed since. */
class KeptKinds<V> {
  private readonly kept = new Map<number, { value: V; at: number }>();

  constructor(private readonly tagOf: (id: number) => string) {}

  /** Those of `ids` kept and still current. */
  known(ids: number[], changes: ChangeTracker): Map<number, V> {
    const known = new Map<number, V>();
    for (const id of ids) {
      const kept = this.kept.get(id);
      if (kept && changes.isCurrent([this.tagOf(id)], kept.at)) known.set(id, kept.value);
    }
    return known;
  }

  /** Keeps what was read after stamp `at`, and adds it to `into`. */
  keep(found: ReadonlyMap<number, V>, at: number, into: Map<number, V>): void {
    if (this.kept.size > 50_000) this.kept.clear();
    for (const [id, value] of found) {
      this.kept.set(id, { value, at });
      into.set(id, value);
    }
  }
}

/** The items of an event's `organizer`: a list, a CSV of ids, or one item; none for 0, "" or null (and such items). */
function organizerItems(value: unknown): unknown[] {
  if (value === null || value === 0 || value === '') return [];
  const items = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',').map((s) => s.trim()) : [value];
  return items.filter((item) => item !== '' && item !== 0 && item !== null);
}

/** The items of an event's `venue`: a list, or one item; none for 0, "" or null (or when it is not sent). */
function venueItems(value: unknown): unknown[] {
  if (value === undefined || value === null || value === 0 || value === '') return [];
  return Array.isArray(value) ? value : [value];
}

/** The id an item of `venue` or `organizer` names (a number, a numeric string, `{id}`); null for an inline record. */
function linkedIdOf(item: unknown): number | null {
  if (typeof item === 'number') return item;
  if (typeof item === 'string' && /^\d+$/.test(item)) return Number(item);
  if (item && typeof item === 'object' && 'id' in item && item.id !== undefined) return Number((item as { id: unknown }).id);
  return null;
}

/**
 * The terms and posts an event's body names by id, to read before its write: as `termsFor`, `venueOf`,
 * `organizersOf` and `post_parent` read them. Only a shortcut: what is left out here is read under the lock.
 */
function referencesIn(body: EventFields): { terms: number[]; posts: number[] } {
  const posts = [...venueItems(body.venue), ...organizerItems(body.organizer)].map(linkedIdOf);
  const terms = [...(body.categories ?? []), ...(body.tags ?? [])].filter(isTermId).map(Number);
  const ids = (list: (number | null | undefined)[]) => [...new Set(list.filter((id): id is number => Number.isSafeInteger(id) && id! > 0))];
  return { terms: ids(terms), posts: ids([...posts, body.post_parent]) };
}

/**
 * Whether a new event of this body is, under the write lock, nothing but its insert: everything it names by id was
 * found before the lock, and it names nothing looked up or made then (an inline venue or organizer, a term by name,
 * an image, an author, a translation). A guess, for the engine (WriteOptions.insertOnly): a create that does more
 * all the same is run again in turn.
 */
function onlyInserts(body: EventFields, named: { terms: number[]; posts: number[] }, known: KnownReferences | undefined): boolean {
  if (body.translation_of !== undefined || body.author !== undefined || (body.image !== undefined && body.image !== '')) return false;
  if (![...venueItems(body.venue), ...organizerItems(body.organizer ?? null)].every((item) => linkedIdOf(item) !== null)) return false;
  if (![...(body.categories ?? []), ...(body.tags ?? [])].every((item) => item === '' || isTermId(item))) return false;
  return named.terms.every((id) => known?.terms.has(id)) && named.posts.every((id) => known?.types.has(id));
}

/**
 * The units of work of post requests: a PostService for the request inside one engine read, or one write that also
 * builds the answer (the record as the write left it, read in the same transaction) and is acknowledged once durable.
 */
export class PostUnits {
  private readonly kinds: ReferenceKinds;

  constructor(private readonly engine: Engine, private readonly config: Config) {
    this.kinds = new ReferenceKinds(engine.changes);
  }

  read<T>(state: RequestState, work: (s: PostService) => Promise<T>): Promise<T> {
    return this.engine.read((repos) => work(new PostService(repos, this.config, state)), state.reads);
  }

  write<T>(state: RequestState, work: (s: PostService) => Promise<T>, known?: KnownReferences, options?: WriteOptions): Promise<T> {
    return this.engine.write((unit) => work(new PostService(unit, this.config, state, unit.now, known)), options);
  }

  /**
   * `writeAndShow` for a write of an event: what its body names by id (terms, venue, organizers, parent) is read
   * before the write takes the write lock, so that under it the write runs little but its own insert or update. On
   * PostgreSQL every statement under the lock is a round trip that the rest of the batch waits for: `POST /events`
   * with a category went from 598–610 to 672–678 writes/s by hand, with a category, a venue and two organizers from
   * 432–441 to 549–554. A record or term deleted in between fails the write's link to it (a foreign key): the
   * write, undone, runs again, reading them under the lock. What was not found before is looked for again under the
   * lock. A term's taxonomy and a post's type never change: what this process has read of them stands while nothing
   * changes the term or post (ReferenceKinds). `creates`: the write makes a new event, which may then be
   * nothing but its insert under the lock (`onlyInserts`; see WriteOptions.insertOnly). Its large HTML is cleaned
   * first, off the event loop (cleanAhead).
   */
  async writeEventAndShow(state: RequestState, body: EventFields, work: (s: PostService) => Promise<PostRecord>, creates = false): Promise<WrittenAnswer> {
    await cleanAhead(body, hasCapabilities(state.user?.role ?? null, ['unfiltered_html']));
    const named = referencesIn(body);
    const options = (known?: KnownReferences): WriteOptions => ({ insertOnly: creates && onlyInserts(body, named, known) });
    let record: PostRecord;
    if (named.terms.length === 0 && named.posts.length === 0) record = await this.write(state, work, undefined, options());
    else {
      const known = await this.kinds.of(named, (unseen) => this.engine.read(async (repos): Promise<KnownReferences> => {
        const [terms, types] = await Promise.all([repos.terms.taxonomies(unseen.terms), Promise.all(unseen.posts.map((id) => repos.posts.typeOf(id)))]);
        return {
          terms,
          types: new Map(unseen.posts.flatMap((id, i) => (types[i] ? [[id, types[i]] as const] : []))),
        };
      }));
      try {
        record = await this.write(state, work, known, options(known));
      } catch (err) {
        if (!this.engine.missingReference(err)) throw err;
        record = await this.write(state, work);
      }
    }
    return this.read(state, (s) => s.written(record));
  }

  /**
   * A write of one record, then its answer: the record as the write left it, in the edit context (as the plugin
   * answers a write). The write holds the write lock for its own statements only; the answer's links are read once it
   * is committed, in a read of their own, so they may show a later write too, as a GET right after it would. On
   * PostgreSQL the answer's round trip and view held every write of the batch behind them: by hand, POST /events went
   * from 477–492 to 544–576 writes/s (the same on SQLite). `body`: what the write was sent, whose large HTML is
   * cleaned before it, off the event loop (cleanAhead).
   */
  async writeAndShow(state: RequestState, work: (s: PostService) => Promise<PostRecord>, body?: unknown): Promise<WrittenAnswer> {
    await cleanAhead(body, hasCapabilities(state.user?.role ?? null, ['unfiltered_html']));
    const record = await this.write(state, work);
    return this.read(state, (s) => s.written(record));
  }
}

/** A written record as its write answers it, with what this caller may do with it now. */
export interface WrittenAnswer { body: never; headers: { Allow: string } }

/**
 * Reads and writes of events, venues and organizers for one request, inside one unit of work (a read, or a write;
 * a write's answer is read once it is committed, see PostUnits.writeAndShow): the rules they share, in one place.
 */
export class PostService {
  readonly nowUtc: string;

  /**
   * `now`: the request's time; in a write, when the write lock was taken (modification times follow commits).
   * `known`: the terms and post types the write names, read before the write lock was taken (see
   * PostUnits.writeEventAndShow).
   */
  constructor(
    private readonly repos: Repositories, private readonly config: Config, private readonly state: RequestState, readonly now: DateTime = DateTime.utc(),
    private readonly known?: KnownReferences,
  ) {
    this.nowUtc = toWire(now);
  }

  /** `read`: what the view reads besides the records, when it was read with them (PostsRepository.findWithLinks). */
  view(records: PostRecord[], options: ViewOptions, view = new PostView(this.repos, this.state, this.nowUtc), read?: ViewLinks) {
    const type = records[0]?.type;
    if (type === 'event') return view.events(records as EventRecord[], options, read);
    if (type === 'venue') return view.venues(records as VenueRecord[], options, read);
    return view.organizers(records as OrganizerRecord[], options, read);
  }

  /**
   * The records `ids` name, in their order (those gone left out), in runs of at most RECORDS_PER_TURN records and
   * TEXT_PER_TURN characters of descriptions and excerpts (or one record), with a turn of the event loop between
   * runs, so that a page or feed of large texts does not hold every other request: 21 descriptions of 1.7 MB took
   * 200 ms to read and 100 ms to view at once. The first statement reads FIRST_READ records, each next one as many as
   * the texts read so far say fit in a run. A page of ordinary texts is one run.
   */
  async *recordRuns<T extends PostType>(type: T, ids: number[]): AsyncGenerator<RecordOf<T>[]> {
    let run: RecordOf<T>[] = [];
    let runText = 0;
    let read = 0;
    let readText = 0;
    for (let start = 0; start < ids.length; ) {
      const count = read === 0 ? FIRST_READ : Math.min(RECORDS_PER_TURN, Math.max(1, Math.floor((TEXT_PER_TURN * read) / Math.max(1, readText))));
      const slice = ids.slice(start, start + count);
      start += slice.length;
      const found = await this.repos.posts.findMany(type, slice);
      for (const id of slice) {
        const record = found.get(id);
        if (!record) continue;
        const text = textOf(record);
        read++;
        readText += text;
        if (run.length === RECORDS_PER_TURN || (run.length > 0 && runText + text > TEXT_PER_TURN)) {
          yield run;
          await nextTurn();
          run = [];
          runText = 0;
        }
        run.push(record);
        runText += text;
      }
    }
    if (run.length > 0) yield run;
  }

  /** The records `ids` name and their wire records, in order (those gone left out), read and viewed run by run (recordRuns). */
  async viewPage<T extends PostType>(type: T, ids: number[], options: ViewOptions): Promise<{ records: RecordOf<T>[]; wire: unknown[] }> {
    const records: RecordOf<T>[] = [];
    const wire: unknown[] = [];
    for await (const run of this.recordRuns(type, ids)) {
      records.push(...run);
      wire.push(...(await this.view(run, options)));
    }
    return { records, wire };
  }

  // ---- reads -------------------------------------------------------------------------------------------------

  /** The event an id names, with the plugin's errors (404, 400, 403 trashed / not accessible / password). */
  async readableEvent(id: number, password: string | undefined): Promise<EventRecord> {
    return this.readable(await this.eventById(id), password, false);
  }

  /**
   * An event record as read, if this caller may read it (the errors of `readableEvent`). In the edit context, which
   * only a caller who may edit the event gets, its password does not stand in the way, as in the plugin.
   */
  private readable(event: EventRecord, password: string | undefined, edit: boolean): EventRecord {
    if (event.status === 'trash') throw new ApiError(403, 'event-no-longer-available', 'This event is no longer available');
    if (!mayRead(this.state.user, event, this.nowUtc)) throw new ApiError(403, 'event-not-accessible', 'The requested event is not accessible');
    if (!edit && !unlocks(event, password)) throw new ApiError(403, 'event-password-protected', 'The requested event is not accessible without a password');
    return event;
  }

  /**
   * A GET of one record by id or slug (the route's `params`): the answer of `singleAnswer`, with each route's errors
   * for a record that is not there. The record is read with what its view reads (PostsRepository.findWithLinks): on
   * PostgreSQL one round trip, not two, and by slug one read of the record, not two.
   */
  async shown(type: PostType, params: { id?: number; slug?: string }, password: string | undefined, edit: boolean): Promise<{ body: unknown; headers: { 'Last-Modified': string; Allow: string } }> {
    const id = params.slug !== undefined ? await this.repos.posts.resolveSlug(type, params.slug, this.state.lang) : params.id!;
    const found = id === null ? null : await this.repos.posts.findWithLinks(type, id, this.state.lang);
    if (found) {
      if (textOf(found.record) > TEXT_PER_TURN) await nextTurn(); // read and viewed in turns of their own
      return this.singleAnswer(found.record, password, edit, found.links);
    }
    if (params.slug !== undefined) throw invalidParam('slug');
    if (type === 'event') return this.missingEvent(id!);
    throw invalidParam('id');
  }

  /** What this caller's GET of the record answers (`password` as that GET would send it). */
  async single(record: PostRecord, password: string | undefined): Promise<unknown> {
    return (await this.singleAnswer(record, password, false)).body;
  }

  /**
   * A GET by id or slug: the body, and its `Last-Modified`: the record's own change or, when later, that of the venue
   * or organizers it names (as the view read them). Terms have no modification time; the ETag covers them. `edit`:
   * the edit context, refused to a caller who may not edit the record.
   */
  async singleAnswer(record: PostRecord, password: string | undefined, edit: boolean, read?: ViewLinks): Promise<{ body: unknown; headers: { 'Last-Modified': string; Allow: string } }> {
    if (edit && !mayChange('edit', this.state.user, record)) throw forbiddenContext(this.state.user !== null, 'Sorry, you are not allowed to edit this post.');
    const readable = record.type === 'event' ? this.readable(record, password, edit) : this.readableLinked(record);
    const view = new PostView(this.repos, this.state, this.nowUtc);
    const body = (await this.view([readable], { single: true, password, edit }, view, read))[0]!;
    let latest = record.modifiedUtc;
    for (const linked of view.linkedRead()) if (linked.modifiedUtc > latest) latest = linked.modifiedUtc;
    return { body, headers: { 'Last-Modified': httpDate(latest), Allow: this.allowedOn(record).join(', ') } };
  }

  /**
   * The methods of a record's route this caller may use (`Allow`): those its role may use on the route, in the
   * spec's order, narrowed as WordPress asks each method's permission check about this record (an author may edit its
   * own events, not another's).
   */
  private allowedOn(record: PostRecord): string[] {
    const caller = this.state.user;
    return allowedMethods(`${NAMESPACE_PATH}/${record.type}s/{id}`, (caps) => hasCapabilities(caller?.role ?? null, caps))
      .filter((method) => method === 'GET' || mayChange(method === 'DELETE' ? 'delete' : 'edit', caller, record));
  }

  /**
   * The answer of a write: the record as the write left it, never blanked for a caller who may edit it, and the
   * `Allow` of the record's route for it (a create's answer is the collection's, which the handler leaves as it is).
   */
  async written(record: PostRecord): Promise<WrittenAnswer> {
    return { body: (await this.view([record], { single: false, edit: true }))[0] as never, headers: { Allow: this.allowedOn(record).join(', ') } };
  }

  /**
   * `If-Match` of a write: compared with the ETag this caller's GET by id would get now, after validation and the
   * permission check, under the write lock (so no other writer slips in between). A GET that would fail has no tag.
   */
  private async requireCurrent(record: PostRecord, password: string | undefined): Promise<void> {
    if (this.state.ifMatch === null) return;
    let tag: string | null;
    try {
      tag = entityTag(JSON.stringify(await this.single(record, password)));
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      tag = null;
    }
    requireMatch(this.state.ifMatch, () => tag);
  }

  /** A venue or organizer for its own GET: trashed ones only for who may edit them; not public ones for who may read them. */
  readableLinked<R extends VenueRecord | OrganizerRecord>(record: R): R {
    const visible = record.status === 'trash' ? mayChange('edit', this.state.user, record) : mayRead(this.state.user, record, this.nowUtc);
    if (!visible) throw new ApiError(403, `${record.type}-not-accessible`, `The requested ${record.type} is not accessible`);
    return record;
  }

  async eventById(id: number): Promise<EventRecord> {
    return (await this.repos.posts.findOfType('event', id)) ?? this.missingEvent(id);
  }

  /** The plugin's error for an id that names no event: 404 when nothing has it, 400 when a venue or organizer does. */
  private async missingEvent(id: number): Promise<never> {
    if ((await this.repos.posts.typeOf(id)) === null) throw new ApiError(404, 'rest-event-not-found', `Event with ID ${id} does not exist.`);
    throw new ApiError(400, 'rest-invalid-event-id', 'The specified ID is not a valid event.');
  }

  /** A venue or organizer by id; any other id fails validation of `id`, as in the plugin. */
  async linkedById<T extends 'venue' | 'organizer'>(type: T, id: number): Promise<RecordOf<T>> {
    const record = await this.repos.posts.findOfType(type, id);
    if (!record) throw invalidParam('id');
    return record;
  }

  /** The record a slug names (see PostsRepository.resolveSlug); unknown → `slug` fails validation. */
  async bySlug<T extends PostType>(type: T, raw: string): Promise<RecordOf<T>> {
    const id = await this.repos.posts.resolveSlug(type, raw, this.state.lang);
    const found = id === null ? null : await this.repos.posts.findOfType(type, id);
    if (!found) throw invalidParam('slug');
    return found;
  }

  /** A list in the edit context: only for a caller who may edit records of the type, as WordPress answers. */
  requireEditContextOf(type: PostType): void {
    if (!hasCapabilities(this.state.user?.role ?? null, [`edit_${CAPABILITY_TYPE[type]}`])) {
      throw forbiddenContext(this.state.user !== null, 'Sorry, you are not allowed to edit posts in this post type.');
    }
  }

  // ---- writes (inside a write unit: `now` is when the write lock was taken) ------------------------------------

  requireChange(verb: 'edit' | 'delete', record: PostRecord): void {
    if (!mayChange(verb, this.state.user, record)) throw forbidden(this.state.user !== null);
  }

  /**
   * Moves a record to the trash (the slug gets `__trashed`; venues and organizers leave every event). The record is
   * read again under the write lock, so a concurrent writer in another process is never overwritten.
   */
  async trash<T extends PostRecord>(target: T, password?: string): Promise<T> {
    const record = (await this.repos.posts.findOfType(target.type, target.id)) as T;
    this.requireChange('delete', record); // before the trash check: a 410 must not tell others what is in the trash
    await this.requireCurrent(record, password);
    if (record.status === 'trash') throw new ApiError(410, `${record.type}-is-in-trash`, `The ${NOUN[record.type]} is already trashed`);
    const modified = this.modifiedNow();
    const trashed = {
      ...record,
      status: 'trash' as const,
      statusBeforeTrash: record.status,
      slug: await this.uniqueSlug(record.type, record.lang, record.slug + TRASHED, record.id),
      ...modified,
      // the trash is not a floating status: WordPress dates an undated draft as it trashes it
      ...(record.dateFloating ? { dateLocal: modified.modifiedLocal, dateUtc: modified.modifiedUtc, dateFloating: false } : {}),
    };
    await this.repos.posts.update(trashed);
    await this.repos.posts.unlinkFromEvents(trashed);
    return (await this.repos.posts.findOfType(record.type, record.id)) as T;
  }

  async createEvent(body: EventFields): Promise<EventRecord> {
    return this.insertNew(await this.eventRecord(body, null));
  }

  /** A partial update, computed from the event as it is under the write lock (other processes may write too). */
  async updateEvent(id: number, body: EventFields, password?: string): Promise<EventRecord> {
    const current = await this.eventById(id);
    this.requireChange('edit', current);
    const updated = Object.assign(await this.eventRecord(body, current), { id, translationGroup: current.translationGroup });
    await this.requireCurrent(current, password); // after the body is validated
    await this.repos.posts.update(updated);
    return (await this.repos.posts.findOfType('event', id))!;
  }

  /** Creates a venue or organizer — or, as the plugin does, updates and returns the caller's record of that name. */
  async createLinked<T extends 'venue' | 'organizer'>(type: T, body: VenueFields & OrganizerFields): Promise<RecordOf<T>> {
    return (await this.repos.posts.findOfType(type, await this.createOrMatch(type, body)))!;
  }

  /** A partial update of a venue or organizer, computed from the record as it is under the write lock. */
  async updateLinked<R extends VenueRecord | OrganizerRecord>(target: R, body: VenueFields & OrganizerFields, password?: string): Promise<R> {
    const current = (await this.repos.posts.findById(target.id)) as R;
    this.requireChange('edit', current);
    const updated = Object.assign(await this.linkedRecord(current.type, body, current), { id: current.id, translationGroup: current.translationGroup }) as PostRecord;
    await this.requireCurrent(current, password); // after the body is validated
    await this.repos.posts.update(updated);
    return (await this.repos.posts.findById(current.id)) as R;
  }

  /**
   * DESIGN §5 #26: an existing same-language record of that name the caller may edit is updated instead. Names, and
   * descriptions when one is sent, compare as WordPress's collation compares them (`Café Zürich` = `cafe zurich`).
   */
  private async createOrMatch(type: 'venue' | 'organizer', body: VenueFields & OrganizerFields): Promise<number> {
    const name = (type === 'venue' ? body.venue : body.organizer) ?? '';
    if (body.translation_of === undefined) {
      const unfiltered = hasCapabilities(this.state.user?.role ?? null, ['unfiltered_html']);
      // compared as they would be stored
      const description = body.description ? collationKey(cleanHtml(body.description, 'content', unfiltered)) : null;
      for (const id of await this.repos.posts.sameName(type, this.state.lang, cleanHtml(name.trim(), 'title', unfiltered))) {
        const candidate = (await this.repos.posts.findOfType(type, id))!;
        if (!mayChange('edit', this.state.user, candidate)) continue;
        if (description !== null && collationKey(candidate.content) !== description) continue;
        // as the plugin saves only the meta fields of the record it matched (behaviour §9.2): the body is read whole
        // (so what is invalid in it is refused as on any create), but the record keeps its own name (a new case or
        // accents stay out), text, author, status, publication date and password
        const sent = await this.linkedRecord(type, body, candidate);
        const { title, content, authorId, status, dateLocal, dateUtc, dateFloating, password } = candidate;
        await this.repos.posts.update(Object.assign(sent, { title, content, authorId, status, dateLocal, dateUtc, dateFloating, password, id, translationGroup: candidate.translationGroup }) as PostRecord);
        return id;
      }
    }
    return (await this.insertNew((await this.linkedRecord(type, body, null)) as NewRecord<typeof type>)).id;
  }

  private modifiedNow(): { modifiedLocal: string; modifiedUtc: string } {
    const site = parseZone(this.config.siteTimezone)!;
    return { modifiedLocal: toWire(this.now.setZone(site)), modifiedUtc: this.nowUtc };
  }

  /** The fields every post type shares, after a create (`current` null) or a partial update. */
  private async base(type: PostType, body: CommonFields & { title?: unknown; venue?: unknown; organizer?: unknown }, current: PostBase | null, dateZone: string): Promise<Omit<PostBase, 'id' | 'translationGroup'> & { translationOf: number | null }> {
    const caller = this.state.user;
    const rawName = body[NAME_FIELD[type]];
    const title = typeof rawName === 'string' ? rawName.trim() : (current?.title ?? '');
    if (!title) throw invalidParam(NAME_FIELD[type]);

    let authorId = current?.authorId ?? caller?.id ?? 0;
    if (body.author !== undefined) {
      if (!(await this.repos.users.findById(body.author))) throw invalidParam('author');
      if (body.author !== caller?.id && !hasCapabilities(caller?.role ?? null, [`edit_others_${CAPABILITY_TYPE[type]}`])) {
        throw new ApiError(403, 'rest_cannot_edit_others', `Sorry, you are not allowed to ${current ? 'update' : 'create'} ${NOUN[type]}s as this user.`);
      }
      authorId = body.author;
    }

    // As WordPress's wp_update_post, a record whose date is floating is dated anew whenever it is saved without one
    const dated = body.date !== undefined || body.date_utc !== undefined;
    const floated = current ? current.dateFloating : true;
    let date: { local: string; utc: string };
    try {
      date = publicationDate(body, dateZone, this.config.siteTimezone, current && !current.dateFloating ? fromUtcWire(current.dateUtc) : this.now, this.now);
    } catch (err) {
      if (err instanceof TimeInputError) throw invalidParam(err.param);
      throw err;
    }
    // A trashed record stays in the trash unless the update sends a status (which restores it).
    const wasTrashed = current?.status === 'trash';
    const status = wasTrashed && body.status === undefined ? 'trash' : resolveStatus(body.status, current?.status ?? null, caller, type, date.utc, this.nowUtc);
    // a draft or pending record never given a date keeps none until it is published (WordPress's floating statuses)
    const dateFloating = floated && !dated && mayFloat(status);

    const lang = current?.lang ?? this.state.lang;
    let slug: string;
    if (body.slug !== undefined) {
      const wanted = slugify(body.slug);
      if (!wanted) throw invalidParam('slug');
      slug = current ? await this.uniqueSlug(type, lang, wanted, current.id) : wanted;
    } else if (current && !(wasTrashed && status !== 'trash')) {
      slug = current.slug;
    } else {
      const from = wasTrashed ? current!.slug.replace(/__trashed(-\d+)?$/, '') : slugify(title) || NOUN[type];
      slug = current ? await this.uniqueSlug(type, lang, from, current.id) : from;
    }
    // a new record's slug is made unique as it is inserted (insertNew)

    const translationOf = !current && body.translation_of !== undefined ? await this.translationTarget(type, body.translation_of, lang) : null;

    const unfiltered = hasCapabilities(caller?.role ?? null, ['unfiltered_html']);
    return {
      type,
      authorId,
      status,
      statusBeforeTrash: status === 'trash' ? (current?.statusBeforeTrash ?? null) : null,
      slug,
      title: typeof rawName === 'string' ? cleanHtml(title, 'title', unfiltered) : title,
      content: body.description !== undefined ? cleanHtml(body.description, 'content', unfiltered) : (current?.content ?? ''),
      excerpt: body.excerpt !== undefined ? cleanHtml(body.excerpt, 'content', unfiltered) : (current?.excerpt ?? ''),
      password: body.password ?? current?.password ?? '',
      dateLocal: date.local,
      dateUtc: date.utc,
      dateFloating,
      ...this.modifiedNow(),
      lang,
      parentId: current?.parentId ?? 0,
      imageId: body.image !== undefined ? await this.imageId(body.image) : (current?.imageId ?? 0),
      globalIdLineage: current?.globalIdLineage ?? [],
      translationOf,
    };
  }

  /**
   * The record whose translation group a new record joins (`translation_of`). Joining changes that record's group, so
   * it needs the right to edit it; one the caller may not read is answered as an unknown id, so that no private id
   * can be probed. The group must have no record of the language yet (named only when the caller may read it).
   */
  private async translationTarget(type: PostType, id: number, lang: PostBase['lang']): Promise<number> {
    const caller = this.state.user;
    const target = await this.repos.posts.findById(id);
    if (!target || target.type !== type || !mayRead(caller, target, this.nowUtc)) throw invalidParams({ translation_of: `No ${NOUN[type]} has the id ${id}.` });
    if (!mayChange('edit', caller, target)) throw new ApiError(403, 'rest_cannot_edit', `Sorry, you are not allowed to add a translation to this ${NOUN[type]}.`);
    const taken = (await this.repos.posts.translationMembers(type, [target.translationGroup])).get(target.translationGroup)?.find((m) => m.lang === lang);
    if (taken) {
      const which = mayRead(caller, taken, this.nowUtc) ? ` (id ${taken.id})` : '';
      throw invalidParams({ translation_of: `The translation group of ${target.id} already has a ${lang} ${NOUN[type]}${which}.` });
    }
    return target.id;
  }

  /**
   * `slug` made unique among records of the type and language, ignoring the record itself: as WordPress does, the
   * slug itself when free, else the first free of `-2`, `-3`, … The taken ones are read in one statement, so the
   * hundredth "Weekly yoga" costs what the first did.
   */
  private async uniqueSlug(type: PostType, lang: PostBase['lang'], slug: string, self: number | null): Promise<string> {
    const owner = await this.repos.posts.slugOwner(type, lang, slug);
    if (owner === null || owner === self) return slug;
    return this.numberedSlug(type, lang, slug, self);
  }

  /**
   * A new record, inserted under the slug it asks for when that is free (one statement: the insert itself finds
   * out), else under the first free numbered one, as `uniqueSlug` would have chosen.
   */
  private async insertNew<T extends PostType>(record: NewRecord<T>): Promise<RecordOf<T>> {
    const created = await this.repos.posts.create(record);
    if (created) return created;
    const numbered = await this.numberedSlug(record.type, record.lang, record.slug, null);
    // writes are serialised: no one can take the numbered slug in between
    const retried = await this.repos.posts.create({ ...record, slug: numbered });
    if (!retried) throw new Error(`the slug ${numbered}, found free, was taken before it was written`);
    return retried;
  }

  /** The first free `slug-2`, `slug-3`, … among records of the type and language, ignoring the record itself. */
  private async numberedSlug(type: PostType, lang: PostBase['lang'], slug: string, self: number | null): Promise<string> {
    const taken = new Set<string>();
    for (const numbered of await this.repos.posts.numberedSlugs(type, lang, slug)) if (numbered.id !== self) taken.add(numbered.slug);
    for (let n = 2; ; n++) if (!taken.has(`${slug}-${n}`)) return `${slug}-${n}`;
  }

  /** DESIGN §5 #12: an image is a media record id, or a URL that registers one; `""` removes it. */
  private async imageId(image: number | string): Promise<number> {
    if (image === '') return 0;
    if (typeof image === 'number' || /^\d+$/.test(image)) {
      const media = await this.repos.media.findById(Number(image));
      if (!media) throw invalidParam('image');
      return media.id;
    }
    const url = webUrl(image);
    if (url === null) throw invalidParam('image');
    if (!hasCapabilities(this.state.user?.role ?? null, ['upload_files'])) throw invalidParams({ image: 'Sorry, you are not allowed to add images by URL.' });
    return (await this.repos.media.register(url)).id;
  }

  private async eventRecord(body: EventFields, current: EventRecord | null): Promise<NewRecord<'event'>> {
    let times;
    try {
      times = eventTimes(body, current, this.config.siteTimezone, this.now);
    } catch (err) {
      if (err instanceof TimeInputError) throw invalidParam(err.param);
      throw err;
    }
    const base = await this.base('event', body, current, times.timezone);
    let parentId = current?.parentId ?? 0;
    if (body.post_parent !== undefined) {
      if (body.post_parent !== 0 && ((await this.typeOf(body.post_parent)) !== 'event' || body.post_parent === current?.id)) throw invalidParam('post_parent');
      parentId = body.post_parent;
    }
    const costs = body.cost === undefined ? (current?.costs ?? []) : (Array.isArray(body.cost) ? body.cost : [body.cost]).map((c) => (typeof c === 'number' ? phpNumberText(c) : c).trim()).filter(Boolean);
    const currency = body.cost === undefined && current ? { symbol: current.currencySymbol, position: current.currencyPosition } : currencyOf(costs);
    // Object.assign onto the fresh base, not spreads into a literal (far slower in V8); same order of evaluation
    return Object.assign(base, { type: 'event' as const, parentId }, times, plainWritten('event', body, current), {
      costs,
      currencySymbol: currency.symbol,
      currencyPosition: currency.position,
      currencyCode: current?.currencyCode ?? '',
      website: body.website !== undefined ? body.website : (current?.website ?? null),
      venueId: body.venue === undefined ? (current?.venueId ?? 0) : await this.venueOf(body.venue),
      organizerIds: body.organizer === undefined ? (current?.organizerIds ?? []) : await this.organizersOf(body.organizer),
      termIds: [
        ...(await this.termsFor('category', body.categories, current)),
        ...(await this.termsFor('tag', body.tags, current)),
      ],
    });
  }

  private async linkedRecord(type: 'venue' | 'organizer', body: VenueFields & OrganizerFields, current: VenueRecord | OrganizerRecord | null): Promise<NewRecord<'venue'> | NewRecord<'organizer'>> {
    const base = await this.base(type, body, current, this.config.siteTimezone);
    if (type === 'organizer') return Object.assign(base, { type }, plainWritten(type, body, current as OrganizerRecord | null));
    const venue = Object.assign(base, { type }, plainWritten(type, body, current as VenueRecord | null));
    // not sent: derived from the state, province and country, unless none of them is sent on an update either
    if (body.stateprovince === undefined && !(current && body.state === undefined && body.province === undefined && body.country === undefined)) {
      venue.stateprovince = !venue.country || venue.country === 'US' || venue.country === 'United States' ? venue.state : venue.province;
    }
    return venue;
  }

  /** DESIGN §5 #28 and #3: one venue id, `{id}`, an inline venue (created or matched), or 0 / "" / null / [] to unlink. */
  private async venueOf(value: unknown): Promise<number> {
    if (value === null || value === 0 || value === '' || (Array.isArray(value) && value.length === 0)) return 0;
    if (Array.isArray(value)) {
      if (value.length > 1) throw invalidParams({ venue: 'An event has at most one venue.' });
      return this.venueOf(value[0]);
    }
    return this.linkedRef('venue', value, 'venue');
  }

  /** An organizer id, a CSV of ids, or a list of ids, `{id}` objects and inline organizers; 0 / "" / null / [] for none. */
  private async organizersOf(value: unknown): Promise<number[]> {
    const ids: number[] = [];
    for (const item of organizerItems(value)) ids.push(await this.linkedRef('organizer', item, 'organizer'));
    return [...new Set(ids)];
  }

  private async linkedRef(type: 'venue' | 'organizer', item: unknown, param: string): Promise<number> {
    const id = linkedIdOf(item);
    if (id !== null) {
      if (!Number.isSafeInteger(id) || (await this.typeOf(id)) !== type) throw invalidParam(param);
      return id;
    }
    if (item && typeof item === 'object') {
      const fields = item as VenueFields & OrganizerFields;
      if (!(type === 'venue' ? fields.venue : fields.organizer)?.trim()) throw invalidParam(param);
      return this.createOrMatch(type, fields);
    }
    throw invalidParam(param);
  }

  /** The type of the post of an id, null when there is none; as read before the write lock when it was found then. */
  private async typeOf(id: number): Promise<PostType | null> {
    return this.known?.types.get(id) ?? this.repos.posts.typeOf(id);
  }

  /** DESIGN §5 #20: ids (unknown ones ignored), slugs or names; an unknown name creates a term when the caller may. */
  private async termsFor(taxonomy: Taxonomy, items: (number | string)[] | undefined, current: EventRecord | null): Promise<number[]> {
    if (items === undefined) {
      if (!current || current.termIds.length === 0) return [];
      return [...(await this.repos.terms.taxonomies(current.termIds))].filter(([, of]) => of === taxonomy).map(([id]) => id);
    }
    const param = TAXONOMY[taxonomy].route;
    const ids: number[] = [];
    for (const item of items) {
      if (item === '') continue;
      if (isTermId(item)) {
        const id = Number(item);
        const of = this.known?.terms.get(id) ?? (await this.repos.terms.taxonomies([id])).get(id);
        if (of === taxonomy) ids.push(id);
        continue;
      }
      const text = String(item); // not an id: a slug or a name
      const found = await this.repos.terms.findBySlugOrName(taxonomy, this.state.lang, text.trim());
      if (found !== null) {
        ids.push(found);
        continue;
      }
      const mayCreate = allowedMethods(`${NAMESPACE_PATH}/${param}`, (caps) => hasCapabilities(this.state.user?.role ?? null, caps)).includes('POST');
      const name = sanitizeTextField(text);
      if (!mayCreate || !name) throw invalidParam(param);
      const slug = await this.repos.terms.uniqueSlug(taxonomy, this.state.lang, slugify(name) || 'term', null);
      ids.push(await this.repos.terms.insert({ taxonomy, name, slug, description: '', parentId: 0, lang: this.state.lang, translationOf: null }));
    }
    return [...new Set(ids)];
  }
}

