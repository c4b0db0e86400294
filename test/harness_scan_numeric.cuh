/*
 * harness_scan_numeric.cuh
 *		numeric on the device scan (scan_heap_numeric.h): pages of tuples
 *		holding numeric(p, 2) values of every weight, sign and display scale
 *		up to 2, and numeric(p, 0) values, in short and long form, under
 *		1-byte and 4-byte varlena headers, NULLs, NaN, values past 64 bits
 *		at the scale or with more places than it, and bytes that do not add
 *		up; a WHERE clause on them at their scale and past it, numeric
 *		arithmetic (+, -, *, unary minus, scales brought together, NULLs
 *		through it), the column's values sent out, and the columns cast to
 *		double precision as strtod reads their text.  The device
 *		must equal the CPU's run of the same program (check_scan), and both
 *		the harness's own arithmetic on the values it wrote.  Included by
 *		kernel_harness.cu after harness_scan_heap_check.cuh.
 */

/* One value written: NULL, NaN, a finite value (v at scale 2, its display scale), or broken bytes. */
struct NumValue
{
	enum Kind
	{
		NUM_NULL,
		NUM_NAN,
		NUM_FINITE,
		NUM_BROKEN
	}			kind = NUM_NULL;
	__int128	v = 0;			/* the value * 100 */
	int			dscale = 2;
	bool		long_form = false;
	bool		header4 = false;	/* a 4-byte varlena header */
};

/* A numeric's bytes (its varlena header left out), as numeric.c writes them. */
std::vector<uint8_t> num_bytes(const NumValue &n)
{
	std::vector<uint8_t> b;
	unsigned __int128 mag = n.v < 0 ? (unsigned __int128) -n.v : (unsigned __int128) n.v;
	std::vector<unsigned> groups;	/* base-10000 digits, most significant first, from 10^-4 up */
	int			weight;
	unsigned	h;

	if (n.kind == NumValue::NUM_NAN)
	{
		b = {0x00, 0xC0};
		return b;
	}
	/* the value * 10^4 (scale 2 and two more places), then its digits of 10000 */
	mag *= 100;
	while (mag > 0)
	{
		groups.insert(groups.begin(), (unsigned) (mag % 10000));
		mag /= 10000;
	}
	/* the last group is the one of 10^-4 .. 10^-1: weight of the first is groups - 2 */
	weight = (int) groups.size() - 2;
	while (!groups.empty() && groups.back() == 0)
		groups.pop_back();
	while (!groups.empty() && groups.front() == 0)
	{
		groups.erase(groups.begin());
		weight--;
	}
	if (groups.empty())
		weight = 0;
	if (!n.long_form)
	{
		h = 0x8000 | (n.v < 0 ? 0x2000 : 0) | ((unsigned) n.dscale << 7) | ((unsigned) weight & 0x7F);
		b = {(uint8_t) h, (uint8_t) (h >> 8)};
	}
	else
	{
		h = (n.v < 0 ? 0x4000 : 0) | (unsigned) n.dscale;
		b = {(uint8_t) h, (uint8_t) (h >> 8), (uint8_t) weight, (uint8_t) ((unsigned) weight >> 8)};
	}
	for (unsigned g : groups)
	{
		b.push_back((uint8_t) g);
		b.push_back((uint8_t) (g >> 8));
	}
	if (n.kind == NumValue::NUM_BROKEN)
	{
		/* a digit of 10000 or more */
		b.push_back(0xFF);
		b.push_back(0xFF);
	}
	return b;
}

/* A value of the numeric(p, 0) column: NULLs, NaN, a tenth (more places than its scale), past 64 bits. */
NumValue num_random_whole(std::mt19937_64 &rng)
{
	NumValue	n;
	const int	r = (int) (rng() % 100);
	const int	digits = 1 + (int) (rng() % 20);

	n.long_form = rng() % 7 == 0;
	n.header4 = rng() % 5 == 0;
	if (r < 10)
		return n;
	if (r < 12)
	{
		n.kind = NumValue::NUM_NAN;
		return n;
	}
	n.kind = NumValue::NUM_FINITE;
	n.dscale = r < 15 ? 1 : 0;
	for (int i = 0; i < digits; i++)
		n.v = n.v * 10 + (__int128) (rng() % 10);
	n.v *= 100;
	if (n.dscale == 1)
		n.v += 10 * (1 + (__int128) (rng() % 9));
	if (rng() % 3 == 0)
		n.v = -n.v;
	return n;
}

