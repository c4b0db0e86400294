-- gpu_query_agg and gpu_query_sort: the first column of any query, streamed through a cursor,
-- against PostgreSQL's own aggregates and ORDER BY over the same query.
SELECT setseed(0.125);
-- Batches and runs of 1000 values or more go to the device where gpuext.device allows.
SET gpuext.min_gpu_elements = 1000;
CREATE TABLE qt AS
SELECT i, CASE WHEN i % 10 = 0 THEN NULL ELSE ((i::int8 * 7919) % 100003 - 50000)::int END AS n,
       CASE WHEN i % 11 = 0 THEN NULL ELSE ((i::int8 * 31337) % 1000003) / 8.0::float8 - 60000 END AS f,
       date '2000-01-01' + (i * 13) % 9000 AS d
FROM generate_series(1, 200000) i;

-- Aggregates: each column equal to PostgreSQL's over the same rows (the float sum and avg against
-- the exact sum, the values being multiples of 1/8).
SELECT a.count = p.count AS count, a.sum = p.sum AS sum, a.min = p.min::text AS min,
       a.max = p.max::text AS max, a.avg = p.avg AS avg
FROM gpu_query_agg('SELECT n FROM qt') a,
     (SELECT count(n), sum(n)::numeric, min(n), max(n), avg(n) FROM qt) p;
SELECT a.count = p.count AS count, a.sum = p.sum::float8::numeric AS sum, a.min = p.min::text AS min,
       a.max = p.max::text AS max, a.avg = (p.sum::float8 / p.count)::text::numeric AS avg
FROM gpu_query_agg('SELECT f FROM qt') a,
     (SELECT count(f), sum(f::numeric), min(f), max(f) FROM qt) p;
SELECT a.count = p.count AS count, a.sum IS NULL AS no_sum, a.min = p.min::text AS min,
       a.max = p.max::text AS max, a.avg IS NULL AS no_avg
FROM gpu_query_agg('SELECT d FROM qt WHERE i > 5') a, (SELECT count(d), min(d), max(d) FROM qt WHERE i > 5) p;
-- Three million rows, more than one batch many times over; a bigint sum past 64 bits.
SELECT a.count = p.count AS count, a.sum = p.sum AS sum, a.sum > 9223372036854775807 AS past_int64,
       a.min = p.min::text AS min, a.max = p.max::text AS max, a.avg = p.avg AS avg
FROM gpu_query_agg('SELECT g::int8 * 3074457345618 FROM generate_series(1, 3000000) g') a,
     (SELECT count(*), sum(g::int8 * 3074457345618), min(g::int8 * 3074457345618),
             max(g::int8 * 3074457345618), avg(g::int8 * 3074457345618) FROM generate_series(1, 3000000) g) p;
-- No rows, only NULLs, special floats.
SELECT * FROM gpu_query_agg('SELECT n FROM qt WHERE false');
SELECT * FROM gpu_query_agg('SELECT NULL::int FROM generate_series(1, 3)');
SELECT * FROM gpu_query_agg($$SELECT x FROM unnest('{1e100,1,-1e100}'::float8[]) x$$);
SELECT * FROM gpu_query_agg($$SELECT x FROM unnest('{3,NaN,-Infinity}'::float8[]) x$$);
-- Only the first column counts; the query runs as given (joins, expressions, parameters inlined).
SELECT count, sum FROM gpu_query_agg('SELECT n * 2, f FROM qt JOIN generate_series(1, 2) s ON true WHERE n > 0');
SELECT count(*), sum(n * 2) FROM qt JOIN generate_series(1, 2) s ON true WHERE n > 0;

-- Sorting: the same sequence as ORDER BY, ascending and descending, NULLs last and first.
SELECT (SELECT array_agg(x) FROM gpu_query_sort('SELECT n FROM qt') AS s(x integer))
       = (SELECT array_agg(n ORDER BY n) FROM qt) AS asc_same,
       (SELECT array_agg(x) FROM gpu_query_sort('SELECT n FROM qt', true) AS s(x integer))
       = (SELECT array_agg(n ORDER BY n DESC) FROM qt) AS desc_same;
SELECT (SELECT array_agg(x) FROM gpu_query_sort('SELECT f FROM qt') AS s(x float8))
       = (SELECT array_agg(f ORDER BY f) FROM qt) AS float_same,
       (SELECT array_agg(x) FROM gpu_query_sort('SELECT d FROM qt', descending => true) AS s(x date))
       = (SELECT array_agg(d ORDER BY d DESC) FROM qt) AS date_same;
SELECT x FROM gpu_query_sort($$SELECT x FROM unnest('{3,NaN,-Infinity,-0,NULL,1,-NaN}'::float8[]) x$$) AS s(x float8);
SELECT x FROM gpu_query_sort($$SELECT x FROM unnest('{3,NaN,-Infinity,-0,NULL,1}'::float8[]) x$$, true) AS s(x float8);
-- More rows than work_mem holds: the sort spills to disk, memory stays bounded, same order.
SET work_mem = '64kB';
SELECT count(*) AS rows,
       bool_and(x = 1000001 - r) AS all_in_place
FROM (SELECT x, row_number() OVER () AS r
      FROM gpu_query_sort('SELECT (1000001 - g)::int FROM generate_series(1, 1000000) g', true) AS s(x integer)) t;
RESET work_mem;

-- Bad queries and calls: each a clear error.
SELECT * FROM gpu_query_agg('SELECT');
SELECT * FROM gpu_query_agg('SELECT i::text FROM qt');
SELECT * FROM gpu_query_agg('SELEC n FROM qt');
SELECT * FROM gpu_query_agg('SELECT no_such_column FROM qt');
SELECT * FROM gpu_query_agg('DELETE FROM qt WHERE false');
SELECT * FROM gpu_query_sort('SELECT f FROM qt') AS s(x integer);
SELECT * FROM gpu_query_sort('SELECT n FROM qt') AS s(x integer, y integer);
SELECT * FROM gpu_query_sort('SELECT n FROM qt');
SELECT * FROM gpu_query_sort(NULL) AS s(x integer);

-- The query runs with the caller's privileges.
CREATE ROLE gpuext_query_nobody;
GRANT EXECUTE ON FUNCTION gpu_query_agg(text) TO gpuext_query_nobody;
SET ROLE gpuext_query_nobody;
SELECT * FROM gpu_query_agg('SELECT n FROM qt');
SELECT count(*) FROM gpu_query_sort('SELECT n FROM qt') AS s(x integer);
RESET ROLE;
REVOKE EXECUTE ON FUNCTION gpu_query_agg(text) FROM gpuext_query_nobody;
DROP ROLE gpuext_query_nobody;
