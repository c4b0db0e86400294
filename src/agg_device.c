/*
 * agg_device.c
 *		Count, exact sum, min and max of dense values on the device, merged
 *		into the same accumulators the CPU fills (agg_accum.c).
 *
 * A reducer owns a device buffer for one batch and a pinned result, both
 * belonging to the memory context it was created in.  Submit stages a batch
 * up and enqueues the reduction without waiting, so that the caller can
 * gather the next batch meanwhile; Finish waits and merges.  The staging
 * buffer is lent only while a batch is staged.  A streaming reducer also owns
 * two pinned host batches that the caller fills in place: one goes up while
 * the other fills, with no staging copy and no wait per batch.
 */
#include "postgres.h"

#include "catalog/pg_type.h"

#include "gpuext.h"
#include "agg_accum.h"
#include "service.h"

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
	GpuextBuffer *host[2];		/* streaming: pinned batches, each max_n values */
	int			cur;			/* the host batch being filled */
};

/* A reducer for batches of up to max_n values; NULL when auto finds device memory (or the arena) short. */
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
	r->result = GpuextPinnedAllocShort(sizeof(GpuextReduceResult));
	if (r->result == NULL)
	{
		GpuextBufferFree(r->device);
		pfree(r);
		return NULL;
	}
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

/* Wait for the submitted batch and merge it. */
void
GpuextReducerFinish(GpuextReducer *r, GpuextAccum *acc)
{
	Assert(r->pending != NULL);
	GpuextWait(REDUCE_EVENT);
	GpuextAccumMergeReduce(acc, (const GpuextReduceResult *) r->result->ptr);
	r->pending = NULL;
}

/* Merge the submitted batch, if any, into acc. */
static void
GpuextReducerSettle(GpuextReducer *r, GpuextAccum *acc)
{
	if (r->pending != NULL)
		GpuextReducerFinish(r, acc);
}

/* A reducer with two pinned host batches to fill in place; NULL when device memory or pinned memory is short. */
static GpuextReducer *
GpuextReducerCreateStreaming(const GpuextSortType *type, size_t max_n)
{
	GpuextReducer *r = GpuextReducerCreate(type, max_n);

	if (r == NULL)
		return NULL;
	for (int i = 0; i < 2; i++)
	{
		r->host[i] = GpuextPinnedAllocShort(Max(max_n, 1) * type->value_bytes);
		if (r->host[i] == NULL)
		{
			GpuextReducerDestroy(r);
			return NULL;
		}
	}
	return r;
}

/* The host batch to fill next (never the one in flight). */
char *
GpuextReducerHostBatch(GpuextReducer *r)
{
	Assert(r->host[r->cur] != NULL);
	return r->host[r->cur]->ptr;
}

/* Settle the batch in flight into acc, then send the first n values of the host batch up. */
static void
GpuextReducerSubmitHost(GpuextReducer *r, size_t n, GpuextAccum *acc)
{
	char	   *values = GpuextReducerHostBatch(r);

	Assert(n <= r->max_n);
	GpuextReducerSettle(r, acc);
	GpuextCheck(gpuext_cuda_copy_to_device(r->device->ptr, values, n * r->type->value_bytes),
				"copy to device");
	GpuextCheck(gpuext_reduce(r->type->value_bytes, r->is_float, r->device->ptr, n,
							  r->device->ptr + r->values_bytes, r->scratch_bytes,
							  (GpuextReduceResult *) r->result->ptr), "reduction");
	GpuextCheck(gpuext_cuda_mark(REDUCE_EVENT), "event record");
	r->pending = values;
	r->pending_n = n;
	r->cur ^= 1;
}

