/*
 * gpusort_devrows.c
 *		GpuSort's rows past the host budget kept in device memory.
 *
 * When the stored rows pass gpuext.sort_work_mem and a device is usable,
 * the rows stored so far, then every row read after them, go to the device
 * a piece at a time through the two halves of a pinned buffer: each half
 * holds a piece's rows (minimal tuples, back to back; none in keys-only
 * mode), where each row starts, and its key; a full half is copied up while
 * the other fills.  The device buffers grow by doubling (a copy on the
 * device).  Once the input is read the device sorts the keys, and pieces of
 * rows in sorted order (gpuext_gather_rows; keys-only: of sorted keys) come
 * back into the halves as rows are emitted, either way; the rows stay on the
 * device until the node ends, so rescans and mark/restore replay them.
 *
 * Fallback: device memory short, or (under auto) a device failure, before
 * the first sorted piece is back, brings the rows on the device back into
 * PostgreSQL's tuplesort, nothing lost or repeated; a failure once rows are
 * being emitted is an ERROR, as for streamed keys.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/memutils.h"

#include "gpusort.h"

bool		gpuext_sort_rows_on_device = GPUEXT_SORT_ROWS_ON_DEVICE_DEFAULT;
int			gpuext_debug_sort_piece_size = GPUEXT_DEBUG_SORT_PIECE_SIZE_DEFAULT;

/* Half h: while uploading rows | offsets (half_rows + 1) | keys (half_rows); while emitting, one piece. */
static inline char *
HalfRows(GpuSortDevRows *d, int h)
{
	return d->pinned->ptr + (size_t) h * d->half_bytes;
}

/* Where each row of half h's piece starts on the device (uploading). */
static inline uint64 *
HalfOffsets(GpuSortDevRows *d, int h)
{
	return (uint64 *) (HalfRows(d, h) + d->rows_area);
}

/* The keys of half h's piece (uploading; keys-only, the whole half). */
static inline uint64 *
HalfKeys(GpuSortDevRows *d, int h)
{
	return HalfOffsets(d, h) + (d->rows_area > 0 ? d->half_rows + 1 : 0);
}

/* Bytes of one row's key. */
static inline size_t
KeyBytes(GpuSortState *st)
{
	return st->key.nwords * sizeof(uint64);
}

/* Device memory held now, and its peak, for EXPLAIN. */
static void
CountDevice(GpuSortDevRows *d, GpuextBuffer *buf, bool add)
{
	if (buf == NULL)
		return;
	if (add)
		d->device_bytes += buf->bytes;
	else
		d->device_bytes -= buf->bytes;
	d->device_peak = Max(d->device_peak, d->device_bytes);
}

/* Device memory in the rows' context; NULL when short under auto. */
static GpuextBuffer *
DevAlloc(GpuSortDevRows *d, size_t bytes)
{
	MemoryContext old = MemoryContextSwitchTo(d->cxt);
	GpuextBuffer *buf = GpuextDeviceAlloc(bytes, gpuext_device_mode == GPUEXT_DEVICE_AUTO);

	MemoryContextSwitchTo(old);
	CountDevice(d, buf, true);
	return buf;
}

/* Free a device buffer of the rows now. */
static void
DevFree(GpuSortDevRows *d, GpuextBuffer **buf)
{
	if (*buf == NULL)
		return;
	CountDevice(d, *buf, false);
	GpuextBufferFree(*buf);
	*buf = NULL;
}

/* Make *buf hold need bytes, keeping its first used bytes: twice as large, moved on the device; false if short. */
static bool
DevReserve(GpuSortDevRows *d, GpuextBuffer **buf, size_t used, size_t need)
{
	GpuextBuffer *grown;

	if (need <= (*buf)->bytes)
		return true;
	grown = DevAlloc(d, Max(need, 2 * (*buf)->bytes));
	if (grown == NULL)
		return false;
	if (used > 0)
		GpuextCheck(gpuext_cuda_copy_on_device(grown->ptr, (*buf)->ptr, used), "copy on device");
	DevFree(d, buf);
	*buf = grown;
	return true;
}

