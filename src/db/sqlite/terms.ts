import type { Lang } from '../../domain/context.js';
import { collationKey, foldForSearch, slugify } from '../../domain/text.js';
import type { TermsRepository, Translations } from '../engine.js';
import type { Taxonomy, TermInput, TermListQuery, TermRecord } from '../records.js';
import type { Db } from './connection.js';
import { explainStatement, objectRows, StatementCache } from './sql.js';
import { utcNowWire } from '../generation.js';

interface TermRow { id: number; taxonomy: string; name: string; slug: string; description: string; parent_id: number | null; lang: string; translation_group: number; count: number }

/**
 * Published events of a term: the stored count (migrations 0003 and 0011: events without a password) less scheduled
 * events whose date has not come, one range of the term's scheduled links (migration 0019).
 */
export const COUNT = `(t.event_count - (SELECT COUNT(*) FROM event_terms et WHERE et.term_id = t.id AND et.scheduled_utc > @now))`;

const toTerm = (r: TermRow): TermRecord => ({
  id: r.id, taxonomy: r.taxonomy as Taxonomy, name: r.name, slug: r.slug, description: r.description,
  parentId: r.parent_id ?? 0, lang: r.lang as Lang, translationGroup: r.translation_group, count: r.count,
});

const ORDER: Record<TermListQuery['orderBy'], string> = {
  name: 'name_key', id: 'id', slug: 'slug', count: 'count', description: 'description COLLATE NOCASE',
  // `listed.id`, the term's: json_each has an `id` column of its own, which a bare `id` here would name
  include: '(SELECT j.key FROM json_each(@include) j WHERE j.value = listed.id)', none: 'id',
};

/** Event categories and tags. */
export class SqliteTerms implements TermsRepository {
  private readonly stmts;
  private readonly cache: StatementCache;

