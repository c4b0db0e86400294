/*
 * matmul_bench.cu
 *		gpuext_matmul's three kernels beside cuBLAS and the device's FMA peak,
 *		and the CPU's product (gpuext_matmul_cpu) for the crossover that
 *		gpu_matmul's auto uses.  Needs a GPU.
 *
 *	matmul_bench [--csv FILE] [--max-n N]
 *
 * Square n x n products, n = 512 .. 8192, float and double: naive, tiled,
 * blocked, and cublasSgemm / cublasDgemm with CUBLAS_DEFAULT_MATH (no TF32:
 * single precision runs on the FP32 units, as ours does).  Kernel time: CUDA
 * events on gpuext's stream around one call, after a warm-up, median of 3 to
 * 20 runs.  End-to-end time: the same with the copies of A and B from pinned
 * host memory and of C back.  The FMA peak is both computed (SMs x 128 FP32
 * lanes x the clock the device reports) and measured (a kernel of
 * independent fma chains).  The three kernels' outputs must have the same
 * bits at every n.  The crossover compares the CPU's product with the
 * device end to end and with a whole call as gpu_matmul's device path makes
 * it (allocation, staging, copies, product, free); the latter decides.  Prints a CSV (also to --csv) and a summary with the two
 * bars: tiled >= 10x naive at n = 4096, blocked >= 50% of cuBLAS SGEMM.
 */
#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include <cublas_v2.h>

#include "bench_common.cuh"
#include "device_internal.cuh"

namespace
{

FILE	   *csv = nullptr;

/* Stop on a cuBLAS failure. */
void check_blas(cublasStatus_t st, const char *what)
{
	if (st == CUBLAS_STATUS_SUCCESS)
		return;
	fprintf(stderr, "fatal: %s: cuBLAS status %d\n", what, (int) st);
	exit(2);
}

/* A CSV line to stdout and the --csv file. */
void csv_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void csv_line(const char *fmt, ...)
{
	va_list		ap;
	char		line[512];

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	printf("%s\n", line);
	if (csv)
		fprintf(csv, "%s\n", line);
}

/* Uniform values in [-1, 1) from mix(), never all zeros. */
template <typename T>
__global__ void fill_kernel(T *p, size_t count, uint64_t seed)
{
	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < count; i += (size_t) gridDim.x * blockDim.x)
		p[i] = T((double) (mix(i, seed) >> 11) * 0x1p-52 - 1.0);
}

/* Count the elements of two arrays whose bits differ (W: the unsigned integer of T's width). */
template <typename W>
__global__ void differ_kernel(const W *x, const W *y, size_t count, unsigned long long *out)
{
	unsigned long long local = 0;

	for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < count; i += (size_t) gridDim.x * blockDim.x)
		local += x[i] != y[i];
	if (local)
		atomicAdd(out, local);
}

/* Independent fma chains: the FP32 (or FP64) rate the device reaches. */
template <typename T>
__global__ void fma_peak_kernel(T *out, int iters, T s)
{
	T			v[8];

#pragma unroll
	for (int c = 0; c < 8; c++)
		v[c] = T(threadIdx.x + c);
	for (int i = 0; i < iters; i++)
#pragma unroll
		for (int c = 0; c < 8; c++)
			v[c] = fma(v[c], s, T(0.5));
	T			sum = 0;

#pragma unroll
	for (int c = 0; c < 8; c++)
		sum += v[c];
	if (sum == T(12345.678))
		out[0] = sum;
}

