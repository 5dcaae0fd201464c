import { ApiError, EventsService, OpenAPI } from './client';
import { venueName, type Sequence } from '../../outcome';

export const run: Sequence = async ({ baseUrl, login, password, title }) => {
  if (baseUrl) OpenAPI.BASE = baseUrl;
  OpenAPI.USERNAME = login;
  OpenAPI.PASSWORD = password;
  const list = await EventsService.listEvents();
  const created = await EventsService.createEvent({ title, start_date: '2027-05-01 19:00', end_date: '2027-05-01 22:00', venue: { venue: 'Riverside Hall', city: 'Springfield' } });
  const byId = await EventsService.getEvent(created.id);
  const bySlug = await EventsService.getEventBySlug(created.slug);
  // parameters are positional: id, password, xlate_language, wpml_language, If-Match, then the body
  const updated = await EventsService.updateEvent(created.id, undefined, undefined, undefined, undefined, { title: `${title} (moved)` });
  const trashed = await EventsService.deleteEvent(created.id);
  // the client throws an ApiError for an error status
  const again = await EventsService.deleteEvent(created.id).then(
    () => null,
    (error: unknown) => (error instanceof ApiError ? error : null),
  );
  return {
    listed: list.events.length,
    id: created.id,
    slug: created.slug,
    title: created.title,
    venue: venueName(created.venue),
    titleById: byId.title,
    idBySlug: bySlug.id,
    updatedTitle: updated.title,
    trashedStatus: trashed.status,
    secondDelete: { status: again?.status ?? 0, code: (again?.body as { code?: string } | undefined)?.code },
  };
};
