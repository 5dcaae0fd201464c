-- Event search compares folded text (lower case, accents removed, as `foldForSearch` folds it) in one column, so it
-- matches as WordPress on MySQL does and costs one LIKE per event instead of three. The repository writes it with
-- every event, folded by the same code on both engines. (A PostgreSQL database is created by this engine's
-- migrations in one go, so no event exists yet to fold here.)
ALTER TABLE posts ADD COLUMN search_text text NOT NULL DEFAULT '';
