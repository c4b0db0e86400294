/*
 * gpu_query.c
 *		gpu_query_agg(query) and gpu_query_sort(query, descending): aggregate or
 *		sort the first column of any query, streamed through an SPI cursor in
 *		batches, in bounded memory whatever the column's size.
 *
 * The query runs with the caller's privileges.  Aggregation feeds the same
 * exact accumulators as gpu_sum and friends; with a device, each batch is
 * reduced there while the next one is fetched.  Sorting with a device sorts
 * runs of values there, keeps the sorted keys in memory up to
 * gpuext.sort_work_mem (else work_mem) and on temporary tapes past it, and
 * merges them on the host; without one it goes through tuplesort.  Either
 * way it returns a set ordered as ORDER BY would.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/logtape.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/tuplesort.h"
#include "utils/tuplestore.h"
#include "utils/typcache.h"

#include "agg_accum.h"
#include "gpuext.h"
#include "pg_compat.h"
#include "gpusort.h"

/* Rows fetched from the cursor at a time. */
#define FETCH_BATCH 10000

/* Open a cursor on query (as the caller) and check its first column (aggregates also take numeric); returns its type. */
static Portal
OpenQuery(const char *query, const char *fname, bool aggregate, Oid *typid)
{
	SPIPlanPtr	plan;
	Portal		portal;
	TupleDesc	desc;

	plan = SPI_prepare(query, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "%s: SPI_prepare failed: %s", fname, SPI_result_code_string(SPI_result));
	if (!SPI_is_cursor_plan(plan))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_CURSOR_DEFINITION),
				 errmsg("%s: the query must return rows", fname)));
	portal = SPI_cursor_open(NULL, plan, NULL, NULL, true);
	desc = portal->tupDesc;
	if (desc == NULL || desc->natts == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_CURSOR_DEFINITION),
				 errmsg("%s: the query returns no columns", fname)));
	*typid = TupleDescAttr(desc, 0)->atttypid;
	if ((aggregate ? GpuextAggTypeLookup(getBaseType(*typid)) : GpuextSortTypeLookup(getBaseType(*typid))) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not support columns of type %s", fname, format_type_be(*typid)),
				 errdetail("Supported types: %s%s.", GpuextSortTypeNames, aggregate ? ", numeric" : "")));
	return portal;
}

/* A value of typid as text, through its output function. */
static Datum
ValueAsText(Datum value, Oid typid)
{
	Oid			output;
	bool		varlena;

	getTypeOutputInfo(typid, &output, &varlena);
	return CStringGetTextDatum(OidOutputFunctionCall(output, value));
}

