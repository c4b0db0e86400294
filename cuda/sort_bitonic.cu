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
 * One file past 800 lines, on purpose: the five kernels share the network
 * shapes, register layouts and exchange helpers, and are instantiated
 * together per key width; nvcc inlines device code only within one
 * translation unit (no relocatable device code in this build).
 */
#include <algorithm>

#include <cooperative_groups.h>

#include "sort_keys.cuh"

namespace gpuext
{

/*
 * A (64-bit key, 32-bit index) pair as one key: hi is the key, lo the index.
 * Three words in registers, one 16-byte chunk in shared memory.
 */
struct Key96
{
	uint64_t	hi;
	uint32_t	lo;
};

/* a < b as the borrow out of the 96-bit difference a - b. */
__device__ __forceinline__ bool operator<(const Key96 &a, const Key96 &b)
{
	uint32_t	borrow;

	asm("{\n\t.reg .u32 t;\n\t"
		"sub.cc.u32 t, %1, %4;\n\t"
		"subc.cc.u32 t, %2, %5;\n\t"
		"subc.cc.u32 t, %3, %6;\n\t"
		"subc.u32 %0, 0, 0;\n\t}"
		: "=r"(borrow)
		: "r"(a.lo), "r"((uint32_t) a.hi), "r"((uint32_t) (a.hi >> 32)), "r"(b.lo), "r"((uint32_t) b.hi),
		  "r"((uint32_t) (b.hi >> 32)));
	return borrow != 0;
}

template <>
__host__ __device__ constexpr Key96 key_max<Key96>()
{
	return Key96{~(uint64_t) 0, ~(uint32_t) 0};
}

namespace
{

namespace cg = cooperative_groups;

/* Keys of one array: what a plain key sort reads and writes. */
template <typename K>
struct KeyArray
{
	using Key = K;
	K		   *keys;

	__device__ __forceinline__ K get(size_t i) const
	{
		return keys[i];
	}
	__device__ __forceinline__ void put(size_t i, const K &v) const
	{
		keys[i] = v;
	}
	/* Keys first .. first + E - 1 (first a multiple of E) by 16-byte loads. */
	template <unsigned E>
	__device__ __forceinline__ void get_run(size_t first, K *v) const;
};

/*
 * (key, index) pairs in their two arrays, sorted in place as keys P of twice
 * the key's width (the key above the index), so that every pass moves the
 * pair's own bytes: 12 a pair for 64-bit keys, not the 16 of a packed copy.
 */
template <typename KK, typename P>
struct PairArrays
{
	using Key = P;
	KK		   *keys;
	uint32_t   *idx;

