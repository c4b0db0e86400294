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
 * planner's choices stay valid.  A LIMIT directly above is read here as the
 * bound, since the executor passes bounds only to its own Sort nodes.
 */
#include "postgres.h"

#include "common/int.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/planner.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "gpusort.h"

bool		gpuext_enable_sort = GPUEXT_ENABLE_SORT_DEFAULT;
int			gpuext_sort_min_rows = GPUEXT_SORT_MIN_ROWS_DEFAULT;

static planner_hook_type prev_planner_hook = NULL;

static Plan *ReplaceSorts(Plan *plan, Plan *parent, bool under_gather);

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

/* The LIMIT count (plus offset) a Limit parent asks of this Sort, or -1. */
static int64
SortBound(Plan *parent)
{
	Limit	   *limit;
	Const	   *count,
			   *offset;
	int64		bound;

	if (parent == NULL || !IsA(parent, Limit))
		return -1;
	limit = (Limit *) parent;
	count = (Const *) limit->limitCount;
	offset = (Const *) limit->limitOffset;
	if (limit->limitOption != LIMIT_OPTION_COUNT || count == NULL || !IsA(count, Const) ||
		count->constisnull || count->consttype != INT8OID)
		return -1;
	if (offset != NULL && (!IsA(offset, Const) || offset->consttype != INT8OID))
		return -1;
	if (DatumGetInt64(count->constvalue) < 0)
		return -1;
	if (offset == NULL || offset->constisnull)
		return DatumGetInt64(count->constvalue);
	if (pg_add_s64_overflow(DatumGetInt64(count->constvalue),
							Max(DatumGetInt64(offset->constvalue), 0), &bound))
		return -1;
	return bound;
}

/*
 * Build the GpuSort node that takes the place of sort.  Under Gather it is
 * marked parallel-aware, only for the shared memory that brings its
 * workers' figures back to EXPLAIN (gpusort_explain.c).
 */
static Plan *
MakeGpuSort(Sort *sort, Plan *parent, bool under_gather)
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
	int64		bound = SortBound(parent);

	if (refusal != NULL)
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

/* Replace the Sorts in a list of plans. */
static List *
ReplaceSortsInList(List *plans, Plan *parent, bool under_gather)
{
	ListCell   *lc;

	foreach(lc, plans)
		lfirst(lc) = ReplaceSorts((Plan *) lfirst(lc), parent, under_gather);
	return plans;
}

/* Walk a plan tree bottom-up, replacing every Sort GpuSort can take (under_gather: run by parallel workers). */
static Plan *
ReplaceSorts(Plan *plan, Plan *parent, bool under_gather)
{
	if (plan == NULL)
		return NULL;
	check_stack_depth();

	under_gather |= IsA(plan, Gather) || IsA(plan, GatherMerge);
	plan->lefttree = ReplaceSorts(plan->lefttree, plan, under_gather);
	plan->righttree = ReplaceSorts(plan->righttree, plan, under_gather);
	switch (nodeTag(plan))
	{
		case T_Append:
			ReplaceSortsInList(((Append *) plan)->appendplans, plan, under_gather);
			break;
		case T_MergeAppend:
			ReplaceSortsInList(((MergeAppend *) plan)->mergeplans, plan, under_gather);
			break;
		case T_SubqueryScan:
			((SubqueryScan *) plan)->subplan = ReplaceSorts(((SubqueryScan *) plan)->subplan, plan, under_gather);
			break;
		case T_CustomScan:
			ReplaceSortsInList(((CustomScan *) plan)->custom_plans, plan, under_gather);
			break;
		case T_Sort:
			return MakeGpuSort((Sort *) plan, parent, under_gather);
		default:
			break;
	}
	return plan;
}

/*
 * Plan as usual (through any earlier hook), then hand the Sorts to GpuSort
 * where it can use a GPU: not under gpuext.device = cpu, nor in a build
 * without device code (the fake device counts as one).
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

	if (gpuext_enable_sort && gpuext_device_mode != GPUEXT_DEVICE_CPU && gpuext_cuda_built())
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
