/*
 * harness_scan_groups.cuh
 *		The device scan's GROUP BY (cuda/scan_heap_groups.h) against the same
 *		program on the CPU, on the pages of harness_scan_heap_pages.cuh: the keys
 *		pass's new key images, then with each image numbered by its rank the
 *		values pass's counters, each output's (group, value) pairs and the
 *		per-group counts.  Slots differ between the two (the device inserts in
 *		no fixed order); what they hold and what the values pass makes of it
 *		must not.  And the keys pass numbering the groups itself, over two
 *		batches: the same groups, (image, value) pairs and counts added up.
 *		Included by kernel_harness.cu after harness_scan_heap_check.cuh.
 */

/* A key image as a value that sorts and compares whole. */
typedef std::array<uint64_t, GPUEXT_SCAN_KEY_WORDS> ScanKeyImage;

/* A new group's key image. */
ScanKeyImage scan_key_image(const GpuextScanNewGroup &n)
{
	ScanKeyImage image;

	std::copy(n.image, n.image + GPUEXT_SCAN_KEY_WORDS, image.begin());
	return image;
}

/* What one side made of a set under a program: both passes' results, in an order that does not depend on slots. */
struct ScanGroupsRun
{
	std::string error;
	uint64_t	keys_counts[GPUEXT_SCAN_COUNTERS] = {0};
	uint64_t	values_counts[GPUEXT_SCAN_COUNTERS] = {0};
	std::vector<ScanKeyImage> images;	/* the new key images, sorted */
	std::vector<std::vector<std::pair<uint32_t, uint64_t>>> pairs;	/* per output: (group, value), sorted */
	std::vector<uint64_t> group_counts;	/* counter c of group g at c * ngroups + g */
};

/* Lay out a GROUP BY program's outputs, then its groups' arrays for a table of cap slots: the bytes they take. */
size_t scan_groups_layout(GpuextScanProgram &p, uint64_t out_cap, uint32_t cap)
{
	size_t		off = scan_layout(p, out_cap);

	p.table_cap = cap;
	for (int o = 0; o < p.nouts; o++)
		if (p.outs[o].value_bytes > 0)
		{
			p.outs[o].groups_offset = off;
			off += scan_maxalign(out_cap * sizeof(uint32_t));
		}
	p.table_offset = off;
	off += (size_t) cap * (sizeof(uint32_t) + GPUEXT_SCAN_KEY_BYTES);
	p.new_offset = off;
	off += (size_t) cap * sizeof(GpuextScanNewGroup);
	p.map_offset = off;
	off += scan_maxalign((size_t) cap * sizeof(uint32_t));
	p.counts_offset = off;
	off += (size_t) cap * p.ncounters * sizeof(uint64_t);
	return off;
}

/*
 * Number the new images by rank: the map of slots to groups (others
 * unmapped; under partial, the images of odd rank too, whose rows the values
 * pass then counts as misses), and the sorted images.
 */
void scan_groups_number(const GpuextScanNewGroup *news, uint64_t n, uint32_t cap, bool partial,
						std::vector<uint32_t> &map, std::vector<ScanKeyImage> &images)
{
	images.clear();
	for (uint64_t i = 0; i < n; i++)
		images.push_back(scan_key_image(news[i]));
	std::sort(images.begin(), images.end());
	map.assign(cap, GPUEXT_SCAN_NO_GROUP);
	for (uint64_t i = 0; i < n; i++)
	{
		uint32_t	rank = (uint32_t) (std::lower_bound(images.begin(), images.end(), scan_key_image(news[i])) -
									   images.begin());

		map[news[i].slot] = partial && rank % 2 == 1 ? GPUEXT_SCAN_NO_GROUP : rank;
	}
}

