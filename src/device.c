/*
 * device.c
 *		The backend's device session: lazy open, memory ownership, waits and
 *		errors, and gpuext_info().
 *
 * A backend opens the device at most once, on the first call that needs it,
 * never in _PG_init or the postmaster.  Device buffers belong to the memory
 * context they were allocated in, so an ERROR or a cancel that unwinds the
 * statement frees them.  The pinned staging buffer is kept for reuse across
 * calls and dropped if a call that was using it never finished; transfers
 * through it are in device_transfer.c, failure injection in device_faults.c.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "gpuext.h"
#include "pg_compat.h"
#include "service.h"

/* A backend's own device reads shared buffers only where it reads host memory in place (the fake). */
static bool
LocalReadsBuffers(void)
{
	return gpuext_cuda_reads_host_in_place() != 0;
}

/* The batch's pages from its copies and, where read in place, this process's shared buffers. */
static GpuextStatus
LocalGatherPages(char *pages, const char *copies, const uint32_t *refs, uint32_t npages)
{
	return gpuext_scan_gather_pages(pages, copies, refs, LocalReadsBuffers() ? BufferBlocks : NULL,
									(uint32_t) NBuffers, npages);
}

/* gpuext_cuda.h in this process, for backends that do not reach the GPU service. */
const GpuextDeviceOps gpuext_local_ops = {
	.open = gpuext_cuda_open,
	.reset = gpuext_cuda_reset,
	.mem_info = gpuext_cuda_mem_info,
	.alloc = gpuext_cuda_alloc,
	.free = gpuext_cuda_free,
	.alloc_pinned = gpuext_cuda_alloc_pinned,
	.free_pinned = gpuext_cuda_free_pinned,
	.copy_to_device = gpuext_cuda_copy_to_device,
	.copy_to_host = gpuext_cuda_copy_to_host,
	.copy_on_device = gpuext_cuda_copy_on_device,
	.mark = gpuext_cuda_mark,
	.wait = gpuext_cuda_wait,
	.sort_scratch_bytes = gpuext_sort_scratch_bytes,
	.sort_keys = gpuext_sort_keys,
	.sort_rows_scratch_bytes = gpuext_sort_rows_scratch_bytes,
	.sort_rows = gpuext_sort_rows,
	.gather_rows_scratch_bytes = gpuext_gather_rows_scratch_bytes,
	.gather_rows = gpuext_gather_rows,
	.reduce_scratch_bytes = gpuext_reduce_scratch_bytes,
	.reduce = gpuext_reduce,
	.groups_clear = gpuext_groups_clear,
	.groups_add = gpuext_groups_add,
	.groups_result = gpuext_groups_result,
	.scan_heap = gpuext_scan_heap,
	.reads_buffers = LocalReadsBuffers,
	.gather_pages = LocalGatherPages,
	.matmul = gpuext_matmul,
	.error_message = gpuext_cuda_error_message,
};

const GpuextDeviceOps *gpuext_dev = &gpuext_local_ops;

/* Whether this backend's device calls go to the GPU service. */
#define USING_SERVICE() (gpuext_dev == &gpuext_service_ops)

typedef enum DeviceState
{
	DEVICE_UNOPENED,
	DEVICE_READY,
	DEVICE_UNAVAILABLE,
	DEVICE_LOST					/* reset and opened again once no buffer of it is left */
} DeviceState;

static const char *const device_state_names[] = {"unopened", "ready", "unavailable", "lost"};

static DeviceState device_state = DEVICE_UNOPENED;
static char device_reason[512];
static GpuextDeviceInfo device_info;
static double device_open_ms;

static size_t device_bytes_held;
static size_t pinned_bytes_held;

/* Device sessions: a lost one's buffers are forgotten, never freed, and counted down to the reset. */
static uint64 device_session = 1;
static int	session_buffers;
static int	lost_buffers;

static char *staging;
static bool *staging_guard;		/* lives in the memory context of the call using staging */

/* Set when the ERROR being raised is a device failure (GpuextTryDevice may fall back). */
static bool device_failed;

/* Set with device_failed when the cause was the GPU service's arena being full. */
static bool device_busy;

#define FAULT_MESSAGE "injected failure (gpuext.debug_fail_device_calls)"

