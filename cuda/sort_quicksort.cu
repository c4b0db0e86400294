/*
 * sort_quicksort.cu
 *		GPU-Quicksort after Cederman & Tsigas, keys only, three-way partition.
 *
 * Every level is scheduled on the device: the host enqueues the levels that
 * halving sequences would need, and some, at once, and reads nothing back
 * between them; only if large sequences are left after them does it enqueue
 * more, QS_MORE_LEVELS at a time.  A level: every sequence
 * longer than QS_SMALL gets a pivot (median of 9 evenly spaced samples); then
 * QS_CHUNK-key chunks of all sequences of the level are partitioned at once
 * by a persistent grid: each chunk's block counts its keys < and > the pivot,
 * takes block-wide prefix sums, atomically reserves its output ranges in the
 * other buffer (< from the left of the sequence, > from the right) and writes
 * them; the last block of a sequence (atomic counter) fills the middle with
 * the pivot, directly into keys since equal keys are final.  Then one block
 * plans the next level from the counts: children longer than QS_SMALL become
 * its sequences (with their first chunk numbers), the others small ranges,
 * which blocks sort in shared memory (bitonic) into keys at once.  The counts
 * of sequences, chunks and ranges live in device memory; a level with nothing
 * left to do returns at once.  Levels alternate keys -> aux -> keys ...; after
 * each batch of levels the host reads one control block back, and after
 * 2*log2(n) levels a sequence still large (a depth guard) goes to the bitonic
 * sort.
 *
 * Scratch: aux (n keys) | control | two sequence lists | per-sequence state |
 * small ranges; host scratch (pinned, the caller's): control | sequences.
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
constexpr unsigned QS_PLAN_THREADS = 1024;

/* Persistent grids: blocks of the partition and of the small sorts at most. */
constexpr unsigned QS_PARTITION_GRID = 2048;
constexpr unsigned QS_SMALL_GRID = 1024;

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

/* Component-wise sum, for the plan's scans. */
struct Uint4Sum
{
	__device__ uint4 operator()(const uint4 &a, const uint4 &b) const
	{
		return make_uint4(a.x + b.x, a.y + b.y, a.z + b.z, a.w | b.w);
	}
};

/* What the levels pass on through device memory. */
struct QsCtl
{
	unsigned int nseqs;			/* sequences of the level about to run */
	unsigned int nblocks;		/* ... and their chunks */
	unsigned int nsmall;		/* small ranges the last level left */
	unsigned int failed;		/* a partition's counts were impossible */
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
				ctl_off,
				seqs_off[2],
				state_off,
				small_off,
				device_bytes;
	size_t		host_seqs,
				host_bytes;

	/* Lay out for n > QS_SMALL keys: a level has at most n / (QS_SMALL + 1) large sequences. */
	explicit QsLayout(size_t n)
	{
		max_seqs = n / (QS_SMALL + 1) + 1;
		aux_off = 0;
		ctl_off = align_up(n * sizeof(K), 256);
		seqs_off[0] = ctl_off + 256;
		seqs_off[1] = seqs_off[0] + align_up(max_seqs * sizeof(QsSeq), 256);
		state_off = seqs_off[1] + align_up(max_seqs * sizeof(QsSeq), 256);
		small_off = state_off + align_up(max_seqs * sizeof(QsState<K>), 256);
		device_bytes = small_off + align_up(2 * max_seqs * sizeof(QsRange), 256);
		host_seqs = align_up(sizeof(QsCtl), 64);
		host_bytes = host_seqs + align_up(max_seqs * sizeof(QsSeq), 64);
	}
};

/* The pivot of one sequence, and its state reset. */
template <typename K>
__device__ void qs_pivot_one(const K *src, QsSeq q, QsState<K> *state)
{
	K			v[QS_SAMPLES];
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
	state->lt = 0;
	state->gt = 0;
	state->pivot = v[QS_SAMPLES / 2];
	state->done = 0;
}

/* Pivot of each sequence: median of QS_SAMPLES evenly spaced keys; also resets its state. */
template <typename K>
__global__ void __launch_bounds__(QS_PIVOT_THREADS) qs_pivot_kernel(const K *src, const QsSeq *seqs,
																	 const QsCtl *ctl, QsState<K> *state)
{
	const unsigned nseqs = ctl->nseqs;

	for (unsigned s = blockIdx.x * QS_PIVOT_THREADS + threadIdx.x; s < nseqs; s += gridDim.x * QS_PIVOT_THREADS)
		qs_pivot_one(src, seqs[s], &state[s]);
}

