/*
 * reduce_groups.cu
 *		gpuext_groups_clear, _add and _result: count, exact sum, min and max
 *		per group, each group's state in device memory (gpuext_cuda.h).
 *
 * Add: one thread a value, a grid-stride loop that whole warps walk
 * together.  Lanes of the same group find each other (__match_any_sync)
 * and fold their count, keys, integer sums and flags into the lowest lane,
 * which adds them to the state with global atomics; float values' three
 * exact digits (cuda/exact_sum.h) are folded likewise among lanes of the
 * same group whose digits start at the same place.  Every state field is
 * a sum modulo 2^64, a min, a max or an OR, so the bits after any order of
 * atomics are those of reduce_groups_cpu.c.  Result: one thread a group,
 * gpuext_group_finish as on the host.
 */
#include <cstdint>
#include <type_traits>

#include "device_internal.cuh"
#include "reduce_groups.h"

namespace gpuext
{

namespace
{

constexpr unsigned GROUP_THREADS = 256;
constexpr unsigned FULL_MASK = 0xFFFFFFFFu;
constexpr uint64_t MAX_GROUP_BLOCKS = 8192;

/* Blocks for n items of a grid-stride loop. */
unsigned group_blocks(uint64_t n)
{
	uint64_t	blocks = (n + GROUP_THREADS - 1) / GROUP_THREADS;

	return (unsigned) (blocks < 1 ? 1 : blocks > MAX_GROUP_BLOCKS ? MAX_GROUP_BLOCKS : blocks);
}

/* Clear states from word first_word on, words in all (min_key is word 1 of each state). */
__global__ void __launch_bounds__(GROUP_THREADS) groups_clear_kernel(uint64_t *__restrict__ words,
																	  uint64_t first_word, uint64_t count,
																	  unsigned state_words)
{
	for (uint64_t w = (uint64_t) blockIdx.x * GROUP_THREADS + threadIdx.x; w < count;
		 w += (uint64_t) gridDim.x * GROUP_THREADS)
	{
		uint64_t	at = first_word + w;

		words[at] = at % state_words == 1 ? UINT64_MAX : 0;
	}
}

/*
 * Combine v over the lanes of peers into the lowest of them (a tree over
 * the peers' ranks); all lanes of the warp must call.
 */
template <typename V, typename Op>
__device__ __forceinline__ V peer_reduce(unsigned peers, V v, Op op)
{
	const unsigned lane = threadIdx.x % 32;
	const unsigned rank = __popc(peers & ((1u << lane) - 1));

#pragma unroll
	for (unsigned stride = 1; stride < 32; stride <<= 1)
	{
		unsigned	src = __fns(peers, lane, (int) stride + 1);
		V			other = __shfl_sync(FULL_MASK, v, src < 32 ? src : lane);

		if ((rank & (2 * stride - 1)) == 0 && src < 32)
			v = op(v, other);
	}
	return v;
}

/* Sums, minima, maxima and ORs of peer_reduce. */
struct SumOp
{
	template <typename V>
	__device__ V operator()(V a, V b) const
	{
		return a + b;
	}
};
struct MinOp
{
	__device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const
	{
		return a < b ? a : b;
	}
};
struct MaxOp
{
	__device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const
	{
		return a > b ? a : b;
	}
};
struct OrOp
{
	__device__ unsigned operator()(unsigned a, unsigned b) const
	{
		return a | b;
	}
};

/* One lane's part of a state: its value's, or the fold of its group's lanes. */
struct Part
{
	unsigned long long count;
	unsigned long long min_key;
	unsigned long long max_key;
	unsigned long long sum_lo;
	unsigned long long sum_hi;
	unsigned	flags;
};

/* A value's part, and for floats its exact digits (first < 0: none to add). */
template <typename T>
__device__ __forceinline__ Part value_part(T v, int *first, long long *d)
{
	Part		p = {1, 0, 0, 0, 0, 0};

	*first = -1;
	if constexpr (std::is_floating_point<T>::value)
	{
		int64_t		d0 = 0,
					d1 = 0,
					d2 = 0;
		GpuextExactKind kind = gpuext_exact_split((double) v, first, &d0, &d1, &d2);

		p.min_key = p.max_key = sizeof(T) == 8 ? gpuext_double_key((double) v) : gpuext_float_key((float) v);
		p.flags = kind == GPUEXT_EXACT_NAN ? GPUEXT_GROUP_NAN : kind == GPUEXT_EXACT_POS_INF ? GPUEXT_GROUP_POS_INF
			: kind == GPUEXT_EXACT_NEG_INF ? GPUEXT_GROUP_NEG_INF : 0;
		if (kind != GPUEXT_EXACT_ADDED || (d0 | d1 | d2) == 0)
			*first = -1;
		d[0] = d0;
		d[1] = d1;
		d[2] = d2;
	}
	else
	{
		p.min_key = p.max_key = gpuext_int_key((int64_t) v, (int) sizeof(T));
		p.sum_lo = (uint32_t) (int64_t) v;
		p.sum_hi = (uint64_t) ((int64_t) v >> 32);
	}
	return p;
}

/* Fold a Part over peers into their lowest lane (floats have flags, integers sums). */
template <bool IS_FLOAT>
__device__ __forceinline__ Part fold_part(unsigned peers, Part p)
{
	p.count = peer_reduce(peers, p.count, SumOp());
	p.min_key = peer_reduce(peers, p.min_key, MinOp());
	p.max_key = peer_reduce(peers, p.max_key, MaxOp());
	if constexpr (IS_FLOAT)
		p.flags = peer_reduce(peers, p.flags, OrOp());
	else
	{
		p.sum_lo = peer_reduce(peers, p.sum_lo, SumOp());
		p.sum_hi = peer_reduce(peers, p.sum_hi, SumOp());
	}
	return p;
}

/* Add values[i] to state groups[i] for i < n, whole warps at a time, folding lanes of a group first. */
template <typename T>
__global__ void __launch_bounds__(GROUP_THREADS) groups_add_kernel(const T *__restrict__ values,
																	const uint32_t *__restrict__ groups, uint64_t n,
																	char *__restrict__ states, uint32_t ngroups)
{
	constexpr bool IS_FLOAT = std::is_floating_point<T>::value;
	constexpr size_t STATE_BYTES = GPUEXT_GROUP_STATE_BYTES(IS_FLOAT);
	const unsigned lane = threadIdx.x % 32;
	const unsigned lower = (1u << lane) - 1;

	for (uint64_t i = (uint64_t) blockIdx.x * GROUP_THREADS + threadIdx.x; i - lane < n;
		 i += (uint64_t) gridDim.x * GROUP_THREADS)
	{
		uint32_t	g = i < n ? groups[i] : UINT32_MAX;
		bool		live = g < ngroups;
		int			first;
		long long	d[3];
		Part		p = value_part<T>(live ? values[i] : T(0), &first, d);
		unsigned	peers = __match_any_sync(FULL_MASK, live ? g : UINT32_MAX);
		GpuextGroupState *s = reinterpret_cast<GpuextGroupState *>(states + (size_t) g * STATE_BYTES);

		if (__any_sync(FULL_MASK, peers != (1u << lane)))
			p = fold_part<IS_FLOAT>(peers, p);
		if (live && (peers & lower) == 0)
		{
			atomicAdd(reinterpret_cast<unsigned long long *>(&s->count), p.count);
			atomicMin(reinterpret_cast<unsigned long long *>(&s->min_key), p.min_key);
			atomicMax(reinterpret_cast<unsigned long long *>(&s->max_key), p.max_key);
			if (p.sum_lo != 0)
				atomicAdd(reinterpret_cast<unsigned long long *>(&s->sum_lo), p.sum_lo);
			if (p.sum_hi != 0)
				atomicAdd(reinterpret_cast<unsigned long long *>(&s->sum_hi), p.sum_hi);
			if (p.flags != 0)
				atomicOr(&s->flags, p.flags);
		}
		if constexpr (IS_FLOAT)
		{
			bool		adds = live && first >= 0;
			unsigned	dpeers = __match_any_sync(FULL_MASK, adds ? ((uint64_t) g << 32) | (uint32_t) first
												  : UINT64_MAX);
			unsigned long long *digits = reinterpret_cast<unsigned long long *>(s + 1);

			if (__any_sync(FULL_MASK, dpeers != (1u << lane)))
				for (int k = 0; k < 3; k++)
					d[k] = peer_reduce(dpeers, d[k], SumOp());
			if (adds && (dpeers & lower) == 0)
				for (int k = 0; k < 3; k++)
					if (d[k] != 0)
						atomicAdd(&digits[first + k], (unsigned long long) d[k]);
		}
	}
}

/* One thread a group: its result, its state normalised in place. */
template <bool IS_FLOAT>
__global__ void __launch_bounds__(GROUP_THREADS) groups_result_kernel(char *__restrict__ states, uint32_t ngroups,
																	   GpuextGroupResult *__restrict__ results)
{
	for (uint64_t g = (uint64_t) blockIdx.x * GROUP_THREADS + threadIdx.x; g < ngroups;
		 g += (uint64_t) gridDim.x * GROUP_THREADS)
		gpuext_group_finish(IS_FLOAT, reinterpret_cast<GpuextGroupState *>(
								states + g * GPUEXT_GROUP_STATE_BYTES(IS_FLOAT)), &results[g]);
}

/* Enqueue the add kernel for values of type T. */
template <typename T>
GpuextStatus groups_add_typed(const void *values, const uint32_t *groups, size_t n, void *states,
							  uint32_t ngroups)
{
	groups_add_kernel<T><<<group_blocks(n), GROUP_THREADS, 0, device_stream()>>>(
		static_cast<const T *>(values), groups, n, static_cast<char *>(states), ngroups);
	return check_launch("groups_add_kernel");
}

}								/* namespace */

}								/* namespace gpuext */

