/*
 * sort_radix.cu
 *		LSD radix sort through CUB's DeviceRadixSort (the library baseline).
 *
 * Scratch holds the alternate key buffer (n keys, 256-byte aligned) followed
 * by CUB's temporary storage.  CUB leaves the result in either buffer; if it
 * is the alternate one it is copied back to keys on the stream.
 */
#include <cub/device/device_radix_sort.cuh>

#include "sort_keys.cuh"

namespace gpuext
{

namespace
{

/* CUB with the narrowest item count type that holds n (32-bit offsets are faster). */
template <typename K>
cudaError_t cub_sort_keys(void *temp, size_t &temp_bytes, cub::DoubleBuffer<K> &buffers, size_t n,
						  cudaStream_t stream)
{
	if (n <= UINT32_MAX)
		return cub::DeviceRadixSort::SortKeys(temp, temp_bytes, buffers, (uint32_t) n, 0,
											  (int) (8 * sizeof(K)), stream);
	return cub::DeviceRadixSort::SortKeys(temp, temp_bytes, buffers, (unsigned long long) n, 0,
										  (int) (8 * sizeof(K)), stream);
}

/* Bytes of the alternate key buffer at the start of scratch. */
template <typename K>
size_t alternate_bytes(size_t n)
{
	return align_up(n * sizeof(K), 256);
}

}								/* namespace */

/* Alternate buffer plus CUB's temporary storage for n keys. */
template <typename K>
GpuextStatus radix_scratch_bytes(size_t n, size_t *bytes)
{
	cub::DoubleBuffer<K> buffers(nullptr, nullptr);
	size_t		temp_bytes = 0;
	GpuextStatus st;

	*bytes = 0;
	if (n < 2)
		return GPUEXT_OK;
	st = check_cuda(cub_sort_keys<K>(nullptr, temp_bytes, buffers, n, device_stream()),
					"cub::DeviceRadixSort::SortKeys size query");
	if (st != GPUEXT_OK)
		return st;
	*bytes = alternate_bytes<K>(n) + temp_bytes;
	return GPUEXT_OK;
}

/* Enqueue the CUB sort and, if needed, the copy back into keys. */
template <typename K>
GpuextStatus radix_sort(K *keys, size_t n, void *scratch, size_t scratch_bytes)
{
	cudaStream_t stream = device_stream();
	size_t		alt_bytes = alternate_bytes<K>(n);
	size_t		temp_bytes = scratch_bytes - alt_bytes;
	cub::DoubleBuffer<K> buffers(keys, static_cast<K *>(scratch));
	GpuextStatus st;

	if (n < 2)
		return GPUEXT_OK;
	st = check_cuda(cub_sort_keys<K>(static_cast<char *>(scratch) + alt_bytes, temp_bytes, buffers, n,
									 stream),
					"cub::DeviceRadixSort::SortKeys");
	if (st == GPUEXT_OK)
		st = check_launch("cub::DeviceRadixSort::SortKeys");
	if (st != GPUEXT_OK || buffers.Current() == keys)
		return st;
	return check_cuda(cudaMemcpyAsync(keys, buffers.Current(), n * sizeof(K), cudaMemcpyDeviceToDevice,
									  stream),
					  "copy of radix sort result");
}

template GpuextStatus radix_scratch_bytes<uint32_t>(size_t n, size_t *bytes);
template GpuextStatus radix_scratch_bytes<uint64_t>(size_t n, size_t *bytes);
template GpuextStatus radix_sort<uint32_t>(uint32_t *keys, size_t n, void *scratch, size_t scratch_bytes);
template GpuextStatus radix_sort<uint64_t>(uint64_t *keys, size_t n, void *scratch, size_t scratch_bytes);

}								/* namespace gpuext */