/* The values pass's results read from a side's outputs. */
void scan_groups_collect(const GpuextScanProgram &p, const char *outs, ScanGroupsRun &r)
{
	const uint64_t ngroups = r.images.size();

	r.pairs.assign(p.nouts, {});
	for (int o = 0; o < p.nouts; o++)
	{
		const uint64_t n = std::min(r.values_counts[GPUEXT_SCAN_OUT_COUNT + o], p.out_cap);

		if (p.outs[o].value_bytes == 0)
			continue;
		for (uint64_t i = 0; i < n; i++)
		{
			uint64_t	v = 0;
			uint32_t	g;

			memcpy(&v, outs + p.outs[o].offset + i * p.outs[o].value_bytes, p.outs[o].value_bytes);
			memcpy(&g, outs + p.outs[o].groups_offset + i * sizeof(uint32_t), sizeof(g));
			r.pairs[o].emplace_back(g, v);
		}
		std::sort(r.pairs[o].begin(), r.pairs[o].end());
	}
	r.group_counts.assign(ngroups * p.ncounters, 0);
	for (int c = 0; c < p.ncounters; c++)
		memcpy(r.group_counts.data() + c * ngroups, outs + p.counts_offset + sizeof(uint64_t) * c * p.table_cap,
			   sizeof(uint64_t) * ngroups);
}

/* Both passes on the CPU (the fake device's code). */
ScanGroupsRun scan_groups_host(const ScanSet &s, GpuextScanProgram p, size_t bytes, bool partial)
{
	ScanGroupsRun r;
	std::vector<char> outs(bytes, (char) POISON);
	std::vector<uint32_t> map;

	p.pass = GPUEXT_SCAN_PASS_KEYS;
	p.clear_table = 1;
	gpuext_scan_groups_clear_host(&p, outs.data());
	gpuext_scan_heap_host(&p, s.pages.data(), s.vis.data(), s.npages, r.keys_counts, outs.data());
	scan_groups_number(reinterpret_cast<const GpuextScanNewGroup *>(outs.data() + p.new_offset),
					   std::min<uint64_t>(r.keys_counts[GPUEXT_SCAN_NEW_GROUPS], p.table_cap), p.table_cap, partial,
					   map, r.images);
	memcpy(outs.data() + p.map_offset, map.data(), sizeof(uint32_t) * p.table_cap);
	p.pass = GPUEXT_SCAN_PASS_VALUES;
	gpuext_scan_groups_clear_host(&p, outs.data());
	gpuext_scan_heap_host(&p, s.pages.data(), s.vis.data(), s.npages, r.values_counts, outs.data());
	scan_groups_collect(p, outs.data(), r);
	return r;
}

