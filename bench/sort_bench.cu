/*
 * sort_bench.cu
 *		Device sort speed against n, for every gpuext algorithm and key width,
 *		beside CUB's DeviceRadixSort and DeviceMergeSort and the memory-bandwidth
 *		bound (a device-to-device copy of the same bytes), all in one run.
 *
 *	sort_bench [--quick] [--csv PATH] [--meta PATH] [--min-log2 K] [--max-log2 K]
 *			   [--pattern-log2 K] [--runs N] [--seed N] [--no-cpu] [--shapes]
 *
 * Sections of the CSV (one row per case; status ok, skipped, not_sorted):
 *	 sweep	  random keys, n = 2^k and 2^k + 1 for k in [min, max]: types u32 and
 *			  u64 (keys alone) and pairs32 / pairs64 ((key, uint32 row index)
 *			  pairs: gpuext_sort_pairs' bitonic sort, gpuext_sort_rows, the
 *			  ORDER BY node's sort, and CUB's SortPairs); "d2d_copy" is the
 *			  bound: copying the keys (and indices) once, as any sort must at
 *			  least read and write them.
 *	 pattern  n = 2^pattern-log2 over sorted, reverse, 16-distinct and
 *			  all-equal inputs beside random ones.
 *	 transfer pinned host <-> device copies of the keys (the end-to-end cost
 *			  around a kernel).
 *	 cpu	  one CPU core: std::sort, and the odd-even transposition sort of
 *			  the classic tutorial (its claim: the GPU version is about #SMs times
 *			  faster).
 *	 shapes	  (--shapes) bitonic with each tile shape, n = 2^k and 2^k + 1 for
 *			  k in [min, min(max, 22)] (24 for pairs64): the measurements
 *			  behind pick_shape.
 * Timing: everything runs on gpuext's stream; CUDA events around one call of
 * the sort (launches and any host waits inside it included), the input
 * restored before each run outside the events; warm-ups first, then the
 * median of the runs; wall_ms is the host's view of the same call plus its
 * wait.  Keys come from splitmix64 on the device, never zeros; every case's
 * last output is checked on the device: ascending, and the same multiset of
 * keys (or a permutation of row numbers that orders the keys).
 */
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>

#include "sort_keys.cuh"
#include "bench_common.cuh"

namespace
{

enum Pattern
{
	RANDOM,
	SORTED,
	REVERSE,
	FEW_16,
	ALL_EQUAL
};
const char *const PATTERN_NAMES[] = {"random", "sorted", "reverse", "16-distinct", "all-equal"};

int			forced_runs = 0;
bool		quick = false;
uint64_t	seed = 0x5EEDB0A710ull;
FILE	   *csv = nullptr;
cudaEvent_t ev_start;
cudaEvent_t ev_stop;
unsigned long long *d_check = nullptr;	/* [0] descents, [1] checksum, [2] mismatches */
void	   *pinned = nullptr;

/* Keys of a pattern over the whole range of K (random ones never 0). */
template <typename K>
__global__ void fill_kernel(K *keys, size_t n, int pattern, uint64_t s)
{
	const K		top = (K) ~(K) 0;
	const K		stride = top / (K) (n + 1) > 0 ? top / (K) (n + 1) : (K) 1;

	for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
	{
		uint64_t	r = mix(i, s);
		K			k;

		if (pattern == SORTED)
			k = (K) ((i + 1) * stride);
		else if (pattern == REVERSE)
			k = (K) ((n - i) * stride);
		else if (pattern == FEW_16)
			k = (K) (mix(r % 16, s) | 1);
		else if (pattern == ALL_EQUAL)
			k = (K) 0x5A5A5A5A5A5A5A5Aull;
		else
			k = (K) r != 0 ? (K) r : (K) 1;
		keys[i] = k;
	}
}

/* Widen 32-bit keys to the 64-bit words gpuext_sort_rows takes. */
__global__ void widen_kernel(const uint32_t *in, uint64_t *out, size_t n)
{
	for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
		out[i] = in[i];
}

/* Row numbers 0 .. n-1. */
__global__ void iota_kernel(uint32_t *idx, size_t n)
{
	for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
		idx[i] = (uint32_t) i;
}

/* Descents in keys and the order-free checksum sum(mix(key)). */
template <typename K>
__global__ void check_keys_kernel(const K *keys, size_t n, unsigned long long *out)
{
	unsigned long long descents = 0;
	unsigned long long sum = 0;

	for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
	{
		sum += mix(keys[i], 1);
		if (i + 1 < n && keys[i] > keys[i + 1])
			descents++;
	}
	atomicAdd(&out[0], descents);
	atomicAdd(&out[1], sum);
}

/* Descents of keys[order[i]], checksum sum(mix(order[i])), and row numbers out of range. */
template <typename K>
__global__ void check_order_kernel(const K *keys, const uint32_t *order, size_t n, unsigned long long *out)
{
	unsigned long long descents = 0;
	unsigned long long sum = 0;
	unsigned long long bad = 0;

	for (size_t i = (size_t) blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t) gridDim.x * blockDim.x)
	{
		uint32_t	o = order[i];

		sum += mix(o, 1);
		if (o >= n)
			bad++;
		else if (i + 1 < n && order[i + 1] < n && keys[o] > keys[order[i + 1]])
			descents++;
	}
	atomicAdd(&out[0], descents);
	atomicAdd(&out[1], sum);
	atomicAdd(&out[2], bad);
}

