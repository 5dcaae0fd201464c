-- Failed Basic authentications per (client address, login), shared by every worker and node: too many within the
-- window lock the pair for a while (ALMANAC_AUTH_MAX_FAILURES, ALMANAC_AUTH_LOCK_SECONDS). Times are Unix
-- milliseconds. Logins are kept lower case, as SQLite's NOCASE compares them.
CREATE TABLE auth_failures (
  address text NOT NULL,
  login text NOT NULL,
  failures integer NOT NULL,
  window_start bigint NOT NULL,
  locked_until bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (address, login)
);
