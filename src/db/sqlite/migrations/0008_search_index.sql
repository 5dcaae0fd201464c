-- Event search finds the events holding a word (of three characters or more) through a trigram index of the folded
-- text of migration 0005, instead of reading that text for every event of the window. The index only narrows: the
-- LIKE on posts.search_text still decides, so results are the same. External content (the text lives in posts),
-- no positions and no sizes (detail=none, columnsize=0): it stays small, and triggers keep it in step with posts in
-- the same transaction as every change, from any process.
CREATE VIRTUAL TABLE posts_search USING fts5(
  search_text, content = 'posts', content_rowid = 'id', tokenize = 'trigram case_sensitive 1', detail = 'none', columnsize = 0
);
INSERT INTO posts_search (rowid, search_text) SELECT id, search_text FROM posts WHERE search_text <> '';

CREATE TRIGGER posts_search_insert AFTER INSERT ON posts WHEN NEW.search_text <> ''
BEGIN
  INSERT INTO posts_search (rowid, search_text) VALUES (NEW.id, NEW.search_text);
END;

CREATE TRIGGER posts_search_delete AFTER DELETE ON posts WHEN OLD.search_text <> ''
BEGIN
  INSERT INTO posts_search (posts_search, rowid, search_text) VALUES ('delete', OLD.id, OLD.search_text);
END;

CREATE TRIGGER posts_search_update AFTER UPDATE OF search_text ON posts WHEN OLD.search_text IS NOT NEW.search_text
BEGIN
  INSERT INTO posts_search (posts_search, rowid, search_text) SELECT 'delete', OLD.id, OLD.search_text WHERE OLD.search_text <> '';
  INSERT INTO posts_search (rowid, search_text) SELECT NEW.id, NEW.search_text WHERE NEW.search_text <> '';
END;
