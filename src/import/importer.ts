import type { Zone } from 'luxon';
import type { Engine, Repositories, WriteUnit } from '../db/engine.js';
import type { EventRecord, MediaRecord, PostRecord, PostStatus, PostType, Taxonomy } from '../db/records.js';
import { parseZone } from '../domain/dates.js';
import { LANGS, type Lang } from '../domain/context.js';
import type { Progress } from '../progress.js';
import { idOf, isBlanked, postFromWire, termFromWire, WireError, type SourcePost, type SourceTerm, type Wire } from './records.js';
import { SourceRefusal, type ListPage, type Params, type Source, type SourceInfo } from './source.js';

/**
 * `almanac import`: copies a site speaking the plugin's API into this database through that API, keeping ids.
 *
 * Identity. Records keep their source ids. A post (event, venue, organizer) here is "the same record" as the source's
 * when its `global_id_lineage` holds the source record's `global_id` (`example.org?id=12`), which the import appends;
 * a term, when `term_sources` says it came from the same site. Any other record under that id is left alone and the
 * source record is reported as skipped; so is a record whose slug another record here already has.
 *
 * Order. Categories (parents first), tags, venues, organizers, events, each in every language the source has, so
 * that links, parents and translation groups find their targets; then events hidden from listings, which no list
 * shows, are asked for by id among the ids no list showed. Each page of records is one transaction and each record
 * a savepoint in it: an interrupted import keeps what it wrote, and a re-run carries on (it is idempotent).
 */

export type Resource = 'categories' | 'tags' | 'venues' | 'organizers' | 'events';
export const RESOURCES: readonly Resource[] = ['categories', 'tags', 'venues', 'organizers', 'events'];

export interface Tally {
  created: number;
  updated: number;
  unchanged: number;
  skipped: number;
  /** Not modified since `--since`: not compared. */
  older: number;
}

export interface ImportReport {
  tallies: Record<Resource, Tally>;
  /** Authors created as users (role author, no password). */
  authorsCreated: number[];
  /** `event 12: reason`. */
  skipped: string[];
  /** What was imported, but not exactly as the source has it. */
  warnings: string[];
  /** Only published records were readable (anonymous, or credentials that may not list other statuses). */
  publishedOnly: boolean;
}

export interface ImportOptions {
  /** Only records modified after this UTC time (`YYYY-MM-DD HH:MM:SS`). */
  since: string | null;
  /** Decide everything, write nothing. */
  dryRun: boolean;
  /** This site's timezone, for local publication and modification dates. */
  siteTimezone: string;
  /** Whether the source was given credentials. */
  authenticated: boolean;
  progress: (label: string, total: number) => Progress;
}

/** Every status, for callers who may read them (the plugin's `any` leaves out the trash). */
const ALL_STATUSES = 'publish,future,draft,pending,private,trash';
/** A date window wide enough for every event the wire format can hold. */
const EVERY_DATE = { start_date: '0001-01-01', end_date: '9999-12-31' };
const PER_PAGE = 50;
/** How far past the highest listed id to look for events hidden from listings. */
const PROBE_MARGIN = 50;
const PROBE_CONCURRENCY = 4;
/** Pages of a list requested ahead of the one being written. */
const PAGES_AHEAD = 3;
const PROTECTED = 'password-protected: the API shows neither its fields nor its password';

const NOUN: Record<PostType | Taxonomy, string> = { event: 'event', venue: 'venue', organizer: 'organizer', category: 'category', tag: 'tag' };
const NOUN_OF_RESOURCE: Record<Resource, string> = { categories: 'category', tags: 'tag', venues: 'venue', organizers: 'organizer', events: 'event' };
const RESOURCE: Record<PostType | Taxonomy, Resource> = { event: 'events', venue: 'venues', organizer: 'organizers', category: 'categories', tag: 'tags' };

/** A record that cannot be imported, and why (rolls back what its savepoint wrote). */
class Skip extends Error {}

/** What this run did (or, in a dry run, would have done) to a record, for the checks of later records. */
interface PostState { type: PostType; group: number; lang: Lang; globalId: string }
interface TermState { taxonomy: Taxonomy; group: number; lang: Lang }

