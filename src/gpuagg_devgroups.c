/*
 * gpuagg_devgroups.c
 *		GpuAgg's device scan under GROUP BY: each row's keys packed into a
 *		key image on the device and found in a hash table kept there
 *		(cuda/scan_heap_groups.h); each key image new to the table numbered
 *		here as the node's group of those keys (gpuagg_keys.c), so that the
 *		device writes every value with its group number and the values go
 *		into the groups' device states (gpuagg_group.c) without the CPU
 *		touching a row.
 *
 * Where: every key one the device groups (gpuagg_devkeys.c), the key's
 * value computed here from the image, once for each image met.  Rows with
 * the same keys may have several images (a function's many arguments of
 * one result): the lookup maps them to one group.  Each key's equal values
 * have equal bytes (KeyValuesCanonical), the keys' images together fit 32
 * bytes (a tag byte and the bytes of each), no key column is read for its
 * value elsewhere (its NULLs may be: count(k), k IS NULL), the
 * groups on the device, and no more groups expected than a quarter of the
 * table.  A batch's values pass writes each value with its group number and
 * counts rows per group; where some rows' keys have no group yet, its keys
 * pass lists the images new to the table, they are numbered here, and the
 * values pass runs again.  A batch with a key too long for its place, or
 * whose new keys would spill past hash_mem or fill the table, is read on the
 * CPU, as is the rest of that run.
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "pgstat.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

#include "gpuagg.h"

/* The table's slots: at least this many, and four per group the plan expects, up to the most. */
#define DEVGROUPS_MIN_SLOTS 1024

/* ... and where the device numbers the groups, at least this many. */
#define DEVGROUPS_NUMBERED_MIN_SLOTS ((uint32) 1 << 16)

/* Key k's column (from 1) and how the device makes its part of the key image (GpuAggDevKeyColumn); 0 where none. */
static AttrNumber
KeyColumn(GpuAggState *st, int k, GpuextScanKey *key)
{
	CustomScan *cscan = (CustomScan *) st->css.ss.ps.plan;
	Var		   *var;

	key->modulus = 0;
	key->trunc = GPUEXT_SCAN_TRUNC_NONE;
	key->micros = 0;
	if (st->groups.key_exprs[k] == NULL)
		return st->groups.key_att[k];
	var = GpuAggDevKeyColumn((Node *) list_nth_node(TargetEntry, cscan->custom_scan_tlist, st->naggs + k)->expr,
						cscan->scan.scanrelid, key);
	return var != NULL ? var->varattno : 0;
}

/* How many bytes of the key image a column's value takes: its length, -1 for any (varlena), 0 where it cannot. */
static int
KeyColumnWidth(Form_pg_attribute attr)
{
	if (attr->atthasmissing)
		return 0;
	if (attr->attlen == -1)
		return -1;
	return attr->attlen > 0 && attr->attlen < GPUEXT_SCAN_KEY_BYTES ? attr->attlen : 0;
}

/*
 * Whether key k's equal values have equal bytes (its type's equality is the
 * bytes', under a deterministic collation), or it is a unit of a date or
 * timestamp, whose values of a field all have one scale: then which row of
 * a group the device meets first cannot change the group's value (0 or
 * 0.00, -0 or 0) from PostgreSQL's, which takes the first in the scan.
 */
static bool
KeyValuesCanonical(GpuAggState *st, int k, const GpuextScanKey *key)
{
	CustomScan *cscan = (CustomScan *) st->css.ss.ps.plan;
	Node	   *expr = (Node *) list_nth_node(TargetEntry, cscan->custom_scan_tlist, st->naggs + k)->expr;

	return key->trunc != GPUEXT_SCAN_TRUNC_NONE ||
		GpuAggByteEqualKey(exprType(expr), exprTypmod(expr), list_nth_oid(lfourth(cscan->custom_private), k),
						   exprCollation(expr)) != 0;
}

/*
 * Whether the node's keys can be grouped on the device (see the file's
 * head): the columns read as bytes added to *byteatts, those read as
 * integers (taken modulo a constant) to *intatts.
 */
