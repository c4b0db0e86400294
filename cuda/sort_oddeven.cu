/*
 * sort_oddeven.cu
 *		Multi-block odd-even transposition sort (quadratic; small inputs only).
 *
 * The keys are cut into half-chunks of HALF keys.  A pass sorts chunks of two
 * adjacent half-chunks, each in one block by odd-even transposition in shared
 * memory; passes alternate between chunks starting at 0 and chunks shifted by
 * one half-chunk.  A pass is a merge-split of sorted half-chunks, i.e. one
 * phase of odd-even transposition over half-chunks, so as many passes as
 * there are half-chunks sort everything.  Slots past n are virtual +infinity,
 * never read or written.
 */
#include "sort_keys.cuh"

namespace gpuext
{

namespace
{

/* Keys per half-chunk, and threads per block: one comparator per thread. */
constexpr unsigned HALF = 512;

/* Sort the 2*HALF keys of chunk blockIdx.x (starting at first) by odd-even transposition. */
template <typename K>
__global__ void __launch_bounds__(HALF) oddeven_chunk_kernel(K *keys, size_t n, size_t first)
{
	__shared__ K s[2 * HALF];
	size_t		base = first + (size_t) blockIdx.x * (2 * HALF);
	unsigned	t = threadIdx.x;

	for (unsigned r = 0; r < 2; r++)
	{
		size_t		idx = base + t + r * HALF;

		s[t + r * HALF] = idx < n ? keys[idx] : key_max<K>();
	}
	__syncthreads();

	/* 2*HALF phases (even, then odd) sort 2*HALF keys. */
	for (unsigned round = 0; round < HALF; round++)
	{
		compare_exchange(&s[2 * t], &s[2 * t + 1]);
		__syncthreads();
		if (t < HALF - 1)
			compare_exchange(&s[2 * t + 1], &s[2 * t + 2]);
		__syncthreads();
	}

	for (unsigned r = 0; r < 2; r++)
	{
		size_t		idx = base + t + r * HALF;

		if (idx < n)
			keys[idx] = s[t + r * HALF];
	}
}

}								/* namespace */

/* Enqueue one pass per half-chunk, alternating unshifted and shifted chunks. */
template <typename K>
GpuextStatus oddeven_sort(K *keys, size_t n)
{
	cudaStream_t stream = device_stream();
	size_t		halves = (n + HALF - 1) / HALF;
	GpuextStatus st;

	if (n < 2)
		return GPUEXT_OK;

	for (size_t pass = 0; pass < halves; pass++)
	{
		size_t		first = (pass % 2 == 0) ? 0 : HALF;
		size_t		chunks;

		if (first >= n)
			continue;
		chunks = (n - first + 2 * HALF - 1) / (2 * HALF);
		oddeven_chunk_kernel<K><<<(unsigned) chunks, HALF, 0, stream>>>(keys, n, first);
		if ((st = check_launch("oddeven_chunk_kernel")) != GPUEXT_OK)
			return st;
	}
	return GPUEXT_OK;
}

template GpuextStatus oddeven_sort<uint32_t>(uint32_t *keys, size_t n);
template GpuextStatus oddeven_sort<uint64_t>(uint64_t *keys, size_t n);

}								/* namespace gpuext */
