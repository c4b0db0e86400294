/*
 * gpuagg_parallel.c
 *		GpuAgg with parallel workers: the node launches them itself (a
 *		ParallelContext, as a parallel index build does); each reads blocks of
 *		the table through one shared parallel scan into its own exact states
 *		and sends them to the leader, which reads blocks too and merges them.
 *
 * The plan travels as a string; a worker builds the node's state from it
 * over an executor state of its own and reduces its rows as the node does:
 * without GROUP BY into its accumulators, with GROUP BY into groups (on
 * the device only through the GPU service), which end in host memory.  It
 * sends, through its own message queue, chunks of groups (each group's
 * rows, per input its count or settled state, then its keys), then its
 * totals and, without GROUP BY, its accumulators.  Sums are exact, so the
 * merged results have the bits one process would get, whatever the number
 * of workers.  A
 * worker's ERROR is raised in the leader as Gather raises it; on an ERROR
 * the context goes with the transaction.  A worker that lost the device
 * (auto) sends no groups, and the leader runs the query again on the CPU.
 *
 * The buffer hints of the table's blocks (gpuagg_pages.c) are shared too:
 * the leader's own where the table is its last one read, which every
 * process reads and updates for the blocks it reads, and the leader keeps
 * when the run is over, so that the next run, parallel or not, finds every
 * block where the last one did.
 */
#include "postgres.h"

#include "access/relscan.h"
#include "access/table.h"
#include "access/xact.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "storage/bufmgr.h"
#include "storage/shm_mq.h"
#include "storage/shm_toc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "gpuagg.h"

#define KEY_SHARED	UINT64CONST(0xE6A6A66000000001)
#define KEY_PLAN	UINT64CONST(0xE6A6A66000000002)
#define KEY_QUEUES	UINT64CONST(0xE6A6A66000000003)
#define KEY_HINTS	UINT64CONST(0xE6A6A66000000004)

/* Each worker's message queue, and the chunks of groups it sends. */
#define QUEUE_BYTES ((Size) 1 << 20)
#define CHUNK_BYTES ((Size) 1 << 16)

#define MSG_GROUPS 1
#define MSG_TOTALS 2

/*
 * One group in a chunk: the record's bytes, where its keys start, its rows;
 * then per input its count (of values, or a numeric's NaNs), its
 * accumulator (numeric on the CPU: length, then bytes) or its state; then
 * its keys.
 */
typedef struct GroupRecord
{
	uint32		len;
	uint32		keys_off;
	int64		rows;
} GroupRecord;

/* What the leader shares with its workers: the table, its blocks' buffer hints (KEY_HINTS), then its parallel scan. */
typedef struct GpuAggShared
{
	Oid			relid;
	BlockNumber hints_n;
} GpuAggShared;

#define SHARED_SCAN(sh) ((ParallelTableScanDesc) ((char *) (sh) + BUFFERALIGN(sizeof(GpuAggShared))))

/* A worker's last message, then per input its count and, with a type and no GROUP BY, its accumulator. */
typedef struct WorkerTotals
{
	int64		tag;
	int64		rows_read;
	int64		rows_passed;
	int64		rows_in_place;
	int64		pages_from_files;
	int64		pages_from_buffers;
	int64		pages_in_place;
	int64		pages_whole;
	int64		pages_hinted;
	int64		device_batches;
	int64		cpu_batches;
	int64		device_blocks;
	int64		device_tuples;
	int64		device_cpu_tuples;
	bool		device_lost;	/* the worker's groups were lost with the device: no groups sent */
	char		fallback[96];
} WorkerTotals;