	__device__ __forceinline__ static P join(KK k, uint32_t i)
	{
		if constexpr (sizeof(P) == 8)
			return ((uint64_t) k << 32) | i;
		else
			return P{k, i};
	}
	__device__ __forceinline__ P get(size_t i) const
	{
		return join(keys[i], idx[i]);
	}
	__device__ __forceinline__ void put(size_t i, const P &v) const
	{
		if constexpr (sizeof(P) == 8)
		{
			keys[i] = (KK) (v >> 32);
			idx[i] = (uint32_t) v;
		}
		else
		{
			keys[i] = v.hi;
			idx[i] = v.lo;
		}
	}
	/* Pairs first .. first + E - 1 (first a multiple of E) by 16-byte loads of both arrays. */
	template <unsigned E>
	__device__ __forceinline__ void get_run(size_t first, P *v) const;
};

/* Strides per global pass at most (2^GLOBAL_BITS keys a thread), and its block size. */
constexpr unsigned GLOBAL_BITS = 5;
constexpr unsigned GLOBAL_THREADS = 256;

constexpr unsigned FULL_MASK = 0xffffffffu;

/*
 * Compile-time shape of the tiles: 2^LE keys of type K per thread (a row of
 * at most 128 bytes), 2^LT threads.  The large shapes (32-bit keys 32 a
 * thread, 64-bit keys 16, 512 threads) sort big inputs; smaller ones give a
 * small input more threads, each with fewer keys.
 */
template <typename K, unsigned LE, unsigned LT>
struct Shape
{
	using	Key = K;
	static constexpr unsigned LOG_T = LT;
	static constexpr unsigned T = 1u << LT;			/* threads of a tile block */
	static constexpr unsigned LOG_E = LE;
	static constexpr unsigned E = 1u << LE;			/* keys per thread, one row */
	static constexpr unsigned LOG_S = LT + LE;
	static constexpr unsigned S = 1u << LOG_S;		/* keys per tile */
	static constexpr unsigned EPC = 16 / sizeof(K);	/* keys per 16-byte chunk */
	static constexpr unsigned LOG_EPC = sizeof(K) == 4 ? 2 : sizeof(K) == 8 ? 1 : 0;
	static constexpr unsigned CHUNKS = E / EPC;		/* chunks per row */
	static constexpr unsigned LANE_POS = LE + 5;	/* first stride position above the warp */
	static constexpr unsigned RMIN = LANE_POS - LT; /* column register bit of LANE_POS */
	static constexpr size_t SMEM = (size_t) S * sizeof(K);
	/* Blocks an SM runs at once: at most 64 registers a thread, 128 for rows over 128 bytes or of 96-bit keys. */
	static constexpr unsigned MIN_BLOCKS = LT >= 10 ? 1 : (E * sizeof(K) > 128 || sizeof(K) > 8 ? 512 : 1024) / T;

