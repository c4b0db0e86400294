/*
 * gpuagg_having.c
 *		HAVING conditions of the form "aggregate op constant" tested on a
 *		group's counts and exact fixed-point sums before its row is made, so
 *		that the groups that fail are passed over without making their
 *		aggregates' values and keys (TPC-H Q18's subquery: 2.5M groups, of
 *		which 112 pass).
 *
 * A test is taken for count(*) and count(x) against an integer constant; for
 * sum, min and max of smallint, integer and bigint against a constant of
 * their results' types; and for sum, min and max of a numeric read as a
 * bigint at its scale against a numeric constant exact at that scale; under
 * an operator of the result type's btree family.  A group's value that is
 * not known exactly there (a NaN seen, avg) leaves the test undecided, and a
 * node with an aggregate whose value can raise an error takes none.  The
 * plan's qual still runs on the groups that pass: a test only passes over
 * groups that the qual rejects, each counted as removed by the filter.
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"

#include "gpuagg.h"
#include "gpuagg_conditions.h"

/* One test: aggregate agg's value (at its input's scale) against value under a btree strategy. */
typedef struct GpuAggHavingTest
{
	int			agg;
	int			strategy;		/* a btree strategy, or ROWCMP_NOT_EQUAL (GpuAggBtreeStrategy) */
	int128		value;
} GpuAggHavingTest;

/* The integer type of an input whose groups' reductions the tests read, else InvalidOid. */
static Oid
IntegerInput(const GpuAggInput *in)
{
	if (in == NULL || in->type == NULL || in->numeric_scale >= 0)
		return InvalidOid;
	return in->type->typid == INT2OID || in->type->typid == INT4OID || in->type->typid == INT8OID ?
		in->type->typid : InvalidOid;
}

/* Whether the tests read an input's groups' reductions (GpuAggHavingFixed). */
bool
GpuAggHavingReads(const GpuAggInput *in)
{
	return in->numeric_scale >= 0 || OidIsValid(IntegerInput(in));
}

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

/*
 * The test for one conjunct of the qual, where it is aggregate op constant
 * (either way round) under the btree family of the aggregate's type, whose
 * values the groups hold exactly.
 */
static bool
MakeTest(GpuAggState *st, Node *q, GpuAggHavingTest *t)
{
	OpExpr	   *op;
	Node	   *l;
	Node	   *r;
	Var		   *var;
	Const	   *c;
	bool		commuted;
	Oid			lefttype;
	Oid			righttype;
	Oid			intype;
	GpuAggInput *in;

	if (!IsA(q, OpExpr) || list_length(((OpExpr *) q)->args) != 2)
		return false;
	op = (OpExpr *) q;
	l = linitial(op->args);
	r = lsecond(op->args);
	commuted = IsA(r, Var) && IsA(l, Const);
	if (commuted)
	{
		Node	   *swap = l;

		l = r;
		r = swap;
	}
	if (!IsA(l, Var) || !IsA(r, Const))
		return false;
	var = (Var *) l;
	c = (Const *) r;
	if (var->varno != INDEX_VAR || var->varattno < 1 || var->varattno > st->naggs || c->constisnull ||
		!GpuAggBtreeStrategy(op->opno, var->vartype, &t->strategy, &lefttype, &righttype))
		return false;
	if (commuted && t->strategy != ROWCMP_NOT_EQUAL)
		t->strategy = BTCommuteStrategyNumber(t->strategy);
	t->agg = var->varattno - 1;
	in = st->agg_input[t->agg] >= 0 ? &st->inputs[st->agg_input[t->agg]] : NULL;
	intype = IntegerInput(in);
	if (st->kinds[t->agg] == GPUEXT_AGG_COUNT)
		return var->vartype == INT8OID && IntegerConst(c, &t->value);
	if (OidIsValid(intype) && st->kinds[t->agg] != GPUEXT_AGG_AVG)
	{
		/* a sum of smallint or integer is a bigint, of bigint a numeric at scale 0; min and max of the type */
		if (st->kinds[t->agg] == GPUEXT_AGG_SUM && intype == INT8OID)
			return var->vartype == NUMERICOID && c->consttype == NUMERICOID &&
				GpuextNumericToFixed(c->constvalue, 0, &t->value) == 0;
		return var->vartype == (st->kinds[t->agg] == GPUEXT_AGG_SUM ? INT8OID : intype) && IntegerConst(c, &t->value);
	}
	/* sum, min and max of a numeric read at its scale: a constant exact there */
	return in != NULL && in->numeric_scale >= 0 && st->kinds[t->agg] != GPUEXT_AGG_AVG &&
		var->vartype == NUMERICOID && c->consttype == NUMERICOID &&
		GpuextNumericToFixed(c->constvalue, in->numeric_scale, &t->value) == 0;
}

