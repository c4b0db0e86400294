/*
 * gpusort_plan.c
 *		Where ORDER BY gets replaced: a planner hook that turns Sort nodes of
 *		the finished plan into Custom Scan (GpuSort).
 *
 * Why the finished plan and not path generation: Sort paths are made in many
 * places of the planner (ORDER BY, window functions, sort-based grouping and
 * DISTINCT, merge-join inputs, ordered subqueries, above Gather) and no single
 * path hook sees them all.  The finished plan holds every Sort, including
 * those in subplans, and GpuSort is a drop-in replacement for one: the same
 * input, output, keys and order, with backward scan and mark/restore, so the
 * planner's choices stay valid.
 *
 * A LIMIT's bound reaches a Sort at run time through ExecSetTupleBound, which
 * passes it down through Append, MergeAppend, Result, SubqueryScan without a
 * qual, Gather and Gather Merge (and from there to every worker), and ignores
 * CustomScan.  So the walk here carries each Limit down the same nodes and
 * gives its bound to the GpuSorts that PostgreSQL's Sorts would have been
 * given it: as a number when the Limit's count and offset are constants, as
 * their expressions (custom_exprs) when they are parameters of a generic
 * plan, computed again when the node starts.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "gpusort.h"

bool		gpuext_enable_sort = GPUEXT_ENABLE_SORT_DEFAULT;
int			gpuext_sort_min_rows = GPUEXT_SORT_MIN_ROWS_DEFAULT;

static planner_hook_type prev_planner_hook = NULL;

static Plan *ReplaceSorts(Plan *plan, Limit *limit, bool under_gather);

static const CustomScanMethods gpusort_plan_methods = {
	.CustomName = "GpuSort",
	.CreateCustomScanState = GpuSortCreateState,
};

/* Why this Sort stays PostgreSQL's, or NULL if GpuSort can take it; fills the key types. */
static const char *
SortRefusal(Sort *sort, Oid *keytypes, bool *descending)
{
	List	   *childtl = outerPlan(sort)->targetlist;

	if (sort->plan.plan_rows < gpuext_sort_min_rows)
		return psprintf("estimated %.0f rows is below gpuext.sort_min_rows (%d)",
						sort->plan.plan_rows, gpuext_sort_min_rows);
	for (int i = 0; i < sort->numCols; i++)
	{
		TargetEntry *tle = get_tle_by_resno(childtl, sort->sortColIdx[i]);
		Oid			type;
		TypeCacheEntry *tc;

		if (tle == NULL)
			return psprintf("sort key %d is not in the input", i + 1);
		type = getBaseType(exprType((Node *) tle->expr));
		if (GpuextSortTypeLookup(type) == NULL)
			return psprintf("sort key %d has type %s", i + 1, format_type_be(type));
		tc = lookup_type_cache(type, TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);
		if (sort->sortOperators[i] == tc->lt_opr)
			descending[i] = false;
		else if (sort->sortOperators[i] == tc->gt_opr)
			descending[i] = true;
		else
			return psprintf("sort key %d does not use the default ordering of %s",
							i + 1, format_type_be(type));
		keytypes[i] = type;
	}
	return NULL;
}

/*
 * Whether a LIMIT expression may be computed again when GpuSort starts and
 * give the Limit's value: constants, the statement's parameters and
 * immutable functions of them, never columns, executor parameters (set by
 * subplans, possibly after GpuSort starts) or subplans.
 */
static bool
BoundExprUnfit(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var) || IsA(node, SubPlan) || IsA(node, AlternativeSubPlan) ||
		(IsA(node, Param) && ((Param *) node)->paramkind != PARAM_EXTERN))
		return true;
	return expression_tree_walker(node, BoundExprUnfit, context);
}

/*
 * The bound limit passes to the Sort below it: set in *bound when the
 * count and offset are constants (-1: none), else their expressions in
 * *exprs, to be computed when the node starts; both empty when the Limit
 * passes no bound, or passes one GpuSort cannot compute.
 */
