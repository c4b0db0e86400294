/*
 * gpuagg_conditions_dates.c
 *		Comparisons of extract(year from ...) or date_part('year', ...) of a
 *		date or timestamp column, and of date_trunc(unit, ...) of a timestamp
 *		column, with a constant, compiled for GpuAgg's WHERE clause and
 *		FILTERs (gpuagg_conditions.c) as comparisons of the column itself.
 *
 * Both functions are monotonic in the column, infinities included (the
 * year of infinity is Infinity, date_trunc of it is itself), so each
 * comparison is a range of the column: extract(year from d) >= 1995 is
 * d >= date '1995-01-01', and date_trunc('day', ts) = '1995-03-01' is
 * ts >= '1995-03-01' AND ts < '1995-03-02' for the unit day.  A year is never 0 (1 BC is
 * -1), and a constant no value can equal (1995.5, a timestamp not at a
 * unit's start) makes = never true and <> true for every value not NULL.
 * The bounds come from PostgreSQL's own date2j, timestamp_trunc and
 * timestamp_pl_interval, so they are its calendar's.
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "catalog/pg_type.h"
#include "datatype/timestamp.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/datetime.h"
#include "utils/float.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

#include "gpuagg.h"
#include "gpuagg_conditions.h"

/* Years past these are past both types' ranges (5874897 AD for dates, 4714 BC the first). */
#define YEAR_ABOVE_ALL 6000000
#define YEAR_BELOW_ALL (-5000)

/*
 * The units date_trunc's ranges are taken for, and the interval to a unit's
 * next start: those that truncate every timestamp without error.  A month,
 * quarter or year starts before the first timestamp (4714-11-24 BC, a
 * Monday at midnight), so PostgreSQL raises an error for the timestamps of
 * that first unit, which a range would not.
 */
static const struct
{
	const char *name;
	const char *step;
} TruncUnits[] = {
	{"second", "1 second"}, {"minute", "1 minute"}, {"hour", "1 hour"}, {"day", "1 day"}, {"week", "7 days"},
};

/*
 * The first value of year y (BC negative, never 0) as a date's days or a
 * timestamp's microseconds; past the type's range, a value above every
 * finite one (its infinity) or below every finite one but above -infinity.
 */
static int64
YearStart(int64 y, bool micros)
{
	int64		astronomical = y > 0 ? y : y + 1;
	int64		days;

	if (astronomical <= JULIAN_MINYEAR)
		return micros ? DT_NOBEGIN + 1 : (int64) DATEVAL_NOBEGIN + 1;
	if (micros ? astronomical >= 294277 : astronomical >= 5874898)
		return micros ? DT_NOEND : (int64) DATEVAL_NOEND;
	days = date2j((int) astronomical, 1, 1) - POSTGRES_EPOCH_JDATE;
	return micros ? days * USECS_PER_DAY : days;
}

/* The year after y (there is no year 0). */
static inline int64
NextYear(int64 y)
{
	return y == -1 ? 1 : y + 1;
}

/*
 * The year a constant (numeric or float8) stands at: the least year at or
 * above it (years past both ranges held at YEAR_ABOVE_ALL or
 * YEAR_BELOW_ALL), and whether it is that year; false for NaN and the
 * infinities.
 */
static bool
ConstYear(Const *k, int64 *least, bool *exact)
{
	if (k->consttype == NUMERICOID)
	{
		Numeric		n = DatumGetNumeric(k->constvalue);
		Datum		ceiling;
		Datum		above = NumericGetDatum(int64_to_numeric(YEAR_ABOVE_ALL));
		Datum		below = NumericGetDatum(int64_to_numeric(YEAR_BELOW_ALL));

		if (numeric_is_nan(n) || numeric_is_inf(n))
			return false;
		ceiling = DirectFunctionCall1(numeric_ceil, k->constvalue);
		*exact = DatumGetInt32(DirectFunctionCall2(numeric_cmp, k->constvalue, ceiling)) == 0;
		if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, ceiling, above)) > 0)
			ceiling = above, *exact = false;
		else if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, ceiling, below)) < 0)
			ceiling = below, *exact = false;
		*least = DatumGetInt64(DirectFunctionCall1(numeric_int8, ceiling));
	}
	else
	{
		float8		v = DatumGetFloat8(k->constvalue);

		if (isnan(v) || isinf(v))
			return false;
		*exact = v == ceil(v) && v <= YEAR_ABOVE_ALL && v >= YEAR_BELOW_ALL;
		v = ceil(v);
		*least = v > YEAR_ABOVE_ALL ? YEAR_ABOVE_ALL : v < YEAR_BELOW_ALL ? YEAR_BELOW_ALL : (int64) v;
	}
	/* there is no year 0 */
	if (*least == 0)
	{
		*least = 1;
		*exact = false;
	}
	return true;
}

