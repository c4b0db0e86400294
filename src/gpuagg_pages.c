/*
 * gpuagg_pages.c
 *		GpuAgg's reader of a heap table's pages: each page's visible rows, in
 *		chunks of consecutive blocks (a process's share of a parallel scan).
 *
 * A chunk's blocks that the visibility map calls all-visible and that are
 * not in shared buffers are read straight from the table's file, a few at a
 * time while their buffer mapping partitions are locked (shared): no one can
 * read such a block into shared buffers meanwhile, and a block is only ever
 * written from a buffer that holds it, so the read sees the block's latest
 * image, whole, exactly what a lookup in shared buffers would find.  An
 * image whose header says all-visible is then used as it is: all of its rows
 * are visible to any MVCC snapshot, as a seq scan trusts the same flag under
 * a buffer lock.  doc/design.md ("Reading table files") has the argument.
 * Every other page, and every page under a serializable transaction, a hot
 * standby's snapshot, old_snapshot_threshold or gpuext.read_table_files =
 * off, is read through shared buffers with PostgreSQL's visibility checks,
 * as heap_getnext reads it.
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "access/heapam.h"
#include "access/relscan.h"
#include "access/visibilitymap.h"
#include "common/relpath.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/buf_internals.h"
#include "storage/bufmgr.h"
#include "storage/fd.h"
#include "storage/predicate.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "gpuagg.h"

/* Blocks read from the file under one hold of their buffer mapping partitions' locks. */
#define FILE_GROUP_BLOCKS 8

/* The largest table whose buffers a backend keeps as hints: 8 GB, 4 MB of hints. */
#define HINTS_MAX_BLOCKS ((BlockNumber) 1 << 20)

/* How far ahead the buffers of a chunk are prefetched, and how much of each page. */
#define PREFETCH_BLOCKS 4
#define PREFETCH_PAGE_BYTES 256

bool		gpuext_read_table_files = GPUEXT_READ_TABLE_FILES_DEFAULT;

/*
 * The buffers that held the blocks of the table this backend read last
 * (block 0's tag names it), for tables that fit in shared buffers and in
 * HINTS_MAX_BLOCKS: a scan of it again tries each block's buffer first, as
 * ReadRecentBuffer checks it, before looking the block up in the buffer
 * table.
 */
static BufferTag hints_of;
static Buffer *hints;
static BlockNumber hints_n;

static Buffer *BufferHints(Relation rel, BlockNumber nblocks);

/* The buffer that held block blkno when last read, or InvalidBuffer. */
static inline Buffer
HintOf(GpuAggPages *pg, BlockNumber blkno)
{
	return pg->hints != NULL && blkno < pg->hints_n ? pg->hints[blkno] : InvalidBuffer;
}

/*
 * Whether buffer buf seems to hold block blkno still: its tag read without
 * the buffer header's lock, as a hint that ReadRecentBuffer checks.  A
 * block evicted since is looked up, so that it can be read from the file.
 */
static inline bool
HintHolds(GpuAggPages *pg, Buffer buf, BlockNumber blkno)
{
	BufferTag	want;
	BufferTag	held = GetBufferDescriptor(buf - 1)->tag;

	GpuextInitBufferTag(&want, pg->rel, blkno);
	return GpuextBufferTagsEqual(&want, &held);
}