bool
GpuAggDevGroupsKeys(GpuAggState *st, TupleDesc tupdesc, Bitmapset **byteatts, Bitmapset **intatts)
{
	int			used = 0;

	if (st->groups.nkeys > GPUEXT_SCAN_MAX_KEYS)
		return false;
	for (int k = 0; k < st->groups.nkeys; k++)
	{
		GpuextScanKey key;
		AttrNumber	att = KeyColumn(st, k, &key);
		int			len;

		if (att == 0 || !KeyValuesCanonical(st, k, &key))
			return false;
		len = KeyColumnWidth(TupleDescAttr(tupdesc, att - 1));
		if (key.modulus > 0 || key.trunc != GPUEXT_SCAN_TRUNC_NONE)
		{
			used += 1 + (key.trunc != GPUEXT_SCAN_TRUNC_NONE ? gpuext_scan_unit_width(key.trunc, key.micros) :
						 TupleDescAttr(tupdesc, att - 1)->attlen);
			*intatts = bms_add_member(*intatts, att);
			continue;
		}
		if (len == 0)
			return false;
		/* a varlena key takes what room is left, at least one byte */
		used += 1 + (len > 0 ? len : 1);
		*byteatts = bms_add_member(*byteatts, att);
	}
	return used <= GPUEXT_SCAN_KEY_BYTES && !bms_overlap(*byteatts, *intatts);
}

/*
 * The program's keys (their columns already among its columns: bytes, or
 * integers for a modulus) and its per-group counters: rows, then each
 * counted output.
 */
void
GpuAggDevGroupsProgram(GpuAggState *st, GpuextScanProgram *p, const int *col_of_att)
{
	TupleDesc	tupdesc = RelationGetDescr(st->css.ss.ss_currentRelation);
	int			at = 0;
	int			fixed = 0;
	int			nvar = 0;
	int			want[GPUEXT_SCAN_MAX_KEYS] = {0};
	AttrNumber	atts[GPUEXT_SCAN_MAX_KEYS];

	p->nkeys = st->groups.nkeys;
	/* text keys share what the fixed ones leave, the narrowest (by char(n) or varchar(n)) served first */
	for (int k = 0; k < st->groups.nkeys; k++)
	{
		Form_pg_attribute attr;

		atts[k] = KeyColumn(st, k, &p->keys[k]);
		attr = TupleDescAttr(tupdesc, atts[k] - 1);
		p->keys[k].width = p->keys[k].trunc != GPUEXT_SCAN_TRUNC_NONE ?
			gpuext_scan_unit_width(p->keys[k].trunc, p->keys[k].micros) : attr->attlen;
		fixed += 1 + (attr->attlen > 0 ? p->keys[k].width : 0);
		if (attr->attlen < 0)
		{
			want[k] = (attr->atttypid == BPCHAROID || attr->atttypid == VARCHAROID) && attr->atttypmod > VARHDRSZ ?
				(attr->atttypmod - VARHDRSZ) * pg_database_encoding_max_length() : GPUEXT_SCAN_KEY_BYTES;
			/* numeric(p, s): the bytes after the varlena header of its widest value */
			if (attr->atttypid == NUMERICOID && attr->atttypmod >= VARHDRSZ)
				want[k] = Min(numeric_maximum_size(attr->atttypmod) - VARHDRSZ, GPUEXT_SCAN_KEY_BYTES);
			nvar++;
		}
	}
	while (nvar > 0)
	{
		int			k = -1;

		for (int j = 0; j < st->groups.nkeys; j++)
			if (want[j] > 0 && (k < 0 || want[j] < want[k]))
				k = j;
		p->keys[k].width = Min(want[k], (GPUEXT_SCAN_KEY_BYTES - fixed) / nvar);
		fixed += p->keys[k].width;
		want[k] = 0;
		nvar--;
	}
	for (int k = 0; k < st->groups.nkeys; k++)
	{
		p->keys[k].col = col_of_att[atts[k]];
		p->keys[k].at = at;
		at += 1 + p->keys[k].width;
	}
	p->ncounters = 1;
	for (int o = 0; o < p->nouts; o++)
		if (p->outs[o].value_bytes == 0)
			p->outs[o].counter = p->ncounters++;
}