/** A constraint of the database refused a write (SQLite or PostgreSQL): the checks before it missed a case. */
function isConstraintError(err: unknown): boolean {
  const code = String((err as { code?: unknown } | null)?.code ?? '');
  return code.startsWith('SQLITE_CONSTRAINT') || /^23\d{3}$/.test(code);
}

/** Sorted-key JSON, so records built by different code compare by value. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1))) : v);
}

function comparable(record: PostRecord): unknown {
  return record.type === 'event' ? { ...record, termIds: [...record.termIds].sort((a, b) => a - b) } : record;
}

/** Runs `work` on every item, at most `limit` at a time. */
async function pool<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** A dry run decides everything on a read of the database and writes nothing. */
export async function importSite(engine: Engine, source: Source, info: SourceInfo, options: ImportOptions): Promise<ImportReport> {
  return new Importer(engine, source, info, options).run();
}

class Importer {
  /** The repositories of the unit of work under way (one page at a time). */
  private repos!: Repositories;
  private readonly zone: Zone;
  private readonly langs: (Lang | null)[];
  private readonly report: ImportReport;
  /** Post and term ids the source showed in this run, whatever became of them. */
  private readonly seenPosts = new Set<number>();
  private readonly seenTerms = new Set<number>();
  private readonly postStates = new Map<number, PostState>();
  private readonly termStates = new Map<number, TermState>();
  /** `type|group|lang` → id of the record this run put there (a dry run's database does not show them). */
  private readonly slots = new Map<string, number>();
  /** Lists on which the status filter was refused (the credentials may read published records only). */
  private readonly publishedOnly = new Set<string>();
  /** Records the source protects with a password that its lists do not show blanked. */
  private readonly protectedIds = new Set<number>();
  /** The source site as its global ids name it. */
  private postSite: string | null = null;

  constructor(private readonly engine: Engine, private readonly source: Source, private readonly info: SourceInfo, private readonly options: ImportOptions) {
    this.zone = parseZone(options.siteTimezone)!;
    this.langs = info.languageParam ? [...LANGS] : [null];
    const tallies = Object.fromEntries(RESOURCES.map((r) => [r, { created: 0, updated: 0, unchanged: 0, skipped: 0, older: 0 }])) as Record<Resource, Tally>;
    this.report = { tallies, authorsCreated: [], skipped: [], warnings: [], publishedOnly: !options.authenticated };
  }

  async run(): Promise<ImportReport> {
    await this.importTerms('category');
    await this.importTerms('tag');
    for (const type of ['venue', 'organizer', 'event'] as const) await this.importPosts(type);
    await this.importUnlisted();
    return this.report;
  }

  // ---- reading the source ----------------------------------------------------------------------------------------

  private params(route: Resource, lang: Lang | null): Params {
    const params: Params = { per_page: PER_PAGE };
    if (lang && this.info.languageParam) params[this.info.languageParam] = lang;
    if (route === 'categories' || route === 'tags') return { ...params, hide_empty: 0, orderby: 'id', order: 'asc' };
    if (this.options.authenticated && !this.publishedOnly.has(route)) params.status = ALL_STATUSES;
    return route === 'events' ? { ...params, ...EVERY_DATE } : params;
  }

  /** Every page of a list in every language, with a progress bar over the whole (totals from each first page). */
  private async walk(route: Resource, onPage: (items: Wire[], lang: Lang) => void | Promise<void>): Promise<void> {
    const firsts = [];
    for (const lang of this.langs) {
      let page;
      try {
        page = await this.source.list(route, this.params(route, lang), 1);
      } catch (err) {
        // a subscriber's credentials: the plugin refuses any status but `publish`
        if (!(err instanceof SourceRefusal && err.status === 400 && err.params.includes('status') && !this.publishedOnly.has(route))) throw err;
        this.publishedOnly.add(route);
        this.report.publishedOnly = true;
        page = await this.source.list(route, this.params(route, lang), 1);
      }
      firsts.push({ lang, page: page! });
    }
    const bar = this.options.progress(route, firsts.reduce((n, f) => n + f.page.total, 0));
    for (const { lang, page } of firsts) {
      // the next pages are on their way while one is written (a few at a time, to spare the source)
      const ahead: Promise<ListPage | null>[] = [];
      let n = 2;
      const request = () => {
        for (; ahead.length < PAGES_AHEAD && n <= page.totalPages; n++) {
          const next = this.source.list(route, this.params(route, lang), n);
          next.catch(() => undefined); // awaited in turn below; an import that stops early leaves none unhandled
          ahead.push(next);
        }
      };
      request();
      await onPage(page.items, lang ?? 'en');
      bar.advance(page.items.length);
      while (ahead.length > 0) {
        const next = await ahead.shift()!;
        if (!next) break;
        request();
        await onPage(next.items, lang ?? 'en');
        bar.advance(next.items.length);
      }
    }
    bar.done();
  }

