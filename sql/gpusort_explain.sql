-- EXPLAIN of Custom Scan (GpuSort) in Sort's words: Sort Key and Bound; with ANALYZE the sort
-- method and its memory as Sort prints them (Sort Method, Sort Space Used, Sort Space Type outside
-- text) beside the device memory, why the CPU sorted, and stage timings only with TIMING on; under
-- Gather Merge each worker's line as Sort prints its workers'.  Run sizes, memory and loops vary
-- between runs, devices and PostgreSQL releases: explained() keeps the words and hides those numbers.
-- A build without device code plans no GpuSort: this file says so and stops there.
SELECT gpu_kernels AND device_state <> 'unavailable' AS offloads FROM gpuext_info() \gset
\if :offloads
\else
\echo 'gpusort_explain: skipped: a build without device code plans no GpuSort (PostgreSQL''s Sort stays)'
\quit
\endif
LOAD 'gpuext';
SET gpuext.device = auto;
SET gpuext.sort_min_rows = 0;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE ge (id int4, a int4, c float8, t text);
INSERT INTO ge SELECT i, (i * 7919) % 1000, (i % 7)::float8, 'row ' || i FROM generate_series(1, 30000) i;
ANALYZE ge;

-- The lines of EXPLAIN (opts) q, numbers that vary from run to run as N; JSON's "Disabled" (18 only) left out.
CREATE FUNCTION explained(opts text, q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE format('EXPLAIN (%s) %s', opts, q) LOOP
    line := regexp_replace(line, ',\n *"Disabled": (true|false)', '', 'g');
    line := regexp_replace(line, '(rows=|loops=|"Actual Rows": |"Actual Loops": |Space Used": )[0-9.]+', '\1N', 'g');
    line := regexp_replace(line, '[0-9]+kB', 'NkB', 'g');
    line := regexp_replace(line, '[0-9]+\.[0-9]+ ms', 'N ms', 'g');
    RETURN NEXT line;
  END LOOP;
END $$;

-- Plain EXPLAIN: keys and bound only.
SELECT explained('COSTS OFF', 'SELECT * FROM ge ORDER BY a, c DESC');
SELECT explained('COSTS OFF', 'SELECT * FROM ge ORDER BY a LIMIT 200000');

-- ANALYZE with TIMING OFF: the sort method and memory, no times.
SELECT explained('ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF', 'SELECT * FROM ge ORDER BY a, c DESC');
-- Keys-only (every column a key): the rows are rebuilt from the keys.
SELECT explained('ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF', 'SELECT a, c FROM ge ORDER BY a, c DESC');
-- A small LIMIT: PostgreSQL's Sort inside, its method and why.
SELECT explained('ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF', 'SELECT * FROM ge ORDER BY a LIMIT 5');
-- Past the memory budget: tuplesort takes the rows, its method and why.
SET gpuext.sort_work_mem = '64kB';
SET gpuext.sort_rows_on_device = off;
SELECT explained('ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF', 'SELECT * FROM ge ORDER BY c NULLS FIRST, id');
RESET gpuext.sort_work_mem;
RESET gpuext.sort_rows_on_device;
SELECT explained('ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF, FORMAT JSON', 'SELECT * FROM ge ORDER BY a, c DESC');

-- ANALYZE with TIMING on: one "Stage Timing" line (in JSON an object) with every stage.
SELECT line FROM explained('ANALYZE, COSTS OFF, SUMMARY OFF, BUFFERS OFF', 'SELECT * FROM ge ORDER BY a, c DESC') line
WHERE line ~ 'Stage Timing';
CREATE FUNCTION plan_json(q text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  j json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, SUMMARY OFF, BUFFERS OFF, FORMAT JSON) ' || q INTO j;
  RETURN (j -> 0 -> 'Plan')::jsonb;
END $$;
SELECT jsonb_object_keys(plan_json('SELECT * FROM ge ORDER BY a, c DESC') -> 'Stage Timing') AS stage;
SELECT plan_json('SELECT * FROM ge ORDER BY a, c DESC') ? 'Stage Timing' AS timed,
       plan_json('SELECT * FROM ge ORDER BY a LIMIT 5') ? 'Stage Timing' AS timed_sort_inside;
-- The stages add up to the node's own time: Emit is the time spent beyond the others.
SELECT abs((SELECT sum(v::float8) FROM jsonb_each_text(p -> 'Stage Timing') AS s(k, v)) -
           (p ->> 'Actual Total Time')::float8) < 0.01 AS stages_add_up,
       (p -> 'Stage Timing' ->> 'Emit')::float8 > 0 AS emit_timed
FROM plan_json('SELECT * FROM ge ORDER BY a, c DESC') AS p;

-- Under Gather Merge: the leader's sort, then one "Worker N:" line per worker (in JSON a "Workers" list).
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
SELECT explained('COSTS OFF', 'SELECT * FROM ge ORDER BY a, id');
SELECT explained('ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF', 'SELECT * FROM ge ORDER BY a, id');
SELECT explained('ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF, FORMAT JSON', 'SELECT * FROM ge ORDER BY a, id');
-- VERBOSE: each worker's line joins its other figures, as Sort's do.
SELECT explained('ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF', 'SELECT a, id FROM ge ORDER BY a, id');
-- The same order as PostgreSQL's Sort gives.
SELECT md5(string_agg(id::text, ',')) AS gpusort_rows FROM (SELECT id FROM ge ORDER BY a, id) s \gset
SET gpuext.enable_sort = off;
SELECT md5(string_agg(id::text, ',')) = :'gpusort_rows' AS same_as_postgres FROM (SELECT id FROM ge ORDER BY a, id) s;
RESET ALL;
DROP TABLE ge;
