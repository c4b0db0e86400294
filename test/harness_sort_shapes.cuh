/*
 * harness_sort_shapes.cuh
 *		kernel_harness's checks of every bitonic shape by number (sort_keys.cuh:
 *		tile shapes, the cluster kernel at each cluster size, the pair tiles),
 *		beside the one the entry points pick: keys of both widths and pairs of
 *		both, over sizes around the cluster's one to eight tiles; a shape that
 *		does not apply to n or to the device must be refused.  Included after
 *		harness_sort_pairs.cuh.
 */

/* Keys a cluster shape's tiles hold (6 .. 9: the tiles of shapes 1 .. 4), 0 for other shapes. */
size_t cluster_tile(int shape)
{
	return shape >= 6 ? (size_t) 512 << (shape - 5) : 0;
}

/*
 * Whether bitonic shape number shape sorts n keys of key_bytes (pairs: 8 or
 * 16-byte network keys) on this device, as network_shape decides.
 */
bool shape_applies(int net_bytes, int shape, size_t n, bool clusters, size_t smem_optin)
{
	size_t		p = 1;

	while (p < n)
		p <<= 1;
	if (net_bytes == 16)
		return shape == 0 ? smem_optin >= 128 * 1024 : shape <= 3;
	if (shape == 5)
		return net_bytes == 4;
	if (shape >= 6)
		return clusters && p <= 8 * cluster_tile(shape);	/* 8: the portable cluster size */
	return true;
}

/*
 * Every bitonic shape by number over sizes around the cluster's one to
 * eight tiles (and, for pairs, above the shared-memory global passes):
 * keys of both widths and pairs of both; a shape that does not apply must
 * be refused.
 */
void run_shape_checks(bool quick, uint64_t seed)
{
	int			cluster = 0;
	int			optin = 0;
	std::vector<size_t> sizes;

	if (cudaDeviceGetAttribute(&cluster, cudaDevAttrClusterLaunch, 0) != cudaSuccess ||
		cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0) != cudaSuccess)
	{
		report(false, "device attributes for the shape checks", cudaGetErrorString(cudaGetLastError()));
		return;
	}
	if (quick)
		sizes = {1025, 4097, 16385, 65536};
	else
		sizes = {2, 1000, 1025, 2049, 4097, 8193, 12289, 16385, 32769, 65535, 65536, 65537, (1u << 20) + 1,
				 (1u << 22) + 1};
	for (int kb = 4; kb <= 8; kb += 4)
		for (int p = 0; p < NUM_PATTERNS; p++)
		{
			Pattern		pattern = static_cast<Pattern>(p);

			if ((quick && pattern != RANDOM && pattern != FEW_16) || (!quick && pattern == SORTED) ||
				(only_pattern != nullptr && strcmp(only_pattern, PATTERN_NAMES[p]) != 0))
				continue;
			for (size_t n : sizes)
			{
				if (n > max_n)
					continue;
				std::mt19937_64 rng(seed ^ (n * 0x2545F4914F6CDD1Dull) ^ ((uint64_t) p << 36) ^ ((uint64_t) kb << 50));
				std::vector<uint64_t> input(n);
				std::vector<uint64_t> expected;
				std::vector<uint32_t> idx(n);

				generate(input, pattern, kb, rng);
				expected = input;
				std::sort(expected.begin(), expected.end());
				for (size_t i = 0; i < n; i++)
					idx[i] = (uint32_t) (rng() % (n + n / 8 + 1));
				for (int shape = 0; shape < gpuext::BITONIC_SHAPES; shape++)
				{
					bool		keys_apply = shape_applies(kb, shape, n, cluster != 0, (size_t) optin);
					bool		pairs_apply = shape_applies(2 * kb, shape, n, cluster != 0, (size_t) optin);
					bool		large = n > (1u << 17);

					/* The largest sizes are there for the global passes of the tiled shapes. */
					if (keys_apply && !(large && (kb == 8 || pattern != RANDOM)))
						check_sort(0, kb, pattern, n, input, expected, shape);
					if (pairs_apply && !(large && pattern != RANDOM && pattern != FEW_16))
						check_pairs(kb, pattern, n, input, idx, shape);
					if (n == 4097 && pattern == RANDOM)
					{
						char		what[96];

						if (!keys_apply)
						{
							snprintf(what, sizeof(what), "bitonic shape %d %d-bit n=%zu is refused here", shape,
									 8 * kb, n);
							expect_invalid(what, sort_shape(kb, nullptr, n, shape));
						}
						if (!pairs_apply)
						{
							snprintf(what, sizeof(what), "bitonic pairs shape %d %d-bit n=%zu is refused here",
									 shape, 8 * kb, n);
							expect_invalid(what, gpuext::bitonic_sort_pairs_shape(kb, nullptr, nullptr, n, shape));
						}
					}
				}
			}
		}
}
