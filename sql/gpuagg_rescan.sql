-- Custom Scan (GpuAgg) rescanned, and the order of its conditions.  A rescan where no parameter
-- of the WHERE clause, the arguments or the keys changed returns the result in memory again, as
-- a hashed Agg does (one of HAVING's only filters it again); any other rescan, or one after a run
-- that spilled, reads the table again.  WHERE and HAVING conditions run cheapest first, as
-- PostgreSQL orders them, so that a cheap one keeps a failing one from the rows it rejects.
-- Every result is checked against PostgreSQL's own plan.
LOAD 'gpuext';
SET gpuext.agg_min_rows = 0;
SET max_parallel_workers_per_gather = 0;

-- 'ok' when q's rows with GpuAgg allowed equal its rows with gpuext.enable_agg off, and where a
-- device can be used GpuAgg was planned and read the table tab reads times in all; else what
-- differed.
CREATE FUNCTION check_rescan(q text, reads int, tab text DEFAULT 'rr') RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  offloads boolean := (SELECT gpu_kernels AND device_state <> 'unavailable' FROM gpuext_info());
  plan jsonb;
  node jsonb;
  got text[];
  want text[];
  nrows bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM %I', tab) INTO nrows;
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
  node := jsonb_path_query_first(plan, '$.** ? (@."Custom Plan Provider" == "GpuAgg")');
  EXECUTE format('SELECT array_agg(x ORDER BY x) FROM (SELECT row(s.*)::text x FROM (%s) s) t', q) INTO got;
  PERFORM set_config('gpuext.enable_agg', 'off', true);
  EXECUTE format('SELECT array_agg(x ORDER BY x) FROM (SELECT row(s.*)::text x FROM (%s) s) t', q) INTO want;
  PERFORM set_config('gpuext.enable_agg', 'on', true);
  IF got IS DISTINCT FROM want THEN
    RETURN format('got %s, want %s', got, want);
  END IF;
  IF (node IS NOT NULL) <> offloads THEN
    RETURN format('GpuAgg planned: %s', node IS NOT NULL);
  END IF;
  IF node IS NOT NULL AND (node->>'Rows Read')::bigint <> reads * nrows THEN
    RETURN format('rows read: %s, %s times the table''s', node->>'Rows Read',
                  round((node->>'Rows Read')::numeric / nrows, 2));
  END IF;
  RETURN 'ok';
END $$;

CREATE TABLE rr (g int, x int, f float8);
INSERT INTO rr SELECT i % 10, i, i / 4.0 FROM generate_series(1, 6000) i;
ANALYZE rr;
CREATE TABLE outer_rows AS SELECT i FROM generate_series(1, 40) i;
ANALYZE outer_rows;

-- No parameter, or one only HAVING reads: the table is read once for every outer row
SELECT check_rescan($$SELECT o.i, (SELECT max(g) FROM (SELECT g, count(*) AS n FROM rr GROUP BY g) a
  WHERE a.n > o.i * 15) FROM outer_rows o$$, 1);
SELECT check_rescan($$SELECT o.i, (SELECT sum(s) FROM (SELECT g, sum(f) AS s FROM rr GROUP BY g
  HAVING sum(x) > o.i * 45000) a) FROM outer_rows o$$, 1);
SELECT check_rescan($$SELECT o.i, (SELECT s + o.i FROM (SELECT sum(x) AS s, avg(f) FROM rr) a) FROM outer_rows o$$, 1);
-- A LIMIT that stops early, then a rescan: every group again
SELECT check_rescan($$SELECT o.i, (SELECT sum(n) FROM (SELECT g, count(*) AS n FROM rr GROUP BY g LIMIT 3) a)
  FROM outer_rows o$$, 1);
-- A parameter of the WHERE clause, of an argument, of a key: read again each time
SELECT check_rescan($$SELECT o.i, (SELECT sum(n) FROM (SELECT g, count(*) AS n FROM rr WHERE x > o.i * 100
  GROUP BY g) a) FROM outer_rows o$$, 40);
SELECT check_rescan($$SELECT o.i, (SELECT max(s) FROM (SELECT g, sum(x + o.i) AS s FROM rr GROUP BY g) a)
  FROM outer_rows o$$, 40);
SELECT check_rescan($$SELECT o.i, (SELECT max(s) + count(*) FROM (SELECT g % (o.i + 1), sum(x) AS s FROM rr GROUP BY 1) a)
  FROM outer_rows o$$, 40);
SELECT check_rescan($$SELECT o.i, (SELECT sum(x) FILTER (WHERE g < o.i % 10) FROM rr) FROM outer_rows o$$, 40);
-- Groups past hash_mem spill: a run that spilled is made again; numbered on the device instead
-- (gpuagg_devgroups), they stay in its memory, read back again chunk by chunk
SET work_mem = '64kB';
SET hash_mem_multiplier = 1;
CREATE TABLE rr_many AS SELECT i % 20000 AS k, i AS x FROM generate_series(1, 60000) i;
ANALYZE rr_many;
SET gpuext.enable_device_scan = off;
SELECT check_rescan($$SELECT o.i, (SELECT count(*) + max(s) FROM (SELECT k, sum(x) AS s FROM rr_many GROUP BY k
  HAVING sum(x) > o.i * 1000) a) FROM generate_series(1, 3) o(i)$$, 3, 'rr_many');
RESET gpuext.enable_device_scan;
SELECT check_rescan($$SELECT o.i, (SELECT count(*) + max(s) FROM (SELECT k, sum(x) AS s FROM rr_many GROUP BY k
  HAVING sum(x) > o.i * 1000) a) FROM generate_series(1, 3) o(i)$$, 1, 'rr_many');
RESET work_mem;
RESET hash_mem_multiplier;

-- The cheaper condition first: y <> 500 rejects the row 1 / (y - 500) would fail on
CREATE TABLE rq (g int, y numeric, f float8);
INSERT INTO rq SELECT i % 10, i, i FROM generate_series(1, 3000) i;
ANALYZE rq;
SELECT check_rescan($$SELECT g, sum(f) FROM rq WHERE 1 / (y - 500) IS NOT NULL AND y <> 500 GROUP BY g$$, 1, 'rq');
SELECT count(*) FROM (SELECT g, sum(f) FROM rq WHERE 1 / (y - 500) IS NOT NULL AND y <> 500 GROUP BY g) s;
SELECT count(*) FROM (SELECT sum(f) FROM rq WHERE 1 / (y - 500) IS NOT NULL AND y <> 500) s;
SELECT g FROM rq GROUP BY g HAVING 1 / (sum(f) - sum(f)) > 0 AND sum(f) < sum(f);

DROP TABLE rr, rr_many, rq, outer_rows;
DROP FUNCTION check_rescan(text, int, text);
