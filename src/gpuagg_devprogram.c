/*
 * gpuagg_devprogram.c
 *		GpuAgg's device scan program (cuda/scan_heap.h), built once for the
 *		node from its plan: the columns the device reads and how, the WHERE
 *		clause's and each FILTER's comparisons, the arithmetic, and each
 *		input's output; none where the node's scan cannot run on the device.
 *
 * Where: a heap table of 8 kB blocks, a WHERE clause and FILTERs compiled
 * (gpuagg_inplace.c) or absent, and every input a plain column of the
 * integers, date, timestamps, real or double precision, a count of non-NULL
 * values of any column, double precision and real arithmetic compiled for
 * rows read in place (under a FILTER too), or numeric and integer arithmetic compiled
 * (gpuagg_fixedexpr.c); with GROUP BY, keys the device groups
 * (gpuagg_devgroups.c).
 */
#include "postgres.h"

#include "access/tupdesc_details.h"
#include "catalog/pg_type.h"

#include "gpuagg.h"

/* How a column of this type is read on the device, false for none but its NULLs. */
static bool
ScanKind(Oid type, uint8 *kind)
{
	bool		is_float;

	*kind = GPUEXT_SCAN_NULLNESS;
	if (!GpuAggCompiledType(type, &is_float))
		return false;
	*kind = !is_float ? GPUEXT_SCAN_INT : type == FLOAT4OID ? GPUEXT_SCAN_FLOAT4 : GPUEXT_SCAN_FLOAT8;
	return true;
}

/* A column the program reads: its kind and what a tuple without it holds there. */
static void
ScanColumn(GpuextScanCol *col, TupleDesc tupdesc, AttrNumber att)
{
	Form_pg_attribute attr = TupleDescAttr(tupdesc, att - 1);
	bool		present = attr->atthasmissing && tupdesc->constr != NULL &&
		tupdesc->constr->missing != NULL && tupdesc->constr->missing[att - 1].am_present;
	Datum		d = present ? tupdesc->constr->missing[att - 1].am_value : (Datum) 0;

	col->att = att - 1;
	ScanKind(attr->atttypid, &col->kind);
	col->missing_null = !present;
	col->missing = 0;
	if (!present || col->kind == GPUEXT_SCAN_NULLNESS)
		return;
	switch (attr->attlen)
	{
		case 8:
			col->missing = DatumGetInt64(d);
			break;
		case 4:
			col->missing = DatumGetInt32(d);
			break;
		case 2:
			col->missing = DatumGetInt16(d);
			break;
		default:
			col->missing = DatumGetBool(d);
			break;
	}
}

/*
 * A numeric(p, s) column read as the bigint at scale s, where s is one the
 * device reads at and a tuple without the column has a default it can
 * hold; else it stays read for its NULLs only, and nothing reads its values.
 */
static void
NumericColumn(GpuextScanCol *col, TupleDesc tupdesc, AttrNumber att)
{
	Form_pg_attribute attr = TupleDescAttr(tupdesc, att - 1);
	int			precision;
	int			scale = GpuAggTypmodScale(attr->atttypmod, &precision);
	int128		v = 0;

	if (attr->atttypid != NUMERICOID || scale < 0 || scale > GPUEXT_SCAN_NUMERIC_MAX_UP)
		return;
	if (!col->missing_null &&
		(GpuextNumericToFixed(tupdesc->constr->missing[att - 1].am_value, scale, &v) != 0 || v != (int64) v))
		return;
	col->kind = GPUEXT_SCAN_NUMERIC;
	col->scale = scale;
	col->missing = (int64) v;
}

/*
 * Numeric columns whose values nothing reads are read for their NULLs only
 * (no NaN sends a batch back); false where the program reads the values of
 * one the device cannot read.
 */
static bool
NumericColumnsRead(GpuextScanProgram *p, TupleDesc tupdesc)
{
	uint32		read = 0;

	for (int i = 0; i < p->ncmps; i++)
		if (!p->cmps[i].nulltest)
			read |= 1u << p->cmps[i].col;
	for (int i = 0; i < p->nnloads; i++)
		read |= 1u << p->numloads[i].col;
	for (int i = 0; i < p->nloads; i++)
		read |= 1u << p->loads[i].col;
	for (int o = 0; o < p->nouts; o++)
		if (p->outs[o].from_reg == GPUEXT_SCAN_FROM_COLUMN && p->outs[o].col >= 0 && p->outs[o].value_bytes > 0)
			read |= 1u << p->outs[o].col;
	for (int c = 0; c < p->ncols; c++)
	{
		if (p->cols[c].kind == GPUEXT_SCAN_NUMERIC && !(read & (1u << c)))
			p->cols[c].kind = GPUEXT_SCAN_NULLNESS;
		if (TupleDescAttr(tupdesc, p->cols[c].att)->atttypid == NUMERICOID && (read & (1u << c)) &&
			p->cols[c].kind != GPUEXT_SCAN_NUMERIC)
			return false;
	}
	return true;
}

