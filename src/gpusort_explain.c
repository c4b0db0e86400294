/*
 * gpusort_explain.c
 *		EXPLAIN of Custom Scan (GpuSort), in the words and form of Sort's.
 *
 * Sort Key and Bound as Sort prints them; with ANALYZE, "Sort Method" and
 * its memory (Sort Method, Sort Space Used and Sort Space Type outside text)
 * with GpuSort's own figures beside them in the same style: the device
 * memory, where rows past the budget were kept ("Rows Kept"), the key
 * layout, why the CPU sorted ("GPU Fallback") and, with
 * TIMING, the time of each stage.  Under Gather each worker's sort comes
 * back through the parallel query's shared memory and is shown as Sort
 * shows its workers'.
 */
#include "postgres.h"

#include "access/parallel.h"
#include "port/atomics.h"
#include "parser/parsetree.h"
#include "utils/memutils.h"
#include "utils/ruleutils.h"

#include "gpusort.h"

/* "Sort Key" as EXPLAIN prints it for Sort, with DESC and NULLS annotations. */
static void
ExplainSortKeys(GpuSortState *st, List *ancestors, ExplainState *es)
{
	Plan	   *plan = st->css.ss.ps.plan;
	List	   *context = set_deparse_context_plan(es->deparse_cxt, plan, ancestors);
	bool		useprefix = GpuextExplainRtableSize(es) > 1 || es->verbose;
	List	   *keys = NIL;

	for (int i = 0; i < st->spec.nkeys; i++)
	{
		TargetEntry *tle = get_tle_by_resno(plan->targetlist, st->spec.colidx[i]);
		StringInfoData buf;

		initStringInfo(&buf);
		appendStringInfoString(&buf, deparse_expression((Node *) tle->expr, context, useprefix, true));
		if (st->spec.descending[i])
			appendStringInfoString(&buf, " DESC");
		if (st->spec.nullsfirst[i] && !st->spec.descending[i])
			appendStringInfoString(&buf, " NULLS FIRST");
		else if (!st->spec.nullsfirst[i] && st->spec.descending[i])
			appendStringInfoString(&buf, " NULLS LAST");
		keys = lappend(keys, buf.data);
	}
	ExplainPropertyList("Sort Key", keys, es);
}

/* The sort this process ran, as EXPLAIN prints it; unfilled while it has not run. */
static void
FillInfo(GpuSortState *st, GpuSortWorkerInfo *info)
{
	Tuplesortstate *tuplesort = st->cpu.tuplesort;
	TuplesortInstrumentation stats;

	memset(info, 0, sizeof(GpuSortWorkerInfo));
	if (st->cpu.sortstate)
	{
		SortState  *ss = (SortState *) st->cpu.sortstate;

		if (!ss->sort_Done || ss->tuplesortstate == NULL)
			return;
		tuplesort = (Tuplesortstate *) ss->tuplesortstate;
	}
	else if (!st->done)
		return;
	info->filled = true;
	if (tuplesort)
	{
		tuplesort_get_stats(tuplesort, &stats);
		info->method = stats.sortMethod;
		info->space_type = stats.spaceType;
		info->space_kb = stats.spaceUsed;
		return;
	}
	info->on_device = true;
	info->space_type = SORT_SPACE_TYPE_MEMORY;
	if (st->devrows.active)
	{
		info->rows_on_device = true;
		info->space_kb = (int64) (st->devrows.host_peak + 1023) / 1024;
		info->device_kb = (int64) (st->devrows.device_peak + 1023) / 1024;
		info->pinned_kb = (int64) (2 * st->devrows.half_bytes + 1023) / 1024;
		return;
	}
	info->space_kb = (int64) ((st->stream.streamed ? 2 * GPUEXT_STAGING_HALF_BYTES : st->stats.host_bytes) + 1023) / 1024;
	info->device_kb = (int64) (st->stats.device_bytes + 1023) / 1024;
}

/* "Sort Method" and its space as Sort shows them, plus the device memory. */
static void
ShowSortInfo(const GpuSortWorkerInfo *info, ExplainState *es)
{
	const char *method = info->on_device ? "gpu radix" : tuplesort_method_name(info->method);
	const char *space = tuplesort_space_type_name(info->space_type);

	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		GpuextExplainIndent(es);
		appendStringInfo(es->str, "Sort Method: %s  %s: " INT64_FORMAT "kB", method, space, info->space_kb);
		if (info->on_device)
			appendStringInfo(es->str, "  Device Memory: " INT64_FORMAT "kB", info->device_kb);
		appendStringInfoChar(es->str, '\n');
		if (info->rows_on_device)
		{
			GpuextExplainIndent(es);
			appendStringInfo(es->str, "Rows Kept: device memory  Pinned: " INT64_FORMAT "kB\n", info->pinned_kb);
		}
		return;
	}
	ExplainPropertyText("Sort Method", method, es);
	ExplainPropertyInteger("Sort Space Used", "kB", info->space_kb, es);
	ExplainPropertyText("Sort Space Type", space, es);
	if (info->on_device)
		ExplainPropertyInteger("Device Space Used", "kB", info->device_kb, es);
	if (info->rows_on_device)
	{
		ExplainPropertyText("Rows Kept", "device memory", es);
		ExplainPropertyInteger("Pinned Space Used", "kB", info->pinned_kb, es);
	}
}

