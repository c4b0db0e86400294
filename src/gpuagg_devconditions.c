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
 * comparisons give for a NULL column.  An OR of ANDs is distributed into OR
 * groups, up to the program's room.
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
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
 * Append one comparison (value v of an IN list, where it is one; part of a
 * long text constant) to the program, in the OR group being built, negated
 * where neg; false where the device cannot run it.
 */
static bool
ScanLiteral(const RowCmp *c, int v, int part, bool neg, GpuextScanProgram *p, const int *col_of_att)
{
	GpuextScanCmp *k;

	/* text as its bytes, where the column's are read (a pattern, where it has room); numerics as bigints at its scale */
	if (p->ncmps >= GPUEXT_SCAN_MAX_CMPS ||
		(c->kind == ROWCMP_TEXT && p->cols[col_of_att[c->att]].kind != GPUEXT_SCAN_BYTES) ||
		(c->kind == ROWCMP_TEXT && c->strategy == ROWCMP_LIKE && c->tlen > GPUEXT_SCAN_LIKE_BYTES - p->like_used) ||
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
	k->unit = c->unit;
	k->micros = c->micros;
	if (c->kind == ROWCMP_NULLTEST)
	{
		k->nulltest = (c->strategy == ROWCMP_IS_NULL) != neg ? GPUEXT_SCAN_IS_NULL : GPUEXT_SCAN_IS_NOT_NULL;
		k->strategy = c->strategy;
	}
	else if (c->kind == ROWCMP_TEXT && c->strategy == ROWCMP_LIKE)
	{
		/* a pattern matched whole, kept in the program's room for patterns */
		k->text = GPUEXT_SCAN_TEXT_LIKE;
		k->strategy = neg ? GPUEXT_SCAN_NOT_EQUAL : BTEqualStrategyNumber;
		k->utf8 = GetDatabaseEncoding() == PG_UTF8;
		k->toff = p->like_used;
		k->tfull = c->tlen;
		memcpy(p->like_bytes + p->like_used, c->tbytes, c->tlen);
		p->like_used += c->tlen;
	}
	else if (c->kind == ROWCMP_TEXT)
	{
		/* = or <> of the bytes (LIKE 'prefix%', '%suffix' and '%infix%' as the = of a part) */
		k->text = c->strategy == ROWCMP_PREFIX ? GPUEXT_SCAN_TEXT_PREFIX :
			c->strategy == ROWCMP_SUFFIX ? GPUEXT_SCAN_TEXT_SUFFIX :
			c->strategy == ROWCMP_CONTAINS ? GPUEXT_SCAN_TEXT_CONTAINS :
			c->coltype == BPCHAROID ? GPUEXT_SCAN_TEXT_BPCHAR : GPUEXT_SCAN_TEXT_EQUAL;
		k->strategy = (c->strategy == ROWCMP_NOT_EQUAL) != neg ? GPUEXT_SCAN_NOT_EQUAL : BTEqualStrategyNumber;
		k->tfull = c->tlen;
		k->toff = part * GPUEXT_SCAN_TEXT_BYTES;
		k->tlen = Min(c->tlen - k->toff, GPUEXT_SCAN_TEXT_BYTES);
		memcpy(k->tbytes, c->tbytes + k->toff, k->tlen);
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

/*
 * A condition in conjunctive form: a List of clauses (OR groups), each a
 * List of ScanLits, all of which must hold.  An OR of ANDs is distributed
 * into it (Kleene's logic is a distributive lattice, so the form is true
 * exactly where the condition is), up to CNF_MAX_CLAUSES clauses.
 */
typedef struct ScanLit
{
	const RowCmp *c;
	int			v;				/* the value of an IN list */
	int			part;			/* the part of a text constant past GPUEXT_SCAN_TEXT_BYTES */
	bool		neg;
} ScanLit;

#define CNF_MAX_CLAUSES GPUEXT_SCAN_MAX_CMPS

static List *CnfOfQual(const GpuAggRowQual *q, bool neg, bool *ok);

/* One literal: comparison c (value v of an IN list, part of a long text constant), negated where neg. */
static ScanLit *
NewLit(const RowCmp *c, int v, bool neg)
{
	ScanLit    *l = palloc(sizeof(ScanLit));

	l->c = c;
	l->v = v;
	l->part = 0;
	l->neg = neg;
	return l;
}

/*
 * A text comparison with a constant past GPUEXT_SCAN_TEXT_BYTES, in parts:
 * where it must hold, each part a clause; where it must not (<>, or NOT), one
 * clause of the parts' <>.  Not an infix, whose parts are not at one place.
 */
static List *
CnfOfLongText(const RowCmp *c, bool neg, bool *ok)
{
	int			parts = (c->tlen + GPUEXT_SCAN_TEXT_BYTES - 1) / GPUEXT_SCAN_TEXT_BYTES;
	bool		holds = (c->strategy != ROWCMP_NOT_EQUAL) != neg;
	List	   *out = NIL;
	List	   *clause = NIL;

	if (c->strategy == ROWCMP_CONTAINS || c->tlen > PG_UINT16_MAX || parts > GPUEXT_SCAN_MAX_CMPS)
	{
		*ok = false;
		return NIL;
	}
	for (int k = 0; k < parts; k++)
	{
		ScanLit    *l = NewLit(c, 0, neg);

		l->part = k;
		if (holds)
			out = lappend(out, list_make1(l));
		else
			clause = lappend(clause, l);
	}
	return holds ? out : list_make1(clause);
}

/* a OR b of two conjunctive forms: each clause of a with each of b. */
static List *
CnfOr(List *a, List *b, bool *ok)
{
	List	   *out = NIL;
	ListCell   *ca;
	ListCell   *cb;

	if (list_length(a) * list_length(b) > CNF_MAX_CLAUSES)
	{
		*ok = false;
		return NIL;
	}
	foreach(ca, a)
		foreach(cb, b)
			out = lappend(out, list_concat_copy((List *) lfirst(ca), (List *) lfirst(cb)));
	return out;
}

/* The conjunctive form of one compiled condition, negated where neg; *ok false where the device cannot. */
static List *
CnfOfCmp(const RowCmp *c, bool neg, bool *ok)
{
	List	   *out = NIL;

	if (c->kind == ROWCMP_BOOL && c->negate)
		return CnfOfQual(c->subs[0], !neg, ok);
	if (c->kind == ROWCMP_BOOL)
	{
		/* OR of its subconditions; NOT (a OR b): NOT a AND NOT b */
		for (int j = 0; j < c->nsubs && *ok; j++)
		{
			List	   *sub = CnfOfQual(c->subs[j], neg, ok);

			out = neg ? list_concat(out, sub) : j == 0 ? sub : CnfOr(out, sub, ok);
		}
		return out;
	}
	if (c->in_n > 0 && neg)
	{
		/* NOT IN: each value's <>; with a NULL in the list never true, left to the CPU */
		if (c->in_nulls)
			*ok = false;
		for (int v = 0; v < c->in_n && *ok; v++)
			out = lappend(out, list_make1(NewLit(c, v, true)));
		return out;
	}
	if (c->kind == ROWCMP_TEXT && c->strategy != ROWCMP_LIKE && c->tlen > GPUEXT_SCAN_TEXT_BYTES)
		return CnfOfLongText(c, neg, ok);
	if (c->in_n > 0)
	{
		/* IN: one clause of each value's = */
		List	   *clause = NIL;

		for (int v = 0; v < c->in_n; v++)
			clause = lappend(clause, NewLit(c, v, false));
		return list_make1(clause);
	}
	return list_make1(list_make1(NewLit(c, 0, neg)));
}

/* The conjunctive form of an AND of compiled conditions, negated where neg (NOT (a AND b): NOT a OR NOT b). */
static List *
CnfOfQual(const GpuAggRowQual *q, bool neg, bool *ok)
{
	List	   *out = NIL;

	for (int i = 0; i < q->ncmps && *ok; i++)
	{
		List	   *one = CnfOfCmp(&q->cmps[i], neg, ok);

		out = !neg ? list_concat(out, one) : i == 0 ? one : CnfOr(out, one, ok);
	}
	if (list_length(out) > CNF_MAX_CLAUSES)
		*ok = false;
	return out;
}

/*
 * A compiled condition appended to a device scan program (col_of_att: each
 * column's index among the program's columns) with NOT pushed down to the
 * comparisons, as OR groups that must all hold (an IN list is one group of
 * its values' =); false where the device cannot run it (an infix past
 * GPUEXT_SCAN_TEXT_BYTES, no room).
 */
bool
GpuAggRowQualToScan(const GpuAggRowQual *q, GpuextScanProgram *p, const int *col_of_att)
{
	bool		ok = true;
	List	   *cnf = CnfOfQual(q, false, &ok);
	ListCell   *cc;

	if (!ok)
		return false;
	foreach(cc, cnf)
	{
		ListCell   *cl;

		foreach(cl, (List *) lfirst(cc))
		{
			const ScanLit *l = lfirst(cl);

			if (!ScanLiteral(l->c, l->v, l->part, l->neg, p, col_of_att))
				return false;
		}
		ScanCloseGroup(p);
	}
	return true;
}
