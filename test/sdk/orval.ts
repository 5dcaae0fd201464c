import { createEvent, deleteEvent, getEvent, getEventBySlug, listEvents, updateEvent } from './client/almanac';
import { basicAuth, venueName, type Sequence } from '../../outcome';

/** orval's fetch client has its base URL built in at generation (its `baseUrl` option). */
export const run: Sequence = async (caller) => {
  const title = caller.title;
  const auth = { headers: { Authorization: basicAuth(caller) } };
  const list = await listEvents(undefined, auth);
  if (list.status !== 200) throw new Error(`list: ${list.status}`);
  const created = await createEvent({ title, start_date: '2027-05-01 19:00', end_date: '2027-05-01 22:00', venue: { venue: 'Riverside Hall', city: 'Springfield' } }, undefined, auth);
  if (created.status !== 201) throw new Error(`create: ${created.status}`);
  const id = created.data.id;
  const byId = await getEvent(id, undefined, auth);
  if (byId.status !== 200) throw new Error(`read by id: ${byId.status}`);
  const bySlug = await getEventBySlug(created.data.slug, undefined, auth);
  if (bySlug.status !== 200) throw new Error(`read by slug: ${bySlug.status}`);
  const updated = await updateEvent(id, { title: `${title} (moved)` }, undefined, auth);
  if (updated.status !== 200) throw new Error(`update: ${updated.status}`);
  const trashed = await deleteEvent(id, undefined, auth);
  if (trashed.status !== 200) throw new Error(`delete: ${trashed.status}`);
  const again = await deleteEvent(id, undefined, auth);
  return {
    listed: list.data.events.length,
    id,
    slug: created.data.slug,
    title: created.data.title,
    venue: venueName(created.data.venue),
    titleById: byId.data.title,
    idBySlug: bySlug.data.id,
    updatedTitle: updated.data.title,
    trashedStatus: trashed.data.status,
    secondDelete: { status: again.status, code: again.status === 410 ? again.data.code : undefined },
  };
};
