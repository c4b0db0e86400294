/*
 * gpuagg_plan.c
 *		Where aggregates get offloaded: an upper-paths hook that offers
 *		Custom Scan (GpuAgg) for UPPERREL_GROUP_AGG, beside PostgreSQL's own
 *		aggregate paths, and the plan built from it.
 *
 * It takes count(*), count(x), sum, avg, min and max (with FILTER) over
 * smallint, integer, bigint, real, double precision and numeric (any
 * typmod, expressions too: gpuagg_numeric.c says how), and
 * min and max over date, timestamp and timestamptz, over one plain heap
 * table, with GROUP BY keys of any type with a hash opclass (expressions
 * over the table's columns) and HAVING.  The WHERE clause, the keys, the
 * arguments and the FILTERs are evaluated on the CPU per row, the keys
 * numbered in a hash table; the values go to the device in batches with
 * their group numbers.
 *
 * Cost (gpuagg_cost.c): a sequential scan with the per-row work on the
 * CPU, or where the device is expected to scan the table, its pages and a
 * small share per row.  Groups are kept in hash_mem: where the estimated
 * groups would not fit, the rows of the others are spilled and read back
 * (gpuagg_spill.c), without workers; where they cannot be spilled, the path
 * is not offered.  The fixed costs of the device are not in the cost but in
 * gpuext.agg_min_rows, the measured crossover, as gpuext.sort_min_rows is
 * for sorts.
 *
 * Where the query could run in parallel, a second path launches workers
 * itself (gpuagg_parallel.c), as many as a parallel scan of the table
 * would get: its per-row costs are divided among the processes as
 * cost_seqscan divides them, plus parallel_setup_cost and
 * parallel_tuple_cost per group a worker sends.  add_path weighs both
 * against PostgreSQL's serial and parallel aggregates.
 */
#include "postgres.h"

#include "catalog/pg_aggregate.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planner.h"
#include "optimizer/restrictinfo.h"
#include "optimizer/tlist.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"
#include "utils/spccache.h"
#include "utils/typcache.h"

#include "gpuagg.h"

bool		gpuext_enable_agg = GPUEXT_ENABLE_AGG_DEFAULT;
bool		gpuext_debug_agg_without_gain = false;
int			gpuext_agg_min_rows = GPUEXT_AGG_MIN_ROWS_DEFAULT;

static create_upper_paths_hook_type prev_create_upper_paths_hook = NULL;

/* The argument types GpuAgg reduces, and the types of their sum and avg (PostgreSQL's; none: min and max only). */
typedef struct GpuAggType
{
	Oid			type;
	Oid			sum_type;
	Oid			avg_type;
} GpuAggType;

static const GpuAggType gpuagg_types[] = {
	{INT2OID, INT8OID, NUMERICOID},
	{INT4OID, INT8OID, NUMERICOID},
	{INT8OID, NUMERICOID, NUMERICOID},
	{FLOAT4OID, FLOAT4OID, FLOAT8OID},
	{FLOAT8OID, FLOAT8OID, FLOAT8OID},
	{NUMERICOID, NUMERICOID, NUMERICOID},
	{DATEOID, InvalidOid, InvalidOid},
	{TIMESTAMPOID, InvalidOid, InvalidOid},
	{TIMESTAMPTZOID, InvalidOid, InvalidOid},
};

/* The aggregates GpuAgg computes, by their name in pg_catalog. */
static const struct
{
	const char *name;
	GpuextAggKind kind;
}			gpuagg_funcs[] = {
	{"count", GPUEXT_AGG_COUNT},
	{"sum", GPUEXT_AGG_SUM},
	{"avg", GPUEXT_AGG_AVG},
	{"min", GPUEXT_AGG_MIN},
	{"max", GPUEXT_AGG_MAX},
};

static Plan *GpuAggPlanPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
							List *tlist, List *clauses, List *custom_plans);

