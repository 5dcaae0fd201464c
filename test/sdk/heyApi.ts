import { client } from './client/client.gen';
import { createEvent, deleteEvent, getEvent, getEventBySlug, listEvents, updateEvent } from './client/sdk.gen';
import { venueName, type Sequence } from '../../outcome';

export const run: Sequence = async ({ baseUrl, login, password, title }) => {
  client.setConfig({ ...(baseUrl ? { baseUrl } : {}), auth: () => `${login}:${password}` });
  const list = await listEvents({ throwOnError: true });
  const { data: created } = await createEvent({
    body: { title, start_date: '2027-05-01 19:00', end_date: '2027-05-01 22:00', venue: { venue: 'Riverside Hall', city: 'Springfield' } },
    throwOnError: true,
  });
  const byId = await getEvent({ path: { id: created.id }, throwOnError: true });
  const bySlug = await getEventBySlug({ path: { slug: created.slug }, throwOnError: true });
  const updated = await updateEvent({ path: { id: created.id }, body: { title: `${title} (moved)` }, throwOnError: true });
  const trashed = await deleteEvent({ path: { id: created.id }, throwOnError: true });
  const again = await deleteEvent({ path: { id: created.id } });
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
    secondDelete: { status: again.response.status, code: again.error?.code },
  };
};
