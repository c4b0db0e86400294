/*
 * gpuagg_devkeys.c
 *		Which GROUP BY keys the device scan groups, and how: each key's column
 *		and its part of the key image (gpuagg_devgroups.c builds the image
 *		from these), for the executor and for the planner's cost.
 *
 * A key is grouped on the device where it is a column, an integer column
 * modulo a constant, a date or timestamp column under date_trunc or extract
 * (its image a value standing for the key's: the unit's first day, a day of
 * 2000 with the same month), or any other function of one such column (its
 * image the column's value).  The planner asks the same of the keys'
 * expressions (GpuAggDevKeysExpected), with text keys taking their average
 * width, and bounds the groups of a key modulo a constant by its modulus.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

#include "gpuagg.h"

/* A unit's or field's name, as date_trunc and extract take it, and its unit on the device (0: none). */
typedef struct KeyUnitName
{
	const char *name;
	uint8		date_unit;		/* over a date */
	uint8		time_unit;		/* over a timestamp */
} KeyUnitName;

static const KeyUnitName trunc_units[] = {
	{"day", GPUEXT_SCAN_TRUNC_DAY, GPUEXT_SCAN_TRUNC_DAY},
	{"week", GPUEXT_SCAN_TRUNC_WEEK, GPUEXT_SCAN_TRUNC_WEEK},
	{"month", GPUEXT_SCAN_TRUNC_MONTH, GPUEXT_SCAN_TRUNC_MONTH},
	{"quarter", GPUEXT_SCAN_TRUNC_QUARTER, GPUEXT_SCAN_TRUNC_QUARTER},
	{"year", GPUEXT_SCAN_TRUNC_YEAR, GPUEXT_SCAN_TRUNC_YEAR},
	{"hour", 0, GPUEXT_SCAN_TRUNC_HOUR},
	{"minute", 0, GPUEXT_SCAN_TRUNC_MINUTE},
	{"second", 0, GPUEXT_SCAN_TRUNC_SECOND},
};

static const KeyUnitName extract_fields[] = {
	{"year", GPUEXT_SCAN_TRUNC_YEAR, GPUEXT_SCAN_TRUNC_YEAR},
	{"quarter", GPUEXT_SCAN_FIELD_QUARTER, GPUEXT_SCAN_FIELD_QUARTER},
	{"month", GPUEXT_SCAN_FIELD_MONTH, GPUEXT_SCAN_FIELD_MONTH},
	{"day", GPUEXT_SCAN_FIELD_DAY, GPUEXT_SCAN_FIELD_DAY},
	{"doy", GPUEXT_SCAN_FIELD_DOY, GPUEXT_SCAN_FIELD_DOY},
	{"dow", GPUEXT_SCAN_FIELD_DOW, GPUEXT_SCAN_FIELD_DOW},
	{"isodow", GPUEXT_SCAN_FIELD_DOW, GPUEXT_SCAN_FIELD_DOW},
	{"week", GPUEXT_SCAN_FIELD_WEEK, GPUEXT_SCAN_FIELD_WEEK},
	{"hour", 0, GPUEXT_SCAN_FIELD_HOUR},
	{"minute", 0, GPUEXT_SCAN_FIELD_MINUTE},
	{"second", 0, GPUEXT_SCAN_FIELD_SECOND},
	{"milliseconds", 0, GPUEXT_SCAN_FIELD_SECOND},
	{"microseconds", 0, GPUEXT_SCAN_FIELD_SECOND},
};

/* A Var of a date, or of a timestamp (*micros), possibly a date under a cast to timestamp or timestamptz; else NULL. */
static Node *
DateOrTimestampColumn(Node *node, bool timestamptz, uint8 *micros)
{
	FuncExpr   *cast = (FuncExpr *) node;

	*micros = IsA(node, Var) && exprType(node) == TIMESTAMPOID && !timestamptz;
	if (*micros)
		return node;
	if (!IsA(node, FuncExpr) || list_length(cast->args) != 1 || !IsA(linitial(cast->args), Var) ||
		exprType(linitial(cast->args)) != DATEOID ||
		cast->funcid != (timestamptz ? F_TIMESTAMPTZ_DATE : F_TIMESTAMP_DATE))
		return IsA(node, Var) && exprType(node) == DATEOID ? node : NULL;
	return linitial(cast->args);
}

