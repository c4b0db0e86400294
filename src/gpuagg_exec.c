/*
 * gpuagg_exec.c
 *		Custom Scan (GpuAgg) at run time: read the table, evaluate the WHERE
 *		clause, the FILTERs and the arguments on the CPU, and reduce each
 *		input's values in batches on the device, into exact accumulators.
 *
 * Each input gathers its values in a batch of GpuextAggBatch() values.  A
 * full batch goes to the device where placement says so (agg_device.c),
 * through a streaming reducer whose two pinned host batches are then filled
 * in place: one is reduced while the other fills.  Small batches, or all of
 * them when no device can be used, are added on the CPU into the same
 * accumulator, so the result has the same bits either way.  Under auto a
 * device failure adds the batches concerned on the CPU (a WARNING says so);
 * under gpu it is an ERROR.
 *
 * With GROUP BY each passing row's keys are numbered and its values go with
 * their group numbers to per-group states instead (gpuagg_group.c).
 *
 * The node returns one row, or one per group: the aggregates and keys in
 * the scan tuple, filtered by the plan's qual (HAVING) and projected by its
 * targetlist.  A rescan runs it all again.
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/parallel.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "gpuagg.h"
#include "service.h"

/* Values a host batch starts with; it doubles up to GpuextAggBatch(). */
#define BATCH_START 1024

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

/*
 * Move the input's batch into a new streaming reducer's pinned host batch;
 * false where the device has no memory for it (or, auto, failed).
 */
static bool
StartStreaming(GpuAggState *st, GpuAggInput *in)
{
	MemoryContext old = MemoryContextSwitchTo(st->nodecxt);

	in->reducer = GpuextReducerStart(in->type, GpuextAggBatch());
	MemoryContextSwitchTo(old);
	if (in->reducer == NULL)
	{
		GpuAggNoteFallback(st, "no device memory for a batch");
		return false;
	}
	memcpy(GpuextReducerHostBatch(in->reducer), in->batch, in->nbatch * in->type->value_bytes);
	pfree(in->batch);
	in->batch = GpuextReducerHostBatch(in->reducer);
	in->capacity = GpuextAggBatch();
	return true;
}

/* The device failed the reducer (auto), which is gone: values go to the CPU for the rest of the run. */
static void
InputLostReducer(GpuAggInput *in)
{
	in->batching = false;
	in->batch = NULL;
	in->capacity = 0;
}

/*
 * Send the input's batch to the device (the one before it is merged first)
 * and go on filling the reducer's other host batch; a batch too small for
 * the device, or one the device cannot take, is added on the CPU.
 */
static void
SendBatch(GpuAggState *st, GpuAggInput *in)
{
	instr_time	start;

	if (st->timing)
		INSTR_TIME_SET_CURRENT(start);
	if (in->reducer == NULL && (!GpuextUseDeviceFor(in->nbatch) || !StartStreaming(st, in)))
	{
		GpuextAccumAddArray(in->acc, in->batch, in->nbatch);
		st->stats.cpu_batches++;
	}
	else if (GpuextReducerStream(&in->reducer, in->nbatch, in->acc))
	{
		in->batch = GpuextReducerHostBatch(in->reducer);
		st->stats.device_batches++;
	}
	else
	{
		/* The device failed (auto): both batches were added on the CPU; the rest follow there */
		GpuAggNoteFallback(st, "the device failed");
		st->stats.cpu_batches++;
		InputLostReducer(in);
	}
	in->nbatch = 0;
	if (st->timing)
		st->stats.device_ms += GpuAggElapsedMs(start);
}

/*
 * Room for one more value in the input's host batch: grow it (it starts
 * small, so that a rescan of a small table costs little), or send it once
 * full.
 */
void
GpuAggInputGrow(GpuAggState *st, GpuAggInput *in)
{
	if (in->reducer != NULL || in->capacity >= GpuextAggBatch())
	{
		SendBatch(st, in);
		return;
	}
	in->capacity = in->capacity ? in->capacity * 2 : BATCH_START;
	if (in->batch == NULL)
		in->batch = MemoryContextAlloc(st->nodecxt, in->capacity * in->type->value_bytes);
	else
		in->batch = repalloc(in->batch, in->capacity * in->type->value_bytes);
}

