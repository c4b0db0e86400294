/*
 * harness_reduce_fixed.cuh
 *		kernel_harness's checks of gpuext_reduce over 16-byte values (signed
 *		128-bit integers, the fixed-point numerics): count and 192-bit sum
 *		against a CPU reference that adds three sign-extended 64-bit limbs
 *		(not the kernel's carry count), at awkward sizes, every pattern, an
 *		aligned and a one-value-off address, with the result and scratch
 *		poisoned first and the bytes past the scratch intact after.
 *		Included by kernel_harness.cu inside its namespace (its helpers).
 */

/* Fixed-point reduction inputs. */
enum FixedPattern
{
	FIX_RANDOM38,				/* uniform, |v| < 10^38 (what agg_numeric.c sends) */
	FIX_SMALL,					/* |v| < 2^20, both signs */
	FIX_ALL_EQUAL_MAX,			/* every value 10^38 - 1 */
	FIX_INT128_LIMITS,			/* INT128_MAX, INT128_MIN, -1, 0, 1 */
	FIX_NEAR_MAX_POS,			/* all near INT128_MAX: the sum needs the top word */
	FIX_NEAR_MIN_NEG,			/* all near INT128_MIN */
	FIX_CANCEL,					/* +-big pairs around small values */
	NUM_FIXED_PATTERNS
};
const char *const FIXED_PATTERN_NAMES[] = {"random-38-digits", "small", "all-equal-max", "int128-limits",
										   "near-int128-max", "near-int128-min", "cancel"};

/* 10^38 - 1. */
__int128 fixed_max38()
{
	__int128	v = 1;

	for (int i = 0; i < 38; i++)
		v *= 10;
	return v - 1;
}

/* Fill bits with pattern p. */
void generate_fixed(std::vector<__int128> &v, FixedPattern p, std::mt19937_64 &rng)
{
	const __int128 imax = (__int128) (~(unsigned __int128) 0 >> 1);
	const __int128 imin = -imax - 1;
	const __int128 m38 = fixed_max38();

	for (size_t i = 0; i < v.size(); i++)
	{
		unsigned __int128 r = ((unsigned __int128) rng() << 64) | rng();

		switch (p)
		{
			case FIX_RANDOM38:
				v[i] = (__int128) (r % (unsigned __int128) m38) * (rng() % 2 ? 1 : -1);
				break;
			case FIX_SMALL:
				v[i] = (__int128) (int64_t) (rng() % (1u << 21)) - (1 << 20);
				break;
			case FIX_ALL_EQUAL_MAX:
				v[i] = m38;
				break;
			case FIX_INT128_LIMITS:
				{
					const __int128 choices[] = {imax, imin, -1, 0, 1, imax - 1, imin + 1};

					v[i] = choices[rng() % 7];
				}
				break;
			case FIX_NEAR_MAX_POS:
				v[i] = imax - (__int128) (rng() % 1000);
				break;
			case FIX_NEAR_MIN_NEG:
				v[i] = imin + (__int128) (rng() % 1000);
				break;
			case FIX_CANCEL:
				v[i] = i % 3 == 2 ? (__int128) (int64_t) (rng() % 100) - 50
					: i % 3 == 0 ? (__int128) (r >> 2) : -v[i - 1];
				break;
			case NUM_FIXED_PATTERNS:
				break;
		}
	}
}

/* The result gpuext_reduce must give for 16-byte values: count, the sum in three limbs, zeros elsewhere. */
GpuextReduceResult reference_fixed(const std::vector<__int128> &v)
{
	GpuextReduceResult r;
	uint64_t	limb[3] = {0, 0, 0};

	memset(&r, 0, sizeof(r));
	r.count = v.size();
	for (__int128 x : v)
	{
		uint64_t	add[3] = {(uint64_t) x, (uint64_t) ((unsigned __int128) x >> 64), x < 0 ? ~(uint64_t) 0 : 0};
		unsigned __int128 carry = 0;

		for (int k = 0; k < 3; k++)
		{
			unsigned __int128 s = (unsigned __int128) limb[k] + add[k] + carry;

			limb[k] = (uint64_t) s;
			carry = s >> 64;
		}
	}
	r.isum_lo = limb[0];
	r.isum_hi = (int64_t) limb[1];
	r.isum_top = (int64_t) limb[2];
	return r;
}

/* First differing field, described; empty when equal. */
std::string fixed_mismatch(const GpuextReduceResult &got, const GpuextReduceResult &want)
{
	std::string d = reduce_mismatch(got, want);
	char		buf[128];

	if (d.empty() && got.isum_top != want.isum_top)
	{
		snprintf(buf, sizeof(buf), "isum_top is %" PRId64 ", expected %" PRId64, got.isum_top, want.isum_top);
		d = buf;
	}
	return d;
}

