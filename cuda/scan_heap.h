/*
 * scan_heap.h
 *		The device scan's tuple decoder and the program it runs on each
 *		visible tuple of a heap page as stored: the WHERE clause, each
 *		output's FILTER, and the column values that go out, dense, to the
 *		reductions (gpuext_reduce).  Shared by the kernel (scan_heap.cu), the
 *		fake device and the CPU redoing a batch, so all three run one code.
 *
 * Pages are PostgreSQL heap pages of 8 kB as stored on disk: the layouts of
 * storage/bufpage.h, storage/itemid.h, access/htup_details.h and varatt.h,
 * which pg_upgrade keeps fixed, read little-endian.  Plain C, no postgres.h.
 * A tuple whose bytes do not add up (an item past the page, a header past
 * the item, a column past the tuple) is counted as undecodable and left
 * out, for the caller to read that batch on the CPU.
 */
#ifndef GPUEXT_SCAN_HEAP_H
#define GPUEXT_SCAN_HEAP_H

#include "gpuext_cuda.h"

#include <math.h>

#define GPUEXT_SCAN_PAGE_BYTES 8192
#define GPUEXT_SCAN_MAX_TUPLES 291	/* MaxHeapTuplesPerPage at 8 kB */
#define GPUEXT_SCAN_MAX_ATTS 64		/* columns walked, up to the last one read */
#define GPUEXT_SCAN_MAX_COLS 16		/* columns read */
#define GPUEXT_SCAN_MAX_CMPS 32
#define GPUEXT_SCAN_MAX_OUTS 16
#define GPUEXT_SCAN_MAX_REGS 32		/* double precision registers of the arithmetic */
#define GPUEXT_SCAN_MAX_NREGS 24	/* numeric registers: 128-bit integers at known scales */
#define GPUEXT_SCAN_MAX_KEYS 4		/* GROUP BY keys, packed into one key image */
#define GPUEXT_SCAN_KEY_WORDS 4		/* ... of this many 64-bit words */
#define GPUEXT_SCAN_KEY_BYTES (8 * GPUEXT_SCAN_KEY_WORDS)
#define GPUEXT_SCAN_MAX_COUNTERS (GPUEXT_SCAN_MAX_OUTS + 1)	/* per-group counts: rows, then counted outputs */

/* Per page, its visible items: vis[0] their number, then their item numbers; or all normal items. */
#define GPUEXT_SCAN_VIS_SLOTS (GPUEXT_SCAN_MAX_TUPLES + 1)
#define GPUEXT_SCAN_ALL_VISIBLE 0xFFFF

/* The counters a scan writes, then one per output: its values. */
#define GPUEXT_SCAN_PASSED 0		/* tuples that passed the WHERE clause */
#define GPUEXT_SCAN_DECODED 1		/* visible tuples decoded */
#define GPUEXT_SCAN_BAD 2			/* tuples that could not be decoded */
#define GPUEXT_SCAN_ERRORS 3		/* passing tuples whose arithmetic raises an error */
#define GPUEXT_SCAN_NEW_GROUPS 4	/* GROUP BY, the keys pass: key images new to the table */
#define GPUEXT_SCAN_MISSES 5		/* GROUP BY, the values pass: passing tuples whose keys have no group yet */
#define GPUEXT_SCAN_OUT_COUNT 6
#define GPUEXT_SCAN_COUNTERS (GPUEXT_SCAN_OUT_COUNT + GPUEXT_SCAN_MAX_OUTS)

/* How a column's bytes are read. */
typedef enum GpuextScanKind
{
	GPUEXT_SCAN_NULLNESS = 0,	/* only whether it is NULL (any width) */
	GPUEXT_SCAN_INT,			/* a signed integer of 2, 4 or 8 bytes (date, timestamps too) */
	GPUEXT_SCAN_FLOAT4,
	GPUEXT_SCAN_FLOAT8,
	GPUEXT_SCAN_BYTES,			/* its bytes (a GROUP BY key): where they start in the page, and how many */
	GPUEXT_SCAN_NUMERIC			/* a numeric as the bigint at scale (scan_heap_numeric.h) */
} GpuextScanKind;

/* A column the program reads. */
typedef struct GpuextScanCol
{
	int16_t		att;			/* from 0; the columns in ascending order, each once */
	uint8_t		kind;			/* GpuextScanKind */
	uint8_t		missing_null;	/* a tuple with fewer columns: NULL here, else missing */
	uint8_t		scale;			/* GPUEXT_SCAN_NUMERIC: the scale its values are read at */
	uint8_t		pad[3];
	int64_t		missing;		/* ... the column's default (atthasmissing), as read */
} GpuextScanCol;