/* Message for the last failed device-layer call, injected or real. */
static const char *
DeviceErrorMessage(void)
{
	return gpuext_fault_fired ? FAULT_MESSAGE : gpuext_cuda_error_message();
}

/*
 * Bytes of device memory this backend may hold (gpuext.max_device_memory;
 * -1: half the device, or with the service its share of the pool).
 */
static size_t
DeviceMemoryLimit(void)
{
	if (gpuext_max_device_memory >= 0)
		return (size_t) gpuext_max_device_memory * 1024;
	if (USING_SERVICE())
		return GpuextServiceClientShare();
	return device_info.memory_total / 2;
}

/*
 * Bytes of device memory this backend may hold, as far as is known without
 * opening a device: 0 where it is not known yet (no limit set, no device
 * opened, the GPU service not yet on one).
 */
size_t
GpuextDeviceMemoryKnown(void)
{
	if (gpuext_max_device_memory >= 0)
		return DeviceMemoryLimit();
	if (!USING_SERVICE() && GpuextServiceAvailable() && device_state == DEVICE_UNOPENED)
		return gpuext_service->ndevices > 0 ? GpuextServiceClientShare() : 0;
	if (device_state != DEVICE_READY)
		return 0;
	return USING_SERVICE() && gpuext_service->ndevices <= 0 ? 0 : DeviceMemoryLimit();
}

/* Open the device once per backend; remember why if it cannot be used. */
static void
DeviceOpen(void)
{
	instr_time	start,
				duration;
	GpuextStatus status;

	/* With the service, a backend never opens a device: it starts a session with the service */
	if (device_state == DEVICE_UNOPENED && !USING_SERVICE() && GpuextServiceAvailable())
		gpuext_dev = &gpuext_service_ops;
	/* The service may be back: try again each time */
	if (device_state == DEVICE_UNAVAILABLE && USING_SERVICE())
		device_state = DEVICE_UNOPENED;
	if (device_state == DEVICE_LOST && lost_buffers == 0)
	{
		/* Nothing points into the lost session any more: drop it and open a new one */
		if (gpuext_cuda_reset() != GPUEXT_OK)
			elog(DEBUG1, "gpuext: resetting the lost device: %s", gpuext_cuda_error_message());
		device_state = DEVICE_UNOPENED;
	}
	if (device_state != DEVICE_UNOPENED)
		return;

	if (!IsUnderPostmaster && IsPostmasterEnvironment)
	{
		device_state = DEVICE_UNAVAILABLE;
		strlcpy(device_reason, "the postmaster never opens a device", sizeof(device_reason));
		return;
	}

	INSTR_TIME_SET_CURRENT(start);
	status = gpuext_cuda_open(&device_info);
	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, start);
	device_open_ms = INSTR_TIME_GET_MILLISEC(duration);

	if (status == GPUEXT_OK)
	{
		device_state = DEVICE_READY;
		elog(DEBUG1, "gpuext: opened %s (compute capability %d.%d) in %.1f ms",
			 device_info.name, device_info.cc_major, device_info.cc_minor, device_open_ms);
	}
	else
	{
		device_state = DEVICE_UNAVAILABLE;
		strlcpy(device_reason, DeviceErrorMessage(), sizeof(device_reason));
		elog(DEBUG1, "gpuext: no usable GPU, using the CPU: %s", device_reason);
	}
}

/* Open the device if needed and say whether it can be used. */
static bool
DeviceReady(void)
{
	DeviceOpen();
	return device_state == DEVICE_READY;
}

/*
 * Whether the server's configuration lets any work go to a device
 * (gpuext.offload, which only the configuration file and a reload change):
 * the planners and every run-time choice of the device ask here first.
 */
bool
GpuextOffloadAllowed(void)
{
	return gpuext_offload;
}

/*
 * Decide by gpuext.offload and gpuext.device whether work may go to the
 * device; ERROR if gpu is required but cannot be used: 55000 where a GPU
 * could be, 0A000 in a build without device code.
 */
