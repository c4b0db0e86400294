/*
 * gpuagg_fixedexpr.c
 *		GpuAgg's numeric and integer arguments compiled as fixed-point
 *		arithmetic, for rows read in place (gpuagg_rows.c) and for the device
 *		scan's program (gpuagg_devprogram.c, cuda/scan_heap_numeric.h).
 *
 * An argument compiles when it is + - * and unary minus over numeric
 * columns with a typmod's scale and numeric constants; or + - * / % and
 * unary minus over columns and constants of smallint, integer and bigint,
 * with the casts among them and to numeric; or a searched CASE WHEN of
 * either whose conditions compile (gpuagg_conditions.c) and whose branches
 * are any of these, constants (NULL too: a CASE without ELSE) or such
 * CASEs, of one display scale.  Values are 128-bit integers at the display scale
 * PostgreSQL's numeric arithmetic gives them (the larger scale for + and -,
 * their sum for *), integers at scale 0, so that value and scale are
 * PostgreSQL's.  A row where an integer operation leaves its type's range
 * or divides by zero, or a numeric meets a NaN or leaves 128 bits, is read
 * through the slot instead, where PostgreSQL's operators raise the error or
 * compute the value.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"

#include "gpuagg.h"
#include "gpuagg_conditions.h"

/* Registers of a compiled argument: its constants, its columns' values, its intermediate results. */
#define FIXEXPR_REGS 32

/* Past this scale an expression is not compiled (the fixed point's 38 digits). */
#define FIXEXPR_MAX_SCALE 38

/* One column read into a register: a numeric at its type's scale, or an integer. */
typedef struct FixLoad
{
	AttrNumber	att;
	uint8		dst;
	int8		scale;			/* numeric: its type's scale */
	int16		intlen;			/* integers: 2, 4 or 8; numeric 0 */
} FixLoad;

/*
 * One operation: regs[dst] = regs[a] op regs[b], a and b first brought to
 * the larger scale (ka, kb); integers (int_bytes > 0) checked against their
 * type's range; SEL: regs[a] where cond holds, else regs[b].
 */
typedef struct FixStep
{
	GpuAggRowOp op;
	uint8		dst;
	uint8		a;
	uint8		b;
	int8		ka;
	int8		kb;
	uint8		int_bytes;
	GpuAggRowQual *cond;
} FixStep;

struct GpuAggNumExpr
{
	int			nregs;
	int			nloads;
	int			nsteps;
	uint8		result;
	int			scale;			/* the result's display scale */
	int			int_bytes;		/* an integer result: its width; numeric 0 */
	uint32		null_regs;		/* bit r: register r is a NULL constant (its scale -1: any) */
	FixLoad		loads[FIXEXPR_REGS];
	FixStep		steps[FIXEXPR_REGS];
	int8		reg_scale[FIXEXPR_REGS];
	int128		regs[FIXEXPR_REGS]; /* the constants set once, the rest per row */
};

