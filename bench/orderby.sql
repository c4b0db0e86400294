-- ORDER BY through the GpuSort plan node (gpuext.enable_sort = on) against PostgreSQL's own Sort
-- (off), in the same session.  Run by bench/orderby.sh, which sets the psql variables
--   rows (table size), runs (timed runs per side), device (gpuext.device for the on-side),
--   min_rows (gpuext.sort_min_rows for the on-side, '' = the server's setting).
--
-- How a query is timed: EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON, COSTS OFF, FORMAT JSON) <query>,
-- reading "Execution Time".  EXPLAIN ANALYZE runs the complete plan: the sort consumes its whole
-- input and every output row is pulled up to the top plan node, but then the rows are discarded
-- instead of being converted to text and sent to the client, so the time is that of the scan and
-- the sort, not of psql.  TIMING OFF leaves only a per-row counter in each node (no clock reads);
-- planning is not included.  Wrappers were rejected: SELECT count(*) FROM (<q> OFFSET 0) lets the
-- planner drop the ORDER BY, and a plpgsql FOR loop adds a per-row cost larger than the sort's.
\set ON_ERROR_STOP 1
\pset footer off
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
CREATE SCHEMA IF NOT EXISTS gpuext_bench;
SET search_path = gpuext_bench, public;

-- The device, and whether this gpuext has the GpuSort node.
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'gpuext') AS have_ext \gset
\if :have_ext
SET gpuext.device = :'device';
\echo == gpuext_info() (gpuext.device = :device)
\x on
SELECT * FROM gpuext_info();
\x off
\else
\echo == gpuext is not installed
\endif
SELECT EXISTS (SELECT FROM pg_settings WHERE name = 'gpuext.enable_sort') AS have_node \gset
\if :have_node
\else
\echo == NOTE: gpuext.enable_sort is not defined (no GpuSort node in this gpuext): both sides run the PostgreSQL Sort
\endif
SELECT set_config('orderby_bench.have_node', :'have_node', false) \g /dev/null
SELECT set_config('orderby_bench.min_rows', :'min_rows', false) \g /dev/null

-- The tables: t with :rows rows, small with 1,000, the same shape.
\echo == loading t (:rows rows) and small (1000 rows)
DROP TABLE IF EXISTS gpuext_bench.t, gpuext_bench.small, gpuext_bench.orderby_results;
CREATE FUNCTION pg_temp.load(tab text, n bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format($q$
    CREATE UNLOGGED TABLE gpuext_bench.%I AS
    SELECT i AS id,
           (floor(random() * 4294967296) - 2147483648)::int4 AS a,
           floor((random() - 0.5) * 1.8e19)::int8 AS b,
           CASE WHEN random() < 0.01 THEN NULL ELSE (random() - 0.5) * 1e6 END AS c,
           floor(random() * 100)::int4 AS d,
           md5(i::text) || lpad(i::text, 8, '0') AS pad
    FROM generate_series(1::int8, %s) i$q$, tab, n);
END $$;
SELECT pg_temp.load('t', :rows) \g /dev/null
VACUUM (FREEZE, ANALYZE) gpuext_bench.t;
SELECT pg_temp.load('small', 1000) \g /dev/null
VACUUM (FREEZE, ANALYZE) gpuext_bench.small;
SELECT pg_size_pretty(pg_table_size('t')) AS t_size, (SELECT count(*) FROM t) AS t_rows,
       (SELECT count(*) FROM t WHERE c IS NULL) AS t_null_c;

-- The two sides.  The off-side turns the node off; everything else is the same.
CREATE FUNCTION pg_temp.side(gpusort bool) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('orderby_bench.have_node')::bool THEN
    PERFORM set_config('gpuext.enable_sort', CASE WHEN gpusort THEN 'on' ELSE 'off' END, false);
    IF current_setting('orderby_bench.min_rows') <> '' THEN
      PERFORM set_config('gpuext.sort_min_rows', current_setting('orderby_bench.min_rows'), false);
    END IF;
  END IF;
END $$;

CREATE FUNCTION pg_temp.exec_ms(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
  plan json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON, COSTS OFF, FORMAT JSON) ' || q INTO plan;
  RETURN (plan -> 0 ->> 'Execution Time')::float8;
END $$;

CREATE FUNCTION pg_temp.uses_gpusort(q text) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF line LIKE '%Custom Scan (GpuSort)%' THEN RETURN true; END IF;
  END LOOP;
  RETURN false;
END $$;

-- One warm-up per side, then runs alternating on and off; medians.
CREATE TABLE gpuext_bench.orderby_results (work_mem text, ord int, "case" text, rows bigint, on_ms numeric, off_ms numeric,
                              speedup numeric, gpusort bool, query text);
-- GpuSort may hold every row in memory; PostgreSQL's Sort gets work_mem (set per configuration below).
SET gpuext.sort_work_mem = '16GB';
CREATE FUNCTION pg_temp.bench(ord int, name text, nrows bigint, q text, runs int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  on_t float8[] := '{}';
  off_t float8[] := '{}';
  used bool;
  on_med float8;
  off_med float8;
BEGIN
  PERFORM pg_temp.side(true);
  used := pg_temp.uses_gpusort(q);
  PERFORM pg_temp.exec_ms(q);
  PERFORM pg_temp.side(false);
  PERFORM pg_temp.exec_ms(q);
  FOR i IN 1..runs LOOP
    PERFORM pg_temp.side(true);
    on_t := on_t || pg_temp.exec_ms(q);
    PERFORM pg_temp.side(false);
    off_t := off_t || pg_temp.exec_ms(q);
  END LOOP;
  on_med := (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(on_t) x);
  off_med := (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(off_t) x);
  INSERT INTO orderby_results VALUES (current_setting('work_mem'), ord, name, nrows, round(on_med::numeric, 3), round(off_med::numeric, 3),
    round((off_med / nullif(on_med, 0))::numeric, 2), used, q);
END $$;

-- PostgreSQL as configured by default (work_mem 4MB: its Sort spills to disk), then with work_mem 4GB
-- (one_config: the first only).
\if :one_config
\set work_mem 4MB
\set show_plan true
\ir orderby_run.sql
\else
\set work_mem 4MB
\set show_plan false
\ir orderby_run.sql
\set work_mem 4GB
\set show_plan true
\ir orderby_run.sql
\endif
