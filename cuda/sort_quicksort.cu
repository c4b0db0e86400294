/*
 * sort_quicksort.cu
 *		GPU-Quicksort after Cederman & Tsigas, keys only, three-way partition.
 *
 * Phase 1, one host iteration per level: every sequence longer than
 * QS_SMALL gets a pivot (median of 9 evenly spaced samples, chosen on the
 * device), then QS_CHUNK-key blocks partition all sequences of the level at
 * once: each block counts its keys < and > the pivot, takes block-wide prefix
 * sums, atomically reserves its output ranges in the other buffer (< from the
 * left of the sequence, > from the right) and writes them; the last block of
 * a sequence (atomic counter) fills the middle with the pivot, directly into
 * keys since equal keys are final.  The host reads the per-sequence counts
 * back (polling wait) and builds the next level.  Phase 2: every sequence of
 * at most QS_SMALL keys is sorted by one block (bitonic in shared memory) and
 * written to keys.  Levels alternate keys -> aux -> keys ...; after
 * 2*log2(n) levels whatever is still large is finished by the bitonic sort.
 *
 * Scratch: aux (n keys) | sequences | per-sequence state | small ranges;
 * host scratch (pinned, the caller's): two sequence lists | states | ranges.
 */
#include <algorithm>

#include <cub/block/block_scan.cuh>

#include "sort_keys.cuh"

namespace gpuext
{

namespace
{

constexpr unsigned QS_THREADS = 256;
constexpr unsigned QS_ITEMS = 8;
constexpr unsigned QS_CHUNK = QS_THREADS * QS_ITEMS;
constexpr size_t QS_SMALL = BITONIC_TILE;
constexpr unsigned QS_SAMPLES = 9;
constexpr unsigned QS_PIVOT_THREADS = 128;

/* A sequence to partition and its first block in the level's grid. */
struct QsSeq
{
	unsigned long long begin;
	unsigned long long end;
	unsigned int block0;
	unsigned int nblocks;
};

/* A sequence of at most QS_SMALL keys for one block to finish. */
struct QsRange
{
	unsigned long long begin;
	unsigned long long end;
};

/* Per-sequence partition state: keys < and > pivot so far, blocks finished. */
template <typename K>
struct QsState
{
	unsigned long long lt;
	unsigned long long gt;
	K			pivot;
	unsigned int done;
};

/* Where each part lives in scratch (device) and in the caller's pinned host scratch. */
template <typename K>
struct QsLayout
{
	size_t		max_seqs;
	size_t		aux_off,
				seqs_off,
				state_off,
				small_off,
				device_bytes;
	size_t		host_seqs_a,
				host_seqs_b,
				host_state,
				host_small,
				host_bytes;

