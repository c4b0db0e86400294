/*
 * scan_heap_groups.h
 *		The device scan's GROUP BY: a row's keys packed into one key image,
 *		the hash table of the images seen (open addressing, in the scan's
 *		outputs, kept across batches), and the per-group counts of a values
 *		pass.  Included by scan_heap.h after the decoder; shared by the
 *		kernel, the fake device and the harness.
 *
 * A GROUP BY scan has two passes.  The keys pass puts each passing row's
 * key image in the table and lists the images new to it; the caller gives
 * each new slot its group number (map_offset).  The values pass finds each
 * row's slot and writes its group number beside each value, and counts rows
 * per group; a row whose image has no group yet is counted as a miss and
 * left out, for the caller to run the keys pass and the values pass again
 * (so a batch whose keys are all known takes one pass).  Or the keys pass
 * numbers the groups itself (number_groups): a new image's group is the
 * next number, written into the map and at that place of the list, and the
 * per-group counts add up from pass to pass, for the caller to run the keys
 * pass before each values pass.  Images are
 * compared as bytes: rows with one image must have the same keys, while
 * rows with the same keys may have several images (0 and -0, a column
 * under a function), whose slots the caller maps to one group.
 */
#ifndef GPUEXT_SCAN_HEAP_GROUPS_H
#define GPUEXT_SCAN_HEAP_GROUPS_H

/* A slot's state: empty, being written (device only), or holding an image. */
#define GPUEXT_SCAN_SLOT_EMPTY 0
#define GPUEXT_SCAN_SLOT_BUSY 1
#define GPUEXT_SCAN_SLOT_FULL 2

/* No slot holds the image. */
#define GPUEXT_SCAN_NO_GROUP 0xFFFFFFFFu

/* A little-endian 64-bit word of 8 bytes. */
static inline GPUEXT_HD uint64_t
gpuext_scan_u64(const unsigned char *b)
{
	return (uint64_t) gpuext_scan_u32(b) | ((uint64_t) gpuext_scan_u32(b + 4) << 32);
}

/* The row's key image: each key's tag byte and bytes at its place, zeros elsewhere; 0 where a key is too long. */
static inline GPUEXT_HD int
gpuext_scan_key_image(const GpuextScanProgram *p, const unsigned char *page, const GpuextScanRow *row,
					  uint64_t image[GPUEXT_SCAN_KEY_WORDS])
{
	unsigned char b[GPUEXT_SCAN_KEY_BYTES];

	for (int i = 0; i < GPUEXT_SCAN_KEY_BYTES; i++)
		b[i] = 0;
	for (int k = 0; k < p->nkeys; k++)
	{
		const GpuextScanKey *key = &p->keys[k];
		uint64_t	v = (uint64_t) row->vals[key->col];
		uint32_t	off = (uint32_t) (v >> 32);
		uint32_t	len = (uint32_t) v;

		if (row->nulls & (1u << key->col))
			continue;
		if (key->trunc != GPUEXT_SCAN_TRUNC_NONE)
		{
			int64_t		rep;

			if (!gpuext_scan_key_unit(row->vals[key->col], key->trunc, key->micros, &rep))
				return 0;
			/* in 4 bytes, a timestamp's infinities as a date's */
			if (key->micros && key->width == 4)
				rep = rep == INT64_MIN ? INT32_MIN : rep == INT64_MAX ? INT32_MAX :
					rep / gpuext_scan_unit_scale(key->trunc, 1);
			b[key->at] = 1;
			for (int i = 0; i < key->width; i++)
				b[key->at + 1 + i] = (unsigned char) ((uint64_t) rep >> (8 * i));
			continue;
		}
		if (key->modulus > 0)
		{
			uint64_t	r = (uint64_t) (row->vals[key->col] % key->modulus);

			b[key->at] = 1;
			for (int i = 0; i < key->width; i++)
				b[key->at + 1 + i] = (unsigned char) (r >> (8 * i));
			continue;
		}
		if (len > key->width || off + len > GPUEXT_SCAN_PAGE_BYTES)
			return 0;
		b[key->at] = (unsigned char) (1 + len);
		for (uint32_t i = 0; i < len; i++)
			b[key->at + 1 + i] = page[off + i];
	}
	for (int w = 0; w < GPUEXT_SCAN_KEY_WORDS; w++)
		image[w] = gpuext_scan_u64(b + 8 * w);
	return 1;
}

/* An image's first slot to probe. */
static inline GPUEXT_HD uint32_t
gpuext_scan_key_hash(const uint64_t image[GPUEXT_SCAN_KEY_WORDS], uint32_t cap)
{
	uint64_t	h = UINT64_C(0x632BE59BD9B4E019);

	for (int w = 0; w < GPUEXT_SCAN_KEY_WORDS; w++)
	{
		h = (h ^ image[w]) * UINT64_C(0x9E3779B97F4A7C15);
		h ^= h >> 29;
	}
	h ^= h >> 31;
	h *= UINT64_C(0xD6E8FEB86659FD93);
	h ^= h >> 32;
	return (uint32_t) h & (cap - 1);
}

