/*
 * gpuagg_conditions_lists.c
 *		IN and NOT IN lists of GpuAgg's compiled conditions
 *		(gpuagg_conditions.c): integers and floats as sorted lists of values,
 *		text as ORs of its = comparisons, NOT IN as the NOT of the list.
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "gpuagg.h"
#include "gpuagg_conditions.h"

/* Whether the column's value at p is one of an IN list's (equal as the type's = says: NaN to NaN, -0 to 0). */
bool
GpuAggInList(const RowCmp *c, const char *p)
{
	if (c->kind == ROWCMP_INT)
	{
		int64		v = GpuAggIntAt(p, c->len);
		int			lo = 0,
					hi = c->in_n;

		while (lo < hi)
		{
			int			mid = (lo + hi) / 2;

			if (c->in_ivals[mid] < v)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo < c->in_n && c->in_ivals[lo] == v;
	}
	else
	{
		float8		v = c->len == 8 ? DatumGetFloat8(fetch_att(p, true, 8)) :
			(float8) DatumGetFloat4(fetch_att(p, true, 4));

		for (int i = 0; i < c->in_n; i++)
			if (float8_cmp_internal(v, c->in_fvals[i]) == 0)
				return true;
		return false;
	}
}

/* Whether a type is one of the integers, or one of the floats. */
static inline bool
IntegerType(Oid type)
{
	return type == INT2OID || type == INT4OID || type == INT8OID;
}

static inline bool
FloatType(Oid type)
{
	return type == FLOAT4OID || type == FLOAT8OID;
}

/* Ascending int64s, for qsort. */
static int
CmpInt64(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return x < y ? -1 : x > y;
}

/*
 * column IN (constants) (= ANY of an array constant of the column's own
 * type, under its btree =) compiled as a list of its non-NULL values, which
 * is all a WHERE clause or FILTER needs: a NULL among them makes a row that
 * matches none NULL, which passes no more than false does.  False where it
 * is not of that form.
 */
bool
GpuAggCompileIn(CustomScan *cscan, ScalarArrayOpExpr *sa, RowCmp *c)
{
	Node	   *left = linitial(sa->args);
	Node	   *right = lsecond(sa->args);
	TypeCacheEntry *tc;
	ArrayType  *arr;
	Datum	   *vals;
	bool	   *nulls;
	int			n,
				strategy;
	int16		typlen;
	bool		byval;
	char		align;
	Oid			lefttype,
				righttype,
				elemtype;

	memset(c, 0, sizeof(RowCmp));
	if (!sa->useOr || list_length(sa->args) != 2 || !IsA(left, Var) || !IsA(right, Const) ||
		((Const *) right)->constisnull)
		return false;
	c->att = GpuAggScanColumn(cscan, (Expr *) left);
	c->coltype = ((Var *) left)->vartype;
	if (c->att == 0 || !GpuAggCmpKind(c->coltype, &c->kind))
		return false;
	arr = DatumGetArrayTypeP(((Const *) right)->constvalue);
	elemtype = ARR_ELEMTYPE(arr);
	tc = lookup_type_cache(c->coltype, TYPECACHE_BTREE_OPFAMILY);
	/* the list of the column's type, or of another width of integer or float (int24eq, float48eq) */
	if ((elemtype != c->coltype && !(IntegerType(elemtype) && IntegerType(c->coltype)) &&
		 !(FloatType(elemtype) && FloatType(c->coltype))) ||
		!OidIsValid(tc->btree_opf) || !op_in_opfamily(sa->opno, tc->btree_opf))
		return false;
	get_op_opfamily_properties(sa->opno, tc->btree_opf, false, &strategy, &lefttype, &righttype);
	if (strategy != BTEqualStrategyNumber || lefttype != c->coltype || righttype != elemtype)
		return false;
	c->len = get_typlen(c->coltype);
	get_typlenbyvalalign(elemtype, &typlen, &byval, &align);
	deconstruct_array(arr, elemtype, typlen, byval, align, &vals, &nulls, &n);
	c->strategy = BTEqualStrategyNumber;
	c->in_ivals = palloc(sizeof(int64) * Max(n, 1));
	c->in_fvals = palloc(sizeof(float8) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
		{
			c->in_nulls = true;
			continue;
		}
		if (c->kind == ROWCMP_FLOAT)
			c->in_fvals[c->in_n++] = typlen == 8 ? DatumGetFloat8(vals[i]) : (float8) DatumGetFloat4(vals[i]);
		else
			c->in_ivals[c->in_n++] = typlen == 8 ? DatumGetInt64(vals[i]) :
				typlen == 4 ? DatumGetInt32(vals[i]) : DatumGetInt16(vals[i]);
	}
	if (c->kind == ROWCMP_INT)
		qsort(c->in_ivals, c->in_n, sizeof(int64), CmpInt64);
	/* a list of NULLs alone is left to the executor */
	return c->in_n > 0;
}

/* Make c the NOT of a condition of one comparison: where that comparison goes. */
RowCmp *
GpuAggNotOfOne(RowCmp *c)
{
	GpuAggRowQual *sub = palloc0(offsetof(GpuAggRowQual, cmps) + sizeof(RowCmp));

	memset(c, 0, sizeof(RowCmp));
	sub->ncmps = 1;
	c->kind = ROWCMP_BOOL;
	c->negate = true;
	c->subs = palloc(sizeof(GpuAggRowQual *));
	c->subs[0] = sub;
	c->nsubs = 1;
	return &sub->cmps[0];
}

/*
 * A text, varchar or char(n) column = ANY (constants), or <> ALL (NOT IN),
 * under a deterministic collation: an OR of the values' = (compiled as
 * CompileText compiles one), under a NOT for <> ALL.  A NULL in the list
 * is left out of the OR, and makes a NOT IN never true, which is left to
 * the executor.  False where it is not of that form.
 */
bool
GpuAggCompileTextIn(CustomScan *cscan, ScalarArrayOpExpr *sa, RowCmp *c)
{
	Node	   *right = lsecond(sa->args);
	Oid			func = get_opcode(sa->opno);
	bool		bpchar = func == F_BPCHAREQ || func == F_BPCHARNE;
	ArrayType  *arr;
	Datum	   *vals;
	bool	   *nulls;
	int			n;
	RowCmp	   *or = c;

	memset(c, 0, sizeof(RowCmp));
	if (list_length(sa->args) != 2 || !IsA(right, Const) || ((Const *) right)->constisnull ||
		(sa->useOr ? func != F_TEXTEQ && func != F_BPCHAREQ : func != F_TEXTNE && func != F_BPCHARNE))
		return false;
	arr = DatumGetArrayTypeP(((Const *) right)->constvalue);
	if (ARR_ELEMTYPE(arr) != (bpchar ? BPCHAROID : TEXTOID))
		return false;
	deconstruct_array(arr, ARR_ELEMTYPE(arr), -1, false, TYPALIGN_INT, &vals, &nulls, &n);
	/* <> ALL: NOT (column = any of them) */
	if (!sa->useOr)
		or = GpuAggNotOfOne(c);
	or->kind = ROWCMP_BOOL;
	or->subs = palloc(sizeof(GpuAggRowQual *) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		OpExpr	   *eq = makeNode(OpExpr);
		GpuAggRowQual *sub;

		if (nulls[i])
		{
			or->in_nulls = true;
			continue;
		}
		eq->opfuncid = bpchar ? F_BPCHAREQ : F_TEXTEQ;
		eq->inputcollid = sa->inputcollid;
		eq->args = list_make2(linitial(sa->args),
							  makeConst(ARR_ELEMTYPE(arr), -1, sa->inputcollid, -1, vals[i], false, false));
		sub = palloc0(offsetof(GpuAggRowQual, cmps) + sizeof(RowCmp));
		if (!GpuAggCompileText(cscan, (Node *) eq, &sub->cmps[0]))
			return false;
		sub->ncmps = 1;
		or->subs[or->nsubs++] = sub;
	}
	return or->nsubs > 0 && !(c->negate && or->in_nulls);
}

/*
 * column <> ALL (constants), as NOT IN is planned: the NOT of the IN list of
 * the operator's negator (=).  A NULL in the list makes it never true, which
 * is left to the executor.  False where it is not of that form.
 */
bool
GpuAggCompileNotIn(CustomScan *cscan, ScalarArrayOpExpr *sa, RowCmp *c)
{
	ScalarArrayOpExpr in = *sa;
	RowCmp	   *list = GpuAggNotOfOne(c);

	in.opno = get_negator(sa->opno);
	in.useOr = true;
	return OidIsValid(in.opno) && GpuAggCompileIn(cscan, &in, list) && !list->in_nulls;
}
