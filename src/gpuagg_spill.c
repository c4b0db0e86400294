/*
 * gpuagg_spill.c
 *		GpuAgg's groups past hash_mem: rows whose keys find no room are
 *		written to temporary files, partitioned by their keys' hash, and
 *		each partition aggregated after the groups in memory are returned.
 *
 * As a hashed Agg spills, a run keeps at most hash_mem's worth of groups
 * (GpuAggSpillBudget); a row of a new group past that is spilled with its
 * keys and its inputs' values, and a key already in memory keeps taking its
 * rows.  A partition is read back as a run of its own, which spills again
 * (with other bits of the hash) if it still has too many groups.  Each key
 * lives in one run only, so each group is returned once.  Only keys and
 * values passed by value are spilled (SpillEligible of gpuagg_plan.c):
 * keys equal as bytes of fixed width (GpuAggByteEqualType), numerics only
 * of a fixed scale (precision up to 18: the bigint at the scale, a NaN as
 * GPUAGG_SPILL_NAN).  Serial runs only: a parallel plan is not offered
 * where its groups would spill.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/buffile.h"
#include "utils/memutils.h"

#include "gpuagg.h"

/* Partitions a spilling run writes, at least and at most. */
#define SPILL_MIN_PARTS 4
#define SPILL_MAX_PARTS 256

/* Records read back at a time. */
#define SPILL_READ_RECORDS 256

/* A partition written: its file, its rows, and the run it will be read by. */
typedef struct SpillPart
{
	BufFile    *file;
	int64		rows;
	int			level;			/* its rows' keys hash with this level's seed */
	double		groups;			/* groups expected in it */
} SpillPart;

/*
 * One node's spilling: the partitions the current run writes (made on its
 * first spilled row) and those waiting to be read.  A record: the keys,
 * flags (bit i: input i has a value; bit ninputs + k: key k is NULL), the
 * inputs' values, each a Datum.
 */
typedef struct GpuAggSpill
{
	MemoryContext cxt;
	int			nkeys;
	int			ninputs;
	int16	   *keylen;
	size_t		record_bytes;
	Datum	   *record;			/* records read back */
	Datum	   *write;			/* the record being written */
	int			level;			/* the level of the partitions being written */
	double		groups;			/* groups expected in the run writing them */
	int			nparts;
	SpillPart  *out;			/* the current run's partitions, or NULL */
	List	   *pending;		/* SpillPart * written and not yet read */
} GpuAggSpill;

/* Whether the node's groups can spill: serial, every key and value by value (see the file's head). */
void
GpuAggSpillBegin(GpuAggState *st)
{
	GpuAggSpill *sp;
	TupleDesc	desc;

	st->groups.max_groups = PG_UINT32_MAX;
	if (st->groups.nkeys == 0 || st->workers.nworkers > 0 || IsParallelWorker() || !GpuAggKeysByValue(st) ||
		st->groups.nkeys + st->ninputs > 64)
		return;
	for (int i = 0; i < st->ninputs; i++)
	{
		GpuAggInput *in = &st->inputs[i];

		if (in->type != NULL && (GpuAggInputIsNumeric(in) || in->type->value_bytes > (int) sizeof(Datum)))
			return;
	}
	sp = MemoryContextAllocZero(st->nodecxt, sizeof(GpuAggSpill));
	sp->cxt = st->nodecxt;
	sp->nkeys = st->groups.nkeys;
	sp->ninputs = st->ninputs;
	sp->keylen = MemoryContextAlloc(sp->cxt, sizeof(int16) * st->groups.nkeys);
	desc = st->groups.keyslot->tts_tupleDescriptor;
	for (int k = 0; k < st->groups.nkeys; k++)
		sp->keylen[k] = TupleDescAttr(desc, k)->attlen;
	sp->record_bytes = sizeof(Datum) * (st->groups.nkeys + 1 + st->ninputs);
	sp->record = MemoryContextAlloc(sp->cxt, sp->record_bytes * SPILL_READ_RECORDS);
	sp->write = MemoryContextAlloc(sp->cxt, sp->record_bytes);
	sp->groups = Max(st->css.ss.ps.plan->plan_rows, 1);
	st->groups.spill = sp;
}

/*
 * The groups a run may keep in hash_mem: their keys, the hash table's
 * entries, their counts and results (and states on the CPU).
 */
