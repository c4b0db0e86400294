/*
 * gpuagg.h
 *		Custom Scan (GpuAgg): aggregates over one heap table, with or without
 *		GROUP BY: without, reduced through the exact accumulators
 *		(agg_accum.h); with, into per-group states on the device
 *		(gpuext_groups_* of gpuext_cuda.h) or, without one, in host memory.
 *
 *	gpuagg_plan.c		the upper-paths hook, the path and its plan
 *	gpuagg_cost.c		the path's cost
 *	gpuagg_exec.c		the node's state, its runs, the result rows
 *	gpuagg_rows.c		the table's rows read, the batches, the device reduction
 *	gpuagg_pages.c		the table's pages and their visible rows (all-visible ones straight from its files)
 *	gpuagg_columns.c	a page's rows added column by column where the inputs are plain columns or
 *						compiled double precision arithmetic
 *	gpuagg_inplace_setup.c	which rows are read in place
 *	gpuagg_inplace.c	... the float arguments compiled for them
 *	gpuagg_conditions.c	the WHERE clause and FILTERs compiled for them and for the device scan
 *	gpuagg_keys.c		the GROUP BY keys: evaluated per row, numbered (a group each)
 *	gpuagg_group.c		the groups' per-input states and results
 *	gpuagg_spill.c		groups past hash_mem: their rows spilled to partitions, each aggregated in turn
 *	gpuagg_devscan.c	the device scan: pages to the device, decoded, filtered and reduced there
 *	gpuagg_devprogram.c	... its program: the columns it reads, its conditions, arithmetic and outputs
 *	gpuagg_devgroups.c	... under GROUP BY: the device's table of keys numbered as the node's groups
 *	gpuagg_devkeys.c	... which keys it groups, and how (for the planner too)
 *	gpuagg_parallel.c	parallel workers: their share of the table, merged by the leader
 *	gpuagg_numeric.c	numeric inputs: int64 at the scale of numeric(p <= 18, s), else exact CPU accumulators;
 *						numeric arguments compiled
 *	gpuagg_explain.c	EXPLAIN
 *
 * custom_scan_tlist of a GpuAgg plan: the aggregates (Aggrefs, one entry
 * each, first), then the GROUP BY keys (expressions over the table's
 * columns), then every other column of the table the WHERE clause, the
 * arguments and the FILTERs read (Vars).  The plan's targetlist and its
 * qual (HAVING) refer to the aggregates and keys as INDEX_VAR Vars, so
 * expressions over them are projected as usual.  custom_exprs: the WHERE
 * clause (implicit AND), the inputs' arguments, the inputs' FILTERs (a true
 * Const where there is none).  custom_private: per aggregate its kind
 * (IntList of GpuextAggKind) and its input (IntList, -1 for count(*) without
 * FILTER); per input the type of its values (OidList, InvalidOid where only
 * non-NULL values are counted); per key its equality operator (OidList);
 * the parallel workers to launch (Integer, 0 for none); the groups the
 * planner estimated, before HAVING (Float).
 *
 * An input is one distinct (argument, FILTER) pair: sum(a), avg(a), min(a)
 * and max(a) share one accumulator.
 */
#ifndef GPUEXT_GPUAGG_H
#define GPUEXT_GPUAGG_H

#include "access/htup_details.h"
#include "access/parallel.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "executor/executor.h"
#include "commands/explain.h"
#include "nodes/execnodes.h"
#include "nodes/extensible.h"
#include "portability/instr_time.h"

#include "agg_accum.h"
#include "gpuext.h"
#include "pg_compat.h"

/* GUC defaults, for the variables and their definitions in gpuext.c. */
#define GPUEXT_ENABLE_AGG_DEFAULT true
#define GPUEXT_AGG_MIN_ROWS_DEFAULT 20000
#define GPUEXT_READ_TABLE_FILES_DEFAULT true
#define GPUEXT_ENABLE_DEVICE_SCAN_DEFAULT true
#define GPUEXT_DEVICE_SCAN_IN_PLACE_DEFAULT true
#define GPUEXT_DEVICE_SCAN_WHOLE_PAGES_DEFAULT true

extern bool gpuext_enable_agg;
extern bool gpuext_debug_agg_without_gain;
extern int	gpuext_agg_min_rows;
extern bool gpuext_read_table_files;
extern bool gpuext_enable_device_scan;
extern bool gpuext_device_scan_in_place;
extern bool gpuext_device_scan_whole_pages;

/* The arithmetic compiled in double precision, numeric and integer arguments (gpuagg_inplace.c, gpuagg_fixedexpr.c). */
typedef enum GpuAggRowOp
{
	ROWOP_ADD,
	ROWOP_SUB,
	ROWOP_MUL,
	ROWOP_DIV,
	ROWOP_NEG,
	ROWOP_SEL,					/* a CASE WHEN's branch */
	ROWOP_MOD,					/* integers only */
	ROWOP_TO_REAL				/* double precision to real (dtof), real steps only */
} GpuAggRowOp;