/*
 * Begin or resume worker n's set-aside group in es->workers_state, whose
 * lines PostgreSQL prints after the node's ("Worker N:" in text, the
 * "Workers" list otherwise).  As explain.c's ExplainOpenWorker and the group
 * helpers it uses, which only 18 exports: the same steps on ExplainState's
 * public fields.
 */
static void
OpenWorker(int n, ExplainState *es)
{
	ExplainWorkersState *wstate = es->workers_state;
	bool		first = !wstate->worker_inited[n];

	wstate->prev_str = es->str;
	if (first)
		initStringInfo(&wstate->worker_str[n]);
	es->str = &wstate->worker_str[n];
	/* One nesting level more than the node's: the group goes inside "Workers". */
	if (es->format == EXPLAIN_FORMAT_JSON || es->format == EXPLAIN_FORMAT_YAML)
		es->grouping_stack = lcons_int(first ? 0 : wstate->worker_state_save[n], es->grouping_stack);
	if (es->format != EXPLAIN_FORMAT_TEXT)
		es->indent += 2;
	if (first)
	{
		if (es->format != EXPLAIN_FORMAT_TEXT)
			ExplainPropertyInteger("Worker Number", NULL, n, es);
		wstate->worker_inited[n] = true;
	}
	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		if (es->str->len == 0)
		{
			GpuextExplainIndent(es);
			appendStringInfo(es->str, "Worker %d:  ", n);
		}
		es->indent++;
	}
}

/* End worker n's group, as explain.c's ExplainCloseWorker. */
static void
CloseWorker(int n, ExplainState *es)
{
	ExplainWorkersState *wstate = es->workers_state;

	if (es->format == EXPLAIN_FORMAT_JSON || es->format == EXPLAIN_FORMAT_YAML)
	{
		wstate->worker_state_save[n] = linitial_int(es->grouping_stack);
		es->grouping_stack = list_delete_first(es->grouping_stack);
	}
	if (es->format != EXPLAIN_FORMAT_TEXT)
		es->indent -= 2;
	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		while (es->str->len > 0 && es->str->data[es->str->len - 1] != '\n')
			es->str->data[--(es->str->len)] = '\0';
		es->indent--;
	}
	es->str = wstate->prev_str;
}

/*
 * The workers' sorts, as show_sort_info prints Sort's: into each worker's
 * group; with the workers hidden (debug_parallel_query = regress), as the
 * node's own lines.
 */
static void
ShowWorkers(GpuSortShared *workers, ExplainState *es)
{
	for (int n = 0; n < workers->num_workers; n++)
	{
		if (!workers->info[n].filled)
			continue;
		if (es->workers_state && n < es->workers_state->num_workers)
			OpenWorker(n, es);
		ShowSortInfo(&workers->info[n], es);
		if (es->workers_state && n < es->workers_state->num_workers)
			CloseWorker(n, es);
	}
}

/* The device sort's key layout and mode, in text on one line. */
static void
ShowDeviceKeys(GpuSortState *st, ExplainState *es)
{
	int			bits = 64 * (st->key.nwords - 1) + st->key.top_bits;

	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		GpuextExplainIndent(es);
		appendStringInfo(es->str, "GPU Keys: %d bit%s in %d word%s%s%s\n",
						 bits, bits == 1 ? "" : "s", st->key.nwords, st->key.nwords == 1 ? "" : "s",
						 st->key.keys_only ? ", rows rebuilt from keys" : "",
						 st->stream.streamed ? ", keys streamed through pinned memory" : "");
		return;
	}
	ExplainPropertyInteger("GPU Key Bits", NULL, bits, es);
	ExplainPropertyInteger("GPU Key Words", NULL, st->key.nwords, es);
	ExplainPropertyBool("Rows Rebuilt From Keys", st->key.keys_only, es);
	ExplainPropertyBool("Keys Streamed", st->stream.streamed, es);
}

/*
 * Time per stage of the run, as the JIT's "Timing" is shown: only under
 * ANALYZE with TIMING.  Emit is the node's own time less the other stages,
 * so that no row pays for clock reads of its own.
 */
