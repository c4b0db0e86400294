/*
 * harness_sort_rows.cuh
 *		kernel_harness's checks of the row sort (gpuext_sort_rows) over key
 *		shapes (words, bits of word 0) x row patterns x sizes: the order must be
 *		a permutation whose keys match a CPU sort of the rows, with guards past
 *		order, keys and scratch intact; and its argument checks, with a wait its
 *		poll callback abandons.  Included after harness_sort_keys.cuh.
 */

/* Row-sort inputs; ties-word0 has few values in word 0 and distinct later words. */
enum RowPattern
{
	ROW_RANDOM,
	ROW_SORTED,
	ROW_REVERSE,
	ROW_ALL_EQUAL,
	ROW_FEW_4,
	ROW_TIES_WORD0,
	NUM_ROW_PATTERNS
};
const char *const ROW_PATTERN_NAMES[] = {"random", "sorted", "reverse", "all-equal", "4-distinct", "ties-word0"};

/* A row-sort key layout: words per row and significant bits of word 0. */
struct RowShape
{
	int			nwords;
	int			top_bits;
};

/* top_bits 1 is a NULL-flag word: equal in all rows, except random flags under ties-word0. */
const RowShape ROW_SHAPES[] = {{1, 33}, {1, 64}, {1, 17}, {2, 33}, {2, 64}, {2, 1}, {2, 17}, {3, 33}, {3, 1},
							   {3, 64}};

/* The significant bits of word w of a row key. */
uint64_t word_mask(int w, int top_bits)
{
	return w > 0 || top_bits == 64 ? ~0ull : (1ull << top_bits) - 1;
}

/* A random nonzero value within mask. */
uint64_t nonzero_value(uint64_t mask, std::mt19937_64 &rng)
{
	uint64_t	v;

	do
		v = rng() & mask;
	while (v == 0);
	return v;
}

/* Lexicographic compare of rows a and b of a row-major key array, word 0 first. */
bool row_less(const std::vector<uint64_t> &rows, int nwords, uint32_t a, uint32_t b)
{
	const uint64_t *x = &rows[(size_t) a * nwords];
	const uint64_t *y = &rows[(size_t) b * nwords];

	for (int w = 0; w < nwords; w++)
		if (x[w] != y[w])
			return x[w] < y[w];
	return false;
}

/* Row numbers 0..n-1 in ascending key order, by std::sort on the CPU. */
std::vector<uint32_t> cpu_row_order(const std::vector<uint64_t> &rows, int nwords, size_t n)
{
	std::vector<uint32_t> idx(n);

	for (size_t i = 0; i < n; i++)
		idx[i] = (uint32_t) i;
	std::sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) { return row_less(rows, nwords, a, b); });
	return idx;
}

/* Fill n row-major keys with the pattern; word 0 within top_bits; no key is all zeros. */
void generate_rows(std::vector<uint64_t> &rows, size_t n, RowShape shape, RowPattern pattern, std::mt19937_64 &rng)
{
	const int	nw = shape.nwords;
	std::vector<uint64_t> values(4 * nw);

	for (int w = 0; w < nw; w++)
		for (int v = 0; v < 4; v++)
			values[4 * w + v] = nonzero_value(word_mask(w, shape.top_bits), rng);
	rows.resize(n * nw);
	for (size_t i = 0; i < n; i++)
		for (int w = 0; w < nw; w++)
		{
			uint64_t	mask = word_mask(w, shape.top_bits);
			uint64_t   &k = rows[i * nw + w];

			if (w == 0 && shape.top_bits == 1)
				k = pattern == ROW_TIES_WORD0 ? rng() & 1 : 1;
			else if (pattern == ROW_ALL_EQUAL)
				k = values[4 * w];
			else if (pattern == ROW_FEW_4)
				k = values[4 * w + rng() % 4];
			else if (pattern == ROW_TIES_WORD0 && w == 0)
				k = values[rng() % 3];
			else
				k = nonzero_value(mask, rng);
		}
	if (pattern == ROW_SORTED || pattern == ROW_REVERSE)
	{
		std::vector<uint32_t> idx = cpu_row_order(rows, nw, n);
		std::vector<uint64_t> ordered(n * nw);

		if (pattern == ROW_REVERSE)
			std::reverse(idx.begin(), idx.end());
		for (size_t i = 0; i < n; i++)
			for (int w = 0; w < nw; w++)
				ordered[i * nw + w] = rows[(size_t) idx[i] * nw + w];
		rows.swap(ordered);
	}
}

