/*
 * gpuagg_conditions_dates.c
 *		Comparisons of extract(field from ...) or date_part(field, ...) of a
 *		date or timestamp column, and of date_trunc(unit, ...) of a timestamp
 *		column, with a constant, compiled for GpuAgg's WHERE clause and
 *		FILTERs (gpuagg_conditions.c).
 *
 * The year and date_trunc are monotonic in the column, infinities included
 * (the year of infinity is Infinity, date_trunc of it is itself), so such a
 * comparison is a range of the column: extract(year from d) >= 1995 is
 * d >= date '1995-01-01', and date_trunc('day', ts) = '1995-03-01' is
 * ts >= '1995-03-01' AND ts < '1995-03-02' for the unit day.  A year is never 0 (1 BC is
 * -1), and a constant no value can equal (1995.5, a timestamp not at a
 * unit's start) makes = never true and <> true for every value not NULL.
 * The bounds come from PostgreSQL's own date2j, timestamp_trunc and
 * timestamp_pl_interval, so they are its calendar's.  The epoch, the Julian
 * day, decade, century, millennium and ISO year are monotonic too, and
 * -Infinity and Infinity at the infinities: their bounds are found with
 * PostgreSQL's extract (or date_part) itself (MonotonicFieldRange).
 *
 * The other fields (month, day, dow, week, hour, second ...) are not
 * monotonic: each is compared through the column's image under the field,
 * computed per row on the device and for rows read in place alike
 * (cuda/scan_heap_units.h: the first day of that month in 2000, the day of
 * the month less one, the Monday of that ISO week in 2004 ...), which
 * orders as the field does, with the constant made an image the same way.
 * A field of an infinity is NULL.  date_trunc to a month, quarter or year
 * is compared as the truncated value itself, the device leaving the first
 * timestamps, where PostgreSQL raises its error, to the CPU.  isodow is
 * compared as the days of the week (dow) it holds for (IsoDowIn).
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "catalog/pg_type.h"
#include "datatype/timestamp.h"
#include "nodes/nodeFuncs.h"
#include "nodes/makefuncs.h"
#include "parser/scansup.h"
#include "utils/array.h"
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
 * The units of date_trunc compared on the device (scan_heap_units.h): the
 * truncated timestamp itself, where a range of the column would not raise
 * PostgreSQL's error for the first timestamps; the device leaves those to
 * the CPU.
 */
static const struct
{
	const char *name;
	uint8		unit;
} TruncOnDevice[] = {
	{"month", GPUEXT_SCAN_TRUNC_MONTH}, {"quarter", GPUEXT_SCAN_TRUNC_QUARTER}, {"year", GPUEXT_SCAN_TRUNC_YEAR},
};

/*
 * extract's fields other than the year, compared on the device through
 * their image (scan_heap_units.h), a value that orders as the field does:
 * integer fields from lo to hi; the seconds (scale > 0) as the image's
 * microseconds of the minute, scale of them a unit of the field.  Not dow's
 * ISO form, whose Sunday (7) is out of the image's order.
 */
