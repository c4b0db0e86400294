-- The gpuext demo (test/demo.sh runs it on a throwaway server with gpuext preloaded).
-- What it shows: which GPU runs the work, or that the CPU does and why; EXPLAIN of an ORDER BY;
-- the same ORDER BY timed with GpuSort on and off and its answer compared; an exact float sum
-- beside PostgreSQL's; gpu_sort of an array with NULL, NaN and -0; TPC-H Q1 with GpuAgg beside
-- PostgreSQL's own plan.
\set ON_ERROR_STOP 1
\set QUIET on
\pset footer off
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpuext;

\echo
\echo '== 1. Where gpuext runs'
SELECT gpu_kernels, device_state, coalesce(device_name, state_detail) AS device,
       compute_capability, driver_version, round(open_time_ms::numeric, 1) AS open_ms
FROM gpuext_info();
SELECT device_state = 'ready' AS have_gpu, coalesce(state_detail, '') AS why,
       current_setting('shared_preload_libraries') ~ 'gpuext' AS preloaded
FROM gpuext_info() \gset
\if :have_gpu
\echo 'A GPU is ready: ORDER BY, the aggregates and gpu_sort run on it (device_state ready).'
\echo 'open_ms is what opening it cost this backend, once: the CUDA context.'
\else
\echo 'No GPU can be used here:' :why
\echo 'gpuext runs everything on the CPU instead, with the same results.'
\endif
\if :preloaded
\else
\echo 'gpuext is not in shared_preload_libraries: LOAD it so that its planner hook is in place.'
LOAD 'gpuext';
\endif

\echo
\echo '== 2. A table of 2 million rows: id, i4 int4, f8 float8 (distinct values), x float8 (whole numbers below 1e14)'
DROP TABLE IF EXISTS demo_t;
CREATE TABLE demo_t AS
SELECT i::int8 AS id,
       (hashint4(i) % 1000000)::int4 AS i4,
       (((i::int8 * 7919) % 2000003) - 1000001) / 8.0::float8 AS f8,
       floor(random() * 1e14)::float8 AS x
FROM generate_series(1, 2000000) i;
VACUUM ANALYZE demo_t;
SELECT count(*) AS rows, pg_size_pretty(pg_table_size('demo_t')) AS size FROM demo_t;

\echo
\echo '== 3. The plan of an ORDER BY (work_mem = 1GB for the whole demo, so that neither side spills to disk)'
SET work_mem = '1GB';
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF) SELECT * FROM demo_t ORDER BY f8;
CREATE FUNCTION pg_temp.plan_has(q text, node text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF position(node IN line) > 0 THEN RETURN true; END IF;
  END LOOP;
  RETURN false;
END $$;
SELECT pg_temp.plan_has('SELECT * FROM demo_t ORDER BY f8', 'GpuSort') AS gpusort \gset
SELECT :'gpusort'::bool AND :'have_gpu'::bool AS gpusort_on_gpu, :'gpusort'::bool AND NOT :'have_gpu'::bool AS gpusort_on_cpu \gset
\if :gpusort_on_gpu
\echo 'Custom Scan (GpuSort) has replaced PostgreSQL''s Sort: the rows are sorted on the GPU.'
\echo 'With ANALYZE, EXPLAIN says how the sort ran (Sort Method: gpu radix ...):'
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM demo_t ORDER BY f8;
\elif :gpusort_on_cpu
\echo 'Custom Scan (GpuSort) is in the plan, but with no GPU it runs PostgreSQL''s Sort inside itself, at the'
\echo 'same cost.  EXPLAIN ANALYZE says so (GPU Fallback: why):'
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT * FROM demo_t ORDER BY f8;
\elif :have_gpu
\echo 'The plan keeps PostgreSQL''s Sort (gpuext.enable_sort is off, or the estimate is below gpuext.sort_min_rows).'
\else
\echo 'The plan keeps PostgreSQL''s Sort: with no usable GPU, gpuext leaves ORDER BY to PostgreSQL,'
\echo 'so the two timings below are the same Sort.'
\endif

\echo
\echo '== 4. The same ORDER BY, GpuSort on and off (work_mem = 1GB on both sides)'
SELECT count(*) FROM demo_t \g /dev/null
CREATE FUNCTION pg_temp.exec_ms(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
  plan json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON, COSTS OFF, FORMAT JSON) ' || q INTO plan;
  RETURN (plan -> 0 ->> 'Execution Time')::float8;
END $$;
-- Median of three runs a side after a warm-up, sides alternating.
CREATE FUNCTION pg_temp.on_off(q text, OUT on_ms numeric, OUT off_ms numeric, OUT speedup numeric)
LANGUAGE plpgsql AS $$
DECLARE
  t_on float8[] := '{}';
  t_off float8[] := '{}';
BEGIN
  FOR i IN 0 .. 3 LOOP
    SET LOCAL gpuext.enable_sort = on;
    IF i > 0 THEN t_on := t_on || pg_temp.exec_ms(q); ELSE PERFORM pg_temp.exec_ms(q); END IF;
    SET LOCAL gpuext.enable_sort = off;
    IF i > 0 THEN t_off := t_off || pg_temp.exec_ms(q); ELSE PERFORM pg_temp.exec_ms(q); END IF;
  END LOOP;
  on_ms := round((SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY v) FROM unnest(t_on) v)::numeric, 1);
  off_ms := round((SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY v) FROM unnest(t_off) v)::numeric, 1);
  speedup := round(off_ms / nullif(on_ms, 0), 2);
