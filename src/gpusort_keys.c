/*
 * gpusort_keys.c
 *		GpuSort's row keys: their layout, built from a batch of rows, and
 *		decoded back into rows in keys-only mode.
 *
 * Each key column takes a NULL flag bit (0 for the NULLs that come first)
 * and its gpu_sort key (inverted for DESC); the columns are packed, most
 * significant first, into as few 64-bit words as hold them.  Float keys
 * before the last make -0 equal to +0, so that a later key decides; in
 * keys-only mode one extra low bit per such key remembers the -0.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/float.h"

#include "gpusort.h"

/* Whether a key's type has a -0 that compares equal to +0. */
static bool
HasNegativeZero(const GpuextSortType *type)
{
	return type->typid == FLOAT4OID || type->typid == FLOAT8OID;
}

/* Whether every output column is a sort key, so that rows can be rebuilt from their keys. */
static bool
ValuesAreKeys(GpuSortState *st, TupleDesc desc)
{
	for (int a = 0; a < desc->natts; a++)
	{
		bool		is_key = false;

		for (int k = 0; k < st->spec.nkeys; k++)
			is_key |= st->spec.colidx[k] == a + 1;
		if (!is_key || !TupleDescAttr(desc, a)->attbyval)
			return false;
	}
	return true;
}

/* Lay the key columns out in words: flag and value of each from the top, keys-only -0 bits at the bottom. */
void
GpuSortLayoutKeys(GpuSortState *st, TupleDesc desc)
{
	int			total = 0;
	int			nnegzero = 0;
	int			i;

	st->key.layout = palloc(sizeof(KeyLayout) * st->spec.nkeys);
	st->key.natts = desc->natts;
	st->key.keys_only = ValuesAreKeys(st, desc);

	for (i = 0; i < st->spec.nkeys; i++)
	{
		total += 1 + 8 * st->spec.types[i]->key_bytes;
		if (st->key.keys_only && i < st->spec.nkeys - 1 && HasNegativeZero(st->spec.types[i]))
			nnegzero++;
	}
	total += nnegzero;
	st->key.nnegzero = nnegzero;
	st->key.nwords = (total + 63) / 64;
	st->key.top_bits = total - 64 * (st->key.nwords - 1);
	for (i = 0, nnegzero = 0; i < st->spec.nkeys; i++)
	{
		KeyLayout  *l = &st->key.layout[i];
		const GpuextSortType *type = st->spec.types[i];

		/* The last key needs no -0 = +0 tie: nothing comes after it */
		l->type = type;
		l->raw = i == st->spec.nkeys - 1;
		l->bits = 8 * type->key_bytes;
		l->mask = l->bits == 64 ? ~UINT64CONST(0) : (UINT64CONST(1) << l->bits) - 1;
		l->invert = st->spec.descending[i] ? l->mask : 0;
		l->null_flag = st->spec.nullsfirst[i] ? 0 : 1;
		l->flag_lo = total - 1;
		l->value_lo = total - 1 - l->bits;
		total = l->value_lo;
		l->negzero_lo = -1;
		l->negzero = type->typid == FLOAT4OID ? Float4GetDatum(-0.0f) : Float8GetDatum(-0.0);
		if (st->key.keys_only && i < st->spec.nkeys - 1 && HasNegativeZero(type))
			l->negzero_lo = nnegzero++;
	}
	if (st->key.keys_only)
	{
		st->key.attkey = palloc(sizeof(int) * st->key.natts);
		for (int a = 0; a < st->key.natts; a++)
			for (int k = st->spec.nkeys - 1; k >= 0; k--)
				if (st->spec.colidx[k] == a + 1)
					st->key.attkey[a] = k;
	}
}

/*
 * Build the keys of a batch of rows from their key column values, key column
 * by key column (each column's values keyed in one call).  A field lies in
 * one word or straddles two, the same way for every row.
 */
