-- Custom Scan (GpuAgg)'s device scan: pages sent as stored, their tuples decoded, the WHERE
-- clause and FILTERs tested and the values gathered on the device.  Every result is checked
-- against PostgreSQL's own plan; where there is a device, that the device scan ran (EXPLAIN
-- ANALYZE's Device Scan line) and how many tuples it left to the CPU.  Pages all-visible and not
-- (rows updated, deleted, HOT-updated, rolled back), NULLs, values of varying width before the
-- columns read (short and long headers, compressed and out-of-line), a dropped column, columns
-- added with defaults, every type the scan reads, NaN and infinities, date against timestamp.
LOAD 'gpuext';
SET gpuext.agg_min_rows = 0;
SET gpuext.min_gpu_elements = 0;
SET max_parallel_workers_per_gather = 0;

-- 'ok' when q's row with GpuAgg allowed equals its row with gpuext.enable_agg off and, where there
-- is a device, the device scan ran exactly when devscan is true, with cpu_tuples tuples left to
-- the CPU; else what differed.
CREATE FUNCTION check_scan(q text, devscan boolean DEFAULT true, cpu_tuples bigint DEFAULT 0)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  offloads boolean := (SELECT gpu_kernels AND device_state <> 'unavailable' FROM gpuext_info());
  plan jsonb;
  node jsonb;
  got text;
  want text;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
  EXECUTE format('SELECT row(s.*)::text FROM (%s) s', q) INTO got;
  PERFORM set_config('gpuext.enable_agg', 'off', true);
  EXECUTE format('SELECT row(s.*)::text FROM (%s) s', q) INTO want;
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
  IF (node ? 'Device Scan Blocks') <> devscan THEN
    RETURN format('device scan: %s', NOT devscan);
  END IF;
  IF devscan AND (node->>'Tuples Decoded On CPU')::bigint <> cpu_tuples THEN
    RETURN format('%s tuples on the CPU, not %s', node->>'Tuples Decoded On CPU', cpu_tuples);
  END IF;
  RETURN 'ok';
END $$;

-- A text column before the columns read, of every length: 1-byte and 4-byte headers,
-- compressed and out-of-line values; then a dropped column between them.
CREATE TABLE ds (t text, drop_me int8, i2 int2, i4 int4, i8 int8, f4 float4, f8 float8, d date,
                 ts timestamp, tz timestamptz, b bool, n numeric);
ALTER TABLE ds ALTER COLUMN t SET STORAGE external;
INSERT INTO ds
SELECT CASE WHEN i % 97 = 0 THEN NULL WHEN i % 501 = 0 THEN repeat(md5(i::text), 200)
            ELSE repeat('x', i % 300) END,
       i, (i % 30000 - 15000)::int2, i * 7 - 20000, i::int8 * 1000003 - 5000000000,
       CASE WHEN i % 89 = 0 THEN NULL ELSE (i % 1000) / 4.0 END,
       CASE WHEN i % 83 = 0 THEN NULL ELSE (i % 5000) / 8.0 - 300 END,
       date '1992-01-01' + i % 2600, timestamp '1995-06-17 12:00' + i * interval '37 minutes',
       timestamptz '2000-01-01 00:00+00' + i * interval '1 hour', i % 3 = 0, i
FROM generate_series(1, 30000) i;
-- compressed values (storage main keeps them inline)
ALTER TABLE ds ALTER COLUMN t SET STORAGE main;
INSERT INTO ds (t, i2, i4, i8, f4, f8, d, ts, tz)
SELECT repeat('compress me ', 400), 1, i, i, 1, 1, date '1998-01-01', timestamp '1998-01-01', now()
FROM generate_series(1, 50) i;
ALTER TABLE ds DROP COLUMN drop_me;
VACUUM ANALYZE ds;
SELECT count(*) FILTER (WHERE pg_column_compression(t) IS NOT NULL) > 0 AS compressed,
       count(*) FILTER (WHERE pg_column_size(t) < octet_length(t)) > 0 AS small_or_external
FROM ds;

