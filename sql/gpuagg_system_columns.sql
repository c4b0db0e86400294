-- System columns (ctid, tableoid, xmin, xmax, cmin, cmax), whole-row references, dropped columns
-- and columns added with a default (atthasmissing) in Custom Scan (GpuAgg)'s WHERE clause,
-- arguments and GROUP BY keys, and in GpuSort's rows: every result is checked against
-- PostgreSQL's own plan, and whether GpuAgg was planned where there is device code.
LOAD 'gpuext';
SET gpuext.agg_min_rows = 0;
SET gpuext.sort_min_rows = 0;
SET max_parallel_workers_per_gather = 0;

-- 'ok' when q's rows with GpuAgg allowed equal its rows with gpuext.enable_agg off and, where
-- there is device code (else GpuAgg is never planned), GpuAgg was planned exactly when planned
-- is true; else what differed.
CREATE FUNCTION check_agg(q text, planned boolean DEFAULT true) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  expect_planned boolean := (SELECT gpu_kernels AND device_state <> 'unavailable' FROM gpuext_info()) AND planned;
  plan jsonb;
  got text[];
  want text[];
BEGIN
  EXECUTE 'EXPLAIN (COSTS OFF, FORMAT JSON) ' || q INTO plan;
  EXECUTE format('SELECT array_agg(x ORDER BY x) FROM (SELECT row(s.*)::text x FROM (%s) s) t', q) INTO got;
  PERFORM set_config('gpuext.enable_agg', 'off', true);
  EXECUTE format('SELECT array_agg(x ORDER BY x) FROM (SELECT row(s.*)::text x FROM (%s) s) t', q) INTO want;
  PERFORM set_config('gpuext.enable_agg', 'on', true);
  IF got IS DISTINCT FROM want THEN
    RETURN format('%s rows against %s, first difference: got %s, want %s', cardinality(got), cardinality(want),
      (SELECT g FROM unnest(got, want) u(g, w) WHERE g IS DISTINCT FROM w LIMIT 1),
      (SELECT w FROM unnest(got, want) u(g, w) WHERE g IS DISTINCT FROM w LIMIT 1));
  END IF;
  IF jsonb_path_exists(plan, '$.** ? (@."Custom Plan Provider" == "GpuAgg")') <> expect_planned THEN
    RETURN format('GpuAgg planned: %s', NOT expect_planned);
  END IF;
  RETURN 'ok';
END $$;

