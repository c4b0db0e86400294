/*
 * gpuagg_inplace.c
 *		GpuAgg's double precision arguments compiled for rows read in place
 *		(gpuagg_rows.c; which rows are is set up in gpuagg_inplace_setup.c),
 *		so that a row's values are computed from its bytes in the page,
 *		without a slot or the expression interpreter (its WHERE clause and
 *		FILTERs compile in gpuagg_conditions.c).
 *
 * An argument compiles when it is + - * / and unary minus of double
 * precision over columns of double precision (or of integers, real and
 * numeric cast to it) and constants, those of double precision and real
 * over a real operand, real arithmetic over real columns and constants
 * rounded to real as float4_pl and the like do (CompileFloat4), alone or cast
 * to double precision, and searched CASE WHENs of either type whose
 * conditions and branches compile (CompileCase; a branch not taken raises
 * nothing, as the device's does not), NULL
 * where no branch is taken without ELSE or the branch is NULL, and so is
 * the arithmetic over it (strict operators).  It is evaluated by the same
 * inline functions as PostgreSQL's operators (utils/float.h), so that NaN,
 * infinities and the overflow and division errors are the same.  Numeric
 * and integer arguments compile in gpuagg_fixedexpr.c.  Anything else is not compiled, and
 * the node reads rows through a slot.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"
#include "utils/fmgroids.h"
#include "utils/float.h"
#include "utils/lsyscache.h"

#include "agg_accum.h"
#include "gpuagg.h"

/* Registers of a compiled argument: its constants, its columns' values, its intermediate results. */
#define ROWEXPR_REGS 32

/* One operation: regs[dst] = regs[a] op regs[b]; SEL: regs[a] where cond holds (regs[c] 1), else regs[b]. */
typedef struct RowStep
{
	GpuAggRowOp		op;
	uint8		dst;
	uint8		a;
	uint8		b;
	uint8		c;				/* SEL: the register its condition is loaded into, per row */
	bool		real;			/* real arithmetic (float4_pl ...), rounded to real */
	GpuAggRowQual *cond;		/* SEL: its WHEN */
} RowStep;

/* One column read into a register. */
typedef struct RowLoad
{
	AttrNumber	att;
	Oid			coltype;
	uint8		dst;
	bool		real;			/* a bigint rounded once to real (i8tof) */
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
	uint32		null_regs;		/* bit r: register r is a NULL constant (a CASE's NULL branch) */
	uint32		maybe_null;		/* bit r: register r may be NULL (those, and CASEs that may take them) */
	uint32		nulls;			/* bit r: register r is NULL for the row run last (GpuAggRowExprRun) */
	bool		lazy;			/* a CASE branch may raise: errors kept until an argument is read */
	uint32		errs;			/* lazy, bit r: register r raises an error for the row run last ... */
	uint8		err_step[ROWEXPR_REGS]; /* ... the one of this step */
	List	   *memo;			/* the operations compiled ... */
	List	   *memo_regs;		/* ... and the registers holding them */
};

/*
 * One operation of double precision, or of real where the step is real, by
 * PostgreSQL's own functions (they raise its errors).
 */
static inline float8
FloatOp(const RowStep *s, float8 a, float8 b)
{
	if (s->real)
	{
		switch (s->op)
		{
			case ROWOP_ADD:
				return float4_pl((float4) a, (float4) b);
			case ROWOP_SUB:
				return float4_mi((float4) a, (float4) b);
			case ROWOP_MUL:
				return float4_mul((float4) a, (float4) b);
			case ROWOP_DIV:
				return float4_div((float4) a, (float4) b);
			case ROWOP_TO_REAL:
				{
					float4		f = (float4) a;

					/* dtof's checks */
					if (unlikely(isinf(f)) && !isinf(a))
						float_overflow_error();
					if (unlikely(f == 0.0f) && a != 0.0)
						float_underflow_error();
					return f;
				}
			default:
				return -(float4) a;
		}
	}
	switch (s->op)
	{
		case ROWOP_ADD:
			return float8_pl(a, b);
		case ROWOP_SUB:
			return float8_mi(a, b);
		case ROWOP_MUL:
			return float8_mul(a, b);
		case ROWOP_DIV:
			return float8_div(a, b);
		default:
			Assert(s->op == ROWOP_NEG);
			return -a;
	}
}

/*
 * A loaded column's value: as double precision, or a bigint or numeric
 * rounded once to real as i8tof and numeric_float4 cast them.
 */
