/*
 * agg_numeric.c
 *		numeric in the gpu_* accumulators: values as 128-bit fixed-point
 *		integers at one scale, exact sums, PostgreSQL's answers bit for bit.
 *
 * A finite numeric becomes the integer value * 10^nscale, where nscale is the
 * largest display scale among the values seen so far, as long as it has at
 * most 38 digits at that scale (|integer| < 10^38).  Batches of such integers
 * are summed on the device (cuda/reduce_fixed.cu, exactly in 192 bits) or on
 * the CPU, into the accumulator's 128-bit sum.  When a value of a larger
 * scale comes, the sum (and anything batched) is brought to it by
 * multiplying by 10^k, which is exact: so the sum at the end is the exact
 * sum at the largest display scale, as PostgreSQL's sum keeps it.  Batches
 * are flushed before the scale changes, so everything merged is at nscale.
 *
 * Past 128 bits (a value of more than 38 digits at the scale, a sum or a
 * rescale that would overflow) the accumulator goes "big": its sum becomes a
 * numeric, and from then on values are added with PostgreSQL's numeric_add
 * on the CPU (nscale stays, so batches still in flight merge as before).
 * Never a wrong answer, never a double.
 *
 * NaN and the infinities are counted aside, as PostgreSQL's numeric
 * aggregates count them.  min and max keep the winning datum itself (copied
 * into the accumulator's context): a numeric's display scale is part of its
 * value, so the fixed-point integer alone could not give it back.  They
 * compare fixed-point integers where both sides have one, else numeric_cmp,
 * and a later equal value wins, as numeric_smaller and numeric_larger do.
 * The decoding below reads the numeric on-disk format (numeric.c), which is
 * fixed by pg_upgrade compatibility.  Fixed-point integers back to numeric,
 * the results, and the datums' copies and serialized form are in
 * agg_numeric_result.c.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/numeric.h"

#include "agg_accum.h"
#include "scan_heap.h"

/* The numeric format's header bits (numeric.c). */
#define NUM_SIGN_MASK		0xC000
#define NUM_NEG				0x4000
#define NUM_SHORT			0x8000
#define NUM_SPECIAL			0xC000
#define NUM_NAN				0xC000
#define NUM_PINF			0xD000
#define NUM_NINF			0xF000
#define NUM_SHORT_SIGN		0x2000
#define NUM_SHORT_DSCALE_MASK	0x1F80
#define NUM_SHORT_DSCALE_SHIFT	7
#define NUM_SHORT_WEIGHT_SIGN	0x0040
#define NUM_SHORT_WEIGHT_MASK	0x003F
#define NUM_DSCALE_MASK		0x3FFF

/* Largest number of decimal digits a fixed-point value may have. */
#define FIXED_MAX_DIGITS 38

/* The table entry the reducers use for numeric: 16-byte fixed-point values, no keys. */
const GpuextSortType GpuextNumericFixedType = {NUMERICOID, 16, 16, NULL, NULL, NULL, NULL, NULL, NULL};

/* A numeric as read from its bytes. */
typedef enum NumKind
{
	NUM_FINITE,
	NUM_IS_NAN,
	NUM_IS_PINF,
	NUM_IS_NINF
} NumKind;

typedef struct NumParts
{
	NumKind		kind;
	bool		negative;
	int			weight;			/* of the first base-10000 digit */
	int			dscale;
	int			ndigits;
	const char *digits;			/* int16 each, maybe unaligned */
} NumParts;

/* The type-table entry of an aggregate's element type: sortable types' own, or numeric's. */
const GpuextSortType *
GpuextAggTypeLookup(Oid typid)
{
	return typid == NUMERICOID ? &GpuextNumericFixedType : GpuextSortTypeLookup(typid);
}

/* 10^e as a 64-bit integer, 0 <= e <= 19. */
static inline uint64
Pow10_64(int e)
{
	static const uint64 table[20] = {
		UINT64CONST(1), UINT64CONST(10), UINT64CONST(100), UINT64CONST(1000), UINT64CONST(10000),
		UINT64CONST(100000), UINT64CONST(1000000), UINT64CONST(10000000), UINT64CONST(100000000),
		UINT64CONST(1000000000), UINT64CONST(10000000000), UINT64CONST(100000000000),
		UINT64CONST(1000000000000), UINT64CONST(10000000000000), UINT64CONST(100000000000000),
		UINT64CONST(1000000000000000), UINT64CONST(10000000000000000), UINT64CONST(100000000000000000),
		UINT64CONST(1000000000000000000), UINT64CONST(10000000000000000000)};

	return table[e];
}