static const struct
{
	const char *name;
	uint8		unit;
	int64		lo;
	int64		hi;
	int64		scale;
} FieldUnits[] = {
	{"quarter", GPUEXT_SCAN_FIELD_QUARTER, 1, 4, 0},
	{"month", GPUEXT_SCAN_FIELD_MONTH, 1, 12, 0},
	{"day", GPUEXT_SCAN_FIELD_DAY, 1, 31, 0},
	{"doy", GPUEXT_SCAN_FIELD_DOY, 1, 366, 0},
	{"dow", GPUEXT_SCAN_FIELD_DOW, 0, 6, 0},
	{"week", GPUEXT_SCAN_FIELD_WEEK, 1, 53, 0},
	{"hour", GPUEXT_SCAN_FIELD_HOUR, 0, 23, 0},
	{"minute", GPUEXT_SCAN_FIELD_MINUTE, 0, 59, 0},
	{"second", GPUEXT_SCAN_FIELD_SECOND, 0, 0, 1000000},
	{"milliseconds", GPUEXT_SCAN_FIELD_SECOND, 0, 0, 1000},
	{"microseconds", GPUEXT_SCAN_FIELD_SECOND, 0, 0, 1},
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
 * The least integer at or above a constant (numeric, or float8 where scale
 * is 1) times scale, held within below .. above, and whether it is that
 * integer within them; false for NaN, the infinities and a float8 scaled.
 */
static bool
ConstCeil(Const *k, int64 scale, int64 below, int64 above, int64 *least, bool *exact)
{
	if (k->consttype == NUMERICOID)
	{
		Numeric		n = DatumGetNumeric(k->constvalue);
		Datum		v = k->constvalue;
		Datum		ceiling;

		if (numeric_is_nan(n) || numeric_is_inf(n))
			return false;
		if (scale != 1)
			v = DirectFunctionCall2(numeric_mul, v, NumericGetDatum(int64_to_numeric(scale)));
		ceiling = DirectFunctionCall1(numeric_ceil, v);
		*exact = DatumGetInt32(DirectFunctionCall2(numeric_cmp, v, ceiling)) == 0;
		if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, ceiling, NumericGetDatum(int64_to_numeric(above)))) > 0)
			ceiling = NumericGetDatum(int64_to_numeric(above)), *exact = false;
		else if (DatumGetInt32(DirectFunctionCall2(numeric_cmp, ceiling, NumericGetDatum(int64_to_numeric(below)))) < 0)
			ceiling = NumericGetDatum(int64_to_numeric(below)), *exact = false;
		*least = DatumGetInt64(DirectFunctionCall1(numeric_int8, ceiling));
	}
	else
	{
		float8		v = DatumGetFloat8(k->constvalue);

		if (isnan(v) || isinf(v) || scale != 1)
			return false;
		*exact = v == ceil(v) && v <= above && v >= below;
		v = ceil(v);
		*least = v > above ? above : v < below ? below : (int64) v;
	}
	return true;
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
	if (!ConstCeil(k, 1, YEAR_BELOW_ALL, YEAR_ABOVE_ALL, least, exact))
		return false;
	/* there is no year 0 */
	if (*least == 0)
	{
		*least = 1;
		*exact = false;
	}
	return true;
}