/* A numeric, integer or float value as numeric (floats through their shortest exact text). */
static Datum
ValueAsNumeric(Datum value, Oid typid)
{
	if (typid == NUMERICOID)
		return value;
	return DirectFunctionCall3(numeric_in, CStringGetDatum(TextDatumGetCString(ValueAsText(value, typid))),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

/* The first column of a query's rows, read through its cursor FETCH_BATCH rows at a time. */
typedef struct QueryReader
{
	Portal		portal;
	SPITupleTable *batch;		/* the rows fetched last, NULL before the first fetch */
	uint64		nrows;
	uint64		next;
} QueryReader;

/* The next row's first column, fetching the next batch when one is used up; false after the last row. */
static bool
ReadValue(QueryReader *r, Datum *value, bool *isnull)
{
	while (r->next == r->nrows)
	{
		if (r->batch != NULL)
			SPI_freetuptable(r->batch);
		r->batch = NULL;
		CHECK_FOR_INTERRUPTS();
		SPI_cursor_fetch(r->portal, true, FETCH_BATCH);
		if (SPI_processed == 0)
			return false;
		r->batch = SPI_tuptable;
		r->nrows = SPI_processed;
		r->next = 0;
	}
	*value = SPI_getbinval(r->batch->vals[r->next++], r->batch->tupdesc, 1, isnull);
	return true;
}

/* Add the first column of every row to acc on the CPU. */
static void
AggregateOnCpu(QueryReader *reader, GpuextAccum *acc)
{
	Datum		v;
	bool		isnull;

	while (ReadValue(reader, &v, &isnull))
		if (!isnull)
			GpuextAccumAdd(acc, v);
}

/* Read up to cap non-NULL values of the first column into values; *nnulls counts the NULLs. */
static size_t
FetchValues(QueryReader *reader, const GpuextSortType *type, char *values, size_t cap, uint64 *nnulls)
{
	size_t		n = 0;
	Datum		v;
	bool		isnull;

	while (n < cap && ReadValue(reader, &v, &isnull))
	{
		if (isnull)
			(*nnulls)++;
		else
			GpuextStoreDatum(type, v, values + n++ * type->value_bytes);
	}
	return n;
}

/*
 * Read up to cap numerics of the first column into values as fixed point at
 * acc's scale; NaN, infinities and values past 128 bits go to acc directly.
 * A value of a larger scale stops the batch: *held is set to it, to be added
 * once everything batched so far is merged (it rescales acc).
 */
static size_t
FetchNumeric(QueryReader *reader, GpuextAccum *acc, char *values, size_t cap, Datum *held, bool *has_held)
{
	size_t		n = 0;
	Datum		v;
	bool		isnull;

	*has_held = false;
	while (n < cap && ReadValue(reader, &v, &isnull))
	{
		int128		fixed;

		if (isnull)
			continue;
		switch (GpuextNumericPrepare(acc, v, &fixed))
		{
			case GPUEXT_NUMERIC_BATCH:
				memcpy(values + n++ * sizeof(int128), &fixed, sizeof(int128));
				break;
			case GPUEXT_NUMERIC_CPU:
				GpuextNumericAdd(acc, v);	/* leaves the scale as it is */
				break;
			case GPUEXT_NUMERIC_RESCALE:
				*held = v;
				*has_held = true;
				return n;
		}
	}
	return n;
}

/*
 * Add the first column to acc in device batches: batch k is reduced on the
 * device while batch k + 1 is fetched into the other buffer; small batches
 * (auto) and a device short of memory leave the batch to the CPU.  Under
 * auto, once the device fails, the batch it held and all later ones are
 * added on the CPU: a batch is merged into acc exactly once either way.
 * numeric goes as fixed point; a value of a larger scale waits until the
 * batches before it are merged, then rescales acc.
 */
static void
AggregateOnDevice(QueryReader *reader, GpuextAccum *acc)
{
	const GpuextSortType *type = acc->type;
	bool		is_numeric = acc->typid == NUMERICOID;
	char	   *values[2];
	GpuextReduceJob job = {NULL, CurrentMemoryContext, type, acc, NULL, 0};
	bool		pending = false;
	bool		failed = false;
	uint64		nnulls = 0;

	for (int b = 0; b < 2; b++)
		values[b] = MemoryContextAllocHuge(CurrentMemoryContext, GPUEXT_REDUCE_BATCH * type->value_bytes);
	for (int cur = 0;; cur ^= 1)
	{
		Datum		held = (Datum) 0;
		bool		has_held = false;
		size_t		n = is_numeric
			? FetchNumeric(reader, acc, values[cur], GPUEXT_REDUCE_BATCH, &held, &has_held)
			: FetchValues(reader, type, values[cur], GPUEXT_REDUCE_BATCH, &nnulls);
		GpuextDeviceOutcome submitted = GPUEXT_DEVICE_SHORT;

		if (pending && GpuextReduceFinish(&job) != GPUEXT_DEVICE_DONE)
		{
			failed = true;
			GpuextAccumAddArray(acc, job.values, job.n);
		}
		pending = false;
		if (failed && job.reducer != NULL)
		{
			GpuextReducerDiscard(job.reducer);
			job.reducer = NULL;
		}
		if (n == 0 && !has_held)
			break;
		if (n > 0)
		{
			job.values = values[cur];
			job.n = n;
			if (!failed && GpuextUseDeviceFor(n))
			{
				submitted = GpuextReduceSubmit(&job);
				failed = submitted == GPUEXT_DEVICE_FAILED;
			}
			if (submitted == GPUEXT_DEVICE_DONE)
				pending = true;
			else
				GpuextAccumAddArray(acc, values[cur], n);
			if (failed && job.reducer != NULL)
			{
				GpuextReducerDiscard(job.reducer);
				job.reducer = NULL;
			}
		}
		if (has_held)
		{
			/* merge the batch just sent, then let the value of a larger scale rescale acc */
			if (pending && GpuextReduceFinish(&job) != GPUEXT_DEVICE_DONE)
			{
				failed = true;
				GpuextAccumAddArray(acc, job.values, job.n);
			}
			pending = false;
			GpuextAccumAdd(acc, held);
			continue;
		}
		if (n < GPUEXT_REDUCE_BATCH)
			break;
	}
	if (pending && GpuextReduceFinish(&job) != GPUEXT_DEVICE_DONE)
		GpuextAccumAddArray(acc, job.values, job.n);
	if (job.reducer != NULL)
		GpuextReducerDiscard(job.reducer);
	pfree(values[0]);
	pfree(values[1]);
}

PG_FUNCTION_INFO_V1(gpu_query_agg);

/* SQL: count, sum, min, max and avg of the first column of a query. */
Datum
gpu_query_agg(PG_FUNCTION_ARGS)
{
	char	   *query = text_to_cstring(PG_GETARG_TEXT_PP(0));
	GpuextAccum *acc = palloc(sizeof(GpuextAccum));
	TupleDesc	tupdesc;
	Datum		values[5];
	bool		nulls[5] = {false, false, false, false, false};
	QueryReader reader = {0};
	Oid			typid;
	Oid			sumtype;
	bool		isnull;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	SPI_connect();
	reader.portal = OpenQuery(query, "gpu_query_agg", true, &typid);
	GpuextAccumInit(acc, getBaseType(typid));
	/* numeric min, max and big sums outlive SPI_finish, in the caller's context */
	acc->cxt = GetMemoryChunkContext(acc);
	if (GpuextUseDevice())
		AggregateOnDevice(&reader, acc);
	else
		AggregateOnCpu(&reader, acc);
	SPI_cursor_close(reader.portal);
	SPI_finish();

	/* The results of gpu_sum and friends over the same values, as numeric and text. */
	sumtype = acc->typid == INT8OID || acc->typid == NUMERICOID ? NUMERICOID :
		GpuextAccumIsFloat(acc) ? acc->typid : INT8OID;
	values[0] = Int64GetDatum(acc->count);
	if (acc->count == 0)
		nulls[1] = nulls[2] = nulls[3] = nulls[4] = true;
	else
	{
		bool		sums = GpuextAccumHasSum(acc);

		values[1] = sums ? ValueAsNumeric(GpuextAccumResult(acc, GPUEXT_AGG_SUM, &isnull), sumtype) : (Datum) 0;
		values[2] = ValueAsText(acc->min_value, acc->typid);
		values[3] = ValueAsText(acc->max_value, acc->typid);
		values[4] = sums ? ValueAsNumeric(GpuextAccumResult(acc, GPUEXT_AGG_AVG, &isnull),
										  GpuextAccumIsFloat(acc) ? FLOAT8OID : NUMERICOID) : (Datum) 0;
		nulls[1] = nulls[4] = !sums;
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* Keys read back from a tape at a time. */
#define TAPE_CHUNK_BYTES ((size_t) 64 * 1024)

/* One sorted run of keys being merged: all in memory, or read from its tape a chunk at a time. */
typedef struct SortRun
{
	char	   *keys;			/* the run, or the current chunk of it */
	size_t		n;				/* keys in keys[] */
	size_t		pos;			/* next key in keys[] */
	LogicalTape *tape;			/* NULL for a run held in memory */
	size_t		on_tape;		/* keys still on the tape */
} SortRun;

/* All runs of one gpu_query_sort. */
typedef struct SortRuns
{
	const GpuextSortType *type;
	bool		descending;
	size_t		budget;			/* bytes of keys kept in memory */
	size_t		in_memory;		/* bytes of keys held now */
	LogicalTapeSet *tapes;		/* created at the first run past the budget */
	SortRun    *runs;
	int			nruns;
	int			maxruns;
} SortRuns;

/* The key at a run's read position, as an unsigned 64-bit number. */
static inline uint64
RunKey(const SortRuns *s, const SortRun *run)
{
	if (s->type->key_bytes == 4)
		return ((const uint32 *) run->keys)[run->pos];
	return ((const uint64 *) run->keys)[run->pos];
}

/* Sort n values into keys: on the device where placement says so, else with the CPU key sort. */
static void
SortRunKeys(SortRuns *s, const char *values, char *keys, size_t n)
{
	if (n > 1 && GpuextUseDeviceFor(n) &&
		GpuextSortKeysOnDevice(s->type, values, keys, n, s->descending))
		return;
	s->type->encode(values, keys, n, s->descending);
	GpuextCpuSortKeys(keys, n, s->type->key_bytes);
}

/* Sort n values as one run; keep its keys in memory within the budget, else write them to a tape. */
static void
AddRun(SortRuns *s, const char *values, size_t n)
{
	size_t		bytes = n * s->type->key_bytes;
	char	   *keys = MemoryContextAllocHuge(CurrentMemoryContext, Max(bytes, 1));
	SortRun    *run;

	SortRunKeys(s, values, keys, n);
	if (s->nruns == s->maxruns)
	{
		s->maxruns = Max(16, 2 * s->maxruns);
		s->runs = s->runs ? repalloc(s->runs, s->maxruns * sizeof(SortRun))
			: palloc(s->maxruns * sizeof(SortRun));
	}
	run = &s->runs[s->nruns++];
	memset(run, 0, sizeof(SortRun));
	if (s->in_memory + bytes <= s->budget)
	{
		run->keys = keys;
		run->n = n;
		s->in_memory += bytes;
		return;
	}
	if (s->tapes == NULL)
		s->tapes = LogicalTapeSetCreate(false, NULL, -1);
	run->tape = LogicalTapeCreate(s->tapes);
	LogicalTapeWrite(run->tape, keys, bytes);
	run->on_tape = n;
	pfree(keys);
}

/* Read a tape run's next chunk; false when the run is done. */
static bool
RunRefill(SortRuns *s, SortRun *run)
{
	size_t		kb = s->type->key_bytes;
	size_t		want;

	if (run->pos < run->n)
		return true;
	if (run->tape == NULL || run->on_tape == 0)
		return false;
	want = Min(run->on_tape, TAPE_CHUNK_BYTES / kb);
	if (LogicalTapeRead(run->tape, run->keys, want * kb) != want * kb)
		elog(ERROR, "gpu_query_sort: unexpected end of a temporary tape");
	run->n = want;
	run->pos = 0;
	run->on_tape -= want;
	return true;
}

/* Restore the heap order of runs (by head key) below position i. */
static void
HeapSiftDown(SortRuns *s, int *heap, int nheap, int i)
{
	for (;;)
	{
		int			l = 2 * i + 1,
					m = i,
					swap;

		if (l < nheap && RunKey(s, &s->runs[heap[l]]) < RunKey(s, &s->runs[heap[m]]))
			m = l;
		if (l + 1 < nheap && RunKey(s, &s->runs[heap[l + 1]]) < RunKey(s, &s->runs[heap[m]]))
			m = l + 1;
		if (m == i)
			return;
		swap = heap[i];
		heap[i] = heap[m];
		heap[m] = swap;
		i = m;
	}
}

/* Merge every run into the result set, smallest key first, as values of the column's type. */
static void
MergeRuns(SortRuns *s, ReturnSetInfo *rsinfo)
{
	uint64		flip = s->descending ? (s->type->key_bytes == 4 ? PG_UINT32_MAX : PG_UINT64_MAX) : 0;
	int		   *heap = palloc(Max(s->nruns, 1) * sizeof(int));
	int			nheap = 0;
	bool		isnull = false;
	uint64		emitted = 0;

	for (int i = 0; i < s->nruns; i++)
	{
		SortRun    *run = &s->runs[i];

		if (run->tape)
		{
			LogicalTapeRewindForRead(run->tape, BLCKSZ);
			run->keys = palloc(TAPE_CHUNK_BYTES);
		}
		if (RunRefill(s, run))
			heap[nheap++] = i;
	}
	for (int i = nheap / 2 - 1; i >= 0; i--)
		HeapSiftDown(s, heap, nheap, i);
	while (nheap > 0)
	{
		SortRun    *run = &s->runs[heap[0]];
		Datum		value = s->type->key_datum(RunKey(s, run) ^ flip);

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &isnull);
		run->pos++;
		if (!RunRefill(s, run))
			heap[0] = heap[--nheap];
		HeapSiftDown(s, heap, nheap, 0);
		if ((++emitted & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	pfree(heap);
}

/* Emit n NULLs into the result set. */
static void
PutNulls(ReturnSetInfo *rsinfo, uint64 n)
{
	Datum		value = (Datum) 0;
	bool		isnull = true;

	for (uint64 i = 0; i < n; i++)
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &isnull);
}

/* Sort the first column in runs (device where placement allows), merge them, NULLs as ORDER BY places them. */
static void
SortInRuns(QueryReader *reader, Oid typid, bool descending, ReturnSetInfo *rsinfo)
{
	SortRuns	s = {0};
	int64		budget_kb = gpuext_sort_work_mem >= 0 ? gpuext_sort_work_mem : work_mem;
	size_t		run_cap;
	char	   *values;
	uint64		nnulls = 0;

	s.type = GpuextSortTypeLookup(getBaseType(typid));
	s.descending = descending;
	s.budget = (size_t) budget_kb * 1024;
	/* A run (its values and keys) fits the budget, within sensible bounds for a device sort. */
	run_cap = s.budget / (s.type->value_bytes + s.type->key_bytes);
	run_cap = Max(Min(run_cap, (size_t) 4 * GPUEXT_REDUCE_BATCH), 8192);
	values = MemoryContextAllocHuge(CurrentMemoryContext, run_cap * s.type->value_bytes);
	for (;;)
	{
		size_t		n = FetchValues(reader, s.type, values, run_cap, &nnulls);

		if (n > 0)
			AddRun(&s, values, n);
		if (n < run_cap)
			break;
	}
	pfree(values);

	if (descending)
		PutNulls(rsinfo, nnulls);
	MergeRuns(&s, rsinfo);
	if (!descending)
		PutNulls(rsinfo, nnulls);
	if (s.tapes)
		LogicalTapeSetClose(s.tapes);
}

PG_FUNCTION_INFO_V1(gpu_query_sort);

/* SQL: the first column of a query, sorted as ORDER BY would, as a set of one-column records. */
Datum
gpu_query_sort(PG_FUNCTION_ARGS)
{
	char	   *query = text_to_cstring(PG_GETARG_TEXT_PP(0));
	bool		descending = PG_GETARG_BOOL(1);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext callcxt = CurrentMemoryContext;
	Tuplesortstate *sorter;
	TypeCacheEntry *tc;
	QueryReader reader = {0};
	Oid			typid;
	Datum		value;
	bool		isnull;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	if (rsinfo->setDesc->natts != 1)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("gpu_query_sort returns one column, the column definition list has %d",
						rsinfo->setDesc->natts)));

	SPI_connect();
	reader.portal = OpenQuery(query, "gpu_query_sort", false, &typid);
	if (TupleDescAttr(rsinfo->setDesc, 0)->atttypid != typid)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("gpu_query_sort: the column definition list says %s, the query's first column is %s",
						format_type_be(TupleDescAttr(rsinfo->setDesc, 0)->atttypid), format_type_be(typid))));
	if (GpuextUseDevice())
	{
		SortInRuns(&reader, typid, descending, rsinfo);
		SPI_cursor_close(reader.portal);
		SPI_finish();
		return (Datum) 0;
	}
	tc = lookup_type_cache(typid, TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);

	/* The sort lives in the caller's context, beyond SPI's. */
	MemoryContextSwitchTo(callcxt);
	sorter = tuplesort_begin_datum(typid, descending ? tc->gt_opr : tc->lt_opr, InvalidOid,
								   descending, work_mem, NULL, TUPLESORT_NONE);
	while (ReadValue(&reader, &value, &isnull))
		tuplesort_putdatum(sorter, value, isnull);
	SPI_cursor_close(reader.portal);
	SPI_finish();
	MemoryContextSwitchTo(callcxt);

	tuplesort_performsort(sorter);
	while (GpuextTuplesortGetDatum(sorter, true, &value, &isnull))
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &isnull);
	tuplesort_end(sorter);
	return (Datum) 0;
}
