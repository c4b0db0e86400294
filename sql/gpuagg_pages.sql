-- Custom Scan (GpuAgg) reading a heap table's pages: all-visible pages that are not in shared
-- buffers come straight from the table's files, every other page through shared buffers with
-- PostgreSQL's visibility checks.  Every result is checked against PostgreSQL's own plan
-- (gpuext.enable_agg = off), and every block must be read exactly once.  Tables are built with
-- CREATE TABLE AS and COPY, whose ring of buffers writes most pages out of shared buffers.
LOAD 'gpuext';
SET gpuext.agg_min_rows = 0;
SET max_parallel_workers_per_gather = 0;
SET work_mem = '64MB';

-- 'ok' when q's rows with GpuAgg allowed equal its rows with gpuext.enable_agg off and, where
-- there is device code (else GpuAgg is never planned), GpuAgg read each of the table's blocks once,
-- some from the files when files is true and none when it is false (either when NULL); else what
-- differed.
CREATE FUNCTION check_pages(q text, tab regclass, files boolean) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  expect_planned boolean := (SELECT gpu_kernels AND device_state <> 'unavailable' FROM gpuext_info());
  nblocks bigint := pg_relation_size(tab) / current_setting('block_size')::int;
  plan jsonb;
  node jsonb;
  got text[];
  want text[];
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
  node := jsonb_path_query_first(plan, '$.** ? (@."Custom Plan Provider" == "GpuAgg")');
  EXECUTE format('SELECT array_agg(x ORDER BY x) FROM (SELECT row(s.*)::text x FROM (%s) s) t', q) INTO got;
  PERFORM set_config('gpuext.enable_agg', 'off', true);
  EXECUTE format('SELECT array_agg(x ORDER BY x) FROM (SELECT row(s.*)::text x FROM (%s) s) t', q) INTO want;
  PERFORM set_config('gpuext.enable_agg', 'on', true);
  IF got IS DISTINCT FROM want THEN
    RETURN format('%s rows against %s, first difference: got %s, want %s', cardinality(got), cardinality(want),
      (SELECT g FROM unnest(got, want) u(g, w) WHERE g IS DISTINCT FROM w LIMIT 1),
      (SELECT w FROM unnest(got, want) u(g, w) WHERE g IS DISTINCT FROM w LIMIT 1));
  END IF;
  IF (node IS NOT NULL) <> expect_planned THEN
    RETURN format('GpuAgg planned: %s', node IS NOT NULL);
  END IF;
  IF node IS NULL OR (files IS NULL OR ((node->>'Heap Blocks From Files')::bigint > 0) = files)
      AND (node->>'Heap Blocks From Files')::bigint + (node->>'Heap Blocks Through Buffers')::bigint = nblocks THEN
    RETURN 'ok';
  END IF;
  RETURN format('of %s blocks, %s from files and %s through buffers', nblocks,
    node->>'Heap Blocks From Files', node->>'Heap Blocks Through Buffers');
END $$;

-- 800,000 rows (40 MB, over a quarter of shared_buffers, so that scans read it through a ring of
-- buffers too): CREATE TABLE AS leaves only its last 16 MB in shared buffers, and
-- VACUUM marks every page all-visible.
CREATE TABLE gpg AS SELECT i AS id, (i % 1000)::int4 AS k, i::int8 * 3 AS v,
  CASE i % 101 WHEN 0 THEN 'NaN'::float8 ELSE (i % 97) / 7.0 END AS f
