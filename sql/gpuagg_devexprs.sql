-- GpuAgg's arguments of integer arithmetic (+ - * / %, unary minus, casts among the integers and
-- to numeric), integer and numeric CASE WHEN, and boolean columns as conditions: on the device
-- scan, and for rows read in place without it.  Every result is checked against PostgreSQL's own
-- plan; where there is a device, that the device scan ran and how many tuples it left to the CPU.
-- What PostgreSQL raises (integer out of range, division by zero) the CPU raises reading the batch
-- again, and only for rows that pass the WHERE clause.
LOAD 'gpuext';
SET gpuext.agg_min_rows = 0;
SET gpuext.min_gpu_elements = 0;
SET max_parallel_workers_per_gather = 0;

-- 'ok' when q's rows with GpuAgg allowed equal its rows with gpuext.enable_agg off and, where there
-- is a device (without one GpuAgg is not planned), whether every row was read in place as in_place
-- says, and whether the device scan ran as devscan says, with no tuple left to the CPU; else what
-- differed.
CREATE FUNCTION check_expr(q text, devscan boolean DEFAULT true, in_place boolean DEFAULT NULL)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  offloads boolean := (SELECT gpu_kernels AND device_state <> 'unavailable' FROM gpuext_info());
  plan jsonb;
  node jsonb;
  got text;
  want text;
  agg text := 'SELECT count(*) || '' rows: '' || coalesce(string_agg(r, '' '' ORDER BY r), '''') '
              'FROM (SELECT row(s.*)::text AS r FROM (%s) s) g';
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
  EXECUTE format(agg, q) INTO got;
  PERFORM set_config('gpuext.enable_agg', 'off', true);
  EXECUTE format(agg, q) INTO want;
  PERFORM set_config('gpuext.enable_agg', 'on', true);
  IF got IS DISTINCT FROM want THEN
    RETURN format('got %s, want %s', got, want);
  END IF;
  IF NOT offloads THEN
    RETURN 'ok';
  END IF;
  node := jsonb_path_query_first(plan, '$.** ? (@."Custom Plan Provider" == "GpuAgg")');
  IF node IS NULL THEN
    RETURN 'GpuAgg not planned';
  END IF;
  IF in_place IS NOT NULL AND ((node->>'Rows In Place')::bigint = (node->>'Rows Read')::bigint) <> in_place THEN
    RETURN format('%s of %s rows read in place', node->>'Rows In Place', node->>'Rows Read');
  END IF;
  IF NOT current_setting('gpuext.enable_device_scan')::boolean THEN
    RETURN 'ok';
  END IF;
  IF (node ? 'Device Scan Blocks') <> devscan THEN
    RETURN format('device scan: %s', NOT devscan);
  END IF;
  IF devscan AND (node->>'Tuples Decoded On CPU')::bigint <> 0 THEN
    RETURN format('%s tuples on the CPU', node->>'Tuples Decoded On CPU');
  END IF;
  RETURN 'ok';
END $$;

-- Integers of every width near their ranges' ends, booleans, a short text, numeric(15,2), NULLs in
-- each, after a text column of varying width; then columns added with defaults.
CREATE TABLE dx (pad text, a int4, b int8, c int2, f bool, s text, q numeric(15,2), g int4);
INSERT INTO dx
SELECT repeat('p', i % 50),
       CASE WHEN i % 101 = 0 THEN NULL ELSE (i * 7919) % 200001 - 100000 END,
       CASE WHEN i % 103 = 0 THEN NULL WHEN i % 997 = 0 THEN 9223372036854775807 - i ELSE i::int8 * 1000003 - 5000000000 END,
       CASE WHEN i % 107 = 0 THEN NULL WHEN i % 991 = 0 THEN 32767 - i % 3 ELSE (i % 301) - 150 END,
       CASE WHEN i % 11 = 0 THEN NULL ELSE i % 3 = 0 END,
       CASE WHEN i % 13 = 0 THEN NULL ELSE (ARRAY['1-URGENT', '2-HIGH', '3-MEDIUM', '4-NOT SPECIFIED', '5-LOW'])[i % 5 + 1] END,
       CASE WHEN i % 17 = 0 THEN NULL ELSE (i % 10000) / 100.0 - 20 END,
       i % 7
FROM generate_series(1, 20000) i;
ALTER TABLE dx ADD COLUMN fd bool DEFAULT true, ADD COLUMN ad int4 DEFAULT 42;
INSERT INTO dx (pad, a, b, c, f, s, q, g, fd, ad)
SELECT 'new', i, i, i, i % 2 = 0, '2-HIGH', i, i % 7, i % 4 = 0, -i FROM generate_series(1, 500) i;
VACUUM ANALYZE dx;

-- Integer arithmetic: its result type's range, division truncating toward zero, modulus of
-- negatives, casts that widen and narrow, integers in numeric arithmetic.
SELECT check_expr('SELECT sum(a * 2 + c), sum(b - a), avg(a / 7), sum(a % 5), min(-c), max(c % 100 * (c % 100)), count(*) FROM dx WHERE b < 9000000000000000000');
SELECT check_expr('SELECT sum(a::int8 * 1000000), sum((b / 1000000000)::int4), sum(c::int4 + a), sum(c + c), avg(b / -3) FROM dx WHERE b < 9000000000000000000 AND c < 16000');
SELECT check_expr('SELECT sum(a * q), sum(q - c), avg(a::numeric * 2) FROM dx');
SELECT check_expr('SELECT sum(2 - a), max(c / 2), min(b % 1000), sum(-(a - c) * 3) FROM dx WHERE a > 0 AND c < 0');
SELECT check_expr('SELECT sum(ad * 2), max(ad / 5), min(ad % 4) FROM dx WHERE fd');
-- Errors PostgreSQL raises, only for rows that pass the WHERE clause.
SELECT sum(a * 100000) FROM dx;
SELECT sum(c * 1000) FROM dx WHERE c > 30000;
SELECT sum(c * 2::int2) FROM dx WHERE c > 30000;
SELECT sum(b + b) FROM dx WHERE b > 9000000000000000000;
SELECT sum((b / 1000)::int4) FROM dx;
SELECT sum(a / (c - c)) FROM dx WHERE c = 1;
SELECT sum(a % (c - c)) FROM dx WHERE c = 1;
SELECT sum(a / (c - c)) FROM dx WHERE c IS NULL;
SELECT check_expr('SELECT sum(a * 100000) FROM dx WHERE a BETWEEN -20000 AND 20000');
SELECT check_expr('SELECT sum((-2147483647 - 1) / (c - c - 1)::int8) FROM dx WHERE c = 5');
SELECT (-2147483647 - 1) / (c - c - 1) FROM dx WHERE c = 5 LIMIT 1;
SELECT sum((-2147483647 - 1) / (c - c - 1)) FROM dx WHERE c = 5;

-- Integer and numeric CASE WHEN: branches of columns (NULLs among them), constants and CASEs;
-- conditions of every compiled form, text (TPC-H Q12's shape) and booleans among them.
SELECT check_expr($q$SELECT sum(CASE WHEN s = '1-URGENT' OR s = '2-HIGH' THEN 1 ELSE 0 END),
  sum(CASE WHEN s <> '1-URGENT' AND s <> '2-HIGH' THEN 1 ELSE 0 END), count(*) FROM dx$q$);
SELECT check_expr($q$SELECT sum(CASE WHEN a > 0 THEN a WHEN c < 0 THEN c ELSE 0 END),
  max(CASE WHEN f THEN b ELSE -1 END), min(CASE WHEN g IN (1, 2) THEN CASE WHEN a % 2 = 0 THEN c ELSE 7 END ELSE g END),
  avg(CASE WHEN s LIKE '3%' THEN a END + 0) FROM dx$q$);
SELECT check_expr($q$SELECT sum(CASE WHEN a > 0 THEN a WHEN c < 0 THEN c ELSE 0 END),
  max(CASE WHEN f THEN b ELSE -1 END), min(CASE WHEN g IN (1, 2) THEN CASE WHEN a % 2 = 0 THEN c ELSE 7 END ELSE g END)
  FROM dx$q$);
SELECT check_expr($q$SELECT sum(CASE WHEN f THEN q ELSE 0.00 END), avg(CASE WHEN a < 0 THEN q ELSE -1.25 END),
  max(CASE WHEN q IS NULL THEN 0.50 ELSE q END), sum(CASE WHEN g = 3 THEN a ELSE 0 END * 2) FROM dx WHERE g <> 6$q$);
-- Without ELSE (NULL), and NULL branches: what sum, avg, min and max leave out and count() does not
-- count (count(CASE WHEN ... THEN 1 END)).
SELECT check_expr($q$SELECT sum(CASE WHEN c > 0 THEN a END), avg(CASE WHEN f THEN q END), count(CASE WHEN s = '1-URGENT' THEN 1 END),
  count(CASE WHEN f THEN NULL ELSE 1 END) FROM dx$q$);
SELECT check_expr($q$SELECT max(CASE WHEN g = 1 THEN b WHEN g = 2 THEN NULL ELSE c END),
  min(CASE WHEN a < 0 THEN q WHEN a > 50000 THEN NULL ELSE 1.50 END), count(a * 2), count(CASE WHEN f THEN c END) FROM dx$q$);
-- The arguments' registers together past the device's 24: the CPU reads the rows.
SELECT check_expr($q$SELECT sum(CASE WHEN c > 0 THEN a END), avg(CASE WHEN f THEN q END), count(CASE WHEN s = '1-URGENT' THEN 1 END),
  count(CASE WHEN f THEN NULL ELSE 1 END), max(CASE WHEN g = 1 THEN b WHEN g = 2 THEN NULL ELSE c END),
  min(CASE WHEN a < 0 THEN q WHEN a > 50000 THEN NULL ELSE 1.50 END), count(a * 2), count(CASE WHEN f THEN c END) FROM dx$q$, false);
SELECT check_expr('SELECT sum(CASE WHEN a > 1000000 THEN a END), count(CASE WHEN a > 1000000 THEN 1 END), count(*) FROM dx');
-- Arithmetic in a branch: computed for every row, its error (a / 0 where c = 0) not raised where
-- the branch is not taken.  Not compiled: branches of other display scales (the value's scale
-- would depend on the row), a CASE of NULLs alone.
SELECT check_expr('SELECT sum(CASE WHEN c > 0 THEN a / c ELSE 0 END), max(CASE WHEN c <> 0 THEN b / c END) FROM dx');
SELECT check_expr('SELECT sum(CASE WHEN f THEN q ELSE 0 END) FROM dx', false);
SELECT check_expr('SELECT sum(CASE WHEN c > 0 THEN NULL::int4 END), count(*) FROM dx', false);

-- Boolean columns as conditions: alone, NOT, IS [NOT] TRUE / FALSE / UNKNOWN, = and <>, IN,
-- in WHERE, FILTER and CASE; NULLs pass none but IS NOT TRUE, IS NOT FALSE and IS UNKNOWN.
SELECT check_expr('SELECT count(*), sum(a) FROM dx WHERE f');
SELECT check_expr('SELECT count(*), sum(a) FROM dx WHERE NOT f');
SELECT check_expr('SELECT count(*), sum(a) FROM dx WHERE f IS NOT TRUE');
SELECT check_expr('SELECT count(*), sum(a) FROM dx WHERE f IS NOT FALSE AND fd');
SELECT check_expr('SELECT count(*), sum(a) FROM dx WHERE f IS FALSE OR f IS UNKNOWN');
SELECT check_expr('SELECT count(*), sum(a) FROM dx WHERE f IS NOT UNKNOWN AND NOT (f IS TRUE)');
SELECT check_expr('SELECT count(*), sum(a) FROM dx WHERE f = true OR fd <> false');
SELECT check_expr('SELECT count(*) FILTER (WHERE f), count(*) FILTER (WHERE NOT fd), sum(c) FILTER (WHERE f IN (false)), sum(CASE WHEN f THEN 1 ELSE 0 END) FROM dx');

-- GROUP BY on the device: the keys' groups get the arguments' values.
SELECT check_expr($q$SELECT g, sum(CASE WHEN f THEN 1 ELSE 0 END), sum(a * 2 - c), max(b / 7), sum(CASE WHEN f THEN q ELSE 0.00 END),
  count(CASE WHEN s LIKE '2%' THEN 1 END), avg(CASE WHEN c < 0 THEN q END) FROM dx GROUP BY g$q$);

-- extract(year ...), date_part('year', ...) and date_trunc(unit, ...) of a column compared with a
-- constant, as ranges of the column: every operator against constants a value equals, none equals
-- (a fraction, year 0, a timestamp inside a unit) and past both ends of the types' ranges, over
-- dates and timestamps at year and unit boundaries, BC, the ends of the ranges, infinities, NULLs.
CREATE TABLE dd (pad text, d date, ts timestamp, v int4);
INSERT INTO dd SELECT repeat('d', i % 20), date '1990-01-01' + (i * 37) % 3700 - 1, timestamp '1994-12-31 12:00' + i * interval '1 hour 17 minutes', i
FROM generate_series(1, 20000) i;
INSERT INTO dd (pad, d, ts, v) VALUES
  ('e', '4714-11-24 BC', '4714-11-24 00:00 BC', 1), ('e', '4714-11-30 BC', '4714-11-30 23:59 BC', 1), ('e', '0001-12-31 BC', '0001-12-31 23:59:59.999999 BC', 2),
  ('e', '0001-01-01', '0001-01-01 00:00', 3), ('e', '0044-03-15 BC', '0044-03-15 12:00 BC', 4),
  ('e', '5874897-12-31', '294276-12-31 23:59:59.999999', 5), ('e', 'infinity', 'infinity', 6),
  ('e', '-infinity', '-infinity', 7), ('e', NULL, NULL, 8), ('e', '1995-01-01', '1995-03-01 00:00', 9),
  ('e', '1994-12-31', '1995-02-28 23:59:59.999999', 10), ('e', '1996-01-01', '1995-03-31 23:59:59.999999', 11);
VACUUM ANALYZE dd;
SELECT coalesce(string_agg(q || ': ' || r, E'\n'), 'all ok') AS years FROM (
  SELECT q, check_expr(q) r FROM (
    SELECT format('SELECT count(*), sum(v) FROM dd WHERE %s %s %s', f, op, k) q
    FROM unnest(ARRAY['extract(year from d)', 'extract(year from ts)', 'EXTRACT(YEAR FROM ts)']) f,
         unnest(ARRAY['<', '<=', '=', '>=', '>', '<>']) op,
         unnest(ARRAY['1995', '1995.5', '0', '-1', '1', '-44', '-4713', '-4714', '5874897', '294276', '1e20', '-1e20', '1e400', '2000.0']) k
    UNION ALL
    SELECT format('SELECT count(*), sum(v) FROM dd WHERE %s %s date_part(''year'', ts)', k, op)
    FROM unnest(ARRAY['<', '<=', '=', '>=', '>', '<>']) op, unnest(ARRAY['1995', '1995.5', '0', '-1', '-44', '1e300']) k) x) y
WHERE r <> 'ok';
SELECT coalesce(string_agg(q || ': ' || r, E'\n'), 'all ok') AS truncs FROM (
  SELECT q, check_expr(q) r FROM (
    SELECT format('SELECT count(*), sum(v) FROM dd WHERE date_trunc(%L, ts) %s %L', u, op, k) q
    FROM unnest(ARRAY['second', 'minute', 'hour', 'day', 'week', 'DAY']) u,
         unnest(ARRAY['<', '<=', '=', '>=', '>', '<>']) op,
         unnest(ARRAY['1995-03-01 00:00', '1995-03-15 12:34:56.5', '1995-01-01', '1995-02-27', '0044-03-15 BC']) k) x) y
WHERE r <> 'ok';
-- Inside OR a range is an AND of two comparisons, distributed into OR groups on the device.
SELECT check_expr('SELECT count(*), sum(v) FROM dd WHERE extract(year from d) = 1995 OR v < 100');
SELECT check_expr('SELECT count(*), sum(v) FROM dd WHERE NOT (extract(year from d) = 1995) OR v < 100');
SELECT check_expr('SELECT count(*) FILTER (WHERE extract(year from ts) >= 1996), sum(v) FILTER (WHERE date_trunc(''day'', ts) = ''1995-03-01'') FROM dd');
-- The other fields of extract (and date_part's), compared through the column's image under the
-- field on the device: each operator against the field's ends, values inside, past them, a
-- fraction; over the same rows (a field of an infinity is NULL, BC and the ends of the ranges).
SELECT coalesce(string_agg(q || ': ' || r, E'\n'), 'all ok') AS fields FROM (
  SELECT q, check_expr(q) r FROM (
    SELECT format('SELECT count(*), sum(v) FROM dd WHERE %s %s %s', f, op, k) q
    FROM (VALUES ('extract(quarter from d)', ARRAY['0', '1', '2', '4', '5', '2.5']),
                 ('extract(month from d)', ARRAY['0', '1', '3', '12', '13', '6.5']),
                 ('extract(day from d)', ARRAY['0', '1', '15', '31', '32', '-1e20']),
                 ('extract(doy from d)', ARRAY['0', '1', '60', '366', '367', '59.9']),
                 ('extract(dow from d)', ARRAY['-1', '0', '3', '6', '7', '1e400']),
                 ('extract(week from d)', ARRAY['0', '1', '26', '52', '53', '54', '30.5']),
                 ('extract(month from ts)', ARRAY['0', '1', '3', '12', '13', '2.5']),
                 ('extract(doy from ts)', ARRAY['0', '1', '60', '366', '367', '365.5']),
                 ('extract(dow from ts)', ARRAY['-1', '0', '3', '6', '7', '0.5']),
                 ('extract(week from ts)', ARRAY['0', '1', '27', '52', '53', '54', '52.5']),
                 ('extract(hour from ts)', ARRAY['-1', '0', '12', '23', '24', '11.5']),
                 ('extract(minute from ts)', ARRAY['-1', '0', '17', '59', '60', '16.99']),
                 ('extract(second from ts)', ARRAY['-1', '0', '30', '59.999999', '60', '12.5000005']),
                 ('extract(milliseconds from ts)', ARRAY['-1', '0', '30000', '59999.999', '60000', '1e20']),
                 ('extract(microseconds from ts)', ARRAY['-1', '0', '30000000', '59999999', '60000000', '0.5']),
                 ('date_part(''month'', ts)', ARRAY['0', '1', '3', '12', '13', '2.5']),
                 ('date_part(''hour'', ts)', ARRAY['-1', '0', '12', '23', '24', '1e300'])) fk(f, ks),
         unnest(ks) k, unnest(ARRAY['<', '<=', '=', '>=', '>', '<>']) op) x) y
WHERE r <> 'ok';
-- Fields that never decrease as the column grows (the epoch, the Julian day, decade, century,
-- millennium, ISO year; -Infinity and Infinity at the infinities), as a range of the column found
-- by PostgreSQL's own function; the ISO day of the week as the days of the week it holds for.
SELECT coalesce(string_agg(q || ': ' || r, E'\n'), 'all ok') AS monotonic_fields FROM (
  SELECT q, check_expr(q) r FROM (
    SELECT format('SELECT count(*), sum(v) FROM dd WHERE %s %s %s', f, op, k) q
    FROM (VALUES ('extract(epoch from d)', ARRAY['788918400', '788918400.5', '-210866803200', '-1e20']),
                 ('extract(epoch from ts)', ARRAY['794016000', '794015999.999999', '9224318015999.999999', '1e20']),
                 ('date_part(''epoch'', ts)', ARRAY['794016000', '794016000.25', '-1e300']),
                 ('extract(julian from d)', ARRAY['2449719', '2449719.5', '0', '1e10']),
                 ('extract(J from ts)', ARRAY['2449778', '2449778.5', '-1']),
                 ('extract(decade from d)', ARRAY['199', '-1', '0', '1']),
                 ('extract(centuries from d)', ARRAY['20', '-1', '1', '0']),
                 ('extract(millennium from ts)', ARRAY['2', '-1', '1', '2941']),
                 ('extract(isoyear from d)', ARRAY['1995', '0', '-1', '-4713']),
                 ('date_part(''isoyear'', ts)', ARRAY['1995', '-44', '1']),
                 ('extract(isodow from d)', ARRAY['0', '1', '5', '7', '6.5']),
                 ('date_part(''ISODOW'', ts)', ARRAY['1', '7', '3.5'])) fk(f, ks),
         unnest(ks) k, unnest(ARRAY['<', '<=', '=', '>=', '>', '<>']) op) x) y
WHERE r <> 'ok';
SELECT check_expr($q$SELECT count(*), sum(v) FROM dd WHERE extract(epoch from ts) NOT IN (794016000, 1e30) AND extract(isodow from d) IN (1, 7)$q$);
SELECT check_expr($q$SELECT count(*), sum(v) FROM dd WHERE extract(julian from d) IN (2449719, 2449720) OR v < 5$q$);
SELECT check_expr($q$SELECT count(*) FILTER (WHERE extract(century from d) = 20), sum(v) FILTER (WHERE NOT extract(isodow from ts) > 5) FROM dd$q$);
SELECT check_expr($q$SELECT count(*), sum(v) FROM dd WHERE extract(epoch from d) < 'Infinity'$q$, false);
SELECT check_expr($q$SELECT count(*), sum(v) FROM dd WHERE extract(isodow from d) > 7 OR date_part('isodow', ts) >= 1$q$);
-- A timestamp column cast to date, as a range of the column: from the date's midnight, to the
-- next; the ends of both types' ranges.
SELECT coalesce(string_agg(q || ': ' || r, E'\n'), 'all ok') AS ts_dates FROM (
  SELECT q, check_expr(q) r FROM (
    SELECT format('SELECT count(*), sum(v) FROM dd WHERE ts::date %s %L', op, k) q
    FROM unnest(ARRAY['<', '<=', '=', '>=', '>', '<>']) op,
         unnest(ARRAY['1995-03-01', '1995-02-28', '4714-11-24 BC', '294276-12-31', '294277-01-01', '5874897-12-31']) k) x) y
WHERE r <> 'ok';
SELECT check_expr($q$SELECT count(*), sum(v) FROM dd WHERE ts::date IN ('1995-03-01', '1995-02-28') OR '1995-03-31' < ts::date$q$);
SELECT check_expr($q$SELECT count(*), sum(v) FROM dd WHERE ts::date < 'infinity'$q$, false);
-- date_trunc to a month, quarter or year: the truncated timestamp on the device, infinities too.
CREATE TABLE ddt AS SELECT * FROM dd WHERE ts IS NULL OR NOT isfinite(ts) OR ts BETWEEN '4712-01-01 BC' AND '294275-01-01';
VACUUM ANALYZE ddt;
SELECT coalesce(string_agg(q || ': ' || r, E'\n'), 'all ok') AS truncs FROM (
  SELECT q, check_expr(q) r FROM (
    SELECT format('SELECT count(*), sum(v) FROM ddt WHERE date_trunc(%L, ts) %s %L', u, op, k) q
    FROM unnest(ARRAY['month', 'quarter', 'year', 'Month']) u,
         unnest(ARRAY['<', '<=', '=', '>=', '>', '<>']) op,
         unnest(ARRAY['1995-03-01', '1995-01-01', '1995-03-15 12:34:56.5', 'infinity', '-infinity', '0044-01-01 BC']) k) x) y
WHERE r <> 'ok';
-- In OR groups, FILTERs and CASE, IN and NOT IN lists, and under NOT (PostgreSQL makes it <>, NULL
-- for an infinity all the same); NOT IN a list with a NULL keeps the executor.
SELECT check_expr($q$SELECT count(*), sum(v) FROM dd WHERE extract(month from d) = 3 OR extract(hour from ts) >= 20$q$);
SELECT check_expr($q$SELECT count(*), sum(v) FROM dd WHERE extract(dow from d) IN (0, 6) AND extract(month from ts) NOT IN (1, 2, 12)$q$);
SELECT check_expr($q$SELECT count(*), sum(v) FROM dd WHERE extract(quarter from d) IN (1, NULL, 4.5) OR date_part('hour', ts) = ANY ('{3,5}')$q$);
SELECT check_expr($q$SELECT count(*), sum(v) FROM ddt WHERE date_trunc('year', ts) IN ('1995-01-01', '1996-03-01', 'infinity')$q$);
SELECT check_expr($q$SELECT count(*), sum(v) FROM dd WHERE extract(day from d) NOT IN (1, NULL)$q$, false);
SELECT check_expr($q$SELECT count(*) FILTER (WHERE extract(dow from d) = 0), sum(CASE WHEN extract(quarter from ts) = 4 THEN v ELSE 0 END),
  count(*) FILTER (WHERE date_trunc('year', ts) = '1996-01-01') FROM ddt$q$);
SELECT check_expr($q$SELECT count(*), sum(v) FROM dd WHERE NOT (extract(month from d) = 3 OR v < 100)$q$);
SELECT check_expr($q$SELECT count(*), sum(v) FROM dd WHERE extract(isodow from d) = 7$q$);
-- The first timestamps' month, quarter and year start before the range: PostgreSQL raises its
-- error, the device leaving those rows to the CPU; the last ones it leaves to the CPU too.
SELECT count(*), sum(v) FROM dd WHERE date_trunc('month', ts) = '1995-03-01';
SELECT check_expr($q$SELECT count(*), sum(v) FROM dd WHERE ts > '4000-01-01 BC' AND date_trunc('quarter', ts) >= '1995-01-01'$q$, NULL);
SELECT check_expr($q$SELECT count(*), sum(v) FROM dd WHERE date_trunc('milliseconds', ts) = '1995-03-01'$q$, false);
SELECT check_expr($q$SELECT count(*), sum(v) FROM dd WHERE date_trunc('day', ts) < 'infinity'$q$, false);
SELECT check_expr($q$SELECT count(*), sum(v) FROM dd WHERE date_part('year', ts) < 'NaN'$q$, false);

-- numeric cast to double precision, as numeric_float8 rounds it (its text read by strtod): on the
-- device an integer up to 2^53 over 10^scale, one division; each row its own group, so that every
-- value's conversion is compared.  NaN, values past 2^53 at their scale and scales past 22 leave
-- their batch to the CPU.
CREATE TABLE nf (pad text, i int4, q numeric(18,2), r numeric(12,6));
INSERT INTO nf SELECT repeat('n', i % 9), i, ((i::int8 * 7919) % 100000000 - 50000000) / 100.0,
  ((i::int8 * 104729) % 1000000000000) / 1e6 FROM generate_series(1, 20000) i;
INSERT INTO nf VALUES ('x', 0, 90071992547409.92, 0.000001), ('x', -1, -90071992547409.92, 999999.999999),
  ('x', -2, 0.1, 0.3), ('x', -3, -0.0, 0.000005);
VACUUM ANALYZE nf;
SELECT check_expr('SELECT i, max(q::float8), min(r::float8 / 7), max(q::float8 * r::float8 - 1) FROM nf GROUP BY i');
SELECT check_expr('SELECT max(q::float8), min(q::float8), max(r::float8 + q::float8), count(*) FROM nf WHERE i % 3 = 0');
CREATE TABLE nfb (i int4, q numeric(20,2), s numeric(40,30), u numeric);
INSERT INTO nfb VALUES (1, 90071992547409.93, 1e-30, 1.5), (2, -90071992547409.93, 0.1, 2), (3, 'NaN', -0.000001, 'NaN'),
  (4, 123456789012345678.91, 1, 1e300), (5, 0.07, 123456789.123456789012345678901234567891, 0.07), (6, NULL, NULL, NULL);
SELECT check_expr('SELECT i, max(q::float8), min(s::float8), max(u::float8) FROM nfb GROUP BY i', NULL);
SELECT check_expr('SELECT max(q::float8 * 2), min(s::float8) FROM nfb', NULL);
SELECT i, q::float8, s::float8, u::float8 FROM nfb ORDER BY i;

-- Rows read in place, without the device scan.
SET gpuext.enable_device_scan = off;
-- (A row with a NULL anywhere is read through the slot, so the table is copied without them.)
CREATE TABLE dxf AS SELECT * FROM dx WHERE dx IS NOT NULL AND b < 9000000000000000000;
VACUUM ANALYZE dxf;
SELECT check_expr('SELECT sum(a * 2 + c), sum(b - a), avg(a / 7), sum(a % 5), min(-c), sum(a * q), count(*) FILTER (WHERE f) FROM dxf WHERE f IS NOT TRUE', false, true);
SELECT check_expr($q$SELECT sum(CASE WHEN s = '1-URGENT' OR s = '2-HIGH' THEN 1 ELSE 0 END), sum(CASE WHEN f THEN q ELSE 0.00 END),
  max(ad / 5), sum((b / 1000000000)::int4) FROM dxf WHERE fd$q$, false, true);
SELECT check_expr($q$SELECT g, sum(CASE WHEN f THEN 1 ELSE 0 END), sum(a * 2 - c) FROM dxf WHERE NOT f GROUP BY g$q$, false, true);
SELECT check_expr($q$SELECT count(CASE WHEN s = '1-URGENT' THEN 1 END), sum(CASE WHEN c > 0 THEN a END), avg(CASE WHEN fd THEN q END),
  count(CASE WHEN c > 0 THEN c END) FROM dxf$q$, false, true);
SELECT check_expr($q$SELECT g, count(CASE WHEN f THEN 1 END), max(CASE WHEN a > 0 THEN b END) FROM dxf GROUP BY g$q$, false, true);
-- (a row where a branch not taken raises is read through the slot, which computes only the one taken)
SELECT check_expr('SELECT sum(CASE WHEN c > 0 THEN a / c ELSE 0 END) FROM dxf', false, false);
SELECT check_expr($q$SELECT count(*), sum(v) FROM dd WHERE extract(year from d) = 1995 OR date_trunc('day', ts) = '1995-03-01'$q$, false, false);
SELECT check_expr($q$SELECT count(*), sum(v) FROM dd WHERE v > 0 AND (extract(year from d) = 1995 OR date_trunc('day', ts) = '1995-03-01')$q$, false, false);
-- extract's fields and date_trunc's month in place: the same images; the first timestamps' month
-- computed by PostgreSQL, which raises its error, the last ones' too.
CREATE TABLE ddf AS SELECT * FROM dd WHERE dd IS NOT NULL;
VACUUM ANALYZE ddf;
SELECT check_expr($q$SELECT count(*), sum(v) FROM ddf WHERE extract(month from d) = 3 OR extract(second from ts) < 30.5$q$, false, true);
SELECT check_expr($q$SELECT count(*) FILTER (WHERE extract(dow from ts) <> 0), sum(v) FROM ddf
  WHERE ts > '4000-01-01 BC' AND date_trunc('year', ts) >= '1995-01-01'$q$, false, true);
SELECT count(*) FROM ddf WHERE date_trunc('month', ts) <> '1995-03-01';
SELECT sum(a * 100000) FROM dxf;
SELECT sum(a / (c - c)) FROM dxf WHERE c = 1;
SELECT sum((b * 1000)::int4) FROM dxf;
SELECT check_expr('SELECT i, max(q::float8), min(r::float8 / 7 - q::float8) FROM nf GROUP BY i', false, true);
RESET gpuext.enable_device_scan;

DROP TABLE dx, dxf, dd, ddt, ddf, nf, nfb;
DROP FUNCTION check_expr;