/*
 * Text comparisons (strategy = or <>, for NOT): the column's bytes equal the
 * constant's, the same without the value's trailing blanks (char(n)), start
 * with them (LIKE 'prefix%'), end with them (LIKE '%suffix') or hold them
 * (LIKE '%infix%').  A constant past GPUEXT_SCAN_TEXT_BYTES (not an infix)
 * is compared in parts, each one comparison: its length, and its bytes at
 * their place.  Any other LIKE pattern (with _, escapes, % inside or a long
 * infix) is matched as PostgreSQL's MatchText does: the pattern, as the
 * planner gives it (escape \), is like_bytes[toff .. + tfull).
 */
#define GPUEXT_SCAN_TEXT_BYTES 16
#define GPUEXT_SCAN_TEXT_EQUAL 1
#define GPUEXT_SCAN_TEXT_BPCHAR 2
#define GPUEXT_SCAN_TEXT_PREFIX 3
#define GPUEXT_SCAN_TEXT_SUFFIX 4
#define GPUEXT_SCAN_TEXT_CONTAINS 5
#define GPUEXT_SCAN_TEXT_LIKE 6
#define GPUEXT_SCAN_LIKE_BYTES 128	/* the program's room for LIKE patterns */

/* Strategies past btree's, and the null tests. */
#define GPUEXT_SCAN_NOT_EQUAL 6
#define GPUEXT_SCAN_IS_NULL 1
#define GPUEXT_SCAN_IS_NOT_NULL 2

/* A comparison of a column with a constant, false where the column is NULL; or a null test. */
typedef struct GpuextScanCmp
{
	uint8_t		col;			/* index into cols */
	uint8_t		strategy;		/* btree strategy: 1 <, 2 <=, 3 =, 4 >=, 5 >; 6 <> */
	uint8_t		is_float;		/* compared as double precision, NaN above all and equal to itself */
	uint8_t		nulltest;		/* GPUEXT_SCAN_IS_NULL or _IS_NOT_NULL: only the column's NULL counts */
	uint8_t		num_up;			/* a numeric column: its value * 10^num_up is compared with ival */
	uint8_t		or_next;		/* this and the next comparison are in one OR group */
	uint8_t		text;			/* GPUEXT_SCAN_TEXT_*: a GPUEXT_SCAN_BYTES column's bytes against tbytes */
	uint8_t		tlen;			/* ... the constant's length */
	uint8_t		unit;			/* a date or timestamp column: its image under this unit is compared */
	uint8_t		micros;			/* ... (GPUEXT_SCAN_TRUNC_* or _FIELD_*) of a timestamp, else of a date */
	uint16_t	tfull;			/* text: the whole constant's length, of which tbytes ... */
	uint16_t	toff;			/* ... are the tlen bytes from here (a longer constant in parts) */
	uint8_t		utf8;			/* GPUEXT_SCAN_TEXT_LIKE: _ and % step over UTF-8 characters, else bytes */
	uint8_t		pad;
	int64_t		modulus;		/* integers, > 0: the value modulo this is compared */
	int64_t		ival;
	double		fval;
	unsigned char tbytes[GPUEXT_SCAN_TEXT_BYTES];
} GpuextScanCmp;

/* One output: a column's non-NULL values where its FILTER passes, dense; or only their count. */
typedef struct GpuextScanOut
{
	int8_t		col;			/* index into cols; -1: every row (count(*) FILTER) */
	uint8_t		value_bytes;	/* 2, 4 or 8: the column's own bytes; 0: only counted */
	uint8_t		filter_first;	/* its FILTER: cmps[filter_first .. + filter_n) */
	uint8_t		filter_n;
	uint8_t		from_reg;		/* the value is register reg's (GPUEXT_SCAN_FROM_*), not the column's */
	uint8_t		reg;
	uint8_t		counter;		/* GROUP BY, value_bytes 0: its per-group counts are counter (> 0) */
	uint8_t		pad;
	uint64_t	offset;			/* its values start here in the outputs */
	uint64_t	groups_offset;	/* GROUP BY: each value's group number (uint32) starts here */
} GpuextScanOut;

/* Where an output's value comes from: the column, a double precision register, a numeric register. */
#define GPUEXT_SCAN_FROM_COLUMN 0
#define GPUEXT_SCAN_FROM_DOUBLE 1
#define GPUEXT_SCAN_FROM_NUMERIC 2

