/*
 * kernel_harness.cu
 *		Standalone check of gpuext's device sorts against std::sort, through
 *		gpuext_cuda.h only (no PostgreSQL).  Needs a GPU to run.
 *
 *	kernel_harness [--quick] [--bench] [--rows] [--only sort|pairs|rows|reduce|groups|scan] [--seed N]
 *				   [--max-n N] [--pattern NAME] [--verbose]
 *
 * Every algorithm x key width x input pattern x size is sorted on the device
 * and compared element by element with the CPU; keys past n and scratch
 * past the size gpuext_sort_scratch_bytes gave must be left untouched.
 * The row sort (gpuext_sort_rows) is checked over key shapes (words, bits
 * of word 0) x row patterns x sizes: the order must be a permutation whose
 * keys match a CPU sort of the rows, with guards past order, keys and
 * scratch intact.  --quick runs a small size set (for compute-sanitizer);
 * --max-n and --pattern narrow the set further (racecheck is slow); --rows
 * keeps only the row sort; --bench times the sorts instead.
 * The reductions (gpuext_reduce) are checked for every value type x input
 * pattern x size, at an aligned and a one-element-off address, field by
 * field against a CPU reference (128-bit integer sums; for floats the exact
 * digits of agg_accum.c), with the result and scratch poisoned first and
 * the bytes past the scratch intact after; 16-byte values (128-bit
 * integers) in harness_reduce_fixed.cuh; the grouped reduction
 * (gpuext_groups_*) against reduce_groups_cpu.c in harness_groups.cuh;
 * the device scan of heap pages (gpuext_scan_heap) against its CPU
 * reference, on pages built there, in harness_scan_heap.cuh, its GROUP BY
 * in harness_scan_groups.cuh, its gathering of pages from copies and a
 * registered pool in harness_scan_gather.cuh, numeric columns in
 * harness_scan_numeric.cuh, OR groups in harness_scan_or.cuh, and integer
 * arithmetic in harness_scan_ints.cuh.
 * --only picks one family (sort includes the pair sorts, pairs is them
 * alone).  The last line is "N passed, M failed".  Every bitonic shape (sort_keys.cuh:
 * tile shapes, the cluster kernel at each cluster size, the pair tiles) is
 * also run by number beside the one the entry points pick, and a shape
 * that does not apply to n or to the device must be refused.
 */
#include <algorithm>
#include <array>
#include <cfloat>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gpuext_cuda.h"
#include "scan_heap.h"
#include "sort_keys.cuh"
#include "harness_report.cuh"

