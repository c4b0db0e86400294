/*
 * gpusort_device.c
 *		GpuSort on the device: the stored keys sorted there as (key, row)
 *		pairs, or the keys streamed there as they are built.
 *
 * Stored rows: the keys go up through the staging halves, the device sorts
 * them (gpuext_sort_rows) and the order (or, keys-only, the sorted keys)
 * comes back the same way.  Streamed keys (gpuext.device = gpu, a
 * forward-only keys-only sort): keys are built straight into a pinned buffer
 * of the node's own, half by half, each half shipped while the other fills;
 * they are sorted where they are and fetched back a half at a time as rows
 * go out.  Under auto a device failure becomes a WARNING and tuplesort takes
 * the rows (gpusort_fallback.c).
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "gpusort.h"

/* The pinned half that piece p of the streamed keys (half_rows rows each) goes through. */
static inline uint64 *
StreamHalf(GpuSortState *st, size_t p)
{
	return (uint64 *) (st->stream.pinned->ptr + (p % 2) * GPUEXT_STAGING_HALF_BYTES);
}

/* Enqueue the copy of piece p of the sorted keys into its half. */
static void
FetchPiece(GpuSortState *st, size_t p)
{
	size_t		rows = Min(st->stream.half_rows, st->store.nrows - p * st->stream.half_rows);
	size_t		row_bytes = st->key.nwords * sizeof(uint64);

	GpuextPieceToHost((char *) StreamHalf(st, p), st->stream.dsorted->ptr + p * st->stream.half_rows * row_bytes,
					  rows * row_bytes, p % 2);
}

/* The sorted key of row i: its own row's in host memory, or its piece's once it is back (forward only). */
const uint64 *
GpuSortSortedKey(GpuSortState *st, size_t i)
{
	size_t		p;

	if (st->stream.dsorted == NULL)
		return st->store.keys + i * st->key.nwords;
	p = i / st->stream.half_rows;
	if (p != st->stream.piece)
	{
		instr_time	start;

		/* Piece p - 1 is done with: its half takes piece p + 1 while p is emitted */
		INSTR_TIME_SET_CURRENT(start);
		GpuextWait(p % 2);
		st->stream.piece = p;
		if ((p + 1) * st->stream.half_rows < st->store.nrows)
			FetchPiece(st, p + 1);
		st->stats.transfer_ms += ElapsedMs(start);
	}
	return StreamHalf(st, p) + (i - p * st->stream.half_rows) * st->key.nwords;
}

/* What one device transfer of the node reads or writes. */
typedef struct RowTransfer
{
	GpuSortState *st;
	MinimalTuple *sorted;
	uint64	   *sorted_keys;
} RowTransfer;

/* Upload piece: the row-major keys as they are stored. */
static void
KeysPiece(void *arg, char *piece, size_t offset, size_t bytes)
{
	RowTransfer *t = (RowTransfer *) arg;

	memcpy(piece, (char *) t->st->store.keys + offset, bytes);
}

/* Download piece: row numbers in sorted order, turned at once into the tuples in that order. */
static void
OrderPiece(void *arg, char *piece, size_t offset, size_t bytes)
{
	RowTransfer *t = (RowTransfer *) arg;
	const uint32 *order = (const uint32 *) piece;
	MinimalTuple *sorted = t->sorted + offset / sizeof(uint32);
	size_t		count = bytes / sizeof(uint32);

	for (size_t i = 0; i < count; i++)
		sorted[i] = t->st->store.rows[order[i]];
}

/* Download piece: sorted keys (over the uploaded ones unless auto may yet fall back). */
static void
SortedKeysPiece(void *arg, char *piece, size_t offset, size_t bytes)
{
	RowTransfer *t = (RowTransfer *) arg;

	memcpy((char *) t->sorted_keys + offset, piece, bytes);
}

