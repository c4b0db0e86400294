/*
 * gpuext.h
 *		Declarations shared by gpuext's PostgreSQL-facing C files.
 */
#ifndef GPUEXT_H
#define GPUEXT_H

#include "utils/guc.h"

#include "gpuext_cuda.h"
#include "scan_heap.h"

/* gpuext.device */
typedef enum GpuextDeviceMode
{
	GPUEXT_DEVICE_AUTO,
	GPUEXT_DEVICE_GPU,
	GPUEXT_DEVICE_CPU
} GpuextDeviceMode;

/*
 * GUC defaults, for the variables and their definitions in gpuext.c.  The
 * element threshold sits where gpu_sort end to end overtakes gpuext's CPU
 * sort (bench/gpu_sort_crossover.sql; doc/performance.md).
 */
#define GPUEXT_DEVICE_MODE_DEFAULT GPUEXT_DEVICE_AUTO
#define GPUEXT_MIN_GPU_ELEMENTS_DEFAULT 32768
#define GPUEXT_MAX_DEVICE_MEMORY_DEFAULT (-1)
#define GPUEXT_OFFLOAD_DEFAULT true
#define GPUEXT_DEBUG_FAIL_DEVICE_CALLS_DEFAULT ""

extern int	gpuext_device_mode;
extern int	gpuext_min_gpu_elements;
extern int	gpuext_max_device_memory;
extern bool gpuext_offload;
extern char *gpuext_debug_fail_device_calls;

/*
 * Failure injection (gpuext.debug_fail_device_calls): every device-layer call
 * made from src/ passes through GpuextFaultFires first, so that a test can
 * make the next N calls of a kind fail as a broken device would, on the real
 * device, the fake one and the CPU-only build alike.
 */
typedef enum GpuextFaultKind
{
	GPUEXT_FAULT_ANY,
	GPUEXT_FAULT_OPEN,			/* opening (resetting) the device */
	GPUEXT_FAULT_ALLOC,			/* device and pinned allocations: out of memory */
	GPUEXT_FAULT_COPY,			/* copies to and from the device */
	GPUEXT_FAULT_KERNEL,		/* sorts, reductions and matrix products */
	GPUEXT_FAULT_SYNC,			/* event records and waits */
	GPUEXT_FAULT_RESET,			/* any call but an open: the device is lost, as after a GPU reset */
	GPUEXT_FAULT_RECHECK		/* only when named: a page the device read whole is found changed after */
} GpuextFaultKind;

extern bool GpuextFaultFires(GpuextFaultKind kind);
extern GpuextStatus GpuextFaultStatus(GpuextStatus status);
extern bool gpuext_fault_check_hook(char **newval, void **extra, GucSource source);
extern void gpuext_fault_assign_hook(const char *newval, void *extra);
extern bool gpuext_fault_fired;	/* the last device-layer call was failed on purpose */
extern int64 gpuext_faults_injected;

/*
 * The device layer a backend uses: gpuext_cuda.h in this process, or the
 * GPU service (service_client.c) when gpuext is preloaded.  src/ calls the
 * gpuext_cuda_* names; the macros below send each through gpuext_dev.
 */
