-- The aggregates' device paths at sizes that need several batches: column aggregates past one
-- batch (GPUEXT_REDUCE_BATCH, 2^20 values) per group, large arrays, gpu_query_agg and
-- gpu_query_sort over millions of rows, placement independence (gpuext.device = cpu gives the
-- same bits), determinism, and cancel.  Every result is checked against PostgreSQL's own over
-- the same rows, so the expected output is the same on every build and placement.
SET gpuext.min_gpu_elements = 1000;
SELECT setseed(0.5);

-- 2,500,000 rows (about 10% NULL per column): in the single group, more than two full batches.
--   g      i % 3: three groups of about 833,000 rows, below one batch each
--   i4     the whole int4 range
--   i8     near +-9.2e18, 60% positive: the sum is far past int64
--   f8, f4 multiples of 1/8 (|f8| <= 1e6, |f4| <= 1000), so the exact sum is known over numeric
--   s8     like f8 with NaN, Infinity and -0 at a few rows
CREATE TABLE big (i int4, g int4, i4 int4, i8 int8, f8 float8, f4 real, s8 float8);
INSERT INTO big
SELECT i, i % 3,
  CASE WHEN random() < 0.1 THEN NULL ELSE floor(random() * 4294967296) - 2147483648 END,
  CASE WHEN random() < 0.1 THEN NULL
       WHEN random() < 0.6 THEN 9223372036854775807 - floor(random() * 1e15)::int8
       ELSE -9223372036854775807 + floor(random() * 1e15)::int8 END,
  CASE WHEN random() < 0.1 THEN NULL ELSE (floor(random() * 16000001) - 8000000) / 8 END,
  CASE WHEN random() < 0.1 THEN NULL ELSE (floor(random() * 16001) - 8000) / 8 END,
  CASE WHEN i = 1234567 THEN 'NaN' WHEN i = 2345678 THEN 'Infinity' WHEN i % 100000 = 7 THEN '-0'
       WHEN random() < 0.1 THEN NULL ELSE (floor(random() * 16000001) - 8000000) / 8 END
FROM generate_series(1, 2500000) i;
ANALYZE big;

-- big_check: gpuext's aggregates of column c against PostgreSQL's (float sums against the exact
-- sum over numeric rounded to the type), overall and per group g.
CREATE FUNCTION big_check(c text)
RETURNS TABLE (groups bigint, sum boolean, avg boolean, min boolean, max boolean, count boolean)
LANGUAGE plpgsql AS $$
DECLARE
  t regtype := (SELECT atttypid FROM pg_attribute WHERE attrelid = 'big'::regclass AND attname = c);
  fl boolean := t IN ('real', 'double precision');
  ref_sum text := CASE WHEN fl THEN format('sum(%I::numeric)::%s', c, t) ELSE format('sum(%I)', c) END;
  ref_avg text := CASE WHEN fl THEN format('sum(%I::numeric)::float8 / count(%1$I)', c) ELSE format('avg(%I)', c) END;
BEGIN
  RETURN QUERY EXECUTE format($q$
    SELECT count(*), bool_and(s), bool_and(a), bool_and(mi), bool_and(ma), bool_and(co) FROM (
      SELECT gpu_sum(%1$I) IS NOT DISTINCT FROM %2$s AS s, gpu_avg(%1$I) IS NOT DISTINCT FROM %3$s AS a,
             gpu_min(%1$I) IS NOT DISTINCT FROM min(%1$I) AS mi, gpu_max(%1$I) IS NOT DISTINCT FROM max(%1$I) AS ma,
             gpu_count(%1$I) = count(%1$I) AS co
      FROM big GROUP BY GROUPING SETS ((), (g))) r$q$, c, ref_sum, ref_avg);
END $$;
SELECT c, k.* FROM unnest('{i4,i8,f8,f4}'::text[]) c, LATERAL big_check(c) k;
-- NaN and Infinity decide s8's sum and average; -0 and NaN do not disturb min and max; past
-- row 1,500,000 there is Infinity and no NaN.
SELECT gpu_sum(s8) AS sum, gpu_avg(s8) AS avg, gpu_min(s8) = min(s8) AS min, gpu_max(s8) AS max,
       gpu_count(s8) = count(s8) AS count
