/*
 * reduce.cu
 *		gpuext_reduce: count, exact sum, min and max of n dense values in one
 *		pass over device memory, then one small kernel that merges the blocks.
 *
 * The pass is persistent-style: a grid sized from the SM count walks the
 * values with a grid-stride loop of 16-byte loads (the unaligned head and
 * tail, fewer than one load's worth, go to the first threads).  Each thread
 * accumulates in registers; warp shuffles and shared memory reduce a block
 * to one BlockPartial in scratch; reduce_final_kernel merges those into the
 * GpuextReduceResult in scratch, which is copied to the caller's pinned
 * result on the stream.
 *
 * Integer sums are exact: int2 and int4 in 64 bits per thread, int8 as sums
 * of its 32-bit halves, 128 bits from the block step on.  Min and max are
 * the sorts' order-preserving keys.
 *
 * Float sums are exact, in the units of agg_accum.c (2^-1074).  Each block
 * anchors a window at the largest exponent of its first loads: four double
 * accumulators A3..A0 that take the parts of each value at and above bit
 * c3, c2 = c3 - 32, c1 = c3 - 64 and c0 = c3 - 96, cut off exactly with the
 * (x + 1.5 * 2^(c + 52)) - 1.5 * 2^(c + 52) split.  A value whose bits all
 * lie in [c0, c3 + 30) is added exactly this way, as long as a thread adds
 * at most 2^21 values (the grid is sized so).  Anything else (values outside
 * the window, subnormals, NaN and infinities) takes a rare branch: NaN and
 * infinities set flags, other values are added to an exact 70-digit
 * accumulator in shared memory (cuda/exact_sum.h).  So every sum is exact,
 * and fast when a block's values span less than about 2^64.
 *
 * Scratch: GpuextReduceResult | one BlockPartial per block | for floats,
 * 70 digits per block (written only by blocks that took the rare branch),
 * each part 256-byte aligned.
 *
 * The per-type accumulators, the window arithmetic and the block's summary
 * are in reduce_accumulate.cuh, included here: the pass and the final merge
 * instantiate them together, and nvcc inlines device code only within one
 * translation unit (no relocatable device code in this build).
 */
#include <cstdint>
#include <cstring>

#include "device_internal.cuh"
#include "reduce_accumulate.cuh"

