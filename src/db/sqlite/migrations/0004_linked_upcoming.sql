-- "Venues or organizers with upcoming events" must not read every event of every venue: the venue index covers
-- what the check needs, and organizer links carry their event's start so the check can seek to upcoming ones.
DROP INDEX events_by_venue;
CREATE INDEX events_by_venue ON events (venue_id, start_local, hide_from_listings, status, date_utc, author_id) WHERE venue_id IS NOT NULL;

ALTER TABLE event_organizers ADD COLUMN start_local TEXT NOT NULL DEFAULT '';
UPDATE event_organizers SET start_local = (SELECT e.start_local FROM events e WHERE e.post_id = event_organizers.event_id);
DROP INDEX event_organizers_by_organizer;
CREATE INDEX event_organizers_by_organizer ON event_organizers (organizer_id, start_local, event_id);
