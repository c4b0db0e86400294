-- Custom Scan (GpuAgg) over numeric, and min and max over date, timestamp and timestamptz, with
-- and without GROUP BY: numeric(p <= 18, s >= 0) (n15, n5) reduced as bigint at scale s, with
-- NaNs counted aside; other numerics (n38, nu, expressions) in exact CPU accumulators.  Every
-- result is checked against PostgreSQL's own plan in the same test (gpuext.enable_agg = off), as
-- text, so display scales count; where there is no device code GpuAgg is never planned and the
-- checks print the same.  The plans are shown only where a device can be used.
SELECT device_state = 'ready' AS has_device FROM gpuext_info() \gset
LOAD 'gpuext';
SET gpuext.agg_min_rows = 0;
SET max_parallel_workers_per_gather = 0;
SET work_mem = '64MB';
SELECT setseed(0.29);
-- k1: a key of one letter, k2: a small integer key whose group 99 has only NULL values, k3: id % 1000;
-- numerics with NULLs, NaN (id % 1000 = 7), negatives; nu of mixed scales with infinities;
-- dates and timestamps with NULLs, infinity (id % 4999 = 0) and -infinity (id % 4999 = 1).
CREATE TABLE gtyp (id int4, k1 text, k2 int4, k3 int4, n15 numeric(15, 2), n38 numeric(38, 10), n5 numeric(5, 0),
  nu numeric, d date, ts timestamp, tz timestamptz);
INSERT INTO gtyp SELECT i, chr(65 + i % 3), CASE WHEN i % 501 = 0 THEN 99 ELSE i % 11 END, i % 1000,
  CASE WHEN i % 53 = 0 THEN NULL WHEN i % 1000 = 7 THEN 'NaN' ELSE round((random() * 2e12 - 1e12)::numeric, 2) END,
  CASE WHEN i % 59 = 0 THEN NULL WHEN i % 1000 = 7 THEN 'NaN' ELSE (random() * 2e27 - 1e27)::numeric(38, 10) + i / 7.0 END,
  CASE WHEN i % 61 = 0 THEN NULL WHEN i % 1000 = 7 THEN 'NaN'::numeric ELSE (i * 7919) % 199999 - 99999 END,
  CASE WHEN i % 67 = 0 THEN NULL WHEN i % 9973 = 5 THEN 'Infinity' WHEN i % 9973 = 6 THEN '-Infinity'
    ELSE round((random() * 2000 - 1000)::numeric, i % 7) END,
  CASE WHEN i % 71 = 0 THEN NULL WHEN i % 4999 = 0 THEN 'infinity' WHEN i % 4999 = 1 THEN '-infinity'
    ELSE DATE '1992-01-01' + (i * 31) % 2500 END,
  CASE WHEN i % 73 = 0 THEN NULL WHEN i % 4999 = 0 THEN 'infinity' WHEN i % 4999 = 1 THEN '-infinity'
    ELSE TIMESTAMP '1992-01-01' + ((i * 7919) % 100000) * INTERVAL '17 minutes 3.25 seconds' END,
  CASE WHEN i % 79 = 0 THEN NULL WHEN i % 4999 = 2 THEN 'infinity' WHEN i % 4999 = 3 THEN '-infinity'
    ELSE TIMESTAMPTZ '1992-01-01 00:00+00' - ((i::int8 * 104729) % 100000) * INTERVAL '13 minutes 0.5 seconds' END
FROM generate_series(1, 30000) i;
UPDATE gtyp SET n15 = NULL, n38 = NULL, n5 = NULL, nu = NULL, d = NULL, ts = NULL, tz = NULL WHERE k2 = 99;
ANALYZE gtyp;