/* The integer operators compiled: each function and what it does (its result type gives the width checked). */
static const struct
{
	Oid			func;
	GpuAggRowOp op;
} IntOps[] =
{
	{F_INT2PL, ROWOP_ADD}, {F_INT4PL, ROWOP_ADD}, {F_INT8PL, ROWOP_ADD}, {F_INT24PL, ROWOP_ADD},
	{F_INT42PL, ROWOP_ADD}, {F_INT28PL, ROWOP_ADD}, {F_INT82PL, ROWOP_ADD}, {F_INT48PL, ROWOP_ADD},
	{F_INT84PL, ROWOP_ADD},
	{F_INT2MI, ROWOP_SUB}, {F_INT4MI, ROWOP_SUB}, {F_INT8MI, ROWOP_SUB}, {F_INT24MI, ROWOP_SUB},
	{F_INT42MI, ROWOP_SUB}, {F_INT28MI, ROWOP_SUB}, {F_INT82MI, ROWOP_SUB}, {F_INT48MI, ROWOP_SUB},
	{F_INT84MI, ROWOP_SUB},
	{F_INT2MUL, ROWOP_MUL}, {F_INT4MUL, ROWOP_MUL}, {F_INT8MUL, ROWOP_MUL}, {F_INT24MUL, ROWOP_MUL},
	{F_INT42MUL, ROWOP_MUL}, {F_INT28MUL, ROWOP_MUL}, {F_INT82MUL, ROWOP_MUL}, {F_INT48MUL, ROWOP_MUL},
	{F_INT84MUL, ROWOP_MUL},
	{F_INT2DIV, ROWOP_DIV}, {F_INT4DIV, ROWOP_DIV}, {F_INT8DIV, ROWOP_DIV}, {F_INT24DIV, ROWOP_DIV},
	{F_INT42DIV, ROWOP_DIV}, {F_INT28DIV, ROWOP_DIV}, {F_INT82DIV, ROWOP_DIV}, {F_INT48DIV, ROWOP_DIV},
	{F_INT84DIV, ROWOP_DIV},
	{F_INT2MOD, ROWOP_MOD}, {F_INT4MOD, ROWOP_MOD}, {F_INT8MOD, ROWOP_MOD},
	{F_INT2UM, ROWOP_NEG}, {F_INT4UM, ROWOP_NEG}, {F_INT8UM, ROWOP_NEG},
};

/* The width of an integer type, 0 for any other. */
static int
IntegerBytes(Oid type)
{
	return type == INT2OID ? 2 : type == INT4OID ? 4 : type == INT8OID ? 8 : 0;
}

/* A new register holding a constant at a scale; -1 where there is no room. */
static int
ConstReg(GpuAggNumExpr *e, int128 v, int scale)
{
	if (e->nregs == FIXEXPR_REGS)
		return -1;
	e->regs[e->nregs] = v;
	e->reg_scale[e->nregs] = scale;
	return e->nregs++;
}

/* A new register holding NULL, of any scale; -1 where there is no room. */
static int
NullReg(GpuAggNumExpr *e)
{
	int			r = ConstReg(e, 0, -1);

	if (r >= 0)
		e->null_regs |= (uint32) 1 << r;
	return r;
}

/* A step appended: its destination register, or -1 where there is no room. */
static int
AddStep(GpuAggNumExpr *e, GpuAggRowOp op, int a, int b, int scale, int int_bytes)
{
	FixStep    *s;

	if (e->nregs == FIXEXPR_REGS || scale > FIXEXPR_MAX_SCALE ||
		(op != ROWOP_SEL && (e->reg_scale[a] < 0 || (op != ROWOP_NEG && e->reg_scale[b] < 0))))
		return -1;
	s = &e->steps[e->nsteps++];
	memset(s, 0, sizeof(FixStep));
	s->op = op;
	s->a = a;
	s->b = b;
	s->ka = (op == ROWOP_ADD || op == ROWOP_SUB) ? scale - e->reg_scale[a] : 0;
	s->kb = (op == ROWOP_ADD || op == ROWOP_SUB) ? scale - e->reg_scale[b] : 0;
	s->int_bytes = int_bytes;
	s->dst = e->nregs;
	e->reg_scale[e->nregs] = scale;
	return e->nregs++;
}

/* Whether a function is a cast that widens an integer or makes it a numeric: its value is its argument's. */
static bool
WideningCast(Oid funcid)
{
	switch (funcid)
	{
		case F_INT8_INT4:
		case F_INT8_INT2:
		case F_INT4_INT2:
		case F_NUMERIC_INT2:
		case F_NUMERIC_INT4:
		case F_NUMERIC_INT8:
			return true;
		default:
			return false;
	}
}

static int	CompileFixed(CustomScan *cscan, Node *node, GpuAggNumExpr *e);

