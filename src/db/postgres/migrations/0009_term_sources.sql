-- Where an imported category or tag came from (`almanac import`): imported terms keep their source id, and a re-run
-- tells "this is the term imported from that site" from "another term that happens to have this id" by this row.
-- `source` is the site as global ids name it: host and path, no scheme or port (`example.org/blog`).
CREATE TABLE term_sources (
  term_id bigint PRIMARY KEY REFERENCES terms (id) ON DELETE CASCADE,
  source text NOT NULL
);
