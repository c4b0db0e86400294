/*
 * service_client.c
 *		The backend's device layer when gpuext is preloaded: each call of
 *		gpuext_cuda.h becomes a request to the GPU service.
 *
 * A request is written into the backend's slot, the slot's service thread
 * is woken by a futex, and the backend spins briefly for the answer, then
 * sleeps on its latch until the supervisor sets it.  A request that only
 * enqueues work on the device returns at once; its answer is read before
 * the next request.  No interrupt is served while a request is in
 * flight: a cancel is passed to the service, which ends the request at
 * once, and the caller then sees GPUEXT_INTERRUPTED as from a local wait.
 * Pinned memory is arena pages; device pointers are the service's, held
 * here only as numbers.  A restarted service has a new generation, and
 * every buffer of the old one is reported lost.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/timestamp.h"

#include "gpuext.h"
#include "pg_compat.h"
#include "service.h"

static ServiceSlot *my_slot;
static uint32 client_generation;	/* generation of this backend's open session, 0 for none */
static char client_error[SERVICE_MESSAGE + 64] = "no error";
static uint64 client_out[2];
static GpuextDeviceInfo client_info;

/* Whether this backend reaches the GPU service: preloaded, in the postmaster's children. */
bool
GpuextServiceAvailable(void)
{
	return gpuext_service != NULL && IsUnderPostmaster && MyProc != NULL &&
		GpuextMyProcNumber() >= 0 && GpuextMyProcNumber() < gpuext_service->nslots;
}

/*
 * Device memory this backend may hold by default (gpuext.max_device_memory =
 * -1) through the service: the pool's limit on its device (on the smallest
 * pool while it holds nothing, as it may be placed on any) divided by
 * gpuext.device_clients, so that one client cannot push every other to the
 * CPU.
 */
size_t
GpuextServiceClientShare(void)
{
	ServiceHeader *hdr = gpuext_service;
	int			d = my_slot != NULL ? my_slot->device : -1;
	uint64		limit = 0;

	/* No device yet (the service starting): the service answers for itself */
	if (hdr->ndevices <= 0)
		return SIZE_MAX / 2;
	if (d >= 0 && d < hdr->ndevices)
		limit = ServiceDeviceLimit(hdr, d);
	else
		for (int i = 0; i < hdr->ndevices; i++)
			if (i == 0 || ServiceDeviceLimit(hdr, i) < limit)
				limit = ServiceDeviceLimit(hdr, i);
	return (size_t) (limit / (uint64) Max(hdr->device_clients, 1));
}

/* A failure of the service's, in client_error. */
static GpuextStatus
ClientFail(GpuextStatus status, const char *fmt,...) pg_attribute_printf(2, 3);

static GpuextStatus
ClientFail(GpuextStatus status, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(client_error, sizeof(client_error), fmt, ap);
	va_end(ap);
	if (status == GPUEXT_DEVICE_LOST)
		pg_atomic_fetch_add_u64(&gpuext_service->lost, 1);
	return status;
}

/* Ring the slot's thread, and the service's doorbell if the slot has no thread yet. */
static void
Wake(ServiceSlot *s, uint32 generation)
{
	pg_atomic_fetch_add_u32(&s->seq, 1);
	GpuextFutexWake(&s->seq);
	if (pg_atomic_read_u32(&s->worker) != generation)
	{
		pg_atomic_fetch_add_u32(&gpuext_service->doorbell, 1);
		GpuextFutexWake(&gpuext_service->doorbell);
	}
}

/*
 * Sleep on the latch for up to timeout_ms, flagged in the slot so that the
 * service has the supervisor set the latch when it answers (an answer read
 * while spinning costs no wake-up).
 */
static void
SleepOnSlot(ServiceSlot *s, long timeout_ms)
{
	uint32		state;

	pg_atomic_write_u32(&s->sleeping, 1);
	pg_memory_barrier();
	state = pg_atomic_read_u32(&s->state);
	if (state != SLOT_DONE && state != SLOT_IDLE)
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, timeout_ms, PG_WAIT_EXTENSION);
	pg_atomic_write_u32(&s->sleeping, 0);
	ResetLatch(MyLatch);
}