FROM big;
SELECT gpu_sum(s8) AS sum, gpu_max(s8) AS max FROM big WHERE i > 1500000;
-- numeric: i4 as numeric in device batches, with larger display scales only late (the sum
-- rescaled between batches) and, in group 2, a value past 38 digits late (the CPU's numeric sum
-- from there on); sums, averages, min and max as text, display scale included.
SELECT count(*) AS groups, bool_and(s) AS sum, bool_and(a) AS avg, bool_and(mi) AS min, bool_and(ma) AS max
FROM (SELECT gpu_sum(n)::text IS NOT DISTINCT FROM sum(n)::text AS s, gpu_avg(n)::text IS NOT DISTINCT FROM avg(n)::text AS a,
             gpu_min(n)::text IS NOT DISTINCT FROM min(n)::text AS mi, gpu_max(n)::text IS NOT DISTINCT FROM max(n)::text AS ma
      FROM (SELECT g, CASE WHEN i = 2000000 THEN 0.5 WHEN i = 2300000 THEN 0.000001
                           WHEN i = 2400002 THEN 1e45 ELSE i4::numeric END AS n FROM big) b
      GROUP BY GROUPING SETS ((), (g))) r;
-- FILTER on the big group: about 1.1 million values pass, one full batch and a rest.
SELECT gpu_sum(i8) FILTER (WHERE i % 2 = 0) = sum(i8) FILTER (WHERE i % 2 = 0) AS sum,
       gpu_min(f8) FILTER (WHERE i % 2 = 0) = min(f8) FILTER (WHERE i % 2 = 0) AS min,
       gpu_count(f4) FILTER (WHERE i % 2 = 0) = count(f4) FILTER (WHERE i % 2 = 0) AS count
FROM big;

-- As window aggregates: the final function runs at the end of each peer group and the state goes
-- on filling afterwards, so each running result covers every batch sent before it.
SELECT i / 1000000 AS peers, count(*), bool_and(gs IS NOT DISTINCT FROM ps) AS sum,
       bool_and(gm IS NOT DISTINCT FROM pm) AS max, bool_and(gc = pc) AS count
FROM (SELECT i, gpu_sum(i8) OVER w AS gs, sum(i8) OVER w AS ps, gpu_max(f8) OVER w AS gm,
             max(f8) OVER w AS pm, gpu_count(f4) OVER w AS gc, count(f4) OVER w AS pc
      FROM big WINDOW w AS (ORDER BY i / 1000000)) s
GROUP BY 1 ORDER BY 1;

-- Many small groups (hashed and sorted), each below gpuext.min_gpu_elements.
SELECT count(*) AS groups, bool_and(s) AS sum, bool_and(m) AS min_max FROM (
  SELECT gpu_sum(i8) = sum(i8) AS s, gpu_min(i4) = min(i4) AND gpu_max(f8) = max(f8) AS m
  FROM big WHERE i <= 200000 GROUP BY i % 1000) r;

-- Placement independence and determinism: the same bits with gpuext.device = cpu, and twice over.
CREATE TEMP TABLE placed AS
SELECT float8send(gpu_sum(f8)) AS f8_sum, float8send(gpu_avg(f8)) AS f8_avg, float4send(gpu_sum(f4)) AS f4_sum,
       float8send(gpu_avg(f4)) AS f4_avg, float8send(gpu_min(s8)) AS s8_min, gpu_sum(i8)::text AS i8_sum,
       float8send(gpu_sum(array_agg(f8))) AS f8_array_sum
FROM big;
SET gpuext.device = cpu;
CREATE TEMP TABLE on_cpu AS
SELECT float8send(gpu_sum(f8)) AS f8_sum, float8send(gpu_avg(f8)) AS f8_avg, float4send(gpu_sum(f4)) AS f4_sum,
       float8send(gpu_avg(f4)) AS f4_avg, float8send(gpu_min(s8)) AS s8_min, gpu_sum(i8)::text AS i8_sum,
       float8send(gpu_sum(array_agg(f8))) AS f8_array_sum
