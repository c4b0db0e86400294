-- A LIMIT's bound reaches GpuSort wherever PostgreSQL's executor would pass it to a Sort
-- (ExecSetTupleBound): directly below the Limit, through Gather Merge to every worker's sort,
-- through a SubqueryScan without a qual, Append, MergeAppend and a projecting Result, with OFFSET
-- added, and from the parameters of a generic plan; never through a SubqueryScan with a qual,
-- Unique, or a Limit WITH TIES.  Plans show "Bound: N" on GpuSort, and EXPLAIN ANALYZE PostgreSQL's
-- top-N heapsort run inside it; every result is compared with PostgreSQL's Sort
-- (gpuext.enable_sort = off).  A build without device code plans no GpuSort: this file says so
-- and stops there.
SELECT gpu_kernels AND device_state <> 'unavailable' AS offloads FROM gpuext_info() \gset
\if :offloads
\else
\echo 'gpusort_bound: skipped: a build without device code plans no GpuSort (PostgreSQL''s Sort stays)'
\quit
\endif
LOAD 'gpuext';
SET gpuext.device = auto;
SET gpuext.sort_min_rows = 0;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE gb (id int4, a int4, c float8, t text);
INSERT INTO gb SELECT i, (i * 7919) % 1000, (i % 7)::float8, 'row ' || i FROM generate_series(1, 30000) i;
ANALYZE gb;
-- PostgreSQL's own case (subselect.sql, explain_sq_limit).
CREATE TABLE sq_limit (pk int PRIMARY KEY, c1 int, c2 int);
INSERT INTO sq_limit VALUES (1, 1, 1), (2, 2, 2), (3, 3, 3), (4, 4, 4), (5, 1, 1), (6, 2, 2), (7, 3, 3), (8, 4, 4);
ANALYZE sq_limit;
-- Partitions, one with an index in the sort's order: the plan merges it with the other's sort.
CREATE TABLE gp (id int4, a int4, t text) PARTITION BY RANGE (id);
CREATE TABLE gp1 PARTITION OF gp FOR VALUES FROM (0) TO (15000);
CREATE TABLE gp2 PARTITION OF gp FOR VALUES FROM (15000) TO (30001);
INSERT INTO gp SELECT id, a, t FROM gb;
CREATE INDEX ON gp1 (a, id);
ANALYZE gp;

-- The lines of EXPLAIN (opts) q, numbers that vary from run to run as N; the workers' own lines
-- and their count left out (how the rows split between processes varies).
CREATE FUNCTION bound_explained(opts text, q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE format('EXPLAIN (%s) %s', opts, q) LOOP
    CONTINUE WHEN line ~ '^ *(Worker [0-9]+:|Workers Launched:)';
    line := regexp_replace(line, '(rows=|loops=)[0-9.]+', '\1N', 'g');
    line := regexp_replace(line, '[0-9]+kB', 'NkB', 'g');
    RETURN NEXT line;
  END LOOP;
END $$;
-- Whether any process's sort in the plan of q (the workers' included) ran as a top-N heap.
CREATE FUNCTION bound_top_n(q text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) ' || q LOOP
    IF line ~ 'Sort Method: top-N heapsort' THEN
      RETURN true;
    END IF;
  END LOOP;
  RETURN false;