/* Median milliseconds of fn on the stream: one warm-up, then runs until ~1 s (3 to 20). */
double time_ms(const std::function<void()> &fn)
{
	cudaStream_t stream = gpuext::device_stream();
	cudaEvent_t e0,
				e1;
	std::vector<double> t;
	float		ms = 0;

	check(cudaEventCreate(&e0), "event");
	check(cudaEventCreate(&e1), "event");
	fn();
	check(cudaStreamSynchronize(stream), "warm-up");
	for (int r = 0; r < 20; r++)
	{
		check(cudaEventRecord(e0, stream), "record");
		fn();
		check(cudaEventRecord(e1, stream), "record");
		check(cudaEventSynchronize(e1), "sync");
		check(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
		t.push_back(ms);
		double		total = 0;

		for (double x : t)
			total += x;
		if (t.size() >= 3 && total > 1000)
			break;
	}
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	std::sort(t.begin(), t.end());
	return t[t.size() / 2];
}

/* Measured FMA rate of type T in GFLOP/s (2 flops a fma). */
template <typename T>
double measured_peak(int sms)
{
	T		   *out;
	const int	iters = 1 << 16;
	const int	blocks = sms * 8,
				threads = 256;

	check(cudaMalloc(&out, sizeof(T)), "malloc");
	double		ms = time_ms([&] {
		fma_peak_kernel<T><<<blocks, threads, 0, gpuext::device_stream()>>>(out, iters, T(0.999));
	});

	check(cudaGetLastError(), "fma_peak_kernel");
	cudaFree(out);
	return 2.0 * 8 * iters * (double) blocks * threads / (ms * 1e6);
}

struct Row
{
	double		kernel_ms[4];	/* naive, tiled, blocked, cuBLAS */
	double		e2e_ms[2];		/* blocked, cuBLAS */
	unsigned long long differ;	/* elements where naive, tiled and blocked disagree */
};

/* Every algorithm at n for type T; results into row. */
template <typename T>
Row run_size(cublasHandle_t blas, size_t n)
{
	cudaStream_t stream = gpuext::device_stream();
	size_t		count = n * n,
				bytes = count * sizeof(T);
	T		   *a,
			   *b,
			   *c[4];
	void	   *host;
	unsigned long long *d_diff,
				diff = 0;
	Row			row = {};
	const T		one = 1,
				zero = 0;

	check(cudaMalloc(&a, bytes), "malloc");
	check(cudaMalloc(&b, bytes), "malloc");
	for (auto &p : c)
		check(cudaMalloc(&p, bytes), "malloc");
	check(cudaMalloc(&d_diff, sizeof(*d_diff)), "malloc");
	must(gpuext_cuda_alloc_pinned(&host, 3 * bytes), "pinned");
	fill_kernel<T><<<1024, 256, 0, stream>>>(a, count, 1);
	fill_kernel<T><<<1024, 256, 0, stream>>>(b, count, 2);
	check(cudaMemcpyAsync(host, a, bytes, cudaMemcpyDeviceToHost, stream), "copy");
	check(cudaMemcpyAsync(static_cast<char *>(host) + bytes, b, bytes, cudaMemcpyDeviceToHost, stream), "copy");
	check(cudaStreamSynchronize(stream), "fill");

	const GpuextMatmulAlgo algos[3] = {GPUEXT_MATMUL_NAIVE, GPUEXT_MATMUL_TILED, GPUEXT_MATMUL_BLOCKED};
	auto blas_gemm = [&](T *out) {
		/* Row-major C = A B is column-major C^T = B^T A^T. */
		if constexpr (sizeof(T) == 4)
			check_blas(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, n, a, n, &zero, out, n), "sgemm");
		else
			check_blas(cublasDgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, n, a, n, &zero, out, n), "dgemm");
	};

	for (int i = 0; i < 3; i++)
		row.kernel_ms[i] = time_ms([&] { must(gpuext_matmul(algos[i], sizeof(T), a, b, c[i], n, n, n), "matmul"); });
	row.kernel_ms[3] = time_ms([&] { blas_gemm(c[3]); });
	/* End to end: A and B up from pinned memory, the product, C back. */
	char	   *h = static_cast<char *>(host);

	row.e2e_ms[0] = time_ms([&] {
		check(cudaMemcpyAsync(a, h, bytes, cudaMemcpyHostToDevice, stream), "up");
		check(cudaMemcpyAsync(b, h + bytes, bytes, cudaMemcpyHostToDevice, stream), "up");
		must(gpuext_matmul(GPUEXT_MATMUL_BLOCKED, sizeof(T), a, b, c[2], n, n, n), "matmul");
		check(cudaMemcpyAsync(h + 2 * bytes, c[2], bytes, cudaMemcpyDeviceToHost, stream), "down");
	});
	row.e2e_ms[1] = time_ms([&] {
		check(cudaMemcpyAsync(a, h, bytes, cudaMemcpyHostToDevice, stream), "up");
		check(cudaMemcpyAsync(b, h + bytes, bytes, cudaMemcpyHostToDevice, stream), "up");
		blas_gemm(c[3]);
		check(cudaMemcpyAsync(h + 2 * bytes, c[3], bytes, cudaMemcpyDeviceToHost, stream), "down");
	});
	for (int i = 1; i < 3; i++)
	{
		check(cudaMemsetAsync(d_diff, 0, sizeof(*d_diff), stream), "memset");
		using W = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

		differ_kernel<W><<<1024, 256, 0, stream>>>(reinterpret_cast<const W *>(c[0]), reinterpret_cast<const W *>(c[i]),
												  count, d_diff);
		check(cudaMemcpyAsync(&diff, d_diff, sizeof(diff), cudaMemcpyDeviceToHost, stream), "copy");
		check(cudaStreamSynchronize(stream), "differ");
		row.differ += diff;
	}
	gpuext_cuda_free_pinned(host);
	cudaFree(d_diff);
	for (auto &p : c)
		cudaFree(p);
	cudaFree(a);
	cudaFree(b);
	return row;
}