void
GpuSortBuildKeys(GpuSortState *st, uint64 *keys, const Datum *values, const bool *isnull, int nrows)
{
	uint64		colkeys[KEY_BATCH];
	const int	nw = st->key.nwords;
	const int	nk = st->spec.nkeys;

	Assert(nrows <= KEY_BATCH);
	memset(keys, 0, sizeof(uint64) * nw * nrows);
	for (int k = 0; k < nk; k++)
	{
		const KeyLayout *l = &st->key.layout[k];
		const bool *nulls = isnull + k;
		const uint64 invert = l->invert;
		const uint64 null_flag = l->null_flag;
		const int	fw = nw - 1 - l->flag_lo / 64;
		const int	fs = l->flag_lo % 64;
		const int	vw = nw - 1 - l->value_lo / 64;
		const int	vs = l->value_lo % 64;

		l->type->datums_keys(values + k, nk, colkeys, nrows, l->raw);
		if (vs + l->bits <= 64)
			for (int r = 0; r < nrows; r++)
			{
				uint64		notnull = !nulls[r * nk];
				uint64	   *words = keys + (size_t) r * nw;

				words[fw] |= (null_flag ^ notnull) << fs;
				words[vw] |= ((colkeys[r] ^ invert) & -notnull) << vs;
			}
		else
			for (int r = 0; r < nrows; r++)
			{
				uint64		notnull = !nulls[r * nk];
				uint64	   *words = keys + (size_t) r * nw;
				uint64		key = (colkeys[r] ^ invert) & -notnull;

				words[fw] |= (null_flag ^ notnull) << fs;
				words[vw] |= key << vs;
				words[vw - 1] |= key >> (64 - vs);
			}
		if (l->negzero_lo >= 0)
			for (int r = 0; r < nrows; r++)
				if (!nulls[r * nk] && values[r * nk + k] == l->negzero)
					keys[(size_t) r * nw + nw - 1 - l->negzero_lo / 64] |= UINT64CONST(1) << (l->negzero_lo % 64);
	}
}

/* The word holding bit lo of the key at keys; rows lie nwords apart. */
static inline const uint64 *
KeyWord(GpuSortState *st, const uint64 *keys, int lo)
{
	return keys + (st->key.nwords - 1 - lo / 64);
}

/*
 * Decode the sorted keys of up to KEY_BATCH rows from first, all of them
 * rows beside need (on the device: in need's piece), into the batch.
 */
void
GpuSortDecodeBatch(GpuSortState *st, size_t first, size_t need)
{
	size_t		n = Min(KEY_BATCH, st->store.nrows - first);
	const uint64 *keys;

	if (st->devrows.active)
	{
		size_t		piece_first,
					piece_end;
		const uint64 *at = GpuSortDevRowsKeys(st, need, &piece_first, &piece_end);

		first = Max(first, piece_first);
		n = Min(KEY_BATCH, piece_end - first);
		keys = at - (need - first) * st->key.nwords;
	}
	else
	{
		const char *next;

		keys = GpuSortSortedKey(st, first);
		next = (const char *) (keys + n * st->key.nwords);
		/* The next batch's keys, ahead of their turn (a hint: past the end it is ignored) */
		for (size_t off = 0; off < n * st->key.nwords * sizeof(uint64); off += 64)
			__builtin_prefetch(next + off);
	}
	GpuSortDecodeKeys(st, keys, n);
	st->key.dec_first = first;
}

/*
 * Decode n (up to KEY_BATCH) row keys into the batch, column by column, each
 * column's values in one call.  A field lies in one word or straddles two,
 * the same way for every row.
 */
void
GpuSortDecodeKeys(GpuSortState *st, const uint64 *keys, size_t n)
{
	uint64		colkeys[KEY_BATCH];

	for (int a = 0; a < st->key.natts; a++)
	{
		const KeyLayout *l = &st->key.layout[st->key.attkey[a]];
		Datum	   *values = st->key.dec_values + a;
		bool	   *isnull = st->key.dec_isnull + a;
		const int	nw = st->key.nwords;
		const uint64 *vw = KeyWord(st, keys, l->value_lo);
		const uint64 *fw = KeyWord(st, keys, l->flag_lo);
		int			vs = l->value_lo % 64;
		int			fs = l->flag_lo % 64;

		if (vs + l->bits <= 64)
			for (size_t r = 0; r < n; r++)
				colkeys[r] = ((vw[r * nw] >> vs) & l->mask) ^ l->invert;
		else
			for (size_t r = 0; r < n; r++)
				colkeys[r] = (((vw[r * nw] >> vs) | (vw[r * nw - 1] << (64 - vs))) & l->mask) ^ l->invert;
		l->type->keys_datums(colkeys, values, st->key.natts, n);
		for (size_t r = 0; r < n; r++)
		{
			isnull[r * st->key.natts] = ((fw[r * nw] >> fs) & 1) == l->null_flag;
			if (isnull[r * st->key.natts])
				values[r * st->key.natts] = (Datum) 0;
		}
		if (l->negzero_lo >= 0)
		{
			const uint64 *zw = KeyWord(st, keys, l->negzero_lo);
			int			zs = l->negzero_lo % 64;

			for (size_t r = 0; r < n; r++)
				if ((zw[r * nw] >> zs) & 1)
					values[r * st->key.natts] = l->negzero;
		}
	}
	st->key.dec_n = n;
}