  constructor(private readonly db: Db) {
    this.cache = new StatementCache(db);
    this.stmts = {
      byId: db.prepare<{ id: number; now: string }, TermRow>(`SELECT t.*, ${COUNT} AS count FROM terms t WHERE t.id = @id`),
      // from the ids to the terms, in the order asked (`t.id IN (SELECT value FROM json_each(@ids))` scanned every term)
      taxonomies: db.prepare<{ ids: string }, { id: number; taxonomy: Taxonomy }>('SELECT t.id, t.taxonomy FROM json_each(@ids) j CROSS JOIN terms t ON t.id = j.value'),
      // the terms asked for, and for those in another language the terms of their translation groups in this one
      // (unique per group): the second part stops at each asked term already in the language, and reads the tables
      // in the order written (CROSS JOIN), so it never scans the terms. One statement of the asked ids joined to
      // their groups' members cost 47 µs for twelve terms in their own language, this one 26.
      // from the ids to the terms, as taxonomies
      withTranslations: objectRows(db.prepare<[{ ids: string; lang: string; now: string }], TermRow>(`SELECT t.*, ${COUNT} AS count FROM json_each(@ids) j CROSS JOIN terms t ON t.id = j.value
        UNION ALL
        SELECT t.*, ${COUNT} AS count FROM json_each(@ids) j CROSS JOIN terms a ON a.id = j.value AND a.lang <> @lang
          CROSS JOIN terms t ON t.taxonomy = a.taxonomy AND t.translation_group = a.translation_group AND t.lang = @lang`)),
      descendants: db.prepare<{ ids: string }, { id: number }>(
        `WITH RECURSIVE down(id, depth) AS (SELECT value, 0 FROM json_each(@ids)
           UNION SELECT t.id, down.depth + 1 FROM terms t JOIN down ON t.parent_id = down.id WHERE down.depth < 64)
         SELECT DISTINCT id FROM down`,
      ),
      idByName: db.prepare<[string, string, string], { id: number }>('SELECT id FROM terms WHERE taxonomy = ? AND lang = ? AND name_key = ? ORDER BY id LIMIT 1'),
      idBySlug: db.prepare<[string, string, string], { id: number }>('SELECT id FROM terms WHERE taxonomy = ? AND lang = ? AND slug = ?'),
      slugOwner: db.prepare<[string, string, string], { id: number }>('SELECT id FROM terms WHERE taxonomy = ? AND lang = ? AND slug = ?'),
      sameName: db.prepare<{ taxonomy: string; lang: string; name: string; parent: number | null; anyParent: number }, { id: number }>(
        `SELECT id FROM terms WHERE taxonomy = @taxonomy AND lang = @lang AND name = @name COLLATE NOCASE
           AND (@anyParent = 1 OR parent_id IS @parent) LIMIT 1`,
      ),
      insert: db.prepare(`INSERT INTO terms (taxonomy, name, name_key, slug, description, parent_id, lang, translation_group)
                          VALUES (@taxonomy, @name, @nameKey, @slug, @description, @parent, @lang, 0)`),
      setGroup: db.prepare('UPDATE terms SET translation_group = @group WHERE id = @id'),
      insertAs: db.prepare(`INSERT INTO terms (id, taxonomy, name, name_key, slug, description, parent_id, lang, translation_group)
                            VALUES (@id, @taxonomy, @name, @nameKey, @slug, @description, @parent, @lang, @group)`),
      setLang: db.prepare('UPDATE terms SET lang = @lang WHERE id = @id'),
      sourceOf: db.prepare<[number], { source: string }>('SELECT source FROM term_sources WHERE term_id = ?'),
      setSource: db.prepare('INSERT INTO term_sources (term_id, source) VALUES (@id, @source) ON CONFLICT (term_id) DO UPDATE SET source = excluded.source'),
      groupLangs: db.prepare<[string, number], { lang: string; id: number }>('SELECT lang, id FROM terms WHERE taxonomy = ? AND translation_group = ?'),
      update: db.prepare('UPDATE terms SET name = @name, name_key = @nameKey, slug = @slug, description = @description, parent_id = @parent WHERE id = @id'),
      reparent: db.prepare('UPDATE terms SET parent_id = @to WHERE parent_id = @from'),
      remove: db.prepare('DELETE FROM terms WHERE id = ?'),
      translations: db.prepare<{ taxonomy: string; groups: string }, { translation_group: number; lang: string; id: number }>(
        'SELECT translation_group, lang, id FROM terms WHERE taxonomy = @taxonomy AND translation_group IN (SELECT value FROM json_each(@groups)) ORDER BY id',
      ),
      ancestry: db.prepare<{ ids: string }, { start: number; slug: string }>(
        `WITH RECURSIVE chain(start, slug, parent_id, depth) AS (
           SELECT id, slug, parent_id, 0 FROM terms WHERE id IN (SELECT value FROM json_each(@ids))
           UNION ALL
           SELECT c.start, p.slug, p.parent_id, c.depth + 1 FROM chain c JOIN terms p ON p.id = c.parent_id WHERE c.depth < 64
         ) SELECT start, slug FROM chain ORDER BY start, depth DESC`,
      ),
      isAncestor: db.prepare<{ ancestor: number; id: number }, { found: number }>(
        `WITH RECURSIVE up(id, depth) AS (SELECT parent_id, 0 FROM terms WHERE id = @id
           UNION ALL SELECT t.parent_id, up.depth + 1 FROM up JOIN terms t ON t.id = up.id WHERE up.depth < 64)
         SELECT 1 AS found FROM up WHERE id = @ancestor LIMIT 1`,
      ),
    };
  }

  async findById(id: number): Promise<TermRecord | null> {
    const row = this.stmts.byId.get({ id, now: utcNowWire() });
    return row ? toTerm(row) : null;
  }

  /** The given categories and all their descendants (a category filter matches child categories too). */
  async withDescendants(ids: number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    return this.stmts.descendants.all({ ids: JSON.stringify([...new Set(ids)]) }).map((r) => r.id);
  }

  async taxonomies(ids: number[]): Promise<Map<number, Taxonomy>> {
    if (ids.length === 0) return new Map();
    return new Map(this.stmts.taxonomies.all({ ids: JSON.stringify([...new Set(ids)]) }).map((r) => [r.id, r.taxonomy]));
  }

  /** The terms asked for, and the terms of their translation groups in a language (for PostsRepository.viewLinks). */
  async withTranslations(ids: number[], lang: Lang): Promise<Map<number, TermRecord>> {
    if (ids.length === 0) return new Map();
    return new Map(this.stmts.withTranslations({ ids: JSON.stringify([...new Set(ids)]), lang, now: utcNowWire() }).map((r) => [r.id, toTerm(r)]));
  }

