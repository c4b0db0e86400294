/*
 * reduce_groups_cpu.c
 *		The grouped reduction on host memory: the fake device's, the CPU
 *		path's and the harness's reference.  The states hold the same bits as
 *		the device's (cuda/reduce_groups.cu) after the same values, in any
 *		order of addition, so results compare bit for bit.  Plain C, in every
 *		build.
 */
#include "gpuext_cuda.h"
#include "reduce_groups.h"

/* The state of group g. */
static GpuextGroupState *
GroupState(void *states, int is_float, uint32_t g)
{
	return (GpuextGroupState *) ((char *) states + (size_t) g * GPUEXT_GROUP_STATE_BYTES(is_float));
}

/* A float state's digits, right after the struct. */
static int64_t *
GroupDigits(GpuextGroupState *s)
{
	return (int64_t *) (s + 1);
}

/* Set the states of groups first .. first + count - 1 to clear. */
void
gpuext_groups_clear_cpu(int is_float, void *states, uint32_t first, uint32_t count)
{
	for (uint64_t g = first; g < (uint64_t) first + count; g++)
	{
		GpuextGroupState *s = GroupState(states, is_float, (uint32_t) g);

		memset(s, 0, GPUEXT_GROUP_STATE_BYTES(is_float));
		s->min_key = UINT64_MAX;
	}
}

/* Fold one value's key into a state's min and max. */
static void
AddKey(GpuextGroupState *s, uint64_t key)
{
	s->count++;
	if (key < s->min_key)
		s->min_key = key;
	if (key > s->max_key)
		s->max_key = key;
}

/* Add a double to a state's digits, or note it as NaN or an infinity. */
static void
AddDouble(GpuextGroupState *s, double d)
{
	switch (gpuext_exact_add_double(GroupDigits(s), d))
	{
		case GPUEXT_EXACT_ADDED:
			break;
		case GPUEXT_EXACT_NAN:
			s->flags |= GPUEXT_GROUP_NAN;
			break;
		case GPUEXT_EXACT_POS_INF:
			s->flags |= GPUEXT_GROUP_POS_INF;
			break;
		case GPUEXT_EXACT_NEG_INF:
			s->flags |= GPUEXT_GROUP_NEG_INF;
			break;
	}
}

/* Add values[i] to group groups[i]'s state; values of groups not below ngroups are left out. */
void
gpuext_groups_add_cpu(int value_bytes, int is_float, const void *values, const uint32_t *groups, size_t n,
					  void *states, uint32_t ngroups)
{
	const char *p = (const char *) values;

	for (size_t i = 0; i < n; i++, p += value_bytes)
	{
		GpuextGroupState *s;

		if (groups[i] >= ngroups)
			continue;
		s = GroupState(states, is_float, groups[i]);
		if (is_float && value_bytes == 8)
		{
			double		d;

			memcpy(&d, p, sizeof(d));
			AddKey(s, gpuext_double_key(d));
			AddDouble(s, d);
		}
		else if (is_float)
		{
			float		f;

			memcpy(&f, p, sizeof(f));
			AddKey(s, gpuext_float_key(f));
			AddDouble(s, (double) f);
		}
		else
		{
			int64_t		v;

			if (value_bytes == 2)
			{
				int16_t		x;

				memcpy(&x, p, sizeof(x));
				v = x;
			}
			else if (value_bytes == 4)
			{
				int32_t		x;

				memcpy(&x, p, sizeof(x));
				v = x;
			}
			else
				memcpy(&v, p, sizeof(v));
			AddKey(s, gpuext_int_key(v, value_bytes));
			s->sum_lo += (uint32_t) v;
			s->sum_hi += (uint64_t) (v >> 32);
		}
	}
}

/* The results of groups 0 .. ngroups - 1. */
void
gpuext_groups_result_cpu(int value_bytes, int is_float, void *states, uint32_t ngroups,
						 GpuextGroupResult *results)
{
	(void) value_bytes;
	for (uint32_t g = 0; g < ngroups; g++)
		gpuext_group_finish(is_float, GroupState(states, is_float, g), &results[g]);
}

/* Carry a state's digits and sum_lo, so that it adds to another as one value would. */
void
gpuext_groups_settle_cpu(int is_float, GpuextGroupState *state)
{
	state->sum_hi += state->sum_lo >> 32;
	state->sum_lo &= UINT32_MAX;
	if (is_float)
		gpuext_exact_normalize(GroupDigits(state));
}

/* Fold a settled state into group g's. */
void
gpuext_groups_merge_cpu(int is_float, void *states, uint32_t g, const GpuextGroupState *src)
{
	GpuextGroupState *s = GroupState(states, is_float, g);

	s->count += src->count;
	if (src->min_key < s->min_key)
		s->min_key = src->min_key;
	if (src->max_key > s->max_key)
		s->max_key = src->max_key;
	s->sum_lo += src->sum_lo;
	s->sum_hi += src->sum_hi;
	s->flags |= src->flags;
	if (is_float)
	{
		int64_t    *d = GroupDigits(s);
		const int64_t *sd = (const int64_t *) (src + 1);

		for (int i = 0; i < GPUEXT_EXACT_DIGITS; i++)
			d[i] += sd[i];
	}
}
