-- The start of each event beside each of its term links, as event_organizers keeps it (migration 0004): a list
-- filtered by categories or tags and bounded by dates then reads the links of those terms in its window, rather than
-- every link of the terms, which grows with the calendar (a quarter of one category at 1,000,000 events hashed its
-- 200,000 links). Written with the links, which are written again whenever their event is.
ALTER TABLE event_terms ADD COLUMN start_local text COLLATE "C" NOT NULL DEFAULT '';
UPDATE event_terms et SET start_local = e.start_local FROM events e WHERE e.post_id = et.event_id;
DROP INDEX event_terms_by_term;
CREATE INDEX event_terms_by_term ON event_terms (term_id, start_local, event_id);
ANALYZE event_terms;
