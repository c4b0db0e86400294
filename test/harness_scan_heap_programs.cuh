/*
 * harness_scan_heap_programs.cuh
 *		The device scan's programs over the test table of
 *		harness_scan_heap_tuples.cuh: every column's values with no WHERE or
 *		FILTER, a WHERE clause and FILTERs of every kind, float comparisons with
 *		NaN, a walk that stops early, count(*) alone, double precision and real
 *		arithmetic; and how their outputs are laid out.  Included after
 *		harness_scan_heap_pages.cuh.
 */

/* An empty program walking the test table's first walk columns. */
GpuextScanProgram scan_program(int walk)
{
	GpuextScanProgram p;

	memset(&p, 0, sizeof(p));
	p.walk_atts = (uint16_t) walk;
	for (int a = 0; a < walk; a++)
	{
		p.att_len[a] = SCAN_ATT_LEN[a];
		p.att_align[a] = SCAN_ATT_ALIGN[a];
	}
	return p;
}

/* Add a column read: its index in cols. */
int scan_col(GpuextScanProgram &p, int att, GpuextScanKind kind, bool missing_null, int64_t missing)
{
	GpuextScanCol &c = p.cols[p.ncols];

	c.att = (int16_t) att;
	c.kind = (uint8_t) kind;
	c.missing_null = missing_null;
	c.missing = missing;
	return p.ncols++;
}

/* Add a comparison of column col with an integer (modulo modulus when > 0): its index in cmps. */
int scan_icmp(GpuextScanProgram &p, int col, int strategy, int64_t ival, int64_t modulus)
{
	GpuextScanCmp &k = p.cmps[p.ncmps];

	k.col = (uint8_t) col;
	k.strategy = (uint8_t) strategy;
	k.ival = ival;
	k.modulus = modulus;
	return p.ncmps++;
}

/* Add a comparison of column col with a double: its index in cmps. */
int scan_fcmp(GpuextScanProgram &p, int col, int strategy, double fval)
{
	GpuextScanCmp &k = p.cmps[p.ncmps];

	k.col = (uint8_t) col;
	k.strategy = (uint8_t) strategy;
	k.is_float = 1;
	k.fval = fval;
	return p.ncmps++;
}

/* Add an output: column col's values (value_bytes), or a count (0; col -1 every row), FILTERed by n cmps from first. */
void scan_out(GpuextScanProgram &p, int col, int value_bytes, int first, int n)
{
	GpuextScanOut &o = p.outs[p.nouts++];

	o.col = (int8_t) col;
	o.value_bytes = (uint8_t) value_bytes;
	o.filter_first = (uint8_t) first;
	o.filter_n = (uint8_t) n;
}

/* No WHERE, no FILTER: each column's values, counts; a column a tuple lacks has a default, or NULL under missing_null. */
GpuextScanProgram scan_program_all(bool missing_null)
{
	GpuextScanProgram p = scan_program(SCAN_NATTS);
	const int	text = scan_col(p, 0, GPUEXT_SCAN_NULLNESS, missing_null, 0);
	const int	i2 = scan_col(p, 1, GPUEXT_SCAN_INT, missing_null, -7);
	const int	i4 = scan_col(p, 3, GPUEXT_SCAN_INT, missing_null, 123456);
	const int	i8 = scan_col(p, 4, GPUEXT_SCAN_INT, missing_null, -5000000000ll);
	const int	f4 = scan_col(p, 5, GPUEXT_SCAN_FLOAT4, missing_null, scan_float_bits(2.5, true));
	const int	f8 = scan_col(p, 6, GPUEXT_SCAN_FLOAT8, missing_null, scan_float_bits(-0.25, false));
	const int	i4b = scan_col(p, 8, GPUEXT_SCAN_INT, missing_null, 42);
	const int	i8b = scan_col(p, 9, GPUEXT_SCAN_INT, missing_null, (int64_t) 1 << 40);

	scan_out(p, i2, 2, 0, 0);
	scan_out(p, i4, 4, 0, 0);
	scan_out(p, i8, 8, 0, 0);
	scan_out(p, f4, 4, 0, 0);
	scan_out(p, f8, 8, 0, 0);
	scan_out(p, i4b, 4, 0, 0);
	scan_out(p, i8b, 8, 0, 0);
	scan_out(p, -1, 0, 0, 0);
	scan_out(p, text, 0, 0, 0);
	scan_out(p, f8, 0, 0, 0);
	return p;
}

