/*
 * sort_rows.cu
 *		gpuext_sort_rows: row numbers in the order of multi-word keys, as an LSD
 *		sort over the words with CUB's stable DeviceRadixSort::SortPairs.
 *
 * Keys are row-major (word w of row i at keys[i * nwords + w]), as the host
 * builds them.  order starts as the identity; the passes go from the last
 * word to word 0, each sorting (key of word w of row order[i], order[i])
 * pairs stably, so ties on word w keep the order the later words gave.  Each
 * pass gathers word w through the current order into a working buffer, so
 * the caller's keys stay as they were.  Word 0 sorts only its low top_bits.
 * When asked, every row's key is finally gathered through the order into
 * sorted_keys, row-major too.
 *
 * Scratch: working key buffer | alternate key buffer (n words each) |
 * alternate order buffer (n row numbers) | CUB's temporary storage for a
 * 64-bit pass, each 256-byte aligned.
 */
#include <cub/device/device_radix_sort.cuh>

#include "sort_keys.cuh"

namespace gpuext
{

namespace
{

constexpr unsigned ROWS_THREADS = 256;
constexpr int MAX_WORDS = 16;

/* Where each part of the caller's scratch lies for n rows. */
struct RowsLayout
{
	size_t		work_keys_off,
				alt_keys_off,
				alt_order_off,
				temp_off;

	/* Lay out the working and alternate buffers; CUB's storage follows them. */
	explicit RowsLayout(size_t n)
	{
		work_keys_off = 0;
		alt_keys_off = align_up(n * sizeof(uint64_t), 256);
		alt_order_off = alt_keys_off + align_up(n * sizeof(uint64_t), 256);
		temp_off = alt_order_off + align_up(n * sizeof(uint32_t), 256);
	}
};

/* order[i] = i. */
__global__ void __launch_bounds__(ROWS_THREADS) rows_iota_kernel(uint32_t *order, uint32_t n)
{
	size_t		i = (size_t) blockIdx.x * ROWS_THREADS + threadIdx.x;

	if (i < n)
		order[i] = (uint32_t) i;
}

/* dst[i] = word[order[i] * nwords]: one key word in the current row order. */
__global__ void __launch_bounds__(ROWS_THREADS) rows_gather_kernel(const uint64_t *__restrict__ word,
																	const uint32_t *__restrict__ order,
																	uint64_t *__restrict__ dst, int nwords,
																	uint32_t n)
{
	size_t		i = (size_t) blockIdx.x * ROWS_THREADS + threadIdx.x;

	if (i < n)
		dst[i] = word[(size_t) order[i] * nwords];
}

/* sorted[i * nwords + w] = keys[order[i] * nwords + w] for every word w. */
__global__ void __launch_bounds__(ROWS_THREADS) rows_gather_all_kernel(const uint64_t *__restrict__ keys,
																		const uint32_t *__restrict__ order,
																		uint64_t *__restrict__ sorted, int nwords,
																		uint32_t n)
{
	size_t		i = (size_t) blockIdx.x * ROWS_THREADS + threadIdx.x;

	if (i < n)
	{
		uint32_t	row = order[i];

		for (int w = 0; w < nwords; w++)
			sorted[i * nwords + w] = keys[(size_t) row * nwords + w];
	}
}

/* Blocks of ROWS_THREADS that cover n items. */
unsigned rows_blocks(uint32_t n)
{
	return (unsigned) ((n + (size_t) ROWS_THREADS - 1) / ROWS_THREADS);
}

/* CUB's stable pair sort over bits [0, end_bit) with 32-bit item counts. */
cudaError_t cub_sort_pairs(void *temp, size_t &temp_bytes, cub::DoubleBuffer<uint64_t> &keys,
						   cub::DoubleBuffer<uint32_t> &values, uint32_t n, int end_bit, cudaStream_t stream)
{
	return cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys, values, n, 0, end_bit, stream);
}

/* Checks shared by both entry points. */
GpuextStatus check_rows_arguments(int nwords, size_t n)
{
	if (!device_is_open())
		return set_error(GPUEXT_NO_DEVICE, "the GPU device has not been opened");
	if (nwords < 1 || nwords > MAX_WORDS)
		return set_error(GPUEXT_INVALID, "row sort keys must have 1 to %d words, got %d", MAX_WORDS, nwords);
	if (n > UINT32_MAX)
		return set_error(GPUEXT_INVALID, "row sort of %zu rows is too large (limit %u)", n, UINT32_MAX);
	return GPUEXT_OK;
}

/* Enqueue the passes from the last word to word 0; the permutation ends in order. */
GpuextStatus sort_rows_passes(int nwords, int top_bits, const uint64_t *keys, uint32_t *order, uint32_t n,
							  char *scratch, size_t scratch_bytes)
{
	cudaStream_t stream = device_stream();
	RowsLayout	layout(n);
	uint64_t   *work_keys = reinterpret_cast<uint64_t *>(scratch + layout.work_keys_off);
	uint64_t   *alt_keys = reinterpret_cast<uint64_t *>(scratch + layout.alt_keys_off);
	uint32_t   *alt_order = reinterpret_cast<uint32_t *>(scratch + layout.alt_order_off);
	size_t		temp_bytes = scratch_bytes - layout.temp_off;
	cub::DoubleBuffer<uint32_t> values(order, alt_order);
	GpuextStatus st;

	rows_iota_kernel<<<rows_blocks(n), ROWS_THREADS, 0, stream>>>(order, n);
	if ((st = check_launch("rows_iota_kernel")) != GPUEXT_OK)
		return st;
	for (int w = nwords - 1; w >= 0; w--)
	{
		rows_gather_kernel<<<rows_blocks(n), ROWS_THREADS, 0, stream>>>(keys + w, values.Current(), work_keys,
																		nwords, n);
		if ((st = check_launch("rows_gather_kernel")) != GPUEXT_OK)
			return st;

		cub::DoubleBuffer<uint64_t> words(work_keys, alt_keys);

		st = check_cuda(cub_sort_pairs(scratch + layout.temp_off, temp_bytes, words, values, n,
									   w == 0 ? top_bits : 64, stream),
						"cub::DeviceRadixSort::SortPairs");
		if (st == GPUEXT_OK)
			st = check_launch("cub::DeviceRadixSort::SortPairs");
		if (st != GPUEXT_OK)
			return st;
	}
	if (values.Current() == order)
		return GPUEXT_OK;
	return check_cuda(cudaMemcpyAsync(order, values.Current(), (size_t) n * sizeof(uint32_t),
									  cudaMemcpyDeviceToDevice, stream),
					  "copy of row sort result");
}

}								/* namespace */

}								/* namespace gpuext */