/* A random value: magnitudes from 0 to past 64 bits at scale 2, display scales 0 to 2. */
NumValue num_random(std::mt19937_64 &rng, bool small)
{
	NumValue	n;
	const int	r = (int) (rng() % 100);
	int			digits = small ? 1 + (int) (rng() % 4) : 1 + (int) (rng() % 21);

	n.long_form = rng() % 7 == 0;
	n.header4 = rng() % 5 == 0;
	if (r < 5)
		return n;
	if (r < 7)
	{
		n.kind = NumValue::NUM_NAN;
		return n;
	}
	n.kind = r < 8 && !small ? NumValue::NUM_BROKEN : NumValue::NUM_FINITE;
	n.v = 0;
	for (int i = 0; i < digits; i++)
		n.v = n.v * 10 + (__int128) (rng() % 10);
	n.dscale = (int) (rng() % 3);
	/* a display scale below 2 has zeros in the places it does not show */
	if (n.dscale == 0)
		n.v -= n.v % 100;
	else if (n.dscale == 1)
		n.v -= n.v % 10;
	if (rng() % 3 == 0)
		n.v = -n.v;
	return n;
}

/* Whether v fits a bigint. */
bool num_fits64(__int128 v)
{
	return v >= (__int128) INT64_MIN && v <= (__int128) INT64_MAX;
}

/* Whether a column's value v (at its scale) is read: its magnitude within a bigint's. */
bool num_reads(__int128 v)
{
	return v >= -(__int128) INT64_MAX && v <= (__int128) INT64_MAX;
}

/* The bits of |v|: a product is computed where its factors' bits add up to 125 or fewer. */
int num_bits(__int128 v)
{
	unsigned __int128 m = v < 0 ? (unsigned __int128) -v : (unsigned __int128) v;
	int			bits = 0;

	for (; m != 0; m >>= 1)
		bits++;
	return bits;
}

/* A set of pages of tuples (pad text, a numeric(19,2), b numeric(6,2), c numeric(20,0)), each column's values kept. */
struct NumSet
{
	ScanSet		s;
	std::vector<NumValue> a;
	std::vector<NumValue> b;
	std::vector<NumValue> c;
};

/* Append a varlena of payload at off (aligned to 4 where its header is 4 bytes: zeros before it). */
void num_put_varlena(std::vector<uint8_t> &t, const std::vector<uint8_t> &payload, bool header4)
{
	if (!header4 && payload.size() + 1 < 128)
	{
		t.push_back((uint8_t) (((payload.size() + 1) << 1) | 1));
		t.insert(t.end(), payload.begin(), payload.end());
		return;
	}
	while (t.size() % 4 != 0)
		t.push_back(0);
	uint32_t	size = (uint32_t) (payload.size() + 4) << 2;

	for (int i = 0; i < 4; i++)
		t.push_back((uint8_t) (size >> (8 * i)));
	t.insert(t.end(), payload.begin(), payload.end());
}

