/*
 * gpusort_input.c
 *		Reading GpuSort's input: rows from the child node, or heap pages read
 *		in place; rows copied into a bump arena; keys-only scans run without
 *		their projection.
 *
 * A run reads the whole input here (GpuSortRun), batching the key values of
 * KEY_BATCH rows for gpusort_keys.c, and hands the stored rows to the device
 * (gpusort_device.c) or, past the memory budget, to tuplesort
 * (gpusort_fallback.c).
 */
#include "postgres.h"

#include <sys/mman.h>

#include "access/heapam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"
#include "utils/memutils.h"

#include "gpusort.h"

/* Copied rows live in chunks growing from the first size to the last (larger rows get their own). */
#define ARENA_CHUNK_FIRST (8 * 1024 * 1024)
#define ARENA_CHUNK_MAX (64 * 1024 * 1024)

/* Transparent huge page size asked for on large row and key arrays. */
#define HUGE_PAGE_BYTES (2 * 1024 * 1024)

int			gpuext_sort_work_mem = GPUEXT_SORT_WORK_MEM_DEFAULT;

/*
 * Keys-only over a sequential scan that projects plain columns: the scan
 * runs from a copy of its plan that returns the table's rows as they are,
 * so it has no projection to make, and the keys are read from those rows
 * where they lie.  Projecting each row costs more than reading the few key
 * columns, and keys-only rows are rebuilt from their keys anyway.
 */
Plan *
GpuSortUnprojectedScan(GpuSortState *st, Plan *child, EState *estate)
{
	Index		scanrelid;
	RangeTblEntry *rte;
	Relation	rel;
	TupleDesc	reldesc;
	List	   *tlist = NIL;
	AttrNumber *attno;
	SeqScan    *copy;
	ListCell   *lc;
	bool		identity;
	int			a = 0;

	if (!IsA(child, SeqScan) || list_length(child->targetlist) != st->key.natts)
		return child;
	scanrelid = ((Scan *) child)->scanrelid;
	attno = palloc(sizeof(AttrNumber) * st->key.natts);
	foreach(lc, child->targetlist)
	{
		Var		   *var = (Var *) lfirst_node(TargetEntry, lc)->expr;

		if (!IsA(var, Var) || var->varno != scanrelid || var->varattno <= 0 || var->varlevelsup != 0)
		{
			pfree(attno);
			return child;
		}
		attno[a++] = var->varattno;
	}

	/* Every column of the table, in order; none when a column was dropped (the scan projects then). */
	rte = exec_rt_fetch(scanrelid, estate);
	rel = table_open(rte->relid, rte->rellockmode);
	reldesc = RelationGetDescr(rel);
	identity = reldesc->natts == st->key.natts;
	for (int i = 0; i < reldesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(reldesc, i);

		if (att->attisdropped)
		{
			tlist = NIL;
			break;
		}
		tlist = lappend(tlist, makeTargetEntry((Expr *) makeVar(scanrelid, i + 1, att->atttypid, att->atttypmod,
																att->attcollation, 0),
											   i + 1, NULL, false));
		if (i < st->key.natts && attno[i] != i + 1)
			identity = false;
	}
	table_close(rel, NoLock);
	if (tlist == NIL || identity)
	{
		pfree(attno);
		return child;
	}

	copy = makeNode(SeqScan);
	memcpy(copy, child, sizeof(SeqScan));
	copy->scan.plan.targetlist = tlist;
	st->input.input_attno = attno;
	st->input.projslot = ExecAllocTableSlot(&estate->es_tupleTable, st->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor,
									  &TTSOpsVirtual);
	return (Plan *) copy;
}

/* The input row as the scan's projection would have made it. */
TupleTableSlot *
GpuSortProjectInput(GpuSortState *st, TupleTableSlot *slot)
{
	if (st->input.input_attno == NULL)
		return slot;
	ExecClearTuple(st->input.projslot);
	for (int a = 0; a < st->key.natts; a++)
		st->input.projslot->tts_values[a] = slot_getattr(slot, st->input.input_attno[a], &st->input.projslot->tts_isnull[a]);
	return ExecStoreVirtualTuple(st->input.projslot);
}

