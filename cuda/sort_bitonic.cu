/*
 * sort_bitonic.cu
 *		Bitonic sorting network, all-ascending formulation, in place.
 *
 * Stage k (2, 4, ... up to the power of two >= n) first compares i with its
 * mirror i ^ (k-1) inside each group of k, then i with i ^ j for j = k/4 .. 1;
 * the smaller key always goes to the lower index.  Slots past n behave as
 * +infinity (virtual padding): a comparator whose upper partner is >= n never
 * changes anything, so nothing past n is read or written.
 *
 * Five kernels, each holding its keys in registers:
 *	- tile sort: one block sorts a tile of S keys in shared memory.  Each
 *	  thread holds E consecutive keys (the "row" layout): strides below E
 *	  are exchanges between registers, strides E .. 16E warp shuffles (only
 *	  while a stage is no larger than the warp's 32E keys), and a larger
 *	  stage's mirror step and strides of 32E and above go through shared
 *	  memory, where each thread holds the keys tid + T*m (the "column"
 *	  layout) so they are again register exchanges.  The strides below 32E
 *	  of such a stage stay inside each warp's segment of 32E keys: the lane
 *	  layout (lane holds keys lane + 32m) makes the strides of 32 .. 16E
 *	  register exchanges, and one trip through the warp's shared memory back
 *	  to rows the strides below E; only when E < 32 are a stride or two left
 *	  for shuffles.  Rows go to global memory through the lane layout, so
 *	  that every store is coalesced.
 *	- global pass: for a stage larger than a tile, up to 5 strides of S
 *	  and above in one pass; each thread loads 2^B keys
 *	  that those strides connect (for the stage's first, mirrored step also
 *	  the mirror column), runs the strides in registers and writes back only
 *	  the keys that moved.
 *	- global pass through shared memory: up to 8 such strides (7 with the
 *	  mirror step) for 32 consecutive columns of every row a block takes, so
 *	  that a large stage needs fewer passes over memory (96-bit keys take 12
 *	  bytes there, in two arrays).
 *	- tile merge: the strides S/2 .. 1 of a stage larger than a tile: column
 *	  layout straight from global memory for the strides >= 32E, then each
 *	  warp finishes its segment as above.
 *	- cluster sort (Hopper and later): the whole network for two to eight
 *	  tiles in one launch, a thread block cluster whose blocks each sort a
 *	  tile and then exchange keys through distributed shared memory for the
 *	  strides of S and above; small inputs pay for one launch, not one per
 *	  pass.
 * The tile shape (E and T) is a template: large inputs use 32 keys a thread
 * (16 for 64-bit keys) and 512 threads; inputs up to about a million keys use
 * smaller tiles, whose many short blocks finish sooner (pick_shape).
 * Shared memory is swizzled by 16-byte chunks so that both layouts are free
 * of bank conflicts.  The kernels read and write through a view: keys of
 * one array, or (key, index) pairs in their two arrays, sorted in place as
 * keys of twice the width (a 64-bit key and its index as a 96-bit key).
 *
 * The kernels and what they share are in headers included here:
 * sort_bitonic_layout.cuh (keys, views, tile shapes, the register layouts
 * and their exchanges), sort_bitonic_tile.cuh (tile sort, tile merge,
 * cluster sort) and sort_bitonic_global.cuh (the global passes).  This file
 * launches them.  They are instantiated together per key width, and nvcc
 * inlines device code only within one translation unit (no relocatable
 * device code in this build).
 */
#include <algorithm>

#include "sort_keys.cuh"
#include "sort_bitonic_layout.cuh"
#include "sort_bitonic_tile.cuh"
#include "sort_bitonic_global.cuh"

namespace gpuext
{

namespace
{

/* Allow a kernel more than the default 48 KB of dynamic shared memory (reset with the device). */
GpuextStatus allow_smem(const void *kernel, size_t bytes, const char *what)
{
	if (bytes <= 48 * 1024)
		return GPUEXT_OK;
	return check_cuda(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int) bytes), what);
}