/* Conditions and double precision and numeric arguments compiled for rows read in place (gpuagg_inplace.c). */
typedef struct GpuAggRowQual GpuAggRowQual;
typedef struct GpuAggRowExpr GpuAggRowExpr;
typedef struct GpuAggNumExpr GpuAggNumExpr;

/* Numeric columns of the row being read in place, each decoded once per row at a scale. */
typedef struct GpuAggNumMemo
{
	uint64		row;			/* the row being read, counted from 1 */
	uint64	   *rows;			/* per column: the row its entry is of */
	int		   *scales;
	int		   *status;			/* GpuextNumericToFixed's result */
	int128	   *values;
} GpuAggNumMemo;

/* A numeric column of the row being read in place as an integer at scale (GpuextNumericToFixed's result). */
static inline int
GpuAggNumericColumn(GpuAggNumMemo *m, const char *tp, const int *att_off, AttrNumber att, int scale, int128 *out)
{
	int			a = att - 1;

	if (m->rows[a] != m->row || m->scales[a] != scale)
	{
		m->status[a] = GpuextNumericToFixed(PointerGetDatum(tp + att_off[a]), scale, &m->values[a]);
		m->rows[a] = m->row;
		m->scales[a] = scale;
	}
	*out = m->values[a];
	return m->status[a];
}

/* One input: the values of one argument under one FILTER, and where they go. */
typedef struct GpuAggInput
{
	ExprState  *arg;			/* NULL when the argument is a plain column */
	AttrNumber	argatt;			/* ... that column of the table */
	int16		fixed_len;		/* ... its width, when st->rows.fixed */
	GpuAggRowExpr *rowarg;		/* the argument compiled: its own program (with FILTER), or NULL */
	int			rowreg;			/* ... the register of its value there, or in st->rows.rowargs; -1 for none */
	GpuAggNumExpr *numarg;		/* ... a numeric argument compiled, or NULL */
	bool		fixed_byval;	/* a plain column's values are by value (else numeric) */
	int128		numval;			/* numarg's value for the row being read, */
	bool		numnull;		/* ... or NULL */
	ExprState  *filter;			/* NULL without FILTER */
	GpuAggRowQual *rowfilter;	/* the FILTER compiled, or NULL */
	const GpuextSortType *type; /* NULL: only non-NULL values are counted */
	int			numeric_scale;	/* >= 0: numerics reduced as bigint at this scale (type is bigint's), NaNs counted */
	int64		count;			/* ... here; NaNs of a numeric at numeric_scale */
	GpuextAccum *acc;
	bool		batching;		/* values gather in batches for the device, else go to acc */
	char	   *batch;			/* host memory, or the reducer's pinned host batch */
	size_t		nbatch;
	size_t		capacity;
	GpuextReducer *reducer;
	struct GpuAggSink *sink;	/* GROUP BY: the per-group states */
	int64	   *group_counts;	/* GROUP BY, type NULL: the count per group; numeric_scale >= 0: NaNs */
	GpuextAccum *group_accs;	/* GROUP BY, numeric: the accumulator per group */
	int			dev_scale;		/* numeric accumulated, the device scan's: its values bigints at this scale, else -1 */
} GpuAggInput;

/* Planned bytes per group of a numeric input: its accumulator, its min and max copies. */
#define GPUAGG_NUMERIC_GROUP_BYTES (sizeof(GpuextAccum) + 96)

/* Whether an input's values are numerics added on the CPU into exact accumulators (no numeric_scale). */
static inline bool
GpuAggInputIsNumeric(const GpuAggInput *in)
{
	return in->type != NULL && in->type->typid == NUMERICOID;
}

/* Whether an input's device values are floats (reduced as such, their states exact sums). */
static inline bool
GpuAggInputIsFloat(const GpuAggInput *in)
{
	return in->dev_scale < 0 && (in->type->typid == FLOAT4OID || in->type->typid == FLOAT8OID);
}

/* Whether an input's values are its integer argument's (smallint, integer, bigint), reduced as that type. */
static inline bool
GpuAggInputIsInteger(const GpuAggInput *in, Oid argtype)
{
	return in->type != NULL && in->type->typid == argtype &&
		(in->type->typid == INT2OID || in->type->typid == INT4OID || in->type->typid == INT8OID);
}

/* Blocks a process takes at a time from the table (one read of its file), alone or in a parallel scan. */
#define GPUAGG_CHUNK_BLOCKS 64

