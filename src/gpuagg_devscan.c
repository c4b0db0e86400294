/*
 * gpuagg_devscan.c
 *		GpuAgg's device scan: the table's pages go to the device as stored,
 *		in batches, where a scan program (gpuagg_devprogram.c,
 *		cuda/scan_heap.h) decodes their tuples, tests the WHERE clause and
 *		each input's FILTER and gathers each input's values, which
 *		gpuext_reduce then adds up on the device for the inputs' exact
 *		accumulators.
 *
 * The CPU copies each page (through shared buffers under its content lock,
 * or from the table's files, gpuagg_pages.c) and lists the visible items of
 * a page that is not all-visible; it does nothing per row of an all-visible
 * page.  Where the device layer reads shared buffers (the GPU service pins
 * them for its devices), a page in shared buffers stays pinned until its
 * batch is done and the CPU copies only its header and line pointers: the
 * device reads the rest over the bus, in place (gpuext_scan_gather_pages).
 * A batch with a tuple the device could not decode, or the batch at hand
 * when the device fails under auto, is read on the CPU from its copies, row
 * by row, as the node reads rows elsewhere; so is the rest of that run.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/parallel.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "storage/proc.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "gpuagg.h"
#include "service.h"

/* Pages a batch holds: in the backend, and through the GPU service (its arena is shared). */
#define DEVSCAN_BATCH_PAGES 2048
#define DEVSCAN_SERVICE_BATCH_PAGES 512

bool		gpuext_enable_device_scan = GPUEXT_ENABLE_DEVICE_SCAN_DEFAULT;
bool		gpuext_device_scan_in_place = GPUEXT_DEVICE_SCAN_IN_PLACE_DEFAULT;
bool		gpuext_device_scan_whole_pages = GPUEXT_DEVICE_SCAN_WHOLE_PAGES_DEFAULT;

StaticAssertDecl(MaxHeapTuplesPerPage <= GPUEXT_SCAN_MAX_TUPLES, "a page's items fit the device scan's list");

/*
 * Whether this run's scan goes to the device: a program, the device in use,
 * a heap scan without serializable checks, and under auto a table of at
 * least gpuext.min_gpu_elements rows (by its statistics, else 50 a block).
 */
bool
GpuAggDevScanUsable(GpuAggState *st, GpuAggPages *pg)
{
	double		rows = pg->rel->rd_rel->reltuples > 0 ? pg->rel->rd_rel->reltuples : pg->nblocks * 50.0;

	if (st->dev.program == NULL || !st->run_device || pg->check_serializable || !gpuext_enable_device_scan ||
		(st->groups.nkeys > 0 && !GpuAggDevGroupsUsable(st)))
		return false;
	return gpuext_device_mode == GPUEXT_DEVICE_GPU || rows >= gpuext_min_gpu_elements;
}

/* The device scan's buffers given back, those it has. */
static void
DevScanFree(GpuAggDevScan *ds)
{
	if (ds->gback)
		GpuextBufferFree(ds->gback);
	if (ds->prog)
		GpuextBufferFree(ds->prog);
	if (ds->back)
		GpuextBufferFree(ds->back);
	for (int k = 0; k < 2; k++)
	{
		if (ds->batches[k].host)
			GpuextBufferFree(ds->batches[k].host);
		pfree(ds->batches[k].blknos);
		pfree(ds->batches[k].pins);
	}
	if (ds->device)
		GpuextBufferFree(ds->device);
	pfree(ds);
}

/* The device scan's buffers given back, for a run that lays them out again (a larger table of groups). */
void
GpuAggDevScanDrop(GpuAggState *st)
{
	if (st->dev.buffers != NULL)
		DevScanFree(st->dev.buffers);
	st->dev.buffers = NULL;
}

/*
 * The device scan's buffers for batches of batch_pages pages; NULL (nothing
 * held) where memory is short, or an ERROR for device memory unless
 * missing_ok.
 */