/* A WHERE clause (an integer modulo, an int8 bound) and FILTERs of every kind, one shared by two outputs. */
GpuextScanProgram scan_program_filters()
{
	GpuextScanProgram p = scan_program(SCAN_NATTS);
	const int	text = scan_col(p, 0, GPUEXT_SCAN_NULLNESS, true, 0);
	const int	i2 = scan_col(p, 1, GPUEXT_SCAN_INT, true, 0);
	const int	b = scan_col(p, 2, GPUEXT_SCAN_NULLNESS, true, 0);
	const int	i4 = scan_col(p, 3, GPUEXT_SCAN_INT, false, 5);
	const int	i8 = scan_col(p, 4, GPUEXT_SCAN_INT, true, 0);
	const int	f4 = scan_col(p, 5, GPUEXT_SCAN_FLOAT4, true, 0);
	const int	f8 = scan_col(p, 6, GPUEXT_SCAN_FLOAT8, false, scan_float_bits(1.5, false));
	const int	i8b = scan_col(p, 9, GPUEXT_SCAN_INT, false, -3);
	int			f;

	scan_icmp(p, i4, 4, -3, 7);
	scan_icmp(p, i8, 5, -4000000000000000000ll, 0);
	p.nquals = 2;
	f = scan_icmp(p, i2, 3, 2, 5);
	scan_out(p, i2, 2, f, 1);
	scan_out(p, f4, 4, f, 1);
	f = scan_fcmp(p, f8, 5, 0.5);
	scan_out(p, i8, 8, f, 1);
	f = scan_icmp(p, i4, 2, 0, 0);
	scan_out(p, -1, 0, f, 1);
	scan_out(p, i4, 4, 0, 0);
	f = scan_fcmp(p, f4, 4, -1.0);
	scan_out(p, text, 0, f, 1);
	f = scan_icmp(p, i8b, 3, 1, 3);
	scan_out(p, i8b, 8, f, 1);
	f = scan_icmp(p, i8, 1, 1000, 0);
	scan_icmp(p, i8, 4, -1000, 0);
	scan_out(p, i8, 8, f, 2);
	scan_out(p, b, 0, 0, 0);
	f = scan_fcmp(p, i2, 5, 100.5);
	scan_out(p, f8, 8, f, 1);
	return p;
}

/* Float comparisons with NaN (above all, equal to itself), -0.0, infinities; integers compared as doubles. */
GpuextScanProgram scan_program_nan()
{
	const double nan = std::numeric_limits<double>::quiet_NaN();
	const double inf = std::numeric_limits<double>::infinity();
	GpuextScanProgram p = scan_program(SCAN_NATTS);
	const int	i4 = scan_col(p, 3, GPUEXT_SCAN_INT, true, 0);
	const int	f4 = scan_col(p, 5, GPUEXT_SCAN_FLOAT4, true, 0);
	const int	f8 = scan_col(p, 6, GPUEXT_SCAN_FLOAT8, false, scan_float_bits(nan, false));
	int			f;

	scan_fcmp(p, f4, 2, nan);
	p.nquals = 1;
	f = scan_fcmp(p, f8, 5, nan);
	scan_out(p, f8, 8, f, 1);
	f = scan_fcmp(p, f8, 3, nan);
	scan_out(p, f8, 8, f, 1);
	f = scan_fcmp(p, f4, 1, nan);
	scan_out(p, f4, 4, f, 1);
	f = scan_fcmp(p, f8, 4, 1e300);
	scan_out(p, -1, 0, f, 1);
	f = scan_fcmp(p, i4, 5, -0.0);
	scan_out(p, i4, 4, f, 1);
	f = scan_fcmp(p, f8, 3, 0.0);
	scan_out(p, f8, 0, f, 1);
	f = scan_fcmp(p, f4, 3, -inf);
	scan_out(p, f4, 4, f, 1);
	f = scan_fcmp(p, f8, 1, -nan);
	scan_out(p, f8, 8, f, 1);
	f = scan_fcmp(p, f4, 3, 0.5);
	scan_out(p, f4, 4, f, 1);
	scan_out(p, i4, 4, 0, 0);
	return p;
}

