/*
 * harness_groups.cuh
 *		kernel_harness's checks of the grouped reduction (gpuext_groups_*):
 *		the device against reduce_groups_cpu.c bit for bit (every result
 *		field, the whole states buffer), for every value type x pattern (the
 *		reductions' and small integers) x size x group count x group layout
 *		(random, in runs).  Each case runs the same calls on both: clear the
 *		first half of the groups, add the first half of the values in three
 *		calls (values of groups not yet cleared are left out), read the
 *		results, clear the other groups (growth), add the rest in two calls,
 *		read them again; states and results are poisoned first, so untouched
 *		states and the guards past both must stay poison.  Independent
 *		references check the CPU's final results: counts, keys, flags and
 *		128-bit integer sums computed here, float sums through gpuext_reduce's
 *		host accumulation, and sums of small integers added as doubles.
 *		Included by kernel_harness.cu inside its namespace (its helpers).
 */

enum GroupLayout
{
	GROUPS_RANDOM,
	GROUPS_RUNS,				/* group numbers ascending: lanes of a warp mostly share one */
	NUM_GROUP_LAYOUTS
};
const char *const GROUP_LAYOUT_NAMES[] = {"random", "runs"};

/* The group family's own pattern after the reductions': small integers, any type. */
constexpr int GROUP_SMALL_INTS = NUM_REDUCE_PATTERNS;
constexpr size_t GROUP_GUARD_BYTES = 4096;

/* A group-family pattern's name. */
const char *group_pattern_name(int p)
{
	return p == GROUP_SMALL_INTS ? "small-integers" : REDUCE_PATTERN_NAMES[p];
}

/* Group numbers below ngroups, at random or ascending in runs. */
void generate_groups(std::vector<uint32_t> &groups, uint32_t ngroups, GroupLayout layout, std::mt19937_64 &rng)
{
	for (uint32_t &g : groups)
		g = (uint32_t) (rng() % ngroups);
	if (layout == GROUPS_RUNS)
		std::sort(groups.begin(), groups.end());
}

