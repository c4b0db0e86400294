/*
 * harness_scan_gather.cuh
 *		The device scan's page gathering (gpuext_scan_gather_pages): a
 *		batch's pages put together on the device from pinned copies and from
 *		a read-only registered pool standing in for shared buffers.  The
 *		pool's pages have moved on since their copies were taken, as a page
 *		pinned in shared buffers may: rows added (line pointers past the
 *		copy's pd_lower, tuples in the free space), hint bits set, the header
 *		rewritten.  The gathered bytes must be the copy's below its pd_lower
 *		and the pool's above; the scan of the gathered pages must equal the
 *		CPU's scan of the copies as taken.  A page taken whole
 *		(GPUEXT_SCAN_WHOLE) is the pool's, header and all.  Included by kernel_harness.cu
 *		after harness_scan_heap_check.cuh.
 */

/* The page's later life in the pool: rows added in its free space, hint bits, a new header below pd_lower. */
void scan_gather_age_page(uint8_t *page, std::mt19937_64 &rng)
{
	unsigned	lower = page[12] | (page[13] << 8);
	unsigned	upper = page[14] | (page[15] << 8);
	const int	added = (int) (rng() % 6);

	for (unsigned off = 24; off + 4 <= lower; off += 4)
	{
		uint32_t	lp;

		memcpy(&lp, page + off, 4);
		/* a normal item's t_infomask (byte 20 of the tuple): hint bits only */
		if (((lp >> 15) & 3) == 1 && (lp & 0x7FFF) + 22 <= GPUEXT_SCAN_PAGE_BYTES && rng() % 2)
			page[(lp & 0x7FFF) + 21] |= 0x09;	/* XMIN_COMMITTED | XMAX_INVALID, high byte */
	}
	for (int i = 0; i < added && lower + 4 + 64 <= upper; i++)
	{
		upper -= 64;
		for (unsigned b = 0; b < 64; b++)
			page[upper + b] = (uint8_t) rng();
		page[upper + 22] = 24;	/* t_hoff */
		scan_put32(page + lower, upper | (1u << 15) | (64u << 17));
		lower += 4;
	}
	scan_put16(page + 12, lower);
	scan_put16(page + 14, upper);
	for (int i = 0; i < 12; i++)
		page[i] = (uint8_t) rng();	/* pd_lsn, pd_checksum, pd_flags */
}

/* What the gathering must make of page i: its copy below the copy's pd_lower, else (or taken whole) the pool's bytes. */
void scan_gather_expect(uint8_t *out, const uint8_t *copy, const uint8_t *pool, uint32_t pool_blocks, uint32_t ref)
{
	unsigned	lower;

	if (ref == GPUEXT_SCAN_COPIED)
	{
		memcpy(out, copy, GPUEXT_SCAN_PAGE_BYTES);
		return;
	}
	if ((ref & ~GPUEXT_SCAN_WHOLE) >= pool_blocks)
	{
		memset(out, 0, GPUEXT_SCAN_PAGE_BYTES);
		return;
	}
	if (ref & GPUEXT_SCAN_WHOLE)
	{
		memcpy(out, pool + (size_t) (ref & ~GPUEXT_SCAN_WHOLE) * GPUEXT_SCAN_PAGE_BYTES, GPUEXT_SCAN_PAGE_BYTES);
		return;
	}
	lower = copy[12] | (copy[13] << 8);
	lower = lower < 24 ? 24 : lower > GPUEXT_SCAN_PAGE_BYTES ? GPUEXT_SCAN_PAGE_BYTES : lower;
	memcpy(out, copy, lower);
	memcpy(out + lower, pool + (size_t) ref * GPUEXT_SCAN_PAGE_BYTES + lower, GPUEXT_SCAN_PAGE_BYTES - lower);
}

/*
 * Gather set s's pages: a quarter copied whole, the rest from a pool of
 * twice as many pages in shuffled places: a third of them taken whole (the
 * copy all garbage), the others aged, with only their header and line
 * pointers in the copies (the rest of each copy garbage).  With
 * odd_refs, some copies' pd_lower out of range and some buffer indexes past
 * the pool.  Checks the bytes; returns the gathered pages (device memory)
 * for the caller to scan, or nullptr.
 */
