/*
 * service.h
 *		The GPU service: one process owns the devices for the whole server.
 *
 * Processes and memory (doc/service.md has the picture):
 *  - the postmaster maps one shared segment of its own at start (not
 *    PostgreSQL's shared memory): a header, one request slot per backend
 *    and the arena, host memory the service pins once for DMA;
 *  - a background worker, the supervisor, forks the service process, which
 *    leaves PostgreSQL's shared memory at once, so that its death (even by
 *    SIGKILL) never makes the postmaster restart the server; the supervisor
 *    wakes the backends whose requests finished, reclaims what dead
 *    backends left, and starts the service again when it dies;
 *  - the service makes the only CUDA context of each device and runs one
 *    thread a client slot, each with its own stream on each device;
 *  - a backend writes a request into its slot (keys and values go into
 *    arena pages it holds), wakes the slot's thread with a futex and waits
 *    on its latch.
 */
#ifndef GPUEXT_SERVICE_H
#define GPUEXT_SERVICE_H

#include "port/atomics.h"

#include "gpuext_cuda.h"

#define SERVICE_MAGIC 0x67707573
#define SERVICE_ARGS 12
#define SERVICE_MESSAGE 256

/*
 * The service's pipe to the supervisor carries a slot number (>= 0) for
 * each answer, and the service's log messages as -length, then the bytes,
 * padded to four, each written whole under one lock.
 */
#define SERVICE_LOG_MAX 500

/* The service's exit status when no GPU can be used: it is not started again until a reload. */
#define SERVICE_EXIT_NO_DEVICE 3

/* Arena pages: the unit of a backend's pinned allocations. */
#define SERVICE_PAGE_BYTES ((Size) 64 * 1024)

/* One device-layer call of gpuext_cuda.h, as a request. */
typedef enum ServiceOp
{
	SOP_OPEN = 1,
	SOP_RESET,
	SOP_CLOSE,
	SOP_MEM_INFO,
	SOP_ALLOC,
	SOP_FREE,
	SOP_COPY_TO_DEVICE,
	SOP_COPY_TO_HOST,
	SOP_MARK,
	SOP_WAIT,
	SOP_SORT_SCRATCH,
	SOP_SORT_KEYS,
	SOP_SORT_ROWS_SCRATCH,
	SOP_SORT_ROWS,
	SOP_REDUCE_SCRATCH,
	SOP_REDUCE,
	SOP_MATMUL,
	SOP_DRAIN,					/* wait for the client's stream, not interruptible */
	SOP_COPY_ON_DEVICE,
	SOP_GATHER_ROWS_SCRATCH,
	SOP_GATHER_ROWS,
	SOP_GROUPS_CLEAR,
	SOP_GROUPS_ADD,
	SOP_GROUPS_RESULT,
	SOP_SCAN_HEAP,
	SOP_GATHER_PAGES,
	SOP_LIST					/* the slot's list of requests, run in order */
} ServiceOp;

/*
 * Requests that only enqueue work are held by the backend and sent
 * together, with the request that needs an answer or with a mark: one trip
 * to the service for a batch's work rather than one a call.
 */
#define SERVICE_LIST_MAX 16

/* Whether a request still runs after an earlier one failed: what releases memory does. */
static inline bool
ServiceRunsAfterFailure(int op)
{
	return op == SOP_FREE || op == SOP_RESET || op == SOP_CLOSE;
}

typedef struct ServiceEntry
{
	int32		op;
	uint64		arg[SERVICE_ARGS];
} ServiceEntry;

typedef enum SlotState
{
	SLOT_IDLE = 0,
	SLOT_FILLING,				/* a backend (or the supervisor) is writing a request */
	SLOT_REQUEST,				/* written by the backend, not yet taken */
	SLOT_RUNNING,				/* taken by the slot's service thread */
	SLOT_DONE					/* answered (by the service, or by the supervisor when it died) */
} SlotState;

/* A backend's channel to the service; the slot of PGPROC number i is slots[i]. */
typedef struct ServiceSlot
{
	pg_atomic_uint32 state;
	pg_atomic_uint32 seq;		/* futex word the slot's thread sleeps on */
	pg_atomic_uint32 cancel;	/* the backend asks the running request to stop */
	pg_atomic_uint32 worker;	/* generation whose service has a thread for this slot */
	pg_atomic_uint32 sleeping;	/* the backend waits on its latch: answers must wake it */
	int32		pid;
	int32		procno;
	uint32		generation;		/* service generation the request was written for */
	int32		op;
	uint64		arg[SERVICE_ARGS];
	int32		nlist;			/* SOP_LIST: the entries of list */
	ServiceEntry list[SERVICE_LIST_MAX];
	uint64		out[2];
	int32		status;
	char		message[SERVICE_MESSAGE];
	GpuextDeviceInfo info;
	/* the service's view of this client, for gpuext_stat_service */
	int32		device;			/* device its buffers are on, -1 for none */
	uint64		device_bytes;
} ServiceSlot;