	static_assert(CHUNKS >= 1 && CHUNKS <= 16, "a row is one to sixteen 16-byte chunks");
	static_assert(LANE_POS >= LT && LT <= 10, "one column round covers the strides above the warp");
};

/* The shape that sorts large inputs. */
template <typename K>
using LargeShape = Shape<K, sizeof(K) == 4 ? 5 : 4, 9>;

/* c ? a : b word by word, so that a 96-bit key stays in registers (a select of structs goes through memory). */
template <typename K>
__device__ __forceinline__ K pick(bool c, const K &a, const K &b)
{
	if constexpr (sizeof(K) <= 8)
		return c ? a : b;
	else
		return K{c ? a.hi : b.hi, c ? a.lo : b.lo};
}

/* Put the smaller key first. */
template <typename K>
__device__ __forceinline__ void cmpx(K &a, K &b)
{
	bool		lt = a < b;
	K			x = pick(lt, a, b);
	K			y = pick(lt, b, a);

	a = x;
	b = y;
}

/* Put the smaller key first; true if they were swapped. */
template <typename K>
__device__ __forceinline__ bool cmpx_swapped(K &a, K &b)
{
	bool		swap = b < a;
	K			x = pick(swap, b, a);
	K			y = pick(swap, a, b);

	a = x;
	b = y;
	return swap;
}

/* Slot of tile key i in shared memory: chunks of a row XOR-swizzled by the row. */
template <class Sh, typename K = typename Sh::Key>
__device__ __forceinline__ unsigned swz(unsigned i)
{
	return i ^ (((i >> Sh::LOG_E) & (Sh::CHUNKS - 1)) << Sh::LOG_EPC);
}

/* Unpack chunk q of a row from a 16-byte word into v. */
template <typename K>
__device__ __forceinline__ void unpack(const uint4 &w, K *v)
{
	if constexpr (sizeof(K) == 4)
	{
		v[0] = w.x;
		v[1] = w.y;
		v[2] = w.z;
		v[3] = w.w;
	}
	else if constexpr (sizeof(K) == 8)
	{
		v[0] = ((uint64_t) w.y << 32) | w.x;
		v[1] = ((uint64_t) w.w << 32) | w.z;
	}
	else
		v[0] = K{((uint64_t) w.y << 32) | w.x, w.z};
}

/* Pack chunk q of a row from v into a 16-byte word. */
template <typename K>
__device__ __forceinline__ uint4 pack(const K *v)
{
	if constexpr (sizeof(K) == 4)
		return make_uint4(v[0], v[1], v[2], v[3]);
	else if constexpr (sizeof(K) == 8)
		return make_uint4((uint32_t) v[0], (uint32_t) (v[0] >> 32), (uint32_t) v[1], (uint32_t) (v[1] >> 32));
	else
		return make_uint4((uint32_t) v[0].hi, (uint32_t) (v[0].hi >> 32), v[0].lo, 0);
}

template <typename K>
template <unsigned E>
__device__ __forceinline__ void KeyArray<K>::get_run(size_t first, K *v) const
{
	constexpr unsigned EPC = 16 / sizeof(K);
	const uint4 *src = reinterpret_cast<const uint4 *>(keys + first);

#pragma unroll
	for (unsigned q = 0; q < E / EPC; q++)
		unpack<K>(src[q], v + q * EPC);
}

template <typename KK, typename P>
template <unsigned E>
__device__ __forceinline__ void PairArrays<KK, P>::get_run(size_t first, P *v) const
{
	constexpr unsigned KPC = 16 / sizeof(KK);
	static_assert(E % 4 == 0 && E % KPC == 0, "a row is whole 16-byte chunks of keys and of indices");
	const uint4 *ks = reinterpret_cast<const uint4 *>(keys + first);
	const uint4 *is = reinterpret_cast<const uint4 *>(idx + first);
	KK			k[E];

#pragma unroll
	for (unsigned q = 0; q < E / KPC; q++)
		unpack<KK>(ks[q], k + q * KPC);
#pragma unroll
	for (unsigned q = 0; q < E / 4; q++)
	{
		uint4		w = is[q];

		v[4 * q + 0] = join(k[4 * q + 0], w.x);
		v[4 * q + 1] = join(k[4 * q + 1], w.y);
		v[4 * q + 2] = join(k[4 * q + 2], w.z);
		v[4 * q + 3] = join(k[4 * q + 3], w.w);
	}
}

/* The key of lane ^ lm. */
template <typename K>
__device__ __forceinline__ K shfl_xor(const K &v, unsigned lm)
{
	if constexpr (sizeof(K) <= 8)
		return __shfl_xor_sync(FULL_MASK, v, lm);
	else
		return K{__shfl_xor_sync(FULL_MASK, v.hi, lm), __shfl_xor_sync(FULL_MASK, v.lo, lm)};
}

/* Row tid of the tile at base from global memory; keys past n read as +infinity. */
template <class Sh, class G, typename K = typename Sh::Key>
__device__ __forceinline__ void load_row_global(const G &g, size_t n, size_t base, unsigned tid, K *v)
{
	size_t		first = base + (size_t) tid * Sh::E;

	if (first + Sh::E <= n)
		g.template get_run<Sh::E>(first, v);
	else
	{
#pragma unroll
		for (unsigned e = 0; e < Sh::E; e++)
			v[e] = first + e < n ? g.get(first + e) : key_max<K>();
	}
}

/* Row tid into shared memory (16-byte stores, swizzled). */
template <class Sh, typename K = typename Sh::Key>
__device__ __forceinline__ void store_row_shared(K *s, unsigned tid, const K *v)
{
	uint4	   *row = reinterpret_cast<uint4 *>(s) + (size_t) tid * Sh::CHUNKS;

#pragma unroll
	for (unsigned q = 0; q < Sh::CHUNKS; q++)
		row[q ^ (tid & (Sh::CHUNKS - 1))] = pack<K>(v + q * Sh::EPC);
}

/* Row tid from shared memory (16-byte loads, swizzled). */
template <class Sh, typename K = typename Sh::Key>
__device__ __forceinline__ void load_row_shared(const K *s, unsigned tid, K *v)
{
	const uint4 *row = reinterpret_cast<const uint4 *>(s) + (size_t) tid * Sh::CHUNKS;

#pragma unroll
	for (unsigned q = 0; q < Sh::CHUNKS; q++)
		unpack<K>(row[q ^ (tid & (Sh::CHUNKS - 1))], v + q * Sh::EPC);
}

/* The strides between a thread's registers: E/2 .. 1 in the row layout, 16E .. 32 in the lane layout. */
template <class Sh, typename K = typename Sh::Key>
__device__ __forceinline__ void row_register_strides(K *v)
{
#pragma unroll
	for (unsigned j = Sh::E / 2; j > 0; j >>= 1)
#pragma unroll
		for (unsigned e = 0; e < Sh::E; e++)
			if ((e & j) == 0)
				cmpx(v[e], v[e | j]);
}

/* Row layout: stride lm*E, between lanes lane and lane ^ lm (lm < 32). */
template <class Sh, typename K = typename Sh::Key>
__device__ __forceinline__ void row_lane_stride(K *v, unsigned lane, unsigned lm)
{
	bool		lower = (lane & lm) == 0;

#pragma unroll
	for (unsigned e = 0; e < Sh::E; e++)
	{
		K			x = shfl_xor(v[e], lm);

		v[e] = pick(lower == (x < v[e]), x, v[e]);
	}
}

/* Row layout: the mirrored first step of stage k, 2E <= k <= 32E, across lanes. */
template <class Sh, typename K = typename Sh::Key>
__device__ __forceinline__ void row_lane_mirror(K *v, unsigned lane, unsigned k)
{
	unsigned	lm = (k - 1) >> Sh::LOG_E;
	bool		lower = (lane & ((k >> 1) >> Sh::LOG_E)) == 0;

#pragma unroll
	for (unsigned e = 0; e < Sh::E / 2; e++)
	{
		K			a = shfl_xor(v[Sh::E - 1 - e], lm);
		K			b = shfl_xor(v[e], lm);
		K			c = v[e];
		K			d = v[Sh::E - 1 - e];

		v[e] = pick(lower == (a < c), a, c);
		v[Sh::E - 1 - e] = pick(lower == (b < d), b, d);
	}
}

/*
 * Column layout (thread tid holds tile keys tid + T*m): the strides at
 * positions rtop .. LANE_POS as register exchanges; keys at or past p are
 * left alone (they pair only among themselves).
 */
template <class Sh, typename K = typename Sh::Key>
__device__ __forceinline__ void column_strides(K *v, unsigned tid, unsigned rtop, unsigned p)
{
#pragma unroll
	for (int r = (int) Sh::LOG_E - 1; r >= (int) Sh::RMIN; r--)
	{
		if ((unsigned) r > rtop)
			continue;
#pragma unroll
		for (unsigned m = 0; m < Sh::E; m++)
			if ((m & (1u << r)) == 0 && tid + Sh::T * m < p)
				cmpx(v[m], v[m | (1u << r)]);
	}
}

/* Slot of key lane + 32m of the warp's segment at seg: swz's slot, computed from the lane. */
template <class Sh, typename K = typename Sh::Key>
__device__ __forceinline__ unsigned lane_slot(unsigned seg, unsigned lane, unsigned m)
{
	unsigned	row = (lane >> Sh::LOG_E) + (m << (5 - Sh::LOG_E));

	return seg + 32 * m + (lane ^ ((row & (Sh::CHUNKS - 1)) << Sh::LOG_EPC));
}

/*
 * The strides 16E .. 1 of the warp's segment held in shared memory, ending
 * in the row layout (thread tid holds row tid).  In the lane layout (lane
 * holds keys lane + 32m) the strides 16E .. 32 are register exchanges; one
 * trip through the warp's own shared memory turns it into the row layout
 * for the strides below E; with E < 32 the strides 16 .. E are left over
 * for shuffles.  The segment must be in shared memory and visible to the warp.
 */
template <class Sh, typename K = typename Sh::Key>
__device__ __forceinline__ void segment_strides(K *s, unsigned tid, K *v)
{
	const unsigned lane = tid & 31;
	const unsigned seg = (tid & ~31u) * Sh::E;

#pragma unroll
	for (unsigned m = 0; m < Sh::E; m++)
		v[m] = s[lane_slot<Sh>(seg, lane, m)];
	row_register_strides<Sh>(v);
#pragma unroll
	for (unsigned pos = 4; pos >= Sh::LOG_E && pos <= 4; pos--)
		row_lane_stride<Sh>(v, lane, 1u << pos);
#pragma unroll
	for (unsigned m = 0; m < Sh::E; m++)
		s[lane_slot<Sh>(seg, lane, m)] = v[m];
	__syncwarp();
	load_row_shared<Sh>(s, tid, v);
	row_register_strides<Sh>(v);
}

/* Row tid back to global memory through the warp's shared memory, so that each store is coalesced. */
template <class Sh, class G, typename K = typename Sh::Key>
__device__ __forceinline__ void store_segment_global(const G &g, size_t n, size_t base, K *s, unsigned tid,
													 const K *v)
{
	const unsigned lane = tid & 31;
	const size_t first = base + (size_t) (tid & ~31u) * Sh::E + lane;

	store_row_shared<Sh>(s, tid, v);
	__syncwarp();
#pragma unroll
	for (unsigned m = 0; m < Sh::E; m++)
		if (first + 32 * m < n)
			g.put(first + 32 * m, s[lane_slot<Sh>((tid & ~31u) * Sh::E, lane, m)]);
}

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

/*
 * One global pass of B register bits over the strides at positions p_lo and
 * up.  Without MIRROR each thread holds keys base | m << p_lo, m < 2^B, and
 * runs the strides at positions p_lo+B-1 .. p_lo.  With MIRROR bit 0 of m
 * picks the mirror column (all bits below p_lo flipped) and bits 1 .. B-1 sit
 * at positions p_lo .. p_lo+B-2; the stage's mirrored step (k = 2^(p_lo+B-1))
 * flips every bit of m, then the strides p_lo+B-3 .. p_lo follow.  Thread t's
 * base is t with B zero bits inserted at position q (p_lo, or p_lo-1 with
 * MIRROR); count threads have a base below n.  Only keys that moved are
 * written back.
 */
template <class G, unsigned B, bool MIRROR, typename K = typename G::Key>
__global__ void __launch_bounds__(GLOBAL_THREADS) bitonic_global_pass_kernel(G g, size_t n, unsigned p_lo,
																			 size_t count)
{
	constexpr unsigned M = 1u << B;
	const size_t t = (size_t) blockIdx.x * GLOBAL_THREADS + threadIdx.x;
	const unsigned q = MIRROR ? p_lo - 1 : p_lo;
	const size_t low = ((size_t) 1 << p_lo) - 1;
	K			v[M];
	unsigned	moved = 0;

	if (t >= count)
		return;

	const size_t base = ((t >> q) << (q + B)) | (t & (((size_t) 1 << q) - 1));
	auto		at = [&](unsigned m) -> size_t {
		if (MIRROR)
			return (base | ((size_t) (m >> 1) << p_lo)) ^ ((m & 1) ? low : 0);
		return base | ((size_t) m << p_lo);
	};

#pragma unroll
	for (unsigned m = 0; m < M; m++)
	{
		size_t		a = at(m);

		v[m] = a < n ? g.get(a) : key_max<K>();
	}
	if (MIRROR)
	{
#pragma unroll
		for (unsigned m = 0; m < M / 2; m++)
			if (cmpx_swapped(v[m], v[m ^ (M - 1)]))
				moved |= (1u << m) | (1u << (m ^ (M - 1)));
#pragma unroll
		for (int r = (int) B - 2; r >= 1; r--)
#pragma unroll
			for (unsigned m = 0; m < M; m++)
				if ((m & (1u << r)) == 0 && cmpx_swapped(v[m], v[m | (1u << r)]))
					moved |= (1u << m) | (1u << (m | (1u << r)));
	}
	else
	{
#pragma unroll
		for (int r = (int) B - 1; r >= 0; r--)
#pragma unroll
			for (unsigned m = 0; m < M; m++)
				if ((m & (1u << r)) == 0 && cmpx_swapped(v[m], v[m | (1u << r)]))
					moved |= (1u << m) | (1u << (m | (1u << r)));
	}
	/* A key that moved is real: +infinity never moves below a real key. */
#pragma unroll
	for (unsigned m = 0; m < M; m++)
		if (moved & (1u << m))
			g.put(at(m), v[m]);
}

/*
 * A block's keys in shared memory as one array; 96-bit keys as two, their
 * high and low words (12 bytes a key, not the 16 of the padded struct).
 */
template <typename K>
struct SmemKeys
{
	static constexpr size_t BYTES = sizeof(K);
	K		   *s;