/* Whether a key column is read for its value by the program's conditions (but text's), arithmetic or outputs. */
bool
GpuAggDevGroupsKeyValueRead(const GpuextScanProgram *p)
{
	for (int i = 0; i < p->ncmps; i++)
		if (!p->cmps[i].nulltest && !p->cmps[i].text && p->cols[p->cmps[i].col].kind == GPUEXT_SCAN_BYTES)
			return true;
	for (int i = 0; i < p->nloads; i++)
		if (p->cols[p->loads[i].col].kind == GPUEXT_SCAN_BYTES)
			return true;
	for (int o = 0; o < p->nouts; o++)
		if (p->outs[o].value_bytes > 0 && !p->outs[o].from_reg && p->cols[p->outs[o].col].kind == GPUEXT_SCAN_BYTES)
			return true;
	return false;
}

/* The groups the run may have: the planner's estimate, or fewer where every key has few values (GpuAggDevKeyGroupsBound). */
static double
ExpectedGroups(GpuAggState *st)
{
	TupleDesc	tupdesc = RelationGetDescr(st->css.ss.ss_currentRelation);
	double		bound = 1;

	for (int k = 0; k < st->groups.nkeys && bound > 0; k++)
	{
		GpuextScanKey key;
		AttrNumber	att = KeyColumn(st, k, &key);

		bound *= GpuAggDevKeyGroupsBound(&key, att > 0 ? TupleDescAttr(tupdesc, att - 1)->atttypid : InvalidOid);
	}
	return bound > 0 ? Min(bound, st->groups.estimate) : st->groups.estimate;
}

/* The most slots of the run's table of numbered groups, by the states of its inputs with values. */
static uint32
NumberedSlots(GpuAggState *st)
{
	size_t		group_bytes = 0;

	for (int i = 0; i < st->ninputs; i++)
		if (st->inputs[i].type != NULL)
			group_bytes += GPUEXT_GROUP_STATE_BYTES(GpuAggInputIsFloat(&st->inputs[i]));
	return GpuAggNumberedSlots(st->ninputs + 1, group_bytes);
}

/*
 * Whether the run's groups can be numbered on the device: a serial run,
 * each key's image its value alone (a column, a modulus, a unit), and every
 * input's states on the device (numerics as bigints at a scale the device
 * scan computes them at; a NaN stops the numbering, its row being the CPU's).
 */
static bool
NumberableOnDevice(GpuAggState *st)
{
	if (st->workers.nworkers > 0 || IsParallelWorker())
		return false;
	for (int k = 0; k < st->groups.nkeys; k++)
	{
		GpuextScanKey key;

		if (KeyColumn(st, k, &key) == 0 ||
			(st->groups.key_exprs[k] != NULL && key.modulus == 0 && key.trunc == GPUEXT_SCAN_TRUNC_NONE))
			return false;
	}
	for (int i = 0; i < st->ninputs; i++)
	{
		GpuAggInput *in = &st->inputs[i];

		if (GpuAggInputIsNumeric(in) && in->dev_scale < 0)
			return false;
	}
	return true;
}

/*
 * Whether the device numbers the run's groups: it can, and the groups
 * expected would not all fit the table of groups numbered here, or hash_mem.
 */
static bool
NumberedOnDevice(GpuAggState *st)
{
	double		expected = ExpectedGroups(st);

	return NumberableOnDevice(st) &&
		(expected * 4 > GPUAGG_DEVGROUPS_MAX_SLOTS || expected > st->groups.max_groups) &&
		expected * 3 <= NumberedSlots(st);
}

/*
 * The slots of the device's table for the groups expected: four a group, or
 * where the device numbers them three, at least DEVGROUPS_NUMBERED_MIN_SLOTS.
 */
static uint32
TableSlots(GpuAggState *st, bool numbered)
{
	double		expected = ExpectedGroups(st);
	uint32		cap = DEVGROUPS_MIN_SLOTS;

	if (numbered)
	{
		uint32		most = NumberedSlots(st);

		while (cap < most && (cap < expected * 3 || cap < DEVGROUPS_NUMBERED_MIN_SLOTS))
			cap *= 2;
	}
	while (cap < GPUAGG_DEVGROUPS_MAX_SLOTS && cap < expected * 4)
		cap *= 2;
	return cap;
}

