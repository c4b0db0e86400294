/*
 * gpuagg_numeric.c
 *		numeric inputs of GpuAgg.
 *
 * A numeric(p, s) column (or an expression of that typmod) with p <= 18 and
 * 0 <= s has every value an integer at scale s that fits bigint: its values
 * go to the device as such, through the bigint reductions (exact 128-bit
 * sums, min and max), and its NaNs are counted on the host, per group with
 * GROUP BY.  The results are built as PostgreSQL's numeric aggregates give
 * them: sum the exact sum at display scale s, avg numeric_div(sum, count),
 * min and max the value at scale s; NaN where a NaN was added (min: only
 * where nothing else was).
 *
 * Any other numeric (no typmod, p > 18, expressions whose scale is not
 * known) is added on the CPU into an exact accumulator (agg_numeric.c:
 * 128-bit fixed point at the largest display scale seen, a numeric sum past
 * it), one for the scan without GROUP BY, one per group with it.
 *
 * Numeric arguments compile as fixed-point arithmetic in gpuagg_fixedexpr.c.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "gpuagg.h"

/* Largest precision whose values at their scale fit bigint. */
#define FIXED_MAX_PRECISION 18

/* A numeric typmod's scale (and precision), or -1 where there is none or it is negative. */
int
GpuAggTypmodScale(int32 typmod, int *precision)
{
	int			scale;

	if (typmod < (int32) VARHDRSZ)
		return -1;
	*precision = ((typmod - VARHDRSZ) >> 16) & 0xffff;
	/* the scale is 11 bits, signed since PostgreSQL 15 (numeric.c) */
	scale = (((typmod - VARHDRSZ) & 0x7ff) ^ 1024) - 1024;
	return scale >= 0 ? scale : -1;
}

/* The scale at which a numeric argument's values fit bigint (numeric(p <= 18, s >= 0)), or -1. */
int
GpuAggNumericScale(Node *arg)
{
	int			precision = 0;
	int			scale;

	if (exprType(arg) != NUMERICOID)
		return -1;
	scale = GpuAggTypmodScale(exprTypmod(arg), &precision);
	return precision <= FIXED_MAX_PRECISION ? scale : -1;
}

/* A numeric of a fixed-scale input as the bigint at its scale: false for a NaN, counted in *nans. */
bool
GpuAggNumericToInt64(GpuAggInput *in, Datum *value, int64 *nans)
{
	int128		v = 0;
	int			status = GpuextNumericToFixed(*value, in->numeric_scale, &v);

	return GpuAggFixedToInt64(in, status, v, value, nans);
}

/* A fixed-scale input's numeric as a spilled row keeps it: the bigint at its scale, or GPUAGG_SPILL_NAN. */
Datum
GpuAggNumericSpillValue(GpuAggInput *in, Datum value)
{
	int64		nans = 0;

	return GpuAggNumericToInt64(in, &value, &nans) ? value : Int64GetDatum(GPUAGG_SPILL_NAN);
}

/* The same from GpuextNumericToFixed's status and value. */
bool
GpuAggFixedToInt64(GpuAggInput *in, int status, int128 v, Datum *value, int64 *nans)
{
	switch (status)
	{
		case 1:
			(*nans)++;
			return false;
		case 0:
			if (v >= PG_INT64_MIN && v <= PG_INT64_MAX)
			{
				*value = Int64GetDatum((int64) v);
				return true;
			}
			break;
	}
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("GpuAgg: a numeric value does not fit the scale %d of its type", in->numeric_scale),
			 errhint("Set gpuext.enable_agg to off for this query.")));
	return false;
}

/* A memo of natts numeric columns, empty. */
GpuAggNumMemo *
GpuAggNumMemoCreate(int natts)
{
	GpuAggNumMemo *m = palloc(sizeof(GpuAggNumMemo));

	m->row = 1;
	m->rows = palloc0(sizeof(uint64) * natts);
	m->scales = palloc0(sizeof(int) * natts);
	m->status = palloc0(sizeof(int) * natts);
	m->values = palloc0(sizeof(int128) * natts);
	return m;
}

/* numeric NaN. */
static Datum
NumericNaN(void)
{
	return DirectFunctionCall3(numeric_in, CStringGetDatum("NaN"), ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

/* One aggregate of a fixed-scale input from its count, NaNs, exact sum, min and max, as PostgreSQL's. */
static Datum
FixedResult(int scale, GpuextAggKind kind, int64 count, int64 nans, int128 sum, int64 min, int64 max,
			bool *isnull)
{
	*isnull = false;
	if (kind == GPUEXT_AGG_COUNT)
		return Int64GetDatum(count + nans);
	if (count + nans == 0)
	{
		*isnull = true;
		return (Datum) 0;
	}
	switch (kind)
	{
		case GPUEXT_AGG_SUM:
			return nans > 0 ? NumericNaN() : GpuextFixedToNumeric(sum, scale);
		case GPUEXT_AGG_AVG:
			/* numeric_avg: NaN, else sum / N, N not counting the NaNs */
			if (nans > 0)
				return NumericNaN();
			return DirectFunctionCall2(numeric_div, GpuextFixedToNumeric(sum, scale),
									   NumericGetDatum(int64_to_numeric(count)));
		case GPUEXT_AGG_MIN:
			/* NaN sorts above every number (numeric_smaller) */
			return count == 0 ? NumericNaN() : GpuextFixedToNumeric(min, scale);
		default:
			return nans > 0 ? NumericNaN() : GpuextFixedToNumeric(max, scale);
	}
}

/* An aggregate of a fixed-scale input without GROUP BY, from its bigint accumulator. */
Datum
GpuAggNumericAccumResult(GpuAggInput *in, GpuextAggKind kind, bool *isnull)
{
	GpuextAccum *acc = in->acc;

	return FixedResult(in->numeric_scale, kind, acc->count, in->count, acc->isum,
					   acc->count > 0 ? DatumGetInt64(acc->min_value) : 0,
					   acc->count > 0 ? DatumGetInt64(acc->max_value) : 0, isnull);
}

/* An aggregate of a fixed-scale input for a group, from its bigint reduction r and its NaNs. */
Datum
GpuAggNumericGroupResult(GpuAggInput *in, const GpuextGroupResult *r, int64 nans, GpuextAggKind kind, bool *isnull)
{
	int128		isum = (int128) (((uint128) (uint64) r->isum_hi << 64) | r->isum_lo);

	return FixedResult(in->numeric_scale, kind, (int64) r->count, nans, isum,
					   r->count > 0 ? DatumGetInt64(in->type->key_datum(r->min_key)) : 0,
					   r->count > 0 ? DatumGetInt64(in->type->key_datum(r->max_key)) : 0, isnull);
}

/* A run's per-group accumulators of a numeric input, room for the groups the arrays start with. */
void
GpuAggAccsStart(GpuAggState *st, GpuAggInput *in)
{
	in->group_accs = MemoryContextAllocHuge(st->runcxt, sizeof(GpuextAccum) * st->groups.groups_cap);
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

