/*
 * agg_accum.c
 *		Exact, order-independent accumulators for the gpu_* aggregates.
 *
 * Integer sums are kept in 128 bits.  A float sum is kept exactly, as an
 * integer count of 2^-1074 in base-2^32 digits, and rounded once (to nearest,
 * ties to even) at the end, so the result has the same bits in any order of
 * addition, in any split into partial sums, on the CPU or merged from the
 * device, and is never less accurate than PostgreSQL's sequential sum.
 * NaN and infinities are counted aside and decide the result as IEEE
 * arithmetic (and PostgreSQL's sum) would.  Min and max compare the same
 * raw order-preserving keys as the device (-0 just below +0, NaN above every
 * number), so both placements pick the same value bit for bit.  numeric
 * is summed as 128-bit fixed point, its min and max kept as datums
 * (agg_numeric.c).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/float.h"

#include "agg_accum.h"

/* Start an empty accumulator for values of typid. */
void
GpuextAccumInit(GpuextAccum *acc, Oid typid)
{
	memset(acc, 0, sizeof(GpuextAccum));
	acc->typid = typid;
	acc->cxt = CurrentMemoryContext;
	GpuextAccumAttach(acc);
}

/* Point an accumulator at its type's table entry (after init, or after it crossed processes). */
void
GpuextAccumAttach(GpuextAccum *acc)
{
	acc->type = GpuextAggTypeLookup(acc->typid);
}

/* Whether the type's sum is a float sum. */
bool
GpuextAccumIsFloat(const GpuextAccum *acc)
{
	return acc->typid == FLOAT4OID || acc->typid == FLOAT8OID;
}

/* Whether the type has a sum and an average (dates and timestamps have not). */
bool
GpuextAccumHasSum(const GpuextAccum *acc)
{
	return GpuextAccumIsFloat(acc) || acc->typid == INT2OID || acc->typid == INT4OID ||
		acc->typid == INT8OID || acc->typid == NUMERICOID;
}

/* Add a double to the exact sum, or note it as NaN or an infinity. */
static inline void
AddDouble(GpuextAccum *acc, double d)
{
	switch (gpuext_exact_add_double(acc->digits, d))
	{
		case GPUEXT_EXACT_ADDED:
			if (++acc->pending >= GPUEXT_EXACT_PENDING_MAX)
			{
				gpuext_exact_normalize(acc->digits);
				acc->pending = 0;
			}
			break;
		case GPUEXT_EXACT_NAN:
			acc->has_nan = true;
			break;
		case GPUEXT_EXACT_POS_INF:
			acc->has_pos_inf = true;
			break;
		case GPUEXT_EXACT_NEG_INF:
			acc->has_neg_inf = true;
			break;
	}
}

/* Track the smallest and largest value by raw sort key; the first of equal keys stays. */
static inline void
AddMinMax(GpuextAccum *acc, Datum value)
{
	uint64		key = acc->type->datum_key_raw(value);

	if (acc->count == 0 || key < acc->min_key)
	{
		acc->min_key = key;
		acc->min_value = value;
	}
	if (acc->count == 0 || key > acc->max_key)
	{
		acc->max_key = key;
		acc->max_value = value;
	}
}

/* Add one non-NULL value. */
void
GpuextAccumAdd(GpuextAccum *acc, Datum value)
{
	if (acc->typid == NUMERICOID)
	{
		GpuextNumericAdd(acc, value);
		return;
	}
	AddMinMax(acc, value);
	acc->count++;
	switch (acc->typid)
	{
		case INT2OID:
			acc->isum += DatumGetInt16(value);
			break;
		case INT4OID:
			acc->isum += DatumGetInt32(value);
			break;
		case INT8OID:
			acc->isum += DatumGetInt64(value);
			break;
		case FLOAT4OID:
			AddDouble(acc, DatumGetFloat4(value));
			break;
		case FLOAT8OID:
			AddDouble(acc, DatumGetFloat8(value));
			break;
		default:
			break;				/* date and timestamps: count, min and max only */
	}
}

