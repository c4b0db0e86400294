/*
 * harness_scan_heap.cuh
 *		kernel_harness's checks of the device scan (gpuext_scan_heap): heap
 *		pages built here as PostgreSQL stores them (page header, line
 *		pointers, tuple headers, null bitmaps, aligned columns, short and
 *		long varlenas, TOAST pointers, tuples with fewer columns), run
 *		through scan programs on the device and through gpuext_scan_heap_host
 *		on the CPU.  Every counter must match, and each output's values as a
 *		multiset (the device's order is arbitrary); the counters and outputs
 *		are poisoned first, so the bytes past each output's values, past the
 *		outputs and past the counters must stay poison.  The builder's record
 *		checks the CPU in turn: the tuples it made decodable and undecodable,
 *		and for programs without WHERE or FILTER each output's values.  Sets:
 *		no pages; one page of 0 to 291 items, all visible or listed; a batch;
 *		pages with corrupt items, page headers and item lists; pages with
 *		bytes flipped at random (only the CPU to compare with).  Refused
 *		programs and buffers must launch nothing.  Seeds are fixed.
 *		Included by kernel_harness.cu inside its namespace (its helpers).
 */

/* The test table: text, int2, bool, int4, int8, float4, float8, text, int4, int8. */
constexpr int SCAN_NATTS = 10;
const int16_t SCAN_ATT_LEN[SCAN_NATTS] = {-1, 2, 1, 4, 8, 4, 8, -1, 4, 8};
const uint8_t SCAN_ATT_ALIGN[SCAN_NATTS] = {4, 2, 1, 4, 8, 4, 8, 4, 4, 8};
constexpr int SCAN_FLOAT4_ATT = 5;
constexpr int SCAN_FLOAT8_ATT = 6;

constexpr size_t SCAN_GUARD_BYTES = 4096;
constexpr uint64_t SCAN_SEED = 0x5CA17EA9D0C0FFEEull;

/* An item's state: >= 0 undecodable at that column, or one of these. */
constexpr int SCAN_GOOD = -3;
constexpr int SCAN_SKIP = -2;		/* not a normal item */
constexpr int SCAN_BAD_HEADER = -1;	/* undecodable before its columns */

/* A tuple as the builder made it: its columns' values as the decoder reads them. */
struct ScanRow
{
	int			natts;
	bool		null[SCAN_NATTS];
	int64_t		val[SCAN_NATTS];
	bool		toast[SCAN_NATTS] = {};	/* a varlena column holds a TOAST pointer */
};

/* An item as the builder made it: its state, and its tuple's row where it is normal. */
struct ScanItem
{
	int			state;
	ScanRow		row;
};

/* An item the scan visits: its state, and where the builder's record of it is. */
struct ScanVisit
{
	int			state;
	uint32_t	page;
	uint32_t	item;
};

/* Pages with their visible items, and the builder's record of what the scan visits. */
struct ScanSet
{
	std::string name;
	uint32_t	npages = 0;
	std::vector<char> pages;
	std::vector<uint16_t> vis;
	std::vector<std::vector<ScanItem>> items;	/* each page's items, from item 1 */
	std::vector<ScanVisit> visits;
	bool		known = true;	/* false: bytes flipped after the build, no record */
	uint64_t	small_cap = 0;	/* > 0: also run with room for this many values an output */
};

/* How a page's items are made. */
struct ScanPageShape
{
	int			nitems;
	int			normal_pct;		/* normal items; the rest unused, redirects or dead */
	int			null_pct;
	int			short_pct;		/* tuples with fewer columns than the table */
	int			corrupt_pct;	/* normal items made undecodable */
	bool		minimal;		/* every item a normal tuple of 24 bytes */
};