/* Upload n row-major keys (word w of row i at i * nwords + w), as the ORDER BY node does, through pinned_in. */
void upload_rows(void *d_keys, const std::vector<uint64_t> &rows, int nwords, size_t n)
{
	memcpy(pinned_in, rows.data(), (size_t) nwords * n * 8);
	must(gpuext_cuda_copy_to_device(d_keys, pinned_in, (size_t) nwords * n * 8), "row key upload");
}

/* Sort rows on the device and check the order against the CPU's; one case. */
void check_rows(RowShape shape, RowPattern pattern, size_t n, const std::vector<uint64_t> &rows,
				const std::vector<uint32_t> &expected)
{
	const int	nw = shape.nwords;
	char		what[160];
	char		detail[256] = "";
	size_t		scratch_bytes = 0;
	size_t		key_area = ((size_t) nw * n + GUARD_KEYS) * 8;
	size_t		order_area = (n + GUARD_KEYS) * 4;
	size_t		out_bytes = order_area + GUARD_KEYS * 8 + SCRATCH_GUARD_BYTES;
	void	   *d_keys = nullptr;
	void	   *d_order = nullptr;
	void	   *d_sorted = nullptr;
	void	   *d_scratch = nullptr;
	std::vector<uint32_t> got_order(n);
	GpuextStatus st;
	bool		ok = true;

	snprintf(what, sizeof(what), "rows %d-word top_bits=%d %s n=%zu", nw, shape.top_bits,
			 ROW_PATTERN_NAMES[pattern], n);
	st = gpuext_sort_rows_scratch_bytes(nw, n, &scratch_bytes);
	if (st != GPUEXT_OK)
	{
		snprintf(detail, sizeof(detail), "scratch size query: status %d: %s", (int) st, gpuext_cuda_error_message());
		report(false, what, detail);
		return;
	}
	ensure_pinned(std::max(key_area, out_bytes));
	must(gpuext_cuda_alloc(&d_keys, key_area), "key allocation");
	must(gpuext_cuda_alloc(&d_order, order_area), "order allocation");
	must(gpuext_cuda_alloc(&d_sorted, key_area), "sorted key allocation");
	must(gpuext_cuda_alloc(&d_scratch, scratch_bytes + SCRATCH_GUARD_BYTES), "scratch allocation");
	poison_device(d_keys, key_area);
	poison_device(d_order, order_area, pinned_ones);
	poison_device(d_sorted, key_area);
	poison_device(d_scratch, scratch_bytes + SCRATCH_GUARD_BYTES);
	upload_rows(d_keys, rows, nw, n);

	st = gpuext_sort_rows(nw, shape.top_bits, static_cast<uint64_t *>(d_keys), static_cast<uint32_t *>(d_order),
						  static_cast<uint64_t *>(d_sorted), n, d_scratch, scratch_bytes, nullptr, nullptr);
	if (st == GPUEXT_OK)
		st = gpuext_cuda_wait(-1, nullptr, nullptr);
	if (st != GPUEXT_OK)
	{
		snprintf(detail, sizeof(detail), "status %d: %s", (int) st, gpuext_cuda_error_message());
		ok = false;
	}
	else
	{
		char	   *out = static_cast<char *>(pinned_out);
		const uint32_t *order = static_cast<const uint32_t *>(pinned_out);
		std::vector<char> seen(n, 0);
		size_t		bad;

		memset(out, 0x5A, out_bytes);
		must(gpuext_cuda_copy_to_host(out, d_order, order_area), "order download");
		must(gpuext_cuda_copy_to_host(out + order_area, static_cast<char *>(d_keys) + (size_t) nw * n * 8,
									  GUARD_KEYS * 8),
			 "key guard download");
		must(gpuext_cuda_copy_to_host(out + order_area + GUARD_KEYS * 8, static_cast<char *>(d_scratch) + scratch_bytes,
									  SCRATCH_GUARD_BYTES),
			 "scratch guard download");
		must(gpuext_cuda_wait(-1, nullptr, nullptr), "download wait");
		for (size_t i = 0; i < n && ok; i++)
		{
			if (order[i] >= n || seen[order[i]])
			{
				snprintf(detail, sizeof(detail), "order[%zu] = %u is %s", i, order[i],
						 order[i] >= n ? "out of range" : "repeated");
				ok = false;
			}
			else
				seen[order[i]] = 1;
		}
		for (size_t i = 0; i < n && ok; i++)
			for (int w = 0; w < nw && ok; w++)
			{
				uint64_t	got = rows[(size_t) order[i] * nw + w];
				uint64_t	want = rows[(size_t) expected[i] * nw + w];

				if (got != want)
				{
					snprintf(detail, sizeof(detail), "row %zu (row number %u) word %d is %#" PRIx64 ", expected %#" PRIx64,
							 i, order[i], w, got, want);
					ok = false;
				}
			}
		if (ok && (bad = first_not(out + n * 4, order_area - n * 4, 0xFF)) < order_area - n * 4)
		{
			snprintf(detail, sizeof(detail), "byte %zu past the last row number was overwritten", bad);
			ok = false;
		}
		if (ok && (bad = first_not(out + order_area, GUARD_KEYS * 8, POISON)) < GUARD_KEYS * 8)
		{
			snprintf(detail, sizeof(detail), "byte %zu past the last key word was overwritten", bad);
			ok = false;
		}
		if (ok && (bad = first_not(out + order_area + GUARD_KEYS * 8, SCRATCH_GUARD_BYTES, POISON)) <
			SCRATCH_GUARD_BYTES)
		{
			snprintf(detail, sizeof(detail), "byte %zu past the %zu scratch bytes was overwritten", bad,
					 scratch_bytes);
			ok = false;
		}
		if (ok)
		{
			const uint64_t *back = static_cast<const uint64_t *>(pinned_out);

			std::copy(order, order + n, got_order.begin());
			must(gpuext_cuda_copy_to_host(pinned_out, d_keys, (size_t) nw * n * 8), "key download");
			must(gpuext_cuda_wait(-1, nullptr, nullptr), "key download wait");
			if (memcmp(pinned_out, pinned_in, (size_t) nw * n * 8) != 0)
			{
				snprintf(detail, sizeof(detail), "the input keys were changed");
				ok = false;
			}
			must(gpuext_cuda_copy_to_host(pinned_out, d_sorted, key_area), "sorted key download");
			must(gpuext_cuda_wait(-1, nullptr, nullptr), "sorted key download wait");
			for (size_t i = 0; i < n && ok; i++)
				for (int w = 0; w < nw && ok; w++)
					if (back[i * nw + w] != rows[(size_t) got_order[i] * nw + w])
					{
						snprintf(detail, sizeof(detail), "sorted key %zu word %d is %#" PRIx64 ", row %u has %#" PRIx64,
								 i, w, back[i * nw + w], got_order[i], rows[(size_t) got_order[i] * nw + w]);
						ok = false;
					}
			if (ok && (bad = first_not(static_cast<const char *>(pinned_out) + (size_t) nw * n * 8, GUARD_KEYS * 8,
									   POISON)) < GUARD_KEYS * 8)
			{
				snprintf(detail, sizeof(detail), "byte %zu past the last sorted key word was overwritten", bad);
				ok = false;
			}
		}
	}
	gpuext_cuda_free(d_keys);
	gpuext_cuda_free(d_sorted);
	gpuext_cuda_free(d_order);
	gpuext_cuda_free(d_scratch);
	report(ok, what, detail);
}

