-- gpu_matmul end to end from SQL: square arrays stored in a table, the product returned, with
-- gpuext.device = gpu against gpuext.device = cpu in the same run (median of 5 after a warm-up);
-- the crossover is the first n from which the device wins, beside what auto uses (src/gpu_matmul.c).
-- Run: psql -X -f bench/matmul.sql in a database with CREATE EXTENSION gpuext, on the GPU host.
\set ON_ERROR_STOP on
CREATE EXTENSION IF NOT EXISTS gpuext;
SELECT setseed(0.5);
DROP TABLE IF EXISTS mm_bench;
CREATE TABLE mm_bench AS
SELECT n, m.a::float8[] AS a8, m.b::float8[] AS b8, m.a::real[] AS a4, m.b::real[] AS b4
FROM unnest('{16,32,48,64,80,96,128,192,256,512,1024}'::int[]) n,
LATERAL (SELECT (SELECT array_agg(r ORDER BY i) FROM (
                   SELECT i, array_agg(random() * 2 - 1 ORDER BY j) AS r
                   FROM generate_series(1, n) i, generate_series(1, n) j GROUP BY i) s) AS a,
                (SELECT array_agg(r ORDER BY i) FROM (
                   SELECT i, array_agg(random() * 2 - 1 ORDER BY j) AS r
                   FROM generate_series(1, n) i, generate_series(1, n) j GROUP BY i) s) AS b) m;

-- Median milliseconds of one gpu_matmul over the stored arrays of size n and type typ (4 or 8).
CREATE OR REPLACE FUNCTION mm_time(device text, typ int, size int) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
  t0 timestamptz;
  ts float8[] := '{}';
  k int;
BEGIN
  PERFORM set_config('gpuext.device', device, true);
  FOR r IN 0..5 LOOP
    t0 := clock_timestamp();
    EXECUTE format('SELECT cardinality(gpu_matmul(a%s, b%s)) FROM mm_bench WHERE n = $1', typ, typ)
      INTO k USING size;
    IF r > 0 THEN
      ts := ts || extract(epoch FROM clock_timestamp() - t0)::float8 * 1000;
    END IF;
  END LOOP;
  RETURN (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(ts) x);
END $$;

CREATE TEMP TABLE mm_result AS
SELECT CASE t WHEN 4 THEN 'real' ELSE 'double precision' END AS type, n,
       mm_time('cpu', t, n) AS cpu_ms, mm_time('gpu', t, n) AS gpu_ms
FROM mm_bench, unnest('{4,8}'::int[]) t ORDER BY t, n;

SELECT (SELECT device_name FROM gpuext_info()) AS device, version();
SELECT type, n, (n::bigint) ^ 3 AS fmas, round(cpu_ms::numeric, 3) AS cpu_ms, round(gpu_ms::numeric, 3) AS gpu_ms,
       round((cpu_ms / gpu_ms)::numeric, 2) AS gpu_speedup
FROM mm_result ORDER BY type, n;
-- The crossover: the smallest n from which the device is faster at every larger n measured.
SELECT type, min(n) AS crossover_n, min(n)::bigint ^ 3 AS crossover_fmas,
       CASE type WHEN 'real' THEN 2 ^ 22 ELSE 2 ^ 21 END AS auto_min_fmas
FROM mm_result r
WHERE NOT EXISTS (SELECT 1 FROM mm_result s WHERE s.type = r.type AND s.n >= r.n AND s.gpu_ms >= s.cpu_ms)
GROUP BY type ORDER BY type;
DROP TABLE mm_bench;
