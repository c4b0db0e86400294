-- Custom Scan (GpuAgg) over many groups: 1M here (the setting gpuext_test.groups asks for another
-- number, 10M on the GPU host), with room for every group and spilling at the default work_mem,
-- serial and parallel, with integer, two-column and text keys.  Each result is compared with
-- PostgreSQL's own plan (gpuext.enable_agg = off) through its row count and a digest of its rows.
LOAD 'gpuext';
SET gpuext.agg_min_rows = 0;
SELECT coalesce(nullif(current_setting('gpuext_test.groups', true), ''), '1000000')::int AS ngroups \gset

-- 'ok' when q gives the same rows with GpuAgg allowed as with gpuext.enable_agg off and, where
-- there is device code and planned is not NULL, GpuAgg was planned or not as planned says.
CREATE FUNCTION check_many(q text, planned boolean) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  expect_planned boolean := planned AND (SELECT gpu_kernels AND device_state <> 'unavailable' FROM gpuext_info());
  plan jsonb;
  got text;
  want text;
  digest text := 'SELECT count(*) || '' rows, digest '' || sum(hashtext(row(s.*)::text)::numeric) FROM (%s) s';
BEGIN
  EXECUTE 'EXPLAIN (COSTS OFF, FORMAT JSON) ' || q INTO plan;
  EXECUTE format(digest, q) INTO got;
  PERFORM set_config('gpuext.enable_agg', 'off', true);
  EXECUTE format(digest, q) INTO want;
  PERFORM set_config('gpuext.enable_agg', 'on', true);
  IF got IS DISTINCT FROM want THEN
    RETURN format('got %s, want %s', got, want);
  END IF;
  IF planned IS NOT NULL AND
     jsonb_path_exists(plan, '$.** ? (@."Custom Plan Provider" == "GpuAgg")') <> expect_planned THEN
    RETURN format('GpuAgg planned: %s', NOT expect_planned);
  END IF;
  RETURN 'ok';
END $$;

-- ngroups keys, each once or twice; integer-valued doubles, so that both sides' sums are exact
CREATE TABLE many_t AS
SELECT i, (i::int8 * 7919 % :ngroups)::int4 AS k, (i % 1000)::float8 AS f, i::int8 * 3 AS b
FROM generate_series(1, :ngroups + :ngroups / 5) i;
ANALYZE many_t;
SELECT count(DISTINCT k) = :ngroups AS every_group FROM many_t;

-- Room for every group takes about 1kB of device memory a group, more than a client's default
-- share of the GPU service's pool (its limit / gpuext.device_clients) on the fake device.
SELECT set_config('gpuext.max_device_memory', (:ngroups * 2) || 'kB', false) <> '' AS device_memory_set;
SET max_parallel_workers_per_gather = 0;
SET work_mem = '1GB';
SELECT check_many('SELECT k, count(*), sum(f), avg(f), min(b), max(b), sum(b) FROM many_t GROUP BY k', true);
SELECT check_many('SELECT k % 1000, k / 1000, sum(b), max(f) FROM many_t GROUP BY 1, 2', true);
-- Text keys do not spill: past what 1GB holds (10M of them) the plan stays PostgreSQL's
SELECT check_many('SELECT ''k'' || k, count(*), sum(f) FROM many_t GROUP BY 1', :ngroups <= 1000000);
SELECT check_many('SELECT k, sum(b) FROM many_t GROUP BY k HAVING count(*) > 1', true);
-- PostgreSQL's default work_mem: integer keys spill past hash_mem
RESET work_mem;
SELECT check_many('SELECT k, count(*), sum(f), avg(f), min(b), max(b), sum(b) FROM many_t GROUP BY k', true);
SELECT check_many('SELECT k::int8 * 1000003, k % 7, sum(b), count(f) FROM many_t GROUP BY 1, 2', true);
SELECT check_many('SELECT ''k'' || k, count(*), sum(f) FROM many_t GROUP BY 1', NULL);
-- Parallel plans, GpuAgg's or PostgreSQL's as the costs choose
SET work_mem = '1GB';
SET max_parallel_workers_per_gather = 4;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SELECT check_many('SELECT k, count(*), sum(f), min(b), max(b) FROM many_t GROUP BY k', NULL);
SELECT check_many('SELECT k % 100000, avg(f), sum(b) FROM many_t GROUP BY 1', NULL);
