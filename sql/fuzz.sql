-- Fuzz: random arrays of every supported element type and some unsupported ones (NULLs, empty,
-- multi-dimensional, odd lower bounds, special floats, now and then large) thrown at every
-- function and aggregate and at GPU ORDER BY; each answer is compared with PostgreSQL's own over
-- the same values, and an ERROR must come exactly where one is due (unsupported type, several
-- dimensions, no such function, float8 overflow on both sides).  Deterministic: setseed.
LOAD 'gpuext';
SET gpuext.sort_min_rows = 0;
SET gpuext.min_gpu_elements = 0;
SET client_min_messages = warning;
SELECT setseed(0.6);

-- A random value of type t as text (NULL sometimes).
CREATE FUNCTION fuzz_value(t text, nullp float8) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  r float8 := random();
BEGIN
  IF random() < nullp THEN RETURN 'NULL'; END IF;
  CASE t
    WHEN 'int2' THEN RETURN (floor(random() * 65536) - 32768)::text;
    WHEN 'int4' THEN RETURN (CASE WHEN r < 0.1 THEN 2147483647 - floor(random() * 3)
                                  WHEN r < 0.2 THEN -2147483648 + floor(random() * 3)
                                  ELSE floor(random() * 2000001) - 1000000 END)::text;
    WHEN 'int8' THEN RETURN (CASE WHEN r < 0.1 THEN 9223372036854775807 - floor(random() * 3)::int8
                                  WHEN r < 0.2 THEN -9223372036854775807 - floor(random() * 2)::int8
                                  ELSE floor(random() * 2e12)::int8 - 1000000000000 END)::text;
    WHEN 'float4', 'float8' THEN
      RETURN CASE WHEN r < 0.03 THEN 'NaN' WHEN r < 0.05 THEN 'Infinity' WHEN r < 0.07 THEN '-Infinity'
                  WHEN r < 0.10 THEN '-0' WHEN r < 0.11 AND t = 'float8' THEN '1e308'
                  ELSE ((floor(random() * 16000001) - 8000000) / 8)::text END;
    WHEN 'date' THEN RETURN CASE WHEN r < 0.03 THEN 'infinity' WHEN r < 0.05 THEN '-infinity'
                                 ELSE (date '2000-01-01' + floor(random() * 200000 - 100000)::int)::text END;
    WHEN 'timestamp', 'timestamptz' THEN
      RETURN CASE WHEN r < 0.03 THEN 'infinity' WHEN r < 0.05 THEN '-infinity'
                  ELSE (timestamp '2000-01-01' + random() * interval '100000 days' - interval '50000 days')::text END;
    WHEN 'numeric' THEN RETURN (random() * 1000)::numeric(10, 3)::text;
    WHEN 'text' THEN RETURN quote_ident(md5(random()::text));
    ELSE RETURN (random() < 0.5)::text;
  END CASE;
END $$;

-- A random array literal of type t: empty, one dimension (now and then large, or with odd bounds)
-- or two dimensions.
CREATE FUNCTION fuzz_array(t text, OUT lit text, OUT multi boolean) LANGUAGE plpgsql AS $$
DECLARE
  shape float8 := random();
  n int := CASE WHEN random() < 0.01 THEN 50000 + floor(random() * 50000)::int
                ELSE floor(random() * random() * 3000)::int END;
  nullp float8 := CASE WHEN random() < 0.5 THEN 0 ELSE random() * 0.5 END;
  lo int := floor(random() * 20)::int - 10;
  rows int := 1 + floor(random() * 4)::int;
  cols int := 1 + floor(random() * 4)::int;
  vals text[];
BEGIN
  multi := false;
  IF shape < 0.05 THEN
    lit := '{}';
  ELSIF shape < 0.15 THEN
    multi := true;
    SELECT '{' || string_agg('{' || (SELECT string_agg(fuzz_value(t, nullp), ',')
                                     FROM generate_series(1, cols) c WHERE r > 0) || '}', ',') || '}'
      INTO lit FROM generate_series(1, rows) r;
  ELSE
    SELECT array_agg(fuzz_value(t, nullp)) INTO vals FROM generate_series(1, greatest(n, 1));
    lit := '{' || array_to_string(vals, ',') || '}';
    IF shape < 0.3 THEN
      lit := format('[%s:%s]=', lo, lo + cardinality(vals) - 1) || lit;
    END IF;
  END IF;