FROM big;
RESET gpuext.device;
SELECT (SELECT p FROM placed p) = (SELECT c FROM on_cpu c) AS same_bits_as_cpu,
       (SELECT p FROM placed p) = (SELECT ROW(float8send(gpu_sum(f8)), float8send(gpu_avg(f8)),
                                              float4send(gpu_sum(f4)), float8send(gpu_avg(f4)),
                                              float8send(gpu_min(s8)), gpu_sum(i8)::text,
                                              float8send(gpu_sum(array_agg(f8))))::placed FROM big) AS same_bits_again;

-- Arrays of 2,000,000 elements (NULLs included), against PostgreSQL over the elements.
SELECT gpu_sum(a) = (SELECT sum(x) FROM unnest(a) x) AS sum,
       gpu_avg(a) = (SELECT avg(x) FROM unnest(a) x) AS avg,
       gpu_min(a) = (SELECT min(x) FROM unnest(a) x) AS min,
       gpu_max(a) = (SELECT max(x) FROM unnest(a) x) AS max,
       gpu_count(a) = (SELECT count(x) FROM unnest(a) x) AS count
FROM (SELECT array_agg(i8) AS a FROM big WHERE i <= 2000000) s;
SELECT gpu_sum(a) = (SELECT sum(x::numeric)::float8 FROM unnest(a) x) AS sum,
       gpu_min(a) = (SELECT min(x) FROM unnest(a) x) AS min,
       gpu_max(a) = (SELECT max(x) FROM unnest(a) x) AS max
FROM (SELECT array_agg(f8) AS a FROM big WHERE i <= 2000000) s;

-- Parallel plans over big: partial states batched in the workers, flushed when serialized.
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT gpu_sum(i8), gpu_sum(f8) FROM big;
SELECT c, k.* FROM unnest('{i8,f8}'::text[]) c, LATERAL big_check(c) k;
SELECT (SELECT p FROM placed p) = (SELECT ROW(float8send(gpu_sum(f8)), float8send(gpu_avg(f8)),
                                              float4send(gpu_sum(f4)), float8send(gpu_avg(f4)),
                                              float8send(gpu_min(s8)), gpu_sum(i8)::text,
                                              float8send(gpu_sum(array_agg(f8))))::placed FROM big) AS parallel_same_bits;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- gpu_query_agg over 2.5 million rows (several batches, fetched while the previous one reduces).
SELECT a.count = p.count AS count, a.sum = p.sum AS sum, a.min = p.min::text AS min,
       a.max = p.max::text AS max, a.avg = p.avg AS avg
FROM gpu_query_agg('SELECT i8 FROM big') a, (SELECT count(i8), sum(i8), min(i8), max(i8), avg(i8) FROM big) p;
SELECT a.count = p.count AS count, a.sum = p.sum::float8::numeric AS sum, a.min = p.min::text AS min,
       a.max = p.max::text AS max
FROM gpu_query_agg('SELECT f8 FROM big') a, (SELECT count(f8), sum(f8::numeric), min(f8), max(f8) FROM big) p;
SELECT count, sum, max FROM gpu_query_agg('SELECT s8 FROM big');
-- numeric: a larger display scale in the second batch, while the first is on the device (the
-- batches merged, then the sum rescaled), and another in the third.
SELECT a.count = p.count AS count, a.sum::text = p.sum::text AS sum, a.min = p.min::text AS min,
       a.max = p.max::text AS max, a.avg::text = p.avg::text AS avg
FROM gpu_query_agg('SELECT CASE WHEN i = 1500000 THEN 0.5 WHEN i = 2300000 THEN 0.000001 ELSE i4::numeric END FROM big') a,
     (SELECT count(n), sum(n), min(n), max(n), avg(n)
      FROM (SELECT CASE WHEN i = 1500000 THEN 0.5 WHEN i = 2300000 THEN 0.000001 ELSE i4::numeric END AS n FROM big) b) p;
