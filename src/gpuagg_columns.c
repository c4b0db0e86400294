/*
 * gpuagg_columns.c
 *		GpuAgg's pages added column by column: where the inputs are plain
 *		columns of fixed width or compiled double precision arithmetic, the
 *		visible rows of a page (gpuagg_pages.c) located and filtered one by
 *		one, then each input's values gathered at once into its batch, or
 *		with GROUP BY into its groups' states.
 *
 * A page with a row that has NULLs or fewer columns is left to be added
 * row by row (gpuagg_rows.c).
 */
#include "postgres.h"

#include "pgstat.h"
#include "storage/bufpage.h"

#include "gpuagg.h"

/*
 * Whether pages can be added column by column: the WHERE clause compiled or
 * absent, the keys plain columns, and every input a plain column of fixed
 * width by value or a compiled double precision argument, without FILTER
 * or a CASE branch that may raise (computed for every row, it would).
 * Where the table has columns of varying width before them, their offsets
 * are found per row.  A compiled argument's values are in its register's
 * column (GpuAggRowExprColumns), where its pointers are set once here.
 */
bool
GpuAggColumnsEligible(GpuAggState *st)
{
	if (!st->rows.fixed || st->rows.numargs || (st->rows.rowargs != NULL && GpuAggRowExprLazy(st->rows.rowargs)))
		return false;
	for (int i = 0; i < st->ninputs; i++)
	{
		GpuAggInput *in = &st->inputs[i];

		if (in->filter != NULL)
			return false;
		/* (a value that may be NULL, a CASE's, is added row by row) */
		if (in->arg != NULL && (in->rowarg != NULL || in->rowreg < 0 ||
								GpuAggRowExprMayBeNull(st->rows.rowargs, in->rowreg) ||
								(in->type != NULL && in->type->typid != FLOAT8OID)))
			return false;
		if (in->arg == NULL && in->type != NULL && (!in->fixed_byval || in->fixed_len != in->type->value_bytes))
			return false;
	}
	st->rows.colptrs = palloc(sizeof(const char *) * MaxHeapTuplesPerPage * Max(st->ninputs, 1));
	st->rows.colkeys = palloc(sizeof(Datum) * MaxHeapTuplesPerPage * Max(st->groups.nkeys, 1));
	st->rows.plain_dst = palloc(sizeof(const char **) * Max(st->ninputs, 1));
	st->rows.plain_att = palloc(sizeof(int) * Max(st->ninputs, 1));
	st->rows.plain_off = palloc(sizeof(int) * Max(st->ninputs, 1));
	st->rows.nplain = 0;
	for (int i = 0; i < st->ninputs; i++)
		if (st->inputs[i].arg == NULL && st->inputs[i].type != NULL)
		{
			st->rows.plain_dst[st->rows.nplain] = st->rows.colptrs + (Size) i * MaxHeapTuplesPerPage;
			st->rows.plain_att[st->rows.nplain++] = st->inputs[i].argatt - 1;
		}
	if (st->rows.rowargs != NULL)
		st->rows.rowcols = GpuAggRowExprColumns(st->rows.rowargs);
	for (int i = 0; i < st->ninputs; i++)
		for (int j = 0; j < MaxHeapTuplesPerPage && st->inputs[i].arg != NULL; j++)
			st->rows.colptrs[(Size) i * MaxHeapTuplesPerPage + j] =
				(const char *) &st->rows.rowcols[(Size) st->inputs[i].rowreg * MaxHeapTuplesPerPage + j];
	return true;
}

/* Copy m values of width bytes, one at each of ptrs, one after another into dst. */
void
GpuAggGatherColumn(char *dst, const char *const *ptrs, int m, int bytes)
{
	switch (bytes)
	{
		case 8:
			for (int k = 0; k < m; k++)
				((int64 *) dst)[k] = *(const int64 *) ptrs[k];
			break;
		case 4:
			for (int k = 0; k < m; k++)
				((int32 *) dst)[k] = *(const int32 *) ptrs[k];
			break;
		default:
			for (int k = 0; k < m; k++)
				memcpy(dst + (Size) k * bytes, ptrs[k], bytes);
			break;
	}
}

/* n values of each input, one at each of its pointers, into its batch (else its accumulator). */
static void
AddColumns(GpuAggState *st, int n)
{
	for (int i = 0; i < st->ninputs; i++)
	{
		GpuAggInput *in = &st->inputs[i];
		const char *const *ptrs = st->rows.colptrs + (Size) i * MaxHeapTuplesPerPage;
		int			j = 0;

		if (in->type == NULL)
		{
			in->count += n;
			continue;
		}
		while (j < n && in->batching)
		{
			int			m;

			if (in->nbatch == in->capacity)
			{
				GpuAggInputGrow(st, in);
				continue;
			}
			m = Min(n - j, (int) (in->capacity - in->nbatch));
			GpuAggGatherColumn(in->batch + in->nbatch * in->type->value_bytes, ptrs + j, m, in->type->value_bytes);
			in->nbatch += m;
			j += m;
		}
		for (; j < n; j++)
			GpuextAccumAdd(in->acc, fetch_att(ptrs[j], true, in->type->value_bytes));
	}
}