FROM generate_series(1, 800000) i;
CREATE INDEX gpg_id ON gpg (id);
VACUUM ANALYZE gpg;
SELECT check_pages('SELECT count(*), sum(k), sum(v), avg(f), min(v), max(f) FROM gpg', 'gpg', true);
SELECT check_pages('SELECT k, count(*), sum(v), avg(f) FROM gpg GROUP BY k', 'gpg', true);
SELECT check_pages('SELECT sum(v), count(*), count(f), min(k) FROM gpg WHERE k < 10', 'gpg', true);
SELECT check_pages('SELECT k, count(f), min(id), sum(v) FROM gpg WHERE v > 30000 GROUP BY k', 'gpg', true);
-- Compiled double precision arguments, computed for a page's rows one operation at a time (over
-- integers, so that the sums are exact and equal PostgreSQL's), and single keys' groups found for
-- a page at once.
SELECT check_pages('SELECT sum(k::float8 * 2 - v), avg((k::float8 + 1) * (v::float8 - 3)),
  round(sum(v / (k::float8 + 1))::numeric), count(*) FROM gpg WHERE k < 900', 'gpg', true);
SELECT check_pages('SELECT k, sum(k::float8 * 2 - v), avg((k::float8 + 1) * (v::float8 - 3)), sum(-v::float8),
  count(*) FROM gpg GROUP BY k', 'gpg', true);
SELECT sum(v::float8 * 1e300 * 1e10) FROM gpg;
SELECT k, sum(f / (k::float8 - k)) FROM gpg GROUP BY k;
-- Keys spread past the direct map's span (found in the hash table instead), and two keys.
CREATE TABLE gpw AS SELECT (i % 5000)::int8 * 1000003 - 2500000000 AS k8, (i % 7)::int2 AS s,
  (i % 1000)::float8 AS x FROM generate_series(1, 300000) i;
VACUUM ANALYZE gpw;
SELECT check_pages('SELECT k8, sum(x), count(*), sum(x * 3 - k8) FROM gpw GROUP BY k8', 'gpw', NULL);
SELECT check_pages('SELECT k8, s, sum(x), max(x), avg(x * (s::float8 + 1)) FROM gpw GROUP BY k8, s', 'gpw', NULL);
-- Off: every page through shared buffers, the same results.
SET gpuext.read_table_files = off;
SELECT check_pages('SELECT count(*), sum(k), sum(v), avg(f), min(v), max(f) FROM gpg', 'gpg', false);
RESET gpuext.read_table_files;

-- Rows deleted and updated through the index: their pages come into shared buffers, changed and
-- no longer all-visible, and are read there.
DELETE FROM gpg WHERE id BETWEEN 1 AND 3000;
UPDATE gpg SET v = -v, k = k + 1 WHERE id BETWEEN 3001 AND 4000;
SELECT check_pages('SELECT count(*), sum(k), sum(v), avg(f), min(v), max(f) FROM gpg', 'gpg', true);
-- VACUUM makes those pages all-visible again while they stay changed in shared buffers: the files
-- still hold their earlier images, all-visible too, with the deleted rows.
VACUUM gpg;
SELECT check_pages('SELECT count(*), sum(k), sum(v), avg(f), min(v), max(f) FROM gpg', 'gpg', true);
SELECT check_pages('SELECT k, count(*), sum(v) FROM gpg GROUP BY k', 'gpg', true);

-- Parallel workers take chunks of blocks from one shared scan: still each block once.
SET min_parallel_table_scan_size = 0;
SET parallel_setup_cost = 0;
SET max_parallel_workers_per_gather = 2;
SELECT check_pages('SELECT count(*), sum(k), sum(v), avg(f), min(v), max(f) FROM gpg', 'gpg', true);
SELECT check_pages('SELECT k, count(*), sum(v), max(f) FROM gpg GROUP BY k', 'gpg', true);
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET min_parallel_table_scan_size;

-- Rows of a rolled-back COPY: its ring writes their pages out, not all-visible, so they are read
-- through shared buffers and found invisible.
CREATE TABLE gpc (id int4);
INSERT INTO gpc SELECT generate_series(1, 1000);
BEGIN;
COPY gpc FROM PROGRAM 'seq 1001 800000';
ROLLBACK;
SELECT check_pages('SELECT count(*), sum(id), min(id), max(id) FROM gpc', 'gpc', false);
-- A serializable transaction reads every page through shared buffers (its reads are tracked there).
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT check_pages('SELECT count(*), sum(k), sum(v) FROM gpg', 'gpg', false);
COMMIT;
-- A temporary table has no pages in shared buffers or in its files to trust: local buffers only.
CREATE TEMP TABLE gpt AS SELECT * FROM gpg;
VACUUM gpt;
SELECT check_pages('SELECT count(*), sum(k), sum(v) FROM gpt', 'gpt', false);

-- Buffer hints: a backend's next scan of the table it read last tries each block's buffer from the
-- scan before (no buffer table lookup), checked as ReadRecentBuffer checks it.  Another table read
-- in between, a rewrite (a new file) and new blocks leave no stale hint, and every result is
-- PostgreSQL's.  want: 'all' blocks read where the last scan found them, 'none', or a count.
CREATE FUNCTION explain_json(q text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  plan jsonb;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
  RETURN plan;
END $$;
CREATE FUNCTION check_hints(q text, want text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  plan jsonb;
  node jsonb;
  hinted bigint;
  blocks bigint;
  wanted bigint;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
  node := jsonb_path_query_first(plan, '$.** ? (@."Custom Plan Provider" == "GpuAgg")');
  IF node IS NULL THEN
    RETURN 'ok';
  END IF;
  hinted := (node->>'Heap Blocks Where Last Found')::bigint;
  blocks := (node->>'Heap Blocks From Files')::bigint + (node->>'Heap Blocks Through Buffers')::bigint;
  wanted := CASE want WHEN 'all' THEN blocks WHEN 'none' THEN 0 ELSE want::bigint END;
  IF blocks > 0 AND hinted = wanted THEN
    RETURN 'ok';
  END IF;
  RETURN format('%s of %s blocks where the last scan found them', hinted, blocks);
END $$;
CREATE TABLE gph AS SELECT i AS id, (i % 100)::int4 AS k, (i % 89)::float8 AS f
FROM generate_series(1, 20000) i;
VACUUM ANALYZE gph;
SELECT check_pages('SELECT count(*), sum(k), sum(f) FROM gph', 'gph', NULL);
SELECT check_hints('SELECT count(*), sum(k), sum(f) FROM gph', 'all');
SELECT check_hints('SELECT k, count(*), sum(f) FROM gph WHERE k < 50 GROUP BY k', 'all');
SELECT check_pages('SELECT k8, sum(x), count(*) FROM gpw GROUP BY k8', 'gpw', NULL);
SELECT check_hints('SELECT count(*), sum(k), sum(f) FROM gph', 'none');
SELECT pg_relation_size('gph') / current_setting('block_size')::int AS gph_blocks \gset
INSERT INTO gph SELECT i, i % 7, i FROM generate_series(20001, 30000) i;
SELECT check_hints('SELECT count(*), sum(k), sum(f) FROM gph', :'gph_blocks');
SELECT check_pages('SELECT count(*), sum(k), sum(f), max(id) FROM gph', 'gph', NULL);
UPDATE gph SET f = -f WHERE id % 10 = 0;
SELECT check_pages('SELECT k, count(*), sum(f), min(f) FROM gph GROUP BY k', 'gph', NULL);
VACUUM FULL gph;
SELECT check_hints('SELECT count(*), sum(k), sum(f) FROM gph', 'none');
SELECT check_pages('SELECT count(*), sum(k), sum(f), min(f) FROM gph', 'gph', NULL);
SELECT check_hints('SELECT count(*), sum(k), sum(f) FROM gph', 'all');
-- A parallel run shares the leader's hints with its workers, who update them for the blocks they
-- read, and the leader keeps them: the runs after one find every block where it was found.
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
SELECT coalesce((n->>'Workers Launched')::int > 0, n IS NULL) AS workers_read_the_blocks
FROM (SELECT jsonb_path_query_first(explain_json('SELECT count(*), sum(k), sum(f) FROM gph'),
                                    '$.** ? (@."Custom Plan Provider" == "GpuAgg")') n) e;
SELECT check_hints('SELECT count(*), sum(k), sum(f) FROM gph', 'all');
SELECT check_hints('SELECT k, count(*), sum(f) FROM gph GROUP BY k', 'all');
SELECT check_pages('SELECT k8, sum(x), count(*) FROM gpw GROUP BY k8', 'gpw', NULL);
SELECT check_hints('SELECT count(*), sum(k), sum(f) FROM gph', 'none');
SELECT check_hints('SELECT count(*), sum(k), sum(f) FROM gph', 'all');
RESET parallel_leader_participation;
RESET max_parallel_workers_per_gather;
SELECT check_hints('SELECT count(*), sum(k), sum(f) FROM gph', 'all');
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;

DROP TABLE gpg, gpc, gpt, gpw, gph;
DROP FUNCTION check_pages(text, regclass, boolean);
DROP FUNCTION check_hints(text, text);
DROP FUNCTION explain_json(text);
