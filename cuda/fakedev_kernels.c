/*
 * fakedev_kernels.c
 *		The fake device's "kernels" (WITH_CUDA=fake; the device itself is in
 *		fakedev.c): sorts, reductions, the matrix product, the gather of rows
 *		and the device scan, plain C on host memory, done by the time they are
 *		"enqueued".
 *
 * Results match the CUDA kernels' contracts: the same keys, the same exact
 * digits as src/agg_accum.c.  Plain C: no postgres.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fakedev.h"
#include "reduce_groups.h"
#include "scan_heap.h"

/* The fake sorts need no scratch. */
GpuextStatus
gpuext_sort_scratch_bytes(GpuextSortAlgo algo, int key_bytes, size_t n, size_t *bytes,
						  size_t *host_bytes)
{
	(void) n;
	if (key_bytes != 4 && key_bytes != 8)
		return gpuext_fake_fail(GPUEXT_INVALID, "key width must be 4 or 8 bytes");
	if (algo > GPUEXT_SORT_RADIX)
		return gpuext_fake_fail(GPUEXT_INVALID, "unknown sort algorithm");
	*bytes = 0;
	*host_bytes = 0;
	return GPUEXT_OK;
}

/* Elements a fake sort handles between two polls, so that a cancel lands as soon as on a device. */
#define FAKE_POLL_EVERY ((size_t) 1 << 18)

/* Byte b of key i of a 4- or 8-byte key array. */
static inline unsigned
KeyByte(const void *keys, int key_bytes, size_t i, int b)
{
	uint64_t	k = key_bytes == 4 ? ((const uint32_t *) keys)[i] : ((const uint64_t *) keys)[i];

	return (unsigned) (k >> (8 * b)) & 0xFF;
}

