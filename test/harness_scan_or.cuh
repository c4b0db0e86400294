/*
 * harness_scan_or.cuh
 *		The device scan's OR groups (comparisons joined by or_next) in the
 *		WHERE clause and in FILTERs, and text compared as bytes: the device
 *		against the CPU on every page set, the CPU's passing rows and FILTER
 *		counts against the harness's own reading of the rows it wrote (OR
 *		groups), and programs whose group runs past its clause or whose text
 *		comparisons are malformed refused.  Included after
 *		harness_scan_heap_check.cuh.
 */

/*
 * WHERE (i4 % 7 = 1 OR i4 % 7 = -3 OR i8 IS NULL) AND (i8 < 0 OR i2 > 100);
 * FILTER (i2 = 2 OR i2 % 3 = 0 OR f8 > 0.5) on a count and i2's values;
 * FILTER (f4 IS NULL OR f4 < 0) AND (i4 <> 5 OR f8 = NaN) on i8's values.
 */
GpuextScanProgram scan_program_or()
{
	GpuextScanProgram p = scan_program(SCAN_NATTS);
	const int	i2 = scan_col(p, 1, GPUEXT_SCAN_INT, true, 0);
	const int	i4 = scan_col(p, 3, GPUEXT_SCAN_INT, false, 8);
	const int	i8 = scan_col(p, 4, GPUEXT_SCAN_INT, true, 0);
	const int	f4 = scan_col(p, 5, GPUEXT_SCAN_FLOAT4, true, 0);
	const int	f8 = scan_col(p, 6, GPUEXT_SCAN_FLOAT8, true, 0);
	int			f;

	p.cmps[scan_icmp(p, i4, 3, 1, 7)].or_next = 1;
	p.cmps[scan_icmp(p, i4, 3, -3, 7)].or_next = 1;
	p.cmps[scan_icmp(p, i8, 1, 0, 0)].nulltest = GPUEXT_SCAN_IS_NULL;
	p.cmps[scan_icmp(p, i8, 1, 0, 0)].or_next = 1;
	scan_icmp(p, i2, 5, 100, 0);
	p.nquals = p.ncmps;
	f = scan_icmp(p, i2, 3, 2, 0);
	p.cmps[f].or_next = 1;
	p.cmps[scan_icmp(p, i2, 3, 0, 3)].or_next = 1;
	scan_fcmp(p, f8, 5, 0.5);
	scan_out(p, -1, 0, f, 3);
	scan_out(p, i2, 2, f, 3);
	f = scan_fcmp(p, f4, 1, 0.0);
	p.cmps[f].nulltest = GPUEXT_SCAN_IS_NULL;
	p.cmps[f].or_next = 1;
	scan_fcmp(p, f4, 1, 0.0);
	p.cmps[scan_icmp(p, i4, GPUEXT_SCAN_NOT_EQUAL, 5, 0)].or_next = 1;
	scan_fcmp(p, f8, 3, std::numeric_limits<double>::quiet_NaN());
	scan_out(p, i8, 8, f, 4);
	scan_out(p, -1, 0, 0, 0);
	return p;
}

/* Add a text comparison (GPUEXT_SCAN_TEXT_*) of bytes column col with the n bytes at b: its index in cmps. */
int scan_tcmp(GpuextScanProgram &p, int col, int text, int strategy, const char *b, int n)
{
	GpuextScanCmp &k = p.cmps[p.ncmps];

	k.col = (uint8_t) col;
	k.text = (uint8_t) text;
	k.strategy = (uint8_t) strategy;
	k.tlen = (uint8_t) n;
	k.tfull = (uint16_t) n;
	memcpy(k.tbytes, b, n);
	return p.ncmps++;
}

/* Add a LIKE pattern matched whole (GPUEXT_SCAN_TEXT_LIKE) on bytes column col: its index in cmps. */
int scan_like(GpuextScanProgram &p, int col, int strategy, const char *pattern, int utf8)
{
	const int	n = (int) strlen(pattern);
	const int	k = scan_tcmp(p, col, GPUEXT_SCAN_TEXT_LIKE, strategy, "", 0);

	p.cmps[k].tfull = (uint16_t) n;
	p.cmps[k].toff = p.like_used;
	p.cmps[k].utf8 = (uint8_t) utf8;
	memcpy(p.like_bytes + p.like_used, pattern, n);
	p.like_used += n;
	return k;
}

