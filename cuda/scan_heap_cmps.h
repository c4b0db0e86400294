/*
 * scan_heap_cmps.h
 *		The device scan's comparisons: a column of a decoded row against a
 *		constant (integers, integers modulo a constant, dates and timestamps
 *		under a unit of date_trunc or a field of extract, floats as double
 *		precision with NaN above all, numeric at a scale, text as its bytes)
 *		or a null test, and the WHERE clause's and FILTERs' OR groups of
 *		them.  Included by scan_heap.h after the row's decoding.
 */
#ifndef GPUEXT_SCAN_HEAP_CMPS_H
#define GPUEXT_SCAN_HEAP_CMPS_H

/* The place of the character after the one at i of t (UTF-8 where utf8, else a byte each). */
static inline GPUEXT_HD uint32_t
gpuext_scan_next_char(const unsigned char *t, uint32_t len, uint32_t i, int utf8)
{
	i++;
	while (utf8 && i < len && (t[i] & 0xC0) == 0x80)
		i++;
	return i;
}

/*
 * Whether text t matches LIKE pattern pat, as PostgreSQL's MatchText decides
 * under a deterministic collation: % any characters, _ one, \ makes the next
 * byte literal, other bytes match themselves.  Greedy, going back only to the
 * last %, which can take whatever a later match needs.  The caller refuses a
 * pattern that ends in its escape (an error in PostgreSQL).
 */
static inline GPUEXT_HD int
gpuext_scan_like(const unsigned char *t, uint32_t len, const unsigned char *pat, uint32_t plen, int utf8)
{
	uint32_t	ti = 0;
	uint32_t	pi = 0;
	uint32_t	star = UINT32_MAX;	/* the pattern's place after the last %, where it was met */
	uint32_t	star_t = 0;

	while (ti < len)
	{
		if (pi < plen && pat[pi] == '%')
		{
			star = ++pi;
			star_t = ti;
			continue;
		}
		if (pi < plen && pat[pi] == '_')
		{
			ti = gpuext_scan_next_char(t, len, ti, utf8);
			pi++;
			continue;
		}
		if (pi < plen)
		{
			uint32_t	lit = pat[pi] == '\\' && pi + 1 < plen ? pi + 1 : pi;

			if (pat[lit] == t[ti])
			{
				pi = lit + 1;
				ti++;
				continue;
			}
		}
		if (star == UINT32_MAX)
			return 0;
		star_t = gpuext_scan_next_char(t, len, star_t, utf8);
		ti = star_t;
		pi = star;
	}
	while (pi < plen && pat[pi] == '%')
		pi++;
	return pi == plen;
}

/* Whether a text column's bytes (offset and length in its page) meet text comparison k, as = (0 or 1). */
static inline GPUEXT_HD int
gpuext_scan_text_meets(const GpuextScanProgram *p, const GpuextScanRow *row, const GpuextScanCmp *k, uint64_t v)
{
	const unsigned char *b = row->page + (uint32_t) (v >> 32);
	uint32_t	len = (uint32_t) v;
	uint32_t	from;
	uint32_t	last;

	if (k->text == GPUEXT_SCAN_TEXT_LIKE)
		return gpuext_scan_like(b, len, p->like_bytes + k->toff, k->tfull, k->utf8);
	if (k->text == GPUEXT_SCAN_TEXT_BPCHAR)
		while (len > 0 && b[len - 1] == ' ')
			len--;
	if (k->text == GPUEXT_SCAN_TEXT_EQUAL || k->text == GPUEXT_SCAN_TEXT_BPCHAR ? len != k->tfull : len < k->tfull)
		return 0;
	/* the places the part may start at: its own from the start or the end, any for an infix */
	from = k->text == GPUEXT_SCAN_TEXT_SUFFIX ? len - k->tfull + k->toff : k->toff;
	last = k->text == GPUEXT_SCAN_TEXT_CONTAINS ? len - k->tlen : from;
	for (uint32_t at = from; at <= last; at++)
	{
		int			i = 0;

		while (i < k->tlen && b[at + i] == k->tbytes[i])
			i++;
		if (i == k->tlen)
			return 1;
	}
	return 0;
}

/* Whether comparison k holds for row (float8_cmp_internal for floats); a NULL column fails it. */
static inline GPUEXT_HD int
gpuext_scan_cmp(const GpuextScanProgram *p, const GpuextScanRow *row, const GpuextScanCmp *k)
{
	int			cmp;

	if (k->nulltest)
		return ((row->nulls >> k->col) & 1) == (k->nulltest == GPUEXT_SCAN_IS_NULL);
	if (row->nulls & (1u << k->col))
		return 0;
	if (k->text)
		cmp = !gpuext_scan_text_meets(p, row, k, (uint64_t) row->vals[k->col]);
	else if (row->nans & (1u << k->col))
		cmp = 1;				/* numeric NaN: above every number, and no constant is NaN */
	else if (k->is_float)
	{
		double		a = gpuext_scan_double(p, row, k->col);
		double		b = k->fval;

		if (a != a)
			cmp = b != b ? 0 : 1;
		else if (b != b)
			cmp = -1;
		else
			cmp = a > b ? 1 : a < b ? -1 : 0;
	}
	else if (k->num_up > 0)
	{
		__int128	w = (__int128) row->vals[k->col] * gpuext_scan_pow10(k->num_up);

		cmp = w < k->ival ? -1 : w > k->ival ? 1 : 0;
	}
	else
	{
		int64_t		v = row->vals[k->col];

		if (k->modulus > 0)
			v %= k->modulus;
		/* under a unit, its image; a field of an infinity is NULL (date_trunc's leftovers never get here) */
		if (k->unit != GPUEXT_SCAN_TRUNC_NONE && gpuext_scan_cmp_unit(k, row->vals[k->col], &v) <= 0)
			return 0;
		cmp = v < k->ival ? -1 : v > k->ival ? 1 : 0;
	}
	switch (k->strategy)
	{
		case 1:
			return cmp < 0;
		case 2:
			return cmp <= 0;
		case 3:
			return cmp == 0;
		case 4:
			return cmp >= 0;
		case GPUEXT_SCAN_NOT_EQUAL:
			return cmp != 0;
		default:
			return cmp > 0;
	}
}

/*
 * Whether the comparisons cmps[first .. first + n) hold for row: each run of
 * comparisons joined by or_next is one OR group, and every group must hold.
 * The conditions come with NOT pushed down to the comparisons, so a NULL
 * (failing its comparison) decides as SQL's NULL does where only true passes.
 */
static inline GPUEXT_HD int
gpuext_scan_cmps(const GpuextScanProgram *p, const GpuextScanRow *row, int first, int n)
{
	int			group = 0;

	for (int i = first; i < first + n; i++)
	{
		group = group || gpuext_scan_cmp(p, row, &p->cmps[i]);
		if (p->cmps[i].or_next)
			continue;
		if (!group)
			return 0;
		group = 0;
	}
	return 1;
}

#endif							/* GPUEXT_SCAN_HEAP_CMPS_H */
