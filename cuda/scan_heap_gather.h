/*
 * scan_heap_gather.h
 *		The device scan's batch put together from pages copied by the CPU and
 *		pages of the buffer pool read in place (the host's version, for the
 *		fake device; the kernel is gather_pages_kernel in scan_heap.cu).
 */
#ifndef GPUEXT_SCAN_HEAP_GATHER_H
#define GPUEXT_SCAN_HEAP_GATHER_H

/* A batch page read in place from the buffer pool, not copied: refs[i] is its buffer's index. */
#define GPUEXT_SCAN_COPIED 0xFFFFFFFFu

/*
 * With the buffer's index, a page taken whole from the pool, its header and
 * line pointers too (the CPU has not read it: the visibility map called it
 * all-visible, and the CPU checks after the gathering that it still is).
 */
#define GPUEXT_SCAN_WHOLE 0x80000000u

/*
 * Where a page taken from the pool gets its bytes: below its copy's pd_lower
 * (the header and line pointers, as the CPU saw them under the buffer's
 * content lock) from the copy, the rest from the pool.  Under the buffer's
 * pin the items those line pointers name cannot move; rows added later are
 * only reached through line pointers the copy does not have.
 */
static inline GPUEXT_HD unsigned
gpuext_scan_copy_lower(const char *copy)
{
	unsigned	lower = (unsigned char) copy[12] | ((unsigned) (unsigned char) copy[13] << 8);

	return lower < 24 ? 24 : lower > GPUEXT_SCAN_PAGE_BYTES ? GPUEXT_SCAN_PAGE_BYTES : lower;
}

/*
 * The batch's pages put together on the host (the fake device): each copied
 * page as it is, each page of the pool from its copy's header and line
 * pointers and the pool's bytes, or whole; a buffer index past the pool
 * gives an empty page.
 */
static inline void
gpuext_scan_gather_pages_host(char *pages, const char *copies, const uint32_t *refs, const char *pool,
							  uint32_t pool_blocks, uint32_t npages)
{
	for (uint32_t i = 0; i < npages; i++)
	{
		char	   *dst = pages + (size_t) i * GPUEXT_SCAN_PAGE_BYTES;
		const char *copy = copies + (size_t) i * GPUEXT_SCAN_PAGE_BYTES;
		unsigned	lower;

		if (refs[i] == GPUEXT_SCAN_COPIED)
		{
			if (dst != copy)
				memcpy(dst, copy, GPUEXT_SCAN_PAGE_BYTES);
			continue;
		}
		if (pool == NULL || (refs[i] & ~GPUEXT_SCAN_WHOLE) >= pool_blocks)
		{
			memset(dst, 0, GPUEXT_SCAN_PAGE_BYTES);
			continue;
		}
		if (refs[i] & GPUEXT_SCAN_WHOLE)
		{
			memcpy(dst, pool + (size_t) (refs[i] & ~GPUEXT_SCAN_WHOLE) * GPUEXT_SCAN_PAGE_BYTES, GPUEXT_SCAN_PAGE_BYTES);
			continue;
		}
		lower = gpuext_scan_copy_lower(copy);
		memmove(dst, copy, lower);
		memcpy(dst + lower, pool + (size_t) refs[i] * GPUEXT_SCAN_PAGE_BYTES + lower, GPUEXT_SCAN_PAGE_BYTES - lower);
	}
}

#endif							/* GPUEXT_SCAN_HEAP_GATHER_H */