/* 10^e as an unsigned 128-bit integer, 0 <= e <= 38. */
static uint128
Pow10(int e)
{
	static uint128 table[FIXED_MAX_DIGITS + 1];

	if (table[0] == 0)
	{
		table[0] = 1;
		for (int i = 1; i <= FIXED_MAX_DIGITS; i++)
			table[i] = table[i - 1] * 10;
	}
	return table[e];
}

/* Read a numeric's header and digits without copying it (it may have a short varlena header). */
static inline void
Decode(Datum value, NumParts *p)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(value);
	const char *data;
	size_t		len;
	uint16		header;
	int			hdr;

	if (VARATT_IS_COMPRESSED(v) || VARATT_IS_EXTERNAL(v))
		v = pg_detoast_datum_packed(v);
	data = VARDATA_ANY(v);
	len = VARSIZE_ANY_EXHDR(v);
	memcpy(&header, data, sizeof(header));
	p->kind = NUM_FINITE;
	if ((header & NUM_SIGN_MASK) == NUM_SPECIAL)
	{
		p->kind = (header & 0xF000) == NUM_PINF ? NUM_IS_PINF :
			(header & 0xF000) == NUM_NINF ? NUM_IS_NINF : NUM_IS_NAN;
		p->negative = false;
		p->weight = p->dscale = p->ndigits = 0;
		p->digits = NULL;
		return;
	}
	if ((header & NUM_SIGN_MASK) == NUM_SHORT)
	{
		p->negative = (header & NUM_SHORT_SIGN) != 0;
		p->dscale = (header & NUM_SHORT_DSCALE_MASK) >> NUM_SHORT_DSCALE_SHIFT;
		p->weight = (header & NUM_SHORT_WEIGHT_SIGN ? ~NUM_SHORT_WEIGHT_MASK : 0) |
			(header & NUM_SHORT_WEIGHT_MASK);
		hdr = sizeof(uint16);
	}
	else
	{
		int16		weight;

		memcpy(&weight, data + sizeof(uint16), sizeof(weight));
		p->negative = (header & NUM_SIGN_MASK) == NUM_NEG;
		p->dscale = header & NUM_DSCALE_MASK;
		p->weight = weight;
		hdr = sizeof(uint16) + sizeof(int16);
	}
	p->ndigits = (int) ((len - hdr) / sizeof(int16));
	p->digits = data + hdr;
}

/* ToFixed for up to four base-10000 digits whose value at scale fits 64 bits: false where it does not apply. */
static inline bool
ToFixed64(const NumParts *p, int scale, int128 *out)
{
	uint64		mag = 0;
	int			e = 4 * (p->weight - p->ndigits + 1) + scale;

	if (p->ndigits > 4 || e < -16 || e > 18)
		return false;
	for (int i = 0; i < p->ndigits; i++)
	{
		int16		d;

		memcpy(&d, p->digits + i * sizeof(int16), sizeof(d));
		mag = mag * 10000 + (uint64) d;
	}
	if (e >= 0 && __builtin_mul_overflow(mag, Pow10_64(e), &mag))
		return false;
	if (e < 0)
	{
		uint64		div = Pow10_64(-e);

		if (mag % div != 0)
			return false;
		mag /= div;
	}
	*out = p->negative ? -(int128) mag : (int128) mag;
	return true;
}

/* ToFixed past ToFixed64's reach: up to 38 digits, in 128-bit arithmetic. */
static bool
ToFixedWide(const NumParts *p, int scale, int128 *out)
{
	uint128		mag = 0;

	for (int i = 0; i < p->ndigits; i++)
	{
		int16		d;
		int			e = 4 * (p->weight - i) + scale;
		uint128		term;

		memcpy(&d, p->digits + i * sizeof(int16), sizeof(d));
		if (d == 0)
			continue;
		if (e < 0)
		{
			if (e <= -4 || d % (int) Pow10(-e) != 0)
				return false;
			d /= (int) Pow10(-e);
			e = 0;
		}
		if (e > FIXED_MAX_DIGITS || __builtin_mul_overflow((uint128) d, Pow10(e), &term) ||
			__builtin_add_overflow(mag, term, &mag))
			return false;
	}
	if (mag >= Pow10(FIXED_MAX_DIGITS))
		return false;
	*out = p->negative ? -(int128) mag : (int128) mag;
	return true;
}