/* Milliseconds of the CPU's product at n (median of 3, or one run when it takes over a second). */
template <typename T>
double cpu_ms(size_t n, std::vector<T> &a, std::vector<T> &b, std::vector<T> &c)
{
	std::vector<double> t;

	for (int r = 0; r < 5; r++)
	{
		auto		t0 = std::chrono::steady_clock::now();

		must(gpuext_matmul_cpu(sizeof(T), a.data(), b.data(), c.data(), 0, n, n, n, nullptr, nullptr), "cpu");
		t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
		if (t.back() > 1000)
			break;
	}
	std::sort(t.begin(), t.end());
	return t[t.size() / 2];
}

/*
 * Milliseconds of one product as gpu_matmul's device path does it, on the
 * host clock: allocate device memory, stage A and B through pinned memory,
 * copy, multiply, copy back, read out of pinned memory, free (median of 5).
 */
template <typename T>
double call_ms(size_t n, std::vector<T> &a, std::vector<T> &b)
{
	size_t		bytes = n * n * sizeof(T);
	std::vector<T> c(n * n);
	std::vector<double> t;
	void	   *host;

	must(gpuext_cuda_alloc_pinned(&host, 3 * bytes), "pinned");
	for (int r = 0; r < 6; r++)
	{
		char	   *h = static_cast<char *>(host);
		void	   *d;
		auto		t0 = std::chrono::steady_clock::now();

		must(gpuext_cuda_alloc(&d, 3 * bytes), "alloc");
		memcpy(h, a.data(), bytes);
		memcpy(h + bytes, b.data(), bytes);
		must(gpuext_cuda_copy_to_device(d, h, 2 * bytes), "up");
		must(gpuext_matmul(GPUEXT_MATMUL_BLOCKED, sizeof(T), d, static_cast<T *>(d) + n * n,
						   static_cast<T *>(d) + 2 * n * n, n, n, n), "matmul");
		must(gpuext_cuda_copy_to_host(h + 2 * bytes, static_cast<T *>(d) + 2 * n * n, bytes), "down");
		must(gpuext_cuda_wait(-1, nullptr, nullptr), "wait");
		memcpy(c.data(), h + 2 * bytes, bytes);
		gpuext_cuda_free(d);
		if (r > 0)
			t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
	}
	gpuext_cuda_free_pinned(host);
	std::sort(t.begin(), t.end());
	return t[t.size() / 2];
}