/* The table's states, its images (GPUEXT_SCAN_KEY_WORDS words a slot), the new images' list and the slots' group numbers. */
static inline GPUEXT_HD uint32_t *
gpuext_scan_slot_states(const GpuextScanProgram *p, char *outs)
{
	return (uint32_t *) (outs + p->table_offset);
}

static inline GPUEXT_HD uint64_t *
gpuext_scan_slot_images(const GpuextScanProgram *p, char *outs)
{
	return (uint64_t *) (outs + p->table_offset + (size_t) p->table_cap * sizeof(uint32_t));
}

static inline GPUEXT_HD GpuextScanNewGroup *
gpuext_scan_new_groups(const GpuextScanProgram *p, char *outs)
{
	return (GpuextScanNewGroup *) (outs + p->new_offset);
}

/* Group g's counts (counter c of it at [c * table_cap]). */
static inline GPUEXT_HD uint64_t *
gpuext_scan_group_counts(const GpuextScanProgram *p, char *outs, uint32_t g)
{
	return (uint64_t *) (outs + p->counts_offset) + g;
}

/* Whether slot s of the table holds image. */
static inline GPUEXT_HD int
gpuext_scan_slot_holds(const volatile uint64_t *images, uint32_t s, const uint64_t image[GPUEXT_SCAN_KEY_WORDS])
{
	for (int w = 0; w < GPUEXT_SCAN_KEY_WORDS; w++)
		if (images[(size_t) GPUEXT_SCAN_KEY_WORDS * s + w] != image[w])
			return 0;
	return 1;
}

/*
 * The n-th image new to a keys pass, in slot s: listed at n, or where the
 * pass numbers the groups at its group's place, that number in the map.
 */
static inline GPUEXT_HD void
gpuext_scan_group_list(const GpuextScanProgram *p, char *outs, uint32_t s, uint64_t n,
					   const uint64_t image[GPUEXT_SCAN_KEY_WORDS])
{
	GpuextScanNewGroup *g;

	if (p->number_groups)
		n += p->group_base;
	if (n >= p->table_cap)
		return;
	g = &gpuext_scan_new_groups(p, outs)[n];
	g->slot = s;
	g->pad = 0;
	for (int w = 0; w < GPUEXT_SCAN_KEY_WORDS; w++)
		g->image[w] = image[w];
	if (p->number_groups)
		((uint32_t *) (outs + p->map_offset))[s] = (uint32_t) n;
}

/* The group number of the slot holding image, or GPUEXT_SCAN_NO_GROUP (the values pass; the table is not changing). */
static inline GPUEXT_HD uint32_t
gpuext_scan_group_find(const GpuextScanProgram *p, char *outs, const uint64_t image[GPUEXT_SCAN_KEY_WORDS])
{
	const uint32_t *states = gpuext_scan_slot_states(p, outs);
	const uint64_t *images = gpuext_scan_slot_images(p, outs);
	const uint32_t *map = (const uint32_t *) (outs + p->map_offset);
	uint32_t	s = gpuext_scan_key_hash(image, p->table_cap);

	for (uint32_t probe = 0; probe < p->table_cap; probe++, s = (s + 1) & (p->table_cap - 1))
	{
		if (states[s] != GPUEXT_SCAN_SLOT_FULL)
			return GPUEXT_SCAN_NO_GROUP;
		if (gpuext_scan_slot_holds(images, s, image))
			return map[s];
	}
	return GPUEXT_SCAN_NO_GROUP;
}

/* The keys pass on the host: image put in the table, listed if new; 0 where the table is full. */
static inline int
gpuext_scan_group_insert_host(const GpuextScanProgram *p, char *outs, const uint64_t image[GPUEXT_SCAN_KEY_WORDS],
							  uint64_t *counts)
{
	uint32_t   *states = gpuext_scan_slot_states(p, outs);
	uint64_t   *images = gpuext_scan_slot_images(p, outs);
	uint32_t	s = gpuext_scan_key_hash(image, p->table_cap);

	for (uint32_t probe = 0; probe < p->table_cap; probe++, s = (s + 1) & (p->table_cap - 1))
	{
		if (states[s] == GPUEXT_SCAN_SLOT_FULL)
		{
			if (gpuext_scan_slot_holds(images, s, image))
				return 1;
			continue;
		}
		states[s] = GPUEXT_SCAN_SLOT_FULL;
		for (int w = 0; w < GPUEXT_SCAN_KEY_WORDS; w++)
			images[(size_t) GPUEXT_SCAN_KEY_WORDS * s + w] = image[w];
		gpuext_scan_group_list(p, outs, s, counts[GPUEXT_SCAN_NEW_GROUPS]++, image);
		return 1;
	}
	return 0;
}

