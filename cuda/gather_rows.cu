/*
 * gather_rows.cu
 *		gpuext_gather_rows: rows kept in device memory, brought together in
 *		sorted order a piece at a time (GpuSort's rows past its host budget).
 *
 * Prepare: every row's length in sorted order, then CUB's DeviceScan turns
 * them into where each row ends in the sorted output.  A piece from row
 * first: one thread finds how many rows fit (a binary search over those
 * ends) and writes the header; then a warp a row copies each row's 8-byte
 * words to its place.  Offsets are checked on the device, so a row that lies
 * outside rows (or is unaligned) is empty and nothing is read or written
 * outside the buffers named.
 *
 * Scratch: lengths | ends (n words each) | CUB's temporary storage, each
 * 256-byte aligned.
 */
#include <algorithm>

#include <cub/device/device_scan.cuh>

#include "sort_keys.cuh"

namespace gpuext
{

namespace
{

constexpr unsigned GATHER_THREADS = 256;
constexpr unsigned GATHER_WARPS = GATHER_THREADS / 32;

/* Where each part of the scratch lies for n rows. */
struct GatherLayout
{
	size_t		lens_off,
				ends_off,
				temp_off;

	explicit GatherLayout(size_t n)
	{
		lens_off = 0;
		ends_off = align_up(n * sizeof(uint64_t), 256);
		temp_off = ends_off + align_up(n * sizeof(uint64_t), 256);
	}
};

/* Row i of the sorted order: its start and length in rows, empty if its offsets are bad. */
__device__ __forceinline__ void row_span(const uint64_t *__restrict__ offsets, const uint32_t *__restrict__ order,
										 uint64_t n, uint64_t rows_bytes, uint64_t i, uint64_t &start,
										 uint64_t &len)
{
	uint32_t	r = order[i];
	uint64_t	a,
				b;

	start = len = 0;
	if (r >= n)
		return;
	a = offsets[r];
	b = offsets[r + 1];
	if (a > b || b > rows_bytes || ((a | b) & 7))
		return;
	start = a;
	len = b - a;
}

/* lens[i] = length of row order[i]. */
__global__ void __launch_bounds__(GATHER_THREADS) gather_lengths_kernel(const uint64_t *__restrict__ offsets,
																		 const uint32_t *__restrict__ order,
																		 uint64_t *__restrict__ lens, uint64_t n,
																		 uint64_t rows_bytes)
{
	uint64_t	i = (uint64_t) blockIdx.x * GATHER_THREADS + threadIdx.x;
	uint64_t	start,
				len;

	if (i >= n)
		return;
	row_span(offsets, order, n, rows_bytes, i, start, len);
	lens[i] = len;
}

/* One thread: the rows from first (most at most) whose ends fit in budget (ends ascend), into the header. */
__global__ void gather_header_kernel(const uint64_t *__restrict__ ends, uint64_t first, uint64_t most,
									 uint64_t budget, GpuextGatherHeader *header)
{
	uint64_t	base = first > 0 ? ends[first - 1] : 0;
	uint64_t	lo = first,
				hi = first + most;

	/* The first i in [first, first + most) with ends[i] - base > budget, or first + most */
	while (lo < hi)
	{
		uint64_t	mid = lo + (hi - lo) / 2;

		if (ends[mid] - base > budget)
			hi = mid;
		else
			lo = mid + 1;
	}
	header->rows = lo - first;
	header->bytes = lo > first ? ends[lo - 1] - base : 0;
}

/* A warp a row: copy the header's rows to their places after it, never past budget. */
__global__ void __launch_bounds__(GATHER_THREADS) gather_copy_kernel(const char *__restrict__ rows,
																	  uint64_t rows_bytes,
																	  const uint64_t *__restrict__ offsets,
																	  const uint32_t *__restrict__ order,
																	  const uint64_t *__restrict__ ends, uint64_t n,
																	  uint64_t first, uint64_t budget,
																	  char *__restrict__ out)
{
	const GpuextGatherHeader *header = reinterpret_cast<const GpuextGatherHeader *>(out);
	uint64_t	k = (uint64_t) blockIdx.x * GATHER_WARPS + threadIdx.x / 32;
	unsigned	lane = threadIdx.x % 32;
	uint64_t	i = first + k;
	uint64_t	base,
				at,
				start,
				len;
	const uint64_t *src;
	uint64_t   *dst;

	if (k >= header->rows || i >= n)
		return;
	base = first > 0 ? ends[first - 1] : 0;
	at = (i > 0 ? ends[i - 1] : 0) - base;
	row_span(offsets, order, n, rows_bytes, i, start, len);
	if (at > budget || len > budget - at)
		return;
	src = reinterpret_cast<const uint64_t *>(rows + start);
	dst = reinterpret_cast<uint64_t *>(out + sizeof(GpuextGatherHeader) + at);
	for (uint64_t w = lane; w < len / 8; w += 32)
		dst[w] = src[w];
}

/* Blocks of n threads, or of n warps. */
unsigned gather_blocks(uint64_t n, unsigned per_block)
{
	return (unsigned) ((n + per_block - 1) / per_block);
}

}								/* namespace */

}								/* namespace gpuext */

