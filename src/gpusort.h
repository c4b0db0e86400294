/*
 * gpusort.h
 *		Custom Scan (GpuSort): the node's state and what its stages share.
 *
 * The planner side (gpusort_plan.c) replaces Sort nodes of the finished plan;
 * the executor side is one file a stage:
 *
 *	gpusort_node.c		begin, exec, end, rescan, mark and restore
 *	gpusort_keys.c		the row keys: layout, build, decode
 *	gpusort_input.c		reading the input: heap pages in place, the row
 *						arena, the scan's projection
 *	gpusort_device.c	the device sort, and the keys streamed through
 *						pinned memory
 *	gpusort_devrows.c	rows past the host budget kept in device memory
 *	gpusort_fallback.c	PostgreSQL's Sort run inside, the tuplesort hand-off
 *	gpusort_explain.c	EXPLAIN, and the workers' figures under Gather
 *
 * custom_private of a GpuSort plan: sort column numbers (IntList), ordering
 * operators, collations (OidLists), NULLS FIRST flags (IntList), key base
 * types (OidList), DESC flags (IntList), and the LIMIT bound (Integer, -1 for
 * none or not yet known).  custom_exprs: empty, or the LIMIT's count and
 * offset, computed when the node starts (gpusort_plan.c says when).
 */
#ifndef GPUEXT_GPUSORT_H
#define GPUEXT_GPUSORT_H

#include "access/htup_details.h"
#include "access/parallel.h"
#include "common/int.h"
#include "commands/explain.h"
#include "executor/tuptable.h"
#include "nodes/execnodes.h"
#include "nodes/extensible.h"
#include "portability/instr_time.h"
#include "utils/tuplesort.h"

#include "gpuext.h"
#include "pg_compat.h"
#include "sort_keys.h"

/* GUC defaults, for the variables and their definitions in gpuext.c. */
#define GPUEXT_ENABLE_SORT_DEFAULT true
#define GPUEXT_SORT_MIN_ROWS_DEFAULT 20000
#define GPUEXT_SORT_WORK_MEM_DEFAULT (-1)
#define GPUEXT_SORT_ROWS_ON_DEVICE_DEFAULT true
#define GPUEXT_DEBUG_SORT_PIECE_SIZE_DEFAULT ((int) (GPUEXT_STAGING_HALF_BYTES / 1024))

extern bool gpuext_enable_sort;
extern int	gpuext_sort_min_rows;
extern int	gpuext_sort_work_mem;
extern bool gpuext_sort_rows_on_device;
extern int	gpuext_debug_sort_piece_size;

/* Rows whose key columns are read before their keys are built together. */
#define KEY_BATCH 256

/* LIMIT bounds up to this are served by tuplesort's top-N heap, which keeps only them. */
#define HEAP_BOUND_MAX 100000

/* Where one sort key lies in the row key, and how its values map to key bits and back. */
typedef struct KeyLayout
{
	const GpuextSortType *type;
	bool		raw;			/* keyed raw (-0 below +0: the last key), else -0 as +0 */
	int			bits;			/* of the value field */
	uint64		mask;			/* its low bits */
	uint64		invert;			/* mask for DESC, else 0 */
	uint64		null_flag;		/* the flag bit of a NULL: 1 when NULLs come last */
	int			flag_lo;		/* bit positions from the least significant bit of the key */
	int			value_lo;
	int			negzero_lo;		/* keys-only: the -0 bit of a tied float key, or -1 */
	Datum		negzero;		/* the -0 of that float type */
} KeyLayout;

/* The sort as the plan gives it. */
typedef struct GpuSortSpec
{
	int			nkeys;
	AttrNumber *colidx;
	Oid		   *sortops;
	Oid		   *collations;
	bool	   *nullsfirst;
	bool	   *descending;
	const GpuextSortType **types;
	int64		bound;
	bool		random_access;
} GpuSortSpec;

/*
 * The row key: bit positions counted from the least significant bit of the
 * whole key, and in keys-only mode the rows decoded from sorted keys.
 */
