/*
 * harness_reduce_inputs.cuh
 *		kernel_harness's inputs of gpuext_reduce over 2, 4 and 8-byte values:
 *		the value types and input patterns, a value's stored bits, and the
 *		result the reduction must give (128-bit integer sums; for floats the
 *		exact digits of agg_accum.c; sort keys for min and max), computed on the
 *		CPU.  harness_groups.cuh draws its values from here too.  Included by
 *		kernel_harness.cu inside its namespace (its helpers).
 */

/* Reduction value types: name, bytes, float. */
struct ReduceType
{
	const char *name;
	int			value_bytes;
	int			is_float;
};

const ReduceType REDUCE_TYPES[] = {{"int2", 2, 0}, {"int4", 4, 0}, {"int8", 8, 0}, {"float4", 4, 1}, {"float8", 8, 1}};

/* Reduction inputs; limits is for integers only, the last three for floats only. */
enum ReducePattern
{
	RED_RANDOM,
	RED_UNIFORM,
	RED_SORTED,
	RED_REVERSE,
	RED_ALL_EQUAL,
	RED_FEW_16,
	RED_NEAR_MAX,
	RED_MOSTLY_ZERO,
	RED_LIMITS,
	RED_SPECIAL,
	RED_WIDE,
	RED_CANCEL,
	NUM_REDUCE_PATTERNS
};
const char *const REDUCE_PATTERN_NAMES[] = {"random", "uniform", "sorted", "reverse", "all-equal", "16-distinct",
											"near-max", "mostly-zero", "limits", "special-floats", "wide-range",
											"cancel"};

/* The stored bits of a value (low value_bytes bytes of the word). */
uint64_t value_bits(const ReduceType &t, double d)
{
	if (t.value_bytes == 4)
	{
		float		f = (float) d;
		uint32_t	b;

		memcpy(&b, &f, 4);
		return b;
	}
	uint64_t	b;

	memcpy(&b, &d, 8);
	return b;
}

/* The value of stored bits as a double (floats) or a sign-extended integer. */
double bits_double(const ReduceType &t, uint64_t bits)
{
	if (t.value_bytes == 4)
	{
		uint32_t	b = (uint32_t) bits;
		float		f;

		memcpy(&f, &b, 4);
		return f;
	}
	double		d;

	memcpy(&d, &bits, 8);
	return d;
}

int64_t bits_int(const ReduceType &t, uint64_t bits)
{
	return t.value_bytes == 2 ? (int64_t) (int16_t) bits : t.value_bytes == 4 ? (int64_t) (int32_t) bits
		: (int64_t) bits;
}

/* Sort key of stored bits, as sort_keys.c (raw -0, NaN canonical). */
uint64_t value_key(const ReduceType &t, uint64_t bits)
{
	if (!t.is_float)
	{
		int64_t		v = bits_int(t, bits);

		return t.value_bytes == 8 ? (uint64_t) v ^ (1ull << 63) : (uint32_t) (int32_t) v ^ 0x80000000u;
	}
	if (t.value_bytes == 4)
	{
		uint32_t	b = (uint32_t) bits;

		if ((b & 0x7FFFFFFFu) > 0x7F800000u)
			b = 0x7FC00000u;
		return (b & 0x80000000u) ? (uint32_t) ~b : (b | 0x80000000u);
	}
	if ((bits & ~(1ull << 63)) > 0x7FF0000000000000ull)
		bits = 0x7FF8000000000000ull;
	return (bits & (1ull << 63)) ? ~bits : (bits | (1ull << 63));
}

/* The result gpuext_reduce must give: int128 sums, exact float digits, keys; zeros where unused. */
GpuextReduceResult reference_reduce(const ReduceType &t, const std::vector<uint64_t> &bits)
{
	GpuextReduceResult r;
	__int128	isum = 0;
	uint64_t	pending = 0;

	memset(&r, 0, sizeof(r));
	r.count = bits.size();
	for (size_t i = 0; i < bits.size(); i++)
	{
		uint64_t	key = value_key(t, bits[i]);

		if (i == 0 || key < r.min_key)
			r.min_key = key;
		if (i == 0 || key > r.max_key)
			r.max_key = key;
		if (t.is_float)
			gpuext_reduce_result_add_double(&r, bits_double(t, bits[i]), &pending);
		else
			isum += bits_int(t, bits[i]);
	}
	if (t.is_float)
		gpuext_exact_normalize(r.digits);
	r.isum_lo = (uint64_t) isum;
	r.isum_hi = (int64_t) (isum >> 64);
	return r;
}

/* Whether a pattern applies to a type. */
bool reduce_pattern_applies(const ReduceType &t, ReducePattern p)
{
	if (p == RED_LIMITS)
		return !t.is_float;
	if (p == RED_SPECIAL || p == RED_WIDE || p == RED_CANCEL)
		return t.is_float;
	return true;
}

/* A random value of the type: full-range bits, or (uniform) small integers / reals in [-1e6, 1e6]. */
uint64_t random_value(const ReduceType &t, bool uniform, std::mt19937_64 &rng)
{
	const uint64_t mask = t.value_bytes == 8 ? ~0ull : (1ull << (8 * t.value_bytes)) - 1;
	uint64_t	b;

	if (!uniform)
	{
		do
			b = rng() & mask;
		while (b == 0);
		return b;
	}
	if (t.is_float)
		return value_bits(t, std::uniform_real_distribution<double>(-1e6, 1e6)(rng));
	return (uint64_t) (int64_t) std::uniform_int_distribution<int>(-1000, 1000)(rng) & mask;
}

