/*
 * gpuagg_devconditions.c
 *		GpuAgg's compiled WHERE clause and FILTERs (gpuagg_conditions.c) put
 *		into the device scan's program: OR groups of comparisons that must all
 *		hold, NOT pushed down to the comparisons.
 *
 * SQL's AND and OR are monotone in false < NULL < true, and a row passes
 * only where its condition is true; with every NOT pushed down to a
 * comparison (its negator, which is NULL where the comparison is), a NULL
 * comparison can therefore be taken as false, which is what the device's
 * comparisons give for a NULL column.  An OR of ANDs is left to the CPU.
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "catalog/pg_type.h"
#include "nodes/bitmapset.h"

#include "gpuagg.h"
#include "gpuagg_conditions.h"

/* The text columns (from 1) a compiled condition compares, added to *atts: the device reads their bytes. */
void
GpuAggRowQualTextColumns(const GpuAggRowQual *q, Bitmapset **atts)
{
	for (int i = 0; i < q->ncmps; i++)
	{
		if (q->cmps[i].kind == ROWCMP_BOOL)
			for (int j = 0; j < q->cmps[i].nsubs; j++)
				GpuAggRowQualTextColumns(q->cmps[i].subs[j], atts);
		else if (q->cmps[i].kind == ROWCMP_TEXT)
			*atts = bms_add_member(*atts, q->cmps[i].att);
	}
}

/* The device's strategy for NOT column <strategy> constant: its negator (a NULL stays NULL). */
static const uint8 NegatedStrategy[] = {0, BTGreaterEqualStrategyNumber, BTGreaterStrategyNumber, ROWCMP_NOT_EQUAL,
	BTLessStrategyNumber, BTLessEqualStrategyNumber, BTEqualStrategyNumber};

/*
 * Append one comparison (value v of an IN list, where it is one) to the
 * program, in the OR group being built, negated where neg; false where the
 * device cannot run it.
 */
static bool
ScanLiteral(const RowCmp *c, int v, bool neg, GpuextScanProgram *p, const int *col_of_att)
{
	GpuextScanCmp *k;

	/* text as its bytes, where the column's are read and the constant is short; numerics as bigints at its scale */
	if (p->ncmps >= GPUEXT_SCAN_MAX_CMPS ||
		(c->kind == ROWCMP_TEXT &&
		 (c->tlen > GPUEXT_SCAN_TEXT_BYTES || p->cols[col_of_att[c->att]].kind != GPUEXT_SCAN_BYTES)) ||
		(c->kind == ROWCMP_NUMERIC &&
		 (c->nscale - c->colscale > 19 || c->nval != (int64) c->nval ||
		  p->cols[col_of_att[c->att]].kind != GPUEXT_SCAN_NUMERIC || p->cols[col_of_att[c->att]].scale != c->colscale)))
		return false;
	k = &p->cmps[p->ncmps++];
	memset(k, 0, sizeof(GpuextScanCmp));
	k->num_up = c->kind == ROWCMP_NUMERIC ? c->nscale - c->colscale : 0;
	k->ival = c->kind == ROWCMP_NUMERIC ? (int64) c->nval : c->in_n > 0 ? c->in_ivals[v] : c->ival;
	k->fval = c->in_n > 0 ? c->in_fvals[v] : c->fval;
	k->col = col_of_att[c->att];
	k->is_float = c->kind == ROWCMP_FLOAT;
	k->modulus = c->modulus;
	if (c->kind == ROWCMP_NULLTEST)
	{
		k->nulltest = (c->strategy == ROWCMP_IS_NULL) != neg ? GPUEXT_SCAN_IS_NULL : GPUEXT_SCAN_IS_NOT_NULL;
		k->strategy = c->strategy;
	}
	else if (c->kind == ROWCMP_TEXT)
	{
		/* = or <> of the bytes (LIKE 'prefix%' as the = of a prefix) */
		k->text = c->strategy == ROWCMP_PREFIX ? GPUEXT_SCAN_TEXT_PREFIX :
			c->coltype == BPCHAROID ? GPUEXT_SCAN_TEXT_BPCHAR : GPUEXT_SCAN_TEXT_EQUAL;
		k->strategy = (c->strategy == ROWCMP_NOT_EQUAL) != neg ? GPUEXT_SCAN_NOT_EQUAL : BTEqualStrategyNumber;
		k->tlen = c->tlen;
		memcpy(k->tbytes, c->tbytes, c->tlen);
	}
	else
		k->strategy = neg ? NegatedStrategy[c->strategy] : c->strategy;
	k->or_next = 1;
	return true;
}

