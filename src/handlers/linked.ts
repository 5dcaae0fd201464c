import type { Handlers } from '../http/operation.js';
import type { RequestState } from '../domain/context.js';
import { isEditContext, passwordOf, PostUnits, type OrganizerFields, type PostService, type ReadQuery, type VenueFields } from '../services/posts.js';

type Linked = 'venue' | 'organizer';
type Ops<Name extends string> = `create${Name}` | `get${Name}` | `delete${Name}` | `update${Name}` | `put${Name}` | `patch${Name}`
  | `get${Name}BySlug` | `delete${Name}BySlug` | `update${Name}BySlug` | `put${Name}BySlug` | `patch${Name}BySlug`;
type VenueOps = Extract<Ops<'Venue'>, keyof Handlers>;
type OrganizerOps = Extract<Ops<'Organizer'>, keyof Handlers>;

type Ctx = { request: { params: { id?: number; slug?: string }; query: object; requestBody?: unknown } };
type ReadCtx = { request: { params: { id?: number; slug?: string }; query: ReadQuery } };

/**
 * Venues and organizers behave alike (reference routes.md §2.9–2.16): create or match by name, read (blanked when
 * password-protected), update partially, trash (which unlinks them from every event), by id and by slug.
 */
function linkedHandlers(type: Linked, posts: PostUnits) {
  const find = (s: PostService, c: Ctx | ReadCtx) =>
    c.request.params.slug !== undefined ? s.bySlug(type, c.request.params.slug) : s.linkedById(type, c.request.params.id!);
  const body = (c: { request: { requestBody?: unknown } }) => (c.request.requestBody ?? {}) as VenueFields & OrganizerFields;
  return {
    get: (c: ReadCtx, state: RequestState) =>
      posts.read(state, async (s) => {
        const { body, headers } = await s.shown(type, c.request.params, c.request.query.password, isEditContext(c.request.query));
        return { status: 200 as const, body: body as never, headers };
      }),
    remove: async (c: Ctx, state: RequestState) => ({ status: 200 as const, ...(await posts.writeAndShow(state, async (s) => s.trash(await find(s, c), passwordOf(c)))) }),
    update: async (c: Ctx, state: RequestState) => ({ status: 200 as const, ...(await posts.writeAndShow(state, async (s) => s.updateLinked(await find(s, c), body(c), passwordOf(c)), body(c))) }),
    create: async (c: { request: { requestBody?: unknown } }, state: RequestState) => ({ status: 201 as const, body: (await posts.writeAndShow(state, (s) => s.createLinked(type, body(c)), body(c))).body }),
  };
}

export function venueHandlers(posts: PostUnits): Pick<Handlers, VenueOps> {
  const h = linkedHandlers('venue', posts);
  return {
    createVenue: h.create, getVenue: h.get, deleteVenue: h.remove, updateVenue: h.update, putVenue: h.update, patchVenue: h.update,
    getVenueBySlug: h.get, deleteVenueBySlug: h.remove, updateVenueBySlug: h.update, putVenueBySlug: h.update, patchVenueBySlug: h.update,
  };
}

export function organizerHandlers(posts: PostUnits): Pick<Handlers, OrganizerOps> {
  const h = linkedHandlers('organizer', posts);
  return {
    createOrganizer: h.create, getOrganizer: h.get, deleteOrganizer: h.remove, updateOrganizer: h.update, putOrganizer: h.update, patchOrganizer: h.update,
    getOrganizerBySlug: h.get, deleteOrganizerBySlug: h.remove, updateOrganizerBySlug: h.update, putOrganizerBySlug: h.update, patchOrganizerBySlug: h.update,
  };
}