namespace gpuext
{

namespace
{

constexpr unsigned REDUCE_THREADS = 256;
constexpr unsigned REDUCE_WARPS = REDUCE_THREADS / 32;
constexpr unsigned FINAL_THREADS = 1024;
constexpr unsigned LOADS_IN_FLIGHT = 4;
constexpr int DIGITS = GPUEXT_EXACT_DIGITS;
constexpr size_t MAX_THREAD_ELEMENTS = (size_t) 1 << 20;
constexpr size_t MIN_THREAD_LOADS = 2 * LOADS_IN_FLIGHT;

/*
 * The pass over the values: head (values[0 .. head)), nvec aligned 16-byte
 * loads from values + head, tail (the last tail values).  One BlockPartial
 * per block, plus exact digits for float blocks that needed them.
 */
template <typename T>
__global__ void __launch_bounds__(REDUCE_THREADS)
reduce_blocks_kernel(const T *__restrict__ values, unsigned head, size_t nvec, unsigned tail,
					 BlockPartial *__restrict__ partials, int64_t *__restrict__ block_digits)
{
	constexpr bool is_float = ValueTraits<T>::is_float;
	__shared__ Summary warp_summaries[REDUCE_WARPS];
	__shared__ unsigned long long digits[is_float ? DIGITS : 1];
	__shared__ uint32_t anchor;
	const uint4 *__restrict__ loads = reinterpret_cast<const uint4 *>(values + head);
	const T    *tail_values = values + head + nvec * lanes<T>();
	const size_t stride = (size_t) gridDim.x * REDUCE_THREADS;
	const size_t g = (size_t) blockIdx.x * REDUCE_THREADS + threadIdx.x;
	size_t		i = g;
	Accumulator<T> acc;
	Window		win = {};
	Summary		s;

	if constexpr (is_float)
	{
		uint32_t	e = 0;

		/* Anchor the block's window at the largest exponent among its threads' first values. */
		if (threadIdx.x == 0)
			anchor = 0;
		for (unsigned d = threadIdx.x; d < DIGITS; d += REDUCE_THREADS)
			digits[d] = 0;
		if (g < nvec)
		{
			uint4		w = __ldg(loads + g);
			T			v[lanes<T>()];

			memcpy(v, &w, sizeof(v));
			e = max_exponent(v, lanes<T>());
		}
		if (g < head)
			e = max(e, max_exponent(values + g, 1));
		if (g < tail)
			e = max(e, max_exponent(tail_values + g, 1));
		for (unsigned offset = 16; offset > 0; offset >>= 1)
			e = max(e, __shfl_down_sync(0xFFFFFFFFu, e, offset));
		__syncthreads();
		if (threadIdx.x % 32 == 0)
			atomicMax(&anchor, e);
		__syncthreads();
		win.anchor<ValueTraits<T>::low_zero_bits>(anchor);
	}

	acc.init();
	if (g < head)
		acc.add(values[g], win, digits);
	if (g < tail)
		acc.add(tail_values[g], win, digits);
	for (; i + (LOADS_IN_FLIGHT - 1) * stride < nvec; i += LOADS_IN_FLIGHT * stride)
	{
		uint4		w[LOADS_IN_FLIGHT];

#pragma unroll
		for (unsigned k = 0; k < LOADS_IN_FLIGHT; k++)
			w[k] = __ldg(loads + i + k * stride);
#pragma unroll
		for (unsigned k = 0; k < LOADS_IN_FLIGHT; k++)
			acc.add_load(w[k], win, digits);
	}
	for (; i < nvec; i += stride)
		acc.add_load(__ldg(loads + i), win, digits);

	/* The barrier inside also orders every thread's digit atomics before thread 0 reads them. */
	s = block_reduce<REDUCE_THREADS>(acc.summary(win), warp_summaries);
	if (threadIdx.x != 0)
		return;
	partials[blockIdx.x] = block_partial(s, win);
	if (is_float && (s.flags & FLAG_DIGITS))
		gpuext_exact_normalize_to(reinterpret_cast<const int64_t *>(digits), block_digits + (size_t) blockIdx.x * DIGITS);
}

/*
 * Merge the blocks' partials into *out: digits whose window starts where
 * block 0's does are summed in registers, others (and the exact digits of
 * blocks that wrote them) with shared-memory atomics; then normalise.
 */
template <bool IS_FLOAT>
__global__ void __launch_bounds__(FINAL_THREADS)
reduce_final_kernel(const BlockPartial *__restrict__ partials, unsigned nblocks,
					const int64_t *__restrict__ block_digits, uint64_t n, GpuextReduceResult *__restrict__ out)
{
	__shared__ Summary warp_summaries[FINAL_THREADS / 32];
	__shared__ unsigned long long digits[DIGITS];
	const int	base = partials[0].base_digit;
	Summary		s;

	s.clear();
	for (unsigned d = threadIdx.x; d < DIGITS; d += FINAL_THREADS)
		digits[d] = 0;
	__syncthreads();
	for (unsigned b = threadIdx.x; b < nblocks; b += FINAL_THREADS)
	{
		const BlockPartial *p = &partials[b];

		s.isum += (__int128) (((unsigned __int128) (uint64_t) p->isum_hi << 64) | p->isum_lo);
		s.min_key = Summary::umin64(s.min_key, p->min_key);
		s.max_key = Summary::umax64(s.max_key, p->max_key);
		s.flags |= p->flags;
		if constexpr (!IS_FLOAT)
			continue;
		if (p->base_digit == base)
			for (int k = 0; k < WINDOW_DIGITS; k++)
				s.w[k] += p->window[k];
		else
			for (int k = 0; k < WINDOW_DIGITS; k++)
				atomicAdd(&digits[p->base_digit + k], (unsigned long long) p->window[k]);
		if (p->flags & FLAG_DIGITS)
			for (int d = 0; d < DIGITS; d++)
				atomicAdd(&digits[d], (unsigned long long) block_digits[(size_t) b * DIGITS + d]);
	}
	/* The barrier inside also orders the digit atomics before thread 0 reads them. */
	s = block_reduce<FINAL_THREADS>(s, warp_summaries);
	if (threadIdx.x != 0)
		return;

	out->count = n;
	out->min_key = n > 0 ? s.min_key : 0;
	out->max_key = n > 0 ? s.max_key : 0;
	out->isum_lo = (uint64_t) s.isum;
	out->isum_hi = (int64_t) (s.isum >> 64);
	out->isum_top = 0;
	out->has_nan = (s.flags & FLAG_NAN) != 0;
	out->has_pos_inf = (s.flags & FLAG_POS_INF) != 0;
	out->has_neg_inf = (s.flags & FLAG_NEG_INF) != 0;
	for (int k = 0; k < WINDOW_DIGITS; k++)
		digits[base + k] += (unsigned long long) s.w[k];
	gpuext_exact_normalize_to(reinterpret_cast<const int64_t *>(digits), out->digits);
}

/* Where each part of the scratch lies, and the grid, for n values of one type. */
struct ReduceLayout
{
	unsigned	blocks;
	size_t		partials_off;
	size_t		digits_off;
	size_t		total;
};

/* Round x up to a multiple of 256. */
constexpr size_t align256(size_t x)
{
	return (x + 255) & ~(size_t) 255;
}

/* Blocks of reduce_blocks_kernel<T> that fit on the device at once (cached). */
template <typename T>
GpuextStatus resident_blocks(unsigned *blocks)
{
	static unsigned cached = 0;
	int			sms = 0;
	int			per_sm = 0;
	GpuextStatus st;

	if (cached == 0)
	{
		st = check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0),
						"cudaDeviceGetAttribute(multiProcessorCount)");
		if (st == GPUEXT_OK)
			st = check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_blocks_kernel<T>,
																		  REDUCE_THREADS, 0),
							"cudaOccupancyMaxActiveBlocksPerMultiprocessor");
		if (st != GPUEXT_OK)
			return st;
		cached = (unsigned) (sms > 0 ? sms : 1) * (unsigned) (per_sm > 0 ? per_sm : 1);
	}
	*blocks = cached;
	return GPUEXT_OK;
}