static const CustomPathMethods gpuagg_path_methods = {
	.CustomName = "GpuAgg",
	.PlanCustomPath = GpuAggPlanPath,
};

static const CustomScanMethods gpuagg_plan_methods = {
	.CustomName = "GpuAgg",
	.CreateCustomScanState = GpuAggCreateState,
};

/* The table entry of an argument type, or NULL. */
static const GpuAggType *
AggTypeLookup(Oid type)
{
	for (int i = 0; i < lengthof(gpuagg_types); i++)
		if (gpuagg_types[i].type == type)
			return &gpuagg_types[i];
	return NULL;
}

/* An argument or FILTER GpuAgg evaluates per row: no volatile functions, no subqueries. */
static bool
ExprFits(Node *expr)
{
	return !contain_volatile_functions(expr) && !contain_subplans(expr);
}

/*
 * The kind of an aggregate GpuAgg computes, and the type of its values
 * (InvalidOid for count), or NULL with why not.
 */
static const char *
AggrefRefusal(Aggref *aggref, GpuextAggKind *kind, Oid *type)
{
	char	   *name = get_func_name(aggref->aggfnoid);
	const GpuAggType *t;
	Oid			result = InvalidOid;
	int			f;

	if (aggref->aggorder != NIL || aggref->aggdistinct != NIL)
		return "an aggregate has DISTINCT or ORDER BY";
	if (aggref->aggkind != AGGKIND_NORMAL || aggref->agglevelsup != 0 ||
		aggref->aggsplit != AGGSPLIT_SIMPLE || aggref->aggvariadic)
		return "an aggregate is not a plain aggregate";
	if (get_func_namespace(aggref->aggfnoid) != PG_CATALOG_NAMESPACE || name == NULL)
		return "an aggregate is not PostgreSQL's own";
	for (f = 0; f < lengthof(gpuagg_funcs); f++)
		if (strcmp(name, gpuagg_funcs[f].name) == 0)
			break;
	if (f == lengthof(gpuagg_funcs))
		return psprintf("aggregate %s is not supported", name);
	*kind = gpuagg_funcs[f].kind;
	*type = InvalidOid;
	if (aggref->aggfilter && !ExprFits((Node *) aggref->aggfilter))
		return "a FILTER has volatile functions or subqueries";
	if (aggref->aggstar)
		return aggref->aggtype == INT8OID ? NULL : "count(*) is not bigint";
	if (list_length(aggref->args) != 1)
		return "an aggregate has more than one argument";
	if (!ExprFits((Node *) linitial_node(TargetEntry, aggref->args)->expr))
		return "an argument has volatile functions or subqueries";
	if (*kind == GPUEXT_AGG_COUNT)
		return aggref->aggtype == INT8OID ? NULL : "count is not bigint";
	*type = getBaseType(exprType((Node *) linitial_node(TargetEntry, aggref->args)->expr));
	t = AggTypeLookup(*type);
	if (t == NULL || GpuextAggTypeLookup(*type) == NULL)
		return psprintf("%s of type %s is not supported", name, format_type_be(*type));
	switch (*kind)
	{
		case GPUEXT_AGG_SUM:
			result = t->sum_type;
			break;
		case GPUEXT_AGG_AVG:
			result = t->avg_type;
			break;
		default:
			result = t->type;
			break;
	}
	if (!OidIsValid(result))
		return psprintf("%s of type %s is not supported", name, format_type_be(*type));
	if (aggref->aggtype != result)
		return psprintf("%s of %s does not return %s", name, format_type_be(*type), format_type_be(result));
	return NULL;
}

/* What a walk over the output and HAVING collects: the aggregates, or why not. */
typedef struct OutputWalk
{
	List	   *keys;			/* the GROUP BY expressions */
	List	   *aggrefs;
	const char *refusal;
} OutputWalk;