static GpuAggDevScan *
DevScanTry(GpuAggState *st, uint32 batch_pages, bool missing_ok)
{
	GpuextScanProgram *p = st->dev.program;
	MemoryContext old = MemoryContextSwitchTo(st->nodecxt);
	GpuAggDevScan *ds = palloc0(sizeof(GpuAggDevScan));
	size_t		vis_bytes;
	size_t		outs = 0;
	size_t		back_bytes = sizeof(uint64) * GPUEXT_SCAN_COUNTERS + sizeof(GpuextReduceResult) * GPUEXT_SCAN_MAX_OUTS * 2;

	ds->batch_pages = batch_pages;
	vis_bytes = TYPEALIGN(256, (size_t) ds->batch_pages * GPUEXT_SCAN_VIS_SLOTS * sizeof(uint16));
	ds->vis_off = (size_t) ds->batch_pages * BLCKSZ;
	ds->refs_off = ds->vis_off + vis_bytes;
	ds->counts_off = ds->vis_off + vis_bytes;
	ds->outs_off = ds->counts_off + TYPEALIGN(256, sizeof(uint64) * GPUEXT_SCAN_COUNTERS);
	p->out_cap = (uint64) ds->batch_pages * MaxHeapTuplesPerPage;
	for (int o = 0; o < p->nouts; o++)
	{
		GpuAggInput *in = &st->inputs[o];
		size_t		scratch = 0;

		if (p->outs[o].value_bytes == 0)
			continue;
		p->outs[o].offset = outs;
		outs += TYPEALIGN(256, p->out_cap * p->outs[o].value_bytes);
		GpuextCheck(gpuext_reduce_scratch_bytes(p->outs[o].value_bytes, GpuAggInputIsFloat(in), p->out_cap, &scratch),
					"reduction setup");
		ds->scratch_bytes = Max(ds->scratch_bytes, scratch);
	}
	if (p->nkeys > 0)
		outs = GpuAggDevGroupsLayout(st, p, outs);
	ds->outs_bytes = Max(outs, 8);
	ds->scratch_off = ds->outs_off + ds->outs_bytes;
	for (int k = 0; k < 2; k++)
	{
		ds->batches[k].blknos = palloc(sizeof(BlockNumber) * ds->batch_pages);
		ds->batches[k].pins = palloc0(sizeof(Buffer) * ds->batch_pages);
	}
	ds->b = &ds->batches[0];
	ds->device = GpuextDeviceAlloc(ds->scratch_off + ds->scratch_bytes, missing_ok);
	for (int k = 0; k < 2; k++)
		ds->batches[k].host = ds->device && (k == 0 || ds->batches[0].host) ?
			GpuextPinnedAllocShort(ds->refs_off + sizeof(uint32) * ds->batch_pages) : NULL;
	ds->back = ds->batches[1].host ? GpuextPinnedAllocShort(back_bytes) : NULL;
	ds->prog = ds->back ? GpuextPinnedAllocShort(sizeof(GpuextScanProgram) * (p->nkeys > 0 ? 2 : 1)) : NULL;
	if (ds->prog != NULL && p->nkeys > 0)
	{
		/* where the device numbers the groups, a chunk of them read back */
		ds->gback = GpuextPinnedAllocShort(((size_t) sizeof(GpuextScanNewGroup) + sizeof(uint32) +
											sizeof(uint64) * p->ncounters) *
										   (p->number_groups ? GPUAGG_DEVGROUPS_CHUNK : p->table_cap));
		if (ds->gback == NULL)
		{
			GpuextBufferFree(ds->prog);
			ds->prog = NULL;
		}
	}
	MemoryContextSwitchTo(old);
	if (ds->prog == NULL)
	{
		DevScanFree(ds);
		return NULL;
	}
	/* GROUP BY: the values pass, then the keys pass */
	p->pass = GPUEXT_SCAN_PASS_VALUES;
	memcpy(ds->prog->ptr, p, sizeof(GpuextScanProgram));
	if (p->nkeys > 0)
	{
		GpuextScanProgram *keys = (GpuextScanProgram *) ds->prog->ptr + 1;

		*keys = *p;
		keys->pass = GPUEXT_SCAN_PASS_KEYS;
	}
	return ds;
}

