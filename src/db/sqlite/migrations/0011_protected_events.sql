-- Password-protected events. A list entry of a protected event blanks its venue, organizers, terms and flags for a
-- caller who may not open it, and the list filters on those fields must not select it for such a caller: the
-- listing indexes carry whether an event is protected, so a filtered list still reads one index range without
-- looking each event up. The posts repository writes this copy with the other copies of post columns.
ALTER TABLE events ADD COLUMN protected INTEGER NOT NULL DEFAULT 0 CHECK (protected IN (0, 1));
UPDATE events SET protected = (SELECT p.password <> '' FROM posts p WHERE p.id = events.post_id);

DROP INDEX events_listing;
CREATE INDEX events_listing ON events (lang, hide_from_listings, start_local, date_utc, end_local, status, author_id, protected);
DROP INDEX events_by_venue;
CREATE INDEX events_by_venue ON events (venue_id, start_local, hide_from_listings, status, date_utc, author_id, protected) WHERE venue_id IS NOT NULL;

-- A term's count is a public figure (what every caller finds through the term), so it leaves protected events out,
-- as `hide_empty` then does. The triggers of migration 0003 count published-or-scheduled events without a password.
DROP TRIGGER event_terms_count_insert;
CREATE TRIGGER event_terms_count_insert AFTER INSERT ON event_terms
WHEN (SELECT status IN ('publish', 'future') AND protected = 0 FROM events WHERE post_id = NEW.event_id)
BEGIN
  UPDATE terms SET event_count = event_count + 1 WHERE id = NEW.term_id;
END;

DROP TRIGGER event_terms_count_delete;
CREATE TRIGGER event_terms_count_delete AFTER DELETE ON event_terms
WHEN (SELECT status IN ('publish', 'future') AND protected = 0 FROM events WHERE post_id = OLD.event_id)
BEGIN
  UPDATE terms SET event_count = event_count - 1 WHERE id = OLD.term_id;
END;

DROP TRIGGER events_count_status;
CREATE TRIGGER events_count_status AFTER UPDATE OF status, protected ON events
WHEN (OLD.status IN ('publish', 'future') AND OLD.protected = 0) <> (NEW.status IN ('publish', 'future') AND NEW.protected = 0)
BEGIN
  UPDATE terms SET event_count = event_count + (CASE WHEN NEW.status IN ('publish', 'future') AND NEW.protected = 0 THEN 1 ELSE -1 END)
  WHERE id IN (SELECT term_id FROM event_terms WHERE event_id = NEW.post_id);
END;

UPDATE terms SET event_count = (
  SELECT COUNT(*) FROM event_terms et JOIN events e ON e.post_id = et.event_id
  WHERE et.term_id = terms.id AND e.status IN ('publish', 'future') AND e.protected = 0);