uint32
GpuAggSpillBudget(GpuAggState *st)
{
	double		bytes = sizeof(MinimalTuple) + sizeof(int64) + 2 * sizeof(uint64) + 32 +
		MAXALIGN(SizeofMinimalTupleHeader + sizeof(Datum) * st->groups.nkeys);

	if (st->groups.spill == NULL)
		return PG_UINT32_MAX;
	for (int i = 0; i < st->ninputs; i++)
	{
		GpuAggInput *in = &st->inputs[i];

		if (in->type == NULL || in->numeric_scale >= 0)
			bytes += sizeof(int64);
		if (in->type != NULL)
			bytes += sizeof(GpuextGroupResult) +
				(st->groups.use_device ? 0 : GPUEXT_GROUP_STATE_BYTES(in->type->typid == FLOAT4OID ||
																 in->type->typid == FLOAT8OID));
	}
	return (uint32) Max(Min(get_hash_memory_limit() / bytes, PG_UINT32_MAX / 4), GPUAGG_GROUPS_START);
}

/* The partition of a record's keys at a level: a splitmix64 of them, seeded by the level. */
static int
SpillPartition(GpuAggSpill *sp, const Datum *keys, uint64 flags, int level)
{
	uint64		h = UINT64CONST(0x9E3779B97F4A7C15) * (uint64) (level + 1);

	for (int k = 0; k < sp->nkeys; k++)
	{
		uint64		v = (flags >> (sp->ninputs + k)) & 1 ? PG_UINT64_MAX : (uint64) keys[k];

		if (sp->keylen[k] < 8 && !((flags >> (sp->ninputs + k)) & 1))
			v &= (UINT64CONST(1) << (sp->keylen[k] * 8)) - 1;
		h ^= v;
		h ^= h >> 30;
		h *= UINT64CONST(0xbf58476d1ce4e5b9);
		h ^= h >> 27;
		h *= UINT64CONST(0x94d049bb133111eb);
		h ^= h >> 31;
	}
	return (int) (h % (uint64) sp->nparts);
}

/*
 * Spill one row: its keys (with the NULL flags above the inputs' bits of
 * flags) and the values of its inputs that have one (only counted ones
 * stored as 0), into the current run's partitions.
 */
void
GpuAggSpillWrite(GpuAggState *st, const Datum *keys, uint64 flags, const Datum *values)
{
	GpuAggSpill *sp = st->groups.spill;
	Datum	   *rec = sp->write;
	SpillPart  *part;

	if (unlikely(sp->out == NULL))
	{
		double		rest = Max(sp->groups - st->groups.max_groups, st->groups.max_groups);
		double		want = ceil(1.5 * rest / st->groups.max_groups);
		MemoryContext old = MemoryContextSwitchTo(sp->cxt);

		sp->nparts = SPILL_MIN_PARTS;
		while (sp->nparts < want && sp->nparts < SPILL_MAX_PARTS)
			sp->nparts *= 2;
		sp->out = palloc0(sizeof(SpillPart) * sp->nparts);
		for (int p = 0; p < sp->nparts; p++)
		{
			sp->out[p].level = sp->level;
			sp->out[p].groups = rest / sp->nparts;
		}
		MemoryContextSwitchTo(old);
	}
	part = &sp->out[SpillPartition(sp, keys, flags, sp->level)];
	if (part->file == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(sp->cxt);

		part->file = BufFileCreateTemp(false);
		MemoryContextSwitchTo(old);
	}
	memcpy(rec, keys, sizeof(Datum) * sp->nkeys);
	rec[sp->nkeys] = (Datum) flags;
	for (int i = 0; i < sp->ninputs; i++)
		rec[sp->nkeys + 1 + i] = (flags >> i) & 1 && st->inputs[i].type != NULL ? values[i] : 0;
	BufFileWrite(part->file, rec, sp->record_bytes);
	part->rows++;
	st->stats.rows_spilled++;
}

/* The current run's partitions with rows wait to be read: the run is over. */
void
GpuAggSpillProduced(GpuAggState *st)
{
	GpuAggSpill *sp = st->groups.spill;
	MemoryContext old;

	if (sp == NULL || sp->out == NULL)
		return;
	old = MemoryContextSwitchTo(sp->cxt);
	for (int p = 0; p < sp->nparts; p++)
		if (sp->out[p].file != NULL)
		{
			SpillPart  *part = palloc(sizeof(SpillPart));

			*part = sp->out[p];
			sp->pending = lappend(sp->pending, part);
			st->stats.spill_partitions++;
		}
	MemoryContextSwitchTo(old);
	pfree(sp->out);
	sp->out = NULL;
}