/* Remember where a piece sent to the device ends, for recovery to read it back. */
static void
RememberPiece(GpuSortDevRows *d)
{
	if (d->npieces == d->maxpieces)
	{
		d->maxpieces = Max(d->maxpieces * 2, 64);
		if (d->up_rows == NULL)
		{
			d->up_rows = MemoryContextAlloc(d->cxt, d->maxpieces * sizeof(size_t));
			d->up_bytes = MemoryContextAlloc(d->cxt, d->maxpieces * sizeof(size_t));
		}
		else
		{
			d->up_rows = repalloc(d->up_rows, d->maxpieces * sizeof(size_t));
			d->up_bytes = repalloc(d->up_bytes, d->maxpieces * sizeof(size_t));
		}
	}
	d->up_rows[d->npieces] = d->shipped;
	d->up_bytes[d->npieces] = d->shipped_bytes;
	d->npieces++;
}

/*
 * Send the half being filled to the device (with the end offset of the last
 * row when last), and start filling the other half once its copy is done;
 * false, having sent nothing, when device memory is short.
 */
static bool
ShipFill(GpuSortState *st, bool last)
{
	GpuSortDevRows *d = &st->devrows;
	int			h = d->fill;
	size_t		rows = st->store.nrows - d->piece_first;
	size_t		noffsets = rows + (last ? 1 : 0);
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	if (d->rows_area > 0)
	{
		HalfOffsets(d, h)[rows] = d->shipped_bytes + d->piece_bytes;
		if (!DevReserve(d, &d->drows, d->shipped_bytes, d->shipped_bytes + d->piece_bytes) ||
			!DevReserve(d, &d->doffsets, d->shipped * sizeof(uint64), (d->shipped + noffsets) * sizeof(uint64)))
			return false;
	}
	if (!DevReserve(d, &d->dkeys, d->shipped * KeyBytes(st), (d->shipped + rows) * KeyBytes(st)))
		return false;
	if (d->rows_area > 0)
	{
		GpuextCheck(gpuext_cuda_copy_to_device(d->drows->ptr + d->shipped_bytes, HalfRows(d, h), d->piece_bytes),
					"copy to device");
		GpuextCheck(gpuext_cuda_copy_to_device(d->doffsets->ptr + d->shipped * sizeof(uint64), HalfOffsets(d, h),
											   noffsets * sizeof(uint64)), "copy to device");
	}
	GpuextPieceToDevice(d->dkeys->ptr + d->shipped * KeyBytes(st), (const char *) HalfKeys(d, h), rows * KeyBytes(st), h);
	/* The piece is on its way: from here on it is the device's to give back */
	d->shipped += rows;
	d->shipped_bytes += d->piece_bytes;
	RememberPiece(d);
	d->fill = 1 - h;
	d->piece_first = st->store.nrows;
	d->piece_bytes = 0;
	if (!last)
		GpuextWait(d->fill);
	st->stats.transfer_ms += ElapsedMs(start);
	return true;
}

/* ShipFill of a piece before the last, as device work that may fall back. */
static bool
ShipMore(GpuSortState *st)
{
	return ShipFill(st, false);
}

GPUEXT_DEVICE_WORK(ShipMore, GpuSortState)