/*
 * The device scan's buffers, kept for the node's runs: through the GPU
 * service, batches of twice the pages where its shared arena has room for
 * them; NULL (nothing held) where memory is short.
 */
static GpuAggDevScan *
DevScanStart(GpuAggState *st)
{
	GpuAggDevScan *ds = NULL;

	if (gpuext_service != NULL)
		ds = DevScanTry(st, 2 * DEVSCAN_SERVICE_BATCH_PAGES, true);
	if (ds == NULL)
		ds = DevScanTry(st, gpuext_service != NULL ? DEVSCAN_SERVICE_BATCH_PAGES : DEVSCAN_BATCH_PAGES,
						gpuext_device_mode == GPUEXT_DEVICE_AUTO || st->groups.grown);
	return ds;
}

/*
 * Merge a reduction of a numeric input's device values (bigints at its
 * dev_scale: count, 128-bit sum, min and max as bigint keys) into acc.
 */
void
GpuAggDevScanMergeNumeric(GpuAggInput *in, GpuextAccum *acc, uint64 count, uint64 sum_lo, int64 sum_hi,
						  uint64 min_key, uint64 max_key)
{
	const GpuextSortType *int8type = GpuextSortTypeLookup(INT8OID);

	GpuextNumericMergeScaled(acc, (int64) count, (int128) (((uint128) (uint64) sum_hi << 64) | sum_lo), in->dev_scale,
							 DatumGetInt64(int8type->key_datum(min_key)), DatumGetInt64(int8type->key_datum(max_key)));
}

/* The batch's counters, as the device wrote them. */
static inline const uint64 *
Counts(GpuAggDevScan *ds)
{
	return (const uint64 *) ds->back->ptr;
}

/* The reduction result of output o in slot slot. */
static inline GpuextReduceResult *
OutResult(GpuAggDevScan *ds, int slot, int o)
{
	return (GpuextReduceResult *) (ds->back->ptr + sizeof(uint64) * GPUEXT_SCAN_COUNTERS) +
		slot * GPUEXT_SCAN_MAX_OUTS + o;
}

/*
 * The batch's pages and visible items up to the device: the pages copied
 * sent, or, where some are in shared buffers, all of them gathered by the
 * device from the copies and the buffers.
 */
void
GpuAggDevScanUpload(GpuAggDevScan *ds)
{
	char	   *dev = ds->device->ptr;
	GpuAggDevBatch *b = ds->b;

	if (b->npins > 0)
		GpuextCheck(gpuext_gather_pages(dev, b->host->ptr, (const uint32_t *) (b->host->ptr + ds->refs_off),
										b->npages), "gathering of pages");
	else
		GpuextCheck(gpuext_cuda_copy_to_device(dev, b->host->ptr, (size_t) b->npages * BLCKSZ),
					"copy to device");
	GpuextCheck(gpuext_cuda_copy_to_device(dev + ds->vis_off, b->host->ptr + ds->vis_off,
										   (size_t) b->npages * GPUEXT_SCAN_VIS_SLOTS * sizeof(uint16)),
				"copy to device");
}

/* Let go of a batch's pages read in place, once the device and the CPU are done with them. */
static void
ReleasePins(GpuAggDevBatch *b)
{
	for (uint32 i = 0; i < b->npages && b->npins > 0; i++)
		if (BufferIsValid(b->pins[i]))
		{
			ReleaseBuffer(b->pins[i]);
			b->pins[i] = InvalidBuffer;
			b->npins--;
		}
	b->npins = 0;
}

/* The batch's scan by program p (pinned), and its counters back into ds->back, enqueued. */
void
GpuAggDevScanEnqueue(GpuAggDevScan *ds, const GpuextScanProgram *p)
{
	char	   *dev = ds->device->ptr;

	GpuextCheck(gpuext_scan_heap(p, dev, (const uint16_t *) (dev + ds->vis_off), ds->b->npages,
								 (uint64_t *) (dev + ds->counts_off), dev + ds->outs_off, ds->outs_bytes),
				"device scan");
	GpuextCheck(gpuext_cuda_copy_to_host(ds->back->ptr, dev + ds->counts_off, sizeof(uint64) * GPUEXT_SCAN_COUNTERS),
				"copy to host");
}