/* npages pages of random tuples; every item normal and visible. */
NumSet num_make_set(uint32_t npages, std::mt19937_64 &rng)
{
	NumSet		ns;

	ns.s.name = "numeric, " + std::to_string(npages) + " pages";
	ns.s.known = false;
	ns.s.npages = npages;
	ns.s.pages.assign((size_t) npages * GPUEXT_SCAN_PAGE_BYTES, 0);
	ns.s.vis.assign((size_t) npages * GPUEXT_SCAN_VIS_SLOTS, 0);
	for (uint32_t pg = 0; pg < npages; pg++)
	{
		uint8_t    *page = reinterpret_cast<uint8_t *>(ns.s.pages.data()) + (size_t) pg * GPUEXT_SCAN_PAGE_BYTES;
		unsigned	lower = 24,
					upper = GPUEXT_SCAN_PAGE_BYTES;

		ns.s.vis[(size_t) pg * GPUEXT_SCAN_VIS_SLOTS] = GPUEXT_SCAN_ALL_VISIBLE;
		for (;;)
		{
			NumValue	a = num_random(rng, false);
			NumValue	b = num_random(rng, true);
			NumValue	c = num_random_whole(rng);
			std::vector<uint8_t> t(23, 0);
			bool		hasnull = a.kind == NumValue::NUM_NULL || b.kind == NumValue::NUM_NULL ||
				c.kind == NumValue::NUM_NULL;
			const int	hoff = 24;	/* MAXALIGN of the header and its one byte of null bitmap */
			size_t		len;

			t[18] = 4;			/* natts */
			t[20] = hasnull ? 1 : 0;
			t.push_back(hasnull ? (uint8_t) (1 | (a.kind != NumValue::NUM_NULL ? 2 : 0) |
											 (b.kind != NumValue::NUM_NULL ? 4 : 0) |
											 (c.kind != NumValue::NUM_NULL ? 8 : 0)) : 0);
			t.resize(hoff);
			t[22] = (uint8_t) hoff;
			num_put_varlena(t, std::vector<uint8_t>(rng() % 40, 'p'), rng() % 9 == 0);
			if (a.kind != NumValue::NUM_NULL)
				num_put_varlena(t, num_bytes(a), a.header4);
			if (b.kind != NumValue::NUM_NULL)
				num_put_varlena(t, num_bytes(b), b.header4);
			if (c.kind != NumValue::NUM_NULL)
				num_put_varlena(t, num_bytes(c), c.header4);
			len = t.size();
			if (upper < lower + 4 + ((len + 7) & ~(size_t) 7) || (lower - 24) / 4 >= GPUEXT_SCAN_MAX_TUPLES)
				break;
			upper -= (unsigned) ((len + 7) & ~(size_t) 7);
			memcpy(page + upper, t.data(), len);
			scan_put32(page + lower, upper | (1u << 15) | ((uint32_t) len << 17));
			lower += 4;
			ns.a.push_back(a);
			ns.b.push_back(b);
			ns.c.push_back(c);
		}
		scan_put16(page + 12, lower);
		scan_put16(page + 14, upper);
		scan_put16(page + 16, GPUEXT_SCAN_PAGE_BYTES);
	}
	return ns;
}

/*
 * The program: WHERE b < 0.07 AND a > 1000.005 (past a's scale); outputs a,
 * a * (1 - b) at scale 4, a * a * a at scale 6, and -(a + c) at scale 2
 * (c, not compared, NULL or NaN in passing rows).
 */
GpuextScanProgram num_program()
{
	GpuextScanProgram p;

	memset(&p, 0, sizeof(p));
	p.walk_atts = 4;
	for (int a = 0; a < 4; a++)
	{
		p.att_len[a] = -1;
		p.att_align[a] = 4;
	}
	for (int c = 0; c < 3; c++)
	{
		p.cols[c].att = (int16_t) (c + 1);
		p.cols[c].kind = GPUEXT_SCAN_NUMERIC;
		p.cols[c].scale = c < 2 ? 2 : 0;
		p.cols[c].missing_null = 1;
	}
	p.ncols = 3;
	p.cmps[0].col = 1;
	p.cmps[0].strategy = 1;
	p.cmps[0].ival = 7;
	p.cmps[1].col = 0;
	p.cmps[1].strategy = 5;
	p.cmps[1].num_up = 1;
	p.cmps[1].ival = 1000005;
	p.ncmps = p.nquals = 2;
	/*
	 * registers: 0 a, 1 b, 2 the constant 1 (scale 0), 3 1 - b, 4 a * (1 - b), 5 a * a, 6 a * a * a,
	 * 7 c, 8 a + c, 9 -(a + c)
	 */
	p.nnregs = 10;
	p.numconsts[2] = 1;
	p.nnloads = 3;
	p.numloads[0] = {0, 0, 0};
	p.numloads[1] = {1, 1, 0};
	p.numloads[2] = {2, 7, 0};
	p.nnsteps = 6;
	p.numsteps[0] = {GPUEXT_SCAN_SUB, 3, 2, 1, 2, 0, 0, 0, 0, {0, 0, 0}};
	p.numsteps[1] = {GPUEXT_SCAN_MUL, 4, 0, 3, 0, 0, 0, 0, 0, {0, 0, 0}};
	p.numsteps[2] = {GPUEXT_SCAN_MUL, 5, 0, 0, 0, 0, 0, 0, 0, {0, 0, 0}};
	p.numsteps[3] = {GPUEXT_SCAN_MUL, 6, 5, 0, 0, 0, 0, 0, 0, {0, 0, 0}};
	p.numsteps[4] = {GPUEXT_SCAN_ADD, 8, 0, 7, 0, 2, 0, 0, 0, {0, 0, 0}};
	p.numsteps[5] = {GPUEXT_SCAN_NEG, 9, 8, 0, 0, 0, 0, 0, 0, {0, 0, 0}};
	p.nouts = 4;
	p.outs[0].col = 0;
	p.outs[0].value_bytes = 8;
	p.outs[1].col = -1;
	p.outs[1].value_bytes = 8;
	p.outs[1].from_reg = GPUEXT_SCAN_FROM_NUMERIC;
	p.outs[1].reg = 4;
	p.outs[2].col = -1;
	p.outs[2].value_bytes = 8;
	p.outs[2].from_reg = GPUEXT_SCAN_FROM_NUMERIC;
	p.outs[2].reg = 6;
	p.outs[3].col = -1;
	p.outs[3].value_bytes = 8;
	p.outs[3].from_reg = GPUEXT_SCAN_FROM_NUMERIC;
	p.outs[3].reg = 9;
	for (int o = 0; o < 4; o++)
		p.outs[o].filter_first = 2;
	return p;
}

