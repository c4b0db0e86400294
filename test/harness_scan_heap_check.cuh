/*
 * harness_scan_heap_check.cuh
 *		kernel_harness's checks of the device scan (gpuext_scan_heap): the page
 *		sets of harness_scan_heap_pages.cuh run through the programs of
 *		harness_scan_heap_programs.cuh on the device and through
 *		gpuext_scan_heap_host on the CPU.  Every counter must match, and each
 *		output's values as a multiset (the device's order is arbitrary); the
 *		counters and outputs are poisoned first, so the bytes past each
 *		output's values, past the outputs and past the counters must stay
 *		poison.  The builder's record checks the CPU in turn: the tuples it
 *		made decodable and undecodable, and for programs without WHERE or
 *		FILTER each output's values.  Sets: no pages; one page of 0 to 291
 *		items, all visible or listed; a batch; pages with corrupt items, page
 *		headers and item lists; pages with bytes flipped at random (only the CPU
 *		to compare with).  Refused programs and buffers must launch nothing.
 *		Seeds are fixed.  Included after harness_scan_heap_programs.cuh.
 */

/*
 * n values of value_bytes bytes at buf + offset, zero-extended, sorted.  A
 * computed double's or real's NaN is made one NaN: the device's NaN bits are
 * not the host's, and every NaN is the same value to PostgreSQL and the
 * reductions.
 */
std::vector<uint64_t> scan_values(const char *buf, uint64_t offset, uint64_t n, int value_bytes, bool computed)
{
	std::vector<uint64_t> v(n, 0);

	for (uint64_t i = 0; i < n; i++)
	{
		memcpy(&v[i], buf + offset + i * value_bytes, value_bytes);
		if (computed && value_bytes == 8 && (v[i] & ~(UINT64_C(1) << 63)) > UINT64_C(0x7FF0000000000000))
			v[i] = UINT64_C(0x7FF8000000000000);
		if (computed && value_bytes == 4 && (v[i] & 0x7FFFFFFFu) > 0x7F800000u)
			v[i] = 0x7FC00000u;
	}
	std::sort(v.begin(), v.end());
	return v;
}

/* Whether program p's walk reaches column att of a tuple of natts columns. */
bool scan_reaches(const GpuextScanProgram &p, int att, int natts)
{
	return p.ncols > 0 && att <= p.cols[p.ncols - 1].att && att < natts;
}

/*
 * The CPU's counters (hc) and sorted values (hv) against the builder's
 * record: the tuples decoded and undecodable, and where the program has no
 * WHERE clause or FILTER, each output's count and values.  The first
 * difference, or empty.
 */
std::string scan_reference_differs(const GpuextScanProgram &p, const ScanSet &s, const uint64_t *hc,
								   const std::vector<std::vector<uint64_t>> &hv)
{
	bool		plain = p.nquals == 0;
	uint64_t	decoded = 0,
				bad = 0;
	std::vector<uint64_t> count(p.nouts, 0);
	std::vector<std::vector<uint64_t>> want(p.nouts);
	char		buf[200];

	for (int o = 0; o < p.nouts; o++)
		plain = plain && p.outs[o].filter_n == 0;
	for (const ScanVisit &v : s.visits)
	{
		if (v.state == SCAN_SKIP)
			continue;
		if (v.state == SCAN_BAD_HEADER)
		{
			bad++;
			continue;
		}
		const ScanRow &r = s.items[v.page][v.item - 1].row;

		if (v.state >= 0 && scan_reaches(p, v.state, r.natts))
		{
			bad++;
			continue;
		}
		/* a column read as its bytes must be inline */
		bool		toasted = false;

		for (int c = 0; c < p.ncols; c++)
			toasted = toasted || (p.cols[c].kind == GPUEXT_SCAN_BYTES && p.cols[c].att < r.natts &&
								  !r.null[p.cols[c].att] && r.toast[p.cols[c].att]);
		if (toasted)
		{
			bad++;
			continue;
		}
		decoded++;
		for (int o = 0; o < p.nouts && plain; o++)
		{
			const GpuextScanOut &out = p.outs[o];
			int64_t		val = 0;

			if (out.col >= 0)
			{
				const GpuextScanCol &c = p.cols[out.col];

				if (c.att < r.natts ? r.null[c.att] : c.missing_null)
					continue;
				val = c.att < r.natts ? r.val[c.att] : c.missing;
			}
			count[o]++;
			if (out.value_bytes > 0)
				want[o].push_back(scan_low_bytes(val, out.value_bytes));
		}
	}
	if (hc[GPUEXT_SCAN_DECODED] != decoded || hc[GPUEXT_SCAN_BAD] != bad)
	{
		snprintf(buf, sizeof(buf), "the CPU decoded %" PRIu64 " and found %" PRIu64 " undecodable, the pages have %"
				 PRIu64 " and %" PRIu64, hc[GPUEXT_SCAN_DECODED], hc[GPUEXT_SCAN_BAD], decoded, bad);
		return buf;
	}
	if (!plain)
		return "";
	if (hc[GPUEXT_SCAN_PASSED] != decoded)
		return "without a WHERE clause the CPU passed " + std::to_string(hc[GPUEXT_SCAN_PASSED]) + " of " +
			std::to_string(decoded);
	for (int o = 0; o < p.nouts; o++)
	{
		std::sort(want[o].begin(), want[o].end());
		if (hc[GPUEXT_SCAN_OUT_COUNT + o] != count[o])
			return "output " + std::to_string(o) + ": the CPU counted " +
				std::to_string(hc[GPUEXT_SCAN_OUT_COUNT + o]) + ", the pages have " + std::to_string(count[o]);
		if (want[o] != hv[o])
			return "output " + std::to_string(o) + ": the CPU's values differ from the pages'";
	}
	return "";
}