/* Enqueue the clear of states first .. first + count - 1. */
GpuextStatus gpuext_groups_clear(int is_float, void *states, uint32_t first, uint32_t count)
{
	const unsigned state_words = (unsigned) (GPUEXT_GROUP_STATE_BYTES(is_float) / 8);
	const char *why = gpuext_groups_bad_clear(states, first, count);

	if (!gpuext::device_is_open())
		return gpuext::set_error(GPUEXT_NO_DEVICE, "the GPU device has not been opened");
	if (why != nullptr)
		return gpuext::set_error(GPUEXT_INVALID, "%s", why);
	if (count == 0)
		return GPUEXT_OK;
	gpuext::groups_clear_kernel<<<gpuext::group_blocks((uint64_t) count * state_words), gpuext::GROUP_THREADS, 0,
								  gpuext::device_stream()>>>(static_cast<uint64_t *>(states),
															 (uint64_t) first * state_words,
															 (uint64_t) count * state_words, state_words);
	return gpuext::check_launch("groups_clear_kernel");
}

/* Check the arguments, then enqueue the add of n values to their groups' states. */
GpuextStatus gpuext_groups_add(int value_bytes, int is_float, const void *values, const uint32_t *groups,
							   size_t n, void *states, uint32_t ngroups)
{
	const char *why = gpuext_groups_bad_add(value_bytes, is_float, values, groups, n, states);

	if (!gpuext::device_is_open())
		return gpuext::set_error(GPUEXT_NO_DEVICE, "the GPU device has not been opened");
	if (why != nullptr)
		return gpuext::set_error(GPUEXT_INVALID, "%s", why);
	if (n == 0 || ngroups == 0)
		return GPUEXT_OK;
	if (is_float)
		return value_bytes == 4 ? gpuext::groups_add_typed<float>(values, groups, n, states, ngroups)
			: gpuext::groups_add_typed<double>(values, groups, n, states, ngroups);
	switch (value_bytes)
	{
		case 2:
			return gpuext::groups_add_typed<int16_t>(values, groups, n, states, ngroups);
		case 4:
			return gpuext::groups_add_typed<int32_t>(values, groups, n, states, ngroups);
		default:
			return gpuext::groups_add_typed<int64_t>(values, groups, n, states, ngroups);
	}
}

/* Check the arguments, then enqueue the results of groups 0 .. ngroups - 1. */
GpuextStatus gpuext_groups_result(int value_bytes, int is_float, void *states, uint32_t ngroups,
								  GpuextGroupResult *results)
{
	const char *why = gpuext_groups_bad_result(value_bytes, is_float, states, ngroups, results);
	char	   *s = static_cast<char *>(states);

	if (!gpuext::device_is_open())
		return gpuext::set_error(GPUEXT_NO_DEVICE, "the GPU device has not been opened");
	if (why != nullptr)
		return gpuext::set_error(GPUEXT_INVALID, "%s", why);
	if (ngroups == 0)
		return GPUEXT_OK;
	if (is_float)
		gpuext::groups_result_kernel<true><<<gpuext::group_blocks(ngroups), gpuext::GROUP_THREADS, 0,
											  gpuext::device_stream()>>>(s, ngroups, results);
	else
		gpuext::groups_result_kernel<false><<<gpuext::group_blocks(ngroups), gpuext::GROUP_THREADS, 0,
											   gpuext::device_stream()>>>(s, ngroups, results);
	return gpuext::check_launch("groups_result_kernel");
}
