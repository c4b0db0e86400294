/*
 * gpu_agg.c
 *		gpu_sum, gpu_avg, gpu_min, gpu_max and gpu_count: over arrays, and as
 *		aggregates over columns (parallel, with combine and serialization).
 *
 * Results follow PostgreSQL's sum, avg, min, max and count: sum of smallint
 * or integer is bigint, of bigint numeric, of real real, of double precision
 * double precision, of numeric numeric; avg of integers and numeric numeric,
 * of floats double precision; no rows give NULL (count gives 0).  Sums are
 * exact (see agg_accum.c; numeric as 128-bit fixed point, agg_numeric.c), so
 * float results are deterministic and at least as accurate as PostgreSQL's.
 *
 * With a device, an array's values go up in one batch; a column aggregate
 * gathers its group's values in a bounded batch, reduced on the device each
 * time it fills and at the end (agg_device.c decides where each batch runs,
 * so small groups stay on the CPU).
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "agg_accum.h"
#include "gpuext.h"

#ifndef USE_FLOAT8_BYVAL
#error "gpuext's aggregates keep float8 values in Datums by value"
#endif

/* A column aggregate's transition state: the accumulator and the batch not yet added to it. */
typedef struct GpuextAggState
{
	GpuextAccum acc;			/* first: serialization sends only this */
	bool		batching;		/* values gather for the device, else go straight to acc */
	int			value_bytes;	/* of one value in the batch */
	size_t		nbatch;
	size_t		capacity;		/* values batch can hold, up to GpuextAggBatch() */
	char	   *batch;			/* in the aggregate's memory context, or the reducer's host batch */
	GpuextReducer *reducer;		/* the device buffers of the batches, once one went there */
} GpuextAggState;

/* Batch capacity a group starts with; it doubles as the group grows. */
#define BATCH_START 64

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
	if (acc->typid == NUMERICOID)
		return GpuextNumericResult(acc, kind);
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

/* A group's float sum from its flags and its finite part rounded, with PostgreSQL's overflow error. */
static double
GroupFloatSum(const GpuextGroupResult *r, bool as_real)
{
	bool		nan = (r->flags & GPUEXT_GROUP_NAN) != 0;
	bool		pos = (r->flags & GPUEXT_GROUP_POS_INF) != 0;
	bool		neg = (r->flags & GPUEXT_GROUP_NEG_INF) != 0;
	double		v = as_real ? r->sum_real : r->sum;

	if (nan || (pos && neg))
		return get_float8_nan();
	if (pos)
		return get_float8_infinity();
	if (neg)
		return -get_float8_infinity();
	if (isinf(v) || (as_real && fabs(v) > FLT_MAX))
		float_overflow_error();
	return v;
}

/* One aggregate's result from a group's reduction, as GpuextAccumResult gives it from an accumulator. */
Datum
GpuextGroupResultDatum(const GpuextGroupResult *r, const GpuextSortType *type, GpuextAggKind kind, bool *isnull)
{
	int128		isum = (int128) (((uint128) (uint64) r->isum_hi << 64) | r->isum_lo);
	bool		is_float = type->typid == FLOAT4OID || type->typid == FLOAT8OID;

	*isnull = false;
	if (kind == GPUEXT_AGG_COUNT)
		return Int64GetDatum((int64) r->count);
	if (r->count == 0)
	{
		*isnull = true;
		return (Datum) 0;
	}
	switch (kind)
	{
		case GPUEXT_AGG_SUM:
			if (type->typid == FLOAT4OID)
				return Float4GetDatum((float4) GroupFloatSum(r, true));
			if (is_float)
				return Float8GetDatum(GroupFloatSum(r, false));
			if (type->typid == INT8OID)
				return Int128GetNumeric(isum);
			if (isum < PG_INT64_MIN || isum > PG_INT64_MAX)
				ereport(ERROR,
						(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
						 errmsg("bigint out of range")));
			return Int64GetDatum((int64) isum);
		case GPUEXT_AGG_AVG:
			if (is_float)
				return Float8GetDatum(GroupFloatSum(r, false) / (double) r->count);
			return DirectFunctionCall2(numeric_div, Int128GetNumeric(isum),
									   NumericGetDatum(int64_to_numeric((int64) r->count)));
		case GPUEXT_AGG_MIN:
			return type->key_datum(r->min_key);
		default:
			return type->key_datum(r->max_key);
	}
}