/* Run a check kernel and return descents, checksum and mismatches. */
template <typename F>
std::vector<unsigned long long> run_check(F launch)
{
	std::vector<unsigned long long> h(3);
	cudaStream_t stream = gpuext::device_stream();

	check(cudaMemsetAsync(d_check, 0, 3 * sizeof(unsigned long long), stream), "memset");
	launch(stream);
	check(cudaGetLastError(), "check kernel");
	check(cudaMemcpyAsync(h.data(), d_check, 3 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream),
		  "check copy");
	check(cudaStreamSynchronize(stream), "check sync");
	return h;
}

/* Keys ascending and the same multiset as the source? */
template <typename K>
bool keys_ok(const void *src, const void *out, size_t n)
{
	auto		a = run_check([&](cudaStream_t s) {
		check_keys_kernel<K><<<512, 256, 0, s>>>(static_cast<const K *>(src), n, d_check); });
	auto		b = run_check([&](cudaStream_t s) {
		check_keys_kernel<K><<<512, 256, 0, s>>>(static_cast<const K *>(out), n, d_check); });

	return b[0] == 0 && a[1] == b[1];
}

/* order (beside iota, 0 .. n-1) a permutation of 0 .. n-1 that sorts keys? */
template <typename K>
bool order_ok(const void *keys, const uint32_t *order, const uint32_t *iota, size_t n)
{
	auto		a = run_check([&](cudaStream_t s) {
		check_order_kernel<K><<<512, 256, 0, s>>>(static_cast<const K *>(keys), order, n, d_check); });
	auto		b = run_check([&](cudaStream_t s) {
		check_keys_kernel<uint32_t><<<512, 256, 0, s>>>(iota, n, d_check); });

	return a[0] == 0 && a[2] == 0 && a[1] == b[1];
}

struct Timing
{
	int			runs = 0;
	double		median_ms = 0;
	double		min_ms = 0;
	double		wall_ms = 0;
};

