/*
 * gather_harness.cu
 *		Standalone check of gpuext_gather_rows (GpuSort's rows kept in device
 *		memory, brought back in sorted order a piece at a time) against the
 *		CPU, through gpuext_cuda.h only.  Needs a GPU (or, built with a C++
 *		compiler against cuda/fakedev.o and cuda/fakedev_kernels.o, checks
 *		the fake device).
 *
 *	gather_harness [--seed N] [--verbose]
 *
 * Row sets (lengths fixed, random, one row almost a piece, rows with bad
 * offsets that must count as empty) x sizes x piece sizes: the pieces from
 * row 0 on must hold, back to back, exactly the rows of a random order, as
 * many as fit, with nothing written past the bytes the header gives; a
 * piece gathered again from a row in the middle must be the same.  The last
 * line is "N passed, M failed".
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpuext_cuda.h"
#include "harness_report.cuh"

namespace
{

enum Lengths
{
	FIXED,
	RANDOM,
	ONE_LARGE,
	BAD_OFFSETS,
	NUM_LENGTHS
};
const char *const LENGTH_NAMES[] = {"fixed", "random", "one-large", "bad-offsets"};

/* Stop at the first failed call: nothing after it would mean anything. */
void must(GpuextStatus st, const char *what)
{
	if (st != GPUEXT_OK)
	{
		printf("FAIL %s: status %d: %s\n", what, (int) st, gpuext_cuda_error_message());
		printf("%d passed, %d failed\n", passed, failed + 1);
		exit(1);
	}
}

/* Device memory holding a copy of bytes (through pinned memory). */
void *upload(const void *src, size_t bytes)
{
	void	   *d = nullptr;
	void	   *h = nullptr;

	must(gpuext_cuda_alloc(&d, bytes + 8), "device allocation");
	must(gpuext_cuda_alloc_pinned(&h, bytes + 8), "pinned allocation");
	memcpy(h, src, bytes);
	must(gpuext_cuda_copy_to_device(d, h, bytes), "upload");
	must(gpuext_cuda_wait(-1, nullptr, nullptr), "upload wait");
	gpuext_cuda_free_pinned(h);
	return d;
}

