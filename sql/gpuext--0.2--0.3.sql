-- gpuext 0.2 -> 0.3: the GPU service's views and their reset.

\echo Use "ALTER EXTENSION gpuext UPDATE TO '0.3'" to load this file. \quit

-- The GPU service (gpuext in shared_preload_libraries): its devices and its counters.
CREATE FUNCTION gpuext_devices(
	OUT device integer,
	OUT name text,
	OUT memory_total bigint,
	OUT memory_free bigint,
	OUT memory_limit bigint,
	OUT memory_used bigint,
	OUT memory_peak bigint,
	OUT clients integer,
	OUT requests bigint,
	OUT bytes_to_device bigint,
	OUT bytes_to_host bigint,
	OUT busy_ms double precision,
	OUT memory_waits bigint,
	OUT memory_refusals bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpuext_devices'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE VIEW gpuext_devices AS SELECT * FROM gpuext_devices();

COMMENT ON VIEW gpuext_devices IS
'the devices the GPU service opened: memory, clients, requests, bytes moved, busy time';

CREATE FUNCTION gpuext_stat_service(
	OUT state text,
	OUT service_pid integer,
	OUT supervisor_pid integer,
	OUT started_at timestamp with time zone,
	OUT restarts bigint,
	OUT last_exit text,
	OUT devices integer,
	OUT requests bigint,
	OUT active_clients integer,
	OUT running integer,
	OUT queued integer,
	OUT fallbacks bigint,
	OUT cancels bigint,
	OUT lost bigint,
	OUT arena_bytes bigint,
	OUT arena_used bigint,
	OUT arena_peak bigint,
	OUT stats_reset timestamp with time zone)
RETURNS record
AS 'MODULE_PATHNAME', 'gpuext_stat_service'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE VIEW gpuext_stat_service AS SELECT * FROM gpuext_stat_service();

COMMENT ON VIEW gpuext_stat_service IS
'the GPU service: state, restarts, requests, queue, fallbacks to the CPU, its arena';

CREATE FUNCTION gpuext_stat_service_reset() RETURNS void
AS 'MODULE_PATHNAME', 'gpuext_stat_service_reset'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION gpuext_stat_service_reset() IS
'zero the counters of gpuext_stat_service and gpuext_devices';

REVOKE ALL ON FUNCTION gpuext_stat_service_reset() FROM PUBLIC;
