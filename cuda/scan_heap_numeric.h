/*
 * scan_heap_numeric.h
 *		numeric on the device scan: a numeric column's value read from its
 *		bytes as the bigint at its type's scale, and the numeric arithmetic
 *		of the aggregates' arguments as 128-bit integers at the display
 *		scales PostgreSQL's numeric_add, numeric_sub and numeric_mul give.
 *
 * A numeric's bytes (utils/adt/numeric.c, stable on disk): a 16-bit header,
 * then base-10000 digits of 16 bits, the first of weight `weight`.  The
 * short form packs sign, display scale and weight into the header; the long
 * form has sign and display scale there and the weight in the next 16 bits;
 * 0xC000 and up are NaN and the infinities.  A value the program cannot hold
 * exactly (NaN, an infinity, more fractional digits than the scale, past 64
 * bits at the scale) is undecodable: the CPU reads its batch.  Arithmetic
 * that would leave 126 bits is flagged the same way, through the errors
 * count: PostgreSQL's numeric does not overflow there, so the CPU's reading
 * of the batch raises nothing and computes the value exactly.
 */
#ifndef GPUEXT_SCAN_HEAP_NUMERIC_H
#define GPUEXT_SCAN_HEAP_NUMERIC_H

#define GPUEXT_SCAN_NUMERIC_MAX_DIGITS 8	/* base-10000 digits read: 32 decimal digits */
#define GPUEXT_SCAN_NUMERIC_NAN 2	/* gpuext_scan_numeric_read's NaN */
#define GPUEXT_SCAN_NUMERIC_MAX_UP 38	/* the largest power of ten a value is multiplied by */

/* 10^k, 0 <= k <= 38. */
static inline GPUEXT_HD __int128
gpuext_scan_pow10(int k)
{
	__int128	v = 1;

	for (int i = 0; i < k; i++)
		v *= 10;
	return v;
}

/*
 * The numeric of len bytes at n (its varlena header left out) as the integer
 * value * 10^scale in *out: 1; GPUEXT_SCAN_NUMERIC_NAN for NaN (*out 0); or
 * 0 where that is not exact or not within 64 bits (the infinities too), or
 * the bytes do not add up.
 */
static inline GPUEXT_HD int
gpuext_scan_numeric_read(const unsigned char *n, uint32_t len, int scale, int64_t *out)
{
	unsigned	h;
	int			neg;
	int			dscale;
	int			weight;
	uint32_t	first;
	uint32_t	ndigits;
	uint64_t	acc = 0;
	const uint64_t pow10[19] = {
		1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL, 100000000ULL,
		1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL, 10000000000000ULL,
		100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL,
		1000000000000000000ULL
	};

	if (len < 2)
		return 0;
	h = (unsigned) n[0] | ((unsigned) n[1] << 8);
	if (h == 0xC000)
	{
		*out = 0;
		return GPUEXT_SCAN_NUMERIC_NAN;
	}
	if ((h & 0xC000) == 0xC000)
		return 0;				/* +Infinity, -Infinity, or not a numeric */
	if (h & 0x8000)
	{
		/* short: sign 0x2000, display scale 0x1F80, weight 7 bits, signed */
		neg = (h & 0x2000) != 0;
		dscale = (int) ((h & 0x1F80) >> 7);
		weight = (h & 0x0040) ? (int) (h & 0x003F) - 64 : (int) (h & 0x003F);
		first = 2;
	}
	else
	{
		if (len < 4)
			return 0;
		neg = (h & 0xC000) == 0x4000;
		dscale = (int) (h & 0x3FFF);
		weight = (int) (int16_t) ((unsigned) n[2] | ((unsigned) n[3] << 8));
		first = 4;
	}
	ndigits = (len - first) / 2;
	if (dscale > scale || ndigits > GPUEXT_SCAN_NUMERIC_MAX_DIGITS || (len - first) % 2 != 0)
		return 0;
	for (uint32_t i = 0; i < ndigits; i++)
	{
		unsigned	d = (unsigned) n[first + 2 * i] | ((unsigned) n[first + 2 * i + 1] << 8);
		/* the digit's place in the integer at the scale: d * 10^e */
		int			e = 4 * (weight - (int) i) + scale;

		if (d >= 10000)
			return 0;
		if (d == 0)
			continue;
		if (e < 0)
		{
			/* a digit's places below the scale hold zeros where the display scale is within it */
			if (e < -3 || d % pow10[-e] != 0)
				return 0;
			acc += d / pow10[-e];
		}
		else
		{
			if (e > 18 || d > (uint64_t) INT64_MAX / pow10[e])
				return 0;
			acc += d * pow10[e];
		}
		if (acc > (uint64_t) INT64_MAX)
			return 0;
	}
	*out = neg ? -(int64_t) acc : (int64_t) acc;
	return 1;
}