/* Launch a shared-memory global pass over positions p_lo .. hi; top is the padded length. */
template <class G, bool MIRROR, typename K = typename G::Key>
GpuextStatus global_smem_pass(const G &g, size_t n, size_t top, unsigned p_lo, unsigned hi, cudaStream_t stream)
{
	constexpr unsigned MB = GS_BITS - (MIRROR ? 1 : 0);
	size_t		groups = std::max((size_t) 1, top >> (p_lo + MB));
	size_t		blocks = ((size_t) 1 << (p_lo - 5 - (MIRROR ? 1 : 0))) * groups;
	GpuextStatus st;

	if ((st = allow_smem((const void *) bitonic_global_smem_kernel<G, MIRROR>, GS_KEYS * SmemKeys<K>::BYTES,
						 "bitonic global pass shared memory")) != GPUEXT_OK)
		return st;
	bitonic_global_smem_kernel<G, MIRROR><<<(unsigned) blocks, GS_THREADS, GS_KEYS * SmemKeys<K>::BYTES, stream>>>(
		g, n, p_lo, hi);
	return check_launch("bitonic_global_smem_kernel");
}

/* Threads whose base (t with z zero bits inserted at position q) is below n. */
size_t pass_threads(size_t n, unsigned q, unsigned z)
{
	size_t		span = (size_t) 1 << (q + z);

	return ((n >> (q + z)) << q) + std::min(n & (span - 1), (size_t) 1 << q);
}

/* Launch one global pass of b register bits (1 .. GLOBAL_BITS; 2 .. with mirror). */
template <class G, bool MIRROR>
GpuextStatus global_pass(const G &g, size_t n, unsigned b, unsigned p_lo, cudaStream_t stream)
{
	size_t		count = pass_threads(n, MIRROR ? p_lo - 1 : p_lo, b);
	unsigned	blocks = (unsigned) ((count + GLOBAL_THREADS - 1) / GLOBAL_THREADS);

	if (count == 0)
		return GPUEXT_OK;
	switch (b)
	{
		case 1:
			bitonic_global_pass_kernel<G, MIRROR ? 2 : 1, MIRROR>
				<<<blocks, GLOBAL_THREADS, 0, stream>>>(g, n, p_lo, count);
			break;
		case 2:
			bitonic_global_pass_kernel<G, 2, MIRROR><<<blocks, GLOBAL_THREADS, 0, stream>>>(g, n, p_lo, count);
			break;
		case 3:
			bitonic_global_pass_kernel<G, 3, MIRROR><<<blocks, GLOBAL_THREADS, 0, stream>>>(g, n, p_lo, count);
			break;
		case 4:
			bitonic_global_pass_kernel<G, 4, MIRROR><<<blocks, GLOBAL_THREADS, 0, stream>>>(g, n, p_lo, count);
			break;
		default:
			bitonic_global_pass_kernel<G, 5, MIRROR><<<blocks, GLOBAL_THREADS, 0, stream>>>(g, n, p_lo, count);
			break;
	}
	return check_launch("bitonic_global_pass_kernel");
}

/*
 * One global pass from position hi down towards low (the stage's first with
 * MIRROR): in registers when the strides fit there, else through shared
 * memory.  *p_lo gets the lowest position it covered.
 */
template <class G, bool MIRROR, typename K = typename G::Key>
GpuextStatus stride_pass(const G &g, size_t n, size_t top, unsigned hi, unsigned low, unsigned *p_lo,
						 cudaStream_t stream)
{
	constexpr unsigned REG = GLOBAL_BITS - (MIRROR ? 1 : 0);
	unsigned	strides = hi - low + 1;

	if (strides > REG && GS_KEYS * SmemKeys<K>::BYTES <= device_smem_optin())
	{
		*p_lo = hi - std::min(GS_BITS - (MIRROR ? 1 : 0), strides) + 1;
		return global_smem_pass<G, MIRROR>(g, n, top, *p_lo, hi, stream);
	}
	strides = std::min(REG, strides);
	*p_lo = hi - strides + 1;
	return global_pass<G, MIRROR>(g, n, MIRROR ? strides + 1 : strides, *p_lo, stream);
}