SELECT a.count = p.count AS count, a.sum = p.sum AS sum, a.min = p.min::text AS min, a.max = p.max::text AS max
FROM gpu_query_agg('SELECT i4 FROM big ORDER BY i DESC') a, (SELECT count(i4), sum(i4), min(i4), max(i4) FROM big) p;

-- gpu_query_sort: the same sequence as ORDER BY, with runs held in memory and on temporary tapes.
SET gpuext.sort_work_mem = '1MB';
SELECT (SELECT array_agg(x) FROM gpu_query_sort('SELECT i4 FROM big WHERE i <= 400000') AS s(x int4))
       = (SELECT array_agg(i4 ORDER BY i4) FROM big WHERE i <= 400000) AS int4_asc,
       (SELECT array_agg(x) FROM gpu_query_sort('SELECT i8 FROM big WHERE i <= 400000', true) AS s(x int8))
       = (SELECT array_agg(i8 ORDER BY i8 DESC) FROM big WHERE i <= 400000) AS int8_desc,
       (SELECT array_agg(x) FROM gpu_query_sort('SELECT s8 FROM big WHERE i BETWEEN 1000000 AND 1400000') AS s(x float8))
       = (SELECT array_agg(s8 ORDER BY s8) FROM big WHERE i BETWEEN 1000000 AND 1400000) AS float8_asc,
       (SELECT array_agg(x) FROM gpu_query_sort('SELECT f4 FROM big WHERE i <= 400000', true) AS s(x real))
       = (SELECT array_agg(f4 ORDER BY f4 DESC) FROM big WHERE i <= 400000) AS real_desc;
SELECT (SELECT array_agg(x) FROM gpu_query_sort($$SELECT date '2000-01-01' + i4 % 100000 FROM big WHERE i <= 300000$$, true) AS s(x date))
       = (SELECT array_agg(date '2000-01-01' + i4 % 100000 ORDER BY date '2000-01-01' + i4 % 100000 DESC)
          FROM big WHERE i <= 300000) AS date_desc,
       (SELECT array_agg(x) FROM gpu_query_sort($$SELECT timestamp '2000-01-01' + i4 * interval '1 ms' FROM big WHERE i <= 300000$$) AS s(x timestamp))
       = (SELECT array_agg(timestamp '2000-01-01' + i4 * interval '1 ms' ORDER BY timestamp '2000-01-01' + i4 * interval '1 ms')
          FROM big WHERE i <= 300000) AS timestamp_asc;
RESET gpuext.sort_work_mem;
-- NULLs last ascending and first descending, NaN above Infinity, -0 beside 0.
SELECT array_agg(CASE WHEN x = 0 THEN '0' ELSE x::text END) AS ascending
FROM gpu_query_sort($$SELECT x FROM unnest('{3,NULL,NaN,-Infinity,-0,0,NULL,Infinity,-NaN,-1}'::float8[]) x$$) AS s(x float8);
SELECT array_agg(CASE WHEN x = 0 THEN '0' ELSE x::text END) AS descending
FROM gpu_query_sort($$SELECT x FROM unnest('{3,NULL,NaN,-Infinity,-0,0,NULL,Infinity,-NaN,-1}'::float8[]) x$$, true) AS s(x float8);
SELECT count(*), count(x) FROM gpu_query_sort('SELECT NULL::int FROM generate_series(1, 5000)') AS s(x int);
SELECT count(*) FROM gpu_query_sort('SELECT 1 WHERE false') AS s(x int);

-- A cancelled statement leaves no device memory behind (batches in flight included).
SET statement_timeout = '300ms';
SELECT * FROM gpu_query_agg('SELECT g FROM generate_series(1, 200000000) g');
SELECT count(*) FROM gpu_query_sort('SELECT g FROM generate_series(1, 200000000) g') AS s(x int);
SELECT gpu_sum(g) FROM generate_series(1, 200000000) g;
RESET statement_timeout;
SELECT device_bytes FROM gpuext_info();
