-- The gpuext demo (test/demo.sh runs it on a throwaway server).
\pset footer off
CREATE EXTENSION IF NOT EXISTS gpuext;
\echo '== where gpuext runs'
SELECT gpu_kernels, device_state, coalesce(device_name, state_detail) AS device,
       round(open_time_ms::numeric, 1) AS open_ms
FROM gpuext_info();

\echo '== sample data: 2 million float8 readings, 1% NULL, a few NaN and infinities'
CREATE TABLE readings AS
SELECT CASE WHEN random() < 0.01 THEN NULL
            WHEN random() < 0.001 THEN 'NaN'::float8
            WHEN random() < 0.001 THEN '-Infinity'::float8
            ELSE (random() - 0.5) * 1e6 END AS x
FROM generate_series(1, 2000000);

\timing on
\echo '== PostgreSQL: array_agg(x ORDER BY x)'
CREATE TEMP TABLE by_postgres AS SELECT array_agg(x ORDER BY x) AS a FROM readings;
\echo '== gpuext: gpu_sort(array_agg(x))'
CREATE TEMP TABLE by_gpuext AS SELECT gpu_sort(array_agg(x)) AS a FROM readings;
\echo '== the sort alone, on an array built once: gpu_sort(a) against unnest + ORDER BY'
CREATE TEMP TABLE readings_array AS SELECT array_agg(x) AS a FROM readings;
SELECT cardinality(array_agg(x ORDER BY x)) FROM readings_array, unnest(a) x;
SELECT cardinality(gpu_sort(a)) FROM readings_array;
\timing off

\echo '== same answer, element for element (NULLs last, NaN above every number)'
SELECT p.a = g.a AS identical, cardinality(g.a) AS elements,
       g.a[1] AS first, g.a[cardinality(g.a) - 25000] AS near_end
FROM by_postgres p, by_gpuext g;
SELECT gpu_sort('{3,NaN,-Infinity,-0,NULL,1}'::float8[]) AS ascending,
       gpu_sort('{3,NaN,-Infinity,-0,NULL,1}'::float8[], true) AS descending;