struct GpuAggDevFill
{
	GpuAggState *st;
	GpuAggPages *pg;
	GpuAggDevBatch *b;			/* the batch to fill */
	bool		more;			/* the table has pages after it */
};

/*
 * Fill batch f->b with the next pages of this process's share: each copied,
 * or its header copied and its buffer kept pinned where the device reads it
 * in place (up to max_in_place a batch).
 */
static void
FillBatch(GpuAggDevScan *ds, GpuAggDevFill *f)
{
	GpuAggPages *pg = f->pg;
	GpuAggDevBatch *b = f->b;
	uint16	   *vis = (uint16 *) (b->host->ptr + ds->vis_off);
	uint32	   *refs = (uint32 *) (b->host->ptr + ds->refs_off);

	b->npages = 0;
	b->npins = 0;
	b->nwhole = 0;
	while (b->npages < ds->batch_pages)
	{
		uint16	   *v = vis + (Size) b->npages * GPUEXT_SCAN_VIS_SLOTS;

		CHECK_FOR_INTERRUPTS();
		pg->copy_to = b->host->ptr + (Size) b->npages * BLCKSZ;
		pg->in_place_ok = ds->in_place && b->npins < ds->max_in_place;
		if (!(f->more = GpuAggPagesNext(pg)))
			break;
		b->pins[b->npages] = pg->in_place;
		refs[b->npages] = !BufferIsValid(pg->in_place) ? GPUEXT_SCAN_COPIED :
			(uint32) (pg->in_place - 1) | (pg->whole ? GPUEXT_SCAN_WHOLE : 0);
		b->npins += BufferIsValid(pg->in_place);
		b->nwhole += pg->whole;
		if (pg->all_visible && pg->ntuples == 0)
			v[0] = GPUEXT_SCAN_ALL_VISIBLE;
		else
		{
			v[0] = pg->ntuples;
			memcpy(v + 1, pg->offsets, sizeof(OffsetNumber) * pg->ntuples);
		}
		b->blknos[b->npages++] = pg->blkno;
	}
	pg->copy_to = NULL;
	pg->in_place_ok = false;
}

/*
 * Wait for the device scan's work enqueued so far; the first wait of a
 * batch first fills the next batch, while the device works.  Its time is
 * the scan's, not the device's.
 */
void
GpuAggDevScanWait(GpuAggDevScan *ds)
{
	GpuextCheck(gpuext_cuda_mark(GPUAGG_DEVSCAN_EVENT), "event record");
	if (ds->fill != NULL)
	{
		GpuAggDevFill *f = ds->fill;
		instr_time	start;

		ds->fill = NULL;
		if (f->st->timing)
			INSTR_TIME_SET_CURRENT(start);
		FillBatch(ds, f);
		if (f->st->timing)
			f->st->stats.device_ms -= GpuAggElapsedMs(start);
	}
	GpuextWait(GPUAGG_DEVSCAN_EVENT);
}

typedef struct DevScanJob
{
	GpuAggState *st;
	GpuAggDevScan *ds;
} DevScanJob;

/*
 * One batch on the device: its pages up, the scan, its counters back, its
 * outputs' reductions enqueued into the free slot of results.  They are not
 * waited for: the next batch's wait, or the run's end, passes them.
 */
