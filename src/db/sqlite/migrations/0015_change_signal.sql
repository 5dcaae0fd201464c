-- PostgreSQL's migration 0015 makes the change log notify the nodes that listen for it. The processes of a SQLite
-- database share one machine and read the log's newest sequence from the file itself: nothing to change here. The
-- version keeps both engines' numbers the same.
SELECT 1;
