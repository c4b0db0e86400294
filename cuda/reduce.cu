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
 * One file past 800 lines, on purpose: the pass, its per-type accumulators,
 * the window arithmetic and the final merge share the scratch layout and
 * are instantiated together, and nvcc inlines device code only within one
 * translation unit (no relocatable device code in this build).
 */
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "device_internal.cuh"

namespace gpuext
{

namespace
{

constexpr unsigned REDUCE_THREADS = 256;
constexpr unsigned REDUCE_WARPS = REDUCE_THREADS / 32;
constexpr unsigned FINAL_THREADS = 1024;
constexpr unsigned LOADS_IN_FLIGHT = 4;
constexpr int DIGITS = GPUEXT_EXACT_DIGITS;
constexpr int WINDOW_DIGITS = 6;
constexpr size_t MAX_THREAD_ELEMENTS = (size_t) 1 << 20;
constexpr size_t MIN_THREAD_LOADS = 2 * LOADS_IN_FLIGHT;

/* The window's top accumulator (c3) lies this far above the anchor's exponent, headroom included. */
constexpr int WINDOW_TOP_ABOVE_ANCHOR = 8 + 22;

enum : uint32_t
{
	FLAG_NAN = 1,
	FLAG_POS_INF = 2,
	FLAG_NEG_INF = 4,
	FLAG_DIGITS = 8				/* the block wrote exact digits for values outside its window */
};

/* One block's contribution, as reduce_final_kernel reads it. */
struct BlockPartial
{
	uint64_t	min_key;
	uint64_t	max_key;
	uint64_t	isum_lo;
	int64_t		isum_hi;
	int64_t		window[WINDOW_DIGITS];	/* float sum, base-2^32 digits from base_digit on */
	int32_t		base_digit;
	uint32_t	flags;
};

/* What threads, warps and blocks reduce: keys, flags, 128-bit integer sum, float pieces or digits. */
struct Summary
{
	__int128	isum;
	int64_t		w[WINDOW_DIGITS];
	uint64_t	min_key;
	uint64_t	max_key;
	uint32_t	flags;

	/* The summary of nothing. */
	__device__ void clear()
	{
		isum = 0;
		for (int k = 0; k < WINDOW_DIGITS; k++)
			w[k] = 0;
		min_key = ~(uint64_t) 0;
		max_key = 0;
		flags = 0;
	}

	/* Fold in the summary of lane + offset. */
	__device__ void add_shuffled(unsigned offset)
	{
		uint64_t	lo = __shfl_down_sync(0xFFFFFFFFu, (unsigned long long) isum, offset);
		int64_t		hi = __shfl_down_sync(0xFFFFFFFFu, (long long) (isum >> 64), offset);

		isum += (__int128) (((unsigned __int128) (uint64_t) hi << 64) | lo);
		for (int k = 0; k < WINDOW_DIGITS; k++)
			w[k] += __shfl_down_sync(0xFFFFFFFFu, (long long) w[k], offset);
		min_key = umin64(min_key, __shfl_down_sync(0xFFFFFFFFu, (unsigned long long) min_key, offset));
		max_key = umax64(max_key, __shfl_down_sync(0xFFFFFFFFu, (unsigned long long) max_key, offset));
		flags |= __shfl_down_sync(0xFFFFFFFFu, flags, offset);
	}

