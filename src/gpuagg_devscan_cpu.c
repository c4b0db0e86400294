/*
 * gpuagg_devscan_cpu.c
 *		The CPU's part in a device scan batch's pages: reading the rows of a
 *		batch the device left (an undecodable tuple, an arithmetic error, a
 *		lost device), and checking, once the device has read them, that the
 *		pages it took whole from shared buffers are still all-visible.
 *
 * A page the visibility map calls all-visible is left whole to the device
 * (gpuagg_pages.c): the CPU pins its buffer and reads nothing of it.  Any
 * change to the page (a row added, updated or deleted) clears the map's bit
 * under the buffer's exclusive lock, and while this scan's snapshot holds
 * back the horizon nothing sets it again, so a bit still set under the
 * share lock after the device's reading means the device read the page as
 * it was when taken.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "utils/rel.h"

#include "gpuagg.h"

/* The visible rows of a page the device was to read whole, found now under its content lock. */
static int
WholePageRows(GpuAggDevScan *ds, Buffer buf, BlockNumber blkno, OffsetNumber *offsets)
{
	int			n;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	n = GpuAggPagesVisibleRows(ds->pages, buf, blkno, PageIsAllVisible(BufferGetPage(buf)), offsets);
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	return n;
}

/* The batch's rows read on the CPU from its copies (pages taken whole from their buffers), row by row. */
void
GpuAggDevScanCpuBatch(GpuAggState *st, GpuAggDevScan *ds)
{
	Relation	rel = st->css.ss.ss_currentRelation;
	GpuAggDevBatch *b = ds->b;
	const uint16 *vis = (const uint16 *) (b->host->ptr + ds->vis_off);
	const uint32 *refs = (const uint32 *) (b->host->ptr + ds->refs_off);
	OffsetNumber whole[MaxHeapTuplesPerPage];
	HeapTupleData tuple;

	tuple.t_tableOid = RelationGetRelid(rel);
	for (uint32 i = 0; i < b->npages; i++)
	{
		bool		taken_whole = refs[i] != GPUEXT_SCAN_COPIED && (refs[i] & GPUEXT_SCAN_WHOLE);
		/* a page taken whole: its rows found now; one read in place: its items named by the copy's line pointers */
		Page		page = taken_whole ? BufferGetPage(b->pins[i]) : (Page) (b->host->ptr + (Size) i * BLCKSZ);
		Page		items = BufferIsValid(b->pins[i]) ? BufferGetPage(b->pins[i]) : page;
		const uint16 *v = vis + (Size) i * GPUEXT_SCAN_VIS_SLOTS;
		bool		all = !taken_whole && v[0] == GPUEXT_SCAN_ALL_VISIBLE;
		int			n = taken_whole ? WholePageRows(ds, b->pins[i], b->blknos[i], whole) :
			all ? PageGetMaxOffsetNumber(page) : v[0];

		CHECK_FOR_INTERRUPTS();
		for (int j = 0; j < n; j++)
		{
			OffsetNumber off = taken_whole ? whole[j] : all ? j + 1 : v[j + 1];
			ItemId		lp = PageGetItemId(page, off);

			if (!ItemIdIsNormal(lp))
				continue;
			tuple.t_data = (HeapTupleHeader) PageGetItem(items, lp);
			tuple.t_len = ItemIdGetLength(lp);
			ItemPointerSet(&tuple.t_self, b->blknos[i], off);
			pgstat_count_heap_getnext(rel);
			st->stats.device_cpu_tuples++;
			GpuAggTakeHeapRow(st, &tuple);
		}
	}
	st->stats.cpu_batches++;
}

/*
 * Whether the pages of the batch the device read whole are all still
 * all-visible, now that its reading is done; where one is not, what the
 * device made of the batch cannot be trusted, and the run is the CPU's.
 */
bool
GpuAggDevScanWholeStillVisible(GpuAggDevScan *ds)
{
	GpuAggDevBatch *b = ds->b;
	const uint32 *refs = (const uint32 *) (b->host->ptr + ds->refs_off);

	for (uint32 i = 0; i < b->npages && b->nwhole > 0; i++)
	{
		if (refs[i] == GPUEXT_SCAN_COPIED || !(refs[i] & GPUEXT_SCAN_WHOLE))
			continue;
		if (!GpuAggPagesStillVisible(ds->pages, b->pins[i], b->blknos[i]) || GpuextFaultFires(GPUEXT_FAULT_RECHECK))
			return false;
	}
	return true;
}