namespace
{

const GpuextSortAlgo ALGOS[] = {GPUEXT_SORT_BITONIC, GPUEXT_SORT_QUICKSORT, GPUEXT_SORT_ODDEVEN,
								GPUEXT_SORT_RADIX};
const char *const ALGO_NAMES[] = {"bitonic", "quicksort", "oddeven", "radix"};

enum Pattern
{
	RANDOM,
	SORTED,
	REVERSE,
	ALL_EQUAL,
	FEW_2,
	FEW_16,
	SPECIAL_FLOATS,
	NUM_PATTERNS
};
const char *const PATTERN_NAMES[] = {"random", "sorted", "reverse", "all-equal", "2-distinct", "16-distinct",
									 "special-floats"};

/* Keys past n and bytes past the scratch size that must survive a sort. */
constexpr size_t GUARD_KEYS = 256;
constexpr size_t SCRATCH_GUARD_BYTES = 4096;
constexpr unsigned char POISON = 0xA5;
constexpr size_t POISON_CHUNK = 8u << 20;

size_t		max_n = SIZE_MAX;
const char *only_pattern = nullptr;
const char *only = nullptr;		/* --only's family, or --rows's */

void	   *pinned_in = nullptr;
void	   *pinned_out = nullptr;
void	   *pinned_poison = nullptr;
void	   *pinned_ones = nullptr;
size_t		pinned_in_bytes = 0;

/* Stop the harness on a failure of the plumbing (not of a sort). */
void must(GpuextStatus st, const char *what)
{
	if (st == GPUEXT_OK)
		return;
	fprintf(stderr, "fatal: %s failed (status %d): %s\n", what, (int) st, gpuext_cuda_error_message());
	printf("%d passed, %d failed\n", passed, failed + 1);
	exit(2);
}

/* Pinned host scratch of the last scratch query, kept and grown like the key buffers. */
void	   *host_scratch = nullptr;
size_t		host_scratch_bytes = 0;
size_t		host_scratch_need = 0;

/* gpuext_sort_scratch_bytes, providing the host scratch it asks for. */
GpuextStatus query_scratch(GpuextSortAlgo algo, int key_bytes, size_t n, size_t *bytes)
{
	GpuextStatus st = gpuext_sort_scratch_bytes(algo, key_bytes, n, bytes, &host_scratch_need);

	if (st == GPUEXT_OK && host_scratch_need > host_scratch_bytes)
	{
		gpuext_cuda_free_pinned(host_scratch);
		must(gpuext_cuda_alloc_pinned(&host_scratch, host_scratch_need), "host scratch allocation");
		host_scratch_bytes = host_scratch_need;
	}
	return st;
}

/* gpuext_sort_keys with the host scratch of the last query. */
GpuextStatus sort_keys(GpuextSortAlgo algo, int key_bytes, void *keys, size_t n, void *scratch,
					   size_t scratch_bytes, GpuextPollFn poll, void *arg)
{
	return gpuext_sort_keys(algo, key_bytes, keys, n, scratch, scratch_bytes, host_scratch,
							host_scratch_need, poll, arg);
}

/* Make both pinned key buffers at least bytes long. */
void ensure_pinned(size_t bytes)
{
	if (bytes <= pinned_in_bytes)
		return;
	gpuext_cuda_free_pinned(pinned_in);
	gpuext_cuda_free_pinned(pinned_out);
	must(gpuext_cuda_alloc_pinned(&pinned_in, bytes), "pinned allocation");
	must(gpuext_cuda_alloc_pinned(&pinned_out, bytes), "pinned allocation");
	pinned_in_bytes = bytes;
}

/* Fill device memory from a pinned POISON_CHUNK-byte pattern (the poison byte by default). */
void poison_device(void *dptr, size_t bytes, const void *pattern = pinned_poison)
{
	for (size_t off = 0; off < bytes; off += POISON_CHUNK)
		must(gpuext_cuda_copy_to_device(static_cast<char *>(dptr) + off, pattern,
										std::min(POISON_CHUNK, bytes - off)),
			 "poison copy");
}

/* The order-preserving map from IEEE bits to unsigned keys; NaNs become the positive quiet NaN. */
uint64_t float_key(double d, int key_bytes)
{
	if (key_bytes == 4)
	{
		float		f = (float) d;
		uint32_t	bits;

		memcpy(&bits, &f, 4);
		if (std::isnan(f))
			bits = 0x7FC00000u;
		return (bits & 0x80000000u) ? (uint32_t) ~bits : (bits | 0x80000000u);
	}
	uint64_t	bits;

	memcpy(&bits, &d, 8);
	if (std::isnan(d))
		bits = 0x7FF8000000000000ull;
	return (bits & (1ull << 63)) ? ~bits : (bits | (1ull << 63));
}

/* Random float keys mixed with NaN, -NaN, +-Inf, +-0, denormals, +-max and friends. */
void special_floats(std::vector<uint64_t> &keys, int key_bytes, std::mt19937_64 &rng)
{
	const bool	f32 = key_bytes == 4;
	const double specials[] = {
		std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::quiet_NaN(),
		std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(), 0.0, -0.0,
		f32 ? (double) std::numeric_limits<float>::denorm_min() : std::numeric_limits<double>::denorm_min(),
		f32 ? -(double) std::numeric_limits<float>::denorm_min() : -std::numeric_limits<double>::denorm_min(),
		f32 ? 1e-40 : 1e-310, f32 ? -1e-40 : -1e-310,
		f32 ? (double) FLT_MAX : DBL_MAX, f32 ? -(double) FLT_MAX : -DBL_MAX,
		f32 ? (double) FLT_MIN : DBL_MIN, f32 ? -(double) FLT_MIN : -DBL_MIN, 1.0, -1.0, 0.5, -2.5};
	const size_t nspecial = sizeof(specials) / sizeof(specials[0]);

	for (uint64_t &k : keys)
	{
		uint64_t	r = rng();

		if (r % 2 == 0)
			k = float_key(specials[(r >> 8) % nspecial], key_bytes);
		else if (f32)
		{
			uint32_t	bits = (uint32_t) (r >> 32);
			float		f;

			memcpy(&f, &bits, 4);
			k = float_key(f, 4);
		}
		else
		{
			uint64_t	bits = rng();
			double		d;

			memcpy(&d, &bits, 8);
			k = float_key(d, 8);
		}
	}
}

/* Fill keys (n of them, key_bytes wide) with the pattern; never all zeros. */
void generate(std::vector<uint64_t> &keys, Pattern pattern, int key_bytes, std::mt19937_64 &rng)
{
	const uint64_t mask = key_bytes == 4 ? 0xFFFFFFFFull : ~0ull;
	std::vector<uint64_t> values;

	switch (pattern)
	{
		case RANDOM:
		case SORTED:
		case REVERSE:
			for (uint64_t &k : keys)
				k = rng() & mask;
			if (pattern == SORTED)
				std::sort(keys.begin(), keys.end());
			else if (pattern == REVERSE)
				std::sort(keys.begin(), keys.end(), [](uint64_t a, uint64_t b) { return a > b; });
			break;
		case ALL_EQUAL:
		case FEW_2:
		case FEW_16:
			values.resize(pattern == ALL_EQUAL ? 1 : pattern == FEW_2 ? 2 : 16);
			for (uint64_t &v : values)
				do
					v = rng() & mask;
				while (v == 0);
			for (uint64_t &k : keys)
				k = values[rng() % values.size()];
			break;
		case SPECIAL_FLOATS:
			special_floats(keys, key_bytes, rng);
			break;
		case NUM_PATTERNS:
			break;
	}
}

/* Read key i of a packed buffer. */
uint64_t key_at(const void *buf, size_t i, int key_bytes)
{
	return key_bytes == 4 ? static_cast<const uint32_t *>(buf)[i] : static_cast<const uint64_t *>(buf)[i];
}

/* Pack n keys of key_bytes into pinned_in, ready for upload. */
void pin_keys(const std::vector<uint64_t> &keys, size_t n, int key_bytes)
{
	for (size_t i = 0; i < n; i++)
	{
		if (key_bytes == 4)
			static_cast<uint32_t *>(pinned_in)[i] = (uint32_t) keys[i];
		else
			static_cast<uint64_t *>(pinned_in)[i] = keys[i];
	}
}

/* Wait for a sort that st says was enqueued; false, with the status and message in detail, if either failed. */
bool sort_finished(GpuextStatus st, char *detail, size_t detail_size)
{
	if (st == GPUEXT_OK)
		st = gpuext_cuda_wait(-1, nullptr, nullptr);
	if (st == GPUEXT_OK)
		return true;
	snprintf(detail, detail_size, "status %d: %s", (int) st, gpuext_cuda_error_message());
	return false;
}

/* Bitonic shape number shape of n keys of key_bytes, as bench/sort_bench --shapes runs it. */
GpuextStatus sort_shape(int key_bytes, void *keys, size_t n, int shape)
{
	if (key_bytes == 4)
		return gpuext::bitonic_sort_shape<uint32_t>(static_cast<uint32_t *>(keys), n, shape);
	return gpuext::bitonic_sort_shape<uint64_t>(static_cast<uint64_t *>(keys), n, shape);
}

/*
 * Sort input on the device with algo (or bitonic shape number shape, when
 * not -1) and compare with expected; one case.
 */
void check_sort(int algo_index, int key_bytes, Pattern pattern, size_t n, const std::vector<uint64_t> &input,
				const std::vector<uint64_t> &expected, int shape = -1)
{
	GpuextSortAlgo algo = ALGOS[algo_index];
	char		what[160];
	char		detail[256] = "";
	size_t		scratch_bytes = 0;
	size_t		key_area = (n + GUARD_KEYS) * key_bytes;
	void	   *d_keys = nullptr;
	void	   *d_scratch = nullptr;
	GpuextStatus st;
	bool		ok = true;

	if (shape >= 0)
		snprintf(what, sizeof(what), "bitonic shape %d %d-bit %s n=%zu", shape, 8 * key_bytes, PATTERN_NAMES[pattern],
				 n);
	else
		snprintf(what, sizeof(what), "%s %d-bit %s n=%zu", ALGO_NAMES[algo_index], 8 * key_bytes,
				 PATTERN_NAMES[pattern], n);
	st = query_scratch(algo, key_bytes, n, &scratch_bytes);
	if (st != GPUEXT_OK)
	{
		snprintf(detail, sizeof(detail), "scratch size query: status %d: %s", (int) st, gpuext_cuda_error_message());
		report(false, what, detail);
		return;
	}
	ensure_pinned(key_area + SCRATCH_GUARD_BYTES);
	must(gpuext_cuda_alloc(&d_keys, key_area), "key allocation");
	must(gpuext_cuda_alloc(&d_scratch, scratch_bytes + SCRATCH_GUARD_BYTES), "scratch allocation");
	poison_device(d_keys, key_area);
	poison_device(d_scratch, scratch_bytes + SCRATCH_GUARD_BYTES);
	pin_keys(input, n, key_bytes);
	must(gpuext_cuda_copy_to_device(d_keys, pinned_in, n * key_bytes), "key upload");

	ok = sort_finished(shape >= 0 ? sort_shape(key_bytes, d_keys, n, shape)
					   : sort_keys(algo, key_bytes, d_keys, n, d_scratch, scratch_bytes, nullptr, nullptr),
					   detail, sizeof(detail));
	if (ok)
	{
		char	   *out = static_cast<char *>(pinned_out);

		memset(out, 0x5A, key_area + SCRATCH_GUARD_BYTES);
		must(gpuext_cuda_copy_to_host(out, d_keys, key_area), "key download");
		must(gpuext_cuda_copy_to_host(out + key_area, static_cast<char *>(d_scratch) + scratch_bytes,
									  SCRATCH_GUARD_BYTES),
			 "scratch guard download");
		must(gpuext_cuda_wait(-1, nullptr, nullptr), "download wait");
		for (size_t i = 0; i < n && ok; i++)
		{
			uint64_t	got = key_at(out, i, key_bytes);

			if (got != expected[i])
			{
				snprintf(detail, sizeof(detail), "key %zu is %#" PRIx64 ", expected %#" PRIx64, i, got, expected[i]);
				ok = false;
			}
		}
		for (size_t b = n * key_bytes; b < key_area && ok; b++)
			if ((unsigned char) out[b] != POISON)
			{
				snprintf(detail, sizeof(detail), "byte %zu past the last key was overwritten", b - n * key_bytes);
				ok = false;
			}
		for (size_t b = 0; b < SCRATCH_GUARD_BYTES && ok; b++)
			if ((unsigned char) out[key_area + b] != POISON)
			{
				snprintf(detail, sizeof(detail), "byte %zu past the %zu scratch bytes was overwritten", b,
						 scratch_bytes);
				ok = false;
			}
	}
	gpuext_cuda_free(d_keys);
	gpuext_cuda_free(d_scratch);
	report(ok, what, detail);
}

/* A call that must be refused with GPUEXT_INVALID. */
void expect_invalid(const char *what, GpuextStatus st)
{
	char		detail[600];

	snprintf(detail, sizeof(detail), "status %d: %s", (int) st, gpuext_cuda_error_message());
	report(st == GPUEXT_INVALID, what, detail);
}

/* Argument checks: oddeven size limit, key width, short scratch. */
void check_invalid_arguments()
{
	void	   *d_keys = nullptr;
	size_t		bytes = 0;
	const size_t n = 100000;

	must(gpuext_cuda_alloc(&d_keys, n * 8), "allocation");
	for (int kb = 4; kb <= 8; kb += 4)
	{
		char		what[96];

		snprintf(what, sizeof(what), "oddeven %d-bit n=%d is refused", 8 * kb, GPUEXT_ODDEVEN_MAX_ELEMENTS + 1);
		expect_invalid(what, sort_keys(GPUEXT_SORT_ODDEVEN, kb, d_keys, GPUEXT_ODDEVEN_MAX_ELEMENTS + 1,
											  nullptr, 0, nullptr, nullptr));
		snprintf(what, sizeof(what), "oddeven %d-bit scratch query for n=%d is refused", 8 * kb,
				 GPUEXT_ODDEVEN_MAX_ELEMENTS + 1);
		expect_invalid(what, query_scratch(GPUEXT_SORT_ODDEVEN, kb, GPUEXT_ODDEVEN_MAX_ELEMENTS + 1,
													   &bytes));
		for (GpuextSortAlgo algo : {GPUEXT_SORT_QUICKSORT, GPUEXT_SORT_RADIX})
		{
			must(query_scratch(algo, kb, n, &bytes), "scratch size query");
			snprintf(what, sizeof(what), "%s %d-bit with one byte too little scratch is refused",
					 ALGO_NAMES[algo], 8 * kb);
			expect_invalid(what, sort_keys(algo, kb, d_keys, n, d_keys, bytes - 1, nullptr, nullptr));
		}
	}
	expect_invalid("2-byte keys are refused",
				   sort_keys(GPUEXT_SORT_BITONIC, 2, d_keys, 10, nullptr, 0, nullptr, nullptr));
	expect_invalid("event slot out of range is refused", gpuext_cuda_mark(GPUEXT_CUDA_EVENTS));
	must(gpuext_cuda_wait(-1, nullptr, nullptr), "wait");
	gpuext_cuda_free(d_keys);
}

/* Poll callback that always asks to stop. */
int poll_stop(void *arg)
{
	(*static_cast<int *>(arg))++;
	return 1;
}

/* Event slots, and a quicksort abandoned by its poll callback leaves the session usable. */
void check_waits(size_t n)
{
	void	   *d_keys = nullptr;
	void	   *d_scratch = nullptr;
	size_t		bytes = 0;
	int			polls = 0;
	GpuextStatus st;
	char		detail[600];

	st = gpuext_cuda_mark(1);
	if (st == GPUEXT_OK)
		st = gpuext_cuda_wait(1, nullptr, nullptr);
	snprintf(detail, sizeof(detail), "status %d: %s", (int) st, gpuext_cuda_error_message());
	report(st == GPUEXT_OK, "mark and wait on event slot 1", st == GPUEXT_OK ? "" : detail);

	must(query_scratch(GPUEXT_SORT_QUICKSORT, 8, n, &bytes), "scratch size query");
	must(gpuext_cuda_alloc(&d_keys, n * 8), "allocation");
	must(gpuext_cuda_alloc(&d_scratch, bytes), "allocation");
	poison_device(d_keys, n * 8);
	st = sort_keys(GPUEXT_SORT_QUICKSORT, 8, d_keys, n, d_scratch, bytes, poll_stop, &polls);
	snprintf(detail, sizeof(detail), "status %d after %d polls: %s", (int) st, polls, gpuext_cuda_error_message());
	report(st == GPUEXT_INTERRUPTED && polls > 0, "quicksort stops when its poll callback says so", detail);
	st = gpuext_cuda_wait(-1, nullptr, nullptr);
	snprintf(detail, sizeof(detail), "status %d: %s", (int) st, gpuext_cuda_error_message());
	report(st == GPUEXT_OK, "the stream drains after an abandoned sort", st == GPUEXT_OK ? "" : detail);
	gpuext_cuda_free(d_keys);
	gpuext_cuda_free(d_scratch);
}

/* First byte of buf[0..bytes) that is not b, or bytes. */
size_t first_not(const char *buf, size_t bytes, unsigned char b)
{
	for (size_t i = 0; i < bytes; i++)
		if ((unsigned char) buf[i] != b)
			return i;
	return bytes;
}

/* Correctness over every algorithm, width, pattern and size. */
void run_checks(bool quick, uint64_t seed)
{
	std::vector<size_t> sizes;

	if (quick)
		sizes = {0, 1, 3, 33, 1025, 4097, 8193, 70001, (1u << 20) + 1};
	else
		sizes = {0, 1, 2, 3, 5, 31, 32, 33, 127, 1023, 1024, 1025, 2047, 4095, 4096, 4097, 8191, 8193, 12289,
				 65535, 65536, 65537, 131071, 786433, 1000003, 1u << 20, (1u << 20) + 1};

	for (int kb = 4; kb <= 8; kb += 4)
		for (int p = 0; p < NUM_PATTERNS; p++)
		{
			Pattern		pattern = static_cast<Pattern>(p);

			if ((quick && (pattern == SORTED || pattern == REVERSE || pattern == FEW_16)) ||
				(only_pattern != nullptr && strcmp(only_pattern, PATTERN_NAMES[p]) != 0))
				continue;
			for (size_t n : sizes)
			{
				if (n > max_n)
					continue;
				std::mt19937_64 rng(seed ^ (n * 0x9E3779B97F4A7C15ull) ^ ((uint64_t) p << 40) ^ ((uint64_t) kb << 56));
				std::vector<uint64_t> input(n);
				std::vector<uint64_t> expected;

				generate(input, pattern, kb, rng);
				expected = input;
				std::sort(expected.begin(), expected.end());
				for (int a = 0; a < 4; a++)
				{
					size_t		limit = ALGOS[a] != GPUEXT_SORT_ODDEVEN ? SIZE_MAX
						: quick ? 1025 : (size_t) GPUEXT_ODDEVEN_MAX_ELEMENTS;

					/* Under --quick the largest size is there for bitonic's large tiles only. */
					if (n <= limit && !(quick && n > 100000 && ALGOS[a] != GPUEXT_SORT_BITONIC))
						check_sort(a, kb, pattern, n, input, expected);
				}
			}
		}
}

#include "harness_sort_pairs.cuh"
#include "harness_sort_shapes.cuh"
#include "harness_sort_rows.cuh"
#include "harness_sort_bench.cuh"
#include "harness_reduce_inputs.cuh"
#include "harness_reduce_check.cuh"
#include "harness_reduce_fixed.cuh"
#include "harness_groups.cuh"
#include "harness_scan_heap.cuh"
#include "harness_scan_groups.cuh"
#include "harness_scan_gather.cuh"
#include "harness_scan_numeric.cuh"
#include "harness_scan_or.cuh"
#include "harness_scan_ints.cuh"
#include "harness_scan_units.cuh"

/* Reduction correctness over every type, pattern, size and alignment. */
void run_reduce_checks(bool quick, uint64_t seed)
{
	std::vector<size_t> sizes;

	if (quick)
		sizes = {0, 1, 2, 3, 31, 33, 257, 1025, 65537, 262147};
	else
		sizes = {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 127, 255, 256, 257, 1023, 1024, 1025, 4093, 4095,
				 4097, 65535, 65537, 131071, 262147, 1000003, (1u << 20) + 1, 4194301, (1u << 22) + 1};
	check_reduce_arguments();
	for (const ReduceType &t : REDUCE_TYPES)
		for (int pi = 0; pi < NUM_REDUCE_PATTERNS; pi++)
		{
			ReducePattern p = static_cast<ReducePattern>(pi);

			if (!reduce_pattern_applies(t, p) ||
				(quick && (p == RED_SORTED || p == RED_REVERSE || p == RED_FEW_16)) ||
				(only_pattern != nullptr && strcmp(only_pattern, REDUCE_PATTERN_NAMES[p]) != 0))
				continue;
			for (size_t n : sizes)
			{
				if (n > max_n)
					continue;
				std::mt19937_64 rng(seed ^ (n * 0x9E3779B97F4A7C15ull) ^ ((uint64_t) pi << 40) ^
									((uint64_t) (t.value_bytes + 16 * t.is_float) << 56));
				std::vector<uint64_t> bits(n);
				GpuextReduceResult want;

				generate_reduce(bits, t, p, rng);
				want = reference_reduce(t, bits);
				for (size_t offset = 0; offset < 2; offset++)
					check_reduce(t, p, n, offset, bits, want);
			}
		}
	run_fixed_reduce_checks(quick, seed);
}

/* Whether the checks of family name run: all of them without --only. */
bool runs(const char *name)
{
	return only == nullptr || strcmp(only, name) == 0;
}

}								/* namespace */

