-- A search in a window (the default list: yesterday to two years ahead) read the trigram index's matches of the
-- whole calendar, then looked each up: on a calendar of constant density they grow with its span (5,064 events for a
-- rare word at 1,000,000 events, 140 of them in the window). The dated index files each trigram of an event's folded
-- text under the month the event starts in (posts.start_month, year × 12 + month − 1, written by the repositories
-- with every post), so a search asks for its trigrams in the window's months only and reads the matches of its
-- window. The index only narrows: the LIKE on posts.search_text still decides. SQLite's migration 0018 keeps the
-- same keys in an FTS5 table.
ALTER TABLE posts ADD COLUMN start_month integer;
UPDATE posts p SET start_month = substr(e.start_local, 1, 4)::integer * 12 + substr(e.start_local, 6, 2)::integer - 1
  FROM events e WHERE e.post_id = p.id;

-- An event's keys: each trigram pg_trgm finds in its folded text (show_trgm, in C), after its month and a colon,
-- joined and split again rather than one by one (18 µs an event; 25 one by one, 56 with a trigram per character in
-- SQL). pg_trgm reads words of letters and digits, and keeps every trigram of three ASCII letters or digits of a word
-- as it is: a search asks for those of its words alone (posts.ts). No trigram holds U+001F (not a letter).
CREATE FUNCTION almanac_dated_keys(month integer, folded text) RETURNS text[] LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE WHEN cardinality(grams) = 0 THEN grams
    ELSE string_to_array(month || ':' || array_to_string(grams, chr(31) || month || ':'), chr(31)) END
  FROM show_trgm(folded) AS grams
$$;
-- The keys of one trigram in each month of a range: an event holds the trigram in the range if it holds one of them.
CREATE FUNCTION almanac_month_keys(first integer, last integer, gram text) RETURNS text[] LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT ARRAY(SELECT month::text || ':' || gram FROM generate_series(first, last) AS month)
$$;

CREATE INDEX posts_dated_search ON posts USING gin (almanac_dated_keys(start_month, search_text))
  WHERE start_month IS NOT NULL AND search_text <> '';
-- Every search reads the index's pending list whole: after a burst of writes to one month, 256 kB of it (as 0017 allows
-- the whole calendar's index) took a rare word's search from 0.44 to 2.7 ms in the index (4.9 to 9.7 ms of the
-- database's CPU per request, by hand at 320,000 events); 64 kB keeps it at 5.6 ms, with writes merging smaller
-- batches more often (without a pending list at all, 4.7 ms, each write paying its keys' merge itself).
ALTER INDEX posts_dated_search SET (gin_pending_list_limit = 64);
ANALYZE posts;
