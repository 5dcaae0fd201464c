import type { Engine } from '../db/engine.js';
import type { RequestState } from '../domain/context.js';
import type { Handlers } from '../http/operation.js';
import { TermService, type TermFields } from '../services/terms.js';

type CategoryOps = 'listCategories' | 'createCategory' | 'getCategory' | 'updateCategory' | 'putCategory' | 'patchCategory' | 'deleteCategory';
type TagOps = 'listTags' | 'createTag' | 'getTag' | 'updateTag' | 'putTag' | 'patchTag' | 'deleteTag';

/** One function for the POST, PUT and PATCH spellings of an update (typed structurally, so it fits all three). */
const updateOf = (service: TermService<'category'> | TermService<'tag'>) =>
  async (c: { request: { params: { id: number }; requestBody?: TermFields } }, state: RequestState) => ({
    status: 200 as const,
    body: (await service.update(c.request.params.id, c.request.requestBody ?? {}, (c.request.requestBody ?? {}) as Record<string, unknown>, state)) as never,
  });

export function categoryHandlers(engine: Engine): Pick<Handlers, CategoryOps> {
  const service = new TermService('category', engine);
  const update = updateOf(service);
  return {
    listCategories: async (c, state) => ({ status: 200, ...(await service.list(c, state)) }) as never,
    createCategory: async (c, state) => ({ status: 201, ...(await service.create(c.request.requestBody, c.request.requestBody as Record<string, unknown>, state)) }),
    getCategory: async (c, state) => ({ status: 200, body: await service.get(c.request.params.id, state, c.request.query) }),
    updateCategory: update,
    putCategory: update,
    patchCategory: update,
    deleteCategory: async (c, state) => ({ status: 200, body: await service.remove(c.request.params.id, state) }),
  };
}

export function tagHandlers(engine: Engine): Pick<Handlers, TagOps> {
  const service = new TermService('tag', engine);
  const update = updateOf(service);
  return {
    listTags: async (c, state) => ({ status: 200, ...(await service.list(c, state)) }) as never,
    createTag: async (c, state) => ({ status: 201, ...(await service.create(c.request.requestBody, c.request.requestBody as Record<string, unknown>, state)) }),
    getTag: async (c, state) => ({ status: 200, body: await service.get(c.request.params.id, state, c.request.query) }),
    updateTag: update,
    putTag: update,
    patchTag: update,
    deleteTag: async (c, state) => ({ status: 200, body: await service.remove(c.request.params.id, state) }),
  };
}