/* The slots of a table of numbered groups laid out for groups expected (the estimate put back). */
static uint32
SlotsFor(GpuAggState *st, double groups)
{
	double		estimate = st->groups.estimate;
	uint32		cap;

	st->groups.estimate = groups;
	cap = TableSlots(st, true);
	st->groups.estimate = estimate;
	return cap;
}

/* The groups a run again expects for promised: at least twice those expected, within the most. */
static double
RegrowGroups(GpuAggState *st, double promised)
{
	return Min(Max(promised, ExpectedGroups(st) * 2), NumberedSlots(st) / 3);
}

/* The GROUP BY parts' places in the outputs, from outs on; the bytes they end at. */
size_t
GpuAggDevGroupsLayout(GpuAggState *st, GpuextScanProgram *p, size_t outs)
{
	uint32		cap;

	p->number_groups = NumberedOnDevice(st);
	p->group_base = 0;
	p->table_cap = cap = TableSlots(st, p->number_groups);
	for (int o = 0; o < p->nouts; o++)
		if (p->outs[o].value_bytes > 0)
		{
			p->outs[o].groups_offset = outs;
			outs += TYPEALIGN(256, p->out_cap * sizeof(uint32));
		}
	p->table_offset = outs;
	outs += TYPEALIGN(256, (size_t) cap * (sizeof(uint32) + GPUEXT_SCAN_KEY_BYTES));
	p->new_offset = outs;
	outs += TYPEALIGN(256, (size_t) cap * sizeof(GpuextScanNewGroup));
	p->map_offset = outs;
	outs += TYPEALIGN(256, (size_t) cap * sizeof(uint32));
	p->counts_offset = outs;
	outs += TYPEALIGN(256, (size_t) cap * p->ncounters * sizeof(uint64));
	return outs;
}

/*
 * Whether this run's groups can be found on the device: they are on the
 * device, and few enough for the table (numbered here or there).
 */
bool
GpuAggDevGroupsUsable(GpuAggState *st)
{
	return st->groups.use_device &&
		(ExpectedGroups(st) * 4 <= GPUAGG_DEVGROUPS_MAX_SLOTS || NumberedOnDevice(st));
}

/*
 * After a run stopped by a full table of numbered groups (NumberedFull):
 * whether to run again on the device with the larger table its groups
 * promise (none where the table has the most slots already), the device
 * scan's buffers given back to be laid out for it.
 */
bool
GpuAggDevGroupsRegrow(GpuAggState *st)
{
	uint32		before = TableSlots(st, true);
	double		estimate = st->groups.estimate;

	if (st->groups.regrow <= 0)
		return false;
	st->groups.estimate = st->groups.regrow;
	st->groups.regrow = 0;
	if (TableSlots(st, true) <= before || !NumberedOnDevice(st))
	{
		st->groups.estimate = estimate;
		GpuAggNoteFallback(st, "more groups than the device scan's table holds");
		return false;
	}
	st->groups.grown = true;
	GpuAggDevScanDrop(st);
	return true;
}

/* The pinned host memory of a GROUP BY scan's buffers: new images, per-group counts, then the slots' groups. */
static inline GpuextScanNewGroup *
NewGroups(GpuAggDevScan *ds)
{
	return (GpuextScanNewGroup *) ds->gback->ptr;
}

static inline uint64 *
GroupCounts(GpuAggDevScan *ds, const GpuextScanProgram *p)
{
	return (uint64 *) (ds->gback->ptr + sizeof(GpuextScanNewGroup) * p->table_cap);
}

static inline uint32 *
SlotGroups(GpuAggDevScan *ds, const GpuextScanProgram *p)
{
	return (uint32 *) (GroupCounts(ds, p) + (size_t) p->table_cap * p->ncounters);
}

/*
 * A run starts: an empty table, and every slot without a group (the
 * device's keys pass unmaps them where it numbers the groups).
 */
