/*
 * gpuagg_keys.c
 *		GpuAgg's GROUP BY keys: evaluated per row and numbered, each distinct
 *		set of keys a group (gpuagg_group.c keeps the groups' states).
 *
 * Keys are numbered in one of PostgreSQL's tuple hash tables (any type with
 * a hash opclass, grouped by its own equality, as a hashed Agg groups).
 * Keys whose equality is their bytes' (integers, date, timestamps, bool,
 * text under a deterministic collation, with the type's own equality) skip
 * it: the row's keys become one byte string, hashed and compared as bytes
 * in a simplehash table.  A single such key of fixed width is first looked
 * up by its value in a direct map: pages of group numbers over a window of
 * values around the first key seen, made on first touch while they fit in
 * hash_mem; a value outside the window, or in a page never made, goes to
 * the byte strings.  Each group keeps its key tuple for the output.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "executor/nodeHash.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/pg_locale.h"
#include "utils/typcache.h"

#include "gpuagg.h"

/* The direct map: pages of 2^12 group numbers, 1024 of them (a window of 4M values). */
#define DIRECT_PAGE_BITS 12
#define DIRECT_PAGE_SIZE (1 << DIRECT_PAGE_BITS)
#define DIRECT_PAGES 1024
#define DIRECT_SPAN ((int64) DIRECT_PAGES * DIRECT_PAGE_SIZE)
#define DIRECT_EMPTY PG_UINT32_MAX

/* A single fixed-width key's group numbers by value (see the file's head). */
typedef struct GpuAggDirect
{
	int16		typlen;
	bool		started;		/* lo is set */
	int64		lo;				/* the window's first value */
	int			pages_left;		/* pages hash_mem still has room for */
	uint32	   *pages[DIRECT_PAGES];
} GpuAggDirect;

/* Packed key images remembered with their groups, so that few groups skip the hash table. */
#define KEY_RECENT_BITS 4
#define KEY_RECENT (1 << KEY_RECENT_BITS)

/* A group of byte-equal keys: the keys as one byte string, and its group number. */
typedef struct KeyImage
{
	const char *bytes;
	uint32		len;
} KeyImage;

typedef struct KeyImageEntry
{
	KeyImage	key;
	uint32		hash;
	uint32		group;
	char		status;
} KeyImageEntry;

#define SH_PREFIX keyimage
#define SH_ELEMENT_TYPE KeyImageEntry
#define SH_KEY_TYPE KeyImage
#define SH_KEY key
#define SH_HASH_KEY(tb, k) hash_bytes((const unsigned char *) (k).bytes, (int) (k).len)
#define SH_EQUAL(tb, a, b) ((a).len == (b).len && memcmp((a).bytes, (b).bytes, (a).len) == 0)
#define SH_STORE_HASH
#define SH_GET_HASH(tb, a) ((a)->hash)
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

/* Byte-equal keys without NULLs whose image fits eight bytes: the image as a number, and its group. */
typedef struct PackedKeyEntry
{
	uint64		key;
	uint32		group;
	char		status;
} PackedKeyEntry;

/* The splitmix64 finaliser: every bit of the packed image moves the hash. */
static inline uint32
PackedHash(uint64 k)
{
	k ^= k >> 30;
	k *= UINT64CONST(0xbf58476d1ce4e5b9);
	k ^= k >> 27;
	k *= UINT64CONST(0x94d049bb133111eb);
	k ^= k >> 31;
	return (uint32) k;
}

#define SH_PREFIX packedkey
#define SH_ELEMENT_TYPE PackedKeyEntry
#define SH_KEY_TYPE uint64
#define SH_KEY key
#define SH_HASH_KEY(tb, k) PackedHash(k)
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

/*
 * The byte-equal keys' tables and the buffer a row's key string is built in.
 * A row whose keys are all non-NULL and take at most eight bytes (each
 * fixed-width key its value's bytes, each text its length in one byte and
 * its bytes) is looked up by that packed image; any other row by its key string.
 * Which table a set of keys goes to depends only on their values, so each
 * set has one group.
 */
