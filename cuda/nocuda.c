/*
 * nocuda.c
 *		The device layer of a build without CUDA: every call reports that.
 */
#include "gpuext_cuda.h"

static const char not_built[] = "gpuext was built without CUDA support";

/* This build holds no device code. */
int
gpuext_cuda_built(void)
{
	return 0;
}

/* The only message this build can give. */
const char *
gpuext_cuda_error_message(void)
{
	return not_built;
}

/* No device can be opened. */
GpuextStatus
gpuext_cuda_open(GpuextDeviceInfo *info)
{
	(void) info;
	return GPUEXT_NOT_BUILT;
}

/* Nothing below is reached without a device; each reports the build. */
GpuextStatus
gpuext_cuda_mem_info(size_t *free_bytes, size_t *total_bytes)
{
	*free_bytes = *total_bytes = 0;
	return GPUEXT_NOT_BUILT;
}

GpuextStatus
gpuext_cuda_alloc(void **dptr, size_t bytes)
{
	(void) bytes;
	*dptr = NULL;
	return GPUEXT_NOT_BUILT;
}

void
gpuext_cuda_free(void *dptr)
{
	(void) dptr;
}

GpuextStatus
gpuext_cuda_alloc_pinned(void **hptr, size_t bytes)
{
	(void) bytes;
	*hptr = NULL;
	return GPUEXT_NOT_BUILT;
}

void
gpuext_cuda_free_pinned(void *hptr)
{
	(void) hptr;
}

GpuextStatus
gpuext_cuda_copy_to_device(void *dst, const void *src, size_t bytes)
{
	(void) dst, (void) src, (void) bytes;
	return GPUEXT_NOT_BUILT;
}

GpuextStatus
gpuext_cuda_copy_to_host(void *dst, const void *src, size_t bytes)
{
	(void) dst, (void) src, (void) bytes;
	return GPUEXT_NOT_BUILT;
}

GpuextStatus
gpuext_cuda_mark(int slot)
{
	(void) slot;
	return GPUEXT_NOT_BUILT;
}

GpuextStatus
gpuext_cuda_wait(int slot, GpuextPollFn poll, void *arg)
{
	(void) slot, (void) poll, (void) arg;
	return GPUEXT_NOT_BUILT;
}

GpuextStatus
gpuext_sort_scratch_bytes(GpuextSortAlgo algo, int key_bytes, size_t n, size_t *bytes)
{
	(void) algo, (void) key_bytes, (void) n;
	*bytes = 0;
	return GPUEXT_NOT_BUILT;
}

GpuextStatus
gpuext_sort_keys(GpuextSortAlgo algo, int key_bytes, void *keys, size_t n,
				 void *scratch, size_t scratch_bytes, GpuextPollFn poll, void *arg)
{
	(void) algo, (void) key_bytes, (void) keys, (void) n;
	(void) scratch, (void) scratch_bytes, (void) poll, (void) arg;
	return GPUEXT_NOT_BUILT;
}