void
GpuAggDevGroupsBegin(GpuAggState *st, GpuAggDevScan *ds)
{
	const GpuextScanProgram *p = (const GpuextScanProgram *) ds->prog->ptr;

	ds->first = true;
	ds->groups_off = false;
	ds->num_blocks = ds->probe_blocks = 0;
	ds->probe_groups = 0;
	ds->probed = false;
	st->groups.numbered = p->number_groups;
	ds->chunk_lo = ds->chunk_n = 0;
	ds->chunk_results = NULL;
	ds->map_lo = p->table_cap;
	ds->map_hi = 0;
	if (p->number_groups && st->groups.grown)
		st->stats.grown_slots = p->table_cap;
	if (p->number_groups)
		return;
	memset(SlotGroups(ds, p), 0xFF, sizeof(uint32) * p->table_cap);
	ds->map_lo = 0;
	ds->map_hi = p->table_cap;
}

typedef struct GroupsJob
{
	GpuAggState *st;
	GpuAggDevScan *ds;
	bool		upload;			/* the batch's pages go up first */
	uint32		ngroups;		/* the values pass: the groups whose counts come back */
} GroupsJob;

/* The keys pass (the pages up first where asked); its counters and new key images back. */
static bool
KeysPass(GroupsJob *job)
{
	GpuAggDevScan *ds = job->ds;
	GpuextScanProgram *keys = (GpuextScanProgram *) ds->prog->ptr + 1;
	const uint64 *counts = (const uint64 *) ds->back->ptr;

	if (job->upload)
		GpuAggDevScanUpload(ds);
	keys->clear_table = ds->first;
	GpuAggDevScanEnqueue(ds, keys);
	ds->first = false;
	GpuAggDevScanWait(ds);
	if (!keys->number_groups && counts[GPUEXT_SCAN_NEW_GROUPS] > 0 &&
		counts[GPUEXT_SCAN_NEW_GROUPS] <= keys->table_cap)
	{
		GpuextCheck(gpuext_cuda_copy_to_host(ds->gback->ptr, ds->device->ptr + ds->outs_off + keys->new_offset,
											 sizeof(GpuextScanNewGroup) * counts[GPUEXT_SCAN_NEW_GROUPS]),
					"copy to host");
		GpuAggDevScanWait(ds);
	}
	return true;
}

GPUEXT_DEVICE_WORK(KeysPass, GroupsJob)

/*
 * The values pass (the pages, or the slots' new group numbers, up first),
 * its counters and per-group counts back.
 */
static bool
ValuesPass(GroupsJob *job)
{
	GpuAggDevScan *ds = job->ds;
	const GpuextScanProgram *p = (const GpuextScanProgram *) ds->prog->ptr;
	char	   *outs = ds->device->ptr + ds->outs_off;

	if (job->upload)
		GpuAggDevScanUpload(ds);
	if (ds->map_hi > ds->map_lo)
		GpuextCheck(gpuext_cuda_copy_to_device(outs + p->map_offset + sizeof(uint32) * ds->map_lo,
											   (const char *) (SlotGroups(ds, p) + ds->map_lo),
											   sizeof(uint32) * (ds->map_hi - ds->map_lo)), "copy to device");
	ds->map_lo = p->table_cap;
	ds->map_hi = 0;
	GpuAggDevScanEnqueue(ds, p);
	for (int c = 0; c < p->ncounters && job->ngroups > 0; c++)
		GpuextCheck(gpuext_cuda_copy_to_host((char *) (GroupCounts(ds, p) + (size_t) c * p->table_cap),
											 outs + p->counts_offset + sizeof(uint64) * (size_t) c * p->table_cap,
											 sizeof(uint64) * job->ngroups), "copy to host");
	GpuAggDevScanWait(ds);
	return true;
}

GPUEXT_DEVICE_WORK(ValuesPass, GroupsJob)

/*
 * The group of each key image the keys pass found new, through the node's
 * own key lookup; false where one would spill or pass the table's counters.
 */