  /**
   * The term of this taxonomy and language a text names, as WordPress's `term_exists` finds it: the text made a slug
   * (`Live Music` → `live-music`), failing that a name WordPress's collation finds equal (`café` = `CAFE`).
   */
  async findBySlugOrName(taxonomy: Taxonomy, lang: Lang, text: string): Promise<number | null> {
    const slug = slugify(text);
    return (slug ? this.stmts.idBySlug.get(taxonomy, lang, slug)?.id : undefined) ?? this.stmts.idByName.get(taxonomy, lang, collationKey(text))?.id ?? null;
  }

  /** The plans of the lookups of `findBySlugOrName`. */
  async explainNameLookups(): Promise<string[]> {
    return [this.stmts.idBySlug, this.stmts.idByName].flatMap((stmt) => explainStatement(this.db, stmt, 'category', 'en', 'x'));
  }

  /** WordPress's `wp_unique_term_slug`: a child category first tries `{slug}-{parent slug}`, then `-2`, `-3`, … */
  async uniqueSlug(taxonomy: Taxonomy, lang: Lang, slug: string, parentSlug: string | null): Promise<string> {
    const free = (s: string) => this.stmts.slugOwner.get(taxonomy, lang, s) === undefined;
    if (free(slug)) return slug;
    if (parentSlug && free(`${slug}-${parentSlug}`)) return `${slug}-${parentSlug}`;
    for (let n = 2; ; n++) if (free(`${slug}-${n}`)) return `${slug}-${n}`;
  }

  /** The term of this taxonomy and language named by an id or a slug (sanitised as WordPress does), or null. */
  async resolve(taxonomy: Taxonomy, lang: Lang, ref: number | string): Promise<number | null> {
    if (typeof ref === 'number') {
      const term = await this.findById(ref);
      return term && term.taxonomy === taxonomy ? term.id : null;
    }
    return this.stmts.idBySlug.get(taxonomy, lang, slugify(ref))?.id ?? null;
  }

