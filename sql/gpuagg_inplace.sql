-- Custom Scan (GpuAgg) reading rows in place: a WHERE clause and FILTERs of column-constant
-- comparisons, and double precision arguments of + - * / over columns and constants, compiled and
-- evaluated from the row's bytes in the page; GROUP BY keys that fit eight bytes looked up packed.
-- Every result is checked against PostgreSQL's own plan (gpuext.enable_agg = off), errors too;
-- where there is no device code GpuAgg is never planned and the checks print the same.
SELECT device_state = 'ready' AS has_device FROM gpuext_info() \gset
LOAD 'gpuext';
SET gpuext.agg_min_rows = 0;
-- the rows read on the CPU, not the device scan's (gpuagg_devscan)
SET gpuext.enable_device_scan = off;
SET max_parallel_workers_per_gather = 0;
SET work_mem = '64MB';
SET timezone = 'UTC';
-- Text before the columns read (their offsets are found per row), NaN, infinities, -0 and
-- NULLs (rows with NULLs are read through a slot), keys of 0 to 9 characters and long keys.
CREATE TABLE ginp (t text, id int4, i2 int2, i4 int4, i8 int8, d date, ts timestamp, tz timestamptz,
  k text, f4 float4, f8 float8, g float8, kk text);
INSERT INTO ginp SELECT repeat('p', i % 5), i, (i % 300 - 150)::int2, i * 37 % 2001 - 1000,
  CASE WHEN i % 53 = 0 THEN NULL ELSE i::int8 * 1000003 END,
  DATE '2024-01-01' + i % 90, TIMESTAMP '2024-01-01' + i * interval '7 minutes',
  TIMESTAMPTZ '2024-01-01 00:00+00' + i * interval '11 minutes',
  substr('abcdefghi', 1, i % 10),
  CASE i % 11 WHEN 0 THEN 'NaN'::float4 WHEN 1 THEN '-0'::float4 WHEN 2 THEN 'Infinity'::float4 ELSE (i % 64) / 8.0 END,
  CASE i % 13 WHEN 0 THEN 'NaN'::float8 WHEN 1 THEN '-0'::float8 WHEN 2 THEN '-Infinity'::float8
    WHEN 3 THEN 0 ELSE (i % 1000) / 16.0 END,
  CASE i % 17 WHEN 0 THEN 'Infinity'::float8 ELSE (i % 32) / 64.0 END,
  CASE WHEN i % 7 = 0 THEN NULL ELSE repeat(chr(65 + i % 4), 40) END
FROM generate_series(1, 20000) i;
ANALYZE ginp;

