-- gpu_sum, gpu_avg, gpu_min and gpu_max over numeric: exact, as PostgreSQL's own sum, avg, min
-- and max, display scale included, on arrays, columns and gpu_query_agg, on every placement.
-- Every result is compared with PostgreSQL's over the same values in the same query, as text
-- (so that 1.50 and 1.5 differ), so the expected output is the same on every build and placement.
SET gpuext.min_gpu_elements = 0;
SET max_parallel_workers_per_gather = 0;
SELECT setseed(0.19);

-- nt: groups 0..6, 60,000 random values of scales 0 to 12, magnitudes up to 1e20, both signs,
-- 10% NULL; then groups of special shapes, in insertion order (i):
--   100  5,000 values of scale 2, then larger scales late (the sum and batches rescaled)
--   101  4,000 values near 1e25 of scale 2, then one of scale 20: the rescaled sum passes 128 bits
--   200  values and NaN           201  values and Infinity       202  Infinity and -Infinity
--   203  -Infinity only            204  NaN and Infinity           205  NULLs only
--   206  one value                 207  38-digit integers (the sum passes 128 bits)
--   208  3,000 values of 38 digits at scale 10 (a device batch's sum passes 128 bits)
--   209  values past 38 digits (the CPU's numeric sum)
--   210  equal values of different display scales (min and max keep the later one, as PostgreSQL)
--   211  tiny values of scale 30 beside integers      212  zeros of several scales
--   213  3,000 negative values of 38 digits (a negative sum past 128 bits)
CREATE TABLE nt (i serial, g int, x numeric);
INSERT INTO nt (g, x)
SELECT n % 7, CASE WHEN random() < 0.1 THEN NULL
                   ELSE round(((random() - 0.5) * 10 ^ floor(random() * 21))::numeric, (n * 7) % 13) END
FROM generate_series(1, 60000) n;
INSERT INTO nt (g, x) SELECT 100, round(((random() - 0.5) * 1e6)::numeric, 2) FROM generate_series(1, 5000);
INSERT INTO nt (g, x) VALUES (100, 0.1234567), (100, -3.5), (100, 12345.000000001);
INSERT INTO nt (g, x) SELECT 101, 1e25 + round((random() * 1e6)::numeric, 2) FROM generate_series(1, 4000);
INSERT INTO nt (g, x) VALUES (101, 0.00000000000000000001), (101, 7);
INSERT INTO nt (g, x) VALUES (200, 1.5), (200, 'NaN'), (200, -2),
  (201, 1.5), (201, 'Infinity'), (201, 3.25),
  (202, 'Infinity'), (202, 1), (202, '-Infinity'),
  (203, '-Infinity'),
  (204, 'Infinity'), (204, 'NaN'), (204, 2),
  (205, NULL), (205, NULL),
  (206, 1.50);
INSERT INTO nt (g, x) SELECT 207, CASE WHEN n % 3 = 0 THEN -99999999999999999999999999999999999999
                                       ELSE 99999999999999999999999999999999999999 END
FROM generate_series(1, 10) n;
INSERT INTO nt (g, x) SELECT 208, 9999999999999999999999999999.9999999999 - n FROM generate_series(1, 3000) n;
INSERT INTO nt (g, x) VALUES (209, 1.5), (209, 1e40), (209, 123456789012345678901234567890123456789.5),
  (209, -1e50), (209, 2.25), (209, 0.000000000000000000000000000000000000000001);
INSERT INTO nt (g, x) VALUES (210, 1.5), (210, 1.50), (210, 2), (210, 1.500), (210, 2.0), (210, 2.00),
  (210, 1.50);
INSERT INTO nt (g, x) VALUES (211, 1e-30), (211, 5), (211, -2e-30), (211, 100);
INSERT INTO nt (g, x) VALUES (212, 0), (212, 0.00), (212, -0.000), (212, 0.0);
INSERT INTO nt (g, x) SELECT 213, -9999999999999999999999999999.9999999999 + n FROM generate_series(1, 3000) n;
ANALYZE nt;

-- num_check: gpuext's aggregates of nt.x against PostgreSQL's as text, overall and per group,
-- with the rows in each group's insertion order.
CREATE FUNCTION num_check(filter text DEFAULT 'true')
RETURNS TABLE (groups bigint, sum boolean, avg boolean, min boolean, max boolean, count boolean)
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE format($q$
    SELECT count(*), bool_and(s), bool_and(a), bool_and(mi), bool_and(ma), bool_and(co) FROM (
      SELECT gpu_sum(x)::text IS NOT DISTINCT FROM sum(x)::text AS s,
             gpu_avg(x)::text IS NOT DISTINCT FROM avg(x)::text AS a,
             gpu_min(x)::text IS NOT DISTINCT FROM min(x)::text AS mi,
             gpu_max(x)::text IS NOT DISTINCT FROM max(x)::text AS ma,
             gpu_count(x) = count(x) AS co
      FROM (SELECT * FROM nt WHERE %s ORDER BY i) o GROUP BY GROUPING SETS ((), (g))) r$q$, filter);
END $$;

-- Column aggregates.
SELECT * FROM num_check();
-- The same rows as arrays: one per group, in insertion order.
CREATE TABLE nt_arrays AS SELECT g, array_agg(x ORDER BY i) AS a FROM nt GROUP BY g;
SELECT count(*) AS groups,
       bool_and(gpu_sum(a)::text IS NOT DISTINCT FROM (SELECT sum(x)::text FROM unnest(a) x)) AS sum,
       bool_and(gpu_avg(a)::text IS NOT DISTINCT FROM (SELECT avg(x)::text FROM unnest(a) x)) AS avg,
       bool_and(gpu_min(a)::text IS NOT DISTINCT FROM (SELECT min(x)::text FROM unnest(a) x)) AS min,
       bool_and(gpu_max(a)::text IS NOT DISTINCT FROM (SELECT max(x)::text FROM unnest(a) x)) AS max,
       bool_and(gpu_count(a) = (SELECT count(x) FROM unnest(a) x)) AS count
FROM nt_arrays;
-- gpu_query_agg over each group's rows.
SELECT count(*) AS groups,
       bool_and(q.count = p.count) AS count, bool_and(q.sum::text IS NOT DISTINCT FROM p.sum::text) AS sum,
       bool_and(q.min IS NOT DISTINCT FROM p.min::text) AS min, bool_and(q.max IS NOT DISTINCT FROM p.max::text) AS max,
       bool_and(q.avg::text IS NOT DISTINCT FROM p.avg::text) AS avg
FROM (SELECT g, count(x), sum(x), min(x), max(x), avg(x) FROM (SELECT * FROM nt ORDER BY i) o GROUP BY g) p,
     LATERAL gpu_query_agg(format('SELECT x FROM nt WHERE g = %s ORDER BY i', p.g)) q;

-- A few results as they print (the same as PostgreSQL's, checked above).
SELECT g, gpu_sum(x), gpu_avg(x), gpu_min(x), gpu_max(x), gpu_count(x)
FROM (SELECT * FROM nt ORDER BY i) o WHERE g >= 200 AND g <> 209 GROUP BY g ORDER BY g;
SELECT gpu_sum('{1.5,2,NULL,-0.25}'::numeric[]), gpu_avg('{1.5,2}'::numeric[]),
       gpu_min('{2,1.50,1.5}'::numeric[]), gpu_max('{2.0,1,2}'::numeric[]), gpu_sum('{}'::numeric[]),
       gpu_avg('{NULL}'::numeric[]);
-- Empty input and NULLs only give NULL, count 0, as PostgreSQL's.
SELECT gpu_sum(x), gpu_avg(x), gpu_min(x), gpu_max(x), gpu_count(x) FROM nt WHERE false;
SELECT * FROM num_check('g = 205');
-- Result types are PostgreSQL's.
SELECT pg_typeof(gpu_sum(x)), pg_typeof(gpu_avg(x)), pg_typeof(gpu_min(x)), pg_typeof(gpu_max(x))
FROM nt WHERE g = 206;
-- A domain over numeric.
CREATE DOMAIN num_dom AS numeric(20, 4);
SELECT gpu_sum(x::num_dom)::text = sum(x::num_dom)::text AS sum,
       gpu_max(x::num_dom)::text = max(x::num_dom)::text AS max
FROM nt WHERE g = 100;

-- As window aggregates over a growing frame: a result per row while the state goes on (and
-- replaces its min, max and big sum).
SELECT count(*) AS rows, bool_and(s) AS sum, bool_and(a) AS avg, bool_and(mi) AS min, bool_and(ma) AS max FROM (
  SELECT gpu_sum(x) OVER w::text IS NOT DISTINCT FROM sum(x) OVER w::text AS s,
         gpu_avg(x) OVER w::text IS NOT DISTINCT FROM avg(x) OVER w::text AS a,
         gpu_min(x) OVER w::text IS NOT DISTINCT FROM min(x) OVER w::text AS mi,
         gpu_max(x) OVER w::text IS NOT DISTINCT FROM max(x) OVER w::text AS ma
  FROM nt WHERE g IN (0, 100, 200, 207, 209, 210)
  WINDOW w AS (PARTITION BY g ORDER BY i ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)) r;

-- numeric(p, s) columns: sums exact at the column's scale.
CREATE TABLE nt_money AS SELECT i, g, round(x, 2)::numeric(15, 2) AS x FROM nt WHERE g < 7 AND abs(x) < 1e13;
SELECT count(*) AS groups, bool_and(s) AS sum, bool_and(a) AS avg FROM (
  SELECT gpu_sum(x)::text = sum(x)::text AS s, gpu_avg(x)::text = avg(x)::text AS a
  FROM nt_money GROUP BY GROUPING SETS ((), (g))) r;

-- Parallel plans: partial states serialized with their min, max and big sums, and combined.
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
CREATE FUNCTION num_parallel_plan(q text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF line LIKE '%Partial%Aggregate%' THEN
      RETURN true;
    END IF;
  END LOOP;
  RETURN false;
END $$;
SELECT num_parallel_plan('SELECT gpu_sum(x) FROM nt');
SELECT gpu_sum(x)::text = sum(x)::text AS sum, gpu_avg(x)::text = avg(x)::text AS avg,
       gpu_min(x) = min(x) AS min, gpu_max(x) = max(x) AS max, gpu_count(x) = count(x) AS count
FROM nt;
SELECT count(*) AS groups, bool_and(s) AS sum, bool_and(a) AS avg FROM (
  SELECT gpu_sum(x)::text IS NOT DISTINCT FROM sum(x)::text AS s, gpu_avg(x)::text IS NOT DISTINCT FROM avg(x)::text AS a
  FROM nt GROUP BY g) r;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

-- On the CPU: the same answers.
SET gpuext.device = cpu;
SELECT * FROM num_check();
RESET gpuext.device;

-- Under auto, a device that fails (where there is one) leaves the answer to the CPU: the same
-- answers (the warnings, which only builds with a device give, are not shown).
SET gpuext.device = auto;
SET client_min_messages = error;
SET gpuext.debug_fail_device_calls = 'kernel:1';
SELECT * FROM num_check();
SET gpuext.debug_fail_device_calls = 'copy:1:3';
SELECT * FROM num_check();
SET gpuext.debug_fail_device_calls = 'sync:2';
SELECT count(*) AS groups,
       bool_and(gpu_sum(a)::text IS NOT DISTINCT FROM (SELECT sum(x)::text FROM unnest(a) x)) AS sum,
       bool_and(gpu_avg(a)::text IS NOT DISTINCT FROM (SELECT avg(x)::text FROM unnest(a) x)) AS avg
FROM nt_arrays;
SET gpuext.debug_fail_device_calls = 'kernel:1';
SELECT q.sum::text = p.sum::text AS sum, q.avg::text = p.avg::text AS avg
FROM gpu_query_agg('SELECT x FROM nt WHERE g < 7') q, (SELECT sum(x), avg(x) FROM nt WHERE g < 7) p;
RESET gpuext.debug_fail_device_calls;
RESET client_min_messages;
RESET gpuext.device;

-- A sum past 128 bits keeps the display scale of a later value whose fraction is all zeros.
SELECT gpu_sum(x)::text = sum(x)::text AS sum, gpu_avg(x)::text = avg(x)::text AS avg, sum(x)::text
FROM (VALUES (1, 3428571428571428571428571428571::numeric), (2, 628.0000000000000000), (3, 2.5)) v(i, x);
SELECT gpu_sum(x ORDER BY i)::text = sum(x)::text AS sum
FROM (VALUES (1, 99999999999999999999999999999999999999::numeric), (2, 1.000), (3, 1)) v(i, x);
