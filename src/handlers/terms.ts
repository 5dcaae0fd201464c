import { DateTime } from 'luxon';
import type { PostsRepository } from '../db/posts.js';
import type { Taxonomy, TermListQuery, TermRecord, TermsRepository } from '../db/terms.js';
import { hasCapabilities } from '../domain/capabilities.js';
import { toWire } from '../domain/dates.js';
import { eventAsFilter } from '../domain/postRules.js';
import { cleanHtml } from '../domain/html.js';
import { depthProblem, MAX_PER_PAGE } from '../domain/listLimits.js';
import { TAXONOMY, termToWire, type TermViewContext } from '../domain/termView.js';
import { sanitizeTextField, slugify } from '../domain/text.js';
import { entityTag, requireMatch } from '../http/conditional.js';
import { ApiError, forbiddenContext, invalidParam, invalidParams } from '../http/errors.js';
import { pageUrl, sentParams } from '../http/links.js';
import type { Handlers, OperationContext, QueryOf, RequestBody } from '../http/operation.js';
import { isEditContext } from './posts.js';
import { allowedMethods } from '../http/routeIndex.js';
import { NAMESPACE_PATH } from '../http/spec.js';
import type { RequestState } from '../http/state.js';

const ORDER_BY = new Set<TermListQuery['orderBy']>(['name', 'id', 'slug', 'count', 'description', 'include', 'none']);

type TermListParams = QueryOf<'listCategories'> & QueryOf<'listTags'>;
/** Fields of a category or tag body (a tag's have no parent). */
type TermFields = RequestBody<'updateCategory'>;

/** Category and tag behaviour, shared: the two taxonomies differ only in hierarchy and names. */
class TermService<T extends Taxonomy> {
  private readonly itemPath: string;

  constructor(private readonly taxonomy: T, private readonly terms: TermsRepository, private readonly posts: PostsRepository) {
    this.itemPath = `${NAMESPACE_PATH}/${TAXONOMY[taxonomy].route}/{id}`;
  }

  private view(records: TermRecord[], state: RequestState, withLinks: boolean): TermViewContext {
    return {
      state,
      translations: this.terms.translations(this.taxonomy, records.map((r) => r.translationGroup)),
      slugPaths: this.taxonomy === 'category' ? this.terms.slugPaths(records.map((r) => r.id)) : new Map(),
      links: withLinks ? allowedMethods(this.itemPath, (caps) => hasCapabilities(state.user?.role ?? null, caps)) : undefined,
    };
  }

  private wire(record: TermRecord, state: RequestState, withLinks: boolean) {
    return termToWire(record as TermRecord & { taxonomy: T }, this.view([record], state, withLinks));
  }

  /** The term an id names in this taxonomy; otherwise the id fails validation, as in the plugin. */
  private existing(id: number): TermRecord {
    const term = this.terms.findById(id);
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
    const q = c.request.query as TermListParams;
    const page = q.page ?? 1;
    const perPage = Math.min(q.per_page ?? 10, MAX_PER_PAGE);
    const tooDeep = depthProblem(page, perPage);
    if (tooDeep) throw invalidParams({ page: tooDeep });
    const problems: Record<string, string> = {};
    const resolveAll = (name: 'include' | 'exclude', refs: (number | string)[] | undefined) => {
      if (!refs) return undefined;
      const ids = refs.map((ref) => this.terms.resolve(this.taxonomy, state.lang, ref));
      if (ids.some((id) => id === null)) problems[name] = 'Invalid parameter.';
      return ids.filter((id): id is number => id !== null);
    };
    const include = resolveAll('include', q.include);
    const exclude = resolveAll('exclude', q.exclude);
    if (q.parent !== undefined && q.parent !== 0 && this.terms.findById(q.parent)?.taxonomy !== 'category') problems.parent = 'Invalid parameter.';
    // an event the caller may not read is answered as an unknown one; a protected one's terms only to its editors
    let event: TermListQuery['event'];
    for (const name of ['post', 'event'] as const) {
      const id = q[name];
      if (id === undefined) continue;
      const seen = eventAsFilter(this.posts.findOfType('event', id), state.user, toWire(DateTime.utc()), undefined);
      if (!seen) problems[name] = 'Invalid parameter.';
      else if (id === (q.event ?? q.post)) event = seen;
    }
    if (Object.keys(problems).length > 0) throw invalidParams(problems);
    this.requireEditContext(q, state, 'Sorry, you are not allowed to edit terms in this taxonomy.');

    const orderBy = (q.orderby ?? 'name').toLowerCase().replace(/^term_id$/, 'id').replace(/^include_slugs$/, 'include');
    const { items, total } = this.terms.list({
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
      limit: perPage,
      offset: (page - 1) * perPage,
    });
    const totalPages = Math.ceil(total / perPage);
    const base = `${state.restBase}/${TAXONOMY[this.taxonomy].route}/`;
    const params = sentParams(c as OperationContext<'listCategories'>, state.sent);
    const view = this.view(items, state, false);
    const body: Record<string, unknown> = {
      rest_url: pageUrl(base, params),
      total,
      total_pages: totalPages,
      [TAXONOMY[this.taxonomy].listKey]: items.map((t) => termToWire(t as TermRecord & { taxonomy: T }, view)),
    };
    if (page < totalPages) body.next_rest_url = pageUrl(base, params, page + 1);
    if (page > 1) body.previous_rest_url = pageUrl(base, params, page - 1 > 1 ? page - 1 : undefined);
    return { body, headers: { 'X-TEC-Total': String(total), 'X-TEC-TotalPages': String(totalPages) } };
  }

