/*
 * gpusort_node.c
 *		Executing Custom Scan (GpuSort): store the input rows, build one
 *		order-preserving key per row, sort (key, row number) on the device,
 *		emit the rows in that order.
 *
 * Each key column takes a NULL flag bit (0 for the NULLs that come first)
 * and its gpu_sort key (inverted for DESC); the columns are packed, most
 * significant first, into as few 64-bit words as hold them.  Float keys
 * before the last make -0 equal to +0, so that a later key decides.
 *
 * When every output column is a key column, the keys are the rows: they are
 * sorted on the device and the rows rebuilt from them in order, with one
 * extra low bit per tied float key that remembers a -0 (keys-only mode).
 * Otherwise rows are copied as minimal tuples into a bump arena and emitted
 * through a pointer array put in sorted order as the order arrives.
 *
 * A backend without a GPU and small LIMIT bounds are known at executor
 * start: then the node runs PostgreSQL's own Sort executor inside, at
 * exactly its cost.  Rows whose storage would pass the memory budget, and
 * inputs the device cannot take, go on to PostgreSQL's tuplesort, which
 * gives the same order.
 */
#include "postgres.h"

#include <sys/mman.h>

#include "access/heapam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "executor/nodeSort.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "parser/parsetree.h"
#include "portability/instr_time.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"
#include "utils/tuplesort.h"
#include "utils/typcache.h"

#include "gpuext.h"
#include "pg_compat.h"
#include "sort_keys.h"
#include "gpusort.h"

int			gpuext_sort_work_mem = -1;

/* Rows whose key columns are read before their keys are built together. */
#define KEY_BATCH 256

/* LIMIT bounds up to this are served by tuplesort's top-N heap, which keeps only them. */
#define HEAP_BOUND_MAX 100000

/* Copied rows live in chunks growing from the first size to the last (larger rows get their own). */
#define ARENA_CHUNK_FIRST (8 * 1024 * 1024)
#define ARENA_CHUNK_MAX (64 * 1024 * 1024)

/* Transparent huge page size asked for on large row and key arrays. */
#define HUGE_PAGE_BYTES (2 * 1024 * 1024)

/* Rows ahead of the one emitted whose tuples are prefetched. */
#define EMIT_PREFETCH 16

/* Where one sort key lies in the row key, and how its values map to key bits and back. */
typedef struct KeyLayout
{
	const GpuextSortType *type;
	bool		raw;			/* keyed by datum_key_raw (the last key), else datum_key */
	int			bits;			/* of the value field */
	uint64		mask;			/* its low bits */
	uint64		invert;			/* mask for DESC, else 0 */
	uint64		null_flag;		/* the flag bit of a NULL: 1 when NULLs come last */
	int			flag_lo;		/* bit positions from the least significant bit of the key */
	int			value_lo;
	int			negzero_lo;		/* keys-only: the -0 bit of a tied float key, or -1 */
	Datum		negzero;		/* the -0 of that float type */
} KeyLayout;

typedef struct GpuSortState
{
	CustomScanState css;

	/* From the plan */
	int			nkeys;
	AttrNumber *colidx;
	Oid		   *sortops;
	Oid		   *collations;
	bool	   *nullsfirst;
	bool	   *descending;
	const GpuextSortType **types;
	int64		bound;
	bool		random_access;

	/* Key layout: bit positions counted from the least significant bit of the whole key */
	int			nwords;
	int			top_bits;
	KeyLayout  *layout;			/* per key */
	int			nnegzero;		/* keys-only -0 bits, at the bottom of the key */

	/*
	 * Device path: stored rows (tuple pointers, in sorted order once sorted;
	 * none in keys-only mode) and keys (row-major; sorted once sorted in
	 * keys-only mode).
	 */
	MemoryContext rowcxt;
	bool		keys_only;
	int			natts;
	int		   *attkey;			/* keys-only: the key each output column is rebuilt from */
	AttrNumber *input_attno;	/* keys-only over an unprojected scan: where each column lies in its tuple */
	AttrNumber *keyattno;		/* where each key lies in the input row */
	int		   *keyoff;			/* direct: each key's offset in a tuple without NULLs, or NULL if */
	int16	   *keylen;			/* some key follows a column of varying width; its length */
	AttrNumber	maxkeyatt;		/* ... and the last key column */
	bool		direct;			/* the input is read here from the child scan's heap pages */
	TupleTableSlot *projslot;	/* ... and the row as the scan would have projected it */
	Datum	   *dec_values;		/* keys-only: rows decoded a batch at a time from the sorted keys */
	bool	   *dec_isnull;
	size_t		dec_first;		/* the first of them */
	size_t		dec_n;			/* how many (0: none) */
	MinimalTuple *rows;
	char	   *arena_next;
	char	   *arena_end;
	size_t		arena_chunk;	/* size of the next chunk */
	TupleTableSlot *minslot;
	uint64	   *keys;
	size_t		nrows;
	size_t		capacity;
	size_t		current;
	bool		eof;
	size_t		mark_current;
	bool		mark_eof;

	/*
	 * Streamed keys (gpuext.device = gpu, forward-only keys-only sorts): built
	 * into the halves of a pinned buffer of the node's own, each full half
	 * copied to the device while the other fills; sorted there, and brought
	 * back a half at a time as the rows are emitted.  No host copy is made.
	 */
	bool		stream;			/* keys are being built into the halves now */
	bool		streamed;		/* this run's keys went to the device so */
	GpuextBuffer *pinned;
	GpuextBuffer *dkeys;		/* the keys on the device, room for capacity rows */
	GpuextBuffer *dsorted;		/* the sorted keys, then the order and the scratch */
	size_t		half_rows;		/* rows of keys in one half, a multiple of KEY_BATCH */
	size_t		shipped;		/* rows whose keys are on their way to the device */
	size_t		piece;			/* emitting: the piece of half_rows rows in its half, or SIZE_MAX */

	/* CPU paths: PostgreSQL's Sort node run inside, or a tuplesort taking over the stored rows */
	PlanState  *sortstate;
	Tuplesortstate *tuplesort;

	/* Run state and what EXPLAIN ANALYZE reports */
	bool		done;
	const char *fallback;
	size_t		host_bytes;
	size_t		device_bytes;
	double		store_ms;
	double		keys_ms;
	double		transfer_ms;
	double		sort_ms;
	double		emit_ms;
	double		rows_sorted;
} GpuSortState;

static void GpuSortBegin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *GpuSortExec(CustomScanState *node);
static void GpuSortEnd(CustomScanState *node);
static void GpuSortReScan(CustomScanState *node);
static void GpuSortMarkPos(CustomScanState *node);
static void GpuSortRestrPos(CustomScanState *node);
static void GpuSortExplain(CustomScanState *node, List *ancestors, ExplainState *es);

