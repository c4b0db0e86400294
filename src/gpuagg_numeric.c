/*
 * gpuagg_numeric.c
 *		numeric inputs of GpuAgg.
 *
 * A numeric(p, s) column (or an expression of that typmod) with p <= 18 and
 * 0 <= s has every value an integer at scale s that fits bigint: its values
 * go to the device as such, through the bigint reductions (exact 128-bit
 * sums, min and max), and its NaNs are counted on the host, per group with
 * GROUP BY.  The results are built as PostgreSQL's numeric aggregates give
 * them: sum the exact sum at display scale s, avg numeric_div(sum, count),
 * min and max the value at scale s; NaN where a NaN was added (min: only
 * where nothing else was).
 *
 * Any other numeric (no typmod, p > 18, expressions whose scale is not
 * known) is added on the CPU into an exact accumulator (agg_numeric.c:
 * 128-bit fixed point at the largest display scale seen, a numeric sum past
 * it), one for the scan without GROUP BY, one per group with it.
 *
 * A numeric argument compiles for rows read in place (gpuagg_inplace.c)
 * when it is + - * and unary minus over numeric columns with a typmod's
 * scale and constants: it is computed as a 128-bit integer at the display
 * scale PostgreSQL's numeric arithmetic gives it (the larger scale for + and
 * -, their sum for *), so its value and scale are PostgreSQL's; a row where
 * it meets a NaN or leaves 128 bits is read through the slot instead.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "gpuagg.h"

/* Largest precision whose values at their scale fit bigint. */
#define FIXED_MAX_PRECISION 18

/* A numeric typmod's scale (and precision), or -1 where there is none or it is negative. */
int
GpuAggTypmodScale(int32 typmod, int *precision)
{
	int			scale;

	if (typmod < (int32) VARHDRSZ)
		return -1;
	*precision = ((typmod - VARHDRSZ) >> 16) & 0xffff;
	/* the scale is 11 bits, signed since PostgreSQL 15 (numeric.c) */
	scale = (((typmod - VARHDRSZ) & 0x7ff) ^ 1024) - 1024;
	return scale >= 0 ? scale : -1;
}

/* The scale at which a numeric argument's values fit bigint (numeric(p <= 18, s >= 0)), or -1. */
int
GpuAggNumericScale(Node *arg)
{
	int			precision = 0;
	int			scale;

	if (exprType(arg) != NUMERICOID)
		return -1;
	scale = GpuAggTypmodScale(exprTypmod(arg), &precision);
	return precision <= FIXED_MAX_PRECISION ? scale : -1;
}

/* A numeric of a fixed-scale input as the bigint at its scale: false for a NaN, counted in *nans. */
bool
GpuAggNumericToInt64(GpuAggInput *in, Datum *value, int64 *nans)
{
	int128		v = 0;
	int			status = GpuextNumericToFixed(*value, in->numeric_scale, &v);

	return GpuAggFixedToInt64(in, status, v, value, nans);
}

/* The same from GpuextNumericToFixed's status and value. */
bool
GpuAggFixedToInt64(GpuAggInput *in, int status, int128 v, Datum *value, int64 *nans)
{
	switch (status)
	{
		case 1:
			(*nans)++;
			return false;
		case 0:
			if (v >= PG_INT64_MIN && v <= PG_INT64_MAX)
			{
				*value = Int64GetDatum((int64) v);
				return true;
			}
			break;
	}
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("GpuAgg: a numeric value does not fit the scale %d of its type", in->numeric_scale),
			 errhint("Set gpuext.enable_agg to off for this query.")));
	return false;
}

/* A memo of natts numeric columns, empty. */
GpuAggNumMemo *
GpuAggNumMemoCreate(int natts)
{
	GpuAggNumMemo *m = palloc(sizeof(GpuAggNumMemo));

	m->row = 1;
	m->rows = palloc0(sizeof(uint64) * natts);
	m->scales = palloc0(sizeof(int) * natts);
	m->status = palloc0(sizeof(int) * natts);
	m->values = palloc0(sizeof(int128) * natts);
	return m;
}

