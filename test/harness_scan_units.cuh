/*
 * harness_scan_units.cuh
 *		The device scan's date and timestamp units (cuda/scan_heap_units.h),
 *		run on the device, against a reference built on PostgreSQL's own
 *		calendar arithmetic (date2j and j2date of utils/adt/datetime.c), a
 *		different algorithm: every unit over dates and timestamps from 4714 BC
 *		to past the timestamps' end, leap days, the days around each end of
 *		the range the device leaves to the CPU, and the infinities; as GROUP
 *		BY keys (gpuext_scan_key_unit), and as comparisons with a constant
 *		(gpuext_scan_cmp_unit, gpuext_scan_cmp), over every valid date and
 *		timestamp.  Included by kernel_harness.cu.
 */

/* Days of the Julian calendar of 2000-01-01 (POSTGRES_EPOCH_JDATE). */
#define UNIT_EPOCH_JDATE 2451545

/* PostgreSQL's date2j: the Julian day of a day of the Gregorian calendar. */
int64_t unit_date2j(int64_t year, int64_t month, int64_t day)
{
	int64_t		julian,
				century;

	if (month > 2)
	{
		month += 1;
		year += 4800;
	}
	else
	{
		month += 13;
		year += 4799;
	}
	century = year / 100;
	julian = year * 365 - 32167;
	julian += year / 4 - century + century / 4;
	julian += 7834 * month / 256 + day;
	return julian;
}

/* PostgreSQL's j2date: the day of the Gregorian calendar of a Julian day (>= 0). */
void unit_j2date(int64_t jd, int64_t *year, int64_t *month, int64_t *day)
{
	uint64_t	julian = (uint64_t) jd + 32044;
	uint64_t	quad = julian / 146097;
	uint64_t	extra = (julian - quad * 146097) * 4 + 3;
	int64_t		y;

	julian += 60 + quad * 3 + extra / 146097;
	quad = julian / 1461;
	julian -= quad * 1461;
	y = (int64_t) (julian * 4 / 1461);
	julian = ((y != 0) ? ((julian + 305) % 365) : ((julian + 306) % 366)) + 123;
	y += (int64_t) quad * 4;
	*year = y - 4800;
	quad = julian * 2141 / 65536;
	*day = (int64_t) (julian - 7834 * quad / 256);
	*month = (int64_t) ((quad + 10) % 12 + 1);
}

/* PostgreSQL's j2day: the day of the week of a Julian day, 0 for Sunday, negative days included. */
int64_t unit_j2day(int64_t j)
{
	return ((j + 1) % 7 + 7) % 7;
}

/* PostgreSQL's date2isoweek: the ISO week of a day, from the Monday before its year's January 4th. */
int64_t unit_isoweek(int64_t year, int64_t month, int64_t day)
{
	int64_t		dayn = unit_date2j(year, month, day);
	int64_t		day4 = unit_date2j(year, 1, 4);
	int64_t		day0 = unit_j2day(day4 - 1);	/* back to Monday */
	int64_t		week;

	if (dayn < day4 - day0)
	{
		day4 = unit_date2j(year - 1, 1, 4);
		day0 = unit_j2day(day4 - 1);
	}
	week = (dayn - (day4 - day0)) / 7 + 1;
	if (week >= 52)
	{
		day4 = unit_date2j(year + 1, 1, 4);
		day0 = unit_j2day(day4 - 1);
		if (dayn >= day4 - day0)
			week = (dayn - (day4 - day0)) / 7 + 1;
	}
	return week;
}