/* c: column att (coltype), under unit where it is not GPUEXT_SCAN_TRUNC_NONE, <strategy> ival. */
static void
ColumnCmp(RowCmp *c, AttrNumber att, Oid coltype, uint8 unit, int strategy, int64 ival)
{
	memset(c, 0, sizeof(RowCmp));
	c->att = att;
	c->coltype = coltype;
	c->kind = ROWCMP_INT;
	c->len = coltype == DATEOID ? 4 : 8;
	c->unit = unit;
	c->micros = coltype != DATEOID;
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

/* The condition column att (coltype), under unit, <strategy> ival. */
static GpuAggRowQual *
OneCmp(AttrNumber att, Oid coltype, uint8 unit, int strategy, int64 ival)
{
	GpuAggRowQual *q = Qual(1);

	ColumnCmp(&q->cmps[0], att, coltype, unit, strategy, ival);
	return q;
}

/*
 * value <strategy> the constant, where value is a monotonic function of the
 * column (under unit: of its image) whose values from lo on are at least
 * the constant and from hi on above it (lo = hi: no value equals it): the
 * column's (the image's) range.
 */
static GpuAggRowQual *
RangeOf(AttrNumber att, Oid coltype, uint8 unit, int strategy, int64 lo, int64 hi)
{
	GpuAggRowQual *q;

	switch (strategy)
	{
		case BTLessStrategyNumber:
			return OneCmp(att, coltype, unit, BTLessStrategyNumber, lo);
		case BTLessEqualStrategyNumber:
			return OneCmp(att, coltype, unit, BTLessStrategyNumber, hi);
		case BTGreaterEqualStrategyNumber:
			return OneCmp(att, coltype, unit, BTGreaterEqualStrategyNumber, lo);
		case BTGreaterStrategyNumber:
			return OneCmp(att, coltype, unit, BTGreaterEqualStrategyNumber, hi);
		case BTEqualStrategyNumber:
			q = Qual(2);
			ColumnCmp(&q->cmps[0], att, coltype, unit, BTGreaterEqualStrategyNumber, lo);
			ColumnCmp(&q->cmps[1], att, coltype, unit, BTLessStrategyNumber, hi);
			return q;
		default:
			/* <>: below the range OR from its end on */
			q = Qual(1);
			q->cmps[0].kind = ROWCMP_BOOL;
			q->cmps[0].subs = palloc(sizeof(GpuAggRowQual *) * 2);
			q->cmps[0].subs[0] = OneCmp(att, coltype, unit, BTLessStrategyNumber, lo);
			q->cmps[0].subs[1] = OneCmp(att, coltype, unit, BTGreaterEqualStrategyNumber, hi);
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
	return start == t ? RangeOf(att, TIMESTAMPOID, GPUEXT_SCAN_TRUNC_NONE, strategy, t, next) :
		RangeOf(att, TIMESTAMPOID, GPUEXT_SCAN_TRUNC_NONE, strategy, next, next);
}

/* The image of value v of an integer field of a date or (micros) timestamp, as the device makes it. */
static int64
FieldImage(uint8 unit, int64 v, bool micros)
{
	int64		days;

	switch (unit)
	{
		case GPUEXT_SCAN_FIELD_QUARTER:
			days = date2j(2000, (int) (v - 1) * 3 + 1, 1) - POSTGRES_EPOCH_JDATE;
			break;
		case GPUEXT_SCAN_FIELD_MONTH:
			days = date2j(2000, (int) v, 1) - POSTGRES_EPOCH_JDATE;
			break;
		case GPUEXT_SCAN_FIELD_DAY:
		case GPUEXT_SCAN_FIELD_DOY:
			days = v - 1;
			break;
		case GPUEXT_SCAN_FIELD_DOW:
			days = v + 1;		/* 2000-01-02, a Sunday (0), on */
			break;
		case GPUEXT_SCAN_FIELD_WEEK:
			days = date2j(2003, 12, 29) - POSTGRES_EPOCH_JDATE + (v - 1) * 7;	/* 2004's Mondays */
			break;
		case GPUEXT_SCAN_FIELD_HOUR:
			return v * USECS_PER_HOUR;
		default:
			Assert(unit == GPUEXT_SCAN_FIELD_MINUTE);
			return v * USECS_PER_MINUTE;
	}
	return micros ? days * USECS_PER_DAY : days;
}

/*
 * extract(field from column) <strategy> k (date_part too) for a field
 * other than the year, as a comparison of the column's image under the
 * field (FieldUnits); NULL for a field not compiled, or one the column's
 * type has not (PostgreSQL raises its error).
 */
static GpuAggRowQual *
FieldRange(Var *var, AttrNumber att, const char *field, Const *k, int strategy)
{
	bool		micros = var->vartype == TIMESTAMPOID;

	for (int u = 0; u < lengthof(FieldUnits); u++)
	{
		uint8		unit = FieldUnits[u].unit;
		int64		lo = FieldUnits[u].lo;
		int64		hi = FieldUnits[u].hi;
		int64		least;
		bool		exact;
		int64		from;

		if (pg_strcasecmp(field, FieldUnits[u].name) != 0 || (!micros && gpuext_scan_unit_of_time(unit)))
			continue;
		if (FieldUnits[u].scale > 0)
		{
			/* the image is the field times scale, under a minute's microseconds */
			if (!ConstCeil(k, FieldUnits[u].scale, 0, USECS_PER_MINUTE, &least, &exact))
				return NULL;
			if (exact && (strategy == BTEqualStrategyNumber || strategy == ROWCMP_NOT_EQUAL))
				return OneCmp(att, var->vartype, unit, strategy, least);
			return RangeOf(att, var->vartype, unit, strategy, least, exact ? least + 1 : least);
		}
		if (!ConstCeil(k, 1, lo - 1, hi + 1, &least, &exact))
			return NULL;
		/* the images of the values from the least one at or above the constant on, and past it */
		from = least < lo ? FieldImage(unit, lo, micros) :
			least > hi ? FieldImage(unit, hi, micros) + 1 : FieldImage(unit, least, micros);
		if (!exact || least < lo || least > hi)
			return RangeOf(att, var->vartype, unit, strategy, from, from);
		/* a value the field takes: = and <> of its image, which no other value has */
		if (strategy == BTEqualStrategyNumber || strategy == ROWCMP_NOT_EQUAL)
			return OneCmp(att, var->vartype, unit, strategy, from);
		return RangeOf(att, var->vartype, unit, strategy, from,
					   least == hi ? FieldImage(unit, hi, micros) + 1 : FieldImage(unit, least + 1, micros));
	}
	return NULL;
}

/* Whether a constant is a number neither NaN nor infinite (numeric or float8). */
static bool
ConstFinite(Const *k)
{
	if (k->consttype == NUMERICOID)
		return !numeric_is_nan(DatumGetNumeric(k->constvalue)) && !numeric_is_inf(DatumGetNumeric(k->constvalue));
	return !isnan(DatumGetFloat8(k->constvalue)) && !isinf(DatumGetFloat8(k->constvalue));
}

/* f (extract or date_part of a column) at value x of the column, against k: below 0, 0 or above 0. */
static int
FieldCmp(FuncExpr *f, Oid coltype, int64 x, Const *k)
{
	Datum		v = OidFunctionCall2Coll(f->funcid, f->inputcollid, ((Const *) linitial(f->args))->constvalue,
										 coltype == DATEOID ? DateADTGetDatum((DateADT) x) : TimestampGetDatum(x));

	if (k->consttype == NUMERICOID)
		return DatumGetInt32(DirectFunctionCall2(numeric_cmp, v, k->constvalue));
	return DatumGetInt32(DirectFunctionCall2(btfloat8cmp, v, k->constvalue));
}

/*
 * The least finite value of the column's type whose field is at least k
 * (above k where strict), by PostgreSQL's own function and a binary search;
 * the type's infinity where none is.
 */
static int64
FieldLeast(FuncExpr *f, Oid coltype, Const *k, bool strict)
{
	int64		lo = coltype == DATEOID ? (int64) DATETIME_MIN_JULIAN - POSTGRES_EPOCH_JDATE : MIN_TIMESTAMP;
	int64		hi = coltype == DATEOID ? (int64) DATE_END_JULIAN - POSTGRES_EPOCH_JDATE : END_TIMESTAMP;

	/* the least in [lo, hi), hi for none */
	while (lo < hi)
	{
		int64		mid = lo + (int64) (((uint64) hi - (uint64) lo) / 2);	/* hi - lo passes int64 for timestamps */
		int			c = FieldCmp(f, coltype, mid, k);

		if (c > 0 || (c == 0 && !strict))
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo == (coltype == DATEOID ? (int64) DATE_END_JULIAN - POSTGRES_EPOCH_JDATE : END_TIMESTAMP))
		return coltype == DATEOID ? (int64) DATEVAL_NOEND : DT_NOEND;
	return lo;
}

/*
 * field <strategy> k for a field that never decreases as the column grows
 * and is -Infinity and Infinity at its infinities (the epoch, the Julian
 * day, the decade, century, millennium and ISO year), as the column's
 * range: the values from the least whose field is at least k, and from the
 * least whose field is above it.  NULL for a constant NaN or infinite.
 */
static GpuAggRowQual *
MonotonicFieldRange(FuncExpr *f, Var *var, AttrNumber att, Const *k, int strategy)
{
	if (!ConstFinite(k))
		return NULL;
	return RangeOf(att, var->vartype, GPUEXT_SCAN_TRUNC_NONE, strategy, FieldLeast(f, var->vartype, k, false),
				   FieldLeast(f, var->vartype, k, true));
}

/* The first run of set bits of a 7-bit mask (days of the week) in *lo .. *hi; whether they are all its bits. */
static bool
DaysRun(int mask, int *lo, int *hi)
{
	*lo = 0;
	while (*lo < 7 && !(mask & (1 << *lo)))
		(*lo)++;
	*hi = *lo;
	while (*hi + 1 < 7 && (mask & (1 << (*hi + 1))))
		(*hi)++;
	return *lo < 7 && mask == (((1 << (*hi + 1)) - 1) & ~((1 << *lo) - 1));
}

/*
 * isodow <strategy> k: the ISO days of the week (1 to 7) it holds for,
 * which are days of the week (Sunday 0) in one run or all but one run, as a
 * range of dow's image (FieldImage) or its outside; NULL where k is NaN or
 * infinite.
 */
static GpuAggRowQual *
IsoDowIn(Var *var, AttrNumber att, Const *k, int strategy)
{
	bool		micros = var->vartype == TIMESTAMPOID;
	int			days = 0;
	int			lo,
				hi;

	if (!ConstFinite(k))
		return NULL;
	for (int v = 1; v <= 7; v++)
	{
		int			c = k->consttype == NUMERICOID ?
			DatumGetInt32(DirectFunctionCall2(numeric_cmp, NumericGetDatum(int64_to_numeric(v)), k->constvalue)) :
			DatumGetInt32(DirectFunctionCall2(btfloat8cmp, Float8GetDatum(v), k->constvalue));

		if (GpuAggStrategyHolds(strategy, c))
			days |= 1 << (v % 7);
	}
	/* none: below every image; all: every image (an infinity's field is NULL all the same) */
	if (days == 0 || days == 0x7F)
		return OneCmp(att, var->vartype, GPUEXT_SCAN_FIELD_DOW,
					  days == 0 ? BTLessStrategyNumber : BTGreaterEqualStrategyNumber,
					  FieldImage(GPUEXT_SCAN_FIELD_DOW, 0, micros));
	if (DaysRun(days, &lo, &hi))
		return RangeOf(att, var->vartype, GPUEXT_SCAN_FIELD_DOW, BTEqualStrategyNumber,
					   FieldImage(GPUEXT_SCAN_FIELD_DOW, lo, micros), FieldImage(GPUEXT_SCAN_FIELD_DOW, hi, micros) + 1);
	if (DaysRun(~days & 0x7F, &lo, &hi))
		return RangeOf(att, var->vartype, GPUEXT_SCAN_FIELD_DOW, ROWCMP_NOT_EQUAL,
					   FieldImage(GPUEXT_SCAN_FIELD_DOW, lo, micros), FieldImage(GPUEXT_SCAN_FIELD_DOW, hi, micros) + 1);
	return NULL;
}

/*
 * The fields compiled without a table of their own (MonotonicFieldRange,
 * IsoDowIn), by PostgreSQL's own names of them (DecodeUnits'): the
 * condition, or NULL with *other set for any other field.
 */
static GpuAggRowQual *
OtherField(FuncExpr *f, Var *var, AttrNumber att, const char *field, Const *k, int strategy, bool *other)
{
	char	   *low = downcase_truncate_identifier(field, strlen(field), false);
	int			val;
	int			type = DecodeUnits(0, low, &val);

	if (type == UNKNOWN_FIELD)
		type = DecodeSpecial(0, low, &val);
	*other = false;
	if (type == UNITS && val == DTK_ISODOW)
		return IsoDowIn(var, att, k, strategy);
	if ((type == UNITS && (val == DTK_JULIAN || val == DTK_DECADE || val == DTK_CENTURY ||
						   val == DTK_MILLENNIUM || val == DTK_ISOYEAR)) ||
		(type == RESERV && val == DTK_EPOCH))
		return MonotonicFieldRange(f, var, att, k, strategy);
	*other = true;
	return NULL;
}

/*
 * column::date <strategy> k for a timestamp column: the date of a finite
 * timestamp is its day, and of an infinity that infinity, so the values
 * from k's midnight on have a date at least k and from the next midnight
 * on one above it (none finite where k is past the timestamps).  NULL for
 * k infinite.
 */
static GpuAggRowQual *
TimestampDateRange(AttrNumber att, int strategy, DateADT k)
{
	int64		last_day = (END_TIMESTAMP - 1) / USECS_PER_DAY;

	if (DATE_NOT_FINITE(k))
		return NULL;
	return RangeOf(att, TIMESTAMPOID, GPUEXT_SCAN_TRUNC_NONE, strategy,
				   k > last_day ? DT_NOEND : (int64) k * USECS_PER_DAY,
				   k + 1 > last_day ? DT_NOEND : ((int64) k + 1) * USECS_PER_DAY);
}

/*
 * A comparison of extract(field ...), date_part(field, ...) or
 * date_trunc(unit, ...) of a column, or of a timestamp column cast to date,
 * with a constant, by the btree operators of its result type, as a
 * condition on the column or its image; NULL where the node is not of those
 * forms.
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
	/* a timestamp column cast to date, by date's own operators */
	if (IsA(f, FuncExpr) && f->funcid == F_DATE_TIMESTAMP && list_length(f->args) == 1 &&
		IsA(linitial(f->args), Var) && exprType(linitial(f->args)) == TIMESTAMPOID && IsA(k, Const) &&
		!k->constisnull && k->consttype == DATEOID &&
		GpuAggBtreeStrategy(op->opno, DATEOID, &strategy, &lefttype, &righttype) &&
		lefttype == DATEOID && righttype == DATEOID &&
		(att = GpuAggScanColumn(cscan, linitial(f->args))) != 0)
		return TimestampDateRange(att, commuted && strategy != ROWCMP_NOT_EQUAL ? BTCommuteStrategyNumber(strategy) :
								  strategy, DatumGetDateADT(k->constvalue));
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
		char	   *name = TextDatumGetCString(unit->constvalue);

		if (!IsA(lsecond(f->args), Var) || exprType(lsecond(f->args)) != TIMESTAMPOID ||
			(att = GpuAggScanColumn(cscan, lsecond(f->args))) == 0)
			return NULL;
		/* a month, quarter or year: the truncated value itself, computed on the device (infinities too) */
		for (int u = 0; u < lengthof(TruncOnDevice); u++)
			if (pg_strcasecmp(name, TruncOnDevice[u].name) == 0)
				return OneCmp(att, TIMESTAMPOID, TruncOnDevice[u].unit, strategy, t);
		return TIMESTAMP_NOT_FINITE(t) ? NULL : TruncRange(att, unit, strategy, t);
	}
	if (f->funcid == F_EXTRACT_TEXT_DATE || f->funcid == F_EXTRACT_TEXT_TIMESTAMP ||
		f->funcid == F_DATE_PART_TEXT_TIMESTAMP)
	{
		char	   *field = TextDatumGetCString(unit->constvalue);
		int64		least;
		bool		exact;
		bool		micros;
		GpuAggRowQual *q;
		bool		other;

		if ((var = YearColumn(f)) == NULL || (att = GpuAggScanColumn(cscan, (Expr *) var)) == 0)
			return NULL;
		q = OtherField(f, var, att, field, k, strategy, &other);
		if (!other)
			return q;
		if (pg_strcasecmp(field, "year") != 0)
			return FieldRange(var, att, field, k, strategy);
		if (!ConstYear(k, &least, &exact))
			return NULL;
		micros = var->vartype == TIMESTAMPOID;
		/* values from the start of the least year at or above the constant are at least it */
		return RangeOf(att, var->vartype, GPUEXT_SCAN_TRUNC_NONE, strategy, YearStart(least, micros),
					   exact ? YearStart(NextYear(least), micros) : YearStart(least, micros));
	}
	return NULL;
}