	/* Unsigned 64-bit min and max. */
	__device__ static uint64_t umin64(uint64_t a, uint64_t b)
	{
		return a < b ? a : b;
	}
	__device__ static uint64_t umax64(uint64_t a, uint64_t b)
	{
		return a > b ? a : b;
	}
};

/* Reduce a Summary over the block; the result is valid in thread 0.  All threads must call. */
template <unsigned THREADS>
__device__ Summary block_reduce(Summary s, Summary *shared)
{
	const unsigned lane = threadIdx.x % 32;
	const unsigned warp = threadIdx.x / 32;

	for (unsigned offset = 16; offset > 0; offset >>= 1)
		s.add_shuffled(offset);
	if (lane == 0)
		shared[warp] = s;
	__syncthreads();
	if (warp == 0)
	{
		if (lane < THREADS / 32)
			s = shared[lane];
		else
			s.clear();
		for (unsigned offset = 16; offset > 0; offset >>= 1)
			s.add_shuffled(offset);
	}
	return s;
}

/* Per value type: key width, lanes per 16-byte load, and for floats the IEEE layout. */
template <typename T>
struct ValueTraits;

template <>
struct ValueTraits<int16_t>
{
	using Key = uint32_t;
	static constexpr bool is_float = false;
	static constexpr int16_t lowest = INT16_MIN;
	static constexpr int16_t highest = INT16_MAX;
};

template <>
struct ValueTraits<int32_t>
{
	using Key = uint32_t;
	static constexpr bool is_float = false;
	static constexpr int32_t lowest = INT32_MIN;
	static constexpr int32_t highest = INT32_MAX;
};

template <>
struct ValueTraits<int64_t>
{
	using Key = uint64_t;
	static constexpr bool is_float = false;
	static constexpr int64_t lowest = INT64_MIN;
	static constexpr int64_t highest = INT64_MAX;
};

template <>
struct ValueTraits<float>
{
	using Key = uint32_t;
	using Bits = uint32_t;
	static constexpr bool is_float = true;
	static constexpr Bits quiet_nan = 0x7FC00000u;
	/* A float widened to double has 29 low mantissa bits clear. */
	static constexpr int low_zero_bits = 29;
};

template <>
struct ValueTraits<double>
{
	using Key = uint64_t;
	using Bits = uint64_t;
	static constexpr bool is_float = true;
	static constexpr Bits quiet_nan = UINT64_C(0x7FF8000000000000);
	static constexpr int low_zero_bits = 0;
};

/* Values per 16-byte load. */
template <typename T>
__host__ __device__ constexpr unsigned lanes()
{
	return 16 / sizeof(T);
}

/* Signed integer to its key: flip the sign bit (int2 widened to 32 bits first, as sort_keys.c). */
template <typename T>
__device__ inline uint64_t int_key(T v)
{
	if constexpr (sizeof(T) == 8)
		return (uint64_t) v ^ (UINT64_C(1) << 63);
	else
		return (uint32_t) (int32_t) v ^ 0x80000000u;
}

/* Float bits to key: negatives all bits inverted, positives sign bit set (NaN already canonical). */
template <typename B>
__device__ inline B float_key(B bits)
{
	using S = typename std::make_signed<B>::type;
	constexpr B sign = (B) 1 << (8 * sizeof(B) - 1);

	return bits ^ ((B) ((S) bits >> (8 * sizeof(B) - 1)) | sign);
}

/* Exponent field of a double. */
__device__ inline uint32_t exponent_field(double x)
{
	return ((uint32_t) __double2hiint(x) >> 20) & 0x7FF;
}

/* Block-uniform constants of a float window (see the file header). */
struct Window
{
	uint32_t	e_lo;			/* exponent fields e_lo .. e_lo + span take the fast path */
	uint32_t	span;
	int			c0;				/* unit (2^-1074) position of A0; Ak is at c0 + 32k */
	int			scaled_c0;		/* the same after scaling by 2^-shift */
	double		scale;			/* 2^-shift keeps the splitters finite near the top of the range */
	double		split3;			/* 1.5 * 2^(ck + 52), scaled */
	double		split2;
	double		split1;

	/* The window whose top exponent field is anchor + headroom, clamped to the finite range. */
	template <int LOW_ZERO_BITS>
	__device__ void anchor(uint32_t anchor_exponent)
	{
		int			c3 = (int) anchor_exponent + WINDOW_TOP_ABOVE_ANCHOR;
		int			shift;

		/* c0 >= 0, and exponent fields up to e_lo + span = c3 - 22 <= 2046 (never Inf or NaN). */
		c3 = c3 < 96 ? 96 : c3 > 2068 ? 2068 : c3;
		shift = c3 > 2040 ? c3 - 2040 : 0;
		c0 = c3 - 96;
		scaled_c0 = c0 - shift;
		e_lo = (uint32_t) (c3 - 95 - LOW_ZERO_BITS);
		span = 73 + LOW_ZERO_BITS;
		scale = __longlong_as_double((long long) (1023 - shift) << 52);
		split3 = splitter(c3 - shift);
		split2 = splitter(c3 - 32 - shift);
		split1 = splitter(c3 - 64 - shift);
	}

