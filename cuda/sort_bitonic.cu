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
 * Three kernels, each holding its keys in registers:
 *	- tile sort: one block sorts a tile of S keys (64 KB of shared memory).
 *	  Each thread holds E consecutive keys (the "row" layout): strides below E
 *	  are exchanges between registers, strides E .. 16E warp shuffles, and the
 *	  strides of 32E and above go through shared memory, where each thread
 *	  holds the keys tid + T*m (the "column" layout) so they are again
 *	  register exchanges.  Up to 32E keys need no shared memory at all.
 *	- global pass: for a stage larger than a tile, up to GLOBAL_BITS strides of
 *	  S and above in one pass; each thread loads 2^B keys that those strides
 *	  connect (for the stage's first, mirrored step also the mirror column),
 *	  runs the strides in registers and writes back only the keys that moved.
 *	- tile merge: the strides S/2 .. 1 of a stage larger than a tile: column
 *	  layout straight from global memory for the strides >= 32E, one trip
 *	  through shared memory into the row layout, shuffles and registers for
 *	  the rest, and back to global memory.
 * Shared memory is swizzled by 16-byte chunks so that both layouts are free
 * of bank conflicts.
 */
#include <algorithm>

#include "sort_keys.cuh"

namespace gpuext
{

namespace
{

/* Threads of the tile kernels, and keys per thread (row length) by key width. */
constexpr unsigned LOG_T = 9;
constexpr unsigned T = 1u << LOG_T;

template <typename K>
constexpr unsigned log_row()
{
	return sizeof(K) == 4 ? 5 : 4;
}

/* Strides per global pass at most (2^GLOBAL_BITS keys a thread), and its block size. */
constexpr unsigned GLOBAL_BITS = 5;
constexpr unsigned GLOBAL_THREADS = 256;

constexpr unsigned FULL_MASK = 0xffffffffu;

/* Compile-time shape of the tiles for key type K. */
template <typename K>
struct Shape
{
	static constexpr unsigned LOG_E = log_row<K>();
	static constexpr unsigned E = 1u << LOG_E;		/* keys per thread, one row */
	static constexpr unsigned LOG_S = LOG_T + LOG_E;
	static constexpr unsigned S = 1u << LOG_S;		/* keys per tile */
	static constexpr unsigned EPC = 16 / sizeof(K);	/* keys per 16-byte chunk */
	static constexpr unsigned LOG_EPC = sizeof(K) == 4 ? 2 : 1;
	static constexpr unsigned CHUNKS = E / EPC;		/* chunks per row */
	static constexpr unsigned LANE_POS = LOG_E + 5; /* first stride position above the warp */
	static constexpr unsigned RMIN = LANE_POS - LOG_T;	/* column register bit of LANE_POS */
	static constexpr size_t SMEM = (size_t) S * sizeof(K);

	static_assert(CHUNKS == 8, "a row is eight 16-byte chunks");
	static_assert(LANE_POS >= LOG_T, "one column round covers the strides above the warp");
};

/* Put the smaller key first. */
template <typename K>
__device__ __forceinline__ void cmpx(K &a, K &b)
{
	K			x = a < b ? a : b;
	K			y = a < b ? b : a;

	a = x;
	b = y;
}

/* Put the smaller key first; true if they were swapped. */
template <typename K>
__device__ __forceinline__ bool cmpx_swapped(K &a, K &b)
{
	bool		swap = b < a;
	K			x = swap ? b : a;
	K			y = swap ? a : b;

	a = x;
	b = y;
	return swap;
}

/* Slot of tile key i in shared memory: chunks of a row XOR-swizzled by the row. */
template <typename K>
__device__ __forceinline__ unsigned swz(unsigned i)
{
	using	Sh = Shape<K>;

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
	else
	{
		v[0] = ((uint64_t) w.y << 32) | w.x;
		v[1] = ((uint64_t) w.w << 32) | w.z;
	}
}

/* Pack chunk q of a row from v into a 16-byte word. */
template <typename K>
__device__ __forceinline__ uint4 pack(const K *v)
{
	if constexpr (sizeof(K) == 4)
		return make_uint4(v[0], v[1], v[2], v[3]);
	else
		return make_uint4((uint32_t) v[0], (uint32_t) (v[0] >> 32), (uint32_t) v[1], (uint32_t) (v[1] >> 32));
}

/* Row tid of the tile at base from global memory; keys past n read as +infinity. */
template <typename K>
__device__ __forceinline__ void load_row_global(const K *keys, size_t n, size_t base, unsigned tid, K *v)
{
	using	Sh = Shape<K>;
	size_t		first = base + (size_t) tid * Sh::E;

	if (first + Sh::E <= n)
	{
		const uint4 *src = reinterpret_cast<const uint4 *>(keys + first);

#pragma unroll
		for (unsigned q = 0; q < Sh::CHUNKS; q++)
			unpack<K>(src[q], v + q * Sh::EPC);
	}
	else
	{
#pragma unroll
		for (unsigned e = 0; e < Sh::E; e++)
			v[e] = first + e < n ? keys[first + e] : key_max<K>();
	}
}

/* Row tid back to global memory; nothing past n is written. */
template <typename K>
__device__ __forceinline__ void store_row_global(K *keys, size_t n, size_t base, unsigned tid, const K *v)
{
	using	Sh = Shape<K>;
	size_t		first = base + (size_t) tid * Sh::E;

	if (first + Sh::E <= n)
	{
		uint4	   *dst = reinterpret_cast<uint4 *>(keys + first);

#pragma unroll
		for (unsigned q = 0; q < Sh::CHUNKS; q++)
			dst[q] = pack<K>(v + q * Sh::EPC);
	}
	else
	{
#pragma unroll
		for (unsigned e = 0; e < Sh::E; e++)
			if (first + e < n)
				keys[first + e] = v[e];
	}
}

/* Row tid into shared memory (16-byte stores, swizzled). */
template <typename K>
__device__ __forceinline__ void store_row_shared(K *s, unsigned tid, const K *v)
{
	using	Sh = Shape<K>;
	uint4	   *row = reinterpret_cast<uint4 *>(s) + (size_t) tid * Sh::CHUNKS;

#pragma unroll
	for (unsigned q = 0; q < Sh::CHUNKS; q++)
		row[q ^ (tid & (Sh::CHUNKS - 1))] = pack<K>(v + q * Sh::EPC);
}

/* Row tid from shared memory (16-byte loads, swizzled). */
template <typename K>
__device__ __forceinline__ void load_row_shared(const K *s, unsigned tid, K *v)
{
	using	Sh = Shape<K>;
	const uint4 *row = reinterpret_cast<const uint4 *>(s) + (size_t) tid * Sh::CHUNKS;

#pragma unroll
	for (unsigned q = 0; q < Sh::CHUNKS; q++)
		unpack<K>(row[q ^ (tid & (Sh::CHUNKS - 1))], v + q * Sh::EPC);
}

/* Row layout: the strides E/2 .. 1, inside each thread's registers. */
template <typename K>
__device__ __forceinline__ void row_register_strides(K *v)
{
	using	Sh = Shape<K>;

#pragma unroll
	for (unsigned j = Sh::E / 2; j > 0; j >>= 1)
#pragma unroll
		for (unsigned e = 0; e < Sh::E; e++)
			if ((e & j) == 0)
				cmpx(v[e], v[e | j]);
}

/* Row layout: stride lm*E, between lanes lane and lane ^ lm (lm < 32). */
template <typename K>
__device__ __forceinline__ void row_lane_stride(K *v, unsigned lane, unsigned lm)
{
	using	Sh = Shape<K>;
	bool		lower = (lane & lm) == 0;

#pragma unroll
	for (unsigned e = 0; e < Sh::E; e++)
	{
		K			x = __shfl_xor_sync(FULL_MASK, v[e], lm);

		v[e] = lower ? (x < v[e] ? x : v[e]) : (x < v[e] ? v[e] : x);
	}
}

/* Row layout: the mirrored first step of stage k, 2E <= k <= 32E, across lanes. */
template <typename K>
__device__ __forceinline__ void row_lane_mirror(K *v, unsigned lane, unsigned k)
{
	using	Sh = Shape<K>;
	unsigned	lm = (k - 1) >> Sh::LOG_E;
	bool		lower = (lane & ((k >> 1) >> Sh::LOG_E)) == 0;

#pragma unroll
	for (unsigned e = 0; e < Sh::E / 2; e++)
	{
		K			a = __shfl_xor_sync(FULL_MASK, v[Sh::E - 1 - e], lm);
		K			b = __shfl_xor_sync(FULL_MASK, v[e], lm);
		K			c = v[e];
		K			d = v[Sh::E - 1 - e];

		v[e] = lower ? (a < c ? a : c) : (a < c ? c : a);
		v[Sh::E - 1 - e] = lower ? (b < d ? b : d) : (b < d ? d : b);
	}
}

/*
 * Column layout (thread tid holds tile keys tid + T*m): the strides at
 * positions rtop .. LANE_POS as register exchanges; keys at or past p are
 * left alone (they pair only among themselves).
 */
template <typename K>
__device__ __forceinline__ void column_strides(K *v, unsigned tid, unsigned rtop, unsigned p)
{
	using	Sh = Shape<K>;

#pragma unroll
	for (int r = (int) Sh::LOG_E - 1; r >= (int) Sh::RMIN; r--)
	{
		if ((unsigned) r > rtop)
			continue;
#pragma unroll
		for (unsigned m = 0; m < Sh::E; m++)
			if ((m & (1u << r)) == 0 && tid + T * m < p)
				cmpx(v[m], v[m | (1u << r)]);
	}
}

/*
 * Sort each tile of S keys.  Only the warps whose rows start below p (the
 * tile's length rounded up to a power of two) work; the stages up to 32E run
 * in registers and shuffles, larger ones through shared memory.
 */
template <typename K>
__global__ void __launch_bounds__(T, 2) bitonic_tile_sort_kernel(K *keys, size_t n)
{
	using	Sh = Shape<K>;
	extern __shared__ uint4 smem[];
	K		   *s = reinterpret_cast<K *>(smem);
	const unsigned tid = threadIdx.x;
	const unsigned lane = tid & 31;
	const size_t base = (size_t) blockIdx.x * Sh::S;
	const unsigned len = (unsigned) min((size_t) Sh::S, n - base);
	const unsigned p = (unsigned) next_pow2(len);
	const bool	active = (tid & ~31u) * Sh::E < p;	/* warp-uniform */
	K			v[Sh::E];

	if (active)
	{
		load_row_global(keys, n, base, tid, v);

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
			row_lane_mirror(v, lane, k);
			for (unsigned lm = (k >> 2) >> Sh::LOG_E; lm > 0; lm >>= 1)
				row_lane_stride(v, lane, lm);
			row_register_strides(v);
		}
	}

	/* Stages 64E .. p: mirror step and strides >= 32E in shared memory, the rest in the warp. */
	for (unsigned k = 64 * Sh::E; k <= p; k <<= 1)
	{
		const unsigned j = k >> 1;

		if (active)
			store_row_shared(s, tid, v);
		__syncthreads();
		for (unsigned c = tid; c < p / 2; c += T)
		{
			unsigned	i = ((c & ~(j - 1)) << 1) | (c & (j - 1));

			cmpx(s[swz<K>(i)], s[swz<K>(i ^ (k - 1))]);
		}
		__syncthreads();
		if (k >= 128 * Sh::E)
		{
			/* Register bit of the stride k/4 in the column layout; v is reloaded below. */
			unsigned	rtop = (unsigned) (__ffs(k) - 1) - 2 - LOG_T;

#pragma unroll
			for (unsigned m = 0; m < Sh::E; m++)
				if (tid + T * m < p)
					v[m] = s[swz<K>(tid + T * m)];
			column_strides(v, tid, rtop, p);
#pragma unroll
			for (unsigned m = 0; m < Sh::E; m++)
				if (tid + T * m < p)
					s[swz<K>(tid + T * m)] = v[m];
			__syncthreads();
		}
		if (active)
		{
			load_row_shared(s, tid, v);
			for (unsigned lm = 16; lm > 0; lm >>= 1)
				row_lane_stride(v, lane, lm);
			row_register_strides(v);
		}
	}

	if (active)
		store_row_global(keys, n, base, tid, v);
}

/* Strides S/2 .. 1 of a stage larger than a tile. */
template <typename K>
__global__ void __launch_bounds__(T, 2) bitonic_tile_merge_kernel(K *keys, size_t n)
{
	using	Sh = Shape<K>;
	extern __shared__ uint4 smem[];
	K		   *s = reinterpret_cast<K *>(smem);
	const unsigned tid = threadIdx.x;
	const unsigned lane = tid & 31;
	const size_t base = (size_t) blockIdx.x * Sh::S;
	K			v[Sh::E];

	/* Column layout from global memory (coalesced), strides S/2 .. 32E. */
#pragma unroll
	for (unsigned m = 0; m < Sh::E; m++)
	{
		size_t		i = base + tid + T * m;

		v[m] = i < n ? keys[i] : key_max<K>();
	}
	column_strides(v, tid, Sh::LOG_E - 1, Sh::S);
#pragma unroll
	for (unsigned m = 0; m < Sh::E; m++)
		s[swz<K>(tid + T * m)] = v[m];
	__syncthreads();

	/* Row layout: strides 16E .. E by shuffles, E/2 .. 1 in registers. */
	load_row_shared(s, tid, v);
#pragma unroll
	for (unsigned lm = 16; lm > 0; lm >>= 1)
		row_lane_stride(v, lane, lm);
	row_register_strides(v);
	store_row_global(keys, n, base, tid, v);
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
template <typename K, unsigned B, bool MIRROR>
__global__ void __launch_bounds__(GLOBAL_THREADS) bitonic_global_pass_kernel(K *keys, size_t n, unsigned p_lo,
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

		v[m] = a < n ? keys[a] : key_max<K>();
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
			keys[at(m)] = v[m];
}

/* Threads whose base (t with z zero bits inserted at position q) is below n. */
size_t pass_threads(size_t n, unsigned q, unsigned z)
{
	size_t		span = (size_t) 1 << (q + z);

	return ((n >> (q + z)) << q) + std::min(n & (span - 1), (size_t) 1 << q);
}

/* Launch one global pass of b register bits (1 .. GLOBAL_BITS; 2 .. with mirror). */
template <typename K, bool MIRROR>
GpuextStatus global_pass(K *keys, size_t n, unsigned b, unsigned p_lo, cudaStream_t stream)
{
	size_t		count = pass_threads(n, MIRROR ? p_lo - 1 : p_lo, b);
	unsigned	blocks = (unsigned) ((count + GLOBAL_THREADS - 1) / GLOBAL_THREADS);

	if (count == 0)
		return GPUEXT_OK;
	switch (b)
	{
		case 1:
			bitonic_global_pass_kernel<K, MIRROR ? 2 : 1, MIRROR>
				<<<blocks, GLOBAL_THREADS, 0, stream>>>(keys, n, p_lo, count);
			break;
		case 2:
			bitonic_global_pass_kernel<K, 2, MIRROR><<<blocks, GLOBAL_THREADS, 0, stream>>>(keys, n, p_lo, count);
			break;
		case 3:
			bitonic_global_pass_kernel<K, 3, MIRROR><<<blocks, GLOBAL_THREADS, 0, stream>>>(keys, n, p_lo, count);
			break;
		case 4:
			bitonic_global_pass_kernel<K, 4, MIRROR><<<blocks, GLOBAL_THREADS, 0, stream>>>(keys, n, p_lo, count);
			break;
		default:
			bitonic_global_pass_kernel<K, 5, MIRROR><<<blocks, GLOBAL_THREADS, 0, stream>>>(keys, n, p_lo, count);
			break;
	}
	return check_launch("bitonic_global_pass_kernel");
}

}								/* namespace */

/* Enqueue the whole network for n keys on the stream. */
template <typename K>
GpuextStatus bitonic_sort(K *keys, size_t n)
{
	using	Sh = Shape<K>;
	static_assert(GLOBAL_BITS == 5, "global_pass handles up to 5 bits");
	cudaStream_t stream = device_stream();
	size_t		tiles = (n + Sh::S - 1) / Sh::S;
	size_t		top = next_pow2(n);
	GpuextStatus st;

	if (n < 2)
		return GPUEXT_OK;

	if ((st = check_cuda(cudaFuncSetAttribute(bitonic_tile_sort_kernel<K>,
											  cudaFuncAttributeMaxDynamicSharedMemorySize, (int) Sh::SMEM),
						 "bitonic tile sort shared memory")) != GPUEXT_OK)
		return st;
	bitonic_tile_sort_kernel<K><<<(unsigned) tiles, T, Sh::SMEM, stream>>>(keys, n);
	if ((st = check_launch("bitonic_tile_sort_kernel")) != GPUEXT_OK)
		return st;
	if (top <= Sh::S)
		return GPUEXT_OK;

	if ((st = check_cuda(cudaFuncSetAttribute(bitonic_tile_merge_kernel<K>,
											  cudaFuncAttributeMaxDynamicSharedMemorySize, (int) Sh::SMEM),
						 "bitonic tile merge shared memory")) != GPUEXT_OK)
		return st;
	for (unsigned lk = Sh::LOG_S + 1; ((size_t) 1 << lk) <= top; lk++)
	{
		/* Stride positions lk-1 .. LOG_S go through global memory. */
		unsigned	hi = lk - 1;
		unsigned	strides = std::min(GLOBAL_BITS - 1, hi - Sh::LOG_S + 1);
		unsigned	p_lo = hi - strides + 1;

		if ((st = global_pass<K, true>(keys, n, strides + 1, p_lo, stream)) != GPUEXT_OK)
			return st;
		while (p_lo > Sh::LOG_S)
		{
			hi = p_lo - 1;
			strides = std::min(GLOBAL_BITS, hi - Sh::LOG_S + 1);
			p_lo = hi - strides + 1;
			if ((st = global_pass<K, false>(keys, n, strides, p_lo, stream)) != GPUEXT_OK)
				return st;
		}
		bitonic_tile_merge_kernel<K><<<(unsigned) tiles, T, Sh::SMEM, stream>>>(keys, n);
		if ((st = check_launch("bitonic_tile_merge_kernel")) != GPUEXT_OK)
			return st;
	}
	return GPUEXT_OK;
}

template GpuextStatus bitonic_sort<uint32_t>(uint32_t *keys, size_t n);
template GpuextStatus bitonic_sort<uint64_t>(uint64_t *keys, size_t n);

}								/* namespace gpuext */
