import type { OrganizerRecord, VenueRecord } from '../db/posts.js';
import type { Handlers } from '../http/operation.js';
import type { RequestState } from '../http/state.js';
import { isEditContext, passwordOf, PostService, type OrganizerFields, type PostDeps, type ReadQuery, type VenueFields } from './posts.js';

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
function linkedHandlers(type: Linked, deps: PostDeps) {
  const service = (state: RequestState) => new PostService(deps, state);
  const find = (s: PostService, c: Ctx): VenueRecord | OrganizerRecord =>
    c.request.params.slug !== undefined ? s.bySlug(type, c.request.params.slug) : s.linkedById(type, c.request.params.id!);
  /** A write's answer: the record as the caller may edit it. */
  const written = (s: PostService, record: VenueRecord | OrganizerRecord) => s.view([record], { single: false, edit: true })[0] as never;
  const get = (c: ReadCtx, state: RequestState) => {
    const s = service(state);
    const record = find(s, c);
    const { body, headers } = s.singleAnswer(record, c.request.query.password, isEditContext(c.request.query));
    return { status: 200 as const, body: body as never, headers };
  };
  // writes go through the group commit, answer included (the record as this write left it, read in the same
  // transaction): acknowledged once durable, sharing the fsync with concurrent writes
  const remove = (c: Ctx, state: RequestState) => {
    const s = service(state);
    const target = find(s, c);
    return deps.posts.committed(() => ({ status: 200 as const, body: written(s, s.trash(target, passwordOf(c))) }));
  };
  const update = (c: Ctx, state: RequestState) => {
    const s = service(state);
    const target = find(s, c);
    return deps.posts.committed(() => ({ status: 200 as const, body: written(s, s.updateLinked(target, (c.request.requestBody ?? {}) as VenueFields & OrganizerFields, passwordOf(c))) }));
  };
  const create = (c: { request: { requestBody?: unknown } }, state: RequestState) => {
    const s = service(state);
    return deps.posts.committed(() => ({ status: 201 as const, body: written(s, s.createLinked(type, c.request.requestBody as VenueFields & OrganizerFields)) }));
  };
  return { create, get, remove, update };
}

export function venueHandlers(deps: PostDeps): Pick<Handlers, VenueOps> {
  const h = linkedHandlers('venue', deps);
  return {
    createVenue: h.create, getVenue: h.get, deleteVenue: h.remove, updateVenue: h.update, putVenue: h.update, patchVenue: h.update,
    getVenueBySlug: h.get, deleteVenueBySlug: h.remove, updateVenueBySlug: h.update, putVenueBySlug: h.update, patchVenueBySlug: h.update,
  };
}

export function organizerHandlers(deps: PostDeps): Pick<Handlers, OrganizerOps> {
  const h = linkedHandlers('organizer', deps);
  return {
    createOrganizer: h.create, getOrganizer: h.get, deleteOrganizer: h.remove, updateOrganizer: h.update, putOrganizer: h.update, patchOrganizer: h.update,
    getOrganizerBySlug: h.get, deleteOrganizerBySlug: h.remove, updateOrganizerBySlug: h.update, putOrganizerBySlug: h.update, patchOrganizerBySlug: h.update,
  };
}
