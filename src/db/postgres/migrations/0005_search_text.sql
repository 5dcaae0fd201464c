-- Event search compares folded text (lower case, accents removed, as `foldForSearch` folds it) in one column, so it
-- matches as WordPress on MySQL does and costs one LIKE per event instead of three. The repository writes it with
-- every event, folded by the same code on both engines. (A PostgreSQL database is created by this engine's
-- migrations in one go, so no event exists yet to fold here.)
ALTER TABLE posts ADD COLUMN search_text text NOT NULL DEFAULT '';

-- What `foldForSearch` does in JavaScript, for the searches that fold columns as they read them (venues and
-- organizers): canonical decomposition, combining marks dropped, lower case by Unicode's rules (ICU, whatever the
-- database's own locale). Immutable, so it may be used in indexes.
CREATE FUNCTION almanac_fold(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURNS NULL ON NULL INPUT AS $$
  SELECT lower(regexp_replace(normalize($1, NFD), '[\u0300-\u036f\u0483-\u0489\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e4\u06e7\u06e8\u06ea-\u06ed\u0900-\u0903\u093a-\u094f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\u3099\u309a\ufe20-\ufe2f]+', '', 'g') COLLATE "und-x-icu")
$$;