/* Where each key lies in a tuple without NULLs, when no column of varying width comes before it. */
static void
KeyOffsets(GpuSortState *st, TupleDesc tupdesc)
{
	int		   *attoff = palloc(sizeof(int) * tupdesc->natts);
	int			nfixed = 0;
	int			off = 0;

	/* As attcacheoff: columns up to the first of varying width lie at fixed offsets */
	for (; nfixed < tupdesc->natts && TupleDescAttr(tupdesc, nfixed)->attlen > 0; nfixed++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, nfixed);

		off = att_align_nominal(off, att->attalign);
		attoff[nfixed] = off;
		off += att->attlen;
	}
	st->input.maxkeyatt = 0;
	for (int k = 0; k < st->spec.nkeys; k++)
	{
		if (st->input.keyattno[k] > nfixed || !TupleDescAttr(tupdesc, st->input.keyattno[k] - 1)->attbyval)
			return;
		st->input.maxkeyatt = Max(st->input.maxkeyatt, st->input.keyattno[k]);
	}
	st->input.keyoff = palloc(sizeof(int) * st->spec.nkeys);
	st->input.keylen = palloc(sizeof(int16) * st->spec.nkeys);
	for (int k = 0; k < st->spec.nkeys; k++)
	{
		st->input.keyoff[k] = attoff[st->input.keyattno[k] - 1];
		st->input.keylen[k] = TupleDescAttr(tupdesc, st->input.keyattno[k] - 1)->attlen;
	}
	pfree(attoff);
}

/*
 * Over a plain sequential scan of a heap table (no filter, no projection, not
 * parallel) the node reads the heap pages itself: the executor's per-row slot
 * work (a buffer pin and a deform per tuple) costs more than the sort.
 */
void
GpuSortDirectScanSetup(GpuSortState *st)
{
	PlanState  *child = outerPlanState(st);

	if (!IsA(child, SeqScanState) || child->ps_ProjInfo != NULL || child->qual != NULL ||
		child->plan->parallel_aware || child->plan->initPlan != NIL)
		return;
	if (((ScanState *) child)->ss_currentRelation->rd_tableam != GetHeapamTableAmRoutine())
		return;
	st->input.direct = true;
	KeyOffsets(st, RelationGetDescr(((ScanState *) child)->ss_currentRelation));
}

/*
 * Ask for transparent huge pages on a fresh large block: faulting in and
 * zeroing it 4 kB at a time costs more than building the keys in it.
 */
static void
AdviseHugePages(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
	uintptr_t	start = TYPEALIGN(HUGE_PAGE_BYTES, (uintptr_t) p);
	uintptr_t	end = TYPEALIGN_DOWN(HUGE_PAGE_BYTES, (uintptr_t) p + bytes);

	if (end > start)
		(void) madvise((void *) start, end - start, MADV_HUGEPAGE);
#endif
}

/* A large block in the rows' context, on huge pages where the kernel has them. */
void *
GpuSortAllocRows(GpuSortState *st, size_t bytes)
{
	void	   *p = MemoryContextAllocHuge(st->store.rowcxt, bytes);

	AdviseHugePages(p, bytes);
	return p;
}

/* (Re)allocate a growing array in the rows' context. */
static void *
GrowArray(GpuSortState *st, void *old, size_t bytes)
{
	void	   *p;

	if (old == NULL)
		return GpuSortAllocRows(st, bytes);
	p = repalloc_huge(old, bytes);
	AdviseHugePages(p, bytes);
	return p;
}

/* Rows to make room for at first: as many as the planner expects and the budget holds. */
size_t
GpuSortExpectedRows(GpuSortState *st, int64 budget_kb)
{
	double		row_bytes = (st->key.keys_only ? 0 : st->css.ss.ps.plan->plan_width + sizeof(MinimalTuple)) +
		st->key.nwords * sizeof(uint64);
	double		expected = Min(st->css.ss.ps.plan->plan_rows * 1.1 + 1, budget_kb * 1024.0 / row_bytes);

	return (size_t) Max(Min(expected, 1 << 26), 1024);
}

/* Make room for more stored rows and their keys: first GpuSortExpectedRows, then twice as many each time. */
void
GpuSortGrowRows(GpuSortState *st, int64 budget_kb)
{
	size_t		newcap = st->store.capacity ? st->store.capacity * 2 : GpuSortExpectedRows(st, budget_kb);

	if (!st->key.keys_only)
		st->store.rows = GrowArray(st, st->store.rows, newcap * sizeof(MinimalTuple));
	st->store.keys = GrowArray(st, st->store.keys, newcap * st->key.nwords * sizeof(uint64));
	st->store.capacity = newcap;
}