/* Row sort argument checks, and a wait its poll callback abandons (behind a long copy, so it must poll). */
void check_rows_arguments(size_t n)
{
	const size_t busy_bytes = 32 * POISON_CHUNK;
	void	   *d_keys = nullptr;
	void	   *d_order = nullptr;
	void	   *d_scratch = nullptr;
	void	   *d_busy = nullptr;
	size_t		bytes = 0;
	int			polls = 0;
	uint64_t   *keys;
	uint32_t   *order;
	GpuextStatus st;
	char		detail[600];

	expect_invalid("rows: 0 words is refused", gpuext_sort_rows_scratch_bytes(0, n, &bytes));
	expect_invalid("rows: 17 words is refused", gpuext_sort_rows_scratch_bytes(17, n, &bytes));
	expect_invalid("rows: 2^32 rows is refused", gpuext_sort_rows_scratch_bytes(1, (size_t) 1 << 32, &bytes));
	must(gpuext_sort_rows_scratch_bytes(3, n, &bytes), "row scratch size query");
	must(gpuext_cuda_alloc(&d_keys, 3 * n * 8), "allocation");
	must(gpuext_cuda_alloc(&d_order, n * 4), "allocation");
	must(gpuext_cuda_alloc(&d_scratch, bytes), "allocation");
	must(gpuext_cuda_alloc(&d_busy, busy_bytes), "allocation");
	keys = static_cast<uint64_t *>(d_keys);
	order = static_cast<uint32_t *>(d_order);
	poison_device(d_keys, 3 * n * 8);
	expect_invalid("rows: top_bits 0 is refused", gpuext_sort_rows(3, 0, keys, order, nullptr, n, d_scratch, bytes, nullptr,
																   nullptr));
	expect_invalid("rows: top_bits 65 is refused", gpuext_sort_rows(3, 65, keys, order, nullptr, n, d_scratch, bytes,
																	nullptr, nullptr));
	expect_invalid("rows: 17 words is refused by the sort", gpuext_sort_rows(17, 64, keys, order, nullptr, n, d_scratch,
																			 bytes, nullptr, nullptr));
	expect_invalid("rows: one byte too little scratch is refused",
				   gpuext_sort_rows(3, 64, keys, order, nullptr, n, d_scratch, bytes - 1, nullptr, nullptr));
	expect_invalid("rows: null order is refused", gpuext_sort_rows(3, 64, keys, nullptr, nullptr, n, d_scratch, bytes,
																   nullptr, nullptr));
	must(gpuext_cuda_wait(-1, nullptr, nullptr), "wait");
	poison_device(d_busy, busy_bytes);
	st = gpuext_sort_rows(3, 64, keys, order, nullptr, n, d_scratch, bytes, poll_stop, &polls);
	snprintf(detail, sizeof(detail), "status %d after %d polls: %s", (int) st, polls, gpuext_cuda_error_message());
	report(st == GPUEXT_INTERRUPTED && polls > 0, "rows: the sort stops waiting when its poll callback says so",
		   detail);
	st = gpuext_cuda_wait(-1, nullptr, nullptr);
	snprintf(detail, sizeof(detail), "status %d: %s", (int) st, gpuext_cuda_error_message());
	report(st == GPUEXT_OK, "rows: the stream drains after an abandoned row sort", st == GPUEXT_OK ? "" : detail);
	gpuext_cuda_free(d_keys);
	gpuext_cuda_free(d_order);
	gpuext_cuda_free(d_scratch);
	gpuext_cuda_free(d_busy);
}

