/*
 * harness_sort_keys.cuh
 *		kernel_harness's checks of the key sorts (gpuext_sort_keys): every
 *		algorithm x key width x input pattern x size sorted on the device and
 *		compared element by element with std::sort; keys past n and scratch
 *		past the size gpuext_sort_scratch_bytes gave must be left untouched.
 *		Also the argument checks, the event slots, and a quicksort abandoned by
 *		its poll callback.  Included by kernel_harness.cu inside its namespace
 *		(its helpers).
 */

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
