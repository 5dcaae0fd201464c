-- Incremental sync (`modified_after`) and iCalendar SEQUENCE.
--
-- A record deleted for good (trash purge) leaves a tombstone, so a mirror that synced it learns of the removal.
-- Almanac never reuses an id (AUTOINCREMENT); an import may write a record back under its old id, and then the
-- tombstone goes.
CREATE TABLE deleted_posts (
  id INTEGER PRIMARY KEY,
  type TEXT NOT NULL CHECK (type IN ('event', 'venue', 'organizer')),
  lang TEXT NOT NULL,
  deleted_utc TEXT NOT NULL
) STRICT;
CREATE INDEX deleted_posts_by_time ON deleted_posts (type, deleted_utc, id);

CREATE TRIGGER posts_lift_tombstone AFTER INSERT ON posts BEGIN
  DELETE FROM deleted_posts WHERE id = new.id;
END;

CREATE TRIGGER posts_leave_tombstone AFTER DELETE ON posts BEGIN
  INSERT OR REPLACE INTO deleted_posts (id, type, lang, deleted_utc)
  VALUES (old.id, old.type, old.lang, strftime('%Y-%m-%d %H:%M:%S', 'now'));
END;

-- How many times a record was changed after its creation: every write of a record sets its modification time.
ALTER TABLE posts ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
CREATE TRIGGER posts_count_revisions AFTER UPDATE OF modified_utc ON posts WHEN new.revision = old.revision BEGIN
  UPDATE posts SET revision = old.revision + 1 WHERE id = new.id;
END;
