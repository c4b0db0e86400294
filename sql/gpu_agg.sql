-- gpu_sum, gpu_avg, gpu_min, gpu_max and gpu_count, as aggregates and over arrays, against
-- PostgreSQL's own sum, avg, min, max and count computed in the same run: every element type,
-- NULLs, NaN, infinities, -0, int64 overflow, no rows, GROUP BY, FILTER and parallel plans.
--
-- Float sums are exact (one rounding of the exact sum), so they are checked against the exact
-- sum over numeric rounded to the float type, never with = against PostgreSQL's sequential
-- float sum.  That needs inputs whose numeric conversion is exact: float8::numeric keeps 15
-- significant digits and real::numeric 6, so the float data are small multiples of 1/8 or
-- integers of at most 14 (float8) or 6 (real) digits.
SELECT setseed(0.75);
-- Batches of 3000 values or more go to the device where gpuext.device allows (groups of agg below
-- hold about 6,400 values, with FILTER about 2,100: both placements are taken); results do not
-- depend on the placement.
SET gpuext.min_gpu_elements = 3000;

-- A multiple of 1/8 of magnitude at most lim, NULL one time in ten; at the rows where i % 9973
-- is in at[], the matching special[] value instead.  Every special position is 0 mod 7, so each
-- special value lands in groups 0, 1, 3, 5 and 6 of g and never in groups 2 and 4.
CREATE FUNCTION eighths(i int, lim int, at int[] DEFAULT '{}', special float8[] DEFAULT '{}')
RETURNS float8 LANGUAGE sql AS $$
  SELECT CASE WHEN i % 9973 = ANY (at) THEN special[array_position(at, i % 9973)]
              WHEN random() < 0.1 THEN NULL
              ELSE (floor(random() * (16 * lim + 1)) - 8 * lim) / 8 END $$;