/* Ways to make an item undecodable; those from SCAN_CORRUPT_VAR0_SHORT on at a column. */
enum ScanCorruption
{
	SCAN_CORRUPT_OFF_PAST,		/* lp_off + lp_len past the page */
	SCAN_CORRUPT_OFF_LOW,		/* lp_off inside the page header */
	SCAN_CORRUPT_LEN_SHORT,		/* lp_len shorter than a tuple header */
	SCAN_CORRUPT_HOFF_PAST,		/* t_hoff past lp_len */
	SCAN_CORRUPT_HOFF_SHORT,	/* t_hoff inside the tuple header */
	SCAN_CORRUPT_BITMAP,		/* a null bitmap (natts) past t_hoff */
	SCAN_CORRUPT_VAR0_SHORT,	/* column 0: a 1-byte header longer than the tuple */
	SCAN_CORRUPT_VAR0_LONG,		/* column 0: a 4-byte header longer than the tuple */
	SCAN_CORRUPT_VAR0_SIZE,		/* column 0: a 4-byte header's size below 4 */
	SCAN_CORRUPT_VAR0_TAG,		/* column 0: a TOAST pointer of an unknown tag */
	SCAN_CORRUPT_VAR0_TOAST_CUT,	/* column 0: a TOAST pointer cut by the tuple's end */
	SCAN_CORRUPT_VAR7_LONG,		/* column 7: a 4-byte header longer than the tuple */
	SCAN_CORRUPT_INT8_CUT,		/* column 9: an int8 cut by the tuple's end */
	SCAN_NUM_CORRUPTIONS
};

/* Store a little-endian 16-bit word. */
void scan_put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
}

/* Store a little-endian 32-bit word. */
void scan_put32(uint8_t *p, uint32_t v)
{
	scan_put16(p, v & 0xFFFF);
	scan_put16(p + 2, v >> 16);
}

/* MAXALIGN: up to a multiple of 8. */
size_t scan_maxalign(size_t n)
{
	return (n + 7) & ~(size_t) 7;
}

/* A value's low value_bytes bytes. */
uint64_t scan_low_bytes(int64_t v, int value_bytes)
{
	return value_bytes == 8 ? (uint64_t) v : (uint64_t) v & ((1ull << (8 * value_bytes)) - 1);
}

/* A random signed integer of bytes bytes: small, a limit, or any. */
int64_t scan_random_int(int bytes, std::mt19937_64 &rng)
{
	const int64_t hi = bytes == 8 ? INT64_MAX : ((int64_t) 1 << (8 * bytes - 1)) - 1;
	const int64_t lo = -hi - 1;

	switch (rng() % 8)
	{
		case 0:
			return lo;
		case 1:
			return hi;
		case 2:
		case 3:
			return (int64_t) (rng() % 2001) - 1000;
		default:
			return bytes == 8 ? (int64_t) rng() : lo + (int64_t) (rng() % (uint64_t) (hi - lo + 1));
	}
}

/* A float's bits as the decoder reads them (a float4's sign-extended). */
int64_t scan_float_bits(double d, bool f32)
{
	if (f32)
	{
		/* past float's range: the infinity a cast would round to, without its undefined behaviour */
		float		f = std::isfinite(d) && std::fabs(d) > FLT_MAX ? (d < 0 ? -INFINITY : INFINITY) : (float) d;
		int32_t		w;

		memcpy(&w, &f, 4);
		return w;
	}
	int64_t		w;

	memcpy(&w, &d, 8);
	return w;
}

/* A random float's bits as the decoder reads them: ordinary, or NaN, infinities, zeros, denormals, limits. */
int64_t scan_random_float(bool f32, std::mt19937_64 &rng)
{
	const double nan = std::numeric_limits<double>::quiet_NaN();
	const double inf = std::numeric_limits<double>::infinity();
	const double specials[] = {nan, -nan, inf, -inf, 0.0, -0.0, 1e-310, -1e-40, DBL_MAX, (double) FLT_MAX,
							   0.5, 1.0, -1.0, 0.1, 1e300};
	double		d;

	if (rng() % 4 == 0)
		return scan_float_bits(specials[rng() % (sizeof(specials) / sizeof(specials[0]))], f32);
	d = std::uniform_real_distribution<double>(-2.0, 2.0)(rng);
	if (rng() % 2)
		d *= 1e6;
	return scan_float_bits(d, f32);
}