/* Launch the workers of a run and set up the scan they share with the leader. */
void
GpuAggParallelStart(GpuAggState *st)
{
	EState	   *estate = st->css.ss.ps.state;
	Relation	rel = st->css.ss.ss_currentRelation;
	char	   *plan = nodeToString(st->css.ss.ps.plan);
	Size		shared_bytes = BUFFERALIGN(sizeof(GpuAggShared)) + table_parallelscan_estimate(rel, estate->es_snapshot);
	BlockNumber hints_n = GpuAggPagesHintsFit(rel, RelationGetNumberOfBlocks(rel));
	ParallelContext *pcxt;
	GpuAggShared *shared;
	char	   *space;

	EnterParallelMode();
	pcxt = CreateParallelContext("gpuext", "GpuAggWorkerMain", st->workers.nworkers);
	shm_toc_estimate_chunk(&pcxt->estimator, shared_bytes);
	shm_toc_estimate_chunk(&pcxt->estimator, strlen(plan) + 1);
	shm_toc_estimate_chunk(&pcxt->estimator, mul_size(QUEUE_BYTES, st->workers.nworkers));
	shm_toc_estimate_chunk(&pcxt->estimator, sizeof(Buffer) * (Size) hints_n);
	shm_toc_estimate_keys(&pcxt->estimator, 4);
	InitializeParallelDSM(pcxt);

	shared = shm_toc_allocate(pcxt->toc, shared_bytes);
	shared->relid = RelationGetRelid(rel);
	shared->hints_n = hints_n;
	table_parallelscan_initialize(rel, SHARED_SCAN(shared), estate->es_snapshot);
	shm_toc_insert(pcxt->toc, KEY_SHARED, shared);
	/* the leader's hints for the table, which every process reads and updates, and the leader keeps */
	st->workers.hints = NULL;
	st->workers.hints_n = 0;
	if (hints_n > 0)
	{
		st->workers.hints = shm_toc_allocate(pcxt->toc, sizeof(Buffer) * (Size) hints_n);
		st->workers.hints_n = hints_n;
		GpuAggPagesHintsCopy(rel, st->workers.hints, hints_n, false);
		shm_toc_insert(pcxt->toc, KEY_HINTS, st->workers.hints);
	}
	space = shm_toc_allocate(pcxt->toc, strlen(plan) + 1);
	strcpy(space, plan);
	shm_toc_insert(pcxt->toc, KEY_PLAN, space);
	space = shm_toc_allocate(pcxt->toc, mul_size(QUEUE_BYTES, st->workers.nworkers));
	shm_toc_insert(pcxt->toc, KEY_QUEUES, space);
	st->workers.queues = palloc0(sizeof(shm_mq_handle *) * st->workers.nworkers);
	for (int i = 0; i < pcxt->nworkers; i++)
	{
		shm_mq	   *mq = shm_mq_create(space + i * QUEUE_BYTES, QUEUE_BYTES);

		shm_mq_set_receiver(mq, MyProc);
		st->workers.queues[i] = shm_mq_attach(mq, pcxt->seg, NULL);
	}
	LaunchParallelWorkers(pcxt);
	for (int i = 0; i < pcxt->nworkers_launched; i++)
		shm_mq_set_handle(st->workers.queues[i], pcxt->worker[i].bgwhandle);
	st->workers.pcxt = pcxt;
	st->workers.pscan = SHARED_SCAN(shared);
	st->workers.leader_scans = parallel_leader_participation || pcxt->nworkers_launched == 0;
	st->stats.workers_launched += pcxt->nworkers_launched;
}

/* The group number, in the leader, of keys a worker sent. */
static uint32
LeaderGroup(GpuAggState *st, MinimalTuple keys)
{
	TupleTableSlot *ks = st->groups.keyslot;

	ExecStoreMinimalTuple(keys, st->groups.groupslot, false);
	slot_getallattrs(st->groups.groupslot);
	ExecClearTuple(ks);
	memcpy(ks->tts_values, st->groups.groupslot->tts_values, sizeof(Datum) * st->groups.nkeys);
	memcpy(ks->tts_isnull, st->groups.groupslot->tts_isnull, sizeof(bool) * st->groups.nkeys);
	ExecStoreVirtualTuple(ks);
	return GpuAggGroupLookup(st);
}