/*
 * The harness's counters (c) and outputs' values (v, sorted here, their
 * counts set) against the CPU's run (hc, hv): "" or what differs.
 */
std::string num_counts_differ(uint64_t *c, std::vector<std::vector<uint64_t>> &v, const uint64_t *hc,
							  const std::vector<std::vector<uint64_t>> &hv)
{
	for (size_t o = 0; o < v.size(); o++)
	{
		c[GPUEXT_SCAN_OUT_COUNT + o] = v[o].size();
		std::sort(v[o].begin(), v[o].end());
	}
	for (int i = 0; i < GPUEXT_SCAN_COUNTERS; i++)
		if (c[i] != hc[i])
			return "counter " + std::to_string(i) + " is " + std::to_string(hc[i]) + ", the harness's " +
				std::to_string(c[i]);
	for (size_t o = 0; o < v.size(); o++)
		if (v[o] != hv[o])
			return "output " + std::to_string(o) + " differs from the harness's values";
	return "";
}

/*
 * The harness's own run of num_program over the values it wrote: the
 * counters and each output's values, sorted; "" or what differs from the
 * CPU's run (hc, hv).
 */
std::string num_reference_differs(const NumSet &ns, const uint64_t *hc, const std::vector<std::vector<uint64_t>> &hv)
{
	uint64_t	c[GPUEXT_SCAN_COUNTERS] = {0};
	std::vector<std::vector<uint64_t>> v(4);

	for (size_t i = 0; i < ns.a.size(); i++)
	{
		const NumValue &a = ns.a[i];
		const NumValue &b = ns.b[i];
		const NumValue &w = ns.c[i];
		/* c holds what the device cannot: a place past its scale, or past a bigint */
		const bool	w_wide = w.kind == NumValue::NUM_FINITE && (w.dscale > 0 || !num_reads(w.v / 100));
		bool		err = false;

		/* a value a column cannot hold at its scale makes the tuple undecodable */
		if (a.kind == NumValue::NUM_BROKEN || b.kind == NumValue::NUM_BROKEN || w_wide ||
			(a.kind == NumValue::NUM_FINITE && !num_reads(a.v)) || (b.kind == NumValue::NUM_FINITE && !num_reads(b.v)))
		{
			c[GPUEXT_SCAN_BAD]++;
			continue;
		}
		c[GPUEXT_SCAN_DECODED]++;
		/* NULL fails a comparison; NaN is above every number */
		if (b.kind == NumValue::NUM_NULL || a.kind == NumValue::NUM_NULL || b.kind == NumValue::NUM_NAN ||
			b.v >= 7 || (a.kind != NumValue::NUM_NAN && a.v * 10 <= 1000005))
			continue;
		if (a.kind == NumValue::NUM_NAN || w.kind == NumValue::NUM_NAN)
			err = true;
		else
		{
			__int128	disc = 100 - b.v;	/* 1 - b at scale 2 */
			__int128	sq = a.v * a.v;
			/* -(a + c) at scale 2: c's whole value brought up two places */
			__int128	neg = w.kind == NumValue::NUM_NULL ? 0 : -(a.v + w.v);

			err = num_bits(a.v) + num_bits(disc) > 125 || num_bits(a.v) * 2 > 125 ||
				num_bits(sq) + num_bits(a.v) > 125 || !num_fits64(a.v * disc) || !num_fits64(sq * a.v) ||
				!num_fits64(neg);
			if (!err)
			{
				v[0].push_back((uint64_t) (int64_t) a.v);
				v[1].push_back((uint64_t) (int64_t) (a.v * disc));
				v[2].push_back((uint64_t) (int64_t) (sq * a.v));
				if (w.kind != NumValue::NUM_NULL)
					v[3].push_back((uint64_t) (int64_t) neg);
			}
		}
		if (err)
			c[GPUEXT_SCAN_ERRORS]++;
		else
			c[GPUEXT_SCAN_PASSED]++;
	}
	return num_counts_differ(c, v, hc, hv);
}