/* Give tuplesort the rows of one piece as they lie in a half (keys-only: rebuilt from their keys). */
static void
PieceToTuplesort(GpuSortState *st, TupleTableSlot *slot, const char *half, size_t rows, size_t bytes)
{
	if (st->key.keys_only)
	{
		for (size_t r = 0; r < rows; r += KEY_BATCH)
		{
			size_t		n = Min(KEY_BATCH, rows - r);

			CHECK_FOR_INTERRUPTS();
			GpuSortDecodeKeys(st, (const uint64 *) half + r * st->key.nwords, n);
			for (size_t j = 0; j < n; j++)
			{
				ExecClearTuple(slot);
				memcpy(slot->tts_values, st->key.dec_values + j * st->key.natts, sizeof(Datum) * st->key.natts);
				memcpy(slot->tts_isnull, st->key.dec_isnull + j * st->key.natts, sizeof(bool) * st->key.natts);
				ExecStoreVirtualTuple(slot);
				tuplesort_puttupleslot(st->cpu.tuplesort, slot);
			}
		}
		st->key.dec_n = 0;
		return;
	}
	for (size_t off = 0, r = 0; off < bytes; r++)
	{
		MinimalTuple tuple = (MinimalTuple) (half + off);

		if ((r & GPUEXT_CFI_MASK) == 0)
			CHECK_FOR_INTERRUPTS();
		ExecStoreMinimalTuple(tuple, slot, false);
		tuplesort_puttupleslot(st->cpu.tuplesort, slot);
		off += MAXALIGN(tuple->t_len);
	}
}

/* The state of the rows on the device while they are brought back. */
typedef struct Recovery
{
	GpuSortState *st;
	RunInput   *in;
} Recovery;

/*
 * Bring every row back into the tuplesort begun: first those of the half being
 * filled (not sent), then each piece sent, read back through half 0.
 */
static bool
RowsToTuplesort(Recovery *r)
{
	GpuSortState *st = r->st;
	GpuSortDevRows *d = &st->devrows;
	TupleTableSlot *slot = MakeSingleTupleTableSlot(st->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor,
													st->key.keys_only ? &TTSOpsVirtual : &TTSOpsMinimalTuple);
	const char *fill = st->key.keys_only ? (const char *) HalfKeys(d, d->fill) : HalfRows(d, d->fill);
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	GpuextWait(-1);
	PieceToTuplesort(st, slot, fill, st->store.nrows - d->piece_first, d->piece_bytes);
	for (size_t p = 0; p < d->npieces; p++)
	{
		size_t		first = p > 0 ? d->up_rows[p - 1] : 0;
		size_t		first_byte = p > 0 ? d->up_bytes[p - 1] : 0;
		size_t		rows = d->up_rows[p] - first;
		size_t		bytes = d->up_bytes[p] - first_byte;

		if (st->key.keys_only)
			GpuextPieceToHost((char *) HalfKeys(d, 0), d->dkeys->ptr + first * KeyBytes(st), rows * KeyBytes(st), 0);
		else
			GpuextPieceToHost(HalfRows(d, 0), d->drows->ptr + first_byte, bytes, 0);
		GpuextWait(0);
		PieceToTuplesort(st, slot, st->key.keys_only ? (const char *) HalfKeys(d, 0) : HalfRows(d, 0), rows, bytes);
	}
	ExecDropSingleTupleTableSlot(slot);
	st->stats.transfer_ms += ElapsedMs(start);
	return true;
}

GPUEXT_DEVICE_WORK(RowsToTuplesort, Recovery)

/*
 * The device cannot go on with the rows (why): under auto, or when memory is
 * short, tuplesort takes them back; if the device cannot give them back,
 * auto reads the input again where it can, else the statement fails.
 */