typedef struct GpuSortKeys
{
	int			nwords;
	int			top_bits;
	KeyLayout  *layout;			/* per key */
	int			nnegzero;		/* keys-only -0 bits, at the bottom of the key */
	bool		keys_only;		/* every output column is a key: rows are rebuilt from keys */
	int			natts;
	int		   *attkey;			/* keys-only: the key each output column is rebuilt from */
	Datum	   *dec_values;		/* keys-only: rows decoded a batch at a time from the sorted keys */
	bool	   *dec_isnull;
	size_t		dec_first;		/* the first of them */
	size_t		dec_n;			/* how many (0: none) */
} GpuSortKeys;

/* How the input is read. */
typedef struct GpuSortInput
{
	AttrNumber *input_attno;	/* keys-only over an unprojected scan: where each column lies in its tuple */
	AttrNumber *keyattno;		/* where each key lies in the input row */
	int		   *keyoff;			/* direct: each key's offset in a tuple without NULLs, or NULL if */
	int16	   *keylen;			/* some key follows a column of varying width; its length */
	AttrNumber	maxkeyatt;		/* ... and the last key column */
	bool		direct;			/* the input is read here from the child scan's heap pages */
	TupleTableSlot *projslot;	/* ... and the row as the scan would have projected it */
} GpuSortInput;

/*
 * Stored rows (tuple pointers, in sorted order once sorted; none in
 * keys-only mode) and keys (row-major; sorted once sorted in keys-only mode).
 */
typedef struct GpuSortStore
{
	MemoryContext rowcxt;
	MinimalTuple *rows;
	char	   *arena_next;
	char	   *arena_end;
	size_t		arena_chunk;	/* size of the next chunk */
	uint64	   *keys;
	size_t		nrows;
	size_t		capacity;
	size_t		current;
	bool		eof;
	size_t		mark_current;
	bool		mark_eof;
} GpuSortStore;

/*
 * Streamed keys (gpuext.device = gpu, forward-only keys-only sorts): built
 * into the halves of a pinned buffer of the node's own, each full half copied
 * to the device while the other fills; sorted there, and brought back a half
 * at a time as the rows are emitted.  No host copy is made.
 */
typedef struct GpuSortStream
{
	bool		active;			/* keys are being built into the halves now */
	bool		streamed;		/* this run's keys went to the device so */
	GpuextBuffer *pinned;
	GpuextBuffer *dkeys;		/* the keys on the device, room for capacity rows */
	GpuextBuffer *dsorted;		/* the sorted keys, then the order and the scratch */
	size_t		half_rows;		/* rows of keys in one half, a multiple of KEY_BATCH */
	size_t		shipped;		/* rows whose keys are on their way to the device */
	size_t		piece;			/* emitting: the piece of half_rows rows in its half, or SIZE_MAX */
} GpuSortStream;

/*
 * Rows kept in device memory (past the host budget, with a usable device):
 * rows (minimal tuples; none keys-only), their offsets and keys go up
 * through the two halves of a pinned buffer, a piece at a time, as they are
 * read; the device sorts the keys, and the rows come back in sorted order a
 * piece at a time as they are emitted (gpuext_gather_rows).  Every buffer
 * and array here belongs to cxt, which lives until the node ends or the
 * input is read again.
 */
typedef struct GpuSortDevRows
{
	MemoryContext cxt;			/* NULL: the rows are not on the device */
	bool		active;
	bool		sorted;			/* the first piece came back: no fallback from here on */
	GpuextBuffer *pinned;		/* two halves of half_bytes */
	size_t		half_bytes;
	size_t		half_rows;		/* rows whose keys and offsets a half holds while uploading */
	size_t		rows_area;		/* row bytes a half holds while uploading (0 keys-only) */
	/* uploading */
	int			fill;			/* the half being filled */
	size_t		piece_first;	/* its first row */
	size_t		piece_bytes;	/* its row bytes */
	size_t		shipped;		/* rows sent to the device */
	size_t		shipped_bytes;
	size_t		npieces;		/* pieces sent, and where each ends (recovery reads them back) */
	size_t		maxpieces;
	size_t	   *up_rows;
	size_t	   *up_bytes;
	GpuextBuffer *drows;
	GpuextBuffer *doffsets;
	GpuextBuffer *dkeys;
	/* sorted */
	GpuextBuffer *dsorted;		/* order | sorted keys (keys-only) | sort, then gather scratch | gather out */
	char	   *dorder;
	char	   *dsorted_keys;
	char	   *dscratch;
	size_t		scratch_bytes;
	char	   *dout;
	/* emitting: piece k holds rows [starts[k], starts[k + 1]) for k < nknown, after cum[k] row bytes */
	size_t	   *starts;
	uint64	   *cum;
	size_t		nknown;
	size_t		maxknown;
	size_t		loaded[2];		/* the piece in each half, or SIZE_MAX */
	bool		ready[2];		/* ... and its copy has been waited for */
	uint32	   *index[2];		/* row mode: each row's offset in the half */
	size_t		index_cap[2];
	size_t		last_piece;		/* the piece a row was last taken from, or SIZE_MAX */
	/* figures */
	size_t		host_peak;
	size_t		device_bytes;
	size_t		device_peak;
} GpuSortDevRows;