  // ---- writing ---------------------------------------------------------------------------------------------------

  /** One unit of work: a write (a read in a dry run, which writes nothing); records run one after the other in it. */
  private async inPage(work: () => Promise<void>): Promise<void> {
    const run = async (repos: Repositories, unit: WriteUnit | null) => {
      this.repos = repos;
      this.unit = unit;
      await work();
    };
    if (this.options.dryRun) await this.engine.read((repos) => run(repos, null), null);
    else await this.engine.write((unit) => run(unit, unit));
  }

  private unit: WriteUnit | null = null;

  /** One record: a savepoint; a `Skip` (or a constraint the checks missed) rolls it back and is reported. */
  private async inRecord(resource: Resource, id: number, work: () => Promise<void>): Promise<void> {
    try {
      if (this.unit) await this.unit.savepoint(work);
      else await work();
    } catch (err) {
      if (err instanceof Skip) this.skip(resource, id, err.message);
      else if (isConstraintError(err)) this.skip(resource, id, `the database refused it: ${(err as Error).message}`);
      else throw err;
    }
  }

  private async write(work: () => Promise<unknown>): Promise<void> {
    if (!this.options.dryRun) await work();
  }

  private skip(resource: Resource, id: number | null, reason: string): void {
    this.report.tallies[resource].skipped++;
    this.report.skipped.push(`${NOUN_OF_RESOURCE[resource]} ${id ?? '(no id)'}: ${reason}`);
  }

  private count(resource: Resource, outcome: 'created' | 'updated' | 'unchanged' | 'older'): void {
    this.report.tallies[resource][outcome]++;
  }

  // ---- terms -------------------------------------------------------------------------------------------------------

  private async importTerms(taxonomy: Taxonomy): Promise<void> {
    const resource = RESOURCE[taxonomy];
    const found = new Map<number, SourceTerm>();
    await this.walk(resource, (items, lang) => {
      for (const w of items) {
        const id = idOf(w);
        if (id === null) {
          this.skip(resource, null, 'it has no numeric id');
          continue;
        }
        if (this.seenTerms.has(id)) continue;
        this.seenTerms.add(id);
        try {
          found.set(id, termFromWire(taxonomy, w, lang));
        } catch (err) {
          if (!(err instanceof WireError)) throw err;
          this.skip(resource, id, `the source's record cannot be read: ${err.message}`);
        }
      }
    });
    // parents before their children
    const ordered: SourceTerm[] = [];
    const placed = new Set<number>();
    const place = (term: SourceTerm, depth: number) => {
      if (placed.has(term.id)) return;
      placed.add(term.id);
      const parent = found.get(term.parentId);
      if (parent && depth < 64) place(parent, depth + 1);
      ordered.push(term);
    };
    for (const term of found.values()) place(term, 0);

    const deferred: SourceTerm[] = [];
    await this.inPage(async () => {
      for (const t of ordered) await this.inRecord(resource, t.id, () => this.importTerm(t, deferred));
    });
    await this.inPage(async () => {
      for (const t of deferred) await this.inRecord(resource, t.id, () => this.importTerm(t, null));
    });
  }

  /** A term here that came from the source (or was handled in this run). */
  private async ownTerm(taxonomy: Taxonomy, id: number): Promise<boolean> {
    const state = this.termStates.get(id);
    if (state) return state.taxonomy === taxonomy;
    return (await this.repos.terms.findById(id))?.taxonomy === taxonomy && (await this.repos.terms.sourceOf(id)) === this.info.site;
  }

  private async termGroupOf(id: number): Promise<{ group: number; lang: Lang } | null> {
    const state = this.termStates.get(id);
    if (state) return state;
    const term = await this.repos.terms.findById(id);
    return term ? { group: term.translationGroup, lang: term.lang } : null;
  }