/* The arithmetic's operations, as PostgreSQL's float8 operators (utils/float.h). */
typedef enum GpuextScanOp
{
	GPUEXT_SCAN_ADD = 0,
	GPUEXT_SCAN_SUB,
	GPUEXT_SCAN_MUL,
	GPUEXT_SCAN_DIV,
	GPUEXT_SCAN_NEG,
	GPUEXT_SCAN_SEL,			/* CASE WHEN: regs[a] where cmps[cmp_first .. + cmp_n) hold, else regs[b] */
	GPUEXT_SCAN_MOD,			/* integers only (numeric registers), as int4mod */
	GPUEXT_SCAN_TO_REAL			/* real steps only: regs[a] (b = a) rounded to real, as dtof */
} GpuextScanOp;

/* regs[dst] = regs[a] op regs[b] (NEG: -regs[a]), NULL where an operand is (SEL: the one taken). */
typedef struct GpuextScanStep
{
	uint8_t		op;
	uint8_t		dst;
	uint8_t		a;
	uint8_t		b;
	uint8_t		cmp_first;		/* SEL: its condition */
	uint8_t		cmp_n;
	uint8_t		real;			/* rounded to real, as float4_pl ... compute */
	uint8_t		pad;
} GpuextScanStep;

/*
 * A GROUP BY key, at byte at of the key image: a tag byte (0 NULL, else 1 +
 * its length) then up to width bytes: a column's bytes (kind
 * GPUEXT_SCAN_BYTES), an integer column (GPUEXT_SCAN_INT) modulo modulus
 * (> 0), as int2mod, int4mod and int8mod give it, in width bytes, or a date
 * (days) or timestamp (micros: microseconds) column under a unit: the first
 * day or microsecond of its day, week, month, quarter, year, hour, minute or
 * second (date_trunc), or a value of year 2000 with the same quarter, month,
 * day of the month, day of the year, day of the week, hour, minute or
 * second (extract's fields), or of 2004 with the same ISO week (week),
 * standing for the key's value (the CPU computes that from it).
 */
#define GPUEXT_SCAN_TRUNC_NONE 0
#define GPUEXT_SCAN_TRUNC_DAY 1
#define GPUEXT_SCAN_TRUNC_MONTH 2
#define GPUEXT_SCAN_TRUNC_QUARTER 3
#define GPUEXT_SCAN_TRUNC_YEAR 4
#define GPUEXT_SCAN_TRUNC_WEEK 5
#define GPUEXT_SCAN_TRUNC_HOUR 6	/* these three of timestamps only */
#define GPUEXT_SCAN_TRUNC_MINUTE 7
#define GPUEXT_SCAN_TRUNC_SECOND 8
#define GPUEXT_SCAN_FIELD_QUARTER 9
#define GPUEXT_SCAN_FIELD_MONTH 10
#define GPUEXT_SCAN_FIELD_DAY 11
#define GPUEXT_SCAN_FIELD_DOY 12
#define GPUEXT_SCAN_FIELD_DOW 13
#define GPUEXT_SCAN_FIELD_HOUR 14	/* these three of timestamps only */
#define GPUEXT_SCAN_FIELD_MINUTE 15
#define GPUEXT_SCAN_FIELD_SECOND 16
#define GPUEXT_SCAN_FIELD_WEEK 17	/* ISO 8601's week of the year */
#define GPUEXT_SCAN_UNITS 18

typedef struct GpuextScanKey
{
	uint8_t		col;
	uint8_t		at;
	uint8_t		width;
	uint8_t		trunc;			/* GPUEXT_SCAN_TRUNC_* or _FIELD_* */
	uint8_t		micros;			/* ... of a timestamp column, else of a date column */
	uint8_t		pad2[3];
	int64_t		modulus;
} GpuextScanKey;

/* The passes of a GROUP BY scan: its keys into the table, then its values with their groups. */
#define GPUEXT_SCAN_PASS_KEYS 1
#define GPUEXT_SCAN_PASS_VALUES 2

/* A key image the keys pass found new: its slot in the table, and the image. */
typedef struct GpuextScanNewGroup
{
	uint32_t	slot;
	uint32_t	pad;
	uint64_t	image[GPUEXT_SCAN_KEY_WORDS];
} GpuextScanNewGroup;

/*
 * regs[dst] = a column as double precision, or, real, an integer or numeric
 * column rounded once to real (i8tof, numeric_float4); or nregs[dst] = a
 * numeric column at its scale.
 */
