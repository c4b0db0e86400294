/*
 * service_shmem.c
 *		The GPU service's shared segment, its arena of pinned pages, its
 *		settings and the supervisor's registration.
 *
 * The segment is mapped by the postmaster, outside PostgreSQL's shared
 * memory, so that the service process can keep it after it detaches from
 * PostgreSQL's; every backend inherits it at the same address, so arena
 * pointers mean the same in every process.  Which backend holds which
 * arena pages is kept in PostgreSQL's shared memory, under an LWLock: only
 * backends and the supervisor allocate, never the service.
 */
#include "postgres.h"

#include <ctype.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/condition_variable.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "service.h"

#define ARENA_ALIGN ((Size) 2 * 1024 * 1024)

ServiceHeader *gpuext_service = NULL;
bool		gpuext_service_enabled = true;
int			gpuext_service_arena_mb = 256;
bool		gpuext_service_reads_buffers = true;
int			gpuext_service_wait_ms = 1000;
int			gpuext_device_memory_limit = -1;
int			gpuext_device_clients = 16;
char	   *gpuext_service_devices = NULL;

/* Which backend holds which arena pages: run[i] pages from page i belong to owner[i]. */
typedef struct ArenaControl
{
	LWLock	   *lock;
	ConditionVariable freed;
	int32		npages;
	int32		used_pages;
	int32		peak_pages;
	int32		owner[FLEXIBLE_ARRAY_MEMBER];	/* pid; then run[npages] */
} ArenaControl;

static ArenaControl *arena_control;
static char *segment;
static Size segment_bytes;

static shmem_request_hook_type prev_shmem_request_hook;
static shmem_startup_hook_type prev_shmem_startup_hook;

/* Pages of the arena for the configured size. */
static int
ArenaPages(void)
{
	return (int) (((Size) gpuext_service_arena_mb * 1024 * 1024) / SERVICE_PAGE_BYTES);
}

/* Bytes of ArenaControl in PostgreSQL's shared memory. */
static Size
ArenaControlBytes(void)
{
	return add_size(offsetof(ArenaControl, owner), mul_size(sizeof(int32) * 2, ArenaPages()));
}

#define ARENA_RUN(c) ((c)->owner + (c)->npages)

/* Ask for the arena's bookkeeping and the lock. */
static void
ServiceShmemRequest(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(ArenaControlBytes());
	RequestNamedLWLockTranche("gpuext_arena", 1);
}

/*
 * Postmaster (at start and after a crash) and EXEC_BACKEND children: map the
 * service segment once, initialise it in the postmaster, find the arena's
 * bookkeeping.
 */
