/*
 * reduce_groups.h
 *		What the reductions' host code (reduce_groups_cpu.c,
 *		fakedev_kernels.c) and the grouped reduction's device code
 *		(reduce_groups.cu) share: the values' order-preserving keys, as
 *		gpuext_reduce's (gpu_sort's encoding:
 *		sign bit flipped for integers, -0 just below +0 and NaN made the
 *		positive quiet NaN for floats, 32-bit keys for 2- and 4-byte values),
 *		a group's result from its state, and the grouped reduction's argument
 *		checks.  Plain C.
 */
#ifndef GPUEXT_REDUCE_GROUPS_H
#define GPUEXT_REDUCE_GROUPS_H

#include "gpuext_cuda.h"

/* A signed integer's key (key width 32 for 2- and 4-byte values, else 64). */
static inline GPUEXT_HD uint64_t
gpuext_int_key(int64_t v, int value_bytes)
{
	if (value_bytes == 8)
		return (uint64_t) v ^ (UINT64_C(1) << 63);
	return (uint32_t) (int32_t) v ^ UINT32_C(0x80000000);
}

/* A double's 64-bit key. */
static inline GPUEXT_HD uint64_t
gpuext_double_key(double d)
{
	uint64_t	u;

	memcpy(&u, &d, sizeof(u));
	if ((u & ~(UINT64_C(1) << 63)) > UINT64_C(0x7FF0000000000000))
		u = UINT64_C(0x7FF8000000000000);
	return (u >> 63) ? ~u : u | (UINT64_C(1) << 63);
}

/* A float's 32-bit key. */
static inline GPUEXT_HD uint64_t
gpuext_float_key(float f)
{
	uint32_t	u;

	memcpy(&u, &f, sizeof(u));
	if ((u & UINT32_C(0x7FFFFFFF)) > UINT32_C(0x7F800000))
		u = UINT32_C(0x7FC00000);
	return (u >> 31) ? (uint32_t) ~u : u | UINT32_C(0x80000000);
}

/*
 * One group's result from its state, which it normalises in place: the
 * digits, and sum_lo's bits from 32 up carried into sum_hi.
 */
static inline GPUEXT_HD void
gpuext_group_finish(int is_float, GpuextGroupState *s, GpuextGroupResult *r)
{
	int64_t    *digits = (int64_t *) (s + 1);
	__int128	isum;

	s->sum_hi += s->sum_lo >> 32;
	s->sum_lo &= UINT32_MAX;
	isum = (__int128) s->sum_lo + (__int128) (int64_t) s->sum_hi * ((__int128) 1 << 32);
	r->count = s->count;
	r->min_key = s->min_key;
	r->max_key = s->max_key;
	r->isum_lo = (uint64_t) isum;
	r->isum_hi = (int64_t) (isum >> 64);
	r->flags = s->flags;
	r->pad = 0;
	r->sum = 0.0;
	r->sum_real = 0.0;
	if (!is_float)
		return;
	gpuext_exact_normalize(digits);
	r->sum = gpuext_exact_round(digits, 53, -1074);
	r->sum_real = gpuext_exact_round(digits, 24, -149);
}

/* Why a value type is no grouped reduction's, or NULL. */
static inline const char *
gpuext_groups_bad_type(int value_bytes, int is_float)
{
	if (is_float)
		return value_bytes == 4 || value_bytes == 8 ? NULL
			: "grouped reduction: float values must be 4 or 8 bytes wide";
	return value_bytes == 2 || value_bytes == 4 || value_bytes == 8 ? NULL
		: "grouped reduction: integer values must be 2, 4 or 8 bytes wide";
}

/* Why gpuext_groups_clear's arguments are bad, or NULL. */
static inline const char *
gpuext_groups_bad_clear(const void *states, uint32_t first, uint32_t count)
{
	if (count > 0 && (states == NULL || (uintptr_t) states % 8 != 0))
		return "grouped reduction: states pointer is null or not 8-byte aligned";
	if ((uint64_t) first + count > (uint64_t) UINT32_MAX + 1)
		return "grouped reduction: clear past group 2^32 - 1";
	return NULL;
}

/* Why gpuext_groups_add's arguments are bad, or NULL. */
static inline const char *
gpuext_groups_bad_add(int value_bytes, int is_float, const void *values, const uint32_t *groups, size_t n,
					  const void *states)
{
	const char *why = gpuext_groups_bad_type(value_bytes, is_float);

	if (why != NULL || n == 0)
		return why;
	if (n > GPUEXT_GROUP_ADD_MAX)
		return "grouped reduction: more than GPUEXT_GROUP_ADD_MAX values in one call";
	if (values == NULL || (uintptr_t) values % value_bytes != 0)
		return "grouped reduction: values pointer is null or not aligned to the value width";
	if (groups == NULL || (uintptr_t) groups % 4 != 0)
		return "grouped reduction: groups pointer is null or not 4-byte aligned";
	if (states == NULL || (uintptr_t) states % 8 != 0)
		return "grouped reduction: states pointer is null or not 8-byte aligned";
	return NULL;
}

/* Why gpuext_groups_result's arguments are bad, or NULL. */
static inline const char *
gpuext_groups_bad_result(int value_bytes, int is_float, const void *states, uint32_t ngroups,
						 const GpuextGroupResult *results)
{
	const char *why = gpuext_groups_bad_type(value_bytes, is_float);

	if (why != NULL || ngroups == 0)
		return why;
	if (states == NULL || (uintptr_t) states % 8 != 0)
		return "grouped reduction: states pointer is null or not 8-byte aligned";
	if (results == NULL || (uintptr_t) results % 8 != 0)
		return "grouped reduction: results pointer is null or not 8-byte aligned";
	return NULL;
}

#endif							/* GPUEXT_REDUCE_GROUPS_H */
