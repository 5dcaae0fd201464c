/**
 * Exact, narrow invalidation. Every answer records what it read, as tags; every write records what it changed, with
 * the same tags, in the change log row of its commit; each process reads the log's new rows and retires exactly the
 * answers whose tags a later change names.
 *
 * Tags, and why they are enough:
 * - a read by key names the row it read (`p12`: post 12 with its details, links, term links and revision count;
 *   `t7`: term 7 without its count, `n7`: term 7's count; `u3`, `m5`), and a read of a translation group names the
 *   group (`pg12`, `tg7`);
 * - any other read (a list, a search, a slug or name lookup) names the whole table it queries (`*event`, `*venue`,
 *   `*organizer`, `*category`, `*tag`, `*user`, `*media`): whatever row enters or leaves it, it is retired; a read of
 *   terms' names, slugs and tree only (a slug path, a lookup by name, descendants) names their shape (`~category`,
 *   `~tag`), which the counts an event write moves leave alone;
 * - a write names every row it changes, the groups those rows leave or join, and the tables they are in: a post write
 *   also names the counts of the terms it may move (old and new links: `n7`), not the terms themselves, so an answer
 *   that is stale by counts alone can be brought up to date by its counts (http/cache.ts); what moves rows it does not name one by one
 *   (trashing a venue unlinks events; deleting a term reparents children; purging trash) names everything (`*`).
 * So an answer is retired by a write only when the write changed a row the answer read by key or a table it queried:
 * exact (no change is missed) and narrow (a new event retires the lists, not every cached event).
 *
 * The rules of each repository method are in one table per repository (`posts`, `terms`, `users`, `media` below);
 * the table is typed over the repository interface, so a new method does not compile until it says what it reads
 * or changes.
 */
import { viewLinksQuery, type MediaRepository, type PostsRepository, type RecordWithLinks, type Repositories, type TermsRepository, type UsersRepository, type ViewLinks, type ViewLinksQuery } from './engine.js';
import type { PostRecord, PostType, Taxonomy } from './records.js';

/** A change or dependency; `*` alone is everything. */
export type Tag = string;
export const EVERYTHING = '*';

export const tag = {
  post: (id: number) => `p${id}`,
  postGroup: (group: number) => `pg${group}`,
  posts: (type: PostType) => `*${type}`,
  term: (id: number) => `t${id}`,
  /** A term's count of published events, which post writes move without changing the term. */
  termCount: (id: number) => `n${id}`,
  termGroup: (group: number) => `tg${group}`,
  terms: (taxonomy: Taxonomy) => `*${taxonomy}`,
  /** The names, slugs and tree of a taxonomy's terms (not their counts). */
  termShapes: (taxonomy: Taxonomy) => `~${taxonomy}`,
  user: (id: number) => `u${id}`,
  users: '*user',
  media: (id: number) => `m${id}`,
  allMedia: '*media',
};
const ALL_POSTS = [tag.posts('event'), tag.posts('venue'), tag.posts('organizer')];
const ALL_TERMS = [tag.terms('category'), tag.terms('tag')];
const TERM_SHAPES = [tag.termShapes('category'), tag.termShapes('tag')];
/** What a tag may look like (they are written into SQL text by the PostgreSQL engine: nothing else gets there). */
const TAG_SHAPE = /^(\*|[*~][a-z]+|[a-z]{1,2}\d+)$/;

/** The tags of what one answer read. An answer that read through a method without a rule is not kept at all. */
export class ReadSet {
  readonly tags = new Set<Tag>();
  /** Set when something was read that no rule describes: the answer must not be cached. */
  unknown = false;
  /**
   * The term objects the answer shows a count in (termView.ts adds each one it builds), by term id: where an answer
   * stale by counts alone has them (see http/cache.ts).
   */
  readonly shownCounts: { termId: number; wire: object }[] = [];
  /**
   * Until when (epoch ms) the clock leaves the answer as it is, when what computed it said so (`steadyUntil`); null
   * when nothing did: an answer whose times are computed to the second then holds for that second (see http/cache.ts).
   */
  clockSteadyUntil: number | null = null;

  add(tags: readonly Tag[]): void {
    for (const t of tags) this.tags.add(t);
  }

