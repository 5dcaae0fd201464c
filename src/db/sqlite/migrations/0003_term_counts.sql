-- Term counts are stored, as WordPress stores them, and kept right by triggers in the same transaction as every
-- change: links added or removed, and events entering or leaving the published-or-scheduled statuses. A read
-- subtracts the scheduled events whose date has not come (a small set, found through events_scheduled).
ALTER TABLE terms ADD COLUMN event_count INTEGER NOT NULL DEFAULT 0;

UPDATE terms SET event_count = (
  SELECT COUNT(*) FROM event_terms et JOIN events e ON e.post_id = et.event_id
  WHERE et.term_id = terms.id AND e.status IN ('publish', 'future'));

CREATE INDEX events_scheduled ON events (date_utc) WHERE status = 'future';

CREATE TRIGGER event_terms_count_insert AFTER INSERT ON event_terms
WHEN (SELECT status FROM events WHERE post_id = NEW.event_id) IN ('publish', 'future')
BEGIN
  UPDATE terms SET event_count = event_count + 1 WHERE id = NEW.term_id;
END;

CREATE TRIGGER event_terms_count_delete AFTER DELETE ON event_terms
WHEN (SELECT status FROM events WHERE post_id = OLD.event_id) IN ('publish', 'future')
BEGIN
  UPDATE terms SET event_count = event_count - 1 WHERE id = OLD.term_id;
END;

CREATE TRIGGER events_count_status AFTER UPDATE OF status ON events
WHEN (OLD.status IN ('publish', 'future')) <> (NEW.status IN ('publish', 'future'))
BEGIN
  UPDATE terms SET event_count = event_count + (CASE WHEN NEW.status IN ('publish', 'future') THEN 1 ELSE -1 END)
  WHERE id IN (SELECT term_id FROM event_terms WHERE event_id = NEW.post_id);
END;

-- An event deleted for good releases its terms while its status can still be read.
CREATE TRIGGER events_release_terms BEFORE DELETE ON events
BEGIN
  DELETE FROM event_terms WHERE event_id = OLD.post_id;
END;