/* Whether |v| < 2^126, where every sum and product of two such values checked here is exact. */
static inline GPUEXT_HD int
gpuext_scan_numeric_small(__int128 v)
{
	const __int128 lim = (__int128) 1 << 126;

	return v < lim && v > -lim;
}

/* The bits of |v|'s magnitude (0 for 0). */
static inline GPUEXT_HD int
gpuext_scan_numeric_bits(__int128 v)
{
	unsigned __int128 m = v < 0 ? (unsigned __int128) 0 - (unsigned __int128) v : (unsigned __int128) v;
	int			bits = 0;

	while (m != 0)
	{
		bits++;
		m >>= 1;
	}
	return bits;
}

/* v * 10^k into *out, 1; or 0 where it would leave 126 bits. */
static inline GPUEXT_HD int
gpuext_scan_numeric_up(__int128 v, int k, __int128 *out)
{
	for (int i = 0; i < k; i++)
	{
		if (v >= ((__int128) 1 << 122) || v <= -((__int128) 1 << 122))
			return 0;
		v *= 10;
	}
	*out = v;
	return 1;
}

/* Whether v is within the range of a signed integer of bytes bytes. */
static inline GPUEXT_HD int
gpuext_scan_int_fits(__int128 v, int bytes)
{
	const __int128 lim = (__int128) 1 << (8 * bytes - 1);

	return v >= -lim && v < lim;
}

static inline GPUEXT_HD int gpuext_scan_cmps(const GpuextScanProgram *p, const GpuextScanRow *row, int first, int n);

/*
 * A numeric column's value (v at scale) as double precision, as
 * PostgreSQL's numeric_float8 rounds it (its text read by strtod): below
 * 2^53, v and 10^scale (scale <= 22) are exact doubles and one division
 * rounds their quotient once; 0 for a NaN or a value past that, which the
 * CPU converts.  *p10 is the divisor, for a caller that needs the remainder.
 */
static inline GPUEXT_HD int
gpuext_scan_numeric_quotient(int64_t v, int scale, int nan, double *out, double *p10)
{
	*p10 = 1.0;
	if (nan || scale > 22 || v > (INT64_C(1) << 53) || v < -(INT64_C(1) << 53))
		return 0;
	for (int i = 0; i < scale; i++)
		*p10 *= 10.0;
#ifdef __CUDA_ARCH__
	*out = __ddiv_rn((double) v, *p10);
#else
	*out = (double) v / *p10;
#endif
	return 1;
}

/* A numeric column's value as double precision (gpuext_scan_numeric_quotient without the divisor). */
static inline GPUEXT_HD int
gpuext_scan_numeric_double(int64_t v, int scale, int nan, double *out)
{
	double		p10;

	return gpuext_scan_numeric_quotient(v, scale, nan, out, &p10);
}

/*
 * The numeric registers for a row that passed the WHERE clause, each
 * marked unknown (nreg_errs) where its value would leave 126 bits or a NaN
 * would be computed with, or where an integer operation raises an error in
 * PostgreSQL (out of its type's range, division by zero); a step with an
 * unknown operand is unknown, as PostgreSQL evaluates arguments first.  A
 * strict operator with a NULL operand is NULL.  Integer columns load as
 * their values, at scale 0.
 */