static void
FallBack(GpuSortState *st, RunInput *in, const char *why)
{
	Recovery	r = {st, in};

	if (in->batched > 0)
		in->batched = GpuSortFlushKeys(st, in->values, in->isnull, in->batched);
	/* In the node's context: device work runs in one of its own, gone when it ends */
	GpuSortStartTuplesort(st, in->budget_kb);
	if (TryRowsToTuplesort(&r, "sort") != GPUEXT_DEVICE_DONE)
	{
		if (st->cpu.tuplesort)
			tuplesort_end(st->cpu.tuplesort);
		st->cpu.tuplesort = NULL;
		if (gpuext_device_mode == GPUEXT_DEVICE_AUTO && GpuSortCanReread(st))
		{
			/* No row went out yet: the input is read again, straight into tuplesort */
			st->cpu.rows_lost = true;
			st->cpu.fallback = psprintf("input passed the memory budget of %lld kB, kept in device memory; then %s and the rows were lost, so the input was read again",
										(long long) in->budget_kb, why);
			GpuSortDevRowsEnd(st);
			st->store.nrows = 0;
			return;
		}
		ereport(ERROR,
				(errcode(ERRCODE_SYSTEM_ERROR),
				 errmsg("GpuSort could not bring back the rows it kept in device memory"),
				 errdetail("The rows went to the device when they passed the memory budget of %lld kB; then %s.",
						   (long long) in->budget_kb, why),
				 errhint("Raise gpuext.sort_work_mem, or turn gpuext.sort_rows_on_device off, to keep the rows in host memory.")));
	}
	st->cpu.fallback = psprintf("input passed the memory budget of %lld kB, kept in device memory; then %s",
								(long long) in->budget_kb, why);
	GpuSortDevRowsEnd(st);
	st->store.nrows = 0;
}

/* Begin a new piece in the fill half if this row's bytes (and its key) do not fit; false if the rows fell back. */
static bool
MakeRoom(GpuSortState *st, RunInput *in, size_t bytes)
{
	GpuSortDevRows *d = &st->devrows;
	const char *why;

	if (st->store.nrows - d->piece_first < d->half_rows && d->piece_bytes + bytes <= d->rows_area)
		return true;
	if (in->batched > 0)
		in->batched = GpuSortFlushKeys(st, in->values, in->isnull, in->batched);
	switch (TryShipMore(st, "sort"))
	{
		case GPUEXT_DEVICE_DONE:
			if (bytes <= d->rows_area)
				return true;
			/* A row larger than a half: larger halves, once both are free */
			GpuextWait(-1);
			d->rows_area = MAXALIGN(bytes);
			d->half_bytes = d->rows_area + (d->half_rows + 1) * sizeof(uint64) + d->half_rows * KeyBytes(st);
			{
				MemoryContext old = MemoryContextSwitchTo(d->cxt);

				GpuextBufferFree(d->pinned);
				d->pinned = GpuextPinnedAlloc(2 * d->half_bytes);
				MemoryContextSwitchTo(old);
			}
			return true;
		case GPUEXT_DEVICE_SHORT:
			why = "device memory was short";
			break;
		default:
			why = "the device failed";
			break;
	}
	FallBack(st, in, why);
	return false;
}

/*
 * Room in the fill half for one more row of bytes (0 keys-only), a new piece
 * begun if need be: where to copy the row, or NULL when the rows fell back to
 * tuplesort (then the caller gives it this row too).  Records where it starts.
 */
char *
GpuSortDevRowsPlace(GpuSortState *st, RunInput *in, size_t bytes)
{
	GpuSortDevRows *d = &st->devrows;
	char	   *at;

	if (!MakeRoom(st, in, bytes))
		return NULL;
	if (d->rows_area == 0)
		return HalfRows(d, d->fill);
	HalfOffsets(d, d->fill)[st->store.nrows - d->piece_first] = d->shipped_bytes + d->piece_bytes;
	at = HalfRows(d, d->fill) + d->piece_bytes;
	d->piece_bytes += bytes;
	return at;
}

/* Where the key of row first (of the piece being filled) is built. */
uint64 *
GpuSortDevRowsKeySlot(GpuSortState *st, size_t first)
{
	return HalfKeys(&st->devrows, st->devrows.fill) + (first - st->devrows.piece_first) * st->key.nwords;
}