  get(id: number, state: RequestState, query: { context?: string } = {}) {
    const term = this.existing(id);
    this.requireEditContext(query, state, 'Sorry, you are not allowed to edit this term.');
    return this.wire(term, state, true);
  }

  create(fields: TermFields, raw: Record<string, unknown>, state: RequestState) {
    this.refuseParentOnTags(raw);
    const name = this.cleanName(fields.name ?? '');
    const parentId = fields.parent ?? 0;
    if (parentId !== 0 && this.terms.findById(parentId)?.taxonomy !== 'category') throw invalidParam('parent');
    const translationOf = fields.translation_of ?? null;
    const id = this.terms.transaction(() => {
      if (translationOf !== null) this.checkTranslationTarget(translationOf, state);
      const same = this.terms.findSameName(this.taxonomy, state.lang, name, parentId);
      if (same !== null) {
        const where = this.taxonomy === 'category' ? 'with this parent' : 'in this taxonomy';
        throw new ApiError(400, 'term_exists', `A term with the name provided already exists ${where}.`, { term_id: same });
      }
      const parentSlug = parentId ? this.terms.findById(parentId)!.slug : null;
      const slug = this.terms.uniqueSlug(this.taxonomy, state.lang, this.slugFrom(fields.slug, name), parentSlug);
      return this.terms.insert({ taxonomy: this.taxonomy, name, slug, description: this.cleanDescription(fields.description ?? '', state), parentId, lang: state.lang, translationOf });
    });
    const record = this.terms.findById(id)!;
    return { body: this.wire(record, state, true), headers: { Location: `${state.restBase}/${TAXONOMY[this.taxonomy].route}/${id}` } };
  }

  update(id: number, fields: TermFields, raw: Record<string, unknown>, state: RequestState) {
    const term = this.existing(id);
    this.refuseParentOnTags(raw);
    const parentId = fields.parent ?? term.parentId;
    if (parentId !== term.parentId && parentId !== 0) {
      if (this.terms.findById(parentId)?.taxonomy !== 'category' || this.terms.isSelfOrAncestor(id, parentId)) throw invalidParam('parent');
    }
    this.terms.transaction(() => {
      const current = this.existing(id); // as it is under the write lock: another process may have changed it
      let slug = current.slug;
      if (fields.slug !== undefined) {
        slug = slugify(fields.slug);
        if (!slug) throw invalidParam('slug');
        const owner = this.terms.slugOwner(this.taxonomy, current.lang, slug);
        if (owner !== null && owner !== id) {
          throw new ApiError(400, 'duplicate_term_slug', `The slug “${slug}” is already in use by another term.`);
        }
      }
      const name = fields.name !== undefined ? this.cleanName(fields.name) : current.name;
      this.requireCurrent(id, state);
      this.terms.update(id, {
        name,
        slug,
        description: fields.description !== undefined ? this.cleanDescription(fields.description, state) : current.description,
        parentId: fields.parent ?? current.parentId,
      });
    });
    return this.wire(this.terms.findById(id)!, state, true);
  }