/* Add one non-NULL value to an input. */
static inline void
InputAdd(GpuAggState *st, GpuAggInput *in, Datum value)
{
	if (in->type == NULL)
	{
		in->count++;
		return;
	}
	if (in->batching && unlikely(in->nbatch == in->capacity))
		GpuAggInputGrow(st, in);
	if (!in->batching)
	{
		GpuextAccumAdd(in->acc, value);
		return;
	}
	GpuextStoreDatum(in->type, value, in->batch + in->nbatch++ * in->type->value_bytes);
}

/* Everything pending of an input (its batch, the batch in flight) into its accumulator. */
static void
InputFinish(GpuAggState *st, GpuAggInput *in)
{
	if (in->type == NULL || !in->batching)
		return;
	if (in->nbatch > 0)
		SendBatch(st, in);
	if (in->reducer != NULL)
	{
		instr_time	start;

		if (st->timing)
			INSTR_TIME_SET_CURRENT(start);
		if (!GpuextReducerStream(&in->reducer, 0, in->acc))
		{
			GpuAggNoteFallback(st, "the device failed");
			InputLostReducer(in);
		}
		if (st->timing)
			st->stats.device_ms += GpuAggElapsedMs(start);
	}
}

/*
 * Start each input empty, batching where a batch could go to the device
 * (if it may be used at all); a reducer and its pinned batches are kept
 * from run to run.
 */
bool
GpuAggStartInputs(GpuAggState *st, bool may_use_device)
{
	bool		device = may_use_device && GpuextUseDevice();

	if (!may_use_device)
		GpuAggNoteFallback(st, "a parallel worker uses the device only through the GPU service");
	else if (!device)
		GpuAggNoteFallback(st, GpuextDeviceUnavailableReason());
	else if (gpuext_device_mode == GPUEXT_DEVICE_AUTO && gpuext_min_gpu_elements > GpuextAggBatch())
	{
		GpuAggNoteFallback(st, "gpuext.min_gpu_elements is above a batch");
		device = false;
	}
	st->run_device = device;
	for (int i = 0; i < st->ninputs; i++)
	{
		GpuAggInput *in = &st->inputs[i];

		in->count = 0;
		in->nbatch = 0;
		in->batching = device && in->type != NULL && st->groups.nkeys == 0 && !GpuAggInputIsNumeric(in);
		if (in->type != NULL)
			GpuextAccumInit(in->acc, in->type->typid);
	}
	return device;
}

/* Whether the row in the scan slot passes an input's FILTER, and its value. */
static inline bool
InputValue(GpuAggInput *in, TupleTableSlot *heapslot, ExprContext *econtext, Datum *value)
{
	bool		isnull;

	if (in->filter && !ExecQual(in->filter, econtext))
		return false;
	if (in->arg == NULL)
	{
		*value = heapslot->tts_values[in->argatt - 1];
		return !heapslot->tts_isnull[in->argatt - 1];
	}
	*value = ExecEvalExprSwitchContext(in->arg, econtext, &isnull);
	return !isnull;
}

/* Spill a row of the slot whose keys (in the key slot) have no group: its keys and inputs' values. */
static void
SpillSlotRow(GpuAggState *st, TupleTableSlot *heapslot, ExprContext *econtext)
{
	Datum		values[64];
	uint64		flags = 0;

	for (int i = 0; i < st->ninputs; i++)
		if (InputValue(&st->inputs[i], heapslot, econtext, &values[i]))
			flags |= UINT64CONST(1) << i;
	for (int k = 0; k < st->groups.nkeys; k++)
		if (st->groups.keyslot->tts_isnull[k])
			flags |= UINT64CONST(1) << (st->ninputs + k);
	GpuAggSpillWrite(st, st->groups.keyslot->tts_values, flags, values);
}

