/*
 * harness_sort_pairs.cuh
 *		kernel_harness's checks of the pair sorts ((key, index) pairs): both
 *		arrays against the CPU's order (key, then index), over both key widths,
 *		the patterns with ties and sizes around every tile shape, indices
 *		random and some equal; the keys and indices past n and the bytes past
 *		the scratch are poisoned before and must survive.  Included after
 *		harness_sort_keys.cuh.
 */

/*
 * Sort (key, index) pairs on the device (with bitonic shape number shape,
 * when not -1) and compare both arrays with the CPU's order (key, then
 * index); the keys and indices past n and the bytes past the scratch are
 * poisoned before and must survive; one case.
 */
void check_pairs(int key_bytes, Pattern pattern, size_t n, const std::vector<uint64_t> &keys,
				 const std::vector<uint32_t> &idx, int shape = -1)
{
	char		what[160];
	char		detail[256] = "";
	size_t		scratch_bytes = 0;
	const size_t key_area = (n + GUARD_KEYS) * key_bytes;
	const size_t idx_area = (n + GUARD_KEYS) * 4;
	std::vector<std::pair<uint64_t, uint32_t>> want(n);
	void	   *d_keys = nullptr;
	void	   *d_idx = nullptr;
	void	   *d_scratch = nullptr;
	GpuextStatus st;
	bool		ok = true;

	if (shape >= 0)
		snprintf(what, sizeof(what), "bitonic pairs shape %d %d-bit %s n=%zu", shape, 8 * key_bytes,
				 PATTERN_NAMES[pattern], n);
	else
		snprintf(what, sizeof(what), "bitonic pairs %d-bit %s n=%zu", 8 * key_bytes, PATTERN_NAMES[pattern], n);
	for (size_t i = 0; i < n; i++)
		want[i] = {keys[i], idx[i]};
	std::sort(want.begin(), want.end());
	st = gpuext_sort_pairs_scratch_bytes(GPUEXT_SORT_BITONIC, key_bytes, n, &scratch_bytes);
	if (st != GPUEXT_OK)
	{
		snprintf(detail, sizeof(detail), "scratch size query: status %d: %s", (int) st, gpuext_cuda_error_message());
		report(false, what, detail);
		return;
	}
	ensure_pinned(key_area + idx_area + SCRATCH_GUARD_BYTES);
	must(gpuext_cuda_alloc(&d_keys, key_area), "key allocation");
	must(gpuext_cuda_alloc(&d_idx, idx_area), "index allocation");
	must(gpuext_cuda_alloc(&d_scratch, scratch_bytes + SCRATCH_GUARD_BYTES), "scratch allocation");
	poison_device(d_keys, key_area);
	poison_device(d_idx, idx_area);
	poison_device(d_scratch, scratch_bytes + SCRATCH_GUARD_BYTES);
	pin_keys(keys, n, key_bytes);
	memcpy(static_cast<char *>(pinned_in) + n * key_bytes, idx.data(), n * 4);
	must(gpuext_cuda_copy_to_device(d_keys, pinned_in, n * key_bytes), "key upload");
	must(gpuext_cuda_copy_to_device(d_idx, static_cast<char *>(pinned_in) + n * key_bytes, n * 4), "index upload");

	ok = sort_finished(shape >= 0 ? gpuext::bitonic_sort_pairs_shape(key_bytes, d_keys, static_cast<uint32_t *>(d_idx),
																	 n, shape)
					   : gpuext_sort_pairs(GPUEXT_SORT_BITONIC, key_bytes, d_keys, static_cast<uint32_t *>(d_idx), n,
										   d_scratch, scratch_bytes),
					   detail, sizeof(detail));
	if (ok)
	{
		char	   *out = static_cast<char *>(pinned_out);
		const uint32_t *got_idx = reinterpret_cast<const uint32_t *>(out + key_area);

		memset(out, 0x5A, key_area + idx_area + SCRATCH_GUARD_BYTES);
		must(gpuext_cuda_copy_to_host(out, d_keys, key_area), "key download");
		must(gpuext_cuda_copy_to_host(out + key_area, d_idx, idx_area), "index download");
		must(gpuext_cuda_copy_to_host(out + key_area + idx_area, static_cast<char *>(d_scratch) + scratch_bytes,
									  SCRATCH_GUARD_BYTES),
			 "scratch guard download");
		must(gpuext_cuda_wait(-1, nullptr, nullptr), "download wait");
		for (size_t i = 0; i < n && ok; i++)
			if (key_at(out, i, key_bytes) != want[i].first || got_idx[i] != want[i].second)
			{
				snprintf(detail, sizeof(detail), "pair %zu is (%#" PRIx64 ", %u), expected (%#" PRIx64 ", %u)", i,
						 key_at(out, i, key_bytes), got_idx[i], want[i].first, want[i].second);
				ok = false;
			}
		for (size_t b = 0; b < key_area + idx_area + SCRATCH_GUARD_BYTES && ok; b++)
		{
			bool		data = b < n * key_bytes || (b >= key_area && b < key_area + n * 4);

			if (!data && (unsigned char) out[b] != POISON)
			{
				snprintf(detail, sizeof(detail), "byte %zu of the keys, indices and scratch guard was overwritten", b);
				ok = false;
			}
		}
	}
	gpuext_cuda_free(d_keys);
	gpuext_cuda_free(d_idx);
	gpuext_cuda_free(d_scratch);
	report(ok, what, detail);
}