/* The finite value as an integer at scale: false if it has more than 38 digits there, or digits below it. */
static inline bool
ToFixed(const NumParts *p, int scale, int128 *out)
{
	return ToFixed64(p, scale, out) || ToFixedWide(p, scale, out);
}

/* v * 10^k, false on overflow (a zero always fits). */
bool
GpuextFixedMulPow10(int128 *v, int k)
{
	if (*v == 0 || k == 0)
		return true;
	if (k > FIXED_MAX_DIGITS)
		return false;
	return !__builtin_mul_overflow(*v, (int128) Pow10(k), v);
}

/* A numeric as an integer at scale: 0, 1 for NaN, -1 where it has none (an infinity, digits below scale, past 38 digits). */
int
GpuextNumericToFixed(Datum value, int scale, int128 *out)
{
	NumParts	p;

	Decode(value, &p);
	if (p.kind == NUM_IS_NAN)
		return 1;
	return p.kind == NUM_FINITE && ToFixed(&p, scale, out) ? 0 : -1;
}

/* A finite numeric's value as an integer below 2^63 at its display scale, for the casts below; false for others. */
static bool
SmallFixed(Datum value, int64 *v, int *scale)
{
	NumParts	p;
	int128		w;

	Decode(value, &p);
	if (p.kind != NUM_FINITE || !ToFixed(&p, p.dscale, &w) || w < PG_INT64_MIN || w > PG_INT64_MAX)
		return false;
	*v = (int64) w;
	*scale = p.dscale;
	return true;
}

/*
 * A numeric as double precision, as numeric_float8 makes it (its text read
 * by strtod): where the value is an integer below 2^53 over 10^s, s <= 22,
 * both are exact doubles and one division rounds their quotient once
 * (gpuext_scan_numeric_double, as the device scan); else numeric_float8.
 */
float8
GpuextNumericToFloat8(Datum value)
{
	int64		v;
	int			scale;
	double		out;

	if (SmallFixed(value, &v, &scale) && gpuext_scan_numeric_double(v, scale, 0, &out))
		return out;
	return DatumGetFloat8(DirectFunctionCall1(numeric_float8, value));
}

/*
 * A numeric as real, as numeric_float4 makes it (its text read by strtof),
 * without its allocations: gpuext_scan_numeric_real, as the device scan,
 * for the same values; else numeric_float4.
 */
float4
GpuextNumericToFloat4(Datum value)
{
	int64		v;
	int			scale;
	double		out;

	if (SmallFixed(value, &v, &scale) && gpuext_scan_numeric_real(v, scale, 0, &out))
		return (float4) out;
	return DatumGetFloat4(DirectFunctionCall1(numeric_float4, value));
}

/* A copy of a numeric in cxt, with a 4-byte varlena header. */
Datum
GpuextNumericCopy(Datum value, MemoryContext cxt)
{
	struct varlena *v = pg_detoast_datum_packed((struct varlena *) DatumGetPointer(value));
	size_t		len = VARSIZE_ANY_EXHDR(v);
	struct varlena *c = MemoryContextAlloc(cxt, VARHDRSZ + len);

	SET_VARSIZE(c, VARHDRSZ + len);
	memcpy(VARDATA(c), VARDATA_ANY(v), len);
	return PointerGetDatum(c);
}

/* Make the sum a numeric, from the fixed-point sum at nscale. */
static void
MakeBig(GpuextAccum *acc)
{
	if (acc->nbig)
		return;
	acc->nbig_sum = GpuextNumericCopy(GpuextFixedToNumeric(acc->isum, acc->nscale), acc->cxt);
	acc->nbig = true;
	acc->isum = 0;
}

