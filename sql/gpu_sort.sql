-- gpu_sort against PostgreSQL's own ORDER BY, computed in the same run:
-- every element type x algorithm x direction, awkward sizes, and input patterns.
SELECT setseed(0.25);

-- A value generator (over %r%, uniform in [0,1)) and special values per type.
CREATE TEMP TABLE sort_types (typ regtype, gen text, specials text);
INSERT INTO sort_types VALUES
  ('int2', '(floor(%r% * 65536) - 32768)::int2', '{-32768,32767,0,-1,1}'),
  ('int4', '(floor(%r% * 4294967296) - 2147483648)::int4', '{-2147483648,2147483647,0,-1,1}'),
  ('int8', '(floor(%r% * 18446744073709551615::numeric) - 9223372036854775808)::int8',
   '{-9223372036854775808,9223372036854775807,0,-1,1}'),
  ('float4', '((%r% - 0.5) * 2e6)::float4',
   '{NaN,-NaN,Infinity,-Infinity,-0,0,1e-45,-1e-45,3.4028235e38,-3.4028235e38,1.1754944e-38}'),
  ('float8', '(%r% - 0.5) * 2e12',
   '{NaN,-NaN,Infinity,-Infinity,-0,0,5e-324,-5e-324,1.7976931348623157e308,-1.7976931348623157e308}'),
  ('date', '''2000-01-01''::date + floor((%r% - 0.5) * 2000000)::int',
   '{infinity,-infinity,4713-01-01BC,5874897-12-31,2000-01-01}'),
  ('timestamp', '''2000-01-01''::timestamp + (%r% - 0.5) * interval ''100000 days''',
   '{infinity,-infinity,4713-01-01 00:00:00BC,294276-12-31 23:59:59,2000-01-01}'),
  ('timestamptz', '''2000-01-01 UTC''::timestamptz + (%r% - 0.5) * interval ''100000 days''',
   '{infinity,-infinity,4713-01-01 00:00:00+00BC,294276-12-31 23:59:59+00,2000-01-01 UTC}');

-- One table per type: (size, pattern, input, PostgreSQL's ascending and descending answers).
CREATE FUNCTION make_sort_cases(t regtype, gen text, specials text, sizes int[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  tab text := 'cases_' || replace(t::text, ' ', '_');
  elem text;
BEGIN
  EXECUTE format('CREATE TEMP TABLE IF NOT EXISTS %I (size int, pattern text, a %s[], asc_ref %s[], desc_ref %s[])',
                 tab, t, t, t);
  FOREACH elem IN ARRAY ARRAY[
    -- pattern name, element expression over r (random), i (position) and n (size)
    'random|' || replace(gen, '%r%', 'r'),
    'sorted|' || replace(gen, '%r%', 'r'),
    'reverse|' || replace(gen, '%r%', 'r'),
    'equal|' || replace(gen, '%r%', '0.3'),
    'few|' || replace(gen, '%r%', '(floor(r * 4) / 4)'),
    'nulls|CASE WHEN r < 0.2 THEN NULL ELSE ' || replace(gen, '%r%', 'random()') || ' END',
    'special|CASE WHEN r < 0.1 THEN NULL WHEN r < 0.4 THEN (' || quote_literal(specials) || '::' || t
      || '[])[1 + floor(random() * ' || cardinality(specials::text[]) || ')::int] ELSE '
      || replace(gen, '%r%', 'random()') || ' END']
  LOOP
    EXECUTE format($q$
      INSERT INTO %I (size, pattern, a)
      SELECT n, %L, coalesce((SELECT array_agg(v ORDER BY %s) FROM
                  (SELECT i, %s AS v FROM generate_series(1, n) i, LATERAL (SELECT random() + i * 0 AS r) rr) s),
                '{}')
      FROM unnest(%L::int[]) n$q$,
      tab, split_part(elem, '|', 1),
      CASE split_part(elem, '|', 1) WHEN 'sorted' THEN 'v' WHEN 'reverse' THEN 'v DESC' ELSE 'i' END,
      substr(elem, strpos(elem, '|') + 1), sizes);
  END LOOP;
  EXECUTE format($q$
    UPDATE %I SET
      asc_ref = coalesce((SELECT array_agg(x ORDER BY x) FROM unnest(a) x), '{}'),
      desc_ref = coalesce((SELECT array_agg(x ORDER BY x DESC) FROM unnest(a) x), '{}')$q$, tab);
END $$;

-- Compare every algorithm and direction with the references; count the cases that differ.
CREATE FUNCTION check_sort_cases(t regtype)
RETURNS TABLE (typ regtype, algorithm text, cases bigint, wrong bigint)
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE format($q$
    SELECT %L::regtype, g.algo, count(*),
           count(*) FILTER (WHERE gpu_sort(c.a, d.descending, g.algo)
                            IS DISTINCT FROM CASE WHEN d.descending THEN c.desc_ref ELSE c.asc_ref END)
    FROM %I c,
         (VALUES ('auto'), ('bitonic'), ('quicksort'), ('oddeven'), ('radix'), ('cpu')) g(algo),
         (VALUES (false), (true)) d(descending)
    WHERE NOT (g.algo = 'oddeven' AND cardinality(c.a) > 65536)
    GROUP BY g.algo ORDER BY g.algo$q$, t, 'cases_' || replace(t::text, ' ', '_'));
END $$;

SELECT make_sort_cases(typ, gen, specials, '{0,1,2,3,1023,1024,1025,65537}') FROM sort_types;

-- The inputs really hold what the patterns promise.
SELECT count(*) AS arrays,
       count(*) FILTER (WHERE array_position(a, NULL) IS NOT NULL) AS with_nulls,
       count(*) FILTER (WHERE a = asc_ref AND size > 3) AS already_sorted,
       bool_and(cardinality(a) = size) AS sizes_ok
FROM cases_double_precision;
SELECT count(*) FILTER (WHERE 'NaN'::float8 = ANY (a)) > 0 AS has_nan,
       count(*) FILTER (WHERE '-Infinity'::float8 = ANY (a)) > 0 AS has_neg_inf,
       count(*) FILTER (WHERE a::text LIKE '%-0,%') > 0 AS has_neg_zero
FROM cases_double_precision WHERE pattern = 'special';

SELECT c.* FROM sort_types, LATERAL check_sort_cases(typ) c;

-- Edge cases, printed.
SELECT gpu_sort(NULL::int[]) IS NULL AS null_in_null_out;
SELECT gpu_sort('{}'::int[]), gpu_sort('{}'::float8[], true);
SELECT gpu_sort('{NULL,NULL}'::int[]), gpu_sort('{NULL,3,NULL,1}'::int[]), gpu_sort('{NULL,3,NULL,1}'::int[], true);
SELECT gpu_sort('{7}'::int8[]), gpu_sort('{2,1}'::int2[], algorithm => 'bitonic');
SELECT gpu_sort('{3,NaN,-Infinity,-0,0,NULL,Infinity,-1e-300,-NaN,1}'::float8[]);
SELECT gpu_sort('{3,NaN,-Infinity,-0,0,NULL,Infinity,-1e-30,NaN,1}'::float4[], true);
SELECT gpu_sort('{infinity,2020-02-29,-infinity,NULL,1999-12-31}'::date[]);
SELECT gpu_sort('{infinity,2020-02-29 12:00,-infinity,1999-12-31 23:59:59.999999}'::timestamp[], true);
-- The result starts at 1 whatever the input's bounds, and keeps the element type.
SELECT r, array_lower(r, 1), pg_typeof(r)
FROM (SELECT gpu_sort('[-3:1]={5,4,NULL,2,1}'::int4[]) r) s;
CREATE DOMAIN small_pos AS int4 CHECK (VALUE > 0);
SELECT r, pg_typeof(r) FROM (SELECT gpu_sort(ARRAY[3, 1, 2]::small_pos[]) r) s;
-- Every algorithm returns the same bits as the CPU, -0 and NaN included.
SELECT algo, gpu_sort('{1,-0,0,-NaN,-2,-0,NaN}'::float8[], false, algo)::text AS asc,
       gpu_sort('{1,-0,0,-NaN,-2,-0,NaN}'::float8[], true, algo)::text AS desc
FROM unnest('{auto,bitonic,quicksort,oddeven,radix,cpu}'::text[]) algo;
-- Algorithm names are case-insensitive.
SELECT gpu_sort('{2,1}'::int4[], false, 'RADIX');
