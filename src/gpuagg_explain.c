/*
 * gpuagg_explain.c
 *		EXPLAIN of Custom Scan (GpuAgg): the GROUP BY keys, the WHERE clause
 *		(Scan Filter; HAVING is the node's Filter), the aggregates, the
 *		workers planned; with ANALYZE the workers launched, the rows read and passed (with VERBOSE, those read in
 *		place), the groups, the batches reduced on
 *		the device and on the CPU, why values went to the CPU, and with TIMING
 *		the time of the scan and of the device calls.
 */
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "utils/ruleutils.h"

#include "gpuagg.h"

/* "Group Key" and "Aggregates" as lists, and "Scan Filter" as a scan shows its Filter. */
static void
ExplainExprs(GpuAggState *st, List *ancestors, ExplainState *es)
{
	CustomScan *cscan = (CustomScan *) st->css.ss.ps.plan;
	List	   *quals = linitial(cscan->custom_exprs);
	List	   *context = set_deparse_context_plan(es->deparse_cxt, &cscan->scan.plan, ancestors);
	bool		useprefix = GpuextExplainRtableSize(es) > 1 || es->verbose;
	List	   *aggs = NIL;
	List	   *keys = NIL;
	ListCell   *lc;

	foreach(lc, cscan->custom_scan_tlist)
	{
		int			i = foreach_current_index(lc);

		if (i >= st->naggs && i < st->naggs + st->groups.nkeys)
			keys = lappend(keys, deparse_expression((Node *) lfirst_node(TargetEntry, lc)->expr,
													context, useprefix, false));
	}
	if (keys != NIL)
		ExplainPropertyList("Group Key", keys, es);
	if (quals != NIL)
		ExplainPropertyText("Scan Filter",
							deparse_expression((Node *) make_ands_explicit(quals), context, useprefix, false),
							es);
	foreach(lc, cscan->custom_scan_tlist)
	{
		if (foreach_current_index(lc) >= st->naggs)
			break;
		aggs = lappend(aggs, deparse_expression((Node *) lfirst_node(TargetEntry, lc)->expr,
												context, useprefix, false));
	}
	ExplainPropertyList("Aggregates", aggs, es);
}

/* The time of the scan (with the CPU's share of the reduction) and of the device calls. */
static void
ShowTiming(GpuAggState *st, ExplainState *es)
{
	double		scan_ms = Max(st->stats.total_ms - st->stats.device_ms, 0.0);

	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		GpuextExplainIndent(es);
		appendStringInfo(es->str, "Stage Timing: Scan %.3f ms, Device %.3f ms\n", scan_ms, st->stats.device_ms);
		return;
	}
	ExplainOpenGroup("Stage Timing", "Stage Timing", true, es);
	ExplainPropertyFloat("Scan", "ms", scan_ms, 3, es);
	ExplainPropertyFloat("Device", "ms", st->stats.device_ms, 3, es);
	ExplainCloseGroup("Stage Timing", "Stage Timing", true, es);
}

/*
 * EXPLAIN: the filter and the aggregates; with ANALYZE (once the node ran)
 * its rows, groups, spilled rows, batches and fallback, summed over its
 * runs, and with TIMING the stage times.
 */
