-- Floating publication dates, as migration 0022 of the SQLite engine: a draft or pending record that was never given
-- a publication date shows `date_utc` as `0000-00-00 00:00:00` and is dated when it is published. `date_utc` keeps
-- the time it was written, which orders it among the others as WordPress orders by its local `post_date`. Records
-- written before this migration keep the dates they were shown with. (No table rewrite: the default is a constant.)
ALTER TABLE posts ADD COLUMN date_floating boolean NOT NULL DEFAULT false;
