/*
 * fakedev.c
 *		gpuext_cuda.h on the host (WITH_CUDA=fake): a "device" whose memory is
 *		malloc'd, whose copies are synchronous and whose kernels are plain C
 *		(fakedev_kernels.c).
 *
 * It exists so that a machine without a GPU runs every device-path line of
 * src/ (staging, batching, merging results, errors) with gpuext.device = gpu.
 * This file holds the device itself: devices, memory and its accounts,
 * copies, events and the last error.  Plain C: no postgres.h.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakedev.h"

/* Device memory the fake reports; allocations past it fail as a full GPU's would. */
#define FAKE_MEMORY_TOTAL ((size_t) 16 << 30)

/* Each allocation's header: its size and device for the accounts, its links for a reset. */
#define FAKE_HEADER 64

typedef struct FakeBlock
{
	size_t		bytes;
	int			device;			/* -1 for "pinned" memory */
	struct FakeBlock *prev;
	struct FakeBlock *next;
} FakeBlock;

/* Per thread, as on the device: the last error and the device in use (the GPU service runs threads). */
static __thread char error_message[256] = "no error";
static __thread int current_device;

/* The blocks and the accounts are shared by the threads, under one lock. */
static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t device_held[GPUEXT_MAX_DEVICES];
static FakeBlock *live_blocks;

/* Remember why the last call failed and return its status. */
GpuextStatus
gpuext_fake_fail(GpuextStatus status, const char *what)
{
	snprintf(error_message, sizeof(error_message), "gpuext fake device: %s", what);
	return status;
}

/* This build holds (fake) device code. */
int
gpuext_cuda_built(void)
{
	return 1;
}

/* The fake device's "kernels" read any of the process's memory where it is. */
int
gpuext_cuda_reads_host_in_place(void)
{
	return 1;
}

/* Message for the last failed call. */
const char *
gpuext_cuda_error_message(void)
{
	return error_message;
}

/* Devices the fake shows: GPUEXT_FAKE_DEVICES in the environment (1 to GPUEXT_MAX_DEVICES), else 1. */
GpuextStatus
gpuext_cuda_device_count(int *count)
{
	const char *env = getenv("GPUEXT_FAKE_DEVICES");
	int			n = env ? atoi(env) : 1;

	*count = n < 1 ? 1 : n > GPUEXT_MAX_DEVICES ? GPUEXT_MAX_DEVICES : n;
	return GPUEXT_OK;
}

/* Make dev the calling thread's fake device. */
GpuextStatus
gpuext_cuda_use_device(int dev)
{
	int			count;

	gpuext_cuda_device_count(&count);
	if (dev < 0 || dev >= count)
		return gpuext_fake_fail(GPUEXT_NO_DEVICE, "no such device");
	current_device = dev;
	return GPUEXT_OK;
}

/* Describe fake device dev. */
GpuextStatus
gpuext_cuda_device_info(int dev, GpuextDeviceInfo *info)
{
	GpuextStatus st = gpuext_cuda_use_device(dev);

	memset(info, 0, sizeof(*info));
	if (st != GPUEXT_OK)
		return st;
	snprintf(info->name, sizeof(info->name), "gpuext fake device (host memory)");
	info->multiprocessors = 1;
	info->memory_total = FAKE_MEMORY_TOTAL;
	pthread_mutex_lock(&fake_lock);
	info->memory_free = FAKE_MEMORY_TOTAL - device_held[dev];
	pthread_mutex_unlock(&fake_lock);
	return GPUEXT_OK;
}

/* Describe the fake device 0. */
GpuextStatus
gpuext_cuda_open(GpuextDeviceInfo *info)
{
	return gpuext_cuda_device_info(0, info);
}

/* The fake frees at once: nothing to keep. */
GpuextStatus
gpuext_cuda_pool_keep(size_t bytes)
{
	(void) bytes;
	return GPUEXT_OK;
}

/* Host memory needs no pinning here. */
GpuextStatus
gpuext_cuda_host_register(void *ptr, size_t bytes)
{
	(void) ptr;
	(void) bytes;
	return GPUEXT_OK;
}

/* Host memory is read where it is. */
GpuextStatus
gpuext_cuda_host_register_read_only(const void *ptr, size_t bytes, const char **device_view)
{
	(void) bytes;
	*device_view = (const char *) ptr;
	return GPUEXT_OK;
}

/* Free and total fake device memory. */
GpuextStatus
gpuext_cuda_mem_info(size_t *free_bytes, size_t *total_bytes)
{
	pthread_mutex_lock(&fake_lock);
	*free_bytes = FAKE_MEMORY_TOTAL - device_held[current_device];
	pthread_mutex_unlock(&fake_lock);
	*total_bytes = FAKE_MEMORY_TOTAL;
	return GPUEXT_OK;
}