void *scan_gather_check(const ScanSet &s, bool odd_refs, std::mt19937_64 &rng)
{
	const size_t page_bytes = GPUEXT_SCAN_PAGE_BYTES;
	const uint32_t pool_blocks = 2 * s.npages + 1;
	std::vector<uint32_t> places(pool_blocks);
	std::vector<uint8_t> want((size_t) s.npages * page_bytes);
	uint8_t    *pool = static_cast<uint8_t *>(aligned_alloc(4096, (size_t) pool_blocks * page_bytes));
	void	   *copies = nullptr,
			   *refs = nullptr,
			   *d_pages = nullptr;
	const char *view = nullptr;
	std::string where;

	for (uint32_t b = 0; b < pool_blocks; b++)
		places[b] = b;
	std::shuffle(places.begin(), places.end(), rng);
	for (size_t b = 0; b < (size_t) pool_blocks * page_bytes; b++)
		pool[b] = (uint8_t) rng();
	must(gpuext_cuda_alloc_pinned(&copies, (size_t) s.npages * page_bytes), "copies allocation");
	must(gpuext_cuda_alloc_pinned(&refs, sizeof(uint32_t) * s.npages), "buffer index allocation");
	must(gpuext_cuda_alloc(&d_pages, (size_t) s.npages * page_bytes), "page allocation");
	for (uint32_t i = 0; i < s.npages; i++)
	{
		const uint8_t *page = reinterpret_cast<const uint8_t *>(s.pages.data()) + (size_t) i * page_bytes;
		uint8_t    *copy = static_cast<uint8_t *>(copies) + (size_t) i * page_bytes;
		uint32_t   *ref = static_cast<uint32_t *>(refs) + i;
		unsigned	lower = page[12] | (page[13] << 8);

		if (rng() % 4 == 0)
		{
			*ref = GPUEXT_SCAN_COPIED;
			memcpy(copy, page, page_bytes);
		}
		else if (rng() % 3 == 0)
		{
			/* taken whole: the pool's page as it is, the copy never written */
			*ref = places[i] | GPUEXT_SCAN_WHOLE;
			memcpy(pool + (size_t) places[i] * page_bytes, page, page_bytes);
			for (size_t b = 0; b < page_bytes; b++)
				copy[b] = (uint8_t) rng();
			if (odd_refs && rng() % 5 == 0)
				*ref = (pool_blocks + (uint32_t) (rng() % 1000)) | GPUEXT_SCAN_WHOLE;
		}
		else
		{
			uint8_t    *live = pool + (size_t) places[i] * page_bytes;

			*ref = places[i];
			memcpy(live, page, page_bytes);
			scan_gather_age_page(live, rng);
			for (size_t b = 0; b < page_bytes; b++)
				copy[b] = (uint8_t) rng();
			memcpy(copy, page, lower < 24 ? 24 : lower > page_bytes ? page_bytes : lower);
			if (odd_refs && rng() % 3 == 0)
				scan_put16(copy + 12, rng() % 2 ? (unsigned) (rng() % 24) : page_bytes + (unsigned) (rng() % 100));
			if (odd_refs && rng() % 5 == 0)
				*ref = pool_blocks + (uint32_t) (rng() % 1000);
		}
		scan_gather_expect(&want[(size_t) i * page_bytes], copy, pool, pool_blocks, *ref);
	}
	must(gpuext_cuda_host_register_read_only(pool, (size_t) pool_blocks * page_bytes, &view),
		 "registration of the pool");
	poison_device(d_pages, (size_t) s.npages * page_bytes);
	must(gpuext_scan_gather_pages(static_cast<char *>(d_pages), static_cast<const char *>(copies),
								  static_cast<const uint32_t *>(refs), view, pool_blocks, s.npages),
		 "gathering of pages");
	ensure_pinned((size_t) s.npages * page_bytes);
	must(gpuext_cuda_copy_to_host(pinned_out, d_pages, (size_t) s.npages * page_bytes), "page download");
	must(gpuext_cuda_wait(-1, nullptr, nullptr), "page download");
	for (size_t b = 0; b < want.size() && where.empty(); b++)
		if (static_cast<uint8_t *>(pinned_out)[b] != want[b])
			where = "page " + std::to_string(b / page_bytes) + " byte " + std::to_string(b % page_bytes);
	report(where.empty(), "scan gather: " + s.name + (odd_refs ? ", odd headers and indexes" : "") +
		   ": copies below pd_lower, the pool above", where);
	gpuext_cuda_free_pinned(copies);
	gpuext_cuda_free_pinned(refs);
	/* the pool stays registered: the process ends soon, and the device may not be done with it before */
	if (odd_refs)
	{
		gpuext_cuda_free(d_pages);
		return nullptr;
	}
	return d_pages;
}

/* The gathering of each set, its bytes, then the scan of what was gathered against the CPU's of the copies. */
void run_scan_gather_checks(bool quick)
{
	const GpuextScanProgram program = scan_program_all(false);
	ScanSet		s;

	for (int k = 1; scan_make_set(k, quick, s); k++)
	{
		std::mt19937_64 rng(SCAN_SEED ^ (0x5CA7ull * (uint64_t) k));
		void	   *d_pages = scan_gather_check(s, false, rng);
		void	   *d_vis = nullptr,
				   *d_ignored = nullptr;

		if (!s.known)
		{
			gpuext_cuda_free(d_pages);
			continue;
		}
		scan_upload_set(s, &d_ignored, &d_vis);
		gpuext_cuda_free(d_ignored);
		check_scan(s, "gathered pages", program, d_pages, d_vis, (uint64_t) s.npages * GPUEXT_SCAN_MAX_TUPLES);
		gpuext_cuda_free(d_pages);
		gpuext_cuda_free(d_vis);
		if (k == 1)
			scan_gather_check(s, true, rng);
	}
}