static const CustomExecMethods gpusort_exec_methods = {
	.CustomName = "GpuSort",
	.BeginCustomScan = GpuSortBegin,
	.ExecCustomScan = GpuSortExec,
	.EndCustomScan = GpuSortEnd,
	.ReScanCustomScan = GpuSortReScan,
	.MarkPosCustomScan = GpuSortMarkPos,
	.RestrPosCustomScan = GpuSortRestrPos,
	.ExplainCustomScan = GpuSortExplain,
};

/* Milliseconds since start. */
static double
ElapsedMs(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MILLISEC(now);
}

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

/* The Sort plan node this GpuSort replaced, rebuilt to run inside it. */
static Sort *
MakeSortPlan(GpuSortState *st, CustomScan *cscan)
{
	Sort	   *sort = makeNode(Sort);

	memcpy(&sort->plan, &cscan->scan.plan, sizeof(Plan));
	sort->plan.type = T_Sort;
	sort->plan.targetlist = cscan->custom_scan_tlist;
	sort->plan.initPlan = NIL;
	sort->numCols = st->nkeys;
	sort->sortColIdx = st->colidx;
	sort->sortOperators = st->sortops;
	sort->collations = st->collations;
	sort->nullsFirst = st->nullsfirst;
	return sort;
}

/* Whether every output column is a sort key, so that rows can be rebuilt from their keys. */
static bool
ValuesAreKeys(GpuSortState *st, TupleDesc desc)
{
	for (int a = 0; a < desc->natts; a++)
	{
		bool		is_key = false;

		for (int k = 0; k < st->nkeys; k++)
			is_key |= st->colidx[k] == a + 1;
		if (!is_key || !TupleDescAttr(desc, a)->attbyval)
			return false;
	}
	return true;
}

/*
 * Keys-only over a sequential scan that projects plain columns: the scan
 * runs from a copy of its plan that returns the table's rows as they are,
 * so it has no projection to make, and the keys are read from those rows
 * where they lie.  Projecting each row costs more than reading the few key
 * columns, and keys-only rows are rebuilt from their keys anyway.
 */
static Plan *
UnprojectedScan(GpuSortState *st, Plan *child, EState *estate)
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

	if (!IsA(child, SeqScan) || list_length(child->targetlist) != st->natts)
		return child;
	scanrelid = ((Scan *) child)->scanrelid;
	attno = palloc(sizeof(AttrNumber) * st->natts);
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
	identity = reldesc->natts == st->natts;
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
		if (i < st->natts && attno[i] != i + 1)
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
	st->input_attno = attno;
	st->projslot = ExecAllocTableSlot(&estate->es_tupleTable, st->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor,
									  &TTSOpsVirtual);
	return (Plan *) copy;
}

/* The input row as the scan's projection would have made it. */
static TupleTableSlot *
ProjectInput(GpuSortState *st, TupleTableSlot *slot)
{
	if (st->input_attno == NULL)
		return slot;
	ExecClearTuple(st->projslot);
	for (int a = 0; a < st->natts; a++)
		st->projslot->tts_values[a] = slot_getattr(slot, st->input_attno[a], &st->projslot->tts_isnull[a]);
	return ExecStoreVirtualTuple(st->projslot);
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
	st->maxkeyatt = 0;
	for (int k = 0; k < st->nkeys; k++)
	{
		if (st->keyattno[k] > nfixed || !TupleDescAttr(tupdesc, st->keyattno[k] - 1)->attbyval)
			return;
		st->maxkeyatt = Max(st->maxkeyatt, st->keyattno[k]);
	}
	st->keyoff = palloc(sizeof(int) * st->nkeys);
	st->keylen = palloc(sizeof(int16) * st->nkeys);
	for (int k = 0; k < st->nkeys; k++)
	{
		st->keyoff[k] = attoff[st->keyattno[k] - 1];
		st->keylen[k] = TupleDescAttr(tupdesc, st->keyattno[k] - 1)->attlen;
	}
	pfree(attoff);
}

/*
 * Over a plain sequential scan of a heap table (no filter, no projection, not
 * parallel) the node reads the heap pages itself: the executor's per-row slot
 * work (a buffer pin and a deform per tuple) costs more than the sort.
 */
static void
DirectScanSetup(GpuSortState *st)
{
	PlanState  *child = outerPlanState(st);

	if (!IsA(child, SeqScanState) || child->ps_ProjInfo != NULL || child->qual != NULL ||
		child->plan->parallel_aware || child->plan->initPlan != NIL)
		return;
	if (((ScanState *) child)->ss_currentRelation->rd_tableam != GetHeapamTableAmRoutine())
		return;
	st->direct = true;
	KeyOffsets(st, RelationGetDescr(((ScanState *) child)->ss_currentRelation));
}

/* Whether a key's type has a -0 that compares equal to +0. */
static bool
HasNegativeZero(const GpuextSortType *type)
{
	return type->typid == FLOAT4OID || type->typid == FLOAT8OID;
}

