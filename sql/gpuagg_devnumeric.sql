-- Custom Scan (GpuAgg)'s device scan of numeric columns: numeric(p, s) values read from their bytes
-- as bigints at scale s, compared with constants, and computed with + - * as 128-bit integers at
-- the display scales PostgreSQL's numeric arithmetic gives, their sums, averages, minima and maxima
-- then built as PostgreSQL's numeric aggregates build them.  Every result is checked against
-- PostgreSQL's own plan; where there is a device, that the device scan ran and how many tuples it
-- left to the CPU: a batch holding a NaN, a value past 64 bits at its scale or arithmetic past 126
-- bits is read on the CPU.
LOAD 'gpuext';
SET gpuext.agg_min_rows = 0;
SET gpuext.min_gpu_elements = 0;
SET max_parallel_workers_per_gather = 0;

-- 'ok' when q's rows with GpuAgg allowed equal its rows with gpuext.enable_agg off and, where there
-- is a device and devscan is not NULL, the device scan ran exactly when devscan is true, with
-- cpu_tuples tuples left to the CPU; else what differed.
CREATE FUNCTION check_numeric(q text, devscan boolean DEFAULT true, cpu_tuples bigint DEFAULT 0)
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

-- TPC-H's lineitem shape after a text column of varying width: numeric(15,2) prices, quantities,
-- discounts and taxes, negative and zero values, values of every weight from 0.01 to 10^12, NULLs;
-- numeric(20,2) (past bigint's precision), numeric(6,5) and numeric(30,4) whose large values do
-- not fit a bigint at its scale, and an unconstrained numeric.
CREATE TABLE dn (pad text, q numeric(15,2), p numeric(15,2), disc numeric(15,2), tax numeric(15,2),
                 flag char(1), status char(1), d date, w numeric(20,2), s numeric(6,5), big numeric(30,4),
                 un numeric, k int4);
INSERT INTO dn
SELECT repeat('x', i % 100), 1 + i % 50,
       CASE WHEN i % 97 = 0 THEN NULL WHEN i % 13 = 0 THEN -(i * 7.31) WHEN i % 17 = 0 THEN 0
            ELSE round((i % 1000) * 91.37 + i / 100.0, 2) END,
       (i % 11) / 100.0, (i % 9) / 100.0,
       (ARRAY['A', 'N', 'R'])[1 + i % 3], (ARRAY['F', 'O'])[1 + i % 2], date '1992-01-01' + i % 2500,
       CASE WHEN i % 7 = 0 THEN 10.0 ^ (i % 17) + 0.01 ELSE -(i % 1000) END,
       (i % 100000) / 100000.0, CASE WHEN i % 5000 = 0 THEN 1e20 ELSE i / 3.0 END, i / 7.0, i % 1000
FROM generate_series(1, 30000) i;
VACUUM ANALYZE dn;

-- TPC-H Q1 and Q6 as the specification writes them, over every row; then more aggregates of each
-- argument, min and max among them.
SELECT check_numeric($q$SELECT flag, status, sum(q) AS sum_qty, sum(p) AS sum_base_price,
  sum(p * (1 - disc)) AS sum_disc_price, sum(p * (1 - disc) * (1 + tax)) AS sum_charge, avg(q) AS avg_qty,
  avg(p) AS avg_price, avg(disc) AS avg_disc, count(*) AS count_order
  FROM dn WHERE d <= date '1998-12-01' - interval '90' day GROUP BY flag, status$q$);
SELECT check_numeric($q$SELECT sum(p * disc) AS revenue FROM dn
  WHERE d >= date '1994-01-01' AND d < date '1994-01-01' + interval '1' year
  AND disc BETWEEN 0.06 - 0.01 AND 0.06 + 0.01 AND q < 24$q$);
SELECT check_numeric($q$SELECT min(p), max(p), min(p * (1 - disc)), max(-p * tax + q), avg(p - q * 2),
  sum(w), avg(w), min(w), max(w), count(p), count(*) FROM dn$q$);
SELECT check_numeric($q$SELECT flag, min(p * disc), max(p * disc), avg(p * (1 + tax)), sum(w - p), count(w)
  FROM dn GROUP BY flag$q$);
SELECT check_numeric($q$SELECT k, sum(p * disc), avg(q), min(p), max(w) FROM dn GROUP BY k$q$);
-- Comparisons at the column's scale and past it (the column's value scaled up), each operator;
-- FILTERs; NULLs through the arithmetic.
SELECT check_numeric($q$SELECT count(*), sum(p) FROM dn WHERE disc < 0.055 AND tax >= 0.035 AND q <> 7$q$);
SELECT check_numeric($q$SELECT count(*), sum(q) FROM dn WHERE p > 45678.123 OR false$q$);
SELECT check_numeric($q$SELECT count(*), sum(q) FROM dn WHERE p = 0 AND disc <= 0.1 AND tax > -1$q$);
SELECT check_numeric($q$SELECT count(*), sum(q) FROM dn WHERE s < 0.000015 AND s > 0$q$);
SELECT check_numeric($q$SELECT sum(p) FILTER (WHERE disc > 0.05), avg(p * tax) FILTER (WHERE q < 10),
  count(*) FILTER (WHERE p IS NULL), max(q) FILTER (WHERE w < 0) FROM dn$q$);
