-- Custom Scan (GpuAgg)'s device scan under GROUP BY: each row's keys found in a table of groups
-- on the device, each value sent to its group's state there.  Every result (all its groups) is
-- checked against PostgreSQL's own plan; where there is a device, that the device scan ran
-- (EXPLAIN ANALYZE's Device Scan line) and how many tuples it left to the CPU.  Keys of every
-- type it groups, NULL keys, several keys, text keys short and too long for the device's key
-- image, FILTERs and HAVING, rows not all-visible, more groups than the table or hash_mem hold,
-- parallel workers, and a device that fails at each of its stages.
LOAD 'gpuext';
SET gpuext.agg_min_rows = 0;
SET gpuext.min_gpu_elements = 0;
SET max_parallel_workers_per_gather = 0;

-- 'ok' when q's groups with GpuAgg allowed equal its groups with gpuext.enable_agg off and, where
-- there is a device and devscan is not NULL, the device scan ran exactly when devscan is true,
-- with cpu_tuples tuples left to the CPU; else what differed.
CREATE FUNCTION check_groups(q text, devscan boolean DEFAULT true, cpu_tuples bigint DEFAULT 0)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  offloads boolean := (SELECT gpu_kernels AND device_state <> 'unavailable' FROM gpuext_info());
  plan jsonb;
  node jsonb;
  got text;
  want text;
  agg text := 'SELECT count(*) || '' groups: '' || coalesce(string_agg(r, '' '' ORDER BY r), '''') '
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
  IF NOT offloads OR devscan IS NULL THEN
    RETURN 'ok';
  END IF;
  node := jsonb_path_query_first(plan, '$.** ? (@."Custom Plan Provider" == "GpuAgg")');
  IF node IS NULL THEN
    RETURN 'GpuAgg not planned';
  END IF;
  IF (node ? 'Device Scan Blocks') <> devscan THEN
    RETURN format('device scan: %s', NOT devscan);
  END IF;
  IF devscan AND (node->>'Tuples Decoded On CPU')::bigint <> cpu_tuples THEN
    RETURN format('%s tuples on the CPU, not %s', node->>'Tuples Decoded On CPU', cpu_tuples);
  END IF;
  RETURN 'ok';
END $$;

-- Keys of each type the device groups, NULLs among them, after a text column of varying width.
CREATE TABLE dg (pad text, k4 int4, k2 int2, k8 int8, kd date, kts timestamp, kb bool, kc "char",
                 c1 char(1), c10 char(10), vc varchar(6), kt text, i4 int4, f8 float8, f4 float4,
                 disc float8, n numeric);
INSERT INTO dg
SELECT repeat('p', i % 40),
       CASE WHEN i % 101 = 0 THEN NULL ELSE i % 37 - 10 END, (i % 5)::int2, (i % 3) * 10000000000,
       date '1995-01-01' + i % 9, timestamp '2000-01-01' + (i % 4) * interval '1 hour', i % 3 = 0,
       chr(97 + i % 4)::"char", chr(65 + i % 3), (ARRAY['AIR', 'MAIL', 'TRUCK', 'REG AIR'])[1 + i % 4],
       CASE WHEN i % 53 = 0 THEN NULL ELSE 'v' || i % 7 END,
       CASE WHEN i % 59 = 0 THEN NULL ELSE 't' || i % 6 END,
       i * 3 - 20000, CASE WHEN i % 83 = 0 THEN NULL ELSE (i % 500) / 8.0 - 20 END, (i % 100) / 4.0,
       (i % 8) / 64.0, i % 11
FROM generate_series(1, 20000) i;
VACUUM ANALYZE dg;

SELECT check_groups('SELECT k4, count(*), sum(i4), avg(f8), min(f8), max(i4), count(f8) FROM dg GROUP BY k4');
SELECT check_groups('SELECT k2, k8, count(*), sum(f8), sum(f4) FROM dg GROUP BY k2, k8');
SELECT check_groups('SELECT kd, kb, count(*), sum(i4), min(f4) FROM dg GROUP BY kd, kb');
SELECT check_groups('SELECT kts, kc, count(*), avg(i4) FROM dg GROUP BY kts, kc');
SELECT check_groups('SELECT c1, c10, count(*), sum(f8) FROM dg GROUP BY c1, c10');
SELECT check_groups('SELECT vc, kt, count(*), sum(f8), count(kt) FROM dg GROUP BY vc, kt');
SELECT check_groups('SELECT kt, count(*) FROM dg GROUP BY kt HAVING count(*) > 3000');
-- TPC-H Q1's shape: two char(1) keys, a date against a timestamp, double precision arithmetic.
SELECT check_groups($q$SELECT c1, kb, sum(f8), sum(f8 * (1 - disc)), sum(f8 * (1 - disc) * (1 + disc)), avg(disc), count(*)
  FROM dg WHERE kd <= date '1995-01-09' - interval '3' day GROUP BY c1, kb$q$);
-- An integer column modulo a constant as a key (negative values and NULLs among them), alone and
-- beside a column.
SELECT check_groups('SELECT i4 % 1000, count(*), sum(f8), avg(disc) FROM dg GROUP BY 1');
SELECT check_groups('SELECT k4 % 4, c1, count(*), sum(i4) FROM dg GROUP BY 1, 2');
SELECT check_groups('SELECT k2 % 2::int2, k8 % 7, count(*), max(f8) FROM dg GROUP BY 1, 2');
-- The planner expects as many groups as the column has values; the modulus bounds them.
CREATE TABLE dgb AS SELECT i AS x FROM generate_series(1, 300000) i;
ANALYZE dgb;
SELECT check_groups('SELECT x % 100, count(*), sum(x) FROM dgb GROUP BY 1');
DROP TABLE dgb;
-- int2 % int4 casts the column first: grouped by the column's value, the key computed from each.
SELECT check_groups('SELECT k2 % 2, count(*) FROM dg GROUP BY 1');
SELECT check_groups('SELECT i4 % 10, count(*), sum(f8) FROM dg WHERE i4 % 3 <> 0 GROUP BY 1');
-- date_trunc of a date column by day, month, quarter or year (as timestamptz, PostgreSQL's choice
-- for a date, or as timestamp): the device groups the first day of each, and the key's value is
-- computed from that day.  Dates from BC to the far future, leap days, the infinities, NULLs, and a
-- time zone whose clocks moved at midnight.
CREATE TABLE dgt (pad text, d date, v int4);
INSERT INTO dgt
SELECT repeat('q', i % 30),
       CASE WHEN i % 97 = 0 THEN NULL WHEN i % 1999 = 0 THEN 'infinity' WHEN i % 2003 = 0 THEN '-infinity'
            WHEN i % 7 = 0 THEN date '0044-03-15 BC' + i % 900 ELSE date '1599-12-31' + (i * 37) % 200000 END, i
FROM generate_series(1, 20000) i;
VACUUM ANALYZE dgt;
SELECT check_groups($q$SELECT date_trunc('month', d), count(*), sum(v) FROM dgt GROUP BY 1$q$);
SELECT check_groups($q$SELECT date_trunc('Quarter', d), count(*), min(v) FROM dgt GROUP BY 1$q$);
SELECT check_groups($q$SELECT date_trunc('year', d), count(*), max(v) FROM dgt WHERE v > 100 GROUP BY 1$q$);
SELECT check_groups($q$SELECT date_trunc('day', d), count(*) FROM dgt GROUP BY 1$q$);
SELECT check_groups($q$SELECT date_trunc('month', d::timestamp), v % 3, count(*) FROM dgt GROUP BY 1, 2$q$);
SELECT check_groups($q$SELECT date_trunc('week', d), count(*) FROM dgt GROUP BY 1$q$);
-- extract's fields of a date: a day of 2000 with the same field stands for each.
SELECT check_groups($q$SELECT extract(year FROM d), count(*), sum(v) FROM dgt GROUP BY 1$q$);
SELECT check_groups($q$SELECT extract(quarter FROM d), extract(month FROM d), count(*) FROM dgt GROUP BY 1, 2$q$);
SELECT check_groups($q$SELECT extract(day FROM d), count(*), max(v) FROM dgt GROUP BY 1$q$);
SELECT check_groups($q$SELECT extract(doy FROM d), count(*) FROM dgt GROUP BY 1$q$);
SELECT check_groups($q$SELECT extract(dow FROM d), extract(ISODOW FROM d), count(*) FROM dgt GROUP BY 1, 2$q$);
SELECT check_groups($q$SELECT extract(week FROM d), count(*), sum(v) FROM dgt GROUP BY 1$q$);
SELECT check_groups($q$SELECT date_part('month', d), count(*) FROM dgt GROUP BY 1$q$);
-- Any other function of the date: grouped by the date itself, the key computed once a date; one
-- of a numeric result (extract's other fields) stays on the CPU (see below).
SELECT check_groups($q$SELECT extract(isoyear FROM d), count(*) FROM dgt GROUP BY 1$q$, false);
SELECT check_groups($q$SELECT to_char(d, 'YYYY-MM'), count(*), min(v) FROM dgt WHERE v > 5 GROUP BY 1$q$);
SET TimeZone = 'America/Sao_Paulo';
SELECT check_groups($q$SELECT date_trunc('month', d), count(*), sum(v) FROM dgt GROUP BY 1$q$);
RESET TimeZone;
-- A date within a year of the end of the timestamps' range: the CPU reads the batch; past it,
-- PostgreSQL's error.
INSERT INTO dgt (d, v) VALUES ('294276-12-31', 1);
SELECT check_groups($q$SELECT date_trunc('month', d), count(*) FROM dgt GROUP BY 1$q$, true, 20001);
INSERT INTO dgt (d, v) VALUES ('300000-01-01', 1);
SELECT date_trunc('month', d), count(*) FROM dgt GROUP BY 1;
DROP TABLE dgt;
-- date_trunc and extract of a timestamp: every unit, BC, fractions of a second, the infinities,
-- NULLs.  A timestamptz depends on the time zone at each instant: grouped by its own value.
CREATE TABLE dts (pad text, ts timestamp, tz timestamptz, v int4);
INSERT INTO dts
SELECT repeat('s', i % 20),
       CASE WHEN i % 89 = 0 THEN NULL WHEN i % 1999 = 0 THEN 'infinity' WHEN i % 2003 = 0 THEN '-infinity'
            WHEN i % 5 = 0 THEN timestamp '0100-02-28 23:59:59.5 BC' + i * interval '997 minutes 1.25 seconds'
            ELSE timestamp '1999-12-31 22:00' + i * interval '7 hours 13 minutes 17.000321 seconds' END,
       timestamptz '2024-03-09 12:00 UTC' + (i % 500) * interval '17 minutes', i
FROM generate_series(1, 20000) i;
VACUUM ANALYZE dts;
SELECT check_groups($q$SELECT date_trunc('year', ts), count(*), sum(v) FROM dts GROUP BY 1$q$);
SELECT check_groups($q$SELECT date_trunc('quarter', ts), date_trunc('month', ts), count(*) FROM dts GROUP BY 1, 2$q$);
SELECT check_groups($q$SELECT date_trunc('week', ts), count(*) FROM dts GROUP BY 1$q$);
SELECT check_groups($q$SELECT date_trunc('day', ts), count(*), max(v) FROM dts GROUP BY 1$q$);
SELECT check_groups($q$SELECT date_trunc('hour', ts), count(*) FROM dts GROUP BY 1$q$);
SELECT check_groups($q$SELECT date_trunc('Minute', ts), count(*) FROM dts WHERE v > 10000 GROUP BY 1$q$);
SELECT check_groups($q$SELECT date_trunc('second', ts), count(*) FROM dts WHERE v < 8000 GROUP BY 1$q$);
SELECT check_groups($q$SELECT extract(hour FROM ts), extract(dow FROM ts), count(*), sum(v) FROM dts GROUP BY 1, 2$q$);
SELECT check_groups($q$SELECT extract(minute FROM ts), count(*) FROM dts GROUP BY 1$q$);
SELECT check_groups($q$SELECT date_part('week', ts), extract(year FROM ts), count(*) FROM dts GROUP BY 1, 2$q$);
SELECT check_groups($q$SELECT extract(second FROM ts), count(*) FROM dts GROUP BY 1$q$);
SELECT check_groups($q$SELECT extract(milliseconds FROM ts), count(*) FROM dts GROUP BY 1$q$);
SELECT check_groups($q$SELECT date_part('doy', ts), extract(quarter FROM ts), count(*) FROM dts GROUP BY 1, 2$q$);
SELECT check_groups($q$SELECT extract(year FROM ts), extract(month FROM ts), extract(day FROM ts), count(*)
  FROM dts GROUP BY 1, 2, 3$q$);
SET TimeZone = 'America/New_York';
SELECT check_groups($q$SELECT date_trunc('day', tz), count(*), sum(v) FROM dts GROUP BY 1$q$);
SELECT check_groups($q$SELECT to_char(tz, 'HH24'), count(*) FROM dts GROUP BY 1$q$);
RESET TimeZone;
DROP TABLE dts;
-- Functions of one column of any type: grouped by the column's value, the key computed from each
-- value once (a NULL too); a function's many arguments of one result meet in one group, and so do
-- numeric(8,2)'s values, stored at one scale.  A key whose equal values may differ in bytes (0 and
-- -0, 1.0 and 1.00: which one a group shows is the first row's in PostgreSQL's scan), of two
-- columns, or volatile stays on the CPU.
CREATE TABLE dgf (pad text, k int4, f float8, n numeric(8,2), t text, v int4);
INSERT INTO dgf
SELECT repeat('f', i % 25), CASE WHEN i % 71 = 0 THEN NULL ELSE i % 1000 - 500 END,
       (ARRAY[0, -0, 'NaN', 1.5, -2.25, 'Infinity', NULL])[1 + i % 7]::float8,
       CASE WHEN i % 67 = 0 THEN NULL ELSE (i % 300) / 4.0 - 20 END,
       (ARRAY['Ab', 'ab', 'AB', 'c', '', NULL, 'dé'])[1 + i % 7], i
FROM generate_series(1, 20000) i;
VACUUM ANALYZE dgf;
SELECT check_groups('SELECT k / 10, count(*), sum(v) FROM dgf GROUP BY 1');
SELECT check_groups('SELECT coalesce(k, 7), count(*) FROM dgf GROUP BY 1');
SELECT check_groups($q$SELECT CASE WHEN k < 0 THEN 'neg' WHEN k > 0 THEN 'pos' END, count(*) FROM dgf GROUP BY 1$q$);
SELECT check_groups('SELECT f, count(*), sum(v) FROM dgf GROUP BY f', false);
SELECT check_groups('SELECT abs(f), count(*) FROM dgf GROUP BY 1', false);
SELECT check_groups('SELECT n, count(*), sum(v) FROM dgf GROUP BY n');
SELECT check_groups('SELECT round(n), count(*) FROM dgf GROUP BY 1', false);
SELECT check_groups('SELECT lower(t), count(*), sum(v) FROM dgf GROUP BY 1');
SELECT check_groups('SELECT length(t), k % 3, count(*) FROM dgf GROUP BY 1, 2');
SELECT check_groups('SELECT k + v, count(*) FROM dgf GROUP BY 1', false);
SELECT check_groups('SELECT k + (random() * 0)::int, count(*) FROM dgf GROUP BY 1', NULL);
-- A key's error is raised for a row that passes the WHERE clause, not for one that does not.
SELECT check_groups('SELECT 1000 / k, count(*) FROM dgf WHERE k <> 0 GROUP BY 1', false);
SELECT check_groups('SELECT 1000 / k, count(*) FROM dgf WHERE v <> 0 GROUP BY 1');
DROP TABLE dgf;
-- numeric(p, s) keys: each value is stored at scale s in its one normalized form, so they group as
-- their bytes: NaN, 0, negatives, NULL, wide values, beside a text key, under a WHERE clause.  An
-- unconstrained numeric key (1.5 and 1.50 equal, not their bytes) stays on the CPU.
CREATE TABLE dgn (pad text, n numeric(15,2), w numeric(38,10), u numeric, t text, v int4);
INSERT INTO dgn
SELECT repeat('n', i % 30),
       CASE WHEN i % 97 = 0 THEN NULL WHEN i % 89 = 0 THEN 'NaN' ELSE ((i % 3000) - 1500) / 8.0 END,
       CASE WHEN i % 83 = 0 THEN NULL ELSE (i % 700) * 1234567.0123456789 - 4.2e8 END,
       (i % 50)::numeric / (1 + i % 3), (ARRAY['A', 'B', 'C'])[1 + i % 3], i
FROM generate_series(1, 20000) i;
VACUUM ANALYZE dgn;
SELECT check_groups('SELECT n, count(*), sum(v) FROM dgn GROUP BY n');
SELECT check_groups('SELECT n, t, count(*), max(v) FROM dgn GROUP BY n, t');
SELECT check_groups('SELECT w, count(*), min(v) FROM dgn GROUP BY w');
SELECT check_groups('SELECT n, count(*), avg(v) FROM dgn WHERE v > 100 GROUP BY n');
SELECT check_groups('SELECT u, count(*) FROM dgn GROUP BY u', false);
DROP TABLE dgn;
-- FILTERs: compiled conditions on values and counts; a count of a column's non-NULL values.
SELECT check_groups($q$SELECT c10, count(*) FILTER (WHERE i4 > 0), sum(f8) FILTER (WHERE f8 < 10), count(kt)
  FROM dg WHERE k2 <> 3 GROUP BY c10$q$);
-- No rows pass: no groups.
SELECT check_groups('SELECT k4, count(*), sum(f8) FROM dg WHERE i4 < -1000000 GROUP BY k4', NULL);
-- A key column also read by the WHERE clause: the device scan leaves that query.
SELECT check_groups('SELECT k2, count(*) FROM dg WHERE k2 > 1 GROUP BY k2', false);
-- Text keys longer than their room in the key image: every tuple on the CPU, the same groups.
SELECT check_groups('SELECT pad, count(*), sum(i4) FROM dg GROUP BY pad', true, 20000);
SELECT check_groups('SELECT kt, c10, pad, count(*) FROM dg GROUP BY kt, c10, pad', true, 20000);
-- Keys of up to 31 bytes together: multibyte text, TPC-H's l_shipinstruct (17 bytes) beside a
-- char(1) and an integer modulo a constant.
CREATE TABLE dgw (w text, s varchar(20), c char(1), v int4);
INSERT INTO dgw
SELECT CASE WHEN i % 97 = 0 THEN NULL
            ELSE (ARRAY['DELIVER IN PERSON', 'TAKE BACK RETURN', 'COLLECT COD', 'NONE', '', repeat('é', 15),
                        repeat('w', 30), 'thirty-one bytes long, no more.'])[1 + i % 8] END,
       (ARRAY['DELIVER IN PERSON', 'TAKE BACK RETURN', 'COLLECT COD', 'NONE'])[1 + i % 4],
       chr(65 + i % 3), i
FROM generate_series(1, 10000) i;
VACUUM ANALYZE dgw;
SELECT check_groups('SELECT w, count(*), sum(v) FROM dgw GROUP BY w');
SELECT check_groups('SELECT v % 3, c, s, count(*), max(v) FROM dgw WHERE v > 10 GROUP BY 1, 2, 3');
SELECT check_groups('SELECT length(w), count(*) FROM dgw GROUP BY 1');
-- one byte past the room: every tuple on the CPU
INSERT INTO dgw VALUES ('thirty-two bytes long, no fewer.', 'NONE', 'A', 0);
SELECT check_groups('SELECT w, count(*), sum(v) FROM dgw GROUP BY w', true, 10001);
DROP TABLE dgw;

-- char(n) keys compared as bytes: values written with and without trailing blanks are one group,
-- on the device and read in place on the CPU.
CREATE TABLE dgc (c char(4), m char(3), v int4);
INSERT INTO dgc SELECT (ARRAY['a', 'a ', 'a   ', 'b', ' b', 'é', 'é '])[1 + i % 7], (ARRAY['x', 'xy ', 'ü'])[1 + i % 3], i
FROM generate_series(1, 7000) i;
VACUUM ANALYZE dgc;
SELECT check_groups('SELECT c, m, count(*), sum(v) FROM dgc GROUP BY c, m');
SET gpuext.enable_device_scan = off;
SELECT check_groups('SELECT c, count(*), sum(v), max(v) FROM dgc GROUP BY c', false);
RESET gpuext.enable_device_scan;

-- Rows updated, deleted, HOT-updated and rolled back: pages whose visible items are listed.
BEGIN;
UPDATE dg SET i4 = -i4 WHERE i4 % 7 = 0;
ROLLBACK;
DELETE FROM dg WHERE i4 % 13 = 0;
UPDATE dg SET f8 = f8 + 1, k4 = NULL WHERE i4 % 17 = 0;
SELECT check_groups('SELECT k4, count(*), sum(f8), sum(i4) FROM dg GROUP BY k4');
SELECT check_groups('SELECT c1, c10, count(*), sum(f8) FROM dg GROUP BY c1, c10');

-- More groups than the table of groups holds (by the plan's estimate, then as found), and than
-- hash_mem holds: the rest of the run on the CPU.
CREATE TABLE dgm (k int4, v float8);
INSERT INTO dgm SELECT i % 3000, i FROM generate_series(1, 9000) i;
ANALYZE dgm;
SELECT check_groups('SELECT k, count(*), sum(v) FROM dgm GROUP BY k');
INSERT INTO dgm SELECT i, i FROM generate_series(3000, 30000) i;
SELECT check_groups('SELECT k, count(*), sum(v) FROM dgm GROUP BY k', NULL);
SET work_mem = '64kB';
SELECT check_groups('SELECT k % 2000 + k, count(*) FROM dgm GROUP BY 1', NULL);
SELECT check_groups('SELECT k, count(*), sum(v) FROM dgm GROUP BY k', NULL);

-- Groups past hash_mem, each key's image its value alone: numbered on the device and kept in its
-- memory, read back 8192 groups at a time, every row on the device and none spilled; NULL keys and
-- values, date and modulus keys, HAVING, a WHERE clause, and no group at all.
CREATE TABLE dgn (k int4, t text, d date, v float8, w int8);
INSERT INTO dgn SELECT CASE WHEN i % 1001 = 0 THEN NULL ELSE i % 20011 END, 'g' || (i % 15013),
  date '2000-01-01' + i % 9001, CASE WHEN i % 7 = 0 THEN NULL ELSE i / 8.0 END, i * 3
FROM generate_series(1, 60000) i;
ANALYZE dgn;
SELECT check_groups('SELECT k, count(*), sum(v), avg(v), count(v), min(w), max(d) FROM dgn GROUP BY k');
SELECT check_groups('SELECT d, k % 7, count(*), sum(w), max(v) FROM dgn GROUP BY d, k % 7');
SELECT check_groups('SELECT d, count(*), avg(w) FROM dgn GROUP BY d');
SELECT check_groups('SELECT k, sum(w) FROM dgn WHERE w > 30000 GROUP BY k HAVING count(*) > 2');
SELECT check_groups('SELECT k, sum(v) FROM dgn WHERE w < 0 GROUP BY k');
SELECT (SELECT count(*) FROM (SELECT k, count(*) FROM dgn GROUP BY k) s) AS groups,
  (SELECT sum(n) FROM (SELECT k, count(*) AS n FROM dgn GROUP BY k) s) AS rows;
-- Numeric values and text keys under groups past hash_mem. Numerics the device scan computes
-- (fixed-scale columns, their arithmetic) are numbered on the device, every row there; a NaN stops
-- the numbering and the run starts again on the CPU, which spills them, NaNs kept, as it spills on
-- its own paths (rows read in place, compiled numeric arithmetic among them, and rows through the
-- slot where the WHERE clause is not compiled), unconstrained numerics as their bytes. Text keys:
-- numbered where they fit the key image; a longer one stops the numbering, and the CPU spills them;
-- numeric(p, s) keys the same.
CREATE TABLE dgq (k int4, q numeric(12,2), p numeric(15,4), pad text);
INSERT INTO dgq SELECT i % 20011, (i % 50 + 1) * 1.25, CASE WHEN i % 13 = 0 THEN NULL ELSE i * 0.0101 - 300 END,
  'x' || i % 3
FROM generate_series(1, 60000) i;
ANALYZE dgq;
CREATE FUNCTION spilled(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  plan jsonb;
BEGIN
  IF NOT (SELECT gpu_kernels AND device_state <> 'unavailable' FROM gpuext_info()) THEN
    RETURN 'spilled';
  END IF;
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
  RETURN CASE WHEN (jsonb_path_query_first(plan, '$.** ? (@."Custom Plan Provider" == "GpuAgg")')->>'Rows Spilled')::bigint > 0
    THEN 'spilled' ELSE 'not spilled' END;
END $$;
SELECT check_groups('SELECT k, count(*), sum(q), avg(p), min(p), max(q), count(p) FROM dgq GROUP BY k');
SELECT check_groups('SELECT k, sum(p) FILTER (WHERE q > 30), avg(q) FROM dgq WHERE p < 100 GROUP BY k HAVING sum(q) > 60');
SELECT check_groups('SELECT k, sum(q * (100 - q)), avg(p * q + 1), max(p - q) FROM dgq GROUP BY k');
SELECT check_groups('SELECT t, count(*), sum(v), min(w) FROM dgn GROUP BY t');
SELECT check_groups('SELECT p, count(*), sum(q) FROM dgq GROUP BY p');
-- the device's table sized for the groups the planner expects, not the fewer rows HAVING passes
CREATE TABLE dgh AS SELECT i % 100000 AS k, (i / 4.0)::numeric(12,2) AS q FROM generate_series(1, 200000) i;
ANALYZE dgh;
SELECT check_groups('SELECT k, sum(q) FROM dgh GROUP BY k HAVING sum(q) > 20000 AND count(*) > 1');
-- ... and grown where that estimate is far low: the table fills, and the run starts again on the
-- device with a table for the groups the blocks read so far promise
CREATE FUNCTION grown(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  plan jsonb;
BEGIN
  IF NOT (SELECT gpu_kernels AND device_state <> 'unavailable' FROM gpuext_info()) THEN
    RETURN 'grown';
  END IF;
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
  RETURN CASE WHEN jsonb_path_query_first(plan, '$.** ? (@."Custom Plan Provider" == "GpuAgg")') ? 'Device Table Grown To'
    THEN 'grown' ELSE 'not grown' END;
END $$;
ALTER TABLE dgh ALTER COLUMN k SET (n_distinct = 3000);
ANALYZE dgh;
SELECT check_groups('SELECT k, sum(q), count(*) FROM dgh GROUP BY k'), grown('SELECT k, sum(q), count(*) FROM dgh GROUP BY k');
SELECT check_groups('SELECT k, avg(q) FROM dgh GROUP BY k HAVING max(q) > 100'),
  grown('SELECT k, avg(q) FROM dgh GROUP BY k HAVING max(q) > 100');
-- a larger table past the backend's device memory: that run answers on the CPU, exactly
SET gpuext.device = auto;
SET gpuext.max_device_memory = '32MB';
SELECT check_groups('SELECT k, sum(q), count(*) FROM dgh GROUP BY k', NULL);
RESET gpuext.max_device_memory;
RESET gpuext.device;
DROP TABLE dgh;
-- ... grown early, from two points of the first blocks (at 1/64 of them and twice that), where the
-- keys come in block order (each block new groups, as TPC-H's l_orderkey); not where keys spread at
-- random repeat, fewer than the table holds, though as many new groups in the first blocks would
-- promise more
CREATE FUNCTION growth(q text, want text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  plan jsonb;
  node jsonb;
BEGIN
  IF NOT (SELECT gpu_kernels AND device_state <> 'unavailable' FROM gpuext_info()) THEN
    RETURN want;
  END IF;
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
  node := jsonb_path_query_first(plan, '$.** ? (@."Custom Plan Provider" == "GpuAgg")');
  IF NOT node ? 'Device Table Grown To' THEN
    RETURN 'not grown';
  END IF;
  RETURN CASE WHEN (node->>'Device Table Grown After')::bigint * 2 < (node->>'Device Scan Blocks')::bigint
    THEN 'grown early' ELSE 'grown late' END;
END $$;
CREATE TABLE dge AS SELECT i / 24 AS k, (hashint4(i) & 2147483647) % 40000 AS r, (i % 40 + 1)::numeric(12,2) AS q
FROM generate_series(1, 2000000) i;
ALTER TABLE dge ALTER COLUMN k SET (n_distinct = 2000), ALTER COLUMN r SET (n_distinct = 10000);
ANALYZE dge;
SELECT check_groups('SELECT k, sum(q) FROM dge GROUP BY k HAVING sum(q) > 250'),
  growth('SELECT k, sum(q) FROM dge GROUP BY k HAVING sum(q) > 250', 'grown early');
SELECT check_groups('SELECT r, sum(q), count(*) FROM dge GROUP BY r'),
  growth('SELECT r, sum(q), count(*) FROM dge GROUP BY r', 'not grown');
DROP TABLE dge;
DROP FUNCTION growth(text, text);
-- ... and past 2^23 slots where half of the backend's device memory holds the table (8GB of it):
-- 3.4M groups expected (3M met), numbered on the device, none spilled, the answer against
-- PostgreSQL's own plan; with 1GB the table stays within 2^23 slots, too few for them, and the
-- CPU spills them.
CREATE FUNCTION big_groups(want text, compare boolean) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  q text := 'SELECT k, count(*) AS n FROM dgb GROUP BY k';
  sums text := 'SELECT row(count(*), sum(n), sum(hashint8(k::int8 * 1000003 + n)))::text FROM (%s) g';
  plan jsonb;
  node jsonb;
  got text;
  expect text;
BEGIN
  IF compare THEN
    EXECUTE format(sums, q) INTO got;
    PERFORM set_config('gpuext.enable_agg', 'off', true);
    EXECUTE format(sums, q) INTO expect;
    PERFORM set_config('gpuext.enable_agg', 'on', true);
    IF got IS DISTINCT FROM expect THEN
      RETURN format('got %s, want %s', got, expect);
    END IF;
  END IF;
  IF NOT (SELECT gpu_kernels AND device_state <> 'unavailable' FROM gpuext_info()) THEN
    RETURN want;
  END IF;
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
  node := jsonb_path_query_first(plan, '$.** ? (@."Custom Plan Provider" == "GpuAgg")');
  IF (node->>'Rows Spilled')::bigint > 0 THEN
    RETURN 'spilled';
  END IF;
  IF node ? 'Device Scan Blocks' AND (node->>'Tuples Decoded On CPU')::bigint = 0 AND
     (node->>'Groups')::bigint = 3000017 THEN
    RETURN 'numbered on the device';
  END IF;
  RETURN node::text;
END $$;
CREATE TABLE dgb AS SELECT ((i::int8 * 7919) % 3000017)::int4 AS k FROM generate_series(1, 3400000) i;
ALTER TABLE dgb ALTER COLUMN k SET (n_distinct = -1);
ANALYZE dgb;
SET gpuext.max_device_memory = '8GB';
SELECT big_groups('numbered on the device', true);
SET gpuext.max_device_memory = '1GB';
SELECT big_groups('spilled', false);
RESET gpuext.max_device_memory;
DROP TABLE dgb;
DROP FUNCTION big_groups(text, boolean);
UPDATE dgq SET p = 'NaN' WHERE k IN (7, 15000) AND p > 0;
SELECT check_groups('SELECT k, count(*), sum(q), avg(p), min(p), max(p) FROM dgq GROUP BY k', NULL);
SELECT check_groups('SELECT k, sum(p * q), avg(q * 2) FROM dgq GROUP BY k', NULL);
SET gpuext.enable_device_scan = off;
SELECT check_groups('SELECT k, count(*), sum(q), avg(p), min(p), max(p) FROM dgq GROUP BY k', NULL),
  spilled('SELECT k, count(*), sum(q), avg(p), min(p), max(p) FROM dgq GROUP BY k');
SELECT check_groups('SELECT k, sum(p * q), avg(q * (100 - q)) FROM dgq GROUP BY k', NULL),
  spilled('SELECT k, sum(p * q), avg(q * (100 - q)) FROM dgq GROUP BY k');
SELECT check_groups('SELECT k, sum(p), max(p), avg(q) FROM dgq WHERE length(pad) = 2 GROUP BY k', NULL),
  spilled('SELECT k, sum(p), max(p), avg(q) FROM dgq WHERE length(pad) = 2 GROUP BY k');
SELECT check_groups('SELECT t, count(*), sum(v) FROM dgn GROUP BY t', NULL),
  spilled('SELECT t, count(*), sum(v) FROM dgn GROUP BY t');
SELECT check_groups('SELECT p, count(*), sum(q) FROM dgq GROUP BY p', NULL),
  spilled('SELECT p, count(*), sum(q) FROM dgq GROUP BY p');
RESET gpuext.enable_device_scan;
SELECT k, sum(p), min(p), max(p), avg(p) FROM dgq WHERE k IN (7, 15000, 15001) GROUP BY k ORDER BY k;
ALTER TABLE dgq ALTER COLUMN p TYPE numeric, ALTER COLUMN pad TYPE text;
UPDATE dgq SET p = p * 1.5, pad = repeat('long key ', 5) || k % 9000 WHERE k % 3 = 0;
UPDATE dgq SET pad = repeat('compressed ', 400) || k % 3000 WHERE k % 7 = 1;
ANALYZE dgq;
SELECT check_groups('SELECT k, sum(p), avg(p), min(p), max(p) FROM dgq GROUP BY k', NULL),
  spilled('SELECT k, sum(p), avg(p), min(p), max(p) FROM dgq GROUP BY k');
SELECT check_groups('SELECT pad, count(*), sum(q) FROM dgq GROUP BY pad', NULL),
  spilled('SELECT pad, count(*), sum(q) FROM dgq GROUP BY pad');
SELECT count(*) AS compressed_keys FROM dgq WHERE pg_column_compression(pad) IS NOT NULL;
DROP FUNCTION spilled(text);
-- The run starts again on the device with a larger table where the groups outgrow the device's
-- (the estimate far below them), and on the CPU, exactly, at any one failed device call under auto
-- (the first chunk of groups is read back before any is returned); an integer overflow raises
-- PostgreSQL's error.
CREATE TABLE dgo AS SELECT i % 2000 AS k, (i / 8.0)::float8 AS v FROM generate_series(1, 60000) i;
ANALYZE dgo;
INSERT INTO dgo SELECT 100000 + i, i FROM generate_series(1, 60000) i;
SELECT check_groups('SELECT k, count(*), sum(v) FROM dgo GROUP BY k'), grown('SELECT k, count(*), sum(v) FROM dgo GROUP BY k');
DROP FUNCTION grown(text);
SELECT k, sum(w * 4000000000000000) FROM dgn GROUP BY k;
CREATE FUNCTION answer_with_fault(q text, fault text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  digest text := 'SELECT count(*) || '' rows, digest '' || sum(hashtext(row(s.*)::text)::numeric) FROM (%s) s';
  got text;
  want text;
BEGIN
  PERFORM set_config('gpuext.debug_fail_device_calls', fault, true);
  EXECUTE format(digest, q) INTO got;
  PERFORM set_config('gpuext.debug_fail_device_calls', '', true);
  PERFORM set_config('gpuext.enable_agg', 'off', true);
  EXECUTE format(digest, q) INTO want;
  PERFORM set_config('gpuext.enable_agg', 'on', true);
  RETURN CASE WHEN got = want THEN 'ok' ELSE format('%s: got %s, want %s', fault, got, want) END;
END $$;
CREATE TABLE dgf AS SELECT i % 5000 AS k, (i / 4.0)::float8 AS v FROM generate_series(1, 20000) i;
ANALYZE dgf;
SELECT check_groups('SELECT k, count(*), sum(v) FROM dgf GROUP BY k');
SET gpuext.device = auto;
SET client_min_messages = error;
SELECT string_agg(DISTINCT answer_with_fault('SELECT k, count(*), sum(v) FROM dgf GROUP BY k', f || ':1:' || n), ', ')
  AS each_failure_answered
FROM unnest(ARRAY['kernel', 'copy', 'sync']) f, generate_series(0, 11) n;
RESET gpuext.debug_fail_device_calls;
RESET client_min_messages;
RESET gpuext.device;
RESET work_mem;
DROP FUNCTION answer_with_fault(text, text);

-- Parallel workers, each with its share of the pages on the device: between them the leader
-- and its workers send every block of the table and decode every row there ('ok' also where
-- there is no device); a device that fails in each of them answers on the CPU (auto; said
-- also where there is no device).
CREATE FUNCTION par_devscan(q text, tab regclass, fails boolean DEFAULT false) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  offloads boolean := (SELECT gpu_kernels AND device_state <> 'unavailable' FROM gpuext_info());
  plan jsonb;
  node jsonb;
  blocks bigint := pg_relation_size(tab) / current_setting('block_size')::int;
  nrows bigint;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
  EXECUTE format('SELECT count(*) FROM %s', tab) INTO nrows;
  node := jsonb_path_query_first(plan, '$.** ? (@."Custom Plan Provider" == "GpuAgg")');
  IF NOT offloads THEN
    RETURN CASE WHEN fails THEN 'on the CPU' ELSE 'ok' END;
  ELSIF node IS NULL OR coalesce((node->>'Workers Launched')::int, 0) = 0 THEN
    RETURN 'no workers';
  ELSIF node->>'GPU Fallback' IN ('the device failed', 'a parallel worker uses the device only through the GPU service') THEN
    -- under auto, workers without the GPU service do not use the device
    RETURN 'on the CPU';
  ELSIF node->>'GPU Fallback' IS NOT NULL THEN
    RETURN 'CPU: ' || (node->>'GPU Fallback');
  ELSIF (node->>'Device Scan Blocks')::bigint IS DISTINCT FROM blocks
        OR (node->>'Tuples Decoded On Device')::bigint IS DISTINCT FROM nrows
        OR (node->>'Tuples Decoded On CPU')::bigint IS DISTINCT FROM 0::bigint THEN
    RETURN format('%s blocks of %s, %s tuples of %s on the device, %s on the CPU', node->>'Device Scan Blocks',
                  blocks, node->>'Tuples Decoded On Device', nrows, node->>'Tuples Decoded On CPU');
  END IF;
  RETURN 'ok';
END $$;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT check_groups('SELECT c1, kb, count(*), sum(f8), avg(i4) FROM dg GROUP BY c1, kb');
SELECT par_devscan('SELECT c1, kb, count(*), sum(f8), avg(i4) FROM dg GROUP BY c1, kb', 'dg');
SELECT check_groups('SELECT k4, kt, count(*), min(kd), max(f4), sum(i4) FROM dg GROUP BY k4, kt');
SELECT par_devscan('SELECT k4, kt, count(*), min(kd), max(f4), sum(i4) FROM dg GROUP BY k4, kt', 'dg');
-- keys computed from a column's value and a timestamp's unit, in each worker
SELECT check_groups($q$SELECT date_trunc('hour', kts), k4 / 10, count(*), sum(f8) FROM dg GROUP BY 1, 2$q$);
SELECT par_devscan($q$SELECT date_trunc('hour', kts), k4 / 10, count(*), sum(f8) FROM dg GROUP BY 1, 2$q$, 'dg');
-- without GROUP BY too
SELECT check_groups('SELECT count(*), sum(f8), avg(i4), max(f4) FROM dg');
SELECT par_devscan('SELECT count(*), sum(f8), avg(i4), max(f4) FROM dg', 'dg');
SET gpuext.device = auto;
SET client_min_messages = error;
SET gpuext.debug_fail_device_calls = 'kernel:1';
SELECT check_groups('SELECT c1, kb, count(*), sum(f8), avg(i4) FROM dg GROUP BY c1, kb', NULL);
-- the workers alone read the table, each armed afresh: a worker that gets blocks fails
SET parallel_leader_participation = off;
SELECT par_devscan('SELECT c1, kb, count(*), sum(f8), avg(i4) FROM dg GROUP BY c1, kb', 'dg', true);
SELECT check_groups('SELECT c1, kb, count(*), sum(f8), avg(i4) FROM dg GROUP BY c1, kb', NULL);
-- without GROUP BY, a worker's wait after a batch whose reductions it left to it
SET gpuext.debug_fail_device_calls = 'sync:1:2';
SELECT par_devscan('SELECT count(*), sum(f8), avg(i4), max(f4) FROM dg', 'dg', true);
SELECT check_groups('SELECT count(*), sum(f8), avg(i4), max(f4) FROM dg', NULL);
RESET parallel_leader_participation;
SET gpuext.debug_fail_device_calls = 'kernel:3';
SELECT check_groups('SELECT c1, kb, count(*), sum(f8), avg(i4) FROM dg GROUP BY c1, kb', NULL);
SET gpuext.debug_fail_device_calls = '';
RESET client_min_messages;
RESET gpuext.device;
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;

-- The plan's cost: where the planner expects the device to scan the table (the WHERE clause,
-- FILTERs, arguments and keys all compiled, the text keys' average width within the key image),
-- GpuAgg costs the table's pages and a tenth of a tuple's CPU cost each, less than a bare
-- sequential scan of the table; where the CPU will read the rows, more.  PostgreSQL's own plans
-- are costed as they are, so this is what makes GpuAgg win where the device does the work.  'ok'
-- where the cost (and with show_rows the groups estimated: at most twice the modulus of an integer
-- key modulo a constant) is as want says, or where the build has no device code (no GpuAgg).
CREATE FUNCTION costed_on_device(q text, want text, show_rows boolean DEFAULT false) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  plan jsonb;
  scan jsonb;
  got text;
BEGIN
  IF NOT (SELECT gpu_kernels FROM gpuext_info()) THEN
    RETURN 'ok';
  END IF;
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO plan;
  EXECUTE 'EXPLAIN (FORMAT JSON) SELECT * FROM dg' INTO scan;
  plan := jsonb_path_query_first(plan, '$.** ? (@."Custom Plan Provider" == "GpuAgg")');
  IF plan IS NULL THEN
    RETURN 'GpuAgg not planned';
  END IF;
  got := CASE WHEN (plan->>'Total Cost')::float8 < (scan->0->'Plan'->>'Total Cost')::float8
              THEN 'device' ELSE 'CPU' END || CASE WHEN show_rows THEN ', ' || (plan->>'Plan Rows') || ' rows' ELSE '' END;
  RETURN CASE WHEN got = want THEN 'ok' ELSE 'costed ' || got END;
END $$;
SET gpuext.device = gpu;
SELECT costed_on_device('SELECT k4 % 7, count(*), sum(f8) FROM dg GROUP BY 1', 'device, 14 rows', true);
SELECT costed_on_device('SELECT kb, k4 % 1000, count(*) FROM dg GROUP BY 1, 2', 'device');
SELECT costed_on_device('SELECT c1, kb, sum(f8), sum(f8 * (1 - disc)), avg(disc), count(*) FROM dg
  WHERE kd <= date ''1995-01-07'' - interval ''2 day'' GROUP BY c1, kb', 'device');
SELECT costed_on_device('SELECT kt, vc, count(*), sum(i4), count(pad) FROM dg GROUP BY kt, vc', 'device');
SELECT costed_on_device($q$SELECT date_trunc('month', kd), extract(hour from kts), count(*) FROM dg GROUP BY 1, 2$q$, 'device');
SELECT costed_on_device('SELECT sum(i4 * 2 + 1), count(*) FILTER (WHERE f8 > 0), max(kd), count(n) FROM dg WHERE kt IN (''t1'', ''t2'')', 'device');
-- the CPU reads the rows: keys too wide on average, a key of two columns, a WHERE clause not
-- compiled, double precision arithmetic beside a computed key, arguments not compiled or over a
-- numeric column of no fixed scale
SELECT costed_on_device('SELECT kt, c10, pad, count(*) FROM dg GROUP BY kt, c10, pad', 'CPU');
SELECT costed_on_device('SELECT k4 + i4, count(*) FROM dg GROUP BY 1', 'CPU');
SELECT costed_on_device('SELECT kb, count(*) FROM dg WHERE length(pad) > 3 GROUP BY kb', 'CPU');
SELECT costed_on_device('SELECT k4 % 7, sum(f8 * 2) FROM dg GROUP BY 1', 'CPU');
SELECT costed_on_device('SELECT sum(length(pad)) FROM dg', 'CPU');
SELECT costed_on_device('SELECT avg(n::numeric(10,2)) FROM dg WHERE kt IN (''t1'', ''t2'')', 'CPU');
SET gpuext.enable_device_scan = off;
SELECT costed_on_device('SELECT k4 % 7, count(*), sum(f8) FROM dg GROUP BY 1', 'CPU');
RESET gpuext.enable_device_scan;
-- groups expected past hash_mem: numbered on the device where each key's image is its value, else
-- the device scan would leave the batches to the CPU
SELECT costed_on_device('SELECT i4 % 2000, count(*), sum(f8) FROM dg GROUP BY 1', 'device, 4000 rows', true);
SET work_mem = '64kB';
SELECT costed_on_device('SELECT i4 % 2000, count(*), sum(f8) FROM dg GROUP BY 1', 'device, 4000 rows', true);
SELECT costed_on_device('SELECT abs(i4), count(*), sum(f8) FROM dg GROUP BY 1', 'CPU');
RESET work_mem;
RESET gpuext.device;
DROP FUNCTION costed_on_device(text, text, boolean);

-- A device that fails at its keys pass, its values pass, and its grouped additions: under auto
-- the run answers on the CPU; under gpu the query fails with the device's error.
SET gpuext.device = auto;
SET client_min_messages = error;
SET gpuext.debug_fail_device_calls = 'kernel:1';
SELECT check_groups('SELECT c1, kb, count(*), sum(f8) FROM dg GROUP BY c1, kb', NULL);
SET gpuext.debug_fail_device_calls = 'kernel:2';
SELECT check_groups('SELECT c1, kb, count(*), sum(f8) FROM dg GROUP BY c1, kb', NULL);
SET gpuext.debug_fail_device_calls = 'kernel:3';
SELECT check_groups('SELECT c1, kb, count(*), sum(f8) FROM dg GROUP BY c1, kb', NULL);
SET gpuext.debug_fail_device_calls = '';
RESET client_min_messages;
SET gpuext.device = gpu;
SET gpuext.debug_fail_device_calls = 'kernel:1';
DO $$
BEGIN
  IF (SELECT device_state = 'ready' FROM gpuext_info()) THEN
    PERFORM c1, sum(f8) FROM dg GROUP BY c1;
    RAISE NOTICE 'no error';
  END IF;
EXCEPTION WHEN OTHERS THEN
  IF SQLSTATE <> '58000' THEN
    RAISE NOTICE 'device failure under gpu: SQLSTATE %', SQLSTATE;
  END IF;
END $$;
RESET gpuext.debug_fail_device_calls;
RESET gpuext.device;

DROP TABLE dg, dgc, dgm, dgn, dgo, dgf;
DROP FUNCTION check_groups(text, boolean, bigint);