	/* Lay out for n > QS_SMALL keys: a level has at most n / (QS_SMALL + 1) large sequences. */
	explicit QsLayout(size_t n)
	{
		max_seqs = n / (QS_SMALL + 1) + 1;
		aux_off = 0;
		seqs_off = align_up(n * sizeof(K), 256);
		state_off = seqs_off + align_up(max_seqs * sizeof(QsSeq), 256);
		small_off = state_off + align_up(max_seqs * sizeof(QsState<K>), 256);
		device_bytes = small_off + align_up(2 * max_seqs * sizeof(QsRange), 256);
		host_seqs_a = 0;
		host_seqs_b = align_up(max_seqs * sizeof(QsSeq), 64);
		host_state = 2 * host_seqs_b;
		host_small = host_state + align_up(max_seqs * sizeof(QsState<K>), 64);
		host_bytes = host_small + align_up(2 * max_seqs * sizeof(QsRange), 64);
	}
};

/* Pivot of each sequence: median of QS_SAMPLES evenly spaced keys; also resets its state. */
template <typename K>
__global__ void __launch_bounds__(QS_PIVOT_THREADS) qs_pivot_kernel(const K *src, const QsSeq *seqs,
																	 unsigned nseqs, QsState<K> *state)
{
	unsigned	s = blockIdx.x * QS_PIVOT_THREADS + threadIdx.x;
	K			v[QS_SAMPLES];

	if (s >= nseqs)
		return;
	QsSeq		q = seqs[s];
	size_t		last = q.end - q.begin - 1;

	for (unsigned i = 0; i < QS_SAMPLES; i++)
		v[i] = src[q.begin + last / (QS_SAMPLES - 1) * i + last % (QS_SAMPLES - 1) * i / (QS_SAMPLES - 1)];
	for (unsigned i = 1; i < QS_SAMPLES; i++)
		for (unsigned k = i; k > 0 && v[k] < v[k - 1]; k--)
		{
			K			tmp = v[k];

			v[k] = v[k - 1];
			v[k - 1] = tmp;
		}
	state[s].lt = 0;
	state[s].gt = 0;
	state[s].pivot = v[QS_SAMPLES / 2];
	state[s].done = 0;
}

/*
 * gqsort: block blockIdx.x partitions its QS_CHUNK keys of one sequence from
 * src into dst; the sequence's last block fills the pivot run in keys.
 */
template <typename K>
__global__ void __launch_bounds__(QS_THREADS) qs_partition_kernel(const K *src, K *dst, K *keys,
																  const QsSeq *seqs, unsigned nseqs,
																  QsState<K> *state)
{
	using BlockScan = cub::BlockScan<unsigned, QS_THREADS>;
	__shared__ typename BlockScan::TempStorage scan_storage;
	__shared__ K stage[QS_CHUNK];
	__shared__ unsigned long long lt_base, gt_base, fill_begin, fill_end;
	unsigned	lo = 0;
	unsigned	hi = nseqs - 1;

	/* The sequence owning this block: the last one with block0 <= blockIdx.x. */
	while (lo < hi)
	{
		unsigned	mid = lo + (hi - lo + 1) / 2;

		if (seqs[mid].block0 <= blockIdx.x)
			lo = mid;
		else
			hi = mid - 1;
	}
	const QsSeq q = seqs[lo];
	const K		pivot = state[lo].pivot;
	const size_t chunk_begin = q.begin + (size_t) (blockIdx.x - q.block0) * QS_CHUNK;
	const size_t chunk_end = min(chunk_begin + QS_CHUNK, (size_t) q.end);
	K			v[QS_ITEMS];
	unsigned	nlt = 0;
	unsigned	ngt = 0;

	/* Slots past the chunk read as the pivot, which is neither < nor >. */
	for (unsigned i = 0; i < QS_ITEMS; i++)
	{
		size_t		idx = chunk_begin + i * QS_THREADS + threadIdx.x;

		v[i] = idx < chunk_end ? src[idx] : pivot;
		nlt += v[i] < pivot;
		ngt += pivot < v[i];
	}

	/* Both counts in one scan: totals are at most QS_CHUNK < 2^16 per field. */
	unsigned	offsets;
	unsigned	totals;

	BlockScan(scan_storage).ExclusiveSum(nlt | (ngt << 16), offsets, totals);
	unsigned	lt_off = offsets & 0xFFFF;
	unsigned	gt_off = offsets >> 16;
	const unsigned total_lt = totals & 0xFFFF;
	const unsigned total_gt = totals >> 16;

	/* Stage < keys from the front of the tile and > keys from its back. */
	for (unsigned i = 0; i < QS_ITEMS; i++)
	{
		if (v[i] < pivot)
			stage[lt_off++] = v[i];
		else if (pivot < v[i])
			stage[QS_CHUNK - 1 - gt_off++] = v[i];
	}
	if (threadIdx.x == 0)
	{
		lt_base = atomicAdd(&state[lo].lt, (unsigned long long) total_lt);
		gt_base = atomicAdd(&state[lo].gt, (unsigned long long) total_gt);
	}
	__syncthreads();

	for (unsigned j = threadIdx.x; j < total_lt; j += QS_THREADS)
		dst[q.begin + lt_base + j] = stage[j];
	for (unsigned j = threadIdx.x; j < total_gt; j += QS_THREADS)
		dst[q.end - 1 - (gt_base + j)] = stage[QS_CHUNK - 1 - j];

	/* Count this block finished; the last one learns the final totals. */
	if (threadIdx.x == 0)
	{
		__threadfence();
		fill_begin = fill_end = 0;
		if (atomicAdd(&state[lo].done, 1u) == q.nblocks - 1)
		{
			__threadfence();
			fill_begin = q.begin + atomicAdd(&state[lo].lt, 0ull);
			fill_end = q.end - atomicAdd(&state[lo].gt, 0ull);
		}
	}
	__syncthreads();

	for (size_t j = fill_begin + threadIdx.x; j < fill_end; j += QS_THREADS)
		keys[j] = pivot;
}

/* lqsort: block blockIdx.x sorts one small range of src in shared memory into keys. */
template <typename K>
__global__ void __launch_bounds__(BITONIC_THREADS) qs_small_sort_kernel(const K *src, K *keys,
																		const QsRange *ranges)
{
	__shared__ K s[BITONIC_TILE];
	const QsRange r = ranges[blockIdx.x];
	const unsigned len = (unsigned) (r.end - r.begin);
	const unsigned p = (unsigned) next_pow2(len);

	for (unsigned i = threadIdx.x; i < p; i += BITONIC_THREADS)
		s[i] = i < len ? src[r.begin + i] : key_max<K>();
	__syncthreads();
	block_bitonic_sort<K, BITONIC_THREADS>(s, p);
	for (unsigned i = threadIdx.x; i < len; i += BITONIC_THREADS)
		keys[r.begin + i] = s[i];
}

/* Number of levels after which a still-large sequence goes to the bitonic sort. */
size_t max_levels(size_t n)
{
	size_t		log2n = 0;

	while (((size_t) 1 << log2n) < n)
		log2n++;
	return 2 * log2n;
}

}								/* namespace */

/* Device scratch for n keys: none when one block (or nothing) sorts them. */
template <typename K>
size_t quicksort_scratch_bytes(size_t n)
{
	if (n <= QS_SMALL)
		return 0;
	return QsLayout<K>(n).device_bytes;
}

/* Pinned host scratch for the per-level uploads and readbacks. */
template <typename K>
size_t quicksort_host_bytes(size_t n)
{
	if (n <= QS_SMALL)
		return 0;
	return QsLayout<K>(n).host_bytes;
}

/* Enqueue the quicksort of n keys; waits (polling) once per level for the counts. */
template <typename K>
GpuextStatus quicksort(K *keys, size_t n, void *scratch, void *host_scratch, GpuextPollFn poll,
					   void *arg)
{
	cudaStream_t stream = device_stream();
	GpuextStatus st;

	if (n < 2)
		return GPUEXT_OK;
	if (n <= QS_SMALL)
		return bitonic_sort<K>(keys, n);

	const QsLayout<K> layout(n);
	char	   *dev = static_cast<char *>(scratch);
	K		   *aux = reinterpret_cast<K *>(dev + layout.aux_off);
	QsSeq	   *dev_seqs = reinterpret_cast<QsSeq *>(dev + layout.seqs_off);
	QsState<K> *dev_state = reinterpret_cast<QsState<K> *>(dev + layout.state_off);
	QsRange    *dev_small = reinterpret_cast<QsRange *>(dev + layout.small_off);

	/* The caller's earlier copies may still read the host scratch: let the stream drain first. */
	if ((st = stream_wait(poll, arg)) != GPUEXT_OK)
		return st;

	char	   *host = static_cast<char *>(host_scratch);
	QsSeq	   *cur = reinterpret_cast<QsSeq *>(host + layout.host_seqs_a);
	QsSeq	   *next = reinterpret_cast<QsSeq *>(host + layout.host_seqs_b);
	QsState<K> *host_state = reinterpret_cast<QsState<K> *>(host + layout.host_state);
	QsRange    *small = reinterpret_cast<QsRange *>(host + layout.host_small);
	size_t		ncur = 1;
	size_t		nblocks = (n + QS_CHUNK - 1) / QS_CHUNK;
	const K    *src = keys;
	K		   *dst = aux;
	const size_t levels = max_levels(n);

	cur[0] = QsSeq{0, n, 0, (unsigned) nblocks};
	for (size_t level = 0; ncur > 0; level++)
	{
		size_t		nnext = 0;
		size_t		nsmall = 0;
		size_t		next_blocks = 0;

		if (level >= levels)
		{
			/* Depth guard: finish the rest with the bitonic network, then move it to keys. */
			for (size_t s = 0; s < ncur; s++)
			{
				size_t		len = cur[s].end - cur[s].begin;
				K		   *part = const_cast<K *>(src) + cur[s].begin;

				if ((st = bitonic_sort<K>(part, len)) != GPUEXT_OK)
					return st;
				if (src != keys &&
					(st = check_cuda(cudaMemcpyAsync(keys + cur[s].begin, part, len * sizeof(K),
													 cudaMemcpyDeviceToDevice, stream),
									 "quicksort fallback copy")) != GPUEXT_OK)
					return st;
			}
			break;
		}

		if ((st = check_cuda(cudaMemcpyAsync(dev_seqs, cur, ncur * sizeof(QsSeq), cudaMemcpyHostToDevice,
											 stream),
							 "quicksort sequence upload")) != GPUEXT_OK)
			return st;
		qs_pivot_kernel<K><<<(unsigned) ((ncur + QS_PIVOT_THREADS - 1) / QS_PIVOT_THREADS), QS_PIVOT_THREADS,
			0, stream>>>(src, dev_seqs, (unsigned) ncur, dev_state);
		if ((st = check_launch("qs_pivot_kernel")) != GPUEXT_OK)
			return st;
		qs_partition_kernel<K><<<(unsigned) nblocks, QS_THREADS, 0, stream>>>(src, dst, keys, dev_seqs,
																			   (unsigned) ncur, dev_state);
		if ((st = check_launch("qs_partition_kernel")) != GPUEXT_OK)
			return st;
		if ((st = check_cuda(cudaMemcpyAsync(host_state, dev_state, ncur * sizeof(QsState<K>),
											 cudaMemcpyDeviceToHost, stream),
							 "quicksort count readback")) != GPUEXT_OK)
			return st;
		if ((st = stream_wait(poll, arg)) != GPUEXT_OK)
			return st;

		/* Children: [begin, begin+lt) and [end-gt, end), now in dst. */
		for (size_t s = 0; s < ncur; s++)
		{
			size_t		len = cur[s].end - cur[s].begin;
			size_t		lt = host_state[s].lt;
			size_t		gt = host_state[s].gt;
			QsRange		child[2] = {{cur[s].begin, cur[s].begin + lt}, {cur[s].end - gt, cur[s].end}};

			if (lt > len || gt > len - lt)
				return set_error(GPUEXT_CUDA_ERROR,
								 "quicksort partition of %zu keys returned %zu smaller and %zu larger", len,
								 lt, gt);
			for (const QsRange &c : child)
			{
				size_t		clen = c.end - c.begin;

				if (clen == 0)
					continue;
				if (clen <= QS_SMALL)
					small[nsmall++] = c;
				else
				{
					size_t		cblocks = (clen + QS_CHUNK - 1) / QS_CHUNK;

					next[nnext++] = QsSeq{c.begin, c.end, (unsigned) next_blocks, (unsigned) cblocks};
					next_blocks += cblocks;
				}
			}
		}

		if (nsmall > 0)
		{
			if ((st = check_cuda(cudaMemcpyAsync(dev_small, small, nsmall * sizeof(QsRange),
												 cudaMemcpyHostToDevice, stream),
								 "quicksort small range upload")) != GPUEXT_OK)
				return st;
			qs_small_sort_kernel<K><<<(unsigned) nsmall, BITONIC_THREADS, 0, stream>>>(dst, keys, dev_small);
			if ((st = check_launch("qs_small_sort_kernel")) != GPUEXT_OK)
				return st;
		}

		std::swap(cur, next);
		ncur = nnext;
		nblocks = next_blocks;
		src = dst;
		dst = (dst == aux) ? keys : aux;
	}
	return GPUEXT_OK;
}

template size_t quicksort_scratch_bytes<uint32_t>(size_t n);
template size_t quicksort_scratch_bytes<uint64_t>(size_t n);
template size_t quicksort_host_bytes<uint32_t>(size_t n);
template size_t quicksort_host_bytes<uint64_t>(size_t n);
template GpuextStatus quicksort<uint32_t>(uint32_t *keys, size_t n, void *scratch, void *host_scratch,
										  GpuextPollFn poll, void *arg);
template GpuextStatus quicksort<uint64_t>(uint64_t *keys, size_t n, void *scratch, void *host_scratch,
										  GpuextPollFn poll, void *arg);

}								/* namespace gpuext */
