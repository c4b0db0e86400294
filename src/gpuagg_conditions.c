/*
 * gpuagg_conditions.c
 *		GpuAgg's WHERE clause and FILTERs compiled, for rows read in place
 *		(gpuagg_inplace.c) and, through gpuagg_devconditions.c, for the device
 *		scan's program (gpuagg_devprogram.c).
 *
 * A condition compiles when it is an AND, OR or NOT of comparisons of a
 * column (or of an integer column modulo a positive constant of its type)
 * with a constant by the btree operators of the integers, date, timestamp,
 * timestamptz, bool, real and double precision (cross-type within the
 * integers and within the floats, date against timestamp), of numeric(p, s)
 * with numeric constants, of text, varchar and char(n) with a constant (=,
 * <>, LIKE and NOT LIKE 'prefix%' of text and varchar) under a
 * deterministic collation, IN and NOT IN lists (of integers, floats, dates,
 * timestamps and text), IS [NOT] NULL, and a boolean column alone or under
 * IS [NOT] TRUE, FALSE or UNKNOWN.  They are evaluated as PostgreSQL's
 * operators compare (float8_cmp_internal: NaN above every number and equal
 * to itself), for rows without NULLs, where OR and NOT are two-valued.
 * IN and NOT IN lists compile in gpuagg_conditions_lists.c, comparisons of
 * extract(year ...) and date_trunc(...) of a column as its range in
 * gpuagg_conditions_dates.c.
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/nbtree.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/datetime.h"
#include "utils/fmgroids.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"

#include "agg_accum.h"
#include "gpuagg.h"
#include "gpuagg_conditions.h"


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

/* Whether a text column's value at p meets the comparison (bytes, as a deterministic collation compares). */
static bool
TextMeets(const RowCmp *c, const char *p)
{
	struct varlena *v = (struct varlena *) p;
	struct varlena *d = pg_detoast_datum_packed(v);
	const char *s = VARDATA_ANY(d);
	int			len = VARSIZE_ANY_EXHDR(d);
	bool		r;

	/* char(n) compares without its trailing blanks (bpchareq), but LIKE with them (bpcharlike) */
	if (c->coltype == BPCHAROID && c->strategy != ROWCMP_LIKE)
		len = bpchartruelen(unconstify(char *, s), len);
	if (c->strategy == ROWCMP_PREFIX)
		r = len >= c->tlen && memcmp(s, c->tbytes, c->tlen) == 0;
	else if (c->strategy == ROWCMP_SUFFIX)
		r = len >= c->tlen && memcmp(s + len - c->tlen, c->tbytes, c->tlen) == 0;
	else if (c->strategy == ROWCMP_CONTAINS)
		r = c->tlen == 0 || (len >= c->tlen && memmem(s, len, c->tbytes, c->tlen) != NULL);
	else if (c->strategy == ROWCMP_LIKE)
		r = gpuext_scan_like((const unsigned char *) s, len, (const unsigned char *) c->tbytes, c->tlen,
							 GetDatabaseEncoding() == PG_UTF8);
	else
	{
		r = len == c->tlen && memcmp(s, c->tbytes, c->tlen) == 0;
		if (c->strategy == ROWCMP_NOT_EQUAL)
			r = !r;
	}
	if (d != v)
		pfree(d);
	return r;
}

/* date_trunc's units the device may leave to the CPU, by name. */
static const char *const trunc_unit_names[] = {
	[GPUEXT_SCAN_TRUNC_MONTH] = "month", [GPUEXT_SCAN_TRUNC_QUARTER] = "quarter", [GPUEXT_SCAN_TRUNC_YEAR] = "year",
};

/*
 * A date or timestamp value under the comparison's unit, in place (as the
 * device computes it, scan_heap_units.h); false where it is NULL (a field of
 * an infinity).  Where the device would leave date_trunc to the CPU, near
 * the first timestamps, PostgreSQL's timestamp_trunc computes it, raising
 * its error where it does.
 */
