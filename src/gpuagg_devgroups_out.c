/*
 * gpuagg_devgroups_out.c
 *		GpuAgg's device scan under GROUP BY, its groups' keys made again from
 *		their key images; and where the device numbered the groups, the
 *		groups read back from device memory a chunk at a time as they are
 *		returned.
 *
 * Where the groups are numbered on the device (gpuagg_devgroups.c), no
 * host memory holds a group during the scan: the table of key images, the
 * list of each group's image, its counts and its aggregates' states stay in
 * device memory, as GpuSort keeps its rows there past work_mem.  They are
 * read back GPUAGG_DEVGROUPS_CHUNK groups at a time: the images, the
 * counts, and each input's results reduced from its states.  The first
 * chunk is read before any group is returned, so that a device lost there
 * (auto) lets the run start again on the CPU; one lost later is an error.
 */
#include "postgres.h"

#include "executor/executor.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "gpuagg.h"

/*
 * A key's value for the rows whose column att holds value (NULL where
 * isnull): the key's own expression on a row holding that value alone.
 */
static Datum
KeyFromColumn(GpuAggState *st, int k, AttrNumber att, Datum value, bool *isnull)
{
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	TupleTableSlot *saved = econtext->ecxt_scantuple;
	TupleTableSlot *row = st->dev.key_row;

	if (row == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(st->css.ss.ps.state->es_query_cxt);

		row = st->dev.key_row = ExecInitExtraTupleSlot(st->css.ss.ps.state,
													   RelationGetDescr(st->css.ss.ss_currentRelation),
													   &TTSOpsVirtual);
		MemoryContextSwitchTo(old);
	}
	ExecClearTuple(row);
	memset(row->tts_isnull, true, sizeof(bool) * row->tts_tupleDescriptor->natts);
	row->tts_values[att - 1] = value;
	row->tts_isnull[att - 1] = *isnull;
	ExecStoreVirtualTuple(row);
	econtext->ecxt_scantuple = row;
	value = ExecEvalExpr(st->groups.key_exprs[k], econtext, isnull);
	econtext->ecxt_scantuple = saved;
	return value;
}

/*
 * The value a key's part of a key image holds (b at its tag byte): the
 * column's value (or a date or timestamp standing for the key's), or for a
 * modulus the key's own; in the current memory context.
 */
static Datum
ImageValue(const GpuextScanKey *key, Form_pg_attribute attr, const unsigned char *b)
{
	int64		word = 0;

	if (key->trunc != GPUEXT_SCAN_TRUNC_NONE)
	{
		memcpy(&word, b + 1, key->width);
		if (!key->micros)
			return DateADTGetDatum((int32) word);
		if (key->width == 4)
			word = (int32) word == PG_INT32_MIN ? DT_NOBEGIN : (int32) word == PG_INT32_MAX ? DT_NOEND :
				(int64) (int32) word * gpuext_scan_unit_scale(key->trunc, 1);
		return TimestampGetDatum(word);
	}
	if (attr->attlen > 0 && attr->attbyval)
	{
		memcpy(&word, b + 1, attr->attlen);
		return fetch_att(&word, true, attr->attlen);
	}
	if (attr->attlen > 0)
	{
		char	   *copy = palloc(attr->attlen);

		memcpy(copy, b + 1, attr->attlen);
		return PointerGetDatum(copy);
	}
	return PointerGetDatum(cstring_to_text_with_len((const char *) b + 1, b[0] - 1));
}

/* The node's keys of a key image (its bytes at image) into values and isnull, in the current memory context. */
void
GpuAggDevGroupKeys(GpuAggState *st, const GpuextScanProgram *p, const unsigned char *image, Datum *values,
				   bool *isnull)
{
	TupleDesc	reldesc = RelationGetDescr(st->css.ss.ss_currentRelation);
	TupleDesc	keydesc = st->groups.keyslot->tts_tupleDescriptor;

	for (int k = 0; k < p->nkeys; k++)
	{
		const GpuextScanKey *key = &p->keys[k];
		AttrNumber	att = p->cols[key->col].att + 1;
		bool		null = image[key->at] == 0;
		Datum		value = 0;

		/* a modulus's image holds the key (the column's type) */
		if (!null)
			value = ImageValue(key, key->modulus > 0 ? TupleDescAttr(keydesc, k) : TupleDescAttr(reldesc, att - 1),
							   image + key->at);
		if (st->groups.key_exprs[k] != NULL && key->modulus == 0)
			value = KeyFromColumn(st, k, att, value, &null);
		values[k] = value;
		isnull[k] = null;
	}
}

