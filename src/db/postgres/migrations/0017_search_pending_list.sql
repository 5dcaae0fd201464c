-- New entries of a GIN index wait in its pending list until the list outgrows gin_pending_list_limit (4 MB by
-- default) and is merged into the index. Every search reads the whole list, and the planner costs it so: with a
-- full list (about 2,500 posts written since the last merge) it dropped the trigram index for a scan of every post,
-- 35 ms instead of 4 for a rare word on 100,000 events. A list of at most 256 kB keeps every search on the index;
-- writes merge smaller batches more often, the same work in all.
ALTER INDEX posts_search SET (gin_pending_list_limit = 256);