/* Add n dense values of the accumulator's type, as an array stores them (numeric: fixed point at nscale). */
void
GpuextAccumAddArray(GpuextAccum *acc, const char *values, size_t n)
{
	const GpuextSortType *type = acc->type;

	if (acc->typid == NUMERICOID)
	{
		GpuextNumericAddFixed(acc, (const int128 *) values, n);
		return;
	}

	for (size_t i = 0; i < n; i++)
	{
		const char *p = values + i * type->value_bytes;
		Datum		d;

		if ((i & GPUEXT_CFI_MASK) == 0)
			CHECK_FOR_INTERRUPTS();

		switch (type->value_bytes)
		{
			case 2:
				d = Int16GetDatum(*(const int16 *) p);
				break;
			case 4:
				d = acc->typid == FLOAT4OID ? Float4GetDatum(*(const float4 *) p)
					: Int32GetDatum(*(const int32 *) p);
				break;
			default:
				d = acc->typid == FLOAT8OID ? Float8GetDatum(*(const float8 *) p)
					: Int64GetDatum(*(const int64 *) p);
				break;
		}
		GpuextAccumAdd(acc, d);
	}
}

/* Fold a device reduction into an accumulator. */
void
GpuextAccumMergeReduce(GpuextAccum *acc, const GpuextReduceResult *r)
{
	GpuextAccum part;

	if (r->count == 0)
		return;
	if (acc->typid == NUMERICOID)
	{
		GpuextNumericMergeReduce(acc, r);
		return;
	}
	memset(&part, 0, sizeof(part));
	part.typid = acc->typid;
	part.type = acc->type;
	part.count = (int64) r->count;
	part.min_key = r->min_key;
	part.max_key = r->max_key;
	part.min_value = acc->type->key_datum(r->min_key);
	part.max_value = acc->type->key_datum(r->max_key);
	if (GpuextAccumHasSum(acc) && !GpuextAccumIsFloat(acc))
		part.isum = (int128) (((uint128) (uint64) r->isum_hi << 64) | r->isum_lo);
	part.has_nan = r->has_nan != 0;
	part.has_pos_inf = r->has_pos_inf != 0;
	part.has_neg_inf = r->has_neg_inf != 0;
	memcpy(part.digits, r->digits, sizeof(part.digits));
	GpuextAccumMerge(acc, &part);
}

/* Fold src into dst (partial aggregates). */
void
GpuextAccumMerge(GpuextAccum *dst, const GpuextAccum *src)
{
	if (src->count == 0)
		return;
	if (dst->typid == NUMERICOID)
	{
		GpuextNumericMerge(dst, src);
		return;
	}
	if (dst->count == 0 || src->min_key < dst->min_key)
	{
		dst->min_key = src->min_key;
		dst->min_value = src->min_value;
	}
	if (dst->count == 0 || src->max_key > dst->max_key)
	{
		dst->max_key = src->max_key;
		dst->max_value = src->max_value;
	}
	dst->count += src->count;
	dst->isum += src->isum;
	dst->has_nan |= src->has_nan;
	dst->has_pos_inf |= src->has_pos_inf;
	dst->has_neg_inf |= src->has_neg_inf;
	for (int i = 0; i < GPUEXT_EXACT_DIGITS; i++)
		dst->digits[i] += src->digits[i];
	dst->pending += src->pending + 1;
	if (dst->pending >= GPUEXT_EXACT_PENDING_MAX)
	{
		gpuext_exact_normalize(dst->digits);
		dst->pending = 0;
	}
}

/*
 * The exact sum rounded once, to a float of mantissa_bits significant bits
 * whose smallest subnormal is 2^min_exponent (53, -1074 for double; 24, -149
 * for real), returned as a double; NaN or an infinity when those were added.
 * The caller checks the range of the target type.
 */
double
GpuextAccumFloatSum(GpuextAccum *acc, int mantissa_bits, int min_exponent)
{
	int64		d[GPUEXT_EXACT_DIGITS];

	if (acc->has_nan || (acc->has_pos_inf && acc->has_neg_inf))
		return get_float8_nan();
	if (acc->has_pos_inf)
		return get_float8_infinity();
	if (acc->has_neg_inf)
		return -get_float8_infinity();

	memcpy(d, acc->digits, sizeof(d));
	gpuext_exact_normalize(d);
	return gpuext_exact_round(d, mantissa_bits, min_exponent);
}