/* A reader of a heap table's pages (gpuagg_pages.c). */
typedef struct GpuAggPages
{
	Relation	rel;
	Snapshot	snapshot;
	BufferAccessStrategy strategy;
	ParallelBlockTableScanDesc pbscan;	/* the parallel scan shared, or NULL */
	BlockNumber nblocks;
	uint64		next;			/* alone: the next chunk's first block */
	bool		check_serializable;
	bool		files;			/* all-visible pages may be read from the table's files */
	int			fd;				/* the open segment file, or -1 */
	BlockNumber segno;
	char	   *chunk;			/* the chunk's pages read from the file */
	bool		from_file[GPUAGG_CHUNK_BLOCKS]; /* ... which of them were (not in shared buffers) */
	Buffer		recent[GPUAGG_CHUNK_BLOCKS];	/* ... the buffer that held each other block, or InvalidBuffer */
	Buffer	   *hints;			/* per block, the buffer that last held it (BufferHints), or NULL ... */
	BlockNumber hints_n;		/* ... for the first hints_n blocks */
	BlockNumber chunk_start;
	int			chunk_n;
	int			chunk_next;
	Buffer		buf;			/* the page read through shared buffers, pinned */
	Buffer		vmbuf;			/* the visibility map's page last looked at, pinned */
	char	   *copy_to;		/* where set, each page is copied here as read (under its content lock) ... */
	bool		all_visible;	/* ... and whether all its normal items are visible (then offsets are not found) */
	bool		in_place_ok;	/* ... or, where set, only its header and line pointers, the buffer kept pinned */
	Buffer		in_place;		/* the page's buffer where so (the caller releases it), else InvalidBuffer */
	bool		whole_ok;		/* an all-visible page read in place may be left whole to the device ... */
	bool		whole;			/* ... and this one is: nothing copied, no offsets (GpuAggPagesStillVisible) */
	/* the current page */
	Page		page;
	BlockNumber blkno;
	int			ntuples;
	OffsetNumber offsets[MaxHeapTuplesPerPage];
	int64		pages_from_files;
	int64		pages_from_buffers;
	int64		pages_in_place;	/* ... of which the device read in place */
	int64		pages_hinted;	/* ... in the buffer the last scan found them in (no lookup) */
	int64		pages_whole;	/* ... of which the CPU did not read (all-visible in the visibility map) */
} GpuAggPages;

extern void GpuAggPagesBegin(GpuAggPages *pg, TableScanDesc scan);
extern bool GpuAggPagesNext(GpuAggPages *pg);
extern void GpuAggPagesEnd(GpuAggPages *pg);
extern bool GpuAggPagesStillVisible(GpuAggPages *pg, Buffer buf, BlockNumber blkno);
extern int	GpuAggPagesVisibleRows(GpuAggPages *pg, Buffer buf, BlockNumber blkno, bool all_visible,
								   OffsetNumber *offsets);
extern BlockNumber GpuAggPagesHintsFit(Relation rel, BlockNumber nblocks);
extern void GpuAggPagesShareHints(GpuAggPages *pg, Buffer *hints, BlockNumber n);
extern void GpuAggPagesHintsCopy(Relation rel, Buffer *hints, BlockNumber n, bool keep);

/* What EXPLAIN ANALYZE reports, summed over the node's runs. */
typedef struct GpuAggStats
{
	int64		runs;
	int64		rows_read;
	int64		rows_passed;
	int64		rows_in_place;	/* rows read from their bytes in the page, not through a slot */
	int64		pages_from_files;	/* heap pages read from the table's files */
	int64		pages_from_buffers; /* ... through shared buffers */
	int64		pages_in_place;	/* ... of which the device read in place */
	int64		pages_whole;	/* ... of which taken whole, not read by the CPU */
	int64		pages_hinted;	/* ... in the buffer the last scan found them in (no lookup) */
	int64		device_batches;
	int64		cpu_batches;
	int64		groups;			/* GROUP BY: groups formed */
	uint32		grown_slots;	/* ... the device's table of numbered groups grown to this many slots, else 0 */
	int64		grown_after;	/* ... after its first run had numbered this many blocks */
	int64		having_rejected;	/* ... rejected by HAVING's tests before their rows were made */
	int64		rows_spilled;	/* rows written to spill partitions (gpuagg_spill.c) */
	int64		spill_partitions;
	int64		workers_launched;
	double		total_ms;
	double		device_ms;		/* in device calls: transfers, and waits for reductions */
	const char *fallback;		/* why some values were reduced on the CPU */
	int64		device_blocks;	/* the device scan: blocks sent, */
	int64		device_tuples;	/* ... tuples decoded on the device */
	int64		device_cpu_tuples;	/* ... and tuples of its batches read on the CPU instead */
} GpuAggStats;

