-- The device layer: settings, lazy opening, gpuext_info(), and memory held.

-- A fresh backend has not opened a device and holds no device or pinned memory.
SELECT gpu_kernels, device_state, state_detail,
       device_name, open_time_ms, device_bytes, pinned_bytes
FROM gpuext_info(open_device => false);
SHOW gpuext.device;
SHOW gpuext.min_gpu_elements;

-- gpuext.device = cpu never opens a device, even when asked for information or a sort.
SET gpuext.device = cpu;
SELECT gpu_sort('{3,1,2}'::int[]);
SELECT device_state FROM gpuext_info();
RESET gpuext.device;

-- Otherwise the first use opens it once; a GPU is ready or the reason is given.
SELECT device_state,
       state_detail,
       device_state = 'ready' AS ready,
       CASE WHEN device_state = 'ready'
            THEN device_name <> '' AND compute_capability ~ '^[0-9]+\.[0-9]$' AND multiprocessors > 0
                 AND memory_total > 0 AND memory_free BETWEEN 0 AND memory_total
                 AND driver_version ~ '^[0-9]+\.[0-9]+$' AND runtime_version ~ '^[0-9]+\.[0-9]+$'
            ELSE device_name IS NULL AND memory_total IS NULL END AS fields_consistent,
       open_time_ms >= 0 AS open_timed
FROM gpuext_info();
SELECT open_time_ms = (SELECT open_time_ms FROM gpuext_info()) AS opened_once FROM gpuext_info();

-- gpuext.device = gpu: the GPU sorts, or the statement fails saying why.
SET gpuext.device = gpu;
SELECT gpu_sort('{3,1,NULL,2}'::int[]);
SELECT gpu_sort('{}'::int[]);
RESET gpuext.device;

-- auto: any size works wherever it runs; min_gpu_elements only moves small inputs to the CPU.
SET gpuext.device = auto;
SET gpuext.min_gpu_elements = 0;
SELECT gpu_sort('{3,1,2}'::int[]);
SET gpuext.min_gpu_elements = 1000000;
SELECT gpu_sort('{3,1,2}'::int[]);
RESET gpuext.min_gpu_elements;
RESET gpuext.device;

-- After a statement, no device memory is held; the pinned staging buffer is kept for reuse.
SELECT count(*) FROM (SELECT gpu_sort(array_agg((i * 7919) % 100003)) FROM generate_series(1, 300000) i) s;
SELECT device_bytes, pinned_bytes FROM gpuext_info();

-- A statement cancelled while sorting leaves no device memory behind.
CREATE TEMP TABLE big AS SELECT array_agg(random()) AS a FROM generate_series(1, 1000000);
SET statement_timeout = '500ms';
SELECT count(gpu_sort(a, g % 2 = 0)) FROM big, generate_series(1, 100000) g;
RESET statement_timeout;
SELECT device_bytes FROM gpuext_info();
SELECT gpu_sort('{3,1,2}'::float8[]);

-- GpuSort says in EXPLAIN ANALYZE where it sorted and why (device, no GPU, LIMIT, budget); a build
-- without device code keeps PostgreSQL's Sort.
LOAD 'gpuext';
SET gpuext.sort_min_rows = 0;
CREATE FUNCTION gpusort_explain(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF line ~ 'GpuSort|Sort Method|GPU Fallback|GPU Keys|Bound|Input' THEN
      RETURN NEXT regexp_replace(regexp_replace(line, '\(actual rows=(\d+)(\.00)? loops=1\)', 'rows=\1'), '\d+kB', 'NkB', 'g');
    END IF;
  END LOOP;
END $$;
CREATE TEMP TABLE to_sort AS SELECT i, (i * 7919) % 1000 AS a, (i % 7)::float8 AS c FROM generate_series(1, 3000) i;
ANALYZE to_sort;
SELECT gpusort_explain('SELECT * FROM to_sort ORDER BY a, c DESC');
SELECT gpusort_explain('SELECT * FROM to_sort ORDER BY a LIMIT 5');
SET gpuext.sort_work_mem = '64kB';
SET gpuext.sort_rows_on_device = off;
SELECT gpusort_explain('SELECT * FROM to_sort ORDER BY c NULLS FIRST, i');
RESET gpuext.sort_work_mem;
RESET gpuext.sort_rows_on_device;
SELECT device_bytes FROM gpuext_info();

-- gpuext.max_device_memory is superuser-only, as temp_file_limit is: an ordinary role cannot raise its share.
CREATE ROLE regress_gpuext_user;
SET ROLE regress_gpuext_user;
SET gpuext.max_device_memory = '1GB';
SHOW gpuext.max_device_memory;
RESET ROLE;
SET gpuext.max_device_memory = '1GB';
SHOW gpuext.max_device_memory;
RESET gpuext.max_device_memory;
DROP ROLE regress_gpuext_user;