/* Take the slot for a new request, waiting while an earlier one (a predecessor's close) runs. */
static bool
ClaimSlot(ServiceSlot *s, uint32 generation)
{
	for (;;)
	{
		uint32		state = pg_atomic_read_u32(&s->state);

		if ((state == SLOT_IDLE || state == SLOT_DONE) &&
			pg_atomic_compare_exchange_u32(&s->state, &state, SLOT_FILLING))
			return true;
		if (pg_atomic_read_u32(&gpuext_service->generation) != generation)
			return false;
		SleepOnSlot(s, 10);
	}
}

/* Whether a request only enqueues work, so that its answer can be read with the next request's. */
static bool
EnqueueOnly(ServiceOp op)
{
	return op == SOP_COPY_TO_DEVICE || op == SOP_COPY_TO_HOST || op == SOP_MARK || op == SOP_FREE ||
		op == SOP_REDUCE || op == SOP_GROUPS_CLEAR || op == SOP_GROUPS_ADD || op == SOP_GROUPS_RESULT ||
		op == SOP_SCAN_HEAP || op == SOP_GATHER_PAGES;
}

/*
 * Whether a request may be held for the list sent with a later one: it
 * enqueues device work, and holds nothing the service must free soon.  A
 * mark is held too, but sends the list, as the work before a mark is what
 * the backend waits for later.
 */
static bool
Deferrable(ServiceOp op)
{
	return EnqueueOnly(op) && op != SOP_FREE;
}

/*
 * Wait for the answer to the request in the slot and read it; outputs land
 * in client_out (and client_info).  Interrupts are not served here: a
 * cancel is passed on to the service.
 */
static GpuextStatus
Answer(ServiceSlot *s, ServiceOp op, uint32 generation)
{
	ServiceHeader *hdr = gpuext_service;
	bool		cancelled = false;
	GpuextStatus status;

	for (;;)
	{
		uint32		state = pg_atomic_read_u32(&s->state);

		if (state == SLOT_DONE || GpuextSpinFor(&s->state, SLOT_DONE, SERVICE_ANSWER_SPIN_US))
			break;
		if (!cancelled && GpuextPollInterrupts(NULL))
		{
			pg_atomic_write_u32(&s->cancel, 1);
			pg_atomic_fetch_add_u64(&hdr->cancels, 1);
			cancelled = true;
		}
		/* A request written as the service died may have no one to answer it */
		if (state == SLOT_REQUEST && pg_atomic_read_u32(&hdr->generation) != generation &&
			pg_atomic_compare_exchange_u32(&s->state, &state, SLOT_IDLE))
			return ClientFail(GPUEXT_DEVICE_LOST, "the GPU service stopped");
		SleepOnSlot(s, 100);
	}
	pg_read_barrier();
	status = (GpuextStatus) s->status;
	client_out[0] = s->out[0];
	client_out[1] = s->out[1];
	if (op == SOP_OPEN)
		client_info = s->info;
	if (status != GPUEXT_OK)
		ClientFail(status, "%s", s->message);
	pg_atomic_write_u32(&s->state, SLOT_IDLE);
	return status;
}

/* The request whose answer is still to be read (EnqueueOnly), if any. */
static bool pending;
static ServiceOp pending_op;
static uint32 pending_generation;

/* Requests held for the next list (Deferrable), in order. */
static ServiceEntry held[SERVICE_LIST_MAX];
static int	nheld;

/*
 * Send one request, with the requests held before it as one list.  One
 * that only enqueues work is held where it may be (Deferrable) and returns
 * at once; where sent, its answer is read before the next request, and a
 * failure in it becomes that request's answer (a free is still sent, so
 * that nothing is left held).  Every other request waits for its answer.
 */