  /** Says that as far as the clock goes the answer holds until `ms` (Infinity: whatever the time); the earliest said stands. */
  steadyUntil(ms: number): void {
    this.clockSteadyUntil = Math.min(this.clockSteadyUntil ?? Infinity, ms);
  }
}

/** The most tags one change log row names: beyond, the write names everything (a bulk import, say). */
const MAX_CHANGE_TAGS = 256;

/** The tags of what one write (or one batch of writes) changed. */
export class ChangeSet {
  private readonly tags = new Set<Tag>();
  private everything = false;

  add(tags: readonly Tag[]): void {
    if (this.everything) return;
    for (const t of tags) {
      if (t === EVERYTHING || !TAG_SHAPE.test(t)) {
        this.everything = true;
        this.tags.clear();
        return;
      }
      this.tags.add(t);
    }
    if (this.tags.size > MAX_CHANGE_TAGS) {
      this.everything = true;
      this.tags.clear();
    }
  }

  merge(other: ChangeSet): void {
    if (other.everything) this.add([EVERYTHING]);
    else this.add([...other.tags]);
  }

  /** The change log's `tags` column: space-separated, `*` for everything. */
  toString(): string {
    return this.everything ? EVERYTHING : [...this.tags].join(' ');
  }
}

/** A change log row as a process reads it. */
export interface LoggedChange {
  seq: number;
  tags: string;
}

/** The most new change log rows a reading fetches; beyond, the process retires everything instead. */
export const MAX_CHANGES_READ = 1000;

/**
 * A process's view of the change log, for its caches. `observe` is fed each reading of the log (the newest
 * sequence, the rows after the one seen before, whether a scheduled record fell due); it advances a local clock,
 * the stamp, once per reading that saw something new, and remembers for each tag the stamp it last changed at. An
 * answer computed after seeing stamp S is still exact while every tag it read last changed at or before S.
 */
export class ChangeTracker {
  private seq = -1;
  private stamp = 0;
  /** Answers computed before this stamp are retired (everything changed: a `*` row, rows missed, a record fell due). */
  private floor = 0;
  private readonly changedAt = new Map<Tag, number>();

  /** The stamp of what has been observed so far: what an answer computed from now on is current as of. */
  get now(): number {
    return this.stamp;
  }

  /** The last sequence observed (-1 before the first reading). */
  get lastSeq(): number {
    return this.seq;
  }

  /**
   * One reading of the log: its newest sequence, the rows after `lastSeq` as read (oldest first; null when they
   * could not all be read), and whether a scheduled record fell due since the last reading.
   */
  observe(seq: number, rows: readonly LoggedChange[] | null, fellDue: boolean): void {
    if (fellDue) this.retireAll();
    if (seq === this.seq) return;
    // a sequence that went back is a database restored from a backup: anything may have changed
    if (this.seq < 0 || rows === null || seq < this.seq) {
      this.seq = seq;
      this.retireAll();
      return;
    }
    this.stamp++;
    for (const row of rows) {
      if (row.seq <= this.seq) continue; // read by an earlier reading already
      if (row.tags === EVERYTHING) {
        this.floor = this.stamp;
        continue;
      }
      for (const t of row.tags.split(' ')) if (t !== '') this.changedAt.set(t, this.stamp);
    }
    this.seq = Math.max(this.seq, seq);
    // a process that ran long enough to remember many tags starts afresh rather than grow without bound
    if (this.changedAt.size > 200_000) this.retireAll();
  }

  /** Whether an answer that read `tags` after seeing stamp `at` is still exact. */
  isCurrent(tags: Iterable<Tag>, at: number): boolean {
    if (at < this.floor) return false;
    for (const t of tags) if ((this.changedAt.get(t) ?? 0) > at) return false;
    return true;
  }

  /**
   * The tags of `tags` changed since stamp `at` (none: the answer is still exact); null when everything changed since
   * (a `*` change, changes missed, a record fell due).
   */
  changedSince(tags: Iterable<Tag>, at: number): Tag[] | null {
    if (at < this.floor) return null;
    const changed: Tag[] = [];
    for (const t of tags) if ((this.changedAt.get(t) ?? 0) > at) changed.push(t);
    return changed;
  }

