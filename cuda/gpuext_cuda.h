/*
 * gpuext_cuda.h
 *		The one boundary between PostgreSQL-facing C (src/) and device code (cuda/).
 *
 * Plain C: no postgres.h, no CUDA types.  Every call returns a GpuextStatus;
 * on failure gpuext_cuda_error_message() describes the last error.  All work
 * is enqueued on one stream per process; gpuext_cuda_wait() and the sort
 * entry points poll a caller-supplied callback while they wait, so the
 * caller can abandon a wait on cancel without any longjmp through C++.
 */
#ifndef GPUEXT_CUDA_H
#define GPUEXT_CUDA_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "exact_sum.h"

#ifdef __cplusplus
extern "C"
{
#endif

typedef enum GpuextStatus
{
	GPUEXT_OK = 0,
	GPUEXT_NOT_BUILT,			/* this build has no device code */
	GPUEXT_NO_DEVICE,			/* no driver or no device */
	GPUEXT_OUT_OF_MEMORY,		/* device or pinned allocation failed */
	GPUEXT_CUDA_ERROR,			/* any other CUDA failure */
	GPUEXT_INTERRUPTED,			/* the poll callback asked to stop waiting */
	GPUEXT_INVALID,				/* bad argument (size limit, key width ...) */
	GPUEXT_DEVICE_LOST			/* the device session is gone (sticky error, reset): reopen */
} GpuextStatus;

/* Device sort algorithms; "cpu" and "auto" are resolved by the caller. */
typedef enum GpuextSortAlgo
{
	GPUEXT_SORT_BITONIC = 0,
	GPUEXT_SORT_QUICKSORT,
	GPUEXT_SORT_ODDEVEN,
	GPUEXT_SORT_RADIX
} GpuextSortAlgo;

/* Largest input the odd-even transposition sort accepts (it is quadratic). */
#define GPUEXT_ODDEVEN_MAX_ELEMENTS 65536

typedef struct GpuextDeviceInfo
{
	char		name[256];
	int			cc_major;
	int			cc_minor;
	int			multiprocessors;
	size_t		memory_total;
	size_t		memory_free;
	int			driver_version;		/* as cudaDriverGetVersion, e.g. 13000 */
	int			runtime_version;	/* as cudaRuntimeGetVersion */
} GpuextDeviceInfo;

/* Return nonzero to abandon the current wait (the call then returns GPUEXT_INTERRUPTED). */
typedef int (*GpuextPollFn) (void *arg);

/* 1 when this build holds device code, 0 for the CPU-only build. */
extern int	gpuext_cuda_built(void);

/* 1 where kernels read the process's host memory where it is, unregistered (the fake device). */
extern int	gpuext_cuda_reads_host_in_place(void);

/* Message for the last failed call in this process (never NULL). */
extern const char *gpuext_cuda_error_message(void);

/* Open device 0, create the stream and events, fill *info.  Call once (again after a reset). */
extern GpuextStatus gpuext_cuda_open(GpuextDeviceInfo *info);

/*
 * Several devices and threads (the GPU service): the process makes one
 * context per device; each thread has its own stream and events on each
 * device it uses, and its own last error.  gpuext_cuda_use_device makes dev
 * the calling thread's device for every call after it.
 */
#define GPUEXT_MAX_DEVICES 16
extern GpuextStatus gpuext_cuda_device_count(int *count);
extern GpuextStatus gpuext_cuda_use_device(int dev);
extern GpuextStatus gpuext_cuda_device_info(int dev, GpuextDeviceInfo *info);

/* Keep up to bytes of freed memory in the current device's pool (allocations become stream-ordered). */
extern GpuextStatus gpuext_cuda_pool_keep(size_t bytes);

/* Pin host memory mapped by other processes too (the service's shared arena) for every device. */
extern GpuextStatus gpuext_cuda_host_register(void *ptr, size_t bytes);

/*
 * Register host memory that the process may only read (PostgreSQL's shared
 * buffers, as the GPU service maps them) for every device's kernels to read
 * in place: *device_view is its address there.  The fake device reads it
 * where it is.
 */
extern GpuextStatus gpuext_cuda_host_register_read_only(const void *ptr, size_t bytes, const char **device_view);

/*
 * Drop the process's device session after GPUEXT_DEVICE_LOST: every device
 * and pinned allocation, the stream and the events are gone with it, and no
 * pointer from before may be freed; gpuext_cuda_open starts a new session.
 */
extern GpuextStatus gpuext_cuda_reset(void);

extern GpuextStatus gpuext_cuda_mem_info(size_t *free_bytes, size_t *total_bytes);

extern GpuextStatus gpuext_cuda_alloc(void **dptr, size_t bytes);
extern void gpuext_cuda_free(void *dptr);
extern GpuextStatus gpuext_cuda_alloc_pinned(void **hptr, size_t bytes);
extern void gpuext_cuda_free_pinned(void *hptr);

/* Asynchronous copies on the stream; src/dst on the host must be pinned. */
extern GpuextStatus gpuext_cuda_copy_to_device(void *dst, const void *src, size_t bytes);
extern GpuextStatus gpuext_cuda_copy_to_host(void *dst, const void *src, size_t bytes);

/* Device to device, asynchronous (both pointers device memory). */
extern GpuextStatus gpuext_cuda_copy_on_device(void *dst, const void *src, size_t bytes);

#define GPUEXT_CUDA_EVENTS 4

/* Record event slot (0 .. GPUEXT_CUDA_EVENTS-1) at the current end of the stream. */
extern GpuextStatus gpuext_cuda_mark(int slot);

/* Wait for event slot, or for the whole stream when slot < 0, polling poll. */
extern GpuextStatus gpuext_cuda_wait(int slot, GpuextPollFn poll, void *arg);

/*
 * Scratch that gpuext_sort_keys needs beside the keys: device bytes, and
 * pinned host bytes for algorithms that read results back between steps.
 */
extern GpuextStatus gpuext_sort_scratch_bytes(GpuextSortAlgo algo, int key_bytes,
											  size_t n, size_t *bytes, size_t *host_bytes);

/*
 * Sort n unsigned keys of key_bytes (4 or 8) in place, ascending, in device
 * memory.  scratch is device memory and host_scratch pinned host memory of
 * at least the sizes gpuext_sort_scratch_bytes gives; the caller owns both.
 * Work is enqueued on the stream; the call may wait (polling poll) where an
 * algorithm needs a result on the host, and returns when all work is
 * enqueued.  The caller waits with gpuext_cuda_wait(-1, ...) before reading.
 */
extern GpuextStatus gpuext_sort_keys(GpuextSortAlgo algo, int key_bytes,
									 void *keys, size_t n,
									 void *scratch, size_t scratch_bytes,
									 void *host_scratch, size_t host_scratch_bytes,
									 GpuextPollFn poll, void *arg);

/*
 * Sort n (key, index) pairs in place in device memory: keys[i] (key_bytes 4
 * or 8, unsigned) goes with idx[i]; after the sort the keys ascend and equal
 * keys are in ascending index order.  Only GPUEXT_SORT_BITONIC sorts pairs.
 * keys and idx must be 16-byte aligned (as cudaMalloc gives).  scratch is
 * device memory of at least gpuext_sort_pairs_scratch_bytes (0 bytes: the
 * sort works in the two arrays).  The sort is enqueued on the stream; wait
 * with gpuext_cuda_wait(-1, ...).
 */
extern GpuextStatus gpuext_sort_pairs_scratch_bytes(GpuextSortAlgo algo, int key_bytes, size_t n,
													size_t *bytes);
extern GpuextStatus gpuext_sort_pairs(GpuextSortAlgo algo, int key_bytes, void *keys, uint32_t *idx,
									  size_t n, void *scratch, size_t scratch_bytes);

/*
 * Sort rows by keys of nwords 64-bit words (most significant word first),
 * stored row-major in device memory: word w of row i is keys[i * nwords + w].
 * Only the low top_bits bits of word 0 are used (1..64); later words use all
 * 64.  On return order[0..n) holds row numbers in ascending key order (ties in
 * any order), and sorted_keys, unless NULL, the keys in that order (row-major,
 * nwords * n words, apart from keys).  keys are left as they were.  n < 2^32.
 * scratch is device memory of at least gpuext_sort_rows_scratch_bytes (the
 * caller's).  The call enqueues the sort on the stream and waits for it,
 * polling poll; after GPUEXT_INTERRUPTED the sort is still on the stream, so
 * drain it before freeing keys, order or scratch.
 */
extern GpuextStatus gpuext_sort_rows_scratch_bytes(int nwords, size_t n, size_t *bytes);
extern GpuextStatus gpuext_sort_rows(int nwords, int top_bits, const uint64_t *keys, uint32_t *order,
									 uint64_t *sorted_keys, size_t n, void *scratch, size_t scratch_bytes,
									 GpuextPollFn poll, void *arg);

/*
 * Rows kept in device memory (cuda/gather_rows.cu): rows holds n rows, row r
 * the bytes [offsets[r], offsets[r + 1]) (n + 1 offsets, 8-byte aligned, at
 * most rows_bytes); order[0..n) the row numbers in sorted order.
 * gpuext_gather_rows writes into out a GpuextGatherHeader and after it the
 * rows order[first], order[first + 1], ... back to back, as many as fit in
 * out_bytes.  With prepare (once per order, before any other gather) it first
 * computes in scratch where each row ends in sorted order.  A row whose
 * offsets are out of range or unaligned counts as empty.  Enqueued on the
 * stream; returns without waiting.  n < 2^32, first <= n.
 */
typedef struct GpuextGatherHeader
{
	uint64_t	rows;			/* rows written after the header */
	uint64_t	bytes;			/* their bytes */
} GpuextGatherHeader;

extern GpuextStatus gpuext_gather_rows_scratch_bytes(size_t n, size_t *bytes);
extern GpuextStatus gpuext_gather_rows(const char *rows, size_t rows_bytes, const uint64_t *offsets,
									   const uint32_t *order, size_t n, size_t first, int prepare, char *out,
									   size_t out_bytes, void *scratch, size_t scratch_bytes);

/*
 * Reductions (cuda/reduce.cu) over n dense values in device memory (NULLs
 * already left out): value_bytes 2, 4 or 8 signed integers (date, timestamp
 * and timestamptz are these), or is_float with value_bytes 4 or 8.  With
 * value_bytes 16 (not float) the values are signed 128-bit integers (the
 * fixed-point numerics, cuda/reduce_fixed.cu), 16-byte aligned: only count
 * and the exact sum, in 192 bits (isum_lo, isum_hi, isum_top), are set, the
 * keys and flags are 0.
 */
typedef struct GpuextReduceResult
{
	uint64_t	count;			/* values reduced */
	uint64_t	min_key;		/* ascending keys as gpu_sort's (-0 just below +0, NaN on top) */
	uint64_t	max_key;		/* both valid when count > 0 */
	uint64_t	isum_lo;		/* integers: the exact sum, two's complement in 128 bits */
	int64_t		isum_hi;
	int64_t		isum_top;		/* 16-byte values: bits 128..191 of the sum (isum_hi then unsigned); else 0 */
	int32_t		has_nan;		/* floats: NaN and infinities, left out of digits */
	int32_t		has_pos_inf;
	int32_t		has_neg_inf;
	int64_t		digits[GPUEXT_EXACT_DIGITS];	/* floats: the exact sum of the finite values
												 * (exact_sum.h), normalised */
} GpuextReduceResult;

/* Add a double to a result's digits or flags as the device does (host references of the reduction). */
static inline void
gpuext_reduce_result_add_double(GpuextReduceResult *r, double d, uint64_t *pending)
{
	switch (gpuext_exact_add_double(r->digits, d))
	{
		case GPUEXT_EXACT_ADDED:
			if (++*pending >= (uint64_t) GPUEXT_EXACT_PENDING_MAX)
			{
				gpuext_exact_normalize(r->digits);
				*pending = 0;
			}
			break;
		case GPUEXT_EXACT_NAN:
			r->has_nan = 1;
			break;
		case GPUEXT_EXACT_POS_INF:
			r->has_pos_inf = 1;
			break;
		case GPUEXT_EXACT_NEG_INF:
			r->has_neg_inf = 1;
			break;
	}
}

/* Device scratch gpuext_reduce needs for n values. */
extern GpuextStatus gpuext_reduce_scratch_bytes(int value_bytes, int is_float, size_t n, size_t *bytes);

/*
 * Enqueue count, exact sum, min and max of n values on the stream; *result
 * (pinned host memory, the caller's) is written when the stream reaches that
 * point: wait with gpuext_cuda_wait before reading it.  Returns without waiting.
 */
extern GpuextStatus gpuext_reduce(int value_bytes, int is_float, const void *values, size_t n,
								  void *scratch, size_t scratch_bytes, GpuextReduceResult *result);

/*
 * Grouped reduction (cuda/reduce_groups.cu): count, exact sum, min and max
 * of values per group, each group's state kept in device memory for a whole
 * run.  Values are as gpuext_reduce's (value_bytes 2, 4 or 8 integers, or
 * is_float with 4 or 8; no 16-byte values), each with its group number.  A
 * group's state is GPUEXT_GROUP_STATE_BYTES(is_float) bytes, the states of
 * groups 0 .. n-1 one after another; the caller clears new ones, adds
 * batches (any order, any number of calls: the sums are exact), and reads
 * the results.  All pointers are device memory; every call only enqueues
 * work on the stream.
 */
typedef struct GpuextGroupState
{
	uint64_t	count;
	uint64_t	min_key;		/* ascending keys as gpuext_reduce's; UINT64_MAX when clear */
	uint64_t	max_key;		/* 0 when clear */
	uint64_t	sum_lo;			/* integers: sum of the low 32 bits (unsigned) of each value */
	uint64_t	sum_hi;			/* ... sum of the rest (value >> 32, signed), two's complement */
	uint32_t	flags;			/* GPUEXT_GROUP_NAN | _POS_INF | _NEG_INF */
	uint32_t	pad;
	/* floats only: then GPUEXT_EXACT_DIGITS int64_t digits (exact_sum.h), not normalised */
} GpuextGroupState;

#define GPUEXT_GROUP_NAN 1
#define GPUEXT_GROUP_POS_INF 2
#define GPUEXT_GROUP_NEG_INF 4
#define GPUEXT_GROUP_STATE_BYTES(is_float) \
	(sizeof(GpuextGroupState) + ((is_float) ? GPUEXT_EXACT_DIGITS * sizeof(int64_t) : 0))

/*
 * Values the states take in all between two gpuext_groups_result calls,
 * which normalise the digits in place and carry sum_lo's bits from 32 up
 * into sum_hi (each addition adds under 2^32 to a digit and to sum_lo).
 */
#define GPUEXT_GROUP_ADD_MAX ((size_t) 1 << 30)

/* One group's result, as gpuext_groups_result writes it. */
typedef struct GpuextGroupResult
{
	uint64_t	count;
	uint64_t	min_key;		/* valid when count > 0 */
	uint64_t	max_key;
	uint64_t	isum_lo;		/* integers: the exact sum, two's complement in 128 bits */
	int64_t		isum_hi;
	uint32_t	flags;			/* floats: NaN and infinities seen (left out of the sums) */
	uint32_t	pad;
	double		sum;			/* floats: the finite values' exact sum rounded to double
								 * (gpuext_exact_round(.., 53, -1074)) */
	double		sum_real;		/* ... rounded to real's precision and range (24, -149) */
} GpuextGroupResult;

/* Set the states of groups first .. first + count - 1 to clear. */
extern GpuextStatus gpuext_groups_clear(int is_float, void *states, uint32_t first, uint32_t count);

/*
 * Add values[i] to the state of group groups[i], for i < n; states holds
 * ngroups states, and a value whose group number is not below ngroups is
 * left out (so that no call writes outside the states it names).
 */
extern GpuextStatus gpuext_groups_add(int value_bytes, int is_float, const void *values,
									  const uint32_t *groups, size_t n, void *states, uint32_t ngroups);

/* The results of groups 0 .. ngroups - 1 into results (ngroups entries); normalises the states as above. */
extern GpuextStatus gpuext_groups_result(int value_bytes, int is_float, void *states,
										 uint32_t ngroups, GpuextGroupResult *results);

/* The same three on host memory (cuda/reduce_groups_cpu.c): the fake device, the CPU path, the harness. */
extern void gpuext_groups_clear_cpu(int is_float, void *states, uint32_t first, uint32_t count);
extern void gpuext_groups_add_cpu(int value_bytes, int is_float, const void *values,
								  const uint32_t *groups, size_t n, void *states, uint32_t ngroups);
extern void gpuext_groups_result_cpu(int value_bytes, int is_float, void *states,
									 uint32_t ngroups, GpuextGroupResult *results);

/*
 * A state made ready to travel (its digits and sum_lo carried as the results
 * carry them), and such a state folded into group g's: parallel workers'
 * states merge as one addition each (host memory).
 */
extern void gpuext_groups_settle_cpu(int is_float, GpuextGroupState *state);
extern void gpuext_groups_merge_cpu(int is_float, void *states, uint32_t g, const GpuextGroupState *src);

/*
 * Matrix product C = A B (cuda/matmul.cu): A is m x k, B is k x n, C is
 * m x n, all row-major; elem_bytes 4 (float) or 8 (double).  Every algorithm
 * accumulates each element in the same order, as the CPU's
 * gpuext_matmul_cpu does: acc = +0, then acc = fma(A[i][kk], B[kk][j], acc)
 * for kk = 0 .. k-1, and a NaN result is stored as the default quiet NaN; so
 * the bits of C never depend on where or by which algorithm it was computed.
 */
typedef enum GpuextMatmulAlgo
{
	GPUEXT_MATMUL_NAIVE = 0,	/* one thread an element, operands read from global memory */
	GPUEXT_MATMUL_TILED,		/* 16 x 16 tiles through shared memory, one element a thread */
	GPUEXT_MATMUL_BLOCKED		/* 128 x 128 block tiles, 8 x 8 elements a thread in registers */
} GpuextMatmulAlgo;

/*
 * Enqueue C = A B on the stream (a, b, c device memory, 16-byte aligned as
 * cudaMalloc gives); returns without waiting.  m, k and n up to 2^31 - 1; an
 * empty C is no work, and k = 0 gives zeros.
 */
extern GpuextStatus gpuext_matmul(GpuextMatmulAlgo algo, int elem_bytes, const void *a, const void *b,
								  void *c, size_t m, size_t k, size_t n);

/*
 * Rows [row_begin, row_end) of C = A B on the CPU (cuda/matmul_cpu.c, plain
 * C, in every build), in the order above; poll, unless NULL, is called
 * between blocks of about 2^20 multiply-adds, and a nonzero answer abandons
 * the product (GPUEXT_INTERRUPTED).
 */
extern GpuextStatus gpuext_matmul_cpu(int elem_bytes, const void *a, const void *b, void *c,
									  size_t row_begin, size_t row_end, size_t k, size_t n,
									  GpuextPollFn poll, void *arg);

#ifdef __cplusplus
}
#endif

#endif							/* GPUEXT_CUDA_H */