typedef struct ChunkJob
{
	GpuAggDevScan *ds;
	uint32		first;
	uint32		n;
} ChunkJob;

/* The pinned buffer's chunk: the groups' key images, then each counter's counts. */
static inline GpuextScanNewGroup *
ChunkImages(GpuAggDevScan *ds)
{
	return (GpuextScanNewGroup *) ds->gback->ptr;
}

static inline uint64 *
ChunkCounts(GpuAggDevScan *ds, int c)
{
	return (uint64 *) (ds->gback->ptr + sizeof(GpuextScanNewGroup) * GPUAGG_DEVGROUPS_CHUNK) +
		(size_t) c * GPUAGG_DEVGROUPS_CHUNK;
}

/* A chunk's key images and per-group counts from device memory into the pinned buffer. */
static bool
ChunkDown(ChunkJob *job)
{
	GpuAggDevScan *ds = job->ds;
	const GpuextScanProgram *p = (const GpuextScanProgram *) ds->prog->ptr;
	char	   *outs = ds->device->ptr + ds->outs_off;

	GpuextCheck(gpuext_cuda_copy_to_host((char *) ChunkImages(ds),
										 outs + p->new_offset + sizeof(GpuextScanNewGroup) * job->first,
										 sizeof(GpuextScanNewGroup) * job->n), "copy to host");
	for (int c = 0; c < p->ncounters; c++)
		GpuextCheck(gpuext_cuda_copy_to_host((char *) ChunkCounts(ds, c),
											 outs + p->counts_offset +
											 sizeof(uint64) * ((size_t) c * p->table_cap + job->first),
											 sizeof(uint64) * job->n), "copy to host");
	GpuAggDevScanWait(ds);
	return true;
}

GPUEXT_DEVICE_WORK(ChunkDown, ChunkJob)

/* Read back the chunk of groups from first on: the device's outcome, the device lost on the way. */
static GpuextDeviceOutcome
ReadChunk(GpuAggState *st, uint32 first)
{
	GpuAggDevScan *ds = st->dev.buffers;
	ChunkJob	job = {ds, first, Min(st->groups.ngroups - first, GPUAGG_DEVGROUPS_CHUNK)};
	GpuextDeviceOutcome outcome;
	instr_time	start;

	if (st->timing)
		INSTR_TIME_SET_CURRENT(start);
	if (ds->chunk_results == NULL)
		ds->chunk_results = MemoryContextAllocHuge(st->runcxt, sizeof(GpuextGroupResult) * GPUAGG_DEVGROUPS_CHUNK *
												   Max(st->ninputs, 1));
	ds->chunk_n = 0;
	outcome = TryChunkDown(&job, "device scan");
	for (int i = 0; i < st->ninputs && outcome == GPUEXT_DEVICE_DONE; i++)
		if (st->inputs[i].type != NULL)
			outcome = GpuAggGroupResults(st, &st->inputs[i], first, job.n,
										 ds->chunk_results + (size_t) i * GPUAGG_DEVGROUPS_CHUNK);
	if (st->timing)
		st->stats.device_ms += GpuAggElapsedMs(start);
	if (outcome == GPUEXT_DEVICE_DONE)
	{
		ds->chunk_lo = first;
		ds->chunk_n = job.n;
	}
	return outcome;
}

/* The run's first chunk, before any group is returned; false, the device lost, where it cannot be read. */
bool
GpuAggDevGroupsFirstChunk(GpuAggState *st)
{
	GpuextDeviceOutcome outcome;

	if (st->groups.ngroups == 0)
		return true;
	if ((outcome = ReadChunk(st, 0)) == GPUEXT_DEVICE_DONE)
		return true;
	GpuAggGroupsDeviceLost(st, outcome);
	return false;
}

/* An aggregate of a numeric input computed on the device scan, from its group's reduction there. */
static Datum
NumericResult(GpuAggInput *in, const GpuextGroupResult *r, GpuextAggKind kind, bool *isnull)
{
	GpuextAccum acc;

	GpuextAccumInit(&acc, NUMERICOID);
	GpuAggDevScanMergeNumeric(in, &acc, r->count, r->isum_lo, r->isum_hi, r->min_key, r->max_key);
	return GpuextAccumResult(&acc, kind, isnull);
}

