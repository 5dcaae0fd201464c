-- Incremental sync (`modified_after`) and iCalendar SEQUENCE, as migration 0007 of the SQLite engine.
--
-- A record deleted for good (trash purge) leaves a tombstone, so a mirror that synced it learns of the removal.
-- Almanac never reuses an id; an import may write a record back under its old id, and then the tombstone goes.
CREATE TABLE deleted_posts (
  id bigint PRIMARY KEY,
  type text NOT NULL CHECK (type IN ('event', 'venue', 'organizer')),
  lang text NOT NULL,
  deleted_utc text COLLATE "C" NOT NULL
);
CREATE INDEX deleted_posts_by_time ON deleted_posts (type, deleted_utc, id);

CREATE FUNCTION posts_lift_tombstone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM deleted_posts WHERE id = NEW.id;
  RETURN NEW;
END $$;
CREATE TRIGGER posts_lift_tombstone AFTER INSERT ON posts FOR EACH ROW EXECUTE FUNCTION posts_lift_tombstone();

CREATE FUNCTION posts_leave_tombstone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO deleted_posts (id, type, lang, deleted_utc)
  VALUES (OLD.id, OLD.type, OLD.lang, to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'))
  ON CONFLICT (id) DO UPDATE SET type = excluded.type, lang = excluded.lang, deleted_utc = excluded.deleted_utc;
  RETURN OLD;
END $$;
CREATE TRIGGER posts_leave_tombstone AFTER DELETE ON posts FOR EACH ROW EXECUTE FUNCTION posts_leave_tombstone();

-- How many times a record was changed after its creation: every write of a record sets its modification time.
ALTER TABLE posts ADD COLUMN revision integer NOT NULL DEFAULT 0;
CREATE FUNCTION posts_count_revisions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- as SQLite's `UPDATE OF`: every update that sets the modification time, changed or not
  IF NEW.revision = OLD.revision THEN
    NEW.revision := OLD.revision + 1;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER posts_count_revisions BEFORE UPDATE OF modified_utc ON posts FOR EACH ROW EXECUTE FUNCTION posts_count_revisions();
