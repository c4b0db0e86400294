/*
 * sort_bitonic_tile.cuh
 *		The bitonic sort's kernels within tiles (sort_bitonic.cu has the
 *		network): the tile sort, the tile merge (the strides below S of a
 *		stage larger than a tile), and the cluster sort (Hopper and later),
 *		the whole network for up to eight tiles in one launch.  Included by
 *		sort_bitonic.cu only.
 */
#ifndef GPUEXT_SORT_BITONIC_TILE_CUH
#define GPUEXT_SORT_BITONIC_TILE_CUH

#include <cooperative_groups.h>

#include "sort_bitonic_layout.cuh"

namespace gpuext
{

namespace
{

namespace cg = cooperative_groups;

/*
 * Sort the tile at base, p keys long (its length rounded up to a power of
 * two), ending with row tid in v.  Only the warps whose rows start below p
 * work; the stages up to 32E run in registers and shuffles, larger ones
 * through shared memory.  All threads must call.
 */
template <class Sh, class G, typename K = typename Sh::Key>
__device__ __forceinline__ void tile_sort_rows(const G &g, size_t n, size_t base, unsigned p, K *s, K *v)
{
	const unsigned tid = threadIdx.x;
	const unsigned lane = tid & 31;
	const bool	active = (tid & ~31u) * Sh::E < p;	/* warp-uniform */

	if (active)
	{
		load_row_global<Sh>(g, n, base, tid, v);

		/* Stages 2 .. E: registers only. */
#pragma unroll
		for (unsigned k = 2; k <= Sh::E; k <<= 1)
		{
#pragma unroll
			for (unsigned e = 0; e < Sh::E; e++)
				if ((e & (k >> 1)) == 0)
					cmpx(v[e], v[e ^ (k - 1)]);
#pragma unroll
			for (unsigned j = k >> 2; j > 0; j >>= 1)
#pragma unroll
				for (unsigned e = 0; e < Sh::E; e++)
					if ((e & j) == 0)
						cmpx(v[e], v[e | j]);
		}

		/* Stages 2E .. 32E: shuffles, then registers. */
		for (unsigned k = 2 * Sh::E; k <= p && k <= 32 * Sh::E; k <<= 1)
		{
			row_lane_mirror<Sh>(v, lane, k);
			for (unsigned lm = (k >> 2) >> Sh::LOG_E; lm > 0; lm >>= 1)
				row_lane_stride<Sh>(v, lane, lm);
			row_register_strides<Sh>(v);
		}
	}

	/* Stages 64E .. p: mirror step and strides >= 32E in shared memory, the rest in the warp. */
	for (unsigned k = 64 * Sh::E; k <= p; k <<= 1)
	{
		const unsigned j = k >> 1;

		if (active)
			store_row_shared<Sh>(s, tid, v);
		__syncthreads();
		for (unsigned c = tid; c < p / 2; c += Sh::T)
		{
			unsigned	i = ((c & ~(j - 1)) << 1) | (c & (j - 1));

			cmpx(s[swz<Sh>(i)], s[swz<Sh>(i ^ (k - 1))]);
		}
		__syncthreads();
		if (k >= 128 * Sh::E)
		{
			/* Register bit of the stride k/4 in the column layout; v is reloaded below. */
			unsigned	rtop = (unsigned) (__ffs(k) - 1) - 2 - Sh::LOG_T;

#pragma unroll
			for (unsigned m = 0; m < Sh::E; m++)
				if (tid + Sh::T * m < p)
					v[m] = s[swz<Sh>(tid + Sh::T * m)];
			column_strides<Sh>(v, tid, rtop, p);
#pragma unroll
			for (unsigned m = 0; m < Sh::E; m++)
				if (tid + Sh::T * m < p)
					s[swz<Sh>(tid + Sh::T * m)] = v[m];
			__syncthreads();
		}
		if (active)
			segment_strides<Sh>(s, tid, v);
	}
}

/* Sort each tile of S keys. */
template <class Sh, class G, typename K = typename Sh::Key>
__global__ void __launch_bounds__(Sh::T, Sh::MIN_BLOCKS) bitonic_tile_sort_kernel(G g, size_t n)
{
	extern __shared__ uint4 smem[];
	K		   *s = reinterpret_cast<K *>(smem);
	const size_t base = (size_t) blockIdx.x * Sh::S;
	const unsigned p = (unsigned) next_pow2(min((size_t) Sh::S, n - base));
	K			v[Sh::E];

	tile_sort_rows<Sh>(g, n, base, p, s, v);
	if ((threadIdx.x & ~31u) * Sh::E < p)
		store_segment_global<Sh>(g, n, base, s, threadIdx.x, v);
}

/*
 * From the column layout in v (thread tid holds keys tid + T*m), the
 * strides S/2 .. 1 of the tile: S/2 .. 32E in registers, then each warp
 * finishes its own segment through s; ends with row tid in v.
 */
template <class Sh, typename K = typename Sh::Key>
__device__ __forceinline__ void merge_columns(K *s, unsigned tid, K *v)
{
	column_strides<Sh>(v, tid, Sh::LOG_E - 1, Sh::S);
#pragma unroll
	for (unsigned m = 0; m < Sh::E; m++)
		s[swz<Sh>(tid + Sh::T * m)] = v[m];
	__syncthreads();
	segment_strides<Sh>(s, tid, v);
}

/* Strides S/2 .. 1 of a stage larger than a tile. */
template <class Sh, class G, typename K = typename Sh::Key>
__global__ void __launch_bounds__(Sh::T, Sh::MIN_BLOCKS) bitonic_tile_merge_kernel(G g, size_t n)
{
	extern __shared__ uint4 smem[];
	K		   *s = reinterpret_cast<K *>(smem);
	const unsigned tid = threadIdx.x;
	const size_t base = (size_t) blockIdx.x * Sh::S;
	K			v[Sh::E];

	/* Column layout from global memory (coalesced). */
#pragma unroll
	for (unsigned m = 0; m < Sh::E; m++)
	{
		size_t		i = base + tid + Sh::T * m;

		v[m] = i < n ? g.get(i) : key_max<K>();
	}
	merge_columns<Sh>(s, tid, v);
	store_segment_global<Sh>(g, n, base, s, tid, v);
}

/* Largest cluster of the small-input kernel: the portable cluster size. */
constexpr unsigned CLUSTER_MAX = 8;

/*
 * One step of a stage between this block's tile s and its partner's r, both
 * whole in shared memory: the stage's mirrored first step (this tile's slot
 * i against the partner's S-1-i) or a stride of S or more (slot i against
 * slot i).  Of the S comparators of the two tiles this block takes half: its
 * own slots below S/2, or for the upper block of a plain stride those from
 * S/2.  The lower tile keeps the smaller key; only swapped keys are written.
 */
template <class Sh, typename K = typename Sh::Key>
__device__ __forceinline__ void cluster_step(K *s, K *r, unsigned tid, bool lower, bool mirror)
{
	const unsigned from = mirror || lower ? 0 : Sh::S / 2;
	K			a[Sh::E / 2];
	K			b[Sh::E / 2];

#pragma unroll
	for (unsigned m = 0; m < Sh::E / 2; m++)
	{
		const unsigned i = from + tid + Sh::T * m;

		a[m] = s[swz<Sh>(i)];
		b[m] = r[swz<Sh>(mirror ? Sh::S - 1 - i : i)];
	}
#pragma unroll
	for (unsigned m = 0; m < Sh::E / 2; m++)
	{
		const unsigned i = from + tid + Sh::T * m;

		if (lower ? b[m] < a[m] : a[m] < b[m])
		{
			s[swz<Sh>(i)] = b[m];
			r[swz<Sh>(mirror ? Sh::S - 1 - i : i)] = a[m];
		}
	}
}

/*
 * The whole network for up to CLUSTER_MAX tiles in one launch: one cluster
 * whose block b sorts tile b, then, for each stage larger than a tile, the
 * strides of S and above between tiles through distributed shared memory
 * (a cluster barrier after each) and the strides below S in each block.
 * Tiles past n are +infinity in shared memory and never written out.
 * 2^log_p is n rounded up to a power of two, the cluster's S * blocks.
 */
template <class Sh, class G, typename K = typename Sh::Key>
__global__ void __launch_bounds__(Sh::T, 1) bitonic_cluster_sort_kernel(G g, size_t n, unsigned log_p)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	extern __shared__ uint4 smem[];
	K		   *s = reinterpret_cast<K *>(smem);
	cg::cluster_group cluster = cg::this_cluster();
	const unsigned rank = cluster.block_rank();
	const unsigned tid = threadIdx.x;
	const size_t base = (size_t) rank * Sh::S;
	K			v[Sh::E];

	tile_sort_rows<Sh>(g, n, base, Sh::S, s, v);
	for (unsigned lk = Sh::LOG_S + 1; lk <= log_p; lk++)
	{
		store_row_shared<Sh>(s, tid, v);
		cluster.sync();
		for (unsigned pos = lk - 1; pos >= Sh::LOG_S; pos--)
		{
			const bool	mirror = pos == lk - 1;
			const unsigned bit = 1u << (pos - Sh::LOG_S);

			cluster_step<Sh>(s, cluster.map_shared_rank(s, rank ^ (mirror ? 2 * bit - 1 : bit)), tid,
							 (rank & bit) == 0, mirror);
			cluster.sync();
		}
#pragma unroll
		for (unsigned m = 0; m < Sh::E; m++)
			v[m] = s[swz<Sh>(tid + Sh::T * m)];
		merge_columns<Sh>(s, tid, v);
	}
	store_segment_global<Sh>(g, n, base, s, tid, v);
#endif
}

}								/* namespace */

}								/* namespace gpuext */

#endif							/* GPUEXT_SORT_BITONIC_TILE_CUH */
