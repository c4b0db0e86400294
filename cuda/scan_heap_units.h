/*
 * scan_heap_units.h
 *		Dates and timestamps under date_trunc's units and extract's fields,
 *		for the device scan's GROUP BY keys (scan_heap_groups.h) and its
 *		comparisons (scan_heap_cmps.h): each value's image, a value standing
 *		for the unit's or field's.  Included by scan_heap.h before the
 *		decoder; shared by the kernel, the fake device, the host and the
 *		harness.
 */
#ifndef GPUEXT_SCAN_HEAP_UNITS_H
#define GPUEXT_SCAN_HEAP_UNITS_H

/* Days from 2000-01-01 of a day of the proleptic Gregorian calendar (H. Hinnant's days-from-civil). */
static inline GPUEXT_HD int64_t
gpuext_scan_days(int64_t y, int64_t m, int64_t d)
{
	int64_t		era,
				yoe,
				doy,
				doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 730425;
}

/* x modulo 7, from 0 to 6 for negative x too. */
static inline GPUEXT_HD int64_t
gpuext_scan_mod7(int64_t x)
{
	return (x % 7 + 7) % 7;
}

/* Whether a key's unit is of the time of day (hours, minutes, seconds): of timestamps only. */
static inline GPUEXT_HD int
gpuext_scan_unit_of_time(int unit)
{
	return (unit >= GPUEXT_SCAN_TRUNC_HOUR && unit <= GPUEXT_SCAN_TRUNC_SECOND) ||
		(unit >= GPUEXT_SCAN_FIELD_HOUR && unit <= GPUEXT_SCAN_FIELD_SECOND);
}

/*
 * What a timestamp key's image holds per unit of its value: microseconds for
 * a truncation to a time of day, hours, minutes or microseconds for those
 * fields, else days; a date key's image holds days.
 */
static inline GPUEXT_HD int64_t
gpuext_scan_unit_scale(int unit, int micros)
{
	if (!micros)
		return 1;
	switch (unit)
	{
		case GPUEXT_SCAN_TRUNC_HOUR:
		case GPUEXT_SCAN_TRUNC_MINUTE:
		case GPUEXT_SCAN_TRUNC_SECOND:
		case GPUEXT_SCAN_FIELD_SECOND:
			return 1;
		case GPUEXT_SCAN_FIELD_HOUR:
			return 3600000000LL;
		case GPUEXT_SCAN_FIELD_MINUTE:
			return 60000000LL;
		default:
			return 86400000000LL;
	}
}

/* A date or timestamp key's bytes in the image: 8 for a timestamp truncated to a time of day, else 4. */
static inline GPUEXT_HD int
gpuext_scan_unit_width(int unit, int micros)
{
	return micros && unit >= GPUEXT_SCAN_TRUNC_HOUR && unit <= GPUEXT_SCAN_TRUNC_SECOND ? 8 : 4;
}

/*
 * A finite date (days from 2000-01-01) or, under micros, timestamp
 * (microseconds from then) under a key's unit (GpuextScanKey): one value
 * for each value of the key, in the column's own type.  Total: the calendar
 * holds for any day.
 */
