/*
 * gpuagg_numeric.c
 *		numeric inputs of GpuAgg: each value is added on the CPU into an
 *		exact accumulator (agg_numeric.c: 128-bit fixed point at the largest
 *		display scale seen, a numeric sum past it), one for the whole scan
 *		without GROUP BY, one per group with it.  Any numeric is taken, with
 *		or without a typmod, plain columns and expressions alike, so sum,
 *		avg, min and max are PostgreSQL's bit for bit, NaN and the
 *		infinities included; the other inputs of the same query still go to
 *		the device.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/memutils.h"

#include "gpuagg.h"

/* A run's per-group accumulators of a numeric input, room for the groups the arrays start with. */
void
GpuAggAccsStart(GpuAggState *st, GpuAggInput *in)
{
	in->group_accs = MemoryContextAllocHuge(st->runcxt, sizeof(GpuextAccum) * st->groups_cap);
}

/* Room for cap groups' accumulators. */
void
GpuAggAccsGrow(GpuAggInput *in, uint32 cap)
{
	in->group_accs = repalloc_huge(in->group_accs, sizeof(GpuextAccum) * cap);
}

/* A new group's empty accumulator; its numerics live in the run's memory. */
void
GpuAggAccNew(GpuAggState *st, GpuAggInput *in, uint32 group)
{
	GpuextAccum *acc = &in->group_accs[group];

	GpuextAccumInit(acc, NUMERICOID);
	acc->cxt = st->runcxt;
}
