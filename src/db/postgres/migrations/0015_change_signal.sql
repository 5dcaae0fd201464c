-- Every node listens on the channel `almanac_changed` (src/db/postgres/changeSignal.ts): a notification, sent when
-- the transaction that appended to the change log or moved the lock-out's counts commits, tells a node to read them
-- again. While none has arrived, a node needs only a round trip on its listening connection per request (every
-- notification committed before that round trip began is delivered before its answer), not a reading of the log.
CREATE FUNCTION almanac_notify_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('almanac_changed', '');
  RETURN NULL;
END $$;
CREATE TRIGGER change_log_notify AFTER INSERT ON change_log FOR EACH STATEMENT EXECUTE FUNCTION almanac_notify_changed();
CREATE TRIGGER auth_failures_version_notify AFTER UPDATE ON auth_failures_version FOR EACH STATEMENT EXECUTE FUNCTION almanac_notify_changed();
