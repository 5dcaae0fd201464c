import type { Engine, Repositories } from '../db/engine.js';
import type { Taxonomy, TermListQuery, TermRecord } from '../db/records.js';
import { DateTime } from 'luxon';
import { hasCapabilities } from '../domain/capabilities.js';
import { toWire } from '../domain/dates.js';
import { eventAsFilter } from '../domain/postRules.js';
import { cleanAhead } from '../domain/cleanAhead.js';
import { cleanHtml } from '../domain/html.js';
import { depthProblem, MAX_PER_PAGE, totalPastDeepPage } from '../domain/listLimits.js';
import { TAXONOMY, termToWire, type TermViewContext } from '../domain/termView.js';
import { sanitizeTextField, slugify } from '../domain/text.js';
import { entityTag, requireMatch } from '../http/conditional.js';
import { ApiError, forbiddenContext, invalidParam, invalidParams } from '../errors.js';
import { pageUrl, sentParams } from '../http/links.js';
import type { OperationContext, QueryOf, RequestBody } from '../http/operation.js';
import { allowedMethods } from '../http/routeIndex.js';
import { isEditContext } from './posts.js';
import { NAMESPACE_PATH } from '../http/spec.js';
import type { RequestState } from '../domain/context.js';

const ORDER_BY = new Set<TermListQuery['orderBy']>(['name', 'id', 'slug', 'count', 'description', 'include', 'none']);

type TermListParams = QueryOf<'listCategories'> & QueryOf<'listTags'>;
/** Fields of a category or tag body (a tag's have no parent). */
export type TermFields = RequestBody<'updateCategory'>;

/**
 * Category and tag behaviour, shared: the two taxonomies differ only in hierarchy and names. Each public method is one
 * unit of work (a read, or a write together with the answer it gives).
 */
export class TermService<T extends Taxonomy> {
  private readonly itemPath: string;

  constructor(private readonly taxonomy: T, private readonly engine: Engine) {
    this.itemPath = `${NAMESPACE_PATH}/${TAXONOMY[taxonomy].route}/{id}`;
  }

  private async view(repos: Repositories, records: TermRecord[], state: RequestState, withLinks: boolean): Promise<TermViewContext> {
    return {
      state,
      translations: await repos.terms.translations(this.taxonomy, records.map((r) => r.translationGroup)),
      slugPaths: this.taxonomy === 'category' ? await repos.terms.slugPaths(records.map((r) => r.id)) : new Map(),
      links: withLinks ? allowedMethods(this.itemPath, (caps) => hasCapabilities(state.user?.role ?? null, caps)) : undefined,
    };
  }

  private async wire(repos: Repositories, record: TermRecord, state: RequestState, withLinks: boolean) {
    return termToWire(record as TermRecord & { taxonomy: T }, await this.view(repos, [record], state, withLinks));
  }

  /** The term an id names in this taxonomy; otherwise the id fails validation, as in the plugin. */
  private async existing(repos: Repositories, id: number): Promise<TermRecord> {
    const term = await repos.terms.findById(id);
    if (!term || term.taxonomy !== this.taxonomy) throw invalidParam('id');
    return term;
  }

  /**
   * `context=edit` is only for a caller who may edit terms of this taxonomy (the capabilities of its update), as
   * WordPress answers; it changes nothing else in a term's answer.
   */
  private requireEditContext(query: { context?: string }, state: RequestState, message: string): void {
    if (!isEditContext(query)) return;
    if (!allowedMethods(this.itemPath, (caps) => hasCapabilities(state.user?.role ?? null, caps)).includes('PUT')) throw forbiddenContext(state.user !== null, message);
  }

