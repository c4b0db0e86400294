/*
 * gpuagg_exec.c
 *		Custom Scan (GpuAgg) at run time: the node's state set up from its
 *		plan, each run (the table read into the inputs or the groups,
 *		gpuagg_rows.c, then the aggregates or the groups' results made), the
 *		result rows returned, and rescans.
 *
 * The node returns one row, or one per group: the aggregates and keys in
 * the scan tuple, filtered by the plan's qual (HAVING) and projected by its
 * targetlist.  A rescan runs it all again.
 */
#include "postgres.h"

#include "access/parallel.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "utils/memutils.h"

#include "gpuagg.h"
#include "service.h"

static void GpuAggBegin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *GpuAggExec(CustomScanState *node);
static void GpuAggEnd(CustomScanState *node);
static void GpuAggReScan(CustomScanState *node);

static const CustomExecMethods gpuagg_exec_methods = {
	.CustomName = "GpuAgg",
	.BeginCustomScan = GpuAggBegin,
	.ExecCustomScan = GpuAggExec,
	.EndCustomScan = GpuAggEnd,
	.ReScanCustomScan = GpuAggReScan,
	.ExplainCustomScan = GpuAggExplain,
};

/* Note the first reason some values went to the CPU. */
void
GpuAggNoteFallback(GpuAggState *st, const char *why)
{
	if (st->stats.fallback == NULL)
		st->stats.fallback = MemoryContextStrdup(st->css.ss.ps.state->es_query_cxt, why);
}

/* The node's state for a GpuAgg plan. */
Node *
GpuAggCreateState(CustomScan *cscan)
{
	GpuAggState *st = palloc0(sizeof(GpuAggState));

	NodeSetTag(st, T_CustomScanState);
	st->css.methods = &gpuagg_exec_methods;
	return (Node *) st;
}

/*
 * The table's user column a scan-tuple reference stands for, or 0 if expr is
 * not one: a system column (ctid, tableoid, ...) is read through the slot.
 * Without a plan (cscan NULL, when paths are made) expr is the table's Var.
 */
AttrNumber
GpuAggScanColumn(CustomScan *cscan, Expr *expr)
{
	Var		   *var = (Var *) expr;

	if (!IsA(expr, Var))
		return 0;
	if (cscan != NULL)
	{
		if (var->varno != INDEX_VAR)
			return 0;
		var = (Var *) list_nth_node(TargetEntry, cscan->custom_scan_tlist, var->varattno - 1)->expr;
		if (!IsA(var, Var))
			return 0;
	}
	return var->varattno > 0 ? var->varattno : 0;
}

/* Whether the WHERE clause reads a key (the planner made it read the key's expression there). */
static bool
QualReadsKeys(CustomScan *cscan, int naggs)
{
	Bitmapset  *atts = NULL;
	int			nkeys = list_length(lfourth(cscan->custom_private));
	int			a = -1;

	pull_varattnos(linitial(cscan->custom_exprs), INDEX_VAR, &atts);
	while ((a = bms_next_member(atts, a)) >= 0)
	{
		AttrNumber	att = a + FirstLowInvalidHeapAttributeNumber;

		if (att > naggs && att <= naggs + nkeys)
			return true;
	}
	return false;
}