/*
 * extract(...), date_part(...) or date_trunc(...) of a column = ANY
 * (constants), as an OR of the comparisons GpuAggCompileDateRange makes, or
 * <> ALL as their AND (no NOT: a field of an infinity is NULL); NULL where
 * it is not of that form, or a NULL in the list makes <> ALL never true.
 */
GpuAggRowQual *
GpuAggCompileDateIn(CustomScan *cscan, ScalarArrayOpExpr *sa)
{
	Node	   *right = lsecond(sa->args);
	ArrayType  *arr;
	Datum	   *vals;
	bool	   *nulls;
	int			n;
	int16		elmlen;
	bool		elmbyval;
	char		elmalign;
	GpuAggRowQual *q;
	RowCmp	   *or;

	if (list_length(sa->args) != 2 || !IsA(linitial(sa->args), FuncExpr) || !IsA(right, Const) ||
		((Const *) right)->constisnull)
		return NULL;
	arr = DatumGetArrayTypeP(((Const *) right)->constvalue);
	get_typlenbyvalalign(ARR_ELEMTYPE(arr), &elmlen, &elmbyval, &elmalign);
	deconstruct_array(arr, ARR_ELEMTYPE(arr), elmlen, elmbyval, elmalign, &vals, &nulls, &n);
	q = Qual(sa->useOr ? 1 : 0);
	or = &q->cmps[0];
	if (sa->useOr)
	{
		or->kind = ROWCMP_BOOL;
		or->subs = palloc(sizeof(GpuAggRowQual *) * Max(n, 1));
	}
	for (int i = 0; i < n; i++)
	{
		OpExpr	   *cmp = makeNode(OpExpr);
		GpuAggRowQual *sub;

		if (nulls[i])
		{
			/* = ANY: a NULL never makes it true; <> ALL: never true */
			if (!sa->useOr)
				return NULL;
			or->in_nulls = true;
			continue;
		}
		cmp->opno = sa->opno;
		cmp->opfuncid = sa->opfuncid;
		cmp->opresulttype = BOOLOID;
		cmp->inputcollid = sa->inputcollid;
		cmp->args = list_make2(linitial(sa->args), makeConst(ARR_ELEMTYPE(arr), -1, InvalidOid, elmlen, vals[i],
															 false, elmbyval));
		if ((sub = GpuAggCompileDateRange(cscan, (Node *) cmp)) == NULL)
			return NULL;
		if (sa->useOr)
			or->subs[or->nsubs++] = sub;
		else
		{
			q = repalloc(q, offsetof(GpuAggRowQual, cmps) + sizeof(RowCmp) * (q->ncmps + sub->ncmps));
			memcpy(&q->cmps[q->ncmps], sub->cmps, sizeof(RowCmp) * sub->ncmps);
			q->ncmps += sub->ncmps;
		}
	}
	return q->ncmps > 0 && (!sa->useOr || or->nsubs > 0) ? q : NULL;
}
