-- The change log, as migration 0010 of the SQLite engine: every write that an answer can depend on appends one row
-- in its own transaction. Writes take one advisory lock (every node's), so the sequence follows the order of
-- commits: its highest value is the data's generation for every node, and a node that sees it unchanged knows
-- that nothing it cached can have changed. Bookkeeping writes no row.
CREATE TABLE change_log (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  changed_utc text COLLATE "C" NOT NULL,
  -- what changed, for caches that retire only what a write can change; '*' is everything
  tags text NOT NULL DEFAULT '*'
);
INSERT INTO change_log (changed_utc) VALUES (to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'));