typedef struct GpuextScanLoad
{
	uint8_t		col;
	uint8_t		dst;
	uint8_t		real;
} GpuextScanLoad;

/*
 * nregs[dst] = nregs[a] * 10^ka op nregs[b] * 10^kb (ka, kb: + and - only),
 * as numeric's exact arithmetic; or, int_bytes > 0, an operation of
 * integers of that width (scale 0), whose result out of the type's range
 * PostgreSQL raises (int4pl, int4div ...); or a CASE WHEN's select.
 */
typedef struct GpuextScanNumStep
{
	uint8_t		op;				/* GPUEXT_SCAN_ADD, _SUB, _MUL, _NEG, _SEL; integers also _DIV, _MOD */
	uint8_t		dst;
	uint8_t		a;
	uint8_t		b;
	uint8_t		ka;
	uint8_t		kb;
	uint8_t		int_bytes;		/* 0 numeric; 2, 4 or 8 */
	uint8_t		cmp_first;		/* SEL: its condition */
	uint8_t		cmp_n;
	uint8_t		pad[3];
} GpuextScanNumStep;

typedef struct GpuextScanProgram
{
	uint16_t	walk_atts;		/* columns walked in each tuple */
	uint8_t		ncols;
	uint8_t		nquals;			/* the WHERE clause: cmps[0 .. nquals) */
	uint8_t		ncmps;
	uint8_t		nouts;
	uint16_t	pad;
	uint64_t	out_cap;		/* values each output has room for */
	int16_t		att_len[GPUEXT_SCAN_MAX_ATTS];	/* attlen: > 0, -1 (varlena) */
	uint8_t		att_align[GPUEXT_SCAN_MAX_ATTS];	/* alignment in bytes: 1, 2, 4, 8 */
	GpuextScanCol cols[GPUEXT_SCAN_MAX_COLS];
	GpuextScanCmp cmps[GPUEXT_SCAN_MAX_CMPS];
	GpuextScanOut outs[GPUEXT_SCAN_MAX_OUTS];
	/* double precision arithmetic for the rows that pass the WHERE clause: loads, then steps */
	uint8_t		nregs;
	uint8_t		nloads;
	uint8_t		nsteps;
	uint8_t		pad2;
	uint32_t	const_nulls;	/* bit r: register r starts NULL (a CASE's NULL branch) */
	GpuextScanLoad loads[GPUEXT_SCAN_MAX_REGS];
	GpuextScanStep steps[GPUEXT_SCAN_MAX_REGS];
	double		consts[GPUEXT_SCAN_MAX_REGS];	/* the registers' starting values: the constants */
	/* numeric arithmetic (scan_heap_numeric.h): loads, then steps, on 128-bit integers */
	uint8_t		nnregs;
	uint8_t		nnloads;
	uint8_t		nnsteps;
	uint8_t		pad3;
	uint32_t	numconst_nulls;	/* bit r: numeric register r starts NULL (a CASE's NULL branch) */
	GpuextScanLoad numloads[GPUEXT_SCAN_MAX_NREGS];
	GpuextScanNumStep numsteps[GPUEXT_SCAN_MAX_NREGS];
	int64_t		numconsts[GPUEXT_SCAN_MAX_NREGS];	/* the numeric registers' starting values */
	/*
	 * GROUP BY (nkeys > 0): a hash table of table_cap (a power of two) key
	 * images in the outputs (a uint32 state each, then two uint64 words each),
	 * kept from batch to batch; the new ones of a keys pass listed at
	 * new_offset; map_offset, per slot its group number (the caller's); and
	 * ncounters per-group counts of a values pass at counts_offset (counter c
	 * of group g at c * table_cap + g; counter 0 the rows that pass).  Where
	 * number_groups is set the keys pass numbers the groups itself, from
	 * group_base on: each new image listed at its group's place in the list,
	 * the map written, and the counts kept from pass to pass.
	 */
	uint8_t		nkeys;
	uint8_t		pass;			/* GPUEXT_SCAN_PASS_KEYS or _VALUES */
	uint8_t		clear_table;	/* the keys pass starts with an empty table */
	uint8_t		ncounters;
	uint32_t	table_cap;
	GpuextScanKey keys[GPUEXT_SCAN_MAX_KEYS];
	uint64_t	table_offset;
	uint64_t	new_offset;
	uint64_t	map_offset;
	uint64_t	counts_offset;
	uint32_t	group_base;		/* number_groups: the groups numbered before this keys pass */
	uint8_t		number_groups;
	uint8_t		like_used;		/* bytes of like_bytes taken */
	uint8_t		pad4[2];
	unsigned char like_bytes[GPUEXT_SCAN_LIKE_BYTES];	/* GPUEXT_SCAN_TEXT_LIKE's patterns */
} GpuextScanProgram;