END $$;
-- Whether q gives the same rows in the same order with GpuSort as with PostgreSQL's Sort.
CREATE FUNCTION bound_same(q text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE
  gpu text[];
  cpu text[];
BEGIN
  EXECUTE format('SELECT array_agg(r::text) FROM (%s) r', q) INTO gpu;
  SET LOCAL gpuext.enable_sort = off;
  EXECUTE format('SELECT array_agg(r::text) FROM (%s) r', q) INTO cpu;
  SET LOCAL gpuext.enable_sort = on;
  RETURN gpu IS NOT DISTINCT FROM cpu;
END $$;

-- Directly below the Limit, with an OFFSET: bound = count + offset.
SELECT bound_explained('ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF', 'SELECT * FROM gb ORDER BY a, id LIMIT 10 OFFSET 5');

-- Through a SubqueryScan without a qual, as PostgreSQL's explain_sq_limit shows it.
SELECT bound_explained('ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF',
                 'SELECT * FROM (SELECT pk, c2 FROM sq_limit ORDER BY c1, pk) AS x LIMIT 3');
SELECT * FROM (SELECT pk, c2 FROM sq_limit ORDER BY c1, pk) AS x LIMIT 3;
-- A SubqueryScan with a qual may discard rows: no bound.
SELECT bound_explained('COSTS OFF', 'SELECT * FROM (SELECT pk, c2 FROM sq_limit ORDER BY c1, pk OFFSET 0) AS x WHERE c2 > 1 LIMIT 3');
SELECT * FROM (SELECT pk, c2 FROM sq_limit ORDER BY c1, pk OFFSET 0) AS x WHERE c2 > 1 LIMIT 3;

-- Through Append (UNION ALL), to each branch's sort.
SELECT bound_explained('COSTS OFF', '(SELECT id, a FROM gb ORDER BY a, id) UNION ALL (SELECT id, a FROM gb ORDER BY a DESC, id) LIMIT 7');
SELECT bound_top_n('(SELECT id, a FROM gb ORDER BY a, id) UNION ALL (SELECT id, a FROM gb ORDER BY a DESC, id) LIMIT 7') AS top_n;
-- Through MergeAppend, to each partition's sort.
SELECT bound_explained('COSTS OFF', 'SELECT * FROM gp ORDER BY a, id LIMIT 6 OFFSET 2');
SELECT bound_top_n('SELECT * FROM gp ORDER BY a, id LIMIT 6 OFFSET 2') AS top_n;
-- Through a projecting Result (a volatile column is computed after the sort).
SELECT bound_explained('COSTS OFF', 'SELECT id, a, random() >= 0 AS r FROM gb ORDER BY a, id LIMIT 4');
-- Not through Unique, nor from a Limit WITH TIES.
SET enable_hashagg = off;
SELECT bound_explained('COSTS OFF', 'SELECT DISTINCT a FROM gb ORDER BY a LIMIT 3');
SELECT bound_explained('COSTS OFF', 'SELECT * FROM gb ORDER BY a FETCH FIRST 3 ROWS WITH TIES');
SELECT bound_same('SELECT DISTINCT a FROM gb ORDER BY a LIMIT 3') AS uniq;
RESET enable_hashagg;

-- Through Gather Merge to every worker's sort (the leader takes no part: only workers sort).
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
SELECT bound_explained('COSTS OFF', 'SELECT * FROM gb ORDER BY a, id LIMIT 10 OFFSET 5');
SELECT bound_explained('ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF', 'SELECT * FROM gb ORDER BY a, id LIMIT 10 OFFSET 5');
SELECT bound_top_n('SELECT * FROM gb ORDER BY a, id LIMIT 10 OFFSET 5') AS top_n;
SELECT bound_same('SELECT * FROM gb ORDER BY a, id LIMIT 10 OFFSET 5') AS same,
       bound_same('SELECT * FROM gb ORDER BY c DESC, a, id LIMIT 200000') AS same_large_bound;
RESET parallel_leader_participation;
RESET max_parallel_workers_per_gather;
SET max_parallel_workers_per_gather = 0;

-- A generic plan: the bound is computed from the parameters when the node starts, in each
-- worker too; plain EXPLAIN, where the parameters may have no values, shows none.
PREPARE lim(int, int) AS SELECT * FROM gb ORDER BY a, id LIMIT $1 OFFSET $2;
SET plan_cache_mode = force_generic_plan;
SELECT bound_explained('COSTS OFF', 'EXECUTE lim(5, 3)');
SELECT bound_explained('ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF', 'EXECUTE lim(5, 3)');
CREATE TABLE lim_5_3 AS EXECUTE lim(5, 3);
CREATE TABLE lim_all_29990 AS EXECUTE lim(NULL, 29990);
EXECUTE lim(-1, 0);
SET parallel_leader_participation = off;
SET max_parallel_workers_per_gather = 2;
PREPARE lim_parallel(int) AS SELECT * FROM gb ORDER BY a, id LIMIT $1;
SELECT bound_explained('ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF', 'EXECUTE lim_parallel(12)');
SELECT bound_top_n('EXECUTE lim_parallel(12)') AS top_n;
CREATE TABLE lim_parallel_12 AS EXECUTE lim_parallel(12);
RESET parallel_leader_participation;
SET max_parallel_workers_per_gather = 0;
RESET plan_cache_mode;
SET gpuext.enable_sort = off;
SELECT (SELECT array_agg(id) FROM lim_5_3) = array_agg(id) AS same
FROM (SELECT id FROM gb ORDER BY a, id LIMIT 5 OFFSET 3) s;
SELECT (SELECT array_agg(id) FROM lim_all_29990) = array_agg(id) AS same
FROM (SELECT id FROM gb ORDER BY a, id OFFSET 29990) s;
SELECT (SELECT array_agg(id) FROM lim_parallel_12) = array_agg(id) AS same
FROM (SELECT id FROM gb ORDER BY a, id LIMIT 12) s;
RESET gpuext.enable_sort;

-- Results against PostgreSQL's Sort: each shape above, rescans of a bounded sort (a correlated
-- subquery), and a LIMIT GpuSort cannot compute (a subquery's value: no bound).
SELECT bound_same('SELECT * FROM gb ORDER BY a, id LIMIT 10 OFFSET 5') AS direct,
       bound_same('SELECT * FROM (SELECT pk, c2 FROM sq_limit ORDER BY c1, pk) AS x LIMIT 3') AS subquery,
       bound_same('SELECT * FROM (SELECT pk, c2 FROM sq_limit ORDER BY c1, pk OFFSET 0) AS x WHERE c2 > 1 LIMIT 3') AS subquery_qual,
       bound_same('(SELECT id, a FROM gb ORDER BY a, id) UNION ALL (SELECT id, a FROM gb ORDER BY a DESC, id) LIMIT 7') AS append,
       bound_same('(SELECT id, a FROM gb ORDER BY a, id LIMIT 2) UNION ALL (SELECT id, a FROM gb ORDER BY a DESC, id) LIMIT 7') AS append_inner_limit,
       bound_same('SELECT * FROM gp ORDER BY a, id LIMIT 6 OFFSET 2') AS merge_append,
       bound_same('SELECT id, a, random() >= 0 AS r FROM gb ORDER BY a, id LIMIT 4') AS result,
       bound_same('SELECT * FROM (SELECT id FROM gb ORDER BY a, c FETCH FIRST 3 ROWS WITH TIES) s ORDER BY id') AS with_ties;
SELECT bound_same('SELECT x, (SELECT id FROM gb WHERE c = x ORDER BY a, id LIMIT 1 OFFSET 2) FROM generate_series(0, 3) x') AS rescans,
       bound_same('SELECT x, (SELECT array_agg(id) FROM (SELECT id FROM gb ORDER BY a, id LIMIT x) s) FROM generate_series(1, 3) x') AS limit_per_row,
       bound_same('SELECT * FROM gb ORDER BY a, id LIMIT (SELECT 4)') AS limit_subquery;
RESET ALL;
DROP TABLE gb, sq_limit, gp, lim_5_3, lim_all_29990, lim_parallel_12;
DROP FUNCTION bound_explained(text, text), bound_top_n(text), bound_same(text);