/* Copy a tuple body as a minimal tuple into the arena (heap: src is a heap tuple's); returns the bytes it takes. */
static inline size_t
CopyTupleBytes(GpuSortState *st, const char *src, size_t len, bool heap)
{
	size_t		space = MAXALIGN(len);
	MinimalTuple copy;

	if (space > (size_t) (st->store.arena_end - st->store.arena_next))
	{
		size_t		chunk = Max(space, st->store.arena_chunk);

		st->store.arena_next = GpuSortAllocRows(st, chunk);
		st->store.arena_end = st->store.arena_next + chunk;
		st->store.arena_chunk = Min(st->store.arena_chunk * 2, ARENA_CHUNK_MAX);
	}
	copy = (MinimalTuple) st->store.arena_next;
	st->store.arena_next += space;
	memcpy(copy, src, len);
	if (heap)
	{
		memset(copy, 0, offsetof(MinimalTupleData, t_infomask2));
		copy->t_len = len;
	}
	st->store.rows[st->store.nrows] = copy;
	return space + sizeof(MinimalTuple);
}

/* A heap tuple's body as a minimal tuple, as minimal_tuple_from_heap_tuple makes it, into the arena. */
static inline size_t
CopyHeapTuple(GpuSortState *st, HeapTuple ht)
{
	return CopyTupleBytes(st, (const char *) ht->t_data + MINIMAL_TUPLE_OFFSET,
						  ht->t_len - MINIMAL_TUPLE_OFFSET, true);
}

/* Copy the slot's row as a minimal tuple into the arena; returns the bytes it takes. */
static size_t
CopyRow(GpuSortState *st, TupleTableSlot *slot)
{
	bool		should_free = false;
	MinimalTuple mt;
	size_t		space;

	if (TTS_IS_BUFFERTUPLE(slot) || TTS_IS_HEAPTUPLE(slot))
		return CopyHeapTuple(st, ExecFetchSlotHeapTuple(slot, false, NULL));
	mt = ExecFetchSlotMinimalTuple(slot, &should_free);
	space = CopyTupleBytes(st, (const char *) mt, mt->t_len, false);
	if (should_free)
		pfree(mt);
	return space;
}

/* Take a row's keys straight from a tuple without NULLs, where every key lies at a fixed offset. */
static pg_attribute_always_inline bool
FixedKeys(GpuSortState *st, HeapTuple tuple, Datum *values, bool *isnull)
{
	const char *tp;

	if (st->input.keyoff == NULL || HeapTupleHasNulls(tuple) || HeapTupleHeaderGetNatts(tuple->t_data) < st->input.maxkeyatt)
		return false;
	tp = (const char *) tuple->t_data + tuple->t_data->t_hoff;
	for (int k = 0; k < st->spec.nkeys; k++)
	{
		values[k] = fetch_att(tp + st->input.keyoff[k], true, st->input.keylen[k]);
		isnull[k] = false;
	}
	return true;
}

/* The bytes of the slot's row as a minimal tuple (heap: a heap tuple's body), and whether to free them. */
static inline const char *
RowBytes(TupleTableSlot *slot, HeapTuple tuple, size_t *len, bool *heap, bool *should_free)
{
	MinimalTuple mt;

	*should_free = false;
	if (slot && !TTS_IS_BUFFERTUPLE(slot) && !TTS_IS_HEAPTUPLE(slot))
	{
		mt = ExecFetchSlotMinimalTuple(slot, should_free);
		*len = mt->t_len;
		*heap = false;
		return (const char *) mt;
	}
	if (slot)
		tuple = ExecFetchSlotHeapTuple(slot, false, NULL);
	*len = tuple->t_len - MINIMAL_TUPLE_OFFSET;
	*heap = true;
	return (const char *) tuple->t_data + MINIMAL_TUPLE_OFFSET;
}

/* Gather one row's key values, from the slot or (slot NULL) the heap tuple. */
static pg_attribute_always_inline void
RowKeyValues(GpuSortState *st, RunInput *in, TupleTableSlot *slot, HeapTuple tuple, TupleDesc tupdesc)
{
	Datum	   *values = in->values + in->batched * st->spec.nkeys;
	bool	   *isnull = in->isnull + in->batched * st->spec.nkeys;

	if (slot || !FixedKeys(st, tuple, values, isnull))
		for (int k = 0; k < st->spec.nkeys; k++)
			values[k] = slot ? slot_getattr(slot, st->input.keyattno[k], &isnull[k])
				: heap_getattr(tuple, st->input.keyattno[k], tupdesc, &isnull[k]);
}

/*
 * Rows kept on the device: copy the row into the pinned half being filled
 * (a new piece begun if it is full) and gather its key values; false when
 * the rows fell back to tuplesort instead (the caller gives it this row).
 */