/* One tuple's columns as the program reads them, and its arithmetic's registers. */
typedef struct GpuextScanRow
{
	const unsigned char *page;	/* where a GPUEXT_SCAN_BYTES column's offset points */
	int64_t		vals[GPUEXT_SCAN_MAX_COLS];
	uint32_t	nulls;			/* bit c: column c is NULL */
	uint32_t	nans;			/* bit c: numeric column c is NaN (its value 0) */
	uint32_t	reg_nulls;		/* bit r: register r is NULL */
	uint32_t	nreg_nulls;		/* bit r: numeric register r is NULL */
	uint32_t	reg_errs;		/* bit r: register r unknown (PostgreSQL raises, or the device cannot compute it) */
	uint32_t	nreg_errs;		/* bit r: numeric register r unknown */
	double		regs[GPUEXT_SCAN_MAX_REGS];
	__int128	numregs[GPUEXT_SCAN_MAX_NREGS];
} GpuextScanRow;

/* A select's marks (NULL, unknown) for register dst: those of the branch taken. */
static inline GPUEXT_HD void
gpuext_scan_mark_select(uint32_t *nulls, uint32_t *errs, int dst, int taken)
{
	*nulls = (*nulls & ~(1u << dst)) | (((*nulls >> taken) & 1u) << dst);
	*errs = (*errs & ~(1u << dst)) | (((*errs >> taken) & 1u) << dst);
}

/*
 * A strict step's marks for register dst from its operands (b unread where
 * unary): unknown where one is, as PostgreSQL evaluates arguments first,
 * else NULL where one is; 1 where so marked, with nothing to compute.
 */
static inline GPUEXT_HD int
gpuext_scan_mark_operands(uint32_t *nulls, uint32_t *errs, int dst, int a, int b, int unary)
{
	uint32_t	read = (1u << a) | (unary ? 0u : 1u << b);

	if (*errs & read)
		*errs |= 1u << dst;
	else if (*nulls & read)
		*nulls |= 1u << dst;
	else
		return 0;
	return 1;
}

/* A little-endian 16-bit word. */
static inline GPUEXT_HD unsigned
gpuext_scan_u16(const unsigned char *p)
{
	return (unsigned) p[0] | ((unsigned) p[1] << 8);
}

/* A little-endian 32-bit word. */
static inline GPUEXT_HD uint32_t
gpuext_scan_u32(const unsigned char *p)
{
	return (uint32_t) p[0] | ((uint32_t) p[1] << 8) | ((uint32_t) p[2] << 16) | ((uint32_t) p[3] << 24);
}

/* A varlena's size on disk from its header (VARSIZE_ANY), or 0 where it is not sound. */
static inline GPUEXT_HD uint32_t
gpuext_scan_varsize(const unsigned char *p, uint32_t avail)
{
	uint32_t	size;

	if (avail < 1)
		return 0;
	if (p[0] == 0x01)
	{
		/* a TOAST pointer: 2 header bytes and the tag's struct */
		if (avail < 2)
			return 0;
		switch (p[1])
		{
			case 18:			/* VARTAG_ONDISK: varatt_external */
				return 2 + 16;
			case 1:				/* VARTAG_INDIRECT, VARTAG_EXPANDED_RO/RW: a pointer */
			case 2:
			case 3:
				return 2 + 8;
			default:
				return 0;
		}
	}
	if (p[0] & 0x01)
		return (uint32_t) (p[0] >> 1) & 0x7F;
	if (avail < 4)
		return 0;
	size = (gpuext_scan_u32(p) >> 2) & 0x3FFFFFFF;
	return size < 4 ? 0 : size;
}

#include "scan_heap_numeric.h"
#include "scan_heap_units.h"

/* A column's value read at p: integers sign-extended, floats' bits. */
static inline GPUEXT_HD int64_t
gpuext_scan_read(const unsigned char *p, int len)
{
	switch (len)
	{
		case 8:
			return (int64_t) ((uint64_t) gpuext_scan_u32(p) | ((uint64_t) gpuext_scan_u32(p + 4) << 32));
		case 4:
			return (int64_t) (int32_t) gpuext_scan_u32(p);
		case 2:
			return (int64_t) (int16_t) gpuext_scan_u16(p);
		default:
			return (int64_t) (int8_t) p[0];
	}
}