/* Five columns walked, two read: a column past them that cannot be decoded goes unseen. */
GpuextScanProgram scan_program_narrow()
{
	GpuextScanProgram p = scan_program(5);
	const int	i2 = scan_col(p, 1, GPUEXT_SCAN_INT, true, 0);
	const int	i8 = scan_col(p, 4, GPUEXT_SCAN_INT, false, 77);
	int			f;

	scan_icmp(p, i2, 3, 0, 2);
	p.nquals = 1;
	scan_out(p, i8, 8, 0, 0);
	f = scan_icmp(p, i8, 4, 500000000, 1000000007);
	scan_out(p, i8, 0, f, 1);
	f = scan_icmp(p, i8, 1, 0, 0);
	scan_out(p, i2, 2, f, 1);
	scan_out(p, -1, 0, 0, 0);
	return p;
}

/* No column read: count(*), twice. */
GpuextScanProgram scan_program_count()
{
	GpuextScanProgram p = scan_program(0);

	scan_out(p, -1, 0, 0, 0);
	scan_out(p, -1, 0, 0, 0);
	return p;
}

/* Add an arithmetic step regs[dst] = regs[a] op regs[b] (real: rounded to real, as float4_pl ...). */
void scan_step(GpuextScanProgram &p, GpuextScanOp op, int dst, int a, int b, bool real = false)
{
	GpuextScanStep &st = p.steps[p.nsteps++];

	st.real = real;
	st.op = (uint8_t) op;
	st.dst = (uint8_t) dst;
	st.a = (uint8_t) a;
	st.b = (uint8_t) b;
}

/*
 * Double precision arithmetic over the random floats and integers (NaN,
 * infinities, zeros, denormals, limits): NULLs through strict operators,
 * rows whose overflow, underflow or division by zero is counted, a CASE
 * WHEN's choice (a NULL branch too), register outputs with and without
 * FILTER, behind a WHERE clause; and real arithmetic over the real column,
 * a cast to real and a bigint column loaded as real (rounded once), outputs
 * of reals.
 */
