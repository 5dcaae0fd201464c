import type { Config } from '../config.js';
import type { Engine } from '../db/engine.js';
import type { Handlers } from '../http/operation.js';
import { ListService } from '../services/lists.js';

const calendarText = (text: string) => ({ status: 200 as const, body: text, headers: { 'Content-Type': 'text/calendar; charset=utf-8' } });

/** The lists of events, venues and organizers, and the iCalendar feeds (their rules: services/lists.ts). */
export function listHandlers(engine: Engine, config: Config): Pick<Handlers, 'listEvents' | 'listVenues' | 'listOrganizers' | 'getEventsCalendar' | 'getEventCalendar'> {
  const lists = new ListService(engine, config);
  return {
    listEvents: async (c, state) => ({ status: 200, ...(await lists.events(c, state)) }) as never,
    listVenues: async (c, state) => ({ status: 200, ...(await lists.linked('venue', c, state)) }) as never,
    listOrganizers: async (c, state) => ({ status: 200, ...(await lists.linked('organizer', c, state)) }) as never,
    getEventsCalendar: async (c, state) => calendarText(await lists.eventsCalendar(c, state)),
    getEventCalendar: async (c, state) => calendarText(await lists.eventCalendar(c, state)),
  };
}