static void
ShowStageTiming(GpuSortState *st, ExplainState *es)
{
	const char *sort_label = st->cpu.tuplesort ? "CPU Sort" : "Sort";
	Instrumentation *instr = st->css.ss.ps.instrument;
	double		emit_ms = 0;

	if (instr)
		emit_ms = Max(1000.0 * instr->total - st->stats.store_ms - st->stats.keys_ms -
					  st->stats.transfer_ms - st->stats.sort_ms, 0.0);

	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		GpuextExplainIndent(es);
		appendStringInfo(es->str, "Stage Timing: Read %.3f ms, Keys %.3f ms, Transfer %.3f ms, %s %.3f ms, Emit %.3f ms\n",
						 st->stats.store_ms, st->stats.keys_ms, st->stats.transfer_ms, sort_label,
						 st->stats.sort_ms, emit_ms);
		return;
	}
	ExplainOpenGroup("Stage Timing", "Stage Timing", true, es);
	ExplainPropertyFloat("Read", "ms", st->stats.store_ms, 3, es);
	ExplainPropertyFloat("Keys", "ms", st->stats.keys_ms, 3, es);
	ExplainPropertyFloat("Transfer", "ms", st->stats.transfer_ms, 3, es);
	ExplainPropertyFloat(sort_label, "ms", st->stats.sort_ms, 3, es);
	ExplainPropertyFloat("Emit", "ms", emit_ms, 3, es);
	ExplainCloseGroup("Stage Timing", "Stage Timing", true, es);
}

/*
 * EXPLAIN: the keys and bound; with ANALYZE, the sort method and memory as
 * Sort shows them (the workers' too), why the CPU sorted when it did, how
 * the input was read, and with TIMING the time of each stage.
 */
void
GpuSortExplain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuSortState *st = (GpuSortState *) node;
	GpuSortWorkerInfo info;

	ExplainSortKeys(st, ancestors, es);
	if (st->spec.bound >= 0)
		ExplainPropertyInteger("Bound", NULL, st->spec.bound, es);
	if (!es->analyze)
		return;
	FillInfo(st, &info);
	if (info.filled)
		ShowSortInfo(&info, es);
	if (info.filled && info.on_device)
		ShowDeviceKeys(st, es);
	if (st->cpu.fallback)
		ExplainPropertyText("GPU Fallback", st->cpu.fallback, es);
	if (st->input.direct && st->done)
		ExplainPropertyText("Input", "heap pages read in place", es);
	if (es->timing && st->done && st->cpu.sortstate == NULL)
		ShowStageTiming(st, es);
	if (st->workers)
		ShowWorkers(st->workers, es);
}

/*
 * Under Gather the plan marks GpuSort parallel-aware only to be given shared
 * memory for its workers' figures: it does not split its work.  The leader
 * shows it as planned from a copy of its plan without the mark, once the
 * shared memory is set up (or when it never will be).
 */
void
GpuSortHideParallel(GpuSortState *st)
{
	Plan	   *plan = st->css.ss.ps.plan;
	CustomScan *copy;

	if (!plan->parallel_aware)
		return;
	copy = palloc(sizeof(CustomScan));
	memcpy(copy, plan, sizeof(CustomScan));
	copy->scan.plan.parallel_aware = false;
	st->css.ss.ps.plan = (Plan *) copy;
}

/* Shared memory for the workers' figures. */
Size
GpuSortEstimateDSM(CustomScanState *node, ParallelContext *pcxt)
{
	return add_size(offsetof(GpuSortShared, info),
					mul_size(pcxt->nworkers, sizeof(GpuSortWorkerInfo)));
}

/* Leader: clear the workers' figures. */
void
GpuSortInitializeDSM(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	GpuSortState *st = (GpuSortState *) node;

	st->shared = (GpuSortShared *) coordinate;
	memset(st->shared, 0, GpuSortEstimateDSM(node, pcxt));
	st->shared->num_workers = pcxt->nworkers;
	GpuSortHideParallel(st);
}

/* Worker: where to leave its figures. */
void
GpuSortInitializeWorker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	((GpuSortState *) node)->shared = (GpuSortShared *) coordinate;
}

/*
 * A worker leaves its figures in shared memory before it detaches from its
 * tuple queue; the leader shuts down once every worker has, and copies them
 * before Gather frees the shared memory.
 */
void
GpuSortShutdown(CustomScanState *node)
{
	GpuSortState *st = (GpuSortState *) node;
	Size		bytes;

	if (st->shared && IsParallelWorker())
	{
		if (ParallelWorkerNumber < st->shared->num_workers)
			FillInfo(st, &st->shared->info[ParallelWorkerNumber]);
		pg_write_barrier();
		return;
	}
	if (st->shared)
	{
		pg_read_barrier();
		bytes = offsetof(GpuSortShared, info) + st->shared->num_workers * sizeof(GpuSortWorkerInfo);
		st->workers = MemoryContextAlloc(node->ss.ps.state->es_query_cxt, bytes);
		memcpy(st->workers, st->shared, bytes);
		st->shared = NULL;
	}
	GpuSortHideParallel(st);
}
