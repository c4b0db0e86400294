/*
 * pg_compat.h
 *		What differs between the PostgreSQL releases gpuext builds against
 *		(15, 16, 17, 18), in one place.
 */
#ifndef GPUEXT_PG_COMPAT_H
#define GPUEXT_PG_COMPAT_H

#include "utils/guc.h"
#include "utils/tuplesort.h"

/* 18 moved ExplainState and the ExplainProperty functions out of explain.h. */
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#endif

/* 18 exports ExplainIndentText; before, the same two lines are written here. */
#if PG_VERSION_NUM >= 180000
#define GpuextExplainIndent(es) ExplainIndentText(es)
#else
#define GpuextExplainIndent(es) \
	do { \
		if ((es)->str->len == 0 || (es)->str->data[(es)->str->len - 1] == '\n') \
			appendStringInfoSpaces((es)->str, (es)->indent * 2); \
	} while (0)
#endif

/* 18 counts the range table without its grouping entry when deciding to qualify column names. */
#if PG_VERSION_NUM >= 180000
#define GpuextExplainRtableSize(es) ((es)->rtable_size)
#else
#define GpuextExplainRtableSize(es) list_length((es)->rtable)
#endif

/* 16 added the copy argument; 15 always copies pass-by-reference values. */
#if PG_VERSION_NUM >= 160000
#define GpuextTuplesortGetDatum(state, forward, val, isnull) \
	tuplesort_getdatum((state), (forward), true, (val), (isnull), NULL)
#else
#define GpuextTuplesortGetDatum(state, forward, val, isnull) \
	tuplesort_getdatum((state), (forward), (val), (isnull), NULL)
#endif

/* 16 allocates a setting's extra data in its own context: guc_malloc, not malloc. */
#if PG_VERSION_NUM >= 160000
#define GpuextGucMalloc(size) guc_malloc(LOG, (size))
#else
#define GpuextGucMalloc(size) malloc(size)
#endif

/* 17 names the backend's PGPROC slot MyProcNumber; before, MyProc->pgprocno. */
#if PG_VERSION_NUM >= 170000
#define GpuextMyProcNumber() MyProcNumber
#else
#define GpuextMyProcNumber() (MyProc->pgprocno)
#endif

/*
 * 18 builds tuple hash tables with BuildTupleHashTable (the slot type given,
 * extra bytes beside each entry's tuple); before, BuildTupleHashTableExt and
 * an "additional" pointer in each entry, which holds GpuAgg's group number.
 */
#if PG_VERSION_NUM >= 180000
#define GpuextBuildTupleHashTable(parent, desc, ops, ncols, cols, eqfuncs, hashfuncs, colls, nbuckets, \
								  metacxt, tablecxt, tempcxt) \
	BuildTupleHashTable((parent), (desc), (ops), (ncols), (cols), (eqfuncs), (hashfuncs), (colls), (nbuckets), \
						sizeof(uint32), (metacxt), (tablecxt), (tempcxt), false)
#define GpuextHashEntryTuple(entry) TupleHashEntryGetTuple(entry)
#define GpuextHashEntryGroup(table, entry) (*(uint32 *) TupleHashEntryGetAdditional((table), (entry)))
#define GpuextHashEntrySetGroup(table, entry, group) \
	(*(uint32 *) TupleHashEntryGetAdditional((table), (entry)) = (group))
#else
#define GpuextBuildTupleHashTable(parent, desc, ops, ncols, cols, eqfuncs, hashfuncs, colls, nbuckets, \
								  metacxt, tablecxt, tempcxt) \
	BuildTupleHashTableExt((parent), (desc), (ncols), (cols), (eqfuncs), (hashfuncs), (colls), (nbuckets), \
						   0, (metacxt), (tablecxt), (tempcxt), false)
#define GpuextHashEntryTuple(entry) ((entry)->firstTuple)
#define GpuextHashEntryGroup(table, entry) ((uint32) (uintptr_t) (entry)->additional)
#define GpuextHashEntrySetGroup(table, entry, group) ((entry)->additional = (void *) (uintptr_t) (group))
#endif

/*
 * 16 names a relation's file by a RelFileLocator (InitBufferTag), 15 by a
 * RelFileNode (INIT_BUFFERTAG), and compares tags by BufferTagsEqual; 18 returns relpath's path in a struct.
 * 18 renamed PageIsVerifiedExtended to PageIsVerified, with one more argument.
 */
#if PG_VERSION_NUM >= 160000
#define GpuextInitBufferTag(tag, rel, blkno) InitBufferTag((tag), &(rel)->rd_locator, MAIN_FORKNUM, (blkno))
#define GpuextReadRecentBuffer(rel, blkno, buf) ReadRecentBuffer((rel)->rd_locator, MAIN_FORKNUM, (blkno), (buf))
#define GpuextBufferTagsEqual(a, b) BufferTagsEqual((a), (b))
#else
#define GpuextInitBufferTag(tag, rel, blkno) INIT_BUFFERTAG(*(tag), (rel)->rd_node, MAIN_FORKNUM, (blkno))
#define GpuextReadRecentBuffer(rel, blkno, buf) ReadRecentBuffer((rel)->rd_node, MAIN_FORKNUM, (blkno), (buf))
#define GpuextBufferTagsEqual(a, b) BUFFERTAGS_EQUAL(*(a), *(b))
#endif
#if PG_VERSION_NUM >= 180000
#define GpuextRelFilePath(rel) pstrdup(relpathperm((rel)->rd_locator, MAIN_FORKNUM).str)
#elif PG_VERSION_NUM >= 160000
#define GpuextRelFilePath(rel) relpathperm((rel)->rd_locator, MAIN_FORKNUM)
#else
#define GpuextRelFilePath(rel) relpathperm((rel)->rd_node, MAIN_FORKNUM)
#endif
#if PG_VERSION_NUM >= 180000
#define GpuextPageIsVerified(page, blkno) PageIsVerified((page), (blkno), 0, NULL)
#else
#define GpuextPageIsVerified(page, blkno) PageIsVerifiedExtended((page), (blkno), 0)
#endif

/* n tuples returned by a scan of rel, for its statistics (pgstat_count_heap_getnext n times). */
#if PG_VERSION_NUM >= 160000
#define GpuextTuplesReturned(rel) ((rel)->pgstat_info->counts.tuples_returned)
#else
#define GpuextTuplesReturned(rel) ((rel)->pgstat_info->t_counts.t_tuples_returned)
#endif
#define GpuextCountHeapGetNext(rel, n) \
	do { \
		if (pgstat_should_count_relation(rel)) \
			GpuextTuplesReturned(rel) += (n); \
	} while (0)

#endif							/* GPUEXT_PG_COMPAT_H */