/*
 * Run program over set s (its pages and item lists at d_pages, d_vis) on
 * the device with cap values an output, and on the CPU with room for every
 * value; compare, then check the CPU against the builder; one case.
 */
void check_scan(const ScanSet &s, const char *name, const GpuextScanProgram &program, const void *d_pages,
				const void *d_vis, uint64_t cap)
{
	const uint64_t full_cap = (uint64_t) s.npages * GPUEXT_SCAN_MAX_TUPLES;
	const size_t counts_area = GPUEXT_SCAN_COUNTERS * 8 + SCAN_GUARD_BYTES;
	GpuextScanProgram pd = program;
	GpuextScanProgram ph = program;
	const size_t dev_bytes = scan_layout(pd, cap);
	const size_t host_bytes = scan_layout(ph, full_cap);
	std::vector<char> h_outs(host_bytes + SCAN_GUARD_BYTES, (char) POISON);
	std::vector<char> d_outs_copy(dev_bytes + SCAN_GUARD_BYTES);
	std::vector<bool> written(dev_bytes + SCAN_GUARD_BYTES, false);
	std::vector<std::vector<uint64_t>> hv(program.nouts);
	uint64_t	hc[GPUEXT_SCAN_COUNTERS] = {0};
	uint64_t	dc[GPUEXT_SCAN_COUNTERS] = {0};
	void	   *d_counts = nullptr,
			   *d_outs = nullptr;
	std::string what = "scan " + s.name + ": " + name;
	std::string detail;
	char		buf[200];
	size_t		bad;
	GpuextStatus st;

	if (cap < full_cap)
		what += ", room for " + std::to_string(cap) + " values an output";
	gpuext_scan_heap_host(&ph, s.pages.data(), s.vis.data(), s.npages, hc, h_outs.data());
	for (int o = 0; o < ph.nouts; o++)
		if (ph.outs[o].value_bytes > 0)
			hv[o] = scan_values(h_outs.data(), ph.outs[o].offset, hc[GPUEXT_SCAN_OUT_COUNT + o],
								ph.outs[o].value_bytes, ph.outs[o].from_reg == GPUEXT_SCAN_FROM_DOUBLE);

	ensure_pinned(std::max(counts_area, dev_bytes + SCAN_GUARD_BYTES));
	must(gpuext_cuda_alloc(&d_counts, counts_area), "counter allocation");
	must(gpuext_cuda_alloc(&d_outs, dev_bytes + SCAN_GUARD_BYTES), "output allocation");
	poison_device(d_counts, counts_area);
	poison_device(d_outs, dev_bytes + SCAN_GUARD_BYTES);
	st = gpuext_scan_heap(&pd, static_cast<const char *>(d_pages), static_cast<const uint16_t *>(d_vis), s.npages,
						  static_cast<uint64_t *>(d_counts), static_cast<char *>(d_outs), dev_bytes);
	if (st == GPUEXT_OK)
		st = gpuext_cuda_wait(-1, nullptr, nullptr);
	if (st != GPUEXT_OK)
		detail = "status " + std::to_string((int) st) + ": " + gpuext_cuda_error_message();
	else
	{
		must(gpuext_cuda_copy_to_host(pinned_out, d_counts, counts_area), "counter download");
		must(gpuext_cuda_wait(-1, nullptr, nullptr), "counter download");
		memcpy(dc, pinned_out, sizeof(dc));
		bad = first_not(static_cast<char *>(pinned_out) + sizeof(dc), SCAN_GUARD_BYTES, POISON);
		if (bad < SCAN_GUARD_BYTES)
			detail = "byte " + std::to_string(bad) + " past the counters was overwritten";
		must(gpuext_cuda_copy_to_host(pinned_out, d_outs, dev_bytes + SCAN_GUARD_BYTES), "output download");
		must(gpuext_cuda_wait(-1, nullptr, nullptr), "output download");
		memcpy(d_outs_copy.data(), pinned_out, dev_bytes + SCAN_GUARD_BYTES);
	}
	for (int i = 0; i < GPUEXT_SCAN_COUNTERS && detail.empty(); i++)
		if (dc[i] != hc[i])
		{
			snprintf(buf, sizeof(buf), "counter %d is %" PRIu64 ", the CPU's %" PRIu64, i, dc[i], hc[i]);
			detail = buf;
		}
	for (int o = 0; o < pd.nouts && detail.empty(); o++)
	{
		const int	vb = pd.outs[o].value_bytes;
		const uint64_t n = std::min(dc[GPUEXT_SCAN_OUT_COUNT + o], cap);
		std::vector<uint64_t> dv;

		if (vb == 0)
			continue;
		dv = scan_values(d_outs_copy.data(), pd.outs[o].offset, n, vb, pd.outs[o].from_reg == GPUEXT_SCAN_FROM_DOUBLE);
		std::fill(written.begin() + pd.outs[o].offset, written.begin() + pd.outs[o].offset + n * vb, true);
		if (n == hv[o].size() ? dv != hv[o] : !std::includes(hv[o].begin(), hv[o].end(), dv.begin(), dv.end()))
			detail = "output " + std::to_string(o) + ": the values " +
				(n == hv[o].size() ? "differ from the CPU's" : "are not among the CPU's");
	}
	for (size_t i = 0; i < written.size() && detail.empty(); i++)
		if (!written[i] && (unsigned char) d_outs_copy[i] != POISON)
			detail = "byte " + std::to_string(i < dev_bytes ? i : i - dev_bytes) +
				(i < dev_bytes ? " of the outputs, past their values," : " past the outputs") + " was overwritten";
	if (detail.empty() && s.known)
		detail = scan_reference_differs(ph, s, hc, hv);
	gpuext_cuda_free(d_counts);
	gpuext_cuda_free(d_outs);
	report(detail.empty(), what, detail);
}

