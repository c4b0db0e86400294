/*
 * reduce_accumulate.cuh
 *		gpuext_reduce's accumulation (reduce.cu): what each thread adds up in
 *		registers (integer sums, float pieces in its block's window, keys and
 *		flags), and how warps and a block fold the threads' summaries into one
 *		BlockPartial.  Included by reduce.cu only, so that this device code is
 *		compiled, and inlined, in the kernels' translation unit.
 */
#ifndef GPUEXT_REDUCE_ACCUMULATE_CUH
#define GPUEXT_REDUCE_ACCUMULATE_CUH

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "device_internal.cuh"

namespace gpuext
{

namespace
{

constexpr int WINDOW_DIGITS = 6;

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

/* Block-uniform constants of a float window (see reduce.cu's header). */
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

}								/* namespace */

}								/* namespace gpuext */

#endif							/* GPUEXT_REDUCE_ACCUMULATE_CUH */
