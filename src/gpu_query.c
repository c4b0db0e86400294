/*
 * gpu_query.c
 *		gpu_query_agg(query) and gpu_query_sort(query, descending): aggregate or
 *		sort the first column of any query, streamed through an SPI cursor in
 *		batches, in bounded memory whatever the column's size.
 *
 * The query runs with the caller's privileges.  Aggregation feeds the same
 * exact accumulators as gpu_sum and friends; sorting goes through
 * tuplesort, which spills past work_mem, and returns a set.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/tuplesort.h"
#include "utils/tuplestore.h"
#include "utils/typcache.h"

#include "agg_accum.h"

/* Rows fetched from the cursor at a time. */
#define FETCH_BATCH 10000

/* Open a cursor on query (as the caller) and check its first column; returns its type. */
static Portal
OpenQuery(const char *query, const char *fname, Oid *typid)
{
	SPIPlanPtr	plan;
	Portal		portal;
	TupleDesc	desc;

	plan = SPI_prepare(query, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "%s: SPI_prepare failed: %s", fname, SPI_result_code_string(SPI_result));
	if (!SPI_is_cursor_plan(plan))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_CURSOR_DEFINITION),
				 errmsg("%s: the query must return rows", fname)));
	portal = SPI_cursor_open(NULL, plan, NULL, NULL, true);
	desc = portal->tupDesc;
	if (desc == NULL || desc->natts == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_CURSOR_DEFINITION),
				 errmsg("%s: the query returns no columns", fname)));
	*typid = TupleDescAttr(desc, 0)->atttypid;
	if (GpuextSortTypeLookup(getBaseType(*typid)) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not support columns of type %s", fname, format_type_be(*typid)),
				 errdetail("Supported types: %s.", GpuextSortTypeNames)));
	return portal;
}

/* A value of typid as text, through its output function. */
static Datum
ValueAsText(Datum value, Oid typid)
{
	Oid			output;
	bool		varlena;

	getTypeOutputInfo(typid, &output, &varlena);
	return CStringGetTextDatum(OidOutputFunctionCall(output, value));
}

/* A numeric, integer or float value as numeric (floats through their shortest exact text). */
static Datum
ValueAsNumeric(Datum value, Oid typid)
{
	if (typid == NUMERICOID)
		return value;
	return DirectFunctionCall3(numeric_in, CStringGetDatum(TextDatumGetCString(ValueAsText(value, typid))),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

PG_FUNCTION_INFO_V1(gpu_query_agg);

/* SQL: count, sum, min, max and avg of the first column of a query. */
Datum
gpu_query_agg(PG_FUNCTION_ARGS)
{
	char	   *query = text_to_cstring(PG_GETARG_TEXT_PP(0));
	GpuextAccum *acc = palloc(sizeof(GpuextAccum));
	TupleDesc	tupdesc;
	Datum		values[5];
	bool		nulls[5] = {false, false, false, false, false};
	Portal		portal;
	Oid			typid;
	Oid			sumtype;
	bool		isnull;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	SPI_connect();
	portal = OpenQuery(query, "gpu_query_agg", &typid);
	GpuextAccumInit(acc, getBaseType(typid));
	for (;;)
	{
		SPI_cursor_fetch(portal, true, FETCH_BATCH);
		if (SPI_processed == 0)
			break;
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			bool		isnull;
			Datum		v = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);

			if (!isnull)
				GpuextAccumAdd(acc, v);
		}
		SPI_freetuptable(SPI_tuptable);
		CHECK_FOR_INTERRUPTS();
	}
	SPI_cursor_close(portal);
	SPI_finish();

	/* The results of gpu_sum and friends over the same values, as numeric and text. */
	sumtype = acc->typid == INT8OID ? NUMERICOID : GpuextAccumIsFloat(acc) ? acc->typid : INT8OID;
	values[0] = Int64GetDatum(acc->count);
	if (acc->count == 0)
		nulls[1] = nulls[2] = nulls[3] = nulls[4] = true;
	else
	{
		bool		sums = GpuextAccumHasSum(acc);

		values[1] = sums ? ValueAsNumeric(GpuextAccumResult(acc, GPUEXT_AGG_SUM, &isnull), sumtype) : (Datum) 0;
		values[2] = ValueAsText(acc->min_value, acc->typid);
		values[3] = ValueAsText(acc->max_value, acc->typid);
		values[4] = sums ? ValueAsNumeric(GpuextAccumResult(acc, GPUEXT_AGG_AVG, &isnull),
										  GpuextAccumIsFloat(acc) ? FLOAT8OID : NUMERICOID) : (Datum) 0;
		nulls[1] = nulls[4] = !sums;
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

PG_FUNCTION_INFO_V1(gpu_query_sort);

/* SQL: the first column of a query, sorted as ORDER BY would, as a set of one-column records. */
Datum
gpu_query_sort(PG_FUNCTION_ARGS)
{
	char	   *query = text_to_cstring(PG_GETARG_TEXT_PP(0));
	bool		descending = PG_GETARG_BOOL(1);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext callcxt = CurrentMemoryContext;
	Tuplesortstate *sorter;
	TypeCacheEntry *tc;
	Portal		portal;
	Oid			typid;
	Datum		value;
	bool		isnull;

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	if (rsinfo->setDesc->natts != 1)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("gpu_query_sort returns one column, the column definition list has %d",
						rsinfo->setDesc->natts)));

	SPI_connect();
	portal = OpenQuery(query, "gpu_query_sort", &typid);
	if (TupleDescAttr(rsinfo->setDesc, 0)->atttypid != typid)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("gpu_query_sort: the column definition list says %s, the query's first column is %s",
						format_type_be(TupleDescAttr(rsinfo->setDesc, 0)->atttypid), format_type_be(typid))));
	tc = lookup_type_cache(typid, TYPECACHE_LT_OPR | TYPECACHE_GT_OPR);

	/* The sort lives in the caller's context, beyond SPI's. */
	MemoryContextSwitchTo(callcxt);
	sorter = tuplesort_begin_datum(typid, descending ? tc->gt_opr : tc->lt_opr, InvalidOid,
								   descending, work_mem, NULL, TUPLESORT_NONE);
	for (;;)
	{
		SPI_cursor_fetch(portal, true, FETCH_BATCH);
		if (SPI_processed == 0)
			break;
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			value = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);
			tuplesort_putdatum(sorter, value, isnull);
		}
		SPI_freetuptable(SPI_tuptable);
		CHECK_FOR_INTERRUPTS();
	}
	SPI_cursor_close(portal);
	SPI_finish();
	MemoryContextSwitchTo(callcxt);

	tuplesort_performsort(sorter);
	while (tuplesort_getdatum(sorter, true, &value, &isnull, NULL))
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &isnull);
	tuplesort_end(sorter);
	return (Datum) 0;
}