/* The first field where two results differ, described; empty when their bytes are equal. */
std::string group_mismatch(const GpuextGroupResult &got, const GpuextGroupResult &want)
{
	char		buf[256];

#define FIELD(f, fmt) \
	if (memcmp(&got.f, &want.f, sizeof(got.f)) != 0) \
	{ \
		snprintf(buf, sizeof(buf), #f " is " fmt ", expected " fmt, got.f, want.f); \
		return buf; \
	}
	FIELD(count, "%" PRIu64);
	FIELD(min_key, "%#" PRIx64);
	FIELD(max_key, "%#" PRIx64);
	FIELD(isum_lo, "%#" PRIx64);
	FIELD(isum_hi, "%" PRId64);
	FIELD(flags, "%u");
	FIELD(pad, "%#x");
	FIELD(sum, "%a");
	FIELD(sum_real, "%a");
#undef FIELD
	return memcmp(&got, &want, sizeof(got)) == 0 ? "" : "padding bytes differ";
}

/* First difference between the device's and the CPU's results and states; empty when none. */
std::string group_buffers_differ(const char *stage, const std::vector<GpuextGroupResult> &dev_results,
								 const std::vector<GpuextGroupResult> &cpu_results, const std::vector<char> &dev_states,
								 const std::vector<char> &cpu_states, size_t state_bytes)
{
	for (size_t g = 0; g < cpu_results.size(); g++)
	{
		std::string d = group_mismatch(dev_results[g], cpu_results[g]);

		if (!d.empty())
			return std::string(stage) + ": group " + std::to_string(g) + ": " + d;
	}
	for (size_t i = 0; i < cpu_states.size(); i++)
		if (dev_states[i] != cpu_states[i])
			return std::string(stage) + ": states differ at byte " + std::to_string(i % state_bytes) +
				" of group " + std::to_string(i / state_bytes);
	return "";
}

/* Generate the values of a group-family pattern. */
void generate_group_values(std::vector<uint64_t> &bits, const ReduceType &t, int p, std::mt19937_64 &rng)
{
	if (p != GROUP_SMALL_INTS)
	{
		generate_reduce(bits, t, static_cast<ReducePattern>(p), rng);
		return;
	}
	for (uint64_t &b : bits)
	{
		int64_t		v = (int64_t) (rng() % 2001) - 1000;

		b = t.is_float ? value_bits(t, (double) v) : (uint64_t) v & (t.value_bytes == 8 ? ~0ull
																	 : (1ull << (8 * t.value_bytes)) - 1);
	}
}

/*
 * Check the CPU's final results against references computed here; in[i]
 * says whether value i was added.  Returns the first difference, or empty.
 */
std::string group_reference_differs(const ReduceType &t, int p, const std::vector<uint64_t> &bits,
									const std::vector<uint32_t> &groups, const std::vector<bool> &in,
									const std::vector<GpuextGroupResult> &res)
{
	const size_t ng = res.size();
	std::vector<uint64_t> count(ng, 0),
				min_key(ng, UINT64_MAX),
				max_key(ng, 0);
	std::vector<__int128> isum(ng, 0);
	std::vector<uint32_t> flags(ng, 0);
	std::vector<GpuextReduceResult> exact(t.is_float ? ng : 0);
	std::vector<double> small_sum(ng, 0.0);
	uint64_t	pending = 0;

	for (GpuextReduceResult &r : exact)
		memset(&r, 0, sizeof(r));
	for (size_t i = 0; i < bits.size(); i++)
	{
		uint32_t	g = groups[i];
		uint64_t	key = value_key(t, bits[i]);

		if (!in[i])
			continue;
		count[g]++;
		min_key[g] = std::min(min_key[g], key);
		max_key[g] = std::max(max_key[g], key);
		if (!t.is_float)
		{
			isum[g] += bits_int(t, bits[i]);
			continue;
		}
		double		d = bits_double(t, bits[i]);

		if (std::isnan(d))
			flags[g] |= GPUEXT_GROUP_NAN;
		else if (std::isinf(d))
			flags[g] |= d > 0 ? GPUEXT_GROUP_POS_INF : GPUEXT_GROUP_NEG_INF;
		else
			small_sum[g] += d;
		gpuext_reduce_result_add_double(&exact[g], d, &pending);
	}
	for (size_t g = 0; g < ng; g++)
	{
		const GpuextGroupResult &r = res[g];
		__int128	got = (__int128) (((unsigned __int128) (uint64_t) r.isum_hi << 64) | r.isum_lo);
		std::string where = "reference: group " + std::to_string(g) + ": ";

		if (r.count != count[g] || r.min_key != min_key[g] || r.max_key != max_key[g])
			return where + "count or keys differ";
		if (r.flags != flags[g] || got != isum[g])
			return where + "flags or integer sum differ";
		if (!t.is_float)
			continue;
		gpuext_exact_normalize(exact[g].digits);
		double		sum = gpuext_exact_round(exact[g].digits, 53, -1074);
		double		sum_real = gpuext_exact_round(exact[g].digits, 24, -149);

		if (memcmp(&sum, &r.sum, 8) != 0 || memcmp(&sum_real, &r.sum_real, 8) != 0)
			return where + "float sum differs from gpuext_reduce's accumulation";
		if (p == GROUP_SMALL_INTS && (r.sum != small_sum[g] || r.sum_real != (double) (float) small_sum[g]))
			return where + "float sum differs from the small integers' double sum";
	}
	return "";
}

/* Run the case's calls on the device (dev) or the CPU; false with detail set when a call fails. */
struct GroupRun
{
	const ReduceType &t;
	size_t		n;
	uint32_t	ngroups;
	uint32_t	g1;				/* groups cleared before the first half */
	std::vector<size_t> cuts;	/* value ranges of the add calls: [cuts[k], cuts[k + 1]) */
	size_t		half_call;		/* calls before this index add to g1 groups */

	/* Clear, add, result and grow as the file header says; downloads after each result. */
	bool run(bool dev, char *values, uint32_t *groups, char *states, GpuextGroupResult *results,
			 std::vector<GpuextGroupResult> out[2], std::vector<char> out_states[2], std::string &detail) const
	{
		const size_t sb = GPUEXT_GROUP_STATE_BYTES(t.is_float);
		GpuextStatus st = GPUEXT_OK;

		for (int stage = 0; stage < 2; stage++)
		{
			uint32_t	first = stage == 0 ? 0 : g1;
			uint32_t	count = stage == 0 ? g1 : ngroups - g1;
			uint32_t	ng = stage == 0 ? g1 : ngroups;

			if (dev)
				st = gpuext_groups_clear(t.is_float, states, first, count);
			else
				gpuext_groups_clear_cpu(t.is_float, states, first, count);
			for (size_t k = stage == 0 ? 0 : half_call; st == GPUEXT_OK && k < (stage == 0 ? half_call : cuts.size() - 1);
				 k++)
			{
				size_t		a = cuts[k],
							m = cuts[k + 1] - cuts[k];

				if (dev)
					st = gpuext_groups_add(t.value_bytes, t.is_float, values + a * t.value_bytes, groups + a, m,
										   states, ng);
				else
					gpuext_groups_add_cpu(t.value_bytes, t.is_float, values + a * t.value_bytes, groups + a, m,
										  states, ng);
			}
			if (dev && st == GPUEXT_OK)
				st = gpuext_groups_result(t.value_bytes, t.is_float, states, ng, results);
			else if (!dev)
				gpuext_groups_result_cpu(t.value_bytes, t.is_float, states, ng, results);
			if (dev && st == GPUEXT_OK)
			{
				must(gpuext_cuda_copy_to_host(pinned_out, results, ngroups * sizeof(GpuextGroupResult)),
					 "results download");
				must(gpuext_cuda_wait(-1, nullptr, nullptr), "results download");
				memcpy(out[stage].data(), pinned_out, ngroups * sizeof(GpuextGroupResult));
				must(gpuext_cuda_copy_to_host(pinned_out, states, ngroups * sb), "states download");
				must(gpuext_cuda_wait(-1, nullptr, nullptr), "states download");
				memcpy(out_states[stage].data(), pinned_out, ngroups * sb);
			}
			else if (!dev)
			{
				memcpy(out[stage].data(), results, ngroups * sizeof(GpuextGroupResult));
				memcpy(out_states[stage].data(), states, ngroups * sb);
			}
			if (st != GPUEXT_OK)
			{
				detail = std::string("status ") + std::to_string((int) st) + ": " + gpuext_cuda_error_message();
				return false;
			}
		}
		return true;
	}
};

/* One case: the device and the CPU through the same calls, then the references; one report. */
void check_groups(const ReduceType &t, int p, GroupLayout layout, size_t n, uint32_t ngroups, std::mt19937_64 &rng)
{
	const size_t vb = t.value_bytes;
	const size_t sb = GPUEXT_GROUP_STATE_BYTES(t.is_float);
	const size_t states_area = ngroups * sb + GROUP_GUARD_BYTES;
	const size_t results_area = ngroups * sizeof(GpuextGroupResult) + GROUP_GUARD_BYTES;
	std::vector<uint64_t> bits(n);
	std::vector<uint32_t> groups(n);
	std::vector<char> values(n * vb + 8);
	std::vector<char> cpu_states(ngroups * sb, (char) POISON);
	std::vector<GpuextGroupResult> cpu_results(ngroups);
	std::vector<GpuextGroupResult> res[2][2];
	std::vector<char> st[2][2];
	std::vector<bool> in(n);
	GroupRun	r = {t, n, ngroups, std::max<uint32_t>(1, ngroups / 2), {}, 3};
	char		what[200];
	std::string detail;
	void	   *d_values = nullptr,
			   *d_groups = nullptr,
			   *d_states = nullptr,
			   *d_results = nullptr;
	size_t		bad;

	snprintf(what, sizeof(what), "groups %s %s n=%zu groups=%u %s", t.name, group_pattern_name(p), n, ngroups,
			 GROUP_LAYOUT_NAMES[layout]);
	generate_group_values(bits, t, p, rng);
	generate_groups(groups, ngroups, layout, rng);
	for (size_t i = 0; i < n; i++)
		memcpy(&values[i * vb], &bits[i], vb);
	/* Three calls over the first half, two over the rest, cut at random */
	r.cuts = {0, rng() % (n / 2 + 1), rng() % (n / 2 + 1), n / 2, n / 2 + rng() % (n - n / 2 + 1), n};
	std::sort(r.cuts.begin() + 1, r.cuts.begin() + 3);
	for (size_t i = 0; i < n; i++)
		in[i] = i >= n / 2 || groups[i] < r.g1;
	for (int d = 0; d < 2; d++)
		for (int s = 0; s < 2; s++)
		{
			res[d][s].resize(ngroups);
			st[d][s].resize(ngroups * sb);
		}
	memset(cpu_results.data(), POISON, ngroups * sizeof(GpuextGroupResult));

	ensure_pinned(std::max({n * vb + 8, n * 4 + 8, states_area, results_area, 2 * GROUP_GUARD_BYTES}));
	must(gpuext_cuda_alloc(&d_values, n * vb + 8), "value allocation");
	must(gpuext_cuda_alloc(&d_groups, n * 4 + 8), "group allocation");
	must(gpuext_cuda_alloc(&d_states, states_area), "state allocation");
	must(gpuext_cuda_alloc(&d_results, results_area), "result allocation");
	poison_device(d_states, states_area);
	poison_device(d_results, results_area);
	memcpy(pinned_in, values.data(), n * vb);
	must(gpuext_cuda_copy_to_device(d_values, pinned_in, n * vb), "value upload");
	must(gpuext_cuda_wait(-1, nullptr, nullptr), "value upload");
	memcpy(pinned_in, groups.data(), n * 4);
	must(gpuext_cuda_copy_to_device(d_groups, pinned_in, n * 4), "group upload");
	must(gpuext_cuda_wait(-1, nullptr, nullptr), "group upload");

	r.run(false, values.data(), groups.data(), cpu_states.data(), cpu_results.data(), res[0], st[0], detail);
	if (r.run(true, static_cast<char *>(d_values), static_cast<uint32_t *>(d_groups), static_cast<char *>(d_states),
			  static_cast<GpuextGroupResult *>(d_results), res[1], st[1], detail))
	{
		detail = group_buffers_differ("after the first half", res[1][0], res[0][0], st[1][0], st[0][0], sb);
		if (detail.empty())
			detail = group_buffers_differ("at the end", res[1][1], res[0][1], st[1][1], st[0][1], sb);
		must(gpuext_cuda_copy_to_host(pinned_out, static_cast<char *>(d_states) + ngroups * sb, GROUP_GUARD_BYTES),
			 "guard download");
		must(gpuext_cuda_copy_to_host(static_cast<char *>(pinned_out) + GROUP_GUARD_BYTES,
									  static_cast<char *>(d_results) + ngroups * sizeof(GpuextGroupResult),
									  GROUP_GUARD_BYTES),
			 "guard download");
		must(gpuext_cuda_wait(-1, nullptr, nullptr), "guard download");
		if (detail.empty() &&
			(bad = first_not(static_cast<char *>(pinned_out), 2 * GROUP_GUARD_BYTES, POISON)) < 2 * GROUP_GUARD_BYTES)
			detail = std::string("byte ") + std::to_string(bad % GROUP_GUARD_BYTES) + " past the " +
				(bad < GROUP_GUARD_BYTES ? "states" : "results") + " was overwritten";
		if (detail.empty())
			detail = group_reference_differs(t, p, bits, groups, in, res[0][1]);
	}
	gpuext_cuda_free(d_values);
	gpuext_cuda_free(d_groups);
	gpuext_cuda_free(d_states);
	gpuext_cuda_free(d_results);
	report(detail.empty(), what, detail);
}

/* Argument checks: value types, null and unaligned pointers, too many values, clears past 2^32 groups. */
void check_group_arguments()
{
	void	   *d = nullptr;
	char	   *b;
	uint32_t   *g;
	GpuextGroupResult *res;
	GpuextStatus st;

	must(gpuext_cuda_alloc(&d, 1 << 16), "allocation");
	b = static_cast<char *>(d);
	g = reinterpret_cast<uint32_t *>(b + 4096);
	res = reinterpret_cast<GpuextGroupResult *>(b + 8192);
	expect_invalid("groups: 2-byte floats are refused", gpuext_groups_add(2, 1, b, g, 10, b + 16384, 4));
	expect_invalid("groups: 16-byte values are refused", gpuext_groups_add(16, 0, b, g, 10, b + 16384, 4));
	expect_invalid("groups: 3-byte values are refused", gpuext_groups_add(3, 0, b, g, 10, b + 16384, 4));
	expect_invalid("groups: null values are refused", gpuext_groups_add(8, 0, nullptr, g, 10, b + 16384, 4));
	expect_invalid("groups: null groups are refused", gpuext_groups_add(8, 0, b, nullptr, 10, b + 16384, 4));
	expect_invalid("groups: null states are refused", gpuext_groups_add(8, 0, b, g, 10, nullptr, 4));
	expect_invalid("groups: int4 values 2 bytes off alignment are refused",
				   gpuext_groups_add(4, 0, b + 2, g, 10, b + 16384, 4));
	expect_invalid("groups: more than GPUEXT_GROUP_ADD_MAX values in a call are refused",
				   gpuext_groups_add(4, 0, b, g, GPUEXT_GROUP_ADD_MAX + 1, b + 16384, 4));
	expect_invalid("groups: 2-byte float results are refused", gpuext_groups_result(2, 1, b + 16384, 4, res));
	expect_invalid("groups: null states for results are refused", gpuext_groups_result(8, 1, nullptr, 4, res));
	expect_invalid("groups: null results are refused", gpuext_groups_result(8, 1, b + 16384, 4, nullptr));
	expect_invalid("groups: a clear of null states is refused", gpuext_groups_clear(1, nullptr, 0, 4));
	expect_invalid("groups: a clear past group 2^32 - 1 is refused", gpuext_groups_clear(1, b + 16384, UINT32_MAX, 2));
	st = gpuext_groups_add(8, 1, nullptr, nullptr, 0, nullptr, 4);
	if (st == GPUEXT_OK)
		st = gpuext_groups_result(8, 1, nullptr, 0, nullptr);
	if (st == GPUEXT_OK)
		st = gpuext_groups_clear(1, nullptr, 7, 0);
	if (st == GPUEXT_OK)
		st = gpuext_cuda_wait(-1, nullptr, nullptr);
	report(st == GPUEXT_OK, "groups: no values, no groups and an empty clear at null pointers do nothing",
		   st == GPUEXT_OK ? "" : gpuext_cuda_error_message());
	gpuext_cuda_free(d);
}

/* Every type x pattern x size x group count x layout. */
void run_group_checks(bool quick, uint64_t seed)
{
	std::vector<size_t> sizes;

	if (quick)
		sizes = {0, 1, 31, 1025, 65537};
	else
		sizes = {0, 1, 2, 31, 1023, 1025, 65537, 100003};
	check_group_arguments();
	for (const ReduceType &t : REDUCE_TYPES)
		for (int p = 0; p <= GROUP_SMALL_INTS; p++)
		{
			if ((p < GROUP_SMALL_INTS && !reduce_pattern_applies(t, static_cast<ReducePattern>(p))) ||
				(quick && (p == RED_SORTED || p == RED_REVERSE || p == RED_FEW_16)) ||
				(only_pattern != nullptr && strcmp(only_pattern, group_pattern_name(p)) != 0))
				continue;
			for (size_t n : sizes)
			{
				if (n > max_n)
					continue;
				for (uint32_t ngroups : {(uint32_t) 1, (uint32_t) 2, (uint32_t) 7, (uint32_t) 1000, (uint32_t) n + 1})
					for (int layout = 0; layout < NUM_GROUP_LAYOUTS; layout++)
					{
						std::mt19937_64 rng(seed ^ (n * 0x9E3779B97F4A7C15ull) ^ ((uint64_t) p << 40) ^
											((uint64_t) (t.value_bytes + 16 * t.is_float) << 56) ^
											((uint64_t) ngroups << 20) ^ (uint64_t) layout);

						if ((ngroups == 1 && layout == GROUPS_RUNS) || (ngroups == n + 1 && ngroups <= 2))
							continue;
						check_groups(t, p, static_cast<GroupLayout>(layout), n, ngroups, rng);
					}
			}
		}
}