/* What reading the input carries from row to row. */
typedef struct RunInput
{
	int64		budget_kb;
	Datum	   *values;			/* key values of the rows batched for GpuSortBuildKeys */
	bool	   *isnull;
	int			batched;
	size_t		row_bytes;
} RunInput;

/* CPU paths: PostgreSQL's Sort node run inside, or a tuplesort taking over the stored rows. */
typedef struct GpuSortCpu
{
	PlanState  *sortstate;
	Tuplesortstate *tuplesort;
	TupleTableSlot *minslot;	/* keys-only rows as tuplesort returns them */
	const char *fallback;		/* why the CPU sorts (EXPLAIN ANALYZE says it) */
	bool		rows_lost;		/* auto: the device lost the rows it kept before any went out */
} GpuSortCpu;

/* What EXPLAIN ANALYZE reports of one run. */
typedef struct GpuSortStats
{
	size_t		host_bytes;
	size_t		device_bytes;
	double		store_ms;
	double		keys_ms;
	double		transfer_ms;
	double		sort_ms;
	double		rows_sorted;
} GpuSortStats;

/* One process's sort as EXPLAIN prints it: the leader's own, or a worker's from shared memory. */
typedef struct GpuSortWorkerInfo
{
	bool		filled;			/* the worker's sort ran */
	bool		on_device;
	bool		rows_on_device;	/* the rows were kept in device memory */
	TuplesortMethod method;		/* CPU: tuplesort's method */
	TuplesortSpaceType space_type;
	int64		space_kb;		/* host memory (or disk) */
	int64		device_kb;
	int64		pinned_kb;		/* rows on the device: the pinned halves they went through */
} GpuSortWorkerInfo;

/* The workers' figures under Gather, in the parallel query's shared memory. */
typedef struct GpuSortShared
{
	int			num_workers;
	GpuSortWorkerInfo info[FLEXIBLE_ARRAY_MEMBER];
} GpuSortShared;

typedef struct GpuSortState
{
	CustomScanState css;
	GpuSortSpec spec;
	GpuSortKeys key;
	GpuSortInput input;
	GpuSortStore store;
	GpuSortStream stream;
	GpuSortDevRows devrows;
	GpuSortCpu	cpu;
	GpuSortStats stats;
	bool		done;			/* the input is read and sorted */
	GpuSortShared *shared;		/* under Gather: the workers' figures (a worker writes its own) */
	GpuSortShared *workers;		/* the leader's copy of them, taken at shutdown */
} GpuSortState;

/* Milliseconds since start. */
static inline double
ElapsedMs(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MILLISEC(now);
}

/*
 * The rows a LIMIT's count and offset let a sort keep, or -1 for all, as
 * nodeLimit.c computes the bound it passes down: a NULL count is none, a
 * NULL offset 0; a negative value, which the Limit rejects, passes none.
 */
static inline int64
GpuSortLimitBound(Datum count, bool count_null, Datum offset, bool offset_null)
{
	int64		bound;

	if (count_null || DatumGetInt64(count) < 0)
		return -1;
	if (offset_null)
		return DatumGetInt64(count);
	if (DatumGetInt64(offset) < 0 ||
		pg_add_s64_overflow(DatumGetInt64(count), DatumGetInt64(offset), &bound))
		return -1;
	return bound;
}

/* gpusort_plan.c */
extern void GpuSortInit(void);

/* gpusort_node.c */
extern Node *GpuSortCreateState(CustomScan *cscan);

/* gpusort_keys.c */
extern void GpuSortLayoutKeys(GpuSortState *st, TupleDesc desc);
extern void GpuSortBuildKeys(GpuSortState *st, uint64 *keys, const Datum *values, const bool *isnull, int nrows);
extern void GpuSortDecodeBatch(GpuSortState *st, size_t first, size_t need);
extern void GpuSortDecodeKeys(GpuSortState *st, const uint64 *keys, size_t n);