	/* 1.5 * 2^(c + 52) units of 2^-1074, as a double. */
	__device__ static double splitter(int c)
	{
		return __longlong_as_double(((long long) (c + 52 - 1074 + 1023) << 52) | (1LL << 51));
	}
};

/*
 * A value the window cannot take: set the NaN or infinity flag, or add a
 * finite value exactly to the block's digits.  Returns the flags to set.
 */
__device__ __forceinline__ uint32_t odd_float(double x, unsigned long long *digits)
{
	int			first;
	int64_t		d0,
				d1,
				d2;

	switch (gpuext_exact_split(x, &first, &d0, &d1, &d2))
	{
		case GPUEXT_EXACT_NAN:
			return FLAG_NAN;
		case GPUEXT_EXACT_POS_INF:
			return FLAG_POS_INF;
		case GPUEXT_EXACT_NEG_INF:
			return FLAG_NEG_INF;
		case GPUEXT_EXACT_ADDED:
			break;
	}
	atomicAdd(&digits[first], (unsigned long long) d0);
	atomicAdd(&digits[first + 1], (unsigned long long) d1);
	atomicAdd(&digits[first + 2], (unsigned long long) d2);
	return FLAG_DIGITS;
}

/* A double that is an integer multiple of 2^unit units (below 2^63 of them), as that integer. */
__device__ int64_t units_of(double a, int unit)
{
	uint64_t	u = (uint64_t) __double_as_longlong(a);
	int			e = (int) (u >> 52) & 0x7FF;
	uint64_t	m = u & ((UINT64_C(1) << 52) - 1);
	int			shift;
	int64_t		r;

	if (e == 0 && m == 0)
		return 0;
	if (e == 0)
		e = 1;
	else
		m |= UINT64_C(1) << 52;
	shift = e - 1 - unit;
	if (shift >= 0)
		r = (int64_t) (m << (shift > 10 ? 10 : shift));
	else
		r = -shift >= 64 ? 0 : (int64_t) (m >> -shift);
	return (u >> 63) ? -r : r;
}

/* Per-thread state for integer values: sum, min and max in registers. */
template <typename T>
struct IntAccumulator
{
	int64_t		sum;			/* int8: sum of the low 32-bit halves, unsigned */
	int64_t		sum_high;		/* int8: sum of the high halves, signed */
	T			vmin;
	T			vmax;

	/* Nothing added yet. */
	__device__ void init()
	{
		sum = 0;
		sum_high = 0;
		vmin = ValueTraits<T>::highest;
		vmax = ValueTraits<T>::lowest;
	}

	/* Add one value (integers have no window). */
	__device__ void add(T v, const Window &, unsigned long long *)
	{
		if constexpr (sizeof(T) == 8)
		{
			sum += (uint32_t) v;
			sum_high += (int32_t) (v >> 32);
		}
		else
			sum += v;
		vmin = v < vmin ? v : vmin;
		vmax = v > vmax ? v : vmax;
	}

	/* Add one 16-byte load; int2 sums its eight lanes in 32 bits first. */
	__device__ void add_load(const uint4 &w, const Window &win, unsigned long long *digits)
	{
		T			v[lanes<T>()];

		memcpy(v, &w, sizeof(v));
		if constexpr (sizeof(T) == 2)
		{
			int32_t		s = 0;

#pragma unroll
			for (unsigned i = 0; i < lanes<T>(); i++)
			{
				s += v[i];
				vmin = v[i] < vmin ? v[i] : vmin;
				vmax = v[i] > vmax ? v[i] : vmax;
			}
			sum += s;
		}
		else
		{
#pragma unroll
			for (unsigned i = 0; i < lanes<T>(); i++)
				add(v[i], win, digits);
		}
	}

	/* This thread's summary. */
	__device__ Summary summary(const Window &) const
	{
		Summary		s;

		s.clear();
		s.isum = (__int128) sum_high * ((__int128) 1 << 32) + sum;
		s.min_key = int_key(vmin);
		s.max_key = int_key(vmax);
		return s;
	}
};

/* Per-thread state for float values: the window's four accumulators, keys and flags. */
template <typename T>
struct FloatAccumulator
{
	using Traits = ValueTraits<T>;
	using Key = typename Traits::Key;
	using Bits = typename Traits::Bits;

