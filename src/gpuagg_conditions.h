/*
 * gpuagg_conditions.h
 *		GpuAgg's compiled conditions (gpuagg_conditions.c), as the device
 *		scan's compiler (gpuagg_devconditions.c) reads them.
 */
#ifndef GPUAGG_CONDITIONS_H
#define GPUAGG_CONDITIONS_H

#include "access/stratnum.h"

/* What a compiled comparison compares: signed integers, or floats as double precision. */
typedef enum RowCmpKind
{
	ROWCMP_INT,
	ROWCMP_FLOAT,
	ROWCMP_NUMERIC,				/* numeric(p, s) against a numeric, both at a scale as integers */
	ROWCMP_TEXT,				/* text, varchar or char(n) against a constant's bytes */
	ROWCMP_BOOL,				/* an OR of compiled conditions, or a NOT of one */
	ROWCMP_NULLTEST				/* IS NULL (strategy ROWCMP_IS_NULL) or IS NOT NULL */
} RowCmpKind;

/* Strategies past btree's: <> (the negator of a btree =), and the null tests. */
#define ROWCMP_NOT_EQUAL GPUEXT_SCAN_NOT_EQUAL
#define ROWCMP_IS_NULL 1
#define ROWCMP_IS_NOT_NULL 2
#define ROWCMP_PREFIX 7			/* text: LIKE 'prefix%' */
#define ROWCMP_SUFFIX 8			/* text: LIKE '%suffix' */
#define ROWCMP_CONTAINS 9		/* text: LIKE '%infix%' */
#define ROWCMP_LIKE 10			/* text: LIKE of any other pattern (gpuext_scan_like) */

/* One comparison of a column with a constant: column <strategy> constant. */
typedef struct RowCmp
{
	AttrNumber	att;
	int16		len;
	Oid			coltype;
	RowCmpKind	kind;
	StrategyNumber strategy;
	int64		ival;
	float8		fval;
	int64		modulus;		/* > 0: the column's value % modulus is compared */
	uint8		unit;			/* a date or timestamp column's image under this unit is compared */
	bool		micros;			/* ... (GPUEXT_SCAN_TRUNC_* or _FIELD_*, scan_heap_units.h) of a timestamp */
	int			nscale;			/* numeric: the scale both are compared at, */
	int			colscale;		/* ... the column's (its type's), */
	int128		nval;			/* ... the constant at it, */
	Datum		nconst;			/* ... and itself */
	const char *tbytes;			/* text: the constant's bytes (char(n): without trailing blanks; */
								/* ROWCMP_LIKE: the whole pattern), */
	int			tlen;			/* ... how many */
	struct GpuAggRowQual **subs;	/* OR: the conditions, any of which passes; NOT: the one that fails */
	int			nsubs;
	bool		negate;			/* NOT */
	int			in_n;			/* > 0: column IN (a list): its non-NULL values, */
	bool		in_nulls;		/* ... whether it held NULLs too, */
	int64	   *in_ivals;		/* ... integers sorted */
	float8	   *in_fvals;		/* ... or floats */
} RowCmp;

struct GpuAggRowQual
{
	int			ncmps;
	RowCmp		cmps[FLEXIBLE_ARRAY_MEMBER];
};

/* A column's value at p read as a signed integer of len bytes (bool: 0 or 1). */
static inline int64
GpuAggIntAt(const char *p, int len)
{
	switch (len)
	{
		case 8:
			return DatumGetInt64(fetch_att(p, true, 8));
		case 4:
			return DatumGetInt32(fetch_att(p, true, 4));
		case 2:
			return DatumGetInt16(fetch_att(p, true, 2));
		default:
			return DatumGetBool(fetch_att(p, true, 1));
	}
}

/* gpuagg_conditions.c */
extern bool GpuAggCmpKind(Oid type, RowCmpKind *kind);
extern bool GpuAggStrategyHolds(int strategy, int cmp);
extern bool GpuAggBtreeStrategy(Oid opno, Oid type, int *strategy, Oid *lefttype, Oid *righttype);
extern bool GpuAggCompileText(CustomScan *cscan, Node *node, RowCmp *c);

/* gpuagg_conditions_dates.c */
extern struct GpuAggRowQual *GpuAggCompileDateRange(CustomScan *cscan, Node *node);
extern struct GpuAggRowQual *GpuAggCompileDateIn(CustomScan *cscan, ScalarArrayOpExpr *sa);

/* gpuagg_conditions_lists.c */
extern bool GpuAggInList(const RowCmp *c, const char *p);
extern bool GpuAggCompileIn(CustomScan *cscan, ScalarArrayOpExpr *sa, RowCmp *c);
extern RowCmp *GpuAggNotOfOne(RowCmp *c);
extern bool GpuAggCompileTextIn(CustomScan *cscan, ScalarArrayOpExpr *sa, RowCmp *c);
extern bool GpuAggCompileNotIn(CustomScan *cscan, ScalarArrayOpExpr *sa, RowCmp *c);

#endif							/* GPUAGG_CONDITIONS_H */