static inline float8
LoadValue(const RowLoad *l, const char *tp, const int *att_off)
{
	if (l->real && l->coltype == NUMERICOID)
		return (float8) GpuextNumericToFloat4(PointerGetDatum(tp + att_off[l->att - 1]));
	if (l->real)
		return gpuext_scan_int_real(DatumGetInt64(fetch_att(tp + att_off[l->att - 1], true, 8)));
	return GpuAggColumnFloat8(tp, att_off, l->att, l->coltype);
}

/*
 * Compute every argument of a program for a row read in place: its
 * registers, and which are NULL (GpuAggRowExprNull).  The operators are
 * strict: an operand NULL makes the result NULL, and raises nothing.  A
 * lazy program (a CASE branch that may raise) computes every branch but
 * keeps each error with its register, as the device marks it, for
 * GpuAggRowExprRaise: a CASE raises only its taken branch's, and an
 * operation the first of its operands', as PostgreSQL evaluates them.
 */
const float8 *
GpuAggRowExprRun(GpuAggRowExpr *e, const char *tp, const int *att_off)
{
	float8	   *r = e->regs;

	e->nulls = e->null_regs;
	e->errs = 0;
	for (int i = 0; i < e->nloads; i++)
		r[e->loads[i].dst] = LoadValue(&e->loads[i], tp, att_off);
	for (int i = 0; i < e->nsteps; i++)
	{
		const RowStep *s = &e->steps[i];
		uint32		bit = (uint32) 1 << s->dst;
		int			taken;
		double		v;

		if (s->op == ROWOP_SEL)
		{
			taken = GpuAggRowQualPasses(s->cond, tp, att_off) ? s->a : s->b;
			r[s->dst] = r[taken];
			gpuext_scan_mark_select(&e->nulls, &e->errs, s->dst, taken);
			e->err_step[s->dst] = e->err_step[taken];
			continue;
		}
		if (gpuext_scan_mark_operands(&e->nulls, &e->errs, s->dst, s->a, s->b, s->op == ROWOP_NEG))
		{
			/* the error kept is the first marked operand's, as PostgreSQL raises it */
			if (e->errs & bit)
				e->err_step[s->dst] = e->err_step[(e->errs >> s->a) & 1 ? s->a : s->b];
			continue;
		}
		if (!e->lazy)
			r[s->dst] = FloatOp(s, r[s->a], r[s->b]);
		else if (gpuext_scan_float_op(s->op, s->real, r[s->a], r[s->b], &v))
		{
			e->errs |= bit;
			e->err_step[s->dst] = (uint8) i;
		}
		else
			r[s->dst] = v;
	}
	return r;
}

/* Raise the error register reg keeps for the row run last (a lazy program's), if any. */
void
GpuAggRowExprRaise(const GpuAggRowExpr *e, int reg)
{
	const RowStep *s;

	if (likely(!((e->errs >> reg) & 1)))
		return;
	s = &e->steps[e->err_step[reg]];
	FloatOp(s, e->regs[s->a], e->regs[s->b]);
	elog(ERROR, "compiled argument's error not raised again");
}

/* Whether register reg may be NULL, and whether it is for the row run last. */
bool
GpuAggRowExprMayBeNull(const GpuAggRowExpr *e, int reg)
{
	return (e->maybe_null >> reg) & 1;
}

bool
GpuAggRowExprNull(const GpuAggRowExpr *e, int reg)
{
	return (e->nulls >> reg) & 1;
}

/* Whether a program keeps its errors until an argument is read (GpuAggRowExprRun): not for columns at once. */
bool
GpuAggRowExprLazy(const GpuAggRowExpr *e)
{
	return e->lazy;
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
	{
		computed[e->steps[i].dst] = true;
		if (e->steps[i].op == ROWOP_SEL)
			computed[e->steps[i].c] = true;
	}
	for (int r = 0; r < e->nregs; r++)
		for (int j = 0; j < MaxHeapTuplesPerPage && !computed[r]; j++)
			cols[(Size) r * MaxHeapTuplesPerPage + j] = e->regs[r];
	return cols;
}