/*
 * The date or timestamp column under date_trunc(unit, column) or
 * extract(field from column) (date_part too), with the key's unit on the
 * device in key->trunc (see GpuextScanKey); NULL for any other expression,
 * whose column is grouped by its own value.  A date under date_trunc is cast
 * to timestamptz: its value is a function of the unit's first day all the
 * same, one to one (the session's time zone moves every such day alike).  A
 * timestamptz under either depends on the time zone at each instant, and is
 * grouped by its own value.
 */
static Node *
UnitColumn(Node *node, GpuextScanKey *key)
{
	FuncExpr   *f = (FuncExpr *) node;
	const KeyUnitName *names;
	int			nnames;
	Const	   *unit;
	Node	   *var;
	char	   *name;

	key->trunc = GPUEXT_SCAN_TRUNC_NONE;
	if (!IsA(node, FuncExpr) || list_length(f->args) != 2 || !IsA(linitial(f->args), Const))
		return NULL;
	unit = linitial(f->args);
	if (unit->constisnull || unit->consttype != TEXTOID)
		return NULL;
	switch (f->funcid)
	{
		case F_DATE_TRUNC_TEXT_TIMESTAMPTZ:
		case F_DATE_TRUNC_TEXT_TIMESTAMP:
			var = DateOrTimestampColumn(lsecond(f->args), f->funcid == F_DATE_TRUNC_TEXT_TIMESTAMPTZ, &key->micros);
			/* the date itself is a timestamp only under a cast */
			if (var == lsecond(f->args) && !key->micros)
				return NULL;
			names = trunc_units;
			nnames = lengthof(trunc_units);
			break;
		case F_EXTRACT_TEXT_DATE:
		case F_EXTRACT_TEXT_TIMESTAMP:
		case F_DATE_PART_TEXT_TIMESTAMP:
			var = DateOrTimestampColumn(lsecond(f->args), false, &key->micros);
			if (var != NULL && (f->funcid == F_EXTRACT_TEXT_DATE) != (var == lsecond(f->args) && !key->micros))
				return NULL;
			names = extract_fields;
			nnames = lengthof(extract_fields);
			break;
		default:
			return NULL;
	}
	if (var == NULL)
		return NULL;
	name = TextDatumGetCString(unit->constvalue);
	for (int u = 0; u < nnames; u++)
		if (pg_strcasecmp(name, names[u].name) == 0)
			key->trunc = key->micros ? names[u].time_unit : names[u].date_unit;
	pfree(name);
	return key->trunc != GPUEXT_SCAN_TRUNC_NONE ? var : NULL;
}

/*
 * The one column an expression reads, where the expression's value is a
 * function of that column's value alone (nothing volatile, no subquery):
 * the key is then grouped on the device by the column's value, and
 * computed from it once for each value met (gpuagg_devgroups.c); else NULL.
 */
static Node *
FunctionOfColumn(Node *expr, Index scanrelid)
{
	List	   *vars = pull_var_clause(expr, PVC_RECURSE_AGGREGATES | PVC_RECURSE_WINDOWFUNCS | PVC_RECURSE_PLACEHOLDERS);
	Var		   *var = NULL;
	ListCell   *lc;

	if (vars == NIL || contain_volatile_functions(expr) || contain_subplans(expr))
		return NULL;
	foreach(lc, vars)
	{
		Var		   *v = lfirst_node(Var, lc);

		if (v->varno != scanrelid || v->varlevelsup != 0 || v->varattno <= 0 ||
			(var != NULL && v->varattno != var->varattno))
			return NULL;
		var = v;
	}
	return (Node *) var;
}

/*
 * The column (a Var of scanrelid) a key expression reads and how the
 * device makes its part of the key image (key's modulus, trunc and micros):
 * the column itself, an integer column modulo a positive constant, a date or
 * timestamp column under a unit (UnitColumn), or any other function of one
 * column (FunctionOfColumn), grouped by the column's value; NULL where the
 * key reads no column or more than one.
 */
Var *
GpuAggDevKeyColumn(Node *expr, Index scanrelid, GpuextScanKey *key)
{
	Node	   *var;

	key->modulus = 0;
	key->trunc = GPUEXT_SCAN_TRUNC_NONE;
	key->micros = 0;
	var = GpuAggModColumn(expr, &key->modulus);
	if (var == NULL || key->modulus <= 0)
	{
		key->modulus = 0;
		var = UnitColumn(expr, key);
	}
	if (var == NULL)
		var = FunctionOfColumn(expr, scanrelid);
	if (var == NULL || ((Var *) var)->varno != scanrelid || ((Var *) var)->varattno <= 0)
		return NULL;
	return (Var *) var;
}