static bool
TakeRowOnDevice(GpuSortState *st, RunInput *in, TupleTableSlot *slot, HeapTuple tuple, TupleDesc tupdesc)
{
	if (st->key.keys_only)
	{
		if (GpuSortDevRowsPlace(st, in, 0) == NULL)
			return false;
	}
	else
	{
		size_t		len;
		bool		heap,
					should_free;
		const char *src = RowBytes(slot, tuple, &len, &heap, &should_free);
		MinimalTuple copy = (MinimalTuple) GpuSortDevRowsPlace(st, in, MAXALIGN(len));

		if (copy == NULL)
		{
			if (should_free)
				pfree((void *) src);
			return false;
		}
		memcpy(copy, src, len);
		if (heap)
		{
			memset(copy, 0, offsetof(MinimalTupleData, t_infomask2));
			copy->t_len = len;
		}
		if (should_free)
			pfree((void *) src);
	}
	RowKeyValues(st, in, slot, tuple, tupdesc);
	st->store.nrows++;
	if (++in->batched == KEY_BATCH)
		in->batched = GpuSortFlushKeys(st, in->values, in->isnull, in->batched);
	if (unlikely(st->store.nrows >= PG_UINT32_MAX))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("GpuSort cannot sort more than %u rows in device memory", PG_UINT32_MAX - 1),
				 errhint("Turn gpuext.sort_rows_on_device off to sort them with tuplesort.")));
	return true;
}

/*
 * Store one input row, from a slot or (slot NULL) a heap tuple read in place,
 * and gather its key values; past the budget the rows go to the device or,
 * failing that, to tuplesort.  False when the caller must give this row to
 * tuplesort itself.
 */
static pg_attribute_always_inline bool
TakeRow(GpuSortState *st, RunInput *in, TupleTableSlot *slot, HeapTuple tuple, TupleDesc tupdesc)
{
	const char *why;

	if (st->devrows.active)
		return TakeRowOnDevice(st, in, slot, tuple, tupdesc);
	if (st->store.nrows == st->store.capacity)
	{
		if (st->stream.active)
			GpuSortUnstream(st, in->batched);
		GpuSortGrowRows(st, in->budget_kb);
	}
	if (!st->key.keys_only)
		in->row_bytes += slot ? CopyRow(st, slot) : CopyHeapTuple(st, tuple);
	RowKeyValues(st, in, slot, tuple, tupdesc);
	st->store.nrows++;
	if (++in->batched == KEY_BATCH)
		in->batched = GpuSortFlushKeys(st, in->values, in->isnull, in->batched);

	st->stats.host_bytes = in->row_bytes + st->store.nrows * st->key.nwords * sizeof(uint64);
	if (unlikely(st->stats.host_bytes > (size_t) in->budget_kb * 1024 || st->store.nrows >= PG_UINT32_MAX))
	{
		/* Keys-only rows are rebuilt from their keys: bring them back and build the batch's first */
		if (st->stream.active)
			GpuSortUnstream(st, in->batched);
		if (in->batched > 0)
			in->batched = GpuSortFlushKeys(st, in->values, in->isnull, in->batched);
		why = GpuSortDevRowsStart(st, in);
		if (why == NULL)
			return true;
		GpuSortSpill(st, in->budget_kb,
					 *why ? psprintf("input passed the memory budget of %lld kB; %s", (long long) in->budget_kb, why)
					 : psprintf("input passed the memory budget of %lld kB", (long long) in->budget_kb));
	}
	return true;
}