/* Collect the aggregates of an output or HAVING expression; refuse columns outside the keys. */
static bool
OutputWalker(Node *node, OutputWalk *w)
{
	GpuextAggKind kind;
	Oid			type;

	if (node == NULL)
		return false;
	if (list_member(w->keys, node))
		return false;
	if (IsA(node, Aggref))
	{
		w->refusal = AggrefRefusal((Aggref *) node, &kind, &type);
		if (w->refusal != NULL)
			return true;
		w->aggrefs = list_append_unique(w->aggrefs, node);
		return false;
	}
	if (IsA(node, Var) || IsA(node, PlaceHolderVar) || IsA(node, GroupingFunc) ||
		IsA(node, SubPlan) || IsA(node, SubLink))
	{
		w->refusal = IsA(node, Var) ? "the output has a column outside the GROUP BY keys and aggregates"
			: "the output has an expression GpuAgg does not compute";
		return true;
	}
	return expression_tree_walker(node, OutputWalker, w);
}

/* The aggregates of the grouping target and HAVING (each once), or NIL with why not. */
static List *
TargetAggrefs(PathTarget *target, Node *having, List *keys, const char **refusal)
{
	OutputWalk	w = {keys, NIL, NULL};

	if (OutputWalker((Node *) target->exprs, &w) || OutputWalker(having, &w))
	{
		*refusal = w.refusal;
		return NIL;
	}
	if (w.aggrefs == NIL)
		*refusal = "no aggregates";
	return w.aggrefs;
}

/* The GROUP BY expressions and their equality operators (NIL without GROUP BY), or NIL with why not. */
static List *
GroupKeys(PlannerInfo *root, List **eqops, const char **refusal)
{
	List	   *keys = NIL;
	ListCell   *lc;

	*eqops = NIL;
	foreach(lc, root->parse->groupClause)
	{
		SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);
		Node	   *expr = get_sortgroupclause_expr(sgc, root->processed_tlist);

		if (!sgc->hashable || !OidIsValid(sgc->eqop))
			*refusal = "a GROUP BY key has no hash opclass";
		else if (!ExprFits(expr) || contain_agg_clause(expr))
			*refusal = "a GROUP BY key has volatile functions or subqueries";
		else
		{
			keys = lappend(keys, expr);
			*eqops = lappend_oid(*eqops, sgc->eqop);
			continue;
		}
		return NIL;
	}
	return keys;
}

/*
 * Bytes of one group in the node's memory: its hash entry and keys, its
 * counts and results, and a numeric aggregate's NaN count, or its CPU
 * accumulator with its min and max copies (GPUAGG_NUMERIC_GROUP_BYTES).
 */
static double
GroupBytes(List *keys, List *aggrefs)
{
	int			naggs = list_length(aggrefs);
	double		bytes = 64 + 8 + 8 * naggs + naggs * sizeof(GpuextGroupResult);
	ListCell   *lc;

	foreach(lc, aggrefs)
	{
		Aggref	   *aggref = lfirst_node(Aggref, lc);

		Node	   *arg = aggref->args != NIL ? (Node *) linitial_node(TargetEntry, aggref->args)->expr : NULL;

		if (arg != NULL && getBaseType(exprType(arg)) == NUMERICOID)
			bytes += GpuAggNumericScale(arg) >= 0 ? sizeof(int64) : GPUAGG_NUMERIC_GROUP_BYTES;
	}
	foreach(lc, keys)
		bytes += MAXALIGN(get_typavgwidth(exprType(lfirst(lc)), exprTypmod(lfirst(lc))));
	return bytes;
}

/*
 * Device memory of a group numbered on the device (GpuAggNumberedSlots): a
 * state for each aggregate of a value, a float's with its exact sum.
 */
static size_t
NumberedStateBytes(List *aggrefs)
{
	size_t		bytes = 0;
	ListCell   *lc;

	foreach(lc, aggrefs)
	{
		Aggref	   *aggref = lfirst_node(Aggref, lc);
		Oid			type;

		if (aggref->args == NIL)
			continue;
		type = getBaseType(exprType((Node *) linitial_node(TargetEntry, aggref->args)->expr));
		bytes += GPUEXT_GROUP_STATE_BYTES(type == FLOAT4OID || type == FLOAT8OID);
	}
	return bytes;
}

