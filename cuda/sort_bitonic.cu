/*
 * sort_bitonic.cu
 *		Bitonic sorting network, all-ascending formulation, in place.
 *
 * Stage k (2, 4, ... up to the power of two >= n) first compares i with its
 * mirror i ^ (k-1) inside each group of k, then i with i ^ j for j = k/4 .. 1;
 * the smaller key always goes to the lower index.  Slots past n behave as
 * +infinity, so a comparator whose upper partner is >= n never changes
 * anything and is skipped: nothing past n is read or written and no work is
 * spent on padding.  Stages up to BITONIC_TILE run in one shared-memory
 * kernel; larger stages run one global pass per stride >= BITONIC_TILE and
 * then a shared-memory kernel for the strides below the tile.
 */
#include <algorithm>

#include "sort_keys.cuh"

namespace gpuext
{

namespace
{

constexpr unsigned TILE = BITONIC_TILE;
constexpr unsigned THREADS = BITONIC_THREADS;
constexpr unsigned STEP_THREADS = 256;
constexpr size_t STEP_MAX_BLOCKS = 1u << 20;

/* Load tile blockIdx.x into shared memory, padding past n with the largest key; returns its length. */
template <typename K>
__device__ unsigned load_tile(const K *keys, size_t n, K *s, unsigned *p)
{
	size_t		base = (size_t) blockIdx.x * TILE;
	unsigned	len = (unsigned) min((size_t) TILE, n - base);

	*p = (unsigned) next_pow2(len);
	for (unsigned i = threadIdx.x; i < *p; i += THREADS)
		s[i] = i < len ? keys[base + i] : key_max<K>();
	__syncthreads();
	return len;
}

/* Write the first len slots of the shared tile back to tile blockIdx.x. */
template <typename K>
__device__ void store_tile(K *keys, const K *s, unsigned len)
{
	size_t		base = (size_t) blockIdx.x * TILE;

	for (unsigned i = threadIdx.x; i < len; i += THREADS)
		keys[base + i] = s[i];
}

/* Stages 2 .. TILE: sort every tile in shared memory. */
template <typename K>
__global__ void __launch_bounds__(THREADS) bitonic_tile_sort_kernel(K *keys, size_t n)
{
	__shared__ K s[TILE];
	unsigned	p;
	unsigned	len = load_tile(keys, n, s, &p);

	block_bitonic_sort<K, THREADS>(s, p);
	store_tile(keys, s, len);
}

/* Strides TILE/2 .. 1 of a stage larger than a tile, in shared memory per tile. */
template <typename K>
__global__ void __launch_bounds__(THREADS) bitonic_tile_merge_kernel(K *keys, size_t n)
{
	__shared__ K s[TILE];
	unsigned	p;
	unsigned	len = load_tile(keys, n, s, &p);

	for (unsigned j = p / 2; j > 0; j >>= 1)
		block_bitonic_step<K, THREADS>(s, p, j, j);
	store_tile(keys, s, len);
}

/* One global step: comparator t pairs the t-th index i with bit j clear (i < n) with i ^ mask. */
template <typename K>
__global__ void __launch_bounds__(STEP_THREADS) bitonic_global_step_kernel(K *keys, size_t n, size_t j,
																		 size_t mask, size_t count)
{
	size_t		stride = (size_t) gridDim.x * STEP_THREADS;

	for (size_t t = (size_t) blockIdx.x * STEP_THREADS + threadIdx.x; t < count; t += stride)
	{
		size_t		i = ((t & ~(j - 1)) << 1) | (t & (j - 1));
		size_t		q = i ^ mask;

		if (q < n)
		{
			K			a = keys[i];
			K			b = keys[q];

			if (b < a)
			{
				keys[i] = b;
				keys[q] = a;
			}
		}
	}
}

}								/* namespace */

/* Enqueue the whole network for n keys on the stream. */
template <typename K>
GpuextStatus bitonic_sort(K *keys, size_t n)
{
	cudaStream_t stream = device_stream();
	size_t		tiles = (n + TILE - 1) / TILE;
	size_t		top = next_pow2(n);
	GpuextStatus st;

	if (n < 2)
		return GPUEXT_OK;

	bitonic_tile_sort_kernel<K><<<(unsigned) tiles, THREADS, 0, stream>>>(keys, n);
	if ((st = check_launch("bitonic_tile_sort_kernel")) != GPUEXT_OK)
		return st;

	for (size_t k = 2 * (size_t) TILE; k <= top; k <<= 1)
	{
		for (size_t j = k / 2; j >= TILE; j >>= 1)
		{
			/* Lower indices i < n with bit j clear. */
			size_t		count = (n / (2 * j)) * j + std::min(n % (2 * j), j);
			size_t		blocks = std::min((count + STEP_THREADS - 1) / STEP_THREADS, STEP_MAX_BLOCKS);

			bitonic_global_step_kernel<K><<<(unsigned) blocks, STEP_THREADS, 0, stream>>>(
				keys, n, j, j == k / 2 ? k - 1 : j, count);
			if ((st = check_launch("bitonic_global_step_kernel")) != GPUEXT_OK)
				return st;
		}
		bitonic_tile_merge_kernel<K><<<(unsigned) tiles, THREADS, 0, stream>>>(keys, n);
		if ((st = check_launch("bitonic_tile_merge_kernel")) != GPUEXT_OK)
			return st;
	}
	return GPUEXT_OK;
}

template GpuextStatus bitonic_sort<uint32_t>(uint32_t *keys, size_t n);
template GpuextStatus bitonic_sort<uint64_t>(uint64_t *keys, size_t n);

}								/* namespace gpuext */
