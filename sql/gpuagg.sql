-- Custom Scan (GpuAgg): count, sum, avg, min and max without GROUP BY over one table, offloaded
-- without changing the query.  Every result is checked against PostgreSQL's own plan run in the
-- same test (gpuext.enable_agg = off), float sums against the exactly rounded sum of the values as
-- numeric, and every check says whether GpuAgg was planned where it should be: in a build without
-- device code it never is, so the checks print the same there; the plans themselves are shown
-- only where there is device code.
SELECT gpu_kernels AND device_state <> 'unavailable' AS offloads FROM gpuext_info() \gset
SELECT device_state = 'ready' AS has_device FROM gpuext_info() \gset
LOAD 'gpuext';
SET gpuext.agg_min_rows = 0;
SET max_parallel_workers_per_gather = 0;
SELECT setseed(0.19);
CREATE TABLE gagg (id int4, i2 int2, i4 int4, i8 int8, f4 float4, f8 float8, t text, n numeric);
INSERT INTO gagg SELECT i,
  CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 65534 - 32767)::int2 END,
  CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 4e9 - 2e9)::int4 END,
  CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 1.8e19 - 9e18)::int8 END,
  CASE WHEN random() < 0.1 THEN NULL ELSE ((random() * 1998)::int - 999) / 8.0 END,
  CASE WHEN random() < 0.1 THEN NULL ELSE round(random() * 2e9 - 1e9) / 64 END,
  CASE WHEN random() < 0.1 THEN NULL ELSE 'r' || i END,
  i
FROM generate_series(1, 30000) i;
-- Values a sequential float sum loses: the exact sum keeps the small ones beside 1e17.
INSERT INTO gagg (id, f8) VALUES (30001, 1e17), (30002, -1e17), (30003, 0.015625), (30004, 1e17), (30005, -1e17);
ANALYZE gagg;

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
-- device code and offload says so; else both rows.
CREATE FUNCTION check_agg(q text, ref text DEFAULT NULL, offload boolean DEFAULT true) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  planned boolean := gpuagg_planned(q);
  expect_planned boolean := offload AND (SELECT gpu_kernels AND device_state <> 'unavailable' FROM gpuext_info());
  got text;
  want text;
BEGIN
  EXECUTE format('SELECT string_agg(row(s.*)::text, '';'') FROM (%s) s', q) INTO got;
  PERFORM set_config('gpuext.enable_agg', 'off', true);
  EXECUTE format('SELECT string_agg(row(s.*)::text, '';'') FROM (%s) s', CASE WHEN expect_planned THEN coalesce(ref, q) ELSE q END) INTO want;
  PERFORM set_config('gpuext.enable_agg', 'on', true);
  IF got IS NOT DISTINCT FROM want AND planned = expect_planned THEN
    RETURN 'ok';
  END IF;
  RETURN format('got %s, want %s, GpuAgg planned: %s', got, want, planned);
END $$;

-- Each type, each aggregate, with NULLs.
SELECT check_agg('SELECT count(*), count(i2), count(i4), count(i8), count(f4), count(f8), count(t), count(n) FROM gagg');
SELECT check_agg('SELECT sum(i2), sum(i4), sum(i8), avg(i2), avg(i4), avg(i8) FROM gagg');
SELECT check_agg('SELECT min(i2), max(i2), min(i4), max(i4), min(i8), max(i8), min(f4), max(f4), min(f8), max(f8) FROM gagg');
-- Float sums and averages are exact: the sum of the values as numeric, rounded once.
SELECT check_agg('SELECT sum(f8), avg(f8), sum(f4), avg(f4) FROM gagg',
  'SELECT sum(f8::numeric)::float8, sum(f8::numeric)::float8 / count(f8), sum(f4::numeric)::float4, sum(f4::numeric)::float8 / count(f4) FROM gagg');
