/*
 * sort_bitonic_layout.cuh
 *		The bitonic sort's keys and what its kernels share (sort_bitonic.cu
 *		has the network): 96-bit (key, index) keys, the views the kernels
 *		read and write through, the tile shapes, compare-exchanges, the
 *		swizzled shared memory, and the strides of the row, lane and column
 *		layouts.  Included by sort_bitonic.cu only, with the kernels'
 *		headers, so that this device code is compiled, and inlined, in one
 *		translation unit.
 */
#ifndef GPUEXT_SORT_BITONIC_LAYOUT_CUH
#define GPUEXT_SORT_BITONIC_LAYOUT_CUH

#include <cstddef>
#include <cstdint>

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

}								/* namespace */

}								/* namespace gpuext */

#endif							/* GPUEXT_SORT_BITONIC_LAYOUT_CUH */
