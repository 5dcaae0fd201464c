-- Names compared as WordPress compares them in MySQL (utf8mb4_unicode_520_ci: case and accents ignored, `ß` = `ss`,
-- trailing spaces ignored): a key computed by `almanac_collate` (src/domain/text.ts `collationKey`, registered on every
-- connection) kept in an indexed column, so duplicate venues and organizers, and terms named by name, are found
-- through an index. Events have no key: nothing compares their titles.
ALTER TABLE posts ADD COLUMN title_key TEXT;
UPDATE posts SET title_key = almanac_collate(title) WHERE type <> 'event';
CREATE INDEX posts_by_title_key ON posts (type, lang, title_key) WHERE title_key IS NOT NULL;

ALTER TABLE terms ADD COLUMN name_key TEXT NOT NULL DEFAULT '';
UPDATE terms SET name_key = almanac_collate(name);
CREATE INDEX terms_by_name_key ON terms (taxonomy, lang, name_key);

-- Search folds as MySQL's LIKE under that collation does, one character with one (`ø` as `o`, `ł` as `l`, `ı` and
-- `й` as themselves): the events' folded text of migration 0005 again (the triggers of 0008 follow in the index).
UPDATE posts SET search_text = almanac_fold(title || char(31) || excerpt || char(31) || content) WHERE type = 'event';
