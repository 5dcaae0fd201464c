-- Failed Basic authentications per (client address, login), shared by every worker: too many within the window
-- lock the pair for a while (ALMANAC_AUTH_MAX_FAILURES, ALMANAC_AUTH_LOCK_SECONDS). Times are Unix milliseconds.
CREATE TABLE auth_failures (
  address TEXT NOT NULL,
  login TEXT NOT NULL COLLATE NOCASE,
  failures INTEGER NOT NULL,
  window_start INTEGER NOT NULL,
  locked_until INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (address, login)
) STRICT, WITHOUT ROWID;
