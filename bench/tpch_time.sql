-- bench/tpch_time.sql: one query of bench/tpch.sh timed with gpuext.enable_agg on and off in turn in
-- this one session (a warm-up pair, then :pairs pairs), each run's Planning plus Execution Time from
-- EXPLAIN (ANALYZE, TIMING OFF); then :pairs runs of GpuAgg with gpuext.device_scan_in_place off (the
-- device scan's pages copied by the CPU rather than read in place from shared buffers); then one
-- EXPLAIN (ANALYZE, VERBOSE) with GpuAgg allowed, for its Stage Timing, Device Scan, Heap Blocks and
-- GPU Fallback lines.  Prints one tab-separated line: the plan's top nodes and the median in ms with
-- GpuAgg allowed, the same with it off, and those lines after the median with pages copied.
-- Usage: psql -At -F '<tab>' -v q=QUERY -v workers=N -v pairs=N -v device=gpu -f bench/tpch_time.sql
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
LOAD 'gpuext';
SET search_path = gpuext_tpch, public;
SET gpuext.device = :device;
SET max_parallel_workers_per_gather = :workers;
SELECT set_config('tpch.query', :'q', false), set_config('tpch.pairs', :'pairs', false) \g /dev/null

-- The first nodes of a plan down its first children, as EXPLAIN names them, to a scan or GpuAgg.
CREATE FUNCTION pg_temp.plan_nodes(p json) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	names text[] := '{}';
	name text;
BEGIN
	FOR k IN 1 .. 4 LOOP
		EXIT WHEN p IS NULL;
		name := coalesce(p->>'Custom Plan Provider',
			coalesce(nullif(p->>'Partial Mode', 'Simple') || ' ', '') ||
			CASE WHEN p->>'Node Type' <> 'Aggregate' THEN p->>'Node Type'
				WHEN p->>'Strategy' = 'Hashed' THEN 'HashAggregate'
				WHEN p->>'Strategy' = 'Sorted' THEN 'GroupAggregate'
				WHEN p->>'Strategy' = 'Mixed' THEN 'MixedAggregate' ELSE 'Aggregate' END);
		EXIT WHEN name LIKE '%Scan' AND names <> '{}';
		names := names || name;
		EXIT WHEN name = 'GpuAgg';
		p := p->'Plans'->0;
	END LOOP;
	RETURN array_to_string(names, '/');
END $$;

CREATE TEMP TABLE tpch_runs (side text, ms float8, plan text);
CREATE TEMP TABLE tpch_notes (n int, note text);
DO $$
DECLARE
	q text := current_setting('tpch.query');
	plan json;
	side text;
	line text;
BEGIN
	FOR i IN 0 .. current_setting('tpch.pairs')::int LOOP
		FOREACH side IN ARRAY ARRAY['on', 'off'] LOOP
			PERFORM set_config('gpuext.enable_agg', side, false);
			EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || q INTO plan;
			IF i > 0 THEN
				INSERT INTO tpch_runs VALUES (side,
					(plan->0->>'Planning Time')::float8 + (plan->0->>'Execution Time')::float8,
					pg_temp.plan_nodes(plan->0->'Plan'));
			END IF;
		END LOOP;
	END LOOP;
	PERFORM set_config('gpuext.enable_agg', 'on', false);
	PERFORM set_config('gpuext.device_scan_in_place', 'off', false);
	FOR i IN 1 .. current_setting('tpch.pairs')::int LOOP
		EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ' || q INTO plan;
		INSERT INTO tpch_runs VALUES ('copied',
			(plan->0->>'Planning Time')::float8 + (plan->0->>'Execution Time')::float8, '');
	END LOOP;
	PERFORM set_config('gpuext.device_scan_in_place', 'on', false);
	FOR line IN EXECUTE 'EXPLAIN (ANALYZE, VERBOSE) ' || q LOOP
		IF line ~ '(Stage Timing|Device Scan|Heap Blocks|GPU Fallback):' THEN
			INSERT INTO tpch_notes VALUES ((SELECT count(*) FROM tpch_notes), btrim(line));
		END IF;
	END LOOP;
END $$;

WITH m AS (SELECT side, string_agg(DISTINCT plan, ' or ') AS plan,
		percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS ms
	FROM tpch_runs GROUP BY side)
SELECT a.plan, round(a.ms::numeric, 2), b.plan, round(b.ms::numeric, 2),
	concat_ws('; ', 'GpuAgg with pages copied: ' || round(c.ms::numeric, 2) || ' ms',
		(SELECT string_agg(note, '; ' ORDER BY n) FROM tpch_notes))
FROM m a, m b, m c WHERE a.side = 'on' AND b.side = 'off' AND c.side = 'copied';