static GpuextStatus
Call(ServiceOp op, int nargs, const uint64 *args)
{
	ServiceHeader *hdr = gpuext_service;
	ServiceSlot *s = my_slot;
	uint32		generation;
	int			nlist;

	Assert(nargs <= SERVICE_ARGS);
	if (Deferrable(op) || nheld > 0)
	{
		held[nheld].op = op;
		memcpy(held[nheld].arg, args, sizeof(uint64) * nargs);
		nheld++;
		pg_atomic_fetch_add_u64(&hdr->requests, 1);
		if (Deferrable(op) && op != SOP_MARK && nheld < SERVICE_LIST_MAX)
			return GPUEXT_OK;
	}
	/* the list goes whole or not at all */
	nlist = nheld;
	nheld = 0;

	if (pending)
	{
		GpuextStatus st;

		pending = false;
		st = Answer(s, pending_op, pending_generation);
		if (st != GPUEXT_OK && !ServiceRunsAfterFailure(op))
			return st;
	}
	generation = pg_atomic_read_u32(&hdr->generation);
	if (!pg_atomic_read_u32(&hdr->ready))
		return op != SOP_OPEN ? ClientFail(GPUEXT_DEVICE_LOST, "the GPU service stopped") :
			pg_atomic_read_u32(&hdr->no_device) ? ClientFail(GPUEXT_NO_DEVICE, "%s", hdr->start_error) :
			ClientFail(GPUEXT_NO_DEVICE, "the GPU service is not running%s%s",
					   hdr->last_exit[0] ? ": " : "", hdr->last_exit);
	if (op != SOP_OPEN && generation != client_generation)
		return ClientFail(GPUEXT_DEVICE_LOST, "the GPU service restarted");
	if (!ClaimSlot(s, generation))
		return ClientFail(GPUEXT_DEVICE_LOST, "the GPU service restarted");

	s->pid = MyProcPid;
	s->procno = GpuextMyProcNumber();
	s->generation = generation;
	if (nlist > 0)
	{
		s->op = SOP_LIST;
		s->nlist = nlist;
		memcpy(s->list, held, sizeof(ServiceEntry) * nlist);
	}
	else
	{
		s->op = op;
		memcpy(s->arg, args, sizeof(uint64) * nargs);
		pg_atomic_fetch_add_u64(&hdr->requests, 1);
	}
	pg_atomic_write_u32(&s->cancel, 0);
	pg_write_barrier();
	pg_atomic_write_u32(&s->state, SLOT_REQUEST);
	Wake(s, generation);
	if (EnqueueOnly(op))
	{
		pending = true;
		pending_op = op;
		pending_generation = generation;
		return GPUEXT_OK;
	}
	return Answer(s, op, generation);
}

/* At backend exit: the service frees this backend's device memory, then the arena takes its pages. */
static void
ClientExit(int code, Datum arg)
{
	/* The close drains the stream, so no copy is in flight to the pages given back after it */
	if (client_generation != 0 && client_generation == pg_atomic_read_u32(&gpuext_service->generation))
		(void) Call(SOP_CLOSE, 0, NULL);
	GpuextArenaReleasePid(MyProcPid);
}

/*
 * A service on its way up is worth a wait: under gpu up to 10 s (it comes
 * back that fast after a crash), under auto only before its first start;
 * none where its last start found no GPU.
 */