SELECT check_numeric($q$SELECT flag, sum(p) FILTER (WHERE disc > 0.05), avg(p * tax) FILTER (WHERE q < 10)
  FROM dn GROUP BY flag$q$);
SELECT check_numeric($q$SELECT count(*), sum(s), avg(s * 3), min(s - 1) FROM dn WHERE k < 500$q$);

-- A numeric(30,4) value past 64 bits at its scale (10^20): its batch (the table's only one) is read
-- on the CPU, only where its value is read, even in a WHERE clause.  Arithmetic past 126 bits
-- (w up to 10^18 at scale 2, to the fourth power) likewise.
SELECT count(*) AS dn_rows FROM dn \gset
SELECT check_numeric('SELECT count(big), sum(q) FROM dn');
SELECT check_numeric($q$SELECT sum(big), max(big), count(*) FROM dn WHERE k < 100$q$, true, :dn_rows);
SELECT check_numeric($q$SELECT sum(q * 2) FROM dn WHERE big < 1000$q$, true, :dn_rows);
SELECT check_numeric($q$SELECT sum(w * w * w * w) FROM dn$q$, true, :dn_rows);
-- Not taken by the device scan: an unconstrained numeric, division.
SELECT check_numeric('SELECT sum(un), sum(q) FROM dn', false);
SELECT check_numeric('SELECT sum(p / 3) FROM dn', false);

-- NaN in a numeric(15,2) column: compared on the device (above every number); its batch is read on
-- the CPU where a passing row's NaN would be added or computed with.
CREATE TABLE dnn (pad text, a numeric(15,2), b numeric(15,2), g int4);
INSERT INTO dnn SELECT repeat('y', i % 30), i / 4.0, CASE WHEN i = 777 THEN 'NaN'::numeric ELSE i % 10 END, i % 4
FROM generate_series(1, 2000) i;
VACUUM ANALYZE dnn;
SELECT check_numeric('SELECT sum(a), count(b), min(a) FROM dnn');
SELECT check_numeric('SELECT sum(a), sum(b), avg(b), min(b), max(b) FROM dnn', true, 2000);
SELECT check_numeric('SELECT g, sum(a * b), max(b) FROM dnn GROUP BY g', true, 2000);
SELECT check_numeric('SELECT count(*), sum(a) FROM dnn WHERE b > 5');
SELECT check_numeric('SELECT count(*), sum(a), min(b), max(b) FROM dnn WHERE b < 9 AND b <> 3');
SELECT check_numeric('SELECT g, count(*), sum(a) FILTER (WHERE b >= 8) FROM dnn GROUP BY g');
-- Columns added with defaults: rows written before them hold no value for them; a default past 64
-- bits at its scale leaves the column to the CPU.
ALTER TABLE dnn ADD COLUMN m numeric(10,2) DEFAULT 12.5, ADD COLUMN h numeric(30,2) DEFAULT 1e25;
INSERT INTO dnn (pad, a, b, g, m, h) SELECT 'z', i, i, i % 4, -i / 8.0, i FROM generate_series(1, 500) i;
VACUUM ANALYZE dnn;
SELECT check_numeric('SELECT sum(m), avg(m * a), min(m), count(m) FROM dnn WHERE g < 2');
SELECT check_numeric('SELECT g, sum(m + 1), max(m), avg(a * m), count(*) FROM dnn WHERE m > 0 GROUP BY g');
SELECT check_numeric('SELECT sum(h), count(*) FROM dnn', false);

-- Pages not all-visible: rows updated (some HOT) and deleted.
UPDATE dn SET p = p + 1 WHERE k % 101 = 0;
DELETE FROM dn WHERE k % 7 = 3;
SELECT check_numeric($q$SELECT flag, status, sum(q), sum(p * (1 - disc) * (1 + tax)), avg(disc), count(*)
  FROM dn WHERE d <= date '1998-12-01' - interval '90' day GROUP BY flag, status$q$);

-- Parallel workers, each with its share of the pages: without GROUP BY each reduces its batches,
-- the leader merges the workers' numeric accumulators; with GROUP BY they group on the CPU.
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT check_numeric($q$SELECT sum(p * disc), avg(p * (1 - disc) * (1 + tax)), min(p * tax), max(w), sum(q), count(*)
  FROM dn WHERE d >= date '1994-01-01' AND disc BETWEEN 0.05 AND 0.07 AND q < 24$q$, NULL);
SELECT check_numeric($q$SELECT flag, status, sum(p * (1 - disc)), avg(q), max(p) FROM dn GROUP BY flag, status$q$, NULL);
SET max_parallel_workers_per_gather = 0;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;

-- A table where every batch holds a NaN that a passing row adds: once four batches, and most of the
-- run's, were read again on the CPU, the rest of the run is read there, and EXPLAIN says why.
CREATE TABLE dnr (a numeric(15,2), b int4) WITH (fillfactor = 10);
INSERT INTO dnr SELECT CASE WHEN i % 1000 = 0 THEN 'NaN' ELSE i / 100.0 END, i % 7
FROM generate_series(1, 240000) i;
VACUUM ANALYZE dnr;
SELECT pg_relation_size('dnr') / current_setting('block_size')::int > 5 * 2048 AS five_batches;
SELECT check_numeric('SELECT sum(a), count(*), max(b) FROM dnr', NULL);
SELECT check_numeric('SELECT b, sum(a), count(*) FROM dnr GROUP BY b', NULL);
CREATE FUNCTION dnr_fallback(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  plan jsonb;
BEGIN
  IF NOT (SELECT gpu_kernels AND device_state <> 'unavailable' FROM gpuext_info()) THEN
    RETURN 'most batches held values the device scan leaves to the CPU';
  END IF;
  EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO plan;
  RETURN jsonb_path_query_first(plan, '$.** ? (@."Custom Plan Provider" == "GpuAgg")')->>'GPU Fallback';
END $$;
SELECT dnr_fallback('SELECT sum(a), count(*), max(b) FROM dnr');
SELECT dnr_fallback('SELECT b, sum(a), count(*) FROM dnr GROUP BY b');
DROP FUNCTION dnr_fallback;
DROP TABLE dnr;

-- Under auto a failing device leaves the batch to the CPU with the same result; under GROUP BY,
-- failing at its keys pass, its values pass and its grouped additions, the run answers on the CPU.
SELECT count(*) AS dn_rows FROM dn \gset
SET client_min_messages = error;
SET gpuext.device = auto;
SET gpuext.debug_fail_device_calls = 'kernel:1';
SELECT check_numeric('SELECT sum(p * disc), avg(q), min(p) FROM dn WHERE disc < 0.05', true, :dn_rows);
SELECT check_numeric('SELECT flag, sum(p * disc), avg(q), min(p) FROM dn GROUP BY flag', NULL);
SET gpuext.debug_fail_device_calls = 'kernel:2';
SELECT check_numeric('SELECT flag, sum(p * disc), avg(q), min(p) FROM dn GROUP BY flag', NULL);
SET gpuext.debug_fail_device_calls = 'kernel:3';
SELECT check_numeric('SELECT flag, sum(p * disc), avg(q), min(p) FROM dn GROUP BY flag', NULL);
RESET gpuext.debug_fail_device_calls;
RESET client_min_messages;
RESET gpuext.device;
DROP TABLE dn, dnn;
DROP FUNCTION check_numeric;
