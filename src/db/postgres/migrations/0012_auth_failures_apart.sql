-- Failed authentications stay in the shared database on PostgreSQL (every node must see a lock), but apart from the
-- data: the engine writes them outside the group commit and without a change-log row, so counting one retires no
-- cached answer on any node. They are keyed by account (a user's `#id`, or the login as sent, lower-cased, when it
-- names no one), expire with their window and lock, and are short-lived: unlogged (no WAL, emptied after a crash).
DROP TABLE auth_failures;
CREATE UNLOGGED TABLE auth_failures (
  address text NOT NULL,
  account text NOT NULL,
  failures integer NOT NULL,
  window_start bigint NOT NULL,
  locked_until bigint NOT NULL,
  expires bigint NOT NULL,
  PRIMARY KEY (address, account)
);
CREATE INDEX auth_failures_expiry ON auth_failures (expires);

-- Every change to the counts, by any node (or by hand), moves this version; each node reads it with the data's
-- generation, so a caller a node remembers is checked again once a failure was recorded anywhere.
CREATE UNLOGGED TABLE auth_failures_version (version bigint NOT NULL);
INSERT INTO auth_failures_version (version) VALUES (0);
CREATE FUNCTION almanac_auth_failures_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE auth_failures_version SET version = version + 1;
  RETURN NULL;
END $$;
CREATE TRIGGER auth_failures_moved AFTER INSERT OR UPDATE OR DELETE ON auth_failures
  FOR EACH STATEMENT EXECUTE FUNCTION almanac_auth_failures_moved();