/* The reference: what the unit makes of v, and whether the device is to leave it to the CPU (false, where ends). */
bool unit_reference(int64_t v, int unit, bool micros, int64_t *rep, bool ends = true)
{
	const int64_t usecs_day = 86400000000LL;
	const int64_t first = -UNIT_EPOCH_JDATE + 366;
	const int64_t last = 109203528 - UNIT_EPOCH_JDATE - 366;
	int64_t		day = v,
				tod = 0,
				y,
				m,
				d,
				r;

	if (micros ? (v == INT64_MIN || v == INT64_MAX) : (v == INT32_MIN || v == INT32_MAX))
	{
		*rep = v;
		return true;
	}
	if (micros)
	{
		/* timestamp2tm's split: the date, then the time of day */
		day = v / usecs_day;
		tod = v % usecs_day;
		if (tod < 0)
		{
			tod += usecs_day;
			day -= 1;
		}
	}
	switch (unit)
	{
		case GPUEXT_SCAN_TRUNC_HOUR:
			*rep = day * usecs_day + tod / 3600000000LL * 3600000000LL;
			return true;
		case GPUEXT_SCAN_TRUNC_MINUTE:
			*rep = day * usecs_day + tod / 60000000LL * 60000000LL;
			return true;
		case GPUEXT_SCAN_TRUNC_SECOND:
			*rep = day * usecs_day + tod / 1000000 * 1000000;
			return true;
		case GPUEXT_SCAN_FIELD_HOUR:
			*rep = tod / 3600000000LL * 3600000000LL;
			return true;
		case GPUEXT_SCAN_FIELD_MINUTE:
			*rep = (tod / 60000000LL % 60) * 60000000LL;
			return true;
		case GPUEXT_SCAN_FIELD_SECOND:
			*rep = tod % 60000000LL;
			return true;
		case GPUEXT_SCAN_TRUNC_DAY:
			if (!micros)
			{
				*rep = v;
				return true;
			}
			break;
		default:
			break;
	}
	if (ends && (day < first || day > last))
		return false;
	unit_j2date(day + UNIT_EPOCH_JDATE, &y, &m, &d);
	switch (unit)
	{
		case GPUEXT_SCAN_TRUNC_DAY:
			r = day;
			break;
		case GPUEXT_SCAN_TRUNC_WEEK:
			/* j2day: 0 Sunday; back to Monday */
			r = day - ((day + UNIT_EPOCH_JDATE + 1) % 7 + 6) % 7;
			break;
		case GPUEXT_SCAN_TRUNC_MONTH:
			r = unit_date2j(y, m, 1) - UNIT_EPOCH_JDATE;
			break;
		case GPUEXT_SCAN_TRUNC_QUARTER:
			r = unit_date2j(y, (m - 1) / 3 * 3 + 1, 1) - UNIT_EPOCH_JDATE;
			break;
		case GPUEXT_SCAN_TRUNC_YEAR:
			r = unit_date2j(y, 1, 1) - UNIT_EPOCH_JDATE;
			break;
		case GPUEXT_SCAN_FIELD_QUARTER:
			r = unit_date2j(2000, (m - 1) / 3 * 3 + 1, 1) - UNIT_EPOCH_JDATE;
			break;
		case GPUEXT_SCAN_FIELD_MONTH:
			r = unit_date2j(2000, m, 1) - UNIT_EPOCH_JDATE;
			break;
		case GPUEXT_SCAN_FIELD_DAY:
			r = unit_date2j(2000, 1, d) - UNIT_EPOCH_JDATE;
			break;
		case GPUEXT_SCAN_FIELD_DOY:
			r = day - (unit_date2j(y, 1, 1) - UNIT_EPOCH_JDATE);
			break;
		case GPUEXT_SCAN_FIELD_DOW:
			r = unit_date2j(2000, 1, 2 + (day + UNIT_EPOCH_JDATE + 1) % 7) - UNIT_EPOCH_JDATE;
			break;
		case GPUEXT_SCAN_FIELD_WEEK:
			r = unit_date2j(2003, 12, 29) - UNIT_EPOCH_JDATE + 7 * (unit_isoweek(y, m, d) - 1);
			break;
		default:
			return false;
	}
	*rep = micros ? r * usecs_day : r;
	return true;
}