/* One row's columns, and its CASE conditions (1 or 0), into row j of a program's register columns. */
void
GpuAggRowExprLoad(const GpuAggRowExpr *e, const char *tp, const int *att_off, float8 *cols, int j)
{
	for (int i = 0; i < e->nloads; i++)
		cols[(Size) e->loads[i].dst * MaxHeapTuplesPerPage + j] = LoadValue(&e->loads[i], tp, att_off);
	for (int i = 0; i < e->nsteps; i++)
		if (e->steps[i].op == ROWOP_SEL)
			cols[(Size) e->steps[i].c * MaxHeapTuplesPerPage + j] = GpuAggRowQualPasses(e->steps[i].cond, tp, att_off);
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

		if (s->real)
		{
			for (int j = 0; j < n; j++)
				d[j] = FloatOp(s, a[j], b[j]);
			continue;
		}
		switch (s->op)
		{
			case ROWOP_SEL:
				{
					const float8 *c = cols + (Size) s->c * MaxHeapTuplesPerPage;

					for (int j = 0; j < n; j++)
						d[j] = c[j] != 0 ? a[j] : b[j];
				}
				break;
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
			case ROWOP_MOD:		/* integers only: never compiled in double precision */
			case ROWOP_TO_REAL: /* real steps only, above */
				Assert(false);
				break;
		}
	}
}

