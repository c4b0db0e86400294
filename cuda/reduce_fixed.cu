/*
 * reduce_fixed.cu
 *		gpuext_reduce of 16-byte values: the count and exact sum of n signed
 *		128-bit integers (numerics as fixed-point integers at one scale, see
 *		src/agg_numeric.c), in 192 bits.
 *
 * A sum of fewer than 2^63 values below 2^127 in magnitude needs at most
 * 191 bits, so the sum is exact with no overflow to detect: each thread adds
 * its values (one 16-byte load each, grid-stride) into a 128-bit low part
 * and a 64-bit count of carries; warp shuffles and shared memory reduce a
 * block to one partial, and one block merges the partials into the result
 * in scratch, copied to the caller's pinned result on the stream.  Integer
 * addition is associative, so the result does not depend on the grid.
 *
 * Scratch: GpuextReduceResult | one Sum192 per block, 256-byte aligned.
 */
#include <cstdint>

#include "device_internal.cuh"

namespace gpuext
{

namespace
{

constexpr unsigned FIXED_THREADS = 256;
constexpr unsigned FIXED_FINAL_THREADS = 256;
constexpr unsigned FIXED_MAX_BLOCKS = 1024;
constexpr size_t FIXED_VALUES_PER_THREAD = 8;

/* A signed 192-bit sum: top * 2^128 + low, low unsigned. */
struct Sum192
{
	unsigned __int128 low;
	int64_t		top;

	/* Add a signed 128-bit value. */
	__device__ void add(__int128 v)
	{
		unsigned __int128 nl = low + (unsigned __int128) v;

		top += (int64_t) (nl < low) - (int64_t) (v < 0);
		low = nl;
	}

	/* Add another sum. */
	__device__ void add(const Sum192 &o)
	{
		unsigned __int128 nl = low + o.low;

		top += o.top + (int64_t) (nl < low);
		low = nl;
	}