static inline GPUEXT_HD int64_t
gpuext_scan_unit_value(int64_t v, int unit, int micros)
{
	const int64_t usecs_day = 86400000000LL;
	const int64_t usecs_hour = 3600000000LL;
	const int64_t usecs_minute = 60000000LL;
	int64_t		day = v,
				tod = 0,
				z,
				era,
				doe,
				yoe,
				y,
				doy,
				m,
				d,
				r;

	if (micros)
	{
		day = v / usecs_day - (v % usecs_day < 0);
		tod = v - day * usecs_day;
	}
	switch (unit)
	{
		case GPUEXT_SCAN_TRUNC_HOUR:
			return v - tod % usecs_hour;
		case GPUEXT_SCAN_TRUNC_MINUTE:
			return v - tod % usecs_minute;
		case GPUEXT_SCAN_TRUNC_SECOND:
			return v - tod % 1000000;
		case GPUEXT_SCAN_FIELD_HOUR:
			return tod - tod % usecs_hour;
		case GPUEXT_SCAN_FIELD_MINUTE:
			return tod % usecs_hour - tod % usecs_minute;
		case GPUEXT_SCAN_FIELD_SECOND:
			return tod % usecs_minute;
		default:
			break;
	}
	/* an ISO week's year is its Thursday's */
	if (unit == GPUEXT_SCAN_FIELD_WEEK)
		day += 3 - gpuext_scan_mod7(day + 5);
	/* the day's year, month and day of the month (civil-from-days) */
	z = day + 730425;			/* days from 0000-03-01 */
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	m = (5 * doy + 2) / 153;
	d = doy - (153 * m + 2) / 5 + 1;
	m = m < 10 ? m + 3 : m - 9;
	y += m <= 2;
	switch (unit)
	{
		case GPUEXT_SCAN_TRUNC_WEEK:
			r = day - gpuext_scan_mod7(day + 5);	/* back to Monday: 2000-01-01 was a Saturday */
			break;
		case GPUEXT_SCAN_TRUNC_MONTH:
			r = gpuext_scan_days(y, m, 1);
			break;
		case GPUEXT_SCAN_TRUNC_QUARTER:
			r = gpuext_scan_days(y, (m - 1) / 3 * 3 + 1, 1);
			break;
		case GPUEXT_SCAN_TRUNC_YEAR:
			r = gpuext_scan_days(y, 1, 1);
			break;
		case GPUEXT_SCAN_FIELD_QUARTER:
			r = gpuext_scan_days(2000, (m - 1) / 3 * 3 + 1, 1);
			break;
		case GPUEXT_SCAN_FIELD_MONTH:
			r = gpuext_scan_days(2000, m, 1);
			break;
		case GPUEXT_SCAN_FIELD_DAY:
			r = d - 1;
			break;
		case GPUEXT_SCAN_FIELD_DOY:
			r = day - gpuext_scan_days(y, 1, 1);	/* 2000 a leap year: day 366 too */
			break;
		case GPUEXT_SCAN_FIELD_DOW:
			r = gpuext_scan_mod7(day - 1) + 1;	/* 2000-01-02 (a Sunday) to 01-08 */
			break;
		case GPUEXT_SCAN_FIELD_WEEK:
			/* the Monday of that week in 2004, a year of 53 (its first Monday 2003-12-29) */
			r = gpuext_scan_days(2003, 12, 29) + (day - gpuext_scan_days(y, 1, 1)) / 7 * 7;
			break;
		default:
			r = day;			/* GPUEXT_SCAN_TRUNC_DAY */
			break;
	}
	return micros ? r * usecs_day : r;
}

/*
 * A date or timestamp key's value under its unit (gpuext_scan_unit_value),
 * into *rep; the infinities as they are.  0 for a day within a year of the
 * ends of the timestamps' range (under a unit of days), for the CPU to
 * compute: PostgreSQL may raise its out-of-range error there.
 */
static inline GPUEXT_HD int
gpuext_scan_key_unit(int64_t v, int unit, int micros, int64_t *rep)
{
	const int64_t usecs_day = 86400000000LL;
	const int64_t first = -2451545 + 366;	/* Julian day 0 is 4714-11-24 BC */
	const int64_t last = 109203528 - 2451545 - 366;	/* 294277-01-01, past the timestamps */
	int64_t		day = micros ? v / usecs_day - (v % usecs_day < 0) : v;

	if (micros ? (v == INT64_MIN || v == INT64_MAX) : (v == INT32_MIN || v == INT32_MAX))
	{
		*rep = v;
		return 1;
	}
	if (!gpuext_scan_unit_of_time(unit) && (micros || unit != GPUEXT_SCAN_TRUNC_DAY) && (day < first || day > last))
		return 0;
	*rep = gpuext_scan_unit_value(v, unit, micros);
	return 1;
}

/*
 * A date or timestamp column's value under comparison k's unit, into *rep
 * (as a key's image): 1; 0 where the value is NULL (extract's fields of an
 * infinity), so that the comparison fails; -1 where the CPU computes it
 * (date_trunc near the ends of the range, where PostgreSQL may raise its
 * error).
 */
static inline GPUEXT_HD int
gpuext_scan_cmp_unit(const GpuextScanCmp *k, int64_t v, int64_t *rep)
{
	int			infinite = k->micros ? (v == INT64_MIN || v == INT64_MAX) : (v == INT32_MIN || v == INT32_MAX);

	if (k->unit >= GPUEXT_SCAN_FIELD_QUARTER)
	{
		if (infinite)
			return 0;
		*rep = gpuext_scan_unit_value(v, k->unit, k->micros);
		return 1;
	}
	return gpuext_scan_key_unit(v, k->unit, k->micros, rep) ? 1 : -1;
}

#endif							/* GPUEXT_SCAN_HEAP_UNITS_H */