typedef struct GpuAggKeyImages
{
	packedkey_hash *packed;
	keyimage_hash *table;
	StringInfoData buf;
	int16	   *typlen;			/* per key: > 0 by value, -1 text */
	uint64		recent_key[KEY_RECENT]; /* packed images lately looked up, by their bits' hash ... */
	uint32		recent_group[KEY_RECENT];	/* ... and their groups (DIRECT_EMPTY: none) */
} GpuAggKeyImages;

/*
 * A key type whose values are equal under its own equality exactly when
 * their bytes are: its length (-1 for text, under a deterministic
 * collation), else 0.  char(n) qualifies with its length: its values are
 * padded to n characters, so trailing blanks never differ between equals.
 * So does numeric(p, s) (-1): every value is stored at scale s in its one
 * normalized form (1.5 as 1.50, 0 without sign), NaN in its own.
 */
int16
GpuAggByteEqualType(Oid type, int32 typmod)
{
	switch (type)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case OIDOID:
		case DATEOID:
		case TIMEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case BOOLOID:
		case CHAROID:
			return get_typlen(type);
		case TEXTOID:
		case VARCHAROID:
			return -1;
		case BPCHAROID:
		case NUMERICOID:
			return typmod >= 0 ? -1 : 0;
		default:
			return 0;
	}
}

/*
 * Whether a key's values are equal exactly when their bytes are, grouped by
 * eqop under collation (the type's own equality over integers, date,
 * timestamps, bool, numeric(p, s), or text under a deterministic collation): its length as
 * GpuAggByteEqualType gives it, else 0.
 */
int16
GpuAggByteEqualKey(Oid type, int32 typmod, Oid eqop, Oid collation)
{
	int16		len;

	if (lookup_type_cache(type, TYPECACHE_EQ_OPR)->eq_opr != eqop)
		return 0;
	len = GpuAggByteEqualType(type, typmod);
	if (len < 0 && type_is_collatable(type) && (!OidIsValid(collation) || !get_collation_isdeterministic(collation)))
		return 0;
	return len;
}

/* The key images of a GROUP BY whose keys are all equal exactly when their bytes are, else NULL. */
static GpuAggKeyImages *
ByteEqualKeys(GpuAggState *st, TupleDesc desc, const Oid *eqops, const Oid *collations)
{
	GpuAggKeyImages *images;
	int16	   *typlen = palloc(sizeof(int16) * st->groups.nkeys);

	for (int i = 0; i < st->groups.nkeys; i++)
		if ((typlen[i] = GpuAggByteEqualKey(TupleDescAttr(desc, i)->atttypid, TupleDescAttr(desc, i)->atttypmod,
											 eqops[i], collations[i])) == 0)
			return NULL;
	images = palloc0(sizeof(GpuAggKeyImages));
	images->typlen = typlen;
	images->table = keyimage_create(st->groups.hashcxt, 256, NULL);
	images->packed = packedkey_create(st->groups.hashcxt, 256, NULL);
	memset(images->recent_group, 0xFF, sizeof(images->recent_group));
	initStringInfo(&images->buf);
	return images;
}

/*
 * Read the row as far as the columns a key expression reads: it is
 * evaluated over the row's slot, which the expression does not deform.
 */
static void
KeyColumns(GpuAggState *st, Expr *expr, Index scanrelid)
{
	Bitmapset  *atts = NULL;
	int			a = -1;

	pull_varattnos((Node *) expr, scanrelid, &atts);
	while ((a = bms_next_member(atts, a)) >= 0)
	{
		AttrNumber	att = a + FirstLowInvalidHeapAttributeNumber;

		if (att == InvalidAttrNumber)
			att = RelationGetDescr(st->css.ss.ss_currentRelation)->natts;
		st->rows.maxatt = Max(st->rows.maxatt, att);
	}
}