  list(c: OperationContext<'listCategories'> | OperationContext<'listTags'>, state: RequestState) {
    // nothing of a term list moves with the clock but the counts of scheduled events, whose falling due retires every answer
    state.reads?.steadyUntil(Infinity);
    return this.engine.readList(async (repos) => {
      const q = c.request.query as TermListParams;
      const page = q.page ?? 1;
      const perPage = Math.min(q.per_page ?? 10, MAX_PER_PAGE);
      const problems: Record<string, string> = {};
      const resolveAll = async (name: 'include' | 'exclude', refs: (number | string)[] | undefined) => {
        if (!refs) return undefined;
        const ids: (number | null)[] = [];
        for (const ref of refs) ids.push(await repos.terms.resolve(this.taxonomy, state.lang, ref));
        if (ids.some((id) => id === null)) problems[name] = 'Invalid parameter.';
        return ids.filter((id): id is number => id !== null);
      };
      const include = await resolveAll('include', q.include);
      const exclude = await resolveAll('exclude', q.exclude);
      if (q.parent !== undefined && q.parent !== 0 && (await repos.terms.findById(q.parent))?.taxonomy !== 'category') problems.parent = 'Invalid parameter.';
      // an event the caller may not read is answered as an unknown one; a protected one's terms only to its editors
      let event: TermListQuery['event'];
      for (const name of ['post', 'event'] as const) {
        const id = q[name];
        if (id === undefined) continue;
        const seen = eventAsFilter(await repos.posts.findOfType('event', id), state.user, toWire(DateTime.utc()), undefined);
        if (!seen) problems[name] = 'Invalid parameter.';
        else if (id === (q.event ?? q.post)) event = seen;
      }
      if (Object.keys(problems).length > 0) throw invalidParams(problems);
      this.requireEditContext(q, state, 'Sorry, you are not allowed to edit terms in this taxonomy.');

      const orderBy = (q.orderby ?? 'name').toLowerCase().replace(/^term_id$/, 'id').replace(/^include_slugs$/, 'include');
      const query = {
        taxonomy: this.taxonomy,
        lang: state.lang,
        search: q.search,
        include,
        exclude,
        parentId: this.taxonomy === 'category' ? q.parent : undefined,
        event,
        slug: q.slug,
        hideEmpty: q.hide_empty ?? true,
        orderBy: ORDER_BY.has(orderBy as TermListQuery['orderBy']) ? (orderBy as TermListQuery['orderBy']) : 'name',
        descending: (q.order ?? 'asc').toLowerCase() === 'desc',
      };
      const offset = (page - 1) * perPage;
      const tooDeep = depthProblem(page, perPage);
      // a page past the end is an empty page, however deep
      const { items, total } = tooDeep
        ? { items: [], total: await totalPastDeepPage(tooDeep, offset, async () => (await repos.terms.list({ ...query, limit: 1, offset: 0 })).total) }
        : await repos.terms.list({ ...query, limit: perPage, offset });
      const totalPages = Math.ceil(total / perPage);
      const base = `${state.restBase}/${TAXONOMY[this.taxonomy].route}/`;
      const params = sentParams(c as OperationContext<'listCategories'>, state.sent);
      const view = await this.view(repos, items, state, false);
      const body: Record<string, unknown> = {
        rest_url: pageUrl(base, params),
        total,
        total_pages: totalPages,
        [TAXONOMY[this.taxonomy].listKey]: items.map((t) => termToWire(t as TermRecord & { taxonomy: T }, view)),
      };
      if (page < totalPages) body.next_rest_url = pageUrl(base, params, page + 1);
      if (page > 1) body.previous_rest_url = pageUrl(base, params, page - 1 > 1 ? page - 1 : undefined);
      return { body, headers: { 'X-TEC-Total': String(total), 'X-TEC-TotalPages': String(totalPages) } };
    }, state.reads);
  }

  get(id: number, state: RequestState, query: { context?: string } = {}) {
    return this.engine.read(async (repos) => {
      const term = await this.existing(repos, id);
      this.requireEditContext(query, state, 'Sorry, you are not allowed to edit this term.');
      return this.wire(repos, term, state, true);
    }, state.reads);
  }

  async create(fields: TermFields, raw: Record<string, unknown>, state: RequestState) {
    this.refuseParentOnTags(raw);
    await this.cleanAhead(fields, state);
    const name = this.cleanName(fields.name ?? '');
    const parentId = fields.parent ?? 0;
    const translationOf = fields.translation_of ?? null;
    return this.engine.write(async (repos) => {
      const parent = parentId !== 0 ? await repos.terms.findById(parentId) : null;
      if (parentId !== 0 && parent?.taxonomy !== 'category') throw invalidParam('parent');
      if (translationOf !== null) await this.checkTranslationTarget(repos, translationOf, state);
      const same = await repos.terms.findSameName(this.taxonomy, state.lang, name, parentId);
      if (same !== null) {
        const where = this.taxonomy === 'category' ? 'with this parent' : 'in this taxonomy';
        // as WordPress's terms controller answers: the id in `data`, and twice before it (wp_insert_term's error data,
        // then the controller's add_data of the same id), which `additional_data` keeps
        throw new ApiError(400, 'term_exists', `A term with the name provided already exists ${where}.`, { term_id: same }, {}, [same, same]);
      }
      const slug = await repos.terms.uniqueSlug(this.taxonomy, state.lang, this.slugFrom(fields.slug, name), parent?.slug ?? null);
      const id = await repos.terms.insert({ taxonomy: this.taxonomy, name, slug, description: this.cleanDescription(fields.description ?? '', state), parentId, lang: state.lang, translationOf });
      const record = (await repos.terms.findById(id))!;
      return { body: await this.wire(repos, record, state, true), headers: { Location: `${state.restBase}/${TAXONOMY[this.taxonomy].route}/${id}` } };
    });
  }

