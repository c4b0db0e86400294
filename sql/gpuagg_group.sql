-- Custom Scan (GpuAgg) with GROUP BY and HAVING: keys of any hashable type numbered on the CPU,
-- values reduced into per-group states (on the device, or on the CPU without one).  Every result
-- is checked against PostgreSQL's own plan in the same test (gpuext.enable_agg = off), float sums
-- against the exactly rounded sum of the values as numeric; where there is no device code GpuAgg
-- is never planned and the checks print the same.  The plans are shown only where a device can be
-- used.
SELECT device_state = 'ready' AS has_device FROM gpuext_info() \gset
LOAD 'gpuext';
SET gpuext.agg_min_rows = 0;
SET max_parallel_workers_per_gather = 0;
SET work_mem = '64MB';
SELECT setseed(0.23);
-- Values whose float sums are exact in double precision, so that PostgreSQL's own sums are too.
CREATE TABLE ggrp (id int4, k4 int4, k8 int8, kt text, kn numeric, kd date, kf float8, kb bool,
  i2 int2, i4 int4, i8 int8, f4 float4, f8 float8);
INSERT INTO ggrp SELECT i,
  CASE WHEN i % 97 = 0 THEN NULL ELSE (i * 7919) % 1000 END,
  (i % 13) * 1000000000000,
  CASE WHEN i % 89 = 0 THEN NULL ELSE chr(65 + i % 3) || chr(65 + i % 2) END,
  CASE WHEN i % 2 = 0 THEN (i % 5)::numeric ELSE (i % 5)::numeric(10, 2) END,
  DATE '2024-01-01' + i % 40,
  CASE i % 7 WHEN 0 THEN 'NaN'::float8 WHEN 1 THEN '-0'::float8 WHEN 2 THEN 0::float8 ELSE i % 7 END,
  i % 3 = 0,
  CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 65534 - 32767)::int2 END,
  CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 4e9 - 2e9)::int4 END,
  CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 1.8e19 - 9e18)::int8 END,
  CASE WHEN random() < 0.1 THEN NULL ELSE ((random() * 1998)::int - 999) / 8.0 END,
  CASE WHEN random() < 0.1 THEN NULL ELSE round(random() * 2e9 - 1e9) / 64 END
FROM generate_series(1, 30000) i;
ALTER TABLE ggrp ADD PRIMARY KEY (id);
ANALYZE ggrp;

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

-- 'ok' when q's rows with GpuAgg allowed equal ref's with gpuext.enable_agg off (q's own where
-- there is no ref, or no GpuAgg to be exact), and GpuAgg was planned for q exactly where there is
-- device code and offload says so; else the row counts and the first row that differs.  The rows
-- are compared in text order (q's ORDER BY, where it has one, is PostgreSQL's Sort above GpuAgg).
CREATE FUNCTION check_grp(q text, ref text DEFAULT NULL, offload boolean DEFAULT true) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  planned boolean := gpuagg_planned(q);
  expect_planned boolean := offload AND (SELECT gpu_kernels AND device_state <> 'unavailable' FROM gpuext_info());
  got text[];
  want text[];
BEGIN
  EXECUTE format('SELECT array_agg(x ORDER BY x) FROM (SELECT row(s.*)::text x FROM (%s) s) t', q) INTO got;
  PERFORM set_config('gpuext.enable_agg', 'off', true);
  EXECUTE format('SELECT array_agg(x ORDER BY x) FROM (SELECT row(s.*)::text x FROM (%s) s) t', CASE WHEN expect_planned THEN coalesce(ref, q) ELSE q END) INTO want;
  PERFORM set_config('gpuext.enable_agg', 'on', true);
  IF got IS NOT DISTINCT FROM want AND planned = expect_planned THEN
    RETURN 'ok';
  END IF;
  RETURN format('%s rows against %s, first difference: got %s, want %s, GpuAgg planned: %s',
    cardinality(got), cardinality(want),
    (SELECT g FROM unnest(got, want) u(g, w) WHERE g IS DISTINCT FROM w LIMIT 1),
    (SELECT w FROM unnest(got, want) u(g, w) WHERE g IS DISTINCT FROM w LIMIT 1), planned);
END $$;