/* gpusort_input.c */
extern Plan *GpuSortUnprojectedScan(GpuSortState *st, Plan *child, EState *estate);
extern TupleTableSlot *GpuSortProjectInput(GpuSortState *st, TupleTableSlot *slot);
extern void GpuSortDirectScanSetup(GpuSortState *st);
extern void *GpuSortAllocRows(GpuSortState *st, size_t bytes);
extern size_t GpuSortExpectedRows(GpuSortState *st, int64 budget_kb);
extern void GpuSortGrowRows(GpuSortState *st, int64 budget_kb);
extern void GpuSortRun(GpuSortState *st);

/* gpusort_device.c */
extern void GpuSortStartStream(GpuSortState *st, int64 budget_kb);
extern void GpuSortUnstream(GpuSortState *st, int batched);
extern int	GpuSortFlushKeys(GpuSortState *st, const Datum *values, const bool *isnull, int batched);
extern void GpuSortSortStreamed(GpuSortState *st);
extern void GpuSortEndStream(GpuSortState *st);
extern const uint64 *GpuSortSortedKey(GpuSortState *st, size_t i);
extern void GpuSortRowsOrSpill(GpuSortState *st, int64 budget_kb);

/* gpusort_devrows.c */
extern const char *GpuSortDevRowsStart(GpuSortState *st, RunInput *in);
extern bool GpuSortCanReread(GpuSortState *st);
extern char *GpuSortDevRowsPlace(GpuSortState *st, RunInput *in, size_t bytes);
extern uint64 *GpuSortDevRowsKeySlot(GpuSortState *st, size_t first);
extern void GpuSortDevRowsSort(GpuSortState *st, RunInput *in);
extern MinimalTuple GpuSortDevRowsTuple(GpuSortState *st, size_t i);
extern const uint64 *GpuSortDevRowsKeys(GpuSortState *st, size_t i, size_t *piece_first, size_t *piece_end);
extern void GpuSortDevRowsEnd(GpuSortState *st);

/* gpusort_fallback.c */
extern void GpuSortStartSortInside(GpuSortState *st, CustomScan *cscan, EState *estate, int eflags);
extern void GpuSortStartTuplesort(GpuSortState *st, int64 budget_kb);
extern void GpuSortSpill(GpuSortState *st, int64 budget_kb, const char *why);
extern TupleTableSlot *GpuSortTuplesortNext(GpuSortState *st, TupleTableSlot *slot, bool forward);

/* gpusort_explain.c */
extern void GpuSortExplain(CustomScanState *node, List *ancestors, ExplainState *es);
extern Size GpuSortEstimateDSM(CustomScanState *node, ParallelContext *pcxt);
extern void GpuSortInitializeDSM(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
extern void GpuSortInitializeWorker(CustomScanState *node, shm_toc *toc, void *coordinate);
extern void GpuSortShutdown(CustomScanState *node);
extern void GpuSortHideParallel(GpuSortState *st);

/*
 * Keys-only row i from the decoded batch, decoding the batch around it
 * (either direction) first.  Inline here: it runs once per emitted row.
 */
static pg_attribute_always_inline void
StoreDecodedRow(GpuSortState *st, TupleTableSlot *slot, size_t i)
{
	const Datum *values;
	const bool *isnull;

	if (i < st->key.dec_first || i >= st->key.dec_first + st->key.dec_n)
		GpuSortDecodeBatch(st, i >= st->key.dec_first + st->key.dec_n ? i : (i + 1 >= KEY_BATCH ? i + 1 - KEY_BATCH : 0), i);
	values = st->key.dec_values + (i - st->key.dec_first) * st->key.natts;
	isnull = st->key.dec_isnull + (i - st->key.dec_first) * st->key.natts;
	ExecClearTuple(slot);
	for (int a = 0; a < st->key.natts; a++)
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
	if (st->key.keys_only)
		StoreDecodedRow(st, slot, i);
	else if (st->devrows.active)
		ExecStoreMinimalTuple(GpuSortDevRowsTuple(st, i), slot, false);
	else
		ExecStoreMinimalTuple(st->store.rows[i], slot, false);
}

#endif							/* GPUEXT_GPUSORT_H */