/* Add one row's values, from its deformed slot: WHERE, then each input's FILTER and argument. */
static pg_attribute_always_inline void
TakeRow(GpuAggState *st, TupleTableSlot *heapslot, ExprContext *econtext)
{
	TupleTableSlot *scanslot = st->css.ss.ss_ScanTupleSlot;

	if (st->rows.maxatt > 0)
		slot_getsomeattrs(heapslot, st->rows.maxatt);
	if (st->rows.need_scan_tuple)
	{
		int			first = st->naggs + st->groups.nkeys;

		ExecClearTuple(scanslot);
		for (int i = 0; i < st->rows.nvars; i++)
		{
			AttrNumber	att = st->rows.var_att[i];

			if (unlikely(att < 0))
				scanslot->tts_values[first + i] = slot_getsysattr(heapslot, att, &scanslot->tts_isnull[first + i]);
			else
			{
				scanslot->tts_values[first + i] = heapslot->tts_values[att - 1];
				scanslot->tts_isnull[first + i] = heapslot->tts_isnull[att - 1];
			}
		}
		ResetExprContext(econtext);
		if (st->groups.nkeys > 0 && st->rows.qual_reads_keys)
			GpuAggKeysEval(st, heapslot, econtext);
		ExecStoreVirtualTuple(scanslot);
		if (st->rows.qual && !ExecQual(st->rows.qual, econtext))
			return;
		/* keys computed only for rows that pass, as PostgreSQL's (1 / k GROUP BY ... WHERE k <> 0) */
		if (st->groups.nkeys > 0 && !st->rows.qual_reads_keys)
			GpuAggKeysEval(st, heapslot, econtext);
	}
	st->stats.rows_passed++;
	if (st->groups.nkeys > 0)
	{
		uint32		group = GpuAggGroupLookup(st);

		if (group == GPUAGG_SPILL)
		{
			SpillSlotRow(st, heapslot, econtext);
			return;
		}
		st->groups.group_rows[group]++;
		for (int i = 0; i < st->ninputs; i++)
		{
			GpuAggInput *in = &st->inputs[i];
			Datum		value;

			if (InputValue(in, heapslot, econtext, &value) &&
				(in->numeric_scale < 0 || GpuAggNumericToInt64(in, &value, &in->group_counts[group])))
				GpuAggGroupAdd(st, in, group, value);
		}
		return;
	}
	for (int i = 0; i < st->ninputs; i++)
	{
		GpuAggInput *in = &st->inputs[i];
		Datum		value;

		if (InputValue(in, heapslot, econtext, &value) &&
			(in->numeric_scale < 0 || GpuAggNumericToInt64(in, &value, &in->count)))
			InputAdd(st, in, value);
	}
}

/*
 * An input's value for a row read in place, false where there is none to
 * add: its FILTER rejects the row, the value is a NaN of a fixed-scale
 * numeric (counted in *nans), or a compiled numeric argument's, added here
 * into acc.
 */
static pg_attribute_always_inline bool
InputInPlace(GpuAggState *st, GpuAggInput *in, const char *tp, const float8 *shared, GpuextAccum *acc,
			 int64 *nans, Datum *value)
{
	if (in->rowfilter && !GpuAggRowQualPasses(in->rowfilter, tp, st->rows.att_off))
		return false;
	if (in->numarg && in->numnull)
		return false;
	/* a count: the row has its column (no NULLs), counts itself, or its argument is not NULL */
	if (in->type == NULL &&
		(in->rowreg < 0 || !GpuAggRowExprMayBeNull(in->rowarg ? in->rowarg : st->rows.rowargs, in->rowreg)))
	{
		*value = (Datum) 0;
		return true;
	}
	if (in->rowreg >= 0)
	{
		const float8 *regs = in->rowarg ? GpuAggRowExprRun(in->rowarg, tp, st->rows.att_off) : shared;

		/* a CASE that took no branch, or a NULL one */
		if (GpuAggRowExprNull(in->rowarg ? in->rowarg : st->rows.rowargs, in->rowreg))
			return false;
		*value = in->type != NULL && in->type->typid == FLOAT4OID ? Float4GetDatum((float4) regs[in->rowreg]) :
			Float8GetDatum(regs[in->rowreg]);
		return true;
	}
	if (in->numarg)
	{
		int			bytes = GpuAggNumExprIntBytes(in->numarg);

		/* a numeric argument is added here; an integer one's value is within its type's range as computed */
		if (bytes == 0)
		{
			GpuextNumericAddFixedValue(acc, in->numval, GpuAggNumExprScale(in->numarg));
			return false;
		}
		*value = bytes == 8 ? Int64GetDatum((int64) in->numval) :
			bytes == 4 ? Int32GetDatum((int32) in->numval) : Int16GetDatum((int16) in->numval);
		return true;
	}
	if (in->numeric_scale >= 0)
	{
		int128		v;
		int			status = GpuAggNumericColumn(st->rows.nummemo, tp, st->rows.att_off, in->argatt, in->numeric_scale, &v);

		return GpuAggFixedToInt64(in, status, v, value, nans);
	}
	*value = fetch_att(tp + st->rows.att_off[in->argatt - 1], in->fixed_byval, in->fixed_len);
	return true;
}

