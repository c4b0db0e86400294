-- HAVING's tests on a group's counts and exact sums (gpuagg_having.c): a group that fails a
-- condition "aggregate op constant" is passed over before its row is made.  Every result is checked
-- against PostgreSQL's own plan and the groups removed by the filter against those it returns;
-- where there is a device, also how many groups the tests rejected (EXPLAIN ANALYZE VERBOSE's
-- Rejected Early by HAVING): count(*), count(x), sum, min and max of integers and of a fixed-scale
-- numeric, the constant on either side, every comparison, NULL sums, conditions left to the qual (a
-- constant past the column's scale, avg, OR, an unconstrained numeric, beside a float sum), NaN,
-- groups in host memory and groups numbered on the device.
LOAD 'gpuext';
SET gpuext.agg_min_rows = 0;
SET gpuext.min_gpu_elements = 0;
SET max_parallel_workers_per_gather = 0;

-- 'ok' when q's groups with GpuAgg allowed equal its groups with gpuext.enable_agg off, GpuAgg's
-- filter removed the groups it did not return, and where there is a device the tests rejected
-- rejected groups of them; else what differed.
CREATE FUNCTION check_having(q text, rejected bigint) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  offloads boolean := (SELECT gpu_kernels AND device_state <> 'unavailable' FROM gpuext_info());
  plan jsonb;
  node jsonb;
  got text;
  want text;
  agg text := 'SELECT count(*) || '' groups: '' || coalesce(string_agg(r, '' '' ORDER BY r), '''') '
              'FROM (SELECT row(s.*)::text AS r FROM (%s) s) g';
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
  EXECUTE format(agg, q) INTO got;
  PERFORM set_config('gpuext.enable_agg', 'off', true);
  EXECUTE format(agg, q) INTO want;
  PERFORM set_config('gpuext.enable_agg', 'on', true);
  IF got IS DISTINCT FROM want THEN
    RETURN format('got %s, want %s', got, want);
  END IF;
  node := jsonb_path_query_first(plan, '$.** ? (@."Custom Plan Provider" == "GpuAgg")');
  IF node IS NULL THEN
    RETURN CASE WHEN offloads THEN 'GpuAgg not planned' ELSE 'ok' END;
  END IF;
  IF (node->>'Groups')::numeric - (node->>'Actual Rows')::numeric <> coalesce((node->>'Rows Removed by Filter')::numeric, 0) THEN
    RETURN format('%s groups, %s returned, %s removed by the filter',
                  node->>'Groups', node->>'Actual Rows', node->>'Rows Removed by Filter');
  END IF;
  IF offloads AND coalesce((node->>'Rejected Early by HAVING')::bigint, 0) <> rejected THEN
    RETURN format('%s rejected early, not %s', node->>'Rejected Early by HAVING', rejected);
  END IF;
  RETURN 'ok';
END $$;

-- 2,003 groups; q NULL in one row of seven, s in one of eleven, n unconstrained
CREATE TABLE hv (k int4, q numeric(12,2), n numeric, i int4, b int8, s int2, f float8, pad text);
INSERT INTO hv SELECT i % 2003, CASE WHEN i % 7 = 0 THEN NULL ELSE (i % 97) * 0.25 - 3 END, i * 0.001, i, i * 3,
  CASE WHEN i % 11 = 0 THEN NULL ELSE i % 50 END, i / 8.0, 'p' || i % 5
FROM generate_series(1, 20000) i;
ANALYZE hv;

-- the tests' own answers, from PostgreSQL
SELECT count(*) FILTER (WHERE NOT coalesce(s > 100, false)) AS sum_gt_100,
       count(*) FILTER (WHERE NOT (c > 9)) AS count_gt_9,
       count(*) FILTER (WHERE NOT (c <> 10)) AS count_ne_10,
       count(*) FILTER (WHERE NOT (cq = 8)) AS count_q_eq_8,
       count(*) FILTER (WHERE NOT coalesce(mn >= -2.5 AND mx < 20.75, false)) AS min_max,
       count(*) FILTER (WHERE NOT coalesce(s <= 60 AND c >= 2, false)) AS sum_le_60,
       count(*) FILTER (WHERE sf IS NULL) AS filtered_null,
       count(*) FILTER (WHERE NOT (si > 100000)) AS int_sum,
       count(*) FILTER (WHERE NOT (mi >= 10 AND xi < 19000)) AS int_min_max,
       count(*) FILTER (WHERE NOT (sb <= 300000)) AS bigint_sum,
       count(*) FILTER (WHERE NOT coalesce(ms = 0, false)) AS smallint_min
FROM (SELECT k, sum(q) AS s, count(*) AS c, count(q) AS cq, min(q) AS mn, max(q) AS mx,
             sum(q) FILTER (WHERE q > 20) AS sf, sum(i) AS si, min(i) AS mi, max(i) AS xi, sum(b) AS sb,
             min(s) AS ms
      FROM hv GROUP BY k) g;

SELECT check_having('SELECT k, sum(q) FROM hv GROUP BY k HAVING sum(q) > 100', 1898);
SELECT check_having('SELECT k, count(*) FROM hv GROUP BY k HAVING 9 < count(*)', 30);
SELECT check_having('SELECT k FROM hv GROUP BY k HAVING count(*) <> 10', 1973);
SELECT check_having('SELECT k, count(q) FROM hv GROUP BY k HAVING count(q) = 8', 1137);
SELECT check_having('SELECT k, sum(q) FROM hv GROUP BY k HAVING min(q) >= -2.5 AND max(q) < 20.75', 708);
SELECT check_having('SELECT k FROM hv GROUP BY k HAVING sum(q) <= 60 AND count(*) >= 2::bigint', 1744);
SELECT check_having('SELECT k, sum(q) FILTER (WHERE q > 20) FROM hv GROUP BY k HAVING sum(q) FILTER (WHERE q > 20) > -1', 1296);
SELECT check_having('SELECT k, sum(i) FROM hv GROUP BY k HAVING sum(i) > 100000', 1016);
SELECT check_having('SELECT k FROM hv GROUP BY k HAVING min(i) >= 10 AND 19000 > max(i)', 1010);
SELECT check_having('SELECT k, sum(b) FROM hv GROUP BY k HAVING sum(b) <= 300000', 987);
SELECT check_having('SELECT k, count(s) FROM hv GROUP BY k HAVING min(s) = 0', 1639);
-- left to the qual: a constant past the scale, avg, OR, an unconstrained numeric
SELECT check_having('SELECT k, sum(q) FROM hv GROUP BY k HAVING sum(q) > 100.005', 0);
SELECT check_having('SELECT k, avg(q) FROM hv GROUP BY k HAVING avg(q) > 9', 0);
SELECT check_having('SELECT k FROM hv GROUP BY k HAVING sum(q) > 100 OR count(*) = 9', 0);
SELECT check_having('SELECT k, sum(n) FROM hv GROUP BY k HAVING sum(n) > 10', 0);
-- none beside an aggregate whose value could raise an error (a float sum's overflow), which
-- PostgreSQL raises for a group HAVING rejects too; an integer sum can only past 2^32 rows
SELECT check_having('SELECT k, sum(f) FROM hv GROUP BY k HAVING count(*) > 9', 0);
SELECT check_having('SELECT k, sum(i), max(f) FROM hv GROUP BY k HAVING count(*) > 9', 30);
-- ... while the condition beside one still rejects
SELECT check_having('SELECT k, avg(q) FROM hv GROUP BY k HAVING avg(q) > 9 AND sum(q) > 100', 1898);

-- groups past hash_mem, numbered on the device: the same answers
SET work_mem = '64kB';
SELECT check_having('SELECT k, sum(q) FROM hv GROUP BY k HAVING sum(q) > 100', 1898);
SELECT check_having('SELECT k FROM hv GROUP BY k HAVING count(*) <> 10', 1973);
SELECT check_having('SELECT k, count(q) FROM hv GROUP BY k HAVING count(q) = 8', 1137);
SELECT check_having('SELECT k, sum(q) FROM hv GROUP BY k HAVING min(q) >= -2.5 AND max(q) < 20.75', 708);
SELECT check_having('SELECT k, sum(q) FILTER (WHERE q > 20) FROM hv GROUP BY k HAVING sum(q) FILTER (WHERE q > 20) > -1', 1296);
SELECT check_having('SELECT k, sum(i) FROM hv GROUP BY k HAVING sum(i) > 100000', 1016);
SELECT check_having('SELECT k, sum(b) FROM hv GROUP BY k HAVING sum(b) <= 300000', 987);
RESET work_mem;

-- a NaN: its group's sum and max are NaN, above every number, so the tests leave it to the qual
UPDATE hv SET q = 'NaN' WHERE k = 5 AND q IS NOT NULL AND q < 10;
SELECT k, sum(q), max(q) FROM hv GROUP BY k HAVING sum(q) > 100 AND max(q) > 30 ORDER BY k LIMIT 3;
SELECT check_having('SELECT k, sum(q), max(q) FROM hv GROUP BY k HAVING sum(q) > 100 AND max(q) > 30', 2002);

DROP TABLE hv;
DROP FUNCTION check_having(text, bigint);
