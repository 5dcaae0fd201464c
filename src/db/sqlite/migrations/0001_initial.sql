-- Almanac's schema for every resource. Events, venues and organizers are "posts" sharing one id space, as in
-- WordPress; categories and tags are "terms" sharing another. AUTOINCREMENT: an id is never reused, because
-- clients keep them.

CREATE TABLE users (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  login TEXT NOT NULL COLLATE NOCASE UNIQUE,
  email TEXT COLLATE NOCASE UNIQUE,
  display_name TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('administrator', 'editor', 'author', 'contributor', 'subscriber')),
  -- bumped on every credential change; cached password checks are valid only for the version they saw
  credential_version INTEGER NOT NULL DEFAULT 1,
  registered_utc TEXT NOT NULL
) STRICT;

CREATE TABLE app_passwords (
  uuid TEXT PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  -- sha256: generated random secrets (salted SHA-256); scrypt: a password a person chose (the bootstrap one)
  scheme TEXT NOT NULL CHECK (scheme IN ('sha256', 'scrypt')),
  salt TEXT NOT NULL,
  hash TEXT NOT NULL,
  is_bootstrap INTEGER NOT NULL DEFAULT 0 CHECK (is_bootstrap IN (0, 1)),
  created_utc TEXT NOT NULL,
  last_used_utc TEXT,
  last_ip TEXT
) STRICT;
CREATE INDEX app_passwords_by_user ON app_passwords (user_id);

CREATE TABLE media (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  url TEXT NOT NULL UNIQUE,
  extension TEXT NOT NULL DEFAULT '',
  width INTEGER,
  height INTEGER,
  filesize INTEGER,
  sizes TEXT, -- JSON object of named sizes, when known
  created_utc TEXT NOT NULL
) STRICT;

CREATE TABLE posts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  type TEXT NOT NULL CHECK (type IN ('event', 'venue', 'organizer')),
  author_id INTEGER REFERENCES users (id) ON DELETE SET NULL,
  status TEXT NOT NULL CHECK (status IN ('publish', 'future', 'draft', 'pending', 'private', 'trash')),
  status_before_trash TEXT,
  slug TEXT NOT NULL,
  title TEXT NOT NULL,
  content TEXT NOT NULL DEFAULT '',
  excerpt TEXT NOT NULL DEFAULT '',
  password TEXT NOT NULL DEFAULT '',
  date_local TEXT NOT NULL,
  date_utc TEXT NOT NULL,
  modified_local TEXT NOT NULL,
  modified_utc TEXT NOT NULL,
  lang TEXT NOT NULL DEFAULT 'en' CHECK (lang IN ('en', 'fr', 'de')),
  translation_group INTEGER NOT NULL,
  parent_id INTEGER REFERENCES posts (id) ON DELETE SET NULL,
  image_id INTEGER REFERENCES media (id) ON DELETE SET NULL,
  global_id_lineage TEXT NOT NULL DEFAULT '[]', -- JSON array of ids this record had on other sites
  trashed_utc TEXT
) STRICT;
CREATE UNIQUE INDEX posts_slug ON posts (type, lang, slug);
CREATE UNIQUE INDEX posts_translation ON posts (type, translation_group, lang);
CREATE INDEX posts_by_type_date ON posts (type, lang, status, date_utc, id);
CREATE INDEX posts_by_modified ON posts (type, modified_utc, id);
CREATE INDEX posts_by_author ON posts (author_id);
CREATE INDEX posts_by_parent ON posts (parent_id) WHERE parent_id IS NOT NULL;