/* Lay the halves out for this sort: rows, offsets and keys in proportion to the rows stored so far. */
static void
LayOut(GpuSortState *st, RunInput *in)
{
	GpuSortDevRows *d = &st->devrows;
	size_t		row_bytes = st->key.keys_only ? 0 : in->row_bytes / Max(st->store.nrows, 1);
	size_t		per_row = row_bytes + (st->key.keys_only ? 0 : sizeof(uint64)) + KeyBytes(st);

	d->half_bytes = (size_t) gpuext_debug_sort_piece_size * 1024;
	d->half_rows = Max(d->half_bytes / per_row / KEY_BATCH, 1) * KEY_BATCH;
	if (st->key.keys_only)
	{
		d->half_bytes = d->half_rows * KeyBytes(st);
		d->rows_area = 0;
		return;
	}
	d->rows_area = MAXALIGN(Max(d->half_rows * row_bytes, d->half_bytes / 2));
	d->half_bytes = d->rows_area + (d->half_rows + 1) * sizeof(uint64) + d->half_rows * KeyBytes(st);
}

/* Room on the device at first: what the planner expects, at least twice and at most 64 times what is stored. */
static size_t
FirstRoom(GpuSortState *st, size_t stored, size_t min)
{
	double		rows = Max(st->css.ss.ps.plan->plan_rows * 1.1 + 1, (double) st->store.nrows);
	double		want = rows / Max(st->store.nrows, 1) * stored;

	want = Min(Max(want, 2.0 * stored), 64.0 * stored);
	return Max((size_t) want, min);
}

/* Move the stored rows to the device; false (having moved nothing for good) if device memory is short. */
static bool
StartOnDevice(GpuSortState *st)
{
	GpuSortDevRows *d = &st->devrows;
	size_t		n = st->store.nrows;
	MemoryContext old = MemoryContextSwitchTo(d->cxt);

	d->pinned = gpuext_device_mode == GPUEXT_DEVICE_AUTO ? GpuextPinnedAllocShort(2 * d->half_bytes)
		: GpuextPinnedAlloc(2 * d->half_bytes);
	MemoryContextSwitchTo(old);
	if (d->pinned == NULL)
		return false;
	d->dkeys = DevAlloc(d, FirstRoom(st, n * KeyBytes(st), d->half_rows * KeyBytes(st)));
	if (d->dkeys == NULL)
		return false;
	if (!st->key.keys_only)
	{
		d->drows = DevAlloc(d, FirstRoom(st, st->stats.host_bytes - n * KeyBytes(st), d->rows_area));
		d->doffsets = d->drows ? DevAlloc(d, FirstRoom(st, (n + 1) * sizeof(uint64), (d->half_rows + 1) * sizeof(uint64))) : NULL;
		if (d->doffsets == NULL)
			return false;
	}
	d->active = true;
	d->fill = 0;
	d->piece_first = 0;
	st->store.nrows = 0;
	for (size_t i = 0; i < n; i++)
	{
		size_t		bytes = st->key.keys_only ? 0 : MAXALIGN(st->store.rows[i]->t_len);

		if ((i & GPUEXT_CFI_MASK) == 0)
			CHECK_FOR_INTERRUPTS();
		if (st->store.nrows - d->piece_first == d->half_rows || d->piece_bytes + bytes > d->rows_area)
		{
			if (bytes > d->rows_area)
				return false;	/* a row larger than a half: rare enough for tuplesort */
			if (!ShipFill(st, false))
				return false;
		}
		if (!st->key.keys_only)
		{
			HalfOffsets(d, d->fill)[i - d->piece_first] = d->shipped_bytes + d->piece_bytes;
			memcpy(HalfRows(d, d->fill) + d->piece_bytes, st->store.rows[i], st->store.rows[i]->t_len);
			d->piece_bytes += bytes;
		}
		memcpy(HalfKeys(d, d->fill) + (i - d->piece_first) * st->key.nwords, st->store.keys + i * st->key.nwords,
			   KeyBytes(st));
		st->store.nrows++;
	}
	return true;
}

GPUEXT_DEVICE_WORK(StartOnDevice, GpuSortState)

/*
 * The stored rows passed the host budget: move them, and the rest of the
 * input after them, to the device when one is usable.  NULL once they are
 * there; else why not, "" when it was not tried (then tuplesort takes them
 * from host memory).
 */