/* Add a one-dimensional numeric array's non-NULL elements to acc, in device batches where placement says so. */
static void
AddNumericArray(GpuextAccum *acc, ArrayType *arr, const char *fname)
{
	ArrayIterator it;
	GpuextNumericBatch b = {acc, NULL, 0, 0};
	Datum		value;
	bool		isnull;
	size_t		i = 0;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s accepts only one-dimensional arrays", fname),
				 errdetail("The array has %d dimensions.", ARR_NDIM(arr))));
	b.cap = Min((size_t) ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr)), GPUEXT_REDUCE_BATCH);
	b.values = MemoryContextAllocHuge(CurrentMemoryContext, Max(b.cap, 1) * sizeof(int128));
	it = array_create_iterator(arr, 0, NULL);
	while (array_iterate(it, &value, &isnull))
	{
		if ((i++ & GPUEXT_CFI_MASK) == 0)
			CHECK_FOR_INTERRUPTS();
		if (!isnull)
			GpuextNumericBatchAdd(&b, value);
	}
	array_free_iterator(it);
	GpuextNumericBatchFlush(&b);
	pfree(b.values);
}

/* An aggregate over the non-NULL elements of a one-dimensional array. */
static Datum
ArrayAggregate(FunctionCallInfo fcinfo, GpuextAggKind kind, const char *fname)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	GpuextAccum *acc = palloc(sizeof(GpuextAccum));
	bool		isnull;
	Datum		result;

	if (getBaseType(ARR_ELEMTYPE(arr)) == NUMERICOID)
	{
		GpuextAccumInit(acc, NUMERICOID);
		AddNumericArray(acc, arr, fname);
	}
	else
	{
		int			nitems,
					nnulls;
		const GpuextSortType *type = GpuextArrayValues(arr, fname, &nitems, &nnulls);

		GpuextAccumInit(acc, type->typid);
		GpuextAccumAddValues(acc, ARR_DATA_PTR(arr), (size_t) (nitems - nnulls));
	}
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

/* A new transition state in aggcxt for values of typid, with the accumulator of src if given. */
static GpuextAggState *
StateCreate(MemoryContext aggcxt, Oid typid, const GpuextAccum *src)
{
	GpuextAggState *state = MemoryContextAllocZero(aggcxt, sizeof(GpuextAggState));

	if (src)
		memcpy(&state->acc, src, sizeof(GpuextAccum));
	else
		GpuextAccumInit(&state->acc, typid);
	state->acc.cxt = aggcxt;
	if (src && src->typid == NUMERICOID)
		GpuextNumericCopyDatums(&state->acc, aggcxt);
	state->value_bytes = state->acc.type->value_bytes;
	/* Batch only where a batch could go to the device. */
	state->batching = GpuextUseDevice() &&
		(gpuext_device_mode != GPUEXT_DEVICE_AUTO || gpuext_min_gpu_elements <= GpuextAggBatch());
	return state;
}

/* The device failed the state's batches (auto; they were added on the CPU): values go straight to the CPU now. */
static void
StateDeviceFailed(GpuextAggState *state)
{
	state->batching = false;
	state->batch = NULL;
	state->capacity = 0;
	state->nbatch = 0;
}

/*
 * Move the batch into the reducer's pinned host batch, making the reducer on
 * first use, so that it can go up with no staging copy.  False, with nothing
 * changed, where auto finds the device memory short.
 */
static bool
StateStartStreaming(GpuextAggState *state)
{
	if (state->reducer == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(GetMemoryChunkContext(state));

		state->reducer = GpuextReducerStart(state->acc.type, GpuextAggBatch());
		MemoryContextSwitchTo(old);
		if (state->reducer == NULL)
		{
			elog(DEBUG1, "gpuext: no device memory for a batch, reducing on the CPU");
			return false;
		}
	}
	memcpy(GpuextReducerHostBatch(state->reducer), state->batch, state->nbatch * state->value_bytes);
	pfree(state->batch);
	state->batch = GpuextReducerHostBatch(state->reducer);
	state->capacity = GpuextAggBatch();
	return true;
}

/*
 * Send the batch up without waiting for it (the one before it is merged
 * first), and go on filling the reducer's other host batch; small batches,
 * or any where the device cannot be had, are added on the CPU.
 */
static void
StateSend(GpuextAggState *state)
{
	if (state->reducer == NULL &&
		(!GpuextUseDeviceFor(state->nbatch) || !StateStartStreaming(state)))
	{
		GpuextAccumAddArray(&state->acc, state->batch, state->nbatch);
		state->nbatch = 0;
		return;
	}
	if (GpuextReducerStream(&state->reducer, state->nbatch, &state->acc))
		state->batch = GpuextReducerHostBatch(state->reducer);
	else
		StateDeviceFailed(state);
	state->nbatch = 0;
}