/* A chunk's group's aggregate a (-1: its rows) as HAVING's tests read it (arg: its place in the chunk). */
static int
ChunkGroupFixed(GpuAggState *st, const void *arg, int a, int128 *v)
{
	GpuAggDevScan *ds = st->dev.buffers;
	const GpuextScanProgram *p = (const GpuextScanProgram *) ds->prog->ptr;
	uint32		i = *(const uint32 *) arg;
	int			o = a >= 0 ? st->agg_input[a] : -1;
	GpuAggInput *in = o >= 0 ? &st->inputs[o] : NULL;

	if (in == NULL)
		*v = ChunkCounts(ds, 0)[i];
	else if (in->type == NULL)
		*v = ChunkCounts(ds, p->outs[o].counter)[i];
	else if (GpuAggHavingReads(in))
		return GpuAggHavingFixed(in, st->kinds[a], &ds->chunk_results[(size_t) o * GPUAGG_DEVGROUPS_CHUNK + i], 0, v);
	else
		return GPUAGG_HAVING_UNKNOWN;
	return GPUAGG_HAVING_VALUE;
}

/* The next group numbered on the device, its aggregates and keys in the scan tuple; false after the last. */
bool
GpuAggDevGroupsNext(GpuAggState *st)
{
	TupleTableSlot *scanslot = st->css.ss.ss_ScanTupleSlot;
	GpuAggDevScan *ds = st->dev.buffers;
	const GpuextScanProgram *p = (const GpuextScanProgram *) ds->prog->ptr;
	uint32		g;
	uint32		i;

	do
	{
		g = st->groups.next_group;
		if (g >= st->groups.ngroups)
			return false;
		if ((g < ds->chunk_lo || g >= ds->chunk_lo + ds->chunk_n) && ReadChunk(st, g) != GPUEXT_DEVICE_DONE)
			ereport(ERROR,
					(errcode(ERRCODE_SYSTEM_ERROR),
					 errmsg("gpuext: the GPU failed after GpuAgg returned %u of its %u groups", g, st->groups.ngroups)));
		st->groups.next_group++;
		i = g - ds->chunk_lo;
	} while (st->groups.nhaving > 0 && GpuAggHavingFails(st, ChunkGroupFixed, &i));
	ExecClearTuple(scanslot);
	for (int a = 0; a < scanslot->tts_tupleDescriptor->natts; a++)
		scanslot->tts_isnull[a] = true;
	for (int a = 0; a < st->naggs; a++)
	{
		int			o = st->agg_input[a];
		GpuAggInput *in = o >= 0 ? &st->inputs[o] : NULL;

		scanslot->tts_isnull[a] = false;
		if (in == NULL)
			scanslot->tts_values[a] = Int64GetDatum(ChunkCounts(ds, 0)[i]);
		else if (in->type == NULL)
			scanslot->tts_values[a] = Int64GetDatum(ChunkCounts(ds, p->outs[o].counter)[i]);
		else if (in->numeric_scale >= 0)
			scanslot->tts_values[a] = GpuAggNumericGroupResult(in, &ds->chunk_results[(size_t) o * GPUAGG_DEVGROUPS_CHUNK + i],
															   0, st->kinds[a], &scanslot->tts_isnull[a]);
		else if (GpuAggInputIsNumeric(in))
			scanslot->tts_values[a] = NumericResult(in, &ds->chunk_results[(size_t) o * GPUAGG_DEVGROUPS_CHUNK + i],
													st->kinds[a], &scanslot->tts_isnull[a]);
		else
			scanslot->tts_values[a] = GpuextGroupResultDatum(&ds->chunk_results[(size_t) o * GPUAGG_DEVGROUPS_CHUNK + i],
															 in->type, st->kinds[a], &scanslot->tts_isnull[a]);
	}
	GpuAggDevGroupKeys(st, p, (const unsigned char *) ChunkImages(ds)[i].image, scanslot->tts_values + st->naggs,
					   scanslot->tts_isnull + st->naggs);
	ExecStoreVirtualTuple(scanslot);
	return true;
}