/* Merge an accumulator a worker sent (its length, then its bytes) into dst; where the next field starts. */
static const char *
MergeAccum(GpuextAccum *dst, const char *p, const char *end)
{
	int64		len = *(const int64 *) p;
	GpuextAccum acc;

	p += sizeof(int64);
	if (len < (int64) sizeof(GpuextAccum) || len > end - p)
		elog(ERROR, "gpuext: bad accumulator from a GpuAgg worker");
	memcpy(&acc, p, sizeof(GpuextAccum));
	GpuextNumericSerialRead(&acc, p + sizeof(GpuextAccum), len - sizeof(GpuextAccum));
	GpuextAccumAttach(&acc);
	GpuextAccumMerge(dst, &acc);
	return p + MAXALIGN(len);
}

/* Merge a chunk of a worker's groups into the leader's. */
static void
MergeGroups(GpuAggState *st, const char *p, const char *end)
{
	while (p < end)
	{
		const GroupRecord *rec = (const GroupRecord *) p;
		const char *q = p + sizeof(GroupRecord);
		uint32		g;

		if (rec->len < sizeof(GroupRecord) || rec->keys_off >= rec->len || rec->len > end - p)
			elog(ERROR, "gpuext: bad group record from a GpuAgg worker");
		g = LeaderGroup(st, (MinimalTuple) (p + rec->keys_off));
		st->groups.group_rows[g] += rec->rows;
		for (int i = 0; i < st->ninputs; i++)
		{
			GpuAggInput *in = &st->inputs[i];

			if (in->group_counts)
			{
				in->group_counts[g] += *(const int64 *) q;
				q += sizeof(int64);
			}
			if (in->group_accs)
				q = MergeAccum(&in->group_accs[g], q, p + rec->len);
			else if (in->type != NULL)
				q += GpuAggGroupMerge(st, in, g, (const GpuextGroupState *) q);
		}
		p += rec->len;
	}
}

/* Merge a worker's totals, and without GROUP BY its accumulators, into the leader's. */
static void
MergeTotals(GpuAggState *st, const char *p, const char *end)
{
	const WorkerTotals *t = (const WorkerTotals *) p;

	st->stats.rows_read += t->rows_read;
	st->stats.rows_passed += t->rows_passed;
	st->stats.rows_in_place += t->rows_in_place;
	st->stats.pages_from_files += t->pages_from_files;
	st->stats.pages_from_buffers += t->pages_from_buffers;
	st->stats.pages_in_place += t->pages_in_place;
	st->stats.pages_whole += t->pages_whole;
	st->stats.pages_hinted += t->pages_hinted;
	st->stats.device_batches += t->device_batches;
	st->stats.cpu_batches += t->cpu_batches;
	st->stats.device_blocks += t->device_blocks;
	st->stats.device_tuples += t->device_tuples;
	st->stats.device_cpu_tuples += t->device_cpu_tuples;
	if (t->device_lost)
		st->device_lost = true;
	if (t->fallback[0] != '\0' && st->stats.fallback == NULL)
		st->stats.fallback = MemoryContextStrdup(st->nodecxt, t->fallback);
	p += MAXALIGN(sizeof(WorkerTotals));
	for (int i = 0; i < st->ninputs && st->groups.nkeys == 0; i++)
	{
		GpuAggInput *in = &st->inputs[i];

		in->count += *(const int64 *) p;
		p += sizeof(int64);
		if (in->type != NULL)
			p = MergeAccum(in->acc, p, end);
	}
}

/*
 * After the leader's own share: merge every worker's results as they come,
 * then let the workers go and leave parallel mode.
 */
