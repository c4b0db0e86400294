/*
 * matmul_cpu.c
 *		gpuext_matmul_cpu (gpuext_cuda.h): the CPU's matrix product, in every
 *		build, element by element in the order of the kernels of cuda/matmul.cu.
 *
 * Each element of C is +0, then fma(A[i][0], B[0][j], .), then
 * fma(A[i][1], B[1][j], .), ... up to k - 1, as one GPU thread does it.  The
 * cache blocks here (columns of C, then depth k) change when an element's
 * multiply-adds happen, never their order, so the bits are those of the
 * device.  Plain C: no postgres.h.  Built twice by target_clones: with the
 * FMA instruction where the CPU has one (the loops over j then vectorise),
 * else calling the C library's fma, which is exact everywhere.
 */
#include <math.h>
#include <stddef.h>

#include "gpuext_cuda.h"

/* Columns of C a block, and k a block: a CPU_DEPTH x CPU_COLS block of B is reused by every row. */
#define CPU_COLS 512
#define CPU_DEPTH 64

/* Multiply-adds between two polls. */
#define CPU_POLL_WORK ((size_t) 1 << 20)

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define CPU_CLONES __attribute__((target_clones("fma", "default")))
#else
#define CPU_CLONES
#endif

/*
 * One product function per element type (one template: T, its fma and its
 * default quiet NaN): zero the rows, accumulate block by block, store NaN as
 * the default NaN as the kernels do.
 */
#define MATMUL_CPU_DEFINE(NAME, T, FMA, QNAN) \
CPU_CLONES static GpuextStatus \
NAME(const T *a, const T *b, T *c, size_t r0, size_t r1, size_t k, size_t n, \
	 GpuextPollFn poll, void *arg) \
{ \
	size_t		work = 0; \
 \
	for (size_t i = r0; i < r1; i++) \
		for (size_t j = 0; j < n; j++) \
			c[i * n + j] = (T) 0; \
	for (size_t j0 = 0; j0 < n; j0 += CPU_COLS) \
	{ \
		size_t		j1 = n - j0 > CPU_COLS ? j0 + CPU_COLS : n; \
 \
		for (size_t k0 = 0; k0 < k; k0 += CPU_DEPTH) \
		{ \
			size_t		k1 = k - k0 > CPU_DEPTH ? k0 + CPU_DEPTH : k; \
 \
			for (size_t i = r0; i < r1; i++) \
			{ \
				T		   *restrict ci = c + i * n; \
 \
				for (size_t kk = k0; kk < k1; kk++) \
				{ \
					const T		av = a[i * k + kk]; \
					const T    *restrict bk = b + kk * n; \
 \
					for (size_t j = j0; j < j1; j++) \
						ci[j] = FMA(av, bk[j], ci[j]); \
				} \
				work += (k1 - k0) * (j1 - j0); \
				if (work >= CPU_POLL_WORK) \
				{ \
					work = 0; \
					if (poll && poll(arg)) \
						return GPUEXT_INTERRUPTED; \
				} \
			} \
		} \
	} \
	for (size_t i = r0 * n; i < r1 * n; i++) \
		if (isnan(c[i])) \
			c[i] = QNAN; \
	return GPUEXT_OK; \
}

MATMUL_CPU_DEFINE(MatmulCpuFloat, float, fmaf, (float) NAN)
MATMUL_CPU_DEFINE(MatmulCpuDouble, double, fma, (double) NAN)

/* Rows [row_begin, row_end) of C = A B for 4- or 8-byte floats. */
GpuextStatus
gpuext_matmul_cpu(int elem_bytes, const void *a, const void *b, void *c, size_t row_begin,
				  size_t row_end, size_t k, size_t n, GpuextPollFn poll, void *arg)
{
	if (elem_bytes == 4)
		return MatmulCpuFloat(a, b, c, row_begin, row_end, k, n, poll, arg);
	if (elem_bytes == 8)
		return MatmulCpuDouble(a, b, c, row_begin, row_end, k, n, poll, arg);
	return GPUEXT_INVALID;
}
