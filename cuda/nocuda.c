/*
 * nocuda.c
 *		gpuext_cuda.h for the CPU-only build (WITH_CUDA=no): no device code,
 *		every device call reports GPUEXT_NOT_BUILT.
 */
#include "gpuext_cuda.h"
#include "scan_heap.h"

static const char not_built_message[] = "gpuext was built without CUDA support";

/* This build has no device code. */
int
gpuext_cuda_built(void)
{
	return 0;
}

/* No kernels to read anything. */
int
gpuext_cuda_reads_host_in_place(void)
{
	return 0;
}

/* The only failure this build has. */
const char *
gpuext_cuda_error_message(void)
{
	return not_built_message;
}

/* No device to open. */
GpuextStatus
gpuext_cuda_open(GpuextDeviceInfo *info)
{
	(void) info;
	return GPUEXT_NOT_BUILT;
}

/* No device session to drop. */
GpuextStatus
gpuext_cuda_reset(void)
{
	return GPUEXT_OK;
}

/* No device memory to describe. */
GpuextStatus
gpuext_cuda_mem_info(size_t *free_bytes, size_t *total_bytes)
{
	(void) free_bytes;
	(void) total_bytes;
	return GPUEXT_NOT_BUILT;
}

/* No device memory to allocate. */
GpuextStatus
gpuext_cuda_alloc(void **dptr, size_t bytes)
{
	(void) bytes;
	if (dptr)
		*dptr = NULL;
	return GPUEXT_NOT_BUILT;
}

/* Nothing was allocated, so nothing to free. */
void
gpuext_cuda_free(void *dptr)
{
	(void) dptr;
}

/* No pinned memory without CUDA. */
GpuextStatus
gpuext_cuda_alloc_pinned(void **hptr, size_t bytes)
{
	(void) bytes;
	if (hptr)
		*hptr = NULL;
	return GPUEXT_NOT_BUILT;
}

/* Nothing was allocated, so nothing to free. */
void
gpuext_cuda_free_pinned(void *hptr)
{
	(void) hptr;
}

/* No device to copy to. */
GpuextStatus
gpuext_cuda_copy_to_device(void *dst, const void *src, size_t bytes)
{
	(void) dst;
	(void) src;
	(void) bytes;
	return GPUEXT_NOT_BUILT;
}

/* No device to copy from. */
GpuextStatus
gpuext_cuda_copy_to_host(void *dst, const void *src, size_t bytes)
{
	(void) dst;
	(void) src;
	(void) bytes;
	return GPUEXT_NOT_BUILT;
}

/* No device to copy on. */
GpuextStatus
gpuext_cuda_copy_on_device(void *dst, const void *src, size_t bytes)
{
	(void) dst;
	(void) src;
	(void) bytes;
	return GPUEXT_NOT_BUILT;
}

/* No stream to mark. */
GpuextStatus
gpuext_cuda_mark(int slot)
{
	(void) slot;
	return GPUEXT_NOT_BUILT;
}

/* No stream to wait for. */
GpuextStatus
gpuext_cuda_wait(int slot, GpuextPollFn poll, void *arg)
{
	(void) slot;
	(void) poll;
	(void) arg;
	return GPUEXT_NOT_BUILT;
}

/* No device sort, so no scratch. */
GpuextStatus
gpuext_sort_scratch_bytes(GpuextSortAlgo algo, int key_bytes, size_t n, size_t *bytes,
						  size_t *host_bytes)
{
	(void) algo;
	(void) key_bytes;
	(void) n;
	if (bytes)
		*bytes = 0;
	if (host_bytes)
		*host_bytes = 0;
	return GPUEXT_NOT_BUILT;
}

/* No device sort. */
GpuextStatus
gpuext_sort_keys(GpuextSortAlgo algo, int key_bytes, void *keys, size_t n, void *scratch,
				 size_t scratch_bytes, void *host_scratch, size_t host_scratch_bytes,
				 GpuextPollFn poll, void *arg)
{
	(void) host_scratch;
	(void) host_scratch_bytes;
	(void) algo;
	(void) key_bytes;
	(void) keys;
	(void) n;
	(void) scratch;
	(void) scratch_bytes;
	(void) poll;
	(void) arg;
	return GPUEXT_NOT_BUILT;
}

/* No device pairs sort, so no scratch. */
GpuextStatus
gpuext_sort_pairs_scratch_bytes(GpuextSortAlgo algo, int key_bytes, size_t n, size_t *bytes)
{
	(void) algo;
	(void) key_bytes;
	(void) n;
	if (bytes)
		*bytes = 0;
	return GPUEXT_NOT_BUILT;
}

/* No device pairs sort. */
GpuextStatus
gpuext_sort_pairs(GpuextSortAlgo algo, int key_bytes, void *keys, uint32_t *idx, size_t n, void *scratch,
				  size_t scratch_bytes)
{
	(void) algo;
	(void) key_bytes;
	(void) keys;
	(void) idx;
	(void) n;
	(void) scratch;
	(void) scratch_bytes;
	return GPUEXT_NOT_BUILT;
}

/* No device row sort, so no scratch. */
GpuextStatus
gpuext_sort_rows_scratch_bytes(int nwords, size_t n, size_t *bytes)
{
	(void) nwords;
	(void) n;
	if (bytes)
		*bytes = 0;
	return GPUEXT_NOT_BUILT;
}