/* The keys' slots, hash functions and expressions. */
void
GpuAggGroupsBegin(GpuAggState *st, CustomScan *cscan)
{
	EState	   *estate = st->css.ss.ps.state;
	List	   *eqops = lfourth(cscan->custom_private);
	TupleDesc	desc;
	Oid		   *eqops_arr;
	Oid		   *collations;

	st->groups.nkeys = list_length(eqops);
	if (st->groups.nkeys == 0)
		return;
	st->groups.hashcxt = AllocSetContextCreate(estate->es_query_cxt, "GpuAgg groups", ALLOCSET_DEFAULT_SIZES);
	desc = CreateTemplateTupleDesc(st->groups.nkeys);
	st->groups.key_exprs = palloc0(sizeof(ExprState *) * st->groups.nkeys);
	st->groups.key_att = palloc0(sizeof(AttrNumber) * st->groups.nkeys);
	eqops_arr = palloc(sizeof(Oid) * st->groups.nkeys);
	collations = palloc(sizeof(Oid) * st->groups.nkeys);
	for (int i = 0; i < st->groups.nkeys; i++)
	{
		Expr	   *expr = list_nth_node(TargetEntry, cscan->custom_scan_tlist, st->naggs + i)->expr;

		TupleDescInitEntry(desc, i + 1, NULL, exprType((Node *) expr), exprTypmod((Node *) expr), 0);
		TupleDescInitEntryCollation(desc, i + 1, exprCollation((Node *) expr));
		/* a system column or a whole row is evaluated over the slot, as an expression */
		if (IsA(expr, Var) && ((Var *) expr)->varattno > 0)
		{
			st->groups.key_att[i] = ((Var *) expr)->varattno;
			st->rows.maxatt = Max(st->rows.maxatt, st->groups.key_att[i]);
		}
		else
		{
			st->groups.key_exprs[i] = ExecInitExpr(expr, &st->css.ss.ps);
			KeyColumns(st, expr, cscan->scan.scanrelid);
		}
		eqops_arr[i] = list_nth_oid(eqops, i);
		collations[i] = exprCollation((Node *) expr);
	}
	st->groups.keyslot = ExecInitExtraTupleSlot(estate, desc, &TTSOpsVirtual);
	st->groups.groupslot = ExecInitExtraTupleSlot(estate, desc, &TTSOpsMinimalTuple);
	st->groups.images = ByteEqualKeys(st, desc, eqops_arr, collations);
	if (st->groups.images && st->groups.nkeys == 1 && st->groups.images->typlen[0] > 0)
	{
		st->groups.direct = palloc0(sizeof(GpuAggDirect));
		st->groups.direct->typlen = st->groups.images->typlen[0];
	}
	if (st->groups.images)
		return;
	{
		AttrNumber *cols = palloc(sizeof(AttrNumber) * st->groups.nkeys);
		Oid		   *eqfuncs;
		FmgrInfo   *hashfuncs;
		long		nbuckets = (long) Min(Max(st->groups.estimate, 256), 1 << 20);

		for (int i = 0; i < st->groups.nkeys; i++)
			cols[i] = i + 1;
		execTuplesHashPrepare(st->groups.nkeys, eqops_arr, &eqfuncs, &hashfuncs);
		st->groups.hashtable = GpuextBuildTupleHashTable(&st->css.ss.ps, desc, &TTSOpsVirtual, st->groups.nkeys, cols,
												  eqfuncs, hashfuncs, collations, nbuckets,
												  estate->es_query_cxt, st->groups.hashcxt,
												  st->css.ss.ps.ps_ExprContext->ecxt_per_tuple_memory);
	}
}

/* Put this row's keys into the key slot and the scan tuple's key columns. */
void
GpuAggKeysEval(GpuAggState *st, TupleTableSlot *heapslot, ExprContext *econtext)
{
	TupleTableSlot *ks = st->groups.keyslot;
	TupleTableSlot *scanslot = st->css.ss.ss_ScanTupleSlot;

	ExecClearTuple(ks);
	econtext->ecxt_scantuple = heapslot;
	for (int i = 0; i < st->groups.nkeys; i++)
	{
		if (st->groups.key_exprs[i] == NULL)
		{
			ks->tts_values[i] = heapslot->tts_values[st->groups.key_att[i] - 1];
			ks->tts_isnull[i] = heapslot->tts_isnull[st->groups.key_att[i] - 1];
		}
		else
			ks->tts_values[i] = ExecEvalExprSwitchContext(st->groups.key_exprs[i], econtext, &ks->tts_isnull[i]);
		scanslot->tts_values[st->naggs + i] = ks->tts_values[i];
		scanslot->tts_isnull[st->naggs + i] = ks->tts_isnull[i];
	}
	ExecStoreVirtualTuple(ks);
	econtext->ecxt_scantuple = scanslot;
}

