/*
 * scan_heap_float.h
 *		One operation of the device scan's double precision registers, as
 *		PostgreSQL's float8_pl ... float8_div compute and check it, or, for a
 *		step of real arithmetic, as float4_pl ... float4_div do (rounded to
 *		real after each operation).  Included by scan_heap.h; plain C for
 *		the kernel, the fake device and the CPU.
 */
#ifndef GPUEXT_SCAN_HEAP_FLOAT_H
#define GPUEXT_SCAN_HEAP_FLOAT_H

/* Whether a double is an infinity (either sign). */
static inline GPUEXT_HD int
gpuext_scan_isinf(double d)
{
	uint64_t	u;

	memcpy(&u, &d, sizeof(u));
	return (u & ~(UINT64_C(1) << 63)) == UINT64_C(0x7FF0000000000000);
}

/* An integer rounded once to real, as i8tof and i4tof cast it (not through a double, which rounds first). */
static inline GPUEXT_HD double
gpuext_scan_int_real(int64_t v)
{
#ifdef __CUDA_ARCH__
	return (double) __ll2float_rn((long long) v);
#else
	return (double) (float) v;
#endif
}

/*
 * A numeric column's value (v at scale) as real, as numeric_float4 rounds
 * it (its text read by strtof), where gpuext_scan_numeric_double gives its
 * double: that double rounded to real, unless it lies exactly halfway
 * between two reals and the division was inexact, where the remainder's
 * sign (exact by fma) says on which side the value lies; 0 where there is
 * no double, which the CPU converts.
 */
static inline GPUEXT_HD int
gpuext_scan_numeric_real(int64_t v, int scale, int nan, double *out)
{
	double		q;
	double		p10;
	float		f;
	float		g;
	uint32_t	bits;

	if (!gpuext_scan_numeric_quotient(v, scale, nan, &q, &p10))
		return 0;
#ifdef __CUDA_ARCH__
	f = __double2float_rn(q);
#else
	f = (float) q;
#endif
	*out = (double) f;
	if (*out == q)
		return 1;
	/* the real on q's other side: one step up in magnitude or down (f is not 0, |q| being >= 1e-22) */
	memcpy(&bits, &f, sizeof(bits));
	bits = (q < 0.0) == (q < *out) ? bits + 1 : bits - 1;
	memcpy(&g, &bits, sizeof(g));
	if (((double) f + (double) g) * 0.5 != q)
		return 1;
	q = fma(-q, p10, (double) v);
	if (q != 0.0)
		*out = (q > 0.0) == ((double) g > *out) ? (double) g : *out;
	return 1;
}

/*
 * Whether an operation's result v of operands a and b is one PostgreSQL
 * raises an error for: float8_pl ... float8_div's checks, and float4_pl ...
 * float4_div's for reals (promoted exactly, infinities and zeros kept).
 */
static inline GPUEXT_HD int
gpuext_scan_op_raises(int op, double a, double b, double v)
{
	switch (op)
	{
		case GPUEXT_SCAN_ADD:
		case GPUEXT_SCAN_SUB:
			return gpuext_scan_isinf(v) && !gpuext_scan_isinf(a) && !gpuext_scan_isinf(b);
		case GPUEXT_SCAN_MUL:
			return (gpuext_scan_isinf(v) && !gpuext_scan_isinf(a) && !gpuext_scan_isinf(b)) ||
				(v == 0.0 && a != 0.0 && b != 0.0);
		case GPUEXT_SCAN_DIV:
			return (gpuext_scan_isinf(v) && !gpuext_scan_isinf(a)) ||
				(v == 0.0 && a != 0.0 && !gpuext_scan_isinf(b));
		default:
			return 0;
	}
}

/*
 * One operation of double precision (float8_pl, float8_mi, float8_mul,
 * float8_div, float8um) or, real, of real over operands that hold reals
 * (float4_pl ..., rounded to real; or the cast of a double to real, dtof):
 * 0, or 1 where PostgreSQL raises an error.  Single roundings on the device
 * (no contraction into FMA).
 */
static inline GPUEXT_HD int
gpuext_scan_float_op(int op, int real, double a, double b, double *v)
{
	if (op == GPUEXT_SCAN_DIV && b == 0.0 && a == a)
		return 1;
	if (real)
	{
#ifdef __CUDA_ARCH__
		float		fa = __double2float_rn(a);
#else
		float		fa = (float) a;
#endif
		float		fb = (float) b;
		float		r;

		if (op == GPUEXT_SCAN_TO_REAL)
		{
			*v = (double) fa;
			return (gpuext_scan_isinf(fa) && !gpuext_scan_isinf(a)) || (fa == 0.0f && a != 0.0);
		}
#ifdef __CUDA_ARCH__
		r = op == GPUEXT_SCAN_ADD ? __fadd_rn(fa, fb) : op == GPUEXT_SCAN_SUB ? __fsub_rn(fa, fb) :
			op == GPUEXT_SCAN_MUL ? __fmul_rn(fa, fb) : op == GPUEXT_SCAN_DIV ? __fdiv_rn(fa, fb) : -fa;
#else
		r = op == GPUEXT_SCAN_ADD ? fa + fb : op == GPUEXT_SCAN_SUB ? fa - fb :
			op == GPUEXT_SCAN_MUL ? fa * fb : op == GPUEXT_SCAN_DIV ? fa / fb : -fa;
#endif
		*v = (double) r;
	}
	else
	{
#ifdef __CUDA_ARCH__
		*v = op == GPUEXT_SCAN_ADD ? __dadd_rn(a, b) : op == GPUEXT_SCAN_SUB ? __dsub_rn(a, b) :
			op == GPUEXT_SCAN_MUL ? __dmul_rn(a, b) : op == GPUEXT_SCAN_DIV ? __ddiv_rn(a, b) : -a;
#else
		*v = op == GPUEXT_SCAN_ADD ? a + b : op == GPUEXT_SCAN_SUB ? a - b :
			op == GPUEXT_SCAN_MUL ? a * b : op == GPUEXT_SCAN_DIV ? a / b : -a;
#endif
	}
	return gpuext_scan_op_raises(op, a, b, *v);
}

#endif							/* GPUEXT_SCAN_HEAP_FLOAT_H */
