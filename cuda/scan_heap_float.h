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

/*
 * A real operation of float4_pl, float4_mi, float4_mul, float4_div or
 * float4um on operands that hold reals, or the cast of a double to real
 * (dtof): 0, or 1 where PostgreSQL raises an error.  Single roundings to
 * real on the device.
 */
static inline GPUEXT_HD int
gpuext_scan_real_op(int op, double da, double db, double *v)
{
#ifdef __CUDA_ARCH__
	float		a = __double2float_rn(da);
#else
	float		a = (float) da;
#endif
	float		b = (float) db;
	float		r;

	if (op == GPUEXT_SCAN_TO_REAL)
	{
		*v = (double) a;
		return (gpuext_scan_isinf(a) && !gpuext_scan_isinf(da)) || (a == 0.0f && da != 0.0);
	}
	switch (op)
	{
		case GPUEXT_SCAN_ADD:
		case GPUEXT_SCAN_SUB:
#ifdef __CUDA_ARCH__
			r = op == GPUEXT_SCAN_ADD ? __fadd_rn(a, b) : __fsub_rn(a, b);
#else
			r = op == GPUEXT_SCAN_ADD ? a + b : a - b;
#endif
			if (gpuext_scan_isinf(r) && !gpuext_scan_isinf(a) && !gpuext_scan_isinf(b))
				return 1;
			break;
		case GPUEXT_SCAN_MUL:
#ifdef __CUDA_ARCH__
			r = __fmul_rn(a, b);
#else
			r = a * b;
#endif
			if ((gpuext_scan_isinf(r) && !gpuext_scan_isinf(a) && !gpuext_scan_isinf(b)) ||
				(r == 0.0f && a != 0.0f && b != 0.0f))
				return 1;
			break;
		case GPUEXT_SCAN_DIV:
			if (b == 0.0f && a == a)
				return 1;
#ifdef __CUDA_ARCH__
			r = __fdiv_rn(a, b);
#else
			r = a / b;
#endif
			if ((gpuext_scan_isinf(r) && !gpuext_scan_isinf(a)) ||
				(r == 0.0f && a != 0.0f && !gpuext_scan_isinf(b)))
				return 1;
			break;
		default:
			r = -a;
			break;
	}
	*v = (double) r;
	return 0;
}

/*
 * A double precision operation of float8_pl, float8_mi, float8_mul,
 * float8_div or float8um (real: float4's): 0, or 1 where PostgreSQL raises
 * an error.  Single roundings on the device (no contraction into FMA).
 */
static inline GPUEXT_HD int
gpuext_scan_float_op(int op, int real, double a, double b, double *v)
{
	if (real)
		return gpuext_scan_real_op(op, a, b, v);
	switch (op)
	{
		case GPUEXT_SCAN_ADD:
		case GPUEXT_SCAN_SUB:
#ifdef __CUDA_ARCH__
			*v = op == GPUEXT_SCAN_ADD ? __dadd_rn(a, b) : __dsub_rn(a, b);
#else
			*v = op == GPUEXT_SCAN_ADD ? a + b : a - b;
#endif
			return gpuext_scan_isinf(*v) && !gpuext_scan_isinf(a) && !gpuext_scan_isinf(b);
		case GPUEXT_SCAN_MUL:
#ifdef __CUDA_ARCH__
			*v = __dmul_rn(a, b);
#else
			*v = a * b;
#endif
			return (gpuext_scan_isinf(*v) && !gpuext_scan_isinf(a) && !gpuext_scan_isinf(b)) ||
				(*v == 0.0 && a != 0.0 && b != 0.0);
		case GPUEXT_SCAN_DIV:
			if (b == 0.0 && a == a)
				return 1;
#ifdef __CUDA_ARCH__
			*v = __ddiv_rn(a, b);
#else
			*v = a / b;
#endif
			return (gpuext_scan_isinf(*v) && !gpuext_scan_isinf(a)) ||
				(*v == 0.0 && a != 0.0 && !gpuext_scan_isinf(b));
		default:
			*v = -a;
			return 0;
	}
}

#endif							/* GPUEXT_SCAN_HEAP_FLOAT_H */