/* Median of a sorted-in-place vector. */
double median(std::vector<double> &v)
{
	std::sort(v.begin(), v.end());
	return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

/* Timed runs for n: more for small inputs, whose times are short and noisy. */
int runs_for(size_t n)
{
	if (forced_runs > 0)
		return forced_runs;
	if (quick)
		return 3;
	return n <= (1u << 20) ? 15 : n <= (1u << 24) ? 7 : 5;
}

/* Warm up, then time run() between events after prepare() (untimed) each time. */
Timing time_case(size_t n, const std::function<void()> &prepare, const std::function<void()> &run)
{
	cudaStream_t stream = gpuext::device_stream();
	const int	warmups = n <= (1u << 20) ? 2 : 1;
	Timing		t;
	std::vector<double> ev,
				wall;

	t.runs = runs_for(n);
	for (int r = 0; r < warmups + t.runs; r++)
	{
		float		ms = 0;

		prepare();
		check(cudaStreamSynchronize(stream), "prepare");
		auto		t0 = std::chrono::steady_clock::now();

		check(cudaEventRecord(ev_start, stream), "cudaEventRecord");
		run();
		check(cudaEventRecord(ev_stop, stream), "cudaEventRecord");
		check(cudaEventSynchronize(ev_stop), "cudaEventSynchronize");
		auto		t1 = std::chrono::steady_clock::now();

		check(cudaEventElapsedTime(&ms, ev_start, ev_stop), "cudaEventElapsedTime");
		if (r >= warmups)
		{
			ev.push_back(ms);
			wall.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
		}
	}
	t.median_ms = median(ev);
	t.min_ms = ev.front();
	t.wall_ms = median(wall);
	return t;
}

/* One result: a CSV row and a table line. */
void emit(const char *section, const char *algo, const char *type, size_t n, const char *pattern,
		  const Timing *t, const char *status, const std::string &note)
{
	double		rate = t && t->median_ms > 0 ? n / t->median_ms * 1e3 : 0;

	if (t)
		printf("%-8s %-12s %-8s %10zu %-11s %10.4f %10.4f %10.1f  %s%s%s\n", section, algo, type, n, pattern,
			   t->median_ms, t->wall_ms, rate / 1e6, status, note.empty() ? "" : ": ", note.c_str());
	else
		printf("%-8s %-12s %-8s %10zu %-11s %10s %10s %10s  %s%s%s\n", section, algo, type, n, pattern, "", "", "",
			   status, note.empty() ? "" : ": ", note.c_str());
	fflush(stdout);
	if (csv)
	{
		if (t)
			fprintf(csv, "%s,%s,%s,%zu,%s,%d,%.6f,%.6f,%.6f,%.1f,%s,\"%s\"\n", section, algo, type, n, pattern,
					t->runs, t->median_ms, t->min_ms, t->wall_ms, rate, status, note.c_str());
		else
			fprintf(csv, "%s,%s,%s,%zu,%s,,,,,,%s,\"%s\"\n", section, algo, type, n, pattern, status,
					note.c_str());
		fflush(csv);
	}
}

/* Device buffers, each large enough for the largest case. */
struct Buffers
{
	void	   *src;			/* pristine keys (u32 or u64) */
	void	   *work;			/* keys sorted in place */
	void	   *out;			/* CUB radix output keys */
	void	   *wide;			/* pairs32: the keys widened to 64-bit words */
	uint32_t   *idx_src;		/* 0 .. n-1 */
	uint32_t   *idx;			/* row indices sorted along */
	uint32_t   *idx_out;		/* CUB radix output indices */
};

/* Device scratch of at least bytes, kept and grown across cases. */
void	   *
scratch_at_least(size_t bytes)
{
	static void *p = nullptr;
	static size_t have = 0;

	if (bytes > have)
	{
		if (p)
			gpuext_cuda_free(p);
		have = std::max(bytes, (size_t) 1 << 20);
		must(gpuext_cuda_alloc(&p, have), "scratch allocation");
	}
	return p;
}

struct Less
{
	template <typename T>
	__device__ bool operator()(const T &a, const T &b) const
	{
		return a < b;
	}
};

const GpuextSortAlgo OWN[] = {GPUEXT_SORT_BITONIC, GPUEXT_SORT_QUICKSORT, GPUEXT_SORT_ODDEVEN, GPUEXT_SORT_RADIX};
const char *const OWN_NAMES[] = {"bitonic", "quicksort", "oddeven", "radix"};

/* Cases that took longer than this per run are not tried at larger n. */
constexpr double SLOW_MS = 2000;

/*
 * Keys alone of type K (u32 or u64), keys already in b.src: gpuext's
 * algorithms, CUB radix and merge sort, and the copy bound.  slow[] carries
 * the per-algorithm "too slow" state across sizes.
 */
template <typename K>
void bench_keys(const char *section, const char *type, size_t n, const char *pattern, const Buffers &b,
				bool with_bound, bool with_merge, std::vector<double> &slow)
{
	cudaStream_t stream = gpuext::device_stream();
	const size_t bytes = n * sizeof(K);
	auto		restore = [&] { check(cudaMemcpyAsync(b.work, b.src, bytes, cudaMemcpyDeviceToDevice, stream),
									  "restore"); };
	auto		nothing = [] {};
	char		note[160];

	for (int a = 0; a < 4; a++)
	{
		size_t		sb = 0,
					hb = 0;

		if (OWN[a] == GPUEXT_SORT_ODDEVEN && n > GPUEXT_ODDEVEN_MAX_ELEMENTS)
		{
			snprintf(note, sizeof(note), "quadratic: limited to %d keys", GPUEXT_ODDEVEN_MAX_ELEMENTS);
			emit(section, OWN_NAMES[a], type, n, pattern, nullptr, "skipped", note);
			continue;
		}
		if (slow[a] > SLOW_MS)
		{
			snprintf(note, sizeof(note), "a smaller size took %.0f ms a run", slow[a]);
			emit(section, OWN_NAMES[a], type, n, pattern, nullptr, "skipped", note);
			continue;
		}
		must(gpuext_sort_scratch_bytes(OWN[a], sizeof(K), n, &sb, &hb), "scratch size");
		void	   *scratch = scratch_at_least(sb);
		void	   *host = nullptr;

		if (hb > 0)
			must(gpuext_cuda_alloc_pinned(&host, hb), "host scratch");
		Timing		t = time_case(n, restore, [&] {
			must(gpuext_sort_keys(OWN[a], sizeof(K), b.work, n, scratch, sb, host, hb, nullptr, nullptr),
				 OWN_NAMES[a]); });

		if (host)
			gpuext_cuda_free_pinned(host);
		slow[a] = t.median_ms;
		emit(section, OWN_NAMES[a], type, n, pattern, &t, keys_ok<K>(b.src, b.work, n) ? "ok" : "not_sorted",
			 OWN[a] == GPUEXT_SORT_RADIX ? "gpuext_sort_keys radix (CUB inside)" : "");
	}

	/* CUB DeviceRadixSort, out of place (the input is not touched: nothing to restore). */
	{
		size_t		tb = 0;

		check(cub::DeviceRadixSort::SortKeys(nullptr, tb, (const K *) b.src, (K *) b.out, (uint32_t) n, 0,
											 (int) sizeof(K) * 8, stream), "cub radix size");
		void	   *temp = scratch_at_least(tb);
		Timing		t = time_case(n, nothing, [&] {
			check(cub::DeviceRadixSort::SortKeys(temp, tb, (const K *) b.src, (K *) b.out, (uint32_t) n, 0,
												 (int) sizeof(K) * 8, stream), "cub radix"); });

		emit(section, "cub_radix", type, n, pattern, &t, keys_ok<K>(b.src, b.out, n) ? "ok" : "not_sorted",
			 "cub::DeviceRadixSort::SortKeys, out of place");
	}
	if (with_merge)
	{
		size_t		tb = 0;

		check(cub::DeviceMergeSort::SortKeys(nullptr, tb, (K *) b.work, (int) n, Less(), stream), "cub merge size");
		void	   *temp = scratch_at_least(tb);
		Timing		t = time_case(n, restore, [&] {
			check(cub::DeviceMergeSort::SortKeys(temp, tb, (K *) b.work, (int) n, Less(), stream), "cub merge"); });

		emit(section, "cub_merge", type, n, pattern, &t, keys_ok<K>(b.src, b.work, n) ? "ok" : "not_sorted",
			 "cub::DeviceMergeSort::SortKeys, in place");
	}
	if (with_bound)
	{
		Timing		t = time_case(n, nothing, [&] {
			check(cudaMemcpyAsync(b.out, b.src, bytes, cudaMemcpyDeviceToDevice, stream), "d2d"); });

		snprintf(note, sizeof(note), "bound: one D2D copy of the keys, %.1f GB/s read", bytes / t.median_ms / 1e6);
		emit(section, "d2d_copy", type, n, pattern, &t, "ok", note);
	}
}

/*
 * (key, uint32 row index) pairs of K keys in b.src: gpuext_sort_rows (one
 * word, top_bits = key width), gpuext_sort_pairs (bitonic), CUB radix and
 * merge SortPairs, the copy bound.
 */
template <typename K>
void bench_pairs(const char *type, size_t n, const Buffers &b, std::vector<double> &slow)
{
	cudaStream_t stream = gpuext::device_stream();
	const size_t bytes = n * (sizeof(K) + 4);
	const uint64_t *words = sizeof(K) == 8 ? (const uint64_t *) b.src : (const uint64_t *) b.wide;
	auto		restore = [&] {
		check(cudaMemcpyAsync(b.work, b.src, n * sizeof(K), cudaMemcpyDeviceToDevice, stream), "restore keys");
		check(cudaMemcpyAsync(b.idx, b.idx_src, n * 4, cudaMemcpyDeviceToDevice, stream), "restore idx");
	};
	auto		nothing = [] {};
	char		note[160];

	if (sizeof(K) == 4)
	{
		widen_kernel<<<1024, 256, 0, stream>>>((const uint32_t *) b.src, (uint64_t *) b.wide, n);
		check(cudaGetLastError(), "widen");
	}
	if (slow[0] > SLOW_MS)
		emit("sweep", "rows", type, n, "random", nullptr, "skipped", "a smaller size took too long");
	else
	{
		size_t		sb = 0;

		must(gpuext_sort_rows_scratch_bytes(1, n, &sb), "rows scratch size");
		void	   *scratch = scratch_at_least(sb);
		Timing		t = time_case(n, nothing, [&] {
			must(gpuext_sort_rows(1, (int) sizeof(K) * 8, words, b.idx, nullptr, n, scratch, sb, nullptr, nullptr),
				 "gpuext_sort_rows"); });

		slow[0] = t.median_ms;
		emit("sweep", "rows", type, n, "random", &t, order_ok<K>(b.src, b.idx, b.idx_src, n) ? "ok" : "not_sorted",
			 "gpuext_sort_rows, one key word: row numbers out, keys kept (the ORDER BY node's sort)");
	}
	if (slow[1] > SLOW_MS)
		emit("sweep", "bitonic", type, n, "random", nullptr, "skipped", "a smaller size took too long");
	else
	{
		size_t		sb = 0;

		must(gpuext_sort_pairs_scratch_bytes(GPUEXT_SORT_BITONIC, (int) sizeof(K), n, &sb), "pairs scratch size");
		void	   *scratch = scratch_at_least(sb);
		Timing		t = time_case(n, restore, [&] {
			must(gpuext_sort_pairs(GPUEXT_SORT_BITONIC, (int) sizeof(K), b.work, b.idx, n, scratch, sb),
				 "gpuext_sort_pairs"); });

		slow[1] = t.median_ms;
		emit("sweep", "bitonic", type, n, "random", &t, order_ok<K>(b.src, b.idx, b.idx_src, n) ? "ok" : "not_sorted",
			 "gpuext_sort_pairs bitonic: keys and indices sorted in place, ties by index");
	}
	{
		size_t		tb = 0;

		check(cub::DeviceRadixSort::SortPairs(nullptr, tb, (const K *) b.src, (K *) b.out, b.idx_src, b.idx_out,
											  (uint32_t) n, 0, (int) sizeof(K) * 8, stream), "cub radix pairs size");
		void	   *temp = scratch_at_least(tb);
		Timing		t = time_case(n, nothing, [&] {
			check(cub::DeviceRadixSort::SortPairs(temp, tb, (const K *) b.src, (K *) b.out, b.idx_src, b.idx_out,
												  (uint32_t) n, 0, (int) sizeof(K) * 8, stream), "cub radix pairs"); });

		emit("sweep", "cub_radix", type, n, "random", &t, order_ok<K>(b.src, b.idx_out, b.idx_src, n) ? "ok" : "not_sorted",
			 "cub::DeviceRadixSort::SortPairs, out of place");
	}
	{
		size_t		tb = 0;

		check(cub::DeviceMergeSort::SortPairs(nullptr, tb, (K *) b.work, b.idx, (int) n, Less(), stream),
			  "cub merge pairs size");
		void	   *temp = scratch_at_least(tb);
		Timing		t = time_case(n, restore, [&] {
			check(cub::DeviceMergeSort::SortPairs(temp, tb, (K *) b.work, b.idx, (int) n, Less(), stream),
				  "cub merge pairs"); });

		emit("sweep", "cub_merge", type, n, "random", &t, order_ok<K>(b.src, b.idx, b.idx_src, n) ? "ok" : "not_sorted",
			 "cub::DeviceMergeSort::SortPairs, in place");
	}
	{
		Timing		t = time_case(n, nothing, [&] {
			check(cudaMemcpyAsync(b.out, b.src, n * sizeof(K), cudaMemcpyDeviceToDevice, stream), "d2d keys");
			check(cudaMemcpyAsync(b.idx_out, b.idx_src, n * 4, cudaMemcpyDeviceToDevice, stream), "d2d idx"); });

		snprintf(note, sizeof(note), "bound: one D2D copy of keys and indices, %.1f GB/s read",
				 bytes / t.median_ms / 1e6);
		emit("sweep", "d2d_copy", type, n, "random", &t, "ok", note);
	}
}

/* Fill b.src with n keys of K in a pattern. */
template <typename K>
void fill(const Buffers &b, size_t n, Pattern p, uint64_t s)
{
	fill_kernel<K><<<1024, 256, 0, gpuext::device_stream()>>>(static_cast<K *>(b.src), n, (int) p, s);
	check(cudaGetLastError(), "fill");
}

/* Pinned host <-> device copies of n keys of K. */
template <typename K>
void bench_transfer(const char *type, size_t n, const Buffers &b)
{
	cudaStream_t stream = gpuext::device_stream();
	const size_t bytes = n * sizeof(K);
	auto		nothing = [] {};
	Timing		up = time_case(n, nothing, [&] {
		check(cudaMemcpyAsync(b.work, pinned, bytes, cudaMemcpyHostToDevice, stream), "h2d"); });
	Timing		down = time_case(n, nothing, [&] {
		check(cudaMemcpyAsync(pinned, b.src, bytes, cudaMemcpyDeviceToHost, stream), "d2h"); });
	char		note[96];

	snprintf(note, sizeof(note), "%.1f GB/s", bytes / up.median_ms / 1e6);
	emit("transfer", "h2d_pinned", type, n, "random", &up, "ok", note);
	snprintf(note, sizeof(note), "%.1f GB/s", bytes / down.median_ms / 1e6);
	emit("transfer", "d2h_pinned", type, n, "random", &down, "ok", note);
}

/* Seed 004's host reference: odd-even transposition on one core, n/2 + 1 rounds of both phases. */
template <typename K>
void cpu_oddeven(K *a, size_t n)
{
	for (size_t m = 0; m < n / 2 + 1; m++)
		for (size_t start = 0; start < 2; start++)
			for (size_t k = start; k + 1 < n; k += 2)
			{
				K			x = a[k],
							y = a[k + 1];

				a[k] = std::min(x, y);
				a[k + 1] = std::max(x, y);
			}
}

/* One CPU core: std::sort and the odd-even transposition sort, host clock, same keys as the device's. */
template <typename K>
void bench_cpu(const char *type, size_t n, const Buffers &b, int max_oddeven_log2)
{
	std::vector<K> keys(n),
				a;
	const char *names[] = {"cpu_std_sort", "cpu_oddeven"};

	check(cudaMemcpy(keys.data(), b.src, n * sizeof(K), cudaMemcpyDeviceToHost), "keys to host");
	for (int which = 0; which < 2; which++)
	{
		if (which == 1 && n > ((size_t) 1 << max_oddeven_log2))
		{
			emit("cpu", names[which], type, n, "random", nullptr, "skipped", "quadratic: minutes on one core");
			continue;
		}
		const int	runs = n >= (1u << 14) && which == 1 ? 1 : 3;
		std::vector<double> ms;
		bool		sorted = true;
		Timing		t;

		for (int r = 0; r < runs; r++)
		{
			a = keys;
			auto		t0 = std::chrono::steady_clock::now();

			if (which == 0)
				std::sort(a.begin(), a.end());
			else
				cpu_oddeven(a.data(), n);
			auto		t1 = std::chrono::steady_clock::now();

			ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
		}
		for (size_t i = 1; i < n && sorted; i++)
			sorted = a[i - 1] <= a[i];
		t.runs = runs;
		t.median_ms = median(ms);
		t.min_ms = ms.front();
		t.wall_ms = t.median_ms;
		emit("cpu", names[which], type, n, "random", &t, sorted ? "ok" : "not_sorted", "one core, host clock");
	}
}

/*
 * Every bitonic shape at n random keys of K (already in b.src), or at n
 * (key, index) pairs with pairs; the one bitonic_sort (bitonic_sort_pairs)
 * picks is noted.  A shape that does not apply to n or to this device (the
 * sort refuses it) is a skipped row with the reason.
 */
template <typename K>
void bench_shapes(const char *type, size_t n, const Buffers &b, bool pairs)
{
	cudaStream_t stream = gpuext::device_stream();
	auto		restore = [&] {
		check(cudaMemcpyAsync(b.work, b.src, n * sizeof(K), cudaMemcpyDeviceToDevice, stream), "restore");
		if (pairs)
			check(cudaMemcpyAsync(b.idx, b.idx_src, n * 4, cudaMemcpyDeviceToDevice, stream), "restore idx");
	};
	auto		sort = [&](int shape) {
		return pairs ? gpuext::bitonic_sort_pairs_shape((int) sizeof(K), b.work, b.idx, n, shape)
			: gpuext::bitonic_sort_shape<K>(static_cast<K *>(b.work), n, shape);
	};
	const int	picked = pairs ? gpuext::bitonic_pick_pairs_shape((int) sizeof(K), n)
		: gpuext::bitonic_pick_shape<K>(n);

	for (int shape = 0; shape < gpuext::BITONIC_SHAPES; shape++)
	{
		char		algo[32];
		GpuextStatus st;

		if ((shape == 5 && (sizeof(K) == 8 || pairs)) || (pairs && sizeof(K) == 8 && shape > 3))
			continue;
		snprintf(algo, sizeof(algo), "bitonic_s%d", shape);
		restore();
		if ((st = sort(shape)) == GPUEXT_INVALID)
		{
			emit("shapes", algo, type, n, "random", nullptr, "skipped", gpuext_cuda_error_message());
			continue;
		}
		must(st, algo);
		Timing		t = time_case(n, restore, [&] { must(sort(shape), algo); });
		bool		ok = pairs ? order_ok<K>(b.src, b.idx, b.idx_src, n) : keys_ok<K>(b.src, b.work, n);

		emit("shapes", algo, type, n, "random", &t, ok ? "ok" : "not_sorted",
			 shape == picked ? (pairs ? "picked by bitonic_sort_pairs" : "picked by bitonic_sort") : "");
	}
}

}								/* namespace */