static void
ServiceShmemStartup(void)
{
	bool		found;
	Size		header;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	arena_control = ShmemInitStruct("gpuext arena", ArenaControlBytes(), &found);
	if (!found)
	{
		memset(arena_control, 0, ArenaControlBytes());
		arena_control->lock = &(GetNamedLWLockTranche("gpuext_arena"))->lock;
		ConditionVariableInit(&arena_control->freed);
		arena_control->npages = ArenaPages();
	}
	LWLockRelease(AddinShmemInitLock);

	if (IsUnderPostmaster)
		return;
	header = TYPEALIGN(ARENA_ALIGN, add_size(offsetof(ServiceHeader, slots),
											 mul_size(sizeof(ServiceSlot), MaxBackends)));
	if (segment == NULL)
	{
		segment_bytes = add_size(header, (Size) ArenaPages() * SERVICE_PAGE_BYTES);
		segment = mmap(NULL, segment_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (segment == MAP_FAILED)
			ereport(FATAL,
					(errcode(ERRCODE_OUT_OF_MEMORY),
					 errmsg("could not map the GPU service's arena of %zu bytes: %m", segment_bytes),
					 errhint("Lower gpuext.service_arena.")));
	}
	gpuext_service = (ServiceHeader *) segment;
	memset(gpuext_service, 0, header);
	gpuext_service->magic = SERVICE_MAGIC;
	pg_atomic_init_u32(&gpuext_service->generation, 1);
	pg_atomic_init_u32(&gpuext_service->ready, 0);
	pg_atomic_init_u32(&gpuext_service->doorbell, 0);
	pg_atomic_init_u64(&gpuext_service->restarts, 0);
	pg_atomic_init_u32(&gpuext_service->no_device, 0);
	pg_atomic_init_u32(&gpuext_service->pool_generation, 0);
	pg_atomic_init_u64(&gpuext_service->requests, 0);
	pg_atomic_init_u64(&gpuext_service->fallbacks, 0);
	pg_atomic_init_u64(&gpuext_service->cancels, 0);
	pg_atomic_init_u64(&gpuext_service->lost, 0);
	pg_atomic_init_u32(&gpuext_service->queued, 0);
	gpuext_service->stats_reset = GetCurrentTimestamp();
	gpuext_service->arena_offset = header;
	gpuext_service->arena_bytes = (Size) ArenaPages() * SERVICE_PAGE_BYTES;
	gpuext_service->nslots = MaxBackends;
	for (int i = 0; i < MaxBackends; i++)
	{
		ServiceSlot *slot = &gpuext_service->slots[i];

		pg_atomic_init_u32(&slot->state, SLOT_IDLE);
		pg_atomic_init_u32(&slot->seq, 0);
		pg_atomic_init_u32(&slot->cancel, 0);
		pg_atomic_init_u32(&slot->worker, 0);
		pg_atomic_init_u32(&slot->sleeping, 0);
		slot->device = -1;
	}
	GpuextServicePublishSettings();
}

/* Copy the settings the service reads into the segment (the supervisor calls this after a reload). */
void
GpuextServicePublishSettings(void)
{
	ServiceHeader *hdr = gpuext_service;
	char	   *list;
	char	   *tok;
	char	   *save = NULL;

	if (hdr == NULL)
		return;
	hdr->memory_limit_kb = gpuext_device_memory_limit;
	hdr->device_clients = gpuext_device_clients;
	hdr->ndevices_wanted = 0;
	list = pstrdup(gpuext_service_devices ? gpuext_service_devices : "");
	for (tok = strtok_r(list, ", ", &save); tok != NULL && hdr->ndevices_wanted < GPUEXT_MAX_DEVICES;
		 tok = strtok_r(NULL, ", ", &save))
		hdr->devices_wanted[hdr->ndevices_wanted++] = atoi(tok);
	pfree(list);
}

/* GUC check hook for gpuext.devices: empty, or a list of device numbers. */
static bool
DevicesCheck(char **newval, void **extra, GucSource source)
{
	for (const char *p = *newval; *p; p++)
		if (!(isdigit((unsigned char) *p) || *p == ',' || *p == ' '))
		{
			GUC_check_errdetail("Expected a list of CUDA device numbers such as \"0,1\", or empty for all.");
			return false;
		}
	return true;
}

/* Settings; with shared_preload_libraries, the segment's hooks and the supervisor. */
void
GpuextServiceInit(void)
{
	BackgroundWorker bgw;

	DefineCustomIntVariable("gpuext.device_memory_limit",
							"Device memory all clients of the GPU service may hold on each device; -1 is 90%.",
							"A request that would pass it waits up to gpuext.service_wait, then auto runs "
							"it on the CPU and gpu raises an error.",
							&gpuext_device_memory_limit, -1, -1, MAX_KILOBYTES,
							PGC_SIGHUP, GUC_UNIT_KB, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuext.device_clients",
							"Clients that may hold memory on one device at once; the others wait their turn.",
							"It bounds the device memory in use whatever the number of connections.",
							&gpuext_device_clients, 16, 1, 10000,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuext.service_wait",
							"How long a request waits for device memory or arena pages before giving up.",
							"Under auto the work then runs on the CPU.",
							&gpuext_service_wait_ms, 1000, 0, INT_MAX,
							PGC_USERSET, GUC_UNIT_MS, NULL, NULL, NULL);

	/* Server-start settings exist only where they can take effect: when preloading */
	if (!process_shared_preload_libraries_in_progress)
		return;
	DefineCustomBoolVariable("gpuext.service",
							 "Runs the GPU service when gpuext is in shared_preload_libraries.",
							 "Off: each backend opens the device itself, as without preloading.",
							 &gpuext_service_enabled, true, PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuext.service_reads_buffers",
							 "Lets the GPU service's devices read table pages in place from shared buffers.",
							 "The service pins shared buffers for the devices at its start.",
							 &gpuext_service_reads_buffers, true, PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuext.service_arena",
							"Host memory the GPU service pins for transfers, shared by all backends.",
							NULL, &gpuext_service_arena_mb, 256, 16, INT_MAX / 2,
							PGC_POSTMASTER, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomStringVariable("gpuext.devices",
							   "CUDA devices the GPU service opens, as a list of numbers; empty opens all.",
							   NULL, &gpuext_service_devices, "", PGC_POSTMASTER, 0,
							   DevicesCheck, NULL, NULL);
	if (!gpuext_service_enabled || !gpuext_cuda_built())
		return;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = ServiceShmemRequest;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = ServiceShmemStartup;

	memset(&bgw, 0, sizeof(bgw));
	snprintf(bgw.bgw_name, BGW_MAXLEN, "gpuext service supervisor");
	snprintf(bgw.bgw_type, BGW_MAXLEN, "gpuext service supervisor");
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS;
	bgw.bgw_start_time = BgWorkerStart_PostmasterStart;
	bgw.bgw_restart_time = 1;
	snprintf(bgw.bgw_library_name, BGW_MAXLEN, "gpuext");
	snprintf(bgw.bgw_function_name, BGW_MAXLEN, "GpuextServiceSupervisorMain");
	RegisterBackgroundWorker(&bgw);
}

/* The arena's first byte. */
char *
GpuextServiceArena(void)
{
	return (char *) gpuext_service + gpuext_service->arena_offset;
}

/* Whether [ptr, ptr + bytes) lies in the arena. */
bool
GpuextInArena(const void *ptr, size_t bytes)
{
	const char *arena = GpuextServiceArena();
	const char *p = ptr;

	return p >= arena && bytes <= gpuext_service->arena_bytes &&
		(size_t) (p - arena) <= gpuext_service->arena_bytes - bytes;
}

/* First run of npages free pages, or -1 (arena lock held). */
static int
ArenaFindRun(int npages)
{
	int32	   *run = ARENA_RUN(arena_control);

	for (int i = 0; i + npages <= arena_control->npages;)
	{
		int			free_len = 0;

		while (i + free_len < arena_control->npages && arena_control->owner[i + free_len] == 0 &&
			   free_len < npages)
			free_len++;
		if (free_len == npages)
			return i;
		i += free_len;
		if (i < arena_control->npages && arena_control->owner[i] != 0)
			i += Max(run[i], 1);
	}
	return -1;
}

/*
 * Arena pages for bytes, owned by this backend; waits up to wait_ms for
 * other backends to free some (serving interrupts), then returns NULL.
 */
void *
GpuextArenaAlloc(size_t bytes, int wait_ms)
{
	int			npages = (int) Max((bytes + SERVICE_PAGE_BYTES - 1) / SERVICE_PAGE_BYTES, 1);
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), wait_ms);
	int			first = -1;

	if (bytes > gpuext_service->arena_bytes)
		return NULL;
	for (;;)
	{
		long		left;

		LWLockAcquire(arena_control->lock, LW_EXCLUSIVE);
		first = ArenaFindRun(npages);
		if (first >= 0)
		{
			for (int i = 0; i < npages; i++)
			{
				arena_control->owner[first + i] = MyProcPid;
				ARENA_RUN(arena_control)[first + i] = 0;
			}
			ARENA_RUN(arena_control)[first] = npages;
			arena_control->used_pages += npages;
			arena_control->peak_pages = Max(arena_control->peak_pages, arena_control->used_pages);
		}
		LWLockRelease(arena_control->lock);
		if (first >= 0)
			break;
		left = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), deadline);
		if (left <= 0)
			break;
		ConditionVariableTimedSleep(&arena_control->freed, Min(left, 100), PG_WAIT_EXTENSION);
	}
	ConditionVariableCancelSleep();
	return first >= 0 ? GpuextServiceArena() + (Size) first * SERVICE_PAGE_BYTES : NULL;
}