void
GpuAggExplain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GpuAggState *st = (GpuAggState *) node;

	ExplainExprs(st, ancestors, es);
	if (st->workers.nworkers > 0)
		ExplainPropertyInteger("Workers Planned", NULL, st->workers.nworkers, es);
	if (!es->analyze || st->stats.runs == 0)
		return;
	if (st->workers.nworkers > 0)
		ExplainPropertyInteger("Workers Launched", NULL, st->stats.workers_launched, es);
	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		GpuextExplainIndent(es);
		appendStringInfo(es->str, "Rows Read: " INT64_FORMAT "  Rows Passed: " INT64_FORMAT,
						 st->stats.rows_read, st->stats.rows_passed);
		if (es->verbose)
			appendStringInfo(es->str, "  Rows In Place: " INT64_FORMAT, st->stats.rows_in_place);
		if (st->groups.nkeys > 0)
			appendStringInfo(es->str, "  Groups: " INT64_FORMAT, st->stats.groups);
		if (st->stats.grown_slots > 0)
			appendStringInfo(es->str, " (device table grown to %u slots after " INT64_FORMAT " blocks)",
							 st->stats.grown_slots, st->stats.grown_after);
		if (es->verbose && st->groups.nhaving > 0)
			appendStringInfo(es->str, "  Rejected Early by HAVING: " INT64_FORMAT, st->stats.having_rejected);
		appendStringInfo(es->str, "  Batches: " INT64_FORMAT " on device, " INT64_FORMAT " on CPU\n",
						 st->stats.device_batches, st->stats.cpu_batches);
		if (st->stats.rows_spilled > 0)
		{
			GpuextExplainIndent(es);
			appendStringInfo(es->str, "Rows Spilled: " INT64_FORMAT "  Spill Partitions: " INT64_FORMAT "\n",
							 st->stats.rows_spilled, st->stats.spill_partitions);
		}
		if (st->stats.device_blocks + st->stats.device_cpu_tuples > 0)
		{
			GpuextExplainIndent(es);
			appendStringInfo(es->str, "Device Scan: " INT64_FORMAT " blocks (%.1f MB), " INT64_FORMAT
							 " tuples decoded on device, " INT64_FORMAT " on CPU\n", st->stats.device_blocks,
							 st->stats.device_blocks * (double) BLCKSZ / (1024.0 * 1024.0), st->stats.device_tuples,
							 st->stats.device_cpu_tuples);
		}
		if (es->verbose && st->stats.pages_from_files + st->stats.pages_from_buffers > 0)
		{
			GpuextExplainIndent(es);
			appendStringInfo(es->str, "Heap Blocks: files=" INT64_FORMAT " buffers=" INT64_FORMAT,
							 st->stats.pages_from_files, st->stats.pages_from_buffers);
			if (st->stats.pages_in_place > 0 || st->stats.pages_hinted > 0)
			{
				appendStringInfoString(es->str, " (");
				if (st->stats.pages_in_place > 0)
					appendStringInfo(es->str, INT64_FORMAT " read by the device in place (" INT64_FORMAT " whole)%s",
									 st->stats.pages_in_place, st->stats.pages_whole, st->stats.pages_hinted > 0 ? ", " : "");
				if (st->stats.pages_hinted > 0)
					appendStringInfo(es->str, INT64_FORMAT " where the last scan found them", st->stats.pages_hinted);
				appendStringInfoChar(es->str, ')');
			}
			appendStringInfoChar(es->str, '\n');
		}
	}
	else
	{
		ExplainPropertyInteger("Rows Read", NULL, st->stats.rows_read, es);
		ExplainPropertyInteger("Rows Passed", NULL, st->stats.rows_passed, es);
		if (es->verbose)
			ExplainPropertyInteger("Rows In Place", NULL, st->stats.rows_in_place, es);
		if (st->groups.nkeys > 0)
			ExplainPropertyInteger("Groups", NULL, st->stats.groups, es);
		if (st->stats.grown_slots > 0)
		{
			ExplainPropertyInteger("Device Table Grown To", "slots", st->stats.grown_slots, es);
			ExplainPropertyInteger("Device Table Grown After", "blocks", st->stats.grown_after, es);
		}
		if (es->verbose && st->groups.nhaving > 0)
			ExplainPropertyInteger("Rejected Early by HAVING", NULL, st->stats.having_rejected, es);
		if (st->stats.rows_spilled > 0)
		{
			ExplainPropertyInteger("Rows Spilled", NULL, st->stats.rows_spilled, es);
			ExplainPropertyInteger("Spill Partitions", NULL, st->stats.spill_partitions, es);
		}
		if (es->verbose)
		{
			ExplainPropertyInteger("Heap Blocks From Files", NULL, st->stats.pages_from_files, es);
			ExplainPropertyInteger("Heap Blocks Through Buffers", NULL, st->stats.pages_from_buffers, es);
			ExplainPropertyInteger("Heap Blocks Read In Place", NULL, st->stats.pages_in_place, es);
			ExplainPropertyInteger("Heap Blocks Taken Whole", NULL, st->stats.pages_whole, es);
			ExplainPropertyInteger("Heap Blocks Where Last Found", NULL, st->stats.pages_hinted, es);
		}
		if (st->stats.device_blocks + st->stats.device_cpu_tuples > 0)
		{
			ExplainPropertyInteger("Device Scan Blocks", NULL, st->stats.device_blocks, es);
			ExplainPropertyInteger("Tuples Decoded On Device", NULL, st->stats.device_tuples, es);
			ExplainPropertyInteger("Tuples Decoded On CPU", NULL, st->stats.device_cpu_tuples, es);
		}
		ExplainPropertyInteger("Device Batches", NULL, st->stats.device_batches, es);
		ExplainPropertyInteger("CPU Batches", NULL, st->stats.cpu_batches, es);
	}
	if (st->stats.fallback)
		ExplainPropertyText("GPU Fallback", st->stats.fallback, es);
	if (es->timing)
		ShowTiming(st, es);
}
