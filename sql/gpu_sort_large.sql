-- gpu_sort on about a million elements, every type x algorithm x direction,
-- against PostgreSQL's own ORDER BY computed in the same run.
SELECT setseed(0.5);

CREATE TEMP TABLE large_types (typ regtype, gen text, special text);
INSERT INTO large_types VALUES
  ('int2', '(floor(r * 65536) - 32768)::int2', '32767'),
  ('int4', '(floor(r * 4294967296) - 2147483648)::int4', '-2147483648'),
  ('int8', '(floor(r * 18446744073709551615::numeric) - 9223372036854775808)::int8', '9223372036854775807'),
  ('float4', '((r - 0.5) * 2e6)::float4', 'NaN'),
  ('float8', '(r - 0.5) * 2e12', '-Infinity'),
  ('date', '''2000-01-01''::date + floor((r - 0.5) * 2000000)::int', 'infinity'),
  ('timestamp', '''2000-01-01''::timestamp + (r - 0.5) * interval ''100000 days''', '-infinity'),
  ('timestamptz', '''2000-01-01 UTC''::timestamptz + (r - 0.5) * interval ''100000 days''', 'infinity');

-- 1000003 elements (a prime): random values, 5% NULL, 5% of one special value, and -0 for floats.
CREATE FUNCTION check_large(t regtype, gen text, special text)
RETURNS TABLE (typ regtype, algorithm text, cases bigint, wrong bigint)
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format($q$
    CREATE TEMP TABLE large_case AS
    SELECT a, coalesce((SELECT array_agg(x ORDER BY x) FROM unnest(a) x), '{}') AS asc_ref,
              coalesce((SELECT array_agg(x ORDER BY x DESC) FROM unnest(a) x), '{}') AS desc_ref
    FROM (SELECT array_agg(CASE WHEN c < 0.05 THEN NULL WHEN c < 0.1 THEN %L::%s %s ELSE v END) AS a
          FROM (SELECT random() AS c, %s AS v
                FROM generate_series(1, 1000003) i, LATERAL (SELECT random() + i * 0 AS r) rr) s) s$q$,
    special, t,
    CASE WHEN t IN ('real'::regtype, 'double precision'::regtype)
         THEN format('WHEN c < 0.11 THEN %L::%s', '-0', t) ELSE '' END,
    gen);
  RETURN QUERY
    SELECT t, g.algo, count(*),
           count(*) FILTER (WHERE gpu_sort(c.a, d.descending, g.algo)
                            IS DISTINCT FROM CASE WHEN d.descending THEN c.desc_ref ELSE c.asc_ref END)
    FROM large_case c,
         (VALUES ('auto'), ('bitonic'), ('quicksort'), ('radix'), ('cpu')) g(algo),
         (VALUES (false), (true)) d(descending)
    GROUP BY g.algo ORDER BY g.algo;
  DROP TABLE large_case;
END $$;

SELECT c.* FROM large_types, LATERAL check_large(typ, gen, special) c;

-- Sorted, reverse and all-equal million-element inputs.
CREATE TEMP TABLE large_patterns AS
SELECT p, a FROM (VALUES
  ('sorted', (SELECT array_agg(i * 7) FROM generate_series(-500000, 500002) i)),
  ('reverse', (SELECT array_agg(i * 7) FROM generate_series(500002, -500000, -1) i)),
  ('equal', array_fill(-42, ARRAY[1000003])),
  ('few', (SELECT array_agg(((i::int8 * 7919) % 16 - 8)::int4) FROM generate_series(1, 1000003) i))) v(p, a);
SELECT p, algo,
       gpu_sort(a, false, algo) = (SELECT array_agg(x ORDER BY x) FROM unnest(a) x) AS asc_ok,
       gpu_sort(a, true, algo) = (SELECT array_agg(x ORDER BY x DESC) FROM unnest(a) x) AS desc_ok
FROM large_patterns, unnest('{auto,bitonic,quicksort,radix,cpu}'::text[]) algo
ORDER BY p, algo;
