/*
 * gpuagg_rows.c
 *		GpuAgg's reading of the table: each row read (in place where it can
 *		be, else through a slot), the WHERE clause, the FILTERs and the
 *		arguments evaluated on the CPU, and each input's values reduced in
 *		batches on the device, into exact accumulators.
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
 */
#include "postgres.h"

#include "access/heapam.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"

#include "gpuagg.h"

/* Values a host batch starts with; it doubles up to GpuextAggBatch(). */
#define BATCH_START 1024

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
void
GpuAggInputFinish(GpuAggState *st, GpuAggInput *in)
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
		{
			if (st->inputs[i].numeric_scale >= 0)
				values[i] = GpuAggNumericSpillValue(&st->inputs[i], values[i]);
			flags |= UINT64CONST(1) << i;
		}
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
	/* a count: the row has its column (no NULLs), or counts itself */
	if (in->type == NULL && in->rowreg < 0)
	{
		*value = (Datum) 0;
		return true;
	}
	if (in->rowreg >= 0)
	{
		/* computed even for a count, which raises its argument's error as PostgreSQL does */
		const float8 *regs = in->rowarg ? GpuAggRowExprRun(in->rowarg, tp, st->rows.att_off) : shared;

		/* its error, where a CASE's branch taken raises one; then a CASE that took no branch, or a NULL one */
		GpuAggRowExprRaise(in->rowarg ? in->rowarg : st->rows.rowargs, in->rowreg);
		if (GpuAggRowExprNull(in->rowarg ? in->rowarg : st->rows.rowargs, in->rowreg))
			return false;
		*value = in->type == NULL ? (Datum) 0 :
			in->type->typid == FLOAT4OID ? Float4GetDatum((float4) regs[in->rowreg]) : Float8GetDatum(regs[in->rowreg]);
		return true;
	}
	if (in->numarg)
	{
		int			bytes = GpuAggNumExprIntBytes(in->numarg);

		/* a numeric argument is added here (made a numeric for a spilled row); an integer one's value is within its type's range as computed */
		if (bytes == 0 && acc == NULL)
		{
			*value = GpuextFixedToNumeric(in->numval, GpuAggNumExprScale(in->numarg));
			return true;
		}
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
	{
		int64		nans = 0;

		if (InputInPlace(st, &st->inputs[i], tp, shared, NULL, &nans, &values[i]))
			flags |= UINT64CONST(1) << i;
		else if (nans > 0)
		{
			/* a fixed-scale numeric's NaN */
			values[i] = Int64GetDatum(GPUAGG_SPILL_NAN);
			flags |= UINT64CONST(1) << i;
		}
	}
	GpuAggSpillWrite(st, st->groups.keyslot->tts_values, flags, values);
	/* the numerics made of compiled arguments, written */
	for (int i = 0; i < st->ninputs; i++)
		if (st->inputs[i].numarg && GpuAggInputIsNumeric(&st->inputs[i]) && (flags >> i) & 1)
			pfree(DatumGetPointer(values[i]));
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
void
GpuAggScanTable(GpuAggState *st)
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
