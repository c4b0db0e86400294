-- Bad input to gpu_sort: each gives a clear error, never a crash or a wrong answer.

-- Unsupported element types name the type and the supported ones.
SELECT gpu_sort('{b,a}'::text[]);
SELECT gpu_sort('{1.5,0.5}'::numeric[]);
SELECT gpu_sort('{t,f}'::bool[]);
SELECT gpu_sort('{12:00,11:00}'::time[]);

-- Multi-dimensional arrays.
SELECT gpu_sort('{{3,2},{1,0}}'::int[]);
SELECT gpu_sort('{{{1}}}'::float8[], true, 'radix');

-- Unknown algorithm names list the valid ones.
SELECT gpu_sort('{2,1}'::int[], false, 'bogosort');
SELECT gpu_sort('{2,1}'::int[], false, '');

-- oddeven is quadratic: above 65536 non-NULL elements it refuses, with the count.
SELECT cardinality(gpu_sort(array_agg(i), false, 'oddeven')) FROM generate_series(1, 65536) i;
SELECT gpu_sort(array_agg(i), false, 'oddeven') FROM generate_series(1, 65537) i;
SELECT cardinality(gpu_sort(array_agg(CASE WHEN i % 2 = 0 THEN i END), false, 'oddeven'))
FROM generate_series(1, 131072) i;

-- Not an array at all: no such function.
SELECT gpu_sort(42);

-- STRICT: a NULL direction or algorithm gives NULL, like any strict function.
SELECT gpu_sort('{2,1}'::int[], NULL) IS NULL AS null_direction,
       gpu_sort('{2,1}'::int[], false, NULL) IS NULL AS null_algorithm;

-- GUC values are checked.
SET gpuext.device = 'tpu';
SET gpuext.min_gpu_elements = -1;
SET gpuext.no_such_setting = 1;