/* Add everything pending (the batch in flight and the one filling) to the accumulator. */
static void
StateFlush(GpuextAggState *state)
{
	if (state->nbatch > 0)
		StateSend(state);
	if (state->reducer != NULL && !GpuextReducerStream(&state->reducer, 0, &state->acc))
		StateDeviceFailed(state);
}

/* Room for one more value in the batch: grow it, or send it once it is full. */
static void
StateGrow(GpuextAggState *state)
{
	if (state->capacity >= GpuextAggBatch())
	{
		StateSend(state);
		return;
	}
	state->capacity = state->capacity ? state->capacity * 2 : BATCH_START;
	if (state->batch == NULL)
		state->batch = MemoryContextAlloc(GetMemoryChunkContext(state),
										  state->capacity * state->value_bytes);
	else
		state->batch = repalloc(state->batch, state->capacity * state->value_bytes);
}

/* Add one non-NULL numeric to a state: its fixed-point integer into the batch, or to the accumulator. */
static void
StateAddNumeric(GpuextAggState *state, Datum value)
{
	int128		v;

	switch (GpuextNumericPrepare(&state->acc, value, &v))
	{
		case GPUEXT_NUMERIC_BATCH:
			break;
		case GPUEXT_NUMERIC_RESCALE:
			StateFlush(state);	/* everything batched is merged at the old scale */
			/* FALLTHROUGH */
		case GPUEXT_NUMERIC_CPU:
			GpuextAccumAdd(&state->acc, value);
			/* a sum past 128 bits is added on the CPU from now on; batches still merge */
			if (state->acc.nbig)
				state->batching = false;
			return;
	}
	if (unlikely(state->nbatch == state->capacity))
	{
		StateGrow(state);
		if (!state->batching)
		{
			GpuextNumericAddFixed(&state->acc, &v, 1);	/* its min and max are taken */
			return;
		}
	}
	memcpy(state->batch + state->nbatch++ * sizeof(int128), &v, sizeof(int128));
}

/* Add one non-NULL value to a state. */
static inline void
StateAdd(GpuextAggState *state, Datum value)
{
	if (state->acc.typid == NUMERICOID && state->batching)
	{
		StateAddNumeric(state, value);
		return;
	}
	if (!state->batching)
	{
		GpuextAccumAdd(&state->acc, value);
		return;
	}
	if (unlikely(state->nbatch == state->capacity))
	{
		StateGrow(state);
		if (!state->batching)
		{
			GpuextAccumAdd(&state->acc, value);
			return;
		}
	}
	switch (state->value_bytes)
	{
		case 8:
			((int64 *) state->batch)[state->nbatch] = DatumGetInt64(value);
			break;
		case 4:
			((int32 *) state->batch)[state->nbatch] = DatumGetInt32(value);
			break;
		default:
			((int16 *) state->batch)[state->nbatch] = DatumGetInt16(value);
			break;
	}
	state->nbatch++;
}

/* The first call of a group: check the context and the type, and start its state. */
static GpuextAggState *
StateStart(FunctionCallInfo fcinfo)
{
	MemoryContext aggcxt = AggContext(fcinfo);
	Oid			argtype = get_fn_expr_argtype(fcinfo->flinfo, 1);

	if (GpuextAggTypeLookup(getBaseType(argtype)) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("gpuext aggregates do not support type %s", format_type_be(argtype)),
				 errdetail("Supported types: %s, numeric.", GpuextSortTypeNames)));
	return StateCreate(aggcxt, getBaseType(argtype), NULL);
}

PG_FUNCTION_INFO_V1(gpu_agg_trans);

/* Transition: add one value (NULLs are skipped) to the group's state; the context is checked once. */
Datum
gpu_agg_trans(PG_FUNCTION_ARGS)
{
	GpuextAggState *state = PG_ARGISNULL(0) ? NULL : (GpuextAggState *) PG_GETARG_POINTER(0);

	if (unlikely(state == NULL))
		state = StateStart(fcinfo);
	if (!PG_ARGISNULL(1))
		StateAdd(state, PG_GETARG_DATUM(1));
	PG_RETURN_POINTER(state);
}

PG_FUNCTION_INFO_V1(gpu_agg_combine);