/* Both passes on the device, the outputs poisoned first and the map made between them as the backend makes it. */
ScanGroupsRun scan_groups_device(const ScanSet &s, GpuextScanProgram p, size_t bytes, bool partial,
								 const void *d_pages, const void *d_vis)
{
	ScanGroupsRun r;
	const size_t counts_bytes = GPUEXT_SCAN_COUNTERS * sizeof(uint64_t);
	std::vector<char> outs(bytes);
	std::vector<uint32_t> map;
	void	   *d_counts = nullptr,
			   *d_outs = nullptr;
	GpuextStatus st;

	ensure_pinned(std::max(bytes, counts_bytes));
	must(gpuext_cuda_alloc(&d_counts, counts_bytes), "counter allocation");
	must(gpuext_cuda_alloc(&d_outs, bytes), "output allocation");
	poison_device(d_outs, bytes);
	p.pass = GPUEXT_SCAN_PASS_KEYS;
	p.clear_table = 1;
	st = gpuext_scan_heap(&p, static_cast<const char *>(d_pages), static_cast<const uint16_t *>(d_vis), s.npages,
						  static_cast<uint64_t *>(d_counts), static_cast<char *>(d_outs), bytes);
	if (st == GPUEXT_OK)
		st = gpuext_cuda_wait(-1, nullptr, nullptr);
	if (st == GPUEXT_OK)
	{
		must(gpuext_cuda_copy_to_host(pinned_out, d_counts, counts_bytes), "counter download");
		must(gpuext_cuda_copy_to_host(static_cast<char *>(pinned_out) + counts_bytes,
									  static_cast<char *>(d_outs) + p.new_offset,
									  sizeof(GpuextScanNewGroup) * p.table_cap), "new images download");
		must(gpuext_cuda_wait(-1, nullptr, nullptr), "download");
		memcpy(r.keys_counts, pinned_out, counts_bytes);
		scan_groups_number(reinterpret_cast<const GpuextScanNewGroup *>(static_cast<char *>(pinned_out) + counts_bytes),
						   std::min<uint64_t>(r.keys_counts[GPUEXT_SCAN_NEW_GROUPS], p.table_cap), p.table_cap,
						   partial, map, r.images);
		memcpy(pinned_in, map.data(), sizeof(uint32_t) * p.table_cap);
		must(gpuext_cuda_copy_to_device(static_cast<char *>(d_outs) + p.map_offset, pinned_in,
										sizeof(uint32_t) * p.table_cap), "map upload");
		p.pass = GPUEXT_SCAN_PASS_VALUES;
		p.clear_table = 0;
		st = gpuext_scan_heap(&p, static_cast<const char *>(d_pages), static_cast<const uint16_t *>(d_vis), s.npages,
							  static_cast<uint64_t *>(d_counts), static_cast<char *>(d_outs), bytes);
		if (st == GPUEXT_OK)
			st = gpuext_cuda_wait(-1, nullptr, nullptr);
	}
	if (st != GPUEXT_OK)
		r.error = "status " + std::to_string((int) st) + ": " + gpuext_cuda_error_message();
	else
	{
		must(gpuext_cuda_copy_to_host(pinned_out, d_counts, counts_bytes), "counter download");
		must(gpuext_cuda_wait(-1, nullptr, nullptr), "counter download");
		memcpy(r.values_counts, pinned_out, counts_bytes);
		must(gpuext_cuda_copy_to_host(pinned_out, d_outs, bytes), "output download");
		must(gpuext_cuda_wait(-1, nullptr, nullptr), "output download");
		memcpy(outs.data(), pinned_out, bytes);
		scan_groups_collect(p, outs.data(), r);
	}
	gpuext_cuda_free(d_counts);
	gpuext_cuda_free(d_outs);
	return r;
}

/*
 * A GROUP BY program over the test table: keys at the attributes given
 * (each a bytes column, widths as the backend gives them: a fixed column
 * its length, text what is left), WHERE i4 % 3 <> 0 where filtered, and
 * outputs of int4, double precision, a count(*) FILTER and a text column's
 * non-NULL values.
 */
GpuextScanProgram scan_groups_program(std::initializer_list<int> key_atts, bool filtered)
{
	GpuextScanProgram p = scan_program(SCAN_NATTS);
	int			col_of[SCAN_NATTS];
	int			at = 0;
	int			fixed = 0;
	int			nvar = 0;
	std::vector<int> keys(key_atts);

	for (int a = 0; a < SCAN_NATTS; a++)
	{
		bool		key = std::find(keys.begin(), keys.end(), a) != keys.end();

		col_of[a] = -1;
		if (key || a == 0 || a == 3 || a == 6)
			col_of[a] = scan_col(p, a, key ? GPUEXT_SCAN_BYTES : a == 0 ? GPUEXT_SCAN_NULLNESS :
								 a == 3 ? GPUEXT_SCAN_INT : GPUEXT_SCAN_FLOAT8, true, 0);
	}
	for (int a : keys)
	{
		fixed += 1 + (SCAN_ATT_LEN[a] > 0 ? SCAN_ATT_LEN[a] : 0);
		nvar += SCAN_ATT_LEN[a] < 0;
	}
	for (int a : keys)
	{
		GpuextScanKey &k = p.keys[p.nkeys++];

		k.col = (uint8_t) col_of[a];
		k.at = (uint8_t) at;
		k.width = (uint8_t) (SCAN_ATT_LEN[a] > 0 ? SCAN_ATT_LEN[a] : (GPUEXT_SCAN_KEY_BYTES - fixed) / nvar);
		at += 1 + k.width;
	}
	if (filtered)
		scan_icmp(p, col_of[3], GPUEXT_SCAN_NOT_EQUAL, 0, 3);
	p.nquals = p.ncmps;
	scan_out(p, col_of[3], 4, 0, 0);
	scan_out(p, col_of[6], 8, 0, 0);
	scan_out(p, -1, 0, scan_icmp(p, col_of[3], 4, 0, 0), 1);
	scan_out(p, col_of[0], 0, 0, 0);
	p.ncounters = 1;
	for (int o = 0; o < p.nouts; o++)
		if (p.outs[o].value_bytes == 0)
			p.outs[o].counter = p.ncounters++;
	return p;
}