/* malloc with the size in a header; device allocations count against the fake total. */
static GpuextStatus
FakeAlloc(void **ptr, size_t bytes, int device)
{
	FakeBlock  *b;
	int			dev = device ? current_device : -1;

	*ptr = NULL;
	pthread_mutex_lock(&fake_lock);
	if (device && bytes > FAKE_MEMORY_TOTAL - device_held[dev])
	{
		pthread_mutex_unlock(&fake_lock);
		return gpuext_fake_fail(GPUEXT_OUT_OF_MEMORY, "out of device memory");
	}
	if (device)
		device_held[dev] += bytes;
	pthread_mutex_unlock(&fake_lock);
	b = malloc(bytes + FAKE_HEADER);
	if (b == NULL)
	{
		pthread_mutex_lock(&fake_lock);
		if (device)
			device_held[dev] -= bytes;
		pthread_mutex_unlock(&fake_lock);
		return gpuext_fake_fail(GPUEXT_OUT_OF_MEMORY, "out of host memory");
	}
	b->bytes = bytes;
	b->device = dev;
	b->prev = NULL;
	pthread_mutex_lock(&fake_lock);
	b->next = live_blocks;
	if (live_blocks)
		live_blocks->prev = b;
	live_blocks = b;
	pthread_mutex_unlock(&fake_lock);
	*ptr = (char *) b + FAKE_HEADER;
	return GPUEXT_OK;
}

/* Free a FakeAlloc block. */
static void
FakeFree(void *ptr)
{
	FakeBlock  *b;

	if (ptr == NULL)
		return;
	b = (FakeBlock *) ((char *) ptr - FAKE_HEADER);
	pthread_mutex_lock(&fake_lock);
	if (b->device >= 0)
		device_held[b->device] -= b->bytes;
	if (b->prev)
		b->prev->next = b->next;
	else
		live_blocks = b->next;
	if (b->next)
		b->next->prev = b->prev;
	pthread_mutex_unlock(&fake_lock);
	free(b);
}

/* Like cudaDeviceReset: every block still allocated is gone. */
GpuextStatus
gpuext_cuda_reset(void)
{
	pthread_mutex_lock(&fake_lock);
	while (live_blocks)
	{
		FakeBlock  *b = live_blocks;

		live_blocks = b->next;
		free(b);
	}
	memset(device_held, 0, sizeof(device_held));
	pthread_mutex_unlock(&fake_lock);
	return GPUEXT_OK;
}

/* "Device" memory: host memory counted against the fake total. */
GpuextStatus
gpuext_cuda_alloc(void **dptr, size_t bytes)
{
	return FakeAlloc(dptr, bytes, 1);
}

/* Free "device" memory. */
void
gpuext_cuda_free(void *dptr)
{
	FakeFree(dptr);
}

/* "Pinned" memory: plain host memory. */
GpuextStatus
gpuext_cuda_alloc_pinned(void **hptr, size_t bytes)
{
	return FakeAlloc(hptr, bytes, 0);
}

/* Free "pinned" memory. */
void
gpuext_cuda_free_pinned(void *hptr)
{
	FakeFree(hptr);
}

/* Copies are done by the time they are "enqueued". */
GpuextStatus
gpuext_cuda_copy_to_device(void *dst, const void *src, size_t bytes)
{
	memcpy(dst, src, bytes);
	return GPUEXT_OK;
}

/* Likewise back to the host. */
GpuextStatus
gpuext_cuda_copy_to_host(void *dst, const void *src, size_t bytes)
{
	memcpy(dst, src, bytes);
	return GPUEXT_OK;
}

/* Likewise between two device buffers. */
GpuextStatus
gpuext_cuda_copy_on_device(void *dst, const void *src, size_t bytes)
{
	memmove(dst, src, bytes);
	return GPUEXT_OK;
}

/* Events complete at once; only the slot is checked. */
GpuextStatus
gpuext_cuda_mark(int slot)
{
	if (slot < 0 || slot >= GPUEXT_CUDA_EVENTS)
		return gpuext_fake_fail(GPUEXT_INVALID, "event slot out of range");
	return GPUEXT_OK;
}

/* Nothing is pending, but a pending cancel is honoured as a real wait would. */
GpuextStatus
gpuext_cuda_wait(int slot, GpuextPollFn poll, void *arg)
{
	if (slot >= GPUEXT_CUDA_EVENTS)
		return gpuext_fake_fail(GPUEXT_INVALID, "event slot out of range");
	if (poll && poll(arg))
		return gpuext_fake_fail(GPUEXT_INTERRUPTED, "wait interrupted");
	return GPUEXT_OK;
}
