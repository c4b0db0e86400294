-- SQLSTATEs of gpuext's errors, by PostgreSQL's conventions: a GPU required where there is none
-- 55000 (object_not_in_prerequisite_state; 0A000 feature_not_supported in a build without device
-- code), device memory past gpuext.max_device_memory 53400 and a full device 53200 (class 53,
-- insufficient resources), a failing device or driver 58000 (class 58, system error).  Under auto
-- the same failures are WARNINGs with the same codes, and the CPU answers.  Expected outputs: a
-- device (the fake one or a GPU), the CUDA build without a GPU, the build without device code.
\set VERBOSITY sqlstate
SELECT gpu_kernels FROM gpuext_info(open_device => false);
SET gpuext.device = gpu;
SET gpuext.min_gpu_elements = 0;

-- A GPU required: the sort runs, or 55000 (0A000 without device code).
SELECT gpu_sort('{3,1,2}'::int[]);

-- Device memory past gpuext.max_device_memory: 53400.
SET gpuext.max_device_memory = '1kB';
SELECT gpu_sort(array_agg(i)) IS NOT NULL FROM generate_series(1, 100000) i;
RESET gpuext.max_device_memory;

-- An allocation failing as on a full device: 53200.
SET gpuext.debug_fail_device_calls = 'alloc:1';
SELECT gpu_sort('{3,1,2}'::int[]);

-- A copy, a kernel, a wait failing, the device lost: 58000.
SET gpuext.debug_fail_device_calls = 'copy:1';
SELECT gpu_sort('{3,1,2}'::int[]);
SET gpuext.debug_fail_device_calls = 'kernel:1';
SELECT gpu_sum(x) FROM unnest('{1,2,3}'::int8[]) x;
SET gpuext.debug_fail_device_calls = 'sync:1';
SELECT gpu_sort('{3,1,2}'::float8[]);
SET gpuext.debug_fail_device_calls = 'reset:1';
SELECT gpu_sort('{3,1,2}'::int[]);
RESET gpuext.debug_fail_device_calls;
SELECT gpu_sort('{3,1,2}'::int[]);

-- The same through GpuSort (ORDER BY) under gpu.
LOAD 'gpuext';
SET gpuext.sort_min_rows = 0;
CREATE TEMP TABLE err_sort AS SELECT i, (i * 7919) % 1000 AS a FROM generate_series(1, 20000) i;
ANALYZE err_sort;
SET gpuext.debug_fail_device_calls = 'kernel:1';
SELECT count(*) FROM (SELECT * FROM err_sort ORDER BY a, i OFFSET 0) s;
SET gpuext.max_device_memory = '1kB';
RESET gpuext.debug_fail_device_calls;
SELECT count(*) FROM (SELECT * FROM err_sort ORDER BY a, i OFFSET 0) s;
RESET gpuext.max_device_memory;

-- Under auto: a WARNING with the device's code, and the CPU's answer.
SET gpuext.device = auto;
SET gpuext.debug_fail_device_calls = 'copy:1';
SELECT gpu_sort('{3,1,2}'::int[]);
SET gpuext.debug_fail_device_calls = 'kernel:1';
SELECT count(*) FROM (SELECT * FROM err_sort ORDER BY a, i OFFSET 0) s;
RESET ALL;