/* Sort the stored rows on the device, leaving them (or their keys) in order; false if device memory is short. */
static bool
SortRowsOnDevice(GpuSortState *st)
{
	size_t		n = st->store.nrows;
	size_t		keys_bytes = TYPEALIGN(256, n * st->key.nwords * sizeof(uint64));
	size_t		order_bytes = TYPEALIGN(256, n * sizeof(uint32));
	size_t		sorted_bytes = st->key.keys_only ? keys_bytes : 0;
	size_t		scratch_bytes;
	GpuextBuffer *buf;
	char	   *staging;
	char	   *dkeys,
			   *dorder,
			   *dsorted,
			   *dscratch;
	RowTransfer transfer = {st, NULL, NULL};
	instr_time	start;

	GpuextCheck(gpuext_sort_rows_scratch_bytes(st->key.nwords, n, &scratch_bytes), "sort setup");
	buf = GpuextDeviceAlloc(keys_bytes + order_bytes + sorted_bytes + scratch_bytes,
							gpuext_device_mode == GPUEXT_DEVICE_AUTO);
	if (buf == NULL)
		return false;
	st->stats.device_bytes = buf->bytes;
	dkeys = buf->ptr;
	dorder = dkeys + keys_bytes;
	dsorted = dorder + order_bytes;
	dscratch = dsorted + sorted_bytes;
	if (!st->key.keys_only)
	{
		transfer.sorted = GpuSortAllocRows(st, n * sizeof(MinimalTuple));
		st->stats.host_bytes += n * sizeof(MinimalTuple);
	}
	else if (gpuext_device_mode == GPUEXT_DEVICE_AUTO)
	{
		/* The stored keys stay whole until the sorted ones are back: tuplesort can still take them */
		transfer.sorted_keys = GpuSortAllocRows(st, n * st->key.nwords * sizeof(uint64));
		st->stats.host_bytes += n * st->key.nwords * sizeof(uint64);
	}
	else
		transfer.sorted_keys = st->store.keys;
	staging = GpuextStagingBegin();

	INSTR_TIME_SET_CURRENT(start);
	GpuextUpload(dkeys, n * st->key.nwords * sizeof(uint64), sizeof(uint64), staging, KeysPiece, &transfer);
	GpuextWait(-1);
	st->stats.transfer_ms += ElapsedMs(start);

	INSTR_TIME_SET_CURRENT(start);
	GpuextCheck(gpuext_sort_rows(st->key.nwords, st->key.top_bits, (const uint64_t *) dkeys, (uint32_t *) dorder,
								 st->key.keys_only ? (uint64_t *) dsorted : NULL, n, dscratch, scratch_bytes,
								 GpuextPollInterrupts, NULL), "sort");
	st->stats.sort_ms += ElapsedMs(start);

	INSTR_TIME_SET_CURRENT(start);
	if (st->key.keys_only)
	{
		GpuextDownload(dsorted, n * st->key.nwords * sizeof(uint64), sizeof(uint64), staging,
					   SortedKeysPiece, &transfer);
		if (transfer.sorted_keys != st->store.keys)
		{
			pfree(st->store.keys);
			st->store.keys = transfer.sorted_keys;
		}
		st->key.dec_n = 0;
	}
	else
	{
		GpuextDownload(dorder, n * sizeof(uint32), sizeof(uint32), staging, OrderPiece, &transfer);
		pfree(st->store.rows);
		st->store.rows = transfer.sorted;
	}
	st->stats.transfer_ms += ElapsedMs(start);

	GpuextStagingEnd();
	GpuextBufferFree(buf);
	return true;
}

GPUEXT_DEVICE_WORK(SortRowsOnDevice, GpuSortState)

/* Sort the stored rows on the device; tuplesort takes them when device memory is short or (auto) the device fails. */
void
GpuSortRowsOrSpill(GpuSortState *st, int64 budget_kb)
{
	switch (TrySortRowsOnDevice(st, "sort"))
	{
		case GPUEXT_DEVICE_DONE:
			break;
		case GPUEXT_DEVICE_SHORT:
			GpuSortSpill(st, budget_kb, "device memory is short");
			break;
		case GPUEXT_DEVICE_FAILED:
			st->stats.device_bytes = 0;
			GpuSortSpill(st, budget_kb, "the device failed");
			break;
	}
}

/*
 * Stream the keys of this run when it may: under gpuext.device = gpu (a
 * failure is an ERROR, so no host copy is needed to fall back on), for a
 * forward-only keys-only sort expected to fill a half at least.
 */
void
GpuSortStartStream(GpuSortState *st, int64 budget_kb)
{
	size_t		half_rows = GPUEXT_STAGING_HALF_BYTES / (st->key.nwords * sizeof(uint64)) / KEY_BATCH * KEY_BATCH;
	size_t		expected = GpuSortExpectedRows(st, budget_kb);
	MemoryContext old;

	if (gpuext_device_mode != GPUEXT_DEVICE_GPU || !st->key.keys_only || st->spec.random_access || expected < half_rows)
		return;
	old = MemoryContextSwitchTo(st->store.rowcxt);
	st->stream.pinned = GpuextPinnedAlloc(2 * GPUEXT_STAGING_HALF_BYTES);
	st->store.capacity = (expected + half_rows - 1) / half_rows * half_rows;
	st->stream.dkeys = GpuextDeviceAlloc(st->store.capacity * st->key.nwords * sizeof(uint64), false);
	MemoryContextSwitchTo(old);
	st->stats.device_bytes = st->stream.dkeys->bytes;
	st->stream.half_rows = half_rows;
	st->stream.shipped = 0;
	st->stream.active = st->stream.streamed = true;
}

/* Enqueue the copy of the keys in piece p's half (rows of them) to their place on the device. */
static void
ShipPiece(GpuSortState *st, size_t p, size_t rows)
{
	size_t		row_bytes = st->key.nwords * sizeof(uint64);

	GpuextPieceToDevice(st->stream.dkeys->ptr + p * st->stream.half_rows * row_bytes, (const char *) StreamHalf(st, p),
						rows * row_bytes, p % 2);
	st->stream.shipped += rows;
}