static bool
UnitImage(const RowCmp *c, int64 *v)
{
	GpuextScanCmp k = {.unit = c->unit, .micros = c->micros};
	int64		rep;
	int			got = gpuext_scan_cmp_unit(&k, *v, &rep);

	if (got < 0)
	{
		Assert(c->micros && c->unit < lengthof(trunc_unit_names) && trunc_unit_names[c->unit] != NULL);
		rep = DatumGetTimestamp(DirectFunctionCall2(timestamp_trunc, CStringGetTextDatum(trunc_unit_names[c->unit]),
													TimestampGetDatum(*v)));
	}
	*v = rep;
	return got != 0;
}

/* Whether a row passes every compiled comparison of the WHERE clause or a FILTER. */
bool
GpuAggRowQualPasses(const GpuAggRowQual *q, const char *tp, const int *att_off)
{
	for (int i = 0; i < q->ncmps; i++)
	{
		const RowCmp *c = &q->cmps[i];
		int			cmp;

		/* a row read in place has all its columns, none NULL: OR and NOT are two-valued for it */
		if (c->kind == ROWCMP_BOOL)
		{
			bool		any = false;

			for (int j = 0; j < c->nsubs && !any; j++)
				any = GpuAggRowQualPasses(c->subs[j], tp, att_off);
			if (any == c->negate)
				return false;
			continue;
		}
		if (c->kind == ROWCMP_NULLTEST)
		{
			if (c->strategy == ROWCMP_IS_NULL)
				return false;
			continue;
		}
		if (c->in_n > 0)
		{
			if (!GpuAggInList(c, tp + att_off[c->att - 1]))
				return false;
			continue;
		}
		if (c->kind == ROWCMP_TEXT)
		{
			if (!TextMeets(c, tp + att_off[c->att - 1]))
				return false;
			continue;
		}
		if (c->kind == ROWCMP_INT)
		{
			const char *p = tp + att_off[c->att - 1];
			int64		v;

			v = GpuAggIntAt(p, c->len);
			if (c->modulus > 0)
				v %= c->modulus;
			if (c->unit != GPUEXT_SCAN_TRUNC_NONE && !UnitImage(c, &v))
				return false;
			cmp = v < c->ival ? -1 : v > c->ival ? 1 : 0;
		}
		else if (c->kind == ROWCMP_NUMERIC)
			cmp = NumericCmp(c, tp + att_off[c->att - 1]);
		else
			cmp = float8_cmp_internal(GpuAggColumnFloat8(tp, att_off, c->att, c->coltype), c->fval);
		if (!GpuAggStrategyHolds(c->strategy, cmp))
			return false;
	}
	return true;
}

/* Whether a comparison's btree strategy (or ROWCMP_NOT_EQUAL) holds where its sides compare as cmp. */
bool
GpuAggStrategyHolds(int strategy, int cmp)
{
	switch (strategy)
	{
		case BTLessStrategyNumber:
			return cmp < 0;
		case BTLessEqualStrategyNumber:
			return cmp <= 0;
		case BTEqualStrategyNumber:
			return cmp == 0;
		case BTGreaterEqualStrategyNumber:
			return cmp >= 0;
		case ROWCMP_NOT_EQUAL:
			return cmp != 0;
		default:
			return cmp > 0;
	}
}

/* Whether the column type is compared as signed integers or as floats. */
bool
GpuAggCmpKind(Oid type, RowCmpKind *kind)
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
	c->colscale = scale;
	if (precision - scale + c->nscale > 38 || GpuextNumericToFixed(k->constvalue, c->nscale, &c->nval) != 0)
		return false;
	c->kind = ROWCMP_NUMERIC;
	c->nconst = k->constvalue;
	c->modulus = 0;
	return true;
}

/*
 * The strategy of operator opno in type's btree operator family
 * (ROWCMP_NOT_EQUAL for the negator of its =), and the operator's input
 * types; false where it is neither.
 */