/* Room for one more group in the per-group arrays. */
static void
GroupsGrow(GpuAggState *st)
{
	uint32		cap;

	if (st->groups.groups_cap >= PG_UINT32_MAX / 2)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("GpuAgg cannot group into more than %u groups", st->groups.groups_cap),
				 errhint("Set gpuext.enable_agg to off for this query.")));
	cap = st->groups.groups_cap * 2;
	st->groups.group_keys = repalloc_huge(st->groups.group_keys, sizeof(MinimalTuple) * cap);
	st->groups.group_rows = repalloc_huge(st->groups.group_rows, sizeof(int64) * cap);
	for (int i = 0; i < st->ninputs; i++)
		if (st->inputs[i].group_counts)
			st->inputs[i].group_counts = repalloc_huge(st->inputs[i].group_counts, sizeof(int64) * cap);
		else if (st->inputs[i].group_accs)
			GpuAggAccsGrow(&st->inputs[i], cap);
	st->groups.groups_cap = cap;
}

/* A new group's number, with room for it in the per-group arrays. */
static uint32
NewGroup(GpuAggState *st)
{
	if (st->groups.ngroups == st->groups.groups_cap)
		GroupsGrow(st);
	return st->groups.ngroups++;
}

/* Append to a row's key string; appendBinaryStringInfo, with no call while it has room. */
static inline void
ImageAppend(StringInfo buf, const void *data, int len)
{
	if (unlikely(buf->len + len >= buf->maxlen))
		enlargeStringInfo(buf, len);
	memcpy(buf->data + buf->len, data, len);
	buf->len += len;
}

/*
 * The keys in the key slot packed into eight bytes (see GpuAggKeyImages),
 * built in a register, false where they do not fit.
 */
static inline bool
PackKeys(GpuAggState *st, uint64 *packed)
{
	GpuAggKeyImages *im = st->groups.images;
	TupleTableSlot *ks = st->groups.keyslot;
	uint64		word = 0;
	int			bits = 0;

	for (int i = 0; i < st->groups.nkeys; i++)
	{
		int16		typlen = im->typlen[i];

		if (ks->tts_isnull[i])
			return false;
		if (typlen > 0)
		{
			if (bits + typlen * 8 > 64)
				return false;
			if (typlen < 8)
				word |= ((uint64) ks->tts_values[i] & ((UINT64CONST(1) << (typlen * 8)) - 1)) << bits;
			else
				word = (uint64) ks->tts_values[i];
			bits += typlen * 8;
		}
		else
		{
			struct varlena *v = (struct varlena *) DatumGetPointer(ks->tts_values[i]);
			const unsigned char *p;
			int			n;

			if (VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v))
				return false;
			n = VARSIZE_ANY_EXHDR(v);
			if (bits + (1 + n) * 8 > 64)
				return false;
			word |= (uint64) n << bits;
			bits += 8;
			p = (const unsigned char *) VARDATA_ANY(v);
			for (int j = 0; j < n; j++, bits += 8)
				word |= (uint64) p[j] << bits;
		}
	}
	*packed = word;
	return true;
}

/* A new group for the keys in the key slot, its key tuple kept. */
static uint32
NewKeyedGroup(GpuAggState *st)
{
	uint32		group = NewGroup(st);
	MemoryContext old = MemoryContextSwitchTo(st->groups.hashcxt);

	st->groups.group_keys[group] = ExecCopySlotMinimalTuple(st->groups.keyslot);
	MemoryContextSwitchTo(old);
	return group;
}