/* Start reading: the scan gives the snapshot, the blocks, the strategy and any parallel share. */
void
GpuAggPagesBegin(GpuAggPages *pg, TableScanDesc scan)
{
	HeapScanDesc hscan = (HeapScanDesc) scan;
	Relation	rel = scan->rs_rd;

	memset(pg, 0, sizeof(*pg));
	pg->rel = rel;
	pg->snapshot = scan->rs_snapshot;
	pg->strategy = hscan->rs_strategy;
	pg->pbscan = (ParallelBlockTableScanDesc) scan->rs_parallel;
	pg->nblocks = hscan->rs_nblocks;
	pg->check_serializable = CheckForSerializableConflictOutNeeded(rel, pg->snapshot);
	/* Files only where the snapshot's xmin holds back every horizon that could set all-visible */
	pg->files = gpuext_read_table_files && !pg->check_serializable &&
		pg->snapshot->snapshot_type == SNAPSHOT_MVCC && !pg->snapshot->takenDuringRecovery &&
		!RelationUsesLocalBuffers(rel);
#if PG_VERSION_NUM < 170000
	pg->files = pg->files && old_snapshot_threshold < 0;
#endif
	/* the same horizon lets the visibility map vouch for a page the device reads whole */
	pg->whole_ok = gpuext_device_scan_whole_pages && !pg->check_serializable && pg->snapshot->snapshot_type == SNAPSHOT_MVCC &&
		!pg->snapshot->takenDuringRecovery && !RelationUsesLocalBuffers(rel);
#if PG_VERSION_NUM < 170000
	pg->whole_ok = pg->whole_ok && old_snapshot_threshold < 0;
#endif
	pg->fd = -1;
	pg->buf = InvalidBuffer;
	pg->vmbuf = InvalidBuffer;
	pg->in_place = InvalidBuffer;
	if (pg->files)
		pg->chunk = palloc((Size) GPUAGG_CHUNK_BLOCKS * BLCKSZ);
	/* a parallel run's processes share theirs (GpuAggPagesShareHints) */
	if (pg->pbscan == NULL && GpuAggPagesHintsFit(rel, pg->nblocks) > 0)
	{
		pg->hints = BufferHints(rel, pg->nblocks);
		pg->hints_n = pg->nblocks;
	}
}

/* How many blocks of rel (of nblocks) get buffer hints: all where it fits in shared buffers and the limit, else 0. */
BlockNumber
GpuAggPagesHintsFit(Relation rel, BlockNumber nblocks)
{
	return !RelationUsesLocalBuffers(rel) && nblocks <= (BlockNumber) NBuffers && nblocks <= HINTS_MAX_BLOCKS ?
		nblocks : 0;
}

/* A parallel run's reader takes the hints its processes share (n blocks), reading and updating them. */
void
GpuAggPagesShareHints(GpuAggPages *pg, Buffer *hints, BlockNumber n)
{
	pg->hints = hints;
	pg->hints_n = hints != NULL ? n : 0;
}

/*
 * The hints of a parallel run: into hints (n blocks, shared memory), this
 * backend's for rel where rel is its last table read, else none; or, keep,
 * back from there, once the run is over, as this backend's for rel.
 */
void
GpuAggPagesHintsCopy(Relation rel, Buffer *shared, BlockNumber n, bool keep)
{
	Buffer	   *own = BufferHints(rel, n);

	if (keep)
		memcpy(own, shared, sizeof(Buffer) * (Size) n);
	else
		memcpy(shared, own, sizeof(Buffer) * (Size) n);
}

/*
 * The buffer hints of rel (nblocks of them): those of its last scan where
 * it was the last table read (a table grown since keeps them for its old
 * blocks), else none yet.
 */
static Buffer *
BufferHints(Relation rel, BlockNumber nblocks)
{
	BufferTag	tag;
	BlockNumber kept = 0;

	memset(&tag, 0, sizeof(tag));
	GpuextInitBufferTag(&tag, rel, 0);
	if (hints != NULL && memcmp(&tag, &hints_of, sizeof(tag)) == 0)
		kept = Min(hints_n, nblocks);
	if (hints == NULL)
		hints = MemoryContextAlloc(TopMemoryContext, sizeof(Buffer) * (Size) nblocks);
	else if (hints_n < nblocks)
		hints = repalloc(hints, sizeof(Buffer) * (Size) nblocks);
	hints_n = Max(hints_n, nblocks);
	StaticAssertStmt(InvalidBuffer == 0, "zeroed hints are invalid buffers");
	memset(hints + kept, 0, sizeof(Buffer) * (Size) (hints_n - kept));
	hints_of = tag;
	return hints;
}