/*
 * Decode the tuple of item lp (from 1) of page into row: 1 where it is a
 * normal item, 0 where it is not (unused, redirect, dead), -1 where its bytes
 * do not add up.  Columns are walked as slot_deform_heap_tuple walks them.
 */
static inline GPUEXT_HD int
gpuext_scan_decode(const GpuextScanProgram *p, const unsigned char *page, unsigned lp, GpuextScanRow *row)
{
	unsigned	lower = gpuext_scan_u16(page + 12);
	uint32_t	item;
	unsigned	lp_off,
				lp_len,
				natts,
				hoff,
				hasnull;
	const unsigned char *tup;
	const unsigned char *data;
	uint32_t	len,
				off = 0;
	int			c = 0;

	if (lp < 1 || 24 + 4 * lp > lower || lower > GPUEXT_SCAN_PAGE_BYTES)
		return -1;
	row->page = page;
	item = gpuext_scan_u32(page + 24 + 4 * (lp - 1));
	if (((item >> 15) & 3) != 1)	/* LP_NORMAL */
		return 0;
	lp_off = item & 0x7FFF;
	lp_len = item >> 17;
	if (lp_off < 24 || lp_len < 23 || lp_off + lp_len > GPUEXT_SCAN_PAGE_BYTES)
		return -1;
	tup = page + lp_off;
	natts = gpuext_scan_u16(tup + 18) & 0x07FF;
	hasnull = gpuext_scan_u16(tup + 20) & 0x0001;
	hoff = tup[22];
	if (hoff < 23 || hoff > lp_len || (hasnull && 23 + (natts + 7) / 8 > hoff))
		return -1;
	data = tup + hoff;
	len = lp_len - hoff;
	row->nulls = 0;
	row->nans = 0;
	for (unsigned a = 0; a < p->walk_atts && c < p->ncols && a < natts; a++)
	{
		int			attlen = p->att_len[a];
		uint32_t	align = p->att_align[a];
		uint32_t	size;
		int			wanted = p->cols[c].att == (int) a;

		if (hasnull && !(tup[23 + (a >> 3)] & (1u << (a & 7))))
		{
			if (wanted)
				row->nulls |= 1u << c++;
			continue;
		}
		if (attlen > 0 || (off < len && data[off] == 0))
			off = (off + align - 1) & ~(align - 1);
		if (off > len)
			return -1;
		if (attlen > 0)
			size = (uint32_t) attlen;
		else if (attlen == -1)
			size = gpuext_scan_varsize(data + off, len - off);
		else
			return -1;
		if (size == 0 || size > len - off)
			return -1;
		if (wanted)
		{
			if (p->cols[c].kind == GPUEXT_SCAN_BYTES)
			{
				/* a key's bytes: inline and uncompressed, else the CPU reads the batch */
				uint32_t	skip = 0;

				if (attlen == -1)
				{
					if (data[off] == 0x01 || (!(data[off] & 0x01) && (data[off] & 0x02)))
						return -1;
					skip = (data[off] & 0x01) ? 1 : 4;
				}
				row->vals[c] = (int64_t) (((uint64_t) (data + off + skip - page) << 32) | (size - skip));
			}
			else if (p->cols[c].kind == GPUEXT_SCAN_NUMERIC)
			{
				/* inline, uncompressed, NaN or exact at the scale, else the CPU reads the batch */
				uint32_t	skip = (data[off] & 0x01) ? 1 : 4;
				int			got;

				if (attlen != -1 || data[off] == 0x01 || (!(data[off] & 0x01) && (data[off] & 0x02)))
					return -1;
				got = gpuext_scan_numeric_read(data + off + skip, size - skip, p->cols[c].scale, &row->vals[c]);
				if (got == 0)
					return -1;
				if (got == GPUEXT_SCAN_NUMERIC_NAN)
					row->nans |= 1u << c;
			}
			else if (p->cols[c].kind != GPUEXT_SCAN_NULLNESS)
				row->vals[c] = gpuext_scan_read(data + off, attlen);
			c++;
		}
		off += size;
	}
	/* columns the tuple does not have: added later, with their default or NULL */
	for (; c < p->ncols; c++)
	{
		if (p->cols[c].missing_null)
			row->nulls |= 1u << c;
		else
			row->vals[c] = p->cols[c].missing;
	}
	/* a date_trunc compared that the device leaves to the CPU: the CPU reads the batch */
	for (int i = 0; i < p->ncmps; i++)
	{
		int64_t		rep;

		if (p->cmps[i].unit != GPUEXT_SCAN_TRUNC_NONE && !(row->nulls & (1u << p->cmps[i].col)) &&
			gpuext_scan_cmp_unit(&p->cmps[i], row->vals[p->cmps[i].col], &rep) < 0)
			return -1;
	}
	return 1;
}