SELECT check_agg('SELECT sum(f8) FROM gagg WHERE id > 30000', 'SELECT 0.015625::float8');
-- WHERE, FILTER, expressions in the arguments and over the results.
SELECT check_agg('SELECT count(*), sum(i4), avg(i2), max(f8) FROM gagg WHERE id % 3 = 0 AND t IS NOT NULL');
SELECT check_agg('SELECT sum(i4) FILTER (WHERE i2 > 0), count(*) FILTER (WHERE f8 < 0), avg(i8) FILTER (WHERE id % 2 = 0), max(f8) FILTER (WHERE i4 IS NULL), min(i2) FILTER (WHERE i2 > 0), count(*) FROM gagg');
SELECT check_agg('SELECT sum(i4::int8 * 2 + i2), avg(i8 / 3), max(f4 * 2), sum(abs(i2)), count(i4 % 7), min(length(t)) FROM gagg');
SELECT check_agg('SELECT sum(i4) + 1, avg(i2)::int, count(*) * 2, coalesce(max(i8), 0), sum(i2) > 0 FROM gagg WHERE f8 > 0');
SELECT check_agg('SELECT sum(i2), sum(i2), avg(i2), count(*) FROM gagg WHERE id < 1000');
-- A WHERE that no row passes, an empty table, a table of NULLs.
SELECT check_agg('SELECT count(*), count(i4), sum(i4), avg(i8), min(f8), max(f4), sum(f8) FROM gagg WHERE id < 0');
CREATE TABLE gagg_empty (LIKE gagg);
ANALYZE gagg_empty;
SELECT check_agg('SELECT count(*), count(i4), sum(i2), sum(i8), avg(i4), min(f8), max(f4), sum(f4), avg(f8) FROM gagg_empty');
CREATE TABLE gagg_nulls AS SELECT * FROM gagg WHERE false;
INSERT INTO gagg_nulls (id) SELECT generate_series(1, 1000);
ANALYZE gagg_nulls;
SELECT check_agg('SELECT count(*), count(i4), sum(i2), sum(i8), avg(i4), min(f8), max(f4), sum(f4), avg(f8) FROM gagg_nulls');
-- NaN and infinities decide float results as in PostgreSQL.
CREATE TABLE gagg_special (grp int4, f4 float4, f8 float8);
INSERT INTO gagg_special VALUES (1, 1.5, 1.5), (1, 'NaN', 'NaN'), (1, -2, -2),
  (2, 'Infinity', 'Infinity'), (2, 3, 3),
  (3, 'Infinity', 'Infinity'), (3, '-Infinity', '-Infinity'), (3, 1, 1),
  (4, '-Infinity', '-Infinity'), (4, 0.25, 0.25), (4, NULL, NULL);