/*
 * A searched CASE as steps that each take one WHEN's branch where its
 * condition holds, from the last WHEN back (no ELSE: NULL); -1 where a
 * condition or a branch does not compile, or the branches' display scales
 * differ (the value's scale would then depend on the row).  Every branch is
 * computed for every row: where one raises, taken or not, the row goes to
 * the slot (GpuAggNumExprEval), and the device keeps only the taken one's.
 */
static int
CompileFixedCase(CustomScan *cscan, CaseExpr *c, GpuAggNumExpr *e)
{
	int			acc;

	if (c->arg != NULL)
		return -1;
	acc = c->defresult != NULL ? CompileFixed(cscan, (Node *) c->defresult, e) : NullReg(e);
	for (int i = list_length(c->args) - 1; i >= 0 && acc >= 0; i--)
	{
		CaseWhen   *w = list_nth_node(CaseWhen, c->args, i);
		GpuAggRowQual *cond = GpuAggCompileRowQual(cscan, list_make1(w->expr));
		int			then = cond != NULL ? CompileFixed(cscan, (Node *) w->result, e) : -1;
		int			scale;

		/* a NULL's scale is the other branch's */
		if (then < 0)
			return -1;
		scale = e->reg_scale[then] < 0 ? e->reg_scale[acc] : e->reg_scale[then];
		if (e->reg_scale[acc] >= 0 && e->reg_scale[acc] != scale)
			return -1;
		acc = AddStep(e, ROWOP_SEL, then, acc, scale, 0);
		if (acc >= 0)
			e->steps[e->nsteps - 1].cond = cond;
	}
	return acc;
}

/*
 * The register holding node's value as a fixed-point number (steps added)
 * at its display scale, as PostgreSQL's numeric and integer arithmetic
 * give it; -1 where node is not of the forms compiled.
 */