CREATE TABLE events (
  post_id INTEGER PRIMARY KEY REFERENCES posts (id) ON DELETE CASCADE,
  start_local TEXT NOT NULL, -- wall clock in the event's timezone
  end_local TEXT NOT NULL,
  start_utc TEXT NOT NULL,
  end_utc TEXT NOT NULL,
  timezone TEXT NOT NULL,
  all_day INTEGER NOT NULL DEFAULT 0 CHECK (all_day IN (0, 1)),
  costs TEXT NOT NULL DEFAULT '[]', -- JSON array of the cost strings as sent
  currency_symbol TEXT NOT NULL DEFAULT '',
  currency_position TEXT NOT NULL DEFAULT '' CHECK (currency_position IN ('', 'prefix', 'postfix')),
  currency_code TEXT NOT NULL DEFAULT '',
  website TEXT, -- NULL: never set, the permalink is shown instead
  show_map INTEGER NOT NULL DEFAULT 0 CHECK (show_map IN (0, 1)),
  show_map_link INTEGER NOT NULL DEFAULT 0 CHECK (show_map_link IN (0, 1)),
  hide_from_listings INTEGER NOT NULL DEFAULT 0 CHECK (hide_from_listings IN (0, 1)),
  sticky INTEGER NOT NULL DEFAULT 0 CHECK (sticky IN (0, 1)),
  featured INTEGER NOT NULL DEFAULT 0 CHECK (featured IN (0, 1)),
  ticketed INTEGER NOT NULL DEFAULT 0 CHECK (ticketed IN (0, 1)),
  venue_id INTEGER REFERENCES posts (id) ON DELETE SET NULL
) STRICT;
CREATE INDEX events_by_start ON events (start_local, end_local);
CREATE INDEX events_by_end ON events (end_local);
CREATE INDEX events_by_venue ON events (venue_id, start_local) WHERE venue_id IS NOT NULL;

CREATE TABLE venues (
  post_id INTEGER PRIMARY KEY REFERENCES posts (id) ON DELETE CASCADE,
  address TEXT NOT NULL DEFAULT '',
  city TEXT NOT NULL DEFAULT '',
  country TEXT NOT NULL DEFAULT '',
  province TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL DEFAULT '',
  stateprovince TEXT NOT NULL DEFAULT '',
  zip TEXT NOT NULL DEFAULT '',
  phone TEXT NOT NULL DEFAULT '',
  website TEXT NOT NULL DEFAULT '',
  show_map INTEGER NOT NULL DEFAULT 1 CHECK (show_map IN (0, 1)),
  show_map_link INTEGER NOT NULL DEFAULT 1 CHECK (show_map_link IN (0, 1)),
  geo_lat REAL,
  geo_lng REAL
) STRICT;
CREATE INDEX venues_by_location ON venues (geo_lat, geo_lng) WHERE geo_lat IS NOT NULL;

CREATE TABLE organizers (
  post_id INTEGER PRIMARY KEY REFERENCES posts (id) ON DELETE CASCADE,
  phone TEXT NOT NULL DEFAULT '',
  website TEXT NOT NULL DEFAULT '',
  email TEXT NOT NULL DEFAULT ''
) STRICT;

CREATE TABLE event_organizers (
  event_id INTEGER NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
  organizer_id INTEGER NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  PRIMARY KEY (event_id, organizer_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX event_organizers_by_organizer ON event_organizers (organizer_id, event_id);

CREATE TABLE terms (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  taxonomy TEXT NOT NULL CHECK (taxonomy IN ('category', 'tag')),
  name TEXT NOT NULL,
  slug TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  parent_id INTEGER REFERENCES terms (id) ON DELETE SET NULL,
  lang TEXT NOT NULL DEFAULT 'en' CHECK (lang IN ('en', 'fr', 'de')),
  translation_group INTEGER NOT NULL
) STRICT;
CREATE UNIQUE INDEX terms_slug ON terms (taxonomy, lang, slug);
CREATE UNIQUE INDEX terms_translation ON terms (taxonomy, translation_group, lang);
CREATE INDEX terms_by_parent ON terms (parent_id) WHERE parent_id IS NOT NULL;

CREATE TABLE event_terms (
  event_id INTEGER NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
  term_id INTEGER NOT NULL REFERENCES terms (id) ON DELETE CASCADE,
  PRIMARY KEY (event_id, term_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX event_terms_by_term ON event_terms (term_id, event_id);
