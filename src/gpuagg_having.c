/*
 * gpuagg_having.c
 *		HAVING conditions of the form "aggregate op constant" tested on a
 *		group's counts and exact fixed-point sums before its row is made, so
 *		that the groups that fail are passed over without making their
 *		aggregates' values and keys (TPC-H Q18's subquery: 2.5M groups, of
 *		which 112 pass).
 *
 * A test is taken for count(*) and count(x) against an integer constant,
 * and for sum, min and max of an input read as a bigint at its numeric scale
 * against a numeric constant exact at that scale, under an operator of the
 * integer btree family or numeric's own.  A group's value that is not known
 * exactly there (a NaN seen, avg) leaves the test undecided, and a node
 * with an aggregate whose value can raise an error takes none.  The plan's
 * qual still runs on the groups that pass: a test only passes over groups
 * that the qual rejects, each counted as removed by the filter.
 */
#include "postgres.h"

#include "catalog/pg_opfamily.h"
#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

#include "gpuagg.h"

/* <>, after the btree strategies */
#define HAVING_NE 6

/* One test: aggregate agg's value (at its input's scale) against value under a btree strategy. */
typedef struct GpuAggHavingTest
{
	int			agg;
	int			strategy;		/* BTLessStrategyNumber .. BTGreaterStrategyNumber, or HAVING_NE */
	int128		value;
} GpuAggHavingTest;

/* A constant of an integer type as int64; false for other types. */
static bool
IntegerConst(Const *c, int128 *v)
{
	switch (c->consttype)
	{
		case INT2OID:
			*v = DatumGetInt16(c->constvalue);
			return true;
		case INT4OID:
			*v = DatumGetInt32(c->constvalue);
			return true;
		case INT8OID:
			*v = DatumGetInt64(c->constvalue);
			return true;
		default:
			return false;
	}
}

/* The numeric comparisons, by their functions, as btree strategies (<> last). */
static const Oid NumericCmps[] = {F_NUMERIC_LT, F_NUMERIC_LE, F_NUMERIC_EQ, F_NUMERIC_GE, F_NUMERIC_GT, F_NUMERIC_NE};

/* An integer or numeric comparison's btree strategy (HAVING_NE for <>), else 0. */
static int
Strategy(Oid opno)
{
	Oid			func = get_opcode(opno);
	Oid			negator;
	int			s;

	for (int i = 0; i < lengthof(NumericCmps); i++)
		if (func == NumericCmps[i])
			return i + 1;
	if ((s = get_op_opfamily_strategy(opno, INTEGER_BTREE_FAM_OID)) != 0)
		return s;
	negator = get_negator(opno);
	return OidIsValid(negator) && get_op_opfamily_strategy(negator, INTEGER_BTREE_FAM_OID) == BTEqualStrategyNumber ?
		HAVING_NE : 0;
}

/*
 * The test for one conjunct of the qual, where it is aggregate op constant
 * (either way round) under a family whose values the groups hold exactly.
 */
static bool
MakeTest(GpuAggState *st, Node *q, GpuAggHavingTest *t)
{
	OpExpr	   *op;
	Node	   *l;
	Node	   *r;
	Var		   *var;
	Const	   *c;
	Oid			opno;
	GpuAggInput *in;

	if (!IsA(q, OpExpr) || list_length(((OpExpr *) q)->args) != 2)
		return false;
	op = (OpExpr *) q;
	l = linitial(op->args);
	r = lsecond(op->args);
	opno = op->opno;
	if (IsA(r, Var) && IsA(l, Const))
	{
		Node	   *swap = l;

		l = r;
		r = swap;
		opno = get_commutator(opno);
	}
	if (!IsA(l, Var) || !IsA(r, Const) || !OidIsValid(opno))
		return false;
	var = (Var *) l;
	c = (Const *) r;
	if (var->varno != INDEX_VAR || var->varattno < 1 || var->varattno > st->naggs || c->constisnull)
		return false;
	t->agg = var->varattno - 1;
	t->strategy = Strategy(opno);
	if (t->strategy == 0)
		return false;
	in = st->agg_input[t->agg] >= 0 ? &st->inputs[st->agg_input[t->agg]] : NULL;
	if (st->kinds[t->agg] == GPUEXT_AGG_COUNT)
		return var->vartype == INT8OID && IntegerConst(c, &t->value);
	/* sum, min and max of a numeric read at its scale: a constant exact there */
	return in != NULL && in->numeric_scale >= 0 && st->kinds[t->agg] != GPUEXT_AGG_AVG &&
		var->vartype == NUMERICOID && c->consttype == NUMERICOID &&
		GpuextNumericToFixed(c->constvalue, in->numeric_scale, &t->value) == 0;
}