/* Device scratch gpuext_sort_rows needs: three buffers and CUB's storage for a 64-bit pass. */
GpuextStatus gpuext_sort_rows_scratch_bytes(int nwords, size_t n, size_t *bytes)
{
	cub::DoubleBuffer<uint64_t> words(nullptr, nullptr);
	cub::DoubleBuffer<uint32_t> values(nullptr, nullptr);
	size_t		temp_bytes = 0;
	GpuextStatus st;

	if (bytes == nullptr)
		return gpuext::set_error(GPUEXT_INVALID, "gpuext_sort_rows_scratch_bytes: null result pointer");
	*bytes = 0;
	if ((st = gpuext::check_rows_arguments(nwords, n)) != GPUEXT_OK)
		return st;
	if (n < 2)
		return GPUEXT_OK;
	/* A full-width pass has the most digit passes, so the most temporary storage. */
	st = gpuext::check_cuda(gpuext::cub_sort_pairs(nullptr, temp_bytes, words, values, (uint32_t) n, 64,
												   gpuext::device_stream()),
							"cub::DeviceRadixSort::SortPairs size query");
	if (st != GPUEXT_OK)
		return st;
	*bytes = gpuext::RowsLayout(n).temp_off + temp_bytes;
	return GPUEXT_OK;
}

/* Sort row numbers (and, if asked, the keys) on the stream, then wait (polling poll) for the result. */
GpuextStatus gpuext_sort_rows(int nwords, int top_bits, const uint64_t *keys, uint32_t *order,
							  uint64_t *sorted_keys, size_t n, void *scratch, size_t scratch_bytes,
							  GpuextPollFn poll, void *arg)
{
	size_t		need = 0;
	GpuextStatus st;

	if ((st = gpuext_sort_rows_scratch_bytes(nwords, n, &need)) != GPUEXT_OK)
		return st;
	if (top_bits < 1 || top_bits > 64)
		return gpuext::set_error(GPUEXT_INVALID, "row sort top_bits must be 1 to 64, got %d", top_bits);
	if (n > 0 && (keys == nullptr || order == nullptr))
		return gpuext::set_error(GPUEXT_INVALID, "row sort of %zu rows: keys or order pointer is null", n);
	if (scratch_bytes < need || (need > 0 && scratch == nullptr))
		return gpuext::set_error(GPUEXT_INVALID, "row sort of %zu rows needs %zu bytes of scratch, got %zu", n,
								 need, scratch == nullptr ? 0 : scratch_bytes);
	if (n == 0)
		return GPUEXT_OK;
	if (n == 1)
		st = gpuext::check_cuda(cudaMemsetAsync(order, 0, sizeof(uint32_t), gpuext::device_stream()),
								"cudaMemsetAsync of the row order");
	else
		st = gpuext::sort_rows_passes(nwords, top_bits, keys, order, (uint32_t) n, static_cast<char *>(scratch),
									  scratch_bytes);
	if (st == GPUEXT_OK && sorted_keys != nullptr)
	{
		gpuext::rows_gather_all_kernel<<<gpuext::rows_blocks((uint32_t) n), gpuext::ROWS_THREADS, 0,
										 gpuext::device_stream()>>>(keys, order, sorted_keys, nwords, (uint32_t) n);
		st = gpuext::check_launch("rows_gather_all_kernel");
	}
	if (st != GPUEXT_OK)
		return st;
	return gpuext::stream_wait(poll, arg);
}
