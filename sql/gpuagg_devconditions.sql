-- Custom Scan (GpuAgg)'s device scan with conditions beyond a list of comparisons: IN lists,
-- NOT IN, OR, OR of ANDs, NOT pushed down to the comparisons, and text compared as its bytes (=, <>, IN,
-- LIKE of a prefix, suffix or infix, any other LIKE pattern matched whole, char(n) without its
-- trailing blanks), in WHERE clauses and FILTERs, with SQL's
-- NULL logic (a NULL column, a NULL in the list), NaN and -0.  Every result is checked against
-- PostgreSQL's own plan in the same test; where there is a device, that the device scan ran
-- (EXPLAIN ANALYZE's Device Scan line), or that the forms it does not run (a NOT IN list holding
-- a NULL, more comparisons than a program holds, an OR of ANDs whose distribution would, LIKE
-- patterns past 128 bytes or ending in their escape) kept the CPU's path.
LOAD 'gpuext';
SET gpuext.agg_min_rows = 0;
SET gpuext.min_gpu_elements = 0;
SET max_parallel_workers_per_gather = 0;

-- 'ok' when q's rows with GpuAgg allowed equal its rows with gpuext.enable_agg off and, where
-- there is a device, the device scan ran exactly when devscan is true; else what differed.
CREATE FUNCTION check_cond(q text, devscan boolean DEFAULT true)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  offloads boolean := (SELECT gpu_kernels AND device_state <> 'unavailable' FROM gpuext_info());
  plan jsonb;
  node jsonb;
  got text;
  want text;
  agg text := 'SELECT count(*) || '' rows: '' || coalesce(string_agg(r, '' '' ORDER BY r), '''') '
              'FROM (SELECT row(s.*)::text AS r FROM (%s) s) g';
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
  EXECUTE format(agg, q) INTO got;
  PERFORM set_config('gpuext.enable_agg', 'off', true);
  EXECUTE format(agg, q) INTO want;
  PERFORM set_config('gpuext.enable_agg', 'on', true);
  IF got IS DISTINCT FROM want THEN
    RETURN format('got %s, want %s', got, want);
  END IF;
  IF NOT offloads THEN
    RETURN 'ok';
  END IF;
  node := jsonb_path_query_first(plan, '$.** ? (@."Custom Plan Provider" == "GpuAgg")');
  IF node IS NULL THEN
    RETURN 'GpuAgg not planned';
  END IF;
  IF (node ? 'Device Scan Blocks') <> devscan THEN
    RETURN format('device scan: %s', NOT devscan);
  END IF;
  IF devscan AND (node->>'Tuples Decoded On CPU')::bigint <> 0 THEN
    RETURN format('%s tuples on the CPU', node->>'Tuples Decoded On CPU');
  END IF;
  RETURN 'ok';
END $$;

-- NULLs in every column; NaN, -0 and infinities among the floats.
CREATE TABLE dcond (i2 int2, i4 int4, i8 int8, f4 float4, f8 float8, d date, ts timestamp,
                    n numeric(10, 2), t text, c char(6), v varchar(12));
INSERT INTO dcond
SELECT CASE WHEN i % 23 = 0 THEN NULL ELSE (i % 11 - 5)::int2 END,
       CASE WHEN i % 13 = 0 THEN NULL ELSE i % 50 END,
       CASE WHEN i % 29 = 0 THEN NULL ELSE i::int8 * 1000003 % 2000 - 1000 END,
       CASE WHEN i % 31 = 0 THEN NULL WHEN i % 37 = 0 THEN 'NaN' ELSE (i % 9 - 4) / 2.0 END,
       CASE WHEN i % 19 = 0 THEN NULL WHEN i % 17 = 0 THEN 'NaN' WHEN i % 41 = 0 THEN '-0'
            WHEN i % 43 = 0 THEN '-Infinity' ELSE (i % 40) / 4.0 END,
       CASE WHEN i % 47 = 0 THEN NULL ELSE date '2000-01-01' + i % 30 END,
       timestamp '2000-01-01' + (i % 12) * interval '1 hour',
       CASE WHEN i % 53 = 0 THEN NULL ELSE (i % 300) / 3.0 END,
       'x' || i % 5,
       CASE WHEN i % 59 = 0 THEN NULL ELSE (ARRAY['ab', 'ab c', '', 'abcdef', 'é'])[1 + i % 5] END,
       CASE WHEN i % 61 = 0 THEN NULL ELSE (ARRAY['MAIL', 'SHIP', 'REG AIR', 'AIR', 'MAIL ', 'ÅÄÖ', ''])[1 + i % 7] END
FROM generate_series(1, 20000) i;
ANALYZE dcond;

-- IN lists of each compiled type, a NULL in the list, one value, NaN and -0 (equal to 0).
SELECT check_cond('SELECT count(*), sum(i8), min(f8) FROM dcond WHERE i4 IN (1, 5, 7, 49)');
SELECT check_cond('SELECT count(*), sum(i4) FROM dcond WHERE i2 IN (-5, 0, 3)');
SELECT check_cond('SELECT count(*), sum(i4) FROM dcond WHERE i8 IN (-1000, 0, 999, 5)');
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE i4 IN (1, NULL, 7)');
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE i4 IN (3)');
SELECT check_cond('SELECT count(*), sum(i4) FROM dcond WHERE f8 IN (''NaN'', 0, 2.5, ''-Infinity'')');
SELECT check_cond('SELECT count(*), sum(i4) FROM dcond WHERE f4 IN (-2, 0.5, ''NaN'')');
SELECT check_cond('SELECT count(*), sum(i4) FROM dcond WHERE d IN (date ''2000-01-05'', date ''2000-01-07'')');
SELECT check_cond('SELECT count(*), sum(i4) FROM dcond WHERE ts IN (timestamp ''2000-01-01 03:00'', timestamp ''2000-01-01 11:00'')');
-- NOT IN: each value's <>; a NULL in the list makes it never true (the CPU's path).
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE i4 NOT IN (1, 5, 7)');
SELECT check_cond('SELECT count(*), sum(i4) FROM dcond WHERE f8 NOT IN (''NaN'', 0)');
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE i4 NOT IN (1, NULL)', false);
-- OR of comparisons and null tests, ANDed with others; numeric columns within the groups.
SELECT check_cond('SELECT count(*), sum(i8), max(f4) FROM dcond WHERE i4 < 5 OR f8 > 9');
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE (i4 < 5 OR i4 > 45) AND f8 IS NOT NULL');
SELECT check_cond('SELECT count(*), sum(i4) FROM dcond WHERE i4 IS NULL OR f8 IS NULL OR f4 = ''NaN''');
SELECT check_cond('SELECT count(*), sum(i4) FROM dcond WHERE (n < 10 OR n > 90.5) AND (i2 IN (1, 2) OR d > date ''2000-01-20'')');
SELECT check_cond('SELECT count(*), sum(i4) FROM dcond WHERE i4 IN (1, 2) OR i8 IN (0, 1) OR f8 = ''-Infinity''');
-- NOT over OR and AND, as the planner leaves it (pushed down to the operators' negators).
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE NOT (i4 < 5 OR f8 > 9)');
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE NOT (i4 < 25 AND f8 >= 2)');
-- OR and IN in FILTERs, with and without GROUP BY.
SELECT check_cond('SELECT count(*) FILTER (WHERE i4 IN (1, 2, 3) OR f8 = ''NaN''), sum(i8) FILTER (WHERE i2 NOT IN (0, 1)), avg(f8) FILTER (WHERE f4 < 0 OR f4 IS NULL) FROM dcond WHERE i8 > -900');
SELECT check_cond('SELECT d, count(*) FILTER (WHERE i4 IN (1, 2, 3) OR f8 > 8), sum(i8) FROM dcond WHERE i2 IN (1, 2, 3) OR i2 IS NULL GROUP BY d');
-- Text as its bytes: text, varchar (through text's operators) and char(n) (without trailing
-- blanks, as bpchareq), empty and multibyte strings, IN and NOT IN lists, LIKE 'prefix%'.
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE t = ''x1''');
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE t <> ''x1'' AND v <> ''AIR''');
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE v IN (''MAIL'', ''SHIP'', ''ÅÄÖ'')');
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE v NOT IN (''MAIL'', ''SHIP'', '''')');
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE v IN (''MAIL'', NULL)');
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE v NOT IN (''MAIL'', NULL)', false);
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE v LIKE ''MAI%'' OR v LIKE ''%''');
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE v NOT LIKE ''REG%'' AND t LIKE ''x%''');
-- LIKE '%suffix', '%infix%' and a pattern without %: the bytes at the end, anywhere, or all.
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE v LIKE ''%AIL'' OR t LIKE ''%1%''');
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE v NOT LIKE ''%I%'' AND t NOT LIKE ''x1''');
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE v LIKE ''%ÄÖ'' OR v LIKE ''%Ä%'' OR v LIKE ''%%''');
SELECT check_cond('SELECT v, count(*) FILTER (WHERE t LIKE ''%2''), sum(i4) FILTER (WHERE v LIKE ''%H%'') FROM dcond GROUP BY v');
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE c = ''ab'' OR c = ''''');
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE c IN (''ab c'', ''é'', ''abcdef'')');
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE c <> ''ab   ''');
SELECT check_cond('SELECT v, count(*) FILTER (WHERE c = ''ab'' OR t = ''x2''), sum(i4) FILTER (WHERE t <> ''x0'') FROM dcond WHERE v <> '''' GROUP BY v');
-- An OR of ANDs, distributed into OR groups that must all hold: NULLs, NaN, IN lists, text,
-- NOT over it, in WHERE, FILTER and CASE, with and without GROUP BY.
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE (i4 < 5 AND f8 > 2) OR i8 < 0');
SELECT check_cond('SELECT count(*), sum(i8), min(f8) FROM dcond WHERE (i4 < 5 AND f8 > 2) OR (i8 < 0 AND d > date ''2000-01-10'') OR t = ''x1''');
SELECT check_cond('SELECT count(*), sum(i4) FROM dcond WHERE (f8 = ''NaN'' AND i4 IS NULL) OR (f4 IS NULL AND n > 50) OR (f8 = 0 AND i2 IS NOT NULL)');
SELECT check_cond('SELECT count(*), sum(i4) FROM dcond WHERE (v IN (''MAIL'', ''SHIP'') AND i2 > 0) OR (i4 NOT IN (1, 2) AND i8 > 900) OR c = ''ab''');
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE NOT ((i4 < 5 AND f8 > 2) OR (i8 < 0 AND f4 >= 0))');
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE ((i4 < 5 OR i2 = 3) AND f8 > 2) OR NOT (i8 < 0 OR d IS NULL)');
SELECT check_cond('SELECT count(*) FILTER (WHERE (i4 < 5 AND f8 > 2) OR i8 < 0), sum(i8) FILTER (WHERE (i2 > 0 AND t = ''x3'') OR f4 IS NULL), sum(CASE WHEN (i4 < 10 AND i2 > 0) OR i8 > 900 THEN i4 ELSE 0 END) FROM dcond');
SELECT check_cond('SELECT d, count(*), sum(i8) FROM dcond WHERE (i4 < 5 AND f8 > 2) OR (i2 IN (1, 2) AND v LIKE ''S%'') GROUP BY d');
-- Forms the device does not run: an OR of ANDs past the program's room once distributed (81
-- groups), more comparisons than a program holds.
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE (i4 < 5 AND f8 > 2 AND i2 > 0) OR (i8 < 0 AND f4 > 0 AND d > date ''2000-01-03'') OR (n > 50 AND i4 > 40 AND f8 < 1) OR (t = ''x1'' AND i2 < 0 AND i8 > 500)', false);
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE i4 IN (' ||
  (SELECT string_agg(g::text, ', ') FROM generate_series(0, 40) g) || ')', false);

