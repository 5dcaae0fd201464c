-- Event search finds the events holding a word of three characters or more through a trigram index of the folded
-- text of migration 0005 (pg_trgm answers LIKE '%word%' from a GIN index), instead of reading that text for every
-- event of the window. The LIKE still decides, so results are those of the SQLite engine's FTS5 trigram index.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX posts_search ON posts USING gin (search_text gin_trgm_ops) WHERE search_text <> '';