/* Reading the table's rows: the WHERE clause, and rows read in place (gpuagg_inplace_setup.c, gpuagg_columns.c). */
typedef struct GpuAggRows
{
	ExprState  *qual;
	GpuAggRowQual *rowqual;		/* the WHERE clause compiled, or NULL */
	bool		numargs;		/* some input has a compiled numeric argument */
	GpuAggRowExpr *rowargs;		/* the compiled arguments of the inputs without FILTER, or NULL */
	int			nvars;			/* table columns copied into the scan tuple, after the aggregates */
	AttrNumber *var_att;
	AttrNumber	maxatt;			/* the last column read */
	bool		need_scan_tuple;	/* some expression reads the scan tuple */
	bool		qual_reads_keys;	/* ... the WHERE clause a key: keys computed before it */
	bool		fixed;			/* heap tuples without NULLs are read in place, column by offset */
	bool		columns;		/* ... and a page's rows added column by column (gpuagg_columns.c) */
	const char **colptrs;		/* ... per input, where each of a page's rows has its value */
	const char ***plain_dst;	/* ... the colptrs of the inputs of plain columns, */
	int		   *plain_att;		/* ... their columns (from 0), */
	int		   *plain_off;		/* ... the columns' offsets in the row at hand, */
	int			nplain;			/* ... and how many */
	float8	   *rowcols;		/* ... rowargs' registers for a page's rows, or NULL */
	GpuAggNumMemo *nummemo;		/* ... rows' numeric columns, decoded once a row */
	Datum	   *colkeys;		/* ... per key, each of a page's rows' value */
	int		   *att_off;		/* per column up to maxatt: its offset in such a tuple */
	AttrNumber	walk_from;		/* ... from this column on, found per row past one of varying width */
	int			walk_start;		/* ... starting here */
	int16	   *att_len;
	char	   *att_align;
	TupleTableSlot *heapslot;	/* a row of the table, through its access method */
	TupleTableSlot *tupslot;	/* a heap table's row read in place, its page pinned by the scan */
} GpuAggRows;

/* GROUP BY: the keys, their groups and the groups' states (gpuagg_keys.c, gpuagg_group.c, gpuagg_spill.c). */
typedef struct GpuAggGroups
{
	int			nkeys;			/* 0 without GROUP BY */
	ExprState **key_exprs;		/* per key, over the table's columns; NULL for a plain column */
	AttrNumber *key_att;		/* ... that column */
	int16	   *key_len;		/* ... its length (-1: varlena), when fixed */
	bool	   *key_byval;
	TupleTableSlot *keyslot;	/* one row's keys, looked up in the hash table */
	TupleTableSlot *groupslot;	/* a group's keys, read back from its entry */
	TupleHashTable hashtable;
	struct GpuAggKeyImages *images;	/* keys equal as bytes: their own table, else NULL */
	struct GpuAggDirect *direct;	/* one such key of fixed width: its direct map, else NULL */
	MemoryContext hashcxt;		/* the hash table's entries */
	MinimalTuple *group_keys;	/* per group number, its keys in the hash table (entries move, these do not) */
	int64	   *group_rows;		/* per group, rows passed (count(*)) */
	uint32		ngroups;
	uint32		groups_cap;		/* group_keys, group_rows and counts have room for this many */
	uint32		next_group;		/* the next group to return */
	uint32		max_groups;		/* groups a run keeps in hash_mem; past them, new keys spill */
	double		estimate;		/* the planner's groups (the plan's rows are those HAVING passes) */
	double		regrow;			/* the groups a run again with a larger device table expects, else 0 */
	bool		grown;			/* estimate is such a run's (its buffers may be short: the CPU reads) */
	struct GpuAggSpill *spill;	/* spilling, where the node's keys and values allow it, else NULL */
	bool		use_device;		/* this run's grouped values go to the device */
	bool		numbered;		/* ... and the device numbers its groups (gpuagg_devgroups_out.c) */
	struct GpuAggHavingTest *having;	/* HAVING's tests on a group's raw results (gpuagg_having.c) */
	int			nhaving;
	bool		having_rows_check;	/* ... which pass over no group of 2^32 rows or more */
} GpuAggGroups;

/* Parallel runs (gpuagg_parallel.c). */
typedef struct GpuAggWorkers
{
	int			nworkers;		/* planned; 0: the node reads the table alone */
	ParallelContext *pcxt;		/* the leader's, during a run with workers */
	shm_mq_handle **queues;		/* ... per worker, where its results come */
	ParallelTableScanDesc pscan;	/* the scan this process shares, or NULL */
	Buffer	   *hints;			/* ... the buffer hints it shares (in the DSM), or NULL ... */
	BlockNumber hints_n;		/* ... for the first hints_n blocks */
	bool		leader_scans;	/* the leader reads blocks too */
} GpuAggWorkers;

/* The event slot marking the end of the device scan's work (0 to 2 are the staging halves' and the reducers'). */
#define GPUAGG_DEVSCAN_EVENT 3

/* One batch of pages on the host: filled by the CPU while the device works on the other. */
typedef struct GpuAggDevBatch
{
	GpuextBuffer *host;			/* pinned: batch_pages pages (or headers), their visible items, their buffers */
	BlockNumber *blknos;		/* each page's block */
	Buffer	   *pins;			/* each page's buffer kept pinned for the device to read in place, or InvalidBuffer */
	uint32		npages;
	uint32		npins;
	uint32		nwhole;			/* ... of which the device reads whole (GPUEXT_SCAN_WHOLE) */
} GpuAggDevBatch;

/* The filling of the next batch, done while the device works on the current one (at its first wait). */
typedef struct GpuAggDevFill GpuAggDevFill;