bool
GpuextUseDevice(void)
{
	if (gpuext_device_mode == GPUEXT_DEVICE_CPU)
		return false;
	if (GpuextOffloadAllowed() && DeviceReady())
		return true;
	if (gpuext_device_mode == GPUEXT_DEVICE_GPU)
		ereport(ERROR,
				(errcode(gpuext_cuda_built() ? ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE : ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("gpuext.device is \"gpu\" but no GPU can be used"),
				 GpuextOffloadAllowed() ? errdetail("%s", device_reason) :
				 errdetail("Offload is turned off in the server's configuration (gpuext.offload = off)."),
				 errhint("Set gpuext.device to \"auto\" or \"cpu\" to run on the CPU.")));
	return false;
}

/*
 * Whether the planners may offer GpuSort and GpuAgg: never under cpu, with
 * offload off or in a build without device code; always under gpu (running them then says why
 * no GPU can be used); under auto where a GPU can be used, as far as is
 * known without waiting: through the GPU service unless its last start
 * found none, else by this backend's device, opened here if it was not.
 * Called only for a plan that would take one, so that planning alone opens
 * no device.
 */
bool
GpuextPlanOnDevice(const char **why)
{
	*why = NULL;
	if (!gpuext_cuda_built())
		*why = "this build has no device code";
	else if (!GpuextOffloadAllowed())
		*why = "gpuext.offload is off";
	else if (gpuext_device_mode == GPUEXT_DEVICE_CPU)
		*why = "gpuext.device is cpu";
	else if (gpuext_device_mode == GPUEXT_DEVICE_GPU)
		return true;
	else if (GpuextServiceAvailable())
	{
		if (pg_atomic_read_u32(&gpuext_service->no_device))
			*why = psprintf("no GPU can be used: %s", gpuext_service->start_error);
	}
	else if (!DeviceReady() && device_state == DEVICE_UNAVAILABLE)
		*why = psprintf("no GPU can be used: %s", device_reason);
	return *why == NULL;
}

/* Placement of n elements, as gpu_sort's: gpuext.device decides; auto keeps fewer than min_gpu_elements on the CPU. */
bool
GpuextUseDeviceFor(size_t n)
{
	if (!GpuextUseDevice())
		return false;
	return gpuext_device_mode != GPUEXT_DEVICE_AUTO || n >= (size_t) gpuext_min_gpu_elements;
}

/* The device session is gone: forget its buffers (the reset frees them) until none is left. */
static void
DeviceLost(void)
{
	device_state = DEVICE_LOST;
	snprintf(device_reason, sizeof(device_reason),
			 "the device was lost (%s); it is opened again once its buffers are released", DeviceErrorMessage());
	device_session++;
	lost_buffers += session_buffers;
	session_buffers = 0;
	device_bytes_held = 0;
	pinned_bytes_held = 0;
	if (USING_SERVICE() && staging != NULL)
		gpuext_cuda_free_pinned(staging);
	staging = NULL;
	staging_guard = NULL;
}

/*
 * The SQLSTATE of a device-layer status, by PostgreSQL's conventions: a full
 * device is class 53 (insufficient resources), a missing device 55000 (0A000
 * without device code), a bad argument 22023, any other device or driver
 * failure class 58 (system error).
 */
static int
DeviceErrorCode(GpuextStatus status)
{
	switch (status)
	{
		case GPUEXT_OUT_OF_MEMORY:
			return ERRCODE_OUT_OF_MEMORY;
		case GPUEXT_NOT_BUILT:
			return ERRCODE_FEATURE_NOT_SUPPORTED;
		case GPUEXT_NO_DEVICE:
			return ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE;
		case GPUEXT_INVALID:
			return ERRCODE_INVALID_PARAMETER_VALUE;
		default:
			return ERRCODE_SYSTEM_ERROR;
	}
}

/* Turn a device-layer failure into an ERROR carrying the CUDA message. */
void
GpuextCheck(GpuextStatus status, const char *what)
{
	if (status == GPUEXT_OK)
		return;
	if (status == GPUEXT_DEVICE_LOST)
	{
		DeviceLost();
		device_failed = true;
		ereport(ERROR,
				(errcode(ERRCODE_SYSTEM_ERROR),
				 errmsg("GPU %s failed: the device was lost: %s", what, DeviceErrorMessage()),
				 errdetail("This backend opens the device again for its next statement.")));
	}
	if (status == GPUEXT_INTERRUPTED)
	{
		CHECK_FOR_INTERRUPTS();
		ereport(ERROR,
				(errcode(ERRCODE_QUERY_CANCELED),
				 errmsg("canceling GPU work during %s", what)));
	}
	device_failed = true;
	ereport(ERROR,
			(errcode(DeviceErrorCode(status)),
			 errmsg("GPU %s failed: %s", what, DeviceErrorMessage())));
}

/* Poll callback for device waits: stop waiting when the backend must cancel or die. */
int
GpuextPollInterrupts(void *arg)
{
	return (QueryCancelPending || ProcDiePending) && INTERRUPTS_CAN_BE_PROCESSED();
}

/* Wait for an event slot (or the whole stream when slot < 0), serving cancel requests. */
void
GpuextWait(int slot)
{
	for (;;)
	{
		GpuextStatus status = gpuext_cuda_wait(slot, GpuextPollInterrupts, NULL);

		if (status != GPUEXT_INTERRUPTED)
		{
			GpuextCheck(status, "wait");
			return;
		}
		CHECK_FOR_INTERRUPTS();
	}
}

/* Memory-context callback: free a buffer its owner did not free. */
static void
BufferRelease(void *arg)
{
	GpuextBuffer *buf = (GpuextBuffer *) arg;

	if (buf->ptr == NULL)
		return;
	if (buf->session != device_session)
	{
		/* The lost session's memory goes with its reset; the service's arena pages are this backend's */
		if (buf->pinned && USING_SERVICE())
			gpuext_cuda_free_pinned(buf->ptr);
		lost_buffers--;
		buf->ptr = NULL;
		return;
	}
	session_buffers--;
	if (buf->pinned)
	{
		gpuext_cuda_free_pinned(buf->ptr);
		pinned_bytes_held -= buf->bytes;
	}
	else
	{
		gpuext_cuda_free(buf->ptr);
		device_bytes_held -= buf->bytes;
	}
	buf->ptr = NULL;
}

/* Allocate device or pinned memory owned by CurrentMemoryContext; NULL on OOM if missing_ok. */
static GpuextBuffer *
BufferAlloc(size_t bytes, bool pinned, bool missing_ok)
{
	GpuextBuffer *buf;
	MemoryContextCallback *cb;
	void	   *ptr = NULL;
	GpuextStatus status;

	buf = palloc(sizeof(GpuextBuffer));
	cb = palloc(sizeof(MemoryContextCallback));
	bytes = Max(bytes, 1);
	/* Past gpuext.max_device_memory, as if the device were full. */
	if (!pinned && bytes > DeviceMemoryLimit() - Min(device_bytes_held, DeviceMemoryLimit()))
	{
		if (missing_ok)
		{
			elog(DEBUG1, "gpuext: %zu bytes of device memory would pass gpuext.max_device_memory (%zu)",
				 bytes, DeviceMemoryLimit());
			return NULL;
		}
		device_failed = true;
		if (gpuext_max_device_memory < 0 && USING_SERVICE())
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("GPU memory allocation would pass this backend's share of the GPU service's pool"),
					 errdetail("The allocation is %zu bytes; this backend holds %zu bytes of device memory and may hold %zu, "
							   "the pool's limit divided by gpuext.device_clients.",
							   bytes, device_bytes_held, DeviceMemoryLimit()),
					 errhint("A superuser can set gpuext.max_device_memory, or set gpuext.device to \"auto\" to run on the CPU instead.")));
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("GPU memory allocation would pass gpuext.max_device_memory"),
				 errdetail("The allocation is %zu bytes; this backend holds %zu bytes of device memory and may hold %zu.",
						   bytes, device_bytes_held, DeviceMemoryLimit()),
				 errhint("Raise gpuext.max_device_memory, or set gpuext.device to \"auto\" to run on the CPU instead.")));
	}
	status = pinned ? gpuext_cuda_alloc_pinned(&ptr, bytes) : gpuext_cuda_alloc(&ptr, bytes);
	/* Short of memory is an answer for device memory, and for pinned memory only as the arena's back-pressure */
	if (status == GPUEXT_OUT_OF_MEMORY && missing_ok && (!pinned || (USING_SERVICE() && !gpuext_fault_fired)))
	{
		elog(DEBUG1, "gpuext: %s", DeviceErrorMessage());
		return NULL;
	}
	/* A full arena is back-pressure from other clients, not a failure: auto falls back quietly */
	if (status == GPUEXT_OUT_OF_MEMORY && pinned && USING_SERVICE())
		device_busy = true;
	GpuextCheck(status, pinned ? "pinned memory allocation" : "memory allocation");

	buf->ptr = ptr;
	buf->bytes = bytes;
	buf->pinned = pinned;
	buf->session = device_session;
	session_buffers++;
	if (pinned)
		pinned_bytes_held += bytes;
	else
		device_bytes_held += bytes;
	cb->func = BufferRelease;
	cb->arg = buf;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, cb);
	return buf;
}