/* numeric NaN. */
static Datum
NumericNaN(void)
{
	return DirectFunctionCall3(numeric_in, CStringGetDatum("NaN"), ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

/* One aggregate of a fixed-scale input from its count, NaNs, exact sum, min and max, as PostgreSQL's. */
static Datum
FixedResult(int scale, GpuextAggKind kind, int64 count, int64 nans, int128 sum, int64 min, int64 max,
			bool *isnull)
{
	*isnull = false;
	if (kind == GPUEXT_AGG_COUNT)
		return Int64GetDatum(count + nans);
	if (count + nans == 0)
	{
		*isnull = true;
		return (Datum) 0;
	}
	switch (kind)
	{
		case GPUEXT_AGG_SUM:
			return nans > 0 ? NumericNaN() : GpuextFixedToNumeric(sum, scale);
		case GPUEXT_AGG_AVG:
			/* numeric_avg: NaN, else sum / N, N not counting the NaNs */
			if (nans > 0)
				return NumericNaN();
			return DirectFunctionCall2(numeric_div, GpuextFixedToNumeric(sum, scale),
									   NumericGetDatum(int64_to_numeric(count)));
		case GPUEXT_AGG_MIN:
			/* NaN sorts above every number (numeric_smaller) */
			return count == 0 ? NumericNaN() : GpuextFixedToNumeric(min, scale);
		default:
			return nans > 0 ? NumericNaN() : GpuextFixedToNumeric(max, scale);
	}
}

/* An aggregate of a fixed-scale input without GROUP BY, from its bigint accumulator. */
Datum
GpuAggNumericAccumResult(GpuAggInput *in, GpuextAggKind kind, bool *isnull)
{
	GpuextAccum *acc = in->acc;

	return FixedResult(in->numeric_scale, kind, acc->count, in->count, acc->isum,
					   acc->count > 0 ? DatumGetInt64(acc->min_value) : 0,
					   acc->count > 0 ? DatumGetInt64(acc->max_value) : 0, isnull);
}

/* An aggregate of a fixed-scale input for group g, from the group's bigint reduction r. */
Datum
GpuAggNumericGroupResult(GpuAggInput *in, const GpuextGroupResult *r, uint32 g, GpuextAggKind kind, bool *isnull)
{
	int128		isum = (int128) (((uint128) (uint64) r->isum_hi << 64) | r->isum_lo);

	return FixedResult(in->numeric_scale, kind, (int64) r->count, in->group_counts[g], isum,
					   r->count > 0 ? DatumGetInt64(in->type->key_datum(r->min_key)) : 0,
					   r->count > 0 ? DatumGetInt64(in->type->key_datum(r->max_key)) : 0, isnull);
}

/* A run's per-group accumulators of a numeric input, room for the groups the arrays start with. */
void
GpuAggAccsStart(GpuAggState *st, GpuAggInput *in)
{
	in->group_accs = MemoryContextAllocHuge(st->runcxt, sizeof(GpuextAccum) * st->groups.groups_cap);
}

/* Room for cap groups' accumulators. */
void
GpuAggAccsGrow(GpuAggInput *in, uint32 cap)
{
	in->group_accs = repalloc_huge(in->group_accs, sizeof(GpuextAccum) * cap);
}

/* A new group's empty accumulator; its numerics live in the run's memory. */
void
GpuAggAccNew(GpuAggState *st, GpuAggInput *in, uint32 group)
{
	GpuextAccum *acc = &in->group_accs[group];

	GpuextAccumInit(acc, NUMERICOID);
	acc->cxt = st->runcxt;
}

/* Registers of a compiled numeric argument: its constants, its columns' values, its intermediate results. */
#define NUMEXPR_REGS 32

/* One numeric column read into a register. */
typedef struct NumLoad
{
	AttrNumber	att;
	uint8		dst;
} NumLoad;

/* One fixed-point operation: regs[dst] = regs[a] op regs[b], a and b first brought to the larger scale. */
typedef struct NumStep
{
	GpuAggRowOp		op;
	uint8		dst;
	uint8		a;
	uint8		b;
	int8		ka;				/* ROWOP_ADD, ROWOP_SUB: a * 10^ka, b * 10^kb */
	int8		kb;
} NumStep;

struct GpuAggNumExpr
{
	int			nregs;
	int			nloads;
	int			nsteps;
	uint8		result;
	int			scale;			/* the result's display scale */
	NumLoad		loads[NUMEXPR_REGS];
	int8		load_scale[NUMEXPR_REGS];
	NumStep		steps[NUMEXPR_REGS];
	int8		reg_scale[NUMEXPR_REGS];
	int128		regs[NUMEXPR_REGS]; /* the constants set once, the rest per row */
};

/* Past this scale an expression is not compiled (the fixed point's 38 digits). */
#define NUMEXPR_MAX_SCALE 38

/*
 * The register holding node's value as a fixed-point numeric (steps added)
 * and its display scale, as PostgreSQL's numeric arithmetic gives it; -1
 * where node is not of the forms compiled.
 */
static int
CompileNumeric(CustomScan *cscan, Node *node, GpuAggNumExpr *e)
{
	int			a;
	int			b = 0;

	if (e->nregs == NUMEXPR_REGS)
		return -1;
	if (IsA(node, Const))
	{
		Const	   *c = (Const *) node;
		Datum		dscale;
		int128		v;

		if (c->consttype != NUMERICOID || c->constisnull)
			return -1;
		if (numeric_is_nan(DatumGetNumeric(c->constvalue)) || numeric_is_inf(DatumGetNumeric(c->constvalue)))
			return -1;
		dscale = DirectFunctionCall1Coll(numeric_scale, InvalidOid, c->constvalue);
		if (DatumGetInt32(dscale) > NUMEXPR_MAX_SCALE ||
			GpuextNumericToFixed(c->constvalue, DatumGetInt32(dscale), &v) != 0)
			return -1;
		e->regs[e->nregs] = v;
		e->reg_scale[e->nregs] = DatumGetInt32(dscale);
		return e->nregs++;
	}
	if (IsA(node, OpExpr) && ((OpExpr *) node)->opresulttype == NUMERICOID)
	{
		OpExpr	   *op = (OpExpr *) node;
		NumStep    *s;
		GpuAggRowOp		kind;
		int			scale;

		if (!GpuAggArithOp(op, F_NUMERIC_ADD, F_NUMERIC_SUB, F_NUMERIC_MUL, InvalidOid, F_NUMERIC_UMINUS, &kind))
			return -1;
		if ((a = CompileNumeric(cscan, linitial(op->args), e)) < 0 ||
			(kind != ROWOP_NEG && (b = CompileNumeric(cscan, lsecond(op->args), e)) < 0) ||
			e->nregs == NUMEXPR_REGS)
			return -1;
		/* numeric_add and numeric_sub: the larger display scale; numeric_mul: their sum */
		scale = kind == ROWOP_NEG ? e->reg_scale[a] :
			kind == ROWOP_MUL ? e->reg_scale[a] + e->reg_scale[b] : Max(e->reg_scale[a], e->reg_scale[b]);
		if (scale > NUMEXPR_MAX_SCALE)
			return -1;
		s = &e->steps[e->nsteps++];
		s->op = kind;
		s->a = a;
		s->b = b;
		s->ka = (kind == ROWOP_ADD || kind == ROWOP_SUB) ? scale - e->reg_scale[a] : 0;
		s->kb = (kind == ROWOP_ADD || kind == ROWOP_SUB) ? scale - e->reg_scale[b] : 0;
		s->dst = e->nregs;
		e->reg_scale[e->nregs] = scale;
		return e->nregs++;
	}
	if (IsA(node, Var) && ((Var *) node)->vartype == NUMERICOID)
	{
		AttrNumber	att = GpuAggScanColumn(cscan, (Expr *) node);
		int			precision;
		int			scale = GpuAggTypmodScale(((Var *) node)->vartypmod, &precision);

		if (att == 0 || scale < 0 || scale > NUMEXPR_MAX_SCALE)
			return -1;
		for (int i = 0; i < e->nloads; i++)
			if (e->loads[i].att == att)
				return e->loads[i].dst;
		e->loads[e->nloads].att = att;
		e->loads[e->nloads].dst = e->nregs;
		e->load_scale[e->nloads] = scale;
		e->nloads++;
		e->reg_scale[e->nregs] = scale;
		return e->nregs++;
	}
	return -1;
}

/* A numeric argument compiled, or NULL where it is not of the forms compiled. */
GpuAggNumExpr *
GpuAggCompileNumExpr(CustomScan *cscan, Expr *expr)
{
	GpuAggNumExpr *e = palloc0(sizeof(GpuAggNumExpr));
	int			result;

	if (exprType((Node *) expr) != NUMERICOID || (result = CompileNumeric(cscan, (Node *) expr, e)) < 0)
		return NULL;
	e->result = result;
	e->scale = e->reg_scale[result];
	return e;
}

/* The display scale of a compiled numeric argument's values. */
int
GpuAggNumExprScale(const GpuAggNumExpr *e)
{
	return e->scale;
}

/*
 * A compiled numeric argument's value for a row read in place, as an integer
 * at its display scale: false for a NaN or a value past 128 bits on the way,
 * which the row's slot then computes.
 */
bool
GpuAggNumExprEval(GpuAggNumExpr *e, GpuAggNumMemo *memo, const char *tp, const int *att_off, int128 *out)
{
	int128	   *r = e->regs;

	for (int i = 0; i < e->nloads; i++)
		if (GpuAggNumericColumn(memo, tp, att_off, e->loads[i].att, e->load_scale[i], &r[e->loads[i].dst]) != 0)
			return false;
	for (int i = 0; i < e->nsteps; i++)
	{
		const NumStep *s = &e->steps[i];
		int128		a = r[s->a];
		int128		b = r[s->b];
		bool		overflow;

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
			default:
				overflow = __builtin_sub_overflow((int128) 0, a, &r[s->dst]);
				break;
		}
		if (overflow)
			return false;
	}
	*out = r[e->result];
	return true;
}

/*
 * A compiled numeric argument appended to a device scan program's numeric
 * arithmetic (col_of_att: each column's index among the program's columns,
 * read there at their types' scales): the register of its value, or -1
 * where the program has no room or a constant does not fit a bigint.
 */
int
GpuAggNumExprToScan(const GpuAggNumExpr *e, GpuextScanProgram *p, const int *col_of_att)
{
	int			base = p->nnregs;

	StaticAssertStmt((int) ROWOP_ADD == (int) GPUEXT_SCAN_ADD && (int) ROWOP_SUB == (int) GPUEXT_SCAN_SUB &&
					 (int) ROWOP_MUL == (int) GPUEXT_SCAN_MUL && (int) ROWOP_NEG == (int) GPUEXT_SCAN_NEG,
					 "the operations are numbered alike");
	if (base + e->nregs > GPUEXT_SCAN_MAX_NREGS)
		return -1;
	for (int i = 0; i < e->nregs; i++)
	{
		if (e->regs[i] != (int64) e->regs[i])
			return -1;
		p->numconsts[base + i] = (int64) e->regs[i];
	}
	for (int i = 0; i < e->nloads; i++)
	{
		GpuextScanLoad *l = &p->numloads[p->nnloads++];

		l->col = col_of_att[e->loads[i].att];
		l->dst = base + e->loads[i].dst;
		if (p->cols[l->col].kind != GPUEXT_SCAN_NUMERIC || p->cols[l->col].scale != e->load_scale[i])
			return -1;
	}
	for (int i = 0; i < e->nsteps; i++)
	{
		const NumStep *s = &e->steps[i];
		GpuextScanNumStep *d = &p->numsteps[p->nnsteps++];

		if (s->ka < 0 || s->kb < 0 || s->ka > GPUEXT_SCAN_NUMERIC_MAX_UP || s->kb > GPUEXT_SCAN_NUMERIC_MAX_UP)
			return -1;
		d->op = (uint8) s->op;
		d->dst = base + s->dst;
		d->a = base + s->a;
		d->b = base + s->b;
		d->ka = s->ka;
		d->kb = s->kb;
	}
	p->nnregs = base + e->nregs;
	return base + e->result;
}

/* The columns (from 1) a compiled numeric argument reads, added to *atts. */
void
GpuAggNumExprColumns(const GpuAggNumExpr *e, Bitmapset **atts)
{
	for (int i = 0; i < e->nloads; i++)
		*atts = bms_add_member(*atts, e->loads[i].att);
}