/* Give pages back (lock held); wake waiters afterwards. */
static void
ArenaFreeRun(int first)
{
	int			npages = ARENA_RUN(arena_control)[first];

	for (int i = 0; i < npages; i++)
		arena_control->owner[first + i] = 0;
	ARENA_RUN(arena_control)[first] = 0;
	arena_control->used_pages -= npages;
}

/* Free an allocation of GpuextArenaAlloc. */
void
GpuextArenaFree(void *ptr)
{
	int			first;

	if (ptr == NULL)
		return;
	first = (int) (((char *) ptr - GpuextServiceArena()) / SERVICE_PAGE_BYTES);
	LWLockAcquire(arena_control->lock, LW_EXCLUSIVE);
	if (arena_control->owner[first] == MyProcPid && ARENA_RUN(arena_control)[first] > 0)
		ArenaFreeRun(first);
	LWLockRelease(arena_control->lock);
	ConditionVariableBroadcast(&arena_control->freed);
}

/* Free every page a process holds (at its exit, or the supervisor's sweep after it died). */
void
GpuextArenaReleasePid(int pid)
{
	bool		freed = false;

	if (arena_control == NULL)
		return;
	LWLockAcquire(arena_control->lock, LW_EXCLUSIVE);
	for (int i = 0; i < arena_control->npages; i++)
		if (arena_control->owner[i] == pid && ARENA_RUN(arena_control)[i] > 0)
		{
			ArenaFreeRun(i);
			freed = true;
		}
	LWLockRelease(arena_control->lock);
	if (freed)
		ConditionVariableBroadcast(&arena_control->freed);
}