-- 'ok' when q's rows, in order, equal those of PostgreSQL's Sort (gpuext.enable_sort off).
CREATE FUNCTION check_sort(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  got text[];
  want text[];
BEGIN
  EXECUTE format('SELECT array_agg(row(s.*)::text) FROM (%s) s', q) INTO got;
  PERFORM set_config('gpuext.enable_sort', 'off', true);
  EXECUTE format('SELECT array_agg(row(s.*)::text) FROM (%s) s', q) INTO want;
  PERFORM set_config('gpuext.enable_sort', 'on', true);
  RETURN CASE WHEN got IS NOT DISTINCT FROM want THEN 'ok' ELSE 'rows differ' END;
END $$;

-- Several pages with gaps (deleted rows, updated rows elsewhere), rows inserted by three
-- transactions and several commands; then a column of varying width dropped between the others,
-- and two columns added with defaults that rows written before them do not store.
CREATE TABLE sc (i int, g int, drop_me text, f float8, n numeric(10, 2)) WITH (fillfactor = 50);
INSERT INTO sc SELECT i, i % 7, repeat('d', i % 40), i * 0.5, i % 100 + 0.25 FROM generate_series(1, 2000) i;
BEGIN;
INSERT INTO sc SELECT i, i % 7, NULL, NULL, NULL FROM generate_series(2001, 2300) i;
INSERT INTO sc SELECT i, NULL, 'x', -i, -1.5 FROM generate_series(2301, 2500) i;
COMMIT;
DELETE FROM sc WHERE i % 11 = 0;
UPDATE sc SET f = f + 1 WHERE i % 13 = 0;
ALTER TABLE sc DROP COLUMN drop_me;
ALTER TABLE sc ADD COLUMN m int DEFAULT 7, ADD COLUMN mt text DEFAULT 'before';
INSERT INTO sc (i, g, f, n, m, mt) SELECT i, i % 5, i, i % 9, i % 3, 'after' || i % 2 FROM generate_series(2501, 3000) i;
ANALYZE sc;

-- ctid in WHERE, alone and against a parameter changing on each rescan (with TID range scans
-- off, else PostgreSQL's plan reads only the range)
SET enable_tidscan = off;
SELECT check_agg($$SELECT count(*), sum(f) FROM sc WHERE ctid < '(5,0)'$$);
SELECT check_agg($$SELECT count(*), max(i) FROM sc WHERE ctid >= '(3,10)' AND ctid <= '(8,1)' AND g > 2$$);
SELECT check_agg($$SELECT t.i, t2.c, t2.s FROM (SELECT ctid AS c, i FROM sc WHERE i < 40) t,
  LATERAL (SELECT count(*) c, sum(t2.i) s FROM sc t2 WHERE t2.ctid <= t.c) t2$$);
RESET enable_tidscan;
SELECT check_agg($$SELECT count(*), sum(i) FROM sc WHERE ctid <> '(1,1)'$$);
-- ctid, tableoid and the transaction columns as GROUP BY keys, alone, with others and in expressions
SELECT check_agg($$SELECT ctid, count(*), sum(f) FROM sc GROUP BY ctid$$);
SELECT check_agg($$SELECT count(*) FROM sc GROUP BY ctid, g, m$$);
SELECT check_agg($$SELECT (ctid::text::point)[0] AS blk, count(*), sum(i), avg(n) FROM sc GROUP BY 1$$);
SELECT check_agg($$SELECT tableoid::regclass, count(*), sum(i) FROM sc GROUP BY tableoid$$);
SELECT check_agg($$SELECT g, tableoid, count(*), min(f) FROM sc GROUP BY g, tableoid$$);
SELECT check_agg($$SELECT count(*), sum(i) FROM sc WHERE tableoid = 'sc'::regclass AND g = 3$$);
SELECT check_agg($$SELECT xmin = (SELECT min(xmin::text::bigint) FROM sc)::text::xid AS first_xact, count(*)
  FROM sc GROUP BY xmin$$);
SELECT check_agg($$SELECT cmin, cmax, count(*) FROM sc GROUP BY cmin, cmax$$);
SELECT check_agg($$SELECT count(*), sum(f) FROM sc WHERE xmax = '0'::xid$$);
-- system columns as arguments and FILTERs
SELECT check_agg($$SELECT count(ctid), count(*) FILTER (WHERE ctid > '(10,0)') FROM sc$$);
SELECT check_agg($$SELECT g, count(tableoid), sum(i) FILTER (WHERE ctid < '(4,0)') FROM sc GROUP BY g$$);
-- with the workers GpuAgg launches
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT check_agg($$SELECT ctid, count(*) FROM sc GROUP BY ctid$$);
SELECT check_agg($$SELECT tableoid, g, count(*), sum(f) FROM sc WHERE ctid > '(2,0)' GROUP BY tableoid, g$$);
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

-- Whole rows: as a key they are evaluated over the table's row; read by WHERE or an aggregate,
-- PostgreSQL's plan runs
SELECT check_agg($$SELECT sc::text IS NULL, count(*) FROM sc GROUP BY 1$$);
SELECT check_agg($$SELECT sc, count(*) FROM sc WHERE i < 100 GROUP BY sc$$);
SELECT check_agg($$SELECT count(sc), count(*) FROM sc$$, false);
SELECT check_agg($$SELECT count(*) FROM sc WHERE sc IS NOT NULL$$, false);
SELECT check_agg($$SELECT g, sum(i) FILTER (WHERE sc::text LIKE '%after%') FROM sc GROUP BY g$$, false);

-- The columns after the dropped one, and the added ones, in every role
SELECT check_agg($$SELECT sum(f), avg(n), min(i), max(f) FROM sc$$);
SELECT check_agg($$SELECT m, count(*), sum(i), sum(f), avg(n) FROM sc GROUP BY m$$);
SELECT check_agg($$SELECT mt, m, count(*), sum(m) FROM sc GROUP BY mt, m$$);
SELECT check_agg($$SELECT sum(m), avg(m), count(mt) FROM sc WHERE m > 3$$);
SELECT check_agg($$SELECT g, sum(m * 2 + i), sum(f * 2) FILTER (WHERE m = 7) FROM sc GROUP BY g$$);

-- GpuSort over rows carrying system columns
SELECT check_sort($$SELECT ctid, xmin = xmin AS same, tableoid::regclass, i, m, mt FROM sc ORDER BY f DESC, i$$);
SELECT check_sort($$SELECT i, g, ctid FROM sc WHERE ctid < '(20,0)' ORDER BY g NULLS FIRST, i DESC$$);
SELECT check_sort($$SELECT m, i FROM sc ORDER BY m, i$$);
-- whole rows read straight from the pages, past the dropped column and the added ones
SELECT check_sort($$SELECT * FROM sc ORDER BY m, i$$);
SELECT check_sort($$SELECT * FROM sc ORDER BY f DESC, i$$);

DROP TABLE sc;
DROP FUNCTION check_agg(text, boolean);
DROP FUNCTION check_sort(text);