-- 'ok' when q's rows with GpuAgg allowed equal its rows with gpuext.enable_agg off, and GpuAgg was
-- planned exactly where there is device code; else the row counts and the first difference.
CREATE FUNCTION check_inp(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  planned boolean := false;
  expect_planned boolean := (SELECT gpu_kernels AND device_state <> 'unavailable' FROM gpuext_info());
  line text;
  got text[];
  want text[];
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    planned := planned OR line LIKE '%Custom Scan (GpuAgg)%';
  END LOOP;
  EXECUTE format('SELECT array_agg(x ORDER BY x) FROM (SELECT row(s.*)::text x FROM (%s) s) t', q) INTO got;
  PERFORM set_config('gpuext.enable_agg', 'off', true);
  EXECUTE format('SELECT array_agg(x ORDER BY x) FROM (SELECT row(s.*)::text x FROM (%s) s) t', q) INTO want;
  PERFORM set_config('gpuext.enable_agg', 'on', true);
  IF got IS NOT DISTINCT FROM want AND planned = expect_planned THEN
    RETURN 'ok';
  END IF;
  RETURN format('%s rows against %s, first difference: got %s, want %s, GpuAgg planned: %s',
    cardinality(got), cardinality(want),
    (SELECT g FROM unnest(got, want) u(g, w) WHERE g IS DISTINCT FROM w LIMIT 1),
    (SELECT w FROM unnest(got, want) u(g, w) WHERE g IS DISTINCT FROM w LIMIT 1), planned);
END $$;

-- The error q raises with GpuAgg allowed and with gpuext.enable_agg off: 'same: SQLSTATE message'.
CREATE FUNCTION check_inp_error(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  got text := 'no error';
  want text := 'no error';
BEGIN
  BEGIN
    EXECUTE q;
  EXCEPTION WHEN OTHERS THEN
    got := SQLSTATE || ' ' || SQLERRM;
  END;
  PERFORM set_config('gpuext.enable_agg', 'off', true);
  BEGIN
    EXECUTE q;
  EXCEPTION WHEN OTHERS THEN
    want := SQLSTATE || ' ' || SQLERRM;
  END;
  PERFORM set_config('gpuext.enable_agg', 'on', true);
  RETURN CASE WHEN got = want THEN 'same: ' || got ELSE format('got %s, want %s', got, want) END;
END $$;

-- Comparisons of each type and strategy, constant first or second, integers across widths,
-- real against double precision, NaN above every number and equal to itself, -0 equal to 0.
SELECT check_inp('SELECT count(*), sum(i4), sum(f8) FROM ginp WHERE i2 < 100::int8 AND i4 >= -500 AND 900 > i4');
SELECT check_inp('SELECT count(*), sum(i2), max(f8) FROM ginp WHERE i8 <= 10000030000::int8 AND i8 > 0::int2');
SELECT check_inp('SELECT count(*), sum(i8), min(f4) FROM ginp WHERE i2 = 7 OR i2 = 8');
SELECT check_inp('SELECT count(*), sum(i4) FROM ginp WHERE d <= DATE ''2024-02-01'' AND d > DATE ''2024-01-05''');
SELECT check_inp('SELECT count(*), sum(i4) FROM ginp WHERE ts >= TIMESTAMP ''2024-01-20'' AND TIMESTAMP ''2024-02-10 12:00'' > ts');
SELECT check_inp('SELECT count(*), sum(i4) FROM ginp WHERE tz < TIMESTAMPTZ ''2024-02-01 00:00+00''');
SELECT check_inp('SELECT count(*), sum(i4) FROM ginp WHERE f8 >= ''NaN''::float8');
SELECT check_inp('SELECT count(*), sum(i4) FROM ginp WHERE f8 < ''Infinity'' AND f8 > ''-Infinity''');
SELECT check_inp('SELECT count(*), sum(i4) FROM ginp WHERE f8 = 0');
SELECT check_inp('SELECT count(*), sum(i4) FROM ginp WHERE f4 < 0.5::float8 AND f4 >= ''-0''::float4');
SELECT check_inp('SELECT count(*), sum(i4) FROM ginp WHERE f4 > ''NaN''::float4');
SELECT check_inp('SELECT count(*), sum(i4) FROM ginp WHERE ''NaN''::float4 = f4');
-- An integer column modulo a positive constant of its type, compared with a constant: negative
-- values keep their sign as in PostgreSQL; a modulus of another form is not compiled.
SELECT check_inp('SELECT count(*), sum(i8), sum(f8) FROM ginp WHERE id % 10 < 9 AND i4 % 7 >= -3');
SELECT check_inp('SELECT count(*), sum(i4) FROM ginp WHERE i2 % 4::int2 = -1 AND 2 > i8 % 1000000007');
SELECT check_inp('SELECT count(*), sum(i4) FROM ginp WHERE i4 % -7 = 2');
SELECT check_inp('SELECT sum(f8) FILTER (WHERE i4 % 3 = 0), count(*) FILTER (WHERE id % 2 = 1) FROM ginp');
-- Arguments: NaN and infinities through + - * /, integers and real cast to double precision,
-- unary minus, a constant divided by a column.  GpuAgg's float sums are exact; the values here are
-- binary fractions whose sums PostgreSQL's plan gets exactly too.
SELECT check_inp('SELECT sum(f8 * (1 - g)), sum(f8 * (1 - g) * (1 + g)), avg(f8 - g), min(f8 / 4), max(g * f8) FROM ginp WHERE d <= DATE ''2024-03-01''');
SELECT check_inp('SELECT sum(i4::float8 / 4), avg(-f8 + i2::float8), sum(i8::float8 * 2), max(f4::float8 - 1), min(-g) FROM ginp');
SELECT check_inp('SELECT max(1 / g), max(f8 / g), min(i4 / g), sum(f8 / 8) FROM ginp WHERE g > 0');
-- FILTERs compiled as the WHERE clause is.
SELECT check_inp('SELECT sum(f8) FILTER (WHERE i4 > 0), avg(f8 * g) FILTER (WHERE d < DATE ''2024-02-01''), max(i8) FILTER (WHERE f4 >= 3), count(*) FROM ginp WHERE i2 > -100');
-- Keys: text of 0 to 9 characters alone and with other keys (packed where they fit eight
-- bytes, as key strings where not), long text, NULL keys; with compiled conditions and arguments.
SELECT check_inp('SELECT k, count(*), sum(f8), sum(f8 * (1 - g)), avg(i4) FROM ginp GROUP BY k');
SELECT check_inp('SELECT k, i2 % 3 AS m, count(*), sum(i8) FROM ginp GROUP BY k, i2 % 3');
SELECT check_inp('SELECT k, i2, count(*), sum(f8) FROM ginp WHERE f8 <= 30 GROUP BY k, i2');
SELECT check_inp('SELECT k, d, count(*), max(g) FROM ginp GROUP BY k, d');
SELECT check_inp('SELECT i4, k, count(*), min(f8) FROM ginp GROUP BY i4, k');
SELECT check_inp('SELECT kk, k, count(*), sum(f8 * g) FILTER (WHERE f8 > 10) FROM ginp WHERE d >= DATE ''2024-01-10'' GROUP BY kk, k');
SELECT check_inp('SELECT k, kk IS NULL, count(*) FROM ginp GROUP BY k, kk IS NULL');
-- Two text keys whose characters run together the same way ('a' 'bc', 'ab' 'c') are different
-- groups, packed or not; so are a text and an integer key whose bytes could run together.
CREATE TABLE ginp_pairs AS SELECT p.a, p.b, (i % 7)::int2 AS s, i / 4.0::float8 AS v
FROM generate_series(1, 400) i, (VALUES ('', 'abc'), ('a', 'bc'), ('ab', 'c'), ('abc', ''), ('', ''),
  ('a', ''), ('', 'a'), ('abcdef', 'g'), ('abcdefg', ''), ('abcdefg', 'h'), ('abcdefgh', 'i')) p(a, b)
WHERE i % (1 + length(p.a) + 2 * length(p.b)) <> 0;
ANALYZE ginp_pairs;
SELECT check_inp('SELECT a, b, count(*), sum(v) FROM ginp_pairs GROUP BY a, b');
SELECT check_inp('SELECT a, s, count(*), sum(v) FROM ginp_pairs GROUP BY a, s');
SELECT check_inp('SELECT s, b, count(*), max(v) FROM ginp_pairs WHERE v > 10 GROUP BY s, b');
-- numeric arguments of + - * over columns with a typmod's scale and constants: the value and the
-- display scale PostgreSQL's arithmetic gives (the larger scale for + and -, the sum for *), NaN
-- and values past 128 bits on the way (read through the slot), sums, averages, min and max.
CREATE TABLE ginp_num AS SELECT repeat('q', i % 3) AS t, chr(65 + i % 4) AS k, i % 9 AS s,
  CASE WHEN i % 41 = 0 THEN 'NaN'::numeric ELSE round((i * 7919 % 200000 - 100000) / 100.0, 2) END::numeric(15,2) AS a,
  ((i % 97) / 1000.0)::numeric(10,4) AS b,
  CASE WHEN i % 5 = 0 THEN 10::numeric ^ 37 - i ELSE i END::numeric(38,0) AS c,
  (i % 13) / 8.0 AS n
FROM generate_series(1, 12000) i;
ANALYZE ginp_num;
SELECT check_inp('SELECT sum(a * (1 - b)), sum(a * (1 - b) * (1 + b)), avg(a * b), min(a * b), max(a - b), min(-a), max(a + 1.5), sum(a * 0.10) FROM ginp_num');
SELECT check_inp('SELECT k, sum(a * (1 - b)), avg(a * (1 - b) * (1 + b)), min(b - a), max(a * a), count(*) FROM ginp_num WHERE s < 7 GROUP BY k');
SELECT check_inp('SELECT k, sum(c * c), sum(c + a), max(c * b), min(c - 1) FROM ginp_num GROUP BY k');
SELECT check_inp('SELECT sum(c * 100), avg(c - a), sum(a * n), max(b * 3) FROM ginp_num');
SELECT check_inp('SELECT k, sum(c + a), min(c - b), max(c + 1) FROM ginp_num GROUP BY k');
SELECT check_inp('SELECT k, sum(a * b) FILTER (WHERE s > 2), sum(a), avg(b), max(a) FROM ginp_num GROUP BY k');
-- numeric(p, s) columns against numeric constants, compared as integers at the larger scale, NaN
-- above every number; a constant of more digits than the column; constant first; an integer
-- literal; a column without a scale, which is not compiled.
SELECT check_inp('SELECT count(*), sum(a), sum(a * b) FROM ginp_num WHERE a >= -500.5 AND a < 700 AND b BETWEEN 0.010 AND 0.0505');
SELECT check_inp('SELECT count(*), sum(b) FROM ginp_num WHERE a > 999.995 OR false');
SELECT check_inp('SELECT count(*), sum(b), max(a) FROM ginp_num WHERE a <> 0 AND 0.05 <= b AND a <= 100');
SELECT check_inp('SELECT count(*), sum(b) FROM ginp_num WHERE a = 12.34 OR a = ''NaN''');
SELECT check_inp('SELECT k, count(*), sum(a * (1 - b)) FROM ginp_num WHERE b < 0.05 AND a > -1000 GROUP BY k');
SELECT check_inp('SELECT count(*), max(a) FROM ginp_num WHERE c < 1000 AND n > 0.5');
-- IN lists of the column's own type (= ANY): integers, dates, floats with NaN and -0, a NULL
-- among them; FILTERs too; NOT IN and lists of another type are left to the executor.
SELECT check_inp('SELECT count(*), sum(i4), sum(f8) FROM ginp WHERE i2 IN (1::int2, -7::int2, 149::int2, NULL)');
SELECT check_inp('SELECT count(*), sum(i8) FROM ginp WHERE i4 = ANY (''{5,-1000,999,77}''::int4[]) AND d IN (DATE ''2024-01-05'', DATE ''2024-02-01'', DATE ''2024-03-03'')');
SELECT check_inp('SELECT count(*), sum(i4) FROM ginp WHERE f8 IN (''NaN''::float8, 0, 2.5, 61.4375)');
SELECT check_inp('SELECT count(*) FILTER (WHERE f4 IN (''-0''::float4, 1.5::float4)), sum(f8) FILTER (WHERE i8 IN (1000003, 2000006, 3000009)) FROM ginp');
SELECT check_inp('SELECT count(*), sum(i4) FROM ginp WHERE i4 NOT IN (1, 2, 3) AND i2 IN (1, 2)');
-- text, varchar and char(n) against constants: =, <> and LIKE 'prefix%' as bytes (char(n) without
-- its trailing blanks), multibyte characters, empty strings, compressed and out-of-line values;
-- LIKE patterns with other wildcards or an escape are left to the executor.
CREATE TABLE ginp_txt (c char(4), v varchar(8), t text, x int4, f float8);
ALTER TABLE ginp_txt ALTER COLUMN t SET STORAGE external;
INSERT INTO ginp_txt SELECT (ARRAY['ab', 'ab  ', 'x', '', 'é'])[1 + i % 5], (ARRAY['v1', 'é', 'ab', ''])[1 + i % 4],
  CASE WHEN i % 97 = 0 THEN repeat('z', 3000) WHEN i % 89 = 0 THEN repeat('abc', 900)
       ELSE (ARRAY['abc', 'abd', 'a%c', '', 'ab'])[1 + i % 5] END, i, i / 4.0
FROM generate_series(1, 6000) i;
ANALYZE ginp_txt;
SELECT check_inp('SELECT count(*), sum(x), sum(f) FROM ginp_txt WHERE t = ''abc'' AND c = ''ab''');
SELECT check_inp('SELECT count(*), sum(x) FROM ginp_txt WHERE ''abd'' <> t AND c <> ''x   '' AND v = ''é''');
SELECT check_inp('SELECT count(*), sum(x) FROM ginp_txt WHERE t LIKE ''ab%'' AND v LIKE ''é%''');
SELECT check_inp('SELECT count(*), sum(x) FROM ginp_txt WHERE t LIKE ''%'' AND c = ''''');
SELECT check_inp('SELECT count(*), sum(x) FROM ginp_txt WHERE t = repeat(''z'', 3000) OR false');
SELECT check_inp('SELECT count(*), sum(x) FROM ginp_txt WHERE t LIKE ''a_c%'' OR t LIKE ''a\\%%''');
SELECT check_inp('SELECT count(*) FILTER (WHERE t = ''ab''), sum(f) FILTER (WHERE v <> ''v1'') FROM ginp_txt');
-- OR and NOT of compiled conditions (two-valued for rows read in place, which have no NULL; rows
-- with NULLs go through the slot, where SQL's three-valued logic holds).
SELECT check_inp('SELECT count(*), sum(i4), sum(f8) FROM ginp WHERE i2 = 7 OR i2 = 8 OR (i4 > 900 AND f8 < 10)');
SELECT check_inp('SELECT count(*), sum(i8) FROM ginp WHERE NOT (i2 > 0 OR d >= DATE ''2024-02-01'') AND (f8 IS NULL OR f8 <> 0)');
SELECT check_inp('SELECT count(*), sum(i4) FROM ginp WHERE NOT (i8 IS NOT NULL) OR kk IS NULL OR f4 = ''NaN''');
SELECT check_inp('SELECT count(*) FILTER (WHERE i2 < -100 OR i2 > 100), sum(f8) FILTER (WHERE NOT i4 % 2 = 0) FROM ginp');
-- The same in parallel workers, each reading its blocks in place (against PostgreSQL's parallel plan).
SET max_parallel_workers_per_gather = 2;
SET min_parallel_table_scan_size = 0;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SELECT check_inp('SELECT k, sum(a * (1 - b)), sum(a * (1 - b) * (1 + b)), avg(a), count(*) FROM ginp_num WHERE s <= 6 GROUP BY k');
SELECT check_inp('SELECT k, sum(f8 * (1 - g)), avg(f8), count(*) FROM ginp WHERE d <= DATE ''2024-02-01'' GROUP BY k');
SELECT check_inp('SELECT sum(c + a), max(a * b), count(*) FROM ginp_num');
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
SET max_parallel_workers_per_gather = 0;
-- Errors in compiled arguments are PostgreSQL's, raised for rows that pass the WHERE clause only
-- (a table without NULLs, so that every row is read in place).
CREATE TABLE ginp_nn AS SELECT * FROM ginp WHERE i8 IS NOT NULL AND kk IS NOT NULL;
ANALYZE ginp_nn;
SELECT check_inp_error('SELECT sum(f8 * 1e308) FROM ginp_nn WHERE f8 > 10');
SELECT check_inp_error('SELECT count(*) FROM ginp_nn WHERE i4 % 0 = 1');
SELECT check_inp_error('SELECT sum(f8 * 1e-308 * 1e-308) FROM ginp_nn WHERE f8 > 10');
SELECT check_inp_error('SELECT sum(f8 / g) FROM ginp_nn WHERE i4 > 0');
SELECT check_inp_error('SELECT sum(f8 / (g - g)) FROM ginp_nn WHERE f8 > 1 AND g < 1');
SELECT check_inp_error('SELECT k, sum(1 / f8) FROM ginp_nn WHERE f8 = 0 GROUP BY k');
SELECT check_inp_error('SELECT sum(1 / f8) FROM ginp_nn WHERE f8 > 0');
-- Arguments without FILTER are computed together, an expression they share once; an argument
-- under a FILTER only for the rows the FILTER passes.
SELECT check_inp('SELECT sum(f8 * (1 - g)), avg(f8 * (1 - g) * (1 + g)), max(f8 * (1 - g)) FILTER (WHERE i4 > 0), max(1 / g) FILTER (WHERE g > 0) FROM ginp_nn');
SELECT check_inp_error('SELECT sum(f8 * (1 - g)), max(1 / g) FILTER (WHERE g > 0), max(f8 / g) FILTER (WHERE g >= 0.5) FROM ginp_nn');
-- CASE of double precision without ELSE, or with a NULL branch: NULL where no branch is taken, not
-- added (not counted by count()), row by row; beside arguments added page by page.
SELECT check_inp($q$SELECT sum(CASE WHEN i4 > 0 THEN f8 END), avg(CASE WHEN g < 0.25 THEN NULL ELSE g END),
  max(CASE WHEN i2 < 0 THEN f8 END), count(CASE WHEN i2 < 0 THEN f8 END), min(CASE WHEN f8 > 10 THEN f8 END) FILTER (WHERE i4 % 2 = 0),
  sum(f8 * (1 - g)), count(*) FROM ginp_nn$q$);
SELECT check_inp($q$SELECT k, sum(CASE WHEN i4 > 0 THEN CASE WHEN g > 0.5 THEN f8 END ELSE g END) FROM ginp_nn GROUP BY k$q$);
-- A branch that may raise (arithmetic) is computed for every row, its error raised only where the
-- branch is taken, as PostgreSQL computes only the branch taken; integer arithmetic likewise (a
-- row where a branch not taken would raise is read through the slot).
SELECT check_inp($q$SELECT max(CASE WHEN g > 0 THEN 1 / g ELSE 0 END), max(CASE WHEN g <> 0 THEN f8 / g END),
  min(CASE WHEN f8 < 1 THEN f8 * 1e308 ELSE -f8 END), sum(CASE WHEN i2 <> 0 THEN i8 / i2 ELSE 0 END),
  max(CASE WHEN i4 > 0 THEN i4 * 2 ELSE i2 END), count(*) FROM ginp_nn$q$);
SELECT check_inp($q$SELECT k, min(CASE WHEN g > 0 THEN 1 / g END), max(CASE WHEN f8 < 1 THEN f8 * 1e308 ELSE f8 END)
  FROM ginp_nn GROUP BY k$q$);
SELECT check_inp_error('SELECT sum(CASE WHEN g >= 0 THEN 1 / g ELSE 0 END) FROM ginp_nn');
SELECT check_inp_error('SELECT max(CASE WHEN f8 < 10 THEN f8 * 1e308 ELSE 0 END), count(*) FROM ginp_nn');
SELECT check_inp_error('SELECT sum(CASE WHEN i2 >= 0 THEN i8 / i2 ELSE 0 END) FROM ginp_nn');
-- count() of such an argument computes it, and raises its error, as PostgreSQL does.
SELECT check_inp($q$SELECT count(CASE WHEN g > 0 THEN 1 / g ELSE 0 END), count(f8 / g) FILTER (WHERE g > 0) FROM ginp_nn$q$);
SELECT check_inp_error('SELECT count(CASE WHEN g >= 0 THEN 1 / g ELSE 0 END) FROM ginp_nn');
SELECT check_inp_error('SELECT count(f8 / g) FILTER (WHERE i4 > 0) FROM ginp_nn');
-- Arithmetic over them: NULL where an operand is (strict operators), raising nothing there.
SELECT check_inp($q$SELECT sum(CASE WHEN i4 > 0 THEN f8 END * 2 - g), max(-(CASE WHEN g < 0.5 THEN NULL ELSE g END) / 4),
  sum(f8 / CASE WHEN g > 0 THEN g END) FROM ginp_nn$q$);
-- Operators of double precision and real, in double precision.
SELECT check_inp('SELECT sum(f8 * f4), max(f4 - g), min(g / f4) FILTER (WHERE f4 <> 0) FROM ginp_nn');
-- A bigint cast to real is rounded once, as i8tof does: 2^60 + 2^36 + 1 is 2^60 + 2^37, where
-- through a double it would be 2^60.
CREATE TABLE ginp_big AS SELECT (1152921573326323713 + i % 3 - 1)::int8 AS i8, i FROM generate_series(1, 3000) i;
INSERT INTO ginp_big VALUES (-1152921573326323713, 0), (9223372036854775807, 0), (-9223372036854775808, 0);
ANALYZE ginp_big;
SELECT check_inp($q$SELECT max(i8::real), min(i8::real), max(i8::real * 2::real), min(i8::real / 3::real) FILTER (WHERE i > 0),
  count(*) FROM ginp_big$q$);
-- A numeric column cast to real is rounded once, as numeric_float4 rounds it: values next to the
-- midpoints between reals in [8, 9) (8 + (2j + 1) 2^-21), which through a double round to the
-- midpoint and then to even, for 1750 of them wrongly.
CREATE TABLE ginp_nr AS SELECT ((8000000000000000 + CASE WHEN j % 2 = 0 THEN floor((2 * (j / 2) + 1) * 476837158.203125)
  ELSE ceil((2 * (j / 2) + 1) * 476837158.203125) END) / 1000000000000000)::numeric(16,15) AS n, j,
  (j * 1.37)::numeric(15,2) AS p FROM generate_series(0, 3999) j;
ANALYZE ginp_nr;
SELECT count(*) FILTER (WHERE n::real <> n::float8::real) FROM ginp_nr;
SELECT check_inp('SELECT sum(n::real::float8), max(p::real), min(p::real * 3::real), sum(p::real::float8) FROM ginp_nr');

-- Which rows were read in place: all without NULLs where the WHERE clause, FILTERs and arguments
-- compile (a cast of an integer to numeric does), none where one does not (a function of a column,
-- a text comparison); with numeric arguments, all but the rows where one meets a NaN or leaves 128
-- bits.
\if :has_device
CREATE FUNCTION inp_rows(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  plan json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
  SELECT p INTO plan FROM json_array_elements(plan->0->'Plan'->'Plans') p WHERE p->>'Custom Plan Provider' = 'GpuAgg'
  UNION ALL SELECT plan->0->'Plan' WHERE plan->0->'Plan'->>'Custom Plan Provider' = 'GpuAgg' LIMIT 1;
  RETURN format('read %s, passed %s, in place %s', plan->>'Rows Read', plan->>'Rows Passed', plan->>'Rows In Place');
END $$;
SELECT count(*) FILTER (WHERE i8 IS NULL OR kk IS NULL) AS rows_with_nulls FROM ginp;
SELECT inp_rows('SELECT k, sum(f8), sum(f8 * (1 - g)), avg(i4) FROM ginp WHERE d <= DATE ''2024-02-01'' GROUP BY k');
SELECT inp_rows('SELECT sum(f8 * (1 - g)) FILTER (WHERE f4 > 1), count(*) FROM ginp WHERE i4 > 0');
SELECT inp_rows('SELECT sum(f8), count(*) FROM ginp WHERE id % 10 < 9 AND i4 % 7 >= -3');
SELECT inp_rows('SELECT sum(f8), count(*) FROM ginp WHERE id % -10 < 9');
SELECT inp_rows('SELECT sum(f8) FROM ginp WHERE abs(i4) > 0');
SELECT inp_rows('SELECT sum(f8) FROM ginp WHERE k < ''c''');
SELECT inp_rows('SELECT max(i8::real), min(i8::real / 3::real) FROM ginp_big');
SELECT inp_rows('SELECT sum(n::real::float8), min(p::real * 3::real) FROM ginp_nr');
SELECT inp_rows('SELECT sum(i4::numeric * 2) FROM ginp');
SELECT inp_rows('SELECT sum(abs(i4) * 2) FROM ginp');
SELECT inp_rows($q$SELECT sum(CASE WHEN i4 > 0 THEN f8 END), count(CASE WHEN i2 < 0 THEN f8 END) FROM ginp_nn$q$);
SELECT inp_rows($q$SELECT sum(CASE WHEN g > 0 THEN 1 / g ELSE 0 END), min(CASE WHEN f8 < 1 THEN f8 * 1e308 END) FROM ginp_nn$q$);
SELECT count(*) FILTER (WHERE i2 = 0) AS rows_for_the_slot FROM ginp_nn;
SELECT inp_rows($q$SELECT sum(CASE WHEN i2 <> 0 THEN i8 / i2 ELSE 0 END) FROM ginp_nn$q$);
SELECT count(*) FILTER (WHERE a = 'NaN' OR c > 2::numeric ^ 64) AS rows_for_the_slot FROM ginp_num;
SELECT inp_rows('SELECT k, sum(a * (1 - b)), avg(a), sum(c * 100) FROM ginp_num GROUP BY k');
SELECT inp_rows('SELECT k, sum(a * (1 - b)), avg(a) FROM ginp_num GROUP BY k');
SELECT inp_rows('SELECT sum(a * (1 - b)), count(*) FROM ginp_num WHERE a >= -500.5 AND b < 0.05');
SELECT inp_rows('SELECT sum(b), count(*) FROM ginp_num WHERE c < 1000');
-- numeric(38, 0) against a constant of scale 1: 39 digits, not compiled.
SELECT inp_rows('SELECT sum(b), count(*) FROM ginp_num WHERE c < 1000.5');
SELECT inp_rows('SELECT sum(f8), count(*) FROM ginp WHERE i2 IN (1::int2, -7::int2, NULL) AND f8 IN (''NaN''::float8, 0, 2.5)');
SELECT inp_rows('SELECT sum(f), count(*) FROM ginp_txt WHERE t LIKE ''ab%'' AND c <> ''x'' AND v = ''ab''');
SELECT inp_rows('SELECT sum(f8), count(*) FROM ginp WHERE i2 = 7 OR NOT (i4 > -900)');
DROP FUNCTION inp_rows(text);
\endif

DROP TABLE ginp, ginp_pairs, ginp_nn, ginp_num, ginp_txt, ginp_big, ginp_nr;
DROP FUNCTION check_inp(text), check_inp_error(text);
