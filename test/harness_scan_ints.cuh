/*
 * harness_scan_ints.cuh
 *		Integer arithmetic on the device scan's numeric registers (scale 0):
 *		* + / % and unary minus with PostgreSQL's range and division errors,
 *		a narrowing cast, a CASE WHEN select, outputs of 2, 4 and 8 bytes,
 *		under a WHERE clause on a bool column: the device against the CPU on
 *		every page set, the CPU against the harness's own arithmetic on the
 *		rows it wrote, and malformed integer steps refused.  Included after
 *		harness_scan_or.cuh.
 */

/* An integer step of the numeric registers. */
GpuextScanNumStep scan_int_step(int op, int dst, int a, int b, int int_bytes, int cmp_first = 0, int cmp_n = 0)
{
	GpuextScanNumStep s;

	memset(&s, 0, sizeof(s));
	s.op = (uint8_t) op;
	s.dst = (uint8_t) dst;
	s.a = (uint8_t) a;
	s.b = (uint8_t) b;
	s.int_bytes = (uint8_t) int_bytes;
	s.cmp_first = (uint8_t) cmp_first;
	s.cmp_n = (uint8_t) cmp_n;
	return s;
}

/* The outputs of scan_program_ints: each one's register and bytes (0: counted only). */
constexpr int SCAN_INT_OUTS = 8;
const int	SCAN_INT_OUT_REG[SCAN_INT_OUTS] = {7, 8, 9, 10, 11, 12, 14, 14};
const int	SCAN_INT_OUT_BYTES[SCAN_INT_OUTS] = {4, 8, 4, 2, 2, 4, 0, 2};

/*
 * WHERE b IS NOT FALSE; outputs i4 * 3 + i2 (integer), i8 / i2 (bigint),
 * i4 % i2 (integer), CASE WHEN i4 > 0 THEN i2 ELSE 1 END (smallint), -i2
 * (smallint), i8::int4, and CASE WHEN i4 > 0 THEN i2 END counted and
 * sent.  Registers: 0 i2, 1 i4, 2 i8, 3 the constant 3, 4 zero, 5 one,
 * 6 .. 12 the steps', 13 NULL, 14 the last step's.  filtered: the two
 * divisions FILTER (WHERE i2 <> 0), i8::int4 FILTER (WHERE i4 > 0).
 */
GpuextScanProgram scan_program_ints(bool filtered = false)
{
	GpuextScanProgram p = scan_program(SCAN_NATTS);
	const int	i2 = scan_col(p, 1, GPUEXT_SCAN_INT, true, 0);
	const int	b = scan_col(p, 2, GPUEXT_SCAN_INT, true, 0);
	const int	i4 = scan_col(p, 3, GPUEXT_SCAN_INT, true, 0);
	const int	i8 = scan_col(p, 4, GPUEXT_SCAN_INT, true, 0);
	int			sel;

	p.cmps[scan_icmp(p, b, 3, 1, 0)].or_next = 1;
	p.cmps[scan_icmp(p, b, 1, 0, 0)].nulltest = GPUEXT_SCAN_IS_NULL;
	p.nquals = p.ncmps;
	sel = scan_icmp(p, i4, 5, 0, 0);
	const int	nonzero = scan_icmp(p, i2, 6, 0, 0);
	p.nnregs = 15;
	p.numconsts[3] = 3;
	p.numconsts[5] = 1;
	p.numconst_nulls = 1u << 13;
	p.nnloads = 3;
	p.numloads[0] = {(uint8_t) i2, 0, 0};
	p.numloads[1] = {(uint8_t) i4, 1, 0};
	p.numloads[2] = {(uint8_t) i8, 2, 0};
	p.nnsteps = 8;
	p.numsteps[0] = scan_int_step(GPUEXT_SCAN_MUL, 6, 1, 3, 4);
	p.numsteps[1] = scan_int_step(GPUEXT_SCAN_ADD, 7, 6, 0, 4);
	p.numsteps[2] = scan_int_step(GPUEXT_SCAN_DIV, 8, 2, 0, 8);
	p.numsteps[3] = scan_int_step(GPUEXT_SCAN_MOD, 9, 1, 0, 4);
	p.numsteps[4] = scan_int_step(GPUEXT_SCAN_SEL, 10, 0, 5, 0, sel, 1);
	p.numsteps[5] = scan_int_step(GPUEXT_SCAN_NEG, 11, 0, 0, 2);
	p.numsteps[6] = scan_int_step(GPUEXT_SCAN_ADD, 12, 2, 4, 4);
	p.numsteps[7] = scan_int_step(GPUEXT_SCAN_SEL, 14, 0, 13, 0, sel, 1);
	for (int o = 0; o < SCAN_INT_OUTS; o++)
	{
		scan_out(p, -1, SCAN_INT_OUT_BYTES[o], p.ncmps, 0);
		p.outs[o].from_reg = GPUEXT_SCAN_FROM_NUMERIC;
		p.outs[o].reg = (uint8_t) SCAN_INT_OUT_REG[o];
	}
	if (filtered)
	{
		p.outs[1].filter_first = p.outs[2].filter_first = (uint8_t) nonzero;
		p.outs[1].filter_n = p.outs[2].filter_n = 1;
		p.outs[5].filter_first = (uint8_t) sel;
		p.outs[5].filter_n = 1;
	}
	return p;
}