/*
 * The double precision and real arguments the device computes, and the
 * register of each input's (-1 for none): the rows' shared program where no
 * input with a FILTER has one, else every such argument compiled again into
 * one program.  The device computes them for every row that passes the
 * WHERE clause, FILTER or not, and raises an argument's error only where
 * its FILTER passes (gpuext_scan_compute), as PostgreSQL does.  False where
 * they do not fit one program.
 */
static bool
DevArgs(GpuAggState *st, CustomScan *cscan, GpuAggRowExpr **devargs, int **dev_reg)
{
	List	   *args = lsecond(cscan->custom_exprs);
	bool		filtered = false;

	*dev_reg = palloc(sizeof(int) * Max(st->ninputs, 1));
	for (int i = 0; i < st->ninputs; i++)
	{
		(*dev_reg)[i] = st->inputs[i].rowreg;
		filtered |= st->inputs[i].rowarg != NULL;
	}
	*devargs = st->rows.rowargs;
	if (!filtered)
		return true;
	*devargs = GpuAggRowExprCreate();
	for (int i = 0; i < st->ninputs; i++)
		if (st->inputs[i].rowreg >= 0 &&
			((*dev_reg)[i] = GpuAggRowExprAdd(*devargs, cscan, list_nth(args, i))) < 0)
			return false;
	return true;
}

/*
 * The node's scan program, where its scan can run on the device, else
 * NULL: the conditions compiled, the inputs plain columns of the kinds the
 * device reads, counts, or arithmetic compiled (each numeric input's
 * dev_scale set on the way).
 */
