-- Password-protected events, as migration 0011 of the SQLite engine. A list entry of a protected event blanks its
-- venue, organizers, terms and flags for a caller who may not open it, and the list filters on those fields must not
-- select it for such a caller: the listing indexes carry whether an event is protected, so a filtered list still
-- reads one index range without looking each event up. The posts repository writes this copy with the other copies
-- of post columns.
ALTER TABLE events ADD COLUMN protected boolean NOT NULL DEFAULT false;
UPDATE events e SET protected = (p.password <> '') FROM posts p WHERE p.id = e.post_id;

DROP INDEX events_listing;
CREATE INDEX events_listing ON events (lang, hide_from_listings, start_local, date_utc, end_local, status, author_id, protected);
DROP INDEX events_by_venue;
CREATE INDEX events_by_venue ON events (venue_id, start_local, hide_from_listings, status, date_utc, author_id, protected) WHERE venue_id IS NOT NULL;

-- A term's count is a public figure (what every caller finds through the term), so it leaves protected events out,
-- as `hide_empty` then does. The triggers of migration 0003 count published-or-scheduled events without a password.
CREATE OR REPLACE FUNCTION event_terms_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF (SELECT status IN ('publish', 'future') AND NOT protected FROM events WHERE post_id = NEW.event_id) THEN
      UPDATE terms SET event_count = event_count + 1 WHERE id = NEW.term_id;
    END IF;
    RETURN NEW;
  END IF;
  IF (SELECT status IN ('publish', 'future') AND NOT protected FROM events WHERE post_id = OLD.event_id) THEN
    UPDATE terms SET event_count = event_count - 1 WHERE id = OLD.term_id;
  END IF;
  RETURN OLD;
END $$;

CREATE OR REPLACE FUNCTION events_count_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (OLD.status IN ('publish', 'future') AND NOT OLD.protected) <> (NEW.status IN ('publish', 'future') AND NOT NEW.protected) THEN
    UPDATE terms SET event_count = event_count + (CASE WHEN NEW.status IN ('publish', 'future') AND NOT NEW.protected THEN 1 ELSE -1 END)
    WHERE id IN (SELECT term_id FROM event_terms WHERE event_id = NEW.post_id);
  END IF;
  RETURN NEW;
END $$;
DROP TRIGGER events_count_status ON events;
CREATE TRIGGER events_count_status AFTER UPDATE OF status, protected ON events FOR EACH ROW EXECUTE FUNCTION events_count_status();

UPDATE terms t SET event_count = (
  SELECT COUNT(*) FROM event_terms et JOIN events e ON e.post_id = et.event_id
  WHERE et.term_id = t.id AND e.status IN ('publish', 'future') AND NOT e.protected);

-- Lists compare a request's password with records' passwords as reads by id do (postRules.unlocks): equal octets,
-- compared as SHA-256 digests so the time taken tells nothing about the password (SQLite registers the same function
-- on each connection). A record without a password is open to any request.
CREATE FUNCTION almanac_unlocks(password text, given text) RETURNS boolean LANGUAGE sql STABLE STRICT PARALLEL SAFE AS $$
  SELECT password = '' OR sha256(convert_to(password, 'UTF8')) = sha256(convert_to(given, 'UTF8'))
$$;