	__device__ __forceinline__ SmemKeys(void *p, unsigned) : s(static_cast<K *>(p))
	{
	}
	__device__ __forceinline__ K get(unsigned i) const
	{
		return s[i];
	}
	__device__ __forceinline__ void put(unsigned i, const K &v) const
	{
		s[i] = v;
	}
};

template <>
struct SmemKeys<Key96>
{
	static constexpr size_t BYTES = 12;
	uint64_t   *hi;
	uint32_t   *lo;

	__device__ __forceinline__ SmemKeys(void *p, unsigned count)
		: hi(static_cast<uint64_t *>(p)), lo(reinterpret_cast<uint32_t *>(hi + count))
	{
	}
	__device__ __forceinline__ Key96 get(unsigned i) const
	{
		return Key96{hi[i], lo[i]};
	}
	__device__ __forceinline__ void put(unsigned i, const Key96 &v) const
	{
		hi[i] = v.hi;
		lo[i] = v.lo;
	}
};

/* Rows of a shared-memory global pass: 32 columns of 2^GS_BITS rows (2^(GS_BITS-1) in each of two sets when mirrored). */
constexpr unsigned GS_BITS = 8;
constexpr unsigned GS_THREADS = 512;
constexpr unsigned GS_KEYS = 32u << GS_BITS;
constexpr unsigned GS_E = GS_KEYS / GS_THREADS;	/* keys per thread */

/* Threads an SM holds, for the blocks a kernel asks to share one: 1024 before Ampere. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
constexpr unsigned SM_THREADS = 1024;
#else
constexpr unsigned SM_THREADS = 1536;
#endif

static_assert(GS_E == 16, "gs_row_strides covers four register bits");

/* Register exchanges for the register bits x whose row bit x + shift is a stride (0 <= row bit < stop). */
template <typename K>
__device__ __forceinline__ void gs_row_strides(K *v, int shift, unsigned stop)
{
#pragma unroll
	for (int x = 3; x >= 0; x--)
	{
		if (x + shift < 0 || (unsigned) (x + shift) >= stop)
			continue;
#pragma unroll
		for (unsigned r = 0; r < GS_E; r++)
			if ((r & (1u << x)) == 0)
				cmpx(v[r], v[r | (1u << x)]);
	}
}

/*
 * A global pass through shared memory, for more strides than registers
 * hold: the strides at positions p_lo .. hi (up to GS_BITS of them, one
 * fewer with MIRROR, whose first step is the stage's mirror step at hi).  A
 * block takes 32 consecutive columns (positions 0-4) of every row m at
 * positions p_lo and up, so loads and stores are whole 256-byte runs; with
 * MIRROR also the mirror columns, where the mirror of (m, c) is
 * (m ^ mm, 31 - c).  Local index j = c | set << 5 | m << (5 + set bits):
 * thread t holds j = t + T*r (register bits are the top rows), then, after
 * one trip through shared memory, j = lane | r << 5 | warp << 9 (register
 * bits the low rows).  Keys past n are +infinity and never written.
 * Blocks an SM runs at once: for 32-bit keys as many as it holds (three
 * from Ampere on), two for wider ones (one block of 96-bit keys, with more
 * registers, hid too little latency).
 */
template <class G, bool MIRROR, typename K = typename G::Key>
__global__ void __launch_bounds__(GS_THREADS, sizeof(K) == 4 ? SM_THREADS / GS_THREADS : 2)
bitonic_global_smem_kernel(G g, size_t n, unsigned p_lo, unsigned hi)
{
	constexpr unsigned SB = MIRROR ? 1 : 0;		/* set bits */
	constexpr unsigned MB = GS_BITS - SB;			/* row bits */
	extern __shared__ uint4 smem[];
	const SmemKeys<K> s(smem, GS_KEYS);
	const unsigned tid = threadIdx.x;
	const unsigned cbits = p_lo - 5 - SB;			/* column-block bits of the block number */
	const size_t b = blockIdx.x;
	const size_t base0 = ((b & (((size_t) 1 << cbits) - 1)) << 5) | ((b >> cbits) << (p_lo + MB));
	const size_t base1 = base0 ^ ((((size_t) 1 << p_lo) - 1) & ~(size_t) 31);
	const unsigned top = hi - p_lo;					/* highest row bit that is a stride */
	const unsigned mm = (2u << top) - 1;			/* the mirror's row flip */
	K			v[GS_E];
	auto		at = [&](unsigned j) -> size_t {
		unsigned	c = j & 31;
		unsigned	m = j >> (5 + SB);

		return ((SB && ((j >> 5) & 1)) ? base1 : base0) | ((size_t) m << p_lo) | c;
	};

	if (base0 >= n)
		return;
#pragma unroll
	for (unsigned r = 0; r < GS_E; r++)
	{
		size_t		a = at(tid + GS_THREADS * r);

		v[r] = a < n ? g.get(a) : key_max<K>();
	}
	if (MIRROR)
	{
		/* The mirror step: each key of set 0 with its mirror in set 1; the lower index keeps the smaller. */
#pragma unroll
		for (unsigned r = 0; r < GS_E; r++)
			s.put(tid + GS_THREADS * r, v[r]);
		__syncthreads();
		for (unsigned q = tid; q < GS_KEYS / 2; q += GS_THREADS)
		{
			unsigned	c = q & 31;
			unsigned	m = q >> 5;
			unsigned	ia = (m << 6) | c;
			unsigned	iz = ((m ^ mm) << 6) | 32 | (c ^ 31);
			K			a = s.get(ia);
			K			z = s.get(iz);

			if (((m >> top) & 1) ? a < z : z < a)
			{
				s.put(ia, z);
				s.put(iz, a);
			}
		}
		__syncthreads();
#pragma unroll
		for (unsigned r = 0; r < GS_E; r++)
			v[r] = s.get(tid + GS_THREADS * r);
		__syncthreads();
	}

	/* Register bit x (j bit 9 + x) is row bit 4 + x - SB. */
	const unsigned stop = MIRROR ? top : top + 1;	/* row bits below stop are strides */

	gs_row_strides(v, 4 - (int) SB, stop);
#pragma unroll
	for (unsigned r = 0; r < GS_E; r++)
		s.put(tid + GS_THREADS * r, v[r]);
	__syncthreads();

	/* Register bit x (j bit 5 + x) is the set bit for x < SB, else row bit x - SB. */
	const unsigned lane = tid & 31;
	const unsigned warp = tid >> 5;
#pragma unroll
	for (unsigned r = 0; r < GS_E; r++)
		v[r] = s.get(lane | (r << 5) | (warp << 9));
	gs_row_strides(v, -(int) SB, stop);
#pragma unroll
	for (unsigned r = 0; r < GS_E; r++)
	{
		size_t		a = at(lane | (r << 5) | (warp << 9));

		if (a < n)
			g.put(a, v[r]);
	}
}

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