/* The next chunk of blocks for this process: [start, start + n), false when none is left. */
static bool
NextChunk(GpuAggPages *pg)
{
	uint64		start;

	if (pg->pbscan != NULL)
		start = pg_atomic_fetch_add_u64(&pg->pbscan->phs_nallocated, GPUAGG_CHUNK_BLOCKS);
	else
	{
		start = pg->next;
		pg->next += GPUAGG_CHUNK_BLOCKS;
	}
	if (start >= pg->nblocks)
		return false;
	pg->chunk_start = (BlockNumber) start;
	pg->chunk_n = (int) Min((uint64) GPUAGG_CHUNK_BLOCKS, pg->nblocks - start);
	pg->chunk_next = 0;
	return true;
}

/* Open the file of the segment that holds a block, closing the one before. */
static void
OpenSegment(GpuAggPages *pg, BlockNumber segno)
{
	char	   *base = GpuextRelFilePath(pg->rel);
	char	   *path = segno == 0 ? base : psprintf("%s.%u", base, segno);

	if (pg->fd >= 0)
		CloseTransientFile(pg->fd);
	pg->fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
	if (pg->fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", path)));
	pg->segno = segno;
}

/*
 * Read bytes at offset; with nowait only what the kernel's cache holds (a
 * short count, or -1 with EAGAIN, when not all of it is there).
 */
static ssize_t
ReadSpan(int fd, char *buf, size_t bytes, off_t offset, bool nowait)
{
#ifdef RWF_NOWAIT
	if (nowait)
	{
		struct iovec iov = {.iov_base = buf, .iov_len = bytes};

		return preadv2(fd, &iov, 1, offset, RWF_NOWAIT);
	}
#endif
	return pg_pread(fd, buf, bytes, offset);
}

/*
 * Read the candidates among the chunk's blocks [first, last] from the file
 * while their buffer mapping partitions are locked (shared, in ascending
 * order as the buffer manager takes two): those absent from shared buffers
 * cannot be read in meanwhile, so none of them can be written during the
 * read (a block is written only from the buffer that holds it, before it
 * leaves the mapping), and the file holds its latest image, whole.  Marks
 * them in from_file.  The locks are held only for a copy from the kernel's
 * cache: what is not there is read first without them (with the chunk's
 * blocks up to to, all there is to come), then again under them.
 */
static void
ReadGroupLocked(GpuAggPages *pg, const bool *candidate, int first, int last, int to)
{
	BufferTag	tags[FILE_GROUP_BLOCKS];
	uint32		hashes[FILE_GROUP_BLOCKS];
	uint32		parts[FILE_GROUP_BLOCKS];
	int			nparts = 0;
	int			lo,
				hi;
	ssize_t		got;
	int			save_errno;
	int			tries = 0;
#ifdef RWF_NOWAIT
	bool		nowait = true;
#else
	bool		nowait = false;
#endif

	Assert(last - first < FILE_GROUP_BLOCKS);
	for (int i = first; i <= last; i++)
	{
		int			j = 0;
		uint32		part;

		if (!candidate[i])
			continue;
		GpuextInitBufferTag(&tags[i - first], pg->rel, pg->chunk_start + i);
		hashes[i - first] = BufTableHashCode(&tags[i - first]);
		part = BufTableHashPartition(hashes[i - first]);
		/* parts: the partitions, ascending, each once */
		while (j < nparts && parts[j] < part)
			j++;
		if (j < nparts && parts[j] == part)
			continue;
		memmove(&parts[j + 1], &parts[j], sizeof(uint32) * (nparts - j));
		parts[j] = part;
		nparts++;
	}
	if (nparts == 0)
		return;

	/* Up to two tries from the kernel's cache, then a read under the locks that may wait for the disk */
	for (;;)
	{
		lo = hi = -1;
		got = 0;
		save_errno = 0;
		for (int k = 0; k < nparts; k++)
			LWLockAcquire(BufMappingPartitionLockByIndex(parts[k]), LW_SHARED);
		for (int i = first; i <= last; i++)
		{
			int			id;

			if (!candidate[i])
				continue;
			id = BufTableLookup(&tags[i - first], hashes[i - first]);
			pg->from_file[i] = id < 0;
			pg->recent[i] = id >= 0 ? BufferDescriptorGetBuffer(GetBufferDescriptor(id)) : InvalidBuffer;
			if (pg->from_file[i])
			{
				if (lo < 0)
					lo = i;
				hi = i;
			}
		}
		if (lo >= 0)
		{
			pgstat_report_wait_start(WAIT_EVENT_DATA_FILE_READ);
			got = ReadSpan(pg->fd, pg->chunk + (Size) lo * BLCKSZ, (Size) (hi - lo + 1) * BLCKSZ,
						   (off_t) ((pg->chunk_start + lo) % RELSEG_SIZE) * BLCKSZ, nowait);
			save_errno = errno;
			pgstat_report_wait_end();
		}
		for (int k = nparts - 1; k >= 0; k--)
			LWLockRelease(BufMappingPartitionLockByIndex(parts[k]));

		if (lo < 0 || !nowait || got == (ssize_t) (hi - lo + 1) * BLCKSZ)
			break;
		if (got < 0 && save_errno != EAGAIN)
		{
			/* RWF_NOWAIT refused, or an error that the read that may wait reports */
			nowait = false;
			continue;
		}
		/* Bring the rest of the chunk's candidates into the kernel's cache, without the locks */
		pgstat_report_wait_start(WAIT_EVENT_DATA_FILE_READ);
		got = pg_pread(pg->fd, pg->chunk + (Size) lo * BLCKSZ, (Size) (to - lo + 1) * BLCKSZ,
					   (off_t) ((pg->chunk_start + lo) % RELSEG_SIZE) * BLCKSZ);
		pgstat_report_wait_end();
		nowait = got >= 0 && ++tries < 2;
	}

	if (got < 0)
	{
		errno = save_errno;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read blocks %u..%u of relation \"%s\": %m",
						pg->chunk_start + lo, pg->chunk_start + hi, RelationGetRelationName(pg->rel))));
	}
	/* A block the file did not give whole is read through shared buffers */
	for (int i = Max(lo, 0); i <= hi; i++)
		if ((Size) (i - lo + 1) * BLCKSZ > (Size) got)
			pg->from_file[i] = false;
}

