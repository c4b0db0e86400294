-- One configuration of the timing (included twice by orderby.sql): work_mem = :'work_mem'.
SET work_mem = :'work_mem';
\echo == timing: median of :runs runs after one warm-up per side; work_mem = :work_mem, gpuext.sort_work_mem = 16GB, max_parallel_workers_per_gather = 0
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

\echo == results (ms; speedup = off_ms / on_ms; gpusort: the on-side plan holds Custom Scan (GpuSort))
SELECT "case", rows, on_ms, off_ms, speedup, gpusort, query FROM orderby_results
WHERE work_mem = current_setting('work_mem') ORDER BY ord;


\if :show_plan
\echo == on-side plans, with per-stage times (EXPLAIN ANALYZE timing adds two clock reads per emitted row)
SELECT pg_temp.side(true) \g /dev/null
EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) SELECT a FROM t ORDER BY a;
EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) SELECT d, c FROM t ORDER BY d, c DESC;
EXPLAIN (ANALYZE, VERBOSE, COSTS OFF) SELECT * FROM t ORDER BY c;
\echo == the scan alone
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT * FROM t;
EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) SELECT d, c FROM t;
\endif
