/*
 * sort_keys.cuh
 *		Shared pieces of the key sorts: key traits, the shared-memory bitonic
 *		network, and the per-algorithm entry points that sort_dispatch.cu calls.
 *
 * Keys are order-preserving unsigned integers (uint32_t or uint64_t); every
 * algorithm is a template on the key type, instantiated once per width.
 */
#ifndef GPUEXT_SORT_KEYS_CUH
#define GPUEXT_SORT_KEYS_CUH

#include <cstddef>
#include <cstdint>

#include "device_internal.cuh"

namespace gpuext
{

/* Keys per shared-memory bitonic tile, and the threads that sort one. */
constexpr unsigned BITONIC_TILE = 4096;
constexpr unsigned BITONIC_THREADS = 512;

/* The largest key: what virtual slots past n hold. */
template <typename K>
__host__ __device__ constexpr K key_max()
{
	return static_cast<K>(~static_cast<K>(0));
}

/* Round x up to a multiple of a (a power of two). */
constexpr size_t align_up(size_t x, size_t a)
{
	return (x + a - 1) & ~(a - 1);
}

/* Smallest power of two >= x (x >= 1). */
__host__ __device__ inline size_t next_pow2(size_t x)
{
	size_t		p = 1;

	while (p < x)
		p <<= 1;
	return p;
}

/* Put the smaller of two shared slots first. */
template <typename K>
__device__ __forceinline__ void compare_exchange(K *a, K *b)
{
	K			x = *a;
	K			y = *b;

	if (y < x)
	{
		*a = y;
		*b = x;
	}
}

/*
 * One all-ascending bitonic step over s[0..p): comparator c pairs the slot i
 * whose bit j is clear with i ^ mask (mask = 2k-1 for a stage's first,
 * mirrored step, j otherwise).  Ends with a barrier; all threads must call.
 */
template <typename K, unsigned THREADS>
__device__ void block_bitonic_step(K *s, unsigned p, unsigned j, unsigned mask)
{
	for (unsigned c = threadIdx.x; c < p / 2; c += THREADS)
	{
		unsigned	i = ((c & ~(j - 1)) << 1) | (c & (j - 1));

		compare_exchange(&s[i], &s[i ^ mask]);
	}
	__syncthreads();
}

/* Sort s[0..p) ascending in shared memory, p a power of two; all threads must call. */
template <typename K, unsigned THREADS>
__device__ void block_bitonic_sort(K *s, unsigned p)
{
	for (unsigned k = 2; k <= p; k <<= 1)
	{
		block_bitonic_step<K, THREADS>(s, p, k / 2, k - 1);
		for (unsigned j = k / 4; j > 0; j >>= 1)
			block_bitonic_step<K, THREADS>(s, p, j, j);
	}
}

/* Per-algorithm entry points: arguments are already validated, n >= 0. */
template <typename K>
GpuextStatus bitonic_sort(K *keys, size_t n);

/*
 * The bitonic network with shape number shape: for keys 0 the large tiles,
 * 1 .. 4 smaller ones, 5 (32-bit keys only) 1024 threads, 6 .. 9 one cluster
 * launch with the tiles of 1 .. 4; for pairs of 64-bit keys 0 .. 3 (see
 * network_shape in sort_bitonic.cu).  A shape that does not apply to n or to
 * the device gives GPUEXT_INVALID.  With the shape bitonic_sort and
 * bitonic_sort_pairs pick for n, for measuring the pick table
 * (bench/sort_bench --shapes).
 */
constexpr int BITONIC_SHAPES = 10;
template <typename K>
GpuextStatus bitonic_sort_shape(K *keys, size_t n, int shape);
template <typename K>
int			bitonic_pick_shape(size_t n);
GpuextStatus bitonic_sort_pairs_shape(int key_bytes, void *keys, uint32_t *idx, size_t n, int shape);
int			bitonic_pick_pairs_shape(int key_bytes, size_t n);

/* (key, uint32 index) pairs of key_bytes keys sorted in place by key, then index (no scratch). */
GpuextStatus bitonic_sort_pairs(int key_bytes, void *keys, uint32_t *idx, size_t n);

template <typename K>
GpuextStatus oddeven_sort(K *keys, size_t n);

template <typename K>
size_t quicksort_scratch_bytes(size_t n);

template <typename K>
size_t quicksort_host_bytes(size_t n);

template <typename K>
GpuextStatus quicksort(K *keys, size_t n, void *scratch, void *host_scratch, GpuextPollFn poll,
					   void *arg);

template <typename K>
GpuextStatus radix_scratch_bytes(size_t n, size_t *bytes);

template <typename K>
GpuextStatus radix_sort(K *keys, size_t n, void *scratch, size_t scratch_bytes);

}								/* namespace gpuext */

#endif							/* GPUEXT_SORT_KEYS_CUH */