/* A column's value as double precision. */
static inline GPUEXT_HD double
gpuext_scan_double(const GpuextScanProgram *p, const GpuextScanRow *row, int c)
{
	int64_t		v = row->vals[c];

	if (p->cols[c].kind == GPUEXT_SCAN_FLOAT8)
	{
		double		d;

		memcpy(&d, &v, sizeof(d));
		return d;
	}
	if (p->cols[c].kind == GPUEXT_SCAN_FLOAT4)
	{
		int32_t		w = (int32_t) v;
		float		f;

		memcpy(&f, &w, sizeof(f));
		return (double) f;
	}
	return (double) v;
}

#include "scan_heap_cmps.h"

#include "scan_heap_float.h"

#include "scan_heap_compute.h"

/* Whether output o takes a value from row: its column not NULL and its FILTER passing. */
static inline GPUEXT_HD int
gpuext_scan_out_takes(const GpuextScanProgram *p, const GpuextScanRow *row, int o)
{
	const GpuextScanOut *out = &p->outs[o];

	if (out->from_reg == GPUEXT_SCAN_FROM_DOUBLE ? (row->reg_nulls & (1u << out->reg)) != 0 :
		out->from_reg == GPUEXT_SCAN_FROM_NUMERIC ? (row->nreg_nulls & (1u << out->reg)) != 0 :
		(out->col >= 0 && (row->nulls & (1u << out->col))))
		return 0;
	return gpuext_scan_cmps(p, row, out->filter_first, out->filter_n);
}

/* Write output o's value of row at index i of its dense values. */
static inline GPUEXT_HD void
gpuext_scan_out_put(const GpuextScanProgram *p, const GpuextScanRow *row, int o, char *outs, uint64_t i)
{
	const GpuextScanOut *out = &p->outs[o];
	char	   *dst = outs + out->offset + i * out->value_bytes;
	int64_t		v;

	if (out->from_reg == GPUEXT_SCAN_FROM_DOUBLE && out->value_bytes == 4)
	{
		/* a real argument: its register holds a real exactly */
		float		f = (float) row->regs[out->reg];

		memcpy(dst, &f, 4);
		return;
	}
	if (out->from_reg == GPUEXT_SCAN_FROM_DOUBLE)
	{
		memcpy(dst, &row->regs[out->reg], 8);
		return;
	}
	/* a numeric register's value is within its output's bytes, as the arithmetic checked */
	v = out->from_reg == GPUEXT_SCAN_FROM_NUMERIC ? (int64_t) row->numregs[out->reg] : row->vals[out->col];

	switch (out->value_bytes)
	{
		case 8:
			memcpy(dst, &v, 8);
			break;
		case 4:
			{
				int32_t		w = (int32_t) v;

				memcpy(dst, &w, 4);
				break;
			}
		default:
			{
				int16_t		h = (int16_t) v;

				memcpy(dst, &h, 2);
				break;
			}
	}
}

/* Item numbers to decode on a page: vis[1 .. n] of its visible items, or 1 .. n where all are. */
static inline GPUEXT_HD unsigned
gpuext_scan_items(const unsigned char *page, const uint16_t *vis, int *all)
{
	unsigned	lower = gpuext_scan_u16(page + 12);

	*all = vis[0] == GPUEXT_SCAN_ALL_VISIBLE;
	if (!*all)
		return vis[0] <= GPUEXT_SCAN_MAX_TUPLES ? vis[0] : 0;
	if (lower < 24 || lower > GPUEXT_SCAN_PAGE_BYTES)
		return 0;
	return (lower - 24) / 4 > GPUEXT_SCAN_MAX_TUPLES ? GPUEXT_SCAN_MAX_TUPLES : (lower - 24) / 4;
}

#include "scan_heap_groups.h"

/*
 * The device scan on the host: each page's tuples decoded and run through
 * the program, one after another (the fake device, and the CPU redoing a
 * batch).  counts (GPUEXT_SCAN_COUNTERS) are added to, not cleared, and so
 * are a values pass's per-group counts.
 */
