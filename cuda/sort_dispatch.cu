/*
 * sort_dispatch.cu
 *		gpuext_sort_keys and gpuext_sort_scratch_bytes: argument checks, then
 *		dispatch on algorithm and key width to the per-algorithm templates.
 */
#include <cstdint>

#include "sort_keys.cuh"

namespace gpuext
{

namespace
{

/* More keys than this would overflow byte counts (a bound far above any device). */
constexpr size_t MAX_KEYS = SIZE_MAX / 64;

/* Name of an algorithm for messages. */
const char *algo_name(GpuextSortAlgo algo)
{
	switch (algo)
	{
		case GPUEXT_SORT_BITONIC:
			return "bitonic";
		case GPUEXT_SORT_QUICKSORT:
			return "quicksort";
		case GPUEXT_SORT_ODDEVEN:
			return "oddeven";
		case GPUEXT_SORT_RADIX:
			return "radix";
	}
	return "unknown";
}

/* Checks shared by both entry points. */
GpuextStatus check_arguments(GpuextSortAlgo algo, int key_bytes, size_t n)
{
	if (!device_is_open())
		return set_error(GPUEXT_NO_DEVICE, "the GPU device has not been opened");
	if (algo != GPUEXT_SORT_BITONIC && algo != GPUEXT_SORT_QUICKSORT && algo != GPUEXT_SORT_ODDEVEN &&
		algo != GPUEXT_SORT_RADIX)
		return set_error(GPUEXT_INVALID, "unknown sort algorithm %d", (int) algo);
	if (key_bytes != 4 && key_bytes != 8)
		return set_error(GPUEXT_INVALID, "sort keys must be 4 or 8 bytes wide, got %d", key_bytes);
	if (n > MAX_KEYS)
		return set_error(GPUEXT_INVALID, "%s sort of %zu keys is too large", algo_name(algo), n);
	if (algo == GPUEXT_SORT_ODDEVEN && n > GPUEXT_ODDEVEN_MAX_ELEMENTS)
		return set_error(GPUEXT_INVALID, "oddeven sort is limited to %d elements, got %zu",
						 GPUEXT_ODDEVEN_MAX_ELEMENTS, n);
	return GPUEXT_OK;
}

/* Device and host scratch bytes for one key type. */
template <typename K>
GpuextStatus scratch_bytes(GpuextSortAlgo algo, size_t n, size_t *bytes, size_t *host_bytes)
{
	*bytes = 0;
	*host_bytes = 0;
	switch (algo)
	{
		case GPUEXT_SORT_BITONIC:
		case GPUEXT_SORT_ODDEVEN:
			return GPUEXT_OK;
		case GPUEXT_SORT_QUICKSORT:
			*bytes = quicksort_scratch_bytes<K>(n);
			*host_bytes = quicksort_host_bytes<K>(n);
			return GPUEXT_OK;
		case GPUEXT_SORT_RADIX:
			return radix_scratch_bytes<K>(n, bytes);
	}
	return set_error(GPUEXT_INVALID, "unknown sort algorithm %d", (int) algo);
}

/* Run one algorithm for one key type. */
template <typename K>
GpuextStatus sort(GpuextSortAlgo algo, K *keys, size_t n, void *scratch, size_t scratch_bytes,
				  void *host_scratch, GpuextPollFn poll, void *arg)
{
	switch (algo)
	{
		case GPUEXT_SORT_BITONIC:
			return bitonic_sort<K>(keys, n);
		case GPUEXT_SORT_QUICKSORT:
			return quicksort<K>(keys, n, scratch, host_scratch, poll, arg);
		case GPUEXT_SORT_ODDEVEN:
			return oddeven_sort<K>(keys, n);
		case GPUEXT_SORT_RADIX:
			return radix_sort<K>(keys, n, scratch, scratch_bytes);
	}
	return set_error(GPUEXT_INVALID, "unknown sort algorithm %d", (int) algo);
}

}								/* namespace */

}								/* namespace gpuext */

/* Device and pinned host scratch that gpuext_sort_keys needs for this algorithm, width and n. */
GpuextStatus gpuext_sort_scratch_bytes(GpuextSortAlgo algo, int key_bytes, size_t n, size_t *bytes,
									   size_t *host_bytes)
{
	GpuextStatus st;

	if (bytes == nullptr || host_bytes == nullptr)
		return gpuext::set_error(GPUEXT_INVALID, "gpuext_sort_scratch_bytes: null result pointer");
	*bytes = 0;
	*host_bytes = 0;
	if ((st = gpuext::check_arguments(algo, key_bytes, n)) != GPUEXT_OK)
		return st;
	if (key_bytes == 4)
		return gpuext::scratch_bytes<uint32_t>(algo, n, bytes, host_bytes);
	return gpuext::scratch_bytes<uint64_t>(algo, n, bytes, host_bytes);
}