/* A varlena of total bytes with a 4-byte header (payload random). */
std::vector<uint8_t> scan_varlena4(uint32_t total, std::mt19937_64 &rng)
{
	std::vector<uint8_t> v(total);

	scan_put32(v.data(), total << 2);
	for (uint32_t i = 4; i < total; i++)
		v[i] = (uint8_t) rng();
	return v;
}

/* A TOAST pointer of tag tag (VARTAG_ONDISK: 18) with 16 random bytes. */
std::vector<uint8_t> scan_toast_pointer(uint8_t tag, std::mt19937_64 &rng)
{
	std::vector<uint8_t> v(18);

	v[0] = 0x01;
	v[1] = tag;
	for (int i = 2; i < 18; i++)
		v[i] = (uint8_t) rng();
	return v;
}

/* A random varlena: short (1-byte header, unaligned), long (4-byte header), or a TOAST pointer. */
std::vector<uint8_t> scan_random_varlena(std::mt19937_64 &rng)
{
	const uint32_t long_sizes[] = {4, 8, 64, 128, 256};

	switch (rng() % 8)
	{
		case 0:
			return scan_toast_pointer(18, rng);
		case 1:
			return scan_varlena4(long_sizes[rng() % 5], rng);
		case 2:
			return scan_varlena4(127 + (uint32_t) (rng() % 200), rng);
		default:
			{
				const uint32_t most = rng() % 2 ? 10 : 126;
				uint32_t	total = 1 + (uint32_t) (rng() % most);
				std::vector<uint8_t> v(total);

				v[0] = (uint8_t) ((total << 1) | 1);
				for (uint32_t i = 1; i < total; i++)
					v[i] = (uint8_t) rng();
				return v;
			}
	}
}

/* A random row of the test table, with NULLs at null_pct. */
void scan_random_row(ScanRow &r, std::vector<uint8_t> var[SCAN_NATTS], int null_pct, std::mt19937_64 &rng)
{
	r.natts = SCAN_NATTS;
	for (int a = 0; a < SCAN_NATTS; a++)
	{
		r.null[a] = (int) (rng() % 100) < null_pct;
		r.val[a] = 0;
		var[a].clear();
		r.toast[a] = false;
		if (SCAN_ATT_LEN[a] == -1)
		{
			var[a] = scan_random_varlena(rng);
			r.toast[a] = var[a][0] == 0x01;
		}
		else if (a == SCAN_FLOAT4_ATT || a == SCAN_FLOAT8_ATT)
			r.val[a] = scan_random_float(a == SCAN_FLOAT4_ATT, rng);
		else if (SCAN_ATT_LEN[a] == 1)
			r.val[a] = (int64_t) (rng() % 2);
		else
			r.val[a] = scan_random_int(SCAN_ATT_LEN[a], rng);
	}
}

/*
 * The bytes of a tuple of row's first natts columns: header (junk in the
 * fields the decoder does not read), null bitmap, columns aligned as
 * heap_fill_tuple aligns them; att_off gets each column's offset.
 */
std::vector<uint8_t> scan_tuple(const ScanRow &r, const std::vector<uint8_t> var[SCAN_NATTS], int natts,
								std::mt19937_64 &rng, size_t att_off[SCAN_NATTS])
{
	bool		hasnull = false;
	size_t		hoff;
	std::vector<uint8_t> t;

	for (int a = 0; a < natts; a++)
		hasnull |= r.null[a];
	hoff = scan_maxalign(23 + (hasnull ? (natts + 7) / 8 : 0));
	t.assign(hoff, 0);
	for (int i = 0; i < 18; i++)
		t[i] = (uint8_t) rng();
	scan_put16(&t[18], (unsigned) natts | ((unsigned) rng() & 0xE000));
	scan_put16(&t[20], (hasnull ? 0x0001u : 0) | ((unsigned) rng() & 0xFFFE));
	t[22] = (uint8_t) hoff;
	for (int a = 0; a < natts; a++)
	{
		const bool	fixed = SCAN_ATT_LEN[a] > 0;

		att_off[a] = t.size();
		if (r.null[a])
			continue;
		if (hasnull)
			t[23 + a / 8] |= (uint8_t) (1u << (a % 8));
		/* short varlenas and TOAST pointers (odd first byte) go unaligned */
		if (fixed || (var[a][0] & 1) == 0)
			t.resize(hoff + ((t.size() - hoff + SCAN_ATT_ALIGN[a] - 1) & ~(size_t) (SCAN_ATT_ALIGN[a] - 1)), 0);
		att_off[a] = t.size();
		if (fixed)
			for (int i = 0; i < SCAN_ATT_LEN[a]; i++)
				t.push_back((uint8_t) ((uint64_t) r.val[a] >> (8 * i)));
		else
			t.insert(t.end(), var[a].begin(), var[a].end());
	}
	return t;
}