/* Spill passing row j of the page, whose keys have no group: its keys and each input's value. */
static void
SpillColumnRow(GpuAggState *st, int j)
{
	Datum		keys[64];
	Datum		values[64];
	uint64		flags = 0;

	for (int k = 0; k < st->groups.nkeys; k++)
		keys[k] = st->rows.colkeys[(Size) k * MaxHeapTuplesPerPage + j];
	for (int c = 0; c < st->ninputs; c++)
	{
		if (st->inputs[c].type != NULL)
			values[c] = fetch_att(st->rows.colptrs[(Size) c * MaxHeapTuplesPerPage + j], true,
								  st->inputs[c].type->value_bytes);
		flags |= UINT64CONST(1) << c;
	}
	GpuAggSpillWrite(st, keys, flags, values);
}

/*
 * A page's rows that pass the WHERE clause: where each plain column input
 * has its value, the compiled arguments' registers and the keys, row by row.
 */
static int
PageRows(GpuAggState *st, GpuAggPages *pg)
{
	const char **const *dst = st->rows.plain_dst;
	const int  *att = st->rows.plain_att;
	int		   *off = st->rows.plain_off;
	const int  *att_off = st->rows.att_off;
	int			ncols = st->rows.nplain;
	bool		walk = st->rows.walk_from < st->rows.maxatt;
	GpuAggRowQual *rowqual = st->rows.rowqual;
	int			npass = 0;

	for (int c = 0; c < ncols; c++)
		off[c] = att_off[att[c]];
	for (int i = 0; i < pg->ntuples; i++)
	{
		HeapTupleHeader th = (HeapTupleHeader) PageGetItem(pg->page, PageGetItemId(pg->page, pg->offsets[i]));
		const char *tp = (const char *) th + th->t_hoff;

		if (walk)
		{
			GpuAggWalkOffsets(st, tp);
			for (int c = 0; c < ncols; c++)
				off[c] = att_off[att[c]];
		}
		if (rowqual != NULL && !GpuAggRowQualPasses(rowqual, tp, att_off))
			continue;
		for (int c = 0; c < ncols; c++)
			dst[c][npass] = tp + off[c];
		if (st->rows.rowcols != NULL)
			GpuAggRowExprLoad(st->rows.rowargs, tp, att_off, st->rows.rowcols, npass);
		for (int k = 0; k < st->groups.nkeys; k++)
			st->rows.colkeys[(Size) k * MaxHeapTuplesPerPage + npass] =
				fetch_att(tp + att_off[st->groups.key_att[k] - 1], st->groups.key_byval[k], st->groups.key_len[k]);
		npass++;
	}
	return npass;
}

/*
 * A page's visible rows added to the inputs column by column (where
 * GpuAggColumnsEligible): each passing row's values located (and with GROUP
 * BY its group found), then each input's values gathered at once.  False,
 * having done nothing, where a row has NULLs or fewer columns, for the
 * caller to add the page row by row.
 */
bool
GpuAggTakePageColumns(GpuAggState *st, GpuAggPages *pg)
{
	uint32		groups[MaxHeapTuplesPerPage];
	int			n = pg->ntuples;
	int			npass = 0;

	for (int i = 0; i < n; i++)
	{
		HeapTupleHeader th = (HeapTupleHeader) PageGetItem(pg->page, PageGetItemId(pg->page, pg->offsets[i]));

		if ((th->t_infomask & HEAP_HASNULL) != 0 || HeapTupleHeaderGetNatts(th) < st->rows.maxatt)
			return false;
	}
	npass = PageRows(st, pg);
	for (int i = 0; i < n; i++)
		pgstat_count_heap_getnext(pg->rel);
	st->stats.rows_read += n;
	st->stats.rows_in_place += n;
	st->stats.rows_passed += npass;
	if (st->rows.rowcols != NULL)
		GpuAggRowExprRunColumns(st->rows.rowargs, st->rows.rowcols, npass);
	if (st->groups.nkeys > 0)
		GpuAggGroupLookupKeys(st, st->rows.colkeys, groups, npass);
	for (int j = 0; j < npass && st->groups.nkeys > 0; j++)
	{
		if (unlikely(groups[j] == GPUAGG_SPILL))
			SpillColumnRow(st, j);
		else
			st->groups.group_rows[groups[j]]++;
	}
	if (st->groups.nkeys == 0)
		AddColumns(st, npass);
	else
		for (int c = 0; c < st->ninputs && !st->device_lost; c++)
			GpuAggGroupAddColumn(st, &st->inputs[c], groups, st->rows.colptrs + (Size) c * MaxHeapTuplesPerPage, npass);
	return true;
}