/*
 * Read from the table's file the chunk's blocks that the visibility map
 * calls all-visible and that are not in shared buffers, marking them in
 * from_file; the others go through shared buffers.
 */
static void
ReadChunkFiles(GpuAggPages *pg)
{
	BlockNumber segno = pg->chunk_start / RELSEG_SIZE;
	bool		candidate[GPUAGG_CHUNK_BLOCKS];
	int			first = -1,
				last = -1;

	/* The map only spares reads of pages that will not be used: the page's own flag decides */
	for (int i = 0; i < pg->chunk_n; i++)
	{
		BlockNumber blkno = pg->chunk_start + i;

		pg->from_file[i] = false;
		pg->recent[i] = HintOf(pg, blkno);
		if (BufferIsValid(pg->recent[i]) && !HintHolds(pg, pg->recent[i], blkno))
			pg->recent[i] = InvalidBuffer;
		/* a block whose buffer is known goes through it; the others are looked up */
		candidate[i] = !BufferIsValid(pg->recent[i]) && blkno / RELSEG_SIZE == segno &&
			VM_ALL_VISIBLE(pg->rel, blkno, &pg->vmbuf);
		if (candidate[i])
		{
			if (first < 0)
				first = i;
			last = i;
		}
	}
	if (first < 0)
		return;
	if (pg->fd < 0 || pg->segno != segno)
		OpenSegment(pg, segno);
	for (int g = first; g <= last; g += FILE_GROUP_BLOCKS)
		ReadGroupLocked(pg, candidate, g, Min(g + FILE_GROUP_BLOCKS - 1, last), last);
}

