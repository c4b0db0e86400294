/*
 * gpu_agg.c
 *		gpu_sum, gpu_avg, gpu_min, gpu_max and gpu_count: over arrays, and as
 *		aggregates over columns (parallel, with combine and serialization).
 *
 * Results follow PostgreSQL's sum, avg, min, max and count: sum of smallint
 * or integer is bigint, of bigint numeric, of real real, of double precision
 * double precision; avg of integers numeric, of floats double precision; no
 * rows give NULL (count gives 0).  Sums are exact (see agg_accum.c), so float
 * results are deterministic and at least as accurate as PostgreSQL's.
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"

#include "agg_accum.h"

/* A 128-bit integer as numeric. */
static Datum
Int128GetNumeric(int128 v)
{
	char		buf[48];
	char	   *p = buf + sizeof(buf) - 1;
	bool		negative = v < 0;

	if (v >= PG_INT64_MIN && v <= PG_INT64_MAX)
		return NumericGetDatum(int64_to_numeric((int64) v));
	*p = '\0';
	do
	{
		int			digit = (int) (v % 10);

		*--p = '0' + (negative ? -digit : digit);
		v /= 10;
	} while (v != 0);
	if (negative)
		*--p = '-';
	return DirectFunctionCall3(numeric_in, CStringGetDatum(p), ObjectIdGetDatum(InvalidOid),
							   Int32GetDatum(-1));
}

/* The float sum rounded to the result type, with PostgreSQL's overflow error. */
static double
FloatSumChecked(GpuextAccum *acc, bool as_real)
{
	double		r = as_real ? GpuextAccumFloatSum(acc, 24, -149) : GpuextAccumFloatSum(acc, 53, -1074);
	bool		inputs_inf = acc->has_nan || acc->has_pos_inf || acc->has_neg_inf;

	if (!inputs_inf && (isinf(r) || (as_real && fabs(r) > FLT_MAX)))
		float_overflow_error();
	return r;
}

/* sum: the type of PostgreSQL's sum for the input type. */
static Datum
SumResult(GpuextAccum *acc)
{
	switch (acc->typid)
	{
		case INT2OID:
		case INT4OID:
			if (acc->isum < PG_INT64_MIN || acc->isum > PG_INT64_MAX)
				ereport(ERROR,
						(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
						 errmsg("bigint out of range")));
			return Int64GetDatum((int64) acc->isum);
		case INT8OID:
			return Int128GetNumeric(acc->isum);
		case FLOAT4OID:
			return Float4GetDatum((float4) FloatSumChecked(acc, true));
		default:
			return Float8GetDatum(FloatSumChecked(acc, false));
	}
}

/* avg: numeric for integers (sum / count as PostgreSQL divides), double precision for floats. */
static Datum
AvgResult(GpuextAccum *acc)
{
	if (GpuextAccumIsFloat(acc))
		return Float8GetDatum(FloatSumChecked(acc, false) / (double) acc->count);
	return DirectFunctionCall2(numeric_div, Int128GetNumeric(acc->isum),
							   NumericGetDatum(int64_to_numeric(acc->count)));
}

/* The result of one aggregate from an accumulator (NULL when nothing was added, count 0). */
Datum
GpuextAccumResult(GpuextAccum *acc, GpuextAggKind kind, bool *isnull)
{
	*isnull = false;
	if (kind == GPUEXT_AGG_COUNT)
		return Int64GetDatum(acc ? acc->count : 0);
	if (acc == NULL || acc->count == 0)
	{
		*isnull = true;
		return (Datum) 0;
	}
	switch (kind)
	{
		case GPUEXT_AGG_SUM:
			return SumResult(acc);
		case GPUEXT_AGG_AVG:
			return AvgResult(acc);
		case GPUEXT_AGG_MIN:
			return acc->min_value;
		default:
			return acc->max_value;
	}
}

/* An aggregate over the non-NULL elements of a one-dimensional array. */
static Datum
ArrayAggregate(FunctionCallInfo fcinfo, GpuextAggKind kind, const char *fname)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	int			nitems,
				nnulls;
	const GpuextSortType *type = GpuextArrayValues(arr, fname, &nitems, &nnulls);
	GpuextAccum *acc = palloc(sizeof(GpuextAccum));
	bool		isnull;
	Datum		result;

	GpuextAccumInit(acc, type->typid);
	GpuextAccumAddArray(acc, ARR_DATA_PTR(arr), (size_t) (nitems - nnulls));
	result = GpuextAccumResult(acc, kind, &isnull);
	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(result);
}

PG_FUNCTION_INFO_V1(gpu_array_sum);
PG_FUNCTION_INFO_V1(gpu_array_avg);
PG_FUNCTION_INFO_V1(gpu_array_min);
PG_FUNCTION_INFO_V1(gpu_array_max);
PG_FUNCTION_INFO_V1(gpu_array_count);

/* SQL: gpu_sum(array) and its siblings. */
Datum
gpu_array_sum(PG_FUNCTION_ARGS)
{
	return ArrayAggregate(fcinfo, GPUEXT_AGG_SUM, "gpu_sum");
}

Datum
gpu_array_avg(PG_FUNCTION_ARGS)
{
	return ArrayAggregate(fcinfo, GPUEXT_AGG_AVG, "gpu_avg");
}

Datum
gpu_array_min(PG_FUNCTION_ARGS)
{
	return ArrayAggregate(fcinfo, GPUEXT_AGG_MIN, "gpu_min");
}

Datum
gpu_array_max(PG_FUNCTION_ARGS)
{
	return ArrayAggregate(fcinfo, GPUEXT_AGG_MAX, "gpu_max");
}

