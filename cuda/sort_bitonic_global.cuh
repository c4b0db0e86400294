/*
 * sort_bitonic_global.cuh
 *		The bitonic sort's global passes (sort_bitonic.cu has the network):
 *		a stage's strides of S (a tile) and above, in registers (up to
 *		GLOBAL_BITS strides a pass) or through shared memory (up to GS_BITS).
 *		Included by sort_bitonic.cu only.
 */
#ifndef GPUEXT_SORT_BITONIC_GLOBAL_CUH
#define GPUEXT_SORT_BITONIC_GLOBAL_CUH

#include "sort_bitonic_layout.cuh"

namespace gpuext
{

namespace
{

/* Strides per global pass at most (2^GLOBAL_BITS keys a thread), and its block size. */
constexpr unsigned GLOBAL_BITS = 5;
constexpr unsigned GLOBAL_THREADS = 256;

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

}								/* namespace */

}								/* namespace gpuext */

#endif							/* GPUEXT_SORT_BITONIC_GLOBAL_CUH */
