-- Where an imported category or tag came from (`almanac import`). Imported terms keep their source id, and terms
-- carry no global id of their own, so a re-run tells "this is the term imported from that site" from "another term
-- that happens to have this id" by this row. `source` is the site as global ids name it: host and path, no scheme
-- or port (`example.org/blog`).
CREATE TABLE term_sources (
  term_id INTEGER PRIMARY KEY REFERENCES terms (id) ON DELETE CASCADE,
  source TEXT NOT NULL
) STRICT;