/* Refused programs and buffers: GPUEXT_INVALID each, and nothing launched (the counters stay poison). */
void check_scan_arguments()
{
	std::mt19937_64 rng(SCAN_SEED);
	const ScanSet s = scan_single_set(20, false, false, rng);
	const size_t counts_bytes = GPUEXT_SCAN_COUNTERS * 8;
	GpuextScanProgram good = scan_program_filters();
	const size_t ob = scan_layout(good, GPUEXT_SCAN_MAX_TUPLES);
	GpuextScanProgram p;
	void	   *d_pages = nullptr,
			   *d_vis = nullptr,
			   *d_counts = nullptr,
			   *d_outs = nullptr;
	const char *pages;
	const uint16_t *vis;
	uint64_t   *counts;
	char	   *outs;
	size_t		bad;

	ensure_pinned(std::max(s.pages.size(), counts_bytes));
	must(gpuext_cuda_alloc(&d_pages, s.pages.size()), "page allocation");
	must(gpuext_cuda_alloc(&d_vis, s.vis.size() * 2), "item list allocation");
	must(gpuext_cuda_alloc(&d_counts, counts_bytes), "counter allocation");
	must(gpuext_cuda_alloc(&d_outs, ob), "output allocation");
	memcpy(pinned_in, s.pages.data(), s.pages.size());
	must(gpuext_cuda_copy_to_device(d_pages, pinned_in, s.pages.size()), "page upload");
	must(gpuext_cuda_wait(-1, nullptr, nullptr), "page upload");
	memcpy(pinned_in, s.vis.data(), s.vis.size() * 2);
	must(gpuext_cuda_copy_to_device(d_vis, pinned_in, s.vis.size() * 2), "item list upload");
	poison_device(d_counts, counts_bytes);
	must(gpuext_cuda_wait(-1, nullptr, nullptr), "item list upload");
	pages = static_cast<const char *>(d_pages);
	vis = static_cast<const uint16_t *>(d_vis);
	counts = static_cast<uint64_t *>(d_counts);
	outs = static_cast<char *>(d_outs);

	auto		call = [&](const GpuextScanProgram &q) {
		return gpuext_scan_heap(&q, pages, vis, 1, counts, outs, ob);
	};

	p = good;
	p.nquals = p.ncmps + 1;
	expect_invalid("scan: more WHERE comparisons than comparisons are refused", call(p));
	p = good;
	p.outs[0].offset = ob + 8;
	expect_invalid("scan: an output past the outputs is refused", call(p));
	p = good;
	p.outs[1].offset += 4;
	expect_invalid("scan: an output off 8-byte alignment is refused", call(p));
	p = good;
	p.out_cap++;
	expect_invalid("scan: room for one value too few is refused", call(p));
	p = good;
	p.walk_atts = GPUEXT_SCAN_MAX_ATTS + 1;
	expect_invalid("scan: more columns walked than GPUEXT_SCAN_MAX_ATTS are refused", call(p));
	p = good;
	p.ncols = GPUEXT_SCAN_MAX_COLS + 1;
	expect_invalid("scan: more columns read than GPUEXT_SCAN_MAX_COLS are refused", call(p));
	p = good;
	p.ncmps = GPUEXT_SCAN_MAX_CMPS + 1;
	expect_invalid("scan: more comparisons than GPUEXT_SCAN_MAX_CMPS are refused", call(p));
	p = good;
	p.nouts = GPUEXT_SCAN_MAX_OUTS + 1;
	expect_invalid("scan: more outputs than GPUEXT_SCAN_MAX_OUTS are refused", call(p));
	p = good;
	p.att_len[2] = -2;
	expect_invalid("scan: a cstring column (attlen -2) is refused", call(p));
	p = good;
	p.att_align[1] = 3;
	expect_invalid("scan: an alignment of 3 is refused", call(p));
	p = good;
	p.cols[1].att = p.cols[0].att;
	expect_invalid("scan: columns read out of order are refused", call(p));
	p = good;
	p.cols[p.ncols - 1].att = (int16_t) p.walk_atts;
	expect_invalid("scan: a column read past the walk is refused", call(p));
	p = good;
	p.cols[0].kind = GPUEXT_SCAN_INT;
	expect_invalid("scan: a varlena read as an integer is refused", call(p));
	p = good;
	p.cols[2].kind = GPUEXT_SCAN_FLOAT8;
	expect_invalid("scan: a bool read as double precision is refused", call(p));
	p = good;
	p.cols[1].kind = GPUEXT_SCAN_FLOAT4;
	expect_invalid("scan: a smallint read as real is refused", call(p));
	p = good;
	p.cmps[0].col = p.ncols;
	expect_invalid("scan: a comparison of a column not read is refused", call(p));
	p = good;
	p.outs[0].filter_first = p.ncmps;
	expect_invalid("scan: a FILTER past the comparisons is refused", call(p));
	p = good;
	p.outs[0].value_bytes = 3;
	expect_invalid("scan: 3-byte values are refused", call(p));
	p = good;
	p.outs[3].value_bytes = 8;
	expect_invalid("scan: values of count(*) (column -1) are refused", call(p));
	p = good;
	p.outs[0].col = (int8_t) p.ncols;
	expect_invalid("scan: an output of a column not read is refused", call(p));
	p = good;
	p.outs[0].col = -2;
	expect_invalid("scan: an output of column -2 is refused", call(p));
	expect_invalid("scan: a null program is refused", gpuext_scan_heap(nullptr, pages, vis, 1, counts, outs, ob));
	expect_invalid("scan: null counters are refused", gpuext_scan_heap(&good, pages, vis, 1, nullptr, outs, ob));
	expect_invalid("scan: null pages are refused", gpuext_scan_heap(&good, nullptr, vis, 1, counts, outs, ob));
	expect_invalid("scan: null item lists are refused", gpuext_scan_heap(&good, pages, nullptr, 1, counts, outs, ob));
	expect_invalid("scan: null outputs are refused", gpuext_scan_heap(&good, pages, vis, 1, counts, nullptr, ob));
	expect_invalid("scan: outputs one byte short are refused",
				   gpuext_scan_heap(&good, pages, vis, 1, counts, outs, ob - 1));
	must(gpuext_cuda_wait(-1, nullptr, nullptr), "wait");
	must(gpuext_cuda_copy_to_host(pinned_out, d_counts, counts_bytes), "counter download");
	must(gpuext_cuda_wait(-1, nullptr, nullptr), "counter download");
	bad = first_not(static_cast<char *>(pinned_out), counts_bytes, POISON);
	report(bad == counts_bytes, "scan: refused calls launch nothing",
		   bad == counts_bytes ? "" : "counter byte " + std::to_string(bad) + " was written");
	gpuext_cuda_free(d_pages);
	gpuext_cuda_free(d_vis);
	gpuext_cuda_free(d_counts);
	gpuext_cuda_free(d_outs);
}

