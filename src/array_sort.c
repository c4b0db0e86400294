/*
 * array_sort.c
 *		gpu_sort(anyarray, descending, algorithm): sort a one-dimensional array
 *		on the GPU, or on the CPU with the same keys and the same answer.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "gpuext.h"
#include "sort_keys.h"

/* What the algorithm argument names; device algorithms share the device layer's numbering. */
typedef enum SortChoice
{
	SORT_BITONIC = GPUEXT_SORT_BITONIC,
	SORT_QUICKSORT = GPUEXT_SORT_QUICKSORT,
	SORT_ODDEVEN = GPUEXT_SORT_ODDEVEN,
	SORT_RADIX = GPUEXT_SORT_RADIX,
	SORT_CPU,
	SORT_AUTO
} SortChoice;

static const struct
{
	const char *name;
	SortChoice	choice;
}			sort_choices[] = {
	{"auto", SORT_AUTO},
	{"bitonic", SORT_BITONIC},
	{"quicksort", SORT_QUICKSORT},
	{"oddeven", SORT_ODDEVEN},
	{"radix", SORT_RADIX},
	{"cpu", SORT_CPU},
};

/*
 * The fastest device algorithm by input size, for 32- and 64-bit keys, from
 * bench/sort_bench's kernel times (the run's table is in doc/performance.md
 * and doc/bench/auto_table.txt): bitonic for small inputs, CUB's radix sort
 * above; quicksort never wins by more than a microsecond.
 */
static const struct
{
	size_t		max_n;
	GpuextSortAlgo algo32;
	GpuextSortAlgo algo64;
}			auto_table[] = {
	{524288, GPUEXT_SORT_BITONIC, GPUEXT_SORT_BITONIC},
	{1048576, GPUEXT_SORT_RADIX, GPUEXT_SORT_BITONIC},
	{SIZE_MAX, GPUEXT_SORT_RADIX, GPUEXT_SORT_RADIX},
};

/* Parse the algorithm argument, or ERROR listing the valid names. */
static SortChoice
ParseSortChoice(text *name)
{
	char	   *s = text_to_cstring(name);

	for (int i = 0; i < lengthof(sort_choices); i++)
		if (pg_strcasecmp(s, sort_choices[i].name) == 0)
			return sort_choices[i].choice;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown gpu_sort algorithm \"%s\"", s),
			 errhint("Valid algorithms are auto, bitonic, quicksort, oddeven, radix and cpu.")));
	pg_unreachable();
}

/* Pick the device algorithm for "auto" from the measured table. */
static GpuextSortAlgo
AutoAlgorithm(size_t n, int key_bytes)
{
	for (int i = 0; i < lengthof(auto_table); i++)
		if (n <= auto_table[i].max_n)
			return key_bytes == 4 ? auto_table[i].algo32 : auto_table[i].algo64;
	return GPUEXT_SORT_RADIX;
}

/* Sort n values on the CPU through the same keys the device sorts. */
static void
SortOnCpu(const GpuextSortType *type, const char *in, char *out, size_t n, bool descending)
{
	char	   *keys = MemoryContextAllocHuge(CurrentMemoryContext, n * type->key_bytes);

	for (size_t i = 0; i < n; i += GPUEXT_CFI_MASK + 1)
	{
		CHECK_FOR_INTERRUPTS();
		type->encode(in + i * type->value_bytes, keys + i * type->key_bytes,
					 Min(n - i, GPUEXT_CFI_MASK + 1), descending);
	}
	GpuextCpuSortKeys(keys, n, type->key_bytes);
	for (size_t i = 0; i < n; i += GPUEXT_CFI_MASK + 1)
	{
		CHECK_FOR_INTERRUPTS();
		type->decode(keys + i * type->key_bytes, out + i * type->value_bytes,
					 Min(n - i, GPUEXT_CFI_MASK + 1), descending);
	}
	pfree(keys);
}

/* One sort of n values on the device: what it encodes from, decodes into, and how. */
typedef struct SortJob
{
	const GpuextSortType *type;
	GpuextSortAlgo algo;
	const char *in;
	char	   *out;
	size_t		n;
	bool		descending;
	bool		keys_out;		/* out receives the sorted keys, not values */
} SortJob;

/* Upload piece: encode the values behind these key bytes into staging. */
static void
EncodePiece(void *arg, char *piece, size_t offset, size_t bytes)
{
	SortJob    *t = (SortJob *) arg;
	size_t		first = offset / t->type->key_bytes;

	t->type->encode(t->in + first * t->type->value_bytes, piece, bytes / t->type->key_bytes,
					t->descending);
}

/* Download piece: decode sorted keys from staging into the result (or copy them as they are). */
static void
DecodePiece(void *arg, char *piece, size_t offset, size_t bytes)
{
	SortJob    *t = (SortJob *) arg;
	size_t		first = offset / t->type->key_bytes;

	if (t->keys_out)
	{
		memcpy(t->out + offset, piece, bytes);
		return;
	}
	t->type->decode(piece, t->out + first * t->type->value_bytes, bytes / t->type->key_bytes,
					t->descending);
}

/*
 * Sort on the device: keys are built in one pinned half while the other half
 * is in flight, sorted in device memory, and decoded the same way on the way
 * back (or returned as keys when keys_out).  Returns false, having done
 * nothing, if auto finds device memory short (the caller then uses the CPU).
 */