/* Whether v is within a signed integer of bytes bytes. */
bool scan_int_fits(__int128 v, int bytes)
{
	const __int128 lim = (__int128) 1 << (8 * bytes - 1);

	return v >= -lim && v < lim;
}

/*
 * scan_program_ints(filtered) computed by the harness from the rows the
 * builder wrote, an output's error raised only where its FILTER passes;
 * "" where the CPU's run (hc, hv) agrees.
 */
std::string scan_ints_reference_differs(const GpuextScanProgram &p, const ScanSet &s, const uint64_t *hc,
										const std::vector<std::vector<uint64_t>> &hv, bool filtered)
{
	uint64_t	passed = 0,
				errors = 0,
				masked = 0;
	std::vector<std::vector<uint64_t>> v(SCAN_INT_OUTS);

	for (const ScanVisit &vis : s.visits)
	{
		if (vis.state == SCAN_SKIP || vis.state == SCAN_BAD_HEADER)
			continue;
		const ScanRow &r = s.items[vis.page][vis.item - 1].row;
		int64_t		i2,
					b,
					i4,
					i8;
		bool		has_i2,
					has_b,
					has_i4,
					has_i8;
		bool		err = false;
		/* each output's value, whether it is NULL, raises an error, and its FILTER passes */
		__int128	out[SCAN_INT_OUTS] = {0};
		bool		null[SCAN_INT_OUTS] = {false};
		bool		raises[SCAN_INT_OUTS] = {false};
		bool		takes[SCAN_INT_OUTS];

		if (vis.state >= 0 && scan_reaches(p, vis.state, r.natts))
			continue;
		has_i2 = scan_or_value(p, 0, r, i2);
		has_b = scan_or_value(p, 1, r, b);
		has_i4 = scan_or_value(p, 2, r, i4);
		has_i8 = scan_or_value(p, 3, r, i8);
		if (has_b && b != 1)
			continue;
		/* i4 * 3 + i2 */
		for (int o = 0; o < SCAN_INT_OUTS; o++)
			takes[o] = true;
		if (filtered)
		{
			takes[1] = takes[2] = has_i2 && i2 != 0;
			takes[5] = has_i4 && i4 > 0;
		}
		null[0] = !has_i4 || !has_i2;
		out[0] = (__int128) i4 * 3;
		raises[0] = has_i4 && !scan_int_fits(out[0], 4);
		out[0] += i2;
		raises[0] = raises[0] || (!null[0] && !scan_int_fits(out[0], 4));
		/* i8 / i2, i4 % i2: by zero an error, by -1 a negation */
		null[1] = null[2] = !has_i2 || !has_i8;
		null[2] = !has_i2 || !has_i4;
		if (!null[1])
		{
			raises[1] = i2 == 0 || (i2 == -1 && !scan_int_fits(-(__int128) i8, 8));
			out[1] = i2 == 0 ? 0 : i2 == -1 ? -(__int128) i8 : (__int128) (i8 / i2);
		}
		if (!null[2])
		{
			raises[2] = i2 == 0;
			out[2] = i2 == 0 || i2 == -1 ? 0 : (__int128) (i4 % i2);
		}
		/* CASE WHEN i4 > 0 THEN i2 ELSE 1 END */
		null[3] = has_i4 && i4 > 0 && !has_i2;
		out[3] = has_i4 && i4 > 0 ? i2 : 1;
		/* -i2, i8::int4 */
		null[4] = !has_i2;
		out[4] = -(__int128) i2;
		raises[4] = has_i2 && !scan_int_fits(out[4], 2);
		null[5] = !has_i8;
		out[5] = i8;
		raises[5] = has_i8 && !scan_int_fits(out[5], 4);
		/* CASE WHEN i4 > 0 THEN i2 END */
		null[6] = null[7] = !(has_i4 && i4 > 0) || !has_i2;
		out[6] = out[7] = i2;
		for (int o = 0; o < SCAN_INT_OUTS; o++)
		{
			err = err || (raises[o] && takes[o]);
			masked += raises[o] && !takes[o];
		}
		if (err)
		{
			errors++;
			continue;
		}
		passed++;
		for (int o = 0; o < SCAN_INT_OUTS; o++)
			if (!null[o] && takes[o])
				v[o].push_back(scan_low_bytes((int64_t) out[o], SCAN_INT_OUT_BYTES[o]));
	}
	for (int o = 0; o < SCAN_INT_OUTS; o++)
		std::sort(v[o].begin(), v[o].end());
	if (hc[GPUEXT_SCAN_PASSED] != passed || hc[GPUEXT_SCAN_ERRORS] != errors)
		return "the CPU passed " + std::to_string(hc[GPUEXT_SCAN_PASSED]) + " rows and flagged " +
			std::to_string(hc[GPUEXT_SCAN_ERRORS]) + ", the rows give " + std::to_string(passed) + " and " +
			std::to_string(errors);
	for (int o = 0; o < SCAN_INT_OUTS; o++)
		if (hc[GPUEXT_SCAN_OUT_COUNT + o] != v[o].size() || hv[o] != v[o])
			return "output " + std::to_string(o) + " differs from the harness's values";
	if (passed == 0 || errors == 0)
		return "the set lacks rows that pass, or rows in error";
	if (filtered && masked == 0)
		return "the set lacks errors that a FILTER drops";
	return "";
}