-- Text constants past 16 bytes, compared in parts of 16 (each its own comparison: the value's
-- length, and the part's bytes at their place): =, <>, IN, NOT IN, LIKE of a prefix or a suffix
-- and NOT LIKE, char(n), in OR groups and FILTERs; an infix that long is matched whole.
CREATE TABLE dlong (i int4, t text, c char(40), v varchar(60));
INSERT INTO dlong
SELECT i, CASE WHEN i % 11 = 0 THEN NULL ELSE 'MEDIUM POLISHED ' || (ARRAY['BRASS', 'COPPER', 'TIN'])[i % 3 + 1] ||
            repeat('-', i % 4) END,
       CASE WHEN i % 13 = 0 THEN NULL ELSE 'the quick brown fox jumps ' || i % 5 END,
       repeat('abcdefghij', i % 5) || (i % 7)
FROM generate_series(1, 3000) i;
VACUUM ANALYZE dlong;
SELECT check_cond('SELECT count(*), sum(i) FROM dlong WHERE t = ''MEDIUM POLISHED TIN'' OR c = ''the quick brown fox jumps 3''');
SELECT check_cond('SELECT count(*), sum(i) FROM dlong WHERE t <> ''MEDIUM POLISHED COPPER--'' AND v <> ''abcdefghijabcdefghij2''');
SELECT check_cond('SELECT count(*), sum(i) FROM dlong WHERE v IN (''abcdefghijabcdefghijabcdefghij1'', ''abcdefghij4'') OR t NOT IN (''MEDIUM POLISHED BRASS'', ''MEDIUM POLISHED TIN-'')');
SELECT check_cond('SELECT count(*), sum(i) FROM dlong WHERE t LIKE ''MEDIUM POLISHED C%'' OR v LIKE ''%jabcdefghij3''');
SELECT check_cond('SELECT count(*) FILTER (WHERE t NOT LIKE ''MEDIUM POLISHED B%''), sum(i) FILTER (WHERE v NOT LIKE ''%abcdefghijabcdefghij0'') FROM dlong');
SELECT check_cond('SELECT count(*), sum(i) FROM dlong WHERE NOT (t = ''MEDIUM POLISHED TIN--'' OR i < 10)');
SELECT check_cond('SELECT count(*), sum(i) FROM dlong WHERE v LIKE ''%abcdefghijabcdefghija%''');
DROP TABLE dlong;

-- Any other LIKE pattern, matched whole as PostgreSQL's MatchText matches it: _ (one character,
-- multibyte ones too), % inside, escapes (the default \ and an ESCAPE clause, which the planner
-- folds into the pattern), a long infix (TPC-H Q13's); NOT LIKE, in OR groups, FILTERs, CASE and
-- under GROUP BY.  Past 128 bytes a pattern stays on the CPU; one ending in its escape raises
-- PostgreSQL's error.
CREATE TABLE dlike (i int4, t text, v varchar(40));
INSERT INTO dlike
SELECT i, CASE WHEN i % 17 = 0 THEN NULL ELSE
         (ARRAY['a%b', 'a_b', 'a\b', 'axb', 'ab', 'ÅÄÖ', 'Å_Ö', '𝄞x', 'x𝄞', '', '%', '_',
                'special requests', 'special packages requests', 'Customer Complaints'])[1 + i % 15] ||
         repeat('z', i % 4) END,
       'MEDIUM POLISHED ' || (ARRAY['BRASS', 'COPPER', 'TIN'])[1 + i % 3] || ' ' || i % 7
FROM generate_series(1, 3000) i;
VACUUM ANALYZE dlike;
SELECT check_cond('SELECT count(*), sum(i) FROM dlike WHERE t LIKE ''a_b%''');
SELECT check_cond('SELECT count(*), sum(i) FROM dlike WHERE t LIKE ''a\_b%'' OR t LIKE ''a\%b_''');
SELECT check_cond('SELECT count(*), sum(i) FROM dlike WHERE t LIKE ''a\\b%'' OR t LIKE ''\%%''');
SELECT check_cond('SELECT count(*), sum(i) FROM dlike WHERE t LIKE ''a!_b%'' ESCAPE ''!''');
SELECT check_cond('SELECT count(*), sum(i) FROM dlike WHERE t LIKE ''_'' OR t LIKE ''__'' OR t LIKE ''Å_Ö%''');
SELECT check_cond('SELECT count(*), sum(i) FROM dlike WHERE t LIKE ''%_𝄞'' OR t LIKE ''𝄞_%'' OR t LIKE ''\Å%''');
SELECT check_cond('SELECT count(*), sum(i) FROM dlike WHERE t LIKE ''%special%requests%''');
SELECT check_cond('SELECT count(*), sum(i) FROM dlike WHERE t NOT LIKE ''%special%requests%'' AND t NOT LIKE ''%Customer%Complaints%''');
SELECT check_cond('SELECT count(*), sum(i) FROM dlike WHERE v LIKE ''%EDIUM POLISHED COPPER%'' OR v LIKE ''%TIN _''');
SELECT check_cond('SELECT count(*) FILTER (WHERE t LIKE ''%\%%''), sum(i) FILTER (WHERE t NOT LIKE ''a_b_%''), sum(CASE WHEN t LIKE ''%x_'' THEN i ELSE 0 END) FROM dlike');
SELECT check_cond('SELECT v, count(*), sum(i) FROM dlike WHERE t LIKE ''%a%b%'' OR t LIKE ''%%z_z'' GROUP BY v');
SELECT check_cond('SELECT count(*), sum(i) FROM dlike WHERE t LIKE ''%' || repeat('a', 130) || '%''', false);
SELECT count(*), sum(i) FROM dlike WHERE t LIKE 'zz\';
DROP TABLE dlike;
-- char(n) LIKE matches the value as stored, its trailing blanks too (bpcharlike is textlike).
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE c LIKE ''ab'' OR c LIKE ''é''');
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE c LIKE ''ab____'' OR c LIKE ''%c  ''');
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE c NOT LIKE ''%f'' AND c LIKE ''a%''');
SELECT check_cond('SELECT count(*) FILTER (WHERE c LIKE ''_ %''), sum(i4) FILTER (WHERE c NOT LIKE ''é%'') FROM dcond');

-- A compressed value in a compared text column: its batch is read on the CPU, exactly.
INSERT INTO dcond (i4, i8, t, v) VALUES (1, 1, repeat('x1', 3000), 'MAIL');
SELECT check_cond('SELECT count(*), sum(i8) FROM dcond WHERE t = ''x1'' OR v = ''MAIL''', NULL);

DROP TABLE dcond;
