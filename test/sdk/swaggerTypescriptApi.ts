import { Api, type HttpResponse } from './client/Api';
import { basicAuth, venueName, type Sequence } from '../../outcome';

export const run: Sequence = async (caller) => {
  const { baseUrl, title } = caller;
  const api = new Api({ ...(baseUrl ? { baseUrl } : {}), baseApiParams: { headers: { Authorization: basicAuth(caller) } } });
  // the generator groups routes by their first path segment: `/wp-json` in the file, `/events` in `/doc`
  const events = api.wpJson;
  const list = await events.listEvents();
  const { data: created } = await events.createEvent({ title, start_date: '2027-05-01 19:00', end_date: '2027-05-01 22:00', venue: { venue: 'Riverside Hall', city: 'Springfield' } });
  const byId = await events.getEvent(created.id);
  const bySlug = await events.getEventBySlug(created.slug);
  const updated = await events.updateEvent(created.id, { title: `${title} (moved)` });
  const trashed = await events.deleteEvent(created.id);
  // the client throws the response of an error status
  const again = await events.deleteEvent(created.id).catch((response: HttpResponse<unknown, { code: string }>) => response);
  return {
    listed: list.data.events.length,
    id: created.id,
    slug: created.slug,
    title: created.title,
    venue: venueName(created.venue),
    titleById: byId.data.title,
    idBySlug: bySlug.data.id,
    updatedTitle: updated.data.title,
    trashedStatus: trashed.data.status,
    secondDelete: { status: again.status, code: again.error?.code },
  };
};
