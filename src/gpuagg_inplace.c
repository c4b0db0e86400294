/*
 * gpuagg_inplace.c
 *		Which of GpuAgg's rows are read in place (gpuagg_exec.c), and their
 *		WHERE clause, FILTERs and double precision arguments compiled, so
 *		that a row is tested and its values computed from its bytes in the
 *		page, without a slot or the expression interpreter.
 *
 * A condition compiles when it is an AND of comparisons of a column (or of
 * an integer column modulo a positive constant of its type) with a constant
 * by the btree operators of the integers, date, timestamp, timestamptz,
 * real and double precision (cross-type within the integers and within the
 * floats).  An argument compiles when it is + - * / and unary minus of
 * double precision over columns of double precision (or of integers and
 * real cast to it) and constants.  They are evaluated by the same inline
 * functions as PostgreSQL's operators (utils/float.h), so that NaN,
 * infinities and the overflow and division errors are the same.  Numeric
 * arguments compile in gpuagg_numeric.c.  Anything else is not compiled,
 * and the node reads rows through a slot.
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/datetime.h"
#include "utils/fmgroids.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/typcache.h"

#include "agg_accum.h"
#include "gpuagg.h"

/* Registers of a compiled argument: its constants, its columns' values, its intermediate results. */
#define ROWEXPR_REGS 32

/* What a compiled comparison compares: signed integers, or floats as double precision. */
typedef enum RowCmpKind
{
	ROWCMP_INT,
	ROWCMP_FLOAT,
	ROWCMP_NUMERIC,				/* numeric(p, s) against a numeric, both at a scale as integers */
	ROWCMP_NULLTEST				/* IS NULL (strategy ROWCMP_IS_NULL) or IS NOT NULL */
} RowCmpKind;

/* Strategies past btree's: <> (the negator of a btree =), and the null tests. */
#define ROWCMP_NOT_EQUAL GPUEXT_SCAN_NOT_EQUAL
#define ROWCMP_IS_NULL 1
#define ROWCMP_IS_NOT_NULL 2

/* One comparison of a column with a constant: column <strategy> constant. */
typedef struct RowCmp
{
	AttrNumber	att;
	int16		len;
	Oid			coltype;
	RowCmpKind	kind;
	StrategyNumber strategy;
	int64		ival;
	float8		fval;
	int64		modulus;		/* > 0: the column's value % modulus is compared */
	int			nscale;			/* numeric: the scale both are compared at, */
	int128		nval;			/* ... the constant at it, */
	Datum		nconst;			/* ... and itself */
	int			in_n;			/* > 0: column IN (a list): its non-NULL values, */
	int64	   *in_ivals;		/* ... integers sorted */
	float8	   *in_fvals;		/* ... or floats */
} RowCmp;

struct GpuAggRowQual
{
	int			ncmps;
	RowCmp		cmps[FLEXIBLE_ARRAY_MEMBER];
};

/* One operation: regs[dst] = regs[a] op regs[b]. */
typedef struct RowStep
{
	GpuAggRowOp		op;
	uint8		dst;
	uint8		a;
	uint8		b;
} RowStep;

/* One column read into a register. */
typedef struct RowLoad
{
	AttrNumber	att;
	Oid			coltype;
	uint8		dst;
} RowLoad;

/* One or more arguments' operations, an expression that occurs twice computed once. */
struct GpuAggRowExpr
{
	int			nregs;
	int			nloads;
	int			nsteps;
	RowLoad		loads[ROWEXPR_REGS];
	RowStep		steps[ROWEXPR_REGS];
	float8		regs[ROWEXPR_REGS]; /* the constants set once, the rest per row */
	List	   *memo;			/* the operations compiled ... */
	List	   *memo_regs;		/* ... and the registers holding them */
};

/* A table column's value as double precision, read in place. */
static inline float8
ColumnFloat8(const char *tp, const int *att_off, AttrNumber att, Oid type)
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
		default:
			return (float8) DatumGetInt16(fetch_att(p, true, 2));
	}
}

/*
 * A numeric column's value at p against the comparison's constant, as
 * numeric_cmp compares them (NaN above every number): as integers at the
 * comparison's scale, where the value is exact there, which its type's
 * scale assures; else through numeric_cmp.
 */
static int
NumericCmp(const RowCmp *c, const char *p)
{
	int128		v;

	switch (GpuextNumericToFixed(PointerGetDatum(p), c->nscale, &v))
	{
		case 0:
			return v < c->nval ? -1 : v > c->nval ? 1 : 0;
		case 1:
			return 1;
		default:
			return DatumGetInt32(DirectFunctionCall2(numeric_cmp, PointerGetDatum(p), c->nconst));
	}
}