  private retireAll(): void {
    this.stamp++;
    this.floor = this.stamp;
    this.changedAt.clear();
  }
}

type Method = (...args: never[]) => Promise<unknown>;
type ArgsOf<F> = F extends (...args: infer A) => Promise<unknown> ? A : never;
type ResultOf<F> = F extends (...args: never[]) => Promise<infer R> ? R : never;

/**
 * What a repository method reads (`reads`: its tags from its arguments and result) or changes (`before` / `after`:
 * its tags, computed with the write's own repositories before or after it runs, so a rule can read the state it
 * replaces).
 */
type Rule<F, R> =
  | { reads: (args: ArgsOf<F>, result: ResultOf<F>) => readonly Tag[] }
  | {
      before?: (args: ArgsOf<F>, repos: R) => Promise<readonly Tag[]> | readonly Tag[];
      after?: (args: ArgsOf<F>, result: ResultOf<F>, repos: R) => Promise<readonly Tag[]> | readonly Tag[];
    };
type Rules<T, R> = { [K in keyof T]: Rule<T[K], R> };

const none = (): readonly Tag[] => [];

/** The tags a post write names: the row, its groups, its table, and the terms whose counts it may move. */
function postChange(record: Pick<PostRecord, 'id' | 'type' | 'translationGroup'>, before: PostRecord | null): Tag[] {
  const tags = [tag.post(record.id), tag.posts(record.type), tag.postGroup(record.translationGroup)];
  if (before) tags.push(tag.postGroup(before.translationGroup));
  for (const r of [record, before]) {
    if (r && 'termIds' in r) for (const id of (r as { termIds: number[] }).termIds) tags.push(tag.termCount(id));
  }
  if (record.type === 'event' || before?.type === 'event') tags.push(...ALL_TERMS);
  return tags;
}

/** What a read of a term by key names: the term and its count. */
const termRead = (id: number): Tag[] => [tag.term(id), tag.termCount(id)];

/**
 * What a page's view read besides its posts: the linked records and the groups of their translations, the members
 * of the groups shown, the terms and their translation groups, the images; the ids asked for count too (a record
 * that does not exist yet may be created).
 */
function viewLinksRead(q: ViewLinksQuery, found: ViewLinks): Tag[] {
  const tags = [...q.venueIds, ...q.organizerIds].map(tag.post);
  for (const linked of [...found.venues.values(), ...found.organizers.values()]) tags.push(tag.post(linked.id), tag.postGroup(linked.translationGroup));
  for (const groups of Object.values(q.groups)) for (const g of groups) tags.push(tag.postGroup(g));
  for (const byGroup of Object.values(found.members)) for (const g of byGroup.keys()) tags.push(tag.postGroup(g));
  tags.push(...q.termIds.flatMap(termRead));
  for (const term of found.terms.values()) tags.push(...termRead(term.id), tag.termGroup(term.translationGroup));
  tags.push(...q.imageIds.map(tag.media), ...[...found.media.keys()].map(tag.media));
  return tags;
}