/* A line pointer that is not normal: unused, a redirect, dead, dead with storage (junk). */
uint32_t scan_other_item(int nitems, std::mt19937_64 &rng)
{
	switch (rng() % 4)
	{
		case 0:
			return 0;
		case 1:
			return (uint32_t) (1 + rng() % nitems) | (2u << 15);
		case 2:
			return 3u << 15;
		default:
			{
				const uint32_t off = (uint32_t) (rng() % 0x8000);

				return off | (3u << 15) | ((uint32_t) (rng() % 0x8000) << 17);
			}
	}
}

/* Set the row and varlenas a corruption at a column needs. */
void scan_corrupt_row(ScanCorruption kind, ScanRow &r, std::vector<uint8_t> var[SCAN_NATTS], std::mt19937_64 &rng)
{
	if (kind < SCAN_CORRUPT_VAR0_SHORT)
		return;
	if (kind == SCAN_CORRUPT_VAR7_LONG || kind == SCAN_CORRUPT_INT8_CUT)
	{
		r.natts = SCAN_NATTS;
		r.null[kind == SCAN_CORRUPT_VAR7_LONG ? 7 : 9] = false;
		if (kind == SCAN_CORRUPT_VAR7_LONG)
			var[7] = scan_varlena4(8, rng);
		return;
	}
	r.null[0] = false;
	r.natts = std::max(r.natts, 1);
	switch (kind)
	{
		case SCAN_CORRUPT_VAR0_SHORT:
			r.natts = 1;
			var[0] = {(6 << 1) | 1, 'a', 'b', 'c', 'd', 'e'};
			break;
		case SCAN_CORRUPT_VAR0_TAG:
			var[0] = scan_toast_pointer(7, rng);
			break;
		case SCAN_CORRUPT_VAR0_TOAST_CUT:
			r.natts = 1;
			var[0] = scan_toast_pointer(18, rng);
			break;
		default:
			var[0] = scan_varlena4(8, rng);
			break;
	}
}

/* Make an item undecodable: its tuple t (lp_len of it) or its line pointer's fields. */
void scan_corrupt_item(ScanCorruption kind, std::vector<uint8_t> &t, const size_t att_off[SCAN_NATTS],
					   unsigned &lp_off, unsigned &lp_len, std::mt19937_64 &rng)
{
	switch (kind)
	{
		case SCAN_CORRUPT_OFF_PAST:
			lp_off = rng() % 2 ? GPUEXT_SCAN_PAGE_BYTES - 16 : 0x7FFF - (unsigned) (rng() % 64);
			break;
		case SCAN_CORRUPT_OFF_LOW:
			lp_off = (unsigned) (rng() % 24);
			break;
		case SCAN_CORRUPT_LEN_SHORT:
			lp_len = (unsigned) (rng() % 23);
			break;
		case SCAN_CORRUPT_HOFF_PAST:
			lp_len = std::min<unsigned>(lp_len, 24 + (unsigned) (rng() % 8));
			t[22] = 32;
			break;
		case SCAN_CORRUPT_HOFF_SHORT:
			t[22] = (uint8_t) (rng() % 23);
			break;
		case SCAN_CORRUPT_BITMAP:
			scan_put16(&t[18], 100 + (unsigned) (rng() % 1900));
			t[20] |= 0x01;
			break;
		case SCAN_CORRUPT_VAR0_SHORT:
			t[att_off[0]] = (126 << 1) | 1;
			break;
		case SCAN_CORRUPT_VAR0_LONG:
			scan_put32(&t[att_off[0]], 0x00FFFFFFu << 2);
			break;
		case SCAN_CORRUPT_VAR0_SIZE:
			scan_put32(&t[att_off[0]], 2u << 2);
			break;
		case SCAN_CORRUPT_VAR7_LONG:
			scan_put32(&t[att_off[7]], 0x00FFFFFFu << 2);
			break;
		case SCAN_CORRUPT_VAR0_TOAST_CUT:
		case SCAN_CORRUPT_INT8_CUT:
			lp_len -= 4;
			break;
		default:
			break;
	}
}

