-- Custom Scan (GpuAgg) with parallel workers: the node launches them, each reads blocks of the
-- table into its own exact states, and the leader merges them.  Every result is checked three
-- ways in the same test: GpuAgg with workers, GpuAgg alone (the same bits, whatever the floats)
-- and PostgreSQL's own plan (gpuext.enable_agg = off), which is left out for sums of floats
-- whose exact sum PostgreSQL cannot give.  Where there is no device code GpuAgg is
-- never planned and the checks print the same.  The plans are shown only where a device can be
-- used.
SELECT device_state = 'ready' AS has_device FROM gpuext_info() \gset
LOAD 'gpuext';
SET gpuext.agg_min_rows = 0;
SET work_mem = '64MB';
-- Small tables get workers too.
SET min_parallel_table_scan_size = 0;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET max_parallel_workers_per_gather = 2;
SELECT setseed(0.41);
-- f8 and f4 values whose sums are exact in double precision (PostgreSQL's own sums too); fx not.
CREATE TABLE gpar (id int4, k4 int4, kt text, i2 int2, i4 int4, i8 int8, f4 float4, f8 float8, fx float8);
INSERT INTO gpar SELECT i,
  CASE WHEN i % 97 = 0 THEN NULL ELSE (i * 7919) % 1000 END,
  CASE WHEN i % 89 = 0 THEN NULL ELSE chr(65 + i % 3) || chr(65 + i % 2) END,
  CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 65534 - 32767)::int2 END,
  CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 4e9 - 2e9)::int4 END,
  CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 1.8e19 - 9e18)::int8 END,
  CASE WHEN random() < 0.1 THEN NULL ELSE ((random() * 1998)::int - 999) / 8.0 END,
  CASE WHEN random() < 0.1 THEN NULL ELSE round(random() * 2e9 - 1e9) / 64 END,
  CASE i % 11 WHEN 0 THEN 'NaN' WHEN 1 THEN '-0' ELSE random() * 1e6 - 5e5 END
FROM generate_series(1, 60000) i;
ANALYZE gpar;