/* Parse options, open the device, print it, run the checks or the benchmark. */
int main(int argc, char **argv)
{
	bool		quick = false;
	bool		bench = false;
	uint64_t	seed = (uint64_t) std::chrono::system_clock::now().time_since_epoch().count();
	GpuextDeviceInfo info;
	GpuextStatus st;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--quick") == 0)
			quick = true;
		else if (strcmp(argv[i], "--bench") == 0)
			bench = true;
		else if (strcmp(argv[i], "--rows") == 0)
			only = "rows";
		else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc &&
				 (strcmp(argv[i + 1], "sort") == 0 || strcmp(argv[i + 1], "pairs") == 0 ||
				  strcmp(argv[i + 1], "rows") == 0 || strcmp(argv[i + 1], "reduce") == 0 ||
				  strcmp(argv[i + 1], "groups") == 0 || strcmp(argv[i + 1], "scan") == 0))
			only = argv[++i];
		else if (strcmp(argv[i], "--verbose") == 0)
			verbose = true;
		else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
			seed = strtoull(argv[++i], nullptr, 0);
		else if (strcmp(argv[i], "--max-n") == 0 && i + 1 < argc)
			max_n = strtoull(argv[++i], nullptr, 0);
		else if (strcmp(argv[i], "--pattern") == 0 && i + 1 < argc)
		{
			const char *name = argv[++i];

			for (int p = 0; p < NUM_PATTERNS; p++)
				if (strcmp(name, PATTERN_NAMES[p]) == 0)
					only_pattern = name;
			for (int p = 0; p < NUM_ROW_PATTERNS; p++)
				if (strcmp(name, ROW_PATTERN_NAMES[p]) == 0)
					only_pattern = name;
			for (int p = 0; p < NUM_REDUCE_PATTERNS; p++)
				if (strcmp(name, REDUCE_PATTERN_NAMES[p]) == 0)
					only_pattern = name;
			for (int p = 0; p < NUM_FIXED_PATTERNS; p++)
				if (strcmp(name, FIXED_PATTERN_NAMES[p]) == 0)
					only_pattern = name;
			if (strcmp(name, group_pattern_name(GROUP_SMALL_INTS)) == 0)
				only_pattern = name;
			if (only_pattern == nullptr)
			{
				fprintf(stderr, "unknown pattern \"%s\"\n", name);
				return 2;
			}
		}
		else
		{
			fprintf(stderr,
					"usage: %s [--quick] [--bench] [--rows] [--only sort|pairs|rows|reduce|groups|scan] [--seed N] "
					"[--max-n N] "
					"[--pattern NAME] [--verbose]\n",
					argv[0]);
			return 2;
		}
	}

	/* Before the device is open a reduction says so. */
	{
		size_t		bytes = 0;

		st = gpuext_reduce_scratch_bytes(4, 0, 100, &bytes);
		report(st == GPUEXT_NO_DEVICE, "reduce: scratch query before the device is open says GPUEXT_NO_DEVICE",
			   gpuext_cuda_error_message());
	}
	st = gpuext_cuda_open(&info);
	if (st != GPUEXT_OK)
	{
		printf("cannot open the device (status %d): %s\n", (int) st, gpuext_cuda_error_message());
		printf("0 passed, 1 failed\n");
		return 1;
	}
	printf("device: %s, compute capability %d.%d, %d SMs, %.1f of %.1f GiB free, driver %d, runtime %d\n",
		   info.name, info.cc_major, info.cc_minor, info.multiprocessors, info.memory_free / 1073741824.0,
		   info.memory_total / 1073741824.0, info.driver_version, info.runtime_version);
	printf("seed: %" PRIu64 "\n", seed);
	fflush(stdout);

	must(gpuext_cuda_alloc_pinned(&pinned_poison, POISON_CHUNK), "pinned allocation");
	memset(pinned_poison, POISON, POISON_CHUNK);
	must(gpuext_cuda_alloc_pinned(&pinned_ones, POISON_CHUNK), "pinned allocation");
	memset(pinned_ones, 0xFF, POISON_CHUNK);
	must(gpuext_cuda_alloc_pinned(reinterpret_cast<void **>(&pinned_result), sizeof(GpuextReduceResult)),
		 "pinned allocation");

	if (bench)
	{
		if (only == nullptr || strcmp(only, "rows") != 0)
			run_bench(seed);
		run_rows_bench(seed);
		return 0;
	}
	if (runs("sort"))
	{
		check_invalid_arguments();
		check_waits(quick ? 1 << 17 : 1 << 20);
		run_checks(quick, seed);
	}
	if (runs("sort") || runs("pairs"))
		run_pair_checks(quick, seed);
	if (runs("sort"))
		run_shape_checks(quick, seed);
	if (runs("rows"))
	{
		check_rows_arguments(quick ? 1 << 17 : 1 << 20);
		run_row_checks(quick, seed);
	}
	if (runs("reduce"))
		run_reduce_checks(quick, seed);
	if (runs("groups"))
		run_group_checks(quick, seed);
	if (runs("scan"))
	{
		run_scan_checks(quick);
		run_scan_group_checks(quick);
		run_scan_gather_checks(quick);
		run_scan_numeric_checks(quick);
		run_scan_or_checks(quick);
		run_scan_int_checks(quick);
		run_scan_unit_checks(quick);
		run_scan_cmp_unit_checks(quick);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed == 0 ? 0 : 1;
}
