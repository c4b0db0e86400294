/*
 * gpusort_fallback.c
 *		GpuSort on the CPU: PostgreSQL's Sort executor run inside the node,
 *		or a tuplesort that takes the stored rows over.
 *
 * Where the sort runs is known at executor start for a backend without a
 * GPU and for small LIMIT bounds: the node then runs the Sort it replaced,
 * at exactly its cost.  Rows past the memory budget, and inputs the device
 * cannot take, go to tuplesort, which gives the same order.
 */
#include "postgres.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "gpusort.h"

/* The Sort plan node this GpuSort replaced, rebuilt to run inside it. */
static Sort *
MakeSortPlan(GpuSortState *st, CustomScan *cscan)
{
	Sort	   *sort = makeNode(Sort);

	memcpy(&sort->plan, &cscan->scan.plan, sizeof(Plan));
	sort->plan.type = T_Sort;
	sort->plan.targetlist = cscan->custom_scan_tlist;
	sort->plan.initPlan = NIL;
	sort->numCols = st->spec.nkeys;
	sort->sortColIdx = st->spec.colidx;
	sort->sortOperators = st->spec.sortops;
	sort->collations = st->spec.collations;
	sort->nullsFirst = st->spec.nullsfirst;
	return sort;
}

/* Start PostgreSQL's tuplesort for this node's keys, bounded where a LIMIT says so. */
void
GpuSortStartTuplesort(GpuSortState *st, int64 budget_kb)
{
	st->cpu.tuplesort = tuplesort_begin_heap(st->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor,
										 st->spec.nkeys, st->spec.colidx, st->spec.sortops, st->spec.collations,
										 st->spec.nullsfirst, (int) Min(budget_kb, MAX_KILOBYTES), NULL,
										 (st->spec.random_access ? TUPLESORT_RANDOMACCESS : TUPLESORT_NONE) |
										 (st->spec.bound >= 0 ? TUPLESORT_ALLOWBOUNDED : TUPLESORT_NONE));
	if (st->spec.bound >= 0)
		tuplesort_set_bound(st->cpu.tuplesort, st->spec.bound);
}

/* Hand the rows stored so far to tuplesort and forget them. */
void
GpuSortSpill(GpuSortState *st, int64 budget_kb, const char *why)
{
	TupleTableSlot *slot = MakeSingleTupleTableSlot(st->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor,
													st->key.keys_only ? &TTSOpsVirtual : &TTSOpsMinimalTuple);

	st->cpu.fallback = why;
	GpuSortStartTuplesort(st, budget_kb);
	for (size_t i = 0; i < st->store.nrows; i++)
	{
		if ((i & GPUEXT_CFI_MASK) == 0)
			CHECK_FOR_INTERRUPTS();
		StoreRow(st, slot, i);
		tuplesort_puttupleslot(st->cpu.tuplesort, slot);
	}
	ExecDropSingleTupleTableSlot(slot);
	MemoryContextReset(st->store.rowcxt);
	st->store.rows = NULL;
	st->store.arena_next = st->store.arena_end = NULL;
	st->store.keys = NULL;
	st->store.nrows = st->store.capacity = 0;
	st->key.dec_n = 0;
}

/* Start PostgreSQL's Sort executor inside the node, in place of the device sort. */
void
GpuSortStartSortInside(GpuSortState *st, CustomScan *cscan, EState *estate, int eflags)
{
	st->cpu.sortstate = ExecInitNode((Plan *) MakeSortPlan(st, cscan), estate, eflags);
	outerPlanState(st) = outerPlanState(st->cpu.sortstate);
	if (st->spec.bound >= 0)
		ExecSetTupleBound(st->spec.bound, st->cpu.sortstate);
}

/* The next row from the tuplesort that took the rows over (keys-only rows into the virtual slot). */
TupleTableSlot *
GpuSortTuplesortNext(GpuSortState *st, TupleTableSlot *slot, bool forward)
{
	if (!st->key.keys_only)
	{
		(void) tuplesort_gettupleslot(st->cpu.tuplesort, forward, false, slot, NULL);
		return slot;
	}
	ExecClearTuple(slot);
	if (tuplesort_gettupleslot(st->cpu.tuplesort, forward, false, st->cpu.minslot, NULL))
	{
		slot_getallattrs(st->cpu.minslot);
		memcpy(slot->tts_values, st->cpu.minslot->tts_values, sizeof(Datum) * st->key.natts);
		memcpy(slot->tts_isnull, st->cpu.minslot->tts_isnull, sizeof(bool) * st->key.natts);
		ExecStoreVirtualTuple(slot);
	}
	return slot;
}