/* Free a reducer's buffers now (after Finish, or with nothing submitted). */
void
GpuextReducerDestroy(GpuextReducer *r)
{
	if (r->pending != NULL)
		GpuextWait(REDUCE_EVENT);
	for (int i = 0; i < 2; i++)
		if (r->host[i] != NULL)
			GpuextBufferFree(r->host[i]);
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

/* Values in an aggregate state's batch (agg_accum.h). */
size_t
GpuextAggBatch(void)
{
	return gpuext_service != NULL ? GPUEXT_SERVICE_AGG_BATCH : GPUEXT_REDUCE_BATCH;
}

/* Reduce one batch on the device into acc, in a reducer of its own; false if device memory is short. */
static bool
ReduceOnce(GpuextReduceJob *job)
{
	GpuextReducer *r = GpuextReducerCreate(job->type, job->n);

	if (r == NULL)
		return false;
	GpuextReducerSubmit(r, job->values, job->n);
	GpuextReducerFinish(r, job->acc);
	GpuextReducerDestroy(r);
	return true;
}

GPUEXT_DEVICE_WORK(ReduceOnce, GpuextReduceJob)

/* Make a streaming reducer for batches of n values in job's context; false if device memory is short. */
static bool
ReduceStart(GpuextReduceJob *job)
{
	MemoryContext old = MemoryContextSwitchTo(job->cxt);

	job->reducer = GpuextReducerCreateStreaming(job->type, job->n);
	MemoryContextSwitchTo(old);
	return job->reducer != NULL;
}

GPUEXT_DEVICE_WORK(ReduceStart, GpuextReduceJob)

/* Send the streaming reducer's host batch of n values (settling the one before), or only settle (n = 0). */
static bool
ReduceStream(GpuextReduceJob *job)
{
	if (job->n > 0)
		GpuextReducerSubmitHost(job->reducer, job->n, job->acc);
	else
		GpuextReducerSettle(job->reducer, job->acc);
	return true;
}

GPUEXT_DEVICE_WORK(ReduceStream, GpuextReduceJob)

/* Submit job's batch, making a reducer for GPUEXT_REDUCE_BATCH values in job's context first; false if memory is short. */
static bool
ReduceSubmit(GpuextReduceJob *job)
{
	if (job->reducer == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(job->cxt);

		job->reducer = GpuextReducerCreate(job->type, GPUEXT_REDUCE_BATCH);
		MemoryContextSwitchTo(old);
	}
	if (job->reducer == NULL)
		return false;
	GpuextReducerSubmit(job->reducer, job->values, job->n);
	return true;
}

GPUEXT_DEVICE_WORK(ReduceSubmit, GpuextReduceJob)

/* Merge the batch submitted into acc. */
static bool
ReduceFinish(GpuextReduceJob *job)
{
	GpuextReducerFinish(job->reducer, job->acc);
	return true;
}

GPUEXT_DEVICE_WORK(ReduceFinish, GpuextReduceJob)

/* Submit job's batch to its reducer (made on first use) as device work that may fall back. */
GpuextDeviceOutcome
GpuextReduceSubmit(GpuextReduceJob *job)
{
	return TryReduceSubmit(job, "reduction");
}

/* Wait for job's submitted batch and merge it into acc, as device work that may fall back. */
GpuextDeviceOutcome
GpuextReduceFinish(GpuextReduceJob *job)
{
	return TryReduceFinish(job, "reduction");
}

/*
 * Add n dense values: one device batch where placement says so, else the CPU.
 * A batch the device fails on (auto) goes to the CPU whole: acc is put back
 * as it was before the batch, so that nothing is counted twice.
 */
void
GpuextAccumAddValues(GpuextAccum *acc, const char *values, size_t n)
{
	if (GpuextUseDeviceFor(n) && n > 0)
	{
		GpuextReduceJob job = {NULL, CurrentMemoryContext, acc->type, acc, values, n};
		GpuextAccum *saved = palloc(sizeof(GpuextAccum));

		memcpy(saved, acc, sizeof(GpuextAccum));
		switch (TryReduceOnce(&job, "reduction"))
		{
			case GPUEXT_DEVICE_DONE:
				pfree(saved);
				return;
			case GPUEXT_DEVICE_SHORT:
				pfree(saved);
				elog(DEBUG1, "gpuext: device memory short for %zu values, reducing on the CPU", n);
				break;
			case GPUEXT_DEVICE_FAILED:
				memcpy(acc, saved, sizeof(GpuextAccum));
				pfree(saved);
				break;
		}
	}
	GpuextAccumAddArray(acc, values, n);
}

/* A streaming reducer in CurrentMemoryContext; NULL when the device is short of memory or (auto) fails. */
GpuextReducer *
GpuextReducerStart(const GpuextSortType *type, size_t max_n)
{
	GpuextReduceJob job = {NULL, CurrentMemoryContext, type, NULL, NULL, max_n};

	if (TryReduceStart(&job, "reduction") == GPUEXT_DEVICE_FAILED)
		return NULL;
	return job.reducer;
}

/*
 * Send the first n values of the streaming reducer's host batch (or, n = 0,
 * only merge the batch in flight) into acc.  Where the device fails (auto),
 * acc is put back as it was, the batch in flight and this one are added on
 * the CPU, and the reducer is discarded (*rp = NULL): false.
 */
bool
GpuextReducerStream(GpuextReducer **rp, size_t n, GpuextAccum *acc)
{
	GpuextReducer *r = *rp;
	GpuextReduceJob job = {r, CurrentMemoryContext, acc->type, acc, NULL, n};
	const char *pending = r->pending;
	size_t		pending_n = r->pending_n;
	GpuextAccum *saved = palloc(sizeof(GpuextAccum));

	memcpy(saved, acc, sizeof(GpuextAccum));
	if (TryReduceStream(&job, "reduction") == GPUEXT_DEVICE_DONE)
	{
		pfree(saved);
		return true;
	}
	memcpy(acc, saved, sizeof(GpuextAccum));
	pfree(saved);
	if (pending != NULL)
		GpuextAccumAddArray(acc, pending, pending_n);
	if (n > 0)
		GpuextAccumAddArray(acc, GpuextReducerHostBatch(r), n);
	GpuextReducerDiscard(r);
	*rp = NULL;
	return false;
}
