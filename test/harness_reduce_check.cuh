/*
 * harness_reduce_check.cuh
 *		kernel_harness's checks of gpuext_reduce over 2, 4 and 8-byte values:
 *		one case reduces n values at an aligned or a one-value-off address and
 *		compares every field with harness_reduce_inputs.cuh's reference, with
 *		the result and scratch poisoned first and the bytes past the scratch
 *		intact after; and the argument checks.  Included after
 *		harness_reduce_inputs.cuh.
 */

GpuextReduceResult *pinned_result = nullptr;

/* First field of got that differs from want, described; empty when equal. */
std::string reduce_mismatch(const GpuextReduceResult &got, const GpuextReduceResult &want)
{
	char		buf[256];

#define FIELD(f, fmt) \
	if (got.f != want.f) \
	{ \
		snprintf(buf, sizeof(buf), #f " is " fmt ", expected " fmt, got.f, want.f); \
		return buf; \
	}
	FIELD(count, "%" PRIu64);
	FIELD(min_key, "%#" PRIx64);
	FIELD(max_key, "%#" PRIx64);
	FIELD(isum_lo, "%#" PRIx64);
	FIELD(isum_hi, "%" PRId64);
	FIELD(has_nan, "%d");
	FIELD(has_pos_inf, "%d");
	FIELD(has_neg_inf, "%d");
#undef FIELD
	for (int d = 0; d < GPUEXT_EXACT_DIGITS; d++)
		if (got.digits[d] != want.digits[d])
		{
			snprintf(buf, sizeof(buf), "digit %d is %" PRId64 ", expected %" PRId64, d, got.digits[d], want.digits[d]);
			return buf;
		}
	return "";
}

/* Reduce n values (offset elements past an aligned allocation) on the device and compare every field; one case. */
void check_reduce(const ReduceType &t, ReducePattern p, size_t n, size_t offset, const std::vector<uint64_t> &bits,
				  const GpuextReduceResult &want)
{
	const size_t vb = t.value_bytes;
	const size_t value_area = (offset + n + GUARD_KEYS) * vb;
	char		what[160];
	std::string detail;
	size_t		scratch_bytes = 0;
	void	   *d_values = nullptr;
	void	   *d_scratch = nullptr;
	char	   *in;
	char	   *out;
	size_t		bad;
	GpuextStatus st;

	snprintf(what, sizeof(what), "reduce %s %s n=%zu offset=%zu", t.name, REDUCE_PATTERN_NAMES[p], n, offset);
	st = gpuext_reduce_scratch_bytes(t.value_bytes, t.is_float, n, &scratch_bytes);
	if (st != GPUEXT_OK)
	{
		report(false, what, std::string("scratch size query: ") + gpuext_cuda_error_message());
		return;
	}
	ensure_pinned(std::max(value_area, SCRATCH_GUARD_BYTES));
	must(gpuext_cuda_alloc(&d_values, value_area), "value allocation");
	must(gpuext_cuda_alloc(&d_scratch, scratch_bytes + SCRATCH_GUARD_BYTES), "scratch allocation");
	poison_device(d_values, value_area);
	poison_device(d_scratch, scratch_bytes + SCRATCH_GUARD_BYTES);
	in = static_cast<char *>(pinned_in);
	for (size_t i = 0; i < n; i++)
		memcpy(in + i * vb, &bits[i], vb);
	must(gpuext_cuda_copy_to_device(static_cast<char *>(d_values) + offset * vb, in, n * vb), "value upload");
	memset(pinned_result, POISON, sizeof(GpuextReduceResult));

	st = gpuext_reduce(t.value_bytes, t.is_float, static_cast<char *>(d_values) + offset * vb, n, d_scratch,
					   scratch_bytes, pinned_result);
	if (st == GPUEXT_OK)
		st = gpuext_cuda_wait(-1, nullptr, nullptr);
	if (st != GPUEXT_OK)
		detail = std::string("status ") + std::to_string((int) st) + ": " + gpuext_cuda_error_message();
	else
	{
		detail = reduce_mismatch(*pinned_result, want);
		out = static_cast<char *>(pinned_out);
		memset(out, 0x5A, SCRATCH_GUARD_BYTES);
		must(gpuext_cuda_copy_to_host(out, static_cast<char *>(d_scratch) + scratch_bytes, SCRATCH_GUARD_BYTES),
			 "scratch guard download");
		must(gpuext_cuda_wait(-1, nullptr, nullptr), "download wait");
		if (detail.empty() && (bad = first_not(out, SCRATCH_GUARD_BYTES, POISON)) < SCRATCH_GUARD_BYTES)
			detail = "byte " + std::to_string(bad) + " past the " + std::to_string(scratch_bytes) +
				" scratch bytes was overwritten";
	}
	gpuext_cuda_free(d_values);
	gpuext_cuda_free(d_scratch);
	report(detail.empty(), what, detail);
}

/* Reduction argument checks: value widths, alignment, short scratch, null pointers. */
void check_reduce_arguments()
{
	void	   *d_values = nullptr;
	void	   *d_scratch = nullptr;
	size_t		bytes = 0;
	const size_t n = 1000;
	char	   *v;
	GpuextStatus st;

	expect_invalid("reduce: 3-byte values are refused", gpuext_reduce_scratch_bytes(3, 0, n, &bytes));
	expect_invalid("reduce: 2-byte floats are refused", gpuext_reduce_scratch_bytes(2, 1, n, &bytes));
	expect_invalid("reduce: null scratch size pointer is refused", gpuext_reduce_scratch_bytes(4, 0, n, nullptr));
	must(gpuext_reduce_scratch_bytes(4, 0, n, &bytes), "reduce scratch size query");
	must(gpuext_cuda_alloc(&d_values, n * 8 + 16), "allocation");
	must(gpuext_cuda_alloc(&d_scratch, bytes), "allocation");
	v = static_cast<char *>(d_values);
	expect_invalid("reduce: 1-byte values are refused", gpuext_reduce(1, 0, v, n, d_scratch, bytes, pinned_result));
	expect_invalid("reduce: 2-byte floats are refused by the reduction",
				   gpuext_reduce(2, 1, v, n, d_scratch, bytes, pinned_result));
	expect_invalid("reduce: int4 values 2 bytes off alignment are refused",
				   gpuext_reduce(4, 0, v + 2, n, d_scratch, bytes, pinned_result));
	expect_invalid("reduce: one byte too little scratch is refused",
				   gpuext_reduce(4, 0, v, n, d_scratch, bytes - 1, pinned_result));
	expect_invalid("reduce: null scratch is refused", gpuext_reduce(4, 0, v, n, nullptr, bytes, pinned_result));
	expect_invalid("reduce: null result is refused", gpuext_reduce(4, 0, v, n, d_scratch, bytes, nullptr));
	expect_invalid("reduce: null values are refused", gpuext_reduce(4, 0, nullptr, n, d_scratch, bytes, pinned_result));
	must(gpuext_reduce_scratch_bytes(8, 1, 0, &bytes), "reduce scratch size query");
	gpuext_cuda_free(d_scratch);
	must(gpuext_cuda_alloc(&d_scratch, bytes), "allocation");
	memset(pinned_result, POISON, sizeof(GpuextReduceResult));
	st = gpuext_reduce(8, 1, nullptr, 0, d_scratch, bytes, pinned_result);
	if (st == GPUEXT_OK)
		st = gpuext_cuda_wait(-1, nullptr, nullptr);
	report(st == GPUEXT_OK && pinned_result->count == 0 &&
		   pinned_result->digits[0] == 0, "reduce: no values at a null pointer give count 0 and sum 0",
		   st == GPUEXT_OK ? "" : gpuext_cuda_error_message());
	must(gpuext_cuda_wait(-1, nullptr, nullptr), "wait");
	gpuext_cuda_free(d_values);
	gpuext_cuda_free(d_scratch);
}
