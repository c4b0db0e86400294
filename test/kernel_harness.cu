/*
 * kernel_harness.cu
 *		Standalone check of gpuext's device sorts against std::sort, through
 *		gpuext_cuda.h only (no PostgreSQL).  Needs a GPU to run.  This file
 *		holds the options, the pinned buffers and helpers the checks share,
 *		the reduction's run and main; each family's checks are in the
 *		harness_*.cuh headers it includes inside its namespace.
 *
 *	kernel_harness [--quick] [--bench] [--rows] [--only sort|pairs|rows|reduce|groups|scan] [--seed N]
 *				   [--max-n N] [--pattern NAME] [--verbose]
 *
 * Every algorithm x key width x input pattern x size is sorted on the device
 * and compared element by element with the CPU; keys past n and scratch
 * past the size gpuext_sort_scratch_bytes gave must be left untouched
 * (harness_sort_keys.cuh; the pair sorts in harness_sort_pairs.cuh).
 * The row sort (gpuext_sort_rows) is checked over key shapes (words, bits
 * of word 0) x row patterns x sizes: the order must be a permutation whose
 * keys match a CPU sort of the rows, with guards past order, keys and
 * scratch intact (harness_sort_rows.cuh).  --quick runs a small size set
 * (for compute-sanitizer); --max-n and --pattern narrow the set further
 * (racecheck is slow); --rows keeps only the row sort; --bench times the
 * sorts instead (harness_sort_bench.cuh).
 * The reductions (gpuext_reduce) are checked for every value type x input
 * pattern x size, at an aligned and a one-element-off address, field by
 * field against a CPU reference (128-bit integer sums; for floats the exact
 * digits of agg_accum.c), with the result and scratch poisoned first and
 * the bytes past the scratch intact after (harness_reduce_inputs.cuh and
 * harness_reduce_check.cuh); 16-byte values (128-bit integers) in
 * harness_reduce_fixed.cuh; the grouped reduction (gpuext_groups_*)
 * against reduce_groups_cpu.c in harness_groups.cuh; the device scan of
 * heap pages (gpuext_scan_heap) against its CPU reference, on pages built
 * there, in harness_scan_heap_tuples.cuh, _pages.cuh, _programs.cuh and
 * _check.cuh, its GROUP BY in harness_scan_groups.cuh, its gathering of
 * pages from copies and a registered pool in harness_scan_gather.cuh,
 * numeric columns in harness_scan_numeric.cuh, OR groups in
 * harness_scan_or.cuh, integer arithmetic in harness_scan_ints.cuh,
 * date and timestamp units in harness_scan_units.cuh, and the LIKE matcher
 * in harness_scan_like.cuh.
 * --only picks one family (sort includes the pair sorts, pairs is them
 * alone).  The last line is "N passed, M failed".  Every bitonic shape
 * (sort_keys.cuh: tile shapes, the cluster kernel at each cluster size,
 * the pair tiles) is also run by number beside the one the entry points
 * pick, and a shape that does not apply to n or to the device must be
 * refused (harness_sort_shapes.cuh).
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

/* A call that must be refused with GPUEXT_INVALID. */
void expect_invalid(const char *what, GpuextStatus st)
{
	char		detail[600];

	snprintf(detail, sizeof(detail), "status %d: %s", (int) st, gpuext_cuda_error_message());
	report(st == GPUEXT_INVALID, what, detail);
}

/* First byte of buf[0..bytes) that is not b, or bytes. */
size_t first_not(const char *buf, size_t bytes, unsigned char b)
{
	for (size_t i = 0; i < bytes; i++)
		if ((unsigned char) buf[i] != b)
			return i;
	return bytes;
}

#include "harness_sort_keys.cuh"
#include "harness_sort_pairs.cuh"
#include "harness_sort_shapes.cuh"
#include "harness_sort_rows.cuh"
#include "harness_sort_bench.cuh"
#include "harness_reduce_inputs.cuh"
#include "harness_reduce_check.cuh"
#include "harness_reduce_fixed.cuh"
#include "harness_groups.cuh"
#include "harness_scan_heap_tuples.cuh"
#include "harness_scan_heap_pages.cuh"
#include "harness_scan_heap_programs.cuh"
#include "harness_scan_heap_check.cuh"
#include "harness_scan_groups.cuh"
#include "harness_scan_gather.cuh"
#include "harness_scan_numeric.cuh"
#include "harness_scan_or.cuh"
#include "harness_scan_ints.cuh"
#include "harness_scan_units.cuh"
#include "harness_scan_like.cuh"

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
		run_scan_like_checks(quick, seed);
		run_scan_cmp_unit_checks(quick);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed == 0 ? 0 : 1;
}