typedef struct GpuextDeviceOps
{
	GpuextStatus (*open) (GpuextDeviceInfo *info);
	GpuextStatus (*reset) (void);
	GpuextStatus (*mem_info) (size_t *free_bytes, size_t *total_bytes);
	GpuextStatus (*alloc) (void **dptr, size_t bytes);
	void		(*free) (void *dptr);
	GpuextStatus (*alloc_pinned) (void **hptr, size_t bytes);
	void		(*free_pinned) (void *hptr);
	GpuextStatus (*copy_to_device) (void *dst, const void *src, size_t bytes);
	GpuextStatus (*copy_to_host) (void *dst, const void *src, size_t bytes);
	GpuextStatus (*copy_on_device) (void *dst, const void *src, size_t bytes);
	GpuextStatus (*mark) (int slot);
	GpuextStatus (*wait) (int slot, GpuextPollFn poll, void *arg);
	GpuextStatus (*sort_scratch_bytes) (GpuextSortAlgo algo, int key_bytes, size_t n, size_t *bytes,
										size_t *host_bytes);
	GpuextStatus (*sort_keys) (GpuextSortAlgo algo, int key_bytes, void *keys, size_t n, void *scratch,
							   size_t scratch_bytes, void *host_scratch, size_t host_scratch_bytes,
							   GpuextPollFn poll, void *arg);
	GpuextStatus (*sort_rows_scratch_bytes) (int nwords, size_t n, size_t *bytes);
	GpuextStatus (*sort_rows) (int nwords, int top_bits, const uint64_t *keys, uint32_t *order,
							   uint64_t *sorted_keys, size_t n, void *scratch, size_t scratch_bytes,
							   GpuextPollFn poll, void *arg);
	GpuextStatus (*gather_rows_scratch_bytes) (size_t n, size_t *bytes);
	GpuextStatus (*gather_rows) (const char *rows, size_t rows_bytes, const uint64_t *offsets, const uint32_t *order,
								 size_t n, size_t first, int prepare, char *out, size_t out_bytes, void *scratch,
								 size_t scratch_bytes);
	GpuextStatus (*reduce_scratch_bytes) (int value_bytes, int is_float, size_t n, size_t *bytes);
	GpuextStatus (*reduce) (int value_bytes, int is_float, const void *values, size_t n, void *scratch,
							size_t scratch_bytes, GpuextReduceResult *result);
	GpuextStatus (*groups_clear) (int is_float, void *states, uint32_t first, uint32_t count);
	GpuextStatus (*groups_add) (int value_bytes, int is_float, const void *values, const uint32_t *groups,
								size_t n, void *states, uint32_t ngroups);
	GpuextStatus (*groups_result) (int value_bytes, int is_float, void *states, uint32_t ngroups,
								   GpuextGroupResult *results);
	GpuextStatus (*scan_heap) (const GpuextScanProgram *program, const char *pages, const uint16_t *vis,
							   uint32_t npages, uint64_t *counts, char *outs, size_t outs_bytes);
	/* the buffer pool's pages read in place (gpuext_scan_gather_pages), where reads_buffers says so */
	bool		(*reads_buffers) (void);
	GpuextStatus (*gather_pages) (char *pages, const char *copies, const uint32_t *refs, uint32_t npages);
	GpuextStatus (*matmul) (GpuextMatmulAlgo algo, int elem_bytes, const void *a, const void *b, void *c,
							size_t m, size_t k, size_t n);
	const char *(*error_message) (void);
} GpuextDeviceOps;

extern const GpuextDeviceOps gpuext_local_ops;
extern const GpuextDeviceOps gpuext_service_ops;
extern const GpuextDeviceOps *gpuext_dev;

#define GPUEXT_FAULT_CALL(kind, status, call) \
	(GpuextFaultFires(kind) ? GpuextFaultStatus(status) : (call))
#define gpuext_cuda_open(info) \
	GPUEXT_FAULT_CALL(GPUEXT_FAULT_OPEN, GPUEXT_NO_DEVICE, gpuext_dev->open(info))
#define gpuext_cuda_alloc(p, bytes) \
	GPUEXT_FAULT_CALL(GPUEXT_FAULT_ALLOC, GPUEXT_OUT_OF_MEMORY, gpuext_dev->alloc(p, bytes))
#define gpuext_cuda_alloc_pinned(p, bytes) \
	GPUEXT_FAULT_CALL(GPUEXT_FAULT_ALLOC, GPUEXT_OUT_OF_MEMORY, gpuext_dev->alloc_pinned(p, bytes))
#define gpuext_cuda_copy_to_device(dst, src, bytes) \
	GPUEXT_FAULT_CALL(GPUEXT_FAULT_COPY, GPUEXT_CUDA_ERROR, gpuext_dev->copy_to_device(dst, src, bytes))