GpuextScanProgram scan_program_arith()
{
	GpuextScanProgram p = scan_program(SCAN_NATTS);
	const int	text = scan_col(p, 0, GPUEXT_SCAN_NULLNESS, true, 0);
	const int	i2 = scan_col(p, 1, GPUEXT_SCAN_INT, true, 0);
	const int	i4 = scan_col(p, 3, GPUEXT_SCAN_INT, false, 5);
	const int	f4 = scan_col(p, 5, GPUEXT_SCAN_FLOAT4, true, 0);
	const int	f8 = scan_col(p, 6, GPUEXT_SCAN_FLOAT8, false, scan_float_bits(1.5, false));
	const int	i8 = scan_col(p, 9, GPUEXT_SCAN_INT, true, 0);
	int			f;
	int			ne;
	int			isnull;

	scan_icmp(p, i4, 4, -2, 5);
	p.nquals = p.ncmps;
	p.nregs = 13;
	p.consts[3] = 2.0;
	p.consts[4] = 1e300;
	p.loads[p.nloads++] = {(uint8_t) f8, 0, 0};
	p.loads[p.nloads++] = {(uint8_t) f4, 1, 0};
	p.loads[p.nloads++] = {(uint8_t) i2, 2, 0};
	scan_step(p, GPUEXT_SCAN_MUL, 5, 0, 1);
	scan_step(p, GPUEXT_SCAN_ADD, 6, 5, 2);
	scan_step(p, GPUEXT_SCAN_DIV, 7, 6, 3);
	scan_step(p, GPUEXT_SCAN_NEG, 8, 7, 0);
	scan_step(p, GPUEXT_SCAN_SUB, 9, 0, 1);
	scan_step(p, GPUEXT_SCAN_DIV, 10, 0, 1);
	scan_step(p, GPUEXT_SCAN_MUL, 11, 9, 4);
	f = scan_fcmp(p, f8, 1, 0.0);
	/* <> and the null tests, as FILTERs */
	ne = scan_fcmp(p, f4, GPUEXT_SCAN_NOT_EQUAL, 0.0);
	isnull = scan_icmp(p, text, 1, 0, 0);
	p.cmps[isnull].nulltest = GPUEXT_SCAN_IS_NULL;
	p.cmps[scan_icmp(p, i2, 2, 0, 0)].nulltest = GPUEXT_SCAN_IS_NOT_NULL;
	scan_out(p, -1, 0, isnull, 2);
	scan_out(p, f4, 4, ne, 1);
	/* CASE WHEN f4 <> 0 THEN f4 ELSE f8 END: the NULL of the branch taken */
	scan_step(p, GPUEXT_SCAN_SEL, 12, 1, 0);
	p.steps[p.nsteps - 1].cmp_first = (uint8_t) ne;
	p.steps[p.nsteps - 1].cmp_n = 1;
	/* CASE WHEN f8 < 0 THEN f8 END: a register that starts NULL where no branch is taken */
	p.nregs = 15;
	p.const_nulls = 1u << 13;
	p.consts[13] = 12345.0;
	scan_step(p, GPUEXT_SCAN_SEL, 14, 0, 13);
	p.steps[p.nsteps - 1].cmp_first = (uint8_t) f;
	p.steps[p.nsteps - 1].cmp_n = 1;
	/* real: f4 * f4 - f4, f4 / that, minus it, times 2 (overflow, underflow, division by zero) */
	p.nregs = 19;
	scan_step(p, GPUEXT_SCAN_MUL, 15, 1, 1, true);
	scan_step(p, GPUEXT_SCAN_SUB, 16, 15, 1, true);
	scan_step(p, GPUEXT_SCAN_DIV, 17, 1, 16, true);
	scan_step(p, GPUEXT_SCAN_NEG, 18, 17, 0, true);
	scan_step(p, GPUEXT_SCAN_MUL, 18, 18, 3, true);
	/* f8 / f4 cast to real (dtof: overflow and underflow) */
	p.nregs = 20;
	scan_step(p, GPUEXT_SCAN_TO_REAL, 19, 10, 10, true);
	/* the bigint column as real (i8tof, not through a double), times f4 as real */
	p.nregs = 22;
	p.loads[p.nloads++] = {(uint8_t) i8, 20, 1};
	scan_step(p, GPUEXT_SCAN_MUL, 21, 20, 1, true);
	for (int r : {8, 10, 11, 6, 12, 14, 16, 18, 19, 20, 21})
	{
		GpuextScanOut &o = p.outs[p.nouts++];

		o.col = -1;
		o.value_bytes = r >= 18 ? 4 : 8;
		o.from_reg = 1;
		o.reg = (uint8_t) r;
		if (r == 6)
		{
			o.filter_first = (uint8_t) f;
			o.filter_n = 1;
		}
	}
	scan_out(p, -1, 0, 0, 0);
	return p;
}

/* Lay out p's outputs for out_cap values each, 8-aligned one after another: the bytes they take. */
size_t scan_layout(GpuextScanProgram &p, uint64_t out_cap)
{
	size_t		off = 0;

	p.out_cap = out_cap;
	for (int o = 0; o < p.nouts; o++)
	{
		p.outs[o].offset = 0;
		if (p.outs[o].value_bytes == 0)
			continue;
		p.outs[o].offset = off;
		off += scan_maxalign(out_cap * p.outs[o].value_bytes);
	}
	return off;
}