/* Parse options, open the device, run the sections. */
int main(int argc, char **argv)
{
	GpuextDeviceInfo info;
	const char *csv_path = nullptr;
	const char *meta_path = nullptr;
	int			min_log2 = 10,
				max_log2 = 28,
				pattern_log2 = 26;
	bool		with_cpu = true;
	bool		with_shapes = false;
	Buffers		b;

	for (int i = 1; i < argc; i++)
	{
		const char *o = argv[i];
		bool		has = i + 1 < argc;

		if (strcmp(o, "--quick") == 0)
		{
			quick = true;
			max_log2 = 20;
			pattern_log2 = 20;
		}
		else if (strcmp(o, "--csv") == 0 && has)
			csv_path = argv[++i];
		else if (strcmp(o, "--meta") == 0 && has)
			meta_path = argv[++i];
		else if (strcmp(o, "--min-log2") == 0 && has)
			min_log2 = atoi(argv[++i]);
		else if (strcmp(o, "--max-log2") == 0 && has)
			max_log2 = atoi(argv[++i]);
		else if (strcmp(o, "--pattern-log2") == 0 && has)
			pattern_log2 = atoi(argv[++i]);
		else if (strcmp(o, "--runs") == 0 && has)
			forced_runs = atoi(argv[++i]);
		else if (strcmp(o, "--seed") == 0 && has)
			seed = strtoull(argv[++i], nullptr, 0);
		else if (strcmp(o, "--no-cpu") == 0)
			with_cpu = false;
		else if (strcmp(o, "--shapes") == 0)
			with_shapes = true;
		else
		{
			fprintf(stderr, "usage: %s [--quick] [--csv PATH] [--meta PATH] [--min-log2 K] [--max-log2 K] "
					"[--pattern-log2 K] [--runs N] [--seed N] [--no-cpu] [--shapes]\n", argv[0]);
			return 2;
		}
	}
	if (min_log2 < 1 || max_log2 > 30 || min_log2 > max_log2 || pattern_log2 < 1 || pattern_log2 > 30)
	{
		fprintf(stderr, "sizes must satisfy 1 <= min-log2 <= max-log2 <= 30 and 1 <= pattern-log2 <= 30\n");
		return 2;
	}
	must(gpuext_cuda_open(&info), "gpuext_cuda_open");
	printf("device: %s, compute capability %d.%d, %d SMs, %.1f GiB, driver %d, runtime %d\n", info.name,
		   info.cc_major, info.cc_minor, info.multiprocessors, info.memory_total / 1073741824.0,
		   info.driver_version, info.runtime_version);
	printf("seed: %" PRIu64 "; CUDA events, warm-ups then median; rate in M keys/s\n", seed);
	if (meta_path)
	{
		FILE	   *m = fopen(meta_path, "w");

		if (!m)
		{
			perror(meta_path);
			return 2;
		}
		fprintf(m, "key,value\ndevice,\"%s\"\ncompute_capability,%d.%d\nmultiprocessors,%d\nmemory_gib,%.1f\n"
				"cuda_driver,%d\ncuda_runtime,%d\nseed,%" PRIu64 "\nquick,%d\n",
				info.name, info.cc_major, info.cc_minor, info.multiprocessors, info.memory_total / 1073741824.0,
				info.driver_version, info.runtime_version, seed, quick ? 1 : 0);
		fclose(m);
	}
	if (csv_path && !(csv = fopen(csv_path, "w")))
	{
		perror(csv_path);
		return 2;
	}
	if (csv)
		fprintf(csv, "section,algo,type,n,pattern,runs,median_ms,min_ms,wall_ms,keys_per_s,status,note\n");
	printf("%-8s %-12s %-8s %10s %-11s %10s %10s %10s  %s\n", "section", "algo", "type", "n", "pattern",
		   "median_ms", "wall_ms", "Mkeys/s", "status");
	check(cudaEventCreate(&ev_start), "cudaEventCreate");
	check(cudaEventCreate(&ev_stop), "cudaEventCreate");
	check(cudaMalloc(&d_check, 3 * sizeof(unsigned long long)), "check allocation");

	const size_t max_n = ((size_t) 1 << std::max(max_log2, pattern_log2)) + 1;

	must(gpuext_cuda_alloc(&b.src, max_n * 8), "src allocation");
	must(gpuext_cuda_alloc(&b.work, max_n * 8), "work allocation");
	must(gpuext_cuda_alloc(&b.out, max_n * 8), "out allocation");
	must(gpuext_cuda_alloc(&b.wide, max_n * 8), "wide allocation");
	must(gpuext_cuda_alloc(reinterpret_cast<void **>(&b.idx_src), max_n * 4), "index allocation");
	must(gpuext_cuda_alloc(reinterpret_cast<void **>(&b.idx), max_n * 4), "index allocation");
	must(gpuext_cuda_alloc(reinterpret_cast<void **>(&b.idx_out), max_n * 4), "index allocation");
	must(gpuext_cuda_alloc_pinned(&pinned, max_n * 8), "pinned allocation");
	iota_kernel<<<1024, 256, 0, gpuext::device_stream()>>>(b.idx_src, max_n);
	check(cudaGetLastError(), "iota");

	/* The sweep: keys alone, then pairs, random keys, 2^k and 2^k + 1. */
	std::vector<double> slow32(4, 0),
				slow64(4, 0),
				slowp32(2, 0),
				slowp64(2, 0);

	for (int k = min_log2; k <= max_log2; k++)
		for (size_t n : {(size_t) 1 << k, ((size_t) 1 << k) + 1})
		{
			uint64_t	s = seed + n;

			fill<uint32_t>(b, n, RANDOM, s);
			bench_keys<uint32_t>("sweep", "u32", n, "random", b, true, true, slow32);
			bench_pairs<uint32_t>("pairs32", n, b, slowp32);
			if (n == ((size_t) 1 << k))
				bench_transfer<uint32_t>("u32", n, b);
			if (with_cpu && n == ((size_t) 1 << k) && k <= (quick ? 16 : 22))
				bench_cpu<uint32_t>("u32", n, b, quick ? 12 : 15);
			fill<uint64_t>(b, n, RANDOM, s);
			bench_keys<uint64_t>("sweep", "u64", n, "random", b, true, true, slow64);
			bench_pairs<uint64_t>("pairs64", n, b, slowp64);
			if (n == ((size_t) 1 << k))
				bench_transfer<uint64_t>("u64", n, b);
			if (with_cpu && n == ((size_t) 1 << k) && k <= (quick ? 16 : 22))
				bench_cpu<uint64_t>("u64", n, b, quick ? 12 : 15);
		}

	if (with_shapes)
		for (int k = min_log2; k <= std::min(max_log2, 24); k++)
			for (size_t n : {(size_t) 1 << k, ((size_t) 1 << k) + 1})
			{
				if (k <= 22)
				{
					fill<uint32_t>(b, n, RANDOM, seed + n);
					bench_shapes<uint32_t>("u32", n, b, false);
					bench_shapes<uint32_t>("pairs32", n, b, true);
				}
				fill<uint64_t>(b, n, RANDOM, seed + n);
				if (k <= 22)
					bench_shapes<uint64_t>("u64", n, b, false);
				bench_shapes<uint64_t>("pairs64", n, b, true);
			}

	/* Patterns at one size, beside random keys. */
	const size_t pn = (size_t) 1 << pattern_log2;

	for (int p = RANDOM; p <= ALL_EQUAL; p++)
	{
		std::vector<double> s32(4, 0),
					s64(4, 0);

		fill<uint32_t>(b, pn, (Pattern) p, seed + 7);
		bench_keys<uint32_t>("pattern", "u32", pn, PATTERN_NAMES[p], b, false, false, s32);
		fill<uint64_t>(b, pn, (Pattern) p, seed + 7);
		bench_keys<uint64_t>("pattern", "u64", pn, PATTERN_NAMES[p], b, false, false, s64);
	}
	if (csv)
		fclose(csv);
	printf("done\n");
	return 0;
}