/* Enqueue the whole network for n keys on the stream, with tiles of shape Sh. */
template <class Sh, class G, typename K = typename Sh::Key>
GpuextStatus network(const G &g, size_t n)
{
	static_assert(GLOBAL_BITS == 5, "global_pass handles up to 5 bits");
	cudaStream_t stream = device_stream();
	size_t		tiles = (n + Sh::S - 1) / Sh::S;
	size_t		top = next_pow2(n);
	GpuextStatus st;

	if ((st = allow_smem((const void *) bitonic_tile_sort_kernel<Sh, G>, Sh::SMEM,
						 "bitonic tile sort shared memory")) != GPUEXT_OK)
		return st;
	bitonic_tile_sort_kernel<Sh, G><<<(unsigned) tiles, Sh::T, Sh::SMEM, stream>>>(g, n);
	if ((st = check_launch("bitonic_tile_sort_kernel")) != GPUEXT_OK)
		return st;
	if (top <= Sh::S)
		return GPUEXT_OK;

	if ((st = allow_smem((const void *) bitonic_tile_merge_kernel<Sh, G>, Sh::SMEM,
						 "bitonic tile merge shared memory")) != GPUEXT_OK)
		return st;
	for (unsigned lk = Sh::LOG_S + 1; ((size_t) 1 << lk) <= top; lk++)
	{
		/* Stride positions lk-1 .. LOG_S go through global memory. */
		unsigned	p_lo;

		if ((st = stride_pass<G, true>(g, n, top, lk - 1, Sh::LOG_S, &p_lo, stream)) != GPUEXT_OK)
			return st;
		while (p_lo > Sh::LOG_S)
			if ((st = stride_pass<G, false>(g, n, top, p_lo - 1, Sh::LOG_S, &p_lo, stream)) != GPUEXT_OK)
				return st;
		bitonic_tile_merge_kernel<Sh, G><<<(unsigned) tiles, Sh::T, Sh::SMEM, stream>>>(g, n);
		if ((st = check_launch("bitonic_tile_merge_kernel")) != GPUEXT_OK)
			return st;
	}
	return GPUEXT_OK;
}

/* Whether the cluster kernel with tiles of shape Sh sorts n keys on this device. */
template <class Sh>
bool cluster_fits(size_t n)
{
	return device_has_clusters() && next_pow2(n) <= (size_t) CLUSTER_MAX * Sh::S;
}

/* Enqueue the cluster kernel (tiles of shape Sh) for n keys; the caller checked cluster_fits. */
template <class Sh, class G>
GpuextStatus cluster_network(const G &g, size_t n)
{
	const unsigned log_p = std::max((unsigned) __builtin_ctzll(next_pow2(n)), Sh::LOG_S);
	cudaLaunchConfig_t cfg = {};
	cudaLaunchAttribute attr[1];
	GpuextStatus st;

	if ((st = allow_smem((const void *) bitonic_cluster_sort_kernel<Sh, G>, Sh::SMEM,
						 "bitonic cluster sort shared memory")) != GPUEXT_OK)
		return st;
	attr[0].id = cudaLaunchAttributeClusterDimension;
	attr[0].val.clusterDim.x = 1u << (log_p - Sh::LOG_S);
	attr[0].val.clusterDim.y = 1;
	attr[0].val.clusterDim.z = 1;
	cfg.gridDim = dim3(attr[0].val.clusterDim.x);
	cfg.blockDim = dim3(Sh::T);
	cfg.dynamicSmemBytes = Sh::SMEM;
	cfg.stream = device_stream();
	cfg.attrs = attr;
	cfg.numAttrs = 1;
	return check_cuda(cudaLaunchKernelEx(&cfg, bitonic_cluster_sort_kernel<Sh, G>, g, n, log_p),
					  "bitonic_cluster_sort_kernel");
}