/* int4 % 97 (a column read as an integer, negative values among them) and bool keys, unfiltered. */
GpuextScanProgram scan_groups_program_modulus()
{
	GpuextScanProgram p = scan_groups_program({2}, false);
	const int	i4b = scan_col(p, 8, GPUEXT_SCAN_INT, true, 0);
	GpuextScanKey &k = p.keys[p.nkeys++];

	/* att 8 is past every column read so far: cols stay in ascending order */
	k.col = (uint8_t) i4b;
	k.at = (uint8_t) (p.keys[0].at + 1 + p.keys[0].width);
	k.width = 4;
	k.modulus = 97;
	return p;
}

/* One set under one program on both sides: the same images, counters, pairs and counts, or a full table on both. */
void check_scan_groups(const ScanSet &s, const char *name, GpuextScanProgram p, uint32_t cap, bool partial,
					   const void *d_pages, const void *d_vis)
{
	/* 0: room for every row's own group */
	while (cap == 0 || cap < 2 * std::max<uint64_t>(s.npages, 1) * GPUEXT_SCAN_MAX_TUPLES)
		cap = cap == 0 ? 1024 : cap * 2;
	const size_t bytes = scan_groups_layout(p, (uint64_t) std::max<uint32_t>(s.npages, 1) * GPUEXT_SCAN_MAX_TUPLES,
											cap);
	std::string what = "scan groups " + s.name + ": " + name + ", " + std::to_string(cap) + " slots" +
		(partial ? ", half the groups unnumbered" : "");
	ScanGroupsRun h = scan_groups_host(s, p, bytes, partial);
	ScanGroupsRun d = scan_groups_device(s, p, bytes, partial, d_pages, d_vis);
	std::string detail = d.error;
	const bool	full = h.keys_counts[GPUEXT_SCAN_NEW_GROUPS] >= cap;

	if (detail.empty() && full)
	{
		/* which images got in depends on the order of insertion: both must fill the table and say so */
		if (d.keys_counts[GPUEXT_SCAN_NEW_GROUPS] != cap || d.keys_counts[GPUEXT_SCAN_BAD] == 0 ||
			h.keys_counts[GPUEXT_SCAN_BAD] == 0)
			detail = "a full table is not reported on both sides";
	}
	else if (detail.empty())
	{
		for (int i = 0; i < GPUEXT_SCAN_COUNTERS && detail.empty(); i++)
			if (d.keys_counts[i] != h.keys_counts[i] || d.values_counts[i] != h.values_counts[i])
				detail = "counter " + std::to_string(i) + " differs from the CPU's";
		if (detail.empty() && d.images != h.images)
			detail = "the new key images differ from the CPU's";
		for (int o = 0; o < p.nouts && detail.empty(); o++)
			if (d.pairs[o] != h.pairs[o])
				detail = "output " + std::to_string(o) + ": the (group, value) pairs differ from the CPU's";
		if (detail.empty() && d.group_counts != h.group_counts)
			detail = "the per-group counts differ from the CPU's";
		if (detail.empty() && h.values_counts[GPUEXT_SCAN_PASSED] > 0 && h.images.empty())
			detail = "rows passed without a group";
		if (detail.empty() && (h.values_counts[GPUEXT_SCAN_MISSES] > 0) != (partial && h.images.size() > 1))
			detail = "misses where every group is numbered, or none where half are not";
	}
	report(detail.empty(), what, detail);
}

/*
 * The keys pass numbering the groups (number_groups) over two batches, the
 * set's pages split in two: a keys pass, then a values pass, for each.
 */