bool
GpuAggBtreeStrategy(Oid opno, Oid type, int *strategy, Oid *lefttype, Oid *righttype)
{
	TypeCacheEntry *tc = lookup_type_cache(type, TYPECACHE_BTREE_OPFAMILY);
	Oid			eq;

	if (!OidIsValid(tc->btree_opf))
		return false;
	if (op_in_opfamily(opno, tc->btree_opf))
	{
		get_op_opfamily_properties(opno, tc->btree_opf, false, strategy, lefttype, righttype);
		return true;
	}
	eq = get_negator(opno);
	if (!OidIsValid(eq) || !op_in_opfamily(eq, tc->btree_opf))
		return false;
	get_op_opfamily_properties(eq, tc->btree_opf, false, strategy, lefttype, righttype);
	if (*strategy != BTEqualStrategyNumber)
		return false;
	*strategy = ROWCMP_NOT_EQUAL;
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
	int			strategy;
	Oid			lefttype;
	Oid			righttype;
	RowCmpKind	constkind;

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
	else if (c->att == 0 || !GpuAggCmpKind(c->coltype, &c->kind) || !GpuAggCmpKind(k->consttype, &constkind) ||
			 constkind != c->kind)
		return false;
	/* Only the type's own btree operators, and <> as the negator of its =; across types, only integers
	 * with integers, floats with floats, and date with timestamp */
	if (!GpuAggBtreeStrategy(op->opno, c->coltype, &strategy, &lefttype, &righttype))
		return false;
	if ((commuted ? righttype : lefttype) != c->coltype || (commuted ? lefttype : righttype) != k->consttype)
		return false;
	if (c->kind == ROWCMP_INT && c->coltype != k->consttype &&
		!((c->coltype == INT2OID || c->coltype == INT4OID || c->coltype == INT8OID) &&
		  (k->consttype == INT2OID || k->consttype == INT4OID || k->consttype == INT8OID)) &&
		!(c->coltype == DATEOID && k->consttype == TIMESTAMPOID) &&
		!(c->coltype == TIMESTAMPOID && k->consttype == DATEOID))
		return false;
	if (commuted && strategy != ROWCMP_NOT_EQUAL)
		strategy = BTCommuteStrategyNumber(strategy);
	c->strategy = strategy;
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
		case BOOLOID:
			c->ival = DatumGetBool(k->constvalue);
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

/*
 * Whether a LIKE pattern can be matched whole (ROWCMP_LIKE): it fits the
 * device program's room, _ and % step over characters the matcher knows (one
 * byte each, or UTF-8), and it does not end in its escape, which PostgreSQL
 * raises an error for once a match gets that far.
 */
static bool
LikePatternFits(const char *s, int len)
{
	if (len > GPUEXT_SCAN_LIKE_BYTES ||
		(pg_database_encoding_max_length() > 1 && GetDatabaseEncoding() != PG_UTF8))
		return false;
	for (int i = 0; i < len; i++)
		if (s[i] == '\\' && ++i == len)
			return false;
	return true;
}

/*
 * A text, varchar or char(n) column against a constant under a
 * deterministic collation, where equal means equal bytes: =, <> (texteq,
 * textne, bpchareq, bpcharne) and LIKE of text and varchar.  A pattern of
 * literal characters with % at its start, its end, both or neither is
 * compared as bytes; any other (_, escapes, % inside, an infix past
 * GPUEXT_SCAN_TEXT_BYTES) is matched whole (ROWCMP_LIKE), up to
 * GPUEXT_SCAN_LIKE_BYTES, unless it ends in its escape (PostgreSQL's error).
 * LIKE of char(n) (bpcharlike) is always matched whole, over the value's
 * stored bytes with their trailing blanks, as textlike reads them there.
 * A part matched past the value's start needs an encoding whose characters
 * cannot match inside another's bytes (one byte a character, or UTF-8).
 * False where it is not of that form.
 */
bool
GpuAggCompileText(CustomScan *cscan, Node *node, RowCmp *c)
{
	OpExpr	   *op = (OpExpr *) node;
	Node	   *left;
	Node	   *right;
	struct varlena *k;
	const char *s;
	int			len;
	bool		bpchar;

	if (!IsA(node, OpExpr) || list_length(op->args) != 2)
		return false;
	switch (op->opfuncid)
	{
		case F_TEXTEQ:
		case F_BPCHAREQ:
			c->strategy = BTEqualStrategyNumber;
			break;
		case F_TEXTNE:
		case F_BPCHARNE:
			c->strategy = ROWCMP_NOT_EQUAL;
			break;
		case F_TEXTLIKE:
		case F_BPCHARLIKE:
			c->strategy = ROWCMP_PREFIX;
			break;
		default:
			return false;
	}
	bpchar = op->opfuncid == F_BPCHAREQ || op->opfuncid == F_BPCHARNE || op->opfuncid == F_BPCHARLIKE;
	left = linitial(op->args);
	right = lsecond(op->args);
	if (IsA(left, Const) && op->opfuncid != F_TEXTLIKE && op->opfuncid != F_BPCHARLIKE)
	{
		Node	   *t = left;

		left = right;
		right = t;
	}
	/* varchar is read through text's operators */
	if (IsA(left, RelabelType))
		left = (Node *) ((RelabelType *) left)->arg;
	if (!IsA(left, Var) || !IsA(right, Const) || ((Const *) right)->constisnull ||
		!OidIsValid(op->inputcollid) || !get_collation_isdeterministic(op->inputcollid))
		return false;
	c->coltype = ((Var *) left)->vartype;
	if (bpchar ? c->coltype != BPCHAROID : (c->coltype != TEXTOID && c->coltype != VARCHAROID))
		return false;
	if ((c->att = GpuAggScanColumn(cscan, (Expr *) left)) == 0)
		return false;
	k = pg_detoast_datum_packed((struct varlena *) DatumGetPointer(((Const *) right)->constvalue));
	s = VARDATA_ANY(k);
	len = VARSIZE_ANY_EXHDR(k);
	if (bpchar && op->opfuncid != F_BPCHARLIKE)
		len = bpchartruelen(unconstify(char *, s), len);
	if (op->opfuncid == F_BPCHARLIKE)
	{
		/* char(n) LIKE: the value's bytes as stored, blanks and all (bpcharlike is textlike) */
		if (!LikePatternFits(s, len))
			return false;
		c->strategy = ROWCMP_LIKE;
	}
	else if (op->opfuncid == F_TEXTLIKE)
	{
		bool		head = len > 0 && s[0] == '%';
		bool		tail = len > (head ? 1 : 0) && s[len - 1] == '%';
		bool		literal = true;

		for (int i = head; i < len - tail; i++)
			literal = literal && s[i] != '%' && s[i] != '_' && s[i] != '\\';
		if (!literal || (head && tail && len - 2 > GPUEXT_SCAN_TEXT_BYTES))
		{
			if (!LikePatternFits(s, len))
				return false;
			c->strategy = ROWCMP_LIKE;
		}
		else
		{
			s += head;
			len -= head + tail;
			c->strategy = head && tail ? ROWCMP_CONTAINS : head ? ROWCMP_SUFFIX : tail ? ROWCMP_PREFIX :
				BTEqualStrategyNumber;
			if (head && pg_database_encoding_max_length() > 1 && GetDatabaseEncoding() != PG_UTF8)
				return false;
		}
	}
	c->tbytes = pnstrdup(s, len);
	c->tlen = len;
	c->kind = ROWCMP_TEXT;
	c->len = -1;
	return true;
}

/* c: a boolean column is true (or false, as want says). */
static void
BoolColumnIs(RowCmp *c, AttrNumber att, bool want)
{
	memset(c, 0, sizeof(RowCmp));
	c->att = att;
	c->coltype = BOOLOID;
	c->kind = ROWCMP_INT;
	c->len = 1;
	c->strategy = BTEqualStrategyNumber;
	c->ival = want;
}

/*
 * A boolean column as a condition: itself (true), or under IS [NOT] TRUE,
 * IS [NOT] FALSE or IS [NOT] UNKNOWN (IS NOT TRUE: false or NULL).  False
 * where it is not of that form.
 */
static bool
CompileBool(CustomScan *cscan, Node *node, RowCmp *c)
{
	BooleanTest *bt = IsA(node, BooleanTest) ? (BooleanTest *) node : NULL;
	Node	   *arg = bt != NULL ? (Node *) bt->arg : node;
	AttrNumber	att;

	if (!IsA(arg, Var) || ((Var *) arg)->vartype != BOOLOID || (att = GpuAggScanColumn(cscan, (Expr *) arg)) == 0)
		return false;
	switch (bt != NULL ? bt->booltesttype : IS_TRUE)
	{
		case IS_TRUE:
		case IS_FALSE:
			BoolColumnIs(c, att, bt == NULL || bt->booltesttype == IS_TRUE);
			return true;
		case IS_UNKNOWN:
		case IS_NOT_UNKNOWN:
			memset(c, 0, sizeof(RowCmp));
			c->att = att;
			c->coltype = BOOLOID;
			c->kind = ROWCMP_NULLTEST;
			c->strategy = bt->booltesttype == IS_UNKNOWN ? ROWCMP_IS_NULL : ROWCMP_IS_NOT_NULL;
			return true;
		default:
			{
				/* IS NOT TRUE: = false OR IS NULL; IS NOT FALSE: = true OR IS NULL */
				GpuAggRowQual *is = palloc0(offsetof(GpuAggRowQual, cmps) + sizeof(RowCmp));
				GpuAggRowQual *null = palloc0(offsetof(GpuAggRowQual, cmps) + sizeof(RowCmp));

				BoolColumnIs(&is->cmps[0], att, bt->booltesttype == IS_NOT_FALSE);
				is->ncmps = 1;
				null->cmps[0].att = att;
				null->cmps[0].coltype = BOOLOID;
				null->cmps[0].kind = ROWCMP_NULLTEST;
				null->cmps[0].strategy = ROWCMP_IS_NULL;
				null->ncmps = 1;
				memset(c, 0, sizeof(RowCmp));
				c->kind = ROWCMP_BOOL;
				c->subs = palloc(sizeof(GpuAggRowQual *) * 2);
				c->subs[0] = is;
				c->subs[1] = null;
				c->nsubs = 2;
				return true;
			}
	}
}

/*
 * Whether a compiled condition may be NULL for a row without NULLs: it holds
 * an IN list that had NULLs, or a field of extract (NULL for an infinity).
 */
static bool
MayBeNull(const GpuAggRowQual *q)
{
	for (int i = 0; i < q->ncmps; i++)
	{
		if (q->cmps[i].in_nulls || q->cmps[i].unit >= GPUEXT_SCAN_FIELD_QUARTER)
			return true;
		for (int j = 0; j < q->cmps[i].nsubs; j++)
			if (MayBeNull(q->cmps[i].subs[j]))
				return true;
	}
	return false;
}

/* An implicit-AND list of conditions compiled, or NULL where some conjunct is not of the forms compiled. */
GpuAggRowQual *
GpuAggCompileRowQual(CustomScan *cscan, List *quals)
{
	GpuAggRowQual *q = palloc(offsetof(GpuAggRowQual, cmps) + sizeof(RowCmp) * Max(list_length(quals), 1));
	GpuAggRowQual *sub;
	ListCell   *lc;

	q->ncmps = 0;
	foreach(lc, quals)
	{
		Node	   *node = lfirst(lc);

		memset(&q->cmps[q->ncmps], 0, sizeof(RowCmp));
		if (IsA(node, BoolExpr) && ((BoolExpr *) node)->boolop == AND_EXPR)
		{
			sub = GpuAggCompileRowQual(cscan, ((BoolExpr *) node)->args);
			if (sub == NULL)
				return NULL;
			q = repalloc(q, offsetof(GpuAggRowQual, cmps) + sizeof(RowCmp) * (q->ncmps + sub->ncmps + list_length(quals)));
			memcpy(&q->cmps[q->ncmps], sub->cmps, sizeof(RowCmp) * sub->ncmps);
			q->ncmps += sub->ncmps;
			continue;
		}
		if (IsA(node, BoolExpr))
		{
			BoolExpr   *b = (BoolExpr *) node;
			RowCmp	   *c = &q->cmps[q->ncmps];
			ListCell   *la;

			c->kind = ROWCMP_BOOL;
			c->negate = b->boolop == NOT_EXPR;
			c->subs = palloc(sizeof(GpuAggRowQual *) * list_length(b->args));
			foreach(la, b->args)
			{
				if ((c->subs[c->nsubs] = GpuAggCompileRowQual(cscan, list_make1(lfirst(la)))) == NULL)
					return NULL;
				/* NOT of NULL is not true, which a compiled NOT (two-valued, for rows without NULLs) cannot say */
				if (c->negate && MayBeNull(c->subs[c->nsubs]))
					return NULL;
				c->nsubs++;
			}
			q->ncmps++;
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
		if ((IsA(node, Var) || IsA(node, BooleanTest)) && exprType(node) == BOOLOID)
		{
			if (!CompileBool(cscan, node, &q->cmps[q->ncmps]))
				return NULL;
			q->ncmps++;
			continue;
		}
		if (IsA(node, OpExpr) &&
			(((OpExpr *) node)->opfuncid == F_TEXTNLIKE || ((OpExpr *) node)->opfuncid == F_BPCHARNLIKE))
		{
			/* NOT LIKE: the NOT of the LIKE */
			OpExpr	   *like = copyObject((OpExpr *) node);

			like->opfuncid = like->opfuncid == F_TEXTNLIKE ? F_TEXTLIKE : F_BPCHARLIKE;
			if (!GpuAggCompileText(cscan, (Node *) like, GpuAggNotOfOne(&q->cmps[q->ncmps])))
				return NULL;
			q->ncmps++;
			continue;
		}
		if (IsA(node, ScalarArrayOpExpr) && (sub = GpuAggCompileDateIn(cscan, (ScalarArrayOpExpr *) node)) != NULL)
		{
			/* extract or date_trunc IN a list: one OR of them, or for <> ALL the comparisons ANDed */
			q = repalloc(q, offsetof(GpuAggRowQual, cmps) + sizeof(RowCmp) * (q->ncmps + sub->ncmps + list_length(quals)));
			memcpy(&q->cmps[q->ncmps], sub->cmps, sizeof(RowCmp) * sub->ncmps);
			q->ncmps += sub->ncmps;
			continue;
		}
		if (IsA(node, ScalarArrayOpExpr) && GpuAggCompileTextIn(cscan, (ScalarArrayOpExpr *) node, &q->cmps[q->ncmps]))
		{
			q->ncmps++;
			continue;
		}
		if (IsA(node, ScalarArrayOpExpr) && !((ScalarArrayOpExpr *) node)->useOr)
		{
			if (!GpuAggCompileNotIn(cscan, (ScalarArrayOpExpr *) node, &q->cmps[q->ncmps]))
				return NULL;
			q->ncmps++;
			continue;
		}
		if (IsA(node, ScalarArrayOpExpr))
		{
			if (!GpuAggCompileIn(cscan, (ScalarArrayOpExpr *) node, &q->cmps[q->ncmps]))
				return NULL;
			q->ncmps++;
			continue;
		}
		if ((sub = GpuAggCompileDateRange(cscan, node)) != NULL)
		{
			/* a range of a date or timestamp column: its comparisons, ANDed */
			q = repalloc(q, offsetof(GpuAggRowQual, cmps) + sizeof(RowCmp) * (q->ncmps + sub->ncmps + list_length(quals)));
			memcpy(&q->cmps[q->ncmps], sub->cmps, sizeof(RowCmp) * sub->ncmps);
			q->ncmps += sub->ncmps;
			continue;
		}
		if (!GpuAggCompileText(cscan, node, &q->cmps[q->ncmps]) && !CompileCmp(cscan, node, &q->cmps[q->ncmps]))
			return NULL;
		q->ncmps++;
	}
	return q;
}

/* The columns (from 1) a compiled condition reads, added to *atts. */
void
GpuAggRowQualColumns(const GpuAggRowQual *q, Bitmapset **atts)
{
	for (int i = 0; i < q->ncmps; i++)
	{
		if (q->cmps[i].kind == ROWCMP_BOOL)
			for (int j = 0; j < q->cmps[i].nsubs; j++)
				GpuAggRowQualColumns(q->cmps[i].subs[j], atts);
		else
			*atts = bms_add_member(*atts, q->cmps[i].att);
	}
}