static bool
NumberNewGroups(GpuAggState *st, GpuAggDevScan *ds, uint64 nnew)
{
	const GpuextScanProgram *p = (const GpuextScanProgram *) ds->prog->ptr;
	TupleTableSlot *ks = st->groups.keyslot;
	uint32	   *map = SlotGroups(ds, p);
	MemoryContext tmp;
	MemoryContext old;
	bool		ok = true;

	if (nnew == 0)
		return true;
	tmp = AllocSetContextCreate(CurrentMemoryContext, "GpuAgg device keys", ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(tmp);

	for (uint64 i = 0; i < nnew && ok; i++)
	{
		const GpuextScanNewGroup *n = &NewGroups(ds)[i];
		const unsigned char *b = (const unsigned char *) n->image;
		uint32		g;

		ExecClearTuple(ks);
		GpuAggDevGroupKeys(st, p, b, ks->tts_values, ks->tts_isnull);
		ExecStoreVirtualTuple(ks);
		g = GpuAggGroupLookup(st);
		if (g == GPUAGG_SPILL || g >= p->table_cap)
			ok = false;
		else
		{
			map[n->slot] = g;
			ds->map_lo = Min(ds->map_lo, n->slot);
			ds->map_hi = Max(ds->map_hi, n->slot + 1);
		}
	}
	ExecClearTuple(ks);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
	return ok;
}

/*
 * The batch's keys pass and its new keys numbered; false, with the rest of
 * the run left to the CPU, where they would spill, fill the table, or a
 * key is too long for its place (rarely alone).
 */
static bool
KeysAndGroups(GpuAggState *st, GroupsJob *job, bool upload)
{
	GpuAggDevScan *ds = job->ds;
	const GpuextScanProgram *p = (const GpuextScanProgram *) ds->prog->ptr;
	const uint64 *counts = (const uint64 *) ds->back->ptr;
	GpuextDeviceOutcome outcome;

	job->upload = upload;
	if ((outcome = TryKeysPass(job, "device scan")) != GPUEXT_DEVICE_DONE)
	{
		GpuAggGroupsDeviceLost(st, outcome);
		return false;
	}
	/* the new keys are numbered even in a batch the CPU reads: their slots stay in the table */
	if (counts[GPUEXT_SCAN_NEW_GROUPS] > p->table_cap / 2 ||
		!NumberNewGroups(st, ds, counts[GPUEXT_SCAN_NEW_GROUPS]) || st->groups.ngroups > p->table_cap / 2)
	{
		GpuAggNoteFallback(st, "more groups than the device scan's table holds");
		ds->groups_off = true;
	}
	else if (counts[GPUEXT_SCAN_BAD] > 0)
	{
		GpuAggNoteFallback(st, "a key does not fit the device scan's key image");
		ds->groups_off = true;
	}
	return !ds->groups_off;
}

/*
 * A batch's values passed on the device: each value added to its group's
 * device states, the per-group counts to the groups' (kept on the device
 * where it numbers them), and the batch counted.
 */
static void
AddOutputs(GpuAggState *st, GpuAggDevScan *ds, const GroupsJob *job)
{
	const GpuextScanProgram *p = (const GpuextScanProgram *) ds->prog->ptr;
	const uint64 *counts = (const uint64 *) ds->back->ptr;
	char	   *outs = ds->device->ptr + ds->outs_off;

	for (int o = 0; o < p->nouts && !st->device_lost; o++)
	{
		GpuAggInput *in = &st->inputs[o];
		uint64		n = counts[GPUEXT_SCAN_OUT_COUNT + o];

		if (p->outs[o].value_bytes == 0)
		{
			const uint64 *c = GroupCounts(ds, p) + (size_t) p->outs[o].counter * p->table_cap;

			for (uint32 g = 0; g < job->ngroups; g++)
				in->group_counts[g] += c[g];
			continue;
		}
		if (n > p->out_cap)
			elog(ERROR, "gpuext: device scan output of " UINT64_FORMAT " values past its room", n);
		GpuAggGroupAddDevice(st, in, outs + p->outs[o].offset, (const uint32 *) (outs + p->outs[o].groups_offset), n);
	}
	for (uint32 g = 0; g < job->ngroups; g++)
		st->groups.group_rows[g] += GroupCounts(ds, p)[g];
	st->stats.rows_read += counts[GPUEXT_SCAN_DECODED];
	st->stats.rows_passed += counts[GPUEXT_SCAN_PASSED];
	st->stats.device_tuples += counts[GPUEXT_SCAN_DECODED];
	st->stats.device_blocks += ds->b->npages;
	st->stats.device_batches++;
	GpuextCountHeapGetNext(st->css.ss.ss_currentRelation, counts[GPUEXT_SCAN_DECODED]);
}

/* The device's numbering of the run's groups stops: the run starts again on the CPU (RunGroups). */
static void
NumberedStop(GpuAggState *st, const char *why)
{
	GpuAggNoteFallback(st, why);
	st->device_lost = true;
}

/*
 * The run stops, to start again with a table for promised groups (at least
 * twice the groups expected, within the most), on the device where that
 * table is larger (GpuAggDevGroupsRegrow), else on the CPU.
 */
static void
NumberedRegrow(GpuAggState *st, GpuAggDevScan *ds, double promised)
{
	st->device_lost = true;
	st->groups.regrow = RegrowGroups(st, promised);
	st->stats.grown_after = ds->num_blocks;
}

/*
 * The table of numbered groups is full, met groups found in the blocks read
 * so far: the run starts again with a table for the groups those blocks
 * promise over the whole table, a quarter more.  The planner's estimate of
 * distinct keys from its sample can be far low (a key with a few rows each,
 * in blocks of their own).
 */
static void
NumberedFull(GpuAggState *st, GpuAggDevScan *ds, double met)
{
	double		read = Max(Min((double) ds->pages->next, (double) ds->pages->nblocks), 1);

	NumberedRegrow(st, ds, met * ds->pages->nblocks / read * 1.25);
}

/*
 * Early in a run, whether the groups met so far promise more over the whole
 * table than its table holds, and a larger table would be laid out: then the
 * run starts again at once (NumberedRegrow), not when the table fills with
 * most of the table read in vain.  Two points, at 1/64 of the blocks and at
 * least twice that, tell keys met in block order (as many new groups again
 * in as many blocks again: the groups grow with the blocks) from keys spread
 * at random, which repeat: their groups grow as the distinct values of a
 * sample with replacement, D (1 - u^(r / r1)) after r blocks, u and D solved
 * from the two points.
 */
static bool
EarlyRegrow(GpuAggState *st, GpuAggDevScan *ds, uint32 cap)
{
	double		nblocks = ds->pages->nblocks;
	double		r1 = ds->probe_blocks;
	double		r2 = ds->num_blocks;
	double		g1 = ds->probe_groups;
	double		g2 = st->groups.ngroups;
	double		k;
	double		promised;

	if (ds->probed || g2 == 0)
		return false;
	if (ds->probe_groups == 0)
	{
		if (r2 * 64 >= nblocks)
		{
			ds->probe_blocks = ds->num_blocks;
			ds->probe_groups = st->groups.ngroups;
		}
		return false;
	}
	if (r2 < 2 * r1)
		return false;
	ds->probed = true;
	k = r2 / r1;
	if (g2 >= g1 * k * 0.98)
		promised = g2 * nblocks / r2;
	else
	{
		/* (1 - u^k) / (1 - u), from 1 at u = 0 up to k as u nears 1, is g2 / g1 */
		double		lo = 0;
		double		hi = 1;
		double		u = 0;

		for (int i = 0; i < 60; i++)
		{
			u = (lo + hi) / 2;
			if ((1 - pow(u, k)) / (1 - u) < g2 / g1)
				lo = u;
			else
				hi = u;
		}
		promised = g1 / (1 - u) * (1 - pow(u, nblocks / r1));
	}
	/* the projection itself past the table's three quarters; the larger table with a quarter more */
	if (promised <= cap / 4 * 3)
		return false;
	promised *= 1.25;
	if (SlotsFor(st, RegrowGroups(st, promised)) <= cap)
		return false;
	NumberedRegrow(st, ds, promised);
	return true;
}

/*
 * A full batch whose groups the device numbers: its keys pass (the new
 * groups numbered and mapped there), then its values pass, the values
 * added to their groups' device states and the per-group counts kept
 * there.  A key too long, a full table or a value the device leaves to the
 * CPU stops the run.
 */
static void
NumberedBatch(GpuAggState *st, GpuAggDevScan *ds)
{
	GroupsJob	job = {st, ds, true, 0};
	GpuextScanProgram *keys = (GpuextScanProgram *) ds->prog->ptr + 1;
	const uint64 *counts = (const uint64 *) ds->back->ptr;
	GpuextDeviceOutcome outcome;

	keys->group_base = st->groups.ngroups;
	if ((outcome = TryKeysPass(&job, "device scan")) != GPUEXT_DEVICE_DONE)
	{
		GpuAggGroupsDeviceLost(st, outcome);
		return;
	}
	/* first, as a full table also leaves keys without a slot */
	if (st->groups.ngroups + counts[GPUEXT_SCAN_NEW_GROUPS] > keys->table_cap / 4 * 3)
	{
		NumberedFull(st, ds, st->groups.ngroups + counts[GPUEXT_SCAN_NEW_GROUPS]);
		return;
	}
	if (counts[GPUEXT_SCAN_BAD] > 0)
	{
		NumberedStop(st, "a key does not fit the device scan's key image");
		return;
	}
	st->groups.ngroups += counts[GPUEXT_SCAN_NEW_GROUPS];
	ds->num_blocks += ds->b->npages;
	if (!st->groups.grown && EarlyRegrow(st, ds, keys->table_cap))
		return;
	job.upload = false;
	if ((outcome = TryValuesPass(&job, "device scan")) != GPUEXT_DEVICE_DONE)
	{
		GpuAggGroupsDeviceLost(st, outcome);
		return;
	}
	if (counts[GPUEXT_SCAN_BAD] > 0 || counts[GPUEXT_SCAN_ERRORS] > 0 || counts[GPUEXT_SCAN_MISSES] > 0)
	{
		NumberedStop(st, "a batch held values the device scan leaves to the CPU");
		return;
	}
	AddOutputs(st, ds, &job);
}

/*
 * A full batch under GROUP BY: its values pass, where a key has no group yet
 * after its keys pass and again; its values then added to their groups on
 * the device.  Or on the CPU.
 */
void
GpuAggDevGroupsBatch(GpuAggState *st, GpuAggDevScan *ds)
{
	GroupsJob	job = {st, ds, false, 0};
	const GpuextScanProgram *p = (const GpuextScanProgram *) ds->prog->ptr;
	const uint64 *counts = (const uint64 *) ds->back->ptr;
	GpuextDeviceOutcome outcome;
	instr_time	start;
	bool		uploaded = false;

	if (ds->groups_off)
	{
		GpuAggDevScanCpuBatch(st, ds);
		return;
	}
	if (st->timing)
		INSTR_TIME_SET_CURRENT(start);
	if (p->number_groups)
	{
		NumberedBatch(st, ds);
		if (st->timing)
			st->stats.device_ms += GpuAggElapsedMs(start);
		return;
	}
	/* the run's first batch starts the table; later ones try their values first */
	if (ds->first)
	{
		if (!KeysAndGroups(st, &job, true))
		{
			if (!st->device_lost)
				GpuAggDevScanCpuBatch(st, ds);
			return;
		}
		uploaded = true;
	}
	for (int attempt = 0;; attempt++)
	{
		job.upload = !uploaded;
		job.ngroups = st->groups.ngroups;
		uploaded = true;
		if ((outcome = TryValuesPass(&job, "device scan")) != GPUEXT_DEVICE_DONE)
		{
			GpuAggGroupsDeviceLost(st, outcome);
			return;
		}
		if (counts[GPUEXT_SCAN_BAD] > 0 || counts[GPUEXT_SCAN_ERRORS] > 0 ||
			(counts[GPUEXT_SCAN_MISSES] > 0 && attempt > 0))
		{
			if (GpuAggDevScanRefused(st, ds, true))
				ds->groups_off = true;
			GpuAggDevScanCpuBatch(st, ds);
			return;
		}
		if (counts[GPUEXT_SCAN_MISSES] == 0)
			break;
		if (!KeysAndGroups(st, &job, false))
		{
			if (!st->device_lost)
				GpuAggDevScanCpuBatch(st, ds);
			return;
		}
	}
	GpuAggDevScanRefused(st, ds, false);
	AddOutputs(st, ds, &job);
	if (st->timing)
		st->stats.device_ms += GpuAggElapsedMs(start);
}
