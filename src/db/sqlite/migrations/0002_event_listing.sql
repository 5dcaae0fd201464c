-- Event lists filter by language and status and order by start: copies of those post columns on `events` let one
-- index answer a page and its count without touching `posts` row by row. The posts repository writes both.
ALTER TABLE events ADD COLUMN lang TEXT NOT NULL DEFAULT 'en' CHECK (lang IN ('en', 'fr', 'de'));
ALTER TABLE events ADD COLUMN status TEXT NOT NULL DEFAULT 'draft' CHECK (status IN ('publish', 'future', 'draft', 'pending', 'private', 'trash'));
ALTER TABLE events ADD COLUMN date_utc TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN author_id INTEGER;

UPDATE events SET
  lang = (SELECT p.lang FROM posts p WHERE p.id = events.post_id),
  status = (SELECT p.status FROM posts p WHERE p.id = events.post_id),
  date_utc = (SELECT p.date_utc FROM posts p WHERE p.id = events.post_id),
  author_id = (SELECT p.author_id FROM posts p WHERE p.id = events.post_id);

-- Index order = list order (start, then publication date, then id), so a page is read straight off the index.
CREATE INDEX events_listing ON events (lang, hide_from_listings, start_local, date_utc, end_local, status, author_id);

-- The listing index supersedes these; the venue/organizer list index need not carry every event.
DROP INDEX events_by_start;
DROP INDEX events_by_end;
DROP INDEX posts_by_type_date;
CREATE INDEX posts_linked_listing ON posts (type, lang, status, date_utc, id) WHERE type <> 'event';