-- 50,000 rows, about 10% NULL in every value column (a plain table: parallel plans need one).
--   g              id % 7, the group key (a column, so that the planner knows there are 7 groups)
--   i2, i4         the whole range of the type, the extremes included
--   i8             near +-9.2e18, 60% positive: the sum is far past int64 (PostgreSQL's is numeric)
--   f8, f4         clean multiples of 1/8 (|f8| <= 125000, |f4| <= 1000)
--   w8, w4         integers below 1e14 and 1e6: PostgreSQL's sequential float sum rounds here
--   f8nan, f4nan   small eighths with NaN and -NaN
--   f8inf, f4inf   ... with Infinity and -0
--   f8ninf, f4ninf ... with -Infinity and -0
--   f8mix, f4mix   ... with all of NaN, -NaN, Infinity, -Infinity, -0
--   d, ts, tstz    dates and timestamps, a few infinity and -infinity
--   nothing        always NULL
CREATE TABLE agg (
  id int4, g int4, i2 int2, i4 int4, i8 int8, f8 float8, f4 real, w8 float8, w4 real,
  f8nan float8, f8inf float8, f8ninf float8, f8mix float8,
  f4nan real, f4inf real, f4ninf real, f4mix real,
  d date, ts timestamp, tstz timestamptz, nothing float8);
INSERT INTO agg
SELECT i, i % 7,
  CASE WHEN random() < 0.1 THEN NULL WHEN i % 1000 = 1 THEN -32768 WHEN i % 1000 = 2 THEN 32767
       ELSE floor(random() * 65536) - 32768 END,
  CASE WHEN random() < 0.1 THEN NULL WHEN i % 1000 = 3 THEN -2147483648 WHEN i % 1000 = 4 THEN 2147483647
       ELSE floor(random() * 4294967296) - 2147483648 END,
  CASE WHEN random() < 0.1 THEN NULL
       WHEN i % 1000 = 5 THEN -9223372036854775808 WHEN i % 1000 = 6 THEN 9223372036854775807
       WHEN random() < 0.6 THEN 9223372036854775807 - floor(random() * 1e15)::int8
       ELSE -9223372036854775807 + floor(random() * 1e15)::int8 END,
  eighths(i, 125000),
  eighths(i, 1000),
  CASE WHEN random() < 0.1 THEN NULL ELSE floor(random() * 1e14) END,
  CASE WHEN random() < 0.1 THEN NULL ELSE floor(random() * 1e6) END,
  eighths(i, 1000, '{140,210}', '{NaN,-NaN}'),
  eighths(i, 1000, '{280,420}', '{Infinity,-0}'),
  eighths(i, 1000, '{350,420}', '{-Infinity,-0}'),
  eighths(i, 1000, '{140,210,280,350,420}', '{NaN,-NaN,Infinity,-Infinity,-0}'),
  eighths(i, 1000, '{140,210}', '{NaN,-NaN}'),
  eighths(i, 1000, '{280,420}', '{Infinity,-0}'),
  eighths(i, 1000, '{350,420}', '{-Infinity,-0}'),
  eighths(i, 1000, '{140,210,280,350,420}', '{NaN,-NaN,Infinity,-Infinity,-0}'),
  CASE WHEN i % 9973 = 490 THEN 'infinity' WHEN i % 9973 = 560 THEN '-infinity' WHEN random() < 0.1 THEN NULL
       ELSE date '2000-01-01' + floor((random() - 0.5) * 2000000)::int END,
  CASE WHEN i % 9973 = 490 THEN 'infinity' WHEN i % 9973 = 560 THEN '-infinity' WHEN random() < 0.1 THEN NULL
       ELSE timestamp '2000-01-01' + (random() - 0.5) * interval '100000 days' END,
  CASE WHEN i % 9973 = 490 THEN 'infinity' WHEN i % 9973 = 560 THEN '-infinity' WHEN random() < 0.1 THEN NULL
       ELSE timestamptz '2000-01-01 00:00+00' + (random() - 0.5) * interval '100000 days' END,
  NULL
FROM generate_series(1, 50000) i;
ANALYZE agg;
CREATE TABLE agg_empty (LIKE agg);

-- The data hold what the comments above promise.
SELECT count(*) AS rows,
       count(i4) BETWEEN 0.88 * count(*) AND 0.92 * count(*)
         AND count(f8) BETWEEN 0.88 * count(*) AND 0.92 * count(*)
         AND count(tstz) BETWEEN 0.88 * count(*) AND 0.92 * count(*) AS ten_percent_null,
       sum(i8) > 9223372036854775807 AS i8_sum_past_int64,
       count(*) FILTER (WHERE i2 IN (-32768, 32767)) > 0 AND count(*) FILTER (WHERE i4 = -2147483648) > 0
         AND count(*) FILTER (WHERE i8 = -9223372036854775808) > 0 AS extremes,
       count(*) FILTER (WHERE f8mix = 'NaN') = 10 AND count(*) FILTER (WHERE f4mix = 'Infinity') = 5
         AND count(*) FILTER (WHERE f8ninf = '-Infinity') = 5 AS specials,
       count(*) FILTER (WHERE f8inf = 0 AND float8send(f8inf) <> float8send(0)) = 5 AS minus_zeros,
       count(DISTINCT g) FILTER (WHERE f8mix IN ('NaN', 'Infinity', '-Infinity')) = 5 AS specials_in_5_of_7_groups,
       count(*) FILTER (WHERE d = 'infinity') = 5 AND count(*) FILTER (WHERE ts = '-infinity') = 5 AS infinite_times,
       count(nothing) = 0 AS nothing_is_null
FROM agg;

-- check_aggs: gpu_sum, gpu_avg, gpu_min, gpu_max and gpu_count on column c of table tab against
-- PostgreSQL's own aggregates over the same rows; one output row, each boolean true when right.
--   form 'aggregate': gpu_f(c)    form 'array': gpu_f(array_agg(c)) (NULL elements included;
--                                 '{}' when there are no rows)
--   grp:  GROUP BY this expression, compared group by group (groups = how many there were)
--   filt: FILTER (WHERE filt) on every aggregate, gpuext's and PostgreSQL's
-- The reference is PostgreSQL's own aggregate, except that a float sum is compared with the
-- exact sum (over numeric) rounded to the float type, and a float avg with that exact sum rounded
-- to double precision, divided by the count.  Results that are not floats must also print the
-- same (so an integer avg has PostgreSQL's numeric scale).  sum and avg are NULL (no such
-- aggregate) for dates and timestamps.  types: every result has the type of PostgreSQL's own.
CREATE FUNCTION check_aggs(tab regclass, c name, form text DEFAULT 'aggregate',
                           grp text DEFAULT NULL, filt text DEFAULT NULL)
RETURNS TABLE (col name, typ regtype, groups bigint, sum boolean, avg boolean, min boolean,
               max boolean, count boolean, types boolean)
LANGUAGE plpgsql AS $$
DECLARE
  t regtype := (SELECT atttypid FROM pg_attribute WHERE attrelid = tab AND attname = c);
  x text := quote_ident(c);
  f text := coalesce(' FILTER (WHERE ' || filt || ')', '');
  is_float boolean := t IN ('real', 'double precision');
  fn text;
  g text;    -- gpuext's call
  ref text;  -- the reference
  checks text[] := '{}';
  types text[] := '{}';
BEGIN
  FOREACH fn IN ARRAY ARRAY['sum', 'avg', 'min', 'max', 'count'] LOOP
    IF fn IN ('sum', 'avg') AND t IN ('date', 'timestamp', 'timestamptz') THEN
      checks := checks || format('NULL::boolean AS %s_ok', fn);
      CONTINUE;
    END IF;
    g := CASE form WHEN 'aggregate' THEN format('gpu_%s(%s)%s', fn, x, f)
                   WHEN 'array' THEN format('gpu_%s(coalesce(array_agg(%s)%s, ''{}''))', fn, x, f) END;
    ref := CASE WHEN is_float AND fn = 'sum' THEN format('(sum(%s::numeric)%s)::%s', x, f, t)
                WHEN is_float AND fn = 'avg' THEN format('(sum(%s::numeric)%s)::float8 / (count(%s)%s)', x, f, x, f)
                ELSE format('%s(%s)%s', fn, x, f) END;
    checks := checks || CASE WHEN is_float THEN format('%s IS NOT DISTINCT FROM %s AS %s_ok', g, ref, fn)
                             ELSE format('(%s IS NOT DISTINCT FROM %s AND (%1$s)::text IS NOT DISTINCT FROM (%2$s)::text) AS %3$s_ok',
                                         g, ref, fn) END;
    types := types || format('pg_typeof(%s) = pg_typeof(%s(%s)%s)', g, fn, x, f);
  END LOOP;
  RETURN QUERY EXECUTE format($q$
    SELECT %L::name, %L::regtype, count(*), bool_and(sum_ok), bool_and(avg_ok), bool_and(min_ok),
           bool_and(max_ok), bool_and(count_ok), bool_and(types_ok)
    FROM (SELECT %s, %s AS types_ok FROM %s %s) s$q$,
    c, t, array_to_string(checks, ', '), array_to_string(types, ' AND '), tab,
    coalesce('GROUP BY ' || grp, ''));
END $$;

-- All of check_aggs's checks passed (for the compact tables).
CREATE FUNCTION aggs_ok(tab regclass, c name, form text DEFAULT 'aggregate',
                        grp text DEFAULT NULL, filt text DEFAULT NULL)
RETURNS boolean LANGUAGE sql AS $$
  SELECT (sum IS NOT FALSE AND avg IS NOT FALSE AND min AND max AND count AND types) IS TRUE
  FROM check_aggs(tab, c, form, grp, filt) $$;

-- The columns of agg, and one per element type.
CREATE TEMP TABLE cols (col name, per_type boolean);
INSERT INTO cols VALUES
  ('i2', true), ('i4', true), ('i8', true), ('f4', true), ('f8', true), ('w4', false), ('w8', false),
  ('f4nan', false), ('f4inf', false), ('f4ninf', false), ('f4mix', false),
  ('f8nan', false), ('f8inf', false), ('f8ninf', false), ('f8mix', false),
  ('d', true), ('ts', true), ('tstz', true), ('nothing', false);

-- Result types (the checks below compare each with PostgreSQL's own).
SELECT pg_typeof(a) AS input, pg_typeof(gpu_sum(a)) AS sum, pg_typeof(gpu_avg(a)) AS avg,
       pg_typeof(gpu_min(a)) AS min, pg_typeof(gpu_max(a)) AS max, pg_typeof(gpu_count(a)) AS count
FROM (VALUES ('{1}'::int2[])) v(a)
UNION ALL SELECT pg_typeof(a), pg_typeof(gpu_sum(a)), pg_typeof(gpu_avg(a)), pg_typeof(gpu_min(a)),
                 pg_typeof(gpu_max(a)), pg_typeof(gpu_count(a)) FROM (VALUES ('{1}'::int4[])) v(a)
UNION ALL SELECT pg_typeof(a), pg_typeof(gpu_sum(a)), pg_typeof(gpu_avg(a)), pg_typeof(gpu_min(a)),
                 pg_typeof(gpu_max(a)), pg_typeof(gpu_count(a)) FROM (VALUES ('{1}'::int8[])) v(a)
UNION ALL SELECT pg_typeof(a), pg_typeof(gpu_sum(a)), pg_typeof(gpu_avg(a)), pg_typeof(gpu_min(a)),
                 pg_typeof(gpu_max(a)), pg_typeof(gpu_count(a)) FROM (VALUES ('{1}'::real[])) v(a)
UNION ALL SELECT pg_typeof(a), pg_typeof(gpu_sum(a)), pg_typeof(gpu_avg(a)), pg_typeof(gpu_min(a)),
                 pg_typeof(gpu_max(a)), pg_typeof(gpu_count(a)) FROM (VALUES ('{1}'::float8[])) v(a)
UNION ALL SELECT pg_typeof(a), NULL, NULL, pg_typeof(gpu_min(a)), pg_typeof(gpu_max(a)),
                 pg_typeof(gpu_count(a)) FROM (VALUES ('{2000-01-01}'::date[])) v(a)
UNION ALL SELECT pg_typeof(a), NULL, NULL, pg_typeof(gpu_min(a)), pg_typeof(gpu_max(a)),
                 pg_typeof(gpu_count(a)) FROM (VALUES ('{2000-01-01}'::timestamp[])) v(a)
UNION ALL SELECT pg_typeof(a), NULL, NULL, pg_typeof(gpu_min(a)), pg_typeof(gpu_max(a)),
                 pg_typeof(gpu_count(a)) FROM (VALUES ('{2000-01-01}'::timestamptz[])) v(a);

-- Every array form is STRICT; every aggregate is parallel safe, with combine, serialize and
-- deserialize functions.
SELECT p.proname,
       count(*) FILTER (WHERE p.prokind = 'f') AS array_forms,
       bool_and(p.proisstrict) FILTER (WHERE p.prokind = 'f') AS strict,
       count(*) FILTER (WHERE p.prokind = 'a') AS aggregates,
       bool_and(a.aggcombinefn <> 0 AND a.aggserialfn <> 0 AND a.aggdeserialfn <> 0)
         FILTER (WHERE p.prokind = 'a') AS combine_serialize,
       bool_and(p.proparallel = 's') AS parallel_safe
FROM pg_proc p LEFT JOIN pg_aggregate a ON a.aggfnoid = p.oid
WHERE p.proname IN ('gpu_sum', 'gpu_avg', 'gpu_min', 'gpu_max', 'gpu_count')
GROUP BY p.proname ORDER BY p.proname;

-- Aggregates over all 50,000 rows.
SELECT k.* FROM cols, LATERAL check_aggs('agg', col) k;

-- Array forms over the same rows: gpu_f(array_agg(x)), NULL elements included.
SELECT k.* FROM cols, LATERAL check_aggs('agg', col, 'array') k;

-- GROUP BY: every group against PostgreSQL's (groups 2 and 4 hold no special float values).
SELECT k.* FROM cols, LATERAL check_aggs('agg', col, grp => 'g') k;

-- FILTER.
SELECT k.* FROM cols, LATERAL check_aggs('agg', col, filt => 'id % 3 = 0') k;

-- GROUP BY and FILTER together, array form (array_agg(x) FILTER (...) per group).
SELECT k.* FROM cols, LATERAL check_aggs('agg', col, 'array', 'g', 'id % 3 = 0') k;

-- No rows and only NULLs: sum, avg, min and max NULL and count 0, as PostgreSQL's.  Columns:
-- the empty table; rows whose value is NULL; FILTER (WHERE false), where the aggregates never
-- see a row; GROUP BY where 5 of the 7 groups have no row passing the FILTER.
SELECT col,
       aggs_ok('agg_empty', col) AS empty_table,
       aggs_ok('agg_empty', col, 'array') AS empty_table_array,
       aggs_ok('agg', col, filt => format('%I IS NULL', col)) AS only_nulls,
       aggs_ok('agg', col, 'array', filt => format('%I IS NULL', col)) AS only_nulls_array,
       aggs_ok('agg', col, filt => 'false') AS filter_false,
       aggs_ok('agg', col, grp => 'g', filt => 'g < 2') AS empty_groups
FROM cols WHERE per_type;

-- Exact float sums, beyond the equalities with the exact sum in the checks above.
-- (2) Never further from the exact sum than PostgreSQL's sequential sum, which rounds on w8 and
-- w4 (postgres_rounds).  Every w8 and w4 value is an integer, so every sum of them is too, and
-- ::int8 gives a float sum's exact value (float8::numeric would keep only 15 digits).
SELECT 'w8' AS col,
       sum(w8) <> sum(w8::numeric)::float8 AS postgres_rounds,
       gpu_sum(w8) = sum(w8::numeric)::float8 AS gpu_exact,
       abs(gpu_sum(w8)::int8 - sum(w8::numeric)) <= abs(sum(w8)::int8 - sum(w8::numeric)) AS gpu_no_worse,
       gpu_avg(w8) = sum(w8::numeric)::float8 / count(w8) AS gpu_avg_exact
FROM agg
UNION ALL
SELECT 'w4',
       sum(w4) <> sum(w4::numeric)::real,
       gpu_sum(w4) = sum(w4::numeric)::real,
       abs(gpu_sum(w4)::int8 - sum(w4::numeric)) <= abs(sum(w4)::int8 - sum(w4::numeric)),
       gpu_avg(w4) = sum(w4::numeric)::float8 / count(w4)
FROM agg;

-- (3) Cancellation: the exact sums are 1 (and an average of 1/3); PostgreSQL's sum loses the 1.
SELECT gpu_sum('{1e100,1,-1e100}'::float8[]) AS gpu_array, gpu_sum(x) AS gpu_aggregate, sum(x) AS postgres,
       gpu_avg(x) = 1 / 3::float8 AS gpu_avg_third
FROM unnest('{1e100,1,-1e100}'::float8[]) x;
SELECT gpu_sum('{1e30,1,-1e30}'::real[]) AS gpu_array, gpu_sum(x) AS gpu_aggregate, sum(x) AS postgres
FROM unnest('{1e30,1,-1e30}'::real[]) x;
-- The whole range: the largest value cancels, the smallest subnormal is the sum.
SELECT gpu_sum('{1e308,5e-324,-1e308}'::float8[]) AS gpu_array, gpu_sum(x) AS gpu_aggregate, sum(x) AS postgres
FROM unnest('{1e308,5e-324,-1e308}'::float8[]) x;
SELECT gpu_sum('{3e38,1e-45,-3e38}'::real[]) AS gpu_array, gpu_sum(x) AS gpu_aggregate, sum(x) AS postgres
FROM unnest('{3e38,1e-45,-3e38}'::real[]) x;
-- Rounded once: 1 + 2^-53 + 2^-106 is just above the midpoint between 1 and 1 + 2^-52, so it
-- rounds up; adding in order rounds to 1 twice (likewise 1 + 2^-24 + 2^-48 in real).
SELECT gpu_sum(a) = 1 + 2::float8 ^ -52 AS gpu_rounds_up, gpu_sum(a),
       (SELECT sum(x) FROM unnest(a) x) AS postgres
FROM (SELECT ARRAY[1, 2::float8 ^ -53, 2::float8 ^ -106] AS a) s;
SELECT gpu_sum(a) = (1 + 2::float8 ^ -23)::real AS gpu_rounds_up, gpu_sum(a),
       (SELECT sum(x) FROM unnest(a) x) AS postgres
FROM (SELECT ARRAY[1, 2::float8 ^ -24, 2::float8 ^ -48]::real[] AS a) s;

-- (4) Order independence: the same rows in six orders (by id, ascending, descending, three
-- shuffles) give the same value and bits, as aggregates and over arrays (array_bits: the array
-- form gives the aggregate's bits in every order).  postgres_varies: PostgreSQL's sequential sum
-- depends on the order (not on f8, whose partial sums are all exact).
SELECT s.col,
       count(DISTINCT s.gpu) = 1 AS same_value,
       count(DISTINCT s.gpu_bits) = 1 AS same_bits,
       bool_and(s.array_bits = s.gpu_bits) AS array_bits,
       count(DISTINCT s.postgres) > 1 AS postgres_varies
FROM generate_series(1, 6) k,
     LATERAL (SELECT 'f8' AS col, gpu_sum(f8) AS gpu, float8send(gpu_sum(f8)) AS gpu_bits,
                     float8send(gpu_sum(array_agg(f8))) AS array_bits, sum(f8) AS postgres
              FROM (SELECT f8 FROM agg ORDER BY CASE k WHEN 1 THEN id WHEN 2 THEN f8 WHEN 3 THEN -f8
                                                       ELSE random() END) o
              UNION ALL
              SELECT 'w4', gpu_sum(w4), float4send(gpu_sum(w4)), float4send(gpu_sum(array_agg(w4))), sum(w4)
              FROM (SELECT w4 FROM agg ORDER BY CASE k WHEN 1 THEN id WHEN 2 THEN w4 WHEN 3 THEN -w4
                                                       ELSE random() END) o
              UNION ALL
              SELECT 'w8', gpu_sum(w8), float8send(gpu_sum(w8)), float8send(gpu_sum(array_agg(w8))), sum(w8)
              FROM (SELECT w8 FROM agg ORDER BY CASE k WHEN 1 THEN id WHEN 2 THEN w8 WHEN 3 THEN -w8
                                                       ELSE random() END) o) s
GROUP BY s.col ORDER BY s.col;

-- Small literal arrays: gpuext's results (-0 printed as 0: which zero comes back is not part of
-- the contract), array_ok: the array form equals PostgreSQL's aggregates over the elements,
-- aggregate_ok: so do gpuext's aggregates over the elements.  The values here are small, so
-- PostgreSQL's float sums are exact too.
CREATE FUNCTION fmt(v anyelement) RETURNS text LANGUAGE sql AS $$
  SELECT CASE WHEN v = 0 THEN '0' ELSE v::text END $$;
CREATE FUNCTION gpu_vs_postgres(a anyarray, OUT sum text, OUT avg text, OUT min text, OUT max text,
                                OUT count bigint, OUT array_ok boolean, OUT aggregate_ok boolean)
LANGUAGE sql AS $$
  SELECT fmt(gpu_sum(a)), fmt(gpu_avg(a)), fmt(gpu_min(a)), fmt(gpu_max(a)), gpu_count(a),
         gpu_sum(a) IS NOT DISTINCT FROM sum(x) AND gpu_avg(a) IS NOT DISTINCT FROM avg(x)
           AND gpu_min(a) IS NOT DISTINCT FROM min(x) AND gpu_max(a) IS NOT DISTINCT FROM max(x)
           AND gpu_count(a) = count(x),
         gpu_sum(x) IS NOT DISTINCT FROM sum(x) AND gpu_avg(x) IS NOT DISTINCT FROM avg(x)
           AND gpu_min(x) IS NOT DISTINCT FROM min(x) AND gpu_max(x) IS NOT DISTINCT FROM max(x)
           AND gpu_count(x) = count(x)
  FROM unnest(a) x $$;
CREATE FUNCTION gpu_vs_postgres_minmax(a anyarray, OUT min text, OUT max text, OUT count bigint,
                                       OUT array_ok boolean, OUT aggregate_ok boolean)
LANGUAGE sql AS $$
  SELECT gpu_min(a)::text, gpu_max(a)::text, gpu_count(a),
         gpu_min(a) IS NOT DISTINCT FROM min(x) AND gpu_max(a) IS NOT DISTINCT FROM max(x)
           AND gpu_count(a) = count(x),
         gpu_min(x) IS NOT DISTINCT FROM min(x) AND gpu_max(x) IS NOT DISTINCT FROM max(x)
           AND gpu_count(x) = count(x)
  FROM unnest(a) x $$;

-- NaN and infinities: NaN in, NaN sum and avg; Infinity + -Infinity is NaN; max is NaN when any
-- element is; min ignores NaN unless every element is NaN.
CREATE TEMP TABLE float_cases (n int, name text, a float8[]);
INSERT INTO float_cases VALUES
  (1, 'NaN', '{1,NaN,2}'),
  (2, '-NaN', '{1,-NaN,-2}'),
  (3, 'only NaN', '{NaN,-NaN}'),
  (4, 'Infinity', '{1,Infinity,-2}'),
  (5, '-Infinity', '{-Infinity,1}'),
  (6, 'both infinities', '{Infinity,1,-Infinity}'),
  (7, 'NaN and infinities', '{Infinity,NaN,-Infinity}'),
  (8, '-0', '{-0,-0}'),
  (9, '-0 and 0', '{0,-0,NULL}'),
  (10, 'NULLs', '{NULL,1.5,NULL,-2.25}'),
  (11, 'only NULLs', '{NULL,NULL}'),
  (12, 'empty', '{}'),
  (13, 'one element', '{-42.5}'),
  (14, 'lower bound -2', '[-2:0]={0.5,NULL,0.25}');
SELECT 'float8' AS type, name, g.* FROM (SELECT * FROM float_cases ORDER BY n) c, LATERAL gpu_vs_postgres(a) g;
SELECT 'real' AS type, name, g.* FROM (SELECT * FROM float_cases ORDER BY n) c, LATERAL gpu_vs_postgres(a::real[]) g;

-- Integers at the limits of their types: sums past int64 are exact numeric for bigint, as
-- PostgreSQL's; averages are PostgreSQL's numeric.
SELECT 'int2' AS type, name, g.*
FROM (VALUES ('limits', '{32767,32767,-32768,32767}'::int2[]), ('NULLs', '{NULL,-7,NULL,2}'),
             ('only NULLs', '{NULL}'), ('empty', '{}'), ('lower bound 5', '[5:7]={1,2,4}')) v(name, a),
     LATERAL gpu_vs_postgres(a) g;
SELECT 'int4' AS type, name, g.*
FROM (VALUES ('limits', '{2147483647,2147483647,-2147483648,2147483647}'::int4[]),
             ('thirds', '{1,1,-1}'), ('only NULLs', '{NULL,NULL}'), ('empty', '{}')) v(name, a),
     LATERAL gpu_vs_postgres(a) g;
SELECT 'int8' AS type, name, g.*
FROM (VALUES ('past int64', '{9223372036854775807,9223372036854775807,9223372036854775807}'::int8[]),
             ('below int64', '{-9223372036854775808,-9223372036854775808,-1}'),
             ('past and back', '{9223372036854775807,1,-9223372036854775808,9223372036854775807}'),
             ('NULLs', '{NULL,-9223372036854775808,NULL}'), ('empty', '{}')) v(name, a),
     LATERAL gpu_vs_postgres(a) g;

-- Dates and timestamps: min, max and count, infinities included.
SELECT 'date' AS type, name, g.*
FROM (VALUES ('infinities', '{2020-02-29,infinity,NULL,-infinity,1999-12-31}'::date[]),
             ('limits', '{5874897-12-31,4713-01-01 BC,2000-01-01}'), ('only NULLs', '{NULL}'),
             ('empty', '{}')) v(name, a),
     LATERAL gpu_vs_postgres_minmax(a) g;
SELECT 'timestamp' AS type, name, g.*
FROM (VALUES ('infinities', '{2020-02-29 12:00,infinity,-infinity,NULL}'::timestamp[]),
             ('microseconds', '{1999-12-31 23:59:59.999999,2000-01-01 00:00:00.000001}')) v(name, a),
     LATERAL gpu_vs_postgres_minmax(a) g;
SELECT 'timestamptz' AS type, name, g.*
FROM (VALUES ('infinities', '{2020-02-29 12:00+00,-infinity,infinity}'::timestamptz[]),
             ('one', '{2000-01-01 00:00+00}')) v(name, a),
     LATERAL gpu_vs_postgres_minmax(a) g;

-- A NULL array gives NULL from every function, gpu_count included (STRICT).
SELECT gpu_sum(NULL::int2[]) IS NULL AS sum, gpu_avg(NULL::int8[]) IS NULL AS avg,
       gpu_min(NULL::real[]) IS NULL AS min, gpu_max(NULL::timestamptz[]) IS NULL AS max,
       gpu_count(NULL::float8[]) IS NULL AS count, gpu_count(NULL::date[]) IS NULL AS count_date;

-- Overflow: a float sum past the largest finite value is an error, as in PostgreSQL.
SELECT sum(x) FROM unnest('{1e308,1e308}'::float8[]) x;
SELECT gpu_sum(x) FROM unnest('{1e308,1e308}'::float8[]) x;
SELECT gpu_sum('{1e308,1e308}'::float8[]);
SELECT avg(x) FROM unnest('{1e308,1e308}'::float8[]) x;
SELECT gpu_avg('{1e308,1e308}'::float8[]);
SELECT sum(x) FROM unnest('{3e38,3e38}'::real[]) x;
SELECT gpu_sum(x) FROM unnest('{3e38,3e38}'::real[]) x;
SELECT gpu_sum('{3e38,3e38}'::real[]);
-- ... but not on the way: the exact sum of 1e308, 1e308 and -1e308 is 1e308 in any order,
-- where PostgreSQL's sequential sum overflows in the first order and not in the second.
SELECT gpu_sum('{1e308,1e308,-1e308}'::float8[]) AS gpu_1, gpu_sum('{1e308,-1e308,1e308}'::float8[]) AS gpu_2,
       (SELECT sum(x) FROM unnest('{1e308,-1e308,1e308}'::float8[]) x) AS postgres_2;
SELECT sum(x) FROM unnest('{1e308,1e308,-1e308}'::float8[]) x;
SELECT gpu_sum('{3e38,3e38,-3e38}'::real[]) AS gpu_real;
-- The average of real is double precision, as PostgreSQL's: no overflow where the sum would
-- overflow real.
SELECT gpu_avg('{3e38,3e38}'::real[]) = avg(x) AS same_avg, gpu_avg(x) = avg(x) AS same_avg_aggregate
FROM unnest('{3e38,3e38}'::real[]) x;

-- Bad input.  Multi-dimensional arrays are an error.
SELECT gpu_sum('{{1,2},{3,4}}'::int4[]);
SELECT gpu_count('{{1.5},{NaN}}'::float8[]);
SELECT gpu_max('{{{2020-01-01}}}'::date[]);
-- Other element types have no overload.
SELECT gpu_min('{b,a}'::text[]);
SELECT gpu_count('{t,f}'::bool[]);
SELECT gpu_max(x) FROM unnest('{12:00}'::time[]) x;
-- numeric has gpu_* of its own, exact and never through double precision (gpu_agg_numeric
-- checks them): the sum keeps the display scale, min and max are numeric.
SELECT gpu_sum('{1.5,2.5}'::numeric[]);
SELECT gpu_max(x), pg_typeof(gpu_max(x)) FROM unnest('{1.5}'::numeric[]) x;
-- No sum or avg of dates, as PostgreSQL has none.
SELECT gpu_sum('{2020-01-01}'::date[]);
SELECT gpu_avg(d) FROM agg;
-- An untyped literal matches several overloads.
SELECT gpu_sum('{1,2}');

-- Parallel plans: partial aggregates in the workers, combined (and serialized) in the leader.
-- First the serial results, to compare bits with.
CREATE TEMP TABLE serial AS
SELECT gpu_sum(w8) AS w8_sum, gpu_avg(w8) AS w8_avg, gpu_sum(w4) AS w4_sum, gpu_avg(w4) AS w4_avg,
       gpu_sum(f8) AS f8_sum
FROM agg;
CREATE TEMP TABLE serial_groups AS
SELECT g, gpu_sum(w8) AS w8_sum, gpu_sum(w4) FILTER (WHERE id % 3 = 0) AS w4_sum
FROM agg GROUP BY g;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
-- The plan shapes are PostgreSQL's (no GpuSort, whatever gpuext.sort_min_rows says).
SET gpuext.enable_sort = off;
EXPLAIN (COSTS OFF) SELECT gpu_sum(f8) FROM agg;
EXPLAIN (COSTS OFF) SELECT g, gpu_sum(f8) FILTER (WHERE id % 3 = 0), gpu_avg(i8) FROM agg GROUP BY g;
RESET gpuext.enable_sort;
SELECT k.* FROM cols, LATERAL check_aggs('agg', col) k;
SELECT k.* FROM cols, LATERAL check_aggs('agg', col, grp => 'g', filt => 'id % 3 = 0') k;
SELECT col,
       aggs_ok('agg', col, filt => format('%I IS NULL', col)) AS only_nulls,
       aggs_ok('agg', col, filt => 'false') AS filter_false,
       aggs_ok('agg', col, grp => 'g', filt => 'g < 2') AS empty_groups
FROM cols WHERE per_type;
-- The same bits as the serial plan.
SELECT float8send((SELECT gpu_sum(w8) FROM agg)) = float8send(w8_sum) AS w8_sum,
       float8send((SELECT gpu_avg(w8) FROM agg)) = float8send(w8_avg) AS w8_avg,
       float4send((SELECT gpu_sum(w4) FROM agg)) = float4send(w4_sum) AS w4_sum,
       float8send((SELECT gpu_avg(w4) FROM agg)) = float8send(w4_avg) AS w4_avg,
       float8send((SELECT gpu_sum(f8) FROM agg)) = float8send(f8_sum) AS f8_sum
FROM serial;
SELECT count(*) AS groups, bool_and(float8send(p.w8_sum) = float8send(s.w8_sum)) AS w8_sum,
       bool_and(float4send(p.w4_sum) = float4send(s.w4_sum)) AS w4_sum
FROM (SELECT g, gpu_sum(w8) AS w8_sum, gpu_sum(w4) FILTER (WHERE id % 3 = 0) AS w4_sum
      FROM agg GROUP BY g) p
JOIN serial_groups s USING (g);
-- Everything in a worker: results and transition states cross between processes.
-- force_parallel_mode is debug_parallel_query from PostgreSQL 16 on.
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
                       THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END, 'on', false) AS in_worker;
SELECT col,
       aggs_ok('agg', col) AS aggregate,
       aggs_ok('agg', col, 'array') AS array,
       aggs_ok('agg_empty', col) AS empty_table
FROM cols WHERE per_type;
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
                       THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END, 'off', false) AS in_worker;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

