-- gpuext: ORDER BY and aggregates over int/float columns on an NVIDIA GPU

\echo Use "CREATE EXTENSION gpuext" to load this file. \quit

CREATE FUNCTION gpu_sort(a anyarray, descending boolean DEFAULT false, algorithm text DEFAULT 'auto')
RETURNS anyarray
AS 'MODULE_PATHNAME', 'gpu_sort'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION gpu_sort(anyarray, boolean, text) IS
'sort a one-dimensional array as ORDER BY would, on the GPU when gpuext.device allows';

CREATE FUNCTION gpuext_info(open_device boolean DEFAULT true,
	OUT gpu_kernels boolean,
	OUT device_state text,
	OUT state_detail text,
	OUT device_name text,
	OUT compute_capability text,
	OUT multiprocessors integer,
	OUT memory_total bigint,
	OUT memory_free bigint,
	OUT driver_version text,
	OUT runtime_version text,
	OUT open_time_ms double precision,
	OUT device_bytes bigint,
	OUT pinned_bytes bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'gpuext_info'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION gpuext_info(boolean) IS
'this build''s GPU support and this backend''s device session';