/* Reduce n values (offset values past an aligned allocation) and compare; one case. */
void check_fixed(FixedPattern p, size_t n, size_t offset, const std::vector<__int128> &v, const GpuextReduceResult &want)
{
	const size_t value_area = (offset + n + GUARD_KEYS) * 16;
	char		what[160];
	std::string detail;
	size_t		scratch_bytes = 0;
	void	   *d_values = nullptr;
	void	   *d_scratch = nullptr;
	char	   *out;
	size_t		bad;
	GpuextStatus st;

	snprintf(what, sizeof(what), "reduce int128 %s n=%zu offset=%zu", FIXED_PATTERN_NAMES[p], n, offset);
	st = gpuext_reduce_scratch_bytes(16, 0, n, &scratch_bytes);
	if (st != GPUEXT_OK)
	{
		report(false, what, std::string("scratch size query: ") + gpuext_cuda_error_message());
		return;
	}
	ensure_pinned(std::max(value_area, SCRATCH_GUARD_BYTES));
	must(gpuext_cuda_alloc(&d_values, value_area), "value allocation");
	must(gpuext_cuda_alloc(&d_scratch, scratch_bytes + SCRATCH_GUARD_BYTES), "scratch allocation");
	poison_device(d_values, value_area);
	poison_device(d_scratch, scratch_bytes + SCRATCH_GUARD_BYTES);
	if (n > 0)
		memcpy(pinned_in, v.data(), n * 16);
	must(gpuext_cuda_copy_to_device(static_cast<char *>(d_values) + offset * 16, pinned_in, n * 16), "value upload");
	memset(pinned_result, POISON, sizeof(GpuextReduceResult));

	st = gpuext_reduce(16, 0, static_cast<char *>(d_values) + offset * 16, n, d_scratch, scratch_bytes, pinned_result);
	if (st == GPUEXT_OK)
		st = gpuext_cuda_wait(-1, nullptr, nullptr);
	if (st != GPUEXT_OK)
		detail = std::string("status ") + std::to_string((int) st) + ": " + gpuext_cuda_error_message();
	else
	{
		detail = fixed_mismatch(*pinned_result, want);
		out = static_cast<char *>(pinned_out);
		memset(out, 0x5A, SCRATCH_GUARD_BYTES);
		must(gpuext_cuda_copy_to_host(out, static_cast<char *>(d_scratch) + scratch_bytes, SCRATCH_GUARD_BYTES),
			 "scratch guard download");
		must(gpuext_cuda_wait(-1, nullptr, nullptr), "download wait");
		if (detail.empty() && (bad = first_not(out, SCRATCH_GUARD_BYTES, POISON)) < SCRATCH_GUARD_BYTES)
			detail = "byte " + std::to_string(bad) + " past the " + std::to_string(scratch_bytes) +
				" scratch bytes was overwritten";
	}
	gpuext_cuda_free(d_values);
	gpuext_cuda_free(d_scratch);
	report(detail.empty(), what, detail);
}

/* 16-byte argument checks: floats and 8-byte misalignment refused. */
void check_fixed_arguments()
{
	void	   *d_values = nullptr;
	void	   *d_scratch = nullptr;
	size_t		bytes = 0;
	const size_t n = 1000;

	expect_invalid("reduce: 16-byte floats are refused", gpuext_reduce_scratch_bytes(16, 1, n, &bytes));
	must(gpuext_reduce_scratch_bytes(16, 0, n, &bytes), "16-byte reduce scratch size query");
	must(gpuext_cuda_alloc(&d_values, n * 16 + 16), "allocation");
	must(gpuext_cuda_alloc(&d_scratch, bytes), "allocation");
	expect_invalid("reduce: int128 values 8 bytes off alignment are refused",
				   gpuext_reduce(16, 0, static_cast<char *>(d_values) + 8, n, d_scratch, bytes, pinned_result));
	expect_invalid("reduce: int128, one byte too little scratch is refused",
				   gpuext_reduce(16, 0, d_values, n, d_scratch, bytes - 1, pinned_result));
	expect_invalid("reduce: int128, null result is refused", gpuext_reduce(16, 0, d_values, n, d_scratch, bytes, nullptr));
	gpuext_cuda_free(d_values);
	gpuext_cuda_free(d_scratch);
}

/* Every pattern at every size (0, 1, powers of two and their neighbours, primes), two alignments. */
void run_fixed_reduce_checks(bool quick, uint64_t seed)
{
	std::vector<size_t> sizes;

	if (quick)
		sizes = {0, 1, 2, 3, 31, 33, 257, 2049, 65537, 262147};
	else
		sizes = {0, 1, 2, 3, 5, 7, 8, 9, 31, 32, 33, 127, 255, 256, 257, 1021, 1023, 1024, 1025, 2047, 2048, 2049,
				 65521, 65535, 65537, 131071, 262147, 1000003, (1u << 21) - 1, (1u << 21) + 1, 4194301};
	check_fixed_arguments();
	for (int pi = 0; pi < NUM_FIXED_PATTERNS; pi++)
	{
		FixedPattern p = static_cast<FixedPattern>(pi);

		if (only_pattern != nullptr && strcmp(only_pattern, FIXED_PATTERN_NAMES[p]) != 0)
			continue;
		for (size_t n : sizes)
		{
			std::mt19937_64 rng(seed ^ (n * 0x9E3779B97F4A7C15ull) ^ ((uint64_t) pi << 40) ^ (16ull << 56));
			std::vector<__int128> v(n);
			GpuextReduceResult want;

			if (n > max_n)
				continue;
			generate_fixed(v, p, rng);
			want = reference_fixed(v);
			for (size_t offset = 0; offset < 2; offset++)
				check_fixed(p, n, offset, v, want);
		}
	}
}
