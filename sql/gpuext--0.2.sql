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
	OUT pinned_bytes bigint,
	OUT max_device_bytes bigint,
	OUT injected_failures bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'gpuext_info'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION gpuext_info(boolean) IS
'this build''s GPU support and this backend''s device session';

-- Aggregates: support functions shared by every type.
CREATE FUNCTION gpu_agg_trans(internal, anyelement) RETURNS internal
AS 'MODULE_PATHNAME', 'gpu_agg_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_agg_combine(internal, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'gpu_agg_combine' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION gpu_agg_serialize(internal) RETURNS bytea
AS 'MODULE_PATHNAME', 'gpu_agg_serialize' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION gpu_agg_deserialize(bytea, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'gpu_agg_deserialize' LANGUAGE C STRICT PARALLEL SAFE;

-- gpu_sum, gpu_avg, gpu_min, gpu_max, gpu_count over arrays and as aggregates, from one table:
-- (element type, sum result type, avg result type); no sum or avg where those are NULL.
DO $$
DECLARE
  t record;
  f record;
BEGIN
  FOR t IN SELECT * FROM (VALUES
      ('smallint', 'bigint', 'numeric'),
      ('integer', 'bigint', 'numeric'),
      ('bigint', 'numeric', 'numeric'),
      ('real', 'real', 'double precision'),
      ('double precision', 'double precision', 'double precision'),
      ('date', NULL, NULL),
      ('timestamp', NULL, NULL),
      ('timestamptz', NULL, NULL),
      -- numeric would otherwise be cast to double precision silently: here it is an error
      ('numeric', 'numeric', 'numeric')) AS v(typ, sumtype, avgtype)
  LOOP
    FOR f IN SELECT * FROM (VALUES
        ('sum', t.sumtype), ('avg', t.avgtype), ('min', t.typ), ('max', t.typ), ('count', 'bigint')) AS w(name, result)
      WHERE w.result IS NOT NULL
    LOOP
      EXECUTE format('CREATE FUNCTION gpu_%1$s(a %2$s[]) RETURNS %3$s
                      AS %4$L, %5$L LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE',
                     f.name, t.typ, f.result, 'MODULE_PATHNAME', 'gpu_array_' || f.name);
      EXECUTE format('CREATE FUNCTION gpu_agg_%1$s_final(internal, %2$s) RETURNS %3$s
                      AS %4$L, %5$L LANGUAGE C PARALLEL SAFE',
                     f.name, t.typ, f.result, 'MODULE_PATHNAME', 'gpu_agg_' || f.name || '_final');
      EXECUTE format('CREATE AGGREGATE gpu_%1$s(%2$s) (
                        SFUNC = gpu_agg_trans, STYPE = internal,
                        FINALFUNC = gpu_agg_%1$s_final, FINALFUNC_EXTRA,
                        COMBINEFUNC = gpu_agg_combine,
                        SERIALFUNC = gpu_agg_serialize, DESERIALFUNC = gpu_agg_deserialize,
                        PARALLEL = SAFE)',
                     f.name, t.typ);
    END LOOP;
  END LOOP;
END $$;

-- The first column of any query, streamed through a cursor: aggregated, or sorted as a set.
CREATE FUNCTION gpu_query_agg(query text,
	OUT count bigint, OUT sum numeric, OUT min text, OUT max text, OUT avg numeric)
RETURNS record
AS 'MODULE_PATHNAME', 'gpu_query_agg'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

CREATE FUNCTION gpu_query_sort(query text, descending boolean DEFAULT false)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpu_query_sort'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION gpu_query_sort(text, boolean) IS
'the first column of a query sorted as ORDER BY would; call with a column definition list, e.g. AS s(x integer)';

-- Matrix product of two-dimensional arrays: the same bits on the GPU and on the CPU
-- (each element accumulated with fma in k order wherever it runs; doc/matmul.md).
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