-- The workers q's first GpuAgg plans (0 with no GpuAgg or no workers; a Gather's are not its).
CREATE FUNCTION gpuagg_workers(q text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
  line text;
  in_gpuagg boolean := false;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF line LIKE '%Custom Scan (GpuAgg)%' THEN
      in_gpuagg := true;
    ELSIF line LIKE '%->%' THEN
      in_gpuagg := false;
    ELSIF in_gpuagg AND line LIKE '%Workers Planned:%' THEN
      RETURN substring(line FROM 'Workers Planned: (\d+)')::int;
    END IF;
  END LOOP;
  RETURN 0;
END $$;

-- The rows of q, in text order.
CREATE FUNCTION rows_of(q text) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
  r text[];
BEGIN
  EXECUTE format('SELECT array_agg(x ORDER BY x) FROM (SELECT row(s.*)::text x FROM (%s) s) t', q) INTO r;
  RETURN r;
END $$;

-- 'ok' when q with workers planned for GpuAgg (where there is device code), q by GpuAgg alone and
-- ref (q by default) with gpuext.enable_agg off (unless pg is false) give the same rows; else what
-- differs.
CREATE FUNCTION check_par(q text, ref text DEFAULT NULL, pg boolean DEFAULT true) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  has_code boolean := (SELECT gpu_kernels AND device_state <> 'unavailable' FROM gpuext_info());
  workers int := gpuagg_workers(q);
  par text[] := rows_of(q);
  alone text[];
  pgrows text[];
BEGIN
  PERFORM set_config('max_parallel_workers_per_gather', '0', true);
  alone := rows_of(q);
  PERFORM set_config('max_parallel_workers_per_gather', '2', true);
  -- PostgreSQL's own float sums depend on the order of the rows: its plans are not held to the bits
  IF NOT has_code AND NOT check_par.pg THEN
    alone := par;
  END IF;
  PERFORM set_config('gpuext.enable_agg', 'off', true);
  pgrows := CASE WHEN check_par.pg THEN rows_of(CASE WHEN has_code THEN coalesce(ref, q) ELSE q END) ELSE par END;
  PERFORM set_config('gpuext.enable_agg', 'on', true);
  IF (workers > 0) <> has_code THEN
    RETURN format('GpuAgg workers planned: %s', workers);
  ELSIF par IS DISTINCT FROM alone THEN
    RETURN format('with workers %s rows, alone %s', cardinality(par), cardinality(alone));
  ELSIF par IS DISTINCT FROM pgrows THEN
    RETURN format('%s rows against %s, first difference: got %s, want %s', cardinality(par), cardinality(pgrows),
      (SELECT g FROM unnest(par, pgrows) u(g, w) WHERE g IS DISTINCT FROM w LIMIT 1),
      (SELECT w FROM unnest(par, pgrows) u(g, w) WHERE g IS DISTINCT FROM w LIMIT 1));
  END IF;
  RETURN 'ok';
END $$;

-- Without GROUP BY: every aggregate and type, FILTER, WHERE, expressions.
SELECT check_par('SELECT count(*), count(i2), count(i4), count(i8), count(f4), count(f8), count(kt) FROM gpar');
SELECT check_par('SELECT sum(i2), sum(i4), sum(i8), avg(i2), avg(i4), avg(i8), min(i2), max(i4), min(i8), max(i8) FROM gpar');
SELECT check_par('SELECT sum(f4), sum(f8), avg(f8), min(f4), max(f8), min(fx), max(fx) FROM gpar');
SELECT check_par('SELECT sum(i4) FILTER (WHERE i2 > 0), count(*) FILTER (WHERE f8 < 0), avg(i8 / 2) FILTER (WHERE id % 3 = 0), sum(i2 * 3 + 1) FROM gpar WHERE id % 10 < 7');
-- Float sums are exact: the same bits with or without workers, whatever the values.
SELECT check_par('SELECT sum(fx), avg(fx), sum(fx::float4), sum(fx * 3) FROM gpar WHERE fx <> ''NaN''', pg => false);
SELECT check_par('SELECT k4 % 3, sum(fx), avg(fx), min(fx), max(fx) FROM gpar WHERE fx <> ''NaN'' GROUP BY 1', pg => false);
SELECT check_par('SELECT sum(fx), sum(fx * 3), sum(fx::float4) FROM gpar',
  'SELECT ''NaN''::float8, ''NaN''::float8, ''NaN''::float4');
-- GROUP BY: integer, text, mixed and expression keys, HAVING, one group per row (the groups
-- travel in many chunks), NULL keys and empty groups.
SELECT check_par('SELECT k4, count(*), sum(i2), sum(i4), sum(i8), avg(i4), min(f4), max(f8), sum(f8) FROM gpar GROUP BY k4');
SELECT check_par('SELECT kt, count(*), count(i8), sum(i8), avg(i2), min(i8), max(i2), sum(f4) FROM gpar GROUP BY kt');
SELECT check_par('SELECT kt, k4 % 7, count(*), sum(i4) FILTER (WHERE i2 > 0), avg(f8) FROM gpar WHERE id % 5 <> 0 GROUP BY kt, k4 % 7 HAVING count(*) > 100');
SELECT check_par('SELECT id, sum(i4), max(f8), count(*), count(kt) FROM gpar GROUP BY id');
SELECT check_par('SELECT k4 % 3, sum(fx), avg(fx), min(fx), max(fx) FROM gpar GROUP BY 1',
  'SELECT k4 % 3, sum(fx::numeric)::float8, (sum(fx::numeric) / count(fx))::float8, min(fx), max(fx) FROM gpar GROUP BY 1');
SELECT check_par('SELECT k4 % 5, sum(i4) FILTER (WHERE false), count(i2) FILTER (WHERE id < 0) FROM gpar GROUP BY 1');
SELECT check_par('SELECT k4, sum(i4) FROM gpar WHERE id + 0 < 0 GROUP BY k4');
-- Over the groups: ORDER BY an aggregate, a join of two parallel GpuAggs.
SELECT check_par('SELECT k4, sum(i4) AS s FROM gpar GROUP BY k4 ORDER BY s DESC NULLS LAST, k4 LIMIT 5');
SELECT check_par('SELECT a.kt, a.c, b.s FROM (SELECT kt, count(*) c FROM gpar GROUP BY kt) a JOIN (SELECT kt, sum(i4) s FROM gpar WHERE id % 2 = 0 GROUP BY kt) b ON a.kt = b.kt');

-- numeric: at its column's scale (NaNs counted aside) and unconstrained (exact CPU accumulators,
-- merged with their numerics); min and max of dates and timestamps.
CREATE TABLE gpar_num AS SELECT i, i % 13 AS k,
  CASE WHEN i % 101 = 0 THEN 'NaN' WHEN i % 7 = 0 THEN NULL ELSE (i * 7919 % 200000 - 100000) / 100.0 END::numeric(15, 2) AS n2,
  CASE WHEN i % 103 = 0 THEN 'NaN'::numeric WHEN i % 3 = 0 THEN (i::numeric * 1e30) / 7 ELSE i / 8.0 END AS nu,
  DATE '2000-01-01' + i % 5000 AS d, TIMESTAMPTZ '2000-01-01 00:00+00' + i * INTERVAL '1 minute' AS ts
