/*
 * reduce_bench.cu
 *		Device-resident reduction speed: gpuext_reduce beside a device-to-device
 *		copy of the same bytes and CUB's DeviceReduce (Sum, Min, Max), then the
 *		reduction optimisation ladder of Harris ("Optimizing Parallel Reduction
 *		in CUDA") as timed by Doroshenko & Zhereb (2009), Table 2.
 *
 *	reduce_bench [--runs N] [--quick]
 *
 * 16-byte values (numeric as fixed point) get gpuext_reduce and the copy
 * only.  Everything runs on gpuext's own stream and is timed with CUDA events
 * around the enqueued work only (the data already lies on the device):
 * warm-up first, then the median of --runs (default 25).  GB/s is bytes of
 * input read per second, for the copy too (which also writes as many).
 * gpuext_reduce's time includes its final kernel and the copy of its result
 * to pinned host memory.  The six ladder kernels are teaching variants that
 * live here only; each sums int32 in as many passes as it takes to reach one
 * value.  --quick uses smaller inputs (a smoke test, not a measurement).
 */
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cub/device/device_reduce.cuh>

#include "device_internal.cuh"
#include "bench_common.cuh"

namespace
{

int			runs = 25;
cudaEvent_t ev_start;
cudaEvent_t ev_stop;

/* Random values: integers over their whole range but never 0, reals uniform in [-1e6, 1e6). */
template <typename T>
__global__ void fill_kernel(T *v, size_t n, uint64_t seed)
{
	for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
	{
		uint64_t	r = mix(i, seed);

		if constexpr (std::is_floating_point<T>::value)
			v[i] = (T) ((double) (r >> 11) * 0x1.0p-53 * 2e6 - 1e6);
		else
			v[i] = (T) r != 0 ? (T) r : (T) 1;
	}
}

/* Small positive int32 values (1..100) for the ladder, whose sum fits in 32 bits. */
__global__ void fill_small_kernel(int *v, size_t n, uint64_t seed)
{
	for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
		v[i] = 1 + (int) (mix(i, seed) % 100);
}

/* Median of the per-run milliseconds of fn (enqueued on the stream), after two warm-ups. */
template <typename F>
double time_ms(F fn, int nruns = -1)
{
	cudaStream_t stream = gpuext::device_stream();
	std::vector<float> ms;

	if (nruns < 0)
		nruns = runs;
	for (int r = 0; r < nruns + 2; r++)
	{
		float		t = 0;

		check(cudaEventRecord(ev_start, stream), "cudaEventRecord");
		fn();
		check(cudaEventRecord(ev_stop, stream), "cudaEventRecord");
		check(cudaEventSynchronize(ev_stop), "cudaEventSynchronize");
		check(cudaEventElapsedTime(&t, ev_start, ev_stop), "cudaEventElapsedTime");
		if (r >= 2)
			ms.push_back(t);
	}
	std::sort(ms.begin(), ms.end());
	return ms.size() % 2 ? ms[ms.size() / 2] : (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
}

/* One table row. */
void row(const char *type, size_t n, const char *op, size_t bytes, double ms, double d2d_ms, double cub_ms,
		 const char *note)
{
	printf("%-7s %11zu  %-14s %9.4f %9.1f %8.1f%% %9.3f  %s\n", type, n, op, ms, bytes / ms / 1e6,
		   100.0 * d2d_ms / ms, cub_ms > 0 ? ms / cub_ms : 0.0, note);
	fflush(stdout);
}

/* The exact float sum of a result, rounded roughly (for a plausibility check only). */
double approx_digits(const GpuextReduceResult &r)
{
	long double s = 0;

	for (int d = GPUEXT_EXACT_DIGITS - 1; d >= 0; d--)
		s += ldexpl((long double) r.digits[d], 32 * d - 1074);
	return (double) s;
}

/* Decode a key back to the value it sorts (as sort_keys.c). */
template <typename T>
T key_value(uint64_t key)
{
	if constexpr (std::is_floating_point<T>::value)
	{
		if (sizeof(T) == 4)
		{
			uint32_t	k = (uint32_t) key;
			uint32_t	u = (k & 0x80000000u) ? k & 0x7FFFFFFFu : ~k;
			float		f;

			memcpy(&f, &u, 4);
			return (T) f;
		}
		uint64_t	u = (key & (1ull << 63)) ? key & ~(1ull << 63) : ~key;
		double		d;

		memcpy(&d, &u, 8);
		return (T) d;
	}
	else
		return sizeof(T) == 8 ? (T) (key ^ (1ull << 63)) : (T) (int32_t) ((uint32_t) key ^ 0x80000000u);
}

struct Bars
{
	const char *what;
	double		pct_d2d;
	double		vs_cub;
};
std::vector<Bars> bars;

/* gpuext_reduce, CUB Sum / Min / Max and a copy of n random T. */
template <typename T>
void bench_type(const char *type, int is_float, size_t n, void *d_in, void *d_copy, void *d_temp,
				size_t temp_bytes, GpuextReduceResult *result)
{
	cudaStream_t stream = gpuext::device_stream();
	const size_t bytes = n * sizeof(T);
	T		   *in = static_cast<T *>(d_in);
	T		   *out = static_cast<T *>(d_copy);
	void	   *scratch = nullptr;
	size_t		scratch_bytes = 0;
	size_t		need = 0;
	T			cub_sum,
				cub_min,
				cub_max;
	double		d2d,
				cub_s,
				cub_mn,
				cub_mx,
				ours;
	char		note[200];
	bool		ok;

	fill_kernel<T><<<1024, 256, 0, stream>>>(in, n, 42 + n + sizeof(T) + is_float);
	check(cudaGetLastError(), "fill_kernel");
	must(gpuext_reduce_scratch_bytes(sizeof(T), is_float, n, &scratch_bytes), "gpuext_reduce_scratch_bytes");
	must(gpuext_cuda_alloc(&scratch, scratch_bytes), "scratch allocation");
	for (auto op : {0, 1, 2})
	{
		size_t		b = 0;

		if (op == 0)
			check(cub::DeviceReduce::Sum(nullptr, b, in, out, n, stream), "cub Sum size");
		else if (op == 1)
			check(cub::DeviceReduce::Min(nullptr, b, in, out, n, stream), "cub Min size");
		else
			check(cub::DeviceReduce::Max(nullptr, b, in, out, n, stream), "cub Max size");
		need = std::max(need, b);
	}
	if (need > temp_bytes)
	{
		fprintf(stderr, "fatal: CUB wants %zu bytes of temporary storage, have %zu\n", need, temp_bytes);
		exit(2);
	}

	d2d = time_ms([&] { check(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice, stream), "copy"); });
	cub_s = time_ms([&] { check(cub::DeviceReduce::Sum(d_temp, need, in, out, n, stream), "cub Sum"); });
	check(cudaMemcpyAsync(&cub_sum, out, sizeof(T), cudaMemcpyDeviceToHost, stream), "copy back");
	cub_mn = time_ms([&] { check(cub::DeviceReduce::Min(d_temp, need, in, out, n, stream), "cub Min"); });
	check(cudaMemcpyAsync(&cub_min, out, sizeof(T), cudaMemcpyDeviceToHost, stream), "copy back");
	cub_mx = time_ms([&] { check(cub::DeviceReduce::Max(d_temp, need, in, out, n, stream), "cub Max"); });
	check(cudaMemcpyAsync(&cub_max, out, sizeof(T), cudaMemcpyDeviceToHost, stream), "copy back");
	ours = time_ms([&] { must(gpuext_reduce(sizeof(T), is_float, in, n, scratch, scratch_bytes, result), "gpuext_reduce"); });
	check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");

	/* Plausibility: CUB's sum wraps (ints) or rounds (floats); min and max must agree exactly. */
	if constexpr (std::is_floating_point<T>::value)
	{
		double		exact = approx_digits(*result);

		ok = std::fabs(exact - (double) cub_sum) <= (sizeof(T) == 4 ? 1e-4 : 1e-9) * n * 1e6 &&
			key_value<T>(result->min_key) == cub_min && key_value<T>(result->max_key) == cub_max;
		snprintf(note, sizeof(note), "%s: sum %.6e (CUB %.6e)", ok ? "agrees with CUB" : "DISAGREES WITH CUB",
				 exact, (double) cub_sum);
	}
	else
	{
		ok = (T) result->isum_lo == cub_sum && key_value<T>(result->min_key) == cub_min &&
			key_value<T>(result->max_key) == cub_max && result->count == n;
		snprintf(note, sizeof(note), "%s", ok ? "agrees with CUB (sum mod 2^bits, min, max)" : "DISAGREES WITH CUB");
	}
	row(type, n, "D2D copy", bytes, d2d, d2d, 0, "");
	row(type, n, "CUB Sum", bytes, cub_s, d2d, cub_s, "");
	row(type, n, "CUB Min", bytes, cub_mn, d2d, cub_s, "");
	row(type, n, "CUB Max", bytes, cub_mx, d2d, cub_s, "");
	row(type, n, "gpuext_reduce", bytes, ours, d2d, cub_s, note);
	printf("\n");
	bars.push_back({type, 100.0 * d2d / ours, ours / cub_s});
	gpuext_cuda_free(scratch);
}

/* Random signed 128-bit values below 10^36 in magnitude (the fixed-point numerics). */
__global__ void fill_i128_kernel(__int128 *v, size_t n, uint64_t seed)
{
	for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
		v[i] = ((__int128) (mix(i, seed) >> 1) << 55 | (__int128) (mix(i, seed + 1) >> 9)) *
			(mix(i, seed + 2) & 1 ? 1 : -1);
}

/* gpuext_reduce of n 16-byte values (numeric as fixed point) beside a copy; no CUB row (the harness checks the sum). */
void bench_int128(size_t n, void *d_in, void *d_copy, GpuextReduceResult *result)
{
	cudaStream_t stream = gpuext::device_stream();
	const size_t bytes = n * 16;
	void	   *scratch = nullptr;
	size_t		scratch_bytes = 0;
	double		d2d,
				ours;

	fill_i128_kernel<<<1024, 256, 0, stream>>>(static_cast<__int128 *>(d_in), n, 4242 + n);
	check(cudaGetLastError(), "fill_i128_kernel");
	must(gpuext_reduce_scratch_bytes(16, 0, n, &scratch_bytes), "gpuext_reduce_scratch_bytes");
	must(gpuext_cuda_alloc(&scratch, scratch_bytes), "scratch allocation");
	d2d = time_ms([&] { check(cudaMemcpyAsync(d_copy, d_in, bytes, cudaMemcpyDeviceToDevice, stream), "copy"); });
	ours = time_ms([&] { must(gpuext_reduce(16, 0, d_in, n, scratch, scratch_bytes, result), "gpuext_reduce"); });
	check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
	row("int128", n, "D2D copy", bytes, d2d, d2d, 0, "");
	row("int128", n, "gpuext_reduce", bytes, ours, d2d, 0, result->count == n ? "count agrees" : "COUNT WRONG");
	printf("\n");
	gpuext_cuda_free(scratch);
}

/* Ladder step 1: global memory only, interleaved addressing, in place (g is overwritten). */
__global__ void ladder_global(int *g, int *out, unsigned n)
{
	const unsigned tid = threadIdx.x;
	const size_t base = (size_t) blockIdx.x * blockDim.x;

	for (unsigned s = 1; s < blockDim.x; s *= 2)
	{
		if (tid % (2 * s) == 0 && base + tid + s < n)
			g[base + tid] += g[base + tid + s];
		__syncthreads();
	}
	if (tid == 0)
		out[blockIdx.x] = g[base];
}

/* Ladder step 2: shared memory, interleaved addressing, divergent tid % (2s) branch. */
__global__ void ladder_interleaved(const int *in, int *out, unsigned n)
{
	extern __shared__ int sdata[];
	const unsigned tid = threadIdx.x;
	const size_t i = (size_t) blockIdx.x * blockDim.x + tid;

	sdata[tid] = i < n ? in[i] : 0;
	__syncthreads();
	for (unsigned s = 1; s < blockDim.x; s *= 2)
	{
		if (tid % (2 * s) == 0)
			sdata[tid] += sdata[tid + s];
		__syncthreads();
	}
	if (tid == 0)
		out[blockIdx.x] = sdata[0];
}

/* Ladder step 3: strided index, no divergent branch (but shared-memory bank conflicts). */
__global__ void ladder_strided(const int *in, int *out, unsigned n)
{
	extern __shared__ int sdata[];
	const unsigned tid = threadIdx.x;
	const size_t i = (size_t) blockIdx.x * blockDim.x + tid;

	sdata[tid] = i < n ? in[i] : 0;
	__syncthreads();
	for (unsigned s = 1; s < blockDim.x; s *= 2)
	{
		unsigned	index = 2 * s * tid;

		if (index < blockDim.x)
			sdata[index] += sdata[index + s];
		__syncthreads();
	}
	if (tid == 0)
		out[blockIdx.x] = sdata[0];
}

/* Ladder step 4: sequential addressing, no bank conflicts. */
__global__ void ladder_sequential(const int *in, int *out, unsigned n)
{
	extern __shared__ int sdata[];
	const unsigned tid = threadIdx.x;
	const size_t i = (size_t) blockIdx.x * blockDim.x + tid;

	sdata[tid] = i < n ? in[i] : 0;
	__syncthreads();
	for (unsigned s = blockDim.x / 2; s > 0; s >>= 1)
	{
		if (tid < s)
			sdata[tid] += sdata[tid + s];
		__syncthreads();
	}
	if (tid == 0)
		out[blockIdx.x] = sdata[0];
}

/* Ladder step 5: first add during the load, each block taking twice its size. */
__global__ void ladder_first_add(const int *in, int *out, unsigned n)
{
	extern __shared__ int sdata[];
	const unsigned tid = threadIdx.x;
	const size_t i = (size_t) blockIdx.x * blockDim.x * 2 + tid;

	sdata[tid] = (i < n ? in[i] : 0) + (i + blockDim.x < n ? in[i + blockDim.x] : 0);
	__syncthreads();
	for (unsigned s = blockDim.x / 2; s > 0; s >>= 1)
	{
		if (tid < s)
			sdata[tid] += sdata[tid + s];
		__syncthreads();
	}
	if (tid == 0)
		out[blockIdx.x] = sdata[0];
}

/* Ladder step 6: as step 5, the last warp unrolled with shuffles instead of barriers. */
__global__ void ladder_last_warp(const int *in, int *out, unsigned n)
{
	extern __shared__ int sdata[];
	const unsigned tid = threadIdx.x;
	const size_t i = (size_t) blockIdx.x * blockDim.x * 2 + tid;

	sdata[tid] = (i < n ? in[i] : 0) + (i + blockDim.x < n ? in[i + blockDim.x] : 0);
	__syncthreads();
	for (unsigned s = blockDim.x / 2; s > 32; s >>= 1)
	{
		if (tid < s)
			sdata[tid] += sdata[tid + s];
		__syncthreads();
	}
	if (tid < 32)
	{
		int			v = sdata[tid] + sdata[tid + 32];

		for (unsigned offset = 16; offset > 0; offset >>= 1)
			v += __shfl_down_sync(0xFFFFFFFFu, v, offset);
		if (tid == 0)
			out[blockIdx.x] = v;
	}
}

constexpr unsigned LADDER_THREADS = 256;

/* Enqueue ladder step `step` (1..6) as passes from in down to one value; returns where it is. */
int *ladder_passes(int step, int *in, unsigned n, int *a, int *b)
{
	cudaStream_t stream = gpuext::device_stream();
	const unsigned per_block = step >= 5 ? 2 * LADDER_THREADS : LADDER_THREADS;
	const size_t smem = LADDER_THREADS * sizeof(int);
	int		   *src = in;
	int		   *dst = a;

	for (;;)
	{
		unsigned	blocks = (n + per_block - 1) / per_block;

		switch (step)
		{
			case 1:
				ladder_global<<<blocks, LADDER_THREADS, 0, stream>>>(src, dst, n);
				break;
			case 2:
				ladder_interleaved<<<blocks, LADDER_THREADS, smem, stream>>>(src, dst, n);
				break;
			case 3:
				ladder_strided<<<blocks, LADDER_THREADS, smem, stream>>>(src, dst, n);
				break;
			case 4:
				ladder_sequential<<<blocks, LADDER_THREADS, smem, stream>>>(src, dst, n);
				break;
			case 5:
				ladder_first_add<<<blocks, LADDER_THREADS, smem, stream>>>(src, dst, n);
				break;
			default:
				ladder_last_warp<<<blocks, LADDER_THREADS, smem, stream>>>(src, dst, n);
				break;
		}
		check(cudaGetLastError(), "ladder kernel");
		if (blocks == 1)
			return dst;
		n = blocks;
		src = dst;
		dst = dst == a ? b : a;
	}
}

/* The ladder at n int32 values, beside the paper's Table 2, our kernel and CUB. */
void bench_ladder(unsigned n, void *d_temp, size_t temp_bytes, GpuextReduceResult *result)
{
	static const char *const names[] = {"1 global memory, interleaved", "2 shared, interleaved, divergent",
										"3 strided index, no divergence", "4 sequential addressing",
										"5 first add during load", "6 unrolled last warp"};
	static const double paper_ms[] = {625, 300, 186, 77, 44, 30};
	cudaStream_t stream = gpuext::device_stream();
	const int	ladder_runs = std::max(runs, 20);
	std::vector<int> host(n);
	int		   *in,
			   *work,
			   *a,
			   *b,
			   *sum_out;
	void	   *scratch = nullptr;
	size_t		scratch_bytes = 0;
	size_t		need = 0;
	long long	cpu_sum = 0;
	double		first = 0,
				prev = 0,
				cpu_ms;
	std::vector<double> cpu_runs;

	check(cudaMalloc(&in, (size_t) n * 4), "cudaMalloc");
	check(cudaMalloc(&work, (size_t) n * 4), "cudaMalloc");
	check(cudaMalloc(&a, (size_t) n * 4), "cudaMalloc");
	check(cudaMalloc(&b, (size_t) n * 4), "cudaMalloc");
	fill_small_kernel<<<1024, 256, 0, stream>>>(in, n, 7 + n);
	check(cudaMemcpyAsync(host.data(), in, (size_t) n * 4, cudaMemcpyDeviceToHost, stream), "download");
	check(cudaStreamSynchronize(stream), "sync");

	/* Sequential CPU sum, as the paper's baseline (median of the same number of runs). */
	for (int r = 0; r < ladder_runs; r++)
	{
		volatile long long sink;
		long long	s = 0;
		auto		t0 = std::chrono::steady_clock::now();

		for (unsigned i = 0; i < n; i++)
			s += host[i];
		sink = s;
		(void) sink;
		cpu_runs.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
		cpu_sum = s;
	}
	std::sort(cpu_runs.begin(), cpu_runs.end());
	cpu_ms = cpu_runs[cpu_runs.size() / 2];

	printf("ladder: int32 sum of n = %u (2^%d) values 1..100, %u threads per block; median of %d runs;\n"
		   "paper: Doroshenko & Zhereb 2009, Table 2 (total of 100 runs; CPU 578 ms)\n",
		   n, (int) std::lround(std::log2((double) n)), LADDER_THREADS, ladder_runs);
	printf("%-34s %9s %9s %8s %8s %8s %9s %8s %6s\n", "kernel", "ms", "x100 ms", "GB/s", "step", "total",
		   "paper ms", "paper", "check");
	printf("%-34s %9.4f %9.1f %8.1f %8s %8s %9.0f %8s\n", "sequential CPU", cpu_ms, 100 * cpu_ms,
		   (double) n * 4 / cpu_ms / 1e6, "", "", 578.0, "");
	for (int step = 1; step <= 6; step++)
	{
		int			got = 0;
		int		   *where = nullptr;
		double		ms;

		/* Step 1 overwrites its input: each run starts from a fresh copy, outside the timing. */
		{
			cudaStream_t s = stream;
			std::vector<float> t;

			for (int r = 0; r < ladder_runs + 2; r++)
			{
				float		x = 0;

				check(cudaMemcpyAsync(work, in, (size_t) n * 4, cudaMemcpyDeviceToDevice, s), "copy");
				check(cudaEventRecord(ev_start, s), "cudaEventRecord");
				where = ladder_passes(step, step == 1 ? work : in, n, a, b);
				check(cudaEventRecord(ev_stop, s), "cudaEventRecord");
				check(cudaEventSynchronize(ev_stop), "cudaEventSynchronize");
				check(cudaEventElapsedTime(&x, ev_start, ev_stop), "cudaEventElapsedTime");
				if (r >= 2)
					t.push_back(x);
			}
			std::sort(t.begin(), t.end());
			ms = t[t.size() / 2];
		}
		check(cudaMemcpy(&got, where, sizeof(int), cudaMemcpyDeviceToHost), "result download");
		if (step == 1)
			first = prev = ms;
		printf("%-34s %9.4f %9.1f %8.1f %7.2fx %7.2fx %9.0f %7.2fx %6s\n", names[step - 1], ms, 100 * ms,
			   (double) n * 4 / ms / 1e6, prev / ms, first / ms, paper_ms[step - 1], paper_ms[0] / paper_ms[step - 1],
			   got == cpu_sum ? "ok" : "WRONG");
		prev = ms;
	}

	sum_out = a;
	check(cub::DeviceReduce::Sum(nullptr, need, in, sum_out, n, stream), "cub Sum size");
	if (need > temp_bytes)
	{
		fprintf(stderr, "fatal: CUB wants %zu bytes\n", need);
		exit(2);
	}
	{
		double		ms = time_ms([&] { check(cub::DeviceReduce::Sum(d_temp, need, in, sum_out, n, stream), "cub"); },
								 ladder_runs);

		printf("%-34s %9.4f %9.1f %8.1f %8s %7.2fx\n", "CUB DeviceReduce::Sum", ms, 100 * ms,
			   (double) n * 4 / ms / 1e6, "", first / ms);
	}
	must(gpuext_reduce_scratch_bytes(4, 0, n, &scratch_bytes), "gpuext_reduce_scratch_bytes");
	must(gpuext_cuda_alloc(&scratch, scratch_bytes), "scratch allocation");
	{
		double		ms = time_ms([&] { must(gpuext_reduce(4, 0, in, n, scratch, scratch_bytes, result), "gpuext_reduce"); },
								 ladder_runs);

		check(cudaStreamSynchronize(stream), "sync");
		printf("%-34s %9.4f %9.1f %8.1f %8s %7.2fx %9s %8s %6s\n", "gpuext_reduce (sum, min, max)", ms, 100 * ms,
			   (double) n * 4 / ms / 1e6, "", first / ms, "", "",
			   (long long) result->isum_lo == cpu_sum && result->isum_hi == 0 ? "ok" : "WRONG");
	}
	printf("\n");
	gpuext_cuda_free(scratch);
	cudaFree(in);
	cudaFree(work);
	cudaFree(a);
	cudaFree(b);
}

}								/* namespace */

