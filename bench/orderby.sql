-- ORDER BY through the GpuSort plan node (gpuext.enable_sort = on) against PostgreSQL's own Sort
-- (off), in the same session, with the same memory on both sides.  Run by bench/orderby.sh, which
-- sets the psql variables
--   rows (table size), runs (timed runs per side), device (gpuext.device), min_rows
--   (gpuext.sort_min_rows for the on-side, '' = the server's setting), run_defaults and run_large
--   (which configurations), large_mem (work_mem of the large configuration).
--
-- Memory: both sides get the same work_mem, and gpuext.sort_work_mem is -1, so GpuSort's budget is
-- that same work_mem.  Past it GpuSort keeps its rows in device memory (gpuext.sort_rows_on_device,
-- the server's setting) while Sort spills to disk: at work_mem = 4MB PostgreSQL sorts 10M rows on
-- disk and GpuSort on the device.
--
-- Two timings:
--   explain  EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON, COSTS OFF, FORMAT JSON) <query>, reading
--            "Execution Time".  The complete plan runs: the sort consumes its whole input and every
--            output row is pulled up to the top node, then discarded instead of being converted to
--            text and sent, so the time is that of the scan and the sort.  TIMING OFF leaves only a
--            per-row counter in each node; planning is not included.  (SELECT count(*) FROM (<q>
--            OFFSET 0) would let the planner drop the ORDER BY; a plpgsql loop costs more per row
--            than the sort.)
--   copy     psql's \copy (<query>) to '/dev/null', between a clock_timestamp() read in the
--            statement before and one in the statement after: every row is converted to text, sent
--            to psql over the connection and written out, as a client receives a result.
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
\echo == server settings that apply to both sides
SELECT name, setting, unit FROM pg_settings
WHERE name IN ('shared_buffers', 'max_parallel_workers_per_gather', 'jit', 'temp_tablespaces') ORDER BY name;

-- The tables: t with :rows rows (kept when it already has them), small with 1,000, the same shape.
CREATE FUNCTION pg_temp.load(tab text, n bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('DROP TABLE IF EXISTS gpuext_bench.%I', tab);
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
SELECT count(*) = 6 AS have_t FROM pg_attribute
WHERE attrelid = to_regclass('gpuext_bench.t') AND attname IN ('id', 'a', 'b', 'c', 'd', 'pad') \gset
\if :have_t
SELECT count(*) = :rows AS keep_t FROM gpuext_bench.t \gset
\else
\set keep_t false
\endif
\if :keep_t
\echo == t already holds :rows rows: kept
\else
\echo == loading t (:rows rows)
SELECT pg_temp.load('t', :rows) \g /dev/null
VACUUM (FREEZE, ANALYZE) gpuext_bench.t;
\endif
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

-- Results: one row per configuration, query and timing.  A configuration run again replaces its rows.
SELECT to_regclass('gpuext_bench.orderby_results') IS NOT NULL
       AND NOT EXISTS (SELECT FROM pg_attribute WHERE attrelid = to_regclass('gpuext_bench.orderby_results')
                         AND attname = 'config') AS old_results \gset
\if :old_results
DROP TABLE gpuext_bench.orderby_results;
\endif
CREATE TABLE IF NOT EXISTS gpuext_bench.orderby_results (config_ord int, config text, work_mem text, sort_work_mem text,
                              ord int, "case" text, timing text, rows bigint, on_ms numeric, off_ms numeric,
                              speedup numeric, gpusort bool, query text);

CREATE FUNCTION pg_temp.record(ord int, name text, timing text, nrows bigint, q text, on_t float8[], off_t float8[],
                               used bool) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  on_med float8 := (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(on_t) x);
  off_med float8 := (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(off_t) x);
BEGIN
  INSERT INTO orderby_results VALUES (current_setting('orderby_bench.config_ord')::int,
    current_setting('orderby_bench.config'), current_setting('work_mem'),
    coalesce(current_setting('gpuext.sort_work_mem', true), ''), ord, name, timing, nrows,
    round(on_med::numeric, 3), round(off_med::numeric, 3), round((off_med / nullif(on_med, 0))::numeric, 2), used, q);
END $$;

-- One query under EXPLAIN ANALYZE: a warm-up per side, then runs alternating on and off; medians.
CREATE FUNCTION pg_temp.bench(ord int, name text, nrows bigint, q text, runs int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  on_t float8[] := '{}';
  off_t float8[] := '{}';
  used bool;
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
  PERFORM pg_temp.record(ord, name, 'explain', nrows, q, on_t, off_t, used);
END $$;

-- The configurations: PostgreSQL's default work_mem, then one large enough for both sides.
\set config_ord 1
\set config defaults
\set work_mem 4MB
\if :run_defaults
\ir orderby_run.sql
\endif
\set config_ord 2
\set config large
\set work_mem :large_mem
\if :run_large
\ir orderby_run.sql
\endif

\echo == all configurations (ms; speedup = off_ms / on_ms)
SELECT config, work_mem, sort_work_mem, "case", timing, rows, on_ms, off_ms, speedup, gpusort
FROM orderby_results ORDER BY config_ord, ord;
