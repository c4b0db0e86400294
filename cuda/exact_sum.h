/*
 * exact_sum.h
 *		The exact float sum's digits, one copy for the host (src/agg_accum.c,
 *		the fake device, the harness) and the device (cuda/reduce.cu).
 *
 * Every finite double is an integer multiple of 2^-1074 below 2^1024; the
 * sum is kept as such an integer in GPUEXT_EXACT_DIGITS base-2^32 digits
 * (int64 each for carry room), least significant first, which hold any sum of
 * up to 2^64 doubles exactly.  A double d = m * 2^(exp - 1075) adds
 * m << (exp - 1) units: three digits from (exp - 1) / 32 on.  Each addition
 * adds under 2^32 to a digit, so normalise at least every
 * GPUEXT_EXACT_PENDING_MAX additions.  gpuext_exact_round rounds the sum
 * once, to nearest even, for every placement alike.  Plain C; under nvcc the
 * functions are __host__ __device__.
 */
#ifndef GPUEXT_EXACT_SUM_H
#define GPUEXT_EXACT_SUM_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define GPUEXT_HD __host__ __device__
#else
#define GPUEXT_HD
#endif

#define GPUEXT_EXACT_DIGITS 70

/* Additions after which the digits are normalised (well before a digit could overflow). */
#define GPUEXT_EXACT_PENDING_MAX (INT64_C(1) << 30)

/* What gpuext_exact_split found a double to be. */
typedef enum GpuextExactKind
{
	GPUEXT_EXACT_ADDED = 0,		/* finite: added to the digits (zeros change nothing) */
	GPUEXT_EXACT_NAN,
	GPUEXT_EXACT_POS_INF,
	GPUEXT_EXACT_NEG_INF
} GpuextExactKind;

/* floor(v / 2^32), for negative v too. */
static inline GPUEXT_HD int64_t
gpuext_exact_floor_shift32(int64_t v)
{
	return v >= 0 ? v >> 32 : -((-v + INT64_C(0xFFFFFFFF)) >> 32);
}

/* The three base-2^32 digits of v << shift (shift < 32): two in [0, 2^32), the top one signed. */
static inline GPUEXT_HD void
gpuext_exact_shifted_digits(int64_t v, int shift, int64_t *d0, int64_t *d1, int64_t *d2)
{
	__int128	x = (__int128) v * ((__int128) 1 << shift);

	*d0 = (int64_t) ((uint64_t) x & 0xFFFFFFFFu);
	*d1 = (int64_t) ((uint64_t) (x >> 32) & 0xFFFFFFFFu);
	*d2 = (int64_t) (x >> 64);
}

/* Carry digits in into out (may be the same) so that all but the top one are in [0, 2^32). */
static inline GPUEXT_HD void
gpuext_exact_normalize_to(const int64_t *in, int64_t *out)
{
	int64_t		carry = 0;

	for (int i = 0; i < GPUEXT_EXACT_DIGITS - 1; i++)
	{
		int64_t		v = in[i] + carry;

		carry = gpuext_exact_floor_shift32(v);
		out[i] = v - carry * (INT64_C(1) << 32);
	}
	out[GPUEXT_EXACT_DIGITS - 1] = in[GPUEXT_EXACT_DIGITS - 1] + carry;
}

/* Normalise digits in place. */
static inline GPUEXT_HD void
gpuext_exact_normalize(int64_t *digits)
{
	gpuext_exact_normalize_to(digits, digits);
}

/*
 * Split a double into the three digits it adds from digit *first on, or say
 * it is NaN or an infinity (then nothing is to be added).
 */
static inline GPUEXT_HD GpuextExactKind
gpuext_exact_split(double d, int *first, int64_t *d0, int64_t *d1, int64_t *d2)
{
	uint64_t	u;
	uint64_t	m;
	int			exp;
	int			pos;

	memcpy(&u, &d, sizeof(u));
	exp = (int) ((u >> 52) & 0x7FF);
	m = u & ((UINT64_C(1) << 52) - 1);
	if (exp == 0x7FF)
		return m != 0 ? GPUEXT_EXACT_NAN : (u >> 63) ? GPUEXT_EXACT_NEG_INF : GPUEXT_EXACT_POS_INF;
	if (exp == 0)
		exp = 1;
	else
		m |= UINT64_C(1) << 52;
	pos = exp - 1;
	gpuext_exact_shifted_digits((u >> 63) ? -(int64_t) m : (int64_t) m, pos & 31, d0, d1, d2);
	*first = pos >> 5;
	return GPUEXT_EXACT_ADDED;
}