void
GpuAggParallelFinish(GpuAggState *st)
{
	ParallelContext *pcxt = st->workers.pcxt;
	int			totals = 0;

	for (int i = 0; i < pcxt->nworkers_launched; i++)
	{
		for (;;)
		{
			Size		nbytes;
			void	   *data;

			if (shm_mq_receive(st->workers.queues[i], &nbytes, &data, false) != SHM_MQ_SUCCESS)
				break;
			if (nbytes < sizeof(int64))
				elog(ERROR, "gpuext: short message from a GpuAgg worker");
			/* once the device is lost the run starts again on the CPU: groups are only drained */
			if (*(int64 *) data == MSG_GROUPS && st->device_lost)
				continue;
			if (*(int64 *) data == MSG_GROUPS)
				MergeGroups(st, (char *) data + sizeof(int64), (char *) data + nbytes);
			else
			{
				MergeTotals(st, data, (char *) data + nbytes);
				totals++;
			}
		}
	}
	WaitForParallelWorkersToFinish(pcxt);
	if (totals != pcxt->nworkers_launched)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("a GpuAgg parallel worker ended without its results")));
	if (st->workers.hints != NULL)
		GpuAggPagesHintsCopy(st->css.ss.ss_currentRelation, st->workers.hints, st->workers.hints_n, true);
	st->workers.hints = NULL;
	st->workers.hints_n = 0;
	for (int i = 0; i < pcxt->nworkers; i++)
		shm_mq_detach(st->workers.queues[i]);
	DestroyParallelContext(pcxt);
	st->workers.pcxt = NULL;
	st->workers.pscan = NULL;
	ExitParallelMode();
}

/* Send what a buffer holds as one message, and empty it. */
static void
Send(shm_mq_handle *mqh, StringInfo buf)
{
	if (shm_mq_send(mqh, buf->len, buf->data, false, true) != SHM_MQ_SUCCESS)
		ereport(ERROR,
				(errcode(ERRCODE_ADMIN_SHUTDOWN),
				 errmsg("the GpuAgg leader is gone")));
	resetStringInfo(buf);
}

/* Pad a buffer to MAXALIGN. */
static void
PadBuffer(StringInfo buf)
{
	static const char zeros[MAXIMUM_ALIGNOF] = {0};

	appendBinaryStringInfo(buf, zeros, MAXALIGN(buf->len) - buf->len);
}

/* An accumulator as MergeAccum reads it. */
static void
AppendAccum(StringInfo buf, const GpuextAccum *acc)
{
	int64		len = sizeof(GpuextAccum) + GpuextNumericSerialSize(acc);
	int			start;

	appendBinaryStringInfo(buf, (const char *) &len, sizeof(int64));
	start = buf->len;
	enlargeStringInfo(buf, len);
	memcpy(buf->data + start, acc, sizeof(GpuextAccum));
	GpuextNumericSerialWrite(acc, buf->data + start + sizeof(GpuextAccum));
	buf->len += len;
	PadBuffer(buf);
}

/* A worker's groups, in chunks, to the leader. */
static void
SendGroups(GpuAggState *st, shm_mq_handle *mqh, StringInfo buf)
{
	int64		tag = MSG_GROUPS;

	for (uint32 g = 0; g < st->groups.ngroups; g++)
	{
		GroupRecord rec;
		int			start;
		MinimalTuple keys = st->groups.group_keys[g];

		if (buf->len == 0)
			appendBinaryStringInfo(buf, (const char *) &tag, sizeof(tag));
		start = buf->len;
		rec.rows = st->groups.group_rows[g];
		appendBinaryStringInfo(buf, (const char *) &rec, sizeof(rec));
		for (int i = 0; i < st->ninputs; i++)
		{
			GpuAggInput *in = &st->inputs[i];
			size_t		bytes;
			const GpuextGroupState *s;

			if (in->group_counts)
				appendBinaryStringInfo(buf, (const char *) &in->group_counts[g], sizeof(int64));
			if (in->group_accs)
				AppendAccum(buf, &in->group_accs[g]);
			else if (in->type != NULL)
			{
				s = GpuAggGroupState(in, g, &bytes);
				appendBinaryStringInfo(buf, (const char *) s, bytes);
			}
		}
		PadBuffer(buf);
		rec.keys_off = buf->len - start;
		appendBinaryStringInfo(buf, (const char *) keys, keys->t_len);
		PadBuffer(buf);
		rec.len = buf->len - start;
		memcpy(buf->data + start, &rec, sizeof(rec));
		if (buf->len >= CHUNK_BYTES)
			Send(mqh, buf);
	}
	if (buf->len > 0)
		Send(mqh, buf);
}

