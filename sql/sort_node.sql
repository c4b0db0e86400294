-- Custom Scan (GpuSort) in place of PostgreSQL's Sort: plan shapes for every place a Sort
-- appears, and results equal to PostgreSQL's own sort (gpuext.enable_sort = off).
-- The planner hook comes with the library: preload it (shared_preload_libraries) or LOAD it.
-- A build without device code plans no GpuSort (PostgreSQL's Sort stays): this file says so and stops.
SELECT gpu_kernels AND device_state <> 'unavailable' AS offloads FROM gpuext_info() \gset
\if :offloads
\else
\echo 'sort_node: skipped: a build without device code plans no GpuSort'
\quit
\endif
LOAD 'gpuext';
SET gpuext.sort_min_rows = 0;

CREATE TABLE sn (id int4, a int4, b int8, c float8, d date, ts timestamptz, r real, s int2, t text);
INSERT INTO sn
SELECT i, (i * 7919) % 1000 - 500, (i::int8 * 104729) % 100003 * 92233720368,
       CASE WHEN i % 17 = 0 THEN NULL WHEN i % 23 = 0 THEN 'NaN' WHEN i % 29 = 0 THEN '-Infinity'
            WHEN i % 31 = 0 THEN '-0' ELSE ((i * 31337) % 10007) / 7.0 - 700 END,
       CASE WHEN i % 19 = 0 THEN NULL WHEN i % 37 = 0 THEN 'infinity' ELSE date '2000-01-01' + (i * 13) % 4000 END,
       timestamptz '2020-01-01 00:00+00' + ((i * 7) % 5000) * interval '1 minute',
       CASE WHEN i % 11 = 0 THEN NULL ELSE ((i * 3) % 101)::real / 3 END,
       ((i * 5) % 300 - 150)::int2, 'row ' || i
FROM generate_series(1, 5000) i;
ANALYZE sn;

-- Runs q with GpuSort and with PostgreSQL's Sort; the row sequences must be identical
-- (every ORDER BY below ends in a unique key, so the order is total).
CREATE FUNCTION same_as_postgres(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  rec record;
  gpu text[] := '{}';
  pg text[] := '{}';
BEGIN
  PERFORM set_config('gpuext.enable_sort', 'on', true);
  FOR rec IN EXECUTE q LOOP gpu := gpu || rec::text; END LOOP;
  PERFORM set_config('gpuext.enable_sort', 'off', true);
  FOR rec IN EXECUTE q LOOP pg := pg || rec::text; END LOOP;
  PERFORM set_config('gpuext.enable_sort', 'on', true);
  RETURN CASE WHEN gpu = pg THEN format('same %s rows', cardinality(gpu))
              ELSE format('DIFFERENT: %s rows vs %s, first difference at %s', cardinality(gpu), cardinality(pg),
                          (SELECT min(i) FROM generate_subscripts(gpu, 1) i WHERE gpu[i] IS DISTINCT FROM pg[i]))
         END;
END $$;

-- Top-level ORDER BY: one key, several keys, each direction and NULLS placement, expressions.
EXPLAIN (COSTS OFF) SELECT * FROM sn ORDER BY c, id;
EXPLAIN (COSTS OFF) SELECT * FROM sn ORDER BY d DESC NULLS LAST, c NULLS FIRST, b DESC, id;
EXPLAIN (COSTS OFF, VERBOSE) SELECT a * 2, -c FROM sn ORDER BY a * 2 DESC, -c, id;
SELECT q, same_as_postgres(q) FROM unnest(ARRAY[
  'SELECT * FROM sn ORDER BY c, id',
  'SELECT * FROM sn ORDER BY c DESC, id DESC',
  'SELECT * FROM sn ORDER BY c NULLS FIRST, id',
  'SELECT * FROM sn ORDER BY c DESC NULLS LAST, id',
  'SELECT * FROM sn ORDER BY a, b DESC, c, id',
  'SELECT * FROM sn ORDER BY d DESC NULLS LAST, c NULLS FIRST, r, s DESC, ts, id',
  'SELECT id, a * 2, -c FROM sn ORDER BY a * 2 DESC, -c, id',
  'SELECT id, r, s FROM sn ORDER BY r NULLS FIRST, s, id DESC',
  'SELECT id, date_trunc(''hour'', ts) FROM sn ORDER BY date_trunc(''hour'', ts) DESC, id'
]) q;

-- -0 ties with 0 (and -NaN with NaN), so the next key decides, as in PostgreSQL.
SELECT same_as_postgres($$SELECT * FROM (VALUES (1, 0::float8, 0::real), (2, '-0', '-0'), (3, 0, 'NaN'),
  (4, '-0', '-NaN'), (5, 'NaN', 0), (6, '-NaN', '-0')) v(id, c, r) ORDER BY c, id DESC$$);
SELECT same_as_postgres($$SELECT * FROM (VALUES (1, 0::float8, 0::real), (2, '-0', '-0'), (3, 0, 'NaN'),
  (4, '-0', '-NaN'), (5, 'NaN', 0), (6, '-NaN', '-0')) v(id, c, r) ORDER BY r DESC, c, id$$);
-- Output of nothing but keys: rows are rebuilt from the sorted keys, -0 and NaN included.
SELECT same_as_postgres($$SELECT c, id FROM sn ORDER BY c, id$$);
SELECT same_as_postgres($$SELECT c, id FROM sn ORDER BY c DESC NULLS LAST, id DESC$$);
SELECT same_as_postgres($$SELECT id, r, d, s FROM sn ORDER BY id DESC, r, d, s$$);
SELECT same_as_postgres($$SELECT r, ts, id, id FROM sn ORDER BY r NULLS FIRST, ts DESC, id$$);
-- Keys read in place at fixed offsets, and where they are not: NULLs, a dropped column, rows
-- stored before a column was added (its default is not in them), a column of varying width first.
CREATE TABLE sn_alt AS SELECT id, (id * 37) % 101 AS a, c, s FROM sn;
ALTER TABLE sn_alt DROP COLUMN a;
INSERT INTO sn_alt SELECT id + 5000, c, s FROM sn WHERE id % 3 = 0;
ALTER TABLE sn_alt ADD COLUMN z int DEFAULT 7;
INSERT INTO sn_alt SELECT id + 10000, c, s, id % 5 FROM sn WHERE id % 4 = 0;
ALTER TABLE sn_alt ADD COLUMN t text DEFAULT 'x', ADD COLUMN w int8 DEFAULT 1;
UPDATE sn_alt SET w = id % 3 WHERE id % 7 = 0;
ANALYZE sn_alt;
SELECT same_as_postgres($$SELECT z, id FROM sn_alt ORDER BY z, id$$);
SELECT same_as_postgres($$SELECT c, z, id FROM sn_alt ORDER BY c DESC, z, id$$);
SELECT same_as_postgres($$SELECT w, id FROM sn_alt ORDER BY w, id DESC$$);
DROP TABLE sn_alt;
EXPLAIN (COSTS OFF) SELECT float8send(c) AS bits, count(*) FROM (SELECT c FROM sn ORDER BY c OFFSET 0) s GROUP BY 1 ORDER BY 1;
SELECT same_as_postgres($$SELECT float8send(c) AS bits, count(*) FROM (SELECT c FROM sn ORDER BY c OFFSET 0) s
  GROUP BY 1 ORDER BY 1$$);
SELECT same_as_postgres($$SELECT float4send(r) AS bits, count(*) FROM (SELECT r FROM
  (VALUES ('-0'::real), ('0'), ('-0'), ('NaN'), (NULL), ('-Infinity'), ('-0')) v(r) ORDER BY r DESC OFFSET 0) s
  GROUP BY 1 ORDER BY 1$$);

-- The output keeps -0, NaN and infinities in ORDER BY's places.
SELECT c FROM sn WHERE c IN ('NaN', '-Infinity', '-0') OR c IS NULL ORDER BY c NULLS FIRST, id LIMIT 3;
SELECT id, c FROM sn WHERE id IN (17, 23, 29, 31, 1, 2) ORDER BY c DESC, id;

-- In a subquery, a window function, sort-based GROUP BY and DISTINCT, a merge join.
SET enable_hashagg = off;
SET enable_hashjoin = off;
SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT * FROM (SELECT id, c FROM sn ORDER BY c, id OFFSET 10) s WHERE id % 2 = 0;
-- PostgreSQL 17 adds the window's definition to WindowAgg ("Window: w1 AS ..."): left out here.
CREATE FUNCTION plan_without_window(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF line !~ '^\s*Window: ' THEN
      RETURN NEXT line;
    END IF;
  END LOOP;
END $$;
SELECT plan_without_window('SELECT id, row_number() OVER (ORDER BY c, id) FROM sn');
EXPLAIN (COSTS OFF) SELECT s, count(*) FROM sn GROUP BY s;
EXPLAIN (COSTS OFF) SELECT DISTINCT a FROM sn;
EXPLAIN (COSTS OFF) SELECT x.id, y.id FROM sn x JOIN sn y ON x.a = y.s;
SELECT q, same_as_postgres(q) FROM unnest(ARRAY[
  'SELECT * FROM (SELECT id, c FROM sn ORDER BY c, id OFFSET 10) s WHERE id % 2 = 0',
  'SELECT id, row_number() OVER (ORDER BY c, id), sum(a) OVER (PARTITION BY s ORDER BY id) FROM sn ORDER BY id',
  'SELECT s, count(*), min(id) FROM sn GROUP BY s ORDER BY s',
  'SELECT DISTINCT a FROM sn ORDER BY a',
  'SELECT x.id, y.id FROM sn x JOIN sn y ON x.a = y.s ORDER BY x.id, y.id'
]) q;
RESET enable_hashagg;
RESET enable_hashjoin;
RESET enable_nestloop;

-- ORDER BY ... LIMIT: a bounded sort keeps only what the limit needs.
EXPLAIN (COSTS OFF) SELECT * FROM sn ORDER BY c DESC, id LIMIT 7;
EXPLAIN (COSTS OFF) SELECT * FROM sn ORDER BY c DESC, id LIMIT 7 OFFSET 3;
SELECT id, c FROM sn ORDER BY c DESC, id LIMIT 7 OFFSET 3;
SELECT q, same_as_postgres(q) FROM unnest(ARRAY[
  'SELECT * FROM sn ORDER BY c DESC, id LIMIT 7',
  'SELECT * FROM sn ORDER BY a, id LIMIT 200000',
  'SELECT * FROM sn ORDER BY b, id LIMIT 0',
  'SELECT * FROM sn ORDER BY c, id LIMIT 9223372036854775807 OFFSET 9223372036854775000'
]) q;

-- Scrollable cursors: backward fetches, absolute positions, past either end.
BEGIN;
DECLARE cur SCROLL CURSOR FOR SELECT id, a, c FROM sn ORDER BY a, c DESC, id;
FETCH 3 FROM cur;
FETCH BACKWARD 2 FROM cur;
FETCH ABSOLUTE 4999 FROM cur;
FETCH FORWARD 3 FROM cur;
FETCH BACKWARD 2 FROM cur;
FETCH ABSOLUTE 1 FROM cur;
FETCH BACKWARD 1 FROM cur;
FETCH FORWARD 1 FROM cur;
MOVE LAST IN cur;
FETCH RELATIVE 0 FROM cur;
COMMIT;

-- The same walk with GpuSort and with PostgreSQL's Sort, on a scrollable cursor over a keys-only
-- sort (rows rebuilt from keys a batch at a time): forward and backward across batches, jumps.
CREATE FUNCTION cursor_walk_same(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  cur refcursor;
  rec record;
  walk text[];
  first text[];
BEGIN
  FOR side IN 1..2 LOOP
    PERFORM set_config('gpuext.enable_sort', CASE side WHEN 1 THEN 'on' ELSE 'off' END, true);
    walk := '{}';
    OPEN cur SCROLL FOR EXECUTE q;
    FOR i IN 1..300 LOOP FETCH NEXT FROM cur INTO rec; walk := walk || rec::text; END LOOP;
    FOR i IN 1..290 LOOP FETCH PRIOR FROM cur INTO rec; walk := walk || rec::text; END LOOP;
    MOVE ABSOLUTE 4000 IN cur;
    FOR i IN 1..10 LOOP FETCH NEXT FROM cur INTO rec; walk := walk || rec::text; END LOOP;
    FOR i IN 1..600 LOOP FETCH PRIOR FROM cur INTO rec; walk := walk || rec::text; END LOOP;
    FETCH LAST FROM cur INTO rec; walk := walk || rec::text;
    FOR i IN 1..5 LOOP FETCH PRIOR FROM cur INTO rec; walk := walk || rec::text; END LOOP;
    FETCH FIRST FROM cur INTO rec; walk := walk || rec::text;
    FETCH PRIOR FROM cur INTO rec; walk := walk || (CASE WHEN FOUND THEN rec::text ELSE 'none' END);
    CLOSE cur;
    IF side = 1 THEN first := walk; END IF;
  END LOOP;
  PERFORM set_config('gpuext.enable_sort', 'on', true);
  RETURN CASE WHEN first = walk THEN format('same walk of %s rows', cardinality(walk)) ELSE 'DIFFERENT' END;
END $$;
EXPLAIN (COSTS OFF) SELECT a, c FROM sn ORDER BY a DESC, c;
SELECT cursor_walk_same('SELECT a, c FROM sn ORDER BY a DESC, c');
SELECT cursor_walk_same('SELECT c FROM sn ORDER BY c DESC NULLS LAST');

-- Rescans: with a changing parameter (re-read) and without (replay), inside nested loops.
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
EXPLAIN (COSTS OFF)
SELECT o.i, x.id FROM generate_series(1, 3) o(i),
  LATERAL (SELECT id FROM sn WHERE sn.a > o.i * 100 ORDER BY c, id LIMIT 2) x;
SELECT o.i, x.id FROM generate_series(1, 3) o(i),
  LATERAL (SELECT id FROM sn WHERE sn.a > o.i * 100 ORDER BY c, id LIMIT 2) x;
SELECT q, same_as_postgres(q) FROM unnest(ARRAY[
  'SELECT o.i, x.id FROM generate_series(1, 4) o(i), LATERAL (SELECT id FROM sn WHERE sn.s > o.i * 10 ORDER BY c DESC, id OFFSET 5 LIMIT 200000) x',
  'SELECT o.i, x.id, x.r FROM (VALUES (1), (2), (3)) o(i) JOIN (SELECT id, r FROM sn ORDER BY r, id OFFSET 0) x ON x.id % 1000 = o.i ORDER BY o.i, x.r, x.id'
]) q;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;

-- Parallel plans: sorts in workers below Gather Merge, and above Gather.
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT * FROM sn ORDER BY c, id;
EXPLAIN (COSTS OFF) SELECT s, sum(a) FROM sn GROUP BY s ORDER BY sum(a), s;
SELECT q, same_as_postgres(q) FROM unnest(ARRAY[
  'SELECT * FROM sn ORDER BY c, id',
  'SELECT s, sum(a) FROM sn GROUP BY s ORDER BY sum(a), s'
]) q;
-- force_parallel_mode is debug_parallel_query from PostgreSQL 16 on.
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
                       THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END, 'on', false) AS in_worker;
SELECT same_as_postgres('SELECT id, b FROM sn ORDER BY b DESC, id');
SELECT set_config(CASE WHEN current_setting('server_version_num')::int >= 160000
                       THEN 'debug_parallel_query' ELSE 'force_parallel_mode' END, 'off', false) AS in_worker;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- More input than the memory budget: the rows go on to tuplesort, same answer.
SET gpuext.sort_work_mem = '64kB';
SELECT q, same_as_postgres(q) FROM unnest(ARRAY[
  'SELECT * FROM sn ORDER BY c, id',
  'SELECT id, c FROM sn ORDER BY c DESC, id',
  'SELECT c, id FROM sn WHERE id % 3 <> 0 ORDER BY c, id DESC',
  'SELECT * FROM sn ORDER BY t'
]) q;
RESET gpuext.sort_work_mem;

-- GpuSort reads a plain scan's heap pages itself: it sees what the query's snapshot sees, no
-- more: rows deleted, updated and inserted in this transaction, and a cursor opened before them.
CREATE FUNCTION cursor_rows(cur refcursor, OUT fetched int, OUT deleted_since int, OUT changed_since int)
LANGUAGE plpgsql AS $$
DECLARE
  rec record;
BEGIN
  fetched := 0; deleted_since := 0; changed_since := 0;
  LOOP
    FETCH cur INTO rec;
    EXIT WHEN NOT FOUND;
    fetched := fetched + 1;
    deleted_since := deleted_since + (rec.id % 5 = 0)::int;
    changed_since := changed_since + (rec.id > 100000)::int;
  END LOOP;
END $$;
CREATE TABLE sn_vis AS SELECT * FROM sn;
ANALYZE sn_vis;
BEGIN;
DECLARE before_change CURSOR FOR SELECT c, id FROM sn_vis ORDER BY c DESC, id;
DELETE FROM sn_vis WHERE id % 5 = 0;
UPDATE sn_vis SET c = -c, id = id + 100000 WHERE id % 7 = 0;
INSERT INTO sn_vis (id, c) SELECT 200000 + i, i / 3.0 FROM generate_series(1, 300) i;
EXPLAIN (COSTS OFF) SELECT c, id FROM sn_vis ORDER BY c DESC, id;
SELECT q, same_as_postgres(q) FROM unnest(ARRAY[
  'SELECT * FROM sn_vis ORDER BY c, id',
  'SELECT c, id FROM sn_vis ORDER BY c DESC, id'
]) q;
SELECT * FROM cursor_rows('before_change');
ROLLBACK;
DROP TABLE sn_vis;

-- Sorts GpuSort leaves to PostgreSQL, and why (DEBUG1).
SET client_min_messages = debug1;
EXPLAIN (COSTS OFF) SELECT * FROM sn ORDER BY t;
EXPLAIN (COSTS OFF) SELECT * FROM sn ORDER BY a USING >, id;
SET gpuext.sort_min_rows = 100000;
EXPLAIN (COSTS OFF) SELECT * FROM sn ORDER BY a;
RESET client_min_messages;
RESET gpuext.sort_min_rows;
SET gpuext.enable_sort = off;
EXPLAIN (COSTS OFF) SELECT * FROM sn ORDER BY a;
RESET gpuext.enable_sort;
