/*
 * matmul_harness.cu
 *		Standalone check of gpuext_matmul's kernels against the CPU's product
 *		(gpuext_matmul_cpu), bit for bit, through gpuext_cuda.h only.  Needs a GPU.
 *
 *	matmul_harness [--quick] [--algo naive|tiled|blocked] [--seed N] [--verbose]
 *
 * Every algorithm x element type x input pattern x shape: C and guard
 * elements past it are poisoned (all bits set, a NaN no product stores)
 * before the run; every element of C must then have the CPU's bits and the
 * guard must be intact.  The CPU's product is itself checked against a plain
 * per-element loop (the kernels' order without cache blocks).  A reference
 * summed in reverse k order is counted too: it must differ somewhere, or the
 * bit comparison would prove nothing about the order.  --quick keeps shapes
 * up to 64 (for compute-sanitizer).  The last line is "N passed, M failed".
 */
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpuext_cuda.h"
#include "harness_report.cuh"

namespace
{

struct Shape
{
	size_t		m,
				k,
				n;
};

/* Awkward sizes: 1, 2, primes, around the 16 tiles and the 128 x 128 x 8 blocks, rows with and without 16-byte loads. */
const Shape SHAPES[] = {
	{1, 1, 1}, {2, 2, 2}, {3, 5, 7}, {17, 17, 17}, {33, 33, 33}, {17, 33, 5}, {5, 33, 17}, {16, 16, 16},
	{13, 31, 61}, {61, 7, 13}, {1, 1000, 1}, {1000, 1, 1}, {1, 1, 1000}, {4, 8, 4}, {64, 64, 64},
	{5, 0, 7}, {0, 5, 7}, {7, 5, 0},
	{127, 127, 127}, {128, 128, 128}, {129, 8, 130}, {130, 68, 132}, {257, 257, 257}, {131, 263, 127},
	{256, 64, 384}, {2, 4099, 3}, {509, 257, 521},
};

enum Pattern
{
	RANDOM,
	ALL_EQUAL,
	SPECIAL,
	CANCEL,
	NUM_PATTERNS
};
const char *const PATTERN_NAMES[] = {"random", "all-equal", "special-floats", "cancelling"};
const GpuextMatmulAlgo ALGOS[] = {GPUEXT_MATMUL_NAIVE, GPUEXT_MATMUL_TILED, GPUEXT_MATMUL_BLOCKED};
const char *const ALGO_NAMES[] = {"naive", "tiled", "blocked"};

constexpr size_t GUARD = 64;	/* poisoned elements past C that must stay poisoned */

long long	order_sensitive = 0;

/* Stop on a gpuext failure: the harness cannot go on. */
void must(GpuextStatus st, const char *what)
{
	if (st == GPUEXT_OK)
		return;
	fprintf(stderr, "fatal: %s (status %d): %s\n", what, (int) st, gpuext_cuda_error_message());
	exit(2);
}

/* One input value of a pattern. */
template <typename T>
T value(Pattern p, std::mt19937_64 &rng)
{
	std::uniform_real_distribution<double> u(-1.0, 1.0);

	switch (p)
	{
		case ALL_EQUAL:
			return T(0.1);
		case SPECIAL:
			{
				const T		specials[] = {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
					-std::numeric_limits<T>::infinity(), T(0), -T(0), std::numeric_limits<T>::denorm_min(),
					-std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), T(1e-30), T(-1e30)};

				if (rng() % 8 == 0)
					return specials[rng() % (sizeof(specials) / sizeof(specials[0]))];
				return T(u(rng));
			}
		case CANCEL:
			return T((rng() % 2 ? 1e6 : -1e6) * (1 + u(rng)) + u(rng));
		default:
			return T(u(rng));
	}
}

/* Bits of a value, for the comparison. */
template <typename T>
uint64_t bits(T x)
{
	uint64_t	b = 0;

	memcpy(&b, &x, sizeof(T));
	return b;
}

/* The kernels' order, written plainly: +0, fma over k, NaN as the default NaN; reversed when asked. */
template <typename T>
void plain_product(const T *a, const T *b, T *c, size_t m, size_t k, size_t n, bool reverse)
{
	for (size_t i = 0; i < m; i++)
		for (size_t j = 0; j < n; j++)
		{
			T			acc = 0;

			for (size_t t = 0; t < k; t++)
			{
				size_t		kk = reverse ? k - 1 - t : t;

				acc = std::fma(a[i * k + kk], b[kk * n + j], acc);
			}
			c[i * n + j] = std::isnan(acc) ? std::numeric_limits<T>::quiet_NaN() : acc;
		}
}

