/*
 * agg_numeric_result.c
 *		numeric out of the gpu_* accumulators (agg_numeric.c): fixed-point
 *		sums back to numeric, the aggregates' results, and the numeric
 *		datums' copies and serialized form for partial aggregates.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/numeric.h"

#include "agg_accum.h"

/* A signed 192-bit integer (top * 2^128 + low, low unsigned) at scale, as numeric of that display scale. */
Datum
GpuextFixed192ToNumeric(uint128 low, int64 top, int scale)
{
	bool		negative = top < 0;
	uint64		w[3] = {(uint64) low, (uint64) (low >> 64), (uint64) top};
	char		digits[80];
	int			nd = 0;
	StringInfoData s;
	Datum		result;

	/* most sums fit a bigint: PostgreSQL's own exact conversion, without the digits as text */
	if (scale >= 0 && ((top == 0 && low <= (uint128) PG_INT64_MAX) ||
					   (top == -1 && (int128) low >= PG_INT64_MIN && (int128) low < 0)))
		return NumericGetDatum(int64_div_fast_to_numeric((int64) (int128) low, scale));
	if (negative)
	{
		/* two's complement negation over the three words */
		bool		carry = true;

		for (int i = 0; i < 3; i++)
		{
			w[i] = ~w[i] + (carry ? 1 : 0);
			carry = carry && w[i] == 0;
		}
	}
	while (w[0] != 0 || w[1] != 0 || w[2] != 0)
	{
		const uint64 base = UINT64CONST(10000000000000000000);	/* 10^19 */
		uint128		rem = 0;

		for (int i = 2; i >= 0; i--)
		{
			uint128		cur = (rem << 64) | w[i];

			w[i] = (uint64) (cur / base);
			rem = cur % base;
		}
		for (int k = 0; k < 19; k++)
		{
			digits[nd++] = '0' + (int) (rem % 10);
			rem /= 10;
		}
	}
	while (nd > 0 && digits[nd - 1] == '0')
		nd--;
	initStringInfo(&s);
	if (negative)
		appendStringInfoChar(&s, '-');
	/* at least one digit before the point */
	for (int i = Max(nd, scale + 1) - 1; i >= 0; i--)
	{
		appendStringInfoChar(&s, i < nd ? digits[i] : '0');
		if (i == scale && scale > 0)
			appendStringInfoChar(&s, '.');
	}
	result = DirectFunctionCall3(numeric_in, CStringGetDatum(s.data), ObjectIdGetDatum(InvalidOid),
								 Int32GetDatum(-1));
	pfree(s.data);
	return result;
}

/* A 128-bit integer at scale as numeric of that display scale. */
Datum
GpuextFixedToNumeric(int128 v, int scale)
{
	return GpuextFixed192ToNumeric((uint128) v, v < 0 ? -1 : 0, scale);
}

/* The sum as numeric: the big sum, or the fixed-point sum at nscale. */
Datum
GpuextNumericSum(const GpuextAccum *acc)
{
	return acc->nbig ? acc->nbig_sum : GpuextFixedToNumeric(acc->isum, acc->nscale);
}

/* Copy an accumulator's numeric datums into cxt (after the struct was copied whole). */
void
GpuextNumericCopyDatums(GpuextAccum *acc, MemoryContext cxt)
{
	acc->cxt = cxt;
	if (acc->min_value != (Datum) 0)
		acc->min_value = GpuextNumericCopy(acc->min_value, cxt);
	if (acc->max_value != (Datum) 0)
		acc->max_value = GpuextNumericCopy(acc->max_value, cxt);
	if (acc->nbig)
		acc->nbig_sum = GpuextNumericCopy(acc->nbig_sum, cxt);
}

/*
 * sum, avg, min or max of a non-empty numeric accumulator, as PostgreSQL's
 * numeric_sum, numeric_avg, min and max; always a fresh datum, since the
 * state may change after (window aggregates) and frees replaced winners.
 */