/*
 * Whether the groups could spill past hash_mem (gpuagg_spill.c): every key
 * equal exactly when its bytes are, with its type's own equality (text
 * under a deterministic collation).
 */
static bool
SpillEligible(List *keys, List *eqops, List *aggrefs)
{
	ListCell   *lc,
			   *le;

	forboth(lc, keys, le, eqops)
	{
		Oid			type = exprType(lfirst(lc));

		if (GpuAggByteEqualKey(type, exprTypmod(lfirst(lc)), lfirst_oid(le), exprCollation(lfirst(lc))) == 0)
			return false;
	}
	return list_length(keys) + list_length(aggrefs) <= 64;
}

/*
 * Whether GpuAgg gains anything without GROUP BY: some aggregate's values
 * are reduced on the device (every argument but count's and numerics added
 * on the CPU), or its WHERE clause is compiled, so that rows are read in
 * place instead of row by row as PostgreSQL's scan reads them.
 */
static bool
GainsWithoutKeys(RelOptInfo *input_rel, List *aggrefs)
{
	List	   *clauses = NIL;
	ListCell   *lc;

	foreach(lc, aggrefs)
	{
		Aggref	   *aggref = lfirst_node(Aggref, lc);
		GpuextAggKind kind;
		Oid			type;

		if (aggref->args != NIL && AggrefRefusal(aggref, &kind, &type) == NULL && kind != GPUEXT_AGG_COUNT &&
			!GpuAggNumericOnCpu((Node *) linitial_node(TargetEntry, aggref->args)->expr))
			return true;
	}
	foreach(lc, input_rel->baserestrictinfo)
		clauses = lappend(clauses, lfirst_node(RestrictInfo, lc)->clause);
	return GpuAggCompileRowQual(NULL, clauses) != NULL;
}

/* Whether every numeric column the expression reads has a scale the device reads (numeric(p, s), s small). */
static bool
NumericColumnsOnDevice(Node *expr)
{
	ListCell   *lc;

	foreach(lc, pull_var_clause(expr, PVC_RECURSE_AGGREGATES | PVC_RECURSE_PLACEHOLDERS))
	{
		Var		   *var = lfirst_node(Var, lc);
		int			scale = GpuAggNumericScale((Node *) var);

		if (getBaseType(var->vartype) == NUMERICOID && (scale < 0 || scale > GPUEXT_SCAN_NUMERIC_MAX_UP))
			return false;
	}
	return true;
}

/*
 * Whether the executor is expected to scan the table on the device
 * (gpuagg_devprogram.c): the WHERE clause and the FILTERs compiled, each
 * argument a column the device reads, a constant counted or arithmetic
 * compiled, and the keys grouped there.  An estimate from the plan's
 * expressions, for the cost; the executor decides from the table.
 */
