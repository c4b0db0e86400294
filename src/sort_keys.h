/*
 * sort_keys.h
 *		Order-preserving unsigned keys for the sortable element types.
 */
#ifndef GPUEXT_SORT_KEYS_H
#define GPUEXT_SORT_KEYS_H

#include "utils/array.h"

/* Long CPU loops check for interrupts every GPUEXT_CFI_MASK + 1 elements (a cancel lands in well under 200 ms). */
#define GPUEXT_CFI_MASK ((size_t) 0xFFFF)

/* One entry per supported element type, generated from GPUEXT_SORT_TYPES. */
typedef struct GpuextSortType
{
	Oid			typid;
	int			value_bytes;	/* bytes of one stored value */
	int			key_bytes;		/* 4 or 8 */
	/* values -> keys (descending inverts the keys) and back */
	void		(*encode) (const void *values, void *keys, size_t n, bool descending);
	void		(*decode) (const void *keys, void *values, size_t n, bool descending);
	/* one value as an ascending key in the low 8 * key_bytes bits, -0 just below +0 (as encode) */
	uint64		(*datum_key_raw) (Datum value);
	Datum		(*key_datum) (uint64 key);
	/* n Datums (every stride-th) into keys, raw as datum_key_raw or with -0 keyed as +0, and keys back */
	void		(*datums_keys) (const Datum *values, size_t stride, uint64 *keys, size_t n, bool raw);
	void		(*keys_datums) (const uint64 *keys, Datum *values, size_t stride, size_t n);
} GpuextSortType;

extern const GpuextSortType *GpuextSortTypeLookup(Oid typid);
extern const GpuextSortType *GpuextArrayValues(ArrayType *arr, const char *fname,
											   int *nitems, int *nnulls);
extern const char *const GpuextSortTypeNames;
extern void GpuextCpuSortKeys(void *keys, size_t n, int key_bytes);

#endif							/* GPUEXT_SORT_KEYS_H */
