import createClient from 'openapi-fetch';
import type { paths } from './client/api';

const almanac = createClient<paths>();
const dates = { start_date: '2027-05-01 19:00', end_date: '2027-05-01 22:00' };
export const withTitle = () => almanac.POST('/wp-json/tribe/events/v1/events', { body: { title: 'Has a title', ...dates } });
// @ts-expect-error a create without `title` must not type-check
export const withoutTitle = () => almanac.POST('/wp-json/tribe/events/v1/events', { body: { ...dates } });