static bool
DevScanExpected(PlannerInfo *root, RelOptInfo *input_rel, Index relid, List *aggrefs, List *keys, List *eqops,
				double groups, bool numbered)
{
	List	   *clauses = NIL;
	bool		key_exprs = false;
	ListCell   *lc;

	if (!gpuext_enable_device_scan || BLCKSZ != GPUEXT_SCAN_PAGE_BYTES ||
		(gpuext_device_mode != GPUEXT_DEVICE_GPU && input_rel->tuples < gpuext_min_gpu_elements) ||
		list_length(aggrefs) > GPUEXT_SCAN_MAX_OUTS ||
		(keys != NIL &&
		 !GpuAggDevKeysExpected(keys, eqops, relid, planner_rt_fetch(relid, root)->relid, groups, numbered,
								list_length(aggrefs) + 1, NumberedStateBytes(aggrefs))))
		return false;
	foreach(lc, input_rel->baserestrictinfo)
		clauses = lappend(clauses, lfirst_node(RestrictInfo, lc)->clause);
	if (clauses != NIL && (GpuAggCompileRowQual(NULL, clauses) == NULL || !NumericColumnsOnDevice((Node *) clauses)))
		return false;
	foreach(lc, keys)
		key_exprs |= !IsA(lfirst(lc), Var);
	foreach(lc, aggrefs)
	{
		Aggref	   *aggref = lfirst_node(Aggref, lc);
		GpuextAggKind kind;
		Oid			type;
		Expr	   *arg;
		bool		is_float;

		if (aggref->aggfilter != NULL && (GpuAggCompileRowQual(NULL, list_make1(aggref->aggfilter)) == NULL ||
										  !NumericColumnsOnDevice((Node *) aggref->aggfilter)))
			return false;
		if (aggref->args == NIL || AggrefRefusal(aggref, &kind, &type) != NULL)
			continue;
		arg = linitial_node(TargetEntry, aggref->args)->expr;
		if (IsA(arg, Var) && kind == GPUEXT_AGG_COUNT)
			continue;
		if (!NumericColumnsOnDevice((Node *) arg))
			return false;
		if (IsA(arg, Var))
		{
			/* a column the device reads */
			if (getBaseType(exprType((Node *) arg)) != NUMERICOID && !GpuAggCompiledType(exprType((Node *) arg), &is_float))
				return false;
		}
		else if (exprType((Node *) arg) == FLOAT8OID || exprType((Node *) arg) == FLOAT4OID)
		{
			/* double precision and real arithmetic, shared by the inputs of rows read in place */
			if (aggref->aggfilter != NULL || key_exprs || GpuAggRowExprAdd(GpuAggRowExprCreate(), NULL, arg) < 0)
				return false;
		}
		else if (GpuAggCompileNumExpr(NULL, arg) == NULL && !(IsA(arg, Const) && !((Const *) arg)->constisnull))
			return false;
	}
	return true;
}

/* Whether an expression holds a Param: parallel runs pass none to their workers. */
static bool
HasParamWalker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param))
		return true;
	return expression_tree_walker(node, HasParamWalker, context);
}

/*
 * Whether the WHERE clause, the arguments or the FILTERs read the table's
 * whole row, which the scan tuple does not hold (keys are evaluated over
 * the table's own slot and may).
 */
static bool
ReadsWholeRow(RelOptInfo *input_rel, Index relid, List *aggrefs)
{
	Bitmapset  *atts = NULL;
	ListCell   *lc;

	pull_varattnos((Node *) aggrefs, relid, &atts);
	foreach(lc, input_rel->baserestrictinfo)
		pull_varattnos((Node *) lfirst_node(RestrictInfo, lc)->clause, relid, &atts);
	return bms_is_member(InvalidAttrNumber - FirstLowInvalidHeapAttributeNumber, atts);
}

/* The workers a parallel GpuAgg over the table would launch, as a parallel scan of it would get; 0 for none. */
static int
ParallelWorkers(PlannerInfo *root, RelOptInfo *input_rel, List *aggrefs, List *keys)
{
	List	   *exprs = list_make2(aggrefs, keys);
	ListCell   *lc;

	if (!root->glob->parallelModeOK || !input_rel->consider_parallel || max_parallel_workers_per_gather <= 0 ||
		!is_parallel_safe(root, (Node *) exprs))
		return 0;
	foreach(lc, input_rel->baserestrictinfo)
		exprs = lappend(exprs, lfirst_node(RestrictInfo, lc)->clause);
	if (HasParamWalker((Node *) exprs, NULL))
		return 0;
	return compute_parallel_worker(input_rel, input_rel->pages, -1, max_parallel_workers_per_gather);
}