/* Pairs over both widths, the patterns with ties, and sizes around every tile shape; indices random, some equal. */
void run_pair_checks(bool quick, uint64_t seed)
{
	std::vector<size_t> sizes;
	void	   *d = nullptr;
	size_t		bytes = 0;

	if (quick)
		sizes = {0, 1, 2, 33, 2049, 4097, 70001};
	else
		sizes = {0, 1, 2, 3, 31, 33, 1023, 1025, 2048, 2049, 4097, 8193, 65537, 131071, 1000003, (1u << 20) + 1};
	auto		check_one = [&](int kb, Pattern pattern, size_t n, int shape) {
		std::mt19937_64 rng(seed ^ (n * 0x51ED27F1ull) ^ ((uint64_t) pattern << 44) ^ ((uint64_t) kb << 52));
		std::vector<uint64_t> keys(n);
		std::vector<uint32_t> idx(n);

		generate(keys, pattern, kb, rng);
		for (size_t i = 0; i < n; i++)
			idx[i] = (uint32_t) (rng() % (n + n / 8 + 1));
		check_pairs(kb, pattern, n, keys, idx, shape);
	};

	for (int kb = 4; kb <= 8; kb += 4)
		for (int p = 0; p < NUM_PATTERNS; p++)
		{
			Pattern		pattern = static_cast<Pattern>(p);

			if ((quick && pattern != RANDOM && pattern != FEW_16) ||
				(only_pattern != nullptr && strcmp(only_pattern, PATTERN_NAMES[p]) != 0))
				continue;
			for (size_t n : sizes)
				if (n <= max_n)
					check_one(kb, pattern, n, -1);
			/* 2048-pair tiles past 2^23: a stage of 13 strides above the tile takes both shared-memory passes. */
			if (!quick && kb == 8 && (pattern == RANDOM || pattern == FEW_16) && ((size_t) 1 << 23) + 1 <= max_n)
				check_one(kb, pattern, ((size_t) 1 << 23) + 1, 2);
		}

	must(gpuext_cuda_alloc(&d, 4096), "allocation");
	expect_invalid("quicksort pairs are refused", gpuext_sort_pairs_scratch_bytes(GPUEXT_SORT_QUICKSORT, 4, 10,
																				  &bytes));
	expect_invalid("2-byte pair keys are refused", gpuext_sort_pairs_scratch_bytes(GPUEXT_SORT_BITONIC, 2, 10,
																				   &bytes));
	bytes = 1;
	must(gpuext_sort_pairs_scratch_bytes(GPUEXT_SORT_BITONIC, 8, 100, &bytes), "pairs scratch query");
	report(bytes == 0, "bitonic pairs need no scratch", "");
	expect_invalid("pairs without indices are refused",
				   gpuext_sort_pairs(GPUEXT_SORT_BITONIC, 4, d, nullptr, 100, nullptr, 0));
	expect_invalid("pair keys off 16-byte alignment are refused",
				   gpuext_sort_pairs(GPUEXT_SORT_BITONIC, 8, static_cast<char *>(d) + 8,
									 reinterpret_cast<uint32_t *>(static_cast<char *>(d) + 2048), 100, nullptr, 0));
	expect_invalid("pair indices off 16-byte alignment are refused",
				   gpuext_sort_pairs(GPUEXT_SORT_BITONIC, 4, d,
									 reinterpret_cast<uint32_t *>(static_cast<char *>(d) + 2052), 100, nullptr, 0));
	gpuext_cuda_free(d);
}