/*
 * Bring the streamed keys of the rows but the last batched back to host
 * memory, with room for every row stored, and go on as if they had never
 * left: the budget was passed, or more rows came than the device has room for.
 */
void
GpuSortUnstream(GpuSortState *st, int batched)
{
	size_t		row_bytes = st->key.nwords * sizeof(uint64);
	size_t		built = st->store.nrows - batched;
	size_t		capacity = Max(st->store.nrows, KEY_BATCH);
	RowTransfer transfer = {st, NULL, NULL};
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	transfer.sorted_keys = GpuSortAllocRows(st, capacity * row_bytes);
	GpuextWait(-1);
	/* The half being filled first: the download goes through both halves */
	memcpy(transfer.sorted_keys + st->stream.shipped * st->key.nwords, StreamHalf(st, st->stream.shipped / st->stream.half_rows),
		   (built - st->stream.shipped) * row_bytes);
	GpuextDownload(st->stream.dkeys->ptr, st->stream.shipped * row_bytes, sizeof(uint64), st->stream.pinned->ptr, SortedKeysPiece,
				   &transfer);
	GpuextBufferFree(st->stream.dkeys);
	GpuextBufferFree(st->stream.pinned);
	st->stream.dkeys = st->stream.pinned = NULL;
	st->store.keys = transfer.sorted_keys;
	st->store.capacity = capacity;
	st->stats.device_bytes = 0;
	st->stream.active = st->stream.streamed = false;
	st->stats.transfer_ms += ElapsedMs(start);
}

/* Build the keys of the last batched rows, timed, and ship a filled half; returns the new batch length (0). */
int
GpuSortFlushKeys(GpuSortState *st, const Datum *values, const bool *isnull, int batched)
{
	size_t		first = st->store.nrows - batched;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	if (st->devrows.active)
		GpuSortBuildKeys(st, GpuSortDevRowsKeySlot(st, first), values, isnull, batched);
	else if (!st->stream.active)
		GpuSortBuildKeys(st, st->store.keys + first * st->key.nwords, values, isnull, batched);
	else
		GpuSortBuildKeys(st, StreamHalf(st, first / st->stream.half_rows) + (first % st->stream.half_rows) * st->key.nwords,
				  values, isnull, batched);
	st->stats.keys_ms += ElapsedMs(start);
	if (st->stream.active && st->store.nrows % st->stream.half_rows == 0)
	{
		size_t		p = st->store.nrows / st->stream.half_rows - 1;

		/* The other half is filled next, once its last copy is done */
		INSTR_TIME_SET_CURRENT(start);
		ShipPiece(st, p, st->stream.half_rows);
		GpuextWait((p + 1) % 2);
		st->stats.transfer_ms += ElapsedMs(start);
	}
	return 0;
}

/* Sort streamed keys on the device, where they stay for the rows to be emitted from. */
void
GpuSortSortStreamed(GpuSortState *st)
{
	size_t		n = st->store.nrows;
	size_t		keys_bytes = TYPEALIGN(256, n * st->key.nwords * sizeof(uint64));
	size_t		order_bytes = TYPEALIGN(256, n * sizeof(uint32));
	size_t		scratch_bytes;
	MemoryContext old;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	if (n > st->stream.shipped)
		ShipPiece(st, st->stream.shipped / st->stream.half_rows, n - st->stream.shipped);
	st->stats.transfer_ms += ElapsedMs(start);
	GpuextCheck(gpuext_sort_rows_scratch_bytes(st->key.nwords, n, &scratch_bytes), "sort setup");
	old = MemoryContextSwitchTo(st->store.rowcxt);
	st->stream.dsorted = GpuextDeviceAlloc(keys_bytes + order_bytes + scratch_bytes, false);
	MemoryContextSwitchTo(old);
	st->stats.device_bytes += st->stream.dsorted->bytes;

	INSTR_TIME_SET_CURRENT(start);
	GpuextCheck(gpuext_sort_rows(st->key.nwords, st->key.top_bits, (const uint64_t *) st->stream.dkeys->ptr,
								 (uint32_t *) (st->stream.dsorted->ptr + keys_bytes), (uint64_t *) st->stream.dsorted->ptr, n,
								 st->stream.dsorted->ptr + keys_bytes + order_bytes, scratch_bytes,
								 GpuextPollInterrupts, NULL), "sort");
	st->stats.sort_ms += ElapsedMs(start);
	GpuextBufferFree(st->stream.dkeys);
	st->stream.dkeys = NULL;
	st->stream.active = false;
	st->stream.piece = SIZE_MAX;
	FetchPiece(st, 0);
}

/* Give back what streamed keys held once the last row is out. */
void
GpuSortEndStream(GpuSortState *st)
{
	if (st->stream.dsorted)
		GpuextBufferFree(st->stream.dsorted);
	if (st->stream.pinned)
		GpuextBufferFree(st->stream.pinned);
	st->stream.dsorted = st->stream.pinned = NULL;
}