/* The cluster kernel with tiles of shape Sh, or GPUEXT_INVALID where it does not apply. */
template <class Sh, class G>
GpuextStatus cluster_or_refuse(const G &g, size_t n)
{
	if (!cluster_fits<Sh>(n))
		return set_error(GPUEXT_INVALID, "the bitonic cluster sort with %u-key tiles takes up to %u keys on a "
						 "device with clusters, not %zu", Sh::S, CLUSTER_MAX * Sh::S, n);
	return cluster_network<Sh>(g, n);
}

/* The network with tiles of shape Sh: tiled, or (cluster) the one-launch cluster kernel. */
template <class Sh, class G>
GpuextStatus tiled_or_cluster(const G &g, size_t n, bool cluster)
{
	return cluster ? cluster_or_refuse<Sh>(g, n) : network<Sh>(g, n);
}

/*
 * The network with tile shape number shape.  For 32- and 64-bit keys: 0 the
 * large shape; 1 .. 4 (and 5 for 32-bit keys) give more threads fewer keys
 * each; 6 .. 9 the cluster kernel with the tiles of shape 1 .. 4, one launch
 * for up to CLUSTER_MAX tiles.  For pairs of 64-bit keys (16 bytes in
 * shared memory): 0 a 128 KB tile, where the device gives a block that
 * much; 1 .. 3 smaller ones.
 */
template <class G, typename K = typename G::Key>
GpuextStatus network_shape(const G &g, size_t n, int shape)
{
	if constexpr (sizeof(K) > 8)
	{
		using	Big = Shape<K, 4, 9>;

		switch (shape)
		{
			case 0:
				if (Big::SMEM > device_smem_optin())
					return set_error(GPUEXT_INVALID, "the %u-key pair tile needs %zu bytes of shared memory a "
									 "block, the device gives %zu", Big::S, Big::SMEM, device_smem_optin());
				return network<Big>(g, n);
			case 1:
				return network<Shape<K, 4, 8>>(g, n);
			case 2:
				return network<Shape<K, 3, 8>>(g, n);
			case 3:
				return network<Shape<K, 4, 7>>(g, n);
			default:
				return set_error(GPUEXT_INVALID, "no bitonic pair shape %d", shape);
		}
	}
	else
	{
		const bool	cluster = shape >= 6 && shape <= 9;

		switch (cluster ? shape - 5 : shape)
		{
			case 0:
				return network<LargeShape<K>>(g, n);
			case 1:
				return tiled_or_cluster<Shape<K, 3, 7>>(g, n, cluster);
			case 2:
				return tiled_or_cluster<Shape<K, 3, 8>>(g, n, cluster);
			case 3:
				return tiled_or_cluster<Shape<K, 4, 8>>(g, n, cluster);
			case 4:
				return tiled_or_cluster<Shape<K, 4, 9>>(g, n, cluster);
			case 5:
				if constexpr (sizeof(K) == 4)
					return network<Shape<K, 5, 10>>(g, n);
				break;
			default:
				break;
		}
		return set_error(GPUEXT_INVALID, "no bitonic shape %d for %zu-byte keys", shape, sizeof(K));
	}
}

/*
 * Shape by n, the fastest per size in bench/sort_bench --shapes (figures in
 * doc/performance.md).  From two to eight small tiles one cluster launch
 * wins; up to about a million keys many blocks of small tiles beat a few
 * long blocks, as the input sits in L2; without clusters the tiled shapes
 * serve every size.  Pairs of 64-bit keys take the 2048-pair tile up to
 * 2^19 and the 4096-pair one above.
 */