  async update(id: number, fields: TermFields, raw: Record<string, unknown>, state: RequestState) {
    await this.cleanAhead(fields, state);
    return this.engine.write(async (repos) => {
      const current = await this.existing(repos, id);
      this.refuseParentOnTags(raw);
      const parentId = fields.parent ?? current.parentId;
      if (parentId !== current.parentId && parentId !== 0) {
        if ((await repos.terms.findById(parentId))?.taxonomy !== 'category' || (await repos.terms.isSelfOrAncestor(id, parentId))) throw invalidParam('parent');
      }
      let slug = current.slug;
      if (fields.slug !== undefined) {
        slug = slugify(fields.slug);
        if (!slug) throw invalidParam('slug');
        const owner = await repos.terms.slugOwner(this.taxonomy, current.lang, slug);
        if (owner !== null && owner !== id) {
          throw new ApiError(400, 'duplicate_term_slug', `The slug “${slug}” is already in use by another term.`);
        }
      }
      const name = fields.name !== undefined ? this.cleanName(fields.name) : current.name;
      await this.requireCurrent(repos, current, state);
      await repos.terms.update(id, {
        name,
        slug,
        description: fields.description !== undefined ? this.cleanDescription(fields.description, state) : current.description,
        parentId,
      });
      return this.wire(repos, (await repos.terms.findById(id))!, state, true);
    });
  }

  remove(id: number, state: RequestState) {
    return this.engine.write(async (repos) => {
      const term = await this.existing(repos, id);
      const body = await this.wire(repos, term, state, false);
      await this.requireCurrent(repos, term, state);
      await repos.terms.remove(term);
      return body;
    });
  }

  /** `If-Match`: compared, under the write lock, with the ETag this caller's GET of the term would get now. */
  private async requireCurrent(repos: Repositories, term: TermRecord, state: RequestState): Promise<void> {
    if (state.ifMatch === null) return;
    const tag = entityTag(JSON.stringify(await this.wire(repos, term, state, true)));
    requireMatch(state.ifMatch, () => tag);
  }

  private cleanDescription(description: string, state: RequestState): string {
    return cleanHtml(description, 'content', hasCapabilities(state.user?.role ?? null, ['unfiltered_html']));
  }

  /** A large description cleaned before the write, off the event loop (see cleanAhead). */
  private cleanAhead(fields: TermFields, state: RequestState): Promise<void> {
    return cleanAhead({ description: fields.description }, hasCapabilities(state.user?.role ?? null, ['unfiltered_html']));
  }

  private refuseParentOnTags(raw: Record<string, unknown>): void {
    if (this.taxonomy === 'tag' && raw.parent !== undefined) {
      throw new ApiError(400, 'rest_taxonomy_not_hierarchical', 'Cannot set parent term, taxonomy is not hierarchical.');
    }
  }

  private cleanName(name: string): string {
    const clean = sanitizeTextField(name);
    if (!clean) throw new ApiError(400, 'empty_term_name', 'A name is required for this term.');
    return clean;
  }

  private slugFrom(requested: string | undefined, name: string): string {
    if (requested !== undefined) {
      const slug = slugify(requested);
      if (!slug) throw invalidParam('slug');
      return slug;
    }
    return slugify(name) || 'term';
  }

  private async checkTranslationTarget(repos: Repositories, targetId: number, state: RequestState): Promise<void> {
    const target = await repos.terms.findById(targetId);
    if (!target || target.taxonomy !== this.taxonomy) {
      throw invalidParams({ translation_of: `No ${this.taxonomy} has the id ${targetId}.` });
    }
    const taken = (await repos.terms.groupOf(targetId))!.langs[state.lang];
    if (taken !== undefined) {
      throw invalidParams({ translation_of: `The translation group of ${targetId} already has a ${state.lang} ${this.taxonomy} (id ${taken}).` });
    }
  }
}