/* Bytes of the arena in use now and at most since the last reset. */
void
GpuextArenaUsage(uint64 *used, uint64 *peak)
{
	LWLockAcquire(arena_control->lock, LW_SHARED);
	*used = (uint64) arena_control->used_pages * SERVICE_PAGE_BYTES;
	*peak = (uint64) arena_control->peak_pages * SERVICE_PAGE_BYTES;
	LWLockRelease(arena_control->lock);
}

/* Sweep: free the pages of processes that no longer exist. */
void
GpuextArenaReclaimDead(void)
{
	int			dead[64];
	int			ndead = 0;

	LWLockAcquire(arena_control->lock, LW_SHARED);
	for (int i = 0; i < arena_control->npages && ndead < lengthof(dead); i++)
	{
		int			pid = arena_control->owner[i];

		if (pid != 0 && ARENA_RUN(arena_control)[i] > 0 && kill(pid, 0) < 0 && errno == ESRCH)
			dead[ndead++] = pid;
	}
	LWLockRelease(arena_control->lock);
	for (int i = 0; i < ndead; i++)
		GpuextArenaReleasePid(dead[i]);
}

/* Reset the arena's peak (gpuext_stat_service_reset). */
void
GpuextArenaResetPeak(void)
{
	LWLockAcquire(arena_control->lock, LW_EXCLUSIVE);
	arena_control->peak_pages = arena_control->used_pages;
	LWLockRelease(arena_control->lock);
}

/* Wake the threads sleeping on a futex word of the segment. */
void
GpuextFutexWake(pg_atomic_uint32 *word)
{
	syscall(SYS_futex, (uint32 *) &word->value, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Spin up to max_us for *word to read want, without sleeping; whether it did. */
bool
GpuextSpinFor(pg_atomic_uint32 *word, uint32 want, int max_us)
{
	struct timespec start,
				now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;)
	{
		for (int i = 0; i < 64; i++)
		{
			if (pg_atomic_read_u32(word) == want)
				return true;
			pg_spin_delay();
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - start.tv_sec) * 1000000L + (now.tv_nsec - start.tv_nsec) / 1000 >= max_us)
			return false;
	}
}

/* Sleep while *word is seen, at most timeout_ms (a wake, a signal or a change ends it early). */
void
GpuextFutexWait(pg_atomic_uint32 *word, uint32 seen, int timeout_ms)
{
	struct timespec ts = {timeout_ms / 1000, (long) (timeout_ms % 1000) * 1000000L};

	syscall(SYS_futex, (uint32 *) &word->value, FUTEX_WAIT, seen, &ts, NULL, 0);
}
