import type { Lang } from '../../domain/context.js';
import { collationKey, foldForSearch, slugify } from '../../domain/text.js';
import type { TermsRepository, Translations } from '../engine.js';
import { utcNowWire } from '../generation.js';
import type { Taxonomy, TermInput, TermListQuery, TermRecord } from '../records.js';
import type { Queryable } from './connection.js';
import { named, query } from './sql.js';

export interface TermRow { id: number; taxonomy: string; name: string; slug: string; description: string; parent_id: number | null; lang: string; translation_group: number; count: number }

/**
 * Published events of a term: the stored count (migrations 0003 and 0011: events without a password) less scheduled
 * events whose date has not come, one range of the term's scheduled links (migration 0019).
 */
const COUNT = `(t.event_count - (SELECT COUNT(*) FROM event_terms et WHERE et.term_id = t.id AND et.scheduled_utc > @now))`;
/**
 * COUNT for every term of a list at once (its total under `hide_empty`, an order by count): the scheduled links read
 * once, the whole of their partial index event_terms_scheduled (migration 0019), and those not yet due grouped by
 * term, rather than looked up for each term (20,000 tags and 2,000 scheduled events: 6 ms instead of 27). A link
 * keeps its event's date once it is due (nothing rewrites a scheduled event when its date comes), so the index holds
 * every event ever scheduled; driven from the events not yet due (events_scheduled) instead, the same total read six
 * times the pages.
 */
const LISTED_TERMS = `terms t LEFT JOIN (SELECT term_id, COUNT(*) AS due FROM event_terms WHERE scheduled_utc > @now GROUP BY term_id) scheduled
  ON scheduled.term_id = t.id`;
const LISTED_COUNT = '(t.event_count - COALESCE(scheduled.due, 0))';
/** The count with `now` as the numbered parameter given (`$2`). */
export const TERM_COUNT = (now: string) => COUNT.replace('@now', now);
const COUNT_AT_2 = TERM_COUNT('$2');

export const termFromRow = (r: TermRow): TermRecord => ({
  id: r.id, taxonomy: r.taxonomy as Taxonomy, name: r.name, slug: r.slug, description: r.description,
  parentId: r.parent_id ?? 0, lang: r.lang as Lang, translationGroup: r.translation_group, count: r.count,
});

/**
 * The orders of a list, as SQLite's: names by their collation key (migration 0010), descriptions by octets with
 * ASCII letters lower-cased (SQLite's NOCASE; `lower` under "C" lower-cases ASCII only).
 */
const ORDER: Record<TermListQuery['orderBy'], string> = {
  name: 'name_key COLLATE "C"', id: 'id', slug: 'slug', count: 'count', description: 'lower(description COLLATE "C")',
  include: 'array_position(@include::bigint[], id)', none: 'id',
};

const SLUG_OWNER = 'SELECT id FROM terms WHERE taxonomy = $1 AND lang = $2 AND slug = $3';
/** Through terms_by_name_key (migration 0010). */
const ID_BY_NAME_KEY = 'SELECT id FROM terms WHERE taxonomy = $1 AND lang = $2 AND name_key = $3 ORDER BY id LIMIT 1';
const INSERT_TERM = `INSERT INTO terms (id, taxonomy, name, slug, description, parent_id, lang, translation_group, name_key, search_name)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`;

/**
 * What a term's name is compared by, computed here as on SQLite (migration 0010): its collation key (names found by
 * name, the order by name) and its text folded for search.
 */
const keysOf = (name: string): [nameKey: string, searchName: string] => [collationKey(name), foldForSearch(name)];

/** Event categories and tags on PostgreSQL: the same records and rules as the SQLite engine's repository. */
export class PostgresTerms implements TermsRepository {
  /** `lists`: where list statements go (the lists pool, or the same transaction's connection as `db`). */
  constructor(private readonly db: Queryable, private readonly lists: Queryable = db) {}