static bool
DevScanBatch(DevScanJob *job)
{
	GpuAggState *st = job->st;
	GpuAggDevScan *ds = job->ds;
	const GpuextScanProgram *p = (const GpuextScanProgram *) ds->prog->ptr;
	char	   *dev = ds->device->ptr;

	GpuAggDevScanUpload(ds);
	GpuAggDevScanEnqueue(ds, p);
	GpuAggDevScanWait(ds);
	/* the batch before's reductions were enqueued ahead of this batch's scan */
	ds->pending_done = true;
	/* the CPU reads a batch with an undecodable tuple, or raises the arithmetic's error in row order */
	ds->bad = Counts(ds)[GPUEXT_SCAN_BAD] > 0 || Counts(ds)[GPUEXT_SCAN_ERRORS] > 0;
	if (ds->bad)
		return true;
	for (int o = 0; o < p->nouts; o++)
	{
		GpuAggInput *in = &st->inputs[o];
		uint64		n = Counts(ds)[GPUEXT_SCAN_OUT_COUNT + o];

		if (p->outs[o].value_bytes == 0 || n == 0)
			continue;
		if (n > p->out_cap)
			elog(ERROR, "gpuext: device scan output of " UINT64_FORMAT " values past its room", n);
		GpuextCheck(gpuext_reduce(p->outs[o].value_bytes, GpuAggInputIsFloat(in), dev + ds->outs_off + p->outs[o].offset, n,
								  dev + ds->scratch_off, ds->scratch_bytes, OutResult(ds, ds->slot, o)), "reduction");
	}
	return true;
}

GPUEXT_DEVICE_WORK(DevScanBatch, DevScanJob)

/* The run's last reductions passed. */
static bool
DevScanDrain(DevScanJob *job)
{
	GpuAggDevScanWait(job->ds);
	return true;
}

GPUEXT_DEVICE_WORK(DevScanDrain, DevScanJob)

/*
 * The batch before's reductions merged into their inputs, where a wait has
 * passed them; where the device failed before that (auto), the run is lost
 * with them and starts again on the CPU.
 */
static void
MergePending(GpuAggState *st, GpuAggDevScan *ds)
{
	const GpuextScanProgram *p = st->dev.program;

	if (ds->pending_outs == 0)
		return;
	if (!ds->pending_done)
	{
		GpuAggNoteFallback(st, "the device failed");
		st->device_lost = true;
		ds->pending_outs = 0;
		return;
	}
	for (int o = 0; o < p->nouts; o++)
	{
		GpuAggInput *in = &st->inputs[o];
		const GpuextReduceResult *r = OutResult(ds, ds->pending_slot, o);

		if (!(ds->pending_outs & (1u << o)))
			continue;
		if (in->dev_scale >= 0)
			GpuAggDevScanMergeNumeric(in, in->acc, r->count, r->isum_lo, r->isum_hi, r->min_key, r->max_key);
		else
			GpuextAccumMergeReduce(in->acc, r);
	}
	ds->pending_outs = 0;
}

/*
 * Count a batch the device scanned, refused where the CPU reads it again
 * (a value the device cannot hold, an arithmetic error): true, noted, where
 * most of the run's batches were, so that the rest of the run is the CPU's.
 */
bool
GpuAggDevScanRefused(GpuAggState *st, GpuAggDevScan *ds, bool refused)
{
	ds->tried++;
	ds->refused += refused;
	if (ds->refused < 4 || ds->refused * 2 <= ds->tried)
		return false;
	GpuAggNoteFallback(st, "most batches held values the device scan leaves to the CPU");
	return true;
}