/*
 * The program of numerics cast to double precision: no WHERE; registers 0 a
 * and 1 b (numeric columns at scale 2, loaded as doubles), 2 a * b; outputs
 * a and a * b as doubles.
 */
GpuextScanProgram num_float_program()
{
	GpuextScanProgram p = num_program();

	p.ncmps = p.nquals = 0;
	p.nnregs = p.nnloads = p.nnsteps = 0;
	p.nregs = 3;
	p.nloads = 2;
	p.loads[0] = {0, 0, 0};
	p.loads[1] = {1, 1, 0};
	p.nsteps = 1;
	p.steps[0] = {GPUEXT_SCAN_MUL, 2, 0, 1, 0, 0, 0, 0};
	p.nouts = 2;
	for (int o = 0; o < 2; o++)
	{
		p.outs[o].col = -1;
		p.outs[o].value_bytes = 8;
		p.outs[o].from_reg = GPUEXT_SCAN_FROM_DOUBLE;
		p.outs[o].reg = o == 0 ? 0 : 2;
		p.outs[o].filter_first = 0;
	}
	return p;
}

/*
 * The program of numerics cast to real: num_float_program's, its loads
 * rounded once to real (numeric_float4) and a * b real arithmetic; its
 * outputs reals.
 */
GpuextScanProgram num_real_program()
{
	GpuextScanProgram p = num_float_program();

	p.loads[0].real = 1;
	p.loads[1].real = 1;
	p.steps[0].real = 1;
	for (int o = 0; o < 2; o++)
		p.outs[o].value_bytes = 4;
	return p;
}

/* A value at scale 2 as its decimal text, as numeric_out writes it. */
std::string num_text(__int128 v)
{
	unsigned __int128 m = v < 0 ? (unsigned __int128) -v : (unsigned __int128) v;
	std::string digits;

	do
	{
		digits.insert(digits.begin(), (char) ('0' + (int) (m % 10)));
		m /= 10;
	} while (m > 0);
	while (digits.size() < 3)
		digits.insert(digits.begin(), '0');
	digits.insert(digits.size() - 2, ".");
	return (v < 0 ? "-" : "") + digits;
}

/* A value at scale 2 as strtod reads its decimal text: PostgreSQL's numeric_float8. */
double num_strtod(__int128 v)
{
	return strtod(num_text(v).c_str(), nullptr);
}

/*
 * The harness's own run of num_float_program, or of num_real_program
 * (real: the values read by strtof, numeric_float4, and multiplied as
 * reals): a row whose a or b is NaN or past 2^53 at the scale is left to the
 * CPU (an error); "" or what differs from the CPU's run (hc, hv).
 */