/* The group number of the byte-equal keys in the key slot, a new group if they are new. */
static uint32
ImageLookup(GpuAggState *st, bool *isnew)
{
	GpuAggKeyImages *im = st->groups.images;
	TupleTableSlot *ks = st->groups.keyslot;
	KeyImageEntry *entry;
	KeyImage	key;
	bool		found;
	uint64		packed;

	if (PackKeys(st, &packed))
	{
		int			h = (int) ((packed * UINT64CONST(0x9E3779B97F4A7C15)) >> (64 - KEY_RECENT_BITS));
		PackedKeyEntry *pe;

		if (im->recent_group[h] != DIRECT_EMPTY && im->recent_key[h] == packed)
		{
			*isnew = false;
			return im->recent_group[h];
		}
		if (unlikely(st->groups.ngroups >= st->groups.max_groups) && packedkey_lookup(im->packed, packed) == NULL)
			return GPUAGG_SPILL;
		pe = packedkey_insert(im->packed, packed, &found);
		*isnew = !found;
		if (!found)
			pe->group = NewKeyedGroup(st);
		im->recent_key[h] = packed;
		im->recent_group[h] = pe->group;
		return pe->group;
	}
	resetStringInfo(&im->buf);
	for (int i = 0; i < st->groups.nkeys; i++)
	{
		char		isnull = ks->tts_isnull[i];

		ImageAppend(&im->buf, &isnull, 1);
		if (isnull)
			continue;
		if (im->typlen[i] > 0)
		{
			char		bytes[8];

			store_att_byval(bytes, ks->tts_values[i], im->typlen[i]);
			ImageAppend(&im->buf, bytes, im->typlen[i]);
		}
		else
		{
			struct varlena *stored = (struct varlena *) DatumGetPointer(ks->tts_values[i]);
			struct varlena *v = stored;
			uint32		len;

			/* A compressed or external key is expanded for its bytes, then let go */
			if (VARATT_IS_EXTERNAL(stored) || VARATT_IS_COMPRESSED(stored))
				v = pg_detoast_datum_packed(stored);
			len = VARSIZE_ANY_EXHDR(v);
			ImageAppend(&im->buf, &len, sizeof(len));
			ImageAppend(&im->buf, VARDATA_ANY(v), len);
			if (v != stored)
				pfree(v);
		}
	}
	key.bytes = im->buf.data;
	key.len = im->buf.len;
	if (unlikely(st->groups.ngroups >= st->groups.max_groups) && keyimage_lookup(im->table, key) == NULL)
		return GPUAGG_SPILL;
	entry = keyimage_insert(im->table, key, &found);
	*isnew = !found;
	if (found)
		return entry->group;
	entry->key.bytes = MemoryContextAlloc(st->groups.hashcxt, key.len);
	memcpy((char *) entry->key.bytes, key.bytes, key.len);
	entry->group = NewKeyedGroup(st);
	return entry->group;
}

/* The key's slot in the direct map (its page made if there is room), or NULL where it has none. */
static inline uint32 *
DirectSlot(GpuAggDirect *d, MemoryContext cxt, Datum value)
{
	int64		v;
	uint64		idx;
	uint32	  **page;

	switch (d->typlen)
	{
		case 8:
			v = DatumGetInt64(value);
			break;
		case 4:
			v = DatumGetInt32(value);
			break;
		case 2:
			v = DatumGetInt16(value);
			break;
		default:
			v = DatumGetUInt8(value);
			break;
	}
	if (unlikely(!d->started))
	{
		d->lo = v > PG_INT64_MIN + DIRECT_SPAN / 2 ? v - DIRECT_SPAN / 2 : PG_INT64_MIN;
		d->started = true;
	}
	idx = (uint64) v - (uint64) d->lo;
	if (idx >= (uint64) DIRECT_SPAN)
		return NULL;
	page = &d->pages[idx >> DIRECT_PAGE_BITS];
	if (unlikely(*page == NULL))
	{
		if (d->pages_left <= 0)
			return NULL;
		d->pages_left--;
		*page = MemoryContextAlloc(cxt, sizeof(uint32) * DIRECT_PAGE_SIZE);
		memset(*page, 0xFF, sizeof(uint32) * DIRECT_PAGE_SIZE);
	}
	return &(*page)[idx & (DIRECT_PAGE_SIZE - 1)];
}

/*
 * The group number of the keys in the key slot, a new group if they are
 * new, or GPUAGG_SPILL for new keys once the run has max_groups.
 */