/* Combine: fold a partial aggregate (its accumulator and its pending batch) into another. */
Datum
gpu_agg_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = AggContext(fcinfo);
	GpuextAggState *dst = PG_ARGISNULL(0) ? NULL : (GpuextAggState *) PG_GETARG_POINTER(0);
	GpuextAggState *src = PG_ARGISNULL(1) ? NULL : (GpuextAggState *) PG_GETARG_POINTER(1);

	if (src == NULL)
		PG_RETURN_POINTER(dst);
	if (src->acc.typid == NUMERICOID)
	{
		/* batches are at their state's scale: merge accumulators only */
		StateFlush(src);
		if (dst == NULL)
			PG_RETURN_POINTER(StateCreate(aggcxt, NUMERICOID, &src->acc));
		StateFlush(dst);
		GpuextAccumMerge(&dst->acc, &src->acc);
		if (dst->acc.nbig)
			dst->batching = false;
		PG_RETURN_POINTER(dst);
	}
	if (src->reducer != NULL)
		StateFlush(src);		/* its batches may be the reducer's own */
	if (dst == NULL)
		dst = StateCreate(aggcxt, src->acc.typid, &src->acc);
	else
		GpuextAccumMerge(&dst->acc, &src->acc);
	if (!dst->batching)
		GpuextAccumAddArray(&dst->acc, src->batch, src->nbatch);
	else
	{
		size_t		vb = src->value_bytes;

		for (size_t i = 0; i < src->nbatch; i++)
		{
			if (dst->nbatch == dst->capacity)
				StateGrow(dst);
			if (!dst->batching)
			{
				GpuextAccumAddArray(&dst->acc, src->batch + i * vb, src->nbatch - i);
				break;
			}
			memcpy(dst->batch + dst->nbatch++ * vb, src->batch + i * vb, vb);
		}
	}
	PG_RETURN_POINTER(dst);
}

PG_FUNCTION_INFO_V1(gpu_agg_serialize);

/* Serialize a partial aggregate for a parallel worker's leader: its batch added, then the accumulator. */
Datum
gpu_agg_serialize(PG_FUNCTION_ARGS)
{
	GpuextAggState *state = (GpuextAggState *) PG_GETARG_POINTER(0);
	bytea	   *result;
	size_t		extra;

	(void) AggContext(fcinfo);
	StateFlush(state);
	extra = GpuextNumericSerialSize(&state->acc);
	result = palloc(VARHDRSZ + sizeof(GpuextAccum) + extra);
	SET_VARSIZE(result, VARHDRSZ + sizeof(GpuextAccum) + extra);
	memcpy(VARDATA(result), &state->acc, sizeof(GpuextAccum));
	GpuextNumericSerialWrite(&state->acc, VARDATA(result) + sizeof(GpuextAccum));
	PG_RETURN_BYTEA_P(result);
}

PG_FUNCTION_INFO_V1(gpu_agg_deserialize);

/* Deserialize a partial aggregate (same build on both sides). */
Datum
gpu_agg_deserialize(PG_FUNCTION_ARGS)
{
	bytea	   *data = PG_GETARG_BYTEA_PP(0);
	GpuextAggState *state;

	(void) AggContext(fcinfo);
	if (VARSIZE_ANY_EXHDR(data) < sizeof(GpuextAccum))
		elog(ERROR, "gpuext partial aggregate has %zu bytes, expected at least %zu",
			 (size_t) VARSIZE_ANY_EXHDR(data), sizeof(GpuextAccum));
	state = palloc0(sizeof(GpuextAggState));
	memcpy(&state->acc, VARDATA_ANY(data), sizeof(GpuextAccum));
	GpuextNumericSerialRead(&state->acc, VARDATA_ANY(data) + sizeof(GpuextAccum),
							VARSIZE_ANY_EXHDR(data) - sizeof(GpuextAccum));
	GpuextAccumAttach(&state->acc);
	state->value_bytes = state->acc.type->value_bytes;
	PG_RETURN_POINTER(state);
}

/* A final function: the result of one aggregate kind from the group's state. */
static Datum
AggFinal(FunctionCallInfo fcinfo, GpuextAggKind kind)
{
	GpuextAggState *state = PG_ARGISNULL(0) ? NULL : (GpuextAggState *) PG_GETARG_POINTER(0);
	bool		isnull;
	Datum		result;

	/* Adding the batch leaves the state's values as they were: other final calls may follow. */
	if (state)
		StateFlush(state);
	result = GpuextAccumResult(state ? &state->acc : NULL, kind, &isnull);

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
