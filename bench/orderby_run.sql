-- One configuration of the timing (included by orderby.sql for each): :config, work_mem = :work_mem
-- on both sides, gpuext.sort_work_mem = -1 (GpuSort's budget is that same work_mem).
SELECT set_config('orderby_bench.config', :'config', false), set_config('orderby_bench.config_ord', :'config_ord', false) \g /dev/null
SET work_mem = :'work_mem';
\if :have_node
SET gpuext.sort_work_mem = -1;
\endif
DELETE FROM orderby_results WHERE config = :'config';
\echo == configuration :config: work_mem = :work_mem on both sides, gpuext.sort_work_mem = -1 (follows work_mem), max_parallel_workers_per_gather = 0
\echo == median of :runs runs after one warm-up per side, sides alternating
\if :have_node
\echo == on: gpuext.enable_sort = on, gpuext.device = :device; off: gpuext.enable_sort = off (PostgreSQL Sort)
\else
\echo == on and off: the PostgreSQL Sort (no GpuSort node)
\endif
SELECT pg_temp.bench(1, 'int4', :rows, 'SELECT a FROM t ORDER BY a', :runs) \g /dev/null
SELECT pg_temp.bench(2, 'int8', :rows, 'SELECT b FROM t ORDER BY b', :runs) \g /dev/null
SELECT pg_temp.bench(3, 'float8', :rows, 'SELECT c FROM t ORDER BY c', :runs) \g /dev/null
SELECT pg_temp.bench(4, 'two_keys', :rows, 'SELECT d, c FROM t ORDER BY d, c DESC', :runs) \g /dev/null
SELECT pg_temp.bench(5, 'whole_row', :rows, 'SELECT * FROM t ORDER BY c', :runs) \g /dev/null
SELECT pg_temp.bench(6, 'whole_row_limit100', :rows, 'SELECT * FROM t ORDER BY c LIMIT 100', :runs) \g /dev/null
SELECT pg_temp.bench(7, 'small_whole_row', 1000, 'SELECT * FROM small ORDER BY c', :runs) \g /dev/null

-- What a client sees: the whole-row query sent to psql by COPY, round 0 a warm-up per side.
CREATE TEMP TABLE IF NOT EXISTS copy_times (round int, on_side bool, ms float8);
TRUNCATE copy_times;
\set copy_round 0
\ir orderby_copy.sql
SELECT pg_temp.side(true) \g /dev/null
SELECT pg_temp.record(8, 'copy_whole_row', 'copy', :rows, 'COPY (SELECT * FROM t ORDER BY c) TO STDOUT',
                      (SELECT array_agg(ms) FROM copy_times WHERE on_side AND round > 0),
                      (SELECT array_agg(ms) FROM copy_times WHERE NOT on_side AND round > 0),
                      pg_temp.uses_gpusort('SELECT * FROM t ORDER BY c')) \g /dev/null

\echo == results, :config (ms; speedup = off_ms / on_ms; gpusort: the on-side plan holds Custom Scan (GpuSort))
SELECT "case", timing, rows, on_ms, off_ms, speedup, gpusort, query FROM orderby_results
WHERE config = :'config' ORDER BY ord;

\echo == on-side plans, with per-stage times (EXPLAIN ANALYZE timing adds two clock reads per emitted row)
SELECT pg_temp.side(true) \g /dev/null
EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) SELECT a FROM t ORDER BY a;
EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) SELECT * FROM t ORDER BY c;
\echo == the scan alone
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT * FROM t;