/* One full batch: on the device, its results merged into the inputs; or on the CPU. */
static void
RunBatch(GpuAggState *st, GpuAggDevScan *ds, bool *lost)
{
	DevScanJob	job = {st, ds};
	const GpuextScanProgram *p = st->dev.program;
	instr_time	start;
	GpuextDeviceOutcome outcome = GPUEXT_DEVICE_FAILED;

	if (st->timing)
		INSTR_TIME_SET_CURRENT(start);
	ds->pending_done = false;
	if (!*lost)
		outcome = TryDevScanBatch(&job, "device scan");
	if (st->timing)
		st->stats.device_ms += GpuAggElapsedMs(start);
	MergePending(st, ds);
	if (st->device_lost)
		return;
	if (outcome != GPUEXT_DEVICE_DONE || ds->bad)
	{
		if (outcome != GPUEXT_DEVICE_DONE && !*lost)
		{
			GpuAggNoteFallback(st, "the device failed");
			*lost = true;
		}
		else if (!*lost && GpuAggDevScanRefused(st, ds, true))
			*lost = true;
		GpuAggDevScanCpuBatch(st, ds);
		return;
	}
	GpuAggDevScanRefused(st, ds, false);
	GpuextCountHeapGetNext(st->css.ss.ss_currentRelation, Counts(ds)[GPUEXT_SCAN_DECODED]);
	st->stats.rows_read += Counts(ds)[GPUEXT_SCAN_DECODED];
	st->stats.rows_passed += Counts(ds)[GPUEXT_SCAN_PASSED];
	st->stats.device_tuples += Counts(ds)[GPUEXT_SCAN_DECODED];
	st->stats.device_blocks += ds->b->npages;
	st->stats.device_batches++;
	/* counts now; the reductions' results at the next wait (MergePending) */
	for (int o = 0; o < p->nouts; o++)
	{
		GpuAggInput *in = &st->inputs[o];
		uint64		n = Counts(ds)[GPUEXT_SCAN_OUT_COUNT + o];

		if (in->type == NULL)
			in->count += n;
		else if (n > 0)
			ds->pending_outs |= 1u << o;
	}
	ds->pending_slot = ds->slot;
	ds->slot ^= 1;
}

/*
 * This process's share of the table through the device: pages put in one
 * pinned batch as they are read while the device works on the other, each
 * full batch scanned there.  False, having read nothing, where the device's
 * buffers cannot be had.
 */
bool
GpuAggDevScanRun(GpuAggState *st, GpuAggPages *pg)
{
	GpuAggDevScan *ds = st->dev.buffers;
	GpuAggDevFill fill;
	bool		lost = false;

	if (ds == NULL)
		ds = st->dev.buffers = DevScanStart(st);
	if (ds == NULL)
	{
		GpuAggNoteFallback(st, "no device memory for the device scan");
		return false;
	}
	/* pages in shared buffers read in place; both batches pinned at once as PostgreSQL lets a backend pin */
	ds->in_place = gpuext_device_scan_in_place && gpuext_dev->reads_buffers() && !RelationUsesLocalBuffers(pg->rel);
	ds->max_in_place = Min(ds->batch_pages, (uint32) (NBuffers / (MaxBackends + NUM_AUXILIARY_PROCS) / 2));
	if (st->groups.nkeys > 0)
		GpuAggDevGroupsBegin(st, ds);
	ds->pages = pg;
	ds->tried = ds->refused = 0;
	ds->pending_outs = 0;
	ds->slot = 0;
	fill.st = st;
	fill.pg = pg;
	fill.b = &ds->batches[0];
	FillBatch(ds, &fill);
	ds->b = fill.b;
	while (ds->b->npages > 0 && !st->device_lost)
	{
		GpuAggDevBatch *next = ds->b == &ds->batches[0] ? &ds->batches[1] : &ds->batches[0];

		next->npages = 0;
		fill.b = next;
		ds->fill = fill.more ? &fill : NULL;
		if (st->groups.nkeys > 0)
			GpuAggDevGroupsBatch(st, ds);
		else
			RunBatch(st, ds, &lost);
		/* the batch's work did not come to a wait (the CPU read it) */
		if (ds->fill != NULL)
		{
			ds->fill = NULL;
			FillBatch(ds, &fill);
		}
		if (!st->device_lost && !GpuAggDevScanWholeStillVisible(ds))
		{
			GpuAggNoteFallback(st, "a page changed while the device read it");
			st->device_lost = true;
		}
		ReleasePins(ds->b);
		ds->b = next;
	}
	ds->fill = NULL;
	if (ds->pending_outs != 0 && !st->device_lost)
	{
		DevScanJob	job = {st, ds};
		instr_time	start;

		if (st->timing)
			INSTR_TIME_SET_CURRENT(start);
		ds->pending_done = TryDevScanDrain(&job, "device scan") == GPUEXT_DEVICE_DONE;
		if (st->timing)
			st->stats.device_ms += GpuAggElapsedMs(start);
		MergePending(st, ds);
	}
	ds->pending_outs = 0;
	ReleasePins(&ds->batches[0]);
	ReleasePins(&ds->batches[1]);
	return true;
}