/*
 * Text compared as bytes: WHERE (t0 = '' OR t7 LIKE '%' OR i4 % 3 = 0);
 * FILTERs t0 <> '', t7 = '' as char(n) compares (blanks only), t0 LIKE
 * 'A%', t0 LIKE '%A', t7 LIKE '%B%', t0 NOT LIKE '%AB%', t7 NOT LIKE
 * '%?C?' (a part of a longer constant), and patterns matched whole: t0
 * LIKE '_' in UTF-8 characters, t7 NOT LIKE '%_\%_' in bytes, each on a
 * count, and t0's NULLs counted.
 */
GpuextScanProgram scan_program_text()
{
	GpuextScanProgram p = scan_program(SCAN_NATTS);
	const int	t0 = scan_col(p, 0, GPUEXT_SCAN_BYTES, true, 0);
	const int	i4 = scan_col(p, 3, GPUEXT_SCAN_INT, false, 8);
	const int	t7 = scan_col(p, 7, GPUEXT_SCAN_BYTES, true, 0);
	int			f;

	p.cmps[scan_tcmp(p, t0, GPUEXT_SCAN_TEXT_EQUAL, 3, "", 0)].or_next = 1;
	p.cmps[scan_tcmp(p, t7, GPUEXT_SCAN_TEXT_PREFIX, 3, "", 0)].or_next = 1;
	scan_icmp(p, i4, 3, 0, 3);
	p.nquals = p.ncmps;
	f = scan_tcmp(p, t0, GPUEXT_SCAN_TEXT_EQUAL, GPUEXT_SCAN_NOT_EQUAL, "", 0);
	scan_out(p, -1, 0, f, 1);
	f = scan_tcmp(p, t7, GPUEXT_SCAN_TEXT_BPCHAR, 3, "", 0);
	scan_out(p, -1, 0, f, 1);
	f = scan_tcmp(p, t0, GPUEXT_SCAN_TEXT_PREFIX, 3, "A", 1);
	scan_out(p, -1, 0, f, 1);
	f = scan_tcmp(p, t0, GPUEXT_SCAN_TEXT_SUFFIX, 3, "A", 1);
	scan_out(p, -1, 0, f, 1);
	f = scan_tcmp(p, t7, GPUEXT_SCAN_TEXT_CONTAINS, 3, "B", 1);
	scan_out(p, -1, 0, f, 1);
	f = scan_tcmp(p, t0, GPUEXT_SCAN_TEXT_CONTAINS, GPUEXT_SCAN_NOT_EQUAL, "AB", 2);
	scan_out(p, -1, 0, f, 1);
	f = scan_tcmp(p, t7, GPUEXT_SCAN_TEXT_SUFFIX, GPUEXT_SCAN_NOT_EQUAL, "C", 1);
	p.cmps[f].tfull = 3;
	p.cmps[f].toff = 1;
	scan_out(p, -1, 0, f, 1);
	f = scan_like(p, t0, 3, "_", 1);
	scan_out(p, -1, 0, f, 1);
	f = scan_like(p, t7, GPUEXT_SCAN_NOT_EQUAL, "%_\\%_", 0);
	scan_out(p, -1, 0, f, 1);
	f = scan_icmp(p, t0, 1, 0, 0);
	p.cmps[f].nulltest = GPUEXT_SCAN_IS_NULL;
	scan_out(p, -1, 0, f, 1);
	scan_out(p, i4, 4, 0, 0);
	return p;
}

/* A column of a row as the program reads it: false for NULL (a column the tuple lacks: its default or NULL). */
bool scan_or_value(const GpuextScanProgram &p, int col, const ScanRow &r, int64_t &v)
{
	const GpuextScanCol &c = p.cols[col];

	if (c.att >= r.natts)
	{
		v = c.missing;
		return !c.missing_null;
	}
	v = r.val[c.att];
	return !r.null[c.att];
}