static int
CompileFixed(CustomScan *cscan, Node *node, GpuAggNumExpr *e)
{
	int			a;
	int			b = 0;

	if (IsA(node, Const))
	{
		Const	   *c = (Const *) node;
		Datum		dscale;
		int128		v;

		if (c->constisnull)
			return c->consttype == NUMERICOID || IntegerBytes(c->consttype) > 0 ? NullReg(e) : -1;
		switch (c->consttype)
		{
			case INT2OID:
				return ConstReg(e, DatumGetInt16(c->constvalue), 0);
			case INT4OID:
				return ConstReg(e, DatumGetInt32(c->constvalue), 0);
			case INT8OID:
				return ConstReg(e, DatumGetInt64(c->constvalue), 0);
			case NUMERICOID:
				break;
			default:
				return -1;
		}
		if (numeric_is_nan(DatumGetNumeric(c->constvalue)) || numeric_is_inf(DatumGetNumeric(c->constvalue)))
			return -1;
		dscale = DirectFunctionCall1Coll(numeric_scale, InvalidOid, c->constvalue);
		if (DatumGetInt32(dscale) > FIXEXPR_MAX_SCALE ||
			GpuextNumericToFixed(c->constvalue, DatumGetInt32(dscale), &v) != 0)
			return -1;
		return ConstReg(e, v, DatumGetInt32(dscale));
	}
	if (IsA(node, CaseExpr) &&
		(((CaseExpr *) node)->casetype == NUMERICOID || IntegerBytes(((CaseExpr *) node)->casetype) > 0))
		return CompileFixedCase(cscan, (CaseExpr *) node, e);
	if (IsA(node, FuncExpr) && list_length(((FuncExpr *) node)->args) == 1)
	{
		FuncExpr   *f = (FuncExpr *) node;

		/* casts among the integers (narrowing ones checked as an addition of 0) and to numeric */
		if (WideningCast(f->funcid))
			return CompileFixed(cscan, linitial(f->args), e);
		switch (f->funcid)
		{
			case F_INT4_INT8:
			case F_INT2_INT8:
			case F_INT2_INT4:
				if ((a = CompileFixed(cscan, linitial(f->args), e)) < 0 || (b = ConstReg(e, 0, 0)) < 0)
					return -1;
				return AddStep(e, ROWOP_ADD, a, b, 0, IntegerBytes(f->funcresulttype));
			default:
				return -1;
		}
	}
	if (IsA(node, OpExpr) && ((OpExpr *) node)->opresulttype == NUMERICOID)
	{
		OpExpr	   *op = (OpExpr *) node;
		GpuAggRowOp kind;

		if (!GpuAggArithOp(op, F_NUMERIC_ADD, F_NUMERIC_SUB, F_NUMERIC_MUL, InvalidOid, F_NUMERIC_UMINUS, &kind))
			return -1;
		if ((a = CompileFixed(cscan, linitial(op->args), e)) < 0 ||
			(kind != ROWOP_NEG && (b = CompileFixed(cscan, lsecond(op->args), e)) < 0))
			return -1;
		/* numeric_add and numeric_sub: the larger display scale; numeric_mul: their sum */
		return AddStep(e, kind, a, b,
					   kind == ROWOP_NEG ? e->reg_scale[a] :
					   kind == ROWOP_MUL ? e->reg_scale[a] + e->reg_scale[b] : Max(e->reg_scale[a], e->reg_scale[b]),
					   0);
	}
	if (IsA(node, OpExpr) && IntegerBytes(((OpExpr *) node)->opresulttype) > 0)
	{
		OpExpr	   *op = (OpExpr *) node;

		for (int i = 0; i < lengthof(IntOps); i++)
		{
			if (IntOps[i].func != op->opfuncid)
				continue;
			if (list_length(op->args) != (IntOps[i].op == ROWOP_NEG ? 1 : 2) ||
				(a = CompileFixed(cscan, linitial(op->args), e)) < 0 ||
				(IntOps[i].op != ROWOP_NEG && (b = CompileFixed(cscan, lsecond(op->args), e)) < 0))
				return -1;
			return AddStep(e, IntOps[i].op, a, b, 0, IntegerBytes(op->opresulttype));
		}
		return -1;
	}
	if (IsA(node, Var))
	{
		Var		   *v = (Var *) node;
		AttrNumber	att = GpuAggScanColumn(cscan, (Expr *) node);
		int			precision;
		int			intlen = IntegerBytes(v->vartype);
		int			scale = intlen > 0 ? 0 :
			v->vartype == NUMERICOID ? GpuAggTypmodScale(v->vartypmod, &precision) : -1;

		if (att == 0 || scale < 0 || scale > FIXEXPR_MAX_SCALE || e->nregs == FIXEXPR_REGS)
			return -1;
		for (int i = 0; i < e->nloads; i++)
			if (e->loads[i].att == att)
				return e->loads[i].dst;
		e->loads[e->nloads].att = att;
		e->loads[e->nloads].dst = e->nregs;
		e->loads[e->nloads].scale = scale;
		e->loads[e->nloads].intlen = intlen;
		e->nloads++;
		e->reg_scale[e->nregs] = scale;
		return e->nregs++;
	}
	return -1;
}

/* A numeric or integer argument compiled, or NULL where it is not of the forms compiled. */
GpuAggNumExpr *
GpuAggCompileNumExpr(CustomScan *cscan, Expr *expr)
{
	GpuAggNumExpr *e = palloc0(sizeof(GpuAggNumExpr));
	Oid			type = exprType((Node *) expr);
	int			result;

	if ((type != NUMERICOID && IntegerBytes(type) == 0) || (result = CompileFixed(cscan, (Node *) expr, e)) < 0 ||
		e->reg_scale[result] < 0)
		return NULL;
	e->result = result;
	e->scale = e->reg_scale[result];
	e->int_bytes = IntegerBytes(type);
	return e;
}

