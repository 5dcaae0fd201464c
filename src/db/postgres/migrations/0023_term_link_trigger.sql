-- A new link of an event to a term is counted (migration 0011) and dated when the event is scheduled (migration 0019)
-- by one trigger that reads the event once. As two triggers, each read the event, and the schedule's ran an UPDATE
-- joined to it for every link, although almost every linked event is published, not scheduled: 20-40 µs of
-- PostgreSQL's CPU per link (by hand, 1,000 links per round on 20,000 events), for each new event its categories and
-- tags. After the insert, as before: an event and its links written by one statement are then all visible.
CREATE OR REPLACE FUNCTION event_terms_count() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  event record;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT status, protected, date_utc INTO event FROM events WHERE post_id = NEW.event_id;
    IF event.status IN ('publish', 'future') AND NOT event.protected THEN
      UPDATE terms SET event_count = event_count + 1 WHERE id = NEW.term_id;
      IF event.status = 'future' THEN
        UPDATE event_terms SET scheduled_utc = event.date_utc WHERE event_id = NEW.event_id AND term_id = NEW.term_id;
      END IF;
    END IF;
    RETURN NEW;
  END IF;
  IF (SELECT status IN ('publish', 'future') AND NOT protected FROM events WHERE post_id = OLD.event_id) THEN
    UPDATE terms SET event_count = event_count - 1 WHERE id = OLD.term_id;
  END IF;
  RETURN OLD;
END $$;
DROP TRIGGER event_terms_scheduled ON event_terms;
DROP FUNCTION event_terms_scheduled();