/*
 * At most how many groups a key of this column type can make (a bool 3 with
 * NULL, an integer modulo m 2m - 1 and NULL), as the planner does not bound
 * an expression by its modulus; 0 where unbounded.
 */
double
GpuAggDevKeyGroupsBound(const GpuextScanKey *key, Oid coltype)
{
	if (key->modulus > 0)
		return 2.0 * key->modulus;
	return coltype == BOOLOID ? 3 : 0;
}

/* At most how many groups the keys (expressions over table relid) can make (GpuAggDevKeyGroupsBound), 0 where unbounded. */
double
GpuAggKeysGroupsBound(List *keys, Index relid)
{
	double		bound = 1;
	ListCell   *lc;

	foreach(lc, keys)
	{
		GpuextScanKey key;
		Var		   *var = GpuAggDevKeyColumn(lfirst(lc), relid, &key);

		bound *= GpuAggDevKeyGroupsBound(&key, var != NULL ? var->vartype : InvalidOid);
	}
	return bound;
}

/*
 * The planner's view of GpuAggDevGroupsKeys and GpuAggDevGroupsUsable: from
 * the keys' expressions over table relid (reloid; eqops their equality
 * operators) and the groups estimated (GpuAggKeysGroupsBound applied),
 * whether the device is expected to group them, its text keys taking their
 * average width; more of them where the aggregates let the device number
 * the groups (numbered; GpuAggNumberedSlots for ncounters and group_bytes).
 * The executor decides, from the table's columns and each batch's values.
 */
bool
GpuAggDevKeysExpected(List *keys, List *eqops, Index relid, Oid reloid, double groups, bool numbered, int ncounters,
					  size_t group_bytes)
{
	int			used = 0;
	ListCell   *lk,
			   *le;

	if (list_length(keys) > GPUEXT_SCAN_MAX_KEYS)
		return false;
	forboth(lk, keys, le, eqops)
	{
		Node	   *expr = lfirst(lk);
		GpuextScanKey key;
		Var		   *var = GpuAggDevKeyColumn(expr, relid, &key);
		int16		len;

		if (var == NULL || (key.trunc == GPUEXT_SCAN_TRUNC_NONE &&
							GpuAggByteEqualKey(exprType(expr), exprTypmod(expr), lfirst_oid(le),
											   exprCollation(expr)) == 0))
			return false;
		/* the device numbers groups whose keys' images are their values alone */
		if ((Node *) var != expr && key.modulus == 0 && key.trunc == GPUEXT_SCAN_TRUNC_NONE)
			numbered = false;
		len = get_typlen(var->vartype);
		if (key.trunc != GPUEXT_SCAN_TRUNC_NONE)
			used += 1 + gpuext_scan_unit_width(key.trunc, key.micros);
		else if (len == -1)
		{
			/* a value of varying width: its average, by the column's statistics or else its type */
			int32		width = get_attavgwidth(reloid, var->varattno);

			used += 1 + (width > 0 ? width : get_typavgwidth(var->vartype, var->vartypmod));
		}
		else if (len > 0 && len < GPUEXT_SCAN_KEY_BYTES)
			used += 1 + len;
		else
			return false;
	}
	return used <= GPUEXT_SCAN_KEY_BYTES &&
		(groups * 4 <= GPUAGG_DEVGROUPS_MAX_SLOTS || (numbered && groups * 3 <= GpuAggNumberedSlots(ncounters, group_bytes)));
}

/*
 * The most slots of a table of numbered groups: 2^23, and up to 2^26 where
 * half of the device memory this backend may hold (as far as is known) takes
 * the table with ncounters per-group counts and, for the group of every
 * third slot, its states (group_bytes).
 */
uint32
GpuAggNumberedSlots(int ncounters, size_t group_bytes)
{
	size_t		room = GpuextDeviceMemoryKnown() / 2;
	size_t		slot = sizeof(uint32) + GPUEXT_SCAN_KEY_BYTES + sizeof(GpuextScanNewGroup) + sizeof(uint32) +
		sizeof(uint64) * ncounters + group_bytes / 3 + 1;
	uint32		cap = GPUAGG_DEVGROUPS_NUMBERED_MAX_SLOTS;

	while (cap > GPUAGG_DEVGROUPS_NUMBERED_SLOTS && (size_t) cap * slot > room)
		cap /= 2;
	return cap;
}
