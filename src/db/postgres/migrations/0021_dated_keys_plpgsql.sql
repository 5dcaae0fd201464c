-- The functions of the dated search index (migration 0018) in PL/pgSQL, with the same results, so the index needs no
-- rebuilding. A function in SQL whose body reads FROM cannot be inlined: every statement that wrote an event's keys
-- parsed its body (trying to inline it), then planned it again to run it, while PL/pgSQL plans its statements once per
-- connection. By hand at 100,000 events, updating 3,000 events' months took 680-780 ms instead of 830-1,030; the
-- keys of a search's months, evaluated as each search is planned, were parsed and planned the same way.
CREATE OR REPLACE FUNCTION almanac_dated_keys(month integer, folded text) RETURNS text[] LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  grams text[] := show_trgm(folded);
BEGIN
  IF cardinality(grams) = 0 THEN
    RETURN grams;
  END IF;
  RETURN string_to_array(month || ':' || array_to_string(grams, chr(31) || month || ':'), chr(31));
END
$$;
CREATE OR REPLACE FUNCTION almanac_month_keys(first integer, last integer, gram text) RETURNS text[] LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
  RETURN ARRAY(SELECT month::text || ':' || gram FROM generate_series(first, last) AS month);
END
$$;