	double		a3,
				a2,
				a1,
				a0;
	Key			kmin;
	Key			kmax;
	uint32_t	flags;

	/* Nothing added yet. */
	__device__ void init()
	{
		a3 = a2 = a1 = a0 = 0.0;
		kmin = ~(Key) 0;
		kmax = 0;
		flags = 0;
	}

	/* Add one value: keys, then the exact split into the window (or the rare branch). */
	__device__ void add(T v, const Window &win, unsigned long long *digits)
	{
		Bits		bits;
		double		x = (double) v;
		double		h;
		Key			key;

		memcpy(&bits, &v, sizeof(bits));
		if (exponent_field(x) - win.e_lo > win.span && x != 0.0)
		{
			uint32_t	f = odd_float(x, digits);

			flags |= f;
			if (f & FLAG_NAN)
				bits = Traits::quiet_nan;
			x = 0.0;
		}
		key = float_key(bits);
		kmin = key < kmin ? key : kmin;
		kmax = key > kmax ? key : kmax;

		x = __dmul_rn(x, win.scale);
		h = __dsub_rn(__dadd_rn(x, win.split3), win.split3);
		a3 = __dadd_rn(a3, h);
		x = __dsub_rn(x, h);
		h = __dsub_rn(__dadd_rn(x, win.split2), win.split2);
		a2 = __dadd_rn(a2, h);
		x = __dsub_rn(x, h);
		h = __dsub_rn(__dadd_rn(x, win.split1), win.split1);
		a1 = __dadd_rn(a1, h);
		a0 = __dadd_rn(a0, __dsub_rn(x, h));
	}

	/* Add one 16-byte load. */
	__device__ void add_load(const uint4 &w, const Window &win, unsigned long long *digits)
	{
		T			v[lanes<T>()];

		memcpy(v, &w, sizeof(v));
#pragma unroll
		for (unsigned i = 0; i < lanes<T>(); i++)
			add(v[i], win, digits);
	}

	/* This thread's summary: the accumulators as integers in units of 2^ck. */
	__device__ Summary summary(const Window &win) const
	{
		Summary		s;

		s.clear();
		s.w[0] = units_of(a0, win.scaled_c0);
		s.w[1] = units_of(a1, win.scaled_c0 + 32);
		s.w[2] = units_of(a2, win.scaled_c0 + 64);
		s.w[3] = units_of(a3, win.scaled_c0 + 96);
		s.min_key = kmin;
		s.max_key = kmax;
		s.flags = flags;
		return s;
	}
};

/* Largest finite exponent field among a load's lanes (0 if none). */
template <typename T>
__device__ uint32_t max_exponent(const T *v, unsigned count)
{
	uint32_t	m = 0;

	for (unsigned i = 0; i < count; i++)
	{
		uint32_t	e = exponent_field((double) v[i]);

		m = e != 0x7FF && e > m ? e : m;
	}
	return m;
}

/* A block's summary as its partial: float pieces become six digits from c0 / 32 on. */
__device__ BlockPartial block_partial(const Summary &s, const Window &win)
{
	BlockPartial p;

	p.min_key = s.min_key;
	p.max_key = s.max_key;
	p.isum_lo = (uint64_t) s.isum;
	p.isum_hi = (int64_t) (s.isum >> 64);
	for (int k = 0; k < WINDOW_DIGITS; k++)
		p.window[k] = 0;
	/* Piece k is s.w[k] units of 2^(c0 + 32k): three digits from c0 / 32 + k on. */
	for (int k = 0; k < 4; k++)
	{
		int64_t		d0,
					d1,
					d2;

		gpuext_exact_shifted_digits(s.w[k], win.c0 & 31, &d0, &d1, &d2);
		p.window[k] += d0;
		p.window[k + 1] += d1;
		p.window[k + 2] += d2;
	}
	p.base_digit = win.c0 >> 5;
	p.flags = s.flags;
	return p;
}

/* Per value type, the thread state the pass keeps in registers. */
template <typename T>
using Accumulator = typename std::conditional<ValueTraits<T>::is_float, FloatAccumulator<T>,
											  IntAccumulator<T>>::type;

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