struct ScanNumberedRun
{
	std::string error;
	uint64_t	counts[2][2][GPUEXT_SCAN_COUNTERS] = {};	/* per batch: the keys pass's, the values pass's */
	uint64_t	n1 = 0;			/* groups after the first batch */
	uint64_t	n = 0;
	std::vector<ScanKeyImage> first;	/* the first batch's groups' images, sorted */
	std::vector<ScanKeyImage> images;	/* every group's */
	std::vector<std::vector<std::pair<uint32_t, uint64_t>>> raw;	/* per output: (group, value) */
	std::vector<std::vector<std::pair<ScanKeyImage, uint64_t>>> pairs;	/* ... by image, sorted */
	std::vector<std::pair<ScanKeyImage, std::vector<uint64_t>>> group_counts;	/* by image, sorted */
};

/* A values pass's (group, value) pairs added to the run's. */
void scan_numbered_pairs(const GpuextScanProgram &p, const char *outs, const uint64_t *values_counts,
						 ScanNumberedRun &r)
{
	r.raw.resize(p.nouts);
	for (int o = 0; o < p.nouts; o++)
	{
		const uint64_t n = std::min(values_counts[GPUEXT_SCAN_OUT_COUNT + o], p.out_cap);

		for (uint64_t i = 0; i < n && p.outs[o].value_bytes > 0; i++)
		{
			uint64_t	v = 0;
			uint32_t	g;

			memcpy(&v, outs + p.outs[o].offset + i * p.outs[o].value_bytes, p.outs[o].value_bytes);
			memcpy(&g, outs + p.outs[o].groups_offset + i * sizeof(uint32_t), sizeof(g));
			r.raw[o].emplace_back(g, v);
		}
	}
}

/*
 * After both batches: each group 0 .. n - 1 listed with its own image and
 * its slot mapped to it, no image twice; the pairs and the counts by image.
 */
void scan_numbered_collect(const GpuextScanProgram &p, const char *outs, ScanNumberedRun &r)
{
	const GpuextScanNewGroup *list = reinterpret_cast<const GpuextScanNewGroup *>(outs + p.new_offset);
	const uint32_t *map = reinterpret_cast<const uint32_t *>(outs + p.map_offset);
	const uint64_t *counts = reinterpret_cast<const uint64_t *>(outs + p.counts_offset);

	r.images.clear();
	for (uint64_t g = 0; g < r.n && r.error.empty(); g++)
	{
		if (list[g].slot >= p.table_cap || map[list[g].slot] != g)
			r.error = "group " + std::to_string(g) + "'s slot is not mapped to it";
		r.images.push_back(scan_key_image(list[g]));
	}
	if (!r.error.empty())
		return;
	r.first.assign(r.images.begin(), r.images.begin() + r.n1);
	std::sort(r.first.begin(), r.first.end());
	r.pairs.assign(r.raw.size(), {});
	for (size_t o = 0; o < r.raw.size() && r.error.empty(); o++)
	{
		for (const auto &gv : r.raw[o])
		{
			if (gv.first >= r.n)
			{
				r.error = "a value of a group not numbered";
				break;
			}
			r.pairs[o].emplace_back(r.images[gv.first], gv.second);
		}
		std::sort(r.pairs[o].begin(), r.pairs[o].end());
	}
	r.group_counts.clear();
	for (uint64_t g = 0; g < r.n; g++)
	{
		std::vector<uint64_t> c;

		for (int k = 0; k < p.ncounters; k++)
			c.push_back(counts[(size_t) k * p.table_cap + g]);
		r.group_counts.emplace_back(r.images[g], c);
	}
	std::sort(r.group_counts.begin(), r.group_counts.end());
	std::vector<ScanKeyImage> sorted = r.images;
	std::sort(sorted.begin(), sorted.end());
	if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
		r.error = "an image numbered twice";
}