/* Read the sort specification from the plan and lay the key columns out in words. */
static void
GpuSortBegin(CustomScanState *node, EState *estate, int eflags)
{
	GpuSortState *st = (GpuSortState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *priv = cscan->custom_private;
	TupleDesc	desc = node->ss.ss_ScanTupleSlot->tts_tupleDescriptor;
	int			total = 0;
	int			nnegzero = 0;
	int			i;

	st->nkeys = list_length(linitial(priv));
	st->colidx = palloc(sizeof(AttrNumber) * st->nkeys);
	st->sortops = palloc(sizeof(Oid) * st->nkeys);
	st->collations = palloc(sizeof(Oid) * st->nkeys);
	st->nullsfirst = palloc(sizeof(bool) * st->nkeys);
	st->descending = palloc(sizeof(bool) * st->nkeys);
	st->types = palloc(sizeof(GpuextSortType *) * st->nkeys);
	st->layout = palloc(sizeof(KeyLayout) * st->nkeys);
	for (i = 0; i < st->nkeys; i++)
	{
		st->colidx[i] = (AttrNumber) list_nth_int(linitial(priv), i);
		st->sortops[i] = list_nth_oid(lsecond(priv), i);
		st->collations[i] = list_nth_oid(lthird(priv), i);
		st->nullsfirst[i] = list_nth_int(lfourth(priv), i) != 0;
		st->types[i] = GpuextSortTypeLookup(list_nth_oid(list_nth(priv, 4), i));
		st->descending[i] = list_nth_int(list_nth(priv, 5), i) != 0;
		if (st->types[i] == NULL)
			elog(ERROR, "GpuSort key %d has an unsupported type", i + 1);
	}
	st->bound = intVal(list_nth(priv, 6));
	st->natts = desc->natts;
	st->keys_only = ValuesAreKeys(st, desc);

	/* Flag and value of each key from the top; keys-only -0 bits at the bottom. */
	for (i = 0; i < st->nkeys; i++)
	{
		total += 1 + 8 * st->types[i]->key_bytes;
		if (st->keys_only && i < st->nkeys - 1 && HasNegativeZero(st->types[i]))
			nnegzero++;
	}
	total += nnegzero;
	st->nnegzero = nnegzero;
	st->nwords = (total + 63) / 64;
	st->top_bits = total - 64 * (st->nwords - 1);
	for (i = 0, nnegzero = 0; i < st->nkeys; i++)
	{
		KeyLayout  *l = &st->layout[i];
		const GpuextSortType *type = st->types[i];

		/* The last key needs no -0 = +0 tie: nothing comes after it */
		l->type = type;
		l->raw = i == st->nkeys - 1;
		l->bits = 8 * type->key_bytes;
		l->mask = l->bits == 64 ? ~UINT64CONST(0) : (UINT64CONST(1) << l->bits) - 1;
		l->invert = st->descending[i] ? l->mask : 0;
		l->null_flag = st->nullsfirst[i] ? 0 : 1;
		l->flag_lo = total - 1;
		l->value_lo = total - 1 - l->bits;
		total = l->value_lo;
		l->negzero_lo = -1;
		l->negzero = type->typid == FLOAT4OID ? Float4GetDatum(-0.0f) : Float8GetDatum(-0.0);
		if (st->keys_only && i < st->nkeys - 1 && HasNegativeZero(type))
			l->negzero_lo = nnegzero++;
	}
	if (st->keys_only)
	{
		st->attkey = palloc(sizeof(int) * st->natts);
		for (int a = 0; a < st->natts; a++)
			for (int k = st->nkeys - 1; k >= 0; k--)
				if (st->colidx[k] == a + 1)
					st->attkey[a] = k;
	}

	/* Where the sort will run, when that is known now: then PostgreSQL's Sort does it. */
	if ((eflags & EXEC_FLAG_EXPLAIN_ONLY) == 0)
	{
		if (st->bound >= 0 && st->bound <= HEAP_BOUND_MAX)
			st->fallback = psprintf("LIMIT %lld: top-N heap", (long long) st->bound);
		else if (!GpuextUseDevice())
			st->fallback = psprintf("no GPU: %s", GpuextDeviceUnavailableReason());
	}
	if (st->fallback)
	{
		st->sortstate = ExecInitNode((Plan *) MakeSortPlan(st, cscan), estate, eflags);
		outerPlanState(node) = outerPlanState(st->sortstate);
		if (st->bound >= 0)
			ExecSetTupleBound(st->bound, st->sortstate);
	}
	else
	{
		/* Like Sort: the input is read once, and rewind, backward or mark are served here. */
		Plan	   *child = outerPlan(cscan);

		st->random_access = (eflags & (EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK)) != 0;
		if (st->keys_only && (eflags & EXEC_FLAG_EXPLAIN_ONLY) == 0)
			child = UnprojectedScan(st, child, estate);
		outerPlanState(node) = ExecInitNode(child, estate,
											eflags & ~(EXEC_FLAG_REWIND | EXEC_FLAG_BACKWARD | EXEC_FLAG_MARK));
		/* EXPLAIN shows the scan as planned. */
		outerPlanState(node)->plan = outerPlan(cscan);
	}

	/* Output is every input column, unprojected. */
	if (node->ss.ps.ps_ProjInfo != NULL)
		elog(ERROR, "GpuSort output does not match its input");
	st->keys_only &= st->fallback == NULL;
	if (st->keys_only)
	{
		/* Rows are rebuilt into a virtual slot, as the scan slot already is. */
		st->minslot = ExecAllocTableSlot(&estate->es_tupleTable, desc, &TTSOpsMinimalTuple);
		st->dec_values = palloc(sizeof(Datum) * KEY_BATCH * st->natts);
		st->dec_isnull = palloc(sizeof(bool) * KEY_BATCH * st->natts);
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
	if (st->fallback)
		return;
	st->keyattno = palloc(sizeof(AttrNumber) * st->nkeys);
	for (i = 0; i < st->nkeys; i++)
		st->keyattno[i] = st->input_attno ? st->input_attno[st->colidx[i] - 1] : st->colidx[i];
	DirectScanSetup(st);
}

/*
 * Build the keys of a batch of rows from their key column values, key column
 * by key column (each column's values keyed in one call).  A field lies in
 * one word or straddles two, the same way for every row.
 */
static void
BuildKeys(GpuSortState *st, uint64 *keys, const Datum *values, const bool *isnull, int nrows)
{
	uint64		colkeys[KEY_BATCH];
	const int	nw = st->nwords;
	const int	nk = st->nkeys;

	Assert(nrows <= KEY_BATCH);
	memset(keys, 0, sizeof(uint64) * nw * nrows);
	for (int k = 0; k < nk; k++)
	{
		const KeyLayout *l = &st->layout[k];
		const bool *nulls = isnull + k;
		const uint64 invert = l->invert;
		const uint64 null_flag = l->null_flag;
		const int	fw = nw - 1 - l->flag_lo / 64;
		const int	fs = l->flag_lo % 64;
		const int	vw = nw - 1 - l->value_lo / 64;
		const int	vs = l->value_lo % 64;

		l->type->datums_keys(values + k, nk, colkeys, nrows, l->raw);
		if (vs + l->bits <= 64)
			for (int r = 0; r < nrows; r++)
			{
				uint64		notnull = !nulls[r * nk];
				uint64	   *words = keys + (size_t) r * nw;

				words[fw] |= (null_flag ^ notnull) << fs;
				words[vw] |= ((colkeys[r] ^ invert) & -notnull) << vs;
			}
		else
			for (int r = 0; r < nrows; r++)
			{
				uint64		notnull = !nulls[r * nk];
				uint64	   *words = keys + (size_t) r * nw;
				uint64		key = (colkeys[r] ^ invert) & -notnull;

				words[fw] |= (null_flag ^ notnull) << fs;
				words[vw] |= key << vs;
				words[vw - 1] |= key >> (64 - vs);
			}
		if (l->negzero_lo >= 0)
			for (int r = 0; r < nrows; r++)
				if (!nulls[r * nk] && values[r * nk + k] == l->negzero)
					keys[(size_t) r * nw + nw - 1 - l->negzero_lo / 64] |= UINT64CONST(1) << (l->negzero_lo % 64);
	}
}

/* Start PostgreSQL's tuplesort for this node's keys, bounded where a LIMIT says so. */
static void
StartTuplesort(GpuSortState *st, int64 budget_kb)
{
	st->tuplesort = tuplesort_begin_heap(st->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor,
										 st->nkeys, st->colidx, st->sortops, st->collations,
										 st->nullsfirst, (int) Min(budget_kb, MAX_KILOBYTES), NULL,
										 (st->random_access ? TUPLESORT_RANDOMACCESS : TUPLESORT_NONE) |
										 (st->bound >= 0 ? TUPLESORT_ALLOWBOUNDED : TUPLESORT_NONE));
	if (st->bound >= 0)
		tuplesort_set_bound(st->tuplesort, st->bound);
}

/* The word holding bit lo of the key at keys; rows lie nwords apart. */
static inline const uint64 *
KeyWord(GpuSortState *st, const uint64 *keys, int lo)
{
	return keys + (st->nwords - 1 - lo / 64);
}

/* The pinned half that piece p of the streamed keys (half_rows rows each) goes through. */
static inline uint64 *
StreamHalf(GpuSortState *st, size_t p)
{
	return (uint64 *) (st->pinned->ptr + (p % 2) * GPUEXT_STAGING_HALF_BYTES);
}

/* Enqueue the copy of piece p of the sorted keys into its half. */
static void
FetchPiece(GpuSortState *st, size_t p)
{
	size_t		rows = Min(st->half_rows, st->nrows - p * st->half_rows);
	size_t		row_bytes = st->nwords * sizeof(uint64);

	GpuextPieceToHost((char *) StreamHalf(st, p), st->dsorted->ptr + p * st->half_rows * row_bytes,
					  rows * row_bytes, p % 2);
}

/* The sorted key of row i: its own row's in host memory, or its piece's once it is back (forward only). */
static const uint64 *
SortedKey(GpuSortState *st, size_t i)
{
	size_t		p;

	if (st->dsorted == NULL)
		return st->keys + i * st->nwords;
	p = i / st->half_rows;
	if (p != st->piece)
	{
		instr_time	start;

		/* Piece p - 1 is done with: its half takes piece p + 1 while p is emitted */
		INSTR_TIME_SET_CURRENT(start);
		GpuextWait(p % 2);
		st->piece = p;
		if ((p + 1) * st->half_rows < st->nrows)
			FetchPiece(st, p + 1);
		st->transfer_ms += ElapsedMs(start);
	}
	return StreamHalf(st, p) + (i - p * st->half_rows) * st->nwords;
}

/*
 * Decode the keys of up to KEY_BATCH rows from first, column by column, each
 * column's values in one call.  A field lies in one word or straddles two,
 * the same way for every row.
 */
static void
DecodeBatch(GpuSortState *st, size_t first)
{
	uint64		colkeys[KEY_BATCH];
	size_t		n = Min(KEY_BATCH, st->nrows - first);
	const uint64 *keys = SortedKey(st, first);
	const char *next = (const char *) (keys + n * st->nwords);

	/* The next batch's keys, ahead of their turn (a hint: past the end it is ignored) */
	for (size_t off = 0; off < n * st->nwords * sizeof(uint64); off += 64)
		__builtin_prefetch(next + off);

	for (int a = 0; a < st->natts; a++)
	{
		const KeyLayout *l = &st->layout[st->attkey[a]];
		Datum	   *values = st->dec_values + a;
		bool	   *isnull = st->dec_isnull + a;
		const int	nw = st->nwords;
		const uint64 *vw = KeyWord(st, keys, l->value_lo);
		const uint64 *fw = KeyWord(st, keys, l->flag_lo);
		int			vs = l->value_lo % 64;
		int			fs = l->flag_lo % 64;

		if (vs + l->bits <= 64)
			for (size_t r = 0; r < n; r++)
				colkeys[r] = ((vw[r * nw] >> vs) & l->mask) ^ l->invert;
		else
			for (size_t r = 0; r < n; r++)
				colkeys[r] = (((vw[r * nw] >> vs) | (vw[r * nw - 1] << (64 - vs))) & l->mask) ^ l->invert;
		l->type->keys_datums(colkeys, values, st->natts, n);
		for (size_t r = 0; r < n; r++)
		{
			isnull[r * st->natts] = ((fw[r * nw] >> fs) & 1) == l->null_flag;
			if (isnull[r * st->natts])
				values[r * st->natts] = (Datum) 0;
		}
		if (l->negzero_lo >= 0)
		{
			const uint64 *zw = KeyWord(st, keys, l->negzero_lo);
			int			zs = l->negzero_lo % 64;

			for (size_t r = 0; r < n; r++)
				if ((zw[r * nw] >> zs) & 1)
					values[r * st->natts] = l->negzero;
		}
	}
	st->dec_first = first;
	st->dec_n = n;
}

/* Keys-only row i from the decoded batch, decoding the batch around it (either direction) first. */
static pg_attribute_always_inline void
StoreDecodedRow(GpuSortState *st, TupleTableSlot *slot, size_t i)
{
	const Datum *values;
	const bool *isnull;

	if (i < st->dec_first || i >= st->dec_first + st->dec_n)
		DecodeBatch(st, i >= st->dec_first + st->dec_n ? i : (i + 1 >= KEY_BATCH ? i + 1 - KEY_BATCH : 0));
	values = st->dec_values + (i - st->dec_first) * st->natts;
	isnull = st->dec_isnull + (i - st->dec_first) * st->natts;
	ExecClearTuple(slot);
	for (int a = 0; a < st->natts; a++)
	{
		slot->tts_values[a] = values[a];
		slot->tts_isnull[a] = isnull[a];
	}
	ExecStoreVirtualTuple(slot);
}

/* Put stored row i into slot: rebuilt from its key in keys-only mode, else the stored tuple. */
static pg_attribute_always_inline void
StoreRow(GpuSortState *st, TupleTableSlot *slot, size_t i)
{
	if (!st->keys_only)
		ExecStoreMinimalTuple(st->rows[i], slot, false);
	else
		StoreDecodedRow(st, slot, i);
}

/* Hand the rows stored so far to tuplesort and forget them. */
static void
SpillToTuplesort(GpuSortState *st, int64 budget_kb, const char *why)
{
	TupleTableSlot *slot = MakeSingleTupleTableSlot(st->css.ss.ss_ScanTupleSlot->tts_tupleDescriptor,
													st->keys_only ? &TTSOpsVirtual : &TTSOpsMinimalTuple);

	st->fallback = why;
	StartTuplesort(st, budget_kb);
	for (size_t i = 0; i < st->nrows; i++)
	{
		if ((i & GPUEXT_CFI_MASK) == 0)
			CHECK_FOR_INTERRUPTS();
		StoreRow(st, slot, i);
		tuplesort_puttupleslot(st->tuplesort, slot);
	}
	ExecDropSingleTupleTableSlot(slot);
	MemoryContextReset(st->rowcxt);
	st->rows = NULL;
	st->arena_next = st->arena_end = NULL;
	st->keys = NULL;
	st->nrows = st->capacity = 0;
	st->dec_n = 0;
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
static void *
AllocRows(GpuSortState *st, size_t bytes)
{
	void	   *p = MemoryContextAllocHuge(st->rowcxt, bytes);

	AdviseHugePages(p, bytes);
	return p;
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

	memcpy(piece, (char *) t->st->keys + offset, bytes);
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
		sorted[i] = t->st->rows[order[i]];
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
	size_t		n = st->nrows;
	size_t		keys_bytes = TYPEALIGN(256, n * st->nwords * sizeof(uint64));
	size_t		order_bytes = TYPEALIGN(256, n * sizeof(uint32));
	size_t		sorted_bytes = st->keys_only ? keys_bytes : 0;
	size_t		scratch_bytes;
	GpuextBuffer *buf;
	char	   *staging;
	char	   *dkeys,
			   *dorder,
			   *dsorted,
			   *dscratch;
	RowTransfer transfer = {st, NULL, NULL};
	instr_time	start;

	GpuextCheck(gpuext_sort_rows_scratch_bytes(st->nwords, n, &scratch_bytes), "sort setup");
	buf = GpuextDeviceAlloc(keys_bytes + order_bytes + sorted_bytes + scratch_bytes,
							gpuext_device_mode == GPUEXT_DEVICE_AUTO);
	if (buf == NULL)
		return false;
	st->device_bytes = buf->bytes;
	dkeys = buf->ptr;
	dorder = dkeys + keys_bytes;
	dsorted = dorder + order_bytes;
	dscratch = dsorted + sorted_bytes;
	if (!st->keys_only)
	{
		transfer.sorted = AllocRows(st, n * sizeof(MinimalTuple));
		st->host_bytes += n * sizeof(MinimalTuple);
	}
	else if (gpuext_device_mode == GPUEXT_DEVICE_AUTO)
	{
		/* The stored keys stay whole until the sorted ones are back: tuplesort can still take them */
		transfer.sorted_keys = AllocRows(st, n * st->nwords * sizeof(uint64));
		st->host_bytes += n * st->nwords * sizeof(uint64);
	}
	else
		transfer.sorted_keys = st->keys;
	staging = GpuextStagingBegin();

	INSTR_TIME_SET_CURRENT(start);
	GpuextUpload(dkeys, n * st->nwords * sizeof(uint64), sizeof(uint64), staging, KeysPiece, &transfer);
	GpuextWait(-1);
	st->transfer_ms += ElapsedMs(start);

	INSTR_TIME_SET_CURRENT(start);
	GpuextCheck(gpuext_sort_rows(st->nwords, st->top_bits, (const uint64_t *) dkeys, (uint32_t *) dorder,
								 st->keys_only ? (uint64_t *) dsorted : NULL, n, dscratch, scratch_bytes,
								 GpuextPollInterrupts, NULL), "sort");
	st->sort_ms += ElapsedMs(start);

	INSTR_TIME_SET_CURRENT(start);
	if (st->keys_only)
	{
		GpuextDownload(dsorted, n * st->nwords * sizeof(uint64), sizeof(uint64), staging,
					   SortedKeysPiece, &transfer);
		if (transfer.sorted_keys != st->keys)
		{
			pfree(st->keys);
			st->keys = transfer.sorted_keys;
		}
		st->dec_n = 0;
	}
	else
	{
		GpuextDownload(dorder, n * sizeof(uint32), sizeof(uint32), staging, OrderPiece, &transfer);
		pfree(st->rows);
		st->rows = transfer.sorted;
	}
	st->transfer_ms += ElapsedMs(start);

	GpuextStagingEnd();
	GpuextBufferFree(buf);
	return true;
}

/* SortRowsOnDevice as device work that may fall back (GpuextTryDevice). */
typedef struct RowSortCall
{
	GpuSortState *st;
	bool		sorted;			/* out: the device sorted, rather than finding memory short */
} RowSortCall;

/* GpuextTryDevice callback: the device sort of the stored rows. */
static void
RowSortRun(void *arg)
{
	RowSortCall *call = (RowSortCall *) arg;

	call->sorted = SortRowsOnDevice(call->st);
}

/* Sort the stored rows on the device; tuplesort takes them when device memory is short or (auto) the device fails. */
static void
SortRowsOrSpill(GpuSortState *st, int64 budget_kb)
{
	RowSortCall call = {st, false};

	if (GpuextTryDevice(RowSortRun, &call, "sort"))
	{
		if (!call.sorted)
			SpillToTuplesort(st, budget_kb, "device memory is short");
		return;
	}
	st->device_bytes = 0;
	SpillToTuplesort(st, budget_kb, "the device failed");
}

/* (Re)allocate a growing array in the rows' context. */
static void *
GrowArray(GpuSortState *st, void *old, size_t bytes)
{
	void	   *p;

	if (old == NULL)
		return AllocRows(st, bytes);
	p = repalloc_huge(old, bytes);
	AdviseHugePages(p, bytes);
	return p;
}

/* Rows to make room for at first: as many as the planner expects and the budget holds. */
static size_t
ExpectedRows(GpuSortState *st, int64 budget_kb)
{
	double		row_bytes = (st->keys_only ? 0 : st->css.ss.ps.plan->plan_width + sizeof(MinimalTuple)) +
		st->nwords * sizeof(uint64);
	double		expected = Min(st->css.ss.ps.plan->plan_rows * 1.1 + 1, budget_kb * 1024.0 / row_bytes);

	return (size_t) Max(Min(expected, 1 << 26), 1024);
}

/* Make room for more stored rows and their keys: first ExpectedRows, then twice as many each time. */
static void
GrowRows(GpuSortState *st, int64 budget_kb)
{
	size_t		newcap = st->capacity ? st->capacity * 2 : ExpectedRows(st, budget_kb);

	if (!st->keys_only)
		st->rows = GrowArray(st, st->rows, newcap * sizeof(MinimalTuple));
	st->keys = GrowArray(st, st->keys, newcap * st->nwords * sizeof(uint64));
	st->capacity = newcap;
}

/* Copy a tuple body as a minimal tuple into the arena (heap: src is a heap tuple's); returns the bytes it takes. */
static inline size_t
CopyTupleBytes(GpuSortState *st, const char *src, size_t len, bool heap)
{
	size_t		space = MAXALIGN(len);
	MinimalTuple copy;

	if (space > (size_t) (st->arena_end - st->arena_next))
	{
		size_t		chunk = Max(space, st->arena_chunk);

		st->arena_next = AllocRows(st, chunk);
		st->arena_end = st->arena_next + chunk;
		st->arena_chunk = Min(st->arena_chunk * 2, ARENA_CHUNK_MAX);
	}
	copy = (MinimalTuple) st->arena_next;
	st->arena_next += space;
	memcpy(copy, src, len);
	if (heap)
	{
		memset(copy, 0, offsetof(MinimalTupleData, t_infomask2));
		copy->t_len = len;
	}
	st->rows[st->nrows] = copy;
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

/*
 * Stream the keys of this run when it may: under gpuext.device = gpu (a
 * failure is an ERROR, so no host copy is needed to fall back on), for a
 * forward-only keys-only sort expected to fill a half at least.
 */
static void
StartStream(GpuSortState *st, int64 budget_kb)
{
	size_t		half_rows = GPUEXT_STAGING_HALF_BYTES / (st->nwords * sizeof(uint64)) / KEY_BATCH * KEY_BATCH;
	size_t		expected = ExpectedRows(st, budget_kb);
	MemoryContext old;

	if (gpuext_device_mode != GPUEXT_DEVICE_GPU || !st->keys_only || st->random_access || expected < half_rows)
		return;
	old = MemoryContextSwitchTo(st->rowcxt);
	st->pinned = GpuextPinnedAlloc(2 * GPUEXT_STAGING_HALF_BYTES);
	st->capacity = (expected + half_rows - 1) / half_rows * half_rows;
	st->dkeys = GpuextDeviceAlloc(st->capacity * st->nwords * sizeof(uint64), false);
	MemoryContextSwitchTo(old);
	st->device_bytes = st->dkeys->bytes;
	st->half_rows = half_rows;
	st->shipped = 0;
	st->stream = st->streamed = true;
}

/* Enqueue the copy of the keys in piece p's half (rows of them) to their place on the device. */
static void
ShipPiece(GpuSortState *st, size_t p, size_t rows)
{
	size_t		row_bytes = st->nwords * sizeof(uint64);

	GpuextPieceToDevice(st->dkeys->ptr + p * st->half_rows * row_bytes, (const char *) StreamHalf(st, p),
						rows * row_bytes, p % 2);
	st->shipped += rows;
}

/*
 * Bring the streamed keys of the rows but the last batched back to host
 * memory, with room for every row stored, and go on as if they had never
 * left: the budget was passed, or more rows came than the device has room for.
 */
static void
Unstream(GpuSortState *st, int batched)
{
	size_t		row_bytes = st->nwords * sizeof(uint64);
	size_t		built = st->nrows - batched;
	size_t		capacity = Max(st->nrows, KEY_BATCH);
	RowTransfer transfer = {st, NULL, NULL};
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	transfer.sorted_keys = AllocRows(st, capacity * row_bytes);
	GpuextWait(-1);
	/* The half being filled first: the download goes through both halves */
	memcpy(transfer.sorted_keys + st->shipped * st->nwords, StreamHalf(st, st->shipped / st->half_rows),
		   (built - st->shipped) * row_bytes);
	GpuextDownload(st->dkeys->ptr, st->shipped * row_bytes, sizeof(uint64), st->pinned->ptr, SortedKeysPiece,
				   &transfer);
	GpuextBufferFree(st->dkeys);
	GpuextBufferFree(st->pinned);
	st->dkeys = st->pinned = NULL;
	st->keys = transfer.sorted_keys;
	st->capacity = capacity;
	st->device_bytes = 0;
	st->stream = st->streamed = false;
	st->transfer_ms += ElapsedMs(start);
}

/* Build the keys of the last batched rows, timed, and ship a filled half; returns the new batch length (0). */
static int
FlushKeys(GpuSortState *st, const Datum *values, const bool *isnull, int batched)
{
	size_t		first = st->nrows - batched;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	if (!st->stream)
		BuildKeys(st, st->keys + first * st->nwords, values, isnull, batched);
	else
		BuildKeys(st, StreamHalf(st, first / st->half_rows) + (first % st->half_rows) * st->nwords,
				  values, isnull, batched);
	st->keys_ms += ElapsedMs(start);
	if (st->stream && st->nrows % st->half_rows == 0)
	{
		size_t		p = st->nrows / st->half_rows - 1;

		/* The other half is filled next, once its last copy is done */
		INSTR_TIME_SET_CURRENT(start);
		ShipPiece(st, p, st->half_rows);
		GpuextWait((p + 1) % 2);
		st->transfer_ms += ElapsedMs(start);
	}
	return 0;
}

/* Sort streamed keys on the device, where they stay for the rows to be emitted from. */
static void
SortStreamed(GpuSortState *st)
{
	size_t		n = st->nrows;
	size_t		keys_bytes = TYPEALIGN(256, n * st->nwords * sizeof(uint64));
	size_t		order_bytes = TYPEALIGN(256, n * sizeof(uint32));
	size_t		scratch_bytes;
	MemoryContext old;
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	if (n > st->shipped)
		ShipPiece(st, st->shipped / st->half_rows, n - st->shipped);
	st->transfer_ms += ElapsedMs(start);
	GpuextCheck(gpuext_sort_rows_scratch_bytes(st->nwords, n, &scratch_bytes), "sort setup");
	old = MemoryContextSwitchTo(st->rowcxt);
	st->dsorted = GpuextDeviceAlloc(keys_bytes + order_bytes + scratch_bytes, false);
	MemoryContextSwitchTo(old);
	st->device_bytes += st->dsorted->bytes;

	INSTR_TIME_SET_CURRENT(start);
	GpuextCheck(gpuext_sort_rows(st->nwords, st->top_bits, (const uint64_t *) st->dkeys->ptr,
								 (uint32_t *) (st->dsorted->ptr + keys_bytes), (uint64_t *) st->dsorted->ptr, n,
								 st->dsorted->ptr + keys_bytes + order_bytes, scratch_bytes,
								 GpuextPollInterrupts, NULL), "sort");
	st->sort_ms += ElapsedMs(start);
	GpuextBufferFree(st->dkeys);
	st->dkeys = NULL;
	st->stream = false;
	st->piece = SIZE_MAX;
	FetchPiece(st, 0);
}

/* Give back what streamed keys held once the last row is out. */
static void
EndStream(GpuSortState *st)
{
	if (st->dsorted)
		GpuextBufferFree(st->dsorted);
	if (st->pinned)
		GpuextBufferFree(st->pinned);
	st->dsorted = st->pinned = NULL;
}

/* Take a row's keys straight from a tuple without NULLs, where every key lies at a fixed offset. */
static pg_attribute_always_inline bool
FixedKeys(GpuSortState *st, HeapTuple tuple, Datum *values, bool *isnull)
{
	const char *tp;

	if (st->keyoff == NULL || HeapTupleHasNulls(tuple) || HeapTupleHeaderGetNatts(tuple->t_data) < st->maxkeyatt)
		return false;
	tp = (const char *) tuple->t_data + tuple->t_data->t_hoff;
	for (int k = 0; k < st->nkeys; k++)
	{
		values[k] = fetch_att(tp + st->keyoff[k], true, st->keylen[k]);
		isnull[k] = false;
	}
	return true;
}

/* What reading the input carries from row to row. */
typedef struct RunInput
{
	int64		budget_kb;
	Datum	   *values;			/* key values of the rows batched for BuildKeys */
	bool	   *isnull;
	int			batched;
	size_t		row_bytes;
} RunInput;

/*
 * Store one input row, from a slot or (slot NULL) a heap tuple read in place,
 * and gather its key values; past the budget everything goes to tuplesort.
 */
static pg_attribute_always_inline void
TakeRow(GpuSortState *st, RunInput *in, TupleTableSlot *slot, HeapTuple tuple, TupleDesc tupdesc)
{
	Datum	   *values = in->values + in->batched * st->nkeys;
	bool	   *isnull = in->isnull + in->batched * st->nkeys;

	if (st->nrows == st->capacity)
	{
		if (st->stream)
			Unstream(st, in->batched);
		GrowRows(st, in->budget_kb);
	}
	if (!st->keys_only)
		in->row_bytes += slot ? CopyRow(st, slot) : CopyHeapTuple(st, tuple);
	if (slot || !FixedKeys(st, tuple, values, isnull))
		for (int k = 0; k < st->nkeys; k++)
			values[k] = slot ? slot_getattr(slot, st->keyattno[k], &isnull[k])
				: heap_getattr(tuple, st->keyattno[k], tupdesc, &isnull[k]);
	st->nrows++;
	if (++in->batched == KEY_BATCH)
		in->batched = FlushKeys(st, in->values, in->isnull, in->batched);

	st->host_bytes = in->row_bytes + st->nrows * st->nwords * sizeof(uint64);
	if (unlikely(st->host_bytes > (size_t) in->budget_kb * 1024 || st->nrows >= PG_UINT32_MAX))
	{
		/* Keys-only rows are rebuilt from their keys: bring them back and build the batch's first */
		if (st->stream)
			Unstream(st, in->batched);
		if (in->batched > 0)
			in->batched = FlushKeys(st, in->values, in->isnull, in->batched);
		SpillToTuplesort(st, in->budget_kb,
						 psprintf("input passed the memory budget of %lld kB", (long long) in->budget_kb));
	}
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
		if (st->tuplesort)
		{
			ExecStoreBufferHeapTuple(tuple, child->ss_ScanTupleSlot, ((HeapScanDesc) scan)->rs_cbuf);
			tuplesort_puttupleslot(st->tuplesort, ProjectInput(st, child->ss_ScanTupleSlot));
			continue;
		}
		TakeRow(st, in, NULL, tuple, tupdesc);
	}
	ExecClearTuple(child->ss_ScanTupleSlot);
	table_endscan(scan);
	st->rows_sorted = nread;
	if (child->ps.instrument)
		InstrStopNode(child->ps.instrument, (double) nread);
}

/* Read the whole input and sort it: on the device when it can, else with tuplesort. */
static void
GpuSortRun(GpuSortState *st)
{
	PlanState  *child = outerPlanState(st);
	RunInput	in;
	instr_time	start;
	TupleTableSlot *slot;
	double		keys_ms = st->keys_ms;
	double		transfer_ms = st->transfer_ms;

	in.budget_kb = gpuext_sort_work_mem >= 0 ? gpuext_sort_work_mem : work_mem;
	in.values = palloc(sizeof(Datum) * KEY_BATCH * st->nkeys);
	in.isnull = palloc(sizeof(bool) * KEY_BATCH * st->nkeys);
	in.batched = 0;
	in.row_bytes = 0;
	INSTR_TIME_SET_CURRENT(start);
	st->rows_sorted = 0;
	st->dec_n = 0;
	st->arena_chunk = ARENA_CHUNK_FIRST;
	if (st->rowcxt == NULL)
		st->rowcxt = GenerationContextCreate(st->css.ss.ps.state->es_query_cxt, "GpuSort rows",
											 ALLOCSET_DEFAULT_SIZES);
	StartStream(st, in.budget_kb);

	if (st->direct)
		ReadHeapDirect(st, &in);
	else
	{
		for (;;)
		{
			slot = ExecProcNode(child);
			if (TupIsNull(slot))
				break;
			st->rows_sorted++;
			if (st->tuplesort)
				tuplesort_puttupleslot(st->tuplesort, ProjectInput(st, slot));
			else
				TakeRow(st, &in, slot, NULL, NULL);
		}
	}
	if (in.batched > 0)
		FlushKeys(st, in.values, in.isnull, in.batched);
	st->store_ms += ElapsedMs(start) - (st->keys_ms - keys_ms) - (st->transfer_ms - transfer_ms);

	if (st->stream && st->nrows < 2)
		Unstream(st, 0);
	if (st->stream)
		SortStreamed(st);
	else if (st->tuplesort == NULL && st->nrows > 1)
		SortRowsOrSpill(st, in.budget_kb);
	if (st->tuplesort)
	{
		INSTR_TIME_SET_CURRENT(start);
		tuplesort_performsort(st->tuplesort);
		st->sort_ms += ElapsedMs(start);
	}
	st->current = 0;
	st->eof = false;
	st->done = true;
	pfree(in.values);
	pfree(in.isnull);
}

/* Next row in the requested direction, with tuplesort's cursor semantics. */
static TupleTableSlot *
GpuSortExec(CustomScanState *node)
{
	GpuSortState *st = (GpuSortState *) node;
	TupleTableSlot *slot = node->ss.ss_ScanTupleSlot;
	bool		forward = ScanDirectionIsForward(node->ss.ps.state->es_direction);
	bool		timed;
	instr_time	start;

	if (st->sortstate)
		return ExecProcNode(st->sortstate);
	if (!st->done)
		GpuSortRun(st);
	if (st->tuplesort && st->keys_only)
	{
		ExecClearTuple(slot);
		if (tuplesort_gettupleslot(st->tuplesort, forward, false, st->minslot, NULL))
		{
			slot_getallattrs(st->minslot);
			memcpy(slot->tts_values, st->minslot->tts_values, sizeof(Datum) * st->natts);
			memcpy(slot->tts_isnull, st->minslot->tts_isnull, sizeof(bool) * st->natts);
			ExecStoreVirtualTuple(slot);
		}
		return slot;
	}
	if (st->tuplesort)
	{
		(void) tuplesort_gettupleslot(st->tuplesort, forward, false, slot, NULL);
		return slot;
	}

	/* Per-row clock reads only when EXPLAIN ANALYZE times nodes: they cost more than the row. */
	timed = node->ss.ps.instrument && node->ss.ps.instrument->need_timer;
	if (timed)
		INSTR_TIME_SET_CURRENT(start);
	if (forward)
	{
		if (st->current < st->nrows)
		{
			/* Tuples lie in input order in memory: fetch those about to be emitted early */
			if (!st->keys_only && st->current + EMIT_PREFETCH < st->nrows)
			{
				const char *ahead = (const char *) st->rows[st->current + EMIT_PREFETCH];

				__builtin_prefetch(ahead);
				__builtin_prefetch(ahead + 64);
			}
			StoreRow(st, slot, st->current++);
		}
		else
		{
			ExecClearTuple(slot);
			st->eof = true;
			EndStream(st);
		}
	}
	else
	{
		ExecClearTuple(slot);
		if (st->current > 0)
		{
			if (st->eof)
				st->eof = false;
			else
				st->current--;
			if (st->current > 0)
				StoreRow(st, slot, st->current - 1);
		}
	}
	if (timed)
		st->emit_ms += ElapsedMs(start);
	return slot;
}

/* Forget the sorted rows so that the next fetch reads the input again. */
static void
ForgetRun(GpuSortState *st)
{
	if (st->tuplesort)
		tuplesort_end(st->tuplesort);
	st->tuplesort = NULL;
	if (st->rowcxt)
		MemoryContextReset(st->rowcxt);
	st->rows = NULL;
	st->arena_next = st->arena_end = NULL;
	st->keys = NULL;
	st->pinned = st->dkeys = st->dsorted = NULL;
	st->stream = st->streamed = false;
	st->nrows = st->capacity = 0;
	st->fallback = NULL;
	st->host_bytes = st->device_bytes = 0;
	st->done = false;
}

/* Release the rows and shut the input down. */
static void
GpuSortEnd(CustomScanState *node)
{
	GpuSortState *st = (GpuSortState *) node;

	if (st->tuplesort)
		tuplesort_end(st->tuplesort);
	st->tuplesort = NULL;
	if (st->rowcxt)
		MemoryContextDelete(st->rowcxt);
	st->rowcxt = NULL;
	if (st->sortstate)
		ExecEndNode(st->sortstate);
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
	if (st->sortstate)
	{
		ExecReScan(st->sortstate);
		return;
	}
	if (!st->done)
		return;
	/* Streamed keys are let go as they are emitted: read the input again, as for a one-pass tuplesort */
	if (child->chgParam != NULL || (st->tuplesort && !st->random_access) || st->streamed)
	{
		ForgetRun(st);
		if (child->chgParam == NULL)
			ExecReScan(child);
	}
	else if (st->tuplesort)
		tuplesort_rescan(st->tuplesort);
	else
	{
		st->current = 0;
		st->eof = false;
	}
}

/* Remember the current position (for merge join). */
static void
GpuSortMarkPos(CustomScanState *node)
{
	GpuSortState *st = (GpuSortState *) node;

	if (st->sortstate)
		ExecMarkPos(st->sortstate);
	if (!st->done)
		return;
	if (st->tuplesort)
		tuplesort_markpos(st->tuplesort);
	st->mark_current = st->current;
	st->mark_eof = st->eof;
}

/* Go back to the remembered position. */
static void
GpuSortRestrPos(CustomScanState *node)
{
	GpuSortState *st = (GpuSortState *) node;

	if (st->sortstate)
		ExecRestrPos(st->sortstate);
	if (!st->done)
		return;
	if (st->tuplesort)
		tuplesort_restorepos(st->tuplesort);
	st->current = st->mark_current;
	st->eof = st->mark_eof;
	ExecClearTuple(node->ss.ss_ScanTupleSlot);
}

/* "Sort Key" as EXPLAIN prints it for Sort, with DESC and NULLS annotations. */
static void
ExplainSortKeys(GpuSortState *st, List *ancestors, ExplainState *es)
{
	Plan	   *plan = st->css.ss.ps.plan;
	List	   *context = set_deparse_context_plan(es->deparse_cxt, plan, ancestors);
	bool		useprefix = GpuextExplainRtableSize(es) > 1 || es->verbose;
	List	   *keys = NIL;

	for (int i = 0; i < st->nkeys; i++)
	{
		TargetEntry *tle = get_tle_by_resno(plan->targetlist, st->colidx[i]);
		StringInfoData buf;

		initStringInfo(&buf);
		appendStringInfoString(&buf, deparse_expression((Node *) tle->expr, context, useprefix, true));
		if (st->descending[i])
			appendStringInfoString(&buf, " DESC");
		if (st->nullsfirst[i] && !st->descending[i])
			appendStringInfoString(&buf, " NULLS FIRST");
		else if (!st->nullsfirst[i] && st->descending[i])
			appendStringInfoString(&buf, " NULLS LAST");
		keys = lappend(keys, buf.data);
	}
	ExplainPropertyList("Sort Key", keys, es);
}

/* EXPLAIN: the keys; with ANALYZE, where the sort ran, why, memory and time per stage. */
static void
GpuSortExplain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuSortState *st = (GpuSortState *) node;

	ExplainSortKeys(st, ancestors, es);
	if (st->bound >= 0)
		ExplainPropertyInteger("Bound", NULL, st->bound, es);
	if (!es->analyze)
		return;
	if (st->sortstate)
	{
		SortState  *ss = (SortState *) st->sortstate;
		TuplesortInstrumentation stats;

		if (!ss->sort_Done || ss->tuplesortstate == NULL)
			return;
		tuplesort_get_stats((Tuplesortstate *) ss->tuplesortstate, &stats);
		ExplainPropertyText("Sort Method",
							psprintf("PostgreSQL Sort, %s", tuplesort_method_name(stats.sortMethod)), es);
		ExplainPropertyText("CPU Fallback", st->fallback, es);
		ExplainPropertyInteger(stats.spaceType == SORT_SPACE_TYPE_DISK ? "Disk" : "Memory", "kB",
							   stats.spaceUsed, es);
		return;
	}
	if (!st->done)
		return;

	if (st->tuplesort)
	{
		TuplesortInstrumentation stats;

		tuplesort_get_stats(st->tuplesort, &stats);
		ExplainPropertyText("Sort Method",
							psprintf("CPU tuplesort, %s", tuplesort_method_name(stats.sortMethod)), es);
		ExplainPropertyText("CPU Fallback", st->fallback, es);
		ExplainPropertyInteger(stats.spaceType == SORT_SPACE_TYPE_DISK ? "Disk" : "Memory", "kB",
							   stats.spaceUsed, es);
	}
	else
	{
		ExplainPropertyText("Sort Method",
							psprintf("GPU radix on (key, row) pairs, %d key bit%s in %d word%s%s%s",
									 64 * (st->nwords - 1) + st->top_bits,
									 64 * (st->nwords - 1) + st->top_bits == 1 ? "" : "s",
									 st->nwords, st->nwords == 1 ? "" : "s",
									 st->keys_only ? ", rows rebuilt from keys" : "",
									 st->streamed ? ", keys streamed through pinned memory" : ""), es);
		ExplainPropertyInteger("Rows Sorted", NULL, (int64) st->rows_sorted, es);
		ExplainPropertyInteger("Host Memory", "kB",
							   (int64) ((st->streamed ? 2 * GPUEXT_STAGING_HALF_BYTES : st->host_bytes) + 1023) / 1024,
							   es);
		ExplainPropertyInteger("Device Memory", "kB", (int64) (st->device_bytes + 1023) / 1024, es);
	}
	if (st->direct)
		ExplainPropertyText("Input", "heap pages read in place", es);
	/* Phases are timed once each, so they show under TIMING OFF too; emitting is timed per row */
	ExplainPropertyFloat("Store Time", "ms", st->store_ms, 3, es);
	ExplainPropertyFloat("Key Time", "ms", st->keys_ms, 3, es);
	ExplainPropertyFloat("Transfer Time", "ms", st->transfer_ms, 3, es);
	ExplainPropertyFloat(st->tuplesort ? "CPU Sort Time" : "Device Sort Time", "ms", st->sort_ms, 3, es);
	if (es->timing)
		ExplainPropertyFloat("Emit Time", "ms", st->emit_ms, 3, es);
}