  async findById(id: number): Promise<TermRecord | null> {
    const rows = await query<TermRow>(this.db, `SELECT t.*, ${COUNT_AT_2} AS count FROM terms t WHERE t.id = $1`, [id, utcNowWire()]);
    return rows[0] ? termFromRow(rows[0]) : null;
  }

  async taxonomies(ids: number[]): Promise<Map<number, Taxonomy>> {
    if (ids.length === 0) return new Map();
    const rows = await query<{ id: number; taxonomy: Taxonomy }>(this.db, 'SELECT id, taxonomy FROM terms WHERE id = ANY($1::bigint[])', [[...new Set(ids)]]);
    return new Map(rows.map((r) => [r.id, r.taxonomy]));
  }

  async withDescendants(ids: number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    const rows = await query<{ id: number }>(this.db,
      `WITH RECURSIVE down(id, depth) AS (SELECT unnest($1::bigint[]), 0
         UNION SELECT t.id, down.depth + 1 FROM terms t JOIN down ON t.parent_id = down.id WHERE down.depth < 64)
       SELECT DISTINCT id FROM down`, [[...new Set(ids)]]);
    return rows.map((r) => r.id);
  }

  /**
   * The term of this taxonomy and language a text names, as WordPress's `term_exists` finds it: the text made a slug
   * (`Live Music` → `live-music`), failing that a name WordPress's collation finds equal (`café` = `CAFE`).
   */
  async findBySlugOrName(taxonomy: Taxonomy, lang: Lang, text: string): Promise<number | null> {
    const slug = slugify(text);
    const bySlug = slug ? await this.slugOwner(taxonomy, lang, slug) : null;
    if (bySlug !== null) return bySlug;
    const rows = await query<{ id: number }>(this.db, ID_BY_NAME_KEY, [taxonomy, lang, collationKey(text)]);
    return rows[0]?.id ?? null;
  }

  async explainNameLookups(): Promise<string[]> {
    const lines: string[] = [];
    for (const statement of [SLUG_OWNER, ID_BY_NAME_KEY]) {
      const rows = await query<{ 'QUERY PLAN': string }>(this.db, `EXPLAIN ${statement}`, ['category', 'en', 'x']);
      lines.push(...rows.map((r) => r['QUERY PLAN']));
    }
    return lines;
  }

  async uniqueSlug(taxonomy: Taxonomy, lang: Lang, slug: string, parentSlug: string | null): Promise<string> {
    const free = async (s: string) => (await this.slugOwner(taxonomy, lang, s)) === null;
    if (await free(slug)) return slug;
    if (parentSlug && (await free(`${slug}-${parentSlug}`))) return `${slug}-${parentSlug}`;
    for (let n = 2; ; n++) if (await free(`${slug}-${n}`)) return `${slug}-${n}`;
  }

  async resolve(taxonomy: Taxonomy, lang: Lang, ref: number | string): Promise<number | null> {
    if (typeof ref === 'number') {
      const term = await this.findById(ref);
      return term && term.taxonomy === taxonomy ? term.id : null;
    }
    return this.slugOwner(taxonomy, lang, slugify(ref));
  }