static void
SortBound(Limit *limit, int64 *bound, List **exprs)
{
	Node	   *count,
			   *offset;

	*bound = -1;
	*exprs = NIL;
	/* WITH TIES and a missing count pass no bound (compute_tuples_needed in nodeLimit.c) */
	if (limit == NULL || limit->limitOption != LIMIT_OPTION_COUNT || limit->limitCount == NULL)
		return;
	count = limit->limitCount;
	offset = limit->limitOffset ? limit->limitOffset :
		(Node *) makeConst(INT8OID, -1, InvalidOid, sizeof(int64), Int64GetDatum(0), false, FLOAT8PASSBYVAL);
	if (exprType(count) != INT8OID || exprType(offset) != INT8OID)
		return;
	if (IsA(count, Const) && IsA(offset, Const))
	{
		*bound = GpuSortLimitBound(((Const *) count)->constvalue, ((Const *) count)->constisnull,
								   ((Const *) offset)->constvalue, ((Const *) offset)->constisnull);
		return;
	}
	if (BoundExprUnfit(count, NULL) || BoundExprUnfit(offset, NULL) ||
		contain_mutable_functions(count) || contain_mutable_functions(offset))
		return;
	/* The expressions went through setrefs with the Limit and refer to no columns: they stand as they are. */
	*exprs = list_make2(copyObject(count), copyObject(offset));
}

/*
 * Build the GpuSort node that takes the place of sort.  Under Gather it is
 * marked parallel-aware, only for the shared memory that brings its
 * workers' figures back to EXPLAIN (gpusort_explain.c).
 */
static Plan *
MakeGpuSort(Sort *sort, Limit *limit, bool under_gather)
{
	Oid		   *keytypes = palloc(sizeof(Oid) * sort->numCols);
	bool	   *descending = palloc(sizeof(bool) * sort->numCols);
	const char *refusal = SortRefusal(sort, keytypes, descending);
	CustomScan *cscan;
	List	   *colidx = NIL,
			   *ops = NIL,
			   *colls = NIL,
			   *nullsfirst = NIL,
			   *types = NIL,
			   *desc = NIL;
	ListCell   *lc;
	int64		bound;
	List	   *bound_exprs;

	if (refusal != NULL)
	{
		ereport(DEBUG1, (errmsg("gpuext: keeping PostgreSQL's Sort: %s", refusal)));
		return (Plan *) sort;
	}
	/* A bound known now and small enough for the top-N heap: PostgreSQL's Sort is that heap */
	SortBound(limit, &bound, &bound_exprs);
	if (bound >= 0 && bound <= HEAP_BOUND_MAX)
	{
		ereport(DEBUG1, (errmsg("gpuext: keeping PostgreSQL's Sort: LIMIT %lld is a top-N heap", (long long) bound)));
		return (Plan *) sort;
	}
	if (!GpuextPlanOnDevice(&refusal))
	{
		ereport(DEBUG1, (errmsg("gpuext: keeping PostgreSQL's Sort: %s", refusal)));
		return (Plan *) sort;
	}

	cscan = makeNode(CustomScan);
	memcpy(&cscan->scan.plan, &sort->plan, sizeof(Plan));
	cscan->scan.plan.type = T_CustomScan;
	cscan->scan.plan.parallel_aware = under_gather;
	cscan->scan.plan.qual = NIL;
	cscan->scan.plan.targetlist = NIL;
	cscan->scan.scanrelid = 0;
	cscan->flags = CUSTOMPATH_SUPPORT_BACKWARD_SCAN | CUSTOMPATH_SUPPORT_MARK_RESTORE;
	cscan->methods = &gpusort_plan_methods;
	cscan->custom_exprs = bound_exprs;

	/* The scan tuple is the input row; the output references it column for column. */
	cscan->custom_scan_tlist = sort->plan.targetlist;
	foreach(lc, sort->plan.targetlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Var		   *var = makeVar(INDEX_VAR, tle->resno, exprType((Node *) tle->expr),
								  exprTypmod((Node *) tle->expr),
								  exprCollation((Node *) tle->expr), 0);

		cscan->scan.plan.targetlist = lappend(cscan->scan.plan.targetlist,
											  makeTargetEntry((Expr *) var, tle->resno,
															  tle->resname, tle->resjunk));
	}

	for (int i = 0; i < sort->numCols; i++)
	{
		colidx = lappend_int(colidx, sort->sortColIdx[i]);
		ops = lappend_oid(ops, sort->sortOperators[i]);
		colls = lappend_oid(colls, sort->collations[i]);
		nullsfirst = lappend_int(nullsfirst, sort->nullsFirst[i]);
		types = lappend_oid(types, keytypes[i]);
		desc = lappend_int(desc, descending[i]);
	}
	cscan->custom_private = list_make5(colidx, ops, colls, nullsfirst, types);
	cscan->custom_private = lappend(cscan->custom_private, desc);
	cscan->custom_private = lappend(cscan->custom_private,
									makeInteger(bound >= 0 && bound <= INT_MAX ? (int) bound : -1));
	return (Plan *) cscan;
}