/* The table of a one-table query GpuAgg can scan, or 0 with why not. */
static Index
ScanRel(PlannerInfo *root, RelOptInfo *input_rel, const char **refusal)
{
	Query	   *parse = root->parse;
	RangeTblEntry *rte;
	int			relid;

	if (parse->groupingSets != NIL)
		*refusal = "GROUPING SETS";
	else if (parse->hasWindowFuncs || parse->hasTargetSRFs)
		*refusal = "window functions or set-returning functions";
	else if (input_rel->reloptkind != RELOPT_BASEREL || !bms_get_singleton_member(input_rel->relids, &relid))
		*refusal = "not a scan of one table";
	else if (IS_DUMMY_REL(input_rel))
		*refusal = "the scan returns no rows";
	else if (root->qual_security_level > 0)
		*refusal = "row-level security";
	else
	{
		rte = planner_rt_fetch(relid, root);
		if (rte->rtekind != RTE_RELATION || rte->relkind != RELKIND_RELATION || rte->inh ||
			rte->tablesample != NULL)
			*refusal = "not a plain heap table";
		else if (input_rel->rows < gpuext_agg_min_rows)
			*refusal = psprintf("estimated %.0f rows is below gpuext.agg_min_rows (%d)",
								input_rel->rows, gpuext_agg_min_rows);
		else
			return relid;
	}
	return 0;
}

/*
 * Offer a GpuAgg path for the aggregates of a one-table query where it can
 * use a GPU (not under gpuext.device = cpu, nor in a build without device
 * code, nor under auto where no GPU can be used), after any earlier hook;
 * why not at DEBUG1.
 */
static void
GpuAggUpperPaths(PlannerInfo *root, UpperRelationKind stage, RelOptInfo *input_rel,
				 RelOptInfo *output_rel, void *extra)
{
	const char *refusal = NULL;
	Index		relid;
	List	   *aggrefs = NIL;
	List	   *keys = NIL;
	List	   *having = NIL;
	List	   *eqops = NIL;
	double		groups = 1;
	double		fits = 1;
	int			workers;
	bool		devscan;
	bool		numbered;

	if (prev_create_upper_paths_hook)
		prev_create_upper_paths_hook(root, stage, input_rel, output_rel, extra);
	if (stage != UPPERREL_GROUP_AGG || output_rel->reloptkind != RELOPT_UPPER_REL ||
		!root->parse->hasAggs || !gpuext_enable_agg ||
		gpuext_device_mode == GPUEXT_DEVICE_CPU || !GpuextOffloadAllowed() || !gpuext_cuda_built())
		return;
	relid = ScanRel(root, input_rel, &refusal);
	if (relid)
	{
		having = (List *) ((GroupPathExtraData *) extra)->havingQual;
		keys = GroupKeys(root, &eqops, &refusal);
		if (keys != NIL || root->parse->groupClause == NIL)
			aggrefs = TargetAggrefs(output_rel->reltarget, (Node *) having, keys, &refusal);
		if (aggrefs != NIL && ReadsWholeRow(input_rel, relid, aggrefs))
		{
			refusal = "the WHERE clause or an aggregate reads a whole row";
			aggrefs = NIL;
		}
		if (aggrefs != NIL && keys == NIL && !gpuext_debug_agg_without_gain && !GainsWithoutKeys(input_rel, aggrefs))
		{
			refusal = "no value would be reduced on the device and the WHERE clause is not compiled";
			aggrefs = NIL;
		}
	}
	if (aggrefs != NIL && keys != NIL)
	{
		groups = estimate_num_groups(root, keys, input_rel->rows, NULL, NULL);
		if (GpuAggKeysGroupsBound(keys, relid) > 0)
			groups = Min(groups, GpuAggKeysGroupsBound(keys, relid));
		fits = get_hash_memory_limit() / (groups * GroupBytes(keys, aggrefs));
		if (fits < 1 && !SpillEligible(keys, eqops, aggrefs))
		{
			refusal = psprintf("%.0f groups estimated would not fit in hash_mem, and their keys or values cannot spill",
							   groups);
			aggrefs = NIL;
		}
	}
	if (aggrefs != NIL && !GpuextPlanOnDevice(&refusal))
		aggrefs = NIL;
	if (aggrefs == NIL)
	{
		ereport(DEBUG1, (errmsg("gpuext: no GpuAgg: %s", refusal)));
		return;
	}

	/* The serial path, and one with workers where the table would get some and the groups fit */
	workers = fits < 1 ? 0 : ParallelWorkers(root, input_rel, aggrefs, keys);
	/* a batch whose new groups would pass hash_mem is read on the CPU: no device scan where they do not fit */
	devscan = fits >= 1 && DevScanExpected(root, input_rel, relid, aggrefs, keys, eqops, groups, false);
	/* ... unless the device numbers them (serial runs), and nothing spills */
	numbered = !devscan && keys != NIL &&
		DevScanExpected(root, input_rel, relid, aggrefs, keys, eqops, groups, true);
	for (int w = 0; w <= workers; w += Max(workers, 1))
	{
		CustomPath *cpath = makeNode(CustomPath);

		cpath->path.pathtype = T_CustomScan;
		cpath->path.parent = output_rel;
		cpath->path.pathtarget = output_rel->reltarget;
		cpath->path.parallel_safe = false;
		cpath->methods = &gpuagg_path_methods;
		/* the groups as a Float with a point, which a plan passed to workers as text reads back as one */
		cpath->custom_private = lappend(lappend(list_make5(makeInteger(relid), aggrefs, keys, having, eqops),
												makeInteger(w)),
										makeFloat(psprintf("%.1f", groups)));
		GpuAggCostPath(root, input_rel, aggrefs, keys, having, groups, output_rel->reltarget, w,
					   devscan || (numbered && w == 0), &cpath->path);
		if (fits < 1 && !(numbered && w == 0))
			GpuAggCostSpill(input_rel, keys, aggrefs, fits, &cpath->path);
		add_path(output_rel, &cpath->path);
	}
}