  /** The translation group of a term: the one it shares with a translation already here, else its own. */
  private async termGroup(t: SourceTerm, current: number | null): Promise<number> {
    const groups: number[] = [];
    for (const s of [...t.siblings].sort((a, b) => a - b)) if (await this.ownTerm(t.taxonomy, s)) groups.push((await this.termGroupOf(s))!.group);
    if (current !== null && groups.includes(current)) return current;
    for (const g of groups) {
      const here = (await this.repos.terms.translations(t.taxonomy, [g])).get(g)?.[t.lang];
      if (!this.slotTaken(t.taxonomy, g, t.lang, t.id, here)) return g;
    }
    return current ?? t.id;
  }

  /** Whether another record has the language `lang` in translation group `group` (here, or planned by this run). */
  private slotTaken(kind: PostType | Taxonomy, group: number, lang: Lang, self: number, here: number | undefined): boolean {
    const planned = this.slots.get(`${kind}|${group}|${lang}`);
    return (planned !== undefined && planned !== self) || (here !== undefined && here !== self);
  }

  private takeSlot(kind: PostType | Taxonomy, state: { group: number; lang: Lang }, id: number): void {
    this.slots.set(`${kind}|${state.group}|${state.lang}`, id);
  }

  private async importTerm(t: SourceTerm, deferred: SourceTerm[] | null): Promise<void> {
    const resource = RESOURCE[t.taxonomy];
    const noun = NOUN[t.taxonomy];
    const existing = await this.repos.terms.findById(t.id);
    const ours = this.termStates.has(t.id) || (existing !== null && existing.taxonomy === t.taxonomy && (await this.repos.terms.sourceOf(t.id)) === this.info.site);
    if (existing && !ours) throw new Skip(`its id belongs to another ${NOUN[existing.taxonomy]} in Almanac (“${existing.name}”)`);
    let parentId = t.parentId;
    if (parentId !== 0 && (parentId === t.id || !(await this.ownTerm('category', parentId)))) {
      this.report.warnings.push(`${noun} ${t.id}: its parent category ${parentId} is not in Almanac; imported at the top level`);
      parentId = 0;
    }
    const owner = await this.repos.terms.slugOwner(t.taxonomy, t.lang, t.slug);
    if (owner !== null && owner !== t.id) {
      // a term of the same source may give that slug up later in this run (renamed on the source)
      if (deferred && (await this.ownTerm(t.taxonomy, owner))) {
        deferred.push(t);
        return;
      }
      throw new Skip(`its slug “${t.slug}” belongs to another ${noun} in Almanac (id ${owner})`);
    }
    const group = await this.termGroup(t, existing?.translationGroup ?? null);
    this.termStates.set(t.id, { taxonomy: t.taxonomy, group, lang: t.lang });
    this.takeSlot(t.taxonomy, { group, lang: t.lang }, t.id);
    const fields = { name: t.name, slug: t.slug, description: t.description, parentId };
    if (!existing) {
      await this.write(() => this.repos.terms.insertAs(t.id, group, { taxonomy: t.taxonomy, lang: t.lang, ...fields }, this.info.site));
      this.count(resource, 'created');
      return;
    }
    const same = existing.name === t.name && existing.slug === t.slug && existing.description === t.description
      && existing.parentId === parentId && existing.lang === t.lang && existing.translationGroup === group;
    if (same) {
      this.count(resource, 'unchanged');
      return;
    }
    await this.write(async () => {
      await this.repos.terms.update(t.id, fields);
      if (existing.lang !== t.lang || existing.translationGroup !== group) await this.repos.terms.setTranslation(t.id, t.lang, group);
    });
    this.count(resource, 'updated');
  }

  // ---- events, venues, organizers ----------------------------------------------------------------------------------

  private async importPosts(type: PostType): Promise<void> {
    const deferred: { wire: Wire; lang: Lang }[] = [];
    await this.walk(RESOURCE[type], async (items, lang) => {
      if (type === 'organizer') await this.findProtectedOrganizers(items);
      await this.inPage(async () => {
        for (const w of items) await this.importPost(type, w, lang, deferred);
      });
    });
    await this.inPage(async () => {
      for (const d of deferred) await this.importPost(type, d.wire, d.lang, null);
    });
  }