/* Both batches on the CPU (the fake device's code). */
ScanNumberedRun scan_numbered_host(const ScanSet &s, GpuextScanProgram p, size_t bytes)
{
	ScanNumberedRun r;
	std::vector<char> outs(bytes, (char) POISON);
	const uint32_t half = s.npages / 2;

	p.number_groups = 1;
	for (int b = 0; b < 2; b++)
	{
		const uint32_t from = b == 0 ? 0 : half;
		const uint32_t npages = b == 0 ? half : s.npages - half;
		const char *pages = s.pages.data() + (size_t) from * GPUEXT_SCAN_PAGE_BYTES;
		const uint16_t *vis = s.vis.data() + (size_t) from * GPUEXT_SCAN_VIS_SLOTS;

		p.pass = GPUEXT_SCAN_PASS_KEYS;
		p.clear_table = b == 0;
		p.group_base = (uint32_t) r.n;
		gpuext_scan_groups_clear_host(&p, outs.data());
		gpuext_scan_heap_host(&p, pages, vis, npages, r.counts[b][0], outs.data());
		r.n += r.counts[b][0][GPUEXT_SCAN_NEW_GROUPS];
		if (b == 0)
			r.n1 = r.n;
		p.pass = GPUEXT_SCAN_PASS_VALUES;
		p.clear_table = 0;
		gpuext_scan_groups_clear_host(&p, outs.data());
		gpuext_scan_heap_host(&p, pages, vis, npages, r.counts[b][1], outs.data());
		scan_numbered_pairs(p, outs.data(), r.counts[b][1], r);
	}
	scan_numbered_collect(p, outs.data(), r);
	return r;
}

/* Both batches on the device, its outputs poisoned first. */
ScanNumberedRun scan_numbered_device(const ScanSet &s, GpuextScanProgram p, size_t bytes, const void *d_pages,
									 const void *d_vis)
{
	ScanNumberedRun r;
	const size_t counts_bytes = GPUEXT_SCAN_COUNTERS * sizeof(uint64_t);
	const uint32_t half = s.npages / 2;
	std::vector<char> outs(bytes);
	void	   *d_counts = nullptr,
			   *d_outs = nullptr;
	GpuextStatus st = GPUEXT_OK;

	ensure_pinned(std::max(bytes, counts_bytes));
	must(gpuext_cuda_alloc(&d_counts, counts_bytes), "counter allocation");
	must(gpuext_cuda_alloc(&d_outs, bytes), "output allocation");
	poison_device(d_outs, bytes);
	p.number_groups = 1;
	for (int b = 0; b < 2 && st == GPUEXT_OK; b++)
	{
		const uint32_t from = b == 0 ? 0 : half;
		const uint32_t npages = b == 0 ? half : s.npages - half;
		const char *pages = static_cast<const char *>(d_pages) + (size_t) from * GPUEXT_SCAN_PAGE_BYTES;
		const uint16_t *vis = static_cast<const uint16_t *>(d_vis) + (size_t) from * GPUEXT_SCAN_VIS_SLOTS;

		for (int pass = 0; pass < 2 && st == GPUEXT_OK; pass++)
		{
			p.pass = pass == 0 ? GPUEXT_SCAN_PASS_KEYS : GPUEXT_SCAN_PASS_VALUES;
			p.clear_table = b == 0 && pass == 0;
			p.group_base = (uint32_t) r.n;
			st = gpuext_scan_heap(&p, pages, vis, npages, static_cast<uint64_t *>(d_counts),
								  static_cast<char *>(d_outs), bytes);
			if (st == GPUEXT_OK)
				st = gpuext_cuda_wait(-1, nullptr, nullptr);
			if (st != GPUEXT_OK)
				break;
			must(gpuext_cuda_copy_to_host(pinned_out, d_counts, counts_bytes), "counter download");
			must(gpuext_cuda_wait(-1, nullptr, nullptr), "counter download");
			memcpy(r.counts[b][pass], pinned_out, counts_bytes);
			if (pass == 0)
			{
				r.n += r.counts[b][0][GPUEXT_SCAN_NEW_GROUPS];
				if (b == 0)
					r.n1 = r.n;
				continue;
			}
			must(gpuext_cuda_copy_to_host(pinned_out, d_outs, bytes), "output download");
			must(gpuext_cuda_wait(-1, nullptr, nullptr), "output download");
			memcpy(outs.data(), pinned_out, bytes);
			scan_numbered_pairs(p, outs.data(), r.counts[b][1], r);
		}
	}
	if (st != GPUEXT_OK)
		r.error = "status " + std::to_string((int) st) + ": " + gpuext_cuda_error_message();
	else
		scan_numbered_collect(p, outs.data(), r);
	gpuext_cuda_free(d_counts);
	gpuext_cuda_free(d_outs);
	return r;
}