/* The display scale of a compiled argument's values (0 for integers). */
int
GpuAggNumExprScale(const GpuAggNumExpr *e)
{
	return e->scale;
}

/* The width of a compiled integer argument's values; 0 for numeric. */
int
GpuAggNumExprIntBytes(const GpuAggNumExpr *e)
{
	return e->int_bytes;
}

/*
 * A compiled argument's value for a row read in place, as an integer at its
 * display scale, or NULL (*isnull): false for a NaN, a value past 128 bits
 * on the way, or an integer operation PostgreSQL raises an error for, which
 * the row's slot then computes.  A strict operation of a NULL is NULL.
 */
bool
GpuAggNumExprEval(GpuAggNumExpr *e, GpuAggNumMemo *memo, const char *tp, const int *att_off, int128 *out,
				  bool *isnull)
{
	int128	   *r = e->regs;
	uint32		nulls = e->null_regs;

	for (int i = 0; i < e->nloads; i++)
	{
		const FixLoad *l = &e->loads[i];

		if (l->intlen > 0)
			r[l->dst] = GpuAggIntAt(tp + att_off[l->att - 1], l->intlen);
		else if (GpuAggNumericColumn(memo, tp, att_off, l->att, l->scale, &r[l->dst]) != 0)
			return false;
	}
	for (int i = 0; i < e->nsteps; i++)
	{
		const FixStep *s = &e->steps[i];
		int128		a = r[s->a];
		int128		b = r[s->b];
		bool		overflow;

		if (s->op == ROWOP_SEL)
		{
			int			taken = GpuAggRowQualPasses(s->cond, tp, att_off) ? s->a : s->b;

			r[s->dst] = r[taken];
			nulls = (nulls & ~((uint32) 1 << s->dst)) | (((nulls >> taken) & 1) << s->dst);
			continue;
		}
		if (((nulls >> s->a) | (s->op != ROWOP_NEG ? nulls >> s->b : 0)) & 1)
		{
			nulls |= (uint32) 1 << s->dst;
			continue;
		}
		switch (s->op)
		{
			case ROWOP_ADD:
				overflow = (s->ka != 0 && !GpuextFixedMulPow10(&a, s->ka)) ||
					(s->kb != 0 && !GpuextFixedMulPow10(&b, s->kb)) || __builtin_add_overflow(a, b, &r[s->dst]);
				break;
			case ROWOP_SUB:
				overflow = (s->ka != 0 && !GpuextFixedMulPow10(&a, s->ka)) ||
					(s->kb != 0 && !GpuextFixedMulPow10(&b, s->kb)) || __builtin_sub_overflow(a, b, &r[s->dst]);
				break;
			case ROWOP_MUL:
				/* two factors of 64 bits cannot overflow 128: no call to the checked multiply */
				overflow = false;
				if (a == (int64) a && b == (int64) b)
					r[s->dst] = (int128) (int64) a * (int64) b;
				else
					overflow = __builtin_mul_overflow(a, b, &r[s->dst]);
				break;
			case ROWOP_DIV:
			case ROWOP_MOD:
				/* integers (int4div, int4mod): by 0 an error; by -1 a negation, its range checked below */
				overflow = b == 0;
				if (!overflow)
					r[s->dst] = b == -1 ? (s->op == ROWOP_DIV ? -a : 0) :
						s->op == ROWOP_DIV ? (int64) a / (int64) b : (int64) a % (int64) b;
				break;
			default:
				overflow = __builtin_sub_overflow((int128) 0, a, &r[s->dst]);
				break;
		}
		if (overflow || (s->int_bytes > 0 && !gpuext_scan_int_fits(r[s->dst], s->int_bytes)))
			return false;
	}
	*out = r[e->result];
	*isnull = (nulls >> e->result) & 1;
	return true;
}