/* The CPU's product against the device's end to end (blocked, pinned copies) at small n: the crossover. */
template <typename T>
size_t crossover()
{
	const char *tname = sizeof(T) == 4 ? "float" : "double";
	cudaStream_t stream = gpuext::device_stream();
	const size_t sizes[] = {8, 16, 24, 32, 48, 64, 96, 128, 160, 192, 256, 384, 512};
	size_t		found = 0;

	for (size_t n : sizes)
	{
		size_t		bytes = n * n * sizeof(T);
		std::vector<T> a(n * n), b(n * n), c(n * n);
		T		   *d;
		void	   *host;

		for (size_t i = 0; i < n * n; i++)
		{
			a[i] = T((double) (mix(i, 3) >> 11) * 0x1p-52 - 1.0);
			b[i] = T((double) (mix(i, 4) >> 11) * 0x1p-52 - 1.0);
		}
		check(cudaMalloc(&d, 3 * bytes), "malloc");
		must(gpuext_cuda_alloc_pinned(&host, 3 * bytes), "pinned");
		memcpy(host, a.data(), bytes);
		memcpy(static_cast<char *>(host) + bytes, b.data(), bytes);

		char	   *h = static_cast<char *>(host);
		double		gpu = time_ms([&] {
			check(cudaMemcpyAsync(d, h, 2 * bytes, cudaMemcpyHostToDevice, stream), "up");
			must(gpuext_matmul(GPUEXT_MATMUL_BLOCKED, sizeof(T), d, d + n * n, d + 2 * n * n, n, n, n), "matmul");
			check(cudaMemcpyAsync(h + 2 * bytes, d + 2 * n * n, bytes, cudaMemcpyDeviceToHost, stream), "down");
		});
		double		cpu = cpu_ms<T>(n, a, b, c);
		bool		same = memcmp(c.data(), h + 2 * bytes, bytes) == 0;
		double		call = call_ms<T>(n, a, b);

		csv_line("crossover,%s,%zu,%.4f,%.4f,%.4f,%s", tname, n, cpu, gpu, call, same ? "same-bits" : "BITS-DIFFER");
		if (!found && call < cpu)
			found = n;
		gpuext_cuda_free_pinned(host);
		cudaFree(d);
	}
	return found;
}

}								/* namespace */