/* One set under one program, the groups numbered on each side: the same groups, counters, pairs and counts. */
void check_scan_numbered(const ScanSet &s, const char *name, GpuextScanProgram p, const void *d_pages,
						 const void *d_vis)
{
	uint32_t	cap = 1024;

	while (cap < 2 * std::max<uint64_t>(s.npages, 1) * GPUEXT_SCAN_MAX_TUPLES)
		cap *= 2;
	const size_t bytes = scan_groups_layout(p, (uint64_t) std::max<uint32_t>(s.npages, 1) * GPUEXT_SCAN_MAX_TUPLES,
											cap);
	std::string what = "scan groups " + s.name + ": " + name + ", numbered on the device over two batches";
	ScanNumberedRun h = scan_numbered_host(s, p, bytes);
	ScanNumberedRun d = scan_numbered_device(s, p, bytes, d_pages, d_vis);
	std::string detail = !h.error.empty() ? "CPU: " + h.error : !d.error.empty() ? "device: " + d.error : "";

	for (int b = 0; b < 2 && detail.empty(); b++)
		for (int pass = 0; pass < 2 && detail.empty(); pass++)
			for (int i = 0; i < GPUEXT_SCAN_COUNTERS && detail.empty(); i++)
				if (d.counts[b][pass][i] != h.counts[b][pass][i])
					detail = "batch " + std::to_string(b) + (pass == 0 ? ", keys pass" : ", values pass") +
						": counter " + std::to_string(i) + " differs from the CPU's";
	if (detail.empty() && (d.n1 != h.n1 || d.first != h.first))
		detail = "the first batch's groups differ from the CPU's";
	if (detail.empty() && d.n != h.n)
		detail = "the number of groups differs from the CPU's";
	for (size_t o = 0; o < h.pairs.size() && detail.empty(); o++)
		if (d.pairs[o] != h.pairs[o])
			detail = "output " + std::to_string(o) + ": the (image, value) pairs differ from the CPU's";
	if (detail.empty() && d.group_counts != h.group_counts)
		detail = "the per-group counts over both batches differ from the CPU's";
	if (detail.empty() && h.counts[1][1][GPUEXT_SCAN_MISSES] + h.counts[0][1][GPUEXT_SCAN_MISSES] > 0)
		detail = "misses after a keys pass";
	report(detail.empty(), what, detail);
}

/* Every set through each keys' program, with a table roomy enough (0: a slot a row, twice over) and one too small. */
void run_scan_group_checks(bool quick)
{
	const struct
	{
		const char *name;
		GpuextScanProgram p;
		uint32_t	cap;
	}			programs[] = {
		{"int2 and bool keys, filtered", scan_groups_program({1, 2}, true), 1024},
		{"bool key (every row on two slots)", scan_groups_program({2}, false), 1024},
		{"int8 key (a group a row)", scan_groups_program({4}, false), 0},
		{"int8 key, a table too small", scan_groups_program({4}, false), 64},
		{"text and int2 keys (long text left to the CPU)", scan_groups_program({7, 1}, true), 0},
		{"bool key and int4 % 97", scan_groups_program_modulus(), 1024}};
	ScanSet		s;

	for (int k = 0; scan_make_set(k, quick, s); k++)
	{
		void	   *d_pages = nullptr,
				   *d_vis = nullptr;

		scan_upload_set(s, &d_pages, &d_vis);
		for (const auto &pr : programs)
			check_scan_groups(s, pr.name, pr.p, pr.cap, false, d_pages, d_vis);
		check_scan_groups(s, programs[0].name, programs[0].p, programs[0].cap, true, d_pages, d_vis);
		for (const auto &pr : programs)
			if (pr.cap != 64)
				check_scan_numbered(s, pr.name, pr.p, d_pages, d_vis);
		gpuext_cuda_free(d_pages);
		gpuext_cuda_free(d_vis);
	}
}
