-- A search in a window (the default list: yesterday to two years ahead) read its window off the listing index and
-- probed the trigram index's matches of the whole calendar: on a calendar of constant density, both grow with its
-- span. The dated index files each trigram of an event's folded text under the month the event starts in
-- (posts.start_month, year × 12 + month − 1), so a search asks for its trigrams in the window's months only and reads
-- the matches of its window. The index only narrows: the LIKE on posts.search_text still decides. Contentless (its
-- keys are computed by `almanac_dated_keys`, datedSearch.ts), deleted from by rowid; triggers keep it in step with
-- posts in the same transaction as every change.
ALTER TABLE posts ADD COLUMN start_month INTEGER;
UPDATE posts SET start_month = (SELECT CAST(substr(e.start_local, 1, 4) AS INTEGER) * 12 + CAST(substr(e.start_local, 6, 2) AS INTEGER) - 1
  FROM events e WHERE e.post_id = posts.id) WHERE type = 'event';

CREATE VIRTUAL TABLE events_search USING fts5(keys, content = '', contentless_delete = 1, tokenize = 'ascii', detail = 'none');
INSERT INTO events_search (rowid, keys)
  SELECT id, almanac_dated_keys(start_month, search_text) FROM posts WHERE start_month IS NOT NULL AND search_text <> '';

CREATE TRIGGER events_search_insert AFTER INSERT ON posts WHEN NEW.start_month IS NOT NULL AND NEW.search_text <> ''
BEGIN
  INSERT INTO events_search (rowid, keys) VALUES (NEW.id, almanac_dated_keys(NEW.start_month, NEW.search_text));
END;

CREATE TRIGGER events_search_delete AFTER DELETE ON posts WHEN OLD.start_month IS NOT NULL AND OLD.search_text <> ''
BEGIN
  DELETE FROM events_search WHERE rowid = OLD.id;
END;

CREATE TRIGGER events_search_update AFTER UPDATE OF search_text, start_month ON posts
  WHEN OLD.search_text IS NOT NEW.search_text OR OLD.start_month IS NOT NEW.start_month
BEGIN
  DELETE FROM events_search WHERE rowid = OLD.id AND OLD.start_month IS NOT NULL AND OLD.search_text <> '';
  INSERT INTO events_search (rowid, keys)
    SELECT NEW.id, almanac_dated_keys(NEW.start_month, NEW.search_text) WHERE NEW.start_month IS NOT NULL AND NEW.search_text <> '';
END;