/* Device memory owned by CurrentMemoryContext; NULL on OOM if missing_ok. */
GpuextBuffer *
GpuextDeviceAlloc(size_t bytes, bool missing_ok)
{
	return BufferAlloc(bytes, false, missing_ok);
}

/* Pinned host memory owned by CurrentMemoryContext. */
GpuextBuffer *
GpuextPinnedAlloc(size_t bytes)
{
	return BufferAlloc(bytes, true, false);
}

/* Pinned host memory, or NULL when there is none to be had (the service's arena is full). */
GpuextBuffer *
GpuextPinnedAllocShort(size_t bytes)
{
	return BufferAlloc(bytes, true, true);
}

/* Free a buffer now rather than when its memory context goes. */
void
GpuextBufferFree(GpuextBuffer *buf)
{
	BufferRelease(buf);
}

/* Memory-context callback: the call using staging ended without GpuextStagingEnd. */
static void
StagingRelease(void *arg)
{
	bool	   *in_use = (bool *) arg;

	if (!*in_use || staging == NULL)
		return;
	gpuext_cuda_free_pinned(staging);
	pinned_bytes_held -= 2 * GPUEXT_STAGING_HALF_BYTES;
	staging = NULL;
	staging_guard = NULL;
}

/* Lend the pinned staging buffer (2 * GPUEXT_STAGING_HALF_BYTES) to the current call. */
char *
GpuextStagingBegin(void)
{
	MemoryContextCallback *cb;

	if (staging == NULL)
	{
		void	   *ptr = NULL;

		GpuextCheck(gpuext_cuda_alloc_pinned(&ptr, 2 * GPUEXT_STAGING_HALF_BYTES),
					"pinned memory allocation");
		staging = ptr;
		pinned_bytes_held += 2 * GPUEXT_STAGING_HALF_BYTES;
	}

	staging_guard = palloc(sizeof(bool));
	*staging_guard = true;
	cb = palloc(sizeof(MemoryContextCallback));
	cb->func = StagingRelease;
	cb->arg = staging_guard;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, cb);
	return staging;
}

