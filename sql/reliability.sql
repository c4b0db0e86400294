-- Device failures (gpuext.debug_fail_device_calls) and gpuext.max_device_memory at every call site:
-- gpu_sort, array and column aggregates, gpu_query_agg, gpu_query_sort and GpuSort.  Under auto a
-- failing device gives a WARNING and PostgreSQL's answer; under gpu a clean ERROR; either way the
-- backend holds no device memory afterwards.  Every result is compared with PostgreSQL's own.
-- reliability.out: a device (GPU, or the fake device); reliability_1.out: none (faults never fire).
LOAD 'gpuext';
SET gpuext.min_gpu_elements = 0;
SET gpuext.sort_min_rows = 0;
SET gpuext.device = auto;
CREATE TEMP TABLE v AS SELECT i, (i * 7919) % 100003 - 50000 AS x FROM generate_series(1, 50000) i;
ANALYZE v;
CREATE TEMP TABLE arr AS SELECT array_agg(x) AS a, array_agg(x ORDER BY x) AS sorted,
  array_agg(x ORDER BY x DESC) AS sorted_desc, sum(x) AS s, min(x) AS mn, max(x) AS mx FROM v;
-- 2,500,000 rows: a column aggregate and gpu_query_agg reduce three device batches (2^20 each).
CREATE TEMP TABLE w AS SELECT ((i::int8 * 104729) % 2500009)::int AS y FROM generate_series(1, 2500000) i;
CREATE TEMP TABLE w_ref AS SELECT sum(y) AS s, count(y) AS c, min(y) AS mn, max(y) AS mx,
  avg(y) AS a, sum(y::float8) AS fs FROM w;