/* Read the child scan's relation page by page, as its SeqScan would, without a slot per row. */
static void
ReadHeapDirect(GpuSortState *st, RunInput *in)
{
	ScanState  *child = (ScanState *) outerPlanState(st);
	Relation	rel = child->ss_currentRelation;
	TupleDesc	tupdesc = RelationGetDescr(rel);
	TableScanDesc scan = table_beginscan(rel, st->css.ss.ps.state->es_snapshot, 0, NULL);
	HeapTuple	tuple;
	uint64		nread = 0;

	if (child->ps.instrument)
		InstrStartNode(child->ps.instrument);
	while ((tuple = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		if ((++nread & 4095) == 0)
			CHECK_FOR_INTERRUPTS();
		if (st->cpu.tuplesort == NULL && TakeRow(st, in, NULL, tuple, tupdesc))
			continue;
		if (unlikely(st->cpu.rows_lost && st->cpu.tuplesort == NULL))
			break;
		ExecStoreBufferHeapTuple(tuple, child->ss_ScanTupleSlot, ((HeapScanDesc) scan)->rs_cbuf);
		tuplesort_puttupleslot(st->cpu.tuplesort, GpuSortProjectInput(st, child->ss_ScanTupleSlot));
	}
	ExecClearTuple(child->ss_ScanTupleSlot);
	table_endscan(scan);
	st->stats.rows_sorted = nread;
	if (child->ps.instrument)
		InstrStopNode(child->ps.instrument, (double) nread);
}

/* Whether a plan node reads in parallel: its rows cannot be read again by one process alone. */
static bool
ReadsInParallel(PlanState *ps, void *context)
{
	return ps->plan->parallel_aware || planstate_tree_walker(ps, ReadsInParallel, context);
}

/* Whether the input can be read a second time for tuplesort (no parallel scan below). */
bool
GpuSortCanReread(GpuSortState *st)
{
	return st->input.direct || !ReadsInParallel(outerPlanState(st), NULL);
}

/* The device lost the rows it kept before any went out: read the input again into tuplesort. */
static void
RereadIntoTuplesort(GpuSortState *st, RunInput *in)
{
	PlanState  *child = outerPlanState(st);
	TupleTableSlot *slot;

	MemoryContextReset(st->store.rowcxt);
	st->store.rows = NULL;
	st->store.arena_next = st->store.arena_end = NULL;
	st->store.keys = NULL;
	st->store.nrows = st->store.capacity = 0;
	st->key.dec_n = 0;
	st->stats.rows_sorted = 0;
	GpuSortStartTuplesort(st, in->budget_kb);
	if (st->input.direct)
	{
		ReadHeapDirect(st, in);
		return;
	}
	ExecReScan(child);
	for (;;)
	{
		slot = ExecProcNode(child);
		if (TupIsNull(slot))
			break;
		st->stats.rows_sorted++;
		tuplesort_puttupleslot(st->cpu.tuplesort, GpuSortProjectInput(st, slot));
	}
}

/* Read the whole input and sort it: on the device when it can, else with tuplesort. */
void
GpuSortRun(GpuSortState *st)
{
	PlanState  *child = outerPlanState(st);
	RunInput	in;
	instr_time	start;
	TupleTableSlot *slot;
	double		keys_ms = st->stats.keys_ms;
	double		transfer_ms = st->stats.transfer_ms;

	in.budget_kb = gpuext_sort_work_mem >= 0 ? gpuext_sort_work_mem : work_mem;
	in.values = palloc(sizeof(Datum) * KEY_BATCH * st->spec.nkeys);
	in.isnull = palloc(sizeof(bool) * KEY_BATCH * st->spec.nkeys);
	in.batched = 0;
	in.row_bytes = 0;
	INSTR_TIME_SET_CURRENT(start);
	st->stats.rows_sorted = 0;
	st->key.dec_n = 0;
	st->cpu.rows_lost = false;
	st->store.arena_chunk = ARENA_CHUNK_FIRST;
	if (st->store.rowcxt == NULL)
		st->store.rowcxt = GenerationContextCreate(st->css.ss.ps.state->es_query_cxt, "GpuSort rows",
											 ALLOCSET_DEFAULT_SIZES);
	GpuSortStartStream(st, in.budget_kb);

	if (st->input.direct)
		ReadHeapDirect(st, &in);
	else
	{
		for (;;)
		{
			slot = ExecProcNode(child);
			if (TupIsNull(slot))
				break;
			st->stats.rows_sorted++;
			if (st->cpu.tuplesort || !TakeRow(st, &in, slot, NULL, NULL))
			{
				if (unlikely(st->cpu.tuplesort == NULL))
					break;		/* the rows were lost on the device */
				tuplesort_puttupleslot(st->cpu.tuplesort, GpuSortProjectInput(st, slot));
			}
		}
	}
	if (in.batched > 0)
		GpuSortFlushKeys(st, in.values, in.isnull, in.batched);
	st->stats.store_ms += ElapsedMs(start) - (st->stats.keys_ms - keys_ms) - (st->stats.transfer_ms - transfer_ms);

	if (st->stream.active && st->store.nrows < 2)
		GpuSortUnstream(st, 0);
	if (st->devrows.active)
		GpuSortDevRowsSort(st, &in);
	else if (st->stream.active)
		GpuSortSortStreamed(st);
	else if (st->cpu.tuplesort == NULL && st->store.nrows > 1 && !st->cpu.rows_lost)
		GpuSortRowsOrSpill(st, in.budget_kb);
	if (st->cpu.rows_lost)
		RereadIntoTuplesort(st, &in);
	if (st->cpu.tuplesort)
	{
		INSTR_TIME_SET_CURRENT(start);
		tuplesort_performsort(st->cpu.tuplesort);
		st->stats.sort_ms += ElapsedMs(start);
	}
	st->store.current = 0;
	st->store.eof = false;
	st->done = true;
	pfree(in.values);
	pfree(in.isnull);
}
