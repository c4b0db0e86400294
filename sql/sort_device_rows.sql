-- GpuSort past its host budget, at PostgreSQL's default work_mem (4MB): the rows are kept in device
-- memory (gpuext.sort_rows_on_device).  Rows and keys go up in pieces while the input is read, and
-- come back in sorted order a piece at a time as rows go out; pieces are made small here
-- (gpuext.debug_sort_piece_size) so that every sort takes many.  Every result is compared with
-- PostgreSQL's Sort: row and keys-only sorts, scroll cursors, merge joins (mark and restore),
-- rescans; EXPLAIN says where the rows were kept; failures at each stage (moving the rows up,
-- sending a piece, the sort, the first piece back, a piece back with rows already out).
-- sort_device_rows.out: a device (the fake device or a GPU, with the GPU service or without);
-- sort_device_rows_1.out: a CPU-only build (PostgreSQL's Sort, faults never fire);
-- sort_device_rows_2.out: a CUDA build without a GPU (PostgreSQL's Sort inside GpuSort).
LOAD 'gpuext';
CREATE SCHEMA sort_device_rows;
SET search_path = sort_device_rows, public;
SET gpuext.device = auto;
SET gpuext.sort_min_rows = 0;
SET max_parallel_workers_per_gather = 0;
SET jit = off;
SET gpuext.debug_sort_piece_size = '64kB';
SHOW work_mem;
SHOW gpuext.sort_work_mem;
-- 100,000 rows of about 90 bytes (9 MB as minimal tuples), and 400,000 rows of two keys (6 MB of keys).
CREATE TEMP TABLE dr AS
  SELECT i, (hashint4(i) % 1000)::int AS k, i / 2 AS k2,
         CASE WHEN i % 97 = 0 THEN NULL WHEN i % 1013 = 0 THEN 'NaN'::float8
              WHEN i % 2027 = 0 THEN '-0'::float8 ELSE hashint8(i)::float8 / 7 END AS f,
         'row ' || i || repeat('x', i % 60) AS t
  FROM generate_series(1, 100000) i;
CREATE TEMP TABLE dk AS
  SELECT (hashint4(i) % 100000)::int8 AS a, CASE WHEN i % 89 = 0 THEN NULL ELSE (i % 777)::float8 / 3 END AS b
  FROM generate_series(1, 400000) i;
ANALYZE dr;
ANALYZE dk;
-- The rows of q as one text, ours and PostgreSQL's Sort's the same.
CREATE FUNCTION digest(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  EXECUTE format('SELECT md5(string_agg(s::text, %L)) FROM (%s) s', ',', q) INTO r;
  RETURN r;
END $$;
CREATE FUNCTION same(q text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE ours text;
BEGIN
  ours := digest(q);
  SET LOCAL gpuext.enable_sort = off;
  RETURN ours = digest(q);
END $$;
-- EXPLAIN ANALYZE's lines with the figures that vary between runs and devices as N (and, without a
-- device, the reason there is none).
CREATE FUNCTION explained(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) ' || q LOOP
    line := regexp_replace(line, '(rows=|loops=)[0-9.]+', '\1N', 'g');
    line := regexp_replace(line, '[0-9]+kB', 'NkB', 'g');
    line := regexp_replace(line, 'no GPU: .*', 'no GPU: ...');
    RETURN NEXT line;
  END LOOP;
END $$;
-- The node's figures from EXPLAIN's JSON.
CREATE FUNCTION sort_json(q text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  j json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF, FORMAT JSON) ' || q INTO j;
  RETURN (j -> 0 -> 'Plan')::jsonb;
END $$;
-- Device memory this backend holds (none after a statement) and pinned memory (none, or staging).
CREATE FUNCTION held() RETURNS TABLE (device_bytes bigint, staging_or_none boolean)
LANGUAGE sql AS $$ SELECT device_bytes, pinned_bytes IN (0, 8388608) FROM gpuext_info() $$;

-- Row sorts and keys-only sorts, ascending and descending, NULLs and NaN, many pieces each way.
SELECT same('SELECT * FROM dr ORDER BY k, f DESC, i');
SELECT same('SELECT * FROM dr ORDER BY f NULLS FIRST, t');
SELECT same('SELECT t, i FROM dr ORDER BY i DESC');
SELECT same('SELECT a, b FROM dk ORDER BY a, b');
SELECT same('SELECT b, a FROM dk ORDER BY b DESC NULLS LAST, a');
SELECT same('SELECT a FROM dk ORDER BY a DESC');
SELECT * FROM held();

-- EXPLAIN: the rows in device memory; host memory within the budget (and the row that passed it).
SELECT explained('SELECT * FROM dr ORDER BY k, f DESC, i');
SELECT explained('SELECT a, b FROM dk ORDER BY a, b');
SELECT (p ->> 'Sort Space Used')::int <= 4097 AS host_within_budget, p ->> 'Rows Kept' AS rows_kept,
       (p ->> 'Device Space Used')::int > 9000 AS rows_on_device
FROM sort_json('SELECT * FROM dr ORDER BY k, f DESC, i') p;
-- Off: past the budget tuplesort takes the rows, as before.
SET gpuext.sort_rows_on_device = off;
SELECT explained('SELECT * FROM dr ORDER BY k, f DESC, i');
RESET gpuext.sort_rows_on_device;

-- More rows than the planner expects: the device buffers grow as the rows come.
CREATE FUNCTION few_rows() RETURNS SETOF dr LANGUAGE sql ROWS 10 AS $$ SELECT * FROM dr $$;
SELECT same('SELECT * FROM few_rows() ORDER BY f DESC, i');

-- Scroll cursors: forward, backward, to the end and back, jumps across pieces.
CREATE FUNCTION cursor_walk(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  c refcursor := 'walk';
  r record;
  acc text := '';
BEGIN
  OPEN c SCROLL FOR EXECUTE q;
  FETCH ABSOLUTE 40000 FROM c INTO r; acc := acc || r::text;
  FETCH PRIOR FROM c INTO r; acc := acc || r::text;
  FETCH RELATIVE -15000 FROM c INTO r; acc := acc || r::text;
  FETCH LAST FROM c INTO r; acc := acc || r::text;
  FETCH RELATIVE -99999 FROM c INTO r; acc := acc || r::text;
  FETCH ABSOLUTE 77777 FROM c INTO r; acc := acc || r::text;
  MOVE ABSOLUTE 0 FROM c;
  LOOP
    FETCH NEXT FROM c INTO r;
    EXIT WHEN NOT FOUND;
    acc := md5(acc || r::text);
  END LOOP;
  LOOP
    FETCH PRIOR FROM c INTO r;
    EXIT WHEN NOT FOUND;
    acc := md5(acc || r::text);
  END LOOP;
  CLOSE c;
  RETURN acc;
END $$;
CREATE FUNCTION cursor_same(q text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE ours text;
BEGIN
  ours := cursor_walk(q);
  SET LOCAL gpuext.enable_sort = off;
  RETURN ours = cursor_walk(q);
END $$;
SELECT cursor_same('SELECT i, f, t FROM dr ORDER BY f, i');
SELECT cursor_same('SELECT a, b FROM dk ORDER BY b, a');
BEGIN;
DECLARE c SCROLL CURSOR FOR SELECT i, k FROM dr ORDER BY k DESC, i;
FETCH ABSOLUTE 99999 FROM c;
FETCH BACKWARD 2 FROM c;
FETCH FORWARD 3 FROM c;
FETCH ABSOLUTE 2 FROM c;
FETCH BACKWARD 5 FROM c;
COMMIT;

-- Merge joins: the inner sort marks and restores its position for every run of equal keys.
SET enable_hashjoin = off;
SET enable_nestloop = off;
SET enable_material = off;
SELECT explained('SELECT a.t, b.t FROM dr a JOIN dr b ON a.k2 = b.k2');
SELECT same('SELECT a.t, b.t FROM dr a JOIN dr b ON a.k2 = b.k2 ORDER BY a.i, b.i');
SELECT count(*), sum(a.i::int8 * b.i), sum(length(a.t) * length(b.t)) FROM dr a JOIN dr b ON a.k2 = b.k2;
RESET enable_hashjoin;
SET enable_mergejoin = off;
SELECT count(*), sum(a.i::int8 * b.i), sum(length(a.t) * length(b.t)) FROM dr a JOIN dr b ON a.k2 = b.k2;
RESET enable_nestloop;
RESET enable_mergejoin;
RESET enable_material;

-- Rescans: a nested loop replays the sorted rows from the device (no parameter changed); a
-- correlated subquery sorts again for each outer row (its parameter changed).
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SELECT count(*), sum(s.i) FROM (VALUES (1), (5), (9)) o(x), (SELECT * FROM dr ORDER BY f, i OFFSET 0) s
WHERE s.k = o.x;
SELECT x, (SELECT md5(string_agg(t, ',')) FROM (SELECT t FROM dr ORDER BY (k + x) % 1000, i) s) AS rows
FROM (VALUES (1), (2)) o(x);
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
SET gpuext.enable_sort = off;
SELECT count(*), sum(s.i) FROM (VALUES (1), (5), (9)) o(x), (SELECT * FROM dr ORDER BY f, i OFFSET 0) s
WHERE s.k = o.x;
SELECT x, (SELECT md5(string_agg(t, ',')) FROM (SELECT t FROM dr ORDER BY (k + x) % 1000, i) s) AS rows
FROM (VALUES (1), (2)) o(x);
RESET gpuext.enable_sort;
SELECT * FROM held();

-- Under Gather Merge each worker keeps its rows in device memory, and its figures reach the leader.
CREATE TABLE drp AS SELECT * FROM dr, generate_series(0, 3) g;
ANALYZE drp;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
SELECT count(*) > 0 AS workers_kept_rows_on_device
FROM explained('SELECT * FROM drp ORDER BY f, i, g') line WHERE line ~ 'Rows Kept: device memory';
SELECT same('SELECT * FROM drp ORDER BY f, i, g');
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET parallel_leader_participation;
SET max_parallel_workers_per_gather = 0;

-- Device memory short: past gpuext.max_device_memory the rows stay with tuplesort (when moving
-- them up), or come back to it (when the device buffers would grow), and EXPLAIN says why.
SET gpuext.max_device_memory = '1MB';
SELECT same('SELECT * FROM dr ORDER BY k, f DESC, i');
SELECT line FROM explained('SELECT * FROM dr ORDER BY k, f DESC, i') line WHERE line ~ 'Fallback';
SET gpuext.max_device_memory = '12MB';
SELECT same('SELECT * FROM few_rows() ORDER BY f DESC, i');
SELECT line FROM explained('SELECT * FROM few_rows() ORDER BY f DESC, i') line WHERE line ~ 'Fallback';
RESET gpuext.max_device_memory;
SELECT * FROM held();

-- auto, failures before any row went out: a WARNING, and tuplesort gets every row back from the
-- device (or from host memory, when moving them up failed), none lost or repeated.  Each fault is
-- armed again for EXPLAIN, which names the stage that failed.
CREATE FUNCTION fault_same(fault text, q text) RETURNS TABLE (same boolean, fallback text) LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('gpuext.debug_fail_device_calls', fault, true);
  same := same(q);
  PERFORM set_config('gpuext.enable_sort', 'on', true);
  PERFORM set_config('gpuext.debug_fail_device_calls', fault, true);
  SELECT substring(line from 'GPU Fallback: (.*)') INTO fallback FROM explained(q) line WHERE line ~ 'Fallback';
  PERFORM set_config('gpuext.debug_fail_device_calls', '', true);
  RETURN NEXT;
END $$;
SET client_min_messages = error;
-- moving the stored rows up: the pinned buffer, a copy
SELECT * FROM fault_same('alloc:1', 'SELECT * FROM dr ORDER BY k, f DESC, i');
SELECT * FROM fault_same('copy:1:4', 'SELECT * FROM dr ORDER BY k, f DESC, i');
-- a piece going up while the input is read, rows and keys-only
SELECT * FROM fault_same('copy:1:300', 'SELECT * FROM dr ORDER BY k, f DESC, i');
SELECT * FROM fault_same('copy:1:140', 'SELECT a, b FROM dk ORDER BY a, b');
-- the sort
SELECT * FROM fault_same('kernel:1', 'SELECT * FROM dr ORDER BY k, f DESC, i');
SELECT * FROM fault_same('kernel:1', 'SELECT a, b FROM dk ORDER BY a, b');
-- the first piece of sorted rows (its gather, its copy back)
SELECT * FROM fault_same('kernel:1:1', 'SELECT * FROM dr ORDER BY k, f DESC, i');
SELECT * FROM fault_same('sync:1:3', 'SELECT * FROM dr ORDER BY k, f DESC, i');
RESET client_min_messages;
SET gpuext.debug_fail_device_calls = 'kernel:1';
SELECT same('SELECT * FROM dr ORDER BY k, f DESC, i');
SET gpuext.debug_fail_device_calls = '';
SELECT * FROM held();

-- Failures the rows cannot come back from, and failures once rows went out: an ERROR with the
-- device's SQLSTATE, under auto as under gpu (as for streamed keys); nothing is left held.
-- error_of reads q through a cursor, arming the fault after the first `after` rows.
CREATE FUNCTION error_of(fault text, after int, q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  c refcursor := 'failing';
  r record;
  n int := 0;
BEGIN
  IF after = 0 THEN
    PERFORM set_config('gpuext.debug_fail_device_calls', fault, true);
  END IF;
  OPEN c FOR EXECUTE q;
  LOOP
    FETCH c INTO r;
    EXIT WHEN NOT FOUND;
    n := n + 1;
    IF n = after THEN
      PERFORM set_config('gpuext.debug_fail_device_calls', fault, true);
    END IF;
  END LOOP;
  RETURN format('no error, %s rows', n);
EXCEPTION WHEN OTHERS THEN
  RETURN format('%s after %s rows: %s', SQLSTATE, n, SQLERRM);
END $$;
SET client_min_messages = error;
-- a piece going up fails, and so does bringing the rows back: no row went out yet, so the input
-- is read again into tuplesort, every row once, and EXPLAIN says so (under gpu an ERROR, below)
SELECT error_of('copy:2:300', 0, 'SELECT * FROM dr ORDER BY k, f DESC, i');
SET gpuext.debug_fail_device_calls = 'copy:2:300';
SELECT same('SELECT * FROM dr ORDER BY k, f DESC, i') AS read_again_same;
SET gpuext.debug_fail_device_calls = 'copy:2:300';
SELECT same('SELECT * FROM dr WHERE i > 0 ORDER BY k, f DESC, i') AS read_again_from_the_scan_node_same;
SET gpuext.debug_fail_device_calls = 'copy:2:300';
SELECT coalesce(sort_json('SELECT * FROM dr ORDER BY k, f DESC, i') ->> 'GPU Fallback' LIKE '%read again', false)
  AS read_again_explained;
SET gpuext.debug_fail_device_calls = '';
-- rows went out: a later piece back (its gather, its copy), rows and keys-only
SELECT error_of('kernel:1', 2, 'SELECT * FROM dr ORDER BY k, f DESC, i');
SELECT error_of('copy:1', 2, 'SELECT * FROM dr ORDER BY k, f DESC, i');
SELECT error_of('copy:1', 2, 'SELECT a, b FROM dk ORDER BY a, b');
-- gpu: every failure is an ERROR
SET gpuext.device = gpu;
SELECT error_of('kernel:1', 0, 'SELECT * FROM dr ORDER BY k, f DESC, i');
SELECT error_of('copy:1:300', 0, 'SELECT * FROM dr ORDER BY k, f DESC, i');
SELECT error_of('copy:1:4', 0, 'SELECT a, b FROM dk ORDER BY a, b');
SET gpuext.device = auto;
RESET client_min_messages;
SET gpuext.debug_fail_device_calls = '';
SELECT same('SELECT * FROM dr ORDER BY k, f DESC, i');
SELECT * FROM held();
RESET search_path;
SET client_min_messages = warning;
DROP SCHEMA sort_device_rows CASCADE;