/* End the OR group being built with the last comparison appended. */
static inline void
ScanCloseGroup(GpuextScanProgram *p)
{
	p->cmps[p->ncmps - 1].or_next = 0;
}

static bool ScanGroups(const GpuAggRowQual *q, bool neg, GpuextScanProgram *p, const int *col_of_att);
static bool ScanGroupsOf(const RowCmp *c, bool neg, GpuextScanProgram *p, const int *col_of_att);

/* A condition (negated where neg) appended as comparisons of one OR group; false where it is not one. */
static bool
ScanOr(const GpuAggRowQual *q, bool neg, GpuextScanProgram *p, const int *col_of_att)
{
	if (!neg && q->ncmps != 1)
		return false;
	for (int i = 0; i < q->ncmps; i++)
	{
		const RowCmp *c = &q->cmps[i];
		bool		ok = true;

		if (c->kind == ROWCMP_BOOL && c->negate)
			ok = ScanOr(c->subs[0], !neg, p, col_of_att);
		else if (c->kind == ROWCMP_BOOL && neg)
			ok = c->nsubs == 1 && ScanOr(c->subs[0], true, p, col_of_att);
		else if (c->kind == ROWCMP_BOOL)
			for (int j = 0; j < c->nsubs && ok; j++)
				ok = ScanOr(c->subs[j], false, p, col_of_att);
		else if (c->in_n > 0 && neg)
			ok = c->in_n == 1 && !c->in_nulls && ScanLiteral(c, 0, true, p, col_of_att);
		else if (c->in_n > 0)
			for (int v = 0; v < c->in_n && ok; v++)
				ok = ScanLiteral(c, v, false, p, col_of_att);
		else
			ok = ScanLiteral(c, 0, neg, p, col_of_att);
		if (!ok)
			return false;
	}
	return true;
}

/* A condition (negated where neg) appended as OR groups that must all hold; false where the device cannot. */
static bool
ScanGroups(const GpuAggRowQual *q, bool neg, GpuextScanProgram *p, const int *col_of_att)
{
	if (neg && q->ncmps == 1)
		return ScanGroupsOf(&q->cmps[0], true, p, col_of_att);
	if (neg)
	{
		/* NOT (a AND b): NOT a OR NOT b */
		if (!ScanOr(q, true, p, col_of_att))
			return false;
		ScanCloseGroup(p);
		return true;
	}
	for (int i = 0; i < q->ncmps; i++)
		if (!ScanGroupsOf(&q->cmps[i], false, p, col_of_att))
			return false;
	return true;
}

/* One compiled condition (negated where neg) appended as OR groups that must all hold. */
static bool
ScanGroupsOf(const RowCmp *c, bool neg, GpuextScanProgram *p, const int *col_of_att)
{
	if (c->kind == ROWCMP_BOOL && c->negate)
		return ScanGroups(c->subs[0], !neg, p, col_of_att);
	if (c->kind == ROWCMP_BOOL && neg)
	{
		/* NOT (a OR b): NOT a AND NOT b */
		for (int j = 0; j < c->nsubs; j++)
			if (!ScanGroups(c->subs[j], true, p, col_of_att))
				return false;
		return true;
	}
	if (c->kind == ROWCMP_BOOL)
	{
		for (int j = 0; j < c->nsubs; j++)
			if (!ScanOr(c->subs[j], false, p, col_of_att))
				return false;
		ScanCloseGroup(p);
		return true;
	}
	if (c->in_n > 0 && neg)
	{
		/* NOT IN: each value's <>; with a NULL in the list never true, left to the CPU */
		if (c->in_nulls)
			return false;
		for (int v = 0; v < c->in_n; v++)
		{
			if (!ScanLiteral(c, v, true, p, col_of_att))
				return false;
			ScanCloseGroup(p);
		}
		return true;
	}
	for (int v = 0; v < Max(c->in_n, 1); v++)
		if (!ScanLiteral(c, v, neg, p, col_of_att))
			return false;
	ScanCloseGroup(p);
	return true;
}

/*
 * A compiled condition appended to a device scan program (col_of_att: each
 * column's index among the program's columns) with NOT pushed down to the
 * comparisons, as OR groups that must all hold (an IN list is one group of
 * its values' =); false where the device cannot run it (a text constant
 * past GPUEXT_SCAN_TEXT_BYTES, an OR of ANDs, no room).
 */
bool
GpuAggRowQualToScan(const GpuAggRowQual *q, GpuextScanProgram *p, const int *col_of_att)
{
	return ScanGroups(q, false, p, col_of_att);
}
