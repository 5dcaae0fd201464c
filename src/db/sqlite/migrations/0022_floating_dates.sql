-- A draft or pending record that was never given a publication date has a "floating" one, as WordPress calls it:
-- its `date_utc` shows `0000-00-00 00:00:00` and it is dated when it is published. `date_utc` keeps the time it
-- was written, which orders it among the others as WordPress orders by its local `post_date`; this flag says that
-- the date is not one yet. Records written before this migration keep the dates they were shown with.
ALTER TABLE posts ADD COLUMN date_floating INTEGER NOT NULL DEFAULT 0 CHECK (date_floating IN (0, 1));