#define gpuext_cuda_copy_to_host(dst, src, bytes) \
	GPUEXT_FAULT_CALL(GPUEXT_FAULT_COPY, GPUEXT_CUDA_ERROR, gpuext_dev->copy_to_host(dst, src, bytes))
#define gpuext_cuda_copy_on_device(dst, src, bytes) \
	GPUEXT_FAULT_CALL(GPUEXT_FAULT_COPY, GPUEXT_CUDA_ERROR, gpuext_dev->copy_on_device(dst, src, bytes))
#define gpuext_cuda_mark(slot) \
	GPUEXT_FAULT_CALL(GPUEXT_FAULT_SYNC, GPUEXT_CUDA_ERROR, gpuext_dev->mark(slot))
#define gpuext_cuda_wait(slot, poll, arg) \
	GPUEXT_FAULT_CALL(GPUEXT_FAULT_SYNC, GPUEXT_CUDA_ERROR, gpuext_dev->wait(slot, poll, arg))
#define gpuext_sort_keys(...) \
	GPUEXT_FAULT_CALL(GPUEXT_FAULT_KERNEL, GPUEXT_CUDA_ERROR, gpuext_dev->sort_keys(__VA_ARGS__))
#define gpuext_sort_rows(...) \
	GPUEXT_FAULT_CALL(GPUEXT_FAULT_KERNEL, GPUEXT_CUDA_ERROR, gpuext_dev->sort_rows(__VA_ARGS__))
#define gpuext_gather_rows(...) \
	GPUEXT_FAULT_CALL(GPUEXT_FAULT_KERNEL, GPUEXT_CUDA_ERROR, gpuext_dev->gather_rows(__VA_ARGS__))
#define gpuext_reduce(...) \
	GPUEXT_FAULT_CALL(GPUEXT_FAULT_KERNEL, GPUEXT_CUDA_ERROR, gpuext_dev->reduce(__VA_ARGS__))
#define gpuext_groups_add(...) \
	GPUEXT_FAULT_CALL(GPUEXT_FAULT_KERNEL, GPUEXT_CUDA_ERROR, gpuext_dev->groups_add(__VA_ARGS__))
#define gpuext_groups_result(...) \
	GPUEXT_FAULT_CALL(GPUEXT_FAULT_KERNEL, GPUEXT_CUDA_ERROR, gpuext_dev->groups_result(__VA_ARGS__))
#define gpuext_scan_heap(...) \
	GPUEXT_FAULT_CALL(GPUEXT_FAULT_KERNEL, GPUEXT_CUDA_ERROR, gpuext_dev->scan_heap(__VA_ARGS__))
#define gpuext_gather_pages(...) \
	GPUEXT_FAULT_CALL(GPUEXT_FAULT_COPY, GPUEXT_CUDA_ERROR, gpuext_dev->gather_pages(__VA_ARGS__))
#define gpuext_matmul(...) \
	GPUEXT_FAULT_CALL(GPUEXT_FAULT_KERNEL, GPUEXT_CUDA_ERROR, gpuext_dev->matmul(__VA_ARGS__))
#define gpuext_cuda_reset() gpuext_dev->reset()
#define gpuext_cuda_mem_info(f, t) gpuext_dev->mem_info(f, t)
#define gpuext_cuda_free(p) gpuext_dev->free(p)
#define gpuext_cuda_free_pinned(p) gpuext_dev->free_pinned(p)
#define gpuext_sort_scratch_bytes(...) gpuext_dev->sort_scratch_bytes(__VA_ARGS__)
#define gpuext_sort_rows_scratch_bytes(...) gpuext_dev->sort_rows_scratch_bytes(__VA_ARGS__)
#define gpuext_gather_rows_scratch_bytes(...) gpuext_dev->gather_rows_scratch_bytes(__VA_ARGS__)
#define gpuext_reduce_scratch_bytes(...) gpuext_dev->reduce_scratch_bytes(__VA_ARGS__)
#define gpuext_groups_clear(...) gpuext_dev->groups_clear(__VA_ARGS__)
#define gpuext_cuda_error_message() gpuext_dev->error_message()

