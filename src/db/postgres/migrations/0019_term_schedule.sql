-- A term's count leaves out its scheduled events whose date has not come, as migration 0019 of the SQLite engine:
-- each link of a scheduled event without a password carries the event's date, so what one term's count leaves out is
-- one range of an index of that term's links, not every scheduled event of the calendar read once per term. Kept by
-- triggers in the transaction of every write, as the counts are.
ALTER TABLE event_terms ADD COLUMN scheduled_utc text COLLATE "C";
UPDATE event_terms et SET scheduled_utc = e.date_utc FROM events e
  WHERE e.post_id = et.event_id AND e.status = 'future' AND NOT e.protected;
CREATE INDEX event_terms_scheduled ON event_terms (term_id, scheduled_utc) WHERE scheduled_utc IS NOT NULL;

-- after the insert, as event_terms_count: an event and its links written by one statement are then all visible
CREATE FUNCTION event_terms_scheduled() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE event_terms et SET scheduled_utc = e.date_utc FROM events e
  WHERE e.post_id = NEW.event_id AND e.status = 'future' AND NOT e.protected
    AND et.event_id = NEW.event_id AND et.term_id = NEW.term_id;
  RETURN NULL;
END $$;
CREATE TRIGGER event_terms_scheduled AFTER INSERT ON event_terms FOR EACH ROW EXECUTE FUNCTION event_terms_scheduled();

-- every write of an event's details sets these columns; only a scheduled event, before or after, touches its links
CREATE FUNCTION events_scheduled_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (OLD.status = 'future' AND NOT OLD.protected) OR (NEW.status = 'future' AND NOT NEW.protected) THEN
    UPDATE event_terms SET scheduled_utc = CASE WHEN NEW.status = 'future' AND NOT NEW.protected THEN NEW.date_utc END
    WHERE event_id = NEW.post_id;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER events_scheduled_terms AFTER UPDATE OF status, protected, date_utc ON events FOR EACH ROW EXECUTE FUNCTION events_scheduled_terms();
ANALYZE event_terms;