  async list(q: TermListQuery): Promise<{ items: TermRecord[]; total: number }> {
    const where = ['t.taxonomy = @taxonomy', 't.lang = @lang'];
    // as MySQL's LIKE under WordPress's collation: the name folded by `foldForSearch` when it was written (migration
    // 0010); the slug as SQLite's LIKE reads it, ASCII letters in any case
    if (q.search !== undefined) where.push(`(t.search_name LIKE @search ESCAPE '\\' OR lower(t.slug COLLATE "C") LIKE @search ESCAPE '\\')`);
    if (q.include) where.push('t.id = ANY(@include::bigint[])');
    if (q.exclude) where.push('NOT (t.id = ANY(@exclude::bigint[]))');
    if (q.parentId !== undefined) where.push(q.parentId === 0 ? 't.parent_id IS NULL' : 't.parent_id = @parentId');
    if (q.event?.linksHidden) where.push('FALSE');
    else if (q.event) where.push('t.id IN (SELECT term_id FROM event_terms WHERE event_id = @eventId)');
    if (q.slug !== undefined) where.push('t.slug = @slug');
    // every term counted at once for the total and an order by count; a page in another order counts its own terms
    // as it reads them, and stops at the page's end
    const base = (everyTerm: boolean) => `SELECT * FROM (SELECT t.*, ${everyTerm ? LISTED_COUNT : COUNT} AS count FROM ${everyTerm ? LISTED_TERMS : 'terms t'}
      WHERE ${where.join(' AND ')}) AS listed${q.hideEmpty ? ' WHERE count > 0' : ''}`;
    const direction = q.descending ? 'DESC' : 'ASC';
    const params = {
      taxonomy: q.taxonomy, lang: q.lang, now: utcNowWire(), limit: q.limit, offset: q.offset,
      search: q.search === undefined ? undefined : `%${foldForSearch(q.search).replace(/[\\%_]/g, (c) => '\\' + c)}%`,
      include: q.include, exclude: q.exclude, parentId: q.parentId || undefined,
      eventId: q.event && !q.event.linksHidden ? q.event.id : undefined, slug: q.slug === undefined ? undefined : slugify(q.slug),
    };
    const orderBy = q.orderBy === 'include' && !q.include ? ORDER.name : ORDER[q.orderBy];
    const rows = await named<TermRow>(this.lists, `${base(orderBy === ORDER.count)} ORDER BY ${orderBy} ${direction}, id ${direction} LIMIT @limit OFFSET @offset`, params);
    const [count] = await named<{ total: number }>(this.lists, `SELECT COUNT(*) AS total FROM (${base(true)}) AS counted`, params);
    return { items: rows.map(termFromRow), total: count!.total };
  }

  async translations(taxonomy: Taxonomy, groups: number[]): Promise<Translations> {
    const out: Translations = new Map();
    if (groups.length === 0) return out;
    const rows = await query<{ translation_group: number; lang: Lang; id: number }>(this.db,
      'SELECT translation_group, lang, id FROM terms WHERE taxonomy = $1 AND translation_group = ANY($2::bigint[]) ORDER BY id', [taxonomy, [...new Set(groups)]]);
    for (const r of rows) {
      const entry = out.get(r.translation_group) ?? {};
      entry[r.lang] = r.id;
      out.set(r.translation_group, entry);
    }
    return out;
  }