/* Set up the expressions, the inputs and the slot the table is read into. */
static void
GpuAggBegin(CustomScanState *node, EState *estate, int eflags)
{
	GpuAggState *st = (GpuAggState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *args = lsecond(cscan->custom_exprs);
	List	   *filters = lthird(cscan->custom_exprs);
	List	   *types = lthird(cscan->custom_private);
	ListCell   *lc;
	int			i;

	st->naggs = list_length(linitial(cscan->custom_private));
	st->kinds = palloc(sizeof(GpuextAggKind) * st->naggs);
	st->agg_input = palloc(sizeof(int) * st->naggs);
	foreach(lc, (List *) linitial(cscan->custom_private))
		st->kinds[foreach_current_index(lc)] = (GpuextAggKind) lfirst_int(lc);
	foreach(lc, (List *) lsecond(cscan->custom_private))
		st->agg_input[foreach_current_index(lc)] = lfirst_int(lc);
	st->workers.nworkers = intVal(list_nth(cscan->custom_private, 4));
	st->groups.estimate = Max(floatVal(list_nth(cscan->custom_private, 5)), 1);

	st->rows.qual = ExecInitQual((List *) linitial(cscan->custom_exprs), &node->ss.ps);
	st->run_params = pull_paramids((Expr *) list_make2(cscan->custom_exprs, cscan->custom_scan_tlist));
	st->rows.need_scan_tuple = st->rows.qual != NULL;
	st->rows.qual_reads_keys = QualReadsKeys(cscan, st->naggs);
	st->ninputs = list_length(args);
	st->inputs = palloc0(sizeof(GpuAggInput) * Max(st->ninputs, 1));
	for (i = 0; i < st->ninputs; i++)
	{
		GpuAggInput *in = &st->inputs[i];
		Expr	   *arg = list_nth(args, i);
		Expr	   *filter = list_nth(filters, i);
		Oid			type = list_nth_oid(types, i);

		in->argatt = GpuAggScanColumn(cscan, arg);
		if (in->argatt == 0)
			in->arg = ExecInitExpr(arg, &node->ss.ps);
		if (!IsA(filter, Const) || ((Const *) filter)->constisnull || !DatumGetBool(((Const *) filter)->constvalue))
			in->filter = ExecInitQual(list_make1(filter), &node->ss.ps);
		st->rows.need_scan_tuple |= in->arg != NULL || in->filter != NULL;
		in->type = OidIsValid(type) ? GpuextAggTypeLookup(type) : NULL;
		/* numeric(p <= 18, s) goes to the device as bigint at scale s */
		in->numeric_scale = type == NUMERICOID ? GpuAggNumericScale((Node *) arg) : -1;
		in->dev_scale = -1;
		if (in->numeric_scale >= 0)
			in->type = GpuextSortTypeLookup(INT8OID);
		if (in->type)
			in->acc = palloc(sizeof(GpuextAccum));
		st->rows.maxatt = Max(st->rows.maxatt, in->argatt);
	}

	GpuAggGroupsBegin(st, cscan);
	GpuAggHavingBegin(st, cscan);
	st->rows.need_scan_tuple |= st->groups.nkeys > 0;

	/* The table's columns that expressions read sit after the aggregates and keys in the scan tuple. */
	st->rows.nvars = list_length(cscan->custom_scan_tlist) - st->naggs - st->groups.nkeys;
	st->rows.var_att = palloc(sizeof(AttrNumber) * Max(st->rows.nvars, 1));
	for (i = 0; i < st->rows.nvars; i++)
	{
		TargetEntry *tle = list_nth_node(TargetEntry, cscan->custom_scan_tlist, st->naggs + st->groups.nkeys + i);

		st->rows.var_att[i] = castNode(Var, tle->expr)->varattno;
		if (st->rows.need_scan_tuple)
			st->rows.maxatt = Max(st->rows.maxatt, st->rows.var_att[i]);
	}
	st->rows.heapslot = table_slot_create(node->ss.ss_currentRelation, &estate->es_tupleTable);
	st->rows.tupslot = ExecInitExtraTupleSlot(estate, RelationGetDescr(node->ss.ss_currentRelation), &TTSOpsHeapTuple);
	GpuAggInPlaceSetup(st, cscan, RelationGetDescr(node->ss.ss_currentRelation));
	GpuAggDevScanSetup(st, cscan, RelationGetDescr(node->ss.ss_currentRelation));
	st->rows.nummemo = GpuAggNumMemoCreate(Max(st->rows.maxatt, 1));
	st->rows.columns = GpuAggColumnsEligible(st);
	st->nodecxt = AllocSetContextCreate(estate->es_query_cxt, "GpuAgg batches", ALLOCSET_DEFAULT_SIZES);
	st->runcxt = AllocSetContextCreate(estate->es_query_cxt, "GpuAgg run", ALLOCSET_DEFAULT_SIZES);
	GpuAggSpillBegin(st);
}

/* The rows and pages a run read, back to what they were before it: a run read again counts once. */
static void
RestoreReadCounts(GpuAggState *st, const GpuAggStats *before)
{
	st->stats.rows_read = before->rows_read;
	st->stats.rows_passed = before->rows_passed;
	st->stats.rows_in_place = before->rows_in_place;
	st->stats.pages_from_files = before->pages_from_files;
	st->stats.pages_from_buffers = before->pages_from_buffers;
	st->stats.pages_in_place = before->pages_in_place;
	st->stats.pages_whole = before->pages_whole;
	st->stats.pages_hinted = before->pages_hinted;
}

/* The device's batches and tuples back to what they were before a run: a run abandoned there counts none. */
static void
RestoreDeviceCounts(GpuAggState *st, const GpuAggStats *before)
{
	st->stats.device_blocks = before->device_blocks;
	st->stats.device_tuples = before->device_tuples;
	st->stats.device_cpu_tuples = before->device_cpu_tuples;
	st->stats.device_batches = before->device_batches;
	st->stats.cpu_batches = before->cpu_batches;
}

/*
 * One run with GROUP BY: scan into the groups' states and read their
 * results; where the device's table of the groups it numbers filled, again
 * with a larger one; where the device was lost on the way (auto), or
 * stopped numbering the groups, again on the CPU.
 */
static void
RunGroups(GpuAggState *st, bool device)
{
	GpuAggStats before = st->stats;

	for (;;)
	{
		GpuAggGroupsStart(st, device);
		GpuAggScanTable(st);
		if (st->workers.pcxt != NULL)
		{
			/* the workers' states merge into the leader's in host memory */
			GpuAggGroupsToHost(st);
			GpuAggParallelFinish(st);
		}
		GpuAggGroupsFinish(st);
		if (!st->device_lost)
		{
			GpuAggSpillProduced(st);
			return;
		}
		GpuAggSpillDiscard(st);
		RestoreReadCounts(st, &before);
		if (st->groups.numbered)
			RestoreDeviceCounts(st, &before);
		MemoryContextReset(st->runcxt);
		if (!GpuAggDevGroupsRegrow(st))
			break;
		device = GpuAggStartInputs(st, true);
	}
	st->stats.grown_slots = 0;
	GpuAggStartInputs(st, false);
	GpuAggGroupsStart(st, false);
	GpuAggScanTable(st);
	GpuAggGroupsFinish(st);
	GpuAggSpillProduced(st);
}

/*
 * Without GROUP BY, the device lost with a batch's results not yet read (or
 * a worker's, auto): nothing has been returned, so the run starts again,
 * every row on the CPU, serially.
 */
static void
RunAgainOnCpu(GpuAggState *st, const GpuAggStats *before)
{
	RestoreReadCounts(st, before);
	RestoreDeviceCounts(st, before);
	st->device_lost = false;
	MemoryContextReset(st->runcxt);
	GpuAggStartInputs(st, false);
	GpuAggScanTable(st);
	for (int i = 0; i < st->ninputs; i++)
		GpuAggInputFinish(st, &st->inputs[i]);
}

/* One run: scan, reduce, and put the aggregates into the scan tuple (without GROUP BY) or the groups. */
static void
Run(GpuAggState *st)
{
	TupleTableSlot *scanslot = st->css.ss.ss_ScanTupleSlot;
	MemoryContext old = MemoryContextSwitchTo(st->runcxt);
	int64		passed_before = st->stats.rows_passed;
	instr_time	start;
	bool		device;
	GpuAggStats before;

	/* The instrumentation is set up after Begin */
	int64		spilled_before = st->stats.rows_spilled;

	st->timing = st->css.ss.ps.instrument != NULL && st->css.ss.ps.instrument->need_timer;
	if (st->timing)
		INSTR_TIME_SET_CURRENT(start);
	before = st->stats;
	st->stats.runs++;
	device = GpuAggStartInputs(st, true);
	if (st->workers.nworkers > 0 && !IsParallelWorker())
		GpuAggParallelStart(st);
	if (st->groups.nkeys > 0)
	{
		RunGroups(st, device);
		st->rewindable = st->stats.rows_spilled == spilled_before;
		st->stats.groups += st->groups.ngroups;
		MemoryContextSwitchTo(old);
		if (st->timing)
			st->stats.total_ms += GpuAggElapsedMs(start);
		return;
	}
	GpuAggScanTable(st);
	for (int i = 0; i < st->ninputs; i++)
		GpuAggInputFinish(st, &st->inputs[i]);
	if (st->workers.pcxt != NULL)
		GpuAggParallelFinish(st);
	if (st->device_lost)
		RunAgainOnCpu(st, &before);

	ExecClearTuple(scanslot);
	for (int i = 0; i < scanslot->tts_tupleDescriptor->natts; i++)
		scanslot->tts_isnull[i] = true;
	for (int i = 0; i < st->naggs; i++)
	{
		GpuAggInput *in = st->agg_input[i] >= 0 ? &st->inputs[st->agg_input[i]] : NULL;

		if (in == NULL)
		{
			scanslot->tts_values[i] = Int64GetDatum(st->stats.rows_passed - passed_before);
			scanslot->tts_isnull[i] = false;
		}
		else if (in->type == NULL)
		{
			scanslot->tts_values[i] = Int64GetDatum(in->count);
			scanslot->tts_isnull[i] = false;
		}
		else if (in->numeric_scale >= 0)
			scanslot->tts_values[i] = GpuAggNumericAccumResult(in, st->kinds[i], &scanslot->tts_isnull[i]);
		else
			scanslot->tts_values[i] = GpuextAccumResult(in->acc, st->kinds[i], &scanslot->tts_isnull[i]);
	}
	ExecStoreVirtualTuple(scanslot);
	st->rewindable = true;
	MemoryContextSwitchTo(old);
	if (st->timing)
		st->stats.total_ms += GpuAggElapsedMs(start);
}

/*
 * A parallel worker's share of a run: its blocks of the table into its own
 * accumulators or groups, with the device only through the GPU service (or
 * where gpuext.device = gpu asks for it), so that workers do not each open
 * it.  Groups end in host memory, to be sent; where the device was lost
 * (auto) the leader runs the query again on the CPU.
 */
void
GpuAggWorkerScan(GpuAggState *st)
{
	bool		device = GpuAggStartInputs(st, gpuext_device_mode == GPUEXT_DEVICE_GPU || GpuextServiceAvailable());

	if (st->groups.nkeys > 0)
	{
		GpuAggGroupsStart(st, device);
		GpuAggScanTable(st);
		GpuAggGroupsToHost(st);
		if (!st->device_lost)
			GpuAggGroupsSettle(st);
		return;
	}
	GpuAggScanTable(st);
	for (int i = 0; i < st->ninputs; i++)
		GpuAggInputFinish(st, &st->inputs[i]);
}

/*
 * The next row that passes HAVING: without GROUP BY the one row on the
 * first call, with it one per group; then none.
 */
static TupleTableSlot *
GpuAggExec(CustomScanState *node)
{
	GpuAggState *st = (GpuAggState *) node;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;

	if (!st->done)
	{
		Run(st);
		st->done = true;
	}
	else if (st->groups.nkeys == 0 && st->emitted)
		return NULL;
	st->emitted = true;
	for (;;)
	{
		ResetExprContext(econtext);
		if (st->groups.nkeys > 0)
		{
			MemoryContext old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
			bool		more = GpuAggGroupNext(st);

			MemoryContextSwitchTo(old);
			if (!more && GpuAggSpillNext(st))
				continue;
			if (!more)
				return NULL;
		}
		econtext->ecxt_scantuple = node->ss.ss_ScanTupleSlot;
		if (node->ss.ps.qual == NULL || ExecQual(node->ss.ps.qual, econtext))
			break;
		InstrCountFiltered1(node, 1);
		if (st->groups.nkeys == 0)
			return NULL;
	}
	if (node->ss.ps.ps_ProjInfo == NULL)
		return node->ss.ss_ScanTupleSlot;
	return ExecProject(node->ss.ps.ps_ProjInfo);
}

/* Release the node's memory, device buffers included. */
static void
GpuAggEnd(CustomScanState *node)
{
	GpuAggState *st = (GpuAggState *) node;

	ExecClearTuple(node->ss.ss_ScanTupleSlot);
	GpuAggSpillEnd(st);
	GpuAggGroupsEnd(st);
	MemoryContextDelete(st->runcxt);
	MemoryContextDelete(st->nodecxt);
}

/*
 * Return the same result again, all of it in memory, where no parameter of
 * the scan, the arguments or the keys changed (one of HAVING's only filters
 * it again), as a hashed Agg does; else run again.
 */
static void
GpuAggReScan(CustomScanState *node)
{
	GpuAggState *st = (GpuAggState *) node;

	st->emitted = false;
	if (st->done && st->rewindable && !bms_overlap(node->ss.ps.chgParam, st->run_params))
	{
		st->groups.next_group = 0;
		return;
	}
	st->rewindable = false;
	ExecClearTuple(node->ss.ss_ScanTupleSlot);
	GpuAggSpillEnd(st);
	MemoryContextReset(st->runcxt);
	st->done = false;
}