/*
 * Whether no aggregate's value can raise an error as its group's row is made
 * (a float sum's overflow): PostgreSQL raises those for groups that HAVING
 * rejects too, so no group may be passed over.  A sum of smallint or integer
 * leaves bigint's range only past 2^32 rows: *rows_check, such groups are
 * not passed over.
 */
static bool
ResultsCannotFail(GpuAggState *st, bool *rows_check)
{
	*rows_check = false;
	for (int a = 0; a < st->naggs; a++)
	{
		GpuAggInput *in = st->agg_input[a] >= 0 ? &st->inputs[st->agg_input[a]] : NULL;
		Oid			intype = IntegerInput(in);

		if (OidIsValid(intype))
			*rows_check |= st->kinds[a] == GPUEXT_AGG_SUM && intype != INT8OID;
		else if (in != NULL && in->type != NULL && in->numeric_scale < 0 &&
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
	if (st->groups.nkeys == 0 || qual == NIL || !ResultsCannotFail(st, &st->groups.having_rows_check))
		return;
	st->groups.having = palloc(sizeof(GpuAggHavingTest) * list_length(qual));
	foreach(lc, qual)
		if (MakeTest(st, lfirst(lc), &st->groups.having[st->groups.nhaving]))
			st->groups.nhaving++;
}

/*
 * A group's value of aggregate kind of an input the tests read, from the
 * group's reduction r and its NaNs, as the group's row would make it (a
 * numeric at the input's scale as a bigint there): GPUAGG_HAVING_VALUE with
 * *v, GPUAGG_HAVING_NULL, or GPUAGG_HAVING_UNKNOWN.
 */
int
GpuAggHavingFixed(const GpuAggInput *in, GpuextAggKind kind, const GpuextGroupResult *r, int64 nans, int128 *v)
{
	Oid			typid = in->type->typid;
	Datum		d;

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
	{
		*v = (int128) (((uint128) (uint64) r->isum_hi << 64) | r->isum_lo);
		/* a bigint sum past its range: the row raises PostgreSQL's error */
		return in->numeric_scale < 0 && typid != INT8OID && (*v < PG_INT64_MIN || *v > PG_INT64_MAX) ?
			GPUAGG_HAVING_UNKNOWN : GPUAGG_HAVING_VALUE;
	}
	d = in->type->key_datum(kind == GPUEXT_AGG_MIN ? r->min_key : r->max_key);
	*v = typid == INT2OID ? DatumGetInt16(d) : typid == INT4OID ? DatumGetInt32(d) : DatumGetInt64(d);
	return GPUAGG_HAVING_VALUE;
}

/*
 * Whether a group fails one of the tests, its aggregates' values given by
 * fetch (agg -1: its rows): then the qual rejects it (a NULL fails a strict
 * operator), and it is counted as removed by the filter.
 */
bool
GpuAggHavingFails(GpuAggState *st, GpuAggHavingFetch fetch, const void *arg)
{
	if (st->groups.having_rows_check)
	{
		int128		rows = 0;

		fetch(st, arg, -1, &rows);
		if (rows >= (int128) 1 << 32)
			return false;
	}
	for (int i = 0; i < st->groups.nhaving; i++)
	{
		const GpuAggHavingTest *t = &st->groups.having[i];
		int128		v = 0;
		int			known = fetch(st, arg, t->agg, &v);

		if (known == GPUAGG_HAVING_UNKNOWN ||
			(known == GPUAGG_HAVING_VALUE && GpuAggStrategyHolds(t->strategy, v < t->value ? -1 : v > t->value)))
			continue;
		InstrCountFiltered1(&st->css.ss.ps, 1);
		st->stats.having_rejected++;
		return true;
	}
	return false;
}