Datum
gpu_array_count(PG_FUNCTION_ARGS)
{
	return ArrayAggregate(fcinfo, GPUEXT_AGG_COUNT, "gpu_count");
}

/* The aggregate memory context, or ERROR outside an aggregate. */
static MemoryContext
AggContext(FunctionCallInfo fcinfo)
{
	MemoryContext aggcxt;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		elog(ERROR, "gpuext aggregate support function called outside an aggregate");
	return aggcxt;
}

PG_FUNCTION_INFO_V1(gpu_agg_trans);

/* Transition: add one value (NULLs are skipped) to the group's accumulator. */
Datum
gpu_agg_trans(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = AggContext(fcinfo);
	GpuextAccum *acc = PG_ARGISNULL(0) ? NULL : (GpuextAccum *) PG_GETARG_POINTER(0);

	if (acc == NULL)
	{
		Oid			argtype = get_fn_expr_argtype(fcinfo->flinfo, 1);

		if (GpuextSortTypeLookup(getBaseType(argtype)) == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("gpuext aggregates do not support type %s", format_type_be(argtype)),
					 errdetail("Supported types: %s.", GpuextSortTypeNames)));
		acc = MemoryContextAlloc(aggcxt, sizeof(GpuextAccum));
		GpuextAccumInit(acc, getBaseType(argtype));
	}
	if (!PG_ARGISNULL(1))
		GpuextAccumAdd(acc, PG_GETARG_DATUM(1));
	PG_RETURN_POINTER(acc);
}

PG_FUNCTION_INFO_V1(gpu_agg_combine);

/* Combine: fold a partial aggregate into another. */
Datum
gpu_agg_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = AggContext(fcinfo);
	GpuextAccum *dst = PG_ARGISNULL(0) ? NULL : (GpuextAccum *) PG_GETARG_POINTER(0);
	GpuextAccum *src = PG_ARGISNULL(1) ? NULL : (GpuextAccum *) PG_GETARG_POINTER(1);

	if (src == NULL)
		PG_RETURN_POINTER(dst);
	if (dst == NULL)
	{
		dst = MemoryContextAlloc(aggcxt, sizeof(GpuextAccum));
		memcpy(dst, src, sizeof(GpuextAccum));
		PG_RETURN_POINTER(dst);
	}
	GpuextAccumMerge(dst, src);
	PG_RETURN_POINTER(dst);
}

PG_FUNCTION_INFO_V1(gpu_agg_serialize);

/* Serialize a partial aggregate for a parallel worker's leader (same build on both sides). */
Datum
gpu_agg_serialize(PG_FUNCTION_ARGS)
{
	GpuextAccum *acc = (GpuextAccum *) PG_GETARG_POINTER(0);
	bytea	   *result;

	(void) AggContext(fcinfo);
	result = palloc(VARHDRSZ + sizeof(GpuextAccum));
	SET_VARSIZE(result, VARHDRSZ + sizeof(GpuextAccum));
	memcpy(VARDATA(result), acc, sizeof(GpuextAccum));
	PG_RETURN_BYTEA_P(result);
}

PG_FUNCTION_INFO_V1(gpu_agg_deserialize);

/* Deserialize a partial aggregate. */
Datum
gpu_agg_deserialize(PG_FUNCTION_ARGS)
{
	bytea	   *data = PG_GETARG_BYTEA_PP(0);
	GpuextAccum *acc;

	(void) AggContext(fcinfo);
	if (VARSIZE_ANY_EXHDR(data) != sizeof(GpuextAccum))
		elog(ERROR, "gpuext partial aggregate has %zu bytes, expected %zu",
			 (size_t) VARSIZE_ANY_EXHDR(data), sizeof(GpuextAccum));
	acc = palloc(sizeof(GpuextAccum));
	memcpy(acc, VARDATA_ANY(data), sizeof(GpuextAccum));
	GpuextAccumAttach(acc);
	PG_RETURN_POINTER(acc);
}

/* A final function: the result of one aggregate kind from the group's accumulator. */
static Datum
AggFinal(FunctionCallInfo fcinfo, GpuextAggKind kind)
{
	GpuextAccum *acc = PG_ARGISNULL(0) ? NULL : (GpuextAccum *) PG_GETARG_POINTER(0);
	bool		isnull;
	Datum		result = GpuextAccumResult(acc, kind, &isnull);

	if (isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(result);
}

PG_FUNCTION_INFO_V1(gpu_agg_sum_final);
PG_FUNCTION_INFO_V1(gpu_agg_avg_final);
PG_FUNCTION_INFO_V1(gpu_agg_min_final);
PG_FUNCTION_INFO_V1(gpu_agg_max_final);
PG_FUNCTION_INFO_V1(gpu_agg_count_final);

/* Final functions of gpu_sum, gpu_avg, gpu_min, gpu_max and gpu_count. */
Datum
gpu_agg_sum_final(PG_FUNCTION_ARGS)
{
	return AggFinal(fcinfo, GPUEXT_AGG_SUM);
}

Datum
gpu_agg_avg_final(PG_FUNCTION_ARGS)
{
	return AggFinal(fcinfo, GPUEXT_AGG_AVG);
}

Datum
gpu_agg_min_final(PG_FUNCTION_ARGS)
{
	return AggFinal(fcinfo, GPUEXT_AGG_MIN);
}

Datum
gpu_agg_max_final(PG_FUNCTION_ARGS)
{
	return AggFinal(fcinfo, GPUEXT_AGG_MAX);
}

Datum
gpu_agg_count_final(PG_FUNCTION_ARGS)
{
	return AggFinal(fcinfo, GPUEXT_AGG_COUNT);
}