ANALYZE gagg_special;
SELECT grp, check_agg(format('SELECT sum(f4), avg(f4), min(f4), max(f4), sum(f8), avg(f8), min(f8), max(f8) FROM gagg_special WHERE grp = %s', grp))
FROM generate_series(1, 4) grp;
SELECT check_agg('SELECT sum(f8), min(f8), max(f8), count(f8) FROM gagg_special');
-- Integers at their limits: sums of bigint are exact numerics.
CREATE TABLE gagg_limits (i2 int2, i4 int4, i8 int8);
INSERT INTO gagg_limits SELECT 32767, 2147483647, 9223372036854775807 FROM generate_series(1, 3000);
INSERT INTO gagg_limits SELECT -32768, -2147483648, -9223372036854775808 FROM generate_series(1, 1000);
ANALYZE gagg_limits;
SELECT check_agg('SELECT sum(i2), sum(i4), sum(i8), avg(i2), avg(i4), avg(i8), min(i8), max(i8) FROM gagg_limits');
SELECT check_agg('SELECT sum(i8) FROM gagg_limits', 'SELECT 2000 * 9223372036854775807::numeric - 1000');
-- Rows read at fixed offsets and rows deformed: NULLs, a column of varying width first, a column
-- added after some rows were written (their tuples are shorter).
CREATE TABLE gagg_alter (a int4, f8 float8);
INSERT INTO gagg_alter SELECT i, i / 4.0 FROM generate_series(1, 5000) i;
ALTER TABLE gagg_alter ADD COLUMN b int8 DEFAULT 7;
INSERT INTO gagg_alter SELECT i, NULL, i FROM generate_series(1, 5000) i;
INSERT INTO gagg_alter SELECT i, i / 2.0, -i FROM generate_series(1, 5000) i;
CREATE TABLE gagg_text (t text, a int4);
INSERT INTO gagg_text SELECT repeat('x', i % 20), i FROM generate_series(1, 5000) i;
ANALYZE gagg_alter, gagg_text;
SELECT check_agg('SELECT sum(a), sum(b), count(b), max(b), sum(f8), count(*) FROM gagg_alter');
SELECT check_agg('SELECT sum(a), count(t), count(*) FROM gagg_text');
-- Rescans: in a correlated subquery, and on the inner side of a nested loop.
SELECT check_agg('SELECT g, (SELECT sum(i4) FROM gagg WHERE id <= g * 1000) AS s FROM generate_series(1, 5) g');
-- HAVING without GROUP BY: one row or none.
SELECT check_agg('SELECT sum(i4), count(*) FROM gagg HAVING count(*) > 0');
SELECT check_agg('SELECT sum(i4) FROM gagg HAVING count(*) < 0');
-- A FILTER that is constant: false counts nothing.
SELECT check_agg('SELECT sum(i4) FILTER (WHERE false), count(*) FILTER (WHERE false), count(i2) FILTER (WHERE NULL), sum(i2) FILTER (WHERE true) FROM gagg');
SELECT check_agg('SELECT o.g, l.* FROM generate_series(1, 4) o(g) CROSS JOIN LATERAL (SELECT count(*), sum(i8), max(f8) FROM gagg WHERE i2 % 4 = o.g % 4) l');
-- A correlated subquery in the WHERE clause, itself a GpuAgg run again for each row.
SELECT check_agg('SELECT count(*), sum(i2) FROM gagg a WHERE i2 > (SELECT max(f8) FROM gagg_special s WHERE s.grp = a.id % 5) * 1000');
-- Prepared statements, generic plans included.
SET gpuext.enable_agg = off;
SELECT row(sum(i4), count(*), avg(i8))::text AS ref5 FROM gagg WHERE id > 5 \gset
SELECT row(sum(i4), count(*), avg(i8))::text AS ref20000 FROM gagg WHERE id > 20000 \gset
RESET gpuext.enable_agg;
SET plan_cache_mode = force_generic_plan;
PREPARE gp(int, text) AS SELECT row(sum(i4), count(*), avg(i8))::text = $2 FROM gagg WHERE id > $1;
EXECUTE gp(5, :'ref5');
EXECUTE gp(20000, :'ref20000');
SELECT gpuagg_planned('EXECUTE gp(5, '''')') = :'offloads'::boolean AS generic_plan_offloaded;
RESET plan_cache_mode;
CREATE FUNCTION gagg_above(x int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  r text;
BEGIN
  SELECT row(sum(i4), count(*), avg(i8))::text INTO r FROM gagg WHERE id > x;
  RETURN r;
END $$;
SELECT gagg_above(5) = :'ref5', gagg_above(20000) = :'ref20000', gagg_above(5) = :'ref5';

-- What GpuAgg does not take: PostgreSQL's plan, with the same results.
SELECT check_agg('SELECT count(DISTINCT i2) FROM gagg', offload => false);
SELECT check_agg('SELECT sum(i4 ORDER BY id) FROM gagg', offload => false);
SELECT check_agg('SELECT min(t) FROM gagg', offload => false);
SELECT check_agg('SELECT sum(n) FROM gagg');
SELECT check_agg('SELECT sum(a.i4) FROM gagg a JOIN gagg_limits b ON a.i4 = b.i4', offload => false);
SELECT check_agg('SELECT sum(i4), string_agg(t, '','' ORDER BY id) FROM gagg', offload => false);
SELECT check_agg('SELECT sum(i4), sum(sum(i2)) OVER () FROM gagg', offload => false);
SELECT NOT gpuagg_planned('SELECT sum(i4 * (random() > 2)::int) FROM gagg') AS volatile_argument_stays;
SET gpuext.enable_agg = off;
SELECT NOT gpuagg_planned('SELECT sum(i4) FROM gagg') AS enable_agg_off;
RESET gpuext.enable_agg;
SET gpuext.agg_min_rows = 100000;
SELECT NOT gpuagg_planned('SELECT sum(i4) FROM gagg') AS below_agg_min_rows;
SET gpuext.agg_min_rows = 0;
SET gpuext.device = cpu;
SELECT NOT gpuagg_planned('SELECT sum(i4) FROM gagg') AS device_cpu;
RESET gpuext.device;

-- Device failures under auto: the answer is finished on the CPU (a WARNING says so, hidden here).
CREATE TABLE gagg_big AS SELECT i AS id, (i::int8 * 7919 % 100003 - 50000)::int4 AS i4, (i % 1001 - 500) / 16.0::float8 AS f8
FROM generate_series(1, 1200000) i;
ANALYZE gagg_big;
SET gpuext.enable_agg = off;
CREATE TABLE gagg_big_ref AS SELECT sum(i4) AS s, avg(i4) AS a, min(i4) AS mn, max(f8) AS mx, sum(f8::numeric)::float8 AS fs, count(*) AS c FROM gagg_big;
RESET gpuext.enable_agg;
SET gpuext.device = auto;
SET gpuext.min_gpu_elements = 0;
SET client_min_messages = error;
SELECT kind, check_agg('SELECT sum(i4), avg(i4), min(i4), max(f8), sum(f8), count(*) FROM gagg_big',
  'SELECT * FROM gagg_big_ref')
FROM unnest(ARRAY['', 'kernel:1', 'copy:1', 'alloc:1', 'sync:1', 'kernel:1:1', 'copy:1:2', 'sync:1:3', 'any:100']) kind,
  LATERAL (SELECT set_config('gpuext.debug_fail_device_calls', kind, false)) s;
SET gpuext.debug_fail_device_calls = '';
RESET client_min_messages;
-- Under auto, batches below gpuext.min_gpu_elements are reduced on the CPU into the same accumulators.
SET gpuext.min_gpu_elements = 2000000;
SELECT check_agg('SELECT sum(i4), avg(i4), min(i4), max(f8), sum(f8), count(*) FROM gagg_big', 'SELECT * FROM gagg_big_ref');
RESET gpuext.min_gpu_elements;
-- The scan serves interrupts: a statement timeout ends it.
SET statement_timeout = '10ms';
SELECT sum(i4 + id), max(f8 * 2) FROM gagg_big WHERE id % 2 = 0 OR f8 > 0;
RESET statement_timeout;

-- The plans, EXPLAIN ANALYZE, and a device failure under gpu: only where a device can be used.
\if :has_device
SET gpuext.device = gpu;
-- The lines of EXPLAIN (opts) q, with the numbers that vary between releases (rows=1.00 in 18) as N.
CREATE FUNCTION gagg_explained(opts text, q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE format('EXPLAIN (%s) %s', opts, q) LOOP
    RETURN NEXT regexp_replace(line, '(rows=|loops=)[0-9.]+', '\1N', 'g');
  END LOOP;
END $$;
-- EXPLAIN (FORMAT JSON) q's top node, without the keys that vary between releases.
CREATE FUNCTION gagg_explained_json(opts text, q text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  plan jsonb;
BEGIN
  EXECUTE format('EXPLAIN (FORMAT JSON, %s) %s', opts, q) INTO plan;
  RETURN (plan->0->'Plan') - ARRAY['Disabled', 'Actual Rows', 'Actual Loops'];
END $$;
EXPLAIN (COSTS OFF) SELECT count(*), sum(i4), avg(i8), min(f4), max(f8), count(t) FROM gagg WHERE id % 3 = 0;
EXPLAIN (COSTS OFF, VERBOSE) SELECT sum(i4) + 1, avg(i2)::int, count(*) FILTER (WHERE f8 < 0) FROM gagg WHERE t IS NOT NULL;
EXPLAIN (COSTS OFF) SELECT o.g, l.* FROM generate_series(1, 4) o(g) CROSS JOIN LATERAL (SELECT count(*), sum(i8) FROM gagg WHERE i2 % 4 = o.g) l;
SELECT gagg_explained('ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF',
  'SELECT sum(i4), count(*) FILTER (WHERE f8 < 0) FROM gagg WHERE id <= 20000');
SELECT jsonb_pretty(gagg_explained_json('ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF',
  'SELECT sum(i4), max(f8) FROM gagg WHERE id <= 20000'));
-- With TIMING, the time of the scan and of the device calls.
SELECT line ~ '^ *Stage Timing: Scan [0-9.]+ ms, Device [0-9.]+ ms$' AS stage_timing
FROM gagg_explained('ANALYZE, COSTS OFF, SUMMARY OFF, BUFFERS OFF', 'SELECT sum(i4) FROM gagg') line
WHERE line LIKE '%Stage Timing%';
SET gpuext.device = auto;
SET gpuext.min_gpu_elements = 0;
SET client_min_messages = error;
SET gpuext.debug_fail_device_calls = 'kernel:1';
SELECT gagg_explained('ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF', 'SELECT sum(i4) FROM gagg');
RESET client_min_messages;
SET gpuext.device = gpu;
SET gpuext.debug_fail_device_calls = 'kernel:1';
DO $$
BEGIN
  PERFORM sum(i4) FROM gagg;
  RAISE NOTICE 'no error';
EXCEPTION WHEN OTHERS THEN
  RAISE NOTICE 'device failure under gpu: SQLSTATE %', SQLSTATE;
END $$;
SET gpuext.debug_fail_device_calls = '';
DROP FUNCTION gagg_explained(text, text), gagg_explained_json(text, text);
\endif

DROP TABLE gagg_alter, gagg_text, gagg, gagg_empty, gagg_nulls, gagg_special, gagg_limits, gagg_big, gagg_big_ref;
DROP FUNCTION gpuagg_planned(text), check_agg(text, text, boolean), gagg_above(int);