/* The device scan's buffers, kept for the node's runs (gpuagg_devscan.c; GROUP BY, gpuagg_devgroups.c). */
typedef struct GpuAggDevScan
{
	GpuextBuffer *prog;			/* pinned: the program, then a GROUP BY's keys pass (the GPU service reads them from its arena) */
	GpuAggDevBatch batches[2];
	GpuAggDevBatch *b;			/* the batch on the device */
	GpuAggDevFill *fill;		/* where set, the next batch to fill at the current one's first wait */
	GpuextBuffer *back;			/* pinned: the counters, then two slots of a reduction result per output */
	GpuextBuffer *device;		/* pages, items, counters, outputs, reduction scratch */
	uint32		batch_pages;
	size_t		vis_off;
	size_t		counts_off;
	size_t		outs_off;
	size_t		outs_bytes;
	size_t		scratch_off;
	size_t		scratch_bytes;
	/* pages the device reads in place from shared buffers (the host batch holds their headers) */
	bool		in_place;		/* the device layer reads shared buffers */
	uint32		max_in_place;	/* buffers a batch may keep pinned */
	size_t		refs_off;		/* host: each page's buffer index (GPUEXT_SCAN_WHOLE), or GPUEXT_SCAN_COPIED */
	GpuAggPages *pages;			/* the run's pages, for the CPU's reading of pages taken whole */
	bool		bad;			/* the batch has a tuple the device could not decode */
	/* without GROUP BY: the batch before's reductions, enqueued and read at the next wait */
	uint32		pending_outs;	/* bit o: output o's reduction is in slot pending_slot */
	int			pending_slot;
	bool		pending_done;	/* ... and a wait since has passed it */
	int			slot;			/* the slot of results the next reductions write */
	uint32		tried;			/* this run's batches sent to the device, */
	uint32		refused;		/* ... and of them those the CPU read again */
	/* GROUP BY */
	GpuextBuffer *gback;		/* pinned: the new key images, the per-group counts, the slots' group numbers */
	bool		first;			/* the run's first batch: its keys pass empties the table */
	bool		groups_off;		/* the device's groups stopped (spill, a full table): the rest on the CPU */
	uint32		map_lo;			/* slots whose group numbers changed since the last upload */
	uint32		map_hi;
	/* groups numbered on the device: blocks numbered, and at a point early in the run blocks and groups */
	uint64		num_blocks;
	uint64		probe_blocks;
	uint32		probe_groups;	/* 0: no point yet */
	bool		probed;			/* the run's early projection was made */
	/* ... those read back (their key images and counts in gback) */
	uint32		chunk_lo;
	uint32		chunk_n;
	GpuextGroupResult *chunk_results;	/* input i's results at [i * GPUAGG_DEVGROUPS_CHUNK] */
} GpuAggDevScan;

/* The device scan (gpuagg_devprogram.c, gpuagg_devscan.c). */
typedef struct GpuAggDevice
{
	GpuextScanProgram *program; /* where the node's scan can run on the device, else NULL */
	GpuAggDevScan *buffers;		/* made on the first run that uses it */
	TupleTableSlot *key_row;	/* a row of the table holding one value, for keys computed from it */
} GpuAggDevice;

/* The node: its aggregates and inputs, a run's state, and each stage's own. */
typedef struct GpuAggState
{
	CustomScanState css;
	int			naggs;
	GpuextAggKind *kinds;
	int		   *agg_input;		/* per aggregate, -1: count(*) */
	int			ninputs;
	GpuAggInput *inputs;
	MemoryContext nodecxt;		/* the inputs' batches and reducers, kept across rescans */
	MemoryContext runcxt;		/* one run's result */
	bool		done;			/* this run's result is made */
	bool		rewindable;		/* ... and all of it is in memory, to be returned again by a rescan */
	Bitmapset  *run_params;		/* ... unless one of these parameters (of WHERE, arguments, FILTERs, keys) changed */
	bool		emitted;		/* without GROUP BY: its one row was returned */
	bool		timing;
	bool		device_lost;	/* the device failed (auto): the run restarts on the CPU */
	bool		run_device;		/* this run may use the device (GpuAggStartInputs) */
	GpuAggStats stats;
	GpuAggRows	rows;
	GpuAggGroups groups;
	GpuAggWorkers workers;
	GpuAggDevice dev;
} GpuAggState;

/* Milliseconds since start. */
static inline double
GpuAggElapsedMs(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MILLISEC(now);
}

/* A table column's value as double precision, read in place. */
static inline float8
GpuAggColumnFloat8(const char *tp, const int *att_off, AttrNumber att, Oid type)
{
	const char *p = tp + att_off[att - 1];

	switch (type)
	{
		case FLOAT8OID:
			return DatumGetFloat8(fetch_att(p, true, 8));
		case FLOAT4OID:
			return (float8) DatumGetFloat4(fetch_att(p, true, 4));
		case INT8OID:
			return (float8) DatumGetInt64(fetch_att(p, true, 8));
		case INT4OID:
			return (float8) DatumGetInt32(fetch_att(p, true, 4));
		case NUMERICOID:
			return GpuextNumericToFloat8(PointerGetDatum(p));
		default:
			return (float8) DatumGetInt16(fetch_att(p, true, 2));
	}
}