/* A page read from the file that is all-visible and sound: its rows, all visible. */
static bool
TakeFilePage(GpuAggPages *pg, int i)
{
	Page		page = (Page) (pg->chunk + (Size) i * BLCKSZ);
	BlockNumber blkno = pg->chunk_start + i;
	OffsetNumber maxoff;
	int			n = 0;

	if (PageIsNew(page) || !PageIsAllVisible(page) || !GpuextPageIsVerified(page, blkno))
		return false;
	pg->all_visible = true;
	if (pg->copy_to != NULL)
	{
		/* the device finds the rows */
		memcpy(pg->copy_to, page, BLCKSZ);
		pg->page = pg->copy_to;
		pg->ntuples = 0;
		pg->pages_from_files++;
		return true;
	}
	maxoff = PageGetMaxOffsetNumber(page);
	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
		if (ItemIdIsNormal(PageGetItemId(page, off)))
			pg->offsets[n++] = off;
	pg->page = page;
	pg->ntuples = n;
	pg->pages_from_files++;
	return true;
}

/*
 * The visible rows of block blkno's page in buf, under its content lock, as
 * heapgetpage finds them (into offsets; their count): every normal item
 * where all_visible, else those the snapshot sees.
 */
int
GpuAggPagesVisibleRows(GpuAggPages *pg, Buffer buf, BlockNumber blkno, bool all_visible, OffsetNumber *offsets)
{
	Page		page = BufferGetPage(buf);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	int			n = 0;

	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
	{
		ItemId		lp = PageGetItemId(page, off);
		HeapTupleData tuple;
		bool		visible;

		if (!ItemIdIsNormal(lp))
			continue;
		tuple.t_data = (HeapTupleHeader) PageGetItem(page, lp);
		tuple.t_len = ItemIdGetLength(lp);
		tuple.t_tableOid = RelationGetRelid(pg->rel);
		ItemPointerSet(&tuple.t_self, blkno, off);
		visible = all_visible || HeapTupleSatisfiesVisibility(&tuple, pg->snapshot, buf);
		if (pg->check_serializable)
			HeapCheckForSerializableConflictOut(visible, pg->rel, &tuple, buf, pg->snapshot);
		if (visible)
			offsets[n++] = off;
	}
	return n;
}

/*
 * A page through shared buffers (pinned from the buffer that held it when
 * looked up, where it still does): prune it where due, and find its visible
 * rows as heap_getnext does.
 */
static void
TakeBufferPage(GpuAggPages *pg, BlockNumber blkno, Buffer recent)
{
	Relation	rel = pg->rel;
	Page		page;
	bool		all_visible;
	int			n = 0;
	Buffer		buf;

	if (BufferIsValid(pg->buf))
		ReleaseBuffer(pg->buf);
	pg->buf = InvalidBuffer;
	if (!BufferIsValid(recent) || !GpuextReadRecentBuffer(rel, blkno, recent))
		buf = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL, pg->strategy);
	else
	{
		/* a hit in the table's statistics, as ReadBufferExtended counts one */
		pgstat_count_buffer_read(rel);
		pgstat_count_buffer_hit(rel);
		buf = recent;
		pg->pages_hinted += recent == HintOf(pg, blkno);
	}
	if (pg->hints != NULL && blkno < pg->hints_n)
		pg->hints[blkno] = buf;
	/*
	 * All-visible in the visibility map: the device reads the page whole and
	 * the CPU does not touch it (in a parallel worker, each first touch of a
	 * page of shared buffers is a page fault).  Until the batch is done, any
	 * change to the page clears the bit, which the CPU checks then.
	 */
	if (pg->copy_to != NULL && pg->in_place_ok && pg->whole_ok && VM_ALL_VISIBLE(rel, blkno, &pg->vmbuf))
	{
		pg->whole = true;
		pg->all_visible = true;
		pg->in_place = buf;
		pg->pages_in_place++;
		pg->pages_whole++;
		pg->page = NULL;
		pg->ntuples = 0;
		pg->pages_from_buffers++;
		return;
	}
	heap_page_prune_opt(rel, buf);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
#if PG_VERSION_NUM < 170000
	TestForOldSnapshot(pg->snapshot, rel, page);
