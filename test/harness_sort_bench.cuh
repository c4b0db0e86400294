/*
 * harness_sort_bench.cuh
 *		kernel_harness --bench: the median time of the key sorts (sort and wait)
 *		over random keys for every algorithm, width and size, and of the row
 *		sort for a few shapes and sizes.  Included after harness_sort_rows.cuh.
 */

/* Median time of sort + wait over random keys for every algorithm, width and size. */
void run_bench(uint64_t seed)
{
	const int	runs = 10;

	printf("%-10s %4s %10s %12s %12s\n", "algo", "bits", "n", "median_ms", "Mkeys/s");
	for (int a = 0; a < 4; a++)
		for (int kb = 4; kb <= 8; kb += 4)
			for (size_t n = 1 << 10; n <= (1u << 24); n <<= 2)
			{
				std::mt19937_64 rng(seed + n + kb);
				std::vector<double> ms;
				void	   *d_keys = nullptr;
				void	   *d_scratch = nullptr;
				size_t		bytes = 0;
				bool		sorted = true;

				if (ALGOS[a] == GPUEXT_SORT_ODDEVEN && n > GPUEXT_ODDEVEN_MAX_ELEMENTS)
					continue;
				ensure_pinned(n * kb);
				for (size_t i = 0; i < n; i++)
				{
					if (kb == 4)
						static_cast<uint32_t *>(pinned_in)[i] = (uint32_t) rng();
					else
						static_cast<uint64_t *>(pinned_in)[i] = rng();
				}
				must(query_scratch(ALGOS[a], kb, n, &bytes), "scratch size query");
				must(gpuext_cuda_alloc(&d_keys, n * kb), "key allocation");
				must(gpuext_cuda_alloc(&d_scratch, bytes), "scratch allocation");
				for (int r = 0; r <= runs; r++)
				{
					must(gpuext_cuda_copy_to_device(d_keys, pinned_in, n * kb), "key upload");
					must(gpuext_cuda_wait(-1, nullptr, nullptr), "upload wait");
					auto		t0 = std::chrono::steady_clock::now();

					must(sort_keys(ALGOS[a], kb, d_keys, n, d_scratch, bytes, nullptr, nullptr), "sort");
					must(gpuext_cuda_wait(-1, nullptr, nullptr), "sort wait");
					auto		t1 = std::chrono::steady_clock::now();

					if (r > 0)
						ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
				}
				must(gpuext_cuda_copy_to_host(pinned_out, d_keys, n * kb), "key download");
				must(gpuext_cuda_wait(-1, nullptr, nullptr), "download wait");
				for (size_t i = 1; i < n && sorted; i++)
					sorted = key_at(pinned_out, i - 1, kb) <= key_at(pinned_out, i, kb);
				gpuext_cuda_free(d_keys);
				gpuext_cuda_free(d_scratch);
				std::sort(ms.begin(), ms.end());
				double		median = (ms[runs / 2 - 1] + ms[runs / 2]) / 2;

				printf("%-10s %4d %10zu %12.3f %12.1f%s\n", ALGO_NAMES[a], 8 * kb, n, median,
					   n / median / 1000.0, sorted ? "" : "  NOT SORTED");
				fflush(stdout);
			}
}

/* Median time of the row sort (it waits itself) over random keys for a few shapes and sizes. */
void run_rows_bench(uint64_t seed)
{
	const int	runs = 10;
	const RowShape shapes[] = {{1, 33}, {2, 33}, {2, 64}};

	printf("%-10s %5s %8s %10s %12s %12s\n", "rows", "words", "top_bits", "n", "median_ms", "Mrows/s");
	for (const RowShape &shape : shapes)
		for (size_t n = 1 << 20; n <= (1u << 24); n <<= 2)
		{
			const int	nw = shape.nwords;
			std::mt19937_64 rng(seed + n + nw);
			std::vector<uint64_t> rows(n * nw);
			std::vector<double> ms;
			void	   *d_keys = nullptr;
			void	   *d_order = nullptr;
			void	   *d_scratch = nullptr;
			size_t		bytes = 0;
			bool		sorted = true;
			const uint32_t *order;

			for (size_t i = 0; i < n * nw; i++)
				rows[i] = rng() & (i % nw == 0 ? word_mask(0, shape.top_bits) : ~0ull);
			ensure_pinned(n * nw * 8);
			must(gpuext_sort_rows_scratch_bytes(nw, n, &bytes), "row scratch size query");
			must(gpuext_cuda_alloc(&d_keys, n * nw * 8), "key allocation");
			must(gpuext_cuda_alloc(&d_order, n * 4), "order allocation");
			must(gpuext_cuda_alloc(&d_scratch, bytes), "scratch allocation");
			for (int r = 0; r <= runs; r++)
			{
				upload_rows(d_keys, rows, nw, n);
				must(gpuext_cuda_wait(-1, nullptr, nullptr), "upload wait");
				auto		t0 = std::chrono::steady_clock::now();

				must(gpuext_sort_rows(nw, shape.top_bits, static_cast<uint64_t *>(d_keys),
									  static_cast<uint32_t *>(d_order), nullptr, n, d_scratch, bytes, nullptr, nullptr),
					 "row sort");
				must(gpuext_cuda_wait(-1, nullptr, nullptr), "row sort wait");
				auto		t1 = std::chrono::steady_clock::now();

				if (r > 0)
					ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
			}
			must(gpuext_cuda_copy_to_host(pinned_out, d_order, n * 4), "order download");
			must(gpuext_cuda_wait(-1, nullptr, nullptr), "download wait");
			order = static_cast<const uint32_t *>(pinned_out);
			for (size_t i = 0; i < n && sorted; i++)
				sorted = order[i] < n && (i == 0 || !row_less(rows, nw, order[i], order[i - 1]));
			gpuext_cuda_free(d_keys);
			gpuext_cuda_free(d_order);
			gpuext_cuda_free(d_scratch);
			std::sort(ms.begin(), ms.end());
			double		median = (ms[runs / 2 - 1] + ms[runs / 2]) / 2;

			printf("%-10s %5d %8d %10zu %12.3f %12.1f%s\n", "rows", nw, shape.top_bits, n, median,
				   n / median / 1000.0, sorted ? "" : "  NOT SORTED");
			fflush(stdout);
		}
}