/* Set k of the run (false past the last): no pages, one page of each size both ways, a batch, corrupt, flipped. */
bool scan_make_set(int k, bool quick, ScanSet &s)
{
	const int	sizes[] = {0, 1, 31, 32, 33, 127, 128, 129, GPUEXT_SCAN_MAX_TUPLES};
	const int	nsizes = sizeof(sizes) / sizeof(sizes[0]);
	std::mt19937_64 rng(SCAN_SEED ^ ((uint64_t) (k + 1) * 0x9E3779B97F4A7C15ull));

	if (k == 0)
		s = scan_set("no pages", 0);
	else if (k <= 2 * nsizes)
		s = scan_single_set(sizes[(k - 1) / 2], (k - 1) % 2 == 1, sizes[(k - 1) / 2] == GPUEXT_SCAN_MAX_TUPLES, rng);
	else if (k == 2 * nsizes + 1)
		s = scan_batch_set(quick ? 250 : 2000, rng);
	else if (k == 2 * nsizes + 2)
		s = scan_corrupt_set(quick ? 32 : 256, rng);
	else if (k == 2 * nsizes + 3)
		s = scan_mutated_set(quick ? 32 : 256, rng);
	else
		return false;
	return true;
}

/* A set's pages and visible items in device memory (nothing for a set of no pages). */
void scan_upload_set(const ScanSet &s, void **d_pages, void **d_vis)
{
	const size_t vis_bytes = s.vis.size() * sizeof(uint16_t);

	*d_pages = *d_vis = nullptr;
	if (s.npages == 0)
		return;
	ensure_pinned(s.pages.size());
	must(gpuext_cuda_alloc(d_pages, s.pages.size()), "page allocation");
	must(gpuext_cuda_alloc(d_vis, vis_bytes), "item list allocation");
	memcpy(pinned_in, s.pages.data(), s.pages.size());
	must(gpuext_cuda_copy_to_device(*d_pages, pinned_in, s.pages.size()), "page upload");
	must(gpuext_cuda_wait(-1, nullptr, nullptr), "page upload");
	memcpy(pinned_in, s.vis.data(), vis_bytes);
	must(gpuext_cuda_copy_to_device(*d_vis, pinned_in, vis_bytes), "item list upload");
	must(gpuext_cuda_wait(-1, nullptr, nullptr), "item list upload");
}

/* Every set through every program (the batch also with little room for values), and the refusals. */
void run_scan_checks(bool quick)
{
	const std::pair<const char *, GpuextScanProgram> programs[] = {
		{"all columns", scan_program_all(false)},
		{"all columns, NULL where missing", scan_program_all(true)},
		{"WHERE and FILTERs", scan_program_filters()},
		{"NaN and zeros", scan_program_nan()},
		{"5 columns walked", scan_program_narrow()},
		{"count(*) alone", scan_program_count()},
		{"double precision arithmetic", scan_program_arith()}};
	ScanSet		s;

	check_scan_arguments();
	for (int k = 0; scan_make_set(k, quick, s); k++)
	{
		void	   *d_pages = nullptr,
				   *d_vis = nullptr;

		scan_upload_set(s, &d_pages, &d_vis);
		for (const auto &pr : programs)
			check_scan(s, pr.first, pr.second, d_pages, d_vis, (uint64_t) s.npages * GPUEXT_SCAN_MAX_TUPLES);
		if (s.small_cap > 0)
			check_scan(s, programs[2].first, programs[2].second, d_pages, d_vis, s.small_cap);
		gpuext_cuda_free(d_pages);
		gpuext_cuda_free(d_vis);
	}
}