static GpuextScanProgram *
BuildProgram(GpuAggState *st, CustomScan *cscan, TupleDesc tupdesc)
{
	List	   *args = lsecond(cscan->custom_exprs);
	List	   *filters = lthird(cscan->custom_exprs);
	GpuAggRowQual **rowfilters;
	Bitmapset  *atts = NULL;
	GpuextScanProgram *p;
	int			col_of_att[GPUEXT_SCAN_MAX_ATTS + 1];
	int			maxatt = 0;
	int			a = -1;
	Bitmapset  *keyatts = NULL;
	Bitmapset  *textatts = NULL;
	Bitmapset  *intatts = NULL;
	GpuAggRowExpr *devargs = NULL;
	int		   *dev_reg = NULL;

#ifdef WORDS_BIGENDIAN
	return NULL;
#endif

	if (BLCKSZ != GPUEXT_SCAN_PAGE_BYTES || st->ninputs > GPUEXT_SCAN_MAX_OUTS ||
		(st->rows.qual != NULL && st->rows.rowqual == NULL))
		return NULL;
	if (st->rows.rowqual != NULL)
	{
		GpuAggRowQualColumns(st->rows.rowqual, &atts);
		GpuAggRowQualTextColumns(st->rows.rowqual, &textatts);
	}
	rowfilters = palloc0(sizeof(GpuAggRowQual *) * Max(st->ninputs, 1));
	if (st->rows.fixed && !DevArgs(st, cscan, &devargs, &dev_reg))
		return NULL;
	for (int i = 0; i < st->ninputs; i++)
	{
		GpuAggInput *in = &st->inputs[i];
		Expr	   *arg = list_nth(args, i);
		uint8		kind;
		int			precision;
		int			scale;

		in->dev_scale = -1;
		if (in->filter != NULL)
		{
			rowfilters[i] = GpuAggCompileRowQual(cscan, list_make1(list_nth(filters, i)));
			if (rowfilters[i] == NULL)
				return NULL;
			GpuAggRowQualColumns(rowfilters[i], &atts);
			GpuAggRowQualTextColumns(rowfilters[i], &textatts);
		}
		if (in->arg != NULL && in->numarg != NULL)
		{
			/* numeric or integer arithmetic compiled (gpuagg_fixedexpr.c): numerics bigints at their display scale */
			GpuAggNumExprColumns(in->numarg, &atts);
			GpuAggNumExprTextColumns(in->numarg, &textatts);
			if (GpuAggInputIsNumeric(in))
				in->dev_scale = GpuAggNumExprScale(in->numarg);
			continue;
		}
		if (in->arg != NULL && in->type != NULL)
		{
			/* double precision and real arithmetic, in one program for every input (DevArgs) */
			if (!st->rows.fixed || devargs == NULL || dev_reg[i] < 0 ||
				(in->type->typid != FLOAT8OID && in->type->typid != FLOAT4OID))
				return NULL;
			continue;
		}
		if (in->arg != NULL)
		{
			/* count(*) FILTER: a true constant counted */
			if (!IsA(arg, Const) || ((Const *) arg)->constisnull)
				return NULL;
			continue;
		}
		if (in->type != NULL && (in->numeric_scale >= 0 || GpuAggInputIsNumeric(in)))
		{
			/* a numeric column: its values bigints at its type's scale */
			scale = GpuAggTypmodScale(TupleDescAttr(tupdesc, in->argatt - 1)->atttypmod, &precision);
			if (scale < 0 || scale > GPUEXT_SCAN_NUMERIC_MAX_UP ||
				(in->numeric_scale >= 0 && scale != in->numeric_scale))
				return NULL;
			if (GpuAggInputIsNumeric(in))
				in->dev_scale = scale;
		}
		else if (in->type != NULL && (!ScanKind(in->type->typid, &kind) ||
									  TupleDescAttr(tupdesc, in->argatt - 1)->attlen != in->type->value_bytes))
			return NULL;
		atts = bms_add_member(atts, in->argatt);
	}
	if (st->rows.fixed && devargs != NULL)
	{
		GpuAggRowExprColumnsUsed(devargs, &atts);
		GpuAggRowExprTextColumns(devargs, &textatts);
	}
	/* GROUP BY: the keys' columns: as bytes (their values read for nothing else), or integers for a modulus */
	if (st->groups.nkeys > 0 && !GpuAggDevGroupsKeys(st, tupdesc, &keyatts, &intatts))
		return NULL;
	atts = bms_union(bms_union(atts, keyatts), intatts);
	while ((a = bms_next_member(atts, a)) >= 0)
		maxatt = a;
	if (maxatt > GPUEXT_SCAN_MAX_ATTS || bms_num_members(atts) > GPUEXT_SCAN_MAX_COLS)
		return NULL;

	p = palloc0(sizeof(GpuextScanProgram));
	p->walk_atts = maxatt;
	for (a = 0; a < maxatt; a++)
	{
		Form_pg_attribute attr = TupleDescAttr(tupdesc, a);

		if (attr->attlen != -1 && attr->attlen <= 0)
			return NULL;
		p->att_len[a] = attr->attlen;
		p->att_align[a] = attr->attalign == TYPALIGN_DOUBLE ? ALIGNOF_DOUBLE :
			attr->attalign == TYPALIGN_INT ? ALIGNOF_INT : attr->attalign == TYPALIGN_SHORT ? ALIGNOF_SHORT : 1;
	}
	a = -1;
	while ((a = bms_next_member(atts, a)) >= 0)
	{
		col_of_att[a] = p->ncols;
		ScanColumn(&p->cols[p->ncols++], tupdesc, a);
		/* keys, and text compared (its bytes read only where a tuple without it has NULL there) */
		if (bms_is_member(a, keyatts) || (bms_is_member(a, textatts) && p->cols[p->ncols - 1].missing_null))
			p->cols[p->ncols - 1].kind = GPUEXT_SCAN_BYTES;
		else
			NumericColumn(&p->cols[p->ncols - 1], tupdesc, a);
	}
	if (st->rows.rowqual != NULL && !GpuAggRowQualToScan(st->rows.rowqual, p, col_of_att))
		return NULL;
	p->nquals = p->ncmps;
	if (st->rows.fixed && devargs != NULL && !GpuAggRowExprToScan(devargs, p, col_of_att))
		return NULL;
	for (int i = 0; i < st->ninputs; i++)
	{
		GpuAggInput *in = &st->inputs[i];
		GpuextScanOut *out = &p->outs[p->nouts++];

		out->col = in->arg != NULL ? -1 : col_of_att[in->argatt];
		out->value_bytes = in->type == NULL ? 0 : in->dev_scale >= 0 ? 8 : in->type->value_bytes;
		out->from_reg = in->numarg != NULL ? GPUEXT_SCAN_FROM_NUMERIC :
			in->arg == NULL || in->type == NULL ? GPUEXT_SCAN_FROM_COLUMN : GPUEXT_SCAN_FROM_DOUBLE;
		out->reg = out->from_reg == GPUEXT_SCAN_FROM_DOUBLE ? dev_reg[i] : 0;
		if (out->from_reg == GPUEXT_SCAN_FROM_NUMERIC)
		{
			int			reg = GpuAggNumExprToScan(in->numarg, p, col_of_att);

			if (reg < 0)
				return NULL;
			out->reg = reg;
		}
		/* a numeric column's values are read only where they were made readable (scale, default) */
		if (out->from_reg == GPUEXT_SCAN_FROM_COLUMN && out->value_bytes > 0 &&
			(in->numeric_scale >= 0 || in->dev_scale >= 0) && p->cols[out->col].kind != GPUEXT_SCAN_NUMERIC)
			return NULL;
		out->filter_first = p->ncmps;
		if (rowfilters[i] != NULL && !GpuAggRowQualToScan(rowfilters[i], p, col_of_att))
			return NULL;
		out->filter_n = p->ncmps - out->filter_first;
	}
	if (st->groups.nkeys > 0)
	{
		GpuAggDevGroupsProgram(st, p, col_of_att);
		if (GpuAggDevGroupsKeyValueRead(p))
			return NULL;
	}
	if (!NumericColumnsRead(p, tupdesc))
		return NULL;
	return p;
}

/* The node's scan program (st->dev.program), or none; inputs' dev_scale -1 without one. */
void
GpuAggDevScanSetup(GpuAggState *st, CustomScan *cscan, TupleDesc tupdesc)
{
	st->dev.program = BuildProgram(st, cscan, tupdesc);
	for (int i = 0; i < st->ninputs && st->dev.program == NULL; i++)
		st->inputs[i].dev_scale = -1;
}
