import type { EventRecord } from '../db/posts.js';
import type { Handlers } from '../http/operation.js';
import type { RequestState } from '../http/state.js';
import { isEditContext, passwordOf, PostService, type EventFields, type PostDeps, type ReadQuery } from './posts.js';

type EventOps =
  | 'createEvent' | 'getEvent' | 'deleteEvent' | 'updateEvent' | 'putEvent' | 'patchEvent'
  | 'getEventBySlug' | 'deleteEventBySlug' | 'updateEventBySlug' | 'putEventBySlug' | 'patchEventBySlug';

type ById = { request: { params: { id: number }; query: object; requestBody?: unknown } };
type BySlug = { request: { params: { slug: string }; query: object; requestBody?: unknown } };

/** Events: create, and read, update (POST, PUT, PATCH alike), trash by id and by slug. */
export function eventHandlers(deps: PostDeps): Pick<Handlers, EventOps> {
  const service = (state: RequestState) => new PostService(deps, state);
  const single = (s: PostService, event: EventRecord, query: ReadQuery) => {
    const { body, headers } = s.singleAnswer(event, query.password, isEditContext(query));
    return { status: 200 as const, body: body as never, headers };
  };
  // writes go through the group commit, answer included (the record as this write left it, read in the same
  // transaction): acknowledged once durable, sharing the fsync with concurrent writes
  const written = (s: PostService, record: EventRecord) => s.view([record], { single: false, edit: true })[0] as never;
  const update = (s: PostService, id: number, c: ById | BySlug) =>
    deps.posts.committed(() => ({ status: 200 as const, body: written(s, s.updateEvent(id, (c.request.requestBody ?? {}) as EventFields, passwordOf(c))) }));
  const trash = (s: PostService, id: number, password: string | undefined) => {
    const current = s.eventById(id);
    return deps.posts.committed(() => ({ status: 200 as const, body: written(s, s.trash(current, password)) }));
  };
  const updateById = (c: ById, state: RequestState) => update(service(state), c.request.params.id, c);
  const updateBySlug = (c: BySlug, state: RequestState) => {
    const s = service(state);
    return update(s, s.bySlug('event', c.request.params.slug).id, c);
  };

  return {
    createEvent: (c, state) => {
      const s = service(state);
      return deps.posts.committed(() => ({ status: 201 as const, body: written(s, s.createEvent(c.request.requestBody as EventFields)) }));
    },
    getEvent: (c, state) => {
      const s = service(state);
      return single(s, s.eventById(c.request.params.id), c.request.query);
    },
    getEventBySlug: (c, state) => {
      const s = service(state);
      return single(s, s.bySlug('event', c.request.params.slug), c.request.query);
    },
    deleteEvent: (c, state) => trash(service(state), c.request.params.id, passwordOf(c)),
    deleteEventBySlug: (c, state) => {
      const s = service(state);
      return trash(s, s.bySlug('event', c.request.params.slug).id, passwordOf(c));
    },
    updateEvent: updateById,
    putEvent: updateById,
    patchEvent: updateById,
    updateEventBySlug: updateBySlug,
    putEventBySlug: updateBySlug,
    patchEventBySlug: updateBySlug,
  };
}
