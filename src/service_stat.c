/*
 * service_stat.c
 *		gpuext_devices, gpuext_stat_service and their reset: what the GPU
 *		service and each of its devices are doing, for the DBA.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "service.h"

PG_FUNCTION_INFO_V1(gpuext_devices);
PG_FUNCTION_INFO_V1(gpuext_stat_service);
PG_FUNCTION_INFO_V1(gpuext_stat_service_reset);

/* SQL: one row per device the running service opened (none without the service). */
Datum
gpuext_devices(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ServiceHeader *hdr = gpuext_service;

	InitMaterializedSRF(fcinfo, 0);
	if (hdr == NULL || !pg_atomic_read_u32(&hdr->ready))
		PG_RETURN_VOID();
	for (int d = 0; d < hdr->ndevices; d++)
	{
		ServiceDevice *dev = &hdr->devices[d];
		Datum		values[14];
		bool		nulls[14] = {0};
		uint64		limit = ServiceDeviceLimit(hdr, d);

		values[0] = Int32GetDatum(dev->ordinal);
		values[1] = CStringGetTextDatum(dev->info.name);
		values[2] = Int64GetDatum((int64) dev->info.memory_total);
		values[3] = Int64GetDatum((int64) dev->info.memory_free);
		values[4] = Int64GetDatum((int64) limit);
		values[5] = Int64GetDatum((int64) pg_atomic_read_u64(&dev->used));
		values[6] = Int64GetDatum((int64) pg_atomic_read_u64(&dev->peak));
		values[7] = Int32GetDatum((int32) pg_atomic_read_u32(&dev->sessions));
		values[8] = Int64GetDatum((int64) pg_atomic_read_u64(&dev->requests));
		values[9] = Int64GetDatum((int64) pg_atomic_read_u64(&dev->bytes_to_device));
		values[10] = Int64GetDatum((int64) pg_atomic_read_u64(&dev->bytes_to_host));
		values[11] = Float8GetDatum(pg_atomic_read_u64(&dev->busy_ns) / 1e6);
		values[12] = Int64GetDatum((int64) pg_atomic_read_u64(&dev->waits));
		values[13] = Int64GetDatum((int64) pg_atomic_read_u64(&dev->refusals));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}

/* SQL: the service's state and counters, one row (state 'off' without the service). */
Datum
gpuext_stat_service(PG_FUNCTION_ARGS)
{
	ServiceHeader *hdr = gpuext_service;
	TupleDesc	tupdesc;
	Datum		values[18];
	bool		nulls[18];
	int			active = 0,
				running = 0,
				queued = 0;
	uint64		arena_used = 0,
				arena_peak = 0;
	bool		ready;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	memset(nulls, true, sizeof(nulls));
	if (hdr == NULL)
	{
		values[0] = CStringGetTextDatum("off");
		nulls[0] = false;
		PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
	}
	memset(nulls, false, sizeof(nulls));
	ready = pg_atomic_read_u32(&hdr->ready) != 0;
	for (int i = 0; i < hdr->nslots; i++)
	{
		ServiceSlot *slot = &hdr->slots[i];
		uint32		state = pg_atomic_read_u32(&slot->state);

		if (slot->device_bytes > 0)
			active++;
		if (state == SLOT_REQUEST)
			queued++;
		if (state == SLOT_RUNNING)
			running++;
	}
	GpuextArenaUsage(&arena_used, &arena_peak);
	values[0] = CStringGetTextDatum(ready ? "running" : hdr->service_pid != 0 ? "starting" :
									pg_atomic_read_u32(&hdr->no_device) ? "unavailable" : "stopped");
	values[1] = Int32GetDatum(hdr->service_pid);
	nulls[1] = hdr->service_pid == 0;
	values[2] = Int32GetDatum(hdr->supervisor_pid);
	nulls[2] = hdr->supervisor_pid == 0;
	values[3] = TimestampTzGetDatum(hdr->started_at);
	nulls[3] = hdr->started_at == 0;
	values[4] = Int64GetDatum((int64) pg_atomic_read_u64(&hdr->restarts));
	values[5] = CStringGetTextDatum(hdr->last_exit);
	nulls[5] = hdr->last_exit[0] == '\0';
	values[6] = Int32GetDatum(ready ? hdr->ndevices : 0);
	values[7] = Int64GetDatum((int64) pg_atomic_read_u64(&hdr->requests));
	values[8] = Int32GetDatum(active);
	values[9] = Int32GetDatum(running - (int) pg_atomic_read_u32(&hdr->queued));
	values[10] = Int32GetDatum(queued + (int) pg_atomic_read_u32(&hdr->queued));
	values[11] = Int64GetDatum((int64) pg_atomic_read_u64(&hdr->fallbacks));
	values[12] = Int64GetDatum((int64) pg_atomic_read_u64(&hdr->cancels));
	values[13] = Int64GetDatum((int64) pg_atomic_read_u64(&hdr->lost));
	values[14] = Int64GetDatum((int64) hdr->arena_bytes);
	values[15] = Int64GetDatum((int64) arena_used);
	values[16] = Int64GetDatum((int64) arena_peak);
	values[17] = TimestampTzGetDatum(hdr->stats_reset);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* SQL: zero the counters of gpuext_stat_service and gpuext_devices (peaks drop to the current use). */
Datum
gpuext_stat_service_reset(PG_FUNCTION_ARGS)
{
	ServiceHeader *hdr = gpuext_service;

	if (hdr == NULL)
		PG_RETURN_VOID();
	pg_atomic_write_u64(&hdr->requests, 0);
	pg_atomic_write_u64(&hdr->fallbacks, 0);
	pg_atomic_write_u64(&hdr->cancels, 0);
	pg_atomic_write_u64(&hdr->lost, 0);
	for (int d = 0; d < GPUEXT_MAX_DEVICES; d++)
	{
		ServiceDevice *dev = &hdr->devices[d];

		pg_atomic_write_u64(&dev->peak, pg_atomic_read_u64(&dev->used));
		pg_atomic_write_u64(&dev->requests, 0);
		pg_atomic_write_u64(&dev->bytes_to_device, 0);
		pg_atomic_write_u64(&dev->bytes_to_host, 0);
		pg_atomic_write_u64(&dev->busy_ns, 0);
		pg_atomic_write_u64(&dev->waits, 0);
		pg_atomic_write_u64(&dev->refusals, 0);
	}
	GpuextArenaResetPeak();
	hdr->stats_reset = GetCurrentTimestamp();
	PG_RETURN_VOID();
}