const char *
GpuSortDevRowsStart(GpuSortState *st, RunInput *in)
{
	GpuSortDevRows *d = &st->devrows;
	GpuextDeviceOutcome outcome;
	size_t		n = st->store.nrows;
	instr_time	start;

	if (!gpuext_sort_rows_on_device || st->store.nrows >= PG_UINT32_MAX || !GpuextUseDevice())
		return "";
	memset(d, 0, sizeof(GpuSortDevRows));
	d->cxt = AllocSetContextCreate(st->css.ss.ps.state->es_query_cxt, "GpuSort device rows", ALLOCSET_DEFAULT_SIZES);
	d->host_peak = st->stats.host_bytes;
	LayOut(st, in);
	INSTR_TIME_SET_CURRENT(start);
	outcome = TryStartOnDevice(st, "sort");
	st->stats.transfer_ms += ElapsedMs(start);
	if (outcome != GPUEXT_DEVICE_DONE)
	{
		/* Nothing was let go on the host: tuplesort takes the rows from there */
		GpuSortDevRowsEnd(st);
		st->store.nrows = n;
		return outcome == GPUEXT_DEVICE_SHORT ? "device memory is short" : "the device failed";
	}
	MemoryContextReset(st->store.rowcxt);
	st->store.rows = NULL;
	st->store.arena_next = st->store.arena_end = NULL;
	st->store.keys = NULL;
	st->store.capacity = 0;
	st->stats.host_bytes = 0;
	return NULL;
}

/* Rows of a keys-only piece coming back: a half of sorted keys. */
static inline size_t
KeysPieceRows(GpuSortState *st)
{
	return st->devrows.half_bytes / KeyBytes(st);
}

/* Enqueue piece k of the sorted rows (or keys) into its half. */
static void
Enqueue(GpuSortState *st, size_t k)
{
	GpuSortDevRows *d = &st->devrows;
	int			h = k % 2;

	if (st->key.keys_only)
	{
		size_t		first = k * KeysPieceRows(st);

		GpuextPieceToHost(HalfRows(d, h), d->dsorted_keys + first * KeyBytes(st),
						  Min(KeysPieceRows(st), st->store.nrows - first) * KeyBytes(st), h);
	}
	else
	{
		GpuextCheck(gpuext_gather_rows(d->drows->ptr, d->shipped_bytes, (const uint64_t *) d->doffsets->ptr,
									   (const uint32_t *) d->dorder, st->store.nrows, d->starts[k], !d->sorted,
									   d->dout, d->half_bytes, d->dscratch, d->scratch_bytes), "gather");
		GpuextPieceToHost(HalfRows(d, h), d->dout,
						  sizeof(GpuextGatherHeader) + Min(d->half_bytes - sizeof(GpuextGatherHeader),
														   d->shipped_bytes - d->cum[k]), h);
	}
	d->loaded[h] = k;
	d->ready[h] = false;
}

/* Wait for half h's piece; the first time it comes, learn where the next begins; index its rows. */
static void
Arrived(GpuSortState *st, int h)
{
	GpuSortDevRows *d = &st->devrows;
	const GpuextGatherHeader *header = (const GpuextGatherHeader *) HalfRows(d, h);
	size_t		k = d->loaded[h];
	size_t		off = sizeof(GpuextGatherHeader);

	GpuextWait(h);
	d->ready[h] = true;
	if (st->key.keys_only)
		return;
	if (header->rows == 0 || header->bytes > d->half_bytes - sizeof(GpuextGatherHeader))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("GpuSort's piece of rows %zu from the device is malformed", k)));
	if (k == d->nknown)
	{
		if (k + 2 > d->maxknown)
		{
			d->maxknown *= 2;
			d->starts = repalloc(d->starts, d->maxknown * sizeof(size_t));
			d->cum = repalloc(d->cum, d->maxknown * sizeof(uint64));
		}
		d->starts[k + 1] = d->starts[k] + header->rows;
		d->cum[k + 1] = d->cum[k] + header->bytes;
		d->nknown++;
	}
	if (header->rows > d->index_cap[h])
	{
		d->index_cap[h] = Max(header->rows, 2 * d->index_cap[h]);
		if (d->index[h])
			pfree(d->index[h]);
		d->index[h] = MemoryContextAlloc(d->cxt, d->index_cap[h] * sizeof(uint32));
		d->host_peak = Max(d->host_peak, (d->index_cap[0] + d->index_cap[1]) * sizeof(uint32) +
						   d->maxknown * (sizeof(size_t) + sizeof(uint64)));
	}
	for (size_t j = 0; j < header->rows; j++)
	{
		d->index[h][j] = (uint32) off;
		off += MAXALIGN(((MinimalTuple) (HalfRows(d, h) + off))->t_len);
	}
}