/*
 * gqsort, one chunk: the block partitions chunk c (its QS_CHUNK keys of one
 * sequence) from src into dst; the sequence's last block fills the pivot run
 * in keys.
 */
template <typename K>
__device__ void qs_partition_chunk(const K *src, K *dst, K *keys, const QsSeq *seqs, unsigned nseqs,
								   QsState<K> *state, unsigned c)
{
	using BlockScan = cub::BlockScan<unsigned, QS_THREADS>;
	__shared__ typename BlockScan::TempStorage scan_storage;
	__shared__ K stage[QS_CHUNK];
	__shared__ unsigned long long lt_base, gt_base, fill_begin, fill_end;
	unsigned	lo = 0;
	unsigned	hi = nseqs - 1;

	/* The sequence owning this chunk: the last one with block0 <= c. */
	while (lo < hi)
	{
		unsigned	mid = lo + (hi - lo + 1) / 2;

		if (seqs[mid].block0 <= c)
			lo = mid;
		else
			hi = mid - 1;
	}
	const QsSeq q = seqs[lo];
	const K		pivot = state[lo].pivot;
	const size_t chunk_begin = q.begin + (size_t) (c - q.block0) * QS_CHUNK;
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
	/* The shared staging and bases are the next chunk's */
	__syncthreads();
}

/* gqsort over the level: a persistent grid takes the level's chunks in turn. */
template <typename K>
__global__ void __launch_bounds__(QS_THREADS) qs_partition_kernel(const K *src, K *dst, K *keys,
																  const QsSeq *seqs, const QsCtl *ctl,
																  QsState<K> *state)
{
	const unsigned nseqs = ctl->nseqs;
	const unsigned nblocks = ctl->nblocks;

	for (unsigned c = blockIdx.x; c < nblocks; c += gridDim.x)
		qs_partition_chunk(src, dst, keys, seqs, nseqs, state, c);
}

/*
 * Plan the next level in one block, from this level's counts: children of
 * more than QS_SMALL keys become its sequences, in order, with their first
 * chunk numbers; the others (but empty ones) small ranges.  Block-wide scans
 * over the sequences QS_PLAN_THREADS at a time give every child its place.
 */
template <typename K>
__global__ void __launch_bounds__(QS_PLAN_THREADS) qs_plan_kernel(const QsSeq *cur, const QsState<K> *state,
																   QsSeq *next, QsRange *small, QsCtl *ctl)
{
	using PlanScan = cub::BlockScan<uint4, QS_PLAN_THREADS>;
	__shared__ typename PlanScan::TempStorage scan_storage;
	__shared__ uint4 carry;		/* sequences, chunks, small ranges so far; failed */
	const unsigned ncur = ctl->nseqs;

	if (threadIdx.x == 0)
		carry = make_uint4(0, 0, 0, 0);
	__syncthreads();
	for (unsigned first = 0; first < ncur; first += QS_PLAN_THREADS)
	{
		unsigned	s = first + threadIdx.x;
		QsRange		child[2] = {{0, 0}, {0, 0}};
		uint4		mine = make_uint4(0, 0, 0, 0);
		uint4		offset;
		uint4		total;

		if (s < ncur)
		{
			unsigned long long len = cur[s].end - cur[s].begin;
			unsigned long long lt = state[s].lt;
			unsigned long long gt = state[s].gt;

			if (lt > len || gt > len - lt)
				mine.w = 1;
			else
			{
				child[0] = QsRange{cur[s].begin, cur[s].begin + lt};
				child[1] = QsRange{cur[s].end - gt, cur[s].end};
			}
			for (const QsRange &c : child)
			{
				unsigned long long clen = c.end - c.begin;

				if (clen > QS_SMALL)
				{
					mine.x++;
					mine.y += (unsigned) ((clen + QS_CHUNK - 1) / QS_CHUNK);
				}
				else if (clen > 0)
					mine.z++;
			}
		}
		PlanScan(scan_storage).ExclusiveScan(mine, offset, make_uint4(0, 0, 0, 0), Uint4Sum(), total);
		offset.x += carry.x;
		offset.y += carry.y;
		offset.z += carry.z;
		for (const QsRange &c : child)
		{
			unsigned long long clen = c.end - c.begin;

			if (clen > QS_SMALL)
			{
				unsigned	cblocks = (unsigned) ((clen + QS_CHUNK - 1) / QS_CHUNK);

				next[offset.x++] = QsSeq{c.begin, c.end, offset.y, cblocks};
				offset.y += cblocks;
			}
			else if (clen > 0)
				small[offset.z++] = c;
		}
		__syncthreads();
		if (threadIdx.x == 0)
			carry = make_uint4(carry.x + total.x, carry.y + total.y, carry.z + total.z, carry.w | total.w);
		__syncthreads();
	}
	if (threadIdx.x == 0)
	{
		ctl->nseqs = carry.x;
		ctl->nblocks = carry.y;
		ctl->nsmall = carry.z;
		ctl->failed |= carry.w;
	}
}