/* Fill n values of the type with the pattern; never all zeros. */
void generate_reduce(std::vector<uint64_t> &bits, const ReduceType &t, ReducePattern p, std::mt19937_64 &rng)
{
	const uint64_t mask = t.value_bytes == 8 ? ~0ull : (1ull << (8 * t.value_bytes)) - 1;
	const bool	f32 = t.value_bytes == 4;
	const int64_t imax = t.value_bytes == 2 ? INT16_MAX : t.value_bytes == 4 ? INT32_MAX : INT64_MAX;
	std::vector<uint64_t> few;

	switch (p)
	{
		case RED_RANDOM:
		case RED_UNIFORM:
			for (uint64_t &b : bits)
				b = random_value(t, p == RED_UNIFORM, rng);
			break;
		case RED_SORTED:
		case RED_REVERSE:
			for (uint64_t &b : bits)
				b = random_value(t, t.is_float, rng);
			/* A strict order both ways: "not less" is no comparator for std::sort */
			std::sort(bits.begin(), bits.end(), [&](uint64_t a, uint64_t b) {
				return p == RED_SORTED ? value_key(t, a) < value_key(t, b) : value_key(t, b) < value_key(t, a);
			});
			break;
		case RED_ALL_EQUAL:
		case RED_FEW_16:
			few.resize(p == RED_ALL_EQUAL ? 1 : 16);
			for (uint64_t &v : few)
				v = random_value(t, t.is_float, rng);
			for (uint64_t &b : bits)
				b = few[rng() % few.size()];
			break;
		case RED_NEAR_MAX:
			/* Integers within 1000 of the maximum (int8 sums overflow 64 bits); floats near the largest finite. */
			for (uint64_t &b : bits)
				b = t.is_float ? value_bits(t, (f32 ? (double) FLT_MAX : DBL_MAX) * (1.0 - (rng() % 1000) * 1e-6) *
											(rng() % 4 == 0 ? -1 : 1))
					: (uint64_t) (imax - (int64_t) (rng() % 1000)) & mask;
			break;
		case RED_MOSTLY_ZERO:
			for (uint64_t &b : bits)
				b = rng() % 8 != 0 ? (t.is_float && rng() % 2 ? value_bits(t, -0.0) : 0) : random_value(t, true, rng);
			if (!bits.empty())
				bits[rng() % bits.size()] = random_value(t, false, rng) | 1;
			break;
		case RED_LIMITS:
			for (uint64_t &b : bits)
			{
				const int64_t choices[] = {imax, -imax - 1, imax - 1, -imax, -1, 1, 0, 2};

				b = (uint64_t) choices[rng() % 8] & mask;
			}
			break;
		case RED_SPECIAL:
			{
				const double specials[] = {
					std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(), 0.0, -0.0,
					f32 ? (double) std::numeric_limits<float>::denorm_min() : std::numeric_limits<double>::denorm_min(),
					f32 ? -(double) std::numeric_limits<float>::denorm_min() : -std::numeric_limits<double>::denorm_min(),
					f32 ? 1e-40 : 1e-310, f32 ? -1e-40 : -1e-310, f32 ? (double) FLT_MAX : DBL_MAX,
					f32 ? -(double) FLT_MAX : -DBL_MAX, f32 ? (double) FLT_MIN : DBL_MIN,
					f32 ? -(double) FLT_MIN : -DBL_MIN, 1.0, -1.0, 0.5, -2.5};
				const size_t nspecial = sizeof(specials) / sizeof(specials[0]);
				/* NaNs as raw bits: quiet, negative, with payloads, signalling. */
				const uint64_t nans[] = {f32 ? 0x7FC00000ull : 0x7FF8000000000000ull,
										 f32 ? 0xFFC00000ull : 0xFFF8000000000000ull,
										 f32 ? 0x7FC01234ull : 0x7FF8000000001234ull,
										 f32 ? 0x7F800001ull : 0x7FF0000000000001ull,
										 f32 ? 0xFFFFFFFFull : 0xFFFFFFFFFFFFFFFFull};

				for (uint64_t &b : bits)
				{
					uint64_t	r = rng();

					if (r % 16 == 0)
						b = nans[(r >> 8) % 5];
					else if (r % 2 == 0)
						b = value_bits(t, specials[(r >> 8) % nspecial]);
					else
						b = random_value(t, r % 4 == 1, rng);
				}
			}
			break;
		case RED_WIDE:
			/* Magnitudes 2^1000 apart (2^250 for real), both signs: no window holds them. */
			for (uint64_t &b : bits)
			{
				double		mant = std::uniform_real_distribution<double>(1.0, 2.0)(rng) * (rng() % 2 ? 1 : -1);

				b = value_bits(t, rng() % 2 ? (f32 ? mant * 1e37 : mant * 1e300) : (f32 ? mant * 1e-37 : mant * 1e-300));
			}
			break;
		case RED_CANCEL:
			/* Large values that cancel in pairs, around small ones that must survive. */
			for (size_t i = 0; i < bits.size(); i++)
			{
				double		big = std::uniform_real_distribution<double>(1.0, 2.0)(rng) * (f32 ? 1e30 : 1e200);

				if (i % 3 == 2)
					bits[i] = value_bits(t, std::uniform_real_distribution<double>(-1.0, 1.0)(rng));
				else
					bits[i] = value_bits(t, i % 3 == 0 ? big : -bits_double(t, bits[i - 1]));
			}
			break;
		case NUM_REDUCE_PATTERNS:
			break;
	}
	if (!bits.empty() && std::all_of(bits.begin(), bits.end(), [](uint64_t b) { return b == 0; }))
		bits[0] = t.is_float ? value_bits(t, 1.0) : 1;
}
