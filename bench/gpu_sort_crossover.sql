-- gpu_sort end to end (array in, sorted array out, transfers included) against
-- PostgreSQL's array_agg(x ORDER BY x) and gpuext's CPU path, in one run.
-- Medians of 7 timed calls after a warm-up; the device is opened before timing.
-- Run: psql -X -f bench/gpu_sort_crossover.sql (gpuext installed; a GPU for the device columns)
-- Optional psql variables (bench/suite.sh sets them): types (default '{int4,float8}'), sizes
-- (default 1000 and 4^5 .. 4^11), reps (timed calls, default 7), device (gpuext.device, default
-- gpu; auto runs the device columns on the CPU where no GPU is, for testing the script),
-- work_mem (default 1GB: PostgreSQL's sort of the largest arrays stays in memory, as gpu_sort's
-- does; at the default 4MB it spills to disk at the larger sizes);
-- table_only=1 leaves out the device line, so that psql --csv gives one CSV table.
\set ON_ERROR_STOP 1
\if :{?types} \else \set types '{int4,float8}' \endif
\if :{?sizes} \else \set sizes '{1000,4096,16384,65536,262144,1048576,4194304}' \endif
\if :{?reps} \else \set reps 7 \endif
\if :{?device} \else \set device gpu \endif
\if :{?work_mem} \else \set work_mem 1GB \endif
CREATE EXTENSION IF NOT EXISTS gpuext;
SET gpuext.device = :device;
SET gpuext.min_gpu_elements = 0;
SET work_mem = :'work_mem';

CREATE OR REPLACE FUNCTION pg_temp.median_ms(stmt text, reps int DEFAULT :reps)
RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
  t timestamptz;
  times float8[] := '{}';
BEGIN
  EXECUTE stmt;
  FOR i IN 1..reps LOOP
    t := clock_timestamp();
    EXECUTE stmt;
    times := times || extract(epoch FROM clock_timestamp() - t) * 1000;
  END LOOP;
  RETURN (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(times) x);
END $$;

CREATE OR REPLACE FUNCTION pg_temp.bench(typ text, nelem int)
RETURNS TABLE (elem text, n int, pg_ms numeric, cpu_ms numeric, auto_ms numeric, bitonic_ms numeric,
               quicksort_ms numeric, oddeven_ms numeric, radix_ms numeric, pg_over_auto numeric, work_mem text)
LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  DROP TABLE IF EXISTS bench_input;
  EXECUTE format('CREATE TEMP TABLE bench_input AS
                  SELECT array_agg(((random() - 0.5) * 2e9)::%s) AS a FROM generate_series(1, %s)', typ, nelem);
  SELECT pg_temp.median_ms('SELECT array_agg(x ORDER BY x) FROM bench_input, unnest(a) x') AS pg,
         pg_temp.median_ms('SELECT gpu_sort(a, false, ''cpu'') FROM bench_input') AS cpu,
         pg_temp.median_ms('SELECT gpu_sort(a) FROM bench_input') AS auto,
         pg_temp.median_ms('SELECT gpu_sort(a, false, ''bitonic'') FROM bench_input') AS bitonic,
         pg_temp.median_ms('SELECT gpu_sort(a, false, ''quicksort'') FROM bench_input') AS quicksort,
         CASE WHEN nelem <= 65536 THEN
           pg_temp.median_ms('SELECT gpu_sort(a, false, ''oddeven'') FROM bench_input') END AS oddeven,
         pg_temp.median_ms('SELECT gpu_sort(a, false, ''radix'') FROM bench_input') AS radix
    INTO r;
  RETURN QUERY SELECT typ, nelem, round(r.pg::numeric, 3), round(r.cpu::numeric, 3), round(r.auto::numeric, 3),
    round(r.bitonic::numeric, 3), round(r.quicksort::numeric, 3), round(r.oddeven::numeric, 3),
    round(r.radix::numeric, 3), round((r.pg / r.auto)::numeric, 2), current_setting('work_mem');
END $$;

\if :{?table_only}
SELECT gpuext_info() IS NOT NULL AS device_opened \gset
\else
SELECT device_name, driver_version, runtime_version, round(open_time_ms::numeric, 1) AS open_ms FROM gpuext_info();
\endif
SELECT b.* FROM unnest(:'types'::text[]) typ,
                unnest(:'sizes'::int[]) n,
                LATERAL pg_temp.bench(typ, n) b;