/* The column a corruption makes undecodable, or SCAN_BAD_HEADER. */
int scan_corrupt_state(ScanCorruption kind)
{
	if (kind == SCAN_CORRUPT_VAR7_LONG)
		return 7;
	if (kind == SCAN_CORRUPT_INT8_CUT)
		return 9;
	return kind >= SCAN_CORRUPT_VAR0_SHORT ? 0 : SCAN_BAD_HEADER;
}

/*
 * Build a page of s.nitems items into page, its record into items: tuples
 * from the end of the page down, each shortened to fewer columns where the
 * space left must keep 24 bytes for each item after it.
 */
void scan_build_page(uint8_t *page, std::vector<ScanItem> &items, const ScanPageShape &s, std::mt19937_64 &rng)
{
	const unsigned lower = 24 + 4 * s.nitems;
	unsigned	upper = GPUEXT_SCAN_PAGE_BYTES;
	std::vector<uint8_t> var[SCAN_NATTS];
	size_t		att_off[SCAN_NATTS];

	memset(page, 0, GPUEXT_SCAN_PAGE_BYTES);
	for (int i = 0; i < 12; i++)
		page[i] = (uint8_t) rng();	/* pd_lsn, pd_checksum, pd_flags */
	scan_put16(page + 12, lower);
	scan_put16(page + 16, GPUEXT_SCAN_PAGE_BYTES);
	scan_put16(page + 18, GPUEXT_SCAN_PAGE_BYTES | 4);
	scan_put32(page + 20, (uint32_t) rng());
	items.assign(s.nitems, ScanItem());
	for (int i = 0; i < s.nitems; i++)
	{
		ScanItem   &it = items[i];
		const unsigned reserve = 24 * (unsigned) (s.nitems - 1 - i);
		ScanCorruption kind = SCAN_NUM_CORRUPTIONS;
		std::vector<uint8_t> t;
		unsigned	lp_off,
					lp_len;

		if (!s.minimal && (int) (rng() % 100) >= s.normal_pct)
		{
			it.state = SCAN_SKIP;
			scan_put32(page + 24 + 4 * i, scan_other_item(s.nitems, rng));
			continue;
		}
		scan_random_row(it.row, var, s.null_pct, rng);
		if (s.minimal)
		{
			it.row.natts = (int) (rng() % 9);
			for (int a = 0; a < SCAN_NATTS; a++)
				it.row.null[a] = true;
		}
		else if ((int) (rng() % 100) < s.short_pct)
			it.row.natts = (int) (rng() % SCAN_NATTS);
		if ((int) (rng() % 100) < s.corrupt_pct)
		{
			kind = static_cast<ScanCorruption>(rng() % SCAN_NUM_CORRUPTIONS);
			scan_corrupt_row(kind, it.row, var, rng);
			for (int a = 0; a < SCAN_NATTS; a++)
				it.row.toast[a] = SCAN_ATT_LEN[a] == -1 && !var[a].empty() && var[a][0] == 0x01;
		}
		for (;;)
		{
			t = scan_tuple(it.row, var, it.row.natts, rng, att_off);
			if (scan_maxalign(t.size()) + reserve <= upper - lower || it.row.natts == 0)
				break;
			/* a corruption at a column needs its columns: one in the header instead */
			if (kind >= SCAN_CORRUPT_VAR0_SHORT && kind < SCAN_NUM_CORRUPTIONS)
				kind = SCAN_CORRUPT_HOFF_SHORT;
			it.row.natts--;
		}
		upper -= (unsigned) scan_maxalign(t.size());
		lp_off = upper;
		lp_len = (unsigned) t.size();
		it.state = SCAN_GOOD;
		if (kind != SCAN_NUM_CORRUPTIONS)
		{
			scan_corrupt_item(kind, t, att_off, lp_off, lp_len, rng);
			it.state = scan_corrupt_state(kind);
		}
		memcpy(page + upper, t.data(), t.size());
		scan_put32(page + 24 + 4 * i, lp_off | (1u << 15) | (lp_len << 17));
	}
	scan_put16(page + 14, upper);
}

