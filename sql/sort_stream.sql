-- GpuSort streaming its keys (gpuext.device = gpu, a forward-only sort of key columns only, a
-- pinned half of keys expected at least): the keys go to the device as the input is read and
-- come back a half at a time as rows go out.  Every result is compared with PostgreSQL's Sort,
-- including the ways out of streaming (the budget passed, more rows than planned), a cursor
-- closed early and a merge join.  Under auto, or without a device, the same queries take other
-- paths to the same results, so this file has one expected output.
LOAD 'gpuext';
SET gpuext.sort_min_rows = 0;
SET max_parallel_workers_per_gather = 0;
SET gpuext.sort_work_mem = '64MB';
CREATE TEMP TABLE st AS
  SELECT i, (hashint4(i) % 1000)::int AS k,
         CASE WHEN i % 97 = 0 THEN NULL WHEN i % 1013 = 0 THEN 'NaN'::float8
              WHEN i % 2027 = 0 THEN '-0'::float8 WHEN i % 4099 = 0 THEN '-Infinity'::float8
              ELSE hashint8(i)::float8 / 7 END AS f
  FROM generate_series(1, 1200000) i;
ANALYZE st;
-- The rows of q as one text, and the same with PostgreSQL's Sort.
CREATE FUNCTION stream_digest(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  EXECUTE format('SELECT md5(string_agg(s::text, %L)) FROM (%s) s', ',', q) INTO r;
  RETURN r;
END $$;
CREATE FUNCTION stream_same(q text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE ours text;
BEGIN
  ours := stream_digest(q);
  SET LOCAL gpuext.enable_sort = off;
  RETURN ours = stream_digest(q);
END $$;
-- Whether GpuSort streamed the keys of q.
CREATE FUNCTION streamed(q text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF line ~ 'keys streamed' THEN
      RETURN true;
    END IF;
  END LOOP;
  RETURN false;
END $$;

-- Streamed under gpu (1,200,000 rows: 5 halves of two-word keys), not under auto.
SELECT streamed('SELECT k, f FROM st ORDER BY k, f DESC') = (current_setting('gpuext.device') = 'gpu')
  AS streamed_under_gpu;
SELECT stream_same('SELECT k, f FROM st ORDER BY k, f DESC');
SELECT stream_same('SELECT f FROM st ORDER BY f NULLS FIRST');
SELECT stream_same('SELECT k FROM st ORDER BY k DESC');
SELECT stream_same('SELECT f, k FROM st ORDER BY f, k');
SELECT stream_same('SELECT f FROM st ORDER BY f DESC NULLS LAST');
-- Three words, fields straddling them: a float key (with its -0 bit), an int4 and an int8 expression.
SELECT streamed('SELECT f, k, i::int8 FROM st ORDER BY f, k DESC, i::int8')
  = (current_setting('gpuext.device') = 'gpu') AS streamed_under_gpu;
SELECT stream_same('SELECT f, k, i::int8 FROM st ORDER BY f, k DESC, i::int8');

-- Out of streaming: the budget passed while streaming (tuplesort takes the keys brought back) ...
SET gpuext.sort_work_mem = '9MB';
SELECT streamed('SELECT k, f FROM st ORDER BY k, f DESC') AS streamed_past_budget;
SELECT stream_same('SELECT k, f FROM st ORDER BY k, f DESC');
SET gpuext.sort_work_mem = '64MB';
-- ... and more rows than the planner expected (about a third of them) and the device had room for.
SELECT streamed('SELECT k, f FROM st WHERE i % 10 < 9 ORDER BY k, f') AS streamed_past_estimate;
SELECT stream_same('SELECT k, f FROM st WHERE i % 10 < 9 ORDER BY k, f');

-- Backward scans need the rows at hand: a SCROLL cursor does not stream, a NO SCROLL one does.
BEGIN;
DECLARE c NO SCROLL CURSOR FOR SELECT k, f FROM st ORDER BY k, f DESC;
FETCH 3 FROM c;
MOVE 600000 IN c;
FETCH 2 FROM c;
CLOSE c;
DECLARE d SCROLL CURSOR FOR SELECT k, f FROM st ORDER BY k, f DESC;
MOVE 600003 IN d;
FETCH 2 FROM d;
FETCH BACKWARD 2 FROM d;
CLOSE d;
COMMIT;
SELECT device_bytes FROM gpuext_info(false);

-- Merge joins: both sorted inputs stream at once (the inner one under a Materialize), their rows
-- going out in turn.
SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT count(*), sum(a.i) FROM (SELECT i FROM st) a JOIN (SELECT i FROM st) b USING (i);
SELECT count(*), sum(a.k::int8) FROM (SELECT k FROM st WHERE i % 3 = 0) a
  JOIN (SELECT DISTINCT k FROM st) b USING (k);
RESET enable_hashjoin;
RESET enable_nestloop;
SELECT device_bytes FROM gpuext_info(false);