static void
WaitForService(void)
{
	int			wait_ms = gpuext_device_mode == GPUEXT_DEVICE_GPU ? Max(gpuext_service_wait_ms, 10000) :
		pg_atomic_read_u64(&gpuext_service->restarts) == 0 ? gpuext_service_wait_ms : 0;
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), wait_ms);

	while (!pg_atomic_read_u32(&gpuext_service->ready) && !pg_atomic_read_u32(&gpuext_service->no_device) &&
		   GetCurrentTimestamp() < deadline)
	{
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 10, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* Start a session with the service: no device is opened in this backend. */
static GpuextStatus
SvcOpen(GpuextDeviceInfo *info)
{
	GpuextStatus st;

	if (my_slot == NULL)
	{
		my_slot = &gpuext_service->slots[GpuextMyProcNumber()];
		before_shmem_exit(ClientExit, 0);
	}
	WaitForService();
	/* a new session sends nothing held for an old one */
	nheld = 0;
	st = Call(SOP_OPEN, 0, NULL);
	if (st != GPUEXT_OK)
		return st;
	client_generation = my_slot->generation;
	if (info != NULL)
		*info = client_info;
	return GPUEXT_OK;
}

/* Drop the session: the service frees what this backend still holds (nothing left after a restart). */
static GpuextStatus
SvcReset(void)
{
	GpuextStatus st = GPUEXT_OK;

	if (client_generation != 0 && client_generation == pg_atomic_read_u32(&gpuext_service->generation))
		st = Call(SOP_RESET, 0, NULL);
	nheld = 0;
	client_generation = 0;
	return st == GPUEXT_DEVICE_LOST ? GPUEXT_OK : st;
}

/* Device memory this backend may still be given (the pool's room on its device). */
static GpuextStatus
SvcMemInfo(size_t *free_bytes, size_t *total_bytes)
{
	GpuextStatus st = Call(SOP_MEM_INFO, 0, NULL);

	if (st == GPUEXT_OK)
	{
		*free_bytes = client_out[0];
		*total_bytes = client_out[1];
	}
	return st;
}

/*
 * How long to wait for device memory or arena pages: gpuext.service_wait
 * under auto (then the CPU does the work), at least a minute under gpu,
 * where waiting is the only way to the device.
 */
static int
ServiceWait(void)
{
	return gpuext_device_mode == GPUEXT_DEVICE_GPU ? Max(gpuext_service_wait_ms, 60000) : gpuext_service_wait_ms;
}

/* Device memory from the service's pool, waiting for room (ServiceWait). */
static GpuextStatus
SvcAlloc(void **dptr, size_t bytes)
{
	uint64		args[2] = {bytes, (uint64) (int64) ServiceWait()};
	GpuextStatus st = Call(SOP_ALLOC, 2, args);

	*dptr = st == GPUEXT_OK ? (void *) (uintptr_t) client_out[0] : NULL;
	return st;
}

/* Give device memory back to the pool (nothing to do for a dead service's). */
static void
SvcFree(void *dptr)
{
	uint64		arg = (uint64) (uintptr_t) dptr;

	if (dptr != NULL && client_generation == pg_atomic_read_u32(&gpuext_service->generation))
		(void) Call(SOP_FREE, 1, &arg);
}

/* Pinned memory is arena pages, waiting for room (ServiceWait). */
static GpuextStatus
SvcAllocPinned(void **hptr, size_t bytes)
{
	*hptr = GpuextArenaAlloc(bytes, ServiceWait());
	if (*hptr == NULL)
		return ClientFail(GPUEXT_OUT_OF_MEMORY,
						  "the GPU service's arena (gpuext.service_arena) has no room for %zu bytes", bytes);
	return GPUEXT_OK;
}

/* Arena pages back, once no copy of this backend's can still be writing into them. */
static void
SvcFreePinned(void *hptr)
{
	if (client_generation != 0 && client_generation == pg_atomic_read_u32(&gpuext_service->generation))
		(void) Call(SOP_DRAIN, 0, NULL);
	GpuextArenaFree(hptr);
}

/* Enqueue a copy from arena pages to the device. */
static GpuextStatus
SvcCopyToDevice(void *dst, const void *src, size_t bytes)
{
	uint64		args[3] = {(uint64) (uintptr_t) dst, (uint64) (uintptr_t) src, bytes};

	if (bytes > 0 && !GpuextInArena(src, bytes))
		return ClientFail(GPUEXT_INVALID, "copy to device from memory outside the GPU service's arena");
	return Call(SOP_COPY_TO_DEVICE, 3, args);
}

/* Enqueue a copy from the device into arena pages. */
static GpuextStatus
SvcCopyToHost(void *dst, const void *src, size_t bytes)
{
	uint64		args[3] = {(uint64) (uintptr_t) dst, (uint64) (uintptr_t) src, bytes};

	if (bytes > 0 && !GpuextInArena(dst, bytes))
		return ClientFail(GPUEXT_INVALID, "copy to host into memory outside the GPU service's arena");
	return Call(SOP_COPY_TO_HOST, 3, args);
}

/* A copy between two of this backend's device buffers in the service. */
static GpuextStatus
SvcCopyOnDevice(void *dst, const void *src, size_t bytes)
{
	uint64		args[3] = {(uint64) (uintptr_t) dst, (uint64) (uintptr_t) src, bytes};

	return Call(SOP_COPY_ON_DEVICE, 3, args);
}

/* Record an event slot on this backend's stream in the service. */
static GpuextStatus
SvcMark(int slot)
{
	uint64		arg = (uint64) (int64) slot;

	return Call(SOP_MARK, 1, &arg);
}

/* Wait in the service; a cancel reaches it through the slot rather than poll. */
static GpuextStatus
SvcWait(int slot, GpuextPollFn poll, void *parg)
{
	uint64		arg = (uint64) (int64) slot;

	return Call(SOP_WAIT, 1, &arg);
}

/* Scratch of a key sort, computed by the service (it depends on the device). */
static GpuextStatus
SvcSortScratchBytes(GpuextSortAlgo algo, int key_bytes, size_t n, size_t *bytes, size_t *host_bytes)
{
	uint64		args[3] = {(uint64) algo, (uint64) key_bytes, n};
	GpuextStatus st = Call(SOP_SORT_SCRATCH, 3, args);

	*bytes = client_out[0];
	*host_bytes = client_out[1];
	return st;
}

/* Sort keys held in the service. */
static GpuextStatus
SvcSortKeys(GpuextSortAlgo algo, int key_bytes, void *keys, size_t n, void *scratch, size_t scratch_bytes,
			void *host_scratch, size_t host_scratch_bytes, GpuextPollFn poll, void *parg)
{
	uint64		args[8] = {(uint64) algo, (uint64) key_bytes, (uint64) (uintptr_t) keys, n,
		(uint64) (uintptr_t) scratch, scratch_bytes, (uint64) (uintptr_t) host_scratch, host_scratch_bytes};

	return Call(SOP_SORT_KEYS, 8, args);
}

/* Scratch of a row sort. */
static GpuextStatus
SvcSortRowsScratchBytes(int nwords, size_t n, size_t *bytes)
{
	uint64		args[2] = {(uint64) nwords, n};
	GpuextStatus st = Call(SOP_SORT_ROWS_SCRATCH, 2, args);

	*bytes = client_out[0];
	return st;
}

/* GpuSort's (key, row) sort in the service. */
static GpuextStatus
SvcSortRows(int nwords, int top_bits, const uint64_t *keys, uint32_t *order, uint64_t *sorted_keys, size_t n,
			void *scratch, size_t scratch_bytes, GpuextPollFn poll, void *parg)
{
	uint64		args[8] = {(uint64) nwords, (uint64) top_bits, (uint64) (uintptr_t) keys,
		(uint64) (uintptr_t) order, (uint64) (uintptr_t) sorted_keys, n, (uint64) (uintptr_t) scratch,
	scratch_bytes};

	return Call(SOP_SORT_ROWS, 8, args);
}

/* Scratch of a gather of rows. */
static GpuextStatus
SvcGatherRowsScratchBytes(size_t n, size_t *bytes)
{
	uint64		args[1] = {n};
	GpuextStatus st = Call(SOP_GATHER_ROWS_SCRATCH, 1, args);

	*bytes = client_out[0];
	return st;
}

/* GpuSort's rows kept in the service, gathered in sorted order. */
static GpuextStatus
SvcGatherRows(const char *rows, size_t rows_bytes, const uint64_t *offsets, const uint32_t *order, size_t n,
			  size_t first, int prepare, char *out, size_t out_bytes, void *scratch, size_t scratch_bytes)
{
	uint64		args[11] = {(uint64) (uintptr_t) rows, rows_bytes, (uint64) (uintptr_t) offsets,
		(uint64) (uintptr_t) order, n, first, (uint64) prepare, (uint64) (uintptr_t) out, out_bytes,
	(uint64) (uintptr_t) scratch, scratch_bytes};

	return Call(SOP_GATHER_ROWS, 11, args);
}

/* Scratch of a reduction. */
static GpuextStatus
SvcReduceScratchBytes(int value_bytes, int is_float, size_t n, size_t *bytes)
{
	uint64		args[3] = {(uint64) value_bytes, (uint64) is_float, n};
	GpuextStatus st = Call(SOP_REDUCE_SCRATCH, 3, args);

	*bytes = client_out[0];
	return st;
}

/* A reduction in the service; its result lands in arena pages. */
static GpuextStatus
SvcReduce(int value_bytes, int is_float, const void *values, size_t n, void *scratch, size_t scratch_bytes,
		  GpuextReduceResult *result)
{
	uint64		args[7] = {(uint64) value_bytes, (uint64) is_float, (uint64) (uintptr_t) values, n,
		(uint64) (uintptr_t) scratch, scratch_bytes, (uint64) (uintptr_t) result};

	if (!GpuextInArena(result, sizeof(GpuextReduceResult)))
		return ClientFail(GPUEXT_INVALID, "reduction result outside the GPU service's arena");
	return Call(SOP_REDUCE, 7, args);
}

/* Clear group states held in the service. */
static GpuextStatus
SvcGroupsClear(int is_float, void *states, uint32_t first, uint32_t count)
{
	uint64		args[4] = {(uint64) is_float, (uint64) (uintptr_t) states, first, count};

	return Call(SOP_GROUPS_CLEAR, 4, args);
}

/* Add values to group states held in the service. */
static GpuextStatus
SvcGroupsAdd(int value_bytes, int is_float, const void *values, const uint32_t *groups, size_t n, void *states,
			 uint32_t ngroups)
{
	uint64		args[7] = {(uint64) value_bytes, (uint64) is_float, (uint64) (uintptr_t) values,
		(uint64) (uintptr_t) groups, n, (uint64) (uintptr_t) states, ngroups};

	return Call(SOP_GROUPS_ADD, 7, args);
}

/* Group results into a device buffer held in the service. */
static GpuextStatus
SvcGroupsResult(int value_bytes, int is_float, void *states, uint32_t ngroups, GpuextGroupResult *results)
{
	uint64		args[5] = {(uint64) value_bytes, (uint64) is_float, (uint64) (uintptr_t) states, ngroups,
		(uint64) (uintptr_t) results};

	return Call(SOP_GROUPS_RESULT, 5, args);
}

/* A device scan of pages held in the service; its program is read from the arena. */
static GpuextStatus
SvcScanHeap(const GpuextScanProgram *program, const char *pages, const uint16_t *vis, uint32_t npages,
			uint64_t *counts, char *outs, size_t outs_bytes)
{
	uint64		args[7] = {(uint64) (uintptr_t) program, (uint64) (uintptr_t) pages, (uint64) (uintptr_t) vis,
		npages, (uint64) (uintptr_t) counts, (uint64) (uintptr_t) outs, outs_bytes};

	if (!GpuextInArena(program, sizeof(GpuextScanProgram)))
		return ClientFail(GPUEXT_INVALID, "device scan program outside the GPU service's arena");
	return Call(SOP_SCAN_HEAP, 7, args);
}

/* Whether the running service's devices read shared buffers in place. */
static bool
SvcReadsBuffers(void)
{
	return ServiceReadsBuffers(gpuext_service);
}

/* A batch's pages gathered in the service from its arena copies and shared buffers. */
static GpuextStatus
SvcGatherPages(char *pages, const char *copies, const uint32_t *refs, uint32_t npages)
{
	uint64		args[4] = {(uint64) (uintptr_t) pages, (uint64) (uintptr_t) copies, (uint64) (uintptr_t) refs,
		npages};

	if (!GpuextInArena(copies, (size_t) npages * GPUEXT_SCAN_PAGE_BYTES) ||
		!GpuextInArena(refs, sizeof(uint32_t) * npages))
		return ClientFail(GPUEXT_INVALID, "page gathering outside the GPU service's arena");
	return Call(SOP_GATHER_PAGES, 4, args);
}

/* A matrix product in the service. */
static GpuextStatus
SvcMatmul(GpuextMatmulAlgo algo, int elem_bytes, const void *a, const void *b, void *c, size_t m, size_t k,
		  size_t n)
{
	uint64		args[8] = {(uint64) algo, (uint64) elem_bytes, (uint64) (uintptr_t) a, (uint64) (uintptr_t) b,
		(uint64) (uintptr_t) c, m, k, n};

	return Call(SOP_MATMUL, 8, args);
}

/* The last failure's message. */
const char *
GpuextServiceErrorMessage(void)
{
	return client_error;
}

const GpuextDeviceOps gpuext_service_ops = {
	.open = SvcOpen,
	.reset = SvcReset,
	.mem_info = SvcMemInfo,
	.alloc = SvcAlloc,
	.free = SvcFree,
	.alloc_pinned = SvcAllocPinned,
	.free_pinned = SvcFreePinned,
	.copy_to_device = SvcCopyToDevice,
	.copy_to_host = SvcCopyToHost,
	.copy_on_device = SvcCopyOnDevice,
	.mark = SvcMark,
	.wait = SvcWait,
	.sort_scratch_bytes = SvcSortScratchBytes,
	.sort_keys = SvcSortKeys,
	.sort_rows_scratch_bytes = SvcSortRowsScratchBytes,
	.sort_rows = SvcSortRows,
	.gather_rows_scratch_bytes = SvcGatherRowsScratchBytes,
	.gather_rows = SvcGatherRows,
	.reduce_scratch_bytes = SvcReduceScratchBytes,
	.reduce = SvcReduce,
	.groups_clear = SvcGroupsClear,
	.groups_add = SvcGroupsAdd,
	.groups_result = SvcGroupsResult,
	.scan_heap = SvcScanHeap,
	.reads_buffers = SvcReadsBuffers,
	.gather_pages = SvcGatherPages,
	.matmul = SvcMatmul,
	.error_message = GpuextServiceErrorMessage,
};