/* Sort n device keys in place on the stream after checking the arguments and scratch. */
GpuextStatus gpuext_sort_keys(GpuextSortAlgo algo, int key_bytes, void *keys, size_t n, void *scratch,
							  size_t scratch_bytes, void *host_scratch, size_t host_scratch_bytes,
							  GpuextPollFn poll, void *arg)
{
	size_t		need = 0;
	size_t		host_need = 0;
	GpuextStatus st;

	if ((st = gpuext_sort_scratch_bytes(algo, key_bytes, n, &need, &host_need)) != GPUEXT_OK)
		return st;
	if (n > 0 && keys == nullptr)
		return gpuext::set_error(GPUEXT_INVALID, "%s sort of %zu keys: keys pointer is null",
								 gpuext::algo_name(algo), n);
	if (scratch_bytes < need || (need > 0 && scratch == nullptr))
		return gpuext::set_error(GPUEXT_INVALID,
								 "%s sort of %zu %d-byte keys needs %zu bytes of scratch, got %zu",
								 gpuext::algo_name(algo), n, key_bytes, need, scratch == nullptr ? 0 : scratch_bytes);
	if (host_scratch_bytes < host_need || (host_need > 0 && host_scratch == nullptr))
		return gpuext::set_error(GPUEXT_INVALID,
								 "%s sort of %zu %d-byte keys needs %zu bytes of host scratch, got %zu",
								 gpuext::algo_name(algo), n, key_bytes, host_need,
								 host_scratch == nullptr ? 0 : host_scratch_bytes);
	if (key_bytes == 4)
		return gpuext::sort<uint32_t>(algo, static_cast<uint32_t *>(keys), n, scratch, scratch_bytes,
									  host_scratch, poll, arg);
	return gpuext::sort<uint64_t>(algo, static_cast<uint64_t *>(keys), n, scratch, scratch_bytes,
								  host_scratch, poll, arg);
}

/* Device scratch that gpuext_sort_pairs needs for this algorithm, width and n. */
GpuextStatus gpuext_sort_pairs_scratch_bytes(GpuextSortAlgo algo, int key_bytes, size_t n, size_t *bytes)
{
	GpuextStatus st;

	if (bytes == nullptr)
		return gpuext::set_error(GPUEXT_INVALID, "gpuext_sort_pairs_scratch_bytes: null result pointer");
	*bytes = 0;
	if ((st = gpuext::check_arguments(algo, key_bytes, n)) != GPUEXT_OK)
		return st;
	if (algo != GPUEXT_SORT_BITONIC)
		return gpuext::set_error(GPUEXT_INVALID, "%s sort does not sort (key, index) pairs; bitonic does",
								 gpuext::algo_name(algo));
	/* Bitonic sorts the pairs in place in their own arrays. */
	return GPUEXT_OK;
}

/* Sort n device (key, index) pairs in place on the stream after checking the arguments and scratch. */
GpuextStatus gpuext_sort_pairs(GpuextSortAlgo algo, int key_bytes, void *keys, uint32_t *idx, size_t n,
							   void *scratch, size_t scratch_bytes)
{
	size_t		need = 0;
	GpuextStatus st;

	if ((st = gpuext_sort_pairs_scratch_bytes(algo, key_bytes, n, &need)) != GPUEXT_OK)
		return st;
	if (n > 0 && (keys == nullptr || idx == nullptr))
		return gpuext::set_error(GPUEXT_INVALID, "pairs sort of %zu pairs: keys or index pointer is null", n);
	if (((uintptr_t) keys | (uintptr_t) idx) % 16 != 0)
		return gpuext::set_error(GPUEXT_INVALID, "pairs sort: keys and indices must be 16-byte aligned");
	if (scratch_bytes < need || (need > 0 && scratch == nullptr))
		return gpuext::set_error(GPUEXT_INVALID, "pairs sort of %zu %d-byte keys needs %zu bytes of scratch, got %zu",
								 n, key_bytes, need, scratch == nullptr ? 0 : scratch_bytes);
	return gpuext::bitonic_sort_pairs(key_bytes, keys, idx, n);
}