  /**
   * A password-protected organizer is blanked in lists, but one whose only field is its name looks the same as an
   * unprotected one: its single representation tells (a protected record has no `json_ld`).
   */
  private async findProtectedOrganizers(items: Wire[]): Promise<void> {
    const bare = items.filter((w) => idOf(w) !== null && !isBlanked('organizer', w)
      && !['description', 'excerpt', 'website', 'email', 'phone', 'image'].some((k) => k in w));
    await pool(bare, PROBE_CONCURRENCY, async (w) => {
      const answer = await this.source.get(`organizers/${idOf(w)}`);
      const single = answer.json as Wire | undefined;
      if (answer.status === 200 && single && typeof single === 'object' && !('json_ld' in single)) this.protectedIds.add(idOf(w)!);
    });
  }

  /** `deferred`: where a record whose slug another record of the source still holds waits; null on that retry. */
  private async importPost(type: PostType, w: Wire, lang: Lang, deferred: { wire: Wire; lang: Lang }[] | null): Promise<void> {
    const resource = RESOURCE[type];
    const id = idOf(w);
    if (id === null) return this.skip(resource, null, 'it has no numeric id');
    if (deferred !== null) {
      if (this.seenPosts.has(id)) return;
      this.seenPosts.add(id);
    }
    // the modification time as the source shows it (UTC, `YYYY-MM-DD HH:MM:SS`: compared as text), blanked or not
    if (this.options.since && typeof w.modified_utc === 'string' && w.modified_utc <= this.options.since) return this.count(resource, 'older');
    if (isBlanked(type, w) || this.protectedIds.has(id)) return this.skip(resource, id, PROTECTED);
    let source: SourcePost;
    try {
      source = postFromWire(type, w, lang, this.zone);
    } catch (err) {
      if (!(err instanceof WireError)) throw err;
      return this.skip(resource, id, `the source's record cannot be read: ${err.message}`);
    }
    this.postSite ??= source.globalId.replace(/\?id=\d+$/, '');
    await this.inRecord(resource, id, async () => {
      if ((await this.writePost(source)) === 'slug taken by the source') {
        if (!deferred) throw new Skip(`its slug “${source.record.slug}” belongs to another ${NOUN[type]} of the source in Almanac`);
        deferred.push({ wire: w, lang });
      }
    });
  }

  /** A post here that is the source's record `globalId` (or was handled in this run). */
  private async ownPost(type: PostType, id: number, globalId: string): Promise<boolean> {
    const state = this.postStates.get(id);
    if (state) return state.type === type;
    const record = await this.repos.posts.findById(id);
    return record !== null && record.type === type && record.globalIdLineage.includes(globalId);
  }

  /** The translation group of a post: the one it shares with a translation already here, else its own. */
  private async postGroup(source: SourcePost, site: string, current: number | null): Promise<number> {
    const { type, lang } = source.record;
    const groups: number[] = [];
    for (const s of [...source.siblings].sort((a, b) => a - b)) {
      if (await this.ownPost(type, s, `${site}?id=${s}`)) groups.push(this.postStates.get(s)?.group ?? (await this.repos.posts.findById(s))!.translationGroup);
    }
    if (current !== null && groups.includes(current)) return current;
    for (const g of groups) {
      const here = (await this.repos.posts.translations(type, [g])).get(g)?.[lang];
      if (!this.slotTaken(type, g, lang, source.id, here)) return g;
    }
    return current ?? source.id;
  }

  /** The image's id here: the media record of its URL, else a new one (keeping the source id when free). */
  private async imagePlan(image: MediaRecord): Promise<{ id: number | null; write: boolean }> {
    const byUrl = await this.repos.media.findByUrl(image.url);
    if (byUrl) {
      const same = byUrl.extension === image.extension && byUrl.width === image.width && byUrl.height === image.height
        && byUrl.filesize === image.filesize && canonical(byUrl.sizes) === canonical(image.sizes);
      return { id: byUrl.id, write: !same };
    }
    return { id: (await this.repos.media.findById(image.id)) ? null : image.id, write: true };
  }