-- Each aggregate and type per group, NULL keys as one group, NULL values left out.
SELECT check_grp('SELECT k4, count(*), count(i2), count(i4), count(i8), count(f4), count(f8), count(kt) FROM ggrp GROUP BY k4 ORDER BY k4');
SELECT check_grp('SELECT k4, sum(i2), sum(i4), sum(i8), avg(i2), avg(i4), avg(i8) FROM ggrp GROUP BY k4 ORDER BY k4');
SELECT check_grp('SELECT k4, min(i2), max(i2), min(i4), max(i4), min(i8), max(i8), min(f4), max(f4), min(f8), max(f8) FROM ggrp GROUP BY k4 ORDER BY k4');
SELECT check_grp('SELECT k4, sum(f8), avg(f8), avg(f4) FROM ggrp GROUP BY k4 ORDER BY k4');
-- Float sums are exact: the sum of the values as numeric, rounded once (real's too).
SELECT check_grp('SELECT k4, sum(f4), sum(f8) FROM ggrp GROUP BY k4 ORDER BY k4',
  'SELECT k4, sum(f4::numeric)::float4, sum(f8::numeric)::float8 FROM ggrp GROUP BY k4 ORDER BY k4');
-- Keys of other types: text (with NULLs), numeric (1 and 1.00 are one group), date, bool,
-- bigint, float (NaN one group, -0 and 0 one group), several keys of mixed types, expressions.
SELECT check_grp('SELECT kt, count(*), sum(i4), max(f8) FROM ggrp GROUP BY kt ORDER BY kt');
SELECT check_grp('SELECT kn = 1 AS one, count(*), sum(i8), min(i2) FROM ggrp GROUP BY kn ORDER BY kn');
SELECT check_grp('SELECT kd, count(*), avg(i4), sum(f8) FROM ggrp GROUP BY kd ORDER BY kd');
SELECT check_grp('SELECT kb, k8, count(*), sum(i2), avg(f8) FROM ggrp GROUP BY kb, k8 ORDER BY kb, k8');
SELECT check_grp('SELECT kf + 0, count(*), sum(i4), min(f4) FROM ggrp GROUP BY kf ORDER BY kf');
SELECT check_grp('SELECT kt, kd, k4 % 7, count(*), sum(i4), avg(i2), max(f8) FROM ggrp GROUP BY kt, kd, k4 % 7 ORDER BY 1, 2, 3');
SELECT check_grp('SELECT lower(kt) || ''-'' || (k4 / 100), count(*), sum(i8) FROM ggrp GROUP BY lower(kt) || ''-'' || (k4 / 100) ORDER BY 1');
-- A key in an argument, in the WHERE clause and in HAVING; the same expression as key and argument.
SELECT check_grp('SELECT k4 % 10, sum(k4 % 10), count(*) FROM ggrp WHERE k4 % 10 > 3 GROUP BY k4 % 10 HAVING sum(k4 % 10) > 100 ORDER BY 1');
SELECT check_grp('SELECT k4 / 100 AS g, sum(i4 + k4) FROM ggrp GROUP BY g ORDER BY g');
-- A key that is not in the output.
SELECT check_grp('SELECT count(*), sum(i4) FROM ggrp GROUP BY k4 ORDER BY 1, 2');
-- HAVING, FILTER, WHERE, expressions over the results.
SELECT check_grp('SELECT k4 % 50 AS g, sum(i4) FILTER (WHERE i2 > 0), count(*) FILTER (WHERE f8 < 0), avg(i8) FILTER (WHERE id % 2 = 0), max(f8) FILTER (WHERE i4 IS NULL) FROM ggrp GROUP BY g ORDER BY g');
SELECT check_grp('SELECT k4, count(*) FROM ggrp GROUP BY k4 HAVING count(*) > 30 AND max(i2) > 0 ORDER BY k4');
SELECT check_grp('SELECT kt, sum(i4) + 1, avg(i2)::int, count(*) * 2, coalesce(max(i8), 0) FROM ggrp WHERE f8 > 0 AND kd > DATE ''2024-01-10'' GROUP BY kt ORDER BY kt');
SELECT check_grp('SELECT k4 FROM ggrp GROUP BY k4 HAVING sum(i4) > 0 ORDER BY k4');
-- Groups whose values are all NULL or filtered out: NULL results, count 0.
SELECT check_grp('SELECT k4 % 5, sum(i4) FILTER (WHERE false), avg(f8) FILTER (WHERE id < 0), count(i2) FILTER (WHERE false), min(i8) FILTER (WHERE k4 IS NULL) FROM ggrp GROUP BY k4 % 5 ORDER BY 1');
-- One group per row (30,000 groups), and one group for all rows.
SELECT check_grp('SELECT id, sum(i4), max(f8), count(*) FROM ggrp GROUP BY id');
SELECT check_grp('SELECT kd > DATE ''1900-01-01'', count(*), sum(i4), sum(i8), avg(f8) FROM ggrp GROUP BY 1 ORDER BY 1');
-- A table of fixed-width columns: rows without NULLs are read at fixed offsets, keys included.
CREATE TABLE ggrp_fixed AS SELECT i % 1000 AS k, (i % 7)::int8 AS k8, DATE '2024-01-01' + i % 10 AS d,
  i % 2 = 0 AS b, CASE WHEN i % 11 = 0 THEN NULL ELSE i END AS i4, i / 8.0::float8 AS f8
FROM generate_series(1, 50000) i;
ANALYZE ggrp_fixed;
SELECT check_grp('SELECT k, count(*), count(i4), sum(i4), avg(f8), min(i4), max(f8) FROM ggrp_fixed GROUP BY k');
SELECT check_grp('SELECT k8, d, b, count(*), sum(i4), sum(f8), avg(i4) FROM ggrp_fixed GROUP BY k8, d, b');
SELECT check_grp('SELECT d, k8, max(k), sum(k8) FROM ggrp_fixed GROUP BY d, k8');
-- Rows without NULLs are read in place past columns of varying width too: short and long text
-- headers, compressed and external values, a dropped column's bytes in older rows, and rows from
-- before a column was added (read through the slot).
CREATE TABLE ggrp_walk AS SELECT (i % 300)::int2 AS a,
  CASE WHEN i % 500 = 2 THEN (SELECT string_agg(md5((i * j)::text), '') FROM generate_series(1, 100) j)
    ELSE CASE i % 4 WHEN 0 THEN repeat('x', i % 7) WHEN 1 THEN repeat('y', 200 + i % 9)
      WHEN 2 THEN repeat(md5(i::text), 200) ELSE '' END END AS t,
  (i % 13)::numeric / 7 AS n, chr(65 + i % 5)::"char" AS c, TIMESTAMP '2024-01-01' + i * interval '1 minute' AS ts,
  i % 97 AS k, i / 16.0::float8 AS v, i::int8 * 1000003 AS i8
FROM generate_series(1, 20000) i;
ANALYZE ggrp_walk;
SELECT check_grp('SELECT k, count(*), sum(v), sum(i8), min(ts), max(a) FROM ggrp_walk GROUP BY k');
SELECT check_grp('SELECT c, sum(k), avg(v), max(ts) FROM ggrp_walk GROUP BY c');
SELECT check_grp('SELECT sum(v), sum(i8), min(ts), max(k), count(a), avg(k) FROM ggrp_walk');
ALTER TABLE ggrp_walk DROP COLUMN n;
INSERT INTO ggrp_walk SELECT i % 5, 'new', chr(70 + i % 3)::"char", TIMESTAMP '2025-01-01' + i * interval '1 hour', i % 11, i / 8.0, i
FROM generate_series(1, 3000) i;
SELECT check_grp('SELECT k, count(*), sum(v), sum(i8), min(ts), max(a) FROM ggrp_walk GROUP BY k');
ALTER TABLE ggrp_walk ADD COLUMN z int4 NOT NULL DEFAULT 5;
INSERT INTO ggrp_walk SELECT i % 5, 'newer', 'Z', TIMESTAMP '2026-01-01', i % 3, i / 4.0, i, i FROM generate_series(1, 2000) i;
ANALYZE ggrp_walk;
SELECT check_grp('SELECT k, count(*), sum(z), sum(v), max(i8) FROM ggrp_walk GROUP BY k');
SELECT check_grp('SELECT sum(z), sum(v), min(ts), max(k) FROM ggrp_walk');
-- One key of fixed width is looked up by value in a direct map around the first key seen; keys
-- outside it (far, negative, the ends of bigint), and keys in pages that hash_mem has no room
-- for, go to the hash table: the groups are the same.
CREATE TABLE ggrp_direct AS SELECT i,
  CASE i % 5 WHEN 0 THEN i * 1000003::int8 WHEN 1 THEN -i WHEN 2 THEN 9223372036854775807 - i % 3
    WHEN 3 THEN -9223372036854775808 + i % 3 ELSE i % 100 END AS k8,
  CASE WHEN i % 17 = 0 THEN NULL ELSE (i * 37 % 65536 - 32768)::int2 END AS k2,
  i * 7919 % 20000000 - 10000000 AS k4, (i % 50) * 100003 AS kw, i % 3 = 0 AS kb, i / 4.0::float8 AS f
FROM generate_series(1, 20000) i;
ANALYZE ggrp_direct;
SELECT check_grp('SELECT k8, count(*), sum(f), min(i) FROM ggrp_direct GROUP BY k8');
SELECT check_grp('SELECT k2, count(*), sum(f), max(i) FROM ggrp_direct GROUP BY k2');
SELECT check_grp('SELECT k4, count(*), sum(i) FROM ggrp_direct GROUP BY k4');
SELECT check_grp('SELECT kb, count(*), sum(i), avg(f) FROM ggrp_direct GROUP BY kb');
SET work_mem = '64kB';
SELECT check_grp('SELECT kw, count(*), sum(i), avg(f) FROM ggrp_direct GROUP BY kw');
RESET work_mem;
SET work_mem = '64MB';
-- Text keys stored compressed (expanded for the lookup, a row at a time).
CREATE TABLE ggrp_long AS SELECT repeat(chr(65 + i % 3), 3000) || (i % 5) AS t, i FROM generate_series(1, 3000) i;
ANALYZE ggrp_long;
SELECT check_grp('SELECT left(t, 2), length(t), count(*), sum(i) FROM ggrp_long GROUP BY t');
-- No rows: no groups.
CREATE TABLE ggrp_empty (LIKE ggrp);
SELECT check_grp('SELECT k4, sum(i4), count(*), avg(f8) FROM ggrp_empty GROUP BY k4');
-- Over the groups: ORDER BY an aggregate with LIMIT, a join, a subquery.
SELECT check_grp('SELECT k4, sum(i4) AS s FROM ggrp GROUP BY k4 ORDER BY s DESC NULLS LAST, k4 LIMIT 5');
SELECT check_grp('SELECT g.kt, g.c, o.c FROM (SELECT kt, count(*) c FROM ggrp GROUP BY kt) g JOIN (SELECT kt, count(*) c FROM ggrp WHERE id % 2 = 0 GROUP BY kt) o ON g.kt = o.kt ORDER BY 1');
SELECT check_grp('SELECT count(*), sum(s) FROM (SELECT k4, sum(i4) s FROM ggrp GROUP BY k4) g');

-- NaN and infinities per group; int8 sums past bigint; sum(int4) per group past int4.
CREATE TABLE ggrp_special (g int4, f4 float4, f8 float8, i4 int4, i8 int8);
INSERT INTO ggrp_special VALUES
  (1, 'NaN', 'NaN', 2147483647, 9223372036854775807), (1, 1, 1, 2147483647, 9223372036854775807),
  (2, 'Infinity', 'Infinity', -2147483648, -9223372036854775808), (2, 2, 2, -2147483648, -9223372036854775808),
  (3, 'Infinity', 'Infinity', 1, 1), (3, '-Infinity', '-Infinity', 2, 2),
  (4, '-Infinity', '-Infinity', NULL, NULL), (4, 'NaN', 'NaN', 3, 3),
  (5, '-0', '-0', 0, 0), (5, '0', '0', 0, 0),
  (6, 1e30, 1e150, 5, 5), (6, -1e30, -1e150, 5, 5), (6, 1.5, 0.015625, 5, 5);
INSERT INTO ggrp_special SELECT 7, 3e38, 1.7e308, 2147483647, 9223372036854775807 FROM generate_series(1, 1000);
ANALYZE ggrp_special;
-- (min and max of -0 and 0 are either, as in PostgreSQL, where it depends on the rows' order: + 0 shows both as 0)
SELECT check_grp('SELECT g, sum(f8), avg(f8), min(f8) + 0, max(f8) + 0, avg(f4), min(f4) + 0, max(f4) + 0, sum(i4), sum(i8), avg(i8) FROM ggrp_special WHERE g < 7 GROUP BY g ORDER BY g');
SELECT check_grp('SELECT g, sum(f4) FROM ggrp_special WHERE g < 7 GROUP BY g ORDER BY g',
  'SELECT g, CASE WHEN g IN (1, 3, 4) THEN ''NaN'' WHEN g = 2 THEN ''Infinity'' ELSE sum(f4::numeric)::float4 END FROM ggrp_special WHERE g < 7 GROUP BY g ORDER BY g');
SELECT check_grp('SELECT g, sum(i4), sum(i8), avg(i4), avg(i8), count(*) FROM ggrp_special GROUP BY g ORDER BY g');
-- Sums past the result type's range: PostgreSQL's errors.
SELECT g, sum(f8) FROM ggrp_special WHERE g = 7 GROUP BY g;
SELECT g, sum(f4) FROM ggrp_special WHERE g = 7 GROUP BY g;

-- Random queries: random aggregates, WHERE clauses and GROUP BY lists, GpuAgg on against off.
CREATE FUNCTION random_grp_queries(n int) RETURNS TABLE (q text, result text) LANGUAGE plpgsql AS $$
DECLARE
  keys text[] := ARRAY['k4', 'k8', 'kt', 'kn', 'kd', 'kb', 'k4 % 3', 'i2 % 4', 'kt || kb', 'id % 1000'];
  aggs text[] := ARRAY['count(*)', 'count(i2)', 'sum(i2)', 'sum(i4)', 'sum(i8)', 'avg(i2)', 'avg(i4)', 'avg(i8)',
    'min(i4)', 'max(i8)', 'sum(f8)', 'avg(f8)', 'min(f8)', 'max(f4)', 'avg(f4)', 'count(f4)',
    'sum(i4) FILTER (WHERE i2 > 0)', 'max(f8) FILTER (WHERE kb)', 'sum(i8 / 1000 + i2)'];
  wheres text[] := ARRAY['true', 'i2 > 0', 'f8 < 100', 'kt IS NOT NULL', 'kd < DATE ''2024-01-20''', 'id % 3 <> 0', 'i4 IS NULL'];
  k text[];
  a text[];
  query text;
BEGIN
  FOR i IN 1 .. n LOOP
    SELECT array_agg(x) INTO k FROM (SELECT x FROM unnest(keys) x ORDER BY random() LIMIT 1 + (random() * 2)::int) s;
    SELECT array_agg(x) INTO a FROM (SELECT x FROM unnest(aggs) x ORDER BY random() LIMIT 1 + (random() * 5)::int) s;
    query := format('SELECT %s, %s FROM ggrp WHERE %s GROUP BY %s',
      array_to_string(k, ', '), array_to_string(a, ', '), wheres[1 + (random() * 6)::int],
      array_to_string(k, ', '));
    q := query;
    result := check_grp(query);
    RETURN NEXT;
  END LOOP;
END $$;
SELECT count(*) AS random_queries, count(*) FILTER (WHERE result = 'ok') AS ok FROM random_grp_queries(60);
SELECT q, result FROM random_grp_queries(20) WHERE result <> 'ok';

-- What GpuAgg does not take with GROUP BY: PostgreSQL's plan, with the same results.
SELECT check_grp('SELECT k4, count(*) FROM ggrp GROUP BY ROLLUP (k4) ORDER BY 1', offload => false);
SELECT check_grp('SELECT id, kt, count(*) FROM ggrp GROUP BY id ORDER BY 1', offload => false);
SELECT check_grp('SELECT k4 + (random() > 2)::int, count(*) FROM ggrp GROUP BY 1 ORDER BY 1', offload => false);
SELECT check_grp('SELECT k4::bit(10), count(*) FROM ggrp GROUP BY 1 ORDER BY 1', offload => false);
-- Groups past hash_mem would spill (gpuagg_spill): an index on the key is cheaper here, unless
-- the device numbers the groups in its own memory (gpuagg_devgroups).
SET work_mem = '64kB';
SET gpuext.enable_device_scan = off;
SELECT NOT gpuagg_planned('SELECT id, sum(i4) FROM ggrp GROUP BY id') AS too_many_groups_for_hash_mem;
RESET gpuext.enable_device_scan;
SELECT gpuagg_planned('SELECT id, sum(i4) FROM ggrp GROUP BY id') = (SELECT gpu_kernels AND device_state <> 'unavailable' FROM gpuext_info()) AS groups_numbered_on_device;
SELECT gpuagg_planned('SELECT kt, sum(i4) FROM ggrp GROUP BY 1') = (SELECT gpu_kernels AND device_state <> 'unavailable' FROM gpuext_info()) AS few_groups_offloaded;
SET work_mem = '64MB';

-- Rescans and prepared statements.
SELECT check_grp('SELECT o.g, l.* FROM generate_series(1, 3) o(g) CROSS JOIN LATERAL (SELECT kt, count(*), sum(i4) FROM ggrp WHERE k4 % 3 <> o.g % 3 GROUP BY kt) l');
SET plan_cache_mode = force_generic_plan;
PREPARE gg(int8) AS SELECT k4 % 4, count(*), sum(i8) FROM ggrp WHERE k8 > $1 GROUP BY 1 ORDER BY 1;
EXECUTE gg(0);
EXECUTE gg(10000000000000);
SELECT gpuagg_planned('EXECUTE gg(5)') = (SELECT gpu_kernels AND device_state <> 'unavailable' FROM gpuext_info()) AS generic_plan_offloaded;
RESET plan_cache_mode;
SET gpuext.enable_agg = off;
SELECT k4 % 4, count(*), sum(i8) FROM ggrp WHERE k8 > 0 GROUP BY 1 ORDER BY 1;
SELECT k4 % 4, count(*), sum(i8) FROM ggrp WHERE k8 > 10000000000000 GROUP BY 1 ORDER BY 1;
RESET gpuext.enable_agg;

-- Device failures under auto: the run starts again on the CPU (a WARNING says so, hidden here).
SET gpuext.device = auto;
SET gpuext.min_gpu_elements = 0;
SET client_min_messages = error;
SELECT kind, check_grp('SELECT k4 % 100, sum(i4), avg(f8), max(i8), count(*) FROM ggrp GROUP BY 1 ORDER BY 1')
FROM unnest(ARRAY['', 'kernel:1', 'copy:1', 'alloc:1', 'sync:1', 'kernel:1:2', 'copy:1:3', 'alloc:1:2', 'any:100']) kind,
  LATERAL (SELECT set_config('gpuext.debug_fail_device_calls', kind, false)) s;
SET gpuext.debug_fail_device_calls = '';
RESET client_min_messages;
RESET gpuext.min_gpu_elements;

-- The plans, EXPLAIN ANALYZE, and a device failure under gpu: only where a device can be used.
\if :has_device
SET gpuext.device = gpu;
-- The lines of EXPLAIN (opts) q, with the numbers that vary between releases (rows=1.00 in 18) as N.
CREATE FUNCTION ggrp_explained(opts text, q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE format('EXPLAIN (%s) %s', opts, q) LOOP
    RETURN NEXT regexp_replace(line, '(rows=|loops=)[0-9.]+', '\1N', 'g');
  END LOOP;
END $$;
EXPLAIN (COSTS OFF) SELECT kt, k4 % 7, count(*), sum(i4), avg(f8) FROM ggrp WHERE kb GROUP BY kt, k4 % 7 HAVING count(*) > 1 ORDER BY 1, 2;
EXPLAIN (COSTS OFF, VERBOSE) SELECT k4 / 100 AS g, sum(i4 + k4), max(f8) FILTER (WHERE kb) FROM ggrp GROUP BY g;
SELECT ggrp_explained('ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF',
  'SELECT kt, sum(i4), count(*) FROM ggrp WHERE id <= 20000 GROUP BY kt HAVING sum(i4) <> 0');
SET gpuext.debug_fail_device_calls = 'kernel:1';
DO $$
BEGIN
  PERFORM k4, sum(i4) FROM ggrp GROUP BY k4;
  RAISE NOTICE 'no error';
EXCEPTION WHEN OTHERS THEN
  RAISE NOTICE 'device failure under gpu: SQLSTATE %', SQLSTATE;
END $$;
SET gpuext.debug_fail_device_calls = '';
SET gpuext.device = auto;
SET gpuext.min_gpu_elements = 0;
SET client_min_messages = error;
SET gpuext.debug_fail_device_calls = 'kernel:1';
SELECT ggrp_explained('ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF', 'SELECT k4 % 3, sum(i4) FROM ggrp GROUP BY 1');
SET gpuext.debug_fail_device_calls = '';
RESET client_min_messages;
RESET gpuext.min_gpu_elements;
DROP FUNCTION ggrp_explained(text, text);
\endif

DROP TABLE ggrp, ggrp_special, ggrp_empty, ggrp_fixed, ggrp_walk, ggrp_long, ggrp_direct;
DROP FUNCTION random_grp_queries(int), gpuagg_planned(text), check_grp(text, text, boolean);
