/*
 * agg_accum.h
 *		Exact, order-independent accumulators behind gpu_sum, gpu_avg, gpu_min,
 *		gpu_max and gpu_count.
 */
#ifndef GPUEXT_AGG_ACCUM_H
#define GPUEXT_AGG_ACCUM_H

#include "gpuext.h"
#include "sort_keys.h"

/* One accumulator: count, exact sum, min and max of the values added. */
typedef struct GpuextAccum
{
	Oid			typid;			/* base element type */
	const GpuextSortType *type;	/* its table entry; valid in this process only */
	int64		count;
	int128		isum;			/* integer types */
	int64		pending;		/* float additions since the digits were normalised */
	bool		has_nan;
	bool		has_pos_inf;
	bool		has_neg_inf;
	uint64		min_key;
	uint64		max_key;
	Datum		min_value;
	Datum		max_value;
	int64		digits[GPUEXT_EXACT_DIGITS];	/* float types: the sum, least significant first */
	/* numeric (agg_numeric.c): isum is the sum * 10^nscale, or past 128 bits nbig_sum is */
	int32		nscale;
	bool		nbig;
	bool		min_fixed_ok;	/* min_value * 10^nscale is min_fixed */
	bool		max_fixed_ok;
	int32		min_dscale;
	int32		max_dscale;
	int128		min_fixed;
	int128		max_fixed;
	Datum		nbig_sum;		/* numeric, in cxt */
	MemoryContext cxt;			/* where numeric min_value, max_value and nbig_sum live */
} GpuextAccum;

extern void GpuextAccumInit(GpuextAccum *acc, Oid typid);
extern void GpuextAccumAdd(GpuextAccum *acc, Datum value);
extern void GpuextAccumAddArray(GpuextAccum *acc, const char *values, size_t n);
extern void GpuextAccumMerge(GpuextAccum *dst, const GpuextAccum *src);
extern void GpuextAccumAttach(GpuextAccum *acc);
extern bool GpuextAccumIsFloat(const GpuextAccum *acc);
extern bool GpuextAccumHasSum(const GpuextAccum *acc);
extern double GpuextAccumFloatSum(GpuextAccum *acc, int mantissa_bits, int min_exponent);

/* Store one by-value Datum of a supported type as an array stores it (value_bytes bytes). */
static inline void
GpuextStoreDatum(const GpuextSortType *type, Datum value, char *dst)
{
	switch (type->value_bytes)
	{
		case 2:
			*(int16 *) dst = DatumGetInt16(value);
			break;
		case 4:
			*(int32 *) dst = DatumGetInt32(value);	/* a float4 Datum holds its bits */
			break;
		default:
			*(int64 *) dst = DatumGetInt64(value);	/* likewise float8 (by value) */
			break;
	}
}

extern void GpuextAccumMergeReduce(GpuextAccum *acc, const GpuextReduceResult *r);

/* agg_numeric.c, agg_numeric_result.c: numeric as 128-bit fixed point at the largest display scale seen. */
extern const GpuextSortType GpuextNumericFixedType;
extern const GpuextSortType *GpuextAggTypeLookup(Oid typid);

typedef enum GpuextNumericRoute
{
	GPUEXT_NUMERIC_BATCH,		/* into the caller's batch, as the fixed value given */
	GPUEXT_NUMERIC_RESCALE,		/* flush the batches, then GpuextNumericAdd */
	GPUEXT_NUMERIC_CPU			/* GpuextNumericAdd */
} GpuextNumericRoute;

