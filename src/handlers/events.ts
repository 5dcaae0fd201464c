import type { EventFields } from '../services/posts.js';
import { isEditContext, passwordOf, PostUnits, type PostService, type ReadQuery } from '../services/posts.js';
import type { Handlers } from '../http/operation.js';
import type { RequestState } from '../domain/context.js';

type EventOps =
  | 'createEvent' | 'getEvent' | 'deleteEvent' | 'updateEvent' | 'putEvent' | 'patchEvent'
  | 'getEventBySlug' | 'deleteEventBySlug' | 'updateEventBySlug' | 'putEventBySlug' | 'patchEventBySlug';

type Target = { request: { params: { id?: number; slug?: string }; query: object; requestBody?: unknown } };

/** Events: create, and read, update (POST, PUT, PATCH alike), trash by id and by slug. */
export function eventHandlers(posts: PostUnits): Pick<Handlers, EventOps> {
  const idOf = async (s: PostService, c: Target) => (c.request.params.slug !== undefined ? (await s.bySlug('event', c.request.params.slug)).id : c.request.params.id!);
  const get = (c: Target & { request: { query: ReadQuery } }, state: RequestState) =>
    posts.read(state, async (s) => {
      const { body, headers } = await s.shown('event', c.request.params, c.request.query.password, isEditContext(c.request.query));
      return { status: 200 as const, body: body as never, headers };
    });
  const update = async (c: Target, state: RequestState) =>
    ({ status: 200 as const, ...(await posts.writeEventAndShow(state, (c.request.requestBody ?? {}) as EventFields, async (s) => s.updateEvent(await idOf(s, c), (c.request.requestBody ?? {}) as EventFields, passwordOf(c)))) });
  const trash = async (c: Target, state: RequestState) =>
    ({ status: 200 as const, ...(await posts.writeAndShow(state, async (s) => s.trash(await s.eventById(await idOf(s, c)), passwordOf(c)))) });

  return {
    createEvent: async (c, state) => ({ status: 201 as const, body: (await posts.writeEventAndShow(state, c.request.requestBody as EventFields, (s) => s.createEvent(c.request.requestBody as EventFields), true)).body }),
    getEvent: get,
    getEventBySlug: get,
    deleteEvent: trash,
    deleteEventBySlug: trash,
    updateEvent: update,
    putEvent: update,
    patchEvent: update,
    updateEventBySlug: update,
    putEventBySlug: update,
    patchEventBySlug: update,
  };
}