/* c: column att (coltype) <strategy> ival. */
static void
ColumnCmp(RowCmp *c, AttrNumber att, Oid coltype, int strategy, int64 ival)
{
	memset(c, 0, sizeof(RowCmp));
	c->att = att;
	c->coltype = coltype;
	c->kind = ROWCMP_INT;
	c->len = coltype == DATEOID ? 4 : 8;
	c->strategy = strategy;
	c->ival = ival;
}

/* A condition of n comparisons (AND), zeroed. */
static GpuAggRowQual *
Qual(int n)
{
	GpuAggRowQual *q = palloc0(offsetof(GpuAggRowQual, cmps) + sizeof(RowCmp) * n);

	q->ncmps = n;
	return q;
}

/* The condition column att (coltype) <strategy> ival. */
static GpuAggRowQual *
OneCmp(AttrNumber att, Oid coltype, int strategy, int64 ival)
{
	GpuAggRowQual *q = Qual(1);

	ColumnCmp(&q->cmps[0], att, coltype, strategy, ival);
	return q;
}

/*
 * value <strategy> the constant, where value is a monotonic function of the
 * column whose values from lo on are at least the constant and from hi on
 * above it (lo = hi: no value equals it): the column's range.
 */
static GpuAggRowQual *
RangeOf(AttrNumber att, Oid coltype, int strategy, int64 lo, int64 hi)
{
	GpuAggRowQual *q;

	switch (strategy)
	{
		case BTLessStrategyNumber:
			return OneCmp(att, coltype, BTLessStrategyNumber, lo);
		case BTLessEqualStrategyNumber:
			return OneCmp(att, coltype, BTLessStrategyNumber, hi);
		case BTGreaterEqualStrategyNumber:
			return OneCmp(att, coltype, BTGreaterEqualStrategyNumber, lo);
		case BTGreaterStrategyNumber:
			return OneCmp(att, coltype, BTGreaterEqualStrategyNumber, hi);
		case BTEqualStrategyNumber:
			q = Qual(2);
			ColumnCmp(&q->cmps[0], att, coltype, BTGreaterEqualStrategyNumber, lo);
			ColumnCmp(&q->cmps[1], att, coltype, BTLessStrategyNumber, hi);
			return q;
		default:
			/* <>: below the range OR from its end on */
			q = Qual(1);
			q->cmps[0].kind = ROWCMP_BOOL;
			q->cmps[0].subs = palloc(sizeof(GpuAggRowQual *) * 2);
			q->cmps[0].subs[0] = OneCmp(att, coltype, BTLessStrategyNumber, lo);
			q->cmps[0].subs[1] = OneCmp(att, coltype, BTGreaterEqualStrategyNumber, hi);
			q->cmps[0].nsubs = 2;
			return q;
	}
}

/*
 * The date or timestamp column an extract or date_part reads, or NULL.  Not
 * a date under date_part's cast to timestamp, which raises an error for a
 * date past the timestamps' range.
 */
static Var *
YearColumn(FuncExpr *f)
{
	Node	   *arg = lsecond(f->args);

	if (!IsA(arg, Var) || exprType(arg) != (f->funcid == F_EXTRACT_TEXT_DATE ? DATEOID : TIMESTAMPOID))
		return NULL;
	return (Var *) arg;
}