static bool
SortOnDevice(SortJob *job)
{
	size_t		kb = job->type->key_bytes;
	size_t		n = job->n;
	size_t		keys_bytes = TYPEALIGN(256, n * kb);
	size_t		scratch_bytes,
				host_bytes;
	GpuextBuffer *buf;
	GpuextBuffer *host_buf = NULL;
	char	   *staging;

	GpuextCheck(gpuext_sort_scratch_bytes(job->algo, kb, n, &scratch_bytes, &host_bytes), "sort setup");
	buf = GpuextDeviceAlloc(keys_bytes + scratch_bytes, gpuext_device_mode == GPUEXT_DEVICE_AUTO);
	if (buf == NULL)
		return false;
	staging = GpuextStagingBegin();
	/* Host scratch (quicksort's per-level bookkeeping) reuses staging, idle during the sort, when it fits. */
	if (host_bytes > 2 * GPUEXT_STAGING_HALF_BYTES)
		host_buf = GpuextPinnedAlloc(host_bytes);

	GpuextUpload(buf->ptr, n * kb, kb, staging, EncodePiece, job);
	GpuextCheck(gpuext_sort_keys(job->algo, (int) kb, buf->ptr, n, buf->ptr + keys_bytes, scratch_bytes,
								 host_buf ? host_buf->ptr : staging,
								 host_buf ? host_bytes : 2 * GPUEXT_STAGING_HALF_BYTES,
								 GpuextPollInterrupts, NULL), "sort");
	GpuextDownload(buf->ptr, n * kb, kb, staging, DecodePiece, job);

	GpuextStagingEnd();
	if (host_buf)
		GpuextBufferFree(host_buf);
	GpuextBufferFree(buf);
	return true;
}

GPUEXT_DEVICE_WORK(SortOnDevice, SortJob)

/*
 * Sort n values into their sorted keys (descending inverts them), on the
 * device with the automatic algorithm; false if auto finds device memory
 * short or the device failing.
 */
bool
GpuextSortKeysOnDevice(const GpuextSortType *type, const char *values, void *keys, size_t n,
					   bool descending)
{
	SortJob		job = {type, AutoAlgorithm(n, type->key_bytes), values, keys, n, descending, true};

	return TrySortOnDevice(&job, "sort") == GPUEXT_DEVICE_DONE;
}

PG_FUNCTION_INFO_V1(gpu_sort);

/* SQL: gpu_sort(anyarray, descending boolean, algorithm text) returns anyarray. */
Datum
gpu_sort(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	bool		descending = PG_GETARG_BOOL(1);
	SortChoice	choice = ParseSortChoice(PG_GETARG_TEXT_PP(2));
	Oid			elemtype = ARR_ELEMTYPE(arr);
	int			nitems,
				nnulls;
	const GpuextSortType *type = GpuextArrayValues(arr, "gpu_sort", &nitems, &nnulls);
	bool		use_device;
	size_t		n = (size_t) (nitems - nnulls);
	ArrayType  *result;
	Size		dataoffset,
				nbytes;
	bits8	   *bitmap;

	if (choice == SORT_ODDEVEN && n > GPUEXT_ODDEVEN_MAX_ELEMENTS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("oddeven sort is limited to %d elements, the array has %zu",
						GPUEXT_ODDEVEN_MAX_ELEMENTS, n),
				 errhint("Use algorithm bitonic, quicksort, radix or auto.")));

	/* Placement: gpuext.device decides first; auto keeps small inputs on the CPU. */
	use_device = choice != SORT_CPU && GpuextUseDevice();
	if (use_device && gpuext_device_mode == GPUEXT_DEVICE_AUTO &&
		choice == SORT_AUTO && n < (size_t) gpuext_min_gpu_elements)
		use_device = false;

	if (nitems == 0)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(elemtype));

	/* The result: one dimension from 1, values first ascending and NULLs first descending. */
	nbytes = n * type->value_bytes;
	dataoffset = nnulls ? ARR_OVERHEAD_WITHNULLS(1, nitems) : 0;
	result = palloc0((nnulls ? dataoffset : ARR_OVERHEAD_NONULLS(1)) + nbytes);
	SET_VARSIZE(result, (nnulls ? dataoffset : ARR_OVERHEAD_NONULLS(1)) + nbytes);
	result->ndim = 1;
	result->dataoffset = (int32) dataoffset;
	result->elemtype = elemtype;
	ARR_DIMS(result)[0] = nitems;
	ARR_LBOUND(result)[0] = 1;
	bitmap = ARR_NULLBITMAP(result);
	if (bitmap)
	{
		int			first = descending ? nnulls : 0;

		for (int i = first; i < first + (int) n; i++)
			bitmap[i / 8] |= 1 << (i % 8);
	}

	if (n > 1 && use_device)
	{
		GpuextSortAlgo algo = choice == SORT_AUTO ? AutoAlgorithm(n, type->key_bytes)
			: (GpuextSortAlgo) choice;

		SortJob		job = {type, algo, ARR_DATA_PTR(arr), ARR_DATA_PTR(result), n, descending, false};

		if (TrySortOnDevice(&job, "sort") == GPUEXT_DEVICE_DONE)
			PG_RETURN_ARRAYTYPE_P(result);
		elog(DEBUG1, "gpu_sort: device memory short or failing for %zu elements, sorting on the CPU", n);
	}
	SortOnCpu(type, ARR_DATA_PTR(arr), ARR_DATA_PTR(result), n, descending);
	PG_RETURN_ARRAYTYPE_P(result);
}