/* No device row sort. */
GpuextStatus
gpuext_sort_rows(int nwords, int top_bits, const uint64_t *keys, uint32_t *order, uint64_t *sorted_keys,
				 size_t n, void *scratch, size_t scratch_bytes, GpuextPollFn poll, void *arg)
{
	(void) nwords;
	(void) top_bits;
	(void) keys;
	(void) order;
	(void) sorted_keys;
	(void) n;
	(void) scratch;
	(void) scratch_bytes;
	(void) poll;
	(void) arg;
	return GPUEXT_NOT_BUILT;
}

/* No device reduction, so no scratch. */
GpuextStatus
gpuext_reduce_scratch_bytes(int value_bytes, int is_float, size_t n, size_t *bytes)
{
	(void) value_bytes;
	(void) is_float;
	(void) n;
	if (bytes)
		*bytes = 0;
	return GPUEXT_NOT_BUILT;
}

/* No device reduction. */
GpuextStatus
gpuext_reduce(int value_bytes, int is_float, const void *values, size_t n, void *scratch,
			  size_t scratch_bytes, GpuextReduceResult *result)
{
	(void) value_bytes;
	(void) is_float;
	(void) values;
	(void) n;
	(void) scratch;
	(void) scratch_bytes;
	(void) result;
	return GPUEXT_NOT_BUILT;
}

/* No device group states. */
GpuextStatus
gpuext_groups_clear(int is_float, void *states, uint32_t first, uint32_t count)
{
	(void) is_float;
	(void) states;
	(void) first;
	(void) count;
	return GPUEXT_NOT_BUILT;
}

/* No device grouped reduction (the CPU's, cuda/reduce_groups_cpu.c, is in every build). */
GpuextStatus
gpuext_groups_add(int value_bytes, int is_float, const void *values, const uint32_t *groups, size_t n,
				  void *states, uint32_t ngroups)
{
	(void) value_bytes;
	(void) is_float;
	(void) values;
	(void) groups;
	(void) n;
	(void) states;
	(void) ngroups;
	return GPUEXT_NOT_BUILT;
}

/* No device group results. */
GpuextStatus
gpuext_groups_result(int value_bytes, int is_float, void *states, uint32_t ngroups, GpuextGroupResult *results)
{
	(void) value_bytes;
	(void) is_float;
	(void) states;
	(void) ngroups;
	(void) results;
	return GPUEXT_NOT_BUILT;
}

/* No device matrix product (the CPU's, cuda/matmul_cpu.c, is in every build). */
GpuextStatus
gpuext_matmul(GpuextMatmulAlgo algo, int elem_bytes, const void *a, const void *b, void *c, size_t m,
			  size_t k, size_t n)
{
	(void) algo;
	(void) elem_bytes;
	(void) a;
	(void) b;
	(void) c;
	(void) m;
	(void) k;
	(void) n;
	return GPUEXT_NOT_BUILT;
}

/* No devices. */
GpuextStatus
gpuext_cuda_device_count(int *count)
{
	*count = 0;
	return GPUEXT_NOT_BUILT;
}

/* No device to use. */
GpuextStatus
gpuext_cuda_use_device(int dev)
{
	(void) dev;
	return GPUEXT_NOT_BUILT;
}

/* No device to describe. */
GpuextStatus
gpuext_cuda_device_info(int dev, GpuextDeviceInfo *info)
{
	(void) dev;
	(void) info;
	return GPUEXT_NOT_BUILT;
}

/* No pool. */
GpuextStatus
gpuext_cuda_pool_keep(size_t bytes)
{
	(void) bytes;
	return GPUEXT_NOT_BUILT;
}

/* Nothing to pin for. */
GpuextStatus
gpuext_cuda_host_register(void *ptr, size_t bytes)
{
	(void) ptr;
	(void) bytes;
	return GPUEXT_NOT_BUILT;
}

/* Nothing to read in place for. */
GpuextStatus
gpuext_cuda_host_register_read_only(const void *ptr, size_t bytes, const char **device_view)
{
	(void) ptr;
	(void) bytes;
	*device_view = NULL;
	return GPUEXT_NOT_BUILT;
}

/* No device gather, so no scratch. */
GpuextStatus
gpuext_gather_rows_scratch_bytes(size_t n, size_t *bytes)
{
	(void) n;
	if (bytes)
		*bytes = 0;
	return GPUEXT_NOT_BUILT;
}

/* No device gather. */
GpuextStatus
gpuext_gather_rows(const char *rows, size_t rows_bytes, const uint64_t *offsets, const uint32_t *order, size_t n,
				   size_t first, int prepare, char *out, size_t out_bytes, void *scratch, size_t scratch_bytes)
{
	(void) rows;
	(void) rows_bytes;
	(void) offsets;
	(void) order;
	(void) n;
	(void) first;
	(void) prepare;
	(void) out;
	(void) out_bytes;
	(void) scratch;
	(void) scratch_bytes;
	return GPUEXT_NOT_BUILT;
}

/* No device gathering of pages. */
GpuextStatus
gpuext_scan_gather_pages(char *pages, const char *copies, const uint32_t *refs, const char *pool,
						 uint32_t pool_blocks, uint32_t npages)
{
	(void) pages;
	(void) copies;
	(void) refs;
	(void) pool;
	(void) pool_blocks;
	(void) npages;
	return GPUEXT_NOT_BUILT;
}

/* No device scan. */
GpuextStatus
gpuext_scan_heap(const GpuextScanProgram *program, const char *pages, const uint16_t *vis, uint32_t npages,
				 uint64_t *counts, char *outs, size_t outs_bytes)
{
	(void) program;
	(void) pages;
	(void) vis;
	(void) npages;
	(void) counts;
	(void) outs;
	(void) outs_bytes;
	return GPUEXT_NOT_BUILT;
}
