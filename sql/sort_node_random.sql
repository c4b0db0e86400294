-- The GpuSort plan node against PostgreSQL's own Sort, differentially: random tables (int2, int4,
-- int8, float4, float8, date, timestamp, timestamptz columns; NULLs, few or many distinct values,
-- NaN, -NaN, -0, infinities) and random ORDER BY lists (1-4 keys, columns or expressions, ASC/DESC,
-- NULLS FIRST/LAST, sometimes LIMIT/OFFSET), each run with gpuext.enable_sort on and off.
-- Ties may come out in any order, so per query we check that
--   (a) the sequence of ORDER BY key values is the same position by position (compared as typed
--       values with IS NOT DISTINCT FROM: -0 ties with 0, NaN with -NaN, as in PostgreSQL), and
--   (b) the rows are the same multiset (with LIMIT/OFFSET: leaving out the rows tied with the
--       first or last row, which either side may pick differently).
-- Every table has a unique id column (never a sort key) so that each output row can be traced
-- back to its table row; the key values are computed from the table row.
-- A build without device code plans no GpuSort (PostgreSQL's Sort stays): this file says so and stops.
SELECT gpu_kernels AND device_state <> 'unavailable' AS offloads FROM gpuext_info() \gset
\if :offloads
\else
\echo 'sort_node_random: skipped: a build without device code plans no GpuSort'
\quit
\endif
LOAD 'gpuext';  -- the planner hook is installed when the library loads
SET max_parallel_workers_per_gather = 0;
SET gpuext.sort_min_rows = 0;
SET gpuext.enable_sort = off;  -- on only while a checked query runs
SELECT setseed(0.5);

-- Per type: a generator over %r% (in [0,1)), special values, and a key expression over #.
CREATE TEMP TABLE rnd_types (typ text, gen text, specials text, expr text, spec_ratios float8[]);
INSERT INTO rnd_types VALUES
  ('int2', '(floor(%r% * 65536) - 32768)::int2', '{-32768,32767,0}', '(# / 3)', '{0,0.02,0.2}'),
  ('int4', '(floor(%r% * 4294967296) - 2147483648)::int4', '{-2147483648,2147483647,0}', '(# / 3)',
   '{0,0.02,0.2}'),
  ('int8', '(floor(%r% * 18446744073709551615::numeric) - 9223372036854775808)::int8',
   '{-9223372036854775808,9223372036854775807,0}', '(# / 3)', '{0,0.02,0.2}'),
  ('float4', '((%r% - 0.5) * 2e6)::float4', '{NaN,-NaN,Infinity,-Infinity,-0,0}', '-#', '{0.02,0.2}'),
  ('float8', '(%r% - 0.5) * 2e12', '{NaN,-NaN,Infinity,-Infinity,-0,0}', '-#', '{0.02,0.2}'),
  ('date', '(''2000-01-01''::date + floor((%r% - 0.5) * 2000000)::int)', '{infinity,-infinity}',
   '(# - 1)', '{0,0.02,0.2}'),
  ('timestamp', '(''2000-01-01''::timestamp + (%r% - 0.5) * interval ''100000 days'')',
   '{infinity,-infinity}', 'date_trunc(''day'', #)', '{0,0.02,0.2}'),
  ('timestamptz', '(''2000-01-01 UTC''::timestamptz + (%r% - 0.5) * interval ''100000 days'')',
   '{infinity,-infinity}', 'date_trunc(''day'', #)', '{0,0.02,0.2}');

CREATE TEMP TABLE rt_cols (tab text, col text, typ text, null_ratio float8, domain text, spec_ratio float8);
CREATE TEMP TABLE rt_queries (tab text, qno int, query text, keys text[], limited bool);

-- Phase 1: every table and every query text, before any query runs (so the random stream that
-- builds them cannot depend on what the sorts do).
CREATE FUNCTION pg_temp.make_tables(ntables int, nqueries int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  typs text[] := ARRAY(SELECT typ FROM rnd_types);
  tab text; ncols int; nrows int; has_pad bool;
  coldefs text; colexprs text; cname text; dom text; domexpr text;
  t rnd_types; nullr float8; specr float8;
  cnames text[]; ctyps text[];
  nk int; c int; tmpl text; keys text[]; obs text[]; sel text; sub text[]; lim text; x float8;
BEGIN
  FOR i IN 1..ntables LOOP
    tab := format('rt%s', lpad(i::text, 2, '0'));
    ncols := 2 + floor(random() * 4)::int;
    nrows := 500 + floor(random() * 4501)::int;
    has_pad := random() < 0.5;
    coldefs := 'id int4'; colexprs := 'g';
    cnames := '{}'; ctyps := '{}';
    FOR j IN 1..ncols LOOP
      cname := typs[1 + floor(random() * cardinality(typs))::int];
      SELECT * INTO t FROM rnd_types WHERE typ = cname;
      cname := 'c' || j;
      nullr := (ARRAY[0, 0.05, 0.5])[1 + floor(random() * 3)::int];
      dom := (ARRAY['few', 'some', 'full'])[1 + floor(random() * 3)::int];
      domexpr := CASE dom WHEN 'few' THEN '(floor(random() * 3) / 3)'     -- 3 distinct values
                          WHEN 'some' THEN '(floor(random() * 100) / 100)' -- 100 distinct values
                          ELSE 'random()' END;
      specr := t.spec_ratios[1 + floor(random() * cardinality(t.spec_ratios))::int];
      coldefs := coldefs || format(', %s %s', cname, t.typ);
      colexprs := colexprs || format(
        ', CASE WHEN random() < %s THEN NULL WHEN random() < %s THEN (%L::%s[])[1 + floor(random() * %s)::int] ELSE %s END',
        nullr, specr, t.specials, t.typ, cardinality(t.specials::text[]), replace(t.gen, '%r%', domexpr));
      cnames := cnames || cname; ctyps := ctyps || t.typ;
      INSERT INTO rt_cols VALUES (tab, cname, t.typ, nullr, dom, specr);
    END LOOP;
    IF has_pad THEN
      coldefs := coldefs || ', pad text';
      colexprs := colexprs || ', repeat(md5(g::text), 1 + g % 3)';
    END IF;
    EXECUTE format('CREATE TEMP TABLE %I (%s)', tab, coldefs);
    EXECUTE format('INSERT INTO %I SELECT %s FROM generate_series(1, %s) g', tab, colexprs, nrows);
    EXECUTE format('ANALYZE %I', tab);

    FOR q IN 1..nqueries LOOP
      nk := 1 + floor(random() * 4)::int;
      keys := '{}'; obs := '{}';
      FOR k IN 1..nk LOOP
        c := 1 + floor(random() * ncols)::int;
        tmpl := '#' || cnames[c];
        IF random() < 0.25 THEN
          tmpl := replace((SELECT expr FROM rnd_types WHERE typ = ctyps[c]), '#', tmpl);
        END IF;
        keys := keys || tmpl;
        obs := obs || (replace(tmpl, '#', '')
                       || (ARRAY['', ' ASC', ' DESC'])[1 + floor(random() * 3)::int]
                       || (ARRAY['', ' NULLS FIRST', ' NULLS LAST'])[1 + floor(random() * 3)::int]);
      END LOOP;
      x := random();
      IF x < 0.5 THEN
        sel := '*';
      ELSIF x < 0.75 THEN  -- id and a shuffled subset of the columns
        sub := '{}';
        FOR j IN 1..ncols LOOP
          IF random() < 0.5 THEN sub := sub || cnames[j]; END IF;
        END LOOP;
        FOR j IN REVERSE cardinality(sub)..2 LOOP
          c := 1 + floor(random() * j)::int;
          cname := sub[j]; sub[j] := sub[c]; sub[c] := cname;
        END LOOP;
        sel := array_to_string('{id}' || sub, ', ');
      ELSE                 -- the keys are not in the output at all
        sel := CASE WHEN has_pad THEN 'pad, id' ELSE 'id' END;
      END IF;
      lim := '';
      IF random() < 0.2 THEN
        lim := ' LIMIT ' || (1 + floor(random() * 100)::int);
        IF random() < 0.5 THEN
          lim := lim || ' OFFSET ' || floor(random() * nrows / 2)::int;
        END IF;
      END IF;
      INSERT INTO rt_queries VALUES (tab, q,
        format('SELECT %s FROM %I ORDER BY %s%s', sel, tab, array_to_string(obs, ', '), lim),
        keys, lim <> '');
    END LOOP;
  END LOOP;
END $$;

-- Run one query with gpuext.enable_sort on or off: the output's ids and row texts in order, and
-- whether the plan holds a GpuSort node.  The rows come through a cursor, so the sort node is
-- also read in batches.
CREATE FUNCTION pg_temp.run_sorted(query text, gpusort bool,
                                   OUT ids int[], OUT rows text[], OUT used_gpusort bool)
LANGUAGE plpgsql AS $$
DECLARE
  rec record;
  line text;
BEGIN
  PERFORM set_config('gpuext.enable_sort', CASE WHEN gpusort THEN 'on' ELSE 'off' END, false);
  used_gpusort := false;
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
    used_gpusort := used_gpusort OR line LIKE '%Custom Scan (GpuSort)%';
  END LOOP;
  ids := '{}'; rows := '{}';
  FOR rec IN EXECUTE query LOOP
    ids := ids || rec.id;
    rows := rows || rec::text;
  END LOOP;
  PERFORM set_config('gpuext.enable_sort', 'off', false);
END $$;

-- Compare two runs of a query on table tab whose ORDER BY keys are keys (expressions over #).
-- order_bad: the first position where the key values differ (NULL: none);
-- multiset_bad: the row multisets differ.
CREATE FUNCTION pg_temp.compare_runs(tab text, keys text[], limited bool,
                                     a_ids int[], a_rows text[], b_ids int[], b_rows text[],
                                     OUT order_bad bigint, OUT multiset_bad bool)
LANGUAGE plpgsql AS $$
DECLARE
  ka text := array_to_string(ARRAY(SELECT replace(k, '#', 'ta.') FROM unnest(keys) k), ', ');
  kb text := array_to_string(ARRAY(SELECT replace(k, '#', 'tb.') FROM unnest(keys) k), ', ');
  kf text := array_to_string(ARRAY(SELECT replace(k, '#', 'tf.') FROM unnest(keys) k), ', ');
  kl text := array_to_string(ARRAY(SELECT replace(k, '#', 'tl.') FROM unnest(keys) k), ', ');
  sorted_rows text := format($q$
    SELECT ARRAY(SELECT u.w FROM unnest($1::int[], $2::text[]) u(id, w)
                 LEFT JOIN %1$I ta ON ta.id = u.id
                 LEFT JOIN %1$I tf ON tf.id = $4
                 LEFT JOIN %1$I tl ON tl.id = $5
                 WHERE NOT $3 OR NOT (ROW(%2$s) IS NOT DISTINCT FROM ROW(%3$s)
                                      OR ROW(%2$s) IS NOT DISTINCT FROM ROW(%4$s))
                 ORDER BY u.w)$q$, tab, ka, kf, kl);
  sa text[];
  sb text[];
BEGIN
  EXECUTE format($q$
    SELECT min(u.i) FROM unnest($1::int[], $2::int[]) WITH ORDINALITY u(a, b, i)
    LEFT JOIN %1$I ta ON ta.id = u.a
    LEFT JOIN %1$I tb ON tb.id = u.b
    WHERE ta.id IS NULL OR tb.id IS NULL OR ROW(%2$s) IS DISTINCT FROM ROW(%3$s)$q$, tab, ka, kb)
    INTO order_bad USING a_ids, b_ids;
  -- With LIMIT/OFFSET, the rows tied with the first or last row (by b's order) are left out.
  EXECUTE sorted_rows INTO sa USING a_ids, a_rows, limited, b_ids[1], b_ids[cardinality(b_ids)];
  EXECUTE sorted_rows INTO sb USING b_ids, b_rows, limited, b_ids[1], b_ids[cardinality(b_ids)];
  multiset_bad := sa IS DISTINCT FROM sb;
END $$;

-- Phase 2: every query of a table with GpuSort and with PostgreSQL's Sort.
CREATE FUNCTION pg_temp.check_table(tabname text)
RETURNS TABLE (tab text, queries int, gpusort_plans int, order_mismatches int, multiset_mismatches int)
LANGUAGE plpgsql AS $$
DECLARE
  q rt_queries;
  r_on record;
  r_off record;
  c record;
BEGIN
  tab := tabname; queries := 0; gpusort_plans := 0; order_mismatches := 0; multiset_mismatches := 0;
  FOR q IN SELECT * FROM rt_queries WHERE rt_queries.tab = tabname ORDER BY qno LOOP
    r_on := pg_temp.run_sorted(q.query, true);
    r_off := pg_temp.run_sorted(q.query, false);
    IF r_off.used_gpusort THEN
      RAISE NOTICE 'GpuSort used with gpuext.enable_sort = off: %', q.query;
    END IF;
    c := pg_temp.compare_runs(q.tab, q.keys, q.limited, r_on.ids, r_on.rows, r_off.ids, r_off.rows);
    queries := queries + 1;
    -- A LIMIT this small is a top-N heap, which stays PostgreSQL's Sort.
    gpusort_plans := gpusort_plans + (r_on.used_gpusort OR q.limited)::int;
    IF c.order_bad IS NOT NULL THEN
      order_mismatches := order_mismatches + 1;
      RAISE NOTICE 'order mismatch at row % of %: % (GpuSort: % rows, Sort: % rows)',
        c.order_bad, q.query, q.keys, cardinality(r_on.ids), cardinality(r_off.ids);
    END IF;
    IF c.multiset_bad THEN
      multiset_mismatches := multiset_mismatches + 1;
      RAISE NOTICE 'row multiset mismatch: %', q.query;
    END IF;
  END LOOP;
  RETURN NEXT;
END $$;

SELECT pg_temp.make_tables(12, 8);

-- The tables hold what the generator promises: every type, NULLs, few and many distinct values,
-- and the special values.
SELECT c.typ, count(*) AS columns,
       count(*) FILTER (WHERE c.null_ratio > 0) AS with_nulls,
       count(*) FILTER (WHERE c.domain = 'few') AS few_distinct,
       count(*) FILTER (WHERE c.spec_ratio > 0) AS with_specials
FROM rt_cols c GROUP BY c.typ ORDER BY min(array_position(ARRAY(SELECT typ FROM rnd_types), c.typ));
CREATE FUNCTION pg_temp.has_value(tab text, col text, typ text, v text) RETURNS bool
LANGUAGE plpgsql AS $$
DECLARE r bool;
BEGIN
  EXECUTE format('SELECT EXISTS (SELECT FROM %I WHERE %I::text = %L)', tab, col, v) INTO r;
  RETURN r;
END $$;
SELECT bool_or(pg_temp.has_value(tab, col, typ, 'NaN')) AS nan,
       bool_or(pg_temp.has_value(tab, col, typ, '-0')) AS minus_zero,
       bool_or(pg_temp.has_value(tab, col, typ, 'Infinity')) AS inf,
       bool_or(pg_temp.has_value(tab, col, typ, '-Infinity')) AS minus_inf
FROM rt_cols WHERE typ LIKE 'float%';
SELECT bool_or(pg_temp.has_value(tab, col, typ, 'infinity')) AS inf,
       bool_or(pg_temp.has_value(tab, col, typ, '-infinity')) AS minus_inf
FROM rt_cols WHERE typ IN ('date', 'timestamp', 'timestamptz');
SELECT count(*) AS queries,
       count(*) FILTER (WHERE cardinality(keys) > 1) AS multi_key,
       count(*) FILTER (WHERE array_to_string(keys, ' ') ~ '[-/(]') AS with_expressions,
       count(*) FILTER (WHERE query ~ ' DESC') AS with_desc,
       count(*) FILTER (WHERE query ~ 'NULLS FIRST') AS nulls_first,
       count(*) FILTER (WHERE query ~ 'NULLS LAST') AS nulls_last,
       count(*) FILTER (WHERE query ~ '^SELECT (pad, )?id FROM') AS keys_not_output,
       count(*) FILTER (WHERE limited) AS with_limit
FROM rt_queries;

-- One representative query, fixed: the plan holds the GpuSort node when enabled, a Sort when not.
SET gpuext.enable_sort = on;
EXPLAIN (COSTS OFF) SELECT * FROM rt01 ORDER BY c2 DESC NULLS LAST, c1;
SET gpuext.enable_sort = off;
EXPLAIN (COSTS OFF) SELECT * FROM rt01 ORDER BY c2 DESC NULLS LAST, c1;

-- The comparison is not vacuous: it notices a reversed order and a changed row.
SELECT c.order_bad IS NOT NULL AS reversed_order_found, c.multiset_bad AS same_rows_flagged
FROM pg_temp.run_sorted('SELECT * FROM rt01 ORDER BY c2, c1', false) a,
     pg_temp.run_sorted('SELECT * FROM rt01 ORDER BY c2 DESC, c1 DESC', false) b,
     LATERAL pg_temp.compare_runs('rt01', '{#c2,#c1}', false, a.ids, a.rows, b.ids, b.rows) c;
SELECT c.order_bad IS NOT NULL AS same_order_flagged, c.multiset_bad AS changed_row_found
FROM pg_temp.run_sorted('SELECT * FROM rt01 ORDER BY c2, c1', false) a,
     LATERAL pg_temp.compare_runs('rt01', '{#c2,#c1}', false, a.ids, a.rows,
                                  a.ids, a.rows[1:cardinality(a.rows) - 1] || 'x'::text) c;

-- The differential check; every count but queries and gpusort_plans is 0.
CREATE TEMP TABLE rt_results AS
SELECT c.* FROM (SELECT DISTINCT tab FROM rt_queries) t, LATERAL pg_temp.check_table(t.tab) c;
SELECT * FROM rt_results ORDER BY tab;
SELECT 'total' AS total, sum(queries) AS queries, sum(gpusort_plans) AS gpusort_plans,
       sum(order_mismatches) AS order_mismatches, sum(multiset_mismatches) AS multiset_mismatches
FROM rt_results;

RESET gpuext.enable_sort;
RESET gpuext.sort_min_rows;
