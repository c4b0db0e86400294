-- gpuext 0.1 -> 0.2: gpu_matmul; the rest of 0.2 is in the module (PostgreSQL 17 and 18,
-- gpuext.max_device_memory superuser-only).

\echo Use "ALTER EXTENSION gpuext UPDATE TO '0.2'" to load this file. \quit

CREATE FUNCTION gpu_matmul(a real[], b real[], algorithm text DEFAULT 'auto')
RETURNS real[]
AS 'MODULE_PATHNAME', 'gpu_matmul'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION gpu_matmul(a double precision[], b double precision[], algorithm text DEFAULT 'auto')
RETURNS double precision[]
AS 'MODULE_PATHNAME', 'gpu_matmul'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION gpu_matmul(real[], real[], text) IS
'matrix product of two-dimensional arrays, on the GPU when gpuext.device allows, the same bits on the CPU';
COMMENT ON FUNCTION gpu_matmul(double precision[], double precision[], text) IS
'matrix product of two-dimensional arrays, on the GPU when gpuext.device allows, the same bits on the CPU';
