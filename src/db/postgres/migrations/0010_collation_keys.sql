-- Names compared as WordPress compares them in MySQL (utf8mb4_unicode_520_ci: case and accents ignored, `ß` = `ss`,
-- trailing spaces ignored), as migration 0010 of the SQLite engine: a key kept in an indexed column, so duplicate
-- venues and organizers, and terms named by name, are found through an index. Events have no key: nothing compares
-- their titles. PostgreSQL has no function equal to `collationKey` (src/domain/text.ts), so the repositories compute
-- the keys in TypeScript when they write a record: the very function SQLite's `almanac_collate` runs.
ALTER TABLE posts ADD COLUMN title_key text COLLATE "C";
CREATE INDEX posts_by_title_key ON posts (type, lang, title_key) WHERE title_key IS NOT NULL;

ALTER TABLE terms ADD COLUMN name_key text COLLATE "C" NOT NULL DEFAULT '';
CREATE INDEX terms_by_name_key ON terms (taxonomy, lang, name_key);

-- Search folds as MySQL's LIKE under that collation does, one character with one (`ø` as `o`, `ł` as `l`, `ı` and
-- `й` as themselves): `foldForSearch`, which no PostgreSQL function reproduces (ICU's lower case and accent removal
-- fold `ø`, `ł`, `ı`, `й` and others differently). So PostgreSQL never folds in SQL: the repositories write folded
-- copies of everything search reads, computed by the function SQLite's `almanac_fold` runs: the events' search text
-- (migration 0005), the searched fields of venues and organizers in the order of LINKED_SEARCH_FIELDS
-- (src/db/listQueries.ts; null for events), and term names. The SQL fold of migration 0005 goes, so nothing can use it.
ALTER TABLE posts ADD COLUMN search_fields text[];
ALTER TABLE terms ADD COLUMN search_name text NOT NULL DEFAULT '';
DROP FUNCTION almanac_fold(text);

-- Existing records get their keys and folded copies (the events' search text folded again) from this migration's
-- step in TypeScript, in the same transaction (src/db/postgres/backfill.ts).