static inline void
gpuext_scan_heap_host(const GpuextScanProgram *p, const char *pages, const uint16_t *vis, uint32_t npages,
					  uint64_t *counts, char *outs)
{
	GpuextScanRow row;

	for (uint32_t pg = 0; pg < npages; pg++)
	{
		const unsigned char *page = (const unsigned char *) pages + (size_t) pg * GPUEXT_SCAN_PAGE_BYTES;
		const uint16_t *v = vis + (size_t) pg * GPUEXT_SCAN_VIS_SLOTS;
		int			all;
		unsigned	n = gpuext_scan_items(page, v, &all);

		for (unsigned i = 0; i < n; i++)
		{
			int			r = gpuext_scan_decode(p, page, all ? i + 1 : v[i + 1], &row);
			uint64_t	image[GPUEXT_SCAN_KEY_WORDS];
			uint32_t	group = 0;

			if (r == 0)
				continue;
			if (r < 0)
			{
				counts[GPUEXT_SCAN_BAD]++;
				continue;
			}

			counts[GPUEXT_SCAN_DECODED]++;
			if (!gpuext_scan_cmps(p, &row, 0, p->nquals))
				continue;
			if (p->nkeys > 0 && !gpuext_scan_key_image(p, page, &row, image))
			{
				counts[GPUEXT_SCAN_BAD]++;
				continue;
			}
			if (p->nkeys > 0 && p->pass == GPUEXT_SCAN_PASS_KEYS)
			{
				if (!gpuext_scan_group_insert_host(p, outs, image, counts))
					counts[GPUEXT_SCAN_BAD]++;
				continue;
			}
			if (p->nkeys > 0 && (group = gpuext_scan_group_find(p, outs, image)) == GPUEXT_SCAN_NO_GROUP)
			{
				counts[GPUEXT_SCAN_MISSES]++;
				continue;
			}
			if (gpuext_scan_compute(p, &row))
			{
				counts[GPUEXT_SCAN_ERRORS]++;
				continue;
			}
			counts[GPUEXT_SCAN_PASSED]++;
			if (p->nkeys > 0)
				gpuext_scan_group_counts(p, outs, group)[0]++;
			for (int o = 0; o < p->nouts; o++)
			{
				uint64_t   *k = &counts[GPUEXT_SCAN_OUT_COUNT + o];

				if (!gpuext_scan_out_takes(p, &row, o))
					continue;
				if (p->nkeys > 0 && p->outs[o].value_bytes == 0)
					gpuext_scan_group_counts(p, outs, group)[(size_t) p->outs[o].counter * p->table_cap]++;
				if (p->outs[o].value_bytes > 0 && *k < p->out_cap)
				{
					gpuext_scan_out_put(p, &row, o, outs, *k);
					if (p->nkeys > 0)
						memcpy(outs + p->outs[o].groups_offset + *k * sizeof(uint32_t), &group, sizeof(group));
				}
				(*k)++;
			}
		}
	}
}

/*
 * Enqueue the gathering of a batch's npages pages into pages (device
 * memory): copies (npages pages) and refs (npages buffer indexes, or
 * GPUEXT_SCAN_COPIED, or with GPUEXT_SCAN_WHOLE for a page taken whole) are
 * pinned host memory the device reads in place, as it reads pool, the buffer
 * pool's device view (pool_blocks pages).
 *
 * Enqueue the scan of npages pages (device memory, one after another) whose
 * visible items are in vis (npages * GPUEXT_SCAN_VIS_SLOTS): counts (device,
 * GPUEXT_SCAN_COUNTERS words) set to this batch's, outputs' values into outs
 * (device, outs_bytes).  program is host memory (the GPU service's arena
 * through the service), read before the call returns.  An output whose
 * count passes out_cap has only out_cap values written.
 */
#ifdef __cplusplus
extern "C"
{
#endif
extern GpuextStatus gpuext_scan_gather_pages(char *pages, const char *copies, const uint32_t *refs, const char *pool,
											 uint32_t pool_blocks, uint32_t npages);
extern GpuextStatus gpuext_scan_heap(const GpuextScanProgram *program, const char *pages, const uint16_t *vis,
									 uint32_t npages, uint64_t *counts, char *outs, size_t outs_bytes);
#ifdef __cplusplus
}
#endif

#include "scan_heap_gather.h"
#include "scan_heap_valid.h"

#endif							/* GPUEXT_SCAN_HEAP_H */