/* Each value under one unit on the device: its representative and whether it has one. */
__global__ void unit_kernel(const int64_t *v, size_t n, int unit, int micros, int64_t *rep, int *ok)
{
	size_t		i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		ok[i] = gpuext_scan_key_unit(v[i], unit, micros, &rep[i]);
}

/* Dates (or timestamps) to put through every unit: each end of the range, leap days, random ones. */
std::vector<int64_t> unit_values(bool micros, bool quick)
{
	const int64_t usecs_day = 86400000000LL;
	const int64_t first = -UNIT_EPOCH_JDATE + 366;
	const int64_t last = 109203528 - UNIT_EPOCH_JDATE - 366;
	std::mt19937_64 rng(micros ? 7 : 5);
	std::vector<int64_t> days = {0, -1, 1, 59, 60, -306, -305, first - 1, first, first + 1, last - 1, last, last + 1,
								 unit_date2j(1900, 2, 28) - UNIT_EPOCH_JDATE, unit_date2j(1900, 3, 1) - UNIT_EPOCH_JDATE,
								 unit_date2j(0, 2, 29) - UNIT_EPOCH_JDATE, unit_date2j(-1, 12, 31) - UNIT_EPOCH_JDATE};
	std::vector<int64_t> v;
	const int	nrandom = quick ? 20000 : 400000;

	for (int i = 0; i < nrandom; i++)
		days.push_back(i % 2 ? first - 400 + (int64_t) (rng() % (uint64_t) (last - first + 800)) :
					   (int64_t) (rng() % 80000) - 40000);
	for (int64_t day : days)
	{
		if (!micros)
		{
			v.push_back(day);
			continue;
		}
		v.push_back(day * usecs_day);
		v.push_back(day * usecs_day + (int64_t) (rng() % (uint64_t) usecs_day));
		v.push_back(day * usecs_day + usecs_day - 1);
	}
	v.push_back(micros ? INT64_MIN : INT32_MIN);
	v.push_back(micros ? INT64_MAX : INT32_MAX);
	return v;
}

/* Stop the harness on a failure of the CUDA runtime's plumbing. */
void unit_must(cudaError_t err, const char *what)
{
	if (err == cudaSuccess)
		return;
	fprintf(stderr, "fatal: %s failed: %s\n", what, cudaGetErrorString(err));
	printf("%d passed, %d failed\n", passed, failed + 1);
	exit(2);
}

/* Every unit over dates, then over timestamps: the device against the reference, its output poisoned first. */
void run_scan_unit_checks(bool quick)
{
	for (int micros = 0; micros <= 1; micros++)
	{
		std::vector<int64_t> v = unit_values(micros, quick);
		const size_t n = v.size();
		int64_t    *d_v,
				   *d_rep;
		int		   *d_ok;

		unit_must(cudaMalloc(&d_v, n * sizeof(int64_t)), "value allocation");
		unit_must(cudaMalloc(&d_rep, n * sizeof(int64_t)), "output allocation");
		unit_must(cudaMalloc(&d_ok, n * sizeof(int)), "output allocation");
		unit_must(cudaMemcpy(d_v, v.data(), n * sizeof(int64_t), cudaMemcpyHostToDevice), "upload");
		for (int unit = GPUEXT_SCAN_TRUNC_DAY; unit < GPUEXT_SCAN_UNITS; unit++)
		{
			std::vector<int64_t> rep(n);
			std::vector<int> ok(n);
			std::string detail;
			size_t		cpu = 0;

			if (!micros && gpuext_scan_unit_of_time(unit))
				continue;
			unit_must(cudaMemset(d_rep, 0xA5, n * sizeof(int64_t)), "poison");
			unit_must(cudaMemset(d_ok, 0xA5, n * sizeof(int)), "poison");
			unit_kernel<<<(unsigned) ((n + 255) / 256), 256>>>(d_v, n, unit, micros, d_rep, d_ok);
			unit_must(cudaGetLastError(), "unit kernel");
			unit_must(cudaMemcpy(rep.data(), d_rep, n * sizeof(int64_t), cudaMemcpyDeviceToHost), "download");
			unit_must(cudaMemcpy(ok.data(), d_ok, n * sizeof(int), cudaMemcpyDeviceToHost), "download");
			for (size_t i = 0; i < n && detail.empty(); i++)
			{
				int64_t		want = 0;
				bool		has = unit_reference(v[i], unit, micros, &want);

				cpu += !has;
				if (ok[i] != (has ? 1 : 0) || (has && rep[i] != want))
					detail = "value " + std::to_string(v[i]) + ": device " + std::to_string(ok[i]) + "/" +
						std::to_string(rep[i]) + ", reference " + std::to_string(has) + "/" + std::to_string(want);
			}
			if (detail.empty() && (cpu == 0) != (!micros && unit == GPUEXT_SCAN_TRUNC_DAY) &&
				!gpuext_scan_unit_of_time(unit))
				detail = "the ends of the range are not left to the CPU";
			report(detail.empty(), std::string("scan key unit ") + std::to_string(unit) +
				   (micros ? " of timestamps" : " of dates") + ", " + std::to_string(n) + " values", detail);
		}
		cudaFree(d_v);
		cudaFree(d_rep);
		cudaFree(d_ok);
	}
}