/* Every algorithm on one shape and pattern of element type T. */
template <typename T>
void check_case(const Shape &s, Pattern p, std::mt19937_64 &rng, int only_algo, void *pinned, void *dev,
				size_t cap_bytes)
{
	const char *tname = sizeof(T) == 4 ? "float" : "double";
	size_t		na = s.m * s.k,
				nb = s.k * s.n,
				nc = s.m * s.n;
	std::vector<T> a(na), b(nb), ref(nc), plain(nc), rev(nc), got(nc + GUARD);
	char		label[160];
	size_t		a_off = 0,
				b_off = (na * sizeof(T) + 255) / 256 * 256,
				c_off = b_off + (nb * sizeof(T) + 255) / 256 * 256;
	char	   *host = static_cast<char *>(pinned);
	char	   *d = static_cast<char *>(dev);
	size_t		c_bytes = (nc + GUARD) * sizeof(T);

	if (c_off + c_bytes > cap_bytes)
	{
		fprintf(stderr, "fatal: case too large for the buffers\n");
		exit(2);
	}
	for (auto &x : a)
		x = value<T>(p, rng);
	for (auto &x : b)
		x = value<T>(p, rng);
	must(gpuext_matmul_cpu(sizeof(T), a.data(), b.data(), ref.data(), 0, s.m, s.k, s.n, nullptr, nullptr),
		 "gpuext_matmul_cpu");
	plain_product(a.data(), b.data(), plain.data(), s.m, s.k, s.n, false);
	plain_product(a.data(), b.data(), rev.data(), s.m, s.k, s.n, true);
	snprintf(label, sizeof(label), "%s %zux%zu*%zux%zu %s", tname, s.m, s.k, s.k, s.n, PATTERN_NAMES[p]);
	{
		size_t		bad = 0;

		for (size_t i = 0; i < nc; i++)
		{
			bad += bits(ref[i]) != bits(plain[i]);
			order_sensitive += bits(ref[i]) != bits(rev[i]);
		}
		report(bad == 0, std::string("cpu ") + label, bad ? std::to_string(bad) + " elements differ from the plain loop" : "");
	}

	memcpy(host + a_off, a.data(), na * sizeof(T));
	memcpy(host + b_off, b.data(), nb * sizeof(T));
	must(gpuext_cuda_copy_to_device(d, host, c_off), "copy inputs");
	must(gpuext_cuda_wait(-1, nullptr, nullptr), "wait");
	for (int ai = 0; ai < 3; ai++)
	{
		if (only_algo >= 0 && ai != only_algo)
			continue;
		memset(host + c_off, 0xFF, c_bytes);
		must(gpuext_cuda_copy_to_device(d + c_off, host + c_off, c_bytes), "poison");
		must(gpuext_cuda_wait(-1, nullptr, nullptr), "wait");	/* the host buffer is reused below */
		must(gpuext_matmul(ALGOS[ai], sizeof(T), d + a_off, d + b_off, d + c_off, s.m, s.k, s.n), "gpuext_matmul");
		memset(host + c_off, 0, c_bytes);
		must(gpuext_cuda_copy_to_host(host + c_off, d + c_off, c_bytes), "copy back");
		must(gpuext_cuda_wait(-1, nullptr, nullptr), "wait");
		memcpy(got.data(), host + c_off, c_bytes);

		size_t		bad = 0,
					first = SIZE_MAX,
					guard_bad = 0;

		for (size_t i = 0; i < nc; i++)
			if (bits(got[i]) != bits(ref[i]))
			{
				bad++;
				if (first == SIZE_MAX)
					first = i;
			}
		for (size_t i = nc; i < nc + GUARD; i++)
			guard_bad += bits(got[i]) != (sizeof(T) == 4 ? 0xFFFFFFFFull : ~0ull);

		std::string detail;

		if (bad)
			detail = std::to_string(bad) + " elements differ, first (" + std::to_string(first / s.n) + "," +
				std::to_string(first % s.n) + "): " + std::to_string((double) got[first]) + " vs " +
				std::to_string((double) ref[first]);
		if (guard_bad)
			detail += (detail.empty() ? "" : "; ") + std::to_string(guard_bad) + " guard elements written";
		report(bad == 0 && guard_bad == 0, std::string(ALGO_NAMES[ai]) + " " + label, detail);
	}
}

}								/* namespace */

/* Run every case; exit 1 if any failed. */
int main(int argc, char **argv)
{
	bool		quick = false;
	int			only_algo = -1;
	uint64_t	seed = 42;
	GpuextDeviceInfo info;
	void	   *pinned = nullptr;
	void	   *dev = nullptr;
	const size_t cap = (size_t) 64 << 20;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--quick") == 0)
			quick = true;
		else if (strcmp(argv[i], "--verbose") == 0)
			verbose = true;
		else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
			seed = strtoull(argv[++i], nullptr, 0);
		else if (strcmp(argv[i], "--algo") == 0 && i + 1 < argc)
		{
			const char *name = argv[++i];

			for (int a = 0; a < 3; a++)
				if (strcmp(name, ALGO_NAMES[a]) == 0)
					only_algo = a;
			if (only_algo < 0)
			{
				fprintf(stderr, "unknown algorithm %s\n", name);
				return 2;
			}
		}
		else
		{
			fprintf(stderr, "usage: %s [--quick] [--algo naive|tiled|blocked] [--seed N] [--verbose]\n", argv[0]);
			return 2;
		}
	}
	must(gpuext_cuda_open(&info), "gpuext_cuda_open");
	printf("device: %s (compute capability %d.%d, %d SMs)\n", info.name, info.cc_major, info.cc_minor,
		   info.multiprocessors);
	must(gpuext_cuda_alloc_pinned(&pinned, cap), "pinned allocation");
	must(gpuext_cuda_alloc(&dev, cap), "device allocation");

	std::mt19937_64 rng(seed);

	for (const Shape &s : SHAPES)
	{
		if (quick && (s.m > 64 || s.k > 64 || s.n > 64) && !(s.m * s.k * s.n <= 4096))
			continue;
		for (int p = 0; p < NUM_PATTERNS; p++)
		{
			check_case<float>(s, (Pattern) p, rng, only_algo, pinned, dev, cap);
			check_case<double>(s, (Pattern) p, rng, only_algo, pinned, dev, cap);
		}
	}
	report(order_sensitive > 0, "order sensitivity",
		   std::to_string(order_sensitive) + " elements of the CPU's product differ from a reverse-order sum");
	gpuext_cuda_free(dev);
	gpuext_cuda_free_pinned(pinned);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