/* The offsets of a row's columns past the first of varying width, as slot_deform_heap_tuple finds them. */
static pg_attribute_always_inline void
GpuAggWalkOffsets(GpuAggState *st, const char *tp)
{
	uint32		off = st->rows.walk_start;

	for (int a = st->rows.walk_from; a < st->rows.maxatt; a++)
	{
		int16		len = st->rows.att_len[a];

		if (len > 0)
			off = att_align_nominal(off, st->rows.att_align[a]);
		else
			off = att_align_pointer(off, st->rows.att_align[a], len, tp + off);
		st->rows.att_off[a] = off;
		off = att_addlength_pointer(off, len, tp + off);
	}
}

/* gpuagg_plan.c */
extern void GpuAggInit(void);

/* gpuagg_cost.c */
extern bool GpuAggNumericOnCpu(Node *arg);
extern void GpuAggCostPath(PlannerInfo *root, RelOptInfo *baserel, List *aggrefs, List *keys, List *having,
						   double groups, PathTarget *target, int workers, bool devscan, Path *path);
extern void GpuAggCostSpill(RelOptInfo *baserel, List *keys, List *aggrefs, double fits, Path *path);

/* gpuagg_exec.c */
extern Node *GpuAggCreateState(CustomScan *cscan);
extern AttrNumber GpuAggScanColumn(CustomScan *cscan, Expr *expr);
extern void GpuAggWorkerScan(GpuAggState *st);
extern void GpuAggNoteFallback(GpuAggState *st, const char *why);

/* gpuagg_rows.c */
extern void GpuAggTakeHeapRow(GpuAggState *st, HeapTuple tuple);
extern void GpuAggInputGrow(GpuAggState *st, GpuAggInput *in);
extern bool GpuAggStartInputs(GpuAggState *st, bool may_use_device);
extern void GpuAggInputFinish(GpuAggState *st, GpuAggInput *in);
extern void GpuAggScanTable(GpuAggState *st);

/* gpuagg_columns.c */
extern bool GpuAggColumnsEligible(GpuAggState *st);
extern bool GpuAggTakePageColumns(GpuAggState *st, GpuAggPages *pg);
extern void GpuAggGatherColumn(char *dst, const char *const *ptrs, int m, int bytes);

/* Groups the per-group arrays start with; they double. */
#define GPUAGG_GROUPS_START 1024

/* The group number of keys that find no room in hash_mem: their row is spilled (gpuagg_spill.c). */
#define GPUAGG_SPILL PG_UINT32_MAX

/* A spilled row's NaN of a fixed-scale numeric input: below every value at its scale (precision <= 18). */
#define GPUAGG_SPILL_NAN PG_INT64_MIN

/* gpuagg_keys.c */
extern void GpuAggGroupsBegin(GpuAggState *st, CustomScan *cscan);
extern void GpuAggKeysEval(GpuAggState *st, TupleTableSlot *heapslot, ExprContext *econtext);
extern uint32 GpuAggGroupLookup(GpuAggState *st);
extern void GpuAggGroupLookupKeys(GpuAggState *st, const Datum *keys, uint32 *groups, int n);
extern void GpuAggKeysReset(GpuAggState *st);
extern int16 GpuAggByteEqualType(Oid type, int32 typmod);
extern int16 GpuAggByteEqualKey(Oid type, int32 typmod, Oid eqop, Oid collation);
extern void GpuAggGroupsEnd(GpuAggState *st);

/* gpuagg_group.c */
extern void GpuAggGroupsStart(GpuAggState *st, bool device);
extern void GpuAggGroupAdd(GpuAggState *st, GpuAggInput *in, uint32 group, Datum value);
extern void GpuAggGroupAddColumn(GpuAggState *st, GpuAggInput *in, const uint32 *groups, const char *const *ptrs,
								 int n);
extern void GpuAggGroupsFinish(GpuAggState *st);
extern void GpuAggGroupsToHost(GpuAggState *st);
extern bool GpuAggGroupNext(GpuAggState *st);
extern void GpuAggGroupsSettle(GpuAggState *st);
extern const GpuextGroupState *GpuAggGroupState(GpuAggInput *in, uint32 group, size_t *bytes);
extern size_t GpuAggGroupMerge(GpuAggState *st, GpuAggInput *in, uint32 group, const GpuextGroupState *src);
extern void GpuAggGroupAddDevice(GpuAggState *st, GpuAggInput *in, const char *values, const uint32 *groups, size_t n);
extern void GpuAggGroupsDeviceLost(GpuAggState *st, GpuextDeviceOutcome outcome);
extern GpuextDeviceOutcome GpuAggGroupResults(GpuAggState *st, GpuAggInput *in, uint32 first, uint32 n,
											  GpuextGroupResult *results);

