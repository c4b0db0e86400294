/*
 * bench_common.cuh
 *		What the benchmark programs share: stopping on a failure, and their
 *		random source.
 */
#ifndef GPUEXT_BENCH_COMMON_CUH
#define GPUEXT_BENCH_COMMON_CUH

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#include "gpuext_cuda.h"

/* Stop on a CUDA failure: this is a benchmark, not the backend. */
static inline void check(cudaError_t err, const char *what)
{
	if (err == cudaSuccess)
		return;
	fprintf(stderr, "fatal: %s: %s\n", what, cudaGetErrorString(err));
	exit(2);
}

/* Stop on a gpuext failure. */
static inline void must(GpuextStatus st, const char *what)
{
	if (st == GPUEXT_OK)
		return;
	fprintf(stderr, "fatal: %s (status %d): %s\n", what, (int) st, gpuext_cuda_error_message());
	exit(2);
}

/* splitmix64 of i and a seed: the benchmarks' random source, on the host and the device. */
__host__ __device__ inline uint64_t mix(uint64_t i, uint64_t seed)
{
	uint64_t	z = i * 0x9E3779B97F4A7C15ull + seed;

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

#endif							/* GPUEXT_BENCH_COMMON_CUH */