/*
 * Page pg's visible items into its vis slots, all visible or a list of
 * keep_pct of its items (shuffled at random), with out_pct of the numbers
 * replaced by ones past the items; the visits noted.  A bad pd_lower makes
 * every listed item undecodable and an all-visible page empty.
 */
void scan_page_vis(ScanSet &s, uint32_t pg, bool listed, int keep_pct, int out_pct, bool bad_lower,
				   std::mt19937_64 &rng)
{
	uint16_t   *v = &s.vis[(size_t) pg * GPUEXT_SCAN_VIS_SLOTS];
	const std::vector<ScanItem> &items = s.items[pg];
	const uint32_t n = (uint32_t) items.size();
	std::vector<uint16_t> list;

	if (!listed)
	{
		v[0] = GPUEXT_SCAN_ALL_VISIBLE;
		for (uint32_t k = 1; k <= n && !bad_lower; k++)
			s.visits.push_back({items[k - 1].state, pg, k});
		return;
	}
	for (uint32_t k = 1; k <= n; k++)
		if ((int) (rng() % 100) < keep_pct)
			list.push_back((uint16_t) k);
	for (uint16_t &k : list)
		if ((int) (rng() % 100) < out_pct)
			k = rng() % 3 == 0 ? 0 : rng() % 2 ? (uint16_t) (n + 1 + rng() % (GPUEXT_SCAN_MAX_TUPLES + 1 - n))
				: (uint16_t) (n + 1 + rng() % (0xFFFF - n));
	if (rng() % 2)
		std::shuffle(list.begin(), list.end(), rng);
	v[0] = (uint16_t) list.size();
	for (size_t j = 0; j < list.size(); j++)
	{
		const uint32_t k = list[j];

		v[j + 1] = list[j];
		s.visits.push_back({bad_lower || k < 1 || k > n ? SCAN_BAD_HEADER : items[k - 1].state, pg, k});
	}
}

/* An empty set of npages pages. */
ScanSet scan_set(const std::string &name, uint32_t npages)
{
	ScanSet		s;

	s.name = name;
	s.npages = npages;
	s.pages.assign((size_t) npages * GPUEXT_SCAN_PAGE_BYTES, 0);
	s.vis.assign((size_t) npages * GPUEXT_SCAN_VIS_SLOTS, 0);
	s.items.resize(npages);
	return s;
}

/* Page pg of set s built to shape. */
uint8_t *scan_set_page(ScanSet &s, uint32_t pg, const ScanPageShape &shape, std::mt19937_64 &rng)
{
	uint8_t    *page = reinterpret_cast<uint8_t *>(s.pages.data()) + (size_t) pg * GPUEXT_SCAN_PAGE_BYTES;

	scan_build_page(page, s.items[pg], shape, rng);
	return page;
}

/* One page of nitems items, all visible or most of them listed; every item a minimal tuple under minimal. */
ScanSet scan_single_set(int nitems, bool listed, bool minimal, std::mt19937_64 &rng)
{
	ScanSet		s = scan_set("1 page, " + std::to_string(nitems) + (minimal ? " minimal" : "") + " items, " +
							 (listed ? "listed" : "all visible"), 1);

	scan_set_page(s, 0, {nitems, 80, 20, 15, 0, minimal}, rng);
	scan_page_vis(s, 0, listed, minimal ? 100 : 75, 0, false, rng);
	return s;
}

