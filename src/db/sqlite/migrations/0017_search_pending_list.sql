-- PostgreSQL's migration 0017 bounds the pending list of its trigram index. SQLite's FTS5 index has no such list:
-- nothing to change here. The version keeps both engines' numbers the same.
SELECT 1;
