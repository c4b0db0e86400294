/*
 * harness_scan_heap_tuples.cuh
 *		kernel_harness's test table for the device scan (gpuext_scan_heap) and
 *		its tuples, built here as PostgreSQL stores them: tuple headers, null
 *		bitmaps, aligned columns, short and long varlenas, TOAST pointers,
 *		tuples with fewer columns; the builder's record of each (its columns'
 *		values as the decoder reads them, or where it is undecodable), and the
 *		ways to make an item undecodable.  Included by kernel_harness.cu inside
 *		its namespace (its helpers).
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