/* Take the staging buffer back for the next call; with the service its arena pages go back at once. */
void
GpuextStagingEnd(void)
{
	if (staging_guard)
		*staging_guard = false;
	staging_guard = NULL;
	if (USING_SERVICE() && staging != NULL)
	{
		gpuext_cuda_free_pinned(staging);
		pinned_bytes_held -= 2 * GPUEXT_STAGING_HALF_BYTES;
		staging = NULL;
	}
}

/*
 * Run device work fn(arg) with its allocations in a memory context of its own.
 * Under auto, a device failure (not a cancel, not any other ERROR) frees what
 * fn held at once, becomes a WARNING, and GPUEXT_DEVICE_FAILED for the caller
 * to do the work on the CPU; fn must leave nothing half-merged behind it.
 */
GpuextDeviceOutcome
GpuextTryDevice(GpuextDeviceFn fn, void *arg, const char *what)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext cxt = AllocSetContextCreate(caller, "gpuext device work", ALLOCSET_SMALL_SIZES);
	uint32		holdoff = InterruptHoldoffCount;
	uint32		cancel_holdoff = QueryCancelHoldoffCount;
	ErrorData  *volatile edata = NULL;
	volatile bool done = false;

	device_failed = false;
	device_busy = false;
	if (gpuext_device_mode != GPUEXT_DEVICE_AUTO)
	{
		MemoryContextSwitchTo(cxt);
		done = fn(arg);
		MemoryContextSwitchTo(caller);
		MemoryContextDelete(cxt);
		return done ? GPUEXT_DEVICE_DONE : GPUEXT_DEVICE_SHORT;
	}
	PG_TRY();
	{
		MemoryContextSwitchTo(cxt);
		done = fn(arg);
		MemoryContextSwitchTo(caller);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(caller);
		if (!device_failed)
			PG_RE_THROW();
		/* Only our own GpuextCheck raised this: no lock, pin or buffer is held in fn. */
		InterruptHoldoffCount = holdoff;
		QueryCancelHoldoffCount = cancel_holdoff;
		edata = CopyErrorData();
		FlushErrorState();
	}
	PG_END_TRY();
	device_failed = false;
	MemoryContextDelete(cxt);
	if (USING_SERVICE() && (edata != NULL || !done))
		pg_atomic_fetch_add_u64(&gpuext_service->fallbacks, 1);
	if (edata == NULL)
		return done ? GPUEXT_DEVICE_DONE : GPUEXT_DEVICE_SHORT;
	ereport(device_busy ? DEBUG1 : WARNING,
			(errcode(edata->sqlerrcode),
			 errmsg("%s", edata->message),
			 errdetail("gpuext ran the %s on the CPU instead.", what)));
	FreeErrorData(edata);
	return GPUEXT_DEVICE_FAILED;
}