/* Spill a row read in place whose keys (in the key slot, none NULL) have no group. */
static void
SpillInPlaceRow(GpuAggState *st, const char *tp, const float8 *shared)
{
	Datum		values[64];
	uint64		flags = 0;

	for (int i = 0; i < st->ninputs; i++)
		if (InputInPlace(st, &st->inputs[i], tp, shared, NULL, NULL, &values[i]))
			flags |= UINT64CONST(1) << i;
	GpuAggSpillWrite(st, st->groups.keyslot->tts_values, flags, values);
}

/*
 * Add one row's values straight from a heap tuple, when the WHERE clause,
 * the FILTERs and the arguments are compiled or plain columns, and the keys
 * plain columns equal as bytes: false, having done nothing, for a tuple with
 * NULLs or fewer columns, or whose numeric arithmetic the slot must do.
 */
static pg_attribute_always_inline bool
TakeFixedRow(GpuAggState *st, HeapTuple tuple)
{
	const char *tp;
	const float8 *shared = NULL;
	Datum		value;

	if (HeapTupleHasNulls(tuple) || HeapTupleHeaderGetNatts(tuple->t_data) < st->rows.maxatt)
		return false;
	tp = (const char *) tuple->t_data + tuple->t_data->t_hoff;
	st->rows.nummemo->row++;
	if (st->rows.walk_from < st->rows.maxatt)
		GpuAggWalkOffsets(st, tp);
	if (st->rows.rowqual && !GpuAggRowQualPasses(st->rows.rowqual, tp, st->rows.att_off))
	{
		st->stats.rows_in_place++;
		return true;
	}
	/* The numeric arguments first: a row where one cannot be computed goes to the slot whole */
	for (int i = 0; i < st->ninputs && st->rows.numargs; i++)
	{
		GpuAggInput *in = &st->inputs[i];

		if (in->numarg &&
			!GpuAggNumExprEval(in->numarg, st->rows.nummemo, tp, st->rows.att_off, &in->numval, &in->numnull))
			return false;
	}
	st->stats.rows_in_place++;
	st->stats.rows_passed++;
	if (st->rows.rowargs)
		shared = GpuAggRowExprRun(st->rows.rowargs, tp, st->rows.att_off);
	if (st->groups.nkeys > 0)
	{
		TupleTableSlot *ks = st->groups.keyslot;
		uint32		group;

		ExecClearTuple(ks);
		for (int k = 0; k < st->groups.nkeys; k++)
		{
			ks->tts_values[k] = fetch_att(tp + st->rows.att_off[st->groups.key_att[k] - 1], st->groups.key_byval[k], st->groups.key_len[k]);
			ks->tts_isnull[k] = false;
		}
		ExecStoreVirtualTuple(ks);
		group = GpuAggGroupLookup(st);
		if (group == GPUAGG_SPILL)
		{
			SpillInPlaceRow(st, tp, shared);
			return true;
		}
		st->groups.group_rows[group]++;
		for (int i = 0; i < st->ninputs; i++)
		{
			GpuAggInput *in = &st->inputs[i];

			if (InputInPlace(st, in, tp, shared, in->group_accs ? &in->group_accs[group] : NULL,
							 in->group_counts ? &in->group_counts[group] : NULL, &value))
				GpuAggGroupAdd(st, in, group, value);
		}
		return true;
	}
	for (int i = 0; i < st->ninputs; i++)
	{
		GpuAggInput *in = &st->inputs[i];

		if (InputInPlace(st, in, tp, shared, in->acc, &in->count, &value))
			InputAdd(st, in, value);
	}
	return true;
}

/* Add one visible heap row: in place where it can be, else through the in-place slot. */
static pg_attribute_always_inline void
TakeHeapRow(GpuAggState *st, HeapTuple tuple, ExprContext *econtext)
{
	st->stats.rows_read++;
	if (st->rows.fixed && TakeFixedRow(st, tuple))
		return;
	/* The scan keeps the page pinned until the next one: no pin per row */
	ExecStoreHeapTuple(tuple, st->rows.tupslot, false);
	TakeRow(st, st->rows.tupslot, econtext);
}