  async list(q: TermListQuery): Promise<{ items: TermRecord[]; total: number }> {
    const where = ['t.taxonomy = @taxonomy', 't.lang = @lang'];
    // as MySQL's LIKE under WordPress's collation: case and accents ignored
    if (q.search !== undefined) where.push(`(almanac_fold(t.name) LIKE @search ESCAPE '\\' OR t.slug LIKE @search ESCAPE '\\')`);
    if (q.include) where.push('t.id IN (SELECT value FROM json_each(@include))');
    if (q.exclude) where.push('t.id NOT IN (SELECT value FROM json_each(@exclude))');
    if (q.parentId !== undefined) where.push(q.parentId === 0 ? 't.parent_id IS NULL' : 't.parent_id = @parentId');
    if (q.event?.linksHidden) where.push('0');
    else if (q.event) where.push('t.id IN (SELECT term_id FROM event_terms WHERE event_id = @eventId)');
    if (q.slug !== undefined) where.push('t.slug = @slug');
    const base = `SELECT * FROM (SELECT t.*, ${COUNT} AS count FROM terms t WHERE ${where.join(' AND ')}) listed${q.hideEmpty ? ' WHERE count > 0' : ''}`;
    const direction = q.descending ? 'DESC' : 'ASC';
    const params = {
      taxonomy: q.taxonomy, lang: q.lang, now: utcNowWire(), limit: q.limit, offset: q.offset,
      search: q.search === undefined ? undefined : `%${foldForSearch(q.search).replace(/[\\%_]/g, (c) => '\\' + c)}%`,
      include: q.include ? JSON.stringify(q.include) : undefined, exclude: q.exclude ? JSON.stringify(q.exclude) : undefined,
      parentId: q.parentId || undefined, eventId: q.event && !q.event.linksHidden ? q.event.id : undefined, slug: q.slug === undefined ? undefined : slugify(q.slug),
    };
    const bound = Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined));
    const orderBy = q.orderBy === 'include' && !q.include ? ORDER.name : ORDER[q.orderBy];
    const rows = this.cache.get<TermRow>(`${base} ORDER BY ${orderBy} ${direction}, id ${direction} LIMIT @limit OFFSET @offset`).all(bound);
    const { total } = this.cache.get<{ total: number }>(`SELECT COUNT(*) AS total FROM (${base})`).get(without(bound, 'limit', 'offset'))!;
    return { items: rows.map(toTerm), total };
  }

  /** `{lang: id}` of each translation group asked for. */
  async translations(taxonomy: Taxonomy, groups: number[]): Promise<Translations> {
    const out = new Map<number, Partial<Record<Lang, number>>>();
    if (groups.length === 0) return out;
    for (const r of this.stmts.translations.all({ taxonomy, groups: JSON.stringify([...new Set(groups)]) })) {
      const entry = out.get(r.translation_group) ?? {};
      entry[r.lang as Lang] = r.id;
      out.set(r.translation_group, entry);
    }
    return out;
  }

  /** Each category's slug path from its top ancestor down (`music/jazz`), for archive URLs. */
  async slugPaths(ids: number[]): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    if (ids.length === 0) return out;
    for (const r of this.stmts.ancestry.all({ ids: JSON.stringify([...new Set(ids)]) })) {
      out.set(r.start, out.has(r.start) ? `${out.get(r.start)}/${r.slug}` : r.slug);
    }
    return out;
  }

  /**
   * A term of the same taxonomy and language with this name (any ASCII case) — under `parentId` for categories. Not
   * the collation key: WordPress's `wp_insert_term` checks its collation's matches again with `strtolower`, so `Café`
   * and `Cafe` are two terms (their slugs then differ by a suffix).
   */
  async findSameName(taxonomy: Taxonomy, lang: Lang, name: string, parentId: number): Promise<number | null> {
    const anyParent = taxonomy === 'tag' ? 1 : 0;
    return this.stmts.sameName.get({ taxonomy, lang, name, parent: parentId || null, anyParent })?.id ?? null;
  }

  async slugOwner(taxonomy: Taxonomy, lang: Lang, slug: string): Promise<number | null> {
    return this.stmts.slugOwner.get(taxonomy, lang, slug)?.id ?? null;
  }

  /** Whether `ancestor` is `id` itself or above it in the category tree. */
  async isSelfOrAncestor(ancestor: number, id: number): Promise<boolean> {
    return ancestor === id || Boolean(this.stmts.isAncestor.get({ ancestor, id }));
  }

  /** Languages already present in a term's translation group. */
  async groupOf(id: number): Promise<{ group: number; langs: Partial<Record<Lang, number>> } | null> {
    const term = await this.findById(id);
    if (!term) return null;
    const langs: Partial<Record<Lang, number>> = {};
    for (const r of this.stmts.groupLangs.all(term.taxonomy, term.translationGroup)) langs[r.lang as Lang] = r.id;
    return { group: term.translationGroup, langs };
  }

  /** Inserts a term; the caller checks uniqueness in the same unit of work. */
  async insert(input: TermInput): Promise<number> {
    const id = Number(this.stmts.insert.run({ taxonomy: input.taxonomy, name: input.name, nameKey: collationKey(input.name), slug: input.slug, description: input.description, parent: input.parentId || null, lang: input.lang }).lastInsertRowid);
    const group = input.translationOf === null ? id : (await this.findById(input.translationOf))!.translationGroup;
    this.stmts.setGroup.run({ id, group });
    return id;
  }

  /**
   * Inserts a term under a given id and translation group, recording the site it was imported from; The id must be free.
   */
  async insertAs(id: number, translationGroup: number, input: Omit<TermInput, 'translationOf'>, source: string): Promise<void> {
    this.stmts.insertAs.run({ id, taxonomy: input.taxonomy, name: input.name, nameKey: collationKey(input.name), slug: input.slug, description: input.description, parent: input.parentId || null, lang: input.lang, group: translationGroup });
    this.stmts.setSource.run({ id, source });
  }

  /** Changes the language and translation group of a term (an import following its source). */
  async setTranslation(id: number, lang: Lang, translationGroup: number): Promise<void> {
    this.stmts.setLang.run({ id, lang });
    this.stmts.setGroup.run({ id, group: translationGroup });
  }

  /** The site a term was imported from (`example.org/blog`), or null for a term made here. */
  async sourceOf(id: number): Promise<string | null> {
    return this.stmts.sourceOf.get(id)?.source ?? null;
  }

  async update(id: number, fields: { name: string; slug: string; description: string; parentId: number }): Promise<void> {
    this.stmts.update.run({ id, name: fields.name, nameKey: collationKey(fields.name), slug: fields.slug, description: fields.description, parent: fields.parentId || null });
  }

  /** Deletes a term; its children move up to its parent and events lose it. */
  async remove(term: TermRecord): Promise<void> {
    this.stmts.reparent.run({ from: term.id, to: term.parentId || null });
    this.stmts.remove.run(term.id);
  }
}

function without<T extends Record<string, unknown>>(o: T, ...keys: string[]): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k))) as Partial<T>;
}