uint32
GpuAggGroupLookup(GpuAggState *st)
{
	bool		isnew = true;
	TupleHashEntry entry;
	uint32		group;
	uint32	   *slot;

	if (st->groups.direct && !st->groups.keyslot->tts_isnull[0] &&
		(slot = DirectSlot(st->groups.direct, st->groups.hashcxt, st->groups.keyslot->tts_values[0])) != NULL)
	{
		if (likely(*slot != DIRECT_EMPTY))
			return *slot;
		if (unlikely(st->groups.ngroups >= st->groups.max_groups))
			return GPUAGG_SPILL;
		group = *slot = NewKeyedGroup(st);
	}
	else if (st->groups.images)
	{
		group = ImageLookup(st, &isnew);
		if (group == GPUAGG_SPILL)
			return group;
	}
	else
	{
		entry = LookupTupleHashEntry(st->groups.hashtable, st->groups.keyslot, &isnew, NULL);
		if (!isnew)
			return GpuextHashEntryGroup(st->groups.hashtable, entry);
		group = NewGroup(st);
		GpuextHashEntrySetGroup(st->groups.hashtable, entry, group);
		st->groups.group_keys[group] = GpuextHashEntryTuple(entry);
	}
	if (!isnew)
		return group;
	st->groups.group_rows[group] = 0;
	for (int i = 0; i < st->ninputs; i++)
		if (st->inputs[i].group_counts)
			st->inputs[i].group_counts[group] = 0;
		else if (st->inputs[i].group_accs)
			GpuAggAccNew(st, &st->inputs[i], group);
	return group;
}

/*
 * The group numbers of a page's rows' keys (key k of row j at
 * keys[k * MaxHeapTuplesPerPage + j]): a single key already in the direct
 * map found there inline, any other through the key slot (GPUAGG_SPILL
 * where it has no room).
 */
void
GpuAggGroupLookupKeys(GpuAggState *st, const Datum *keys, uint32 *groups, int n)
{
	TupleTableSlot *ks = st->groups.keyslot;

	for (int j = 0; j < n; j++)
	{
		uint32	   *slot;

		if (st->groups.direct && (slot = DirectSlot(st->groups.direct, st->groups.hashcxt, keys[j])) != NULL &&
			likely(*slot != DIRECT_EMPTY))
		{
			groups[j] = *slot;
			continue;
		}
		ExecClearTuple(ks);
		for (int k = 0; k < st->groups.nkeys; k++)
		{
			ks->tts_values[k] = keys[(Size) k * MaxHeapTuplesPerPage + j];
			ks->tts_isnull[k] = false;
		}
		ExecStoreVirtualTuple(ks);
		groups[j] = GpuAggGroupLookup(st);
	}
}

/* Start a run with no groups: the tables emptied, the per-group arrays made anew. */
void
GpuAggKeysReset(GpuAggState *st)
{
	if (st->groups.hashtable)
		ResetTupleHashTable(st->groups.hashtable);
	MemoryContextReset(st->groups.hashcxt);
	if (st->groups.images)
	{
		st->groups.images->table = keyimage_create(st->groups.hashcxt, 256, NULL);
		st->groups.images->packed = packedkey_create(st->groups.hashcxt, 256, NULL);
		memset(st->groups.images->recent_group, 0xFF, sizeof(st->groups.images->recent_group));
	}
	if (st->groups.direct)
	{
		memset(st->groups.direct->pages, 0, sizeof(st->groups.direct->pages));
		st->groups.direct->started = false;
		st->groups.direct->pages_left = (int) Min(get_hash_memory_limit() / 2 / (sizeof(uint32) * DIRECT_PAGE_SIZE),
										   DIRECT_PAGES);
	}
	st->groups.ngroups = 0;
	st->groups.next_group = 0;
	st->groups.groups_cap = GPUAGG_GROUPS_START;
	st->groups.group_keys = MemoryContextAllocHuge(st->runcxt, sizeof(MinimalTuple) * st->groups.groups_cap);
	st->groups.group_rows = MemoryContextAllocHuge(st->runcxt, sizeof(int64) * st->groups.groups_cap);
}

/* Let go of the key slots' tuples (the device buffers go with the node's memory contexts). */
void
GpuAggGroupsEnd(GpuAggState *st)
{
	if (st->groups.groupslot)
		ExecClearTuple(st->groups.groupslot);
	if (st->groups.keyslot)
		ExecClearTuple(st->groups.keyslot);
}