-- All pages all-visible: the device walks each page's items itself.
SELECT check_scan('SELECT count(*), sum(i2), sum(i4), sum(i8), min(i8), max(i4), avg(i4) FROM ds');
SELECT check_scan('SELECT sum(f4), sum(f8), min(f8), max(f4), avg(f8), count(f8), count(f4) FROM ds');
SELECT check_scan('SELECT min(d), max(d), min(ts), max(ts), min(tz), max(tz), count(t), count(b), count(n) FROM ds');
-- The specification's form: date against a timestamp constant (the planner folds the interval).
SELECT check_scan($q$SELECT count(*), sum(i8) FROM ds WHERE d <= date '1998-12-01' - interval '90 day'$q$);
SELECT check_scan($q$SELECT count(*), sum(i4) FROM ds WHERE d >= date '1994-01-01' AND d < date '1994-01-01' + interval '1 year' AND f8 BETWEEN 0.05 AND 300 AND i2 < 24$q$);
SELECT check_scan($q$SELECT count(*), sum(i4) FROM ds WHERE d < timestamp '1994-03-01 00:00:01'$q$);
SELECT check_scan($q$SELECT count(*), sum(i4) FROM ds WHERE d > timestamp '1994-03-01 00:00:01'$q$);
SELECT check_scan($q$SELECT count(*), sum(i4) FROM ds WHERE d = timestamp '1994-03-01 00:00:01'$q$);
SELECT check_scan($q$SELECT count(*), sum(i4) FROM ds WHERE d = timestamp '1994-03-01'$q$);
SELECT check_scan($q$SELECT count(*), sum(i4) FROM ds WHERE d >= timestamp '1994-03-01'$q$);
SELECT check_scan($q$SELECT count(*), sum(i4) FROM ds WHERE timestamp '1994-03-01 12:00' > d$q$);
SELECT check_scan($q$SELECT count(*), sum(i4) FROM ds WHERE d <= timestamp '-infinity'$q$);
SELECT check_scan($q$SELECT count(*), sum(i4) FROM ds WHERE d < timestamp 'infinity'$q$);
SELECT check_scan($q$SELECT count(*), sum(i4) FROM ds WHERE ts >= date '1996-01-01' AND ts < date 'infinity'$q$);
SELECT check_scan($q$SELECT count(*), min(d) FROM ds WHERE ts < date '1996-01-01'$q$);
-- <> (the negator of =) and null tests, on every kind of column, in WHERE and FILTERs.
SELECT check_scan($q$SELECT count(*), sum(i4), count(f8) FILTER (WHERE f8 <> 0.5), count(*) FILTER (WHERE t IS NULL)
  FROM ds WHERE i2 <> 7 AND f4 IS NOT NULL AND d <> date '1993-05-05'$q$);
SELECT check_scan($q$SELECT count(*), sum(i8) FROM ds WHERE f8 IS NULL OR false$q$);
SELECT check_scan($q$SELECT count(*), sum(i4) FROM ds WHERE t IS NULL$q$);
SELECT check_scan($q$SELECT count(*), sum(i4) FROM ds WHERE d <> timestamp '1994-03-01' AND d <> timestamp '1994-03-02 00:00:01'$q$);
SELECT check_scan($q$SELECT count(*), sum(i4) FROM ds WHERE ts <> date '1996-01-01' AND tz IS NOT NULL AND b IS NOT NULL$q$);
-- FILTERs, count(*) FILTER, the integer modulus, NULLs in compared columns.
SELECT check_scan($q$SELECT count(*) FILTER (WHERE i2 > 0), sum(i8) FILTER (WHERE f8 > 100), avg(f4) FILTER (WHERE i4 % 3 = 1),
  count(f8) FILTER (WHERE d < date '1993-01-01'), max(tz) FILTER (WHERE f4 >= 100) FROM ds WHERE i4 % 10 < 5$q$);
SELECT check_scan($q$SELECT count(*), sum(i4) FROM ds WHERE f4 = 'NaN' OR f4 > 0$q$);