/* gpuagg_spill.c */
extern void GpuAggSpillBegin(GpuAggState *st);
extern uint32 GpuAggSpillBudget(GpuAggState *st);
extern void GpuAggSpillWrite(GpuAggState *st, const Datum *keys, uint64 flags, const Datum *values);
extern void GpuAggSpillProduced(GpuAggState *st);
extern void GpuAggSpillDiscard(GpuAggState *st);
extern bool GpuAggSpillNext(GpuAggState *st);
extern void GpuAggSpillEnd(GpuAggState *st);

/* gpuagg_parallel.c */
extern void GpuAggParallelStart(GpuAggState *st);
extern void GpuAggParallelFinish(GpuAggState *st);
extern PGDLLEXPORT void GpuAggWorkerMain(dsm_segment *seg, shm_toc *toc);

/* gpuagg_numeric.c */
extern int	GpuAggTypmodScale(int32 typmod, int *precision);
extern int	GpuAggNumericScale(Node *arg);
extern bool GpuAggNumericToInt64(GpuAggInput *in, Datum *value, int64 *nans);
extern bool GpuAggFixedToInt64(GpuAggInput *in, int status, int128 v, Datum *value, int64 *nans);
extern GpuAggNumMemo *GpuAggNumMemoCreate(int natts);
extern Datum GpuAggNumericAccumResult(GpuAggInput *in, GpuextAggKind kind, bool *isnull);
extern Datum GpuAggNumericSpillValue(GpuAggInput *in, Datum value);
extern Datum GpuAggNumericGroupResult(GpuAggInput *in, const GpuextGroupResult *r, int64 nans, GpuextAggKind kind,
									  bool *isnull);
extern void GpuAggAccsStart(GpuAggState *st, GpuAggInput *in);
extern void GpuAggAccsGrow(GpuAggInput *in, uint32 cap);
extern void GpuAggAccNew(GpuAggState *st, GpuAggInput *in, uint32 group);
extern bool GpuAggDevScanRefused(GpuAggState *st, GpuAggDevScan *ds, bool refused);
extern void GpuAggDevScanMergeNumeric(GpuAggInput *in, GpuextAccum *acc, uint64 count, uint64 sum_lo, int64 sum_hi,
									  uint64 min_key, uint64 max_key);

/* gpuagg_fixedexpr.c */
extern GpuAggNumExpr *GpuAggCompileNumExpr(CustomScan *cscan, Expr *expr);
extern int	GpuAggNumExprScale(const GpuAggNumExpr *e);
extern int	GpuAggNumExprIntBytes(const GpuAggNumExpr *e);
extern bool GpuAggNumExprEval(GpuAggNumExpr *e, GpuAggNumMemo *memo, const char *tp, const int *att_off,
							  int128 *out, bool *isnull);
extern int	GpuAggNumExprToScan(const GpuAggNumExpr *e, GpuextScanProgram *p, const int *col_of_att);
extern void GpuAggNumExprColumns(const GpuAggNumExpr *e, Bitmapset **atts);
extern void GpuAggNumExprTextColumns(const GpuAggNumExpr *e, Bitmapset **atts);

/* gpuagg_inplace_setup.c, gpuagg_inplace.c, gpuagg_conditions.c */
extern void GpuAggInPlaceSetup(GpuAggState *st, CustomScan *cscan, TupleDesc tupdesc);
extern GpuAggRowQual *GpuAggCompileRowQual(CustomScan *cscan, List *quals);
extern bool GpuAggArithOp(OpExpr *op, Oid add, Oid sub, Oid mul, Oid div, Oid neg, GpuAggRowOp *kind);
extern GpuAggRowExpr *GpuAggRowExprCreate(void);
extern int	GpuAggRowExprAdd(GpuAggRowExpr *e, CustomScan *cscan, Expr *expr);
extern bool GpuAggCompiledType(Oid type, bool *is_float);
extern Node *GpuAggModColumn(Node *node, int64 *modulus);
extern void GpuAggRowQualColumns(const GpuAggRowQual *q, Bitmapset **atts);
extern void GpuAggRowQualTextColumns(const GpuAggRowQual *q, Bitmapset **atts);
extern bool GpuAggRowQualToScan(const GpuAggRowQual *q, GpuextScanProgram *p, const int *col_of_att);
extern void GpuAggRowExprColumnsUsed(const GpuAggRowExpr *e, Bitmapset **atts);
extern void GpuAggRowExprTextColumns(const GpuAggRowExpr *e, Bitmapset **atts);
extern bool GpuAggRowExprToScan(const GpuAggRowExpr *e, GpuextScanProgram *p, const int *col_of_att);
extern bool GpuAggRowQualPasses(const GpuAggRowQual *q, const char *tp, const int *att_off);
extern const float8 *GpuAggRowExprRun(GpuAggRowExpr *e, const char *tp, const int *att_off);
extern bool GpuAggRowExprMayBeNull(const GpuAggRowExpr *e, int reg);
extern bool GpuAggRowExprNull(const GpuAggRowExpr *e, int reg);
extern void GpuAggRowExprRaise(const GpuAggRowExpr *e, int reg);
extern bool GpuAggRowExprLazy(const GpuAggRowExpr *e);
extern float8 *GpuAggRowExprColumns(const GpuAggRowExpr *e);
extern void GpuAggRowExprLoad(const GpuAggRowExpr *e, const char *tp, const int *att_off, float8 *cols, int j);
extern void GpuAggRowExprRunColumns(const GpuAggRowExpr *e, float8 *cols, int n);