/* One row set, size and piece size: gather every piece and compare. */
void check(Lengths lengths, size_t n, size_t out_bytes, std::mt19937_64 &rng)
{
	std::vector<uint64_t> offsets(n + 1);
	std::vector<uint32_t> order(n);
	std::vector<char> rows;
	std::vector<bool> bad(n, false);
	size_t		total = 0;
	size_t		scratch_bytes = 0;
	char		what[160];
	bool		ok = true;
	std::string detail;
	void	   *d_rows,
			   *d_offsets,
			   *d_order,
			   *d_out,
			   *d_scratch;
	char	   *h_out = nullptr;
	size_t		first = 0;
	size_t		pieces = 0;
	std::vector<size_t> starts;

	snprintf(what, sizeof(what), "gather %s n=%zu piece=%zu", LENGTH_NAMES[lengths], n, out_bytes);
	for (size_t r = 0; r < n; r++)
	{
		size_t		len = lengths == FIXED ? 24 : 8 * (1 + rng() % 64);

		if (lengths == ONE_LARGE && r == n / 2)
			len = (out_bytes - sizeof(GpuextGatherHeader)) / 8 * 8;
		offsets[r] = total;
		total += len;
	}
	offsets[n] = total;
	rows.resize(total + 8);
	for (size_t i = 0; i < total; i++)
		rows[i] = (char) rng();
	if (lengths == BAD_OFFSETS && n >= 4)
	{
		/* An unaligned row, and a row past the end, count as empty (their neighbours shrink or stay) */
		offsets[1] += 3;
		bad[0] = bad[1] = true;
		offsets[n - 1] = total + 64;
		bad[n - 2] = bad[n - 1] = true;
	}
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t) i;
	std::shuffle(order.begin(), order.end(), rng);

	must(gpuext_gather_rows_scratch_bytes(n, &scratch_bytes), "scratch size query");
	d_rows = upload(rows.data(), total);
	d_offsets = upload(offsets.data(), (n + 1) * 8);
	d_order = upload(order.data(), n * 4);
	must(gpuext_cuda_alloc(&d_out, out_bytes), "out allocation");
	must(gpuext_cuda_alloc(&d_scratch, scratch_bytes + 1), "scratch allocation");
	must(gpuext_cuda_alloc_pinned(reinterpret_cast<void **>(&h_out), out_bytes), "pinned allocation");

	while (ok && (first < n || pieces == 0))
	{
		GpuextGatherHeader header;
		size_t		at = 0;

		memset(h_out, 0x5A, out_bytes);
		must(gpuext_cuda_copy_to_device(d_out, h_out, out_bytes), "out poison");
		must(gpuext_gather_rows(static_cast<const char *>(d_rows), total, static_cast<const uint64_t *>(d_offsets),
								static_cast<const uint32_t *>(d_order), n, first, pieces == 0,
								static_cast<char *>(d_out), out_bytes, d_scratch, scratch_bytes),
			 "gather");
		must(gpuext_cuda_copy_to_host(h_out, d_out, out_bytes), "download");
		must(gpuext_cuda_wait(-1, nullptr, nullptr), "download wait");
		memcpy(&header, h_out, sizeof(header));
		starts.push_back(first);
		pieces++;
		if (header.rows == 0 || first + header.rows > n)
		{
			detail = "piece from row " + std::to_string(first) + " holds " + std::to_string(header.rows) + " rows";
			ok = false;
			break;
		}
		for (size_t i = first; i < first + header.rows && ok; i++)
		{
			uint32_t	r = order[i];
			size_t		len = bad[r] ? 0 : offsets[r + 1] - offsets[r];

			if (at + len > out_bytes - sizeof(header) ||
				memcmp(h_out + sizeof(header) + at, rows.data() + offsets[r], len) != 0)
			{
				detail = "row " + std::to_string(i) + " (input row " + std::to_string(r) + ") differs";
				ok = false;
			}
			at += len;
		}
		if (ok && header.bytes != at)
		{
			detail = "header says " + std::to_string(header.bytes) + " bytes, rows take " + std::to_string(at);
			ok = false;
		}
		for (size_t i = sizeof(header) + at; ok && i < out_bytes; i++)
			if (h_out[i] != 0x5A)
			{
				detail = "byte " + std::to_string(i) + " past the rows was written";
				ok = false;
			}
		/* The piece must be full: the next row would not have fitted */
		if (ok && first + header.rows < n)
		{
			uint32_t	r = order[first + header.rows];
			size_t		len = bad[r] ? 0 : offsets[r + 1] - offsets[r];

			if (at + len <= out_bytes - sizeof(header))
			{
				detail = "piece from row " + std::to_string(first) + " stops early";
				ok = false;
			}
		}
		first += header.rows;
	}
	/* Again from a piece in the middle, without preparing: the same rows */
	if (ok && starts.size() > 2)
	{
		size_t		again = starts[starts.size() / 2];
		GpuextGatherHeader header;
		size_t		at = 0;

		must(gpuext_gather_rows(static_cast<const char *>(d_rows), total, static_cast<const uint64_t *>(d_offsets),
								static_cast<const uint32_t *>(d_order), n, again, 0, static_cast<char *>(d_out),
								out_bytes, d_scratch, scratch_bytes),
			 "gather again");
		must(gpuext_cuda_copy_to_host(h_out, d_out, out_bytes), "download");
		must(gpuext_cuda_wait(-1, nullptr, nullptr), "download wait");
		memcpy(&header, h_out, sizeof(header));
		for (size_t i = again; i < again + header.rows && i < n && ok; i++)
		{
			uint32_t	r = order[i];
			size_t		len = bad[r] ? 0 : offsets[r + 1] - offsets[r];

			if (memcmp(h_out + sizeof(header) + at, rows.data() + offsets[r], len) != 0)
			{
				detail = "gathered again from row " + std::to_string(again) + ": row " + std::to_string(i) + " differs";
				ok = false;
			}
			at += len;
		}
		if (ok && (header.rows == 0 || header.bytes != at))
		{
			detail = "gathered again: header disagrees";
			ok = false;
		}
	}
	if (ok)
		detail = std::to_string(pieces) + " pieces";
	report(ok, what, detail);
	gpuext_cuda_free_pinned(h_out);
	gpuext_cuda_free(d_rows);
	gpuext_cuda_free(d_offsets);
	gpuext_cuda_free(d_order);
	gpuext_cuda_free(d_out);
	gpuext_cuda_free(d_scratch);
}

}								/* namespace */

int main(int argc, char **argv)
{
	uint64_t	seed = 1;
	GpuextDeviceInfo info;
	const size_t sizes[] = {1, 2, 7, 1000, 100003, (size_t) 1 << 20};
	const size_t piece_bytes[] = {4096, 65536, (size_t) 4 << 20};

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--verbose") == 0)
			verbose = true;
		else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
			seed = strtoull(argv[++i], nullptr, 0);
		else
		{
			fprintf(stderr, "usage: %s [--seed N] [--verbose]\n", argv[0]);
			return 2;
		}
	}
	must(gpuext_cuda_open(&info), "open");
	printf("device: %s, seed %llu\n", info.name, (unsigned long long) seed);

	std::mt19937_64 rng(seed);
	for (int l = 0; l < NUM_LENGTHS; l++)
		for (size_t n : sizes)
			for (size_t p : piece_bytes)
				if ((size_t) n * 520 / p < 20000)
					check((Lengths) l, n, p, rng);
	printf("%d passed, %d failed\n", passed, failed);
	return failed == 0 ? 0 : 1;
}