/*
 * The Limit whose bound the children of plan are given at run time, or
 * NULL: ExecSetTupleBound's rules (execProcnode.c), the same in 15 to 18.
 */
static Limit *
ChildBound(Plan *plan, Limit *limit)
{
	switch (nodeTag(plan))
	{
		case T_Limit:
			return (Limit *) plan;
		case T_Append:
		case T_MergeAppend:
		case T_Result:
		case T_Gather:
		case T_GatherMerge:
			return limit;
		case T_SubqueryScan:
			/* A qual may discard rows */
			return plan->qual == NIL ? limit : NULL;
		default:
			return NULL;
	}
}

/* Replace the Sorts in a list of plans. */
static List *
ReplaceSortsInList(List *plans, Limit *limit, bool under_gather)
{
	ListCell   *lc;

	foreach(lc, plans)
		lfirst(lc) = ReplaceSorts((Plan *) lfirst(lc), limit, under_gather);
	return plans;
}

/*
 * Walk a plan tree bottom-up, replacing every Sort GpuSort can take (limit:
 * the Limit whose bound reaches plan; under_gather: run by parallel workers).
 */
static Plan *
ReplaceSorts(Plan *plan, Limit *limit, bool under_gather)
{
	Limit	   *child_limit;

	if (plan == NULL)
		return NULL;
	check_stack_depth();

	under_gather |= IsA(plan, Gather) || IsA(plan, GatherMerge);
	child_limit = ChildBound(plan, limit);
	plan->lefttree = ReplaceSorts(plan->lefttree, child_limit, under_gather);
	plan->righttree = ReplaceSorts(plan->righttree, child_limit, under_gather);
	switch (nodeTag(plan))
	{
		case T_Append:
			ReplaceSortsInList(((Append *) plan)->appendplans, child_limit, under_gather);
			break;
		case T_MergeAppend:
			ReplaceSortsInList(((MergeAppend *) plan)->mergeplans, child_limit, under_gather);
			break;
		case T_SubqueryScan:
			((SubqueryScan *) plan)->subplan = ReplaceSorts(((SubqueryScan *) plan)->subplan, child_limit, under_gather);
			break;
		case T_CustomScan:
			ReplaceSortsInList(((CustomScan *) plan)->custom_plans, child_limit, under_gather);
			break;
		case T_Sort:
			return MakeGpuSort((Sort *) plan, limit, under_gather);
		default:
			break;
	}
	return plan;
}

/*
 * Plan as usual (through any earlier hook), then hand the Sorts to GpuSort
 * where it can use a GPU: not under gpuext.device = cpu, nor in a build
 * without device code (the fake device counts as one), nor under auto where
 * no GPU can be used (MakeGpuSort asks, for a Sort it would take).
 */
static PlannedStmt *
GpuSortPlanner(Query *parse, const char *query_string, int cursorOptions,
			   ParamListInfo boundParams)
{
	PlannedStmt *stmt;

	if (prev_planner_hook)
		stmt = prev_planner_hook(parse, query_string, cursorOptions, boundParams);
	else
		stmt = standard_planner(parse, query_string, cursorOptions, boundParams);

	if (gpuext_enable_sort && gpuext_device_mode != GPUEXT_DEVICE_CPU && GpuextOffloadAllowed() &&
		gpuext_cuda_built())
	{
		stmt->planTree = ReplaceSorts(stmt->planTree, NULL, false);
		ReplaceSortsInList(stmt->subplans, NULL, false);
	}
	return stmt;
}

/* Install the planner hook and make the node known to parallel workers. */
void
GpuSortInit(void)
{
	RegisterCustomScanMethods(&gpusort_plan_methods);
	prev_planner_hook = planner_hook;
	planner_hook = GpuSortPlanner;
}