/* Whether the program's GROUP BY parts lie within its arrays and outs_bytes (1), else 0. */
static inline int
gpuext_scan_groups_valid(const GpuextScanProgram *p, size_t outs_bytes)
{
	size_t		cap = p->table_cap;
	unsigned	used = 0;

	if (p->nkeys == 0)
		return 1;
	if (p->nkeys > GPUEXT_SCAN_MAX_KEYS || cap < 2 || cap > ((size_t) 1 << 24) || (cap & (cap - 1)) != 0 ||
		(p->pass != GPUEXT_SCAN_PASS_KEYS && p->pass != GPUEXT_SCAN_PASS_VALUES) ||
		p->number_groups > 1 || (p->number_groups && p->group_base > cap) ||
		p->ncounters < 1 || p->ncounters > GPUEXT_SCAN_MAX_COUNTERS)
		return 0;
	for (int k = 0; k < p->nkeys; k++)
	{
		const GpuextScanKey *key = &p->keys[k];

		if (key->col >= p->ncols || key->at != used || key->at + 1 + key->width > GPUEXT_SCAN_KEY_BYTES ||
			key->modulus < 0 || key->trunc >= GPUEXT_SCAN_UNITS || key->micros > 1 ||
			(key->trunc != GPUEXT_SCAN_TRUNC_NONE &&
			 (key->modulus != 0 || p->cols[key->col].kind != GPUEXT_SCAN_INT ||
			  key->width != gpuext_scan_unit_width(key->trunc, key->micros) ||
			  p->att_len[p->cols[key->col].att] != (key->micros ? 8 : 4) ||
			  (!key->micros && gpuext_scan_unit_of_time(key->trunc)))) ||
			(key->modulus == 0 && key->trunc == GPUEXT_SCAN_TRUNC_NONE && p->cols[key->col].kind != GPUEXT_SCAN_BYTES) ||
			(key->modulus > 0 && (p->cols[key->col].kind != GPUEXT_SCAN_INT ||
								  key->width != p->att_len[p->cols[key->col].att])))
			return 0;
		used = key->at + 1 + key->width;
	}
	if (p->table_offset % 8 != 0 || p->table_offset > outs_bytes ||
		cap * (sizeof(uint32_t) + GPUEXT_SCAN_KEY_BYTES) > outs_bytes - p->table_offset ||
		p->new_offset % 8 != 0 || p->new_offset > outs_bytes ||
		cap * sizeof(GpuextScanNewGroup) > outs_bytes - p->new_offset ||
		p->map_offset % 4 != 0 || p->map_offset > outs_bytes || cap * sizeof(uint32_t) > outs_bytes - p->map_offset ||
		p->counts_offset % 8 != 0 || p->counts_offset > outs_bytes ||
		cap * p->ncounters * sizeof(uint64_t) > outs_bytes - p->counts_offset)
		return 0;
	for (int o = 0; o < p->nouts; o++)
	{
		const GpuextScanOut *out = &p->outs[o];

		if (out->value_bytes == 0 ? (out->counter < 1 || out->counter >= p->ncounters) :
			(out->groups_offset % 4 != 0 || out->groups_offset > outs_bytes ||
			 p->out_cap > (outs_bytes - out->groups_offset) / sizeof(uint32_t)))
			return 0;
	}
	return 1;
}

/*
 * The host's part of a call (the fake device): a keys pass that starts the
 * table empties it; a values pass zeroes its per-group counts, or where the
 * keys pass numbers the groups, that keys pass unmaps every slot and zeroes
 * the counts.
 */
static inline void
gpuext_scan_groups_clear_host(const GpuextScanProgram *p, char *outs)
{
	if (p->nkeys == 0)
		return;
	if (p->pass == GPUEXT_SCAN_PASS_KEYS && p->clear_table)
		memset(gpuext_scan_slot_states(p, outs), 0, sizeof(uint32_t) * p->table_cap);
	if (p->pass == GPUEXT_SCAN_PASS_KEYS && p->clear_table && p->number_groups)
		memset(outs + p->map_offset, 0xFF, sizeof(uint32_t) * p->table_cap);
	if (p->pass == (p->number_groups ? GPUEXT_SCAN_PASS_KEYS : GPUEXT_SCAN_PASS_VALUES) &&
		(p->clear_table || !p->number_groups))
		memset(outs + p->counts_offset, 0, sizeof(uint64_t) * p->ncounters * p->table_cap);
}

#endif							/* GPUEXT_SCAN_HEAP_GROUPS_H */
