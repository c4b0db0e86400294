-- Custom Scan (GpuAgg) with more groups than hash_mem holds: the rows of groups that find no room
-- are spilled to partitions, each aggregated after the groups in memory, again spilling where a
-- partition still has too many.  Every result is checked against PostgreSQL's own plan
-- (gpuext.enable_agg = off).
LOAD 'gpuext';
SET gpuext.agg_min_rows = 0;
SET max_parallel_workers_per_gather = 0;
SET work_mem = '64kB';
SET hash_mem_multiplier = 1;
-- The rows read on the CPU: the device scan numbers groups past hash_mem in device memory instead
-- (gpuagg_devgroups).
SET gpuext.enable_device_scan = off;

-- 'ok' when q's rows with GpuAgg allowed equal its rows with gpuext.enable_agg off and, where
-- there is device code (else GpuAgg is never planned), GpuAgg was planned, spilled rows when
-- spills is true and none when false, into at least min_parts partitions, or (spills NULL) was
-- not planned; else what differed.
CREATE FUNCTION check_spill(q text, spills boolean, min_parts int DEFAULT 1) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  expect_planned boolean := (SELECT gpu_kernels AND device_state <> 'unavailable' FROM gpuext_info());
  plan jsonb;
  node jsonb;
  got text[];
  want text[];
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
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
  IF (node IS NOT NULL) <> (expect_planned AND spills IS NOT NULL) THEN
    RETURN format('GpuAgg planned: %s', node IS NOT NULL);
  END IF;
  IF node IS NOT NULL AND (coalesce((node->>'Rows Spilled')::bigint, 0) > 0) <> spills THEN
    RETURN format('rows spilled: %s', coalesce(node->>'Rows Spilled', '0'));
  END IF;
  IF node IS NOT NULL AND spills AND (node->>'Spill Partitions')::int < min_parts THEN
    RETURN format('spill partitions: %s', node->>'Spill Partitions');
  END IF;
  RETURN 'ok';
END $$;

-- 20,000 groups; integer-valued doubles (exact sums on both sides), NULL keys and values
CREATE TABLE spill_t AS
SELECT i,
       CASE WHEN i % 997 = 0 THEN NULL ELSE (i * 7919) % 20000 END AS k,
       (i % 20000)::int8 * 1000000007 AS k8,
       date '2020-01-01' + (i % 300) AS d,
       (i % 40)::int2 AS s,
       CASE WHEN i % 13 = 0 THEN NULL ELSE (i % 1000)::float8 END AS f,
       (i % 5000)::float4 AS r,
       CASE WHEN i % 11 = 0 THEN NULL ELSE i::int8 * 3 END AS b,
       timestamp '2021-01-01' + i * interval '1 minute' AS ts,
       'x' || (i % 7) AS t
FROM generate_series(1, 200000) i;
ANALYZE spill_t;

-- One integer key (the direct map), every aggregate and type that spills
SELECT check_spill($$SELECT k, count(*), count(f), sum(f), avg(f), min(f), max(f), sum(b), avg(b), min(b), max(b),
  sum(s), avg(s), min(r), max(r), sum(r), min(ts), max(ts), min(d), max(d), count(t) FROM spill_t GROUP BY k$$, true, 8);
-- Two keys packed into eight bytes, two bigint keys (as byte strings), HAVING, WHERE, FILTER, expressions
SELECT check_spill($$SELECT k, d, sum(f), count(*) FROM spill_t GROUP BY k, d$$, true);
SELECT check_spill($$SELECT k8, b, sum(f), count(*) FROM spill_t GROUP BY k8, b$$, true);
SELECT check_spill($$SELECT k, sum(f) FROM spill_t GROUP BY k HAVING sum(f) > 5000$$, true);
SELECT check_spill($$SELECT k, sum(f), max(b) FROM spill_t WHERE i % 3 <> 0 GROUP BY k$$, true);
SELECT check_spill($$SELECT k, sum(f) FILTER (WHERE s < 20), count(*) FILTER (WHERE t = 'x1'),
  sum(f * 2 + 1) FROM spill_t GROUP BY k$$, true);
SELECT check_spill($$SELECT k8 / 3, sum(b - i) FROM spill_t GROUP BY 1$$, true);
-- Special floats and the sums near bigint's limits: the same as without spilling
SELECT check_spill($$SELECT k, sum(CASE WHEN i % 5000 = 1 THEN 'NaN' WHEN i % 7000 = 2 THEN '-Infinity'
  ELSE f END), max(CASE WHEN i % 9000 = 3 THEN 'Infinity'::float8 ELSE f END) FROM spill_t GROUP BY k$$, true);
SELECT check_spill($$SELECT k % 4000, sum(9223372036854775807 - i * 1000000000000), count(*) FROM spill_t GROUP BY 1$$,
  true);
-- A key whose groups are underestimated (200 expected): partitions too large spill again
SELECT check_spill($$SELECT (i * 7919) % 30000, sum(f), count(*) FROM spill_t GROUP BY 1$$, true, 8);
-- Pages without NULLs, added column by column (plain columns and compiled arithmetic)
CREATE TABLE spill_n AS SELECT i, (i * 7919) % 20000 AS k, (i % 1000)::float8 AS f, i::int8 AS b
FROM generate_series(1, 200000) i;
ANALYZE spill_n;
SELECT check_spill($$SELECT k, sum(f), count(*), max(b), sum(f * 2 - 1), count(b) FROM spill_n GROUP BY k$$, true, 8);
DROP TABLE spill_n;
-- Text keys and numeric values spill as their bytes
SELECT check_spill($$SELECT t || k, sum(f) FROM spill_t GROUP BY 1$$, true);
SELECT check_spill($$SELECT k, sum(f::numeric), min(f::numeric), avg(b::numeric) FROM spill_t GROUP BY k$$, true);
-- Groups that fit do not spill; keys that cannot spill (equal values of other bytes: numeric
-- without a scale, 1.5 and 1.50) keep PostgreSQL's plan
SELECT check_spill($$SELECT s, sum(f) FROM spill_t GROUP BY s$$, false);
SELECT check_spill($$SELECT (k / 7)::numeric, sum(f) FROM spill_t GROUP BY 1$$, NULL);
-- A rescan starts over
SELECT check_spill($$SELECT x, (SELECT sum(sf) FROM (SELECT k, sum(f) sf, count(*) FROM spill_t WHERE i > x GROUP BY k) q)
  FROM generate_series(0, 150000, 50000) x$$, true);
-- An error from spilled rows; a cursor closed early, and the error, leave no file behind
BEGIN;
DECLARE c CURSOR FOR SELECT k, sum(f) FROM spill_t GROUP BY k;
FETCH 2 FROM c \g /dev/null
CLOSE c;
COMMIT;
SELECT k, sum(1 / (f - 500)) FROM spill_t GROUP BY k;
SELECT count(*) AS temp_files_left FROM pg_ls_tmpdir();
-- With room for every group, nothing spills
SET work_mem = '64MB';
SELECT check_spill($$SELECT k, count(*), sum(f), min(b) FROM spill_t GROUP BY k$$, false);
RESET work_mem;
RESET hash_mem_multiplier;
DROP TABLE spill_t;
DROP FUNCTION check_spill;