template <typename K>
int pick_shape(size_t n)
{
	size_t		p = next_pow2(n);

	if (sizeof(K) > 8)
		return p <= ((size_t) 1 << 19) ? 2 : 1;
	if (device_has_clusters() && p > 1024 && p <= 65536)
	{
		if (sizeof(K) == 4)
			return p <= 16384 ? 7 : p <= 32768 ? 8 : 9;
		if (p <= 32768)
			return p <= 8192 ? 6 : p <= 16384 ? 7 : 8;
	}
	if (sizeof(K) == 4)
		return p <= 2048 ? 2 : p <= ((size_t) 1 << 19) ? 3 : p <= ((size_t) 1 << 20) ? 4 : 0;
	return p <= ((size_t) 1 << 18) ? 2 : p <= ((size_t) 1 << 19) ? 3 : 0;
}

/* The pairs of key_bytes keys in their arrays, sorted with shape (-1: the picked one). */
GpuextStatus sort_pairs(int key_bytes, void *keys, uint32_t *idx, size_t n, int shape)
{
	if (key_bytes == 4)
		return network_shape(PairArrays<uint32_t, uint64_t>{static_cast<uint32_t *>(keys), idx}, n,
							 shape < 0 ? pick_shape<uint64_t>(n) : shape);
	return network_shape(PairArrays<uint64_t, Key96>{static_cast<uint64_t *>(keys), idx}, n,
						 shape < 0 ? pick_shape<Key96>(n) : shape);
}

}								/* namespace */

/* Sort (key, index) pairs by key, then index, in place: a bitonic sort of keys of twice the width. */
GpuextStatus bitonic_sort_pairs(int key_bytes, void *keys, uint32_t *idx, size_t n)
{
	if (n < 2)
		return GPUEXT_OK;
	return sort_pairs(key_bytes, keys, idx, n, -1);
}

/* The pairs network with shape number shape (as network_shape's), to measure pick_shape's table. */
GpuextStatus bitonic_sort_pairs_shape(int key_bytes, void *keys, uint32_t *idx, size_t n, int shape)
{
	if (n < 2)
		return GPUEXT_OK;
	return sort_pairs(key_bytes, keys, idx, n, shape);
}

/* The shape bitonic_sort_pairs uses for n pairs of key_bytes keys. */
int bitonic_pick_pairs_shape(int key_bytes, size_t n)
{
	return key_bytes == 4 ? pick_shape<uint64_t>(n) : pick_shape<Key96>(n);
}

/* Enqueue the whole network for n keys on the stream. */
template <typename K>
GpuextStatus bitonic_sort(K *keys, size_t n)
{
	if (n < 2)
		return GPUEXT_OK;
	return network_shape(KeyArray<K>{keys}, n, pick_shape<K>(n));
}

/* The network with shape number shape (0 .. BITONIC_SHAPES-1), to measure pick_shape's table. */
template <typename K>
GpuextStatus bitonic_sort_shape(K *keys, size_t n, int shape)
{
	if (n < 2)
		return GPUEXT_OK;
	return network_shape(KeyArray<K>{keys}, n, shape);
}

/* The shape bitonic_sort uses for n keys. */
template <typename K>
int bitonic_pick_shape(size_t n)
{
	return pick_shape<K>(n);
}

template GpuextStatus bitonic_sort_shape<uint32_t>(uint32_t *keys, size_t n, int shape);
template GpuextStatus bitonic_sort_shape<uint64_t>(uint64_t *keys, size_t n, int shape);
template int bitonic_pick_shape<uint32_t>(size_t n);
template int bitonic_pick_shape<uint64_t>(size_t n);
template GpuextStatus bitonic_sort<uint32_t>(uint32_t *keys, size_t n);
template GpuextStatus bitonic_sort<uint64_t>(uint64_t *keys, size_t n);

}								/* namespace gpuext */
