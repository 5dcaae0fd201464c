-- The change log: every write that an answer can depend on appends one row in its own transaction, so the sequence
-- is the data's generation, shared by every process (and, on PostgreSQL, every node). Caches compare it to know,
-- exactly, whether anything changed since they computed an answer; bookkeeping (when a password was last used,
-- failed logins) writes no row and so retires nothing. Rows older than a day are pruned as new ones are written.
CREATE TABLE change_log (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  changed_utc TEXT NOT NULL,
  -- what changed, for caches that retire only what a write can change; '*' is everything
  tags TEXT NOT NULL DEFAULT '*'
) STRICT;
INSERT INTO change_log (changed_utc) VALUES (strftime('%Y-%m-%d %H:%M:%S', 'now'));