/* lqsort: a persistent grid sorts the small ranges of src in shared memory into keys, a range a block. */
template <typename K>
__global__ void __launch_bounds__(BITONIC_THREADS) qs_small_sort_kernel(const K *src, K *keys,
																		const QsRange *ranges, const QsCtl *ctl)
{
	__shared__ K s[BITONIC_TILE];
	const unsigned nsmall = ctl->nsmall;

	for (unsigned b = blockIdx.x; b < nsmall; b += gridDim.x)
	{
		const QsRange r = ranges[b];
		const unsigned len = (unsigned) (r.end - r.begin);
		const unsigned p = (unsigned) next_pow2(len);

		for (unsigned i = threadIdx.x; i < p; i += BITONIC_THREADS)
			s[i] = i < len ? src[r.begin + i] : key_max<K>();
		__syncthreads();
		block_bitonic_sort<K, BITONIC_THREADS>(s, p);
		for (unsigned i = threadIdx.x; i < len; i += BITONIC_THREADS)
			keys[r.begin + i] = s[i];
		__syncthreads();
	}
}

/* Where one level reads and writes. */
template <typename K>
struct QsLevel
{
	const K    *src;
	K		   *dst;
	K		   *keys;
	const QsSeq *cur;
	QsSeq	   *next;
	QsState<K> *state;
	QsRange    *small;
	QsCtl	   *ctl;
};

/* Enqueue one level: pivots, the partition, the next level's plan, the small sorts. */
template <typename K>
GpuextStatus enqueue_level(const QsLevel<K> &lv, unsigned pivot_grid, unsigned partition_grid, unsigned small_grid,
						   cudaStream_t stream)
{
	GpuextStatus st;

	qs_pivot_kernel<K><<<pivot_grid, QS_PIVOT_THREADS, 0, stream>>>(lv.src, lv.cur, lv.ctl, lv.state);
	if ((st = check_launch("qs_pivot_kernel")) != GPUEXT_OK)
		return st;
	qs_partition_kernel<K><<<partition_grid, QS_THREADS, 0, stream>>>(lv.src, lv.dst, lv.keys, lv.cur, lv.ctl,
																	   lv.state);
	if ((st = check_launch("qs_partition_kernel")) != GPUEXT_OK)
		return st;
	qs_plan_kernel<K><<<1, QS_PLAN_THREADS, 0, stream>>>(lv.cur, lv.state, lv.next, lv.small, lv.ctl);
	if ((st = check_launch("qs_plan_kernel")) != GPUEXT_OK)
		return st;
	qs_small_sort_kernel<K><<<small_grid, BITONIC_THREADS, 0, stream>>>(lv.dst, lv.keys, lv.small, lv.ctl);
	return check_launch("qs_small_sort_kernel");
}

/* Levels enqueued before the first look at what is left: enough for sequences halving each level, and some. */
size_t first_levels(size_t n)
{
	size_t		levels = 4;

	while (((size_t) QS_SMALL << (levels - 4)) < n)
		levels++;
	return levels;
}

/* Levels enqueued at each later look, while large sequences are left. */
constexpr size_t QS_MORE_LEVELS = 8;

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

/* Pinned host scratch for the first sequence and the control block read back at the end. */
template <typename K>
size_t quicksort_host_bytes(size_t n)
{
	if (n <= QS_SMALL)
		return 0;
	return QsLayout<K>(n).host_bytes;
}