/* Add a double exactly to the digits, or say it is NaN or an infinity. */
static inline GPUEXT_HD GpuextExactKind
gpuext_exact_add_double(int64_t *digits, double d)
{
	int			first;
	int64_t		d0,
				d1,
				d2;
	GpuextExactKind kind = gpuext_exact_split(d, &first, &d0, &d1, &d2);

	if (kind == GPUEXT_EXACT_ADDED)
	{
		digits[first] += d0;
		digits[first + 1] += d1;
		digits[first + 2] += d2;
	}
	return kind;
}

/* Position of the highest set bit of v (v != 0). */
static inline GPUEXT_HD int
gpuext_exact_top_bit(uint64_t v)
{
#ifdef __CUDA_ARCH__
	return 63 - __clzll((long long) v);
#else
	return 63 - __builtin_clzll(v);
#endif
}

/* Up to 64 bits of a normalised non-negative digit string, from bit pos. */
static inline GPUEXT_HD uint64_t
gpuext_exact_bits(const int64_t *digits, int pos, int count)
{
	int			i = pos >> 5;
	unsigned __int128 v = 0;

	for (int k = 2; k >= 0; k--)
		v = (v << 32) | (i + k < GPUEXT_EXACT_DIGITS ? (uint64_t) digits[i + k] : 0);
	v >>= pos & 31;
	return count >= 64 ? (uint64_t) v : (uint64_t) v & ((UINT64_C(1) << count) - 1);
}

/* Whether any bit below pos of a normalised non-negative digit string is set. */
static inline GPUEXT_HD int
gpuext_exact_any_below(const int64_t *digits, int pos)
{
	for (int i = 0; i < pos >> 5; i++)
		if (digits[i] != 0)
			return 1;
	return (pos & 31) != 0 && (digits[pos >> 5] & ((INT64_C(1) << (pos & 31)) - 1)) != 0;
}

/*
 * Normalised digits rounded once (to nearest, ties to even) to a float of
 * mantissa_bits significant bits whose smallest subnormal is 2^min_exponent
 * (53, -1074 for double; 24, -149 for real), returned as a double; +0 for a
 * zero sum.  The caller checks the range of the target type.
 */
static inline GPUEXT_HD double
gpuext_exact_round(const int64_t *normalised_digits, int mantissa_bits, int min_exponent)
{
	int64_t		magnitude[GPUEXT_EXACT_DIGITS];
	const int64_t *d = normalised_digits;
	int			negative = d[GPUEXT_EXACT_DIGITS - 1] < 0;
	int			top,
				high,
				lsb;
	uint64_t	mant;
	double		r;

	if (negative)
	{
		for (int i = 0; i < GPUEXT_EXACT_DIGITS; i++)
			magnitude[i] = -d[i];
		gpuext_exact_normalize(magnitude);
		d = magnitude;
	}
	for (top = GPUEXT_EXACT_DIGITS - 1; top >= 0 && d[top] == 0; top--)
		;
	if (top < 0)
		return 0.0;

	high = top * 32 + gpuext_exact_top_bit((uint64_t) d[top]);
	lsb = high - (mantissa_bits - 1) > min_exponent + 1074 ? high - (mantissa_bits - 1) : min_exponent + 1074;
	mant = high >= lsb ? gpuext_exact_bits(d, lsb, high - lsb + 1) : 0;
	if (lsb > 0 && gpuext_exact_bits(d, lsb - 1, 1) && (gpuext_exact_any_below(d, lsb - 1) || (mant & 1)))
	{
		mant++;
		if (mant == UINT64_C(1) << mantissa_bits)
		{
			mant >>= 1;
			lsb++;
		}
	}
	r = ldexp((double) mant, lsb - 1074);
	return negative ? -r : r;
}

#endif							/* GPUEXT_EXACT_SUM_H */
