import createClient from 'openapi-fetch';
import type { paths } from './client/api';
import { basicAuth, venueName, type Sequence } from '../../outcome';

export const run: Sequence = async (caller) => {
  const { baseUrl, title } = caller;
  const almanac = createClient<paths>({ baseUrl, headers: { Authorization: basicAuth(caller) } });
  const list = await almanac.GET('/wp-json/tribe/events/v1/events');
  const created = await almanac.POST('/wp-json/tribe/events/v1/events', {
    body: { title, start_date: '2027-05-01 19:00', end_date: '2027-05-01 22:00', venue: { venue: 'Riverside Hall', city: 'Springfield' } },
  });
  if (!list.data || !created.data) throw new Error(`list or create failed: ${JSON.stringify(list.error ?? created.error)}`);
  const id = created.data.id;
  const byId = await almanac.GET('/wp-json/tribe/events/v1/events/{id}', { params: { path: { id } } });
  const bySlug = await almanac.GET('/wp-json/tribe/events/v1/events/by-slug/{slug}', { params: { path: { slug: created.data.slug } } });
  const updated = await almanac.POST('/wp-json/tribe/events/v1/events/{id}', { params: { path: { id } }, body: { title: `${title} (moved)` } });
  const trashed = await almanac.DELETE('/wp-json/tribe/events/v1/events/{id}', { params: { path: { id } } });
  if (!byId.data || !bySlug.data || !updated.data || !trashed.data) throw new Error('a read, the update or the delete failed');
  const again = await almanac.DELETE('/wp-json/tribe/events/v1/events/{id}', { params: { path: { id } } });
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
    secondDelete: { status: again.response.status, code: again.error?.code },
  };
};