/* Each value under comparison k's unit on the device, and k itself against each value's image. */
__global__ void cmp_unit_kernel(const int64_t *v, size_t n, GpuextScanCmp k, int64_t *rep, int *got, int *holds)
{
	size_t		i = (size_t) blockIdx.x * blockDim.x + threadIdx.x;
	GpuextScanProgram p;
	GpuextScanRow row;

	if (i >= n)
		return;
	got[i] = gpuext_scan_cmp_unit(&k, v[i], &rep[i]);
	p.ncols = 1;
	p.cols[0].kind = GPUEXT_SCAN_INT;
	row.nulls = 0;
	row.nans = 0;
	row.vals[0] = v[i];
	holds[i] = gpuext_scan_cmp(&p, &row, &k);
}

/*
 * The reference of a comparison's unit: 0 for a field of an infinity
 * (NULL), -1 where date_trunc is left to the CPU, else 1 and the image;
 * fields over any valid date or timestamp.
 */
int cmp_unit_reference(int64_t v, int unit, bool micros, int64_t *rep)
{
	bool		infinite = micros ? (v == INT64_MIN || v == INT64_MAX) : (v == INT32_MIN || v == INT32_MAX);

	if (unit < GPUEXT_SCAN_FIELD_QUARTER)
		return unit_reference(v, unit, micros, rep) ? 1 : -1;
	if (infinite)
		return 0;
	unit_reference(v, unit, micros, rep, false);
	return 1;
}

/*
 * Every unit as a comparison, over the valid dates (Julian day 0 to
 * 5874897-12-31) or timestamps: each value's image against the reference,
 * and each strategy against an image the values take, with the outputs
 * poisoned first.
 */