/* Open the device, then the type table and the ladder. */
int main(int argc, char **argv)
{
	GpuextDeviceInfo info;
	GpuextReduceResult *result = nullptr;
	void	   *d_in = nullptr;
	void	   *d_copy = nullptr;
	void	   *d_temp = nullptr;
	const size_t temp_bytes = 64 << 20;
	bool		quick = false;
	size_t		big;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
			runs = std::max(1, atoi(argv[++i]));
		else if (strcmp(argv[i], "--quick") == 0)
			quick = true;
		else
		{
			fprintf(stderr, "usage: %s [--runs N] [--quick]\n", argv[0]);
			return 2;
		}
	}
	must(gpuext_cuda_open(&info), "gpuext_cuda_open");
	printf("device: %s, compute capability %d.%d, %d SMs, %.1f GiB, driver %d.%d, runtime %d.%d\n", info.name,
		   info.cc_major, info.cc_minor, info.multiprocessors, info.memory_total / 1073741824.0,
		   info.driver_version / 1000, info.driver_version % 1000 / 10, info.runtime_version / 1000,
		   info.runtime_version % 1000 / 10);
	printf("timing: CUDA events on one stream, 2 warm-ups, median of %d runs; GB/s = input bytes read per second\n"
		   "(the D2D copy also writes as many bytes); %% D2D = copy time / this time; x CUB = this time / CUB Sum time\n\n",
		   runs);
	check(cudaEventCreate(&ev_start), "cudaEventCreate");
	check(cudaEventCreate(&ev_stop), "cudaEventCreate");
	must(gpuext_cuda_alloc_pinned(reinterpret_cast<void **>(&result), sizeof(GpuextReduceResult)), "pinned allocation");

	big = quick ? (size_t) 1 << 24 : (size_t) 1 << 30;
	must(gpuext_cuda_alloc(&d_in, big), "input allocation");
	must(gpuext_cuda_alloc(&d_copy, big), "copy allocation");
	must(gpuext_cuda_alloc(&d_temp, temp_bytes), "CUB temporary allocation");

	printf("%-7s %11s  %-14s %9s %9s %9s %9s\n", "type", "n", "op", "ms", "GB/s", "% D2D", "x CUB");
	bench_type<int32_t>("int4", 0, big / 4, d_in, d_copy, d_temp, temp_bytes, result);
	bench_type<double>("float8", 1, big / 8, d_in, d_copy, d_temp, temp_bytes, result);
	bench_type<int16_t>("int2", 0, big / 2, d_in, d_copy, d_temp, temp_bytes, result);
	bench_type<int64_t>("int8", 0, big / 8, d_in, d_copy, d_temp, temp_bytes, result);
	bench_type<float>("float4", 1, big / 4, d_in, d_copy, d_temp, temp_bytes, result);
	bench_int128(big / 16, d_in, d_copy, result);
	gpuext_cuda_free(d_in);
	gpuext_cuda_free(d_copy);

	for (unsigned n : {1u << 22, 1u << 24})
		bench_ladder(quick ? n >> 4 : n, d_temp, temp_bytes, result);

	printf("bar (H100: >= 90%% of D2D copy bandwidth, within 10%% of CUB Sum):\n");
	for (const Bars &b : bars)
		printf("  %-7s %6.1f%% of D2D, %.3fx CUB Sum: %s\n", b.what, b.pct_d2d, b.vs_cub,
			   b.pct_d2d >= 90 && b.vs_cub <= 1.10 ? "meets the bar" : "MISSES THE BAR");
	gpuext_cuda_free(d_temp);
	gpuext_cuda_free_pinned(result);
	return 0;
}