const posts: Rules<PostsRepository, Repositories> = {
  typeOf: { reads: ([id]) => [tag.post(id)] },
  findById: { reads: ([id]) => [tag.post(id)] },
  findOfType: { reads: ([, id]) => [tag.post(id)] },
  findMany: { reads: ([, ids]) => ids.map(tag.post) },
  resolveSlug: { reads: ([type]) => [tag.posts(type)] },
  slugOwner: { reads: ([type]) => [tag.posts(type)] },
  numberedSlugs: { reads: ([type]) => [tag.posts(type)] },
  sameName: { reads: ([type]) => [tag.posts(type)] },
  explainSameName: { reads: none },
  translations: { reads: ([, groups]) => groups.map(tag.postGroup) },
  translationMembers: { reads: ([, groups]) => groups.map(tag.postGroup) },
  viewLinks: { reads: ([q], found) => viewLinksRead(q, found) },
  findWithLinks: {
    // typed as never: the method is generic
    reads: ([, id, lang], result) => {
      const found = result as RecordWithLinks<PostType> | null;
      return found ? [tag.post(id), ...viewLinksRead(viewLinksQuery([found.record], lang), found.links)] : [tag.post(id)];
    },
  },
  revisions: { reads: ([ids]) => ids.map(tag.post) },
  idsWithLineageFrom: { reads: () => ALL_POSTS },
  nextScheduled: { reads: () => ALL_POSTS },
  listEvents: { reads: () => [...ALL_POSTS, ...TERM_SHAPES] },
  listLinked: { reads: () => [...ALL_POSTS, ...TERM_SHAPES] },
  listChanges: { reads: () => [...ALL_POSTS, ...TERM_SHAPES] },
  explainEventList: { reads: none },
  explainLinkedList: { reads: none },
  // what the new record holds is what was inserted: only a translation's group is read (one of its translation's)
  insert: {
    after: async ([record], id, repos) =>
      postChange({ ...record, id, translationGroup: record.translationOf === null ? id : (await repos.posts.findById(record.translationOf))!.translationGroup }, null),
  },
  create: { after: (_, created) => (created ? postChange(created, null) : []) },
  insertAs: { after: async ([id], _, repos) => postChange((await repos.posts.findById(id))!, null) },
  setTranslationGroup: {
    before: async ([id, group], repos) => {
      const current = (await repos.posts.findById(id))!;
      return postChange({ ...current, translationGroup: group }, current);
    },
  },
  update: { before: async ([record], repos) => postChange(record, await repos.posts.findById(record.id)) },
  // links of other records move (events lose the venue): everything
  unlinkFromEvents: { before: () => [EVERYTHING] },
  purgeTrash: { before: () => [EVERYTHING] },
};

/** The tags a term write names: the row, its group, its taxonomy's table, and the events that embed it (by the term tag). */
async function termChange(id: number, repos: Repositories, group?: number): Promise<Tag[]> {
  const term = await repos.terms.findById(id);
  const tags = [tag.term(id), ...ALL_TERMS, ...TERM_SHAPES];
  if (term) tags.push(tag.termGroup(term.translationGroup));
  if (group !== undefined) tags.push(tag.termGroup(group));
  return tags;
}

const terms: Rules<TermsRepository, Repositories> = {
  findById: { reads: ([id]) => termRead(id) },
  taxonomies: { reads: ([ids]) => ids.flatMap(termRead) },
  withDescendants: { reads: () => [tag.termShapes('category')] },
  findBySlugOrName: { reads: ([taxonomy]) => [tag.termShapes(taxonomy)] },
  explainNameLookups: { reads: none },
  uniqueSlug: { reads: ([taxonomy]) => [tag.termShapes(taxonomy)] },
  resolve: { reads: ([taxonomy]) => [tag.termShapes(taxonomy)] },
  list: { reads: () => [...ALL_TERMS, ...ALL_POSTS] },
  translations: { reads: ([, groups]) => groups.map(tag.termGroup) },
  slugPaths: { reads: () => [tag.termShapes('category')] },
  findSameName: { reads: ([taxonomy]) => [tag.termShapes(taxonomy)] },
  slugOwner: { reads: ([taxonomy]) => [tag.termShapes(taxonomy)] },
  isSelfOrAncestor: { reads: () => [tag.termShapes('category')] },
  groupOf: { reads: ([id], found) => (found ? [tag.term(id), tag.termGroup(found.group)] : [tag.term(id)]) },
  sourceOf: { reads: ([id]) => [tag.term(id)] },
  insert: { after: (_, id, repos) => termChange(id, repos) },
  insertAs: { after: ([id], _, repos) => termChange(id, repos) },
  setTranslation: { before: ([id, , group], repos) => termChange(id, repos, group) },
  update: { before: ([id], repos) => termChange(id, repos) },
  // children move to the parent and events lose the term: everything
  remove: { before: () => [EVERYTHING] },
};