  remove(id: number, state: RequestState) {
    const term = this.existing(id);
    const body = this.wire(term, state, false);
    this.terms.transaction(() => {
      this.requireCurrent(id, state);
      this.terms.remove(term);
    });
    return body;
  }

  /** `If-Match`: compared, under the write lock, with the ETag this caller's GET of the term would get now. */
  private requireCurrent(id: number, state: RequestState): void {
    requireMatch(state.ifMatch, () => entityTag(JSON.stringify(this.get(id, state))));
  }

  private cleanDescription(description: string, state: RequestState): string {
    return cleanHtml(description, 'content', hasCapabilities(state.user?.role ?? null, ['unfiltered_html']));
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

  private checkTranslationTarget(targetId: number, state: RequestState): void {
    const target = this.terms.findById(targetId);
    if (!target || target.taxonomy !== this.taxonomy) {
      throw invalidParams({ translation_of: `No ${this.taxonomy} has the id ${targetId}.` });
    }
    const taken = this.terms.groupOf(targetId)!.langs[state.lang];
    if (taken !== undefined) {
      throw invalidParams({ translation_of: `The translation group of ${targetId} already has a ${state.lang} ${this.taxonomy} (id ${taken}).` });
    }
  }
}

export interface TermDeps {
  terms: TermsRepository;
  posts: PostsRepository;
}

type CategoryOps = 'listCategories' | 'createCategory' | 'getCategory' | 'updateCategory' | 'putCategory' | 'patchCategory' | 'deleteCategory';
type TagOps = 'listTags' | 'createTag' | 'getTag' | 'updateTag' | 'putTag' | 'patchTag' | 'deleteTag';

export function categoryHandlers({ terms, posts }: TermDeps): Pick<Handlers, CategoryOps> {
  const service = new TermService('category', terms, posts);
  // One function for the POST, PUT and PATCH spellings of the update (typed structurally, so it fits all three).
  const updateCategory = (c: { request: { params: { id: number }; requestBody?: TermFields } }, state: RequestState) => ({
    status: 200 as const,
    body: service.update(c.request.params.id, c.request.requestBody ?? {}, (c.request.requestBody ?? {}) as Record<string, unknown>, state),
  });
  return {
    listCategories: (c, state) => {
      const { body, headers } = service.list(c, state);
      return { status: 200, body: body as never, headers };
    },
    createCategory: (c, state) => {
      const { body, headers } = service.create(c.request.requestBody, c.request.requestBody as Record<string, unknown>, state);
      return { status: 201, body, headers };
    },
    getCategory: (c, state) => ({ status: 200, body: service.get(c.request.params.id, state, c.request.query) }),
    updateCategory,
    putCategory: updateCategory,
    patchCategory: updateCategory,
    deleteCategory: (c, state) => ({ status: 200, body: service.remove(c.request.params.id, state) }),
  };
}

export function tagHandlers({ terms, posts }: TermDeps): Pick<Handlers, TagOps> {
  const service = new TermService('tag', terms, posts);
  // One function for the POST, PUT and PATCH spellings of the update (typed structurally, so it fits all three).
  const updateTag = (c: { request: { params: { id: number }; requestBody?: TermFields } }, state: RequestState) => ({
    status: 200 as const,
    body: service.update(c.request.params.id, c.request.requestBody ?? {}, (c.request.requestBody ?? {}) as Record<string, unknown>, state),
  });
  return {
    listTags: (c, state) => {
      const { body, headers } = service.list(c, state);
      return { status: 200, body: body as never, headers };
    },
    createTag: (c, state) => {
      const { body, headers } = service.create(c.request.requestBody, c.request.requestBody as Record<string, unknown>, state);
      return { status: 201, body, headers };
    },
    getTag: (c, state) => ({ status: 200, body: service.get(c.request.params.id, state, c.request.query) }),
    updateTag,
    putTag: updateTag,
    patchTag: updateTag,
    deleteTag: (c, state) => ({ status: 200, body: service.remove(c.request.params.id, state) }),
  };
}