/* Row sort correctness over every shape, pattern and size. */
void run_row_checks(bool quick, uint64_t seed)
{
	std::vector<size_t> sizes = {0, 1, 2, 3, 1023, 1024, 1025, 65537};

	if (!quick)
		sizes.push_back(1000003);
	for (const RowShape &shape : ROW_SHAPES)
		for (int p = 0; p < NUM_ROW_PATTERNS; p++)
		{
			RowPattern	pattern = static_cast<RowPattern>(p);

			if ((quick && (pattern == ROW_SORTED || pattern == ROW_REVERSE)) ||
				(pattern == ROW_TIES_WORD0 && shape.nwords == 1) ||
				(only_pattern != nullptr && strcmp(only_pattern, ROW_PATTERN_NAMES[p]) != 0))
				continue;
			for (size_t n : sizes)
			{
				if (n > max_n)
					continue;
				std::mt19937_64 rng(seed ^ (n * 0x9E3779B97F4A7C15ull) ^ ((uint64_t) p << 40) ^
									((uint64_t) shape.nwords << 48) ^ ((uint64_t) shape.top_bits << 56));
				std::vector<uint64_t> rows;

				generate_rows(rows, n, shape, pattern, rng);
				check_rows(shape, pattern, n, rows, cpu_row_order(rows, shape.nwords, n));
			}
		}
}