const users: Rules<UsersRepository, Repositories> = {
  findByLoginOrEmail: { reads: () => [tag.users] },
  findById: { reads: ([id]) => [tag.user(id)] },
  list: { reads: () => [tag.users] },
  passwordsOf: { reads: ([id]) => [tag.user(id)] },
  create: { after: (_, user) => [tag.user(user.id), tag.users] },
  setRole: { before: ([id]) => [tag.user(id), tag.users] },
  // records change hands
  remove: { before: () => [EVERYTHING] },
  addPassword: { before: ([p]) => [tag.user(p.userId), tag.users] },
  revokePassword: { before: ([id]) => [tag.user(id), tag.users] },
  replaceBootstrapPassword: { before: ([p]) => [tag.user(p.userId), tag.users] },
  // bookkeeping: no answer shows when a password was last used
  touchPassword: { before: none },
};

const media: Rules<MediaRepository, Repositories> = {
  findById: { reads: ([id]) => [tag.media(id)] },
  findByUrl: { reads: () => [tag.allMedia] },
  register: { after: (_, found) => [tag.media(found.id), tag.allMedia] },
  save: { after: (_, id) => [tag.media(id), tag.allMedia] },
};

const RULES = { posts, terms, users, media } as const;
type RepoName = keyof typeof RULES;

/** A recording view of one repository: the repository it calls, and where the reads of this unit of work go. */
interface ReadView {
  target: Record<string, Method>;
  reads: ReadSet;
}

/**
 * The methods of each repository's recording view, built once: a read then costs one small object per repository,
 * not a closure per method.
 */
const READ_VIEWS = Object.fromEntries((Object.keys(RULES) as RepoName[]).map((name) => {
  const methods: Record<string, (this: ReadView, ...args: never[]) => Promise<unknown>> = {};
  for (const [method, rule] of Object.entries(RULES[name] as Record<string, Rule<Method, Repositories>>)) {
    methods[method] = 'reads' in rule
      ? async function (this: ReadView, ...args: never[]) {
          const result = await this.target[method]!(...args);
          this.reads.add(rule.reads(args as never, result as never));
          return result;
        }
      : function (this: ReadView, ...args: never[]) {
          this.reads.unknown = true; // a write in a read: nothing about it belongs in a cache
          return this.target[method]!(...args);
        };
  }
  return [name, methods];
})) as Record<RepoName, object>;

/** The repositories of a read, recording what each call reads into `reads`. */
export function recordingReads(repos: Repositories, reads: ReadSet): Repositories {
  const view = (name: RepoName) => Object.assign(Object.create(READ_VIEWS[name]) as object, { target: repos[name], reads });
  return { posts: view('posts'), terms: view('terms'), users: view('users'), media: view('media') } as unknown as Repositories;
}

/** A recording view of one repository in a write: the repository it calls, the write's own repositories (what the rules read), and where the changes go. */
interface WriteView {
  target: Record<string, Method>;
  repos: Repositories;
  changes: ChangeSet;
}

/**
 * The methods of each repository's recording view in a write, built once (as READ_VIEWS): a write then costs one
 * small object per repository, not a closure per method on a fresh object whose prototype is the repository.
 */
const WRITE_VIEWS = Object.fromEntries((Object.keys(RULES) as RepoName[]).map((name) => {
  const methods: Record<string, (this: WriteView, ...args: never[]) => Promise<unknown>> = {};
  for (const [method, rule] of Object.entries(RULES[name] as Record<string, Rule<Method, Repositories>>)) {
    methods[method] = 'reads' in rule
      ? function (this: WriteView, ...args: never[]) {
          return this.target[method]!(...args);
        }
      : async function (this: WriteView, ...args: never[]) {
          if (rule.before) this.changes.add(await rule.before(args as never, this.repos));
          const result = await this.target[method]!(...args);
          if (rule.after) this.changes.add(await rule.after(args as never, result as never, this.repos));
          return result;
        };
  }
  return [name, methods];
})) as Record<RepoName, object>;

/** The repositories of a write, recording what each call changes into `changes` (the unit's other members as they are). */
export function recordingWrites<R extends Repositories>(repos: R, changes: ChangeSet): R {
  const view = (name: RepoName) => Object.assign(Object.create(WRITE_VIEWS[name]) as object, { target: repos[name], repos, changes });
  return Object.assign({}, repos, { posts: view('posts'), terms: view('terms'), users: view('users'), media: view('media') }) as unknown as R;
}