	/* Fold in the sum of lane + offset. */
	__device__ void add_shuffled(unsigned offset)
	{
		Sum192		o;
		uint64_t	lo = __shfl_down_sync(0xFFFFFFFFu, (unsigned long long) (uint64_t) low, offset);
		uint64_t	hi = __shfl_down_sync(0xFFFFFFFFu, (unsigned long long) (uint64_t) (low >> 64), offset);

		o.low = ((unsigned __int128) hi << 64) | lo;
		o.top = __shfl_down_sync(0xFFFFFFFFu, (long long) top, offset);
		add(o);
	}
};

/* The block's sum in thread 0 (all threads must call). */
template <unsigned THREADS>
__device__ Sum192 block_sum(Sum192 s, Sum192 *warp_sums)
{
	const unsigned lane = threadIdx.x % 32;
	const unsigned warp = threadIdx.x / 32;

	for (unsigned offset = 16; offset > 0; offset >>= 1)
		s.add_shuffled(offset);
	if (lane == 0)
		warp_sums[warp] = s;
	__syncthreads();
	if (warp == 0)
	{
		s = lane < THREADS / 32 ? warp_sums[lane] : Sum192{0, 0};
		for (unsigned offset = 16; offset > 0; offset >>= 1)
			s.add_shuffled(offset);
	}
	return s;
}

/* One pass: each block's sum of its grid-stride share of the values into partials[blockIdx.x]. */
__global__ void __launch_bounds__(FIXED_THREADS)
reduce_i128_blocks_kernel(const __int128 *__restrict__ values, size_t n, Sum192 *__restrict__ partials)
{
	__shared__ Sum192 warp_sums[FIXED_THREADS / 32];
	const size_t stride = (size_t) gridDim.x * FIXED_THREADS;
	Sum192		s = {0, 0};

	for (size_t i = (size_t) blockIdx.x * FIXED_THREADS + threadIdx.x; i < n; i += stride)
	{
		uint4		w = __ldg(reinterpret_cast<const uint4 *>(values) + i);

		s.add((__int128) (((unsigned __int128) (((uint64_t) w.w << 32) | w.z) << 64) |
						  (((uint64_t) w.y << 32) | w.x)));
	}
	s = block_sum<FIXED_THREADS>(s, warp_sums);
	if (threadIdx.x == 0)
		partials[blockIdx.x] = s;
}

/* Merge the blocks' sums into *out (count n, keys and flags 0, no digits). */
__global__ void __launch_bounds__(FIXED_FINAL_THREADS)
reduce_i128_final_kernel(const Sum192 *__restrict__ partials, unsigned nblocks, uint64_t n,
						 GpuextReduceResult *__restrict__ out)
{
	__shared__ Sum192 warp_sums[FIXED_FINAL_THREADS / 32];
	Sum192		s = {0, 0};

	for (unsigned b = threadIdx.x; b < nblocks; b += FIXED_FINAL_THREADS)
		s.add(partials[b]);
	for (unsigned d = threadIdx.x; d < GPUEXT_EXACT_DIGITS; d += FIXED_FINAL_THREADS)
		out->digits[d] = 0;
	s = block_sum<FIXED_FINAL_THREADS>(s, warp_sums);
	if (threadIdx.x != 0)
		return;
	out->count = n;
	out->min_key = 0;
	out->max_key = 0;
	out->isum_lo = (uint64_t) s.low;
	out->isum_hi = (int64_t) (uint64_t) (s.low >> 64);
	out->isum_top = s.top;
	out->has_nan = 0;
	out->has_pos_inf = 0;
	out->has_neg_inf = 0;
}

/* Blocks for n values: each thread adds at least FIXED_VALUES_PER_THREAD, at most FIXED_MAX_BLOCKS blocks. */
unsigned fixed_blocks(size_t n)
{
	size_t		blocks = (n + FIXED_THREADS * FIXED_VALUES_PER_THREAD - 1) / (FIXED_THREADS * FIXED_VALUES_PER_THREAD);

	blocks = blocks < FIXED_MAX_BLOCKS ? blocks : FIXED_MAX_BLOCKS;
	return blocks > 0 ? (unsigned) blocks : 1;
}

/* Offset of the partials in scratch. */
constexpr size_t fixed_partials_off()
{
	return (sizeof(GpuextReduceResult) + 255) & ~(size_t) 255;
}

}								/* namespace */

/* Scratch for n 16-byte values: the result and one partial per block. */
GpuextStatus reduce_i128_scratch_bytes(size_t n, size_t *bytes)
{
	if (!device_is_open())
		return set_error(GPUEXT_NO_DEVICE, "the GPU device has not been opened");
	if (n >= ((size_t) 1 << 63))
		return set_error(GPUEXT_INVALID, "reduction of %zu values is too large", n);
	*bytes = fixed_partials_off() + (size_t) fixed_blocks(n) * sizeof(Sum192);
	return GPUEXT_OK;
}

/* Check the arguments, then enqueue both kernels and the copy of the result; no wait. */
GpuextStatus reduce_i128(const void *values, size_t n, void *scratch, size_t scratch_bytes,
						 GpuextReduceResult *result)
{
	cudaStream_t stream;
	char	   *s = static_cast<char *>(scratch);
	GpuextReduceResult *d_result = reinterpret_cast<GpuextReduceResult *>(s);
	Sum192	   *partials = reinterpret_cast<Sum192 *>(s + fixed_partials_off());
	unsigned	blocks = fixed_blocks(n);
	size_t		need = 0;
	GpuextStatus st;

	if ((st = reduce_i128_scratch_bytes(n, &need)) != GPUEXT_OK)
		return st;
	if (result == nullptr)
		return set_error(GPUEXT_INVALID, "reduction: null result pointer");
	if (n > 0 && (values == nullptr || reinterpret_cast<uintptr_t>(values) % 16 != 0))
		return set_error(GPUEXT_INVALID, "reduction of %zu values: values pointer %p is null or not 16-byte aligned",
						 n, values);
	if (scratch == nullptr || scratch_bytes < need || reinterpret_cast<uintptr_t>(scratch) % 16 != 0)
		return set_error(GPUEXT_INVALID,
						 "reduction of %zu values needs %zu bytes of 16-byte aligned scratch, got %zu at %p",
						 n, need, scratch == nullptr ? 0 : scratch_bytes, scratch);
	stream = device_stream();
	reduce_i128_blocks_kernel<<<blocks, FIXED_THREADS, 0, stream>>>(static_cast<const __int128 *>(values), n,
																	 partials);
	if ((st = check_launch("reduce_i128_blocks_kernel")) != GPUEXT_OK)
		return st;
	reduce_i128_final_kernel<<<1, FIXED_FINAL_THREADS, 0, stream>>>(partials, blocks, n, d_result);
	if ((st = check_launch("reduce_i128_final_kernel")) != GPUEXT_OK)
		return st;
	return check_cuda(cudaMemcpyAsync(result, d_result, sizeof(GpuextReduceResult), cudaMemcpyDeviceToHost,
									  stream),
					  "copy of the reduction result");
}

}								/* namespace gpuext */
