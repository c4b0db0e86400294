/*
 * sort_keys.c
 *		Order-preserving unsigned keys for every sortable type, and the CPU sort.
 *
 * Keys order exactly as ORDER BY does: signed integers (and date, timestamp,
 * timestamptz, stored as such) by flipping the sign bit; floats by flipping
 * all bits of negatives and the sign bit of positives, with every NaN first
 * made the one positive quiet NaN so that it sorts above +Infinity.  In
 * arrays -0 keys just below +0, a tie order PostgreSQL also permits, and
 * decodes back to -0; row keys (datums_keys, not raw) make -0 equal to +0, so that a
 * later key breaks the tie as PostgreSQL does.  Descending inverts the key.
 * Every device algorithm and the CPU sort order these same keys, so all
 * placements give the same answer.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "datatype/timestamp.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/date.h"
#include "utils/timestamp.h"

#include "sort_keys.h"

const char *const GpuextSortTypeNames =
"smallint, integer, bigint, real, double precision, date, timestamp without time zone, timestamp with time zone";

/* Signed integer <-> key of the same or wider width. */
static inline uint32
signed_to_uint32(int32 v)
{
	return (uint32) v ^ UINT32_C(0x80000000);
}

static inline int32
signed_from_uint32(uint32 k)
{
	return (int32) (k ^ UINT32_C(0x80000000));
}

static inline uint64
signed_to_uint64(int64 v)
{
	return (uint64) v ^ UINT64_C(0x8000000000000000);
}

static inline int64
signed_from_uint64(uint64 k)
{
	return (int64) (k ^ UINT64_C(0x8000000000000000));
}

/* float4 <-> key: NaN canonicalised, negatives inverted, positives above them (no branch on the sign). */
static inline uint32
float_to_uint32(float4 f)
{
	uint32		u;

	if (isnan(f))
		return UINT32_C(0x7FC00000) | UINT32_C(0x80000000);
	memcpy(&u, &f, sizeof(u));
	return u ^ ((uint32) ((int32) u >> 31) | UINT32_C(0x80000000));
}

static inline float4
float_from_uint32(uint32 k)
{
	uint32		u = k ^ ((uint32) ((int32) ~k >> 31) | UINT32_C(0x80000000));
	float4		f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* float8 <-> key, as for float4. */
static inline uint64
float_to_uint64(float8 f)
{
	uint64		u;

	if (isnan(f))
		return UINT64_C(0x7FF8000000000000) | UINT64_C(0x8000000000000000);
	memcpy(&u, &f, sizeof(u));
	return u ^ ((uint64) ((int64) u >> 63) | UINT64_C(0x8000000000000000));
}

static inline float8
float_from_uint64(uint64 k)
{
	uint64		u = k ^ ((uint64) ((int64) ~k >> 63) | UINT64_C(0x8000000000000000));
	float8		f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* The type table: (name, type oid, stored C type, key type, key mapping, Datum getter, setter). */
#define GPUEXT_SORT_TYPES(X) \
	X(int2, INT2OID, int16, uint32, signed, DatumGetInt16, Int16GetDatum) \
	X(int4, INT4OID, int32, uint32, signed, DatumGetInt32, Int32GetDatum) \
	X(int8, INT8OID, int64, uint64, signed, DatumGetInt64, Int64GetDatum) \
	X(float4, FLOAT4OID, float4, uint32, float, DatumGetFloat4, Float4GetDatum) \
	X(float8, FLOAT8OID, float8, uint64, float, DatumGetFloat8, Float8GetDatum) \
	X(date, DATEOID, DateADT, uint32, signed, DatumGetDateADT, DateADTGetDatum) \
	X(timestamp, TIMESTAMPOID, Timestamp, uint64, signed, DatumGetTimestamp, TimestampGetDatum) \
	X(timestamptz, TIMESTAMPTZOID, TimestampTz, uint64, signed, DatumGetTimestampTz, TimestampTzGetDatum)

/* Per type: encode values into keys, decode keys into values, one or many Datums into keys and back. */
#define GPUEXT_DEFINE_CODEC(name, oid, ctype, ktype, kind, getter, setter) \
static void \
encode_##name(const void *values, void *keys, size_t n, bool descending) \
{ \
	const ctype *v = (const ctype *) values; \
	ktype	   *k = (ktype *) keys; \
	ktype		flip = descending ? ~(ktype) 0 : 0; \
	\
	for (size_t i = 0; i < n; i++) \
		k[i] = kind##_to_##ktype(v[i]) ^ flip; \
} \
\
static void \
decode_##name(const void *keys, void *values, size_t n, bool descending) \
{ \
	const ktype *k = (const ktype *) keys; \
	ctype	   *v = (ctype *) values; \
	ktype		flip = descending ? ~(ktype) 0 : 0; \
	\
	for (size_t i = 0; i < n; i++) \
		v[i] = (ctype) kind##_from_##ktype(k[i] ^ flip); \
} \
\
static uint64 \
datum_key_##name(Datum value) \
{ \
	ctype		v = getter(value); \
	\
	if (v == 0) \
		v = 0;					/* -0 ties with 0 here: a later key decides */ \
	return kind##_to_##ktype(v); \
} \
\
static uint64 \
datum_key_raw_##name(Datum value) \
{ \
	return kind##_to_##ktype(getter(value)); \
} \
\
static Datum \
key_datum_##name(uint64 key) \
{ \
	return setter((ctype) kind##_from_##ktype((ktype) key)); \
} \
\
static void \
datums_keys_##name(const Datum *values, size_t stride, uint64 *keys, size_t n, bool raw) \
{ \
	if (raw) \
		for (size_t i = 0; i < n; i++) \
			keys[i] = datum_key_raw_##name(values[i * stride]); \
	else \
		for (size_t i = 0; i < n; i++) \
			keys[i] = datum_key_##name(values[i * stride]); \
} \
\
static void \
keys_datums_##name(const uint64 *keys, Datum *values, size_t stride, size_t n) \
{ \
	for (size_t i = 0; i < n; i++) \
		values[i * stride] = key_datum_##name(keys[i]); \
}

GPUEXT_SORT_TYPES(GPUEXT_DEFINE_CODEC)

#define GPUEXT_TYPE_ENTRY(name, oid, ctype, ktype, kind, getter, setter) \
	{oid, sizeof(ctype), sizeof(ktype), encode_##name, decode_##name, \
	 datum_key_raw_##name, key_datum_##name, datums_keys_##name, keys_datums_##name},

static const GpuextSortType sort_types[] = {
	GPUEXT_SORT_TYPES(GPUEXT_TYPE_ENTRY)
};

/* Find the table entry for a (base) element type, or NULL. */
const GpuextSortType *
GpuextSortTypeLookup(Oid typid)
{
	for (int i = 0; i < lengthof(sort_types); i++)
		if (sort_types[i].typid == typid)
			return &sort_types[i];
	return NULL;
}

/*
 * Check that an array is one-dimensional and of a supported element type
 * (ERROR naming fname otherwise); count its elements and NULLs.  The non-NULL
 * values lie dense at ARR_DATA_PTR, nitems - nnulls of them.
 */
const GpuextSortType *
GpuextArrayValues(ArrayType *arr, const char *fname, int *nitems, int *nnulls)
{
	Oid			elemtype = ARR_ELEMTYPE(arr);
	const GpuextSortType *type = GpuextSortTypeLookup(getBaseType(elemtype));
	bits8	   *bitmap = ARR_NULLBITMAP(arr);
	int			set;

	if (type == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s does not support arrays of type %s", fname, format_type_be(elemtype)),
				 errdetail("Supported element types: %s.", GpuextSortTypeNames)));
	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s accepts only one-dimensional arrays", fname),
				 errdetail("The array has %d dimensions.", ARR_NDIM(arr))));

	*nitems = ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr));
	*nnulls = 0;
	if (bitmap != NULL)
	{
		set = (int) pg_popcount((const char *) bitmap, *nitems / 8);
		for (int i = *nitems & ~7; i < *nitems; i++)
			if (bitmap[i / 8] & (1 << (i % 8)))
				set++;
		*nnulls = *nitems - set;
	}
	return type;
}