/* The table column a scan-tuple Var stands for (possibly under a cast to double precision, numeric's too), or 0. */
static AttrNumber
CompiledColumn(CustomScan *cscan, Node *node, Oid *type)
{
	AttrNumber	att;

	if (IsA(node, FuncExpr))
	{
		FuncExpr   *f = (FuncExpr *) node;

		if (list_length(f->args) != 1 ||
			(f->funcid != F_FLOAT8_INT2 && f->funcid != F_FLOAT8_INT4 && f->funcid != F_FLOAT8_INT8 &&
			 f->funcid != F_FLOAT8_FLOAT4 && f->funcid != F_FLOAT8_NUMERIC))
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

static int	CompileFloat8(CustomScan *cscan, Node *node, GpuAggRowExpr *e);
static int	CompileFloat4(CustomScan *cscan, Node *node, GpuAggRowExpr *e);

/*
 * Whether a CASE's branch raises no error for any row (a column, a
 * constant, NULL, a CASE of such, their negation): where one may, the
 * program is lazy, its errors kept until an argument is read.
 */
static bool
BranchWithoutErrors(CustomScan *cscan, Node *node)
{
	Oid			type;

	if (IsA(node, Const))
		return true;
	if (IsA(node, OpExpr) && list_length(((OpExpr *) node)->args) == 1 &&
		(((OpExpr *) node)->opfuncid == F_FLOAT8UM || ((OpExpr *) node)->opfuncid == F_FLOAT4UM))
		return BranchWithoutErrors(cscan, linitial(((OpExpr *) node)->args));
	if (IsA(node, CaseExpr))
	{
		CaseExpr   *c = (CaseExpr *) node;
		ListCell   *lc;

		if (c->defresult != NULL && !BranchWithoutErrors(cscan, (Node *) c->defresult))
			return false;
		foreach(lc, c->args)
			if (!BranchWithoutErrors(cscan, (Node *) lfirst_node(CaseWhen, lc)->result))
				return false;
		return true;
	}
	return CompiledColumn(cscan, node, &type) != 0;
}

/* A register that is NULL for every row (a CASE's NULL branch, or its missing ELSE); -1 where none is left. */
static int
NullRegister(GpuAggRowExpr *e)
{
	if (e->nregs == ROWEXPR_REGS)
		return -1;
	e->regs[e->nregs] = 0;
	e->null_regs |= (uint32) 1 << e->nregs;
	e->maybe_null |= (uint32) 1 << e->nregs;
	return e->nregs++;
}

/*
 * A searched CASE of double precision or real (CASE WHEN cond THEN x ...
 * [ELSE y] END) as steps that each take one WHEN's branch where its condition
 * holds, from the last WHEN back, NULL without ELSE; -1 where a condition or
 * a branch does not compile.  Every branch is computed for every row, an
 * error of one not taken never raised (lazy).  A real branch is exact in its
 * register, so the select is the same for both.
 */
static int
CompileCase(CustomScan *cscan, CaseExpr *c, GpuAggRowExpr *e)
{
	int			(*branch) (CustomScan *, Node *, GpuAggRowExpr *) =
		c->casetype == FLOAT4OID ? CompileFloat4 : CompileFloat8;
	int			acc;

	if (c->arg != NULL)
		return -1;
	e->lazy |= !BranchWithoutErrors(cscan, (Node *) c);
	acc = c->defresult == NULL ? NullRegister(e) : branch(cscan, (Node *) c->defresult, e);
	for (int i = list_length(c->args) - 1; i >= 0 && acc >= 0; i--)
	{
		CaseWhen   *w = list_nth_node(CaseWhen, c->args, i);
		GpuAggRowQual *cond = GpuAggCompileRowQual(cscan, list_make1(w->expr));
		int			then = cond != NULL ? branch(cscan, (Node *) w->result, e) : -1;
		RowStep    *s;

		if (then < 0 || e->nregs + 2 > ROWEXPR_REGS)
			return -1;
		s = &e->steps[e->nsteps++];
		s->op = ROWOP_SEL;
		s->real = false;
		s->a = then;
		s->b = acc;
		s->cond = cond;
		s->c = e->nregs++;
		s->dst = e->nregs++;
		if (GpuAggRowExprMayBeNull(e, then) || GpuAggRowExprMayBeNull(e, acc))
			e->maybe_null |= (uint32) 1 << s->dst;
		acc = s->dst;
	}
	return acc;
}

/*
 * The register column att (of type) is loaded into as double precision, or,
 * real, a bigint column rounded once to real; made where new.
 */
static int
LoadRegisterAs(GpuAggRowExpr *e, AttrNumber att, Oid type, bool real)
{
	for (int i = 0; i < e->nloads; i++)
		if (e->loads[i].att == att && e->loads[i].coltype == type && e->loads[i].real == real)
			return e->loads[i].dst;
	e->loads[e->nloads].att = att;
	e->loads[e->nloads].coltype = type;
	e->loads[e->nloads].real = real;
	e->loads[e->nloads].dst = e->nregs;
	e->nloads++;
	return e->nregs++;
}

#define LoadRegister(e, att, type) LoadRegisterAs(e, att, type, false)

/* A step regs[dst] = regs[a] op regs[b] into a new register, strict: NULL where an operand may be (a CASE's NULL branch). */
static int
AddStep(GpuAggRowExpr *e, GpuAggRowOp op, int a, int b, bool real)
{
	RowStep    *s = &e->steps[e->nsteps++];

	s->op = op;
	s->a = a;
	s->b = b;
	s->real = real;
	s->dst = e->nregs++;
	if (GpuAggRowExprMayBeNull(e, a) || GpuAggRowExprMayBeNull(e, b))
		e->maybe_null |= (uint32) 1 << s->dst;
	return s->dst;
}

/*
 * The register holding an operator's result (steps added): its operands
 * compiled as real (real_a, real_b) or double precision, the operation
 * rounded to real where real; -1 where they are not of the forms compiled.
 */
static int
CompileOp(CustomScan *cscan, OpExpr *op, GpuAggRowOp kind, bool real_a, bool real_b, bool real, GpuAggRowExpr *e)
{
	int			dst;
	int			a;
	int			b = 0;
	ListCell   *lc;

	foreach(lc, e->memo)
		if (equal(lfirst(lc), op))
			return list_nth_int(e->memo_regs, foreach_current_index(lc));
	if ((a = (real_a ? CompileFloat4 : CompileFloat8) (cscan, linitial(op->args), e)) < 0 ||
		(kind != ROWOP_NEG && (b = (real_b ? CompileFloat4 : CompileFloat8) (cscan, lsecond(op->args), e)) < 0) ||
		e->nregs == ROWEXPR_REGS)
		return -1;
	dst = AddStep(e, kind, a, kind == ROWOP_NEG ? a : b, real);
	e->memo = lappend(e->memo, op);
	e->memo_regs = lappend_int(e->memo_regs, dst);
	return dst;
}

/*
 * The register holding a cast to real (steps added): of double precision
 * arithmetic (dtof's overflow and underflow checked) or of a smallint or
 * integer column, each exact in a double and rounded once; of a bigint or
 * numeric column, loaded rounded once (not through a double); -1 for other
 * casts.
 */
static int
CompileToReal(CustomScan *cscan, FuncExpr *f, GpuAggRowExpr *e)
{
	Node	   *arg = linitial(f->args);
	int			a;

	if ((f->funcid == F_FLOAT4_INT8 || f->funcid == F_FLOAT4_NUMERIC) && IsA(arg, Var) &&
		GpuAggScanColumn(cscan, (Expr *) arg) != 0)
		return LoadRegisterAs(e, GpuAggScanColumn(cscan, (Expr *) arg), exprType(arg), true);
	if (f->funcid == F_FLOAT4_FLOAT8)
		a = CompileFloat8(cscan, arg, e);
	else if ((f->funcid == F_FLOAT4_INT2 || f->funcid == F_FLOAT4_INT4) && IsA(arg, Var) &&
			 GpuAggScanColumn(cscan, (Expr *) arg) != 0)
		a = LoadRegister(e, GpuAggScanColumn(cscan, (Expr *) arg), exprType(arg));
	else
		return -1;
	if (a < 0 || e->nregs == ROWEXPR_REGS)
		return -1;
	return AddStep(e, ROWOP_TO_REAL, a, a, true);
}

/*
 * The register holding a real value (steps added): a column, a constant, or
 * real arithmetic over them, each operation rounded to real as float4_pl
 * and the like compute it (a real is exact in a double register); -1 for
 * anything else.
 */
static int
CompileFloat4(CustomScan *cscan, Node *node, GpuAggRowExpr *e)
{
	AttrNumber	att;
	GpuAggRowOp kind;

	if (e->nregs == ROWEXPR_REGS)
		return -1;
	if (IsA(node, Const) && ((Const *) node)->consttype == FLOAT4OID)
	{
		if (((Const *) node)->constisnull)
			return NullRegister(e);
		e->regs[e->nregs] = (float8) DatumGetFloat4(((Const *) node)->constvalue);
		return e->nregs++;
	}
	if (IsA(node, OpExpr) && ((OpExpr *) node)->opresulttype == FLOAT4OID &&
		GpuAggArithOp((OpExpr *) node, F_FLOAT4PL, F_FLOAT4MI, F_FLOAT4MUL, F_FLOAT4DIV, F_FLOAT4UM, &kind))
		return CompileOp(cscan, (OpExpr *) node, kind, true, true, true, e);
	if (IsA(node, CaseExpr) && ((CaseExpr *) node)->casetype == FLOAT4OID)
		return CompileCase(cscan, (CaseExpr *) node, e);
	if (IsA(node, FuncExpr) && list_length(((FuncExpr *) node)->args) == 1)
		return CompileToReal(cscan, (FuncExpr *) node, e);
	if (!IsA(node, Var) || exprType(node) != FLOAT4OID || (att = GpuAggScanColumn(cscan, (Expr *) node)) == 0)
		return -1;
	return LoadRegister(e, att, FLOAT4OID);
}

/* The register holding node's value as double precision (steps added), or -1 where it is not of the forms compiled. */
static int
CompileFloat8(CustomScan *cscan, Node *node, GpuAggRowExpr *e)
{
	if (e->nregs == ROWEXPR_REGS)
		return -1;
	if (IsA(node, Const))
	{
		Const	   *c = (Const *) node;

		if (c->consttype == FLOAT8OID && c->constisnull)
			return NullRegister(e);
		if (c->consttype != FLOAT8OID)
			return -1;
		e->regs[e->nregs] = DatumGetFloat8(c->constvalue);
		return e->nregs++;
	}
	if (IsA(node, CaseExpr) && ((CaseExpr *) node)->casetype == FLOAT8OID)
		return CompileCase(cscan, (CaseExpr *) node, e);
	if (IsA(node, OpExpr) && ((OpExpr *) node)->opresulttype == FLOAT8OID)
	{
		OpExpr	   *op = (OpExpr *) node;
		GpuAggRowOp kind;

		/* double precision's operators, and those of double precision and real (float84pl, float48pl ...) */
		if (GpuAggArithOp(op, F_FLOAT84PL, F_FLOAT84MI, F_FLOAT84MUL, F_FLOAT84DIV, InvalidOid, &kind))
			return CompileOp(cscan, op, kind, false, true, false, e);
		if (GpuAggArithOp(op, F_FLOAT48PL, F_FLOAT48MI, F_FLOAT48MUL, F_FLOAT48DIV, InvalidOid, &kind))
			return CompileOp(cscan, op, kind, true, false, false, e);
		if (GpuAggArithOp(op, F_FLOAT8PL, F_FLOAT8MI, F_FLOAT8MUL, F_FLOAT8DIV, F_FLOAT8UM, &kind))
			return CompileOp(cscan, op, kind, false, false, false, e);
		return -1;
	}
	/* real arithmetic, a CASE of real or a cast to real, cast to double precision (exact) */
	if (IsA(node, FuncExpr) && ((FuncExpr *) node)->funcid == F_FLOAT8_FLOAT4 &&
		list_length(((FuncExpr *) node)->args) == 1 && !IsA(linitial(((FuncExpr *) node)->args), Var))
		return CompileFloat4(cscan, linitial(((FuncExpr *) node)->args), e);
	{
		Oid			type;
		AttrNumber	att = CompiledColumn(cscan, node, &type);

		if (att == 0 || (IsA(node, Var) && type != FLOAT8OID))
			return -1;
		return LoadRegister(e, att, type);
	}
}

/* An empty program of double precision arguments. */
GpuAggRowExpr *
GpuAggRowExprCreate(void)
{
	return palloc0(sizeof(GpuAggRowExpr));
}

/*
 * Compile a double precision or real argument into a program: the register
 * that will hold its value, or -1 (the program as it was) where it is not of
 * the forms compiled.
 */
int
GpuAggRowExprAdd(GpuAggRowExpr *e, CustomScan *cscan, Expr *expr)
{
	GpuAggRowExpr saved = *e;
	int			result;

	if (exprType((Node *) expr) == FLOAT8OID)
		result = CompileFloat8(cscan, (Node *) expr, e);
	else if (exprType((Node *) expr) == FLOAT4OID)
		result = CompileFloat4(cscan, (Node *) expr, e);
	else
		return -1;
	if (result < 0)
	{
		e->nregs = saved.nregs;
		e->nloads = saved.nloads;
		e->nsteps = saved.nsteps;
		e->null_regs = saved.null_regs;
		e->maybe_null = saved.maybe_null;
		e->memo = list_truncate(e->memo, list_length(saved.memo));
		e->memo_regs = list_truncate(e->memo_regs, list_length(saved.memo_regs));
	}
	return result;
}

/*
 * Whether values of the type are read from a row's bytes as signed integers
 * (ints, date, timestamps, bool) or as floats (*is_float): the one list of the
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
		case BOOLOID:			/* 0 or 1 */
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

/* The columns (from 1) a compiled argument program reads, its CASE conditions' too, added to *atts. */
void
GpuAggRowExprColumnsUsed(const GpuAggRowExpr *e, Bitmapset **atts)
{
	for (int i = 0; i < e->nloads; i++)
		*atts = bms_add_member(*atts, e->loads[i].att);
	for (int i = 0; i < e->nsteps; i++)
		if (e->steps[i].op == ROWOP_SEL)
			GpuAggRowQualColumns(e->steps[i].cond, atts);
}

/* The text columns a compiled argument program's CASE conditions compare, added to *atts. */
void
GpuAggRowExprTextColumns(const GpuAggRowExpr *e, Bitmapset **atts)
{
	for (int i = 0; i < e->nsteps; i++)
		if (e->steps[i].op == ROWOP_SEL)
			GpuAggRowQualTextColumns(e->steps[i].cond, atts);
}

/*
 * A compiled argument program copied into a device scan program's
 * arithmetic (col_of_att as above), its CASE conditions appended to the
 * program's comparisons; false where they do not fit.
 */
bool
GpuAggRowExprToScan(const GpuAggRowExpr *e, GpuextScanProgram *p, const int *col_of_att)
{
	StaticAssertStmt(ROWEXPR_REGS <= GPUEXT_SCAN_MAX_REGS, "a program's registers fit the device scan's");
	StaticAssertStmt((int) ROWOP_NEG == (int) GPUEXT_SCAN_NEG && (int) ROWOP_SEL == (int) GPUEXT_SCAN_SEL &&
					 (int) ROWOP_TO_REAL == (int) GPUEXT_SCAN_TO_REAL,
					 "the operations are numbered alike");
	p->nregs = e->nregs;
	p->nloads = e->nloads;
	p->nsteps = e->nsteps;
	p->const_nulls = e->null_regs;
	for (int i = 0; i < e->nregs; i++)
		p->consts[i] = e->regs[i];
	for (int i = 0; i < e->nloads; i++)
	{
		p->loads[i].col = col_of_att[e->loads[i].att];
		p->loads[i].dst = e->loads[i].dst;
		p->loads[i].real = e->loads[i].real;
	}
	for (int i = 0; i < e->nsteps; i++)
	{
		p->steps[i].op = (uint8) e->steps[i].op;
		p->steps[i].real = e->steps[i].real;
		p->steps[i].dst = e->steps[i].dst;
		p->steps[i].a = e->steps[i].a;
		p->steps[i].b = e->steps[i].b;
		if (e->steps[i].op == ROWOP_SEL)
		{
			p->steps[i].cmp_first = p->ncmps;
			if (!GpuAggRowQualToScan(e->steps[i].cond, p, col_of_att))
				return false;
			p->steps[i].cmp_n = p->ncmps - p->steps[i].cmp_first;
		}
	}
	return true;
}