/* device.c: the backend's device session */
extern bool GpuextOffloadAllowed(void);
extern bool GpuextPlanOnDevice(const char **why);
extern bool GpuextUseDevice(void);
extern bool GpuextUseDeviceFor(size_t n);
extern void GpuextCheck(GpuextStatus status, const char *what);
extern void GpuextWait(int slot);
extern int	GpuextPollInterrupts(void *arg);

/*
 * Device work that may fall back: fn(arg) runs with its allocations in a
 * memory context of its own, and returns false, having done nothing, when
 * device memory is short.  Under auto a device failure in it frees what it
 * held and becomes a WARNING.
 */
typedef enum GpuextDeviceOutcome
{
	GPUEXT_DEVICE_DONE,
	GPUEXT_DEVICE_SHORT,		/* fn found device memory short */
	GPUEXT_DEVICE_FAILED		/* auto: the device failed, a WARNING said so */
} GpuextDeviceOutcome;

typedef bool (*GpuextDeviceFn) (void *arg);
extern GpuextDeviceOutcome GpuextTryDevice(GpuextDeviceFn fn, void *arg, const char *what);

/*
 * After "static bool fn(Type *arg)", GPUEXT_DEVICE_WORK(fn, Type) defines
 * Try##fn(Type *arg, const char *what): fn run through GpuextTryDevice with
 * its argument's type checked, and no callback written by hand.
 */
#define GPUEXT_DEVICE_WORK(fn, Type) \
	static bool \
	fn##Untyped(void *arg) \
	{ \
		return fn((Type *) arg); \
	} \
	static GpuextDeviceOutcome \
	Try##fn(Type *arg, const char *what) \
	{ \
		return GpuextTryDevice(fn##Untyped, arg, what); \
	}

/* Device or pinned host memory owned by the memory context it was allocated in. */
typedef struct GpuextBuffer
{
	char	   *ptr;			/* NULL once freed */
	size_t		bytes;
	bool		pinned;			/* pinned host memory, else device memory */
	uint64		session;		/* the device session it belongs to */
} GpuextBuffer;

extern size_t GpuextDeviceMemoryKnown(void);
extern GpuextBuffer *GpuextDeviceAlloc(size_t bytes, bool missing_ok);
extern GpuextBuffer *GpuextPinnedAlloc(size_t bytes);
extern GpuextBuffer *GpuextPinnedAllocShort(size_t bytes);
extern void GpuextBufferFree(GpuextBuffer *buf);

/* The backend's pinned staging buffer: two halves used in turn for transfers. */
#define GPUEXT_STAGING_HALF_BYTES ((size_t) 4 * 1024 * 1024)
extern char *GpuextStagingBegin(void);
extern void GpuextStagingEnd(void);

/* device_transfer.c: fill (upload) or read (download) one staged piece, bytes at offset of the whole transfer. */
typedef void (*GpuextStageFn) (void *arg, char *piece, size_t offset, size_t bytes);
extern void GpuextUpload(char *dst, size_t bytes, size_t unit, char *staging,
						 GpuextStageFn fill, void *arg);
extern void GpuextDownload(const char *src, size_t bytes, size_t unit, char *staging,
						   GpuextStageFn drain, void *arg);
/* One piece at a time, for callers that pace the halves themselves (GpuextWait(slot) before reuse) */
extern void GpuextPieceToDevice(char *dst, const char *half, size_t bytes, int slot);
extern void GpuextPieceToHost(char *half, const char *src, size_t bytes, int slot);
extern const char *GpuextDeviceUnavailableReason(void);

/* array_sort.c: values into sorted keys on the device (sort_keys.h's encoding) */
struct GpuextSortType;
extern bool GpuextSortKeysOnDevice(const struct GpuextSortType *type, const char *values, void *keys,
								   size_t n, bool descending);

#endif							/* GPUEXT_H */
