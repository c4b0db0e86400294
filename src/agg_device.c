/*
 * agg_device.c
 *		Count, exact sum, min and max of dense values on the device, merged
 *		into the same accumulators the CPU fills (agg_accum.c).
 *
 * A reducer owns a device buffer for one batch and a pinned result, both
 * belonging to the memory context it was created in.  Submit stages a batch
 * up and enqueues the reduction without waiting, so that the caller can
 * gather the next batch meanwhile; Finish waits and merges.  The staging
 * buffer is lent only while a batch is staged.
 */
#include "postgres.h"

#include "catalog/pg_type.h"

#include "gpuext.h"
#include "agg_accum.h"

/* The event slot marking the end of a reduction (slots 0 and 1 are the staging halves'). */
#define REDUCE_EVENT 2

struct GpuextReducer
{
	const GpuextSortType *type;
	bool		is_float;
	size_t		max_n;
	size_t		values_bytes;	/* device bytes for max_n values, aligned */
	size_t		scratch_bytes;
	GpuextBuffer *device;		/* values, then scratch */
	GpuextBuffer *result;		/* pinned GpuextReduceResult */
	const char *pending;		/* the submitted batch (kept by the caller until Finish) */
	size_t		pending_n;
};

/* A reducer for batches of up to max_n values; NULL when auto finds device memory short. */
GpuextReducer *
GpuextReducerCreate(const GpuextSortType *type, size_t max_n)
{
	GpuextReducer *r = palloc0(sizeof(GpuextReducer));

	r->type = type;
	r->is_float = type->typid == FLOAT4OID || type->typid == FLOAT8OID;
	r->max_n = max_n;
	r->values_bytes = TYPEALIGN(256, Max(max_n, 1) * type->value_bytes);
	GpuextCheck(gpuext_reduce_scratch_bytes(type->value_bytes, r->is_float, max_n, &r->scratch_bytes),
				"reduction setup");
	r->device = GpuextDeviceAlloc(r->values_bytes + r->scratch_bytes,
								  gpuext_device_mode == GPUEXT_DEVICE_AUTO);
	if (r->device == NULL)
	{
		pfree(r);
		return NULL;
	}
	r->result = GpuextPinnedAlloc(sizeof(GpuextReduceResult));
	return r;
}

/* Upload piece: copy the values behind these bytes into staging. */
static void
CopyPiece(void *arg, char *piece, size_t offset, size_t bytes)
{
	memcpy(piece, (const char *) arg + offset, bytes);
}

/* Stage n values up and enqueue their reduction; the values must stay until Finish. */
void
GpuextReducerSubmit(GpuextReducer *r, const char *values, size_t n)
{
	char	   *staging;

	Assert(r->pending == NULL && n <= r->max_n);
	staging = GpuextStagingBegin();
	GpuextUpload(r->device->ptr, n * r->type->value_bytes, r->type->value_bytes, staging,
				 CopyPiece, (void *) values);
	GpuextCheck(gpuext_reduce(r->type->value_bytes, r->is_float, r->device->ptr, n,
							  r->device->ptr + r->values_bytes, r->scratch_bytes,
							  (GpuextReduceResult *) r->result->ptr), "reduction");
	GpuextCheck(gpuext_cuda_mark(REDUCE_EVENT), "event record");
	GpuextStagingEnd();
	r->pending = values;
	r->pending_n = n;
}

/* Wait for the submitted batch and merge it; floats the device could not sum exactly go to the CPU. */
void
GpuextReducerFinish(GpuextReducer *r, GpuextAccum *acc)
{
	Assert(r->pending != NULL);
	GpuextWait(REDUCE_EVENT);
	if (!GpuextAccumMergeReduce(acc, (const GpuextReduceResult *) r->result->ptr))
		GpuextAccumAddArray(acc, r->pending, r->pending_n);
	r->pending = NULL;
}

/* Free a reducer's buffers now (after Finish, or with nothing submitted). */
void
GpuextReducerDestroy(GpuextReducer *r)
{
	if (r->pending != NULL)
		GpuextWait(REDUCE_EVENT);
	GpuextBufferFree(r->result);
	GpuextBufferFree(r->device);
	pfree(r);
}

/* Free a reducer's buffers without waiting, after a device failure (freeing waits for the device). */
void
GpuextReducerDiscard(GpuextReducer *r)
{
	r->pending = NULL;
	GpuextReducerDestroy(r);
}

/* One batch of GpuextAccumAddValues as device work that may fall back (GpuextTryDevice). */
typedef struct AddBatch
{
	GpuextAccum *acc;
	const char *values;
	size_t		n;
	GpuextReducer **keep;
	MemoryContext keepcxt;
	bool		reduced;		/* out: the device reduced the batch into acc */
} AddBatch;

/* GpuextTryDevice callback: reduce the batch on the device, with the kept reducer if any. */
static void
AddBatchRun(void *arg)
{
	AddBatch   *b = (AddBatch *) arg;
	GpuextReducer *r = b->keep ? *b->keep : NULL;

	if (r == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(b->keep ? b->keepcxt : CurrentMemoryContext);

		r = GpuextReducerCreate(b->acc->type, b->keep ? Max(b->n, GPUEXT_REDUCE_BATCH) : b->n);
		MemoryContextSwitchTo(old);
		if (b->keep)
			*b->keep = r;
	}
	if (r != NULL && b->n <= r->max_n)
	{
		GpuextReducerSubmit(r, b->values, b->n);
		GpuextReducerFinish(r, b->acc);
		if (!b->keep)
			GpuextReducerDestroy(r);
		b->reduced = true;
	}
}

/*
 * Add n dense values: one device batch where placement says so, else the CPU.
 * With keep, the reducer is made in keepcxt and kept there for the next batch,
 * since device and pinned allocations cost more than a batch's transfer.
 * A batch the device fails on (auto) goes to the CPU whole: acc is put back
 * as it was before the batch, so that nothing is counted twice.
 */
void
GpuextAccumAddValues(GpuextAccum *acc, const char *values, size_t n, GpuextReducer **keep,
					 MemoryContext keepcxt)
{
	if (GpuextUseDeviceFor(n) && n > 0)
	{
		AddBatch	batch = {acc, values, n, keep, keepcxt, false};
		GpuextAccum *saved = palloc(sizeof(GpuextAccum));

		memcpy(saved, acc, sizeof(GpuextAccum));
		if (GpuextTryDevice(AddBatchRun, &batch, "reduction"))
		{
			pfree(saved);
			if (batch.reduced)
				return;
			elog(DEBUG1, "gpuext: device memory short for %zu values, reducing on the CPU", n);
		}
		else
		{
			memcpy(acc, saved, sizeof(GpuextAccum));
			pfree(saved);
			if (keep && *keep)
				GpuextReducerDiscard(*keep);
			if (keep)
				*keep = NULL;
		}
	}
	GpuextAccumAddArray(acc, values, n);
}