-- Double precision arithmetic for the rows that pass (TPC-H Q6's shape): NULLs through strict
-- operators, and the errors PostgreSQL raises, which the CPU raises reading the batch again, in the
-- order of the rows.  float8 against float4 operators (float84mi) compute in double precision.
SELECT check_scan($q$SELECT sum(f8 * i2), sum(f8 * (1 - f8) * (1 + f8 / 4)), avg(-f8 / 2), sum((f8 + i4) * 2), count(*)
  FROM ds WHERE d >= date '1994-01-01' AND d < date '1994-01-01' + interval '1' year AND f8 BETWEEN 0.05 AND 300 AND i2 < 24$q$);
SELECT check_scan('SELECT sum(f8 * f8), max(i8), count(f4) FROM ds WHERE f8 < 0');
SELECT check_scan('SELECT sum(f8 * (1 - f4)) FROM ds');
SELECT sum(f8 / (f8 - f8)) FROM ds;
SELECT sum(f8 * 1e308 * 10) FROM ds WHERE i2 > 0;
SELECT sum(f8 * 1e-320 * 1e-10) FROM ds;
SELECT sum(f8 / (f8 - f8)) FROM ds WHERE f8 IS NULL;
SELECT count(*), sum(i8 * 1e300) FROM ds WHERE i4 < 0;
-- CASE WHEN of double precision: each branch a column (NULLs among them), a constant, NULL (no
-- ELSE) or arithmetic, the conditions compiled (OR, IN, modulus, NULL tests), alone, nested,
-- inside arithmetic, beside a WHERE clause.  A branch that may raise an error (arithmetic) is
-- computed for every row, but its error raised only where it is taken, as PostgreSQL computes
-- only the branch taken.
SELECT check_scan($q$SELECT sum(CASE WHEN i2 < 0 THEN f8 ELSE 0 END), avg(CASE WHEN f4 > 100 THEN f4 ELSE f8 END), count(*) FROM ds$q$);
SELECT check_scan($q$SELECT sum(CASE WHEN i4 % 3 = 0 OR d < date '1993-01-01' THEN i2 WHEN f8 IS NULL THEN -1.5::float8
  WHEN i2 IN (1, 2, 3) THEN f4 ELSE 2 END), max(CASE WHEN NOT (f8 > 10) THEN f8 ELSE i8 END) FROM ds WHERE i8 > 0$q$);
SELECT check_scan($q$SELECT sum(f8 * CASE WHEN i2 IN (1, 2, 3) OR i2 > 10000 THEN 1.0::float8 ELSE 0.5 END),
  sum(CASE WHEN i2 > 0 THEN CASE WHEN f8 > 0 THEN f8 ELSE i4 END ELSE 'NaN' END) FROM ds$q$);
SELECT check_scan($q$SELECT sum(CASE WHEN i2 > 0 THEN f8 * 2 ELSE 0 END) FROM ds$q$);
SELECT check_scan($q$SELECT max(CASE WHEN f8 <> 0 THEN 1 / f8 ELSE 0 END), max(CASE WHEN i2 > 0 THEN f8 * 2
  WHEN f8 < 1 AND f8 > -1 THEN f8 * 1e308 WHEN i2 <> 0 THEN f8 / i2 END), min(CASE WHEN f4 > 0 THEN f8 / f4 END), count(*) FROM ds$q$);
SELECT check_scan($q$SELECT array_agg(g ORDER BY g) FROM (SELECT b, min(CASE WHEN f8 <> 0 THEN 1 / f8 END),
  sum(CASE WHEN i2 <> 0 THEN i8 / i2 ELSE 0 END), max(CASE WHEN i4 < 100000 THEN i4 * 20000 ELSE -1 END)
  FROM ds GROUP BY b) g$q$);
SELECT sum(CASE WHEN f8 >= 0 THEN 1 / f8 ELSE 0 END) FROM ds;
SELECT max(CASE WHEN i2 > 0 THEN f8 * 1e308 END) FROM ds;
SELECT sum(CASE WHEN i2 >= 0 THEN i8 / i2 ELSE 0 END) FROM ds;
SELECT max(CASE WHEN i4 < 200000 THEN i4 * 20000 ELSE -1 END) FROM ds;
SELECT check_scan($q$SELECT sum(CASE WHEN i2 > 0 THEN f8 END), avg(CASE WHEN i4 % 3 = 0 THEN NULL ELSE f4::float8 END),
  min(CASE WHEN i2 < 0 THEN CASE WHEN f8 > 0 THEN f8 END ELSE i2 END), max(CASE WHEN f8 > 100 THEN f8 END), count(*) FROM ds$q$);
SELECT check_scan($q$SELECT array_agg(g ORDER BY g) FROM (SELECT b, sum(CASE WHEN f8 > 0 THEN f8 END),
  avg(CASE WHEN d < date '1994-01-01' THEN f4::float8 END) FROM ds WHERE i8 > 0 GROUP BY b) g$q$);
-- Arithmetic over such a CASE is NULL where it is (strict operators), raising nothing there.
SELECT check_scan($q$SELECT sum(CASE WHEN i2 > 0 THEN f8 END * 2), max(-(CASE WHEN f8 > 100 THEN f8 END) / 3 + f4::float8),
  min(CASE WHEN i2 > 0 THEN NULL ELSE f8 END - CASE WHEN i4 % 3 = 0 THEN f4::float8 END) FROM ds$q$);
SELECT check_scan($q$SELECT sum(f8 / CASE WHEN f8 <> 0 THEN f8 END), count(*) FROM ds$q$);
-- Operators of double precision and real compute in double precision: a real column or constant
-- is an operand.  Real arithmetic (float4_pl ...) rounds to real after each operation, as
-- PostgreSQL computes it: alone (the arguments of sum, avg, min and max of real), inside double
-- precision arithmetic and under a cast to it; casts to real of double precision arithmetic and of
-- smallint and integer columns, rounded once.  Overflow, underflow and division by zero raise
-- PostgreSQL's errors.
SELECT check_scan($q$SELECT sum(f8 * f4), max(f4 / (f8 + 1000)), min(f8 - 1.5::float4), sum(2.5::float4 + f8), count(*) FROM ds$q$);
SELECT check_scan($q$SELECT sum(f4 * f4 + f8), avg(f4 * 0.25::float4), max(f4 / 7 - f4), min(f4 / 7 - f4),
  max(-f4 + 0.1::float4), min((f4 * 1.1::float4)::float8 - f8), max((f4 * 1.1::float4)::float8 - f4 * 1.1::float8),
  min((f4 * 1.1::float4)::float8 - f4 * 1.1::float8), count(*) FROM ds$q$);
SELECT check_scan($q$SELECT array_agg(g ORDER BY g) FROM (SELECT b, avg(f4 * 0.7::float4), max(f4 - 0.3::float4),
  min(f4 / 3::float4) FROM ds WHERE i8 > 0 GROUP BY b) g$q$);
SELECT check_scan($q$SELECT sum(f4 * 0.25::float4), sum(-f4), count(*) FROM ds WHERE i4 % 4 = 0$q$);
SELECT check_scan($q$SELECT avg(i4::real), max(i2::float4 * 0.5::float4), min((f8 * 3)::real), max((f8 / 7)::float4 - f4),
  min((f8 / 7)::float4), avg((f8 * f8)::real), count(*) FROM ds$q$);
-- A CASE of real: its branches real columns and constants (negated too), alone, under real
-- arithmetic and cast.
SELECT check_scan($q$SELECT max(CASE WHEN i2 > 0 THEN -f4 ELSE 0.5::real END), min(CASE WHEN i4 > 0 THEN -f8 ELSE -(-f8) END),
  min(CASE WHEN f8 > 100 THEN f4 END * 3::real), avg(CASE WHEN i4 % 3 = 0 THEN f4 WHEN i4 % 3 = 1 THEN 2.5::real END), min((CASE WHEN b THEN f4 END)::float8 * f8), count(*) FROM ds$q$);
-- A bigint cast to real is rounded once, as i8tof does: 2^60 + 2^36 + 1 is 2^60 + 2^37, where
-- through a double it would be 2^60.
CREATE TABLE ds_big AS SELECT (1152921573326323713 + i % 3 - 1)::int8 AS i8, i FROM generate_series(1, 3000) i;
INSERT INTO ds_big VALUES (-1152921573326323713, 0), (9223372036854775807, 0), (-9223372036854775808, 0);
VACUUM ANALYZE ds_big;
SELECT check_scan($q$SELECT max(i8::real), min(i8::real), max(i8::real * 2::real), min(i8::real / 3::real), count(*)
  FROM ds_big WHERE i <> 1$q$);
DROP TABLE ds_big;
-- A numeric column cast to real is rounded once, as numeric_float4 rounds it: values next to the
-- midpoints between reals in [8, 9) (8 + (2j + 1) 2^-21), which through a double round to the
-- midpoint and then to even, for 1750 of them wrongly.
CREATE TABLE ds_nr AS SELECT ((8000000000000000 + CASE WHEN j % 2 = 0 THEN floor((2 * (j / 2) + 1) * 476837158.203125)
  ELSE ceil((2 * (j / 2) + 1) * 476837158.203125) END) / 1000000000000000)::numeric(16,15) AS n, j,
  (j * 1.37)::numeric(15,2) AS p FROM generate_series(0, 3999) j;
VACUUM ANALYZE ds_nr;
SELECT count(*) FILTER (WHERE n::real <> n::float8::real) FROM ds_nr;
SELECT check_scan($q$SELECT sum(n::real::float8), max(p::real), min(p::real * 3::real), sum(p::real::float8), count(*)
  FROM ds_nr$q$);
DROP TABLE ds_nr;
SELECT sum(f4 * 1e38::float4 * 10::float4) FROM ds WHERE i2 > 0;
SELECT sum((f8 * 1e300)::real) FROM ds;
SELECT sum((f8 * 1e-300)::real) FROM ds WHERE f8 <> 0;
SELECT sum(f4 * 1e-38::float4 * 1e-10::float4) FROM ds;
SELECT sum(f4 / (f4 - f4)) FROM ds;
SELECT check_scan($q$SELECT count(CASE WHEN i2 > 0 THEN f8 END), sum(f8) FROM ds$q$, false);
-- Arguments under a FILTER are computed on the device for every row that passes WHERE; an error
-- on a row its FILTER drops is not raised (PostgreSQL computes the argument only where the FILTER
-- passes), and the rows stay on the device; an error where the FILTER passes is raised.
SELECT check_scan($q$SELECT sum(f8 * 2 + f4) FILTER (WHERE i4 > 0), max(f4 * 0.5::real) FILTER (WHERE b),
  min(f8 / 7) FILTER (WHERE i2 < 0), sum(f8 * 2 + f4), count(*) FROM ds$q$);
SELECT check_scan($q$SELECT array_agg(g ORDER BY g) FROM (SELECT b, sum(f8 - f4) FILTER (WHERE i4 % 3 = 0),
  avg(f8 * f8) FILTER (WHERE i2 > 0) FROM ds GROUP BY b) g$q$);
SELECT check_scan($q$SELECT max(1 / f8) FILTER (WHERE f8 <> 0), min(1 / f8) FILTER (WHERE f8 <> 0), count(*) FROM ds$q$);
SELECT check_scan($q$SELECT sum(i8 / i2) FILTER (WHERE i2 <> 0), sum(i4 * 20000) FILTER (WHERE i4 < 100000),
  max(i4 % i2) FILTER (WHERE i2 > 0), sum(-i2) FILTER (WHERE i2 < 0), count(*) FROM ds$q$);
SELECT check_scan($q$SELECT array_agg(g ORDER BY g) FROM (SELECT b, sum(i8 / i2) FILTER (WHERE i2 <> 0),
  max(1 / f8) FILTER (WHERE f8 <> 0), sum(i4 * 20000) FILTER (WHERE i4 < 100000) FROM ds GROUP BY b) g$q$);
SELECT sum(1 / f8) FILTER (WHERE f8 >= 0) FROM ds;
SELECT sum(i8 / i2) FILTER (WHERE i2 >= 0), max(1 / f8) FILTER (WHERE f8 <> 0) FROM ds;
SELECT sum(i8 / i2) FILTER (WHERE i2 <> 0), sum(i4 * 20000) FILTER (WHERE i4 < 200000) FROM ds;
SELECT sum(CASE WHEN f8 = f8 - f8 THEN f8 / (f8 - f8) ELSE 0 END) FROM ds WHERE f8 <> 0;

-- Pages not all-visible: rows updated (some HOT, leaving redirects), deleted, and a rolled-back
-- insert; the CPU lists their visible items, the device decodes them.
UPDATE ds SET i4 = i4 + 1 WHERE i4 % 101 = 0;
DELETE FROM ds WHERE i8 % 7 = 0;
BEGIN;
INSERT INTO ds (i4) SELECT generate_series(1, 500);
ROLLBACK;
SELECT check_scan('SELECT count(*), sum(i2), sum(i4), sum(i8), min(i8), max(i4), avg(i4) FROM ds');
SELECT check_scan($q$SELECT count(*), sum(f8), max(ts) FROM ds WHERE d <= date '1998-12-01' - interval '90 day'$q$);
-- Pages in shared buffers read by the device in place, where the device layer reads shared buffers
-- (the GPU service pins them for its devices; the fake device reads host memory where it is): the
-- CPU copies each page's header and line pointers and keeps the buffer pinned.  Pages not
-- all-visible among them, batches with pages both copied and read in place (a backend pins only
-- its share of shared buffers at once), GROUP BY on the device; and none read in place when
-- gpuext.device_scan_in_place is off.
CREATE FUNCTION device_reads_buffers() RETURNS boolean LANGUAGE sql AS $$
  SELECT gpu_kernels AND device_state <> 'unavailable' AND
         (device_name LIKE 'gpuext fake device%' OR
          (current_setting('shared_preload_libraries') ~ 'gpuext' AND current_setting('gpuext.service') = 'on'))
  FROM gpuext_info()
$$;
CREATE FUNCTION check_in_place(q text, want boolean DEFAULT true) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  reads boolean := device_reads_buffers();
  plan jsonb;
  node jsonb;
  res text := check_scan(q);
BEGIN
  IF res <> 'ok' OR NOT reads THEN
    RETURN res;
  END IF;
  EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
  node := jsonb_path_query_first(plan, '$.** ? (@."Custom Plan Provider" == "GpuAgg")');
  IF ((node->>'Heap Blocks Read In Place')::bigint > 0) <> want THEN
    RETURN format('%s of %s blocks read in place', node->>'Heap Blocks Read In Place', node->>'Device Scan Blocks');
  END IF;
  RETURN 'ok';
END $$;
SELECT check_in_place('SELECT count(*), sum(i2), sum(i4), sum(i8), min(f8), max(ts) FROM ds');
SELECT check_in_place($q$SELECT count(*), sum(f8) FROM ds WHERE d <= date '1998-12-01' - interval '90 day'$q$);
SELECT check_in_place('SELECT array_agg(g::text ORDER BY g::text) FROM (SELECT b, count(*), sum(i4), max(f8) FROM ds GROUP BY b) g');
SET gpuext.device_scan_in_place = off;
SELECT check_in_place('SELECT count(*), sum(i2), sum(i4), sum(i8), min(f8), max(ts) FROM ds', false);
RESET gpuext.device_scan_in_place;
-- Pages the visibility map calls all-visible are taken whole: the CPU neither copies nor reads
-- them, and checks, once the device has read them, that the map still calls them so.  After an
-- UPDATE the pages it touched are not all-visible and go as before (header and line pointers
-- copied, visible rows found by the CPU).  Where the check finds a page changed (injected here:
-- a writer between the taking and the check), the run is answered on the CPU.  With
-- gpuext.device_scan_whole_pages off, none is taken whole.
CREATE FUNCTION check_whole(q text, want text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  reads boolean := device_reads_buffers();
  plan jsonb;
  node jsonb;
  res text;
  in_place bigint;
  whole bigint;
BEGIN
  IF want = 'changed' THEN
    PERFORM set_config('gpuext.debug_fail_device_calls', 'recheck:1', true);
  END IF;
  EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
  IF want = 'changed' THEN
    PERFORM set_config('gpuext.debug_fail_device_calls', 'recheck:1', true);
  END IF;
  res := check_scan(q, NULL);
  PERFORM set_config('gpuext.debug_fail_device_calls', '', true);
  IF res <> 'ok' OR NOT reads THEN
    RETURN res;
  END IF;
  node := jsonb_path_query_first(plan, '$.** ? (@."Custom Plan Provider" == "GpuAgg")');
  in_place := (node->>'Heap Blocks Read In Place')::bigint;
  whole := (node->>'Heap Blocks Taken Whole')::bigint;
  IF (CASE want WHEN 'all' THEN whole = in_place AND whole > 0
                WHEN 'some' THEN whole > 0 AND whole < in_place
                WHEN 'none' THEN whole = 0 AND in_place > 0 AND node->>'GPU Fallback' IS NULL
                ELSE whole = 0 AND node->>'GPU Fallback' = 'a page changed while the device read it' END) THEN
    RETURN 'ok';
  END IF;
  RETURN format('%s of %s blocks in place taken whole (%s)', whole, in_place, node->>'GPU Fallback');
END $$;
VACUUM ds;
SELECT check_whole('SELECT count(*), sum(i2), sum(i4), sum(i8), min(f8), max(ts) FROM ds', 'all');
SELECT check_whole('SELECT array_agg(g::text ORDER BY g::text) FROM (SELECT b, count(*), sum(i4), max(f8) FROM ds GROUP BY b) g', 'all');
SET gpuext.device_scan_whole_pages = off;
SELECT check_whole('SELECT count(*), sum(i2), sum(i4), sum(i8), min(f8), max(ts) FROM ds', 'none');
RESET gpuext.device_scan_whole_pages;
-- compressed values: the batches holding them read on the CPU, their pages taken whole read under their lock
SELECT check_whole($q$SELECT count(*), sum(i4) FROM ds WHERE t LIKE 'comp%'$q$, 'all');
UPDATE ds SET i2 = i2 WHERE i4 % 97 = 0;
SELECT check_whole('SELECT count(*), sum(i2), sum(i4), sum(i8), min(f8), max(ts) FROM ds', 'some');
SELECT check_whole('SELECT count(*), sum(i2), sum(i4), sum(i8), min(f8), max(ts) FROM ds', 'changed');
SELECT check_whole('SELECT array_agg(g::text ORDER BY g::text) FROM (SELECT b, count(*), sum(i4), max(f8) FROM ds GROUP BY b) g', 'changed');
VACUUM ds;

-- In a transaction that deleted rows itself, and a cursor (no parallel mode).
BEGIN;
DELETE FROM ds WHERE i4 % 13 = 0;
SELECT check_scan('SELECT count(*), sum(i4), sum(f4) FROM ds');
ROLLBACK;
VACUUM ds;
SELECT check_scan('SELECT count(*), sum(i4), sum(f4) FROM ds');

-- Special floats and the extremes of each type.
CREATE TABLE dsf (pad text, f4 float4, f8 float8, i2 int2, i4 int4, i8 int8, d date);
INSERT INTO dsf VALUES
  ('a', 'NaN', 'NaN', 32767, 2147483647, 9223372036854775807, 'infinity'),
  ('bb', '-Infinity', 'Infinity', -32768, -2147483648, -9223372036854775808, '-infinity'),
  (NULL, '-0', '-0', 0, 0, 0, '4713-01-01 BC'),
  ('dddd', 1.5, -2.25, -1, -1, -1, '5874897-12-31'),
  ('', 'Infinity', '-Infinity', NULL, NULL, NULL, NULL);
VACUUM ANALYZE dsf;
SELECT check_scan('SELECT min(f4), max(f4), min(f8), max(f8), count(f8), sum(i2), sum(i4), min(i8), max(i8), count(*) FROM dsf');
SELECT check_scan('SELECT sum(f8 * 2), sum(f8 - f8), sum(-f8), sum(f8 / 3), count(*) FROM dsf');
SELECT check_scan($q$SELECT min(d), max(d), count(*) FROM dsf WHERE d > timestamp '2000-01-01' OR d IS NULL$q$);
SELECT check_scan($q$SELECT min(d), max(d), count(*) FROM dsf WHERE d > timestamp '2000-01-01'$q$);
SELECT check_scan($q$SELECT min(d), max(d), count(*) FROM dsf WHERE d <= timestamp 'infinity'$q$);
SELECT check_scan($q$SELECT count(*), min(f8) FROM dsf WHERE f8 >= 'NaN'$q$);
SELECT check_scan($q$SELECT count(*), min(f8), max(d) FROM dsf WHERE f8 <> 'NaN' AND f4 <> '-0' AND d <> 'infinity'$q$);
SELECT check_scan($q$SELECT count(*), min(f4) FROM dsf WHERE pad IS NULL OR i2 IS NULL$q$);
SELECT check_scan($q$SELECT count(*), min(f4) FROM dsf WHERE f4 = 0$q$);
SELECT check_scan($q$SELECT sum(i4), sum(i8) FROM dsf WHERE i2 < 0$q$);

-- Columns added with defaults: rows written before them hold no value for them.
CREATE TABLE dsm (pad text, a int4);
INSERT INTO dsm SELECT repeat('p', i % 20), i FROM generate_series(1, 3000) i;
ALTER TABLE dsm ADD COLUMN b int8 DEFAULT 42, ADD COLUMN c float8 DEFAULT 0.5, ADD COLUMN e date;
INSERT INTO dsm SELECT 'q', i, i, i / 4.0, date '2000-01-01' + i FROM generate_series(1, 1000) i;
VACUUM ANALYZE dsm;
SELECT check_scan('SELECT count(*), sum(a), sum(b), sum(c), count(e), min(e), count(b) FROM dsm');
SELECT check_scan('SELECT count(*), sum(a) FROM dsm WHERE b = 42 AND c > 0.25');
SELECT check_scan('SELECT count(*), sum(b) FROM dsm WHERE e IS NULL');
SELECT check_scan('SELECT count(*), sum(b), count(c) FILTER (WHERE e IS NOT NULL) FROM dsm WHERE pad IS NOT NULL');

-- Where the device scan does not take the query: a WHERE clause not compiled for it (a regular
-- expression), an unconstrained numeric or a function call as an argument; a prefix, an IN list
-- and integer arithmetic it does take.
SELECT check_scan('SELECT count(*), sum(i4) FROM ds WHERE t ~ ''x.$''', false);
SELECT check_scan('SELECT count(*), sum(a) FROM dsm WHERE pad LIKE ''pp%''');
SELECT check_scan('SELECT count(*), sum(i4) FROM ds WHERE i2 IN (1::int2, 2::int2, 3::int2)');
SELECT check_scan('SELECT sum(i4 + 1) FROM ds');
SELECT check_scan('SELECT sum(abs(i4) + 1) FROM ds', false);
SELECT check_scan('SELECT count(*), sum(i4) FROM ds WHERE i4 % 10 <> 5');

-- Under auto a failing device leaves the batch to the CPU, row by row, with the same result; under
-- gpu it is an ERROR.
SELECT count(*) AS ds_rows FROM ds \gset
SET client_min_messages = error;
SET gpuext.device = auto;
SET gpuext.debug_fail_device_calls = 'kernel:1';
SELECT check_scan('SELECT count(*), sum(a), min(c) FROM dsm', true, 4000);
SET gpuext.debug_fail_device_calls = 'kernel:1:1';
SELECT check_scan('SELECT count(*), sum(a), min(c) FROM dsm', true, 4000);
-- The batch's pages gathered (a copy): the CPU reads the batch, from the buffers it kept pinned.
SET gpuext.debug_fail_device_calls = 'copy:1';
SELECT check_scan('SELECT count(*), sum(a), min(c) FROM dsm', true, 4000);
-- The wait after the first batch's, which its reductions were left to: they are lost with the
-- device, so the run is read again, on the CPU.
SET gpuext.debug_fail_device_calls = 'sync:1:2';
SELECT check_scan('SELECT count(*), sum(i4), sum(f4) FROM ds', false);
RESET gpuext.debug_fail_device_calls;
RESET client_min_messages;
RESET gpuext.device;
DROP TABLE ds, dsf, dsm;
DROP FUNCTION check_in_place, check_whole, device_reads_buffers, check_scan;