/*
 * Enqueue the quicksort of n keys a batch of levels at a time, reading the
 * control block back (polling wait) after each batch: one batch for
 * sequences that halve, more only while large ones are left.
 */
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
	QsCtl	   *dev_ctl = reinterpret_cast<QsCtl *>(dev + layout.ctl_off);
	QsSeq	   *dev_seqs[2] = {reinterpret_cast<QsSeq *>(dev + layout.seqs_off[0]),
							   reinterpret_cast<QsSeq *>(dev + layout.seqs_off[1])};
	QsState<K> *dev_state = reinterpret_cast<QsState<K> *>(dev + layout.state_off);
	QsRange    *dev_small = reinterpret_cast<QsRange *>(dev + layout.small_off);
	char	   *host = static_cast<char *>(host_scratch);
	QsCtl	   *host_ctl = reinterpret_cast<QsCtl *>(host);
	QsSeq	   *host_seqs = reinterpret_cast<QsSeq *>(host + layout.host_seqs);
	const size_t nblocks = (n + QS_CHUNK - 1) / QS_CHUNK;
	const size_t levels = max_levels(n);
	const unsigned pivot_grid = (unsigned) ((layout.max_seqs + QS_PIVOT_THREADS - 1) / QS_PIVOT_THREADS);
	const unsigned partition_grid = (unsigned) std::min<size_t>(nblocks + layout.max_seqs, QS_PARTITION_GRID);
	const unsigned small_grid = (unsigned) std::min<size_t>(2 * layout.max_seqs, QS_SMALL_GRID);
	const K    *src = keys;
	K		   *dst = aux;

	/* The caller's earlier copies may still read the host scratch: let the stream drain first. */
	if ((st = stream_wait(poll, arg)) != GPUEXT_OK)
		return st;
	*host_ctl = QsCtl{1, (unsigned) nblocks, 0, 0};
	host_seqs[0] = QsSeq{0, n, 0, (unsigned) nblocks};
	if ((st = check_cuda(cudaMemcpyAsync(dev_ctl, host_ctl, sizeof(QsCtl), cudaMemcpyHostToDevice, stream),
						 "quicksort control upload")) != GPUEXT_OK ||
		(st = check_cuda(cudaMemcpyAsync(dev_seqs[0], host_seqs, sizeof(QsSeq), cudaMemcpyHostToDevice, stream),
						 "quicksort sequence upload")) != GPUEXT_OK)
		return st;

	size_t		level = 0;

	for (size_t batch_end = std::min(first_levels(n), levels);; batch_end = std::min(level + QS_MORE_LEVELS, levels))
	{
		/* A batch of levels with nothing read back between them */
		for (; level < batch_end; level++)
		{
			QsLevel<K>	lv = {src, dst, keys, dev_seqs[level % 2], dev_seqs[(level + 1) % 2], dev_state, dev_small,
							  dev_ctl};

			if ((st = enqueue_level(lv, pivot_grid, partition_grid, small_grid, stream)) != GPUEXT_OK)
				return st;
			src = dst;
			dst = (dst == aux) ? keys : aux;
		}
		if ((st = check_cuda(cudaMemcpyAsync(host_ctl, dev_ctl, sizeof(QsCtl), cudaMemcpyDeviceToHost, stream),
							 "quicksort control readback")) != GPUEXT_OK ||
			(st = stream_wait(poll, arg)) != GPUEXT_OK)
			return st;
		if (host_ctl->failed)
			return set_error(GPUEXT_CUDA_ERROR, "quicksort partition returned impossible counts");
		if (host_ctl->nseqs == 0)
			return GPUEXT_OK;
		if (level == levels)
			break;
	}

	/* Depth guard: sequences still large after every level go to the bitonic network, then to keys. */
	if ((st = check_cuda(cudaMemcpyAsync(host_seqs, dev_seqs[levels % 2], host_ctl->nseqs * sizeof(QsSeq),
										 cudaMemcpyDeviceToHost, stream),
						 "quicksort sequence readback")) != GPUEXT_OK ||
		(st = stream_wait(poll, arg)) != GPUEXT_OK)
		return st;
	for (size_t s = 0; s < host_ctl->nseqs; s++)
	{
		size_t		len = host_seqs[s].end - host_seqs[s].begin;
		K		   *part = const_cast<K *>(src) + host_seqs[s].begin;

		if ((st = bitonic_sort<K>(part, len)) != GPUEXT_OK)
			return st;
		if (src != keys &&
			(st = check_cuda(cudaMemcpyAsync(keys + host_seqs[s].begin, part, len * sizeof(K),
											 cudaMemcpyDeviceToDevice, stream),
							 "quicksort fallback copy")) != GPUEXT_OK)
			return st;
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