/* A heap row the device scan hands back to the CPU (its page copied, so no pin). */
void
GpuAggTakeHeapRow(GpuAggState *st, HeapTuple tuple)
{
	TakeHeapRow(st, tuple, st->css.ss.ps.ps_ExprContext);
}

/*
 * Read the table with the query's snapshot, adding each passing row's values
 * to the inputs: a heap table page by page (gpuagg_pages.c finds a page's
 * visible rows, which are then read as heap_getnext would return them), any
 * other table through its slots.
 */
static void
ScanTable(GpuAggState *st)
{
	EState	   *estate = st->css.ss.ps.state;
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	TupleTableSlot *scanslot = st->css.ss.ss_ScanTupleSlot;
	TupleTableSlot *heapslot = st->rows.heapslot;
	Relation	rel = st->css.ss.ss_currentRelation;
	TableScanDesc scan;

	if (st->workers.pcxt != NULL && !st->workers.leader_scans)
		return;
	scan = st->workers.pscan ? table_beginscan_parallel(rel, st->workers.pscan) : table_beginscan(rel, estate->es_snapshot, 0, NULL);
	econtext->ecxt_scantuple = scanslot;
	for (int i = 0; i < st->naggs; i++)
		scanslot->tts_isnull[i] = true;
	if (rel->rd_tableam == GetHeapamTableAmRoutine())
	{
		GpuAggPages *pg = palloc(sizeof(GpuAggPages));
		HeapTupleData tuple;

		GpuAggPagesBegin(pg, scan);
		if (st->workers.pscan != NULL && st->workers.hints != NULL)
			GpuAggPagesShareHints(pg, st->workers.hints, st->workers.hints_n);
		tuple.t_tableOid = RelationGetRelid(rel);
		/* the device scan, where it takes this run; else row by row here */
		if (!GpuAggDevScanUsable(st, pg) || !GpuAggDevScanRun(st, pg))
		{
			while (!st->device_lost && GpuAggPagesNext(pg))
			{
				CHECK_FOR_INTERRUPTS();
				if (st->rows.columns && GpuAggTakePageColumns(st, pg))
					continue;
				for (int i = 0; i < pg->ntuples && !st->device_lost; i++)
				{
					OffsetNumber off = pg->offsets[i];
					ItemId		lp = PageGetItemId(pg->page, off);

					tuple.t_data = (HeapTupleHeader) PageGetItem(pg->page, lp);
					tuple.t_len = ItemIdGetLength(lp);
					ItemPointerSet(&tuple.t_self, pg->blkno, off);
					pgstat_count_heap_getnext(rel);
					TakeHeapRow(st, &tuple, econtext);
				}
			}
		}
		st->stats.pages_from_files += pg->pages_from_files;
		st->stats.pages_from_buffers += pg->pages_from_buffers;
		st->stats.pages_in_place += pg->pages_in_place;
		st->stats.pages_whole += pg->pages_whole;
		st->stats.pages_hinted += pg->pages_hinted;
		GpuAggPagesEnd(pg);
		pfree(pg);
	}
	else
	{
		while (!st->device_lost && table_scan_getnextslot(scan, ForwardScanDirection, heapslot))
		{
			CHECK_FOR_INTERRUPTS();
			st->stats.rows_read++;
			TakeRow(st, heapslot, econtext);
		}
	}
	table_endscan(scan);
	ExecClearTuple(heapslot);
	ExecClearTuple(st->rows.tupslot);
	ResetExprContext(econtext);
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
 * results; where the device was lost on the way (auto), or stopped
 * numbering the groups, again on the CPU.
 */
static void
RunGroups(GpuAggState *st, bool device)
{
	GpuAggStats before = st->stats;

	GpuAggGroupsStart(st, device);
	ScanTable(st);
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
	GpuAggStartInputs(st, false);
	GpuAggGroupsStart(st, false);
	ScanTable(st);
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
	ScanTable(st);
	for (int i = 0; i < st->ninputs; i++)
		InputFinish(st, &st->inputs[i]);
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
	ScanTable(st);
	for (int i = 0; i < st->ninputs; i++)
		InputFinish(st, &st->inputs[i]);
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
		ScanTable(st);
		GpuAggGroupsToHost(st);
		if (!st->device_lost)
			GpuAggGroupsSettle(st);
		return;
	}
	ScanTable(st);
	for (int i = 0; i < st->ninputs; i++)
		InputFinish(st, &st->inputs[i]);
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