/* A batch: item counts at random (up to the maximum), half the pages listed. */
ScanSet scan_batch_set(uint32_t npages, std::mt19937_64 &rng)
{
	const int	counts[] = {0, 1, 5, 20, 31, 32, 33, 60, 100, 127, 128, 129, 200, GPUEXT_SCAN_MAX_TUPLES};
	ScanSet		s = scan_set(std::to_string(npages) + " pages", npages);

	s.small_cap = 100;

	for (uint32_t pg = 0; pg < npages; pg++)
	{
		const int	nitems = counts[rng() % (sizeof(counts) / sizeof(counts[0]))];

		scan_set_page(s, pg, {nitems, 70 + (int) (rng() % 31), (int) (rng() % 50), 20, 0, rng() % 10 == 0}, rng);
		scan_page_vis(s, pg, rng() % 2, 80, 0, false, rng);
	}
	return s;
}

/* Pages with corrupt items, some with a bad pd_lower, lists with numbers past the items, one too long. */
ScanSet scan_corrupt_set(uint32_t npages, std::mt19937_64 &rng)
{
	ScanSet		s = scan_set(std::to_string(npages) + " pages with corrupt items", npages);

	for (uint32_t pg = 0; pg < npages; pg++)
	{
		uint8_t    *page = scan_set_page(s, pg, {1 + (int) (rng() % 40), 85, 20, 10, 30, false}, rng);
		const bool	bad_lower = rng() % 10 == 0;

		if (bad_lower)
			scan_put16(page + 12, rng() % 2 ? GPUEXT_SCAN_PAGE_BYTES + 4 + (unsigned) (rng() % 100)
					   : (unsigned) (rng() % 24));
		if (pg == 1)
			s.vis[(size_t) pg * GPUEXT_SCAN_VIS_SLOTS] = GPUEXT_SCAN_MAX_TUPLES + 1;
		else
			scan_page_vis(s, pg, rng() % 2, 80, 10, bad_lower, rng);
	}
	return s;
}

/* Sound pages with bytes flipped at random afterwards (half of them in the header and line pointers). */
ScanSet scan_mutated_set(uint32_t npages, std::mt19937_64 &rng)
{
	ScanSet		s = scan_set(std::to_string(npages) + " pages with bytes flipped", npages);

	s.known = false;
	for (uint32_t pg = 0; pg < npages; pg++)
	{
		const int	nitems = 1 + (int) (rng() % 150);
		uint8_t    *page = scan_set_page(s, pg, {nitems, 85, 20, 10, 0, false}, rng);
		const int	flips = 1 + (int) (rng() % 40);

		scan_page_vis(s, pg, rng() % 2, 80, 5, false, rng);
		for (int f = 0; f < flips; f++)
		{
			size_t		at = f % 2 ? rng() % (24 + 4 * nitems + 8) : rng() % GPUEXT_SCAN_PAGE_BYTES;

			page[at] ^= (uint8_t) (1 + rng() % 255);
		}
	}
	s.visits.clear();
	return s;
}

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
 * FILTER, behind a WHERE clause; and real arithmetic over the real column
 * and a cast to real, outputs of reals.
 */
GpuextScanProgram scan_program_arith()
{
	GpuextScanProgram p = scan_program(SCAN_NATTS);
	const int	text = scan_col(p, 0, GPUEXT_SCAN_NULLNESS, true, 0);
	const int	i2 = scan_col(p, 1, GPUEXT_SCAN_INT, true, 0);
	const int	i4 = scan_col(p, 3, GPUEXT_SCAN_INT, false, 5);
	const int	f4 = scan_col(p, 5, GPUEXT_SCAN_FLOAT4, true, 0);
	const int	f8 = scan_col(p, 6, GPUEXT_SCAN_FLOAT8, false, scan_float_bits(1.5, false));
	int			f;
	int			ne;
	int			isnull;

	scan_icmp(p, i4, 4, -2, 5);
	p.nquals = p.ncmps;
	p.nregs = 13;
	p.consts[3] = 2.0;
	p.consts[4] = 1e300;
	p.loads[p.nloads++] = {(uint8_t) f8, 0};
	p.loads[p.nloads++] = {(uint8_t) f4, 1};
	p.loads[p.nloads++] = {(uint8_t) i2, 2};
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
	for (int r : {8, 10, 11, 6, 12, 14, 16, 18, 19})
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