/* Add a numeric to the big sum; the old sum is freed unless free_old is false. */
static void
BigAdd(GpuextAccum *acc, Datum value, bool free_old)
{
	Datum		old;

	MakeBig(acc);
	old = acc->nbig_sum;
	acc->nbig_sum = GpuextNumericCopy(DirectFunctionCall2(numeric_add, old, value), acc->cxt);
	if (free_old)
		pfree(DatumGetPointer(old));
}

/* Add a fixed-point partial sum at nscale: into the 128-bit sum, or into the big sum past it. */
static void
FoldFixed(GpuextAccum *acc, int128 v, bool free_old)
{
	int128		t;

	if (!acc->nbig && !__builtin_add_overflow(acc->isum, v, &t))
	{
		acc->isum = t;
		return;
	}
	BigAdd(acc, GpuextFixedToNumeric(v, acc->nscale), free_old);
}

/* Bring the sum and the cached min and max to a larger scale; the sum goes big where it overflows. */
static void
Rescale(GpuextAccum *acc, int scale)
{
	int			k = scale - acc->nscale;
	int128		t = acc->isum;

	if (acc->nbig || k <= 0)
		return;
	if (!GpuextFixedMulPow10(&t, k))
	{
		MakeBig(acc);			/* nscale stays: the big sum keeps every digit */
		return;
	}
	acc->isum = t;
	acc->min_fixed_ok = acc->min_fixed_ok && GpuextFixedMulPow10(&acc->min_fixed, k);
	acc->max_fixed_ok = acc->max_fixed_ok && GpuextFixedMulPow10(&acc->max_fixed, k);
	acc->nscale = scale;
}

/* Compare value (fixed v at nscale if ok) with a kept winner; numeric_cmp where either has no fixed value. */
static int
CmpWinner(Datum value, bool ok, int128 v, Datum winner, bool wok, int128 wv)
{
	if (ok && wok)
		return v < wv ? -1 : v > wv ? 1 : 0;
	return DatumGetInt32(DirectFunctionCall2(numeric_cmp, value, winner));
}

/* Keep value as min or max where it wins or ties (a later equal value wins, as in numeric_smaller). */
static void
UpdateMinMax(GpuextAccum *acc, Datum value, int dscale, bool ok, int128 v)
{
	int			c;

	c = acc->min_value == (Datum) 0 ? -1 :
		CmpWinner(value, ok, v, acc->min_value, acc->min_fixed_ok, acc->min_fixed);
	/* an equal value of the same display scale prints the same: keep the copy */
	if (c < 0 || (c == 0 && !(ok && acc->min_fixed_ok && dscale == acc->min_dscale)))
	{
		if (acc->min_value != (Datum) 0)
			pfree(DatumGetPointer(acc->min_value));
		acc->min_value = GpuextNumericCopy(value, acc->cxt);
		acc->min_fixed_ok = ok;
		acc->min_fixed = v;
		acc->min_dscale = dscale;
	}
	c = acc->max_value == (Datum) 0 ? 1 :
		CmpWinner(value, ok, v, acc->max_value, acc->max_fixed_ok, acc->max_fixed);
	if (c > 0 || (c == 0 && !(ok && acc->max_fixed_ok && dscale == acc->max_dscale)))
	{
		if (acc->max_value != (Datum) 0)
			pfree(DatumGetPointer(acc->max_value));
		acc->max_value = GpuextNumericCopy(value, acc->cxt);
		acc->max_fixed_ok = ok;
		acc->max_fixed = v;
		acc->max_dscale = dscale;
	}
}

/* Count a NaN or an infinity aside. */
static void
AddSpecial(GpuextAccum *acc, Datum value, NumKind kind)
{
	acc->has_nan |= kind == NUM_IS_NAN;
	acc->has_pos_inf |= kind == NUM_IS_PINF;
	acc->has_neg_inf |= kind == NUM_IS_NINF;
	UpdateMinMax(acc, value, 0, false, 0);
	acc->count++;
}

/* Add one numeric on the CPU: count, min, max and the exact sum. */
void
GpuextNumericAdd(GpuextAccum *acc, Datum value)
{
	NumParts	p;
	int128		v = 0;
	bool		ok;

	Decode(value, &p);
	if (p.kind != NUM_FINITE)
	{
		AddSpecial(acc, value, p.kind);
		return;
	}
	if (p.dscale > acc->nscale)
		Rescale(acc, p.dscale);
	ok = ToFixed(&p, acc->nscale, &v);
	UpdateMinMax(acc, value, p.dscale, ok, v);
	acc->count++;
	/* a big sum takes the value itself: its display scale may be above nscale */
	if (ok && !acc->nbig)
		FoldFixed(acc, v, true);
	else
		BigAdd(acc, value, true);
}