  async slugPaths(ids: number[]): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    if (ids.length === 0) return out;
    const rows = await query<{ start: number; slug: string }>(this.db,
      `WITH RECURSIVE chain(start, slug, parent_id, depth) AS (
         SELECT id, slug, parent_id, 0 FROM terms WHERE id = ANY($1::bigint[])
         UNION ALL
         SELECT c.start, p.slug, p.parent_id, c.depth + 1 FROM chain c JOIN terms p ON p.id = c.parent_id WHERE c.depth < 64
       ) SELECT start, slug FROM chain ORDER BY start, depth DESC`, [[...new Set(ids)]]);
    for (const r of rows) out.set(r.start, out.has(r.start) ? `${out.get(r.start)}/${r.slug}` : r.slug);
    return out;
  }

  async findSameName(taxonomy: Taxonomy, lang: Lang, name: string, parentId: number): Promise<number | null> {
    const rows = await query<{ id: number }>(this.db,
      // ASCII letters in any case, as SQLite's NOCASE (`lower` under "C" lower-cases ASCII only)
      `SELECT id FROM terms WHERE taxonomy = $1 AND lang = $2 AND lower(name COLLATE "C") = lower($3 COLLATE "C")
         AND ($4::boolean OR parent_id IS NOT DISTINCT FROM $5::bigint) ORDER BY id LIMIT 1`,
      [taxonomy, lang, name, taxonomy === 'tag', parentId || null]);
    return rows[0]?.id ?? null;
  }

  async slugOwner(taxonomy: Taxonomy, lang: Lang, slug: string): Promise<number | null> {
    const rows = await query<{ id: number }>(this.db, SLUG_OWNER, [taxonomy, lang, slug]);
    return rows[0]?.id ?? null;
  }

  async isSelfOrAncestor(ancestor: number, id: number): Promise<boolean> {
    if (ancestor === id) return true;
    const rows = await query(this.db,
      `WITH RECURSIVE up(id, depth) AS (SELECT parent_id, 0 FROM terms WHERE id = $2
         UNION ALL SELECT t.parent_id, up.depth + 1 FROM up JOIN terms t ON t.id = up.id WHERE up.depth < 64)
       SELECT 1 FROM up WHERE id = $1 LIMIT 1`, [ancestor, id]);
    return rows.length > 0;
  }

  async groupOf(id: number): Promise<{ group: number; langs: Partial<Record<Lang, number>> } | null> {
    const term = await this.findById(id);
    if (!term) return null;
    const rows = await query<{ lang: Lang; id: number }>(this.db, 'SELECT lang, id FROM terms WHERE taxonomy = $1 AND translation_group = $2', [term.taxonomy, term.translationGroup]);
    const langs: Partial<Record<Lang, number>> = {};
    for (const r of rows) langs[r.lang] = r.id;
    return { group: term.translationGroup, langs };
  }

  async insert(input: TermInput): Promise<number> {
    const [next] = await query<{ id: number }>(this.db, `SELECT nextval(pg_get_serial_sequence('terms', 'id')) AS id`);
    const id = next!.id;
    const group = input.translationOf === null ? id : (await this.findById(input.translationOf))!.translationGroup;
    await query(this.db, INSERT_TERM, [id, input.taxonomy, input.name, input.slug, input.description, input.parentId || null, input.lang, group, ...keysOf(input.name)]);
    return id;
  }

  async insertAs(id: number, translationGroup: number, input: Omit<TermInput, 'translationOf'>, source: string): Promise<void> {
    await query(this.db, INSERT_TERM, [id, input.taxonomy, input.name, input.slug, input.description, input.parentId || null, input.lang, translationGroup, ...keysOf(input.name)]);
    await query(this.db, `SELECT setval(pg_get_serial_sequence('terms', 'id'), GREATEST($1::bigint, (SELECT last_value FROM terms_id_seq)))`, [id]);
    await query(this.db, 'INSERT INTO term_sources (term_id, source) VALUES ($1, $2) ON CONFLICT (term_id) DO UPDATE SET source = excluded.source', [id, source]);
  }

  async setTranslation(id: number, lang: Lang, translationGroup: number): Promise<void> {
    await query(this.db, 'UPDATE terms SET lang = $2, translation_group = $3 WHERE id = $1', [id, lang, translationGroup]);
  }

  async sourceOf(id: number): Promise<string | null> {
    const rows = await query<{ source: string }>(this.db, 'SELECT source FROM term_sources WHERE term_id = $1', [id]);
    return rows[0]?.source ?? null;
  }

  async update(id: number, fields: { name: string; slug: string; description: string; parentId: number }): Promise<void> {
    await query(this.db, 'UPDATE terms SET name = $2, slug = $3, description = $4, parent_id = $5, name_key = $6, search_name = $7 WHERE id = $1',
      [id, fields.name, fields.slug, fields.description, fields.parentId || null, ...keysOf(fields.name)]);
  }

  async remove(term: TermRecord): Promise<void> {
    await query(this.db, 'UPDATE terms SET parent_id = $2 WHERE parent_id = $1', [term.id, term.parentId || null]);
    await query(this.db, 'DELETE FROM terms WHERE id = $1', [term.id]);
  }
}