/* Drop what the current run wrote: it starts again (on the CPU). */
void
GpuAggSpillDiscard(GpuAggState *st)
{
	GpuAggSpill *sp = st->groups.spill;

	if (sp == NULL || sp->out == NULL)
		return;
	for (int p = 0; p < sp->nparts; p++)
		if (sp->out[p].file != NULL)
		{
			BufFileClose(sp->out[p].file);
			st->stats.rows_spilled -= sp->out[p].rows;
		}
	pfree(sp->out);
	sp->out = NULL;
}

/* Add a partition's rows to the run's groups, spilling again those that find no room. */
static void
SpillReplay(GpuAggState *st, SpillPart *part)
{
	GpuAggSpill *sp = st->groups.spill;
	TupleTableSlot *ks = st->groups.keyslot;
	int64		left = part->rows;

	if (BufFileSeek(part->file, 0, 0, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not rewind GpuAgg spill file: %m")));
	while (left > 0 && !st->device_lost)
	{
		int			n = (int) Min(left, SPILL_READ_RECORDS);
		size_t		got;

		CHECK_FOR_INTERRUPTS();
		got = BufFileRead(part->file, sp->record, sp->record_bytes * n);
		if (got != sp->record_bytes * n)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read GpuAgg spill file: read only %zu of %zu bytes",
							got, sp->record_bytes * n)));
		left -= n;
		for (int r = 0; r < n && !st->device_lost; r++)
		{
			const Datum *rec = sp->record + r * (sp->nkeys + 1 + sp->ninputs);
			uint64		flags = (uint64) rec[sp->nkeys];
			const Datum *values = rec + sp->nkeys + 1;
			uint32		group;

			ExecClearTuple(ks);
			for (int k = 0; k < sp->nkeys; k++)
			{
				ks->tts_values[k] = rec[k];
				ks->tts_isnull[k] = (flags >> (sp->ninputs + k)) & 1;
			}
			ExecStoreVirtualTuple(ks);
			group = GpuAggGroupLookup(st);
			if (group == GPUAGG_SPILL)
			{
				GpuAggSpillWrite(st, rec, flags, values);
				continue;
			}
			st->groups.group_rows[group]++;
			for (int i = 0; i < sp->ninputs; i++)
			{
				GpuAggInput *in = &st->inputs[i];

				if (!((flags >> i) & 1))
					continue;
				if (in->numeric_scale >= 0 && DatumGetInt64(values[i]) == GPUAGG_SPILL_NAN)
					in->group_counts[group]++;
				else
					GpuAggGroupAdd(st, in, group, values[i]);
			}
		}
	}
}

/*
 * Aggregate the next partition waiting into the groups (read with
 * GpuAggGroupNext), as a run of its own; false when none is left.
 */
bool
GpuAggSpillNext(GpuAggState *st)
{
	GpuAggSpill *sp = st->groups.spill;
	SpillPart  *part;
	MemoryContext old;
	bool		device;
	instr_time	start;

	if (sp == NULL || sp->pending == NIL)
		return false;
	if (st->timing)
		INSTR_TIME_SET_CURRENT(start);
	part = llast(sp->pending);
	sp->pending = list_delete_last(sp->pending);
	sp->level = part->level + 1;
	sp->groups = Max(part->groups, 1);
	MemoryContextReset(st->runcxt);
	old = MemoryContextSwitchTo(st->runcxt);
	device = GpuAggStartInputs(st, true);
	GpuAggGroupsStart(st, device);
	SpillReplay(st, part);
	GpuAggGroupsFinish(st);
	if (st->device_lost)
	{
		GpuAggSpillDiscard(st);
		MemoryContextReset(st->runcxt);
		GpuAggStartInputs(st, false);
		GpuAggGroupsStart(st, false);
		SpillReplay(st, part);
		GpuAggGroupsFinish(st);
	}
	MemoryContextSwitchTo(old);
	BufFileClose(part->file);
	pfree(part);
	GpuAggSpillProduced(st);
	st->stats.groups += st->groups.ngroups;
	if (st->timing)
		st->stats.total_ms += GpuAggElapsedMs(start);
	return true;
}

/* Close every spill file (a rescan, or the node's end). */
void
GpuAggSpillEnd(GpuAggState *st)
{
	GpuAggSpill *sp = st->groups.spill;
	ListCell   *lc;

	if (sp == NULL)
		return;
	GpuAggSpillDiscard(st);
	foreach(lc, sp->pending)
		BufFileClose(((SpillPart *) lfirst(lc))->file);
	list_free_deep(sp->pending);
	sp->pending = NIL;
	sp->level = 0;
	sp->groups = Max(st->css.ss.ps.plan->plan_rows, 1);
}