/*
 * Add one finite numeric given as v at its display scale dscale, as
 * GpuextNumericAdd adds that numeric: the numeric is made only where it may
 * become the min or the max, or where the sum cannot take v at nscale.
 */
void
GpuextNumericAddFixedValue(GpuextAccum *acc, int128 v, int dscale)
{
	int128		f = v;
	uint128		mag;
	bool		need_min;
	bool		need_max;
	Datum		value;

	if (dscale > acc->nscale)
		Rescale(acc, dscale);
	if (acc->nbig || !GpuextFixedMulPow10(&f, acc->nscale - dscale) ||
		(mag = f < 0 ? (uint128) 0 - (uint128) f : (uint128) f) >= Pow10(FIXED_MAX_DIGITS))
	{
		value = GpuextFixedToNumeric(v, dscale);
		GpuextNumericAdd(acc, value);
		pfree(DatumGetPointer(value));
		return;
	}
	need_min = acc->min_value == (Datum) 0 || !acc->min_fixed_ok || f < acc->min_fixed ||
		(f == acc->min_fixed && dscale != acc->min_dscale);
	need_max = acc->max_value == (Datum) 0 || !acc->max_fixed_ok || f > acc->max_fixed ||
		(f == acc->max_fixed && dscale != acc->max_dscale);
	if (need_min || need_max)
	{
		value = GpuextFixedToNumeric(v, dscale);
		UpdateMinMax(acc, value, dscale, true, f);
		pfree(DatumGetPointer(value));
	}
	acc->count++;
	FoldFixed(acc, f, true);
}

/*
 * Where a value goes: GPUEXT_NUMERIC_BATCH, with its min and max taken and
 * *fixed its integer at nscale for the caller's batch (which adds its count
 * and sum); GPUEXT_NUMERIC_RESCALE, a larger scale: the caller flushes its
 * batches, then adds it with GpuextNumericAdd; GPUEXT_NUMERIC_CPU: the caller
 * adds it with GpuextNumericAdd (NaN, infinities, values past 128 bits, a big sum).
 */
GpuextNumericRoute
GpuextNumericPrepare(GpuextAccum *acc, Datum value, int128 *fixed)
{
	NumParts	p;

	Decode(value, &p);
	if (p.kind != NUM_FINITE || acc->nbig)
		return GPUEXT_NUMERIC_CPU;
	if (p.dscale > acc->nscale)
		return GPUEXT_NUMERIC_RESCALE;
	if (!ToFixed(&p, acc->nscale, fixed))
		return GPUEXT_NUMERIC_CPU;
	UpdateMinMax(acc, value, p.dscale, true, *fixed);
	return GPUEXT_NUMERIC_BATCH;
}

/* Add the count and sum of n fixed-point values at nscale (a batch added on the CPU). */
void
GpuextNumericAddFixed(GpuextAccum *acc, const int128 *values, size_t n)
{
	int128		s = 0;

	acc->count += n;
	for (size_t i = 0; i < n; i++)
	{
		int128		t;

		if ((i & GPUEXT_CFI_MASK) == 0)
			CHECK_FOR_INTERRUPTS();
		if (__builtin_add_overflow(s, values[i], &t))
		{
			/* past 128 bits: fold what was summed, start again from this value */
			FoldFixed(acc, s, true);
			t = values[i];
		}
		s = t;
	}
	FoldFixed(acc, s, true);
}

/*
 * Merge a device batch's count and 192-bit sum at nscale.  Nothing is freed:
 * a failure after the merge puts the accumulator back as it was before.
 */
void
GpuextNumericMergeReduce(GpuextAccum *acc, const GpuextReduceResult *r)
{
	uint128		low = ((uint128) (uint64) r->isum_hi << 64) | r->isum_lo;
	int64		sign = (int64) r->isum_hi < 0 ? -1 : 0;

	acc->count += (int64) r->count;
	if (r->isum_top == sign)
		FoldFixed(acc, (int128) low, false);
	else
		BigAdd(acc, GpuextFixed192ToNumeric(low, r->isum_top, acc->nscale), false);
}