extern void GpuextNumericAdd(GpuextAccum *acc, Datum value);
extern void GpuextNumericAddFixedValue(GpuextAccum *acc, int128 v, int dscale);
extern int	GpuextNumericToFixed(Datum value, int scale, int128 *out);
extern float8 GpuextNumericToFloat8(Datum value);
extern float4 GpuextNumericToFloat4(Datum value);
extern Datum GpuextFixedToNumeric(int128 v, int scale);
extern Datum GpuextFixed192ToNumeric(uint128 low, int64 top, int scale);
extern Datum GpuextNumericCopy(Datum value, MemoryContext cxt);
extern Datum GpuextNumericSum(const GpuextAccum *acc);
extern bool GpuextFixedMulPow10(int128 *v, int k);
extern GpuextNumericRoute GpuextNumericPrepare(GpuextAccum *acc, Datum value, int128 *fixed);
extern void GpuextNumericAddFixed(GpuextAccum *acc, const int128 *values, size_t n);
extern void GpuextNumericMergeReduce(GpuextAccum *acc, const GpuextReduceResult *r);
extern void GpuextNumericMergeScaled(GpuextAccum *acc, int64 count, int128 sum, int scale, int64 min, int64 max);
extern void GpuextNumericMerge(GpuextAccum *dst, const GpuextAccum *src);
extern void GpuextNumericCopyDatums(GpuextAccum *acc, MemoryContext cxt);
extern size_t GpuextNumericSerialSize(const GpuextAccum *acc);
extern void GpuextNumericSerialWrite(const GpuextAccum *acc, char *dst);
extern void GpuextNumericSerialRead(GpuextAccum *acc, const char *src, size_t len);

/* A batch of fixed-point numerics reduced whole when full (arrays). */
typedef struct GpuextNumericBatch
{
	GpuextAccum *acc;
	int128	   *values;
	size_t		n;
	size_t		cap;
} GpuextNumericBatch;

extern void GpuextNumericBatchAdd(GpuextNumericBatch *b, Datum value);
extern void GpuextNumericBatchFlush(GpuextNumericBatch *b);

/* agg_device.c: count, sum, min and max of dense values on the device, or on the CPU. */
typedef struct GpuextReducer GpuextReducer;

/* Values reduced per device batch by the column aggregates and gpu_query_agg. */
#define GPUEXT_REDUCE_BATCH ((size_t) 1 << 20)

/*
 * An aggregate state's batch: GPUEXT_REDUCE_BATCH values, or with the GPU
 * service GPUEXT_SERVICE_AGG_BATCH, since each state's two pinned batches
 * come from the arena all backends share.
 */
#define GPUEXT_SERVICE_AGG_BATCH ((size_t) 1 << 17)
extern size_t GpuextAggBatch(void);

extern GpuextReducer *GpuextReducerCreate(const GpuextSortType *type, size_t max_n);
extern void GpuextReducerSubmit(GpuextReducer *r, const char *values, size_t n);
extern void GpuextReducerFinish(GpuextReducer *r, GpuextAccum *acc);
extern void GpuextReducerDestroy(GpuextReducer *r);
extern void GpuextReducerDiscard(GpuextReducer *r);
extern char *GpuextReducerHostBatch(GpuextReducer *r);
extern GpuextReducer *GpuextReducerStart(const GpuextSortType *type, size_t max_n);

/* One step of device reduction, as device work that may fall back: what it works on. */
typedef struct GpuextReduceJob
{
	GpuextReducer *reducer;		/* the reducer stepped, or made on first use */
	MemoryContext cxt;			/* where a reducer made lives */
	const GpuextSortType *type;	/* of the values */
	GpuextAccum *acc;			/* what the batch is merged into */
	const char *values;			/* the batch */
	size_t		n;
} GpuextReduceJob;

extern GpuextDeviceOutcome GpuextReduceSubmit(GpuextReduceJob *job);
extern GpuextDeviceOutcome GpuextReduceFinish(GpuextReduceJob *job);
extern bool GpuextReducerStream(GpuextReducer **rp, size_t n, GpuextAccum *acc);
extern void GpuextAccumAddValues(GpuextAccum *acc, const char *values, size_t n);

/* gpu_agg.c: one aggregate's result, typed as PostgreSQL's own (NULL for no rows, count 0). */
typedef enum GpuextAggKind
{
	GPUEXT_AGG_SUM,
	GPUEXT_AGG_AVG,
	GPUEXT_AGG_MIN,
	GPUEXT_AGG_MAX,
	GPUEXT_AGG_COUNT
} GpuextAggKind;

extern Datum GpuextAccumResult(GpuextAccum *acc, GpuextAggKind kind, bool *isnull);
extern Datum GpuextNumericResult(GpuextAccum *acc, GpuextAggKind kind);
extern Datum GpuextGroupResultDatum(const GpuextGroupResult *r, const GpuextSortType *type, GpuextAggKind kind,
									bool *isnull);

#endif							/* GPUEXT_AGG_ACCUM_H */