  private async writePost(source: SourcePost): Promise<'done' | 'slug taken by the source'> {
    const { id, globalId } = source;
    const type = source.record.type;
    const resource = RESOURCE[type];
    const noun = NOUN[type];
    const site = globalId.replace(/\?id=\d+$/, '');
    const current = await this.repos.posts.findById(id);
    if (current && (current.type !== type || !current.globalIdLineage.includes(globalId))) {
      throw new Skip(`its id belongs to another ${NOUN[current.type]} in Almanac (“${current.title}”)`);
    }
    const record = { ...source.record } as Omit<PostRecord, 'id' | 'translationGroup'>;
    const owner = await this.repos.posts.slugOwner(type, record.lang, record.slug);
    if (owner !== null && owner !== id) {
      const held = (await this.repos.posts.findById(owner))!;
      if (held.globalIdLineage.includes(`${site}?id=${owner}`)) return 'slug taken by the source';
      throw new Skip(`its slug “${record.slug}” belongs to another ${noun} in Almanac (id ${owner})`);
    }

    // links: only to records here that came from the source
    if (record.type === 'event') {
      const event = record as Omit<EventRecord, 'id' | 'translationGroup'>;
      const missing: string[] = [];
      const kept: SourcePost['linked'] = [];
      for (const link of source.linked) {
        if (await this.ownPost(link.type, link.id, link.globalId ?? `${site}?id=${link.id}`)) kept.push(link);
        else missing.push(`${link.type} ${link.id}`);
      }
      event.venueId = kept.filter((l) => l.type === 'venue').map((l) => l.id)[0] ?? 0;
      event.organizerIds = kept.filter((l) => l.type === 'organizer').map((l) => l.id);
      const terms: number[] = [];
      for (const t of event.termIds) {
        const taxonomy = this.termStates.get(t)?.taxonomy ?? (await this.repos.terms.findById(t))?.taxonomy;
        if (taxonomy !== undefined && (await this.ownTerm(taxonomy, t))) terms.push(t);
        else missing.push(`term ${t}`);
      }
      event.termIds = terms;
      event.parentId = current?.type === 'event' ? current.parentId : 0;
      if (missing.length) this.report.warnings.push(`event ${id}: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not in Almanac; imported without ${missing.length === 1 ? 'it' : 'them'}`);
    }
    for (const note of source.notes) this.report.warnings.push(`${noun} ${id}: ${note}`);

    // what stays as it is here: the password (none on the wire), the status before a trashing
    record.password = current?.password ?? '';
    record.statusBeforeTrash = record.status !== 'trash' ? null : current?.status === 'trash' ? current.statusBeforeTrash : ((current?.status as PostStatus | undefined) ?? null);
    record.globalIdLineage = [...new Set([...(current?.globalIdLineage ?? []), ...record.globalIdLineage, globalId])];
    const image = source.image ? await this.imagePlan(source.image) : null;
    record.imageId = image ? (image.id ?? -1) : 0;
    const newAuthor = record.authorId !== 0 && !(await this.repos.users.findById(record.authorId)) && !this.report.authorsCreated.includes(record.authorId);

    const group = await this.postGroup(source, site, current?.translationGroup ?? null);
    this.postStates.set(id, { type, group, lang: record.lang, globalId });
    this.takeSlot(type, { group, lang: record.lang }, id);
    if (current && !image?.write && !newAuthor && current.translationGroup === group && canonical(comparable({ ...record, id, translationGroup: group } as PostRecord)) === canonical(comparable(current))) {
      this.count(resource, 'unchanged');
      return 'done';
    }
    if (newAuthor) {
      await this.write(() => this.createAuthor(record.authorId));
      this.report.authorsCreated.push(record.authorId);
    }
    await this.write(async () => {
      if (source.image) {
        record.imageId = await this.repos.media.save(source.image);
        if (record.imageId !== source.image.id) this.report.warnings.push(`${noun} ${id}: its image ${source.image.id} is image ${record.imageId} here (the id was taken)`);
      }
      if (!current) {
        await this.repos.posts.insertAs(id, group, record);
        return;
      }
      await this.repos.posts.update({ ...record, id, translationGroup: current.translationGroup } as PostRecord);
      if (current.translationGroup !== group) await this.repos.posts.setTranslationGroup(id, group);
    });
    this.count(resource, current ? 'updated' : 'created');
    return 'done';
  }

  /** An author of the source that is no user here: a user with that id, role author and no password. */
  private async createAuthor(id: number): Promise<void> {
    let login = `author-${id}`;
    for (let n = 2; await this.repos.users.findByLoginOrEmail(login); n++) login = `author-${id}-${n}`;
    await this.repos.users.create({ id, login, email: null, role: 'author' });
  }