/* The grid (from the SM count; fewer for small n, so that threads make 8 loads; more if one would add over 2^20 values) and scratch. */
template <typename T>
GpuextStatus reduce_layout(size_t n, ReduceLayout *layout)
{
	const size_t loads = n / lanes<T>();
	const size_t per_block = (size_t) REDUCE_THREADS * (MAX_THREAD_ELEMENTS / lanes<T>());
	unsigned	resident = 0;
	size_t		blocks;
	GpuextStatus st;

	if ((st = resident_blocks<T>(&resident)) != GPUEXT_OK)
		return st;
	blocks = (loads + MIN_THREAD_LOADS * REDUCE_THREADS - 1) / (MIN_THREAD_LOADS * REDUCE_THREADS);
	blocks = blocks < resident ? blocks : resident;
	blocks = blocks > (loads + per_block - 1) / per_block ? blocks : (loads + per_block - 1) / per_block;
	blocks = blocks > 0 ? blocks : 1;
	if (blocks > INT32_MAX)
		return set_error(GPUEXT_INVALID, "reduction of %zu values is too large", n);
	layout->blocks = (unsigned) blocks;
	layout->partials_off = align256(sizeof(GpuextReduceResult));
	layout->digits_off = layout->partials_off + align256(blocks * sizeof(BlockPartial));
	layout->total = layout->digits_off + (ValueTraits<T>::is_float ? blocks * DIGITS * sizeof(int64_t) : 0);
	return GPUEXT_OK;
}

/* Enqueue both kernels and the copy of the result to the caller. */
template <typename T>
GpuextStatus reduce_typed(const T *values, size_t n, char *scratch, const ReduceLayout &layout,
						  GpuextReduceResult *result)
{
	cudaStream_t stream = device_stream();
	GpuextReduceResult *d_result = reinterpret_cast<GpuextReduceResult *>(scratch);
	BlockPartial *partials = reinterpret_cast<BlockPartial *>(scratch + layout.partials_off);
	int64_t    *block_digits = reinterpret_cast<int64_t *>(scratch + layout.digits_off);
	size_t		misalign = (size_t) (reinterpret_cast<uintptr_t>(values) % 16) / sizeof(T);
	size_t		head = misalign == 0 ? 0 : lanes<T>() - misalign;
	size_t		nvec;
	size_t		tail;
	GpuextStatus st;

	head = head < n ? head : n;
	nvec = (n - head) / lanes<T>();
	tail = n - head - nvec * lanes<T>();
	reduce_blocks_kernel<T><<<layout.blocks, REDUCE_THREADS, 0, stream>>>(values, (unsigned) head, nvec,
																		   (unsigned) tail, partials,
																		   block_digits);
	if ((st = check_launch("reduce_blocks_kernel")) != GPUEXT_OK)
		return st;
	reduce_final_kernel<ValueTraits<T>::is_float><<<1, FINAL_THREADS, 0, stream>>>(partials, layout.blocks,
																				 block_digits, n, d_result);
	if ((st = check_launch("reduce_final_kernel")) != GPUEXT_OK)
		return st;
	return check_cuda(cudaMemcpyAsync(result, d_result, sizeof(GpuextReduceResult), cudaMemcpyDeviceToHost,
									  stream),
					  "copy of the reduction result");
}

