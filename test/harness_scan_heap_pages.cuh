/*
 * harness_scan_heap_pages.cuh
 *		The device scan's heap pages, of harness_scan_heap_tuples.cuh's tuples:
 *		page header and line pointers, the visible items (all visible or
 *		listed) and the builder's record of what the scan visits; and the sets
 *		of pages: one page of any number of items, a batch, pages with corrupt
 *		items, page headers and item lists, pages with bytes flipped at random.
 *		Included after harness_scan_heap_tuples.cuh.
 */

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