  // ---- events no list shows ---------------------------------------------------------------------------------------

  /**
   * Events hidden from listings appear in no list, for any caller: each id no list showed (up to a margin past the
   * highest one, and every id imported from this site before) is asked for as an event. With `--since`, only ids
   * newer than any imported before, or imported before, are asked for (the others were not events then).
   */
  private async importUnlisted(): Promise<void> {
    const site = this.postSite ?? this.info.site;
    const imported = await this.engine.read((repos) => repos.posts.idsWithLineageFrom(site), null);
    const highest = [...this.seenPosts].reduce((a, b) => Math.max(a, b), 0);
    const candidates = new Set<number>(imported);
    for (let id = 1; id <= highest + PROBE_MARGIN; id++) candidates.add(id);
    for (const id of this.seenPosts) candidates.delete(id);
    let ids = [...candidates].sort((a, b) => a - b);
    if (this.options.since) {
      const before = new Set(imported);
      const top = imported.reduce((a, b) => Math.max(a, b), 0);
      ids = ids.filter((id) => id > top || before.has(id));
    }

    const bar = this.options.progress('events not in lists (by id)', ids.length);
    const deferred: { wire: Wire; lang: Lang }[] = [];
    for (let i = 0; i < ids.length; i += PER_PAGE) {
      const found: { wire: Wire; lang: Lang }[] = [];
      await pool(ids.slice(i, i + PER_PAGE), PROBE_CONCURRENCY, async (id) => {
        const got = await this.unlistedEvent(id);
        if (got) found.push(got);
        bar.advance();
      });
      found.sort((a, b) => idOf(a.wire)! - idOf(b.wire)!);
      await this.inPage(async () => {
        for (const f of found) await this.importPost('event', f.wire, f.lang, deferred);
      });
    }
    await this.inPage(async () => {
      for (const d of deferred) await this.importPost('event', d.wire, d.lang, null);
    });
    bar.done();
  }

  /** The event of an id, in its own language (so its linked records and terms are the ones it is linked to). */
  private async unlistedEvent(id: number): Promise<{ wire: Wire; lang: Lang } | null> {
    const got = await this.source.event(id);
    if ('record' in got) {
      let wire = got.record;
      const lang = (LANGS as unknown[]).includes(wire.lang) ? (wire.lang as Lang) : 'en';
      if (this.info.languageParam && lang !== 'en') {
        const again = await this.source.event(id, { [this.info.languageParam]: lang });
        if ('record' in again) wire = again.record;
      }
      return { wire, lang };
    }
    if (got.code === 'event-password-protected') {
      this.seenPosts.add(id);
      this.skip('events', id, PROTECTED);
    } else if (got.code === 'event-no-longer-available') {
      this.seenPosts.add(id);
      this.skip('events', id, 'it is in the trash and hidden from listings: the API does not show it');
    }
    // anything else is no event the credentials may read: another kind of post, a draft of someone else, no post
    return null;
  }
}

/** The summary of an import, as printed: one line per resource, then authors, notes, skipped records and warnings. */
export function reportLines(report: ImportReport, run: { from: string; since: string | null; dryRun: boolean; seconds: number }): string[] {
  const lines = [run.dryRun ? `dry run from ${run.from}: nothing was written; an import would do this:` : `imported from ${run.from} in ${run.seconds.toFixed(1)} s`];
  for (const resource of RESOURCES) {
    const t = report.tallies[resource];
    lines.push(`${resource}: ${t.created} created, ${t.updated} updated, ${t.unchanged} unchanged, ${t.skipped} skipped${run.since ? `, ${t.older} not modified since ${run.since} UTC` : ''}`);
  }
  const authors = [...report.authorsCreated].sort((a, b) => a - b);
  lines.push(`authors: ${authors.length} created${authors.length ? ` (user ids ${authors.join(', ')}; role author, no password)` : ''}`);
  if (report.publishedOnly) lines.push('note: only published records were readable (give --auth with the application password of an editor or administrator for the rest)');
  if (report.skipped.length) lines.push(`skipped (${report.skipped.length}):`, ...report.skipped.map((s) => `  ${s}`));
  if (report.warnings.length) lines.push(`warnings (${report.warnings.length}):`, ...report.warnings.map((w) => `  ${w}`));
  return lines;
}