void run_scan_cmp_unit_checks(bool quick)
{
	const int64_t usecs_day = 86400000000LL;

	for (int micros = 0; micros <= 1; micros++)
	{
		std::vector<int64_t> all = unit_values(micros, quick);
		std::vector<int64_t> v;
		const int64_t lo = -UNIT_EPOCH_JDATE;
		const int64_t hi = micros ? 109203528 - UNIT_EPOCH_JDATE : 2147483494 - UNIT_EPOCH_JDATE;

		for (int64_t x : all)
		{
			int64_t		day = micros ? (x >= 0 ? x / usecs_day : -((-x - 1) / usecs_day) - 1) : x;

			if ((micros ? (x == INT64_MIN || x == INT64_MAX) : (x == INT32_MIN || x == INT32_MAX)) ||
				(day >= lo && day < hi))
				v.push_back(x);
		}
		/* the last dates, past the timestamps' range */
		if (!micros)
			for (int64_t day = hi - 3; day < hi; day++)
				v.push_back(day);
		const size_t n = v.size();
		int64_t    *d_v,
				   *d_rep;
		int		   *d_got,
				   *d_holds;

		unit_must(cudaMalloc(&d_v, n * sizeof(int64_t)), "value allocation");
		unit_must(cudaMalloc(&d_rep, n * sizeof(int64_t)), "output allocation");
		unit_must(cudaMalloc(&d_got, n * sizeof(int)), "output allocation");
		unit_must(cudaMalloc(&d_holds, n * sizeof(int)), "output allocation");
		unit_must(cudaMemcpy(d_v, v.data(), n * sizeof(int64_t), cudaMemcpyHostToDevice), "upload");
		for (int unit = GPUEXT_SCAN_TRUNC_DAY; unit < GPUEXT_SCAN_UNITS; unit++)
		{
			std::string detail;

			if (!micros && gpuext_scan_unit_of_time(unit))
				continue;
			for (int strategy = 1; strategy <= GPUEXT_SCAN_NOT_EQUAL && detail.empty(); strategy++)
			{
				GpuextScanCmp k;
				std::vector<int64_t> rep(n);
				std::vector<int> got(n),
							holds(n);
				int64_t		image = 0;

				memset(&k, 0, sizeof(k));
				k.unit = (uint8_t) unit;
				k.micros = (uint8_t) micros;
				k.strategy = (uint8_t) strategy;
				/* an image some values take: that of the value in the middle */
				cmp_unit_reference(v[n / 2], unit, micros, &image);
				k.ival = image;
				unit_must(cudaMemset(d_rep, 0xA5, n * sizeof(int64_t)), "poison");
				unit_must(cudaMemset(d_got, 0xA5, n * sizeof(int)), "poison");
				unit_must(cudaMemset(d_holds, 0xA5, n * sizeof(int)), "poison");
				cmp_unit_kernel<<<(unsigned) ((n + 255) / 256), 256>>>(d_v, n, k, d_rep, d_got, d_holds);
				unit_must(cudaGetLastError(), "comparison kernel");
				unit_must(cudaMemcpy(rep.data(), d_rep, n * sizeof(int64_t), cudaMemcpyDeviceToHost), "download");
				unit_must(cudaMemcpy(got.data(), d_got, n * sizeof(int), cudaMemcpyDeviceToHost), "download");
				unit_must(cudaMemcpy(holds.data(), d_holds, n * sizeof(int), cudaMemcpyDeviceToHost), "download");
				for (size_t i = 0; i < n && detail.empty(); i++)
				{
					int64_t		want = 0;
					int			has = cmp_unit_reference(v[i], unit, micros, &want);
					int			c = want < image ? -1 : want > image ? 1 : 0;
					int			hold = has != 1 ? 0 :
						strategy == 1 ? c < 0 : strategy == 2 ? c <= 0 : strategy == 3 ? c == 0 :
						strategy == 4 ? c >= 0 : strategy == 5 ? c > 0 : c != 0;

					if (got[i] != has || (has == 1 && rep[i] != want) || (has >= 0 && holds[i] != hold))
						detail = "value " + std::to_string(v[i]) + ", strategy " + std::to_string(strategy) +
							": device " + std::to_string(got[i]) + "/" + std::to_string(rep[i]) + "/" +
							std::to_string(holds[i]) + ", reference " + std::to_string(has) + "/" +
							std::to_string(want) + "/" + std::to_string(hold);
				}
			}
			report(detail.empty(), std::string("scan comparison unit ") + std::to_string(unit) +
				   (micros ? " of timestamps" : " of dates") + ", " + std::to_string(n) + " values, 6 strategies",
				   detail);
		}
		cudaFree(d_v);
		cudaFree(d_rep);
		cudaFree(d_got);
		cudaFree(d_holds);
	}
}