/* LSD radix sort of unsigned keys by bytes, polling between chunks; 0 when poll asked to stop. */
static int
RadixSortKeys(void *keys, size_t n, int key_bytes, GpuextPollFn poll, void *arg)
{
	char	   *src = keys;
	char	   *tmp = malloc(n * key_bytes + 1);
	char	   *dst = tmp;
	int			ok = 1;

	if (tmp == NULL)
		return -1;
	for (int b = 0; b < key_bytes && ok; b++)
	{
		size_t		count[256] = {0};
		size_t		sum = 0;
		char	   *swap;

		for (size_t i = 0; i < n && ok; i++)
		{
			if (i % FAKE_POLL_EVERY == 0 && poll && poll(arg))
				ok = 0;
			count[KeyByte(src, key_bytes, i, b)]++;
		}
		if (!ok || count[KeyByte(src, key_bytes, 0, b)] == n)
			continue;
		for (int d = 0; d < 256; d++)
		{
			size_t		c = count[d];

			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
		{
			if (i % FAKE_POLL_EVERY == 0 && poll && poll(arg))
			{
				ok = 0;
				break;
			}
			memcpy(dst + count[KeyByte(src, key_bytes, i, b)]++ * key_bytes, src + i * key_bytes, key_bytes);
		}
		swap = src;
		src = dst;
		dst = swap;
	}
	if (ok && src != keys)
		memcpy(keys, src, n * key_bytes);
	free(tmp);
	return ok;
}

/* Sort unsigned keys in place, whatever the algorithm asked for. */
GpuextStatus
gpuext_sort_keys(GpuextSortAlgo algo, int key_bytes, void *keys, size_t n, void *scratch,
				 size_t scratch_bytes, void *host_scratch, size_t host_scratch_bytes,
				 GpuextPollFn poll, void *arg)
{
	int			ok;

	(void) scratch;
	(void) scratch_bytes;
	(void) host_scratch;
	(void) host_scratch_bytes;
	if (key_bytes != 4 && key_bytes != 8)
		return gpuext_fake_fail(GPUEXT_INVALID, "key width must be 4 or 8 bytes");
	if (algo == GPUEXT_SORT_ODDEVEN && n > GPUEXT_ODDEVEN_MAX_ELEMENTS)
		return gpuext_fake_fail(GPUEXT_INVALID, "too many keys for the odd-even sort");
	if (poll && poll(arg))
		return gpuext_fake_fail(GPUEXT_INTERRUPTED, "sort interrupted");
	ok = n < 2 ? 1 : RadixSortKeys(keys, n, key_bytes, poll, arg);
	if (ok < 0)
		return gpuext_fake_fail(GPUEXT_OUT_OF_MEMORY, "out of host memory");
	return ok ? GPUEXT_OK : gpuext_fake_fail(GPUEXT_INTERRUPTED, "sort interrupted");
}

/* The fake pairs sort needs no scratch; bitonic alone sorts pairs, as on the device. */
GpuextStatus
gpuext_sort_pairs_scratch_bytes(GpuextSortAlgo algo, int key_bytes, size_t n, size_t *bytes)
{
	(void) n;
	if (bytes == NULL)
		return gpuext_fake_fail(GPUEXT_INVALID, "null result pointer");
	if (key_bytes != 4 && key_bytes != 8)
		return gpuext_fake_fail(GPUEXT_INVALID, "key width must be 4 or 8 bytes");
	if (algo != GPUEXT_SORT_BITONIC)
		return gpuext_fake_fail(GPUEXT_INVALID, "only the bitonic sort sorts (key, index) pairs");
	*bytes = 0;
	return GPUEXT_OK;
}

typedef struct FakePair
{
	uint64_t	key;
	uint32_t	idx;
} FakePair;

/* qsort order of pairs: key, then index. */
static int
FakePairCmp(const void *a, const void *b)
{
	const FakePair *x = a;
	const FakePair *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Sort (key, index) pairs by key, then index, with qsort. */
GpuextStatus
gpuext_sort_pairs(GpuextSortAlgo algo, int key_bytes, void *keys, uint32_t *idx, size_t n, void *scratch,
				  size_t scratch_bytes)
{
	size_t		need = 0;
	GpuextStatus st;
	FakePair   *p;

	(void) scratch;
	(void) scratch_bytes;
	if ((st = gpuext_sort_pairs_scratch_bytes(algo, key_bytes, n, &need)) != GPUEXT_OK)
		return st;
	if (n > 0 && (keys == NULL || idx == NULL))
		return gpuext_fake_fail(GPUEXT_INVALID, "keys or index pointer is null");
	if (((uintptr_t) keys | (uintptr_t) idx) % 16 != 0)
		return gpuext_fake_fail(GPUEXT_INVALID, "keys and indices must be 16-byte aligned");
	p = malloc(n * sizeof(FakePair) + 1);
	if (p == NULL)
		return gpuext_fake_fail(GPUEXT_OUT_OF_MEMORY, "out of host memory");
	for (size_t i = 0; i < n; i++)
	{
		p[i].key = key_bytes == 4 ? ((uint32_t *) keys)[i] : ((uint64_t *) keys)[i];
		p[i].idx = idx[i];
	}
	qsort(p, n, sizeof(FakePair), FakePairCmp);
	for (size_t i = 0; i < n; i++)
	{
		if (key_bytes == 4)
			((uint32_t *) keys)[i] = (uint32_t) p[i].key;
		else
			((uint64_t *) keys)[i] = p[i].key;
		idx[i] = p[i].idx;
	}
	free(p);
	return GPUEXT_OK;
}

/* The fake row sort needs no scratch. */
GpuextStatus
gpuext_sort_rows_scratch_bytes(int nwords, size_t n, size_t *bytes)
{
	(void) n;
	if (nwords < 1)
		return gpuext_fake_fail(GPUEXT_INVALID, "a row sort needs at least one key word");
	*bytes = 0;
	return GPUEXT_OK;
}

/*
 * Sort row numbers by multi-word keys (row-major), stably: an LSD radix sort
 * by bytes from the last word to the first, polling between chunks; the
 * keys stay, sorted_keys gets them in order.
 */
GpuextStatus
gpuext_sort_rows(int nwords, int top_bits, const uint64_t *keys, uint32_t *order, uint64_t *sorted_keys,
				 size_t n, void *scratch, size_t scratch_bytes, GpuextPollFn poll, void *arg)
{
	uint32_t   *tmp;
	uint32_t   *src = order;
	uint32_t   *dst;

	(void) scratch;
	(void) scratch_bytes;
	if (nwords < 1 || top_bits < 1 || top_bits > 64)
		return gpuext_fake_fail(GPUEXT_INVALID, "bad key width for a row sort");
	if (n >= ((size_t) 1 << 32))
		return gpuext_fake_fail(GPUEXT_INVALID, "too many rows for a row sort");
	if (poll && poll(arg))
		return gpuext_fake_fail(GPUEXT_INTERRUPTED, "row sort interrupted");
	tmp = malloc(n * sizeof(uint32_t) + 1);
	if (tmp == NULL)
		return gpuext_fake_fail(GPUEXT_OUT_OF_MEMORY, "out of host memory");
	dst = tmp;
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t) i;
	for (int w = nwords - 1; w >= 0; w--)
	{
		const uint64_t *word = keys + w;
		int			bytes = w == 0 ? (top_bits + 7) / 8 : 8;

		for (int b = 0; b < bytes; b++)
		{
			size_t		count[256] = {0};
			size_t		sum = 0;
			unsigned	mask = w == 0 && b == bytes - 1 && top_bits % 8 ? (1u << (top_bits % 8)) - 1 : 0xFF;
			uint32_t   *swap;

			for (size_t i = 0; i < n; i++)
			{
				if (i % FAKE_POLL_EVERY == 0 && poll && poll(arg))
				{
					free(tmp);
					return gpuext_fake_fail(GPUEXT_INTERRUPTED, "row sort interrupted");
				}
				count[(word[(size_t) src[i] * nwords] >> (8 * b)) & mask]++;
			}
			if (n == 0 || count[(word[(size_t) src[0] * nwords] >> (8 * b)) & mask] == n)
				continue;
			for (int d = 0; d < 256; d++)
			{
				size_t		c = count[d];

				count[d] = sum;
				sum += c;
			}
			for (size_t i = 0; i < n; i++)
			{
				if (i % FAKE_POLL_EVERY == 0 && poll && poll(arg))
				{
					free(tmp);
					return gpuext_fake_fail(GPUEXT_INTERRUPTED, "row sort interrupted");
				}
				dst[count[(word[(size_t) src[i] * nwords] >> (8 * b)) & mask]++] = src[i];
			}
			swap = src;
			src = dst;
			dst = swap;
		}
	}
	if (src != order)
		memcpy(order, src, n * sizeof(uint32_t));
	free(tmp);
	if (sorted_keys)
		for (size_t i = 0; i < n; i++)
		{
			if (i % FAKE_POLL_EVERY == 0 && poll && poll(arg))
				return gpuext_fake_fail(GPUEXT_INTERRUPTED, "row sort interrupted");
			memcpy(sorted_keys + i * nwords, keys + (size_t) order[i] * nwords, nwords * sizeof(uint64_t));
		}
	return GPUEXT_OK;
}

/* The fake reduction needs no scratch. */
GpuextStatus
gpuext_reduce_scratch_bytes(int value_bytes, int is_float, size_t n, size_t *bytes)
{
	(void) n;
	if (is_float ? (value_bytes != 4 && value_bytes != 8)
		: (value_bytes != 2 && value_bytes != 4 && value_bytes != 8 && value_bytes != 16))
		return gpuext_fake_fail(GPUEXT_INVALID, "unsupported value width for a reduction");
	*bytes = 0;
	return GPUEXT_OK;
}

/* 16-byte values (fixed-point numerics): the count and the 192-bit sum, as cuda/reduce_fixed.cu. */
static GpuextStatus
ReduceInt128(const void *values, size_t n, GpuextReduceResult *result)
{
	unsigned __int128 low = 0;
	int64_t		top = 0;

	if (n > 0 && ((uintptr_t) values % 16) != 0)
		return gpuext_fake_fail(GPUEXT_INVALID, "16-byte reduction values must be 16-byte aligned");
	memset(result, 0, sizeof(*result));
	result->count = n;
	for (size_t i = 0; i < n; i++)
	{
		__int128	v;
		unsigned __int128 nl;

		memcpy(&v, (const char *) values + i * 16, sizeof(v));
		nl = low + (unsigned __int128) v;
		top += (int64_t) (nl < low) - (int64_t) (v < 0);
		low = nl;
	}
	result->isum_lo = (uint64_t) low;
	result->isum_hi = (int64_t) (uint64_t) (low >> 64);
	result->isum_top = top;
	return GPUEXT_OK;
}

/* Reduce n values at once: count, min and max keys, exact integer or float sum. */
GpuextStatus
gpuext_reduce(int value_bytes, int is_float, const void *values, size_t n,
			  void *scratch, size_t scratch_bytes, GpuextReduceResult *result)
{
	const char *p = (const char *) values;
	__int128	isum = 0;
	uint64_t	pending = 0;
	size_t		need;
	GpuextStatus status = gpuext_reduce_scratch_bytes(value_bytes, is_float, n, &need);

	if (status != GPUEXT_OK)
		return status;
	(void) scratch;
	if (scratch_bytes < need)
		return gpuext_fake_fail(GPUEXT_INVALID, "reduction scratch too small");
	if (value_bytes == 16)
		return ReduceInt128(values, n, result);
	memset(result, 0, sizeof(*result));
	result->count = n;
	for (size_t i = 0; i < n; i++, p += value_bytes)
	{
		uint64_t	key;

		if (is_float && value_bytes == 8)
		{
			double		d;

			memcpy(&d, p, sizeof(d));
			key = gpuext_double_key(d);
			gpuext_reduce_result_add_double(result, d, &pending);
		}
		else if (is_float)
		{
			float		f;

			memcpy(&f, p, sizeof(f));
			key = gpuext_float_key(f);
			gpuext_reduce_result_add_double(result, (double) f, &pending);
		}
		else
		{
			int64_t		v;

			if (value_bytes == 2)
			{
				int16_t		s;

				memcpy(&s, p, sizeof(s));
				v = s;
			}
			else if (value_bytes == 4)
			{
				int32_t		s;

				memcpy(&s, p, sizeof(s));
				v = s;
			}
			else
				memcpy(&v, p, sizeof(v));
			key = gpuext_int_key(v, value_bytes);
			isum += v;
		}
		if (i == 0 || key < result->min_key)
			result->min_key = key;
		if (i == 0 || key > result->max_key)
			result->max_key = key;
	}
	if (is_float)
		gpuext_exact_normalize(result->digits);
	result->isum_lo = (uint64_t) isum;
	result->isum_hi = (int64_t) (isum >> 64);
	return GPUEXT_OK;
}

/* Clear group states in fake device memory. */
GpuextStatus
gpuext_groups_clear(int is_float, void *states, uint32_t first, uint32_t count)
{
	const char *why = gpuext_groups_bad_clear(states, first, count);

	if (why != NULL)
		return gpuext_fake_fail(GPUEXT_INVALID, why);
	gpuext_groups_clear_cpu(is_float, states, first, count);
	return GPUEXT_OK;
}

/* Add values to their groups' states, as reduce_groups_cpu.c does for the host. */
GpuextStatus
gpuext_groups_add(int value_bytes, int is_float, const void *values, const uint32_t *groups, size_t n,
				  void *states, uint32_t ngroups)
{
	const char *why = gpuext_groups_bad_add(value_bytes, is_float, values, groups, n, states);

	if (why != NULL)
		return gpuext_fake_fail(GPUEXT_INVALID, why);
	gpuext_groups_add_cpu(value_bytes, is_float, values, groups, n, states, ngroups);
	return GPUEXT_OK;
}

/* The groups' results. */
GpuextStatus
gpuext_groups_result(int value_bytes, int is_float, void *states, uint32_t ngroups, GpuextGroupResult *results)
{
	const char *why = gpuext_groups_bad_result(value_bytes, is_float, states, ngroups, results);

	if (why != NULL)
		return gpuext_fake_fail(GPUEXT_INVALID, why);
	gpuext_groups_result_cpu(value_bytes, is_float, states, ngroups, results);
	return GPUEXT_OK;
}

/*
 * The fake product: one "thread" an element, as the naive kernel, in the
 * kernels' order (+0, then fma over k in turn, NaN stored as the default
 * NaN); cuda/matmul_cpu.c blocks its loops differently, so the regression's
 * CPU == fake-device comparison checks that the blocking keeps every bit.
 */
#define FAKE_MATMUL_DEFINE(NAME, T, FMA, QNAN) \
static void \
NAME(const T *a, const T *b, T *c, size_t m, size_t k, size_t n) \
{ \
	for (size_t i = 0; i < m; i++) \
		for (size_t j = 0; j < n; j++) \
		{ \
			T			acc = 0; \
 \
			for (size_t kk = 0; kk < k; kk++) \
				acc = FMA(a[i * k + kk], b[kk * n + j], acc); \
			c[i * n + j] = isnan(acc) ? QNAN : acc; \
		} \
}

FAKE_MATMUL_DEFINE(FakeMatmulFloat, float, fmaf, (float) NAN)
FAKE_MATMUL_DEFINE(FakeMatmulDouble, double, fma, (double) NAN)

/* C = A B, done by the time it is "enqueued", whatever the algorithm. */
GpuextStatus
gpuext_matmul(GpuextMatmulAlgo algo, int elem_bytes, const void *a, const void *b, void *c, size_t m,
			  size_t k, size_t n)
{
	if (elem_bytes != 4 && elem_bytes != 8)
		return gpuext_fake_fail(GPUEXT_INVALID, "matrix elements must be 4 or 8 bytes wide");
	if (algo != GPUEXT_MATMUL_NAIVE && algo != GPUEXT_MATMUL_TILED && algo != GPUEXT_MATMUL_BLOCKED)
		return gpuext_fake_fail(GPUEXT_INVALID, "unknown matrix product algorithm");
	if (elem_bytes == 4)
		FakeMatmulFloat(a, b, c, m, k, n);
	else
		FakeMatmulDouble(a, b, c, m, k, n);
	return GPUEXT_OK;
}

/* Where row i of the sorted order lies in rows, or an empty span for offsets out of range or unaligned. */
static void
FakeRowSpan(const uint64_t *offsets, const uint32_t *order, size_t n, size_t rows_bytes, size_t i,
			uint64_t *start, uint64_t *len)
{
	uint32_t	r = order[i];

	*start = *len = 0;
	if (r >= n || offsets[r] > offsets[r + 1] || offsets[r + 1] > rows_bytes || ((offsets[r] | offsets[r + 1]) & 7))
		return;
	*start = offsets[r];
	*len = offsets[r + 1] - offsets[r];
}

/* The fake gather keeps where each row ends in sorted order. */
GpuextStatus
gpuext_gather_rows_scratch_bytes(size_t n, size_t *bytes)
{
	if (n >= ((size_t) 1 << 32))
		return gpuext_fake_fail(GPUEXT_INVALID, "too many rows for a gather");
	*bytes = n * sizeof(uint64_t);
	return GPUEXT_OK;
}

/* Rows in sorted order from first, as many as fit in out after the header. */
GpuextStatus
gpuext_gather_rows(const char *rows, size_t rows_bytes, const uint64_t *offsets, const uint32_t *order, size_t n,
				   size_t first, int prepare, char *out, size_t out_bytes, void *scratch, size_t scratch_bytes)
{
	uint64_t   *ends = (uint64_t *) scratch;
	GpuextGatherHeader header = {0, 0};
	size_t		budget;
	uint64_t	base;

	if (n >= ((size_t) 1 << 32) || first > n || scratch_bytes < n * sizeof(uint64_t) ||
		out_bytes < sizeof(GpuextGatherHeader) || ((uintptr_t) out & 7))
		return gpuext_fake_fail(GPUEXT_INVALID, "bad arguments for a gather of rows");
	if (prepare)
	{
		uint64_t	sum = 0;

		for (size_t i = 0; i < n; i++)
		{
			uint64_t	start,
						len;

			FakeRowSpan(offsets, order, n, rows_bytes, i, &start, &len);
			ends[i] = sum += len;
		}
	}
	budget = out_bytes - sizeof(GpuextGatherHeader);
	base = first > 0 ? ends[first - 1] : 0;
	for (size_t i = first; i < n; i++)
	{
		uint64_t	start,
					len,
					at = (i > 0 ? ends[i - 1] : 0) - base;

		FakeRowSpan(offsets, order, n, rows_bytes, i, &start, &len);
		if (ends[i] - base > budget || at + len > budget)
			break;
		memcpy(out + sizeof(GpuextGatherHeader) + at, rows + start, len);
		header.rows++;
		header.bytes = at + len;
	}
	memcpy(out, &header, sizeof(header));
	return GPUEXT_OK;
}

/* The batch's pages put together in host memory. */
GpuextStatus
gpuext_scan_gather_pages(char *pages, const char *copies, const uint32_t *refs, const char *pool,
						 uint32_t pool_blocks, uint32_t npages)
{
	if (npages > 0 && (pages == NULL || copies == NULL || refs == NULL))
		return gpuext_fake_fail(GPUEXT_INVALID, "invalid page gathering buffers");
	gpuext_scan_gather_pages_host(pages, copies, refs, pool, pool_blocks, npages);
	return GPUEXT_OK;
}

/* The device scan on host memory: the decoder and program of scan_heap.h, page after page. */
GpuextStatus
gpuext_scan_heap(const GpuextScanProgram *program, const char *pages, const uint16_t *vis, uint32_t npages,
				 uint64_t *counts, char *outs, size_t outs_bytes)
{
	if (program == NULL || counts == NULL || (npages > 0 && (pages == NULL || vis == NULL)) ||
		!gpuext_scan_program_valid(program, outs_bytes) || (program->nouts > 0 && outs == NULL))
		return gpuext_fake_fail(GPUEXT_INVALID, "invalid device scan program or buffers");
	memset(counts, 0, sizeof(uint64_t) * GPUEXT_SCAN_COUNTERS);
	gpuext_scan_groups_clear_host(program, outs);
	gpuext_scan_heap_host(program, pages, vis, npages, counts, outs);
	return GPUEXT_OK;
}