/* Whether the column's value at p is one of an IN list's (equal as the type's = says: NaN to NaN, -0 to 0). */
static bool
InList(const RowCmp *c, const char *p)
{
	if (c->kind == ROWCMP_INT)
	{
		int64		v = c->len == 8 ? DatumGetInt64(fetch_att(p, true, 8)) :
			c->len == 4 ? DatumGetInt32(fetch_att(p, true, 4)) : DatumGetInt16(fetch_att(p, true, 2));
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

/* Whether a row passes every compiled comparison of the WHERE clause or a FILTER. */
bool
GpuAggRowQualPasses(const GpuAggRowQual *q, const char *tp, const int *att_off)
{
	for (int i = 0; i < q->ncmps; i++)
	{
		const RowCmp *c = &q->cmps[i];
		int			cmp;

		/* a row read in place has all its columns, none NULL */
		if (c->kind == ROWCMP_NULLTEST)
		{
			if (c->strategy == ROWCMP_IS_NULL)
				return false;
			continue;
		}
		if (c->in_n > 0)
		{
			if (!InList(c, tp + att_off[c->att - 1]))
				return false;
			continue;
		}
		if (c->kind == ROWCMP_INT)
		{
			const char *p = tp + att_off[c->att - 1];
			int64		v;

			v = c->len == 8 ? DatumGetInt64(fetch_att(p, true, 8)) :
				c->len == 4 ? DatumGetInt32(fetch_att(p, true, 4)) : DatumGetInt16(fetch_att(p, true, 2));
			if (c->modulus > 0)
				v %= c->modulus;
			cmp = v < c->ival ? -1 : v > c->ival ? 1 : 0;
		}
		else if (c->kind == ROWCMP_NUMERIC)
			cmp = NumericCmp(c, tp + att_off[c->att - 1]);
		else
			cmp = float8_cmp_internal(ColumnFloat8(tp, att_off, c->att, c->coltype), c->fval);
		switch (c->strategy)
		{
			case BTLessStrategyNumber:
				if (cmp >= 0)
					return false;
				break;
			case BTLessEqualStrategyNumber:
				if (cmp > 0)
					return false;
				break;
			case BTEqualStrategyNumber:
				if (cmp != 0)
					return false;
				break;
			case BTGreaterEqualStrategyNumber:
				if (cmp < 0)
					return false;
				break;
			case ROWCMP_NOT_EQUAL:
				if (cmp == 0)
					return false;
				break;
			default:
				if (cmp <= 0)
					return false;
				break;
		}
	}
	return true;
}

/* Compute every argument of a program for a row read in place: its registers. */
const float8 *
GpuAggRowExprRun(GpuAggRowExpr *e, const char *tp, const int *att_off)
{
	float8	   *r = e->regs;

	for (int i = 0; i < e->nloads; i++)
		r[e->loads[i].dst] = ColumnFloat8(tp, att_off, e->loads[i].att, e->loads[i].coltype);
	for (int i = 0; i < e->nsteps; i++)
	{
		const RowStep *s = &e->steps[i];

		switch (s->op)
		{
			case ROWOP_ADD:
				r[s->dst] = float8_pl(r[s->a], r[s->b]);
				break;
			case ROWOP_SUB:
				r[s->dst] = float8_mi(r[s->a], r[s->b]);
				break;
			case ROWOP_MUL:
				r[s->dst] = float8_mul(r[s->a], r[s->b]);
				break;
			case ROWOP_DIV:
				r[s->dst] = float8_div(r[s->a], r[s->b]);
				break;
			case ROWOP_NEG:
				r[s->dst] = -r[s->a];
				break;
		}
	}
	return r;
}

/*
 * A program's registers for a page's rows, register r of row j at
 * cols[r * MaxHeapTuplesPerPage + j], with its constants filled in.
 */
float8 *
GpuAggRowExprColumns(const GpuAggRowExpr *e)
{
	float8	   *cols = palloc(sizeof(float8) * MaxHeapTuplesPerPage * Max(e->nregs, 1));
	bool		computed[ROWEXPR_REGS] = {0};

	for (int i = 0; i < e->nloads; i++)
		computed[e->loads[i].dst] = true;
	for (int i = 0; i < e->nsteps; i++)
		computed[e->steps[i].dst] = true;
	for (int r = 0; r < e->nregs; r++)
		for (int j = 0; j < MaxHeapTuplesPerPage && !computed[r]; j++)
			cols[(Size) r * MaxHeapTuplesPerPage + j] = e->regs[r];
	return cols;
}

/* One row's columns into row j of a program's register columns. */
void
GpuAggRowExprLoad(const GpuAggRowExpr *e, const char *tp, const int *att_off, float8 *cols, int j)
{
	for (int i = 0; i < e->nloads; i++)
		cols[(Size) e->loads[i].dst * MaxHeapTuplesPerPage + j] =
			ColumnFloat8(tp, att_off, e->loads[i].att, e->loads[i].coltype);
}

/* A program's operations over n loaded rows, one operation over all of them at a time. */
void
GpuAggRowExprRunColumns(const GpuAggRowExpr *e, float8 *cols, int n)
{
	for (int i = 0; i < e->nsteps; i++)
	{
		const RowStep *s = &e->steps[i];
		float8	   *d = cols + (Size) s->dst * MaxHeapTuplesPerPage;
		const float8 *a = cols + (Size) s->a * MaxHeapTuplesPerPage;
		const float8 *b = cols + (Size) s->b * MaxHeapTuplesPerPage;

		switch (s->op)
		{
			case ROWOP_ADD:
				for (int j = 0; j < n; j++)
					d[j] = float8_pl(a[j], b[j]);
				break;
			case ROWOP_SUB:
				for (int j = 0; j < n; j++)
					d[j] = float8_mi(a[j], b[j]);
				break;
			case ROWOP_MUL:
				for (int j = 0; j < n; j++)
					d[j] = float8_mul(a[j], b[j]);
				break;
			case ROWOP_DIV:
				for (int j = 0; j < n; j++)
					d[j] = float8_div(a[j], b[j]);
				break;
			case ROWOP_NEG:
				for (int j = 0; j < n; j++)
					d[j] = -a[j];
				break;
		}
	}
}

/* The table column a scan-tuple Var stands for (possibly under a cast to double precision), or 0. */
static AttrNumber
CompiledColumn(CustomScan *cscan, Node *node, Oid *type)
{
	AttrNumber	att;

	if (IsA(node, FuncExpr))
	{
		FuncExpr   *f = (FuncExpr *) node;

		if (list_length(f->args) != 1 ||
			(f->funcid != F_FLOAT8_INT2 && f->funcid != F_FLOAT8_INT4 && f->funcid != F_FLOAT8_INT8 &&
			 f->funcid != F_FLOAT8_FLOAT4))
			return 0;
		node = linitial(f->args);
		if (!IsA(node, Var))
			return 0;
	}
	if (!IsA(node, Var))
		return 0;
	att = GpuAggScanColumn(cscan, (Expr *) node);
	*type = ((Var *) node)->vartype;
	return att;
}

/* Which of a type's + - * / and unary minus op calls (InvalidOid: one not compiled), with its arguments; false for none. */
bool
GpuAggArithOp(OpExpr *op, Oid add, Oid sub, Oid mul, Oid div, Oid neg, GpuAggRowOp *kind)
{
	if (op->opfuncid == add)
		*kind = ROWOP_ADD;
	else if (op->opfuncid == sub)
		*kind = ROWOP_SUB;
	else if (op->opfuncid == mul)
		*kind = ROWOP_MUL;
	else if (OidIsValid(div) && op->opfuncid == div)
		*kind = ROWOP_DIV;
	else if (op->opfuncid == neg)
		*kind = ROWOP_NEG;
	else
		return false;
	return list_length(op->args) == (*kind == ROWOP_NEG ? 1 : 2);
}

/* The register holding node's value as double precision (steps added), or -1 where it is not of the forms compiled. */
static int
CompileFloat8(CustomScan *cscan, Node *node, GpuAggRowExpr *e)
{
	RowStep    *s;
	int			a;
	int			b = 0;

	if (e->nregs == ROWEXPR_REGS)
		return -1;
	if (IsA(node, Const))
	{
		Const	   *c = (Const *) node;

		if (c->consttype != FLOAT8OID || c->constisnull)
			return -1;
		e->regs[e->nregs] = DatumGetFloat8(c->constvalue);
		return e->nregs++;
	}
	if (IsA(node, OpExpr) && ((OpExpr *) node)->opresulttype == FLOAT8OID)
	{
		OpExpr	   *op = (OpExpr *) node;
		GpuAggRowOp		kind;
		ListCell   *lc;

		foreach(lc, e->memo)
			if (equal(lfirst(lc), node))
				return list_nth_int(e->memo_regs, foreach_current_index(lc));

		if (!GpuAggArithOp(op, F_FLOAT8PL, F_FLOAT8MI, F_FLOAT8MUL, F_FLOAT8DIV, F_FLOAT8UM, &kind))
			return -1;
		if ((a = CompileFloat8(cscan, linitial(op->args), e)) < 0 ||
			(kind != ROWOP_NEG && (b = CompileFloat8(cscan, lsecond(op->args), e)) < 0) ||
			e->nregs == ROWEXPR_REGS)
			return -1;
		s = &e->steps[e->nsteps++];
		s->op = kind;
		s->a = a;
		s->b = b;
		s->dst = e->nregs++;
		e->memo = lappend(e->memo, node);
		e->memo_regs = lappend_int(e->memo_regs, s->dst);
		return s->dst;
	}
	{
		Oid			type;
		AttrNumber	att = CompiledColumn(cscan, node, &type);

		if (att == 0 || (IsA(node, Var) && type != FLOAT8OID))
			return -1;
		for (int i = 0; i < e->nloads; i++)
			if (e->loads[i].att == att && e->loads[i].coltype == type)
				return e->loads[i].dst;
		e->loads[e->nloads].att = att;
		e->loads[e->nloads].coltype = type;
		e->loads[e->nloads].dst = e->nregs;
		e->nloads++;
		return e->nregs++;
	}
}

/* An empty program of double precision arguments. */
GpuAggRowExpr *
GpuAggRowExprCreate(void)
{
	return palloc0(sizeof(GpuAggRowExpr));
}

/*
 * Compile a double precision argument into a program: the register that will
 * hold its value, or -1 (the program as it was) where it is not of the forms
 * compiled.
 */
int
GpuAggRowExprAdd(GpuAggRowExpr *e, CustomScan *cscan, Expr *expr)
{
	GpuAggRowExpr saved = *e;
	int			result;

	if (exprType((Node *) expr) != FLOAT8OID)
		return -1;
	result = CompileFloat8(cscan, (Node *) expr, e);
	if (result < 0)
	{
		e->nregs = saved.nregs;
		e->nloads = saved.nloads;
		e->nsteps = saved.nsteps;
		e->memo = list_truncate(e->memo, list_length(saved.memo));
		e->memo_regs = list_truncate(e->memo_regs, list_length(saved.memo_regs));
	}
	return result;
}

/*
 * Whether values of the type are read from a row's bytes as signed integers
 * (ints, date, timestamps) or as floats (*is_float): the one list of the
 * types compiled conditions compare and the device scan reads.
 */
bool
GpuAggCompiledType(Oid type, bool *is_float)
{
	switch (type)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case DATEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			*is_float = false;
			return true;
		case FLOAT4OID:
		case FLOAT8OID:
			*is_float = true;
			return true;
		default:
			return false;
	}
}

/* Whether the column type is compared as signed integers or as floats. */
static bool
CmpKind(Oid type, RowCmpKind *kind)
{
	bool		is_float;

	if (!GpuAggCompiledType(type, &is_float))
		return false;
	*kind = is_float ? ROWCMP_FLOAT : ROWCMP_INT;
	return true;
}

/* A Var, or a Var % a positive constant of its integer type (the modulus in *modulus, else 0); NULL for neither. */
Node *
GpuAggModColumn(Node *node, int64 *modulus)
{
	OpExpr	   *m = (OpExpr *) node;
	Const	   *k;

	*modulus = 0;
	if (IsA(node, Var))
		return node;
	if (!IsA(node, OpExpr) || list_length(m->args) != 2 || !IsA(linitial(m->args), Var) ||
		!IsA(lsecond(m->args), Const) || (m->opfuncid != F_INT2MOD && m->opfuncid != F_INT4MOD &&
										   m->opfuncid != F_INT8MOD))
		return NULL;
	k = lsecond(m->args);
	if (k->constisnull || k->consttype != m->opresulttype || exprType(linitial(m->args)) != m->opresulttype)
		return NULL;
	*modulus = k->consttype == INT2OID ? DatumGetInt16(k->constvalue) :
		k->consttype == INT4OID ? DatumGetInt32(k->constvalue) : DatumGetInt64(k->constvalue);
	return *modulus > 0 ? linitial(m->args) : NULL;
}

/*
 * date <op> timestamp (the planner folds date '1998-12-01' - interval '90 day'
 * to a timestamp) as the date against an integer, with the answers of
 * date_cmp_timestamp: a date is its midnight, the infinities each other's
 * and a date past the timestamps' range above every finite timestamp.
 */
static void
DateAgainstTimestamp(RowCmp *c)
{
	int64		ts = c->ival;
	int64		lo;
	bool		exact;

	if (ts == DT_NOBEGIN || ts == DT_NOEND)
	{
		c->ival = ts == DT_NOBEGIN ? DATEVAL_NOBEGIN : DATEVAL_NOEND;
		return;
	}
	lo = ts / USECS_PER_DAY - (ts % USECS_PER_DAY != 0 && ts < 0);
	exact = ts % USECS_PER_DAY == 0;
	switch (c->strategy)
	{
		case BTLessStrategyNumber:
		case BTGreaterEqualStrategyNumber:
			c->ival = exact ? lo : lo + 1;
			break;
		case BTEqualStrategyNumber:
		case ROWCMP_NOT_EQUAL:
			c->ival = lo;
			if (!exact)
			{
				/* no date is that timestamp: = nothing passes, <> everything */
				c->strategy = c->strategy == BTEqualStrategyNumber ? BTLessStrategyNumber : BTGreaterEqualStrategyNumber;
				c->ival = PG_INT64_MIN;
			}
			break;
		default:
			c->ival = lo;
			break;
	}
}

/* timestamp <op> date: the date as the timestamp of its midnight; false where it has none (past the range). */
static bool
TimestampAgainstDate(RowCmp *c)
{
	int32		d = (int32) c->ival;

	if (d == DATEVAL_NOBEGIN || d == DATEVAL_NOEND)
	{
		c->ival = d == DATEVAL_NOBEGIN ? DT_NOBEGIN : DT_NOEND;
		return true;
	}
	if (d < 0 ? d < (int64) (DATETIME_MIN_JULIAN - POSTGRES_EPOCH_JDATE) :
		d >= (int64) (TIMESTAMP_END_JULIAN - POSTGRES_EPOCH_JDATE))
		return false;
	c->ival = (int64) d * USECS_PER_DAY;
	return true;
}

/*
 * A numeric(p, s) column against a numeric constant: both as integers at the
 * larger of s and the constant's scale, where every value of the column is
 * exact and within 38 digits; false where they are not, or the constant is
 * NaN or an infinity.
 */
static bool
NumericConst(RowCmp *c, int32 typmod, Const *k)
{
	int			precision = 0;
	int			scale = GpuAggTypmodScale(typmod, &precision);
	int			kscale;

	if (scale < 0 || k->constisnull || numeric_is_nan(DatumGetNumeric(k->constvalue)) ||
		numeric_is_inf(DatumGetNumeric(k->constvalue)))
		return false;
	kscale = DatumGetInt32(DirectFunctionCall1(numeric_scale, k->constvalue));
	c->nscale = Max(scale, kscale);
	if (precision - scale + c->nscale > 38 || GpuextNumericToFixed(k->constvalue, c->nscale, &c->nval) != 0)
		return false;
	c->kind = ROWCMP_NUMERIC;
	c->nconst = k->constvalue;
	c->modulus = 0;
	return true;
}

/* One conjunct compiled as column <op> constant (or column % constant <op> constant), false where it is not of that form. */
static bool
CompileCmp(CustomScan *cscan, Node *node, RowCmp *c)
{
	OpExpr	   *op = (OpExpr *) node;
	Node	   *left;
	Node	   *right;
	Const	   *k;
	bool		commuted = false;
	TypeCacheEntry *tc;
	int			strategy;
	Oid			lefttype;
	Oid			righttype;
	RowCmpKind	constkind;
	bool		not_equal = false;

	if (!IsA(node, OpExpr) || list_length(op->args) != 2)
		return false;
	left = linitial(op->args);
	right = lsecond(op->args);
	if (IsA(left, Const))
	{
		Node	   *t = left;

		left = right;
		right = t;
		commuted = true;
	}
	left = GpuAggModColumn(left, &c->modulus);
	if (left == NULL || !IsA(right, Const) || ((Const *) right)->constisnull)
		return false;
	k = (Const *) right;
	c->coltype = ((Var *) left)->vartype;
	c->att = GpuAggScanColumn(cscan, (Expr *) left);
	if (c->att > 0 && c->coltype == NUMERICOID && k->consttype == NUMERICOID)
	{
		if (!NumericConst(c, ((Var *) left)->vartypmod, k))
			return false;
	}
	else if (c->att == 0 || !CmpKind(c->coltype, &c->kind) || !CmpKind(k->consttype, &constkind) ||
			 constkind != c->kind)
		return false;
	/* Only the type's own btree operators, and <> as the negator of its =; across types, only integers
	 * with integers, floats with floats, and date with timestamp */
	tc = lookup_type_cache(c->coltype, TYPECACHE_BTREE_OPFAMILY);
	if (!OidIsValid(tc->btree_opf))
		return false;
	if (op_in_opfamily(op->opno, tc->btree_opf))
		get_op_opfamily_properties(op->opno, tc->btree_opf, false, &strategy, &lefttype, &righttype);
	else
	{
		Oid			eq = get_negator(op->opno);

		if (!OidIsValid(eq) || !op_in_opfamily(eq, tc->btree_opf))
			return false;
		get_op_opfamily_properties(eq, tc->btree_opf, false, &strategy, &lefttype, &righttype);
		if (strategy != BTEqualStrategyNumber)
			return false;
		not_equal = true;
	}
	if ((commuted ? righttype : lefttype) != c->coltype || (commuted ? lefttype : righttype) != k->consttype)
		return false;
	if (c->kind == ROWCMP_INT && c->coltype != k->consttype &&
		!((c->coltype == INT2OID || c->coltype == INT4OID || c->coltype == INT8OID) &&
		  (k->consttype == INT2OID || k->consttype == INT4OID || k->consttype == INT8OID)) &&
		!(c->coltype == DATEOID && k->consttype == TIMESTAMPOID) &&
		!(c->coltype == TIMESTAMPOID && k->consttype == DATEOID))
		return false;
	if (commuted)
		strategy = BTCommuteStrategyNumber(strategy);
	c->strategy = not_equal ? ROWCMP_NOT_EQUAL : strategy;
	c->len = get_typlen(c->coltype);
	if (c->kind == ROWCMP_NUMERIC)
		return true;
	switch (k->consttype)
	{
		case INT2OID:
			c->ival = DatumGetInt16(k->constvalue);
			break;
		case INT4OID:
		case DATEOID:
			c->ival = DatumGetInt32(k->constvalue);
			break;
		case FLOAT4OID:
			c->fval = (float8) DatumGetFloat4(k->constvalue);
			break;
		case FLOAT8OID:
			c->fval = DatumGetFloat8(k->constvalue);
			break;
		default:
			c->ival = DatumGetInt64(k->constvalue);
			break;
	}
	if (c->coltype == DATEOID && k->consttype == TIMESTAMPOID)
		DateAgainstTimestamp(c);
	else if (c->coltype == TIMESTAMPOID && k->consttype == DATEOID)
		return TimestampAgainstDate(c);
	return true;
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
static bool
CompileIn(CustomScan *cscan, ScalarArrayOpExpr *sa, RowCmp *c)
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
				righttype;

	memset(c, 0, sizeof(RowCmp));
	if (!sa->useOr || list_length(sa->args) != 2 || !IsA(left, Var) || !IsA(right, Const) ||
		((Const *) right)->constisnull)
		return false;
	c->att = GpuAggScanColumn(cscan, (Expr *) left);
	c->coltype = ((Var *) left)->vartype;
	if (c->att == 0 || !CmpKind(c->coltype, &c->kind))
		return false;
	arr = DatumGetArrayTypeP(((Const *) right)->constvalue);
	tc = lookup_type_cache(c->coltype, TYPECACHE_BTREE_OPFAMILY);
	if (ARR_ELEMTYPE(arr) != c->coltype || !OidIsValid(tc->btree_opf) || !op_in_opfamily(sa->opno, tc->btree_opf))
		return false;
	get_op_opfamily_properties(sa->opno, tc->btree_opf, false, &strategy, &lefttype, &righttype);
	if (strategy != BTEqualStrategyNumber || lefttype != c->coltype || righttype != c->coltype)
		return false;
	get_typlenbyvalalign(c->coltype, &typlen, &byval, &align);
	deconstruct_array(arr, c->coltype, typlen, byval, align, &vals, &nulls, &n);
	c->len = typlen;
	c->strategy = BTEqualStrategyNumber;
	c->in_ivals = palloc(sizeof(int64) * Max(n, 1));
	c->in_fvals = palloc(sizeof(float8) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			continue;
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

/* An implicit-AND list of conditions compiled, or NULL where some conjunct is not of the forms compiled. */
GpuAggRowQual *
GpuAggCompileRowQual(CustomScan *cscan, List *quals)
{
	GpuAggRowQual *q = palloc(offsetof(GpuAggRowQual, cmps) + sizeof(RowCmp) * Max(list_length(quals), 1));
	ListCell   *lc;

	q->ncmps = 0;
	foreach(lc, quals)
	{
		Node	   *node = lfirst(lc);

		memset(&q->cmps[q->ncmps], 0, sizeof(RowCmp));
		if (IsA(node, BoolExpr) && ((BoolExpr *) node)->boolop == AND_EXPR)
		{
			GpuAggRowQual *sub = GpuAggCompileRowQual(cscan, ((BoolExpr *) node)->args);

			if (sub == NULL)
				return NULL;
			q = repalloc(q, offsetof(GpuAggRowQual, cmps) + sizeof(RowCmp) * (q->ncmps + sub->ncmps + list_length(quals)));
			memcpy(&q->cmps[q->ncmps], sub->cmps, sizeof(RowCmp) * sub->ncmps);
			q->ncmps += sub->ncmps;
			continue;
		}
		if (IsA(node, NullTest))
		{
			NullTest   *nt = (NullTest *) node;
			RowCmp	   *c = &q->cmps[q->ncmps];

			/* a column of the table, of any type: its null bit */
			if (nt->argisrow || !IsA(nt->arg, Var) || (c->att = GpuAggScanColumn(cscan, nt->arg)) <= 0)
				return NULL;
			c->kind = ROWCMP_NULLTEST;
			c->strategy = nt->nulltesttype == IS_NULL ? ROWCMP_IS_NULL : ROWCMP_IS_NOT_NULL;
			c->coltype = ((Var *) nt->arg)->vartype;
			c->len = 0;
			q->ncmps++;
			continue;
		}
		if (IsA(node, ScalarArrayOpExpr))
		{
			if (!CompileIn(cscan, (ScalarArrayOpExpr *) node, &q->cmps[q->ncmps]))
				return NULL;
			q->ncmps++;
			continue;
		}
		if (!CompileCmp(cscan, node, &q->cmps[q->ncmps]))
			return NULL;
		q->ncmps++;
	}
	return q;
}

/*
 * Whether every row without NULLs can be read in place (WHERE and FILTERs
 * compiled or absent, inputs plain columns passed by value or compiled
 * arguments, keys plain columns equal as bytes), and where its columns lie:
 * fixed offsets up to the first column of varying width, found per row after.
 */
void
GpuAggInPlaceSetup(GpuAggState *st, CustomScan *cscan, TupleDesc tupdesc)
{
	List	   *args = lsecond(cscan->custom_exprs);
	int			off = 0;
	int			natts = Max(st->rows.maxatt, 1);
	int			a;

	st->rows.att_off = palloc0(sizeof(int) * natts);
	st->rows.att_len = palloc(sizeof(int16) * natts);
	st->rows.att_align = palloc(sizeof(char) * natts);
	for (a = 0; a < st->rows.maxatt; a++)
	{
		st->rows.att_len[a] = TupleDescAttr(tupdesc, a)->attlen;
		st->rows.att_align[a] = TupleDescAttr(tupdesc, a)->attalign;
	}
	for (a = 0; a < st->rows.maxatt && st->rows.att_len[a] > 0; a++)
	{
		off = att_align_nominal(off, st->rows.att_align[a]);
		st->rows.att_off[a] = off;
		off += st->rows.att_len[a];
	}
	st->rows.walk_from = a;
	st->rows.walk_start = off;
	if (st->rows.qual != NULL)
		st->rows.rowqual = GpuAggCompileRowQual(cscan, linitial(cscan->custom_exprs));
	st->rows.fixed = (st->rows.qual == NULL || st->rows.rowqual != NULL) && (st->groups.nkeys == 0 || st->groups.images != NULL);
	st->groups.key_len = palloc(sizeof(int16) * Max(st->groups.nkeys, 1));
	st->groups.key_byval = palloc(sizeof(bool) * Max(st->groups.nkeys, 1));
	for (int k = 0; k < st->groups.nkeys && st->rows.fixed; k++)
	{
		Form_pg_attribute attr;

		if (st->groups.key_exprs[k] != NULL)
		{
			st->rows.fixed = false;
			break;
		}
		attr = TupleDescAttr(tupdesc, st->groups.key_att[k] - 1);
		st->groups.key_len[k] = attr->attlen;
		st->groups.key_byval[k] = attr->attbyval;
	}
	for (int i = 0; i < st->ninputs && st->rows.fixed; i++)
	{
		GpuAggInput *in = &st->inputs[i];

		if (in->filter != NULL)
			in->rowfilter = GpuAggCompileRowQual(cscan, list_make1(list_nth(lthird(cscan->custom_exprs), i)));
		in->rowreg = -1;
		if (in->arg != NULL && exprType((Node *) list_nth(args, i)) == FLOAT8OID && in->filter == NULL)
		{
			/* arguments computed for every row share one program */
			if (st->rows.rowargs == NULL)
				st->rows.rowargs = GpuAggRowExprCreate();
			in->rowreg = GpuAggRowExprAdd(st->rows.rowargs, cscan, list_nth(args, i));
		}
		else if (in->arg != NULL && exprType((Node *) list_nth(args, i)) == FLOAT8OID)
		{
			in->rowarg = GpuAggRowExprCreate();
			in->rowreg = GpuAggRowExprAdd(in->rowarg, cscan, list_nth(args, i));
		}
		if (in->arg != NULL && in->rowreg < 0 && GpuAggInputIsNumeric(in))
			in->numarg = GpuAggCompileNumExpr(cscan, list_nth(args, i));
		st->rows.numargs |= in->numarg != NULL;
		if ((in->filter != NULL && in->rowfilter == NULL) ||
			(in->arg != NULL && in->rowreg < 0 && in->numarg == NULL))
			st->rows.fixed = false;
		else if (in->arg == NULL)
		{
			Form_pg_attribute attr = TupleDescAttr(tupdesc, in->argatt - 1);

			in->fixed_len = attr->attlen;
			in->fixed_byval = attr->attbyval;
			if (!attr->attbyval && attr->atttypid != NUMERICOID)
				st->rows.fixed = false;
		}
	}
}

/* The columns (from 1) a compiled condition reads, added to *atts. */
void
GpuAggRowQualColumns(const GpuAggRowQual *q, Bitmapset **atts)
{
	for (int i = 0; i < q->ncmps; i++)
		*atts = bms_add_member(*atts, q->cmps[i].att);
}

/*
 * A compiled condition's comparisons appended to a device scan program
 * (col_of_att: each column's index among the program's columns); false
 * where the program has no room for them.
 */
bool
GpuAggRowQualToScan(const GpuAggRowQual *q, GpuextScanProgram *p, const int *col_of_att)
{
	if (p->ncmps + q->ncmps > GPUEXT_SCAN_MAX_CMPS)
		return false;
	for (int i = 0; i < q->ncmps; i++)
	{
		const RowCmp *c = &q->cmps[i];
		GpuextScanCmp *k = &p->cmps[p->ncmps++];

		/* numerics and IN lists are compared on the CPU only */
		if (c->kind == ROWCMP_NUMERIC || c->in_n > 0)
			return false;
		k->col = col_of_att[c->att];
		k->strategy = c->strategy;
		k->is_float = c->kind == ROWCMP_FLOAT;
		k->nulltest = c->kind != ROWCMP_NULLTEST ? 0 : c->strategy == ROWCMP_IS_NULL ? GPUEXT_SCAN_IS_NULL :
			GPUEXT_SCAN_IS_NOT_NULL;
		k->modulus = c->modulus;
		k->ival = c->ival;
		k->fval = c->fval;
	}
	return true;
}

/* The columns (from 1) a compiled argument program reads, added to *atts. */
void
GpuAggRowExprColumnsUsed(const GpuAggRowExpr *e, Bitmapset **atts)
{
	for (int i = 0; i < e->nloads; i++)
		*atts = bms_add_member(*atts, e->loads[i].att);
}

/* A compiled argument program copied into a device scan program's arithmetic (col_of_att as above). */
void
GpuAggRowExprToScan(const GpuAggRowExpr *e, GpuextScanProgram *p, const int *col_of_att)
{
	StaticAssertStmt(ROWEXPR_REGS <= GPUEXT_SCAN_MAX_REGS, "a program's registers fit the device scan's");
	StaticAssertStmt((int) ROWOP_NEG == (int) GPUEXT_SCAN_NEG, "the operations are numbered alike");
	p->nregs = e->nregs;
	p->nloads = e->nloads;
	p->nsteps = e->nsteps;
	for (int i = 0; i < e->nregs; i++)
		p->consts[i] = e->regs[i];
	for (int i = 0; i < e->nloads; i++)
	{
		p->loads[i].col = col_of_att[e->loads[i].att];
		p->loads[i].dst = e->loads[i].dst;
	}
	for (int i = 0; i < e->nsteps; i++)
	{
		p->steps[i].op = (uint8) e->steps[i].op;
		p->steps[i].dst = e->steps[i].dst;
		p->steps[i].a = e->steps[i].a;
		p->steps[i].b = e->steps[i].b;
	}
}