/* Measure, print the CSV and the summary. */
int main(int argc, char **argv)
{
	GpuextDeviceInfo info;
	size_t		max_n = 8192;
	int			clock_khz = 0;
	cublasHandle_t blas;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc)
			csv = fopen(argv[++i], "w");
		else if (strcmp(argv[i], "--max-n") == 0 && i + 1 < argc)
			max_n = strtoull(argv[++i], nullptr, 0);
		else
		{
			fprintf(stderr, "usage: %s [--csv FILE] [--max-n N]\n", argv[0]);
			return 2;
		}
	}
	must(gpuext_cuda_open(&info), "open");
	check(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0), "clock rate");
	check_blas(cublasCreate(&blas), "cublasCreate");
	check_blas(cublasSetStream(blas, gpuext::device_stream()), "cublasSetStream");
	check_blas(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");

	double		computed32 = 2.0 * info.multiprocessors * 128 * clock_khz * 1e3 / 1e9;
	double		peak32 = measured_peak<float>(info.multiprocessors);
	double		peak64 = measured_peak<double>(info.multiprocessors);

	printf("device: %s, %d SMs, clock %.0f MHz, driver %d, runtime %d\n", info.name, info.multiprocessors,
		   clock_khz / 1e3, info.driver_version, info.runtime_version);
	csv_line("peak,fp32_computed_gflops,%.0f", computed32);
	csv_line("peak,fp32_measured_gflops,%.0f", peak32);
	csv_line("peak,fp64_measured_gflops,%.0f", peak64);
	csv_line("type,n,algo,kernel_ms,gflops,of_cublas,e2e_ms,e2e_gflops,bits_vs_naive");

	const char *names[4] = {"naive", "tiled", "blocked", "cublas"};
	double		tiled_over_naive[2] = {0, 0};
	double		blocked_of_sgemm_4096 = 0,
				blocked_of_sgemm_min = 1e9;
	std::vector<std::string> summary;

	for (int t = 0; t < 2; t++)
		for (size_t n = 512; n <= max_n; n *= 2)
		{
			Row			r = t == 0 ? run_size<float>(blas, n) : run_size<double>(blas, n);
			double		flops = 2.0 * n * n * n;
			const char *tname = t == 0 ? "float" : "double";
			char		line[256];

			for (int i = 0; i < 4; i++)
			{
				double		e2e = i == 2 ? r.e2e_ms[0] : i == 3 ? r.e2e_ms[1] : 0;

				csv_line("%s,%zu,%s,%.3f,%.0f,%.3f,%.3f,%.0f,%s", tname, n, names[i], r.kernel_ms[i],
						 flops / (r.kernel_ms[i] * 1e6), r.kernel_ms[3] / r.kernel_ms[i], e2e,
						 e2e > 0 ? flops / (e2e * 1e6) : 0.0,
						 i == 3 ? "n/a" : r.differ ? "DIFFER" : "same");
			}
			snprintf(line, sizeof(line), "%-6s %5zu %9.0f %9.0f %9.0f %9.0f %7.1f%% %8.1fx %s", tname, n,
					 flops / (r.kernel_ms[0] * 1e6), flops / (r.kernel_ms[1] * 1e6), flops / (r.kernel_ms[2] * 1e6),
					 flops / (r.kernel_ms[3] * 1e6), 100 * r.kernel_ms[3] / r.kernel_ms[2],
					 r.kernel_ms[0] / r.kernel_ms[1], r.differ ? "BITS DIFFER" : "same bits");
			summary.push_back(line);
			if (n == 4096)
				tiled_over_naive[t] = r.kernel_ms[0] / r.kernel_ms[1];
			if (t == 0 && n == 4096)
				blocked_of_sgemm_4096 = r.kernel_ms[3] / r.kernel_ms[2];
			if (t == 0 && n >= 1024)
				blocked_of_sgemm_min = std::min(blocked_of_sgemm_min, r.kernel_ms[3] / r.kernel_ms[2]);
		}
	csv_line("crossover,type,n,cpu_ms,gpu_e2e_ms,gpu_call_ms,bits");
	size_t		cross32 = crossover<float>();
	size_t		cross64 = crossover<double>();

	printf("\n== summary: %s, FP32 peak %.0f GFLOP/s computed (%d SMs x 128 x %.0f MHz x 2), %.0f measured; "
		   "FP64 %.0f measured\n", info.name, computed32, info.multiprocessors, clock_khz / 1e3, peak32, peak64);
	printf("type       n     naive     tiled   blocked    cuBLAS blk/cuBLAS tiled/naive  (GFLOP/s, kernel time)\n");
	for (const auto &s : summary)
		printf("%s\n", s.c_str());
	printf("bar 1: tiled >= 10x naive at n = 4096: float %.1fx, double %.1fx: %s\n", tiled_over_naive[0],
		   tiled_over_naive[1], tiled_over_naive[0] >= 10 && tiled_over_naive[1] >= 10 ? "MET" : "MISSED");
	printf("bar 2: blocked >= 50%% of cuBLAS SGEMM (no TF32): %.1f%% at n = 4096, %.1f%% at worst n >= 1024: %s\n",
		   100 * blocked_of_sgemm_4096, 100 * blocked_of_sgemm_min, blocked_of_sgemm_4096 >= 0.5 ? "MET" : "MISSED");
	printf("crossover (CPU product vs a whole device call as gpu_matmul makes it, first n where the device wins): float n = %zu (%zu fma), "
		   "double n = %zu (%zu fma)\n", cross32, cross32 * cross32 * cross32, cross64, cross64 * cross64 * cross64);
	cublasDestroy(blas);
	if (csv)
		fclose(csv);
	return 0;
}