/* A float column's value as a double (float4 bits widened). */
double scan_or_double(const GpuextScanProgram &p, int col, int64_t bits)
{
	if (p.cols[col].kind == GPUEXT_SCAN_FLOAT4)
	{
		uint32_t	w = (uint32_t) bits;
		float		x;

		memcpy(&x, &w, sizeof(x));
		return x;
	}
	double		d;

	memcpy(&d, &bits, sizeof(d));
	return d;
}

/* scan_program_or's rows passed and FILTER counts read from the rows the builder wrote; "" where the CPU agrees. */
std::string scan_or_reference_differs(const GpuextScanProgram &p, const ScanSet &s, const uint64_t *hc)
{
	uint64_t	passed = 0,
				f1 = 0,
				f2 = 0;

	for (const ScanVisit &v : s.visits)
	{
		if (v.state == SCAN_SKIP || v.state == SCAN_BAD_HEADER)
			continue;
		const ScanRow &r = s.items[v.page][v.item - 1].row;
		int64_t		i2,
					i4,
					i8,
					f4,
					f8;
		bool		has_i2,
					has_i4,
					has_i8,
					has_f4,
					has_f8;

		if (v.state >= 0 && scan_reaches(p, v.state, r.natts))
			continue;
		has_i2 = scan_or_value(p, 0, r, i2);
		has_i4 = scan_or_value(p, 1, r, i4);
		has_i8 = scan_or_value(p, 2, r, i8);
		has_f4 = scan_or_value(p, 3, r, f4);
		has_f8 = scan_or_value(p, 4, r, f8);
		if (!((has_i4 && (i4 % 7 == 1 || i4 % 7 == -3)) || !has_i8) ||
			!((has_i8 && i8 < 0) || (has_i2 && i2 > 100)))
			continue;
		passed++;
		const double d8 = scan_or_double(p, 4, f8);
		const double d4 = scan_or_double(p, 3, f4);

		if ((has_i2 && (i2 == 2 || i2 % 3 == 0)) || (has_f8 && (d8 != d8 || d8 > 0.5)))
			f1++;
		if ((!has_f4 || (d4 == d4 && d4 < 0)) && ((has_i4 && i4 != 5) || (has_f8 && d8 != d8)) && has_i8)
			f2++;
	}
	if (hc[GPUEXT_SCAN_PASSED] != passed || hc[GPUEXT_SCAN_OUT_COUNT] != f1 || hc[GPUEXT_SCAN_OUT_COUNT + 2] != f2)
		return "the CPU passed " + std::to_string(hc[GPUEXT_SCAN_PASSED]) + " rows and counted " +
			std::to_string(hc[GPUEXT_SCAN_OUT_COUNT]) + " and " + std::to_string(hc[GPUEXT_SCAN_OUT_COUNT + 2]) +
			", the rows give " + std::to_string(passed) + ", " + std::to_string(f1) + " and " + std::to_string(f2);
	if (passed == 0 || f1 == 0 || f2 == 0 || passed == hc[GPUEXT_SCAN_DECODED])
		return "the set lacks rows that pass, or rows that fail, each clause";
	return "";
}

