-- How many listed events (published or scheduled, not hidden from listings) start on each day, per language: the
-- total of an event list bounded by dates alone is the sum of its whole days plus its two edge days counted event by
-- event, so a window of two years costs about what a week does (src/db/listQueries.ts, `summedTotal`). Kept by
-- triggers, in the transaction of every write of an event.
CREATE TABLE event_days (
  lang TEXT NOT NULL,
  day TEXT NOT NULL, -- the date part of start_local
  listed INTEGER NOT NULL,
  PRIMARY KEY (lang, day)
) STRICT, WITHOUT ROWID;

INSERT INTO event_days (lang, day, listed)
  SELECT lang, substr(start_local, 1, 10), COUNT(*) FROM events
  WHERE status IN ('publish', 'future') AND hide_from_listings = 0 GROUP BY lang, substr(start_local, 1, 10);

CREATE TRIGGER event_days_insert AFTER INSERT ON events
WHEN NEW.status IN ('publish', 'future') AND NEW.hide_from_listings = 0
BEGIN
  INSERT INTO event_days (lang, day, listed) VALUES (NEW.lang, substr(NEW.start_local, 1, 10), 1)
    ON CONFLICT (lang, day) DO UPDATE SET listed = listed + 1;
END;

CREATE TRIGGER event_days_delete AFTER DELETE ON events
WHEN OLD.status IN ('publish', 'future') AND OLD.hide_from_listings = 0
BEGIN
  UPDATE event_days SET listed = listed - 1 WHERE lang = OLD.lang AND day = substr(OLD.start_local, 1, 10);
END;

-- an update moves the event between days only when its listing, language or day changes: every write of an event's
-- details sets these columns, and most leave them as they were
CREATE TRIGGER event_days_leave AFTER UPDATE OF status, hide_from_listings, lang, start_local ON events
WHEN OLD.status IN ('publish', 'future') AND OLD.hide_from_listings = 0
  AND NOT (NEW.status IN ('publish', 'future') AND NEW.hide_from_listings = 0 AND NEW.lang = OLD.lang
    AND substr(NEW.start_local, 1, 10) = substr(OLD.start_local, 1, 10))
BEGIN
  UPDATE event_days SET listed = listed - 1 WHERE lang = OLD.lang AND day = substr(OLD.start_local, 1, 10);
END;

CREATE TRIGGER event_days_enter AFTER UPDATE OF status, hide_from_listings, lang, start_local ON events
WHEN NEW.status IN ('publish', 'future') AND NEW.hide_from_listings = 0
  AND NOT (OLD.status IN ('publish', 'future') AND OLD.hide_from_listings = 0 AND NEW.lang = OLD.lang
    AND substr(NEW.start_local, 1, 10) = substr(OLD.start_local, 1, 10))
BEGIN
  INSERT INTO event_days (lang, day, listed) VALUES (NEW.lang, substr(NEW.start_local, 1, 10), 1)
    ON CONFLICT (lang, day) DO UPDATE SET listed = listed + 1;
END;

-- Events that end on a later day than they start (few): those of a window's inside days that end after it
CREATE INDEX events_multiday ON events (lang, start_local, end_local) WHERE substr(start_local, 1, 10) <> substr(end_local, 1, 10);
