-- Event search compares folded text (lower case, accents removed: `almanac_fold`, registered on every connection)
-- in one column, so it matches as WordPress on MySQL does and costs one LIKE per event instead of three.
ALTER TABLE posts ADD COLUMN search_text TEXT NOT NULL DEFAULT '';
UPDATE posts SET search_text = almanac_fold(title || char(31) || excerpt || char(31) || content) WHERE type = 'event';
