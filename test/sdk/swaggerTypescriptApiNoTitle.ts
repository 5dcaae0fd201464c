import { Api } from './client/Api';

const events = new Api().wpJson;
const dates = { start_date: '2027-05-01 19:00', end_date: '2027-05-01 22:00' };
export const withTitle = () => events.createEvent({ title: 'Has a title', ...dates });
// @ts-expect-error a create without `title` must not type-check
export const withoutTitle = () => events.createEvent({ ...dates });
