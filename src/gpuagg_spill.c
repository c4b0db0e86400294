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
 * lives in one run only, so each group is returned once.  Keys equal
 * exactly when their bytes are (GpuAggByteEqualType: integers, dates,
 * timestamps, numeric(p, s), text under a deterministic collation) and the
 * values of every input spill (SpillEligible of gpuagg_plan.c): those
 * passed by value as they are (a fixed-scale numeric as the bigint at its
 * scale, a NaN as GPUAGG_SPILL_NAN), a varlena key or numeric value as its
 * bytes after the record.  Serial runs only: a parallel plan is not offered
 * where its groups would spill.
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/buffile.h"
#include "utils/memutils.h"

#include "gpuagg.h"

/* Partitions a spilling run writes, at least and at most. */
#define SPILL_MIN_PARTS 4
#define SPILL_MAX_PARTS 256

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
 * inputs' values, each a Datum (0 for a varlena); then each varlena key
 * not NULL and varlena value present, in that order, as its length (a
 * uint32) and its bytes without a header.
 */
typedef struct GpuAggSpill
{
	MemoryContext cxt;
	MemoryContext readcxt;		/* a record's varlenas read back, reset per record */
	int			nkeys;
	int			ninputs;
	int16	   *keylen;			/* a key's length, -1 for a varlena */
	bool	   *varlena_value;	/* input i's values are varlenas (numeric) */
	size_t		record_bytes;
	Datum	   *record;			/* the record read back */
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
	if (st->groups.nkeys == 0 || st->workers.nworkers > 0 || IsParallelWorker() || st->groups.images == NULL ||
		st->groups.nkeys + st->ninputs > 64)
		return;
	for (int i = 0; i < st->ninputs; i++)
	{
		GpuAggInput *in = &st->inputs[i];

		if (in->type != NULL && !GpuAggInputIsNumeric(in) && in->type->value_bytes > (int) sizeof(Datum))
			return;
	}
	sp = MemoryContextAllocZero(st->nodecxt, sizeof(GpuAggSpill));
	sp->cxt = st->nodecxt;
	sp->readcxt = AllocSetContextCreate(st->nodecxt, "GpuAgg spill record", ALLOCSET_SMALL_SIZES);
	sp->nkeys = st->groups.nkeys;
	sp->ninputs = st->ninputs;
	sp->keylen = MemoryContextAlloc(sp->cxt, sizeof(int16) * st->groups.nkeys);
	sp->varlena_value = MemoryContextAlloc(sp->cxt, sizeof(bool) * Max(st->ninputs, 1));
	desc = st->groups.keyslot->tts_tupleDescriptor;
	for (int k = 0; k < st->groups.nkeys; k++)
		sp->keylen[k] = TupleDescAttr(desc, k)->attlen;
	for (int i = 0; i < st->ninputs; i++)
		sp->varlena_value[i] = GpuAggInputIsNumeric(&st->inputs[i]);
	sp->record_bytes = sizeof(Datum) * (st->groups.nkeys + 1 + st->ninputs);
	sp->record = MemoryContextAlloc(sp->cxt, sp->record_bytes);
	sp->write = MemoryContextAlloc(sp->cxt, sp->record_bytes);
	sp->groups = st->groups.estimate;
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

/*
 * The partition of a record's keys at a level: a splitmix64 of them (a
 * varlena's by a hash of its bytes, detoasted), seeded by the level.
 */
static int
SpillPartition(GpuAggSpill *sp, const Datum *keys, uint64 flags, int level)
{
	uint64		h = UINT64CONST(0x9E3779B97F4A7C15) * (uint64) (level + 1);

	for (int k = 0; k < sp->nkeys; k++)
	{
		bool		isnull = (flags >> (sp->ninputs + k)) & 1;
		uint64		v = isnull ? PG_UINT64_MAX : (uint64) keys[k];

		if (!isnull && sp->keylen[k] < 0)
			v = hash_bytes_extended((const unsigned char *) VARDATA_ANY(DatumGetPointer(keys[k])),
									VARSIZE_ANY_EXHDR(DatumGetPointer(keys[k])), 0);
		else if (!isnull && sp->keylen[k] < 8)
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
	Datum		varlenas[64];
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
	/* varlenas as their bytes: keys detoasted before they are hashed */
	for (int k = 0; k < sp->nkeys; k++)
		varlenas[k] = sp->keylen[k] < 0 && !((flags >> (sp->ninputs + k)) & 1) ?
			PointerGetDatum(pg_detoast_datum_packed((struct varlena *) DatumGetPointer(keys[k]))) : (Datum) 0;
	for (int i = 0; i < sp->ninputs; i++)
		varlenas[sp->nkeys + i] = sp->varlena_value[i] && (flags >> i) & 1 ?
			PointerGetDatum(pg_detoast_datum_packed((struct varlena *) DatumGetPointer(values[i]))) : (Datum) 0;
	for (int k = 0; k < sp->nkeys; k++)
		rec[k] = varlenas[k] != (Datum) 0 ? varlenas[k] : keys[k];
	part = &sp->out[SpillPartition(sp, rec, flags, sp->level)];
	if (part->file == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(sp->cxt);

		part->file = BufFileCreateTemp(false);
		MemoryContextSwitchTo(old);
	}
	for (int k = 0; k < sp->nkeys; k++)
		rec[k] = sp->keylen[k] < 0 ? (Datum) 0 : keys[k];
	rec[sp->nkeys] = (Datum) flags;
	for (int i = 0; i < sp->ninputs; i++)
		rec[sp->nkeys + 1 + i] = (flags >> i) & 1 && st->inputs[i].type != NULL && !sp->varlena_value[i] ?
			values[i] : 0;
	BufFileWrite(part->file, rec, sp->record_bytes);
	for (int v = 0; v < sp->nkeys + sp->ninputs; v++)
	{
		Pointer		p = DatumGetPointer(varlenas[v]);
		uint32		len;

		if (p == NULL)
			continue;
		len = VARSIZE_ANY_EXHDR(p);
		BufFileWrite(part->file, &len, sizeof(len));
		BufFileWrite(part->file, VARDATA_ANY(p), len);
		if (p != DatumGetPointer(v < sp->nkeys ? keys[v] : values[v - sp->nkeys]))
			pfree(p);
	}
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

/* Read n bytes of a spill file into dst, or raise the error. */
static void
SpillRead(BufFile *file, void *dst, size_t n)
{
	size_t		got = BufFileRead(file, dst, n);

	if (got != n)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read GpuAgg spill file: read only %zu of %zu bytes", got, n)));
}

/* The varlena that follows a record in the file, made again with a header in cxt. */
static Datum
SpillReadVarlena(BufFile *file, MemoryContext cxt)
{
	uint32		len;
	struct varlena *v;

	SpillRead(file, &len, sizeof(len));
	v = MemoryContextAlloc(cxt, VARHDRSZ + len);
	SET_VARSIZE(v, VARHDRSZ + len);
	SpillRead(file, VARDATA(v), len);
	return PointerGetDatum(v);
}

/* Add a partition's rows to the run's groups, spilling again those that find no room. */
static void
SpillReplay(GpuAggState *st, SpillPart *part)
{
	GpuAggSpill *sp = st->groups.spill;
	TupleTableSlot *ks = st->groups.keyslot;
	Datum	   *rec = sp->record;
	Datum	   *values = rec + sp->nkeys + 1;

	if (BufFileSeek(part->file, 0, 0, SEEK_SET) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not rewind GpuAgg spill file: %m")));
	for (int64 r = 0; r < part->rows && !st->device_lost; r++)
	{
		uint64		flags;
		uint32		group;

		if ((r & 255) == 0)
			CHECK_FOR_INTERRUPTS();
		SpillRead(part->file, rec, sp->record_bytes);
		flags = (uint64) rec[sp->nkeys];
		MemoryContextReset(sp->readcxt);
		for (int k = 0; k < sp->nkeys; k++)
			if (sp->keylen[k] < 0 && !((flags >> (sp->ninputs + k)) & 1))
				rec[k] = SpillReadVarlena(part->file, sp->readcxt);
		for (int i = 0; i < sp->ninputs; i++)
			if (sp->varlena_value[i] && (flags >> i) & 1)
				values[i] = SpillReadVarlena(part->file, sp->readcxt);
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
	sp->groups = st->groups.estimate;
}