static inline GPUEXT_HD void
gpuext_scan_numeric_compute(const GpuextScanProgram *p, GpuextScanRow *row)
{
	__int128   *r = row->numregs;

	row->nreg_nulls = p->numconst_nulls;
	row->nreg_errs = 0;
	for (int i = 0; i < p->nnregs; i++)
		r[i] = p->numconsts[i];
	for (int i = 0; i < p->nnloads; i++)
	{
		const GpuextScanLoad *l = &p->numloads[i];

		if (row->nulls & (1u << l->col))
			row->nreg_nulls |= 1u << l->dst;
		else if (row->nans & (1u << l->col))
			row->nreg_errs |= 1u << l->dst;
		else
			r[l->dst] = row->vals[l->col];
	}
	for (int i = 0; i < p->nnsteps; i++)
	{
		const GpuextScanNumStep *s = &p->numsteps[i];
		__int128	a = r[s->a];
		__int128	b = s->op == GPUEXT_SCAN_NEG ? 0 : r[s->b];

		if (s->op == GPUEXT_SCAN_SEL)
		{
			/* the taken branch's value, NULL and mark: CASE evaluates no other */
			int			taken = gpuext_scan_cmps(p, row, s->cmp_first, s->cmp_n) ? s->a : s->b;

			r[s->dst] = r[taken];
			gpuext_scan_mark_select(&row->nreg_nulls, &row->nreg_errs, s->dst, taken);
			continue;
		}
		if (gpuext_scan_mark_operands(&row->nreg_nulls, &row->nreg_errs, s->dst, s->a, s->b, s->op == GPUEXT_SCAN_NEG))
			continue;
		switch (s->op)
		{
			case GPUEXT_SCAN_ADD:
			case GPUEXT_SCAN_SUB:
				if (!gpuext_scan_numeric_up(a, s->ka, &a) || !gpuext_scan_numeric_up(b, s->kb, &b))
				{
					row->nreg_errs |= 1u << s->dst;
					continue;
				}
				r[s->dst] = s->op == GPUEXT_SCAN_ADD ? a + b : a - b;
				break;
			case GPUEXT_SCAN_MUL:
				if (gpuext_scan_numeric_bits(a) + gpuext_scan_numeric_bits(b) > 125)
				{
					row->nreg_errs |= 1u << s->dst;
					continue;
				}
				r[s->dst] = a * b;
				break;
			case GPUEXT_SCAN_DIV:
			case GPUEXT_SCAN_MOD:
				/* integers (int4div, int4mod): by 0 an error; by -1 a negation, its overflow checked below */
				if (b == 0)
				{
					row->nreg_errs |= 1u << s->dst;
					continue;
				}
				if (b == -1)
					r[s->dst] = s->op == GPUEXT_SCAN_DIV ? -a : 0;
				else
					r[s->dst] = s->op == GPUEXT_SCAN_DIV ? (__int128) ((int64_t) a / (int64_t) b) :
						(__int128) ((int64_t) a % (int64_t) b);
				break;
			default:
				r[s->dst] = -a;
				break;
		}
		if (!gpuext_scan_numeric_small(r[s->dst]) || (s->int_bytes > 0 && !gpuext_scan_int_fits(r[s->dst], s->int_bytes)))
			row->nreg_errs |= 1u << s->dst;
	}
}

/* Whether the numeric parts of a program are within its arrays (1), else 0. */
static inline int
gpuext_scan_numeric_valid(const GpuextScanProgram *p)
{
	if (p->nnregs > GPUEXT_SCAN_MAX_NREGS || p->nnloads > p->nnregs || p->nnsteps > p->nnregs)
		return 0;
	for (int c = 0; c < p->ncols; c++)
		if (p->cols[c].kind == GPUEXT_SCAN_NUMERIC &&
			(p->att_len[p->cols[c].att] != -1 || p->cols[c].scale > GPUEXT_SCAN_NUMERIC_MAX_UP))
			return 0;
	for (int i = 0; i < p->nnloads; i++)
		if (p->numloads[i].col >= p->ncols ||
			(p->cols[p->numloads[i].col].kind != GPUEXT_SCAN_NUMERIC && p->cols[p->numloads[i].col].kind != GPUEXT_SCAN_INT) ||
			p->numloads[i].dst >= p->nnregs)
			return 0;
	for (int i = 0; i < p->nnsteps; i++)
	{
		const GpuextScanNumStep *s = &p->numsteps[i];
		const int	int_op = s->op == GPUEXT_SCAN_DIV || s->op == GPUEXT_SCAN_MOD;

		if (s->op > GPUEXT_SCAN_MOD || s->dst >= p->nnregs || s->a >= p->nnregs || s->b >= p->nnregs ||
			s->ka > GPUEXT_SCAN_NUMERIC_MAX_UP || s->kb > GPUEXT_SCAN_NUMERIC_MAX_UP ||
			(s->int_bytes != 0 && s->int_bytes != 2 && s->int_bytes != 4 && s->int_bytes != 8) ||
			(int_op && s->int_bytes == 0) ||
			(s->op == GPUEXT_SCAN_SEL &&
			 (s->cmp_first < p->nquals || s->cmp_first + s->cmp_n > p->ncmps ||
			  (s->cmp_n > 0 && p->cmps[s->cmp_first + s->cmp_n - 1].or_next))))
			return 0;
	}
	for (int i = 0; i < p->ncmps; i++)
		if (p->cmps[i].num_up > 0 &&
			(p->cols[p->cmps[i].col].kind != GPUEXT_SCAN_NUMERIC || p->cmps[i].num_up > 19 || p->cmps[i].is_float))
			return 0;
	for (int o = 0; o < p->nouts; o++)
		if (p->outs[o].from_reg == GPUEXT_SCAN_FROM_NUMERIC &&
			(p->outs[o].reg >= p->nnregs ||
			 (p->outs[o].value_bytes != 0 && p->outs[o].value_bytes != 2 && p->outs[o].value_bytes != 4 &&
			  p->outs[o].value_bytes != 8)))
			return 0;
	return 1;
}

#endif							/* GPUEXT_SCAN_HEAP_NUMERIC_H */