/*
 * Whether no aggregate's value can raise an error as its group's row is made
 * (a bigint sum past its range, a float sum's overflow): PostgreSQL raises
 * those for groups that HAVING rejects too, so no group may be passed over.
 */
static bool
ResultsCannotFail(GpuAggState *st)
{
	for (int a = 0; a < st->naggs; a++)
	{
		GpuAggInput *in = st->agg_input[a] >= 0 ? &st->inputs[st->agg_input[a]] : NULL;

		if (in != NULL && in->type != NULL && in->numeric_scale < 0 &&
			st->kinds[a] != GPUEXT_AGG_MIN && st->kinds[a] != GPUEXT_AGG_MAX && st->kinds[a] != GPUEXT_AGG_COUNT)
			return false;
	}
	return true;
}

/* The tests among the conjuncts of the node's qual (its HAVING), none where there is no GROUP BY. */
void
GpuAggHavingBegin(GpuAggState *st, CustomScan *cscan)
{
	List	   *qual = cscan->scan.plan.qual;
	ListCell   *lc;

	st->groups.having = NULL;
	st->groups.nhaving = 0;
	if (st->groups.nkeys == 0 || qual == NIL || !ResultsCannotFail(st))
		return;
	st->groups.having = palloc(sizeof(GpuAggHavingTest) * list_length(qual));
	foreach(lc, qual)
		if (MakeTest(st, lfirst(lc), &st->groups.having[st->groups.nhaving]))
			st->groups.nhaving++;
}

/*
 * A group's value of aggregate kind of a numeric input read at its scale,
 * from the group's reduction r and its NaNs, as GpuAggNumericGroupResult
 * makes it: GPUAGG_HAVING_VALUE with *v, GPUAGG_HAVING_NULL, or
 * GPUAGG_HAVING_UNKNOWN.
 */
int
GpuAggHavingFixed(const GpuAggInput *in, GpuextAggKind kind, const GpuextGroupResult *r, int64 nans, int128 *v)
{
	if (kind == GPUEXT_AGG_COUNT)
	{
		*v = (int64) r->count + nans;
		return GPUAGG_HAVING_VALUE;
	}
	if ((int64) r->count + nans == 0)
		return GPUAGG_HAVING_NULL;
	if (nans > 0 || kind == GPUEXT_AGG_AVG)
		return GPUAGG_HAVING_UNKNOWN;
	if (kind == GPUEXT_AGG_SUM)
		*v = (int128) (((uint128) (uint64) r->isum_hi << 64) | r->isum_lo);
	else
		*v = DatumGetInt64(in->type->key_datum(kind == GPUEXT_AGG_MIN ? r->min_key : r->max_key));
	return GPUAGG_HAVING_VALUE;
}

/*
 * Whether a group fails one of the tests, its aggregates' values given by
 * fetch: then the qual rejects it (a NULL fails a strict operator), and it is
 * counted as removed by the filter.
 */
bool
GpuAggHavingFails(GpuAggState *st, GpuAggHavingFetch fetch, const void *arg)
{
	for (int i = 0; i < st->groups.nhaving; i++)
	{
		const GpuAggHavingTest *t = &st->groups.having[i];
		int128		v = 0;
		bool		holds;

		switch (fetch(st, arg, t->agg, &v))
		{
			case GPUAGG_HAVING_UNKNOWN:
				continue;
			case GPUAGG_HAVING_VALUE:
				break;
			default:
				InstrCountFiltered1(&st->css.ss.ps, 1);
				st->stats.having_rejected++;
				return true;
		}
		switch (t->strategy)
		{
			case BTLessStrategyNumber:
				holds = v < t->value;
				break;
			case BTLessEqualStrategyNumber:
				holds = v <= t->value;
				break;
			case BTEqualStrategyNumber:
				holds = v == t->value;
				break;
			case BTGreaterEqualStrategyNumber:
				holds = v >= t->value;
				break;
			case BTGreaterStrategyNumber:
				holds = v > t->value;
				break;
			default:
				holds = v != t->value;
				break;
		}
		if (!holds)
		{
			InstrCountFiltered1(&st->css.ss.ps, 1);
			st->stats.having_rejected++;
			return true;
		}
	}
	return false;
}