/* Device scratch gpuext_gather_rows needs: lengths, ends and CUB's scan storage. */
GpuextStatus gpuext_gather_rows_scratch_bytes(size_t n, size_t *bytes)
{
	size_t		temp_bytes = 0;
	GpuextStatus st;

	if (bytes == nullptr)
		return gpuext::set_error(GPUEXT_INVALID, "gpuext_gather_rows_scratch_bytes: null result pointer");
	*bytes = 0;
	if (!gpuext::device_is_open())
		return gpuext::set_error(GPUEXT_NO_DEVICE, "the GPU device has not been opened");
	if (n > UINT32_MAX)
		return gpuext::set_error(GPUEXT_INVALID, "gather of %zu rows is too large (limit %u)", n, UINT32_MAX);
	st = gpuext::check_cuda(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, (const uint64_t *) nullptr,
														  (uint64_t *) nullptr, (uint32_t) std::max(n, (size_t) 1),
														  gpuext::device_stream()),
							"cub::DeviceScan::InclusiveSum size query");
	if (st != GPUEXT_OK)
		return st;
	*bytes = gpuext::GatherLayout(n).temp_off + temp_bytes;
	return GPUEXT_OK;
}

/* Enqueue (prepare and) the gather of the rows from first that fit in out. */
GpuextStatus gpuext_gather_rows(const char *rows, size_t rows_bytes, const uint64_t *offsets,
								const uint32_t *order, size_t n, size_t first, int prepare, char *out,
								size_t out_bytes, void *scratch, size_t scratch_bytes)
{
	cudaStream_t stream;
	gpuext::GatherLayout layout(n);
	char	   *s = static_cast<char *>(scratch);
	uint64_t   *lens = reinterpret_cast<uint64_t *>(s + layout.lens_off);
	uint64_t   *ends = reinterpret_cast<uint64_t *>(s + layout.ends_off);
	uint64_t	budget;
	uint64_t	most;
	size_t		need = 0;
	size_t		temp_bytes;
	GpuextStatus st;

	if ((st = gpuext_gather_rows_scratch_bytes(n, &need)) != GPUEXT_OK)
		return st;
	if (first > n || scratch == nullptr || scratch_bytes < need || out == nullptr ||
		out_bytes < sizeof(GpuextGatherHeader) || ((uintptr_t) out & 7) ||
		(n > 0 && (rows == nullptr || offsets == nullptr || order == nullptr)))
		return gpuext::set_error(GPUEXT_INVALID, "gather of %zu rows from %zu: bad arguments", n, first);
	stream = gpuext::device_stream();
	if (prepare && n > 0)
	{
		gpuext::gather_lengths_kernel<<<gpuext::gather_blocks(n, gpuext::GATHER_THREADS), gpuext::GATHER_THREADS,
										0, stream>>>(offsets, order, lens, n, rows_bytes);
		if ((st = gpuext::check_launch("gather_lengths_kernel")) != GPUEXT_OK)
			return st;
		temp_bytes = scratch_bytes - layout.temp_off;
		st = gpuext::check_cuda(cub::DeviceScan::InclusiveSum(s + layout.temp_off, temp_bytes,
															  (const uint64_t *) lens, ends, (uint32_t) n, stream),
								"cub::DeviceScan::InclusiveSum");
		if (st == GPUEXT_OK)
			st = gpuext::check_launch("cub::DeviceScan::InclusiveSum");
		if (st != GPUEXT_OK)
			return st;
	}
	/* Rows are 8 bytes at least, so no more than budget / 8 fit (bad, empty rows are not counted past that) */
	budget = out_bytes - sizeof(GpuextGatherHeader);
	most = std::min((uint64_t) (n - first), budget / 8);
	gpuext::gather_header_kernel<<<1, 1, 0, stream>>>(ends, first, most, budget,
													   reinterpret_cast<GpuextGatherHeader *>(out));
	if ((st = gpuext::check_launch("gather_header_kernel")) != GPUEXT_OK)
		return st;
	if (most == 0)
		return GPUEXT_OK;
	gpuext::gather_copy_kernel<<<gpuext::gather_blocks(most, gpuext::GATHER_WARPS), gpuext::GATHER_THREADS, 0,
								 stream>>>(rows, rows_bytes, offsets, order, ends, n, first, budget, out);
	return gpuext::check_launch("gather_copy_kernel");
}