/* Keep v, a value at display scale scale, as min or max where it wins, making its numeric only then. */
static void
MinMaxScaled(GpuextAccum *acc, int64 v, int scale)
{
	int128		f = v;
	bool		ok = acc->nscale >= scale && GpuextFixedMulPow10(&f, acc->nscale - scale);
	Datum		value;

	if (ok && acc->min_value != (Datum) 0 && acc->min_fixed_ok && f > acc->min_fixed &&
		acc->max_value != (Datum) 0 && acc->max_fixed_ok && f < acc->max_fixed)
		return;
	value = GpuextFixedToNumeric(v, scale);
	UpdateMinMax(acc, value, scale, ok, f);
	pfree(DatumGetPointer(value));
}

/*
 * Merge the count, exact sum, min and max of count finite values of display
 * scale scale, each given as the integer value * 10^scale (a device scan's
 * reduction of them as bigints), as adding each with GpuextNumericAdd would:
 * a min, max or big sum it replaces is freed, as there.
 */
void
GpuextNumericMergeScaled(GpuextAccum *acc, int64 count, int128 sum, int scale, int64 min, int64 max)
{
	int128		f = sum;

	if (count == 0)
		return;
	if (scale > acc->nscale)
		Rescale(acc, scale);
	MinMaxScaled(acc, min, scale);
	MinMaxScaled(acc, max, scale);
	acc->count += count;
	if (acc->nscale >= scale && GpuextFixedMulPow10(&f, acc->nscale - scale))
		FoldFixed(acc, f, true);
	else
	{
		Datum		value = GpuextFixedToNumeric(sum, scale);

		BigAdd(acc, value, true);
		pfree(DatumGetPointer(value));
	}
}

/* Keep src's min or max in dst where it wins or ties (combine: numeric_smaller(dst, src)). */
static void
MergeWinner(GpuextAccum *dst, Datum value)
{
	NumParts	p;
	int128		v = 0;
	bool		ok;

	Decode(value, &p);
	ok = p.kind == NUM_FINITE && ToFixed(&p, dst->nscale, &v);
	UpdateMinMax(dst, value, p.dscale, ok, v);
}

/* Fold src into dst (partial aggregates); dst's batches must be flushed. */
void
GpuextNumericMerge(GpuextAccum *dst, const GpuextAccum *src)
{
	int128		v = src->isum;

	if (src->count == 0)
		return;
	dst->has_nan |= src->has_nan;
	dst->has_pos_inf |= src->has_pos_inf;
	dst->has_neg_inf |= src->has_neg_inf;
	dst->count += src->count;
	/* both sums at the larger scale, or dst's big sum plus src's as numeric */
	if (!src->nbig && src->nscale > dst->nscale)
		Rescale(dst, src->nscale);
	if (!src->nbig && !dst->nbig && GpuextFixedMulPow10(&v, dst->nscale - src->nscale))
		FoldFixed(dst, v, true);
	else
		BigAdd(dst, GpuextNumericSum(src), true);
	/* src's winners against dst's; src wins ties, as numeric_smaller(dst, src) */
	MergeWinner(dst, src->min_value);
	MergeWinner(dst, src->max_value);
}

/* Add one value to a synchronous batch (arrays), or to the accumulator. */
void
GpuextNumericBatchAdd(GpuextNumericBatch *b, Datum value)
{
	int128		v;

	switch (GpuextNumericPrepare(b->acc, value, &v))
	{
		case GPUEXT_NUMERIC_BATCH:
			b->values[b->n++] = v;
			if (b->n == b->cap)
				GpuextNumericBatchFlush(b);
			return;
		case GPUEXT_NUMERIC_RESCALE:
			GpuextNumericBatchFlush(b);
			/* FALLTHROUGH */
		case GPUEXT_NUMERIC_CPU:
			GpuextNumericAdd(b->acc, value);
			return;
	}
}

/* Reduce the batch into the accumulator: on the device where placement says so, else the CPU. */
void
GpuextNumericBatchFlush(GpuextNumericBatch *b)
{
	if (b->n > 0)
		GpuextAccumAddValues(b->acc, (const char *) b->values, b->n);
	b->n = 0;
}