END $$;
\echo 'The query alone (EXPLAIN ANALYZE execution time: every row produced, none sent), median of 3, ms:'
SELECT * FROM pg_temp.on_off('SELECT * FROM demo_t ORDER BY f8');
\echo 'What a client sees (\\copy ... to ''/dev/null'': every row converted to text and sent to psql):'
SET gpuext.enable_sort = on;
\echo 'gpuext.enable_sort = on:'
\timing on
\copy (SELECT * FROM demo_t ORDER BY f8) to '/dev/null'
\timing off
SET gpuext.enable_sort = off;
\echo 'gpuext.enable_sort = off:'
\timing on
\copy (SELECT * FROM demo_t ORDER BY f8) to '/dev/null'
\timing off
\echo 'The same answer, row for row (md5 of every row in the order the query returns them):'
SET gpuext.enable_sort = on;
SELECT md5(string_agg(s::text, ';')) AS gpusort_on FROM (SELECT * FROM demo_t ORDER BY f8) s \gset
SET gpuext.enable_sort = off;
SELECT md5(string_agg(s::text, ';')) AS gpusort_off FROM (SELECT * FROM demo_t ORDER BY f8) s \gset
RESET gpuext.enable_sort;
SELECT :'gpusort_on' AS gpusort_on, :'gpusort_off' AS gpusort_off, :'gpusort_on' = :'gpusort_off' AS identical;

\echo
\echo '== 5. An exact float sum beside PostgreSQL''s'
\echo 'gpu_sum adds every value exactly and rounds once; sum(x::numeric)::float8 is the exact sum rounded'
\echo '(x holds whole numbers below 1e14, which numeric converts exactly); PostgreSQL''s sum(x) rounds at every row.'
SELECT gpu_sum(x), sum(x), sum(x::numeric)::float8 AS exactly_rounded,
       gpu_sum(x) = sum(x::numeric)::float8 AS gpu_sum_exact,
       sum(x) = sum(x::numeric)::float8 AS sum_exact
FROM demo_t;
SELECT gpu_sum(v) AS gpu_sum, sum(v) AS sum FROM unnest('{1e100,1,-1e100}'::float8[]) v;

\echo
\echo '== 6. gpu_sort of an array: the order of ORDER BY, NULL, NaN, infinities and -0 included'
SELECT gpu_sort(a) AS gpu_sort, gpu_sort(a) = (SELECT array_agg(v ORDER BY v) FROM unnest(a) v) AS same_as_order_by,
       gpu_sort(a, descending => true) AS descending
FROM (VALUES ('{3,NaN,-Infinity,-0,NULL,1,Infinity}'::float8[])) v(a);

DROP TABLE demo_t;

\echo
\echo '== 7. TPC-H Q1 as the specification writes it, over 1 million lineitem rows (bench/tpch_data.sql)'
\set rows 1000000
\ir ../bench/tpch_data.sql
\set QUIET on
SET max_parallel_workers_per_gather = 0;
\set q1_select 'select l_returnflag, l_linestatus, sum(l_quantity) as sum_qty, sum(l_extendedprice) as sum_base_price, sum(l_extendedprice * (1 - l_discount)) as sum_disc_price, sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge, avg(l_quantity) as avg_qty, avg(l_extendedprice) as avg_price, avg(l_discount) as avg_disc, count(*) as count_order from '
\set q1_rest ' where l_shipdate <= date ''1998-12-01'' - interval ''90'' day group by l_returnflag, l_linestatus order by l_returnflag, l_linestatus'
\set q1 :q1_select lineitem :q1_rest
\echo 'With gpuext: Custom Scan (GpuAgg) reads the table and computes every aggregate (Device Scan:'
\echo 'the pages decoded, filtered and grouped on the GPU, where the query allows it):'
EXPLAIN (ANALYZE, COSTS OFF) :q1;
\echo 'PostgreSQL''s own plan (gpuext.enable_agg = off):'
SET gpuext.enable_agg = off;
EXPLAIN (ANALYZE, COSTS OFF) :q1;
RESET gpuext.enable_agg;
\echo 'The same answer (numeric(15,2) columns, as the specification has them):'
SELECT md5(string_agg(s::text, ';')) AS gpuagg FROM (:q1) s \gset
SET gpuext.enable_agg = off;
SELECT md5(string_agg(s::text, ';')) AS postgres FROM (:q1) s \gset
RESET gpuext.enable_agg;
SELECT :'gpuagg' AS gpuagg, :'postgres' AS postgres, :'gpuagg' = :'postgres' AS identical;
\echo 'The same query over double precision columns (lineitem_f8), with GpuAgg:'
\set q1 :q1_select lineitem_f8 :q1_rest
EXPLAIN (ANALYZE, COSTS OFF) :q1;
RESET search_path;
DROP SCHEMA gpuext_tpch CASCADE;