std::string num_float_reference_differs(const NumSet &ns, const uint64_t *hc, const std::vector<std::vector<uint64_t>> &hv,
										bool real)
{
	uint64_t	c[GPUEXT_SCAN_COUNTERS] = {0};
	std::vector<std::vector<uint64_t>> v(2);
	const __int128 limit = (__int128) 1 << 53;

	for (size_t i = 0; i < ns.a.size(); i++)
	{
		const NumValue &a = ns.a[i];
		const NumValue &b = ns.b[i];
		const NumValue &w = ns.c[i];
		const bool	w_wide = w.kind == NumValue::NUM_FINITE && (w.dscale > 0 || !num_reads(w.v / 100));
		double		da,
					prod;

		if (a.kind == NumValue::NUM_BROKEN || b.kind == NumValue::NUM_BROKEN || w_wide ||
			(a.kind == NumValue::NUM_FINITE && !num_reads(a.v)) || (b.kind == NumValue::NUM_FINITE && !num_reads(b.v)))
		{
			c[GPUEXT_SCAN_BAD]++;
			continue;
		}
		c[GPUEXT_SCAN_DECODED]++;
		if (a.kind == NumValue::NUM_NAN || b.kind == NumValue::NUM_NAN ||
			(a.kind == NumValue::NUM_FINITE && (a.v > limit || a.v < -limit)) ||
			(b.kind == NumValue::NUM_FINITE && (b.v > limit || b.v < -limit)))
		{
			c[GPUEXT_SCAN_ERRORS]++;
			continue;
		}
		c[GPUEXT_SCAN_PASSED]++;
		if (a.kind == NumValue::NUM_NULL)
			continue;
		if (real)
		{
			float		fa = strtof(num_text(a.v).c_str(), nullptr);
			float		fprod;

			v[0].push_back(0);
			memcpy(&v[0].back(), &fa, 4);
			if (b.kind == NumValue::NUM_NULL)
				continue;
			fprod = fa * strtof(num_text(b.v).c_str(), nullptr);
			v[1].push_back(0);
			memcpy(&v[1].back(), &fprod, 4);
			continue;
		}
		da = num_strtod(a.v);
		v[0].push_back(0);
		memcpy(&v[0].back(), &da, 8);
		if (b.kind == NumValue::NUM_NULL)
			continue;
		prod = da * num_strtod(b.v);
		v[1].push_back(0);
		memcpy(&v[1].back(), &prod, 8);
	}
	return num_counts_differ(c, v, hc, hv);
}

/* Sets of 1, 7 and 64 pages (the quick run: 1 and 7) on the device against the CPU and the harness. */
void run_scan_numeric_checks(bool quick)
{
	const uint32_t sizes[] = {1, 7, 64};
	std::mt19937_64 rng(SCAN_SEED ^ 0x4E554D45524943ull);

	for (uint32_t npages : sizes)
	{
		NumSet		ns;
		void	   *d_pages = nullptr,
				   *d_vis = nullptr;

		if (quick && npages > 7)
			break;
		ns = num_make_set(npages, rng);
		scan_upload_set(ns.s, &d_pages, &d_vis);
		for (int cast = 0; cast < 3; cast++)
		{
			GpuextScanProgram p = cast == 2 ? num_real_program() : cast ? num_float_program() : num_program();
			GpuextScanProgram ph = p;
			std::vector<char> h_outs;
			std::vector<std::vector<uint64_t>> hv(p.nouts);
			uint64_t	hc[GPUEXT_SCAN_COUNTERS] = {0};
			std::string detail;
			std::string what = cast == 2 ? "numeric cast to real" : cast ? "numeric cast to double precision" :
				"numeric WHERE, arithmetic and values";

			h_outs.assign(scan_layout(ph, (uint64_t) npages * GPUEXT_SCAN_MAX_TUPLES), (char) POISON);
			report(gpuext_scan_program_valid(&ph, h_outs.size()) == 1, "scan " + ns.s.name + ", " + what +
				   ": the program is valid", "");
			gpuext_scan_heap_host(&ph, ns.s.pages.data(), ns.s.vis.data(), npages, hc, h_outs.data());
			for (int o = 0; o < p.nouts; o++)
				hv[o] = scan_values(h_outs.data(), ph.outs[o].offset, hc[GPUEXT_SCAN_OUT_COUNT + o],
									cast == 2 ? 4 : 8, false);
			detail = cast ? num_float_reference_differs(ns, hc, hv, cast == 2) : num_reference_differs(ns, hc, hv);
			if (detail.empty() && (hc[GPUEXT_SCAN_PASSED] == 0 || hc[GPUEXT_SCAN_ERRORS] == 0 ||
								   (npages > 1 && hc[GPUEXT_SCAN_BAD] == 0)))
				detail = "the set lacks passing rows, rows in error or undecodable rows";
			report(detail.empty(), "scan " + ns.s.name + ", " + what + ": the CPU's run against the harness's", detail);
			check_scan(ns.s, what.c_str(), p, d_pages, d_vis, (uint64_t) npages * GPUEXT_SCAN_MAX_TUPLES);
		}
		gpuext_cuda_free(d_pages);
		gpuext_cuda_free(d_vis);
	}
}