Datum
GpuextNumericResult(GpuextAccum *acc, GpuextAggKind kind)
{
	const char *special = NULL;
	Datum		sum;

	if (kind == GPUEXT_AGG_MIN)
		return GpuextNumericCopy(acc->min_value, CurrentMemoryContext);
	if (kind == GPUEXT_AGG_MAX)
		return GpuextNumericCopy(acc->max_value, CurrentMemoryContext);
	if (acc->has_nan || (acc->has_pos_inf && acc->has_neg_inf))
		special = "NaN";
	else if (acc->has_pos_inf)
		special = "Infinity";
	else if (acc->has_neg_inf)
		special = "-Infinity";
	if (special != NULL)
		return DirectFunctionCall3(numeric_in, CStringGetDatum(special), ObjectIdGetDatum(InvalidOid),
								   Int32GetDatum(-1));
	sum = GpuextNumericSum(acc);
	if (kind == GPUEXT_AGG_SUM)
		return acc->nbig ? GpuextNumericCopy(sum, CurrentMemoryContext) : sum;
	/* no NaN or infinity: count is numeric_avg's N */
	return DirectFunctionCall2(numeric_div, sum, NumericGetDatum(int64_to_numeric(acc->count)));
}

/* Bytes the numeric datums of an accumulator add to its serialized form. */
size_t
GpuextNumericSerialSize(const GpuextAccum *acc)
{
	size_t		n = 0;

	if (acc->typid != NUMERICOID)
		return 0;
	if (acc->min_value != (Datum) 0)
		n += VARSIZE(DatumGetPointer(acc->min_value)) + VARSIZE(DatumGetPointer(acc->max_value));
	if (acc->nbig)
		n += VARSIZE(DatumGetPointer(acc->nbig_sum));
	return n;
}

/* Write the numeric datums (min, max, big sum, those present) at dst. */
void
GpuextNumericSerialWrite(const GpuextAccum *acc, char *dst)
{
	Datum		d[3] = {acc->min_value, acc->max_value, acc->nbig ? acc->nbig_sum : (Datum) 0};

	if (acc->typid != NUMERICOID)
		return;
	for (int i = 0; i < 3; i++)
		if (d[i] != (Datum) 0)
		{
			memcpy(dst, DatumGetPointer(d[i]), VARSIZE(DatumGetPointer(d[i])));
			dst += VARSIZE(DatumGetPointer(d[i]));
		}
}

/* Read them back into CurrentMemoryContext (the struct was copied before); ERROR if the bytes do not match. */
void
GpuextNumericSerialRead(GpuextAccum *acc, const char *src, size_t len)
{
	Datum	   *d[3] = {&acc->min_value, &acc->max_value, &acc->nbig_sum};
	bool		present[3] = {acc->min_value != (Datum) 0, acc->max_value != (Datum) 0, acc->nbig};

	acc->cxt = CurrentMemoryContext;
	for (int i = 0; i < 3; i++)
	{
		struct varlena hdr;

		if (!present[i] || acc->typid != NUMERICOID)
			continue;
		if (len < VARHDRSZ)
			elog(ERROR, "gpuext partial aggregate: numeric datums cut short");
		memcpy(&hdr, src, VARHDRSZ);
		if (VARSIZE(&hdr) < VARHDRSZ + sizeof(uint16) || VARSIZE(&hdr) > len)
			elog(ERROR, "gpuext partial aggregate: bad numeric datum of %u bytes", (unsigned) VARSIZE(&hdr));
		*d[i] = PointerGetDatum(palloc(VARSIZE(&hdr)));
		memcpy(DatumGetPointer(*d[i]), src, VARSIZE(&hdr));
		len -= VARSIZE(&hdr);
		src += VARSIZE(&hdr);
	}
	if (len != 0)
		elog(ERROR, "gpuext partial aggregate has %zu bytes left over", len);
}