FROM generate_series(1, 40000) i;
UPDATE gpar_num SET d = 'infinity' WHERE i = 777;
ANALYZE gpar_num;
SELECT check_par('SELECT count(n2), sum(n2), avg(n2), min(n2), max(n2), sum(nu), avg(nu), min(nu), max(nu), min(d), max(d), min(ts), max(ts) FROM gpar_num');
SELECT check_par('SELECT sum(n2), avg(n2), min(n2), max(n2) FROM gpar_num WHERE n2 <> ''NaN''');
SELECT check_par('SELECT k, count(n2), sum(n2), avg(n2), min(n2), max(n2), sum(nu), avg(nu), min(nu), max(nu), min(d), max(d), max(ts) FROM gpar_num GROUP BY k');
SELECT check_par('SELECT i % 5000, sum(n2), sum(nu), min(d) FROM gpar_num GROUP BY 1');

-- With no worker to launch, or without the leader reading blocks, the results are the same.
SET max_parallel_workers = 0;
SELECT check_par('SELECT kt, count(*), sum(i8), avg(f8) FROM gpar GROUP BY kt');
SELECT check_par('SELECT count(*), sum(i4), sum(fx) FROM gpar');
RESET max_parallel_workers;
SET parallel_leader_participation = off;
SELECT check_par('SELECT kt, count(*), sum(i8), avg(f8) FROM gpar GROUP BY kt');
SELECT check_par('SELECT count(*), sum(i4), sum(fx) FROM gpar');
RESET parallel_leader_participation;

-- All-visible pages (after VACUUM) taken whole by the device in every process; then, in each, a
-- page found changed once the device has read it (injected): the run is answered on the CPU, with
-- the same results.
VACUUM gpar;
SELECT check_par('SELECT kt, count(*), sum(i8), avg(f8) FROM gpar GROUP BY kt');
SELECT check_par('SELECT count(*), sum(i4), sum(fx) FROM gpar');
SET client_min_messages = error;
SET gpuext.debug_fail_device_calls = 'recheck:1';
SELECT check_par('SELECT kt, count(*), sum(i8), avg(f8) FROM gpar GROUP BY kt');
SET gpuext.debug_fail_device_calls = 'recheck:1';
SELECT check_par('SELECT count(*), sum(i4), sum(fx) FROM gpar');
RESET gpuext.debug_fail_device_calls;
RESET client_min_messages;

