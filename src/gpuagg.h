/*
 * gpuagg.h
 *		Custom Scan (GpuAgg): aggregates without GROUP BY over one heap table,
 *		reduced through the exact accumulators (agg_accum.h).
 *
 *	gpuagg_plan.c		the upper-paths hook, the path, its cost and its plan
 *	gpuagg_exec.c		the scan, the batches, the device reduction, the result row
 *	gpuagg_explain.c	EXPLAIN
 *
 * custom_scan_tlist of a GpuAgg plan: the aggregates (Aggrefs, one entry
 * each, first), then every column of the table the WHERE clause, the
 * arguments and the FILTERs read (Vars).  The plan's targetlist refers to the
 * aggregates as INDEX_VAR Vars, so expressions over them are projected as
 * usual.  custom_exprs: the WHERE clause (implicit AND), the inputs'
 * arguments, the inputs' FILTERs (a true Const where there is none).
 * custom_private: per aggregate its kind (IntList of GpuextAggKind) and its
 * input (IntList, -1 for count(*) without FILTER); per input the type of its
 * values (OidList, InvalidOid where only non-NULL values are counted).
 *
 * An input is one distinct (argument, FILTER) pair: sum(a), avg(a), min(a)
 * and max(a) share one accumulator.
 */
#ifndef GPUEXT_GPUAGG_H
#define GPUEXT_GPUAGG_H

#include "access/tableam.h"
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

extern bool gpuext_enable_agg;
extern int	gpuext_agg_min_rows;

/* One input: the values of one argument under one FILTER, and where they go. */
typedef struct GpuAggInput
{
	ExprState  *arg;			/* NULL when the argument is a plain column */
	AttrNumber	argatt;			/* ... that column of the table */
	int			fixed_off;		/* ... its offset in a tuple without NULLs (when st->fixed) */
	int16		fixed_len;
	ExprState  *filter;			/* NULL without FILTER */
	const GpuextSortType *type; /* NULL: only non-NULL values are counted */
	int64		count;			/* ... here */
	GpuextAccum *acc;
	bool		batching;		/* values gather in batches for the device, else go to acc */
	char	   *batch;			/* host memory, or the reducer's pinned host batch */
	size_t		nbatch;
	size_t		capacity;
	GpuextReducer *reducer;
} GpuAggInput;

/* What EXPLAIN ANALYZE reports, summed over the node's runs. */
typedef struct GpuAggStats
{
	int64		runs;
	int64		rows_read;
	int64		rows_passed;
	int64		device_batches;
	int64		cpu_batches;
	double		total_ms;
	double		device_ms;		/* in device calls: transfers, and waits for reductions */
	const char *fallback;		/* why some values were reduced on the CPU */
} GpuAggStats;

typedef struct GpuAggState
{
	CustomScanState css;
	int			naggs;
	GpuextAggKind *kinds;
	int		   *agg_input;		/* per aggregate, -1: count(*) */
	int			ninputs;
	GpuAggInput *inputs;
	ExprState  *qual;
	int			nvars;			/* table columns copied into the scan tuple, after the aggregates */
	AttrNumber *var_att;
	AttrNumber	maxatt;			/* the last column read */
	bool		need_scan_tuple;	/* some expression reads the scan tuple */
	bool		fixed;			/* heap tuples without NULLs are read at fixed offsets */
	TupleTableSlot *heapslot;
	MemoryContext nodecxt;		/* the inputs' batches and reducers, kept across rescans */
	MemoryContext runcxt;		/* one run's result */
	bool		done;
	bool		timing;
	GpuAggStats stats;
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

/* gpuagg_plan.c */
extern void GpuAggInit(void);

/* gpuagg_exec.c */
extern Node *GpuAggCreateState(CustomScan *cscan);

/* gpuagg_explain.c */
extern void GpuAggExplain(CustomScanState *node, List *ancestors, ExplainState *es);

#endif							/* GPUEXT_GPUAGG_H */