#endif
	all_visible = PageIsAllVisible(page) && !pg->snapshot->takenDuringRecovery;
	pg->all_visible = all_visible && !pg->check_serializable;
	/* where copied all-visible, the device finds the rows */
	if (pg->copy_to == NULL || !pg->all_visible)
		n = GpuAggPagesVisibleRows(pg, buf, blkno, all_visible, pg->offsets);
	if (pg->copy_to != NULL && pg->in_place_ok)
	{
		/*
		 * The header and line pointers as the items were found; under the
		 * pin kept, no item they name can move (pruning needs the buffer
		 * alone), and items added later have line pointers the copy lacks.
		 */
		memcpy(pg->copy_to, page, Max(SizeOfPageHeaderData, Min(((PageHeader) page)->pd_lower, BLCKSZ)));
		page = pg->copy_to;
		pg->in_place = buf;
		pg->pages_in_place++;
	}
	else
	{
		if (pg->copy_to != NULL)
		{
			/* under the content lock: the items found are the copy's */
			memcpy(pg->copy_to, page, BLCKSZ);
			page = pg->copy_to;
		}
		pg->buf = buf;
	}
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	pg->page = page;
	pg->ntuples = n;
	pg->pages_from_buffers++;
}

/*
 * Ask the CPU for a buffer a few pages ahead (its descriptor, its page's
 * header and first line pointers): each page's work is a chain of cache
 * misses otherwise.
 */
static inline void
PrefetchBufferPage(Buffer buf)
{
	const char *page;

	if (!BufferIsValid(buf) || BufferIsLocal(buf))
		return;
	page = BufferGetBlock(buf);
	__builtin_prefetch(GetBufferDescriptor(buf - 1));
	for (int off = 0; off < PREFETCH_PAGE_BYTES; off += PG_CACHE_LINE_SIZE)
		__builtin_prefetch(page + off);
}

/*
 * The next page of this process's share: pg->page, its block pg->blkno and
 * the offsets of its visible rows (pg->offsets, pg->ntuples), valid until
 * the next call; false at the end.
 */
bool
GpuAggPagesNext(GpuAggPages *pg)
{
	int			i;

	pg->in_place = InvalidBuffer;
	pg->whole = false;
	if (pg->chunk_n == 0 || pg->chunk_next == pg->chunk_n)
	{
		if (!NextChunk(pg))
			return false;
		if (pg->files)
			ReadChunkFiles(pg);
	}
	i = pg->chunk_next++;
	pg->blkno = pg->chunk_start + i;
	if (i + PREFETCH_BLOCKS < pg->chunk_n)
		PrefetchBufferPage(pg->files ? pg->recent[i + PREFETCH_BLOCKS] : HintOf(pg, pg->blkno + PREFETCH_BLOCKS));
	if (!pg->files || !pg->from_file[i] || !TakeFilePage(pg, i))
		TakeBufferPage(pg, pg->blkno, pg->files ? pg->recent[i] : HintOf(pg, pg->blkno));
	return true;
}

/*
 * Whether a page left whole to the device is still all-visible once the
 * device has read it: under the content lock, no change is under way, and
 * every change made since it was taken cleared the visibility map's bit.
 */
bool
GpuAggPagesStillVisible(GpuAggPages *pg, Buffer buf, BlockNumber blkno)
{
	bool		visible;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	visible = VM_ALL_VISIBLE(pg->rel, blkno, &pg->vmbuf);
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	return visible;
}

/* Let go of the last page and the file. */
void
GpuAggPagesEnd(GpuAggPages *pg)
{
	if (BufferIsValid(pg->buf))
		ReleaseBuffer(pg->buf);
	pg->buf = InvalidBuffer;
	if (BufferIsValid(pg->vmbuf))
		ReleaseBuffer(pg->vmbuf);
	pg->vmbuf = InvalidBuffer;
	if (pg->fd >= 0)
		CloseTransientFile(pg->fd);
	pg->fd = -1;
	if (pg->chunk)
		pfree(pg->chunk);
	pg->chunk = NULL;
}