/* OR groups on every page set, and groups that run past their clause refused. */
void run_scan_or_checks(bool quick)
{
	const GpuextScanProgram program = scan_program_or();
	ScanSet		s;

	for (int k = 0; scan_make_set(k, quick, s); k++)
	{
		GpuextScanProgram ph = program;
		std::vector<char> h_outs(scan_layout(ph, (uint64_t) s.npages * GPUEXT_SCAN_MAX_TUPLES), (char) POISON);
		uint64_t	hc[GPUEXT_SCAN_COUNTERS] = {0};
		void	   *d_pages = nullptr,
				   *d_vis = nullptr;

		if (s.known && s.npages >= 4)
		{
			gpuext_scan_heap_host(&ph, s.pages.data(), s.vis.data(), s.npages, hc, h_outs.data());
			report(scan_or_reference_differs(ph, s, hc).empty(), "scan " + s.name + ": OR groups, the CPU's run against "
				   "the rows", scan_or_reference_differs(ph, s, hc));
		}
		scan_upload_set(s, &d_pages, &d_vis);
		check_scan(s, "OR groups in the WHERE clause and FILTERs", program, d_pages, d_vis,
				   (uint64_t) s.npages * GPUEXT_SCAN_MAX_TUPLES);
		check_scan(s, "text compared as bytes", scan_program_text(), d_pages, d_vis,
				   (uint64_t) s.npages * GPUEXT_SCAN_MAX_TUPLES);
		gpuext_cuda_free(d_pages);
		gpuext_cuda_free(d_vis);
	}

	const GpuextScanProgram text = scan_program_text();

	/* base laid out and changed by change: valid where want is 1, refused where 0 */
	auto		check_valid = [](GpuextScanProgram p, auto change, int want, const char *what) {
		scan_layout(p, GPUEXT_SCAN_MAX_TUPLES);
		change(p);
		report(gpuext_scan_program_valid(&p, (size_t) 1 << 20) == want, what, "");
	};
	auto		same = [](GpuextScanProgram &) {};

	check_valid(program, same, 1, "scan: a program of OR groups is valid");
	check_valid(program, [](GpuextScanProgram &p) { p.cmps[p.nquals - 1].or_next = 1; }, 0,
				"scan: an OR group running past the WHERE clause is refused");
	check_valid(program, [](GpuextScanProgram &p) { p.cmps[p.outs[0].filter_first + p.outs[0].filter_n - 1].or_next = 1; },
				0, "scan: an OR group running past its FILTER is refused");
	check_valid(program, [](GpuextScanProgram &p) { p.cmps[0].or_next = 2; }, 0,
				"scan: an or_next other than 0 or 1 is refused");
	check_valid(text, same, 1, "scan: a program of text comparisons is valid");
	check_valid(text, [](GpuextScanProgram &p) { p.cmps[0].text = 0; }, 0,
				"scan: a text column compared other than as text is refused");
	check_valid(text, [](GpuextScanProgram &p) { p.cmps[2].text = GPUEXT_SCAN_TEXT_EQUAL; }, 0,
				"scan: an integer column compared as text is refused");
	check_valid(text, [](GpuextScanProgram &p) { p.cmps[0].tlen = GPUEXT_SCAN_TEXT_BYTES + 1; }, 0,
				"scan: a text constant past GPUEXT_SCAN_TEXT_BYTES is refused");
	check_valid(text, [](GpuextScanProgram &p) { p.cmps[0].strategy = 1; }, 0, "scan: text compared by < is refused");
	check_valid(text, [](GpuextScanProgram &p) { p.cmps[0].text = GPUEXT_SCAN_TEXT_LIKE + 1; }, 0,
				"scan: a text comparison of no known kind is refused");
	check_valid(text, [](GpuextScanProgram &p) { p.cmps[10].tfull = (uint16_t) (p.like_used + 1); }, 0,
				"scan: a LIKE pattern past the patterns' bytes is refused");
	check_valid(text, [](GpuextScanProgram &p) { p.like_used = GPUEXT_SCAN_LIKE_BYTES + 1; }, 0,
				"scan: patterns' bytes past their room are refused");
	check_valid(text, [](GpuextScanProgram &p) { p.cmps[10].utf8 = 2; }, 0,
				"scan: a LIKE step of no known kind is refused");
	check_valid(text, [](GpuextScanProgram &p) { p.cmps[4].tfull = 40; p.cmps[4].toff = 24; }, 1,
				"scan: a part of a longer text constant is valid");
	check_valid(text, [](GpuextScanProgram &p) { p.cmps[4].tfull = 40; p.cmps[4].toff = 41; }, 0,
				"scan: a text part past its constant's length is refused");
	check_valid(text, [](GpuextScanProgram &p) { p.cmps[7].tfull = 40; p.cmps[7].toff = 16; }, 0,
				"scan: a part of an infix is refused");
}