/* Half holding piece k, brought back (and waited for) if it is not there. */
static int
Load(GpuSortState *st, size_t k)
{
	GpuSortDevRows *d = &st->devrows;
	int			h = k % 2;

	if (d->loaded[h] != k)
		Enqueue(st, k);
	if (!d->ready[h])
		Arrived(st, h);
	return h;
}

/* The piece of sorted row i: known pieces searched, the next ones brought back in turn. */
static size_t
PieceOf(GpuSortState *st, size_t i)
{
	GpuSortDevRows *d = &st->devrows;
	size_t		lo = 0,
				hi;

	if (st->key.keys_only)
		return i / KeysPieceRows(st);
	while (i >= d->starts[d->nknown])
		(void) Load(st, d->nknown);
	hi = d->nknown - 1;
	while (lo < hi)
	{
		size_t		mid = (lo + hi + 1) / 2;

		if (d->starts[mid] <= i)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* First row of piece k. */
static inline size_t
PieceFirst(GpuSortState *st, size_t k)
{
	return st->key.keys_only ? k * KeysPieceRows(st) : st->devrows.starts[k];
}

/* Half holding sorted row i (piece *k); moving forward into a piece, the next one is sent for. */
static int
Reach(GpuSortState *st, size_t i, size_t *k)
{
	GpuSortDevRows *d = &st->devrows;
	size_t		last = d->last_piece;
	int			h;

	/* Most rows lie in the piece of the row before them */
	if (last != SIZE_MAX && !st->key.keys_only && last < d->nknown && d->loaded[last % 2] == last &&
		d->ready[last % 2] && i >= d->starts[last] && i < d->starts[last + 1])
	{
		*k = last;
		return last % 2;
	}
	*k = PieceOf(st, i);
	h = Load(st, *k);
	if (*k != d->last_piece)
	{
		size_t		next = *k + 1;

		if ((d->last_piece == SIZE_MAX || *k == d->last_piece + 1) && d->loaded[next % 2] != next &&
			(st->key.keys_only || next <= d->nknown) && PieceFirst(st, next) < st->store.nrows)
			Enqueue(st, next);
		d->last_piece = *k;
	}
	return h;
}

/* Sorted row i, in a pinned half (valid until the next row is asked for). */
MinimalTuple
GpuSortDevRowsTuple(GpuSortState *st, size_t i)
{
	size_t		k;
	int			h = Reach(st, i, &k);

	return (MinimalTuple) (HalfRows(&st->devrows, h) + st->devrows.index[h][i - st->devrows.starts[k]]);
}

/* Keys-only: sorted row i's key, and the rows of its piece [first, end), all in the same half. */
const uint64 *
GpuSortDevRowsKeys(GpuSortState *st, size_t i, size_t *piece_first, size_t *piece_end)
{
	size_t		k;
	int			h = Reach(st, i, &k);

	*piece_first = PieceFirst(st, k);
	*piece_end = Min(*piece_first + KeysPieceRows(st), st->store.nrows);
	return (const uint64 *) HalfRows(&st->devrows, h) + (i - *piece_first) * st->key.nwords;
}

/*
 * Send the last piece, sort the keys and bring the first piece of sorted
 * rows back; false if device memory is short.  Until that piece is back the
 * rows are all on the device in input order, for tuplesort to take.
 */
static bool
SortOnDevice(GpuSortState *st)
{
	GpuSortDevRows *d = &st->devrows;
	size_t		n = st->store.nrows;
	size_t		order_bytes = TYPEALIGN(256, n * sizeof(uint32));
	size_t		sorted_keys_bytes = st->key.keys_only ? TYPEALIGN(256, n * KeyBytes(st)) : 0;
	size_t		sort_scratch,
				gather_scratch = 0;
	instr_time	start;

	if (!ShipFill(st, true))
		return false;
	GpuextCheck(gpuext_sort_rows_scratch_bytes(st->key.nwords, n, &sort_scratch), "sort setup");
	if (!st->key.keys_only)
		GpuextCheck(gpuext_gather_rows_scratch_bytes(n, &gather_scratch), "gather setup");
	d->scratch_bytes = Max(sort_scratch, gather_scratch);
	d->dsorted = DevAlloc(d, order_bytes + sorted_keys_bytes + TYPEALIGN(256, d->scratch_bytes) +
						  (st->key.keys_only ? 0 : d->half_bytes));
	if (d->dsorted == NULL)
		return false;
	d->dorder = d->dsorted->ptr;
	d->dsorted_keys = d->dorder + order_bytes;
	d->dscratch = d->dsorted_keys + sorted_keys_bytes;
	d->dout = d->dscratch + TYPEALIGN(256, d->scratch_bytes);

	INSTR_TIME_SET_CURRENT(start);
	GpuextCheck(gpuext_sort_rows(st->key.nwords, st->key.top_bits, (const uint64_t *) d->dkeys->ptr,
								 (uint32_t *) d->dorder, st->key.keys_only ? (uint64_t *) d->dsorted_keys : NULL, n,
								 d->dscratch, sort_scratch, GpuextPollInterrupts, NULL), "sort");
	st->stats.sort_ms += ElapsedMs(start);

	INSTR_TIME_SET_CURRENT(start);
	d->maxknown = 64;
	d->starts = MemoryContextAlloc(d->cxt, d->maxknown * sizeof(size_t));
	d->cum = MemoryContextAlloc(d->cxt, d->maxknown * sizeof(uint64));
	d->starts[0] = 0;
	d->cum[0] = 0;
	d->nknown = 0;
	d->loaded[0] = d->loaded[1] = SIZE_MAX;
	d->ready[0] = d->ready[1] = true;
	d->last_piece = SIZE_MAX;
	(void) Load(st, 0);
	st->stats.transfer_ms += ElapsedMs(start);
	d->sorted = true;
	return true;
}

GPUEXT_DEVICE_WORK(SortOnDevice, GpuSortState)

/* The input is read: sort the rows on the device, or (short, or auto and a failure) hand them to tuplesort. */
void
GpuSortDevRowsSort(GpuSortState *st, RunInput *in)
{
	switch (TrySortOnDevice(st, "sort"))
	{
		case GPUEXT_DEVICE_DONE:
			/* The keys are sorted, and the rows (or sorted keys) are all that is read from here on */
			DevFree(&st->devrows, &st->devrows.dkeys);
			break;
		case GPUEXT_DEVICE_SHORT:
			FallBack(st, in, "device memory was short");
			break;
		case GPUEXT_DEVICE_FAILED:
			FallBack(st, in, "the device failed");
			break;
	}
}

/* Let go of the rows on the device and everything that held them (a piece still on its way first). */
void
GpuSortDevRowsEnd(GpuSortState *st)
{
	GpuSortDevRows *d = &st->devrows;

	if (d->sorted && (!d->ready[0] || !d->ready[1]))
	{
		d->ready[0] = d->ready[1] = true;
		GpuextWait(-1);
	}
	if (d->cxt)
		MemoryContextDelete(d->cxt);
	memset(d, 0, sizeof(GpuSortDevRows));
}
