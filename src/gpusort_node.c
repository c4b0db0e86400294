/*
 * gpusort_node.c
 *		Custom Scan (GpuSort) as an executor node: begin, exec, end, rescan,
 *		mark and restore.
 *
 * A run stores the input rows, builds one order-preserving key per row
 * (gpusort_keys.c), sorts (key, row number) on the device (gpusort_device.c)
 * and emits the rows in that order, with tuplesort's cursor semantics:
 * backward scans, rewind and mark/restore are served from the sorted rows.
 *
 * When every output column is a key column, the keys are the rows: they are
 * sorted on the device and the rows rebuilt from them in order, with one
 * extra low bit per tied float key that remembers a -0 (keys-only mode).
 * Otherwise rows are copied as minimal tuples into a bump arena and emitted
 * through a pointer array put in sorted order as the order arrives
 * (gpusort_input.c).
 *
 * A backend without a GPU and small LIMIT bounds are known at executor
 * start: then the node runs PostgreSQL's own Sort executor inside, at
 * exactly its cost.  Rows whose storage would pass the memory budget, and
 * inputs the device cannot take, go on to PostgreSQL's tuplesort, which
 * gives the same order (gpusort_fallback.c), unless a device can keep them
 * in its memory instead (gpusort_devrows.c).
 */
#include "postgres.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "utils/memutils.h"

#include "gpusort.h"

/* Rows ahead of the one emitted whose tuples are prefetched. */
#define EMIT_PREFETCH 16

static void GpuSortBegin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *GpuSortExec(CustomScanState *node);
static void GpuSortEnd(CustomScanState *node);
static void GpuSortReScan(CustomScanState *node);
static void GpuSortMarkPos(CustomScanState *node);
static void GpuSortRestrPos(CustomScanState *node);

/* The executor's callbacks; the parallel ones only carry EXPLAIN's per-worker figures. */
static const CustomExecMethods gpusort_exec_methods = {
	.CustomName = "GpuSort",
	.BeginCustomScan = GpuSortBegin,
	.ExecCustomScan = GpuSortExec,
	.EndCustomScan = GpuSortEnd,
	.ReScanCustomScan = GpuSortReScan,
	.MarkPosCustomScan = GpuSortMarkPos,
	.RestrPosCustomScan = GpuSortRestrPos,
	.EstimateDSMCustomScan = GpuSortEstimateDSM,
	.InitializeDSMCustomScan = GpuSortInitializeDSM,
	.InitializeWorkerCustomScan = GpuSortInitializeWorker,
	.ShutdownCustomScan = GpuSortShutdown,
	.ExplainCustomScan = GpuSortExplain,
};

/* Allocate the executor state for a GpuSort plan node. */
Node *
GpuSortCreateState(CustomScan *cscan)
{
	GpuSortState *st = palloc0(sizeof(GpuSortState));

	NodeSetTag(st, T_CustomScanState);
	st->css.flags = cscan->flags;
	st->css.methods = &gpusort_exec_methods;
	return (Node *) st;
}

/*
 * The LIMIT bound of a generic plan, from the count and offset the plan keeps
 * (constants, the statement's parameters and immutable functions of them):
 * they give the same value for the whole execution, rescans included, as
 * the Limit computes it.
 */
static int64
ComputeBound(GpuSortState *st, List *exprs)
{
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	Datum		value[2];
	bool		isnull[2];

	for (int i = 0; i < 2; i++)
	{
		ExprState  *state = ExecInitExpr(list_nth(exprs, i), &st->css.ss.ps);

		value[i] = ExecEvalExprSwitchContext(state, econtext, &isnull[i]);
	}
	return GpuSortLimitBound(value[0], isnull[0], value[1], isnull[1]);
}

