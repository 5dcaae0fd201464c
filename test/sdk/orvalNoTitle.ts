import { createEvent } from './client/almanac';

const dates = { start_date: '2027-05-01 19:00', end_date: '2027-05-01 22:00' };
export const withTitle = () => createEvent({ title: 'Has a title', ...dates });
// @ts-expect-error a create without `title` must not type-check
export const withoutTitle = () => createEvent({ ...dates });