/* A worker's totals, and without GROUP BY its accumulators, to the leader. */
static void
SendTotals(GpuAggState *st, shm_mq_handle *mqh, StringInfo buf)
{
	WorkerTotals t;

	memset(&t, 0, sizeof(t));
	t.tag = MSG_TOTALS;
	t.rows_read = st->stats.rows_read;
	t.rows_passed = st->stats.rows_passed;
	t.rows_in_place = st->stats.rows_in_place;
	t.pages_from_files = st->stats.pages_from_files;
	t.pages_from_buffers = st->stats.pages_from_buffers;
	t.pages_in_place = st->stats.pages_in_place;
	t.pages_whole = st->stats.pages_whole;
	t.pages_hinted = st->stats.pages_hinted;
	t.device_batches = st->stats.device_batches;
	t.cpu_batches = st->stats.cpu_batches;
	t.device_blocks = st->stats.device_blocks;
	t.device_tuples = st->stats.device_tuples;
	t.device_cpu_tuples = st->stats.device_cpu_tuples;
	t.device_lost = st->device_lost;
	if (st->stats.fallback)
		strlcpy(t.fallback, st->stats.fallback, sizeof(t.fallback));
	appendBinaryStringInfo(buf, (const char *) &t, sizeof(t));
	PadBuffer(buf);
	for (int i = 0; i < st->ninputs && st->groups.nkeys == 0; i++)
	{
		GpuAggInput *in = &st->inputs[i];

		appendBinaryStringInfo(buf, (const char *) &in->count, sizeof(int64));
		if (in->type != NULL)
			AppendAccum(buf, in->acc);
	}
	Send(mqh, buf);
}

/*
 * A parallel worker: build the node from the plan over the shared scan,
 * reduce this worker's blocks, and send the results to the leader.
 */
void
GpuAggWorkerMain(dsm_segment *seg, shm_toc *toc)
{
	GpuAggShared *shared = shm_toc_lookup(toc, KEY_SHARED, false);
	CustomScan *cscan = stringToNode(shm_toc_lookup(toc, KEY_PLAN, false));
	char	   *queues = shm_toc_lookup(toc, KEY_QUEUES, false);
	shm_mq	   *mq = (shm_mq *) (queues + ParallelWorkerNumber * QUEUE_BYTES);
	shm_mq_handle *mqh;
	EState	   *estate;
	GpuAggState *st;
	Relation	rel;
	StringInfoData buf;
	MemoryContext old;

	shm_mq_set_sender(mq, MyProc);
	mqh = shm_mq_attach(mq, seg, NULL);
	rel = table_open(shared->relid, AccessShareLock);
	estate = CreateExecutorState();
	estate->es_snapshot = GetActiveSnapshot();

	/* As ExecInitCustomScan sets the node up, without its output */
	st = (GpuAggState *) GpuAggCreateState(cscan);
	st->css.ss.ps.plan = &cscan->scan.plan;
	st->css.ss.ps.state = estate;
	ExecAssignExprContext(estate, &st->css.ss.ps);
	st->css.ss.ss_currentRelation = rel;
	ExecInitScanTupleSlot(estate, &st->css.ss, ExecTypeFromTL(cscan->custom_scan_tlist), &TTSOpsVirtual);
	st->css.methods->BeginCustomScan(&st->css, estate, 0);
	st->workers.pscan = SHARED_SCAN(shared);
	st->workers.hints = shm_toc_lookup(toc, KEY_HINTS, true);
	st->workers.hints_n = st->workers.hints != NULL ? shared->hints_n : 0;

	old = MemoryContextSwitchTo(st->runcxt);
	GpuAggWorkerScan(st);
	initStringInfo(&buf);
	if (st->groups.nkeys > 0 && !st->device_lost)
		SendGroups(st, mqh, &buf);
	SendTotals(st, mqh, &buf);
	MemoryContextSwitchTo(old);

	st->css.methods->EndCustomScan(&st->css);
	ExecResetTupleTable(estate->es_tupleTable, false);
	FreeExecutorState(estate);
	table_close(rel, AccessShareLock);
	shm_mq_detach(mqh);
}