/*
 * A compiled argument appended to a device scan program's numeric
 * arithmetic (col_of_att: each column's index among the program's columns,
 * numerics read there at their types' scales, integers as integers), its
 * CASE conditions to the program's comparisons: the register of its value,
 * or -1 where the program has no room or a constant does not fit a bigint.
 */
int
GpuAggNumExprToScan(const GpuAggNumExpr *e, GpuextScanProgram *p, const int *col_of_att)
{
	int			base = p->nnregs;

	StaticAssertStmt((int) ROWOP_ADD == (int) GPUEXT_SCAN_ADD && (int) ROWOP_SUB == (int) GPUEXT_SCAN_SUB &&
					 (int) ROWOP_MUL == (int) GPUEXT_SCAN_MUL && (int) ROWOP_DIV == (int) GPUEXT_SCAN_DIV &&
					 (int) ROWOP_NEG == (int) GPUEXT_SCAN_NEG && (int) ROWOP_SEL == (int) GPUEXT_SCAN_SEL &&
					 (int) ROWOP_MOD == (int) GPUEXT_SCAN_MOD,
					 "the operations are numbered alike");
	if (base + e->nregs > GPUEXT_SCAN_MAX_NREGS)
		return -1;
	p->numconst_nulls |= e->null_regs << base;
	for (int i = 0; i < e->nregs; i++)
	{
		if (e->regs[i] != (int64) e->regs[i])
			return -1;
		p->numconsts[base + i] = (int64) e->regs[i];
	}
	for (int i = 0; i < e->nloads; i++)
	{
		GpuextScanLoad *l = &p->numloads[p->nnloads++];
		const GpuextScanCol *col = &p->cols[col_of_att[e->loads[i].att]];

		l->col = col_of_att[e->loads[i].att];
		l->dst = base + e->loads[i].dst;
		if (e->loads[i].intlen > 0 ? col->kind != GPUEXT_SCAN_INT :
			col->kind != GPUEXT_SCAN_NUMERIC || col->scale != e->loads[i].scale)
			return -1;
	}
	for (int i = 0; i < e->nsteps; i++)
	{
		const FixStep *s = &e->steps[i];
		GpuextScanNumStep *d = &p->numsteps[p->nnsteps++];

		if (s->ka < 0 || s->kb < 0 || s->ka > GPUEXT_SCAN_NUMERIC_MAX_UP || s->kb > GPUEXT_SCAN_NUMERIC_MAX_UP)
			return -1;
		memset(d, 0, sizeof(GpuextScanNumStep));
		d->op = (uint8) s->op;
		d->dst = base + s->dst;
		d->a = base + s->a;
		d->b = base + s->b;
		d->ka = s->ka;
		d->kb = s->kb;
		d->int_bytes = s->int_bytes;
		if (s->op == ROWOP_SEL)
		{
			d->cmp_first = p->ncmps;
			if (!GpuAggRowQualToScan(s->cond, p, col_of_att))
				return -1;
			d->cmp_n = p->ncmps - d->cmp_first;
		}
	}
	p->nnregs = base + e->nregs;
	return base + e->result;
}

/* The columns (from 1) a compiled argument reads, its CASE conditions' too, added to *atts. */
void
GpuAggNumExprColumns(const GpuAggNumExpr *e, Bitmapset **atts)
{
	for (int i = 0; i < e->nloads; i++)
		*atts = bms_add_member(*atts, e->loads[i].att);
	for (int i = 0; i < e->nsteps; i++)
		if (e->steps[i].op == ROWOP_SEL)
			GpuAggRowQualColumns(e->steps[i].cond, atts);
}

/* The text columns a compiled argument's CASE conditions compare, added to *atts. */
void
GpuAggNumExprTextColumns(const GpuAggNumExpr *e, Bitmapset **atts)
{
	for (int i = 0; i < e->nsteps; i++)
		if (e->steps[i].op == ROWOP_SEL)
			GpuAggRowQualTextColumns(e->steps[i].cond, atts);
}
