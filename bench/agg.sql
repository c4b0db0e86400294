-- gpuext's aggregates against PostgreSQL's own, in the same session over the same data.  Run by
-- bench/agg.sh, which sets the psql variables rows (table and array size), runs (timed runs per
-- side) and device (gpuext.device).
--
-- Cases, each one query per side, timed by clock_timestamp() around EXECUTE in plpgsql (every query
-- returns one row, so the wrapper costs nothing measurable); one warm-up per side, then runs
-- alternating sides, median reported; ratio = PostgreSQL ms / gpuext ms (> 1: gpuext faster).
--   array   gpu_sum(a) vs SELECT sum(x) FROM unnest(a), a = rows elements   bar: ratio >= 10
--   column  gpu_f(c) vs f(c) over a table of rows rows, f in sum avg min max count   bar: >= 0.9
--   query   gpu_query_agg('SELECT c FROM t') vs count, sum, min, max, avg of c   (no bar)
-- Types int4, int8 and float8; numeric(15,2) (n) too, with no bar (figures only).  Parallel query
-- is off on both sides (one backend against one).
\set ON_ERROR_STOP 1
\pset footer off
SET client_min_messages = warning;
SET max_parallel_workers_per_gather = 0;
CREATE SCHEMA IF NOT EXISTS gpuext_bench;
SET search_path = gpuext_bench, public;
SET gpuext.device = :'device';
SET gpuext.min_gpu_elements = 0;
SET gpuext_bench.runs = :runs;
\echo == gpuext_info() (gpuext.device = :device)
\x on
SELECT * FROM gpuext_info();
\x off

\echo == data: :rows rows
DROP TABLE IF EXISTS agg_t, agg_arr;
CREATE TABLE agg_t AS
SELECT (hashint4(g) % 1000000)::int4 AS i4,
       hashint8(g::int8) AS i8,
       (hashint4(g) / 1024.0)::float8 AS f8,
       ((hashint8(g::int8) % 100000000000000) / 100.0)::numeric(15, 2) AS n
FROM generate_series(1, :rows) g;
VACUUM ANALYZE agg_t;
-- The arrays stored uncompressed (EXTERNAL), so that reading one costs both sides the same little.
CREATE TABLE agg_arr (i4 int4[], i8 int8[], f8 float8[], n numeric[]);
ALTER TABLE agg_arr ALTER i4 SET STORAGE EXTERNAL, ALTER i8 SET STORAGE EXTERNAL, ALTER f8 SET STORAGE EXTERNAL,
  ALTER n SET STORAGE EXTERNAL;
INSERT INTO agg_arr SELECT array_agg(i4), array_agg(i8), array_agg(f8), array_agg(n) FROM agg_t;
SELECT pg_size_pretty(pg_total_relation_size('agg_t')) AS table_size,
       pg_size_pretty(pg_total_relation_size('agg_arr')) AS arrays_size;

CREATE TEMP TABLE cases (ord int, kind text, name text, gpu_q text, pg_q text, bar float8);
INSERT INTO cases
SELECT row_number() OVER (), * FROM (
  SELECT 'array', format('gpu_sum(%s[])', c), format('SELECT gpu_sum(%I) FROM agg_arr', c),
         format('SELECT sum(x) FROM agg_arr, unnest(%I) x', c), CASE WHEN c <> 'n' THEN 10.0 END
  FROM unnest('{i4,i8,f8,n}'::text[]) c
  UNION ALL
  SELECT 'column', format('gpu_%s(%s)', f, c), format('SELECT gpu_%s(%I) FROM agg_t', f, c),
         format('SELECT %s(%I) FROM agg_t', f, c), CASE WHEN c <> 'n' THEN 0.9 END
  FROM unnest('{i4,i8,f8,n}'::text[]) c, unnest('{sum,avg,min,max,count}'::text[]) f
  UNION ALL
  SELECT 'query', format('gpu_query_agg(%s)', c), format('SELECT * FROM gpu_query_agg(%L)', 'SELECT ' || c || ' FROM agg_t'),
         format('SELECT count(%1$I), sum(%1$I), min(%1$I), max(%1$I), avg(%1$I) FROM agg_t', c), NULL
  FROM unnest('{i4,i8,f8,n}'::text[]) c) s;

-- Milliseconds one query takes.
CREATE FUNCTION pg_temp.time_ms(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
  t0 timestamptz;
  r record;
BEGIN
  t0 := clock_timestamp();
  EXECUTE q INTO r;
  RETURN 1000 * extract(epoch FROM clock_timestamp() - t0);
END $$;

-- Warm-up then runs timed runs per side, alternating; the medians.
CREATE TEMP TABLE timings (ord int, side text, ms float8);
DO $$
DECLARE
  c record;
  runs int := current_setting('gpuext_bench.runs')::int;
BEGIN
  FOR c IN SELECT * FROM cases ORDER BY ord LOOP
    PERFORM pg_temp.time_ms(c.gpu_q), pg_temp.time_ms(c.pg_q);
    FOR k IN 1 .. runs LOOP
      INSERT INTO timings VALUES (c.ord, 'gpuext', pg_temp.time_ms(c.gpu_q));
      INSERT INTO timings VALUES (c.ord, 'postgres', pg_temp.time_ms(c.pg_q));
    END LOOP;
    RAISE NOTICE '% done', c.name;
  END LOOP;
END $$;

CREATE TABLE IF NOT EXISTS agg_results (ord int, kind text, name text, rows bigint, gpuext_ms float8,
                                        postgres_ms float8, ratio float8, bar float8, pass boolean);
TRUNCATE agg_results;
INSERT INTO agg_results
SELECT c.ord, c.kind, c.name, :rows, g.ms, p.ms, p.ms / g.ms, c.bar,
       CASE WHEN c.bar IS NOT NULL THEN p.ms / g.ms >= c.bar END
FROM cases c,
     LATERAL (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS ms FROM timings t
              WHERE t.ord = c.ord AND side = 'gpuext') g,
     LATERAL (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS ms FROM timings t
              WHERE t.ord = c.ord AND side = 'postgres') p;

\echo == median ms over :runs runs (ratio = postgres / gpuext)
SELECT kind, name, round(gpuext_ms::numeric, 1) AS gpuext_ms, round(postgres_ms::numeric, 1) AS postgres_ms,
       round(ratio::numeric, 2) AS ratio, bar, pass
FROM agg_results ORDER BY ord;
SELECT count(*) FILTER (WHERE pass) AS passed, count(*) FILTER (WHERE NOT pass) AS failed FROM agg_results;
