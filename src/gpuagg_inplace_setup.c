/*
 * gpuagg_inplace_setup.c
 *		Which of GpuAgg's rows are read in place (gpuagg_rows.c), set up once
 *		for the node: its WHERE clause, FILTERs and arguments compiled
 *		(gpuagg_conditions.c, gpuagg_inplace.c, gpuagg_fixedexpr.c), its keys
 *		plain columns, and where a row's columns lie.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"

#include "gpuagg.h"

/* Whether arguments of the type compile into the double precision registers (a real is exact there). */
static inline bool
IsFloatType(Oid type)
{
	return type == FLOAT8OID || type == FLOAT4OID;
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
		if (in->arg != NULL && IsFloatType(exprType((Node *) list_nth(args, i))) && in->filter == NULL)
		{
			/* arguments computed for every row share one program */
			if (st->rows.rowargs == NULL)
				st->rows.rowargs = GpuAggRowExprCreate();
			in->rowreg = GpuAggRowExprAdd(st->rows.rowargs, cscan, list_nth(args, i));
		}
		else if (in->arg != NULL && IsFloatType(exprType((Node *) list_nth(args, i))))
		{
			in->rowarg = GpuAggRowExprCreate();
			in->rowreg = GpuAggRowExprAdd(in->rowarg, cscan, list_nth(args, i));
		}
		/* numeric and integer arguments, and what count() counts of them (count(CASE WHEN ... THEN 1 END)) */
		if (in->arg != NULL && in->rowreg < 0 &&
			(GpuAggInputIsNumeric(in) || GpuAggInputIsInteger(in, exprType((Node *) list_nth(args, i))) ||
			 (in->type == NULL && !IsA(list_nth(args, i), Const))))
			in->numarg = GpuAggCompileNumExpr(cscan, list_nth(args, i));
		st->rows.numargs |= in->numarg != NULL;
		/* count(*) FILTER counts a true constant: nothing to compute */
		if ((in->filter != NULL && in->rowfilter == NULL) ||
			(in->arg != NULL && in->rowreg < 0 && in->numarg == NULL &&
			 !(in->type == NULL && IsA(list_nth(args, i), Const) && !((Const *) list_nth(args, i))->constisnull)))
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