/* Why the device cannot be used (for fallbacks that say so). */
const char *
GpuextDeviceUnavailableReason(void)
{
	if (gpuext_device_mode == GPUEXT_DEVICE_CPU)
		return "gpuext.device is cpu";
	if (!GpuextOffloadAllowed())
		return "gpuext.offload is off";
	return device_reason;
}

PG_FUNCTION_INFO_V1(gpuext_info);

/* SQL: what this build and this backend's device session look like. */
Datum
gpuext_info(PG_FUNCTION_ARGS)
{
	bool		open_device = PG_GETARG_BOOL(0);
	TupleDesc	tupdesc;
	Datum		values[15];
	bool		nulls[15];
	bool		ready;
	size_t		mem_free = 0,
				mem_total = 0;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	Assert(tupdesc->natts == lengthof(values));

	if (open_device && gpuext_device_mode != GPUEXT_DEVICE_CPU && GpuextOffloadAllowed())
		DeviceOpen();
	ready = device_state == DEVICE_READY;
	if (ready)
		GpuextCheck(gpuext_cuda_mem_info(&mem_free, &mem_total), "memory query");

	memset(nulls, !ready, sizeof(nulls));
	values[0] = BoolGetDatum(gpuext_cuda_built() != 0);
	nulls[0] = false;
	values[1] = CStringGetTextDatum(device_state_names[device_state]);
	nulls[1] = false;
	values[2] = CStringGetTextDatum(device_reason);
	nulls[2] = device_state != DEVICE_UNAVAILABLE && device_state != DEVICE_LOST;
	values[3] = CStringGetTextDatum(device_info.name);
	values[4] = CStringGetTextDatum(psprintf("%d.%d", device_info.cc_major, device_info.cc_minor));
	values[5] = Int32GetDatum(device_info.multiprocessors);
	values[6] = Int64GetDatum((int64) mem_total);
	values[7] = Int64GetDatum((int64) mem_free);
	values[8] = CStringGetTextDatum(psprintf("%d.%d", device_info.driver_version / 1000,
											 (device_info.driver_version % 1000) / 10));
	values[9] = CStringGetTextDatum(psprintf("%d.%d", device_info.runtime_version / 1000,
											 (device_info.runtime_version % 1000) / 10));
	values[10] = Float8GetDatum(device_open_ms);
	nulls[10] = device_state == DEVICE_UNOPENED;
	values[11] = Int64GetDatum((int64) device_bytes_held);
	values[12] = Int64GetDatum((int64) pinned_bytes_held);
	nulls[11] = nulls[12] = false;
	values[13] = Int64GetDatum((int64) DeviceMemoryLimit());
	nulls[13] = !ready && gpuext_max_device_memory < 0;
	values[14] = Int64GetDatum(gpuext_faults_injected);
	nulls[14] = false;

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
