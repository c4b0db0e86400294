/*
 * gpuagg_cost.c
 *		The planner's cost of a GpuAgg path (gpuagg_plan.c).
 *
 * Without a device scan the path is a sequential scan (its pages,
 * cpu_tuple_cost and the WHERE clause per row, as cost_seqscan), the keys
 * and their hashing (cpu_operator_cost a key, as a hashed Agg), the
 * arguments and FILTERs per passing row, and per value going to the device
 * a tenth of cpu_operator_cost, in place of PostgreSQL's transition
 * functions; per group the output row and HAVING.
 *
 * Where the planner expects the device to scan the table (its WHERE clause,
 * arguments, FILTERs and keys all compiled: gpuagg_devprogram.c, and the
 * groups within hash_mem), the CPU only
 * pins each page and hands it over: the path costs the table's pages as
 * cost_seqscan does, and per tuple a tenth of cpu_tuple_cost; no per-row
 * condition, key or transition.  Measured (doc/bench/tpch.txt), the CPU's
 * share of a serial device scan is 8 to 12 ns a tuple, against 100 to 500 ns
 * a row for PostgreSQL's scan and aggregate of the same queries.
 *
 * With workers the per-row costs are divided among the processes as
 * cost_seqscan divides them, plus parallel_setup_cost and
 * parallel_tuple_cost per group a worker sends.  Spilling groups past
 * hash_mem is charged as a hashed Agg's spill.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "utils/lsyscache.h"
#include "utils/spccache.h"

#include "gpuagg.h"

/* Per value sent to the device, in units of cpu_operator_cost (a transition function costs 1). */
#define GPUAGG_VALUE_COST 0.1

/* Per tuple the device scans, the CPU's share in units of cpu_tuple_cost (a tuple PostgreSQL scans costs 1). */
#define GPUAGG_DEVICE_TUPLE_SHARE 0.1

/* Whether the argument is a numeric added exactly on the CPU (no fixed scale that fits a bigint). */
bool
GpuAggNumericOnCpu(Node *arg)
{
	return getBaseType(exprType(arg)) == NUMERICOID && GpuAggNumericScale(arg) < 0;
}

/* The processes a parallel plan's per-row cost is divided among (costsize.c's get_parallel_divisor). */
static double
ParallelDivisor(int workers)
{
	double		divisor = workers;
	double		leader = 1.0 - 0.3 * workers;

	if (parallel_leader_participation && leader > 0)
		divisor += leader;
	return divisor;
}

/*
 * The path's cost (see the file's head): a sequential scan with its WHERE
 * clause, per row the keys and their hashing, per passing row the arguments
 * and FILTERs that are not plain columns, per value the device's share, or
 * under a device scan (devscan) the CPU's share per tuple only; per group
 * the output row and HAVING; with workers, the per-row costs divided among
 * the processes, the workers' start and the groups they send.
 */
void
GpuAggCostPath(PlannerInfo *root, RelOptInfo *baserel, List *aggrefs, List *keys, List *having,
			   double groups, PathTarget *target, int workers, bool devscan, Path *path)
{
	double		run;
	double		spc_seq_page_cost;
	double		per_row = 0;
	ListCell   *lc;
	QualCost	qc;
	List	   *inputs = NIL;
	List	   *clauses = NIL;
	bool		compiled_where;

	get_tablespace_page_costs(baserel->reltablespace, NULL, &spc_seq_page_cost);
	foreach(lc, baserel->baserestrictinfo)
		clauses = lappend(clauses, lfirst_node(RestrictInfo, lc)->clause);
	compiled_where = GpuAggCompileRowQual(NULL, clauses) != NULL;
	/* Aggregates of one argument under one FILTER share an input (GpuAggPlanPath) */
	foreach(lc, aggrefs)
	{
		Aggref	   *aggref = lfirst_node(Aggref, lc);

		if (aggref->args != NIL || aggref->aggfilter != NULL)
			inputs = list_append_unique(inputs, list_make2(aggref->args, aggref->aggfilter));
	}
	foreach(lc, inputs)
	{
		List	   *args = linitial(lfirst(lc));
		Node	   *filter = lsecond(lfirst(lc));

		if (filter)
		{
			cost_qual_eval_node(&qc, filter, root);
			per_row += qc.per_tuple;
		}
		if (args != NIL)
		{
			Node	   *arg = (Node *) linitial_node(TargetEntry, args)->expr;

			/*
			 * a numeric added on the CPU costs what a transition function does;
			 * its arithmetic, where compiled for rows read in place, is 128-bit
			 * integer arithmetic instead of numeric's: not charged
			 */
			if (GpuAggNumericOnCpu(arg) && filter == NULL && compiled_where && !IsA(arg, Var) &&
				GpuAggCompileNumExpr(NULL, (Expr *) arg) != NULL)
				per_row += cpu_operator_cost;
			else
			{
				cost_qual_eval_node(&qc, arg, root);
				per_row += qc.per_tuple + (GpuAggNumericOnCpu(arg) ? 1 : GPUAGG_VALUE_COST) * cpu_operator_cost;
			}
		}
	}
	cost_qual_eval(&qc, keys, root);
	per_row += qc.per_tuple + cpu_operator_cost * list_length(keys);
	if (devscan)
		run = cpu_tuple_cost * GPUAGG_DEVICE_TUPLE_SHARE * baserel->tuples;
	else
		run = (cpu_tuple_cost + baserel->baserestrictcost.per_tuple) * baserel->tuples + per_row * baserel->rows;
	if (workers > 0)
		run = run / ParallelDivisor(workers) + parallel_setup_cost + parallel_tuple_cost * groups * workers;
	path->startup_cost = baserel->baserestrictcost.startup + target->cost.startup + qc.startup +
		spc_seq_page_cost * baserel->pages + run;
	cost_qual_eval(&qc, having, root);
	path->startup_cost += qc.startup;
	path->total_cost = path->startup_cost +
		(cpu_tuple_cost + target->cost.per_tuple + qc.per_tuple) * groups;
	path->rows = groups;
	if (having != NIL)
		path->rows = clamp_row_est(groups * clauselist_selectivity(root, having, 0, JOIN_INNER, NULL));
}

/*
 * Spilling, where only a share (fits) of the groups fits in hash_mem: the
 * other groups' rows written and read back (as cost_agg charges a hashed Agg's
 * spill), and their keys looked up again.
 */
void
GpuAggCostSpill(RelOptInfo *baserel, List *keys, List *aggrefs, double fits, Path *path)
{
	double		rows = baserel->rows * (1 - fits);
	double		pages = ceil(rows * sizeof(Datum) * (list_length(keys) + 1 + list_length(aggrefs)) / BLCKSZ);
	Cost		cost = pages * (random_page_cost + seq_page_cost) +
		rows * (cpu_tuple_cost + cpu_operator_cost * list_length(keys));

	path->startup_cost += cost;
	path->total_cost += cost;
}