/*
 * The conditions (RestrictInfos or clauses) as bare clauses in the order
 * PostgreSQL's plans evaluate them, cheapest first and otherwise as given
 * (createplan.c's order_qual_clauses; GpuAgg takes no row-level security):
 * a cheap condition that fails a row first keeps a costly one, or one that
 * would raise an error, from running on it, as it would there.
 */
static List *
OrderQuals(PlannerInfo *root, List *conds)
{
	int			n = list_length(conds);
	Node	  **items = palloc(sizeof(Node *) * Max(n, 1));
	Cost	   *costs = palloc(sizeof(Cost) * Max(n, 1));
	List	   *result = NIL;
	ListCell   *lc;

	foreach(lc, conds)
	{
		int			i = foreach_current_index(lc);
		QualCost	qc;
		int			j;

		cost_qual_eval_node(&qc, lfirst(lc), root);
		/* insertion: stable among equal costs */
		for (j = i; j > 0 && costs[j - 1] > qc.per_tuple; j--)
		{
			items[j] = items[j - 1];
			costs[j] = costs[j - 1];
		}
		items[j] = lfirst(lc);
		costs[j] = qc.per_tuple;
	}
	for (int i = 0; i < n; i++)
		result = lappend(result, IsA(items[i], RestrictInfo) ? (Node *) ((RestrictInfo *) items[i])->clause : items[i]);
	return result;
}

/* The index of the input (argument, FILTER) in the lists, added if new. */
static int
InputIndex(List **args, List **filters, List **types, Node *arg, Node *filter, Oid type)
{
	ListCell   *la,
			   *lf;

	forboth(la, *args, lf, *filters)
	{
		int			i = foreach_current_index(la);

		if (!equal(lfirst(la), arg) || !equal(lfirst(lf), filter))
			continue;
		/* count(x) counts what sum(x) of the same x accumulates */
		if (OidIsValid(type))
			lfirst_oid(list_nth_cell(*types, i)) = type;
		return i;
	}
	*args = lappend(*args, arg);
	*filters = lappend(*filters, filter);
	*types = lappend_oid(*types, type);
	return list_length(*args) - 1;
}