END $$;

-- One comparison: gpuext's expression against PostgreSQL's; an ERROR counts as expected where one
-- is due (expect), or where both overflow.
CREATE TEMP TABLE fuzz_log (kind text, outcome text, detail text);
CREATE FUNCTION fuzz_check(kind text, ours text, theirs text, expect boolean) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  same boolean;
  ours_ok boolean := true;
  theirs_ok boolean := true;
  msg text;
BEGIN
  BEGIN
    EXECUTE format('SELECT (%s) IS NOT DISTINCT FROM (%s)', ours, theirs) INTO same;
  EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS msg = MESSAGE_TEXT;
    BEGIN EXECUTE 'SELECT ' || ours; EXCEPTION WHEN OTHERS THEN ours_ok := false; END;
    BEGIN EXECUTE 'SELECT ' || theirs; EXCEPTION WHEN OTHERS THEN theirs_ok := false; END;
    INSERT INTO fuzz_log VALUES (kind,
      CASE WHEN NOT ours_ok AND (expect OR (NOT theirs_ok AND msg ~ 'out of range')) THEN 'expected error'
           ELSE 'unexpected error' END,
      left(msg || ': ' || ours, 300));
    RETURN;
  END;
  INSERT INTO fuzz_log VALUES (kind,
    CASE WHEN expect THEN 'no error where due' WHEN same THEN 'same' ELSE 'wrong' END, left(ours, 300));
END $$;