CREATE FUNCTION held() RETURNS TABLE (device_bytes bigint, staging_or_none boolean)
LANGUAGE sql AS $$ SELECT device_bytes, pinned_bytes IN (0, 8388608) FROM gpuext_info() $$;
-- The rows of v through GpuSort, as one text for comparison with PostgreSQL's Sort.
CREATE FUNCTION sorted_rows(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  EXECUTE format('SELECT md5(string_agg(s::text, %L)) FROM (%s) s', ',', q) INTO r;
  RETURN r;
END $$;
SET gpuext.enable_sort = off;
CREATE TEMP TABLE sort_ref AS SELECT sorted_rows('SELECT x, i FROM v ORDER BY x DESC, i') AS rows,
  sorted_rows('SELECT x FROM v ORDER BY x') AS keys;
CREATE TEMP TABLE w_sorted AS SELECT sorted_rows('SELECT y FROM w ORDER BY y') AS keys;
RESET gpuext.enable_sort;

-- The setting: KIND:COUNT[:SKIP]; bad values are refused.
SET gpuext.debug_fail_device_calls = 'kernel';
SET gpuext.debug_fail_device_calls = 'restart:1';
SET gpuext.debug_fail_device_calls = 'copy:-1';
SET gpuext.debug_fail_device_calls = 'copy:1:2:3';
SET gpuext.debug_fail_device_calls = '';
SHOW gpuext.max_device_memory;

-- auto, gpu_sort: a failing copy, kernel or wait is a WARNING and the CPU's result; a failing
-- allocation is a full device, which auto answers on the CPU without a word.
SET gpuext.debug_fail_device_calls = 'copy:1';
SELECT gpu_sort(a) = sorted FROM arr;
SET gpuext.debug_fail_device_calls = 'copy:1:1';
SELECT gpu_sort(a, true) = sorted_desc FROM arr;
SET gpuext.debug_fail_device_calls = 'kernel:1';
SELECT gpu_sort(a, algorithm => 'bitonic') = sorted FROM arr;
SET gpuext.debug_fail_device_calls = 'sync:1:3';
SELECT gpu_sort(a, algorithm => 'quicksort') = sorted FROM arr;
SET gpuext.debug_fail_device_calls = 'alloc:1';
SELECT gpu_sort(a) = sorted FROM arr;
-- Only the next COUNT calls fail: the statement after them runs on the device again.
SELECT gpu_sort(a) = sorted FROM arr;
SELECT * FROM held();

-- auto, aggregates over arrays.
SET gpuext.debug_fail_device_calls = 'kernel:1';
SELECT gpu_sum(a) = s FROM arr;
SET gpuext.debug_fail_device_calls = 'sync:1:1';
SELECT gpu_min(a) = mn, gpu_max(a) = mx FROM arr;

-- auto, a column aggregate of three batches whose second fails after it was submitted, or
-- whose reduction fails: the batch is added on the CPU once, nothing counted twice.
SET gpuext.debug_fail_device_calls = 'sync:1:5';
SELECT gpu_sum(y) = s, gpu_count(y) = c, gpu_min(y) = mn, gpu_max(y) = mx, gpu_avg(y) = a,
  gpu_sum(y::float8) = fs FROM w, w_ref GROUP BY s, c, mn, mx, a, fs;
SET gpuext.debug_fail_device_calls = 'kernel:1:1';
SELECT gpu_sum(y) = s, gpu_count(y) = c FROM w, w_ref GROUP BY s, c;
SET gpuext.debug_fail_device_calls = 'copy:2:2';
SELECT gpu_sum(y) = s, gpu_count(y) = c FROM w, w_ref GROUP BY s, c;
SELECT * FROM held();

-- auto, gpu_query_agg: the batch in flight when the device fails, and all after it, on the CPU.
SET gpuext.debug_fail_device_calls = 'kernel:1:1';
SELECT q.count = c, q.sum = s, q.min = mn::text, q.max = mx::text, q.avg = a
FROM gpu_query_agg('SELECT y FROM w') q, w_ref;
SET gpuext.debug_fail_device_calls = 'sync:1:4';
SELECT q.count = c, q.sum = s FROM gpu_query_agg('SELECT y FROM w') q, w_ref;
SELECT * FROM held();

-- auto, gpu_query_sort: a failed run is sorted on the CPU.
SET gpuext.debug_fail_device_calls = 'kernel:1';
SELECT array_agg(z) = (SELECT sorted FROM arr) FROM gpu_query_sort('SELECT x FROM v') AS s(z int);
SET gpuext.debug_fail_device_calls = 'copy:1:1';
SELECT array_agg(z) = (SELECT sorted_desc FROM arr) FROM gpu_query_sort('SELECT x FROM v', true) AS s(z int);

-- auto, GpuSort: stored rows go to tuplesort when the device fails before returning them.
SET gpuext.debug_fail_device_calls = 'kernel:1';
SELECT sorted_rows('SELECT x, i FROM v ORDER BY x DESC, i') = rows FROM sort_ref;
SET gpuext.debug_fail_device_calls = 'copy:1:1';
SELECT sorted_rows('SELECT x, i FROM v ORDER BY x DESC, i') = rows FROM sort_ref;
SET gpuext.debug_fail_device_calls = 'sync:1';
SELECT sorted_rows('SELECT x FROM v ORDER BY x') = keys FROM sort_ref;
-- Rows made only of keys are rebuilt from the sorted keys, which come back beside the stored ones:
-- here the keys of w go up in 5 pieces and come back in 5, and the 3rd piece back fails after
-- the 1st was received; tuplesort still gets the stored keys whole.
SET work_mem = '64MB';
SET gpuext.debug_fail_device_calls = 'copy:1:7';
SELECT sorted_rows('SELECT y FROM w ORDER BY y') = keys FROM w_sorted;
RESET work_mem;
SET gpuext.debug_fail_device_calls = '';
SELECT sorted_rows('SELECT x FROM v ORDER BY x') = keys FROM sort_ref;
SELECT * FROM held();

-- gpu: every failure is an ERROR naming the step, and the next statement works.  (Terse: without a
-- device, the detail of "no GPU can be used" differs between builds.)
\set VERBOSITY terse
SET gpuext.device = gpu;
SET gpuext.debug_fail_device_calls = 'alloc:1';
SELECT gpu_sort(a) = sorted FROM arr;
SET gpuext.debug_fail_device_calls = 'copy:1';
SELECT gpu_sum(a) = s FROM arr;
SET gpuext.debug_fail_device_calls = 'sync:1:5';
SELECT gpu_sum(y) = s FROM w, w_ref GROUP BY s;
SET gpuext.debug_fail_device_calls = 'kernel:1:1';
SELECT q.sum = s FROM gpu_query_agg('SELECT y FROM w') q, w_ref;
SET gpuext.debug_fail_device_calls = 'kernel:1';
SELECT count(*) FROM gpu_query_sort('SELECT x FROM v') AS s(z int);
SET gpuext.debug_fail_device_calls = 'any:1:3';
SELECT sorted_rows('SELECT x, i FROM v ORDER BY x DESC, i') = rows FROM sort_ref;
-- A GpuSort streaming its keys: w's go up in 5 halves while w is read and come back in 5 as rows
-- go out; the 3rd piece up fails, then the sort, then the 2nd piece back, with rows already out.
SET work_mem = '64MB';
SET gpuext.debug_fail_device_calls = 'copy:1:2';
SELECT sorted_rows('SELECT y FROM w ORDER BY y') = keys FROM w_sorted;
SET gpuext.debug_fail_device_calls = 'kernel:1';
SELECT sorted_rows('SELECT y FROM w ORDER BY y') = keys FROM w_sorted;
SET gpuext.debug_fail_device_calls = 'copy:1:7';
SELECT sorted_rows('SELECT y FROM w ORDER BY y') = keys FROM w_sorted;
RESET work_mem;
SELECT gpu_sort(a) = sorted, gpu_sum(a) = s FROM arr;
\set VERBOSITY default
SELECT * FROM held();

-- reset: the device is lost in the middle of a statement, as after a GPU reset or a sticky CUDA
-- error.  The backend forgets the lost session's buffers (resetting the device frees them); auto
-- answers on the CPU, gpu fails, and the device is reset and opened again for the next statement.
SET gpuext.device = auto;
SET gpuext.debug_fail_device_calls = 'reset:1:2';
SELECT gpu_sort(a) = sorted FROM arr;
SELECT device_state, device_bytes, pinned_bytes FROM gpuext_info(false);
SELECT gpu_sort(a, true) = sorted_desc FROM arr;
SELECT device_state FROM gpuext_info(false);
-- ... with the pinned batches of a column aggregate, or the keys of a GpuSort, in flight.
SET gpuext.debug_fail_device_calls = 'reset:1:5';
SELECT gpu_sum(y) = s, gpu_count(y) = c FROM w, w_ref GROUP BY s, c;
SET work_mem = '64MB';
SET gpuext.debug_fail_device_calls = 'reset:1:7';
SELECT sorted_rows('SELECT y FROM w ORDER BY y') = keys FROM w_sorted;
RESET work_mem;
SET gpuext.debug_fail_device_calls = 'reset:1';
SELECT q.count = c, q.sum = s FROM gpu_query_agg('SELECT y FROM w') q, w_ref;
SELECT gpu_sum(y) = s FROM w, w_ref GROUP BY s;
SELECT device_state FROM gpuext_info(false);
\set VERBOSITY terse
SET gpuext.device = gpu;
SET gpuext.debug_fail_device_calls = 'reset:1:1';
SELECT gpu_sum(a) = s FROM arr;
SELECT device_state FROM gpuext_info(false);
SELECT gpu_sum(a) = s FROM arr;
\set VERBOSITY default
SELECT device_state, injected_failures > 0 AS injected FROM gpuext_info(false);
SELECT * FROM held();

-- gpuext.max_device_memory: past it, auto answers on the CPU and gpu fails saying why.
SET gpuext.debug_fail_device_calls = '';
SET gpuext.max_device_memory = '64kB';
SET gpuext.device = auto;
SELECT gpu_sort(a) = sorted, gpu_sum(a) = s FROM arr;
SELECT sorted_rows('SELECT x, i FROM v ORDER BY x DESC, i') = rows FROM sort_ref;
SELECT gpu_sum(y) = s FROM w, w_ref GROUP BY s;
\set VERBOSITY terse
SET gpuext.device = gpu;
SELECT gpu_sort(a) = sorted FROM arr;
SELECT sorted_rows('SELECT x, i FROM v ORDER BY x DESC, i') = rows FROM sort_ref;
SELECT gpu_sum(y) = s FROM w, w_ref GROUP BY s;
-- Within it, the device works as before.
SET gpuext.max_device_memory = '1MB';
SELECT gpu_sort(a) = sorted, gpu_sum(a) = s FROM arr;
\set VERBOSITY default
RESET gpuext.max_device_memory;
SELECT max_device_bytes = memory_total / 2 AS half_the_device FROM gpuext_info();
SELECT * FROM held();

-- open: a backend whose device fails to open works as one without a GPU.
\c
LOAD 'gpuext';
SET gpuext.debug_fail_device_calls = 'open:1';
SET gpuext.device = auto;
SELECT gpu_sort('{3,1,2}'::int[]), gpu_sum('{3,1,2}'::int[]);
SELECT device_state, state_detail, injected_failures FROM gpuext_info();
SET gpuext.device = gpu;
SELECT gpu_sort('{3,1,2}'::int[]);