/*
 * The plan (gpuagg.h has its layout): the aggregates and the columns read
 * go into custom_scan_tlist, whose aggregates setrefs then finds in the
 * targetlist and turns into references to the scan tuple.
 */
static Plan *
GpuAggPlanPath(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
			   List *tlist, List *clauses, List *custom_plans)
{
	Index		relid = intVal(linitial(best_path->custom_private));
	List	   *aggrefs = lsecond(best_path->custom_private);
	List	   *keys = lthird(best_path->custom_private);
	List	   *having = lfourth(best_path->custom_private);
	List	   *eqops = list_nth(best_path->custom_private, 4);
	int			workers = intVal(list_nth(best_path->custom_private, 5));
	Node	   *groups = list_nth(best_path->custom_private, 6);
	RelOptInfo *baserel = root->simple_rel_array[relid];
	CustomScan *cscan = makeNode(CustomScan);
	List	   *quals = NIL,
			   *args = NIL,
			   *filters = NIL,
			   *types = NIL,
			   *kinds = NIL,
			   *agg_input = NIL,
			   *vars;
	ListCell   *lc;
	int			resno = 1;

	quals = OrderQuals(root, baserel->baserestrictinfo);
	foreach(lc, aggrefs)
	{
		Aggref	   *aggref = lfirst_node(Aggref, lc);
		GpuextAggKind kind;
		Oid			type;
		Node	   *filter = aggref->aggfilter ? (Node *) aggref->aggfilter : makeBoolConst(true, false);
		Node	   *arg;

		if (AggrefRefusal(aggref, &kind, &type) != NULL)
			elog(ERROR, "gpuext: GpuAgg path with an aggregate it cannot compute");
		kinds = lappend_int(kinds, kind);
		if (aggref->aggstar && aggref->aggfilter == NULL)
		{
			agg_input = lappend_int(agg_input, -1);
			continue;
		}
		/* count(*) FILTER (WHERE f) counts the non-NULL trues under f */
		arg = aggref->aggstar ? makeBoolConst(true, false) :
			(Node *) linitial_node(TargetEntry, aggref->args)->expr;
		agg_input = lappend_int(agg_input, InputIndex(&args, &filters, &types, arg, filter, type));
	}

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = OrderQuals(root, having);
	cscan->scan.scanrelid = relid;
	cscan->flags = best_path->flags;
	cscan->methods = &gpuagg_plan_methods;
	foreach(lc, aggrefs)
		cscan->custom_scan_tlist = lappend(cscan->custom_scan_tlist,
										   makeTargetEntry(copyObject(lfirst(lc)), resno++, NULL, false));
	foreach(lc, keys)
		cscan->custom_scan_tlist = lappend(cscan->custom_scan_tlist,
										   makeTargetEntry(copyObject(lfirst(lc)), resno++, NULL, false));
	vars = pull_var_clause((Node *) list_make3(quals, args, filters), PVC_RECURSE_PLACEHOLDERS);
	foreach(lc, vars)
	{
		if (tlist_member(lfirst(lc), cscan->custom_scan_tlist) == NULL)
			cscan->custom_scan_tlist = lappend(cscan->custom_scan_tlist,
											   makeTargetEntry(copyObject(lfirst(lc)), resno++, NULL, false));
	}
	cscan->custom_exprs = list_make3(quals, args, filters);
	cscan->custom_private = lappend(list_make5(kinds, agg_input, types, eqops, makeInteger(workers)),
									copyObject(groups));
	return &cscan->scan.plan;
}

/* Install the upper-paths hook and make the node known to parallel workers. */
void
GpuAggInit(void)
{
	RegisterCustomScanMethods(&gpuagg_plan_methods);
	prev_create_upper_paths_hook = create_upper_paths_hook;
	create_upper_paths_hook = GpuAggUpperPaths;
}