/* LSD radix sort by bytes, skipping bytes that all keys share; one template per key width. */
#define GPUEXT_DEFINE_RADIX(ktype) \
static void \
radix_sort_##ktype(ktype *keys, size_t n) \
{ \
	const int	nbytes = sizeof(ktype); \
	size_t	   *counts = palloc0(sizeof(size_t) * 256 * nbytes); \
	ktype	   *tmp = MemoryContextAllocHuge(CurrentMemoryContext, sizeof(ktype) * n); \
	ktype	   *src = keys, \
			   *dst = tmp; \
	\
	for (size_t i = 0; i < n; i++) \
	{ \
		if ((i & GPUEXT_CFI_MASK) == 0) \
			CHECK_FOR_INTERRUPTS(); \
		for (int b = 0; b < nbytes; b++) \
			counts[b * 256 + ((keys[i] >> (8 * b)) & 0xFF)]++; \
	} \
	\
	for (int b = 0; b < nbytes; b++) \
	{ \
		size_t	   *c = counts + b * 256; \
		size_t		sum = 0; \
		ktype	   *swap; \
		\
		if (c[(keys[0] >> (8 * b)) & 0xFF] == n) \
			continue; \
		CHECK_FOR_INTERRUPTS(); \
		for (int d = 0; d < 256; d++) \
		{ \
			size_t		cnt = c[d]; \
			\
			c[d] = sum; \
			sum += cnt; \
		} \
		for (size_t i = 0; i < n; i++) \
		{ \
			if ((i & GPUEXT_CFI_MASK) == 0) \
				CHECK_FOR_INTERRUPTS(); \
			dst[c[(src[i] >> (8 * b)) & 0xFF]++] = src[i]; \
		} \
		swap = src; \
		src = dst; \
		dst = swap; \
	} \
	if (src != keys) \
		memcpy(keys, src, sizeof(ktype) * n); \
	pfree(tmp); \
	pfree(counts); \
}

GPUEXT_DEFINE_RADIX(uint32)
GPUEXT_DEFINE_RADIX(uint64)

/* The CPU sort of keys, ascending; the reference every device algorithm matches. */
void
GpuextCpuSortKeys(void *keys, size_t n, int key_bytes)
{
	if (n < 2)
		return;
	if (key_bytes == 4)
		radix_sort_uint32((uint32 *) keys, n);
	else
		radix_sort_uint64((uint64 *) keys, n);
}