/* Read the sort specification from the plan, lay the keys out, and start the input or the Sort inside. */
static void
GpuSortBegin(CustomScanState *node, EState *estate, int eflags)
{
	GpuSortState *st = (GpuSortState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *priv = cscan->custom_private;
	TupleDesc	desc = node->ss.ss_ScanTupleSlot->tts_tupleDescriptor;
	int			i;

	st->spec.nkeys = list_length(linitial(priv));
	st->spec.colidx = palloc(sizeof(AttrNumber) * st->spec.nkeys);
	st->spec.sortops = palloc(sizeof(Oid) * st->spec.nkeys);
	st->spec.collations = palloc(sizeof(Oid) * st->spec.nkeys);
	st->spec.nullsfirst = palloc(sizeof(bool) * st->spec.nkeys);
	st->spec.descending = palloc(sizeof(bool) * st->spec.nkeys);
	st->spec.types = palloc(sizeof(GpuextSortType *) * st->spec.nkeys);
	for (i = 0; i < st->spec.nkeys; i++)
	{
		st->spec.colidx[i] = (AttrNumber) list_nth_int(linitial(priv), i);
		st->spec.sortops[i] = list_nth_oid(lsecond(priv), i);
		st->spec.collations[i] = list_nth_oid(lthird(priv), i);
		st->spec.nullsfirst[i] = list_nth_int(lfourth(priv), i) != 0;
		st->spec.types[i] = GpuextSortTypeLookup(list_nth_oid(list_nth(priv, 4), i));
		st->spec.descending[i] = list_nth_int(list_nth(priv, 5), i) != 0;
		if (st->spec.types[i] == NULL)
			elog(ERROR, "GpuSort key %d has an unsupported type", i + 1);
	}
	st->spec.bound = intVal(list_nth(priv, 6));
	/* Under plain EXPLAIN, parameters may have no values (GENERIC_PLAN): the bound stays unknown */
	if (cscan->custom_exprs != NIL && (eflags & EXEC_FLAG_EXPLAIN_ONLY) == 0)
		st->spec.bound = ComputeBound(st, cscan->custom_exprs);
	GpuSortLayoutKeys(st, desc);

	/* Where the sort will run, when that is known now: then PostgreSQL's Sort does it. */
	if ((eflags & EXEC_FLAG_EXPLAIN_ONLY) == 0)
	{
		if (st->spec.bound >= 0 && st->spec.bound <= HEAP_BOUND_MAX)
			st->cpu.fallback = psprintf("LIMIT %lld: top-N heap", (long long) st->spec.bound);
		else if (!GpuextUseDevice())
			st->cpu.fallback = psprintf("no GPU: %s", GpuextDeviceUnavailableReason());
	}
	if (st->cpu.fallback)
		GpuSortStartSortInside(st, cscan, estate, eflags);
	else
	{
		/* Like Sort: the input is read once, and rewind, backward or mark are served here. */
		Plan	   *child = outerPlan(cscan);

		st->spec.random_access = (eflags & (EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK)) != 0;
		if (st->key.keys_only && (eflags & EXEC_FLAG_EXPLAIN_ONLY) == 0)
			child = GpuSortUnprojectedScan(st, child, estate);
		outerPlanState(node) = ExecInitNode(child, estate,
											eflags & ~(EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK));
		/* EXPLAIN shows the scan as planned. */
		outerPlanState(node)->plan = outerPlan(cscan);
	}

	/* Output is every input column, unprojected. */
	if (node->ss.ps.ps_ProjInfo != NULL)
		elog(ERROR, "GpuSort output does not match its input");
	st->key.keys_only &= st->cpu.fallback == NULL;
	if (st->key.keys_only)
	{
		/* Rows are rebuilt into a virtual slot, as the scan slot already is. */
		st->cpu.minslot = ExecAllocTableSlot(&estate->es_tupleTable, desc, &TTSOpsMinimalTuple);
		st->key.dec_values = palloc(sizeof(Datum) * KEY_BATCH * st->key.natts);
		st->key.dec_isnull = palloc(sizeof(bool) * KEY_BATCH * st->key.natts);
	}
	else
	{
		/* Rows are stored as minimal tuples. */
		node->ss.ss_ScanTupleSlot = ExecAllocTableSlot(&estate->es_tupleTable, desc, &TTSOpsMinimalTuple);
		node->ss.ps.scanops = &TTSOpsMinimalTuple;
		node->ss.ps.resultops = &TTSOpsMinimalTuple;
		node->ss.ps.resultopsfixed = true;
		node->ss.ps.resultopsset = true;
	}
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		GpuSortHideParallel(st);
	if (st->cpu.fallback)
		return;
	st->input.keyattno = palloc(sizeof(AttrNumber) * st->spec.nkeys);
	for (i = 0; i < st->spec.nkeys; i++)
		st->input.keyattno[i] = st->input.input_attno ? st->input.input_attno[st->spec.colidx[i] - 1] : st->spec.colidx[i];
	GpuSortDirectScanSetup(st);
}

/* Next row in the requested direction, with tuplesort's cursor semantics. */
static TupleTableSlot *
GpuSortExec(CustomScanState *node)
{
	GpuSortState *st = (GpuSortState *) node;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
	bool		forward = ScanDirectionIsForward(node->ss.ps.state->es_direction);

	if (st->cpu.sortstate)
		return ExecProcNode(st->cpu.sortstate);
	if (!st->done)
		GpuSortRun(st);
	if (st->cpu.tuplesort)
		return GpuSortTuplesortNext(st, slot, forward);

	if (forward)
	{
		if (st->store.current < st->store.nrows)
		{
			/* Tuples lie in input order in memory: fetch those about to be emitted early */
			if (!st->key.keys_only && !st->devrows.active && st->store.current + EMIT_PREFETCH < st->store.nrows)
			{
				const char *ahead = (const char *) st->store.rows[st->store.current + EMIT_PREFETCH];

				__builtin_prefetch(ahead);
				__builtin_prefetch(ahead + 64);
			}
			StoreRow(st, slot, st->store.current++);
		}
		else
		{
			ExecClearTuple(slot);
			st->store.eof = true;
			GpuSortEndStream(st);
		}
	}
	else
	{
		ExecClearTuple(slot);
		if (st->store.current > 0)
		{
			if (st->store.eof)
				st->store.eof = false;
			else
				st->store.current--;
			if (st->store.current > 0)
				StoreRow(st, slot, st->store.current - 1);
		}
	}
	return slot;
}

/* Forget the sorted rows so that the next fetch reads the input again. */
static void
ForgetRun(GpuSortState *st)
{
	if (st->cpu.tuplesort)
		tuplesort_end(st->cpu.tuplesort);
	st->cpu.tuplesort = NULL;
	if (st->store.rowcxt)
		MemoryContextReset(st->store.rowcxt);
	st->store.rows = NULL;
	st->store.arena_next = st->store.arena_end = NULL;
	st->store.keys = NULL;
	st->stream.pinned = st->stream.dkeys = st->stream.dsorted = NULL;
	st->stream.active = st->stream.streamed = false;
	GpuSortDevRowsEnd(st);
	st->store.nrows = st->store.capacity = 0;
	st->cpu.fallback = NULL;
	st->stats.host_bytes = st->stats.device_bytes = 0;
	st->done = false;
}

/* Release the rows and shut the input down. */
static void
GpuSortEnd(CustomScanState *node)
{
	GpuSortState *st = (GpuSortState *) node;

	if (st->cpu.tuplesort)
		tuplesort_end(st->cpu.tuplesort);
	st->cpu.tuplesort = NULL;
	if (st->store.rowcxt)
		MemoryContextDelete(st->store.rowcxt);
	st->store.rowcxt = NULL;
	GpuSortDevRowsEnd(st);
	if (st->cpu.sortstate)
		ExecEndNode(st->cpu.sortstate);
	else
		ExecEndNode(outerPlanState(node));
}

/* Rescan: replay the sorted rows, or read the input again if it may have changed. */
static void
GpuSortReScan(CustomScanState *node)
{
	GpuSortState *st = (GpuSortState *) node;
	PlanState  *child = outerPlanState(node);

	ExecClearTuple(node->ss.ss_ScanTupleSlot);
	if (st->cpu.sortstate)
	{
		ExecReScan(st->cpu.sortstate);
		return;
	}
	if (!st->done)
		return;
	/* Streamed keys are let go as they are emitted: read the input again, as for a one-pass tuplesort */
	if (child->chgParam != NULL || (st->cpu.tuplesort && !st->spec.random_access) || st->stream.streamed)
	{
		ForgetRun(st);
		if (child->chgParam == NULL)
			ExecReScan(child);
	}
	else if (st->cpu.tuplesort)
		tuplesort_rescan(st->cpu.tuplesort);
	else
	{
		st->store.current = 0;
		st->store.eof = false;
	}
}

/* Remember the current position (for merge join). */
static void
GpuSortMarkPos(CustomScanState *node)
{
	GpuSortState *st = (GpuSortState *) node;

	if (st->cpu.sortstate)
		ExecMarkPos(st->cpu.sortstate);
	if (!st->done)
		return;
	if (st->cpu.tuplesort)
		tuplesort_markpos(st->cpu.tuplesort);
	st->store.mark_current = st->store.current;
	st->store.mark_eof = st->store.eof;
}

/* Go back to the remembered position. */
static void
GpuSortRestrPos(CustomScanState *node)
{
	GpuSortState *st = (GpuSortState *) node;

	if (st->cpu.sortstate)
		ExecRestrPos(st->cpu.sortstate);
	if (!st->done)
		return;
	if (st->cpu.tuplesort)
		tuplesort_restorepos(st->cpu.tuplesort);
	st->store.current = st->store.mark_current;
	st->store.eof = st->store.mark_eof;
	ExecClearTuple(node->ss.ss_ScanTupleSlot);
}