-- Every function, aggregate and ORDER BY over one random array of type t.
CREATE FUNCTION fuzz_case(t text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  supported boolean := t IN ('int2', 'int4', 'int8', 'float4', 'float8', 'date', 'timestamp', 'timestamptz');
  agg_supported boolean := supported OR t = 'numeric';
  numeric_type boolean := t IN ('int2', 'int4', 'int8', 'float4', 'float8', 'numeric');
  fl boolean := t IN ('float4', 'float8');
  arr record := fuzz_array(t);
  a text;
  q text;
  dir text := CASE WHEN random() < 0.5 THEN 'DESC' ELSE 'ASC' END;
  nulls text := CASE WHEN random() < 0.5 THEN 'NULLS FIRST' ELSE 'NULLS LAST' END;
  algo text := (ARRAY['auto', 'bitonic', 'quicksort', 'oddeven', 'radix', 'cpu'])[1 + floor(random() * 6)::int];
  exact_sum text := CASE WHEN fl THEN format('sum(x::float8::numeric)::%s', t) ELSE 'sum(x)' END;
BEGIN
  a := format('%L::%s[]', arr.lit, t);
  -- gpu_sort, both directions and a random algorithm.
  PERFORM fuzz_check('gpu_sort', format('gpu_sort(%s)', a),
    format('SELECT coalesce(array_agg(x ORDER BY x), ''{}'') FROM unnest(%s) x', a),
    NOT supported OR arr.multi);
  PERFORM fuzz_check('gpu_sort', format('gpu_sort(%s, true, %L)', a, algo),
    format('SELECT coalesce(array_agg(x ORDER BY x DESC), ''{}'') FROM unnest(%s) x', a),
    NOT supported OR arr.multi
      OR (algo = 'oddeven' AND (SELECT count(x) FROM unnest(arr.lit::text[]) x) > 65536));
  -- Array aggregates (sum and avg exist for numbers only, min, max and count for every supported type).
  PERFORM fuzz_check('array aggregates',
    format('ROW(gpu_min(%1$s), gpu_max(%1$s), gpu_count(%1$s))', a),
    format('SELECT ROW(min(x), max(x), count(x)) FROM unnest(%s) x', a), NOT agg_supported OR arr.multi);
  PERFORM fuzz_check('array aggregates', format('ROW(gpu_sum(%1$s), gpu_avg(%1$s))', a),
    format('SELECT ROW(%s, %s) FROM unnest(%s) x', exact_sum,
      CASE WHEN fl THEN 'sum(x::float8::numeric)::float8 / count(x)' ELSE 'avg(x)' END, a),
    NOT numeric_type OR arr.multi);
  -- Column aggregates (any shape: unnest flattens), grouped at random.  Text and bool have no such
  -- aggregate.
  q := format('FROM (SELECT x, o %% %s AS g FROM unnest(%s) WITH ORDINALITY u(x, o)) s GROUP BY g',
    1 + floor(random() * 3)::int, a);
  PERFORM fuzz_check('column aggregates',
    format('SELECT array_agg(r ORDER BY g) FROM (SELECT g, ROW(gpu_min(x), gpu_max(x), gpu_count(x)) r %s) t', q),
    format('SELECT array_agg(r ORDER BY g) FROM (SELECT g, ROW(min(x), max(x), count(x)) r %s) t', q),
    NOT agg_supported);
  IF numeric_type THEN
    PERFORM fuzz_check('column aggregates',
      format('SELECT array_agg(r ORDER BY g) FROM (SELECT g, ROW(gpu_sum(x), gpu_avg(x)) r %s) t', q),
      format('SELECT array_agg(r ORDER BY g) FROM (SELECT g, ROW(%s, %s) r %s) t', exact_sum,
        CASE WHEN fl THEN 'sum(x::float8::numeric)::float8 / count(x)' ELSE 'avg(x)' END, q), false);
  END IF;
  -- gpu_query_agg and gpu_query_sort over the array's values (min and max compared as text, but
  -- floats as floats: -0 is 0).
  PERFORM fuzz_check('gpu_query_agg',
    format('SELECT ROW(count, min::%s, max::%s) FROM gpu_query_agg(%L)', CASE WHEN fl THEN t ELSE 'text' END,
      CASE WHEN fl THEN t ELSE 'text' END, 'SELECT unnest(' || a || ')'),
    format('SELECT ROW(count(x), min(x)::%s, max(x)::%s) FROM unnest(%s) x', CASE WHEN fl THEN t ELSE 'text' END,
      CASE WHEN fl THEN t ELSE 'text' END, a), NOT agg_supported);
  PERFORM fuzz_check('gpu_query_sort',
    format('SELECT array_agg(x) FROM gpu_query_sort(%L, %s) AS s(x %s)', 'SELECT unnest(' || a || ')',
      CASE WHEN dir = 'DESC' THEN 'true' ELSE 'false' END, t),
    format('SELECT array_agg(x ORDER BY x %s) FROM unnest(%s) x', dir, a), NOT supported);
  -- ORDER BY (GpuSort where the type is supported), with the row number as the second key.
  PERFORM fuzz_check('ORDER BY',
    format('SELECT array_agg(o) FROM (SELECT x, o FROM unnest(%s) WITH ORDINALITY u(x, o) ORDER BY x %s %s, o) s',
      a, dir, nulls),
    format('SELECT array_agg(o ORDER BY x %s %s, o) FROM unnest(%s) WITH ORDINALITY u(x, o)', dir, nulls, a),
    false);
END $$;

SELECT count(fuzz_case((ARRAY['int2', 'int4', 'int8', 'float4', 'float8', 'date', 'timestamp', 'timestamptz',
                             'numeric', 'text', 'bool'])[1 + (i % 11)]))
FROM generate_series(1, 440) i;

-- Cases per kind: every answer the same as PostgreSQL's, every ERROR where one is due.
SELECT kind, count(*) AS cases, count(*) FILTER (WHERE outcome = 'same') AS same,
       count(*) FILTER (WHERE outcome = 'expected error') AS expected_errors,
       count(*) FILTER (WHERE outcome NOT IN ('same', 'expected error')) AS failures
FROM fuzz_log GROUP BY ROLLUP (kind) ORDER BY kind;
-- The failures, if any.
SELECT kind, outcome, detail FROM fuzz_log WHERE outcome NOT IN ('same', 'expected error') LIMIT 10;