-- A worker's ERROR is the query's (raised by whichever process reads the row); overflow is found
-- once the states are merged.
\set VERBOSITY terse
SELECT sum(1 / (id - 30000)) FROM gpar;
SELECT kt, sum(1 / (id - 30000)) FROM gpar GROUP BY kt;
CREATE TABLE gpar_big AS SELECT i, 1e308::float8 AS f FROM generate_series(1, 20000) i;
ANALYZE gpar_big;
SELECT sum(f) FROM gpar_big;
SELECT i % 2, sum(f) FROM gpar_big GROUP BY 1;
\set VERBOSITY default

-- A cancel, or an ERROR caught in a subtransaction, leaves no parallel mode behind: the
-- transaction writes afterwards, and a run after a write launches workers again.
CREATE TABLE gpar_log (x int);
\set VERBOSITY terse
SET statement_timeout = '100ms';
SELECT count(*), sum(i4) FROM gpar WHERE pg_sleep(0.00001) IS NOT NULL;
RESET statement_timeout;
INSERT INTO gpar_log VALUES (1);
DO $$
BEGIN
  BEGIN
    PERFORM sum(1 / (id - 30000)) FROM gpar;
  EXCEPTION WHEN division_by_zero THEN
    INSERT INTO gpar_log VALUES (2);
  END;
  INSERT INTO gpar_log VALUES (3);
END $$;
BEGIN;
INSERT INTO gpar_log VALUES (4);
SELECT check_par('SELECT kt, count(*), sum(i4) FROM gpar GROUP BY kt');
INSERT INTO gpar_log VALUES (5);
COMMIT;
SELECT array_agg(x ORDER BY x) FROM gpar_log;
\set VERBOSITY default

-- Run again: a rescan launches the workers again.  A cursor, and a generic plan with a
-- parameter, are planned without workers.
SELECT check_par('SELECT s.x, y.s FROM generate_series(1, 3) s(x), LATERAL (SELECT sum(i4) + 0 AS s FROM gpar) y');
SELECT gpuagg_workers('DECLARE c CURSOR FOR SELECT kt, sum(i4) FROM gpar GROUP BY kt');
BEGIN;
DECLARE c CURSOR FOR SELECT kt, sum(i4) FROM gpar WHERE id < 100 GROUP BY kt ORDER BY kt;
FETCH 2 FROM c;
COMMIT;
PREPARE gq(int) AS SELECT kt, sum(i4) FROM gpar WHERE id > $1 GROUP BY kt;
SET plan_cache_mode = force_generic_plan;
SELECT gpuagg_workers('EXECUTE gq(100)');
EXECUTE gq(59990);
RESET plan_cache_mode;

\if :has_device
EXPLAIN (COSTS OFF) SELECT k4 % 7, count(*), sum(i4) FROM gpar WHERE id % 2 = 0 GROUP BY 1 HAVING sum(i8) > 0;
EXPLAIN (COSTS OFF) SELECT count(*), sum(i4), avg(f8) FROM gpar WHERE id % 2 = 0;
-- Rows read by the leader and its workers add up to the table's.
CREATE FUNCTION gpuagg_analyze(q text) RETURNS TABLE (launched boolean, rows_read bigint, groups bigint)
LANGUAGE plpgsql AS $$
DECLARE
  plan json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, TIMING OFF) ' || q INTO plan;
  RETURN QUERY SELECT (plan->0->'Plan'->>'Workers Launched')::int > 0,
    (plan->0->'Plan'->>'Rows Read')::bigint, (plan->0->'Plan'->>'Groups')::bigint;
END $$;
SELECT * FROM gpuagg_analyze('SELECT kt, count(*), sum(i4) FROM gpar GROUP BY kt');
SELECT * FROM gpuagg_analyze('SELECT count(*), sum(i4), avg(f8) FROM gpar');
-- A parameter (from a correlated subquery) keeps the workers away.
EXPLAIN (COSTS OFF) SELECT x, (SELECT sum(i4) FROM gpar WHERE id > x) FROM generate_series(1, 2) x;
\endif