/* Integer arithmetic on every page set, without and with FILTERs, and malformed integer steps refused. */
void run_scan_int_checks(bool quick)
{
	const GpuextScanProgram program = scan_program_ints();
	ScanSet		s;

	for (int k = 0; scan_make_set(k, quick, s); k++)
	{
		void	   *d_pages = nullptr,
				   *d_vis = nullptr;

		scan_upload_set(s, &d_pages, &d_vis);
		for (bool filtered : {false, true})
		{
			GpuextScanProgram ph = scan_program_ints(filtered);
			std::vector<char> h_outs(scan_layout(ph, (uint64_t) s.npages * GPUEXT_SCAN_MAX_TUPLES), (char) POISON);
			uint64_t	hc[GPUEXT_SCAN_COUNTERS] = {0};
			std::vector<std::vector<uint64_t>> hv(SCAN_INT_OUTS);
			const std::string what = filtered ? "integer arithmetic under FILTERs" : "integer arithmetic and CASE";

			if (s.known && s.npages >= 4)
			{
				gpuext_scan_heap_host(&ph, s.pages.data(), s.vis.data(), s.npages, hc, h_outs.data());
				for (int o = 0; o < SCAN_INT_OUTS; o++)
					hv[o] = scan_values(h_outs.data(), ph.outs[o].offset, hc[GPUEXT_SCAN_OUT_COUNT + o],
										SCAN_INT_OUT_BYTES[o], false);
				const std::string detail = scan_ints_reference_differs(ph, s, hc, hv, filtered);

				report(detail.empty(), "scan " + s.name + ": " + what + ", the CPU's run against the rows", detail);
			}
			check_scan(s, what.c_str(), scan_program_ints(filtered), d_pages, d_vis,
					   (uint64_t) s.npages * GPUEXT_SCAN_MAX_TUPLES);
		}
		gpuext_cuda_free(d_pages);
		gpuext_cuda_free(d_vis);
	}

	auto		check_valid = [](GpuextScanProgram p, auto change, int want, const char *what) {
		scan_layout(p, GPUEXT_SCAN_MAX_TUPLES);
		change(p);
		report(gpuext_scan_program_valid(&p, (size_t) 1 << 20) == want, what, "");
	};

	check_valid(program, [](GpuextScanProgram &) {}, 1, "scan: a program of integer steps is valid");
	check_valid(program, [](GpuextScanProgram &p) { p.numsteps[2].int_bytes = 0; }, 0,
				"scan: a division of numerics is refused");
	check_valid(program, [](GpuextScanProgram &p) { p.numsteps[3].int_bytes = 3; }, 0,
				"scan: an integer step of 3 bytes is refused");
	check_valid(program, [](GpuextScanProgram &p) { p.numsteps[0].op = GPUEXT_SCAN_MOD + 1; }, 0,
				"scan: an unknown operation is refused");
	check_valid(program, [](GpuextScanProgram &p) { p.numsteps[4].cmp_first = 0; }, 0,
				"scan: a select reading the WHERE clause's comparisons is refused");
	check_valid(program, [](GpuextScanProgram &p) { p.numsteps[4].cmp_n = (uint8_t) (p.ncmps - p.numsteps[4].cmp_first + 1); }, 0,
				"scan: a select past the comparisons is refused");
	check_valid(program, [](GpuextScanProgram &p) { p.outs[3].value_bytes = 1; }, 0,
				"scan: a register's output of 1 byte is refused");
	check_valid(program, [](GpuextScanProgram &p) { p.numloads[0].col = 1; p.cols[1].kind = GPUEXT_SCAN_FLOAT8; }, 0,
				"scan: a float column loaded into a numeric register is refused");
}