/* gpuagg_devprogram.c */
extern void GpuAggDevScanSetup(GpuAggState *st, CustomScan *cscan, TupleDesc tupdesc);

/* gpuagg_devscan.c */
extern bool GpuAggDevScanUsable(GpuAggState *st, GpuAggPages *pg);
extern bool GpuAggDevScanRun(GpuAggState *st, GpuAggPages *pg);
extern void GpuAggDevScanDrop(GpuAggState *st);
extern void GpuAggDevScanCpuBatch(GpuAggState *st, GpuAggDevScan *ds);
extern bool GpuAggDevScanWholeStillVisible(GpuAggDevScan *ds);
extern void GpuAggDevScanUpload(GpuAggDevScan *ds);
extern void GpuAggDevScanEnqueue(GpuAggDevScan *ds, const GpuextScanProgram *p);
extern void GpuAggDevScanWait(GpuAggDevScan *ds);

/* gpuagg_devkeys.c */
#define GPUAGG_DEVGROUPS_MAX_SLOTS ((uint32) 1 << 20)	/* the device's table of groups, at most */
#define GPUAGG_DEVGROUPS_NUMBERED_SLOTS ((uint32) 1 << 23)	/* ... where the device numbers them */
#define GPUAGG_DEVGROUPS_NUMBERED_MAX_SLOTS ((uint32) 1 << 26)	/* ... where its memory holds more */
#define GPUAGG_DEVGROUPS_CHUNK 65536	/* groups numbered on the device read back at a time */
extern Var *GpuAggDevKeyColumn(Node *expr, Index scanrelid, GpuextScanKey *key);
extern double GpuAggDevKeyGroupsBound(const GpuextScanKey *key, Oid coltype);
extern double GpuAggKeysGroupsBound(List *keys, Index relid);
extern bool GpuAggDevKeysExpected(List *keys, List *eqops, Index relid, Oid reloid, double groups, bool numbered,
								  int ncounters, size_t group_bytes);
extern uint32 GpuAggNumberedSlots(int ncounters, size_t group_bytes);

/* gpuagg_devgroups.c */
extern bool GpuAggDevGroupsKeys(GpuAggState *st, TupleDesc tupdesc, Bitmapset **byteatts, Bitmapset **intatts);
extern void GpuAggDevGroupsProgram(GpuAggState *st, GpuextScanProgram *p, const int *col_of_att);
extern bool GpuAggDevGroupsKeyValueRead(const GpuextScanProgram *p);
extern size_t GpuAggDevGroupsLayout(GpuAggState *st, GpuextScanProgram *p, size_t outs);
extern bool GpuAggDevGroupsUsable(GpuAggState *st);
extern bool GpuAggDevGroupsRegrow(GpuAggState *st);
extern void GpuAggDevGroupsBegin(GpuAggState *st, GpuAggDevScan *ds);
extern void GpuAggDevGroupsBatch(GpuAggState *st, GpuAggDevScan *ds);

/* gpuagg_devgroups_out.c */
extern void GpuAggDevGroupKeys(GpuAggState *st, const GpuextScanProgram *p, const unsigned char *image,
							   Datum *values, bool *isnull);
extern bool GpuAggDevGroupsFirstChunk(GpuAggState *st);
extern bool GpuAggDevGroupsNext(GpuAggState *st);

/* gpuagg_having.c: a group's aggregate, as HAVING's tests read it */
#define GPUAGG_HAVING_VALUE 0
#define GPUAGG_HAVING_NULL 1
#define GPUAGG_HAVING_UNKNOWN 2
typedef int (*GpuAggHavingFetch) (GpuAggState *st, const void *arg, int agg, int128 *v);
extern void GpuAggHavingBegin(GpuAggState *st, CustomScan *cscan);
extern bool GpuAggHavingReads(const GpuAggInput *in);
extern int	GpuAggHavingFixed(const GpuAggInput *in, GpuextAggKind kind, const GpuextGroupResult *r, int64 nans,
							  int128 *v);
extern bool GpuAggHavingFails(GpuAggState *st, GpuAggHavingFetch fetch, const void *arg);

/* gpuagg_explain.c */
extern void GpuAggExplain(CustomScanState *node, List *ancestors, ExplainState *es);

#endif							/* GPUEXT_GPUAGG_H */
