-- Upgrade: gpuext created at 0.1 and updated has the objects and gives the results of a fresh install.

-- Every member of the extension; for functions and aggregates, what defines them beyond their name.
CREATE TEMP VIEW gpuext_objects AS
SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS object,
       p.prokind,
       pg_get_function_identity_arguments(p.oid) AS arguments,
       pg_get_function_result(p.oid) AS result,
       p.provolatile, p.proisstrict, p.proparallel, p.prosrc,
       concat_ws(' ', a.aggtransfn::regprocedure, a.aggtranstype::regtype, a.aggfinalfn::regprocedure, a.aggfinalextra,
                 a.aggcombinefn::regprocedure, a.aggserialfn::regprocedure, a.aggdeserialfn::regprocedure) AS aggregate,
       obj_description(d.objid, d.classid::regclass::text) AS comment
FROM pg_depend d
LEFT JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
LEFT JOIN pg_aggregate a ON a.aggfnoid = p.oid
WHERE d.refclassid = 'pg_extension'::regclass
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpuext')
  AND d.deptype = 'e'
  -- 17 records a view's row types as members too; 15 does not.
  AND d.classid <> 'pg_type'::regclass;

-- A few results of the sort, the aggregates and gpuext_info, as text.
CREATE TEMP TABLE upgrade_nums AS SELECT i, i / 8.0::float8 AS f FROM generate_series(1, 1000) i;
CREATE FUNCTION pg_temp.gpuext_results() RETURNS TABLE (what text, result text) LANGUAGE sql AS $$
  SELECT 'gpu_sort int', gpu_sort('{5,3,NULL,1,4,2}'::int[])::text
  UNION ALL
  SELECT 'gpu_sort float8 descending', gpu_sort('{2.5,-1,7,NaN}'::float8[], true)::text
  UNION ALL
  SELECT 'gpu_sum, gpu_avg int', (SELECT gpu_sum(i) || ' ' || gpu_avg(i) FROM upgrade_nums)
  UNION ALL
  SELECT 'gpu_sum, gpu_avg float8', (SELECT gpu_sum(f) || ' ' || gpu_avg(f) FROM upgrade_nums)
  UNION ALL
  SELECT 'gpuext_info columns',
         (SELECT string_agg(k, ', ' ORDER BY n)
          FROM gpuext_info(open_device => false) g, json_object_keys(row_to_json(g)) WITH ORDINALITY AS c(k, n))
$$;

-- The fresh install the suite made.
SELECT extversion FROM pg_extension WHERE extname = 'gpuext';
CREATE TEMP TABLE fresh_objects AS SELECT * FROM gpuext_objects;
CREATE TEMP TABLE fresh_results AS SELECT * FROM pg_temp.gpuext_results();
SELECT count(*) AS objects,
       count(*) FILTER (WHERE prokind = 'f') AS functions,
       count(*) FILTER (WHERE prokind = 'a') AS aggregates
FROM fresh_objects;
SELECT * FROM fresh_results;

-- 0.1, then updated to the default version.
DROP EXTENSION gpuext;
CREATE EXTENSION gpuext VERSION '0.1';
SELECT extversion FROM pg_extension WHERE extname = 'gpuext';
ALTER EXTENSION gpuext UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'gpuext';

-- The same objects and results both ways: no rows.
SELECT 'only after update' AS side, * FROM (SELECT * FROM gpuext_objects EXCEPT SELECT * FROM fresh_objects) o
UNION ALL
SELECT 'only in fresh install', * FROM (SELECT * FROM fresh_objects EXCEPT SELECT * FROM gpuext_objects) o;
SELECT 'only after update' AS side, * FROM (SELECT * FROM pg_temp.gpuext_results() EXCEPT SELECT * FROM fresh_results) r
UNION ALL
SELECT 'only in fresh install', * FROM (SELECT * FROM fresh_results EXCEPT SELECT * FROM pg_temp.gpuext_results()) r;