/* date_trunc(unit, column) <strategy> t as the column's range; NULL where it is not of the forms compiled. */
static GpuAggRowQual *
TruncRange(AttrNumber att, Const *unit, int strategy, Timestamp t)
{
	char	   *name = TextDatumGetCString(unit->constvalue);
	const char *step = NULL;
	Timestamp	start;
	Timestamp	next;

	for (int u = 0; u < lengthof(TruncUnits); u++)
		if (pg_strcasecmp(name, TruncUnits[u].name) == 0)
			step = TruncUnits[u].step;
	/* away from the range's ends, where a unit's next start could not be computed */
	if (step == NULL || t < YearStart(-4000, true) || t >= YearStart(294000, true))
		return NULL;
	start = DatumGetTimestamp(DirectFunctionCall2(timestamp_trunc, unit->constvalue, TimestampGetDatum(t)));
	next = DatumGetTimestamp(DirectFunctionCall2(timestamp_pl_interval, TimestampGetDatum(start),
												 DirectFunctionCall3(interval_in, CStringGetDatum(step),
																	 ObjectIdGetDatum(InvalidOid),
																	 Int32GetDatum(-1))));
	/* values from start on truncate to start or later; t not a unit's start: none equals it */
	return start == t ? RangeOf(att, TIMESTAMPOID, strategy, t, next) : RangeOf(att, TIMESTAMPOID, strategy, next, next);
}

/*
 * A comparison of extract(year ...), date_part('year', ...) or
 * date_trunc(unit, ...) of a column with a constant, by the btree
 * operators of its result type, as a condition on the column; NULL where
 * the node is not of those forms.
 */
GpuAggRowQual *
GpuAggCompileDateRange(CustomScan *cscan, Node *node)
{
	OpExpr	   *op = (OpExpr *) node;
	FuncExpr   *f;
	Const	   *k;
	Const	   *unit;
	Var		   *var;
	AttrNumber	att;
	int			strategy;
	Oid			lefttype,
				righttype;
	bool		commuted;

	if (!IsA(node, OpExpr) || list_length(op->args) != 2)
		return NULL;
	commuted = IsA(linitial(op->args), Const);
	f = (FuncExpr *) (commuted ? lsecond(op->args) : linitial(op->args));
	k = (Const *) (commuted ? linitial(op->args) : lsecond(op->args));
	if (!IsA(f, FuncExpr) || !IsA(k, Const) || k->constisnull || list_length(f->args) != 2 ||
		!IsA(linitial(f->args), Const) || ((Const *) linitial(f->args))->constisnull ||
		k->consttype != f->funcresulttype)
		return NULL;
	unit = linitial(f->args);
	/* the result type's own btree operator (<> as the negator of its =) */
	if (!GpuAggBtreeStrategy(op->opno, f->funcresulttype, &strategy, &lefttype, &righttype))
		return NULL;
	if (lefttype != f->funcresulttype || righttype != f->funcresulttype)
		return NULL;
	if (commuted && strategy != ROWCMP_NOT_EQUAL)
		strategy = BTCommuteStrategyNumber(strategy);
	if (f->funcid == F_DATE_TRUNC_TEXT_TIMESTAMP)
	{
		Timestamp	t = DatumGetTimestamp(k->constvalue);

		if (!IsA(lsecond(f->args), Var) || exprType(lsecond(f->args)) != TIMESTAMPOID || TIMESTAMP_NOT_FINITE(t) ||
			(att = GpuAggScanColumn(cscan, lsecond(f->args))) == 0)
			return NULL;
		return TruncRange(att, unit, strategy, t);
	}
	if (f->funcid == F_EXTRACT_TEXT_DATE || f->funcid == F_EXTRACT_TEXT_TIMESTAMP ||
		f->funcid == F_DATE_PART_TEXT_TIMESTAMP)
	{
		char	   *field = TextDatumGetCString(unit->constvalue);
		int64		least;
		bool		exact;
		bool		micros;

		if (pg_strcasecmp(field, "year") != 0 || (var = YearColumn(f)) == NULL ||
			(att = GpuAggScanColumn(cscan, (Expr *) var)) == 0 || !ConstYear(k, &least, &exact))
			return NULL;
		micros = var->vartype == TIMESTAMPOID;
		/* values from the start of the least year at or above the constant are at least it */
		return RangeOf(att, var->vartype, strategy, YearStart(least, micros),
					   exact ? YearStart(NextYear(least), micros) : YearStart(least, micros));
	}
	return NULL;
}