/* A device the service opened, with its counters. */
typedef struct ServiceDevice
{
	int32		ordinal;		/* CUDA device number */
	GpuextDeviceInfo info;
	uint64		limit;			/* bytes clients may hold on it */
	pg_atomic_uint64 used;
	pg_atomic_uint64 peak;
	pg_atomic_uint32 sessions;	/* clients with buffers on it */
	pg_atomic_uint64 requests;
	pg_atomic_uint64 bytes_to_device;
	pg_atomic_uint64 bytes_to_host;
	pg_atomic_uint64 busy_ns;
	pg_atomic_uint64 waits;		/* allocations that waited for memory */
	pg_atomic_uint64 refusals;	/* allocations refused after the wait */
} ServiceDevice;

typedef struct ServiceHeader
{
	uint32		magic;
	pg_atomic_uint32 generation;	/* bumped whenever the service stops */
	pg_atomic_uint32 ready;		/* the service of this generation serves requests */
	pg_atomic_uint32 doorbell;	/* futex word: a slot needs a thread */
	int32		service_pid;
	int32		supervisor_pid;
	int64		started_at;		/* TimestampTz of the running service */
	int64		stats_reset;
	pg_atomic_uint64 restarts;
	pg_atomic_uint32 no_device;	/* the last service found no usable GPU: none is started until a reload */
	pg_atomic_uint32 pool_generation;	/* 1 + the generation whose service reads shared buffers */
	char		last_exit[SERVICE_MESSAGE];
	char		start_error[SERVICE_MESSAGE];
	/* settings, published by the supervisor */
	int64		memory_limit_kb;	/* -1: 90% of each device */
	int32		device_clients;	/* clients holding memory at once on a device */
	int32		devices_wanted[GPUEXT_MAX_DEVICES];
	int32		ndevices_wanted;	/* 0: every visible device */
	/* the devices the running service opened */
	int32		ndevices;
	ServiceDevice devices[GPUEXT_MAX_DEVICES];
	/* counted by the backends */
	pg_atomic_uint64 requests;
	pg_atomic_uint64 fallbacks;
	pg_atomic_uint64 cancels;
	pg_atomic_uint64 lost;
	pg_atomic_uint32 queued;	/* requests waiting for device memory */
	/* the arena, at the segment's start plus arena_offset */
	Size		arena_offset;
	Size		arena_bytes;
	int32		nslots;
	ServiceSlot slots[FLEXIBLE_ARRAY_MEMBER];
} ServiceHeader;

/* Bytes clients may hold on device d: gpuext.device_memory_limit, or 90% of it (-1). */
static inline uint64
ServiceDeviceLimit(const ServiceHeader *hdr, int d)
{
	uint64		total = hdr->devices[d].info.memory_total;

	if (hdr->memory_limit_kb < 0)
		return total / 10 * 9;
	return Min((uint64) hdr->memory_limit_kb * 1024, total);
}

/* service_shmem.c: the segment, the arena, settings */
extern ServiceHeader *gpuext_service;
extern bool gpuext_service_enabled;
extern int	gpuext_service_arena_mb;
extern bool gpuext_service_reads_buffers;
extern int	gpuext_service_wait_ms;
extern int	gpuext_device_memory_limit;
extern int	gpuext_device_clients;
extern char *gpuext_service_devices;

extern void GpuextServiceInit(void);
extern char *GpuextServiceArena(void);
extern bool GpuextInArena(const void *ptr, size_t bytes);
extern void *GpuextArenaAlloc(size_t bytes, int wait_ms);
extern void GpuextArenaFree(void *ptr);
extern void GpuextArenaReleasePid(int pid);
extern void GpuextArenaUsage(uint64 *used, uint64 *peak);
extern void GpuextArenaReclaimDead(void);
extern void GpuextArenaResetPeak(void);
extern void GpuextServicePublishSettings(void);
extern void GpuextFutexWake(pg_atomic_uint32 *word);
extern void GpuextFutexWait(pg_atomic_uint32 *word, uint32 seen, int timeout_ms);
extern bool GpuextSpinFor(pg_atomic_uint32 *word, uint32 want, int max_us);

/*
 * Microseconds a backend spins for an answer, and a service thread for its
 * client's next request, before sleeping: most come that soon, and a wake
 * through the supervisor and a latch costs far more.
 */
#define SERVICE_ANSWER_SPIN_US 50
#define SERVICE_REQUEST_SPIN_US 20

/* Whether the running service's devices read shared buffers in place. */
static inline bool
ServiceReadsBuffers(ServiceHeader *hdr)
{
	return pg_atomic_read_u32(&hdr->pool_generation) == pg_atomic_read_u32(&hdr->generation) + 1;
}

/* service_process.c: shared buffers as the service maps them (read-only), NULL for none */
extern const char *gpuext_service_pool;
extern uint32 gpuext_service_pool_blocks;

/* service_supervisor.c: the background worker */
extern PGDLLEXPORT void GpuextServiceSupervisorMain(Datum arg);

/* service_process.c: the service itself (no PostgreSQL calls once started) */
extern void GpuextServiceProcessMain(ServiceHeader *hdr, int notify_fd, uint32 generation);

/* service_client.c: the backend's side */
extern bool GpuextServiceAvailable(void);
extern const char *GpuextServiceErrorMessage(void);
extern size_t GpuextServiceClientShare(void);

#endif							/* GPUEXT_SERVICE_H */
