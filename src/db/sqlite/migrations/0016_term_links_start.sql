-- The start of each event beside each of its term links, as event_organizers keeps it (migration 0004), written with
-- the links, which are written again whenever their event is. PostgreSQL indexes it by term, so that a list filtered
-- by categories or tags and bounded by dates reads the links of those terms in its window; SQLite's plans look up
-- each event's own links in the window (it counts those lists in the same time at any size of the calendar), so here
-- the column only keeps both engines' tables alike.
ALTER TABLE event_terms ADD COLUMN start_local TEXT NOT NULL DEFAULT '';
UPDATE event_terms SET start_local = (SELECT e.start_local FROM events e WHERE e.post_id = event_terms.event_id);