-- Whether q's plan has a GpuAgg.
CREATE FUNCTION gpuagg_planned(q text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF line LIKE '%Custom Scan (GpuAgg)%' THEN
      RETURN true;
    END IF;
  END LOOP;
  RETURN false;
END $$;

-- 'ok' when q's rows with GpuAgg allowed equal (as text) its rows with gpuext.enable_agg off, and
-- GpuAgg was planned for q exactly where there is device code and offload says so; else the row
-- counts and the first row that differs.
CREATE FUNCTION check_typ(q text, offload boolean DEFAULT true) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  planned boolean := gpuagg_planned(q);
  expect_planned boolean := offload AND (SELECT gpu_kernels AND device_state <> 'unavailable' FROM gpuext_info());
  got text[];
  want text[];
BEGIN
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

-- numeric without GROUP BY: NaN rows make sum, avg and max NaN, min stays a number.
SELECT check_typ('SELECT sum(n15), avg(n15), min(n15), max(n15), count(n15) FROM gtyp');
SELECT check_typ('SELECT sum(n38), avg(n38), min(n38), max(n38), count(n38) FROM gtyp');
SELECT check_typ('SELECT sum(n5), avg(n5), min(n5), max(n5), count(n5), count(*) FROM gtyp');
SELECT check_typ('SELECT sum(nu), avg(nu), min(nu), max(nu), count(nu) FROM gtyp');
-- ... without the NaN rows: exact sums at the column's scale, avg as numeric_avg divides.
SELECT check_typ('SELECT sum(n15), avg(n15), min(n15), max(n15), sum(n38), avg(n38), min(n38), max(n38), sum(n5), avg(n5), min(n5), max(n5) FROM gtyp WHERE id % 1000 <> 7');
SELECT check_typ('SELECT sum(nu), avg(nu), min(nu), max(nu) FROM gtyp WHERE id % 9973 > 6');
-- A numeric without a typmod is added on the CPU: where the WHERE clause is not compiled either
-- (NOT IN), nothing would be gained and PostgreSQL's plan runs.
SELECT check_typ('SELECT sum(nu), avg(nu), min(nu), max(nu) FROM gtyp WHERE id % 9973 NOT IN (5, 6)', false);
-- ... unless the suites that force every aggregate onto gpuext ask for it
SET gpuext.debug_agg_without_gain = on;
SELECT check_typ('SELECT sum(nu), avg(nu), min(nu), max(nu) FROM gtyp WHERE id % 9973 NOT IN (5, 6)');
RESET gpuext.debug_agg_without_gain;
SELECT k1, sum(n5), avg(n5), min(n5), max(n5), count(n5) FROM gtyp WHERE id % 1000 <> 7 GROUP BY k1 ORDER BY k1;
-- Only NaNs: NaN everywhere, min too.
SELECT check_typ('SELECT sum(n15), avg(n15), min(n15), max(n15), count(n15), min(n5), sum(n38), min(n38) FROM gtyp WHERE id % 1000 = 7');
SELECT check_typ('SELECT k3, sum(n15), avg(n15), min(n15), max(n15), count(n15), min(n5), sum(n38), min(n38) FROM gtyp GROUP BY k3 HAVING max(id) % 1000 = 7');
-- numeric per group, the NULL-only group 99 giving NULLs and count 0, NaN in some groups only.
SELECT check_typ('SELECT k2, sum(n15), avg(n15), min(n15), max(n15), count(n15), count(*) FROM gtyp GROUP BY k2');
SELECT check_typ('SELECT k1, k2, sum(n38), avg(n38), min(n38), max(n38), sum(n5), avg(n5), min(n5), max(n5) FROM gtyp GROUP BY k1, k2');
SELECT check_typ('SELECT k3, sum(n15), avg(n38), max(n5), min(nu), sum(nu), avg(nu) FROM gtyp GROUP BY k3');
SELECT check_typ('SELECT k2, sum(nu), avg(nu), min(nu), max(nu), count(nu) FROM gtyp GROUP BY k2');
-- One group per row (NaN and NULL rows their own groups).
SELECT check_typ('SELECT id, sum(n15), avg(n38), min(n5), max(nu) FROM gtyp GROUP BY id');
-- FILTER, HAVING, WHERE, expressions as arguments (of scales s1 + s2), numeric beside other types.
SELECT check_typ('SELECT k2, sum(n15) FILTER (WHERE n5 < 0), avg(n38) FILTER (WHERE k1 = ''A''), min(n5) FILTER (WHERE false), count(*) FILTER (WHERE n15 > 0) FROM gtyp GROUP BY k2');
SELECT check_typ('SELECT k1, sum(n15) FROM gtyp GROUP BY k1 HAVING sum(n15) > 0 OR avg(n5) < 0');
SELECT check_typ('SELECT k2 FROM gtyp WHERE id % 1000 <> 7 GROUP BY k2 HAVING max(n15) - min(n15) > 1e12');
SELECT check_typ('SELECT k1, sum(n15 * n5), avg(n15 * 2 - n5), sum(n15 / 3), max(n5 + nu), sum(id::numeric / 8), avg(id), sum(id), min(n15 * 0.001) FROM gtyp WHERE id % 1000 <> 7 GROUP BY k1');
SELECT check_typ('SELECT sum(n15 * n5), avg(n15 * 2 - n5), sum(n15 / 3), max(n5 + nu), sum(id::numeric / 8), sum(id) FROM gtyp WHERE id % 1000 <> 7');
SELECT check_typ('SELECT k2 % 3, sum(n15) + 1, coalesce(avg(n5), 0), max(n38)::text, sum(n5) / count(*) FROM gtyp GROUP BY 1');

-- dates and timestamps: min and max, with infinity and -infinity, with and without GROUP BY.
SELECT check_typ('SELECT min(d), max(d), min(ts), max(ts), min(tz), max(tz), count(d), count(ts), count(tz) FROM gtyp');
SELECT check_typ('SELECT min(d), max(d), min(ts), max(ts), min(tz), max(tz) FROM gtyp WHERE id % 4999 > 3');
SELECT check_typ('SELECT k2, min(d), max(d), min(ts), max(ts), min(tz), max(tz), count(d) FROM gtyp GROUP BY k2');
SELECT check_typ('SELECT id % 4999, min(d), max(d), min(ts), max(ts), min(tz), max(tz) FROM gtyp GROUP BY 1');
SELECT check_typ('SELECT d, min(ts), max(tz), sum(n15), count(*) FROM gtyp GROUP BY d');
SELECT check_typ('SELECT k1, max(d) FILTER (WHERE n5 > 0), min(ts) FILTER (WHERE k2 = 3), max(tz::date) FROM gtyp GROUP BY k1 HAVING min(d) < DATE ''2000-01-01''');
SELECT k2, min(d), max(d), min(ts), max(ts), min(tz), max(tz) FROM gtyp WHERE id % 4999 < 4 GROUP BY k2 ORDER BY k2;
SELECT min(d), max(d), min(ts), max(ts), min(tz) AT TIME ZONE 'UTC', max(tz) AT TIME ZONE 'UTC' FROM gtyp WHERE id % 4999 > 3;

-- No rows: one row of NULLs (count 0) without GROUP BY, no groups with it.
CREATE TABLE gtyp_empty (LIKE gtyp);
SELECT check_typ('SELECT sum(n15), avg(n38), min(n5), max(nu), count(n15), min(d), max(ts), min(tz) FROM gtyp_empty');
SELECT check_typ('SELECT k2, sum(n15), avg(n38), min(d), max(tz) FROM gtyp_empty GROUP BY k2');
SELECT sum(n15), avg(n38), min(n5), max(nu), count(n15), min(d), max(ts), min(tz) FROM gtyp_empty;

-- Sums at the limits: 38 digits at the scale, sums past 128 bits (exact as numeric), and below.
CREATE TABLE gtyp_big (g int4, a numeric(38, 0), b numeric(38, 10), c numeric(15, 2));
INSERT INTO gtyp_big SELECT i % 3, CASE WHEN i % 2 = 0 THEN 99999999999999999999999999999999999999 ELSE -99999999999999999999999999999999999998 END,
  9999999999999999999999999999.9999999999, -9999999999999.99
FROM generate_series(1, 2000) i;
INSERT INTO gtyp_big SELECT 3, 99999999999999999999999999999999999999, -9999999999999999999999999999.9999999999, 9999999999999.99
FROM generate_series(1, 1000) i;
ANALYZE gtyp_big;
SELECT check_typ('SELECT sum(a), avg(a), min(a), max(a), sum(b), avg(b), sum(c), avg(c) FROM gtyp_big');
SELECT check_typ('SELECT g, sum(a), avg(a), min(a), max(a), sum(b), avg(b), min(b), sum(c), avg(c), max(c) FROM gtyp_big GROUP BY g');
SELECT g, sum(a), sum(b), sum(c) FROM gtyp_big GROUP BY g ORDER BY g;

-- Typmods at the edges: numeric(18, 0) and (18, 6) at their limits (bigint at the scale, sums past
-- it), numeric(3, 5), and on the CPU numeric(19, 0) and numeric(5, -2).
CREATE TABLE gtyp_edge (g int4, e numeric(18, 0), f numeric(18, 6), h numeric(3, 5), m numeric(5, -2), z numeric(19, 0));
INSERT INTO gtyp_edge SELECT i % 4,
  CASE i % 3 WHEN 0 THEN 999999999999999999 WHEN 1 THEN -999999999999999999 ELSE i END,
  CASE WHEN i % 5 = 0 THEN -999999999999.999999 ELSE 123456789012.345678 + i END,
  0.00001 * (i % 999 - 499), i * 137, CASE WHEN i % 2 = 0 THEN 9999999999999999999 ELSE -i END
FROM generate_series(1, 3000) i;
ANALYZE gtyp_edge;
SELECT check_typ('SELECT sum(e), avg(e), min(e), max(e), sum(f), avg(f), min(f), max(f), sum(h), avg(h), min(h), max(h), sum(m), avg(m), max(m), sum(z), avg(z), min(z) FROM gtyp_edge');
SELECT check_typ('SELECT g, sum(e), avg(e), min(e), max(e), sum(f), avg(f), min(f), max(f), sum(h), avg(h), min(h), max(h), sum(m), avg(m), max(m), sum(z), avg(z), min(z) FROM gtyp_edge GROUP BY g');
SELECT g, sum(e), max(e), sum(f), avg(f), min(f), sum(h), max(h), sum(m), max(z) FROM gtyp_edge GROUP BY g ORDER BY g;

-- A TPC-H Q1-shaped query over numeric(15, 2) columns, its expressions of larger scales included.
CREATE TABLE gtyp_lineitem (l_quantity numeric(15, 2), l_extendedprice numeric(15, 2), l_discount numeric(15, 2),
  l_tax numeric(15, 2), l_returnflag text, l_linestatus text, l_shipdate date);
INSERT INTO gtyp_lineitem SELECT q, round(q * (900 + (i * 7) % 100000 / 100.0), 2), ((i * 13) % 11) / 100.0,
  ((i * 17) % 9) / 100.0, (ARRAY['A', 'N', 'R'])[1 + i % 3], CASE WHEN i % 5 < 2 THEN 'F' ELSE 'O' END,
  DATE '1992-01-02' + (i * 37) % 2526
FROM generate_series(1, 40000) i, LATERAL (SELECT (1 + (i * 31) % 50)::numeric(15, 2) AS q) s;
ANALYZE gtyp_lineitem;
SELECT check_typ($q$
SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, sum(l_extendedprice) AS sum_base_price,
  sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
  sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge,
  avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price, avg(l_discount) AS avg_disc,
  count(*) AS count_order
FROM gtyp_lineitem WHERE l_shipdate <= DATE '1998-12-01' - INTERVAL '90 day'
GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus$q$);
SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, sum(l_extendedprice) AS sum_base_price,
  sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
  sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge,
  avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price, avg(l_discount) AS avg_disc,
  count(*) AS count_order
FROM gtyp_lineitem WHERE l_shipdate <= DATE '1998-09-02'
GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus;

-- Rescans: a numeric group's accumulators start empty each run.
SELECT check_typ('SELECT o.g, l.* FROM generate_series(1, 3) o(g) CROSS JOIN LATERAL (SELECT k1, sum(n15), avg(nu), max(d) FROM gtyp WHERE k2 % 3 <> o.g % 3 GROUP BY k1) l');
SELECT check_typ('SELECT o.g, l.* FROM generate_series(1, 3) o(g) CROSS JOIN LATERAL (SELECT sum(n15), avg(nu), max(d), min(tz) FROM gtyp WHERE k2 % 3 <> o.g % 3) l');

-- What GpuAgg does not take: PostgreSQL's plan, the same results.
SELECT check_typ('SELECT max(ts - TIMESTAMP ''2000-01-01'') FROM gtyp WHERE id % 4999 > 3', offload => false);
SELECT check_typ('SELECT k1, min(ts::time) FROM gtyp GROUP BY k1', offload => false);
SELECT check_typ('SELECT sum(DISTINCT n5) FROM gtyp', offload => false);
-- Groups of numeric accumulators that would not fit in hash_mem spill, as integer ones do (PostgreSQL's
-- own plans made dear: which plan is cheaper for this query differs between versions).
SET work_mem = '8MB';
SET enable_hashagg = off;
SET enable_sort = off;
SELECT check_typ('SELECT id, sum(n15), avg(n38), max(nu) FROM gtyp GROUP BY id') AS numeric_groups_past_hash_mem;
RESET enable_hashagg;
RESET enable_sort;
SELECT gpuagg_planned('SELECT id, sum(n5::int4) FROM gtyp GROUP BY id') = (SELECT gpu_kernels AND device_state <> 'unavailable' FROM gpuext_info()) AS int_groups_offloaded;
SET work_mem = '64MB';

-- Device failures under auto: the run starts again on the CPU, numeric groups too (a WARNING says so, hidden here).
SET gpuext.device = auto;
SET gpuext.min_gpu_elements = 0;
SET client_min_messages = error;
SELECT kind, check_typ('SELECT k2, sum(n15), avg(n5), max(d), min(ts), sum(id) FROM gtyp GROUP BY 1'),
  check_typ('SELECT sum(n15), avg(n5), max(d), min(ts), sum(id) FROM gtyp')
FROM unnest(ARRAY['', 'kernel:1', 'copy:1', 'alloc:1', 'sync:1', 'kernel:1:2', 'any:100']) kind,
  LATERAL (SELECT set_config('gpuext.debug_fail_device_calls', kind, false)) s;
SET gpuext.debug_fail_device_calls = '';
RESET client_min_messages;
RESET gpuext.min_gpu_elements;

-- The plans: only where a device can be used.
\if :has_device
SET gpuext.device = gpu;
-- PostgreSQL's Sort above GpuAgg, whatever gpuext.sort_min_rows says.
SET gpuext.enable_sort = off;
EXPLAIN (COSTS OFF) SELECT k1, sum(n15), avg(n38), min(n5), max(nu), count(n15) FROM gtyp GROUP BY k1;
EXPLAIN (COSTS OFF) SELECT sum(n15), avg(n15 * n5), min(d), max(ts), min(tz) FROM gtyp;
EXPLAIN (COSTS OFF) SELECT k2, min(d), max(ts), max(tz) FROM gtyp WHERE d > DATE '1995-01-01' GROUP BY k2 ORDER BY k2;
EXPLAIN (COSTS OFF)
SELECT l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)),
  avg(l_discount), count(*)
FROM gtyp_lineitem WHERE l_shipdate <= DATE '1998-09-02' GROUP BY l_returnflag, l_linestatus ORDER BY 1, 2;
-- numeric(15, 2) and (5, 0) go to the device (batches on device), numeric without typmod does not.
CREATE FUNCTION gtyp_explained(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) ' || q LOOP
    RETURN NEXT regexp_replace(line, '(rows=|loops=)[0-9.]+', '\1N', 'g');
  END LOOP;
END $$;
SELECT gtyp_explained('SELECT k1, sum(n15), avg(n5), max(d) FROM gtyp GROUP BY k1');
SELECT gtyp_explained('SELECT sum(n15), avg(n5), min(tz) FROM gtyp');
SELECT gtyp_explained('SELECT k1, sum(nu) FROM gtyp GROUP BY k1');
DROP FUNCTION gtyp_explained(text);
\endif

DROP TABLE gtyp, gtyp_empty, gtyp_big, gtyp_edge, gtyp_lineitem;
DROP FUNCTION gpuagg_planned(text), check_typ(text, boolean);