/* Device open, and a value type the reductions know. */
GpuextStatus check_reduce_arguments(int value_bytes, int is_float)
{
	if (!device_is_open())
		return set_error(GPUEXT_NO_DEVICE, "the GPU device has not been opened");
	if (value_bytes != 2 && value_bytes != 4 && value_bytes != 8)
		return set_error(GPUEXT_INVALID, "reduction values must be 2, 4 or 8 bytes wide, got %d", value_bytes);
	if (is_float && value_bytes == 2)
		return set_error(GPUEXT_INVALID, "float reduction values must be 4 or 8 bytes wide, got 2");
	return GPUEXT_OK;
}

/* The layout for the type (value_bytes, is_float) names. */
GpuextStatus layout_for(int value_bytes, int is_float, size_t n, ReduceLayout *layout)
{
	if (is_float)
		return value_bytes == 4 ? reduce_layout<float>(n, layout) : reduce_layout<double>(n, layout);
	switch (value_bytes)
	{
		case 2:
			return reduce_layout<int16_t>(n, layout);
		case 4:
			return reduce_layout<int32_t>(n, layout);
		default:
			return reduce_layout<int64_t>(n, layout);
	}
}

}								/* namespace */

}								/* namespace gpuext */

/* Device scratch gpuext_reduce needs for n values of the type. */
GpuextStatus gpuext_reduce_scratch_bytes(int value_bytes, int is_float, size_t n, size_t *bytes)
{
	gpuext::ReduceLayout layout;
	GpuextStatus st;

	if (bytes == nullptr)
		return gpuext::set_error(GPUEXT_INVALID, "gpuext_reduce_scratch_bytes: null result pointer");
	*bytes = 0;
	if (value_bytes == 16 && !is_float)
		return gpuext::reduce_i128_scratch_bytes(n, bytes);
	if ((st = gpuext::check_reduce_arguments(value_bytes, is_float)) != GPUEXT_OK)
		return st;
	if ((st = gpuext::layout_for(value_bytes, is_float, n, &layout)) != GPUEXT_OK)
		return st;
	*bytes = layout.total;
	return GPUEXT_OK;
}

/* Check the arguments, then enqueue the reduction and the copy of its result; no wait. */
GpuextStatus gpuext_reduce(int value_bytes, int is_float, const void *values, size_t n, void *scratch,
						   size_t scratch_bytes, GpuextReduceResult *result)
{
	gpuext::ReduceLayout layout;
	char	   *s = static_cast<char *>(scratch);
	GpuextStatus st;

	if (value_bytes == 16 && !is_float)
		return gpuext::reduce_i128(values, n, scratch, scratch_bytes, result);
	if ((st = gpuext::check_reduce_arguments(value_bytes, is_float)) != GPUEXT_OK)
		return st;
	if (result == nullptr)
		return gpuext::set_error(GPUEXT_INVALID, "reduction: null result pointer");
	if (n > 0 && (values == nullptr || reinterpret_cast<uintptr_t>(values) % value_bytes != 0))
		return gpuext::set_error(GPUEXT_INVALID, "reduction of %zu values: values pointer %p is null or not %d-byte aligned",
								 n, values, value_bytes);
	if ((st = gpuext::layout_for(value_bytes, is_float, n, &layout)) != GPUEXT_OK)
		return st;
	if (scratch == nullptr || scratch_bytes < layout.total || reinterpret_cast<uintptr_t>(scratch) % 8 != 0)
		return gpuext::set_error(GPUEXT_INVALID,
								 "reduction of %zu values needs %zu bytes of 8-byte aligned scratch, got %zu at %p",
								 n, layout.total, scratch == nullptr ? 0 : scratch_bytes, scratch);
	if (is_float)
		return value_bytes == 4
			? gpuext::reduce_typed(static_cast<const float *>(values), n, s, layout, result)
			: gpuext::reduce_typed(static_cast<const double *>(values), n, s, layout, result);
	switch (value_bytes)
	{
		case 2:
			return gpuext::reduce_typed(static_cast<const int16_t *>(values), n, s, layout, result);
		case 4:
			return gpuext::reduce_typed(static_cast<const int32_t *>(values), n, s, layout, result);
		default:
			return gpuext::reduce_typed(static_cast<const int64_t *>(values), n, s, layout, result);
	}
}
