/*
 * scan_heap.cu
 *		gpuext_scan_heap: heap pages decoded and run through a scan program
 *		on the device (scan_heap.h has the decoder and the program).
 *
 * One block a page (a grid-stride loop over pages), one thread a visible
 * item; the program is copied into shared memory once a block.  Each warp
 * counts its tuples with one atomic per counter, and appends an output's
 * values with one atomic for the warp (ballot, then each lane's rank among
 * the lanes that take a value), so the values come out dense in an order
 * that does not matter: the reductions after them are exact.
 */
#include <cstdint>

#include "device_internal.cuh"
#include "scan_heap.h"

namespace gpuext
{

namespace
{

constexpr unsigned SCAN_THREADS = 128;
constexpr unsigned FULL_MASK = 0xFFFFFFFFu;
constexpr uint32_t MAX_SCAN_BLOCKS = 65535;
constexpr unsigned GATHER_THREADS = 256;

/* Zero the batch's counters. */
__global__ void scan_clear_kernel(unsigned long long *counts)
{
	if (threadIdx.x < GPUEXT_SCAN_COUNTERS)
		counts[threadIdx.x] = 0;
}

/*
 * The keys pass on the device: image put in the table (by one lane of the
 * lanes of a warp holding it), listed if new; 0 where the table is full.  A
 * slot is claimed, written, then marked full; a lane meeting a slot being
 * written waits for it (independent thread scheduling, sm_70 on).
 */
__device__ int group_insert(const GpuextScanProgram *p, char *outs, const uint64_t image[GPUEXT_SCAN_KEY_WORDS],
							unsigned long long *counts)
{
	uint32_t   *states = gpuext_scan_slot_states(p, outs);
	volatile uint64_t *images = gpuext_scan_slot_images(p, outs);
	uint32_t	s = gpuext_scan_key_hash(image, p->table_cap);

	for (uint32_t probe = 0; probe < p->table_cap; probe++, s = (s + 1) & (p->table_cap - 1))
	{
		uint32_t	st = reinterpret_cast<volatile uint32_t *>(states)[s];

		if (st == GPUEXT_SCAN_SLOT_EMPTY)
		{
			st = atomicCAS(&states[s], GPUEXT_SCAN_SLOT_EMPTY, GPUEXT_SCAN_SLOT_BUSY);
			if (st == GPUEXT_SCAN_SLOT_EMPTY)
			{
				unsigned long long n;

				for (int w = 0; w < GPUEXT_SCAN_KEY_WORDS; w++)
					images[(size_t) GPUEXT_SCAN_KEY_WORDS * s + w] = image[w];
				__threadfence();
				atomicExch(&states[s], GPUEXT_SCAN_SLOT_FULL);
				n = atomicAdd(&counts[GPUEXT_SCAN_NEW_GROUPS], 1ULL);
				gpuext_scan_group_list(p, outs, s, n, image);
				return 1;
			}
		}
		while (st == GPUEXT_SCAN_SLOT_BUSY)
			st = reinterpret_cast<volatile uint32_t *>(states)[s];
		__threadfence();
		if (gpuext_scan_slot_holds(images, s, image))
			return 1;
	}
	return 0;
}

/* Add one to counter[g] for each lane of mask, one atomic per distinct g in the warp. */
__device__ __forceinline__ void warp_count_groups(uint64_t *counter, unsigned mask, bool mine, uint32_t g)
{
	if (mine)
	{
		unsigned	peers = __match_any_sync(mask, g);

		if ((threadIdx.x & 31) == (unsigned) (__ffs(peers) - 1))
			atomicAdd(reinterpret_cast<unsigned long long *>(&counter[g]), (unsigned long long) __popc(peers));
	}
}

/* Add a warp's share of one counter (lane 0 adds the ballot's population). */
__device__ __forceinline__ void warp_count(unsigned long long *counter, bool mine)
{
	unsigned	mask = __ballot_sync(FULL_MASK, mine);

	if ((threadIdx.x & 31) == 0 && mask != 0)
		atomicAdd(counter, (unsigned long long) __popc(mask));
}

/* Decode each page's visible tuples and emit what the program says. */
__global__ void __launch_bounds__(SCAN_THREADS)
scan_pages_kernel(GpuextScanProgram program, const char *pages, const uint16_t *vis, uint32_t npages,
				  unsigned long long *counts, char *outs)
{
	__shared__ GpuextScanProgram p;
	const unsigned lane = threadIdx.x & 31;

	for (unsigned i = threadIdx.x; i < sizeof(GpuextScanProgram) / 4; i += blockDim.x)
		reinterpret_cast<uint32_t *>(&p)[i] = reinterpret_cast<const uint32_t *>(&program)[i];
	__syncthreads();
	for (uint32_t pg = blockIdx.x; pg < npages; pg += gridDim.x)
	{
		const unsigned char *page = reinterpret_cast<const unsigned char *>(pages) +
			(size_t) pg * GPUEXT_SCAN_PAGE_BYTES;
		const uint16_t *v = vis + (size_t) pg * GPUEXT_SCAN_VIS_SLOTS;
		int			all;
		unsigned	n = gpuext_scan_items(page, v, &all);

		/* every lane of a warp goes round the same number of times, for the ballots */
		for (unsigned base = 0; base < n; base += blockDim.x)
		{
			unsigned	i = base + threadIdx.x;
			GpuextScanRow row;
			int			r = 0;
			bool		pass;
			bool		err;

			uint64_t	image[GPUEXT_SCAN_KEY_WORDS] = {0};
			uint32_t	group = 0;
			bool		keyed = true;
			bool		missed = false;

			if (i < n)
				r = gpuext_scan_decode(&p, page, all ? i + 1 : v[i + 1], &row);
			pass = r > 0 && gpuext_scan_cmps(&p, &row, 0, p.nquals);
			if (p.nkeys > 0)
			{
				keyed = !pass || gpuext_scan_key_image(&p, page, &row, image);
				pass = pass && keyed;
				if (p.pass == GPUEXT_SCAN_PASS_KEYS)
				{
					unsigned	m = __ballot_sync(FULL_MASK, pass);

					if (pass)
					{
						unsigned	peers = m;

						for (int w = 0; w < GPUEXT_SCAN_KEY_WORDS; w++)
							peers &= __match_any_sync(m, image[w]);

						if (lane == (unsigned) (__ffs(peers) - 1))
							keyed = group_insert(&p, outs, image, counts);
					}
					warp_count(&counts[GPUEXT_SCAN_BAD], r < 0 || !keyed);
					warp_count(&counts[GPUEXT_SCAN_DECODED], r > 0);
					continue;
				}
				missed = pass && (group = gpuext_scan_group_find(&p, outs, image)) == GPUEXT_SCAN_NO_GROUP;
				pass = pass && !missed;
			}
			err = pass && (p.nregs > 0 || p.nnregs > 0 || row.nans != 0) && gpuext_scan_compute(&p, &row);
			pass = pass && !err;
			if (p.nkeys > 0)
				warp_count(&counts[GPUEXT_SCAN_MISSES], missed);
			warp_count(&counts[GPUEXT_SCAN_BAD], r < 0 || !keyed);
			warp_count(&counts[GPUEXT_SCAN_DECODED], r > 0);
			warp_count(&counts[GPUEXT_SCAN_ERRORS], err);
			warp_count(&counts[GPUEXT_SCAN_PASSED], pass);
			if (p.nkeys > 0)
				warp_count_groups(gpuext_scan_group_counts(&p, outs, 0), __ballot_sync(FULL_MASK, pass), pass,
								  group);
			for (int o = 0; o < p.nouts; o++)
			{
				bool		takes = pass && gpuext_scan_out_takes(&p, &row, o);
				unsigned	mask = __ballot_sync(FULL_MASK, takes);
				unsigned long long first = 0;

				if (mask == 0)
					continue;
				if (p.nkeys > 0 && p.outs[o].value_bytes == 0)
					warp_count_groups(gpuext_scan_group_counts(&p, outs, 0) + (size_t) p.outs[o].counter * p.table_cap,
									  mask, takes, group);
				if (lane == 0)
					first = atomicAdd(&counts[GPUEXT_SCAN_OUT_COUNT + o], (unsigned long long) __popc(mask));
				first = __shfl_sync(FULL_MASK, first, 0);
				if (takes)
				{
					uint64_t	at = first + __popc(mask & ((1u << lane) - 1));

					if (p.outs[o].value_bytes > 0 && at < p.out_cap)
					{
						gpuext_scan_out_put(&p, &row, o, outs, at);
						if (p.nkeys > 0)
							reinterpret_cast<uint32_t *>(outs + p.outs[o].groups_offset)[at] = group;
					}
				}
			}
		}
	}
}

/*
 * One block a page (grid-stride): each thread moves 16-byte pieces, read
 * over the bus from the pinned copy or the buffer pool (all of a page taken
 * whole), loads first.
 */
__global__ void gather_pages_kernel(uint4 *pages, const uint4 *copies, const uint32_t *refs, const uint4 *pool,
									uint32_t pool_blocks, uint32_t npages)
{
	constexpr unsigned PIECES = GPUEXT_SCAN_PAGE_BYTES / sizeof(uint4);
	constexpr unsigned PER_THREAD = PIECES / GATHER_THREADS;

	for (uint32_t pg = blockIdx.x; pg < npages; pg += gridDim.x)
	{
		const uint4 *copy = copies + (size_t) pg * PIECES;
		uint4	   *dst = pages + (size_t) pg * PIECES;
		uint32_t	ref = refs[pg];
		uint32_t	block = ref & ~GPUEXT_SCAN_WHOLE;
		const uint4 *live = ref != GPUEXT_SCAN_COPIED && pool != nullptr && block < pool_blocks ?
			pool + (size_t) block * PIECES : nullptr;
		unsigned	lower = ref == GPUEXT_SCAN_COPIED ? GPUEXT_SCAN_PAGE_BYTES :
			(ref & GPUEXT_SCAN_WHOLE) ? 0 : gpuext_scan_copy_lower(reinterpret_cast<const char *>(copy));
		uint4		v[PER_THREAD];

		for (unsigned k = 0; k < PER_THREAD; k++)
		{
			unsigned	at = threadIdx.x + k * GATHER_THREADS;
			unsigned	from = at * sizeof(uint4);

			if (ref != GPUEXT_SCAN_COPIED && live == nullptr)
				v[k] = make_uint4(0, 0, 0, 0);
			else if (from + sizeof(uint4) <= lower)
				v[k] = copy[at];
			else if (from >= lower)
				v[k] = live[at];
			else
			{
				/* the piece holding pd_lower: its bytes below from the copy */
				uint4		a = copy[at],
							b = live[at];
				unsigned char *va = reinterpret_cast<unsigned char *>(&a);
				const unsigned char *vb = reinterpret_cast<const unsigned char *>(&b);

				for (unsigned j = lower - from; j < sizeof(uint4); j++)
					va[j] = vb[j];
				v[k] = a;
			}
		}
		for (unsigned k = 0; k < PER_THREAD; k++)
			dst[threadIdx.x + k * GATHER_THREADS] = v[k];
	}
}

}								/* namespace */

}								/* namespace gpuext */

/* Enqueue the gathering of a batch's pages from its pinned copies and the buffer pool. */
GpuextStatus gpuext_scan_gather_pages(char *pages, const char *copies, const uint32_t *refs, const char *pool,
									  uint32_t pool_blocks, uint32_t npages)
{
	void	   *copies_view = nullptr;
	void	   *refs_view = nullptr;
	GpuextStatus st;

	if (!gpuext::device_is_open())
		return gpuext::set_error(GPUEXT_NO_DEVICE, "the GPU device has not been opened");
	if (npages == 0)
		return GPUEXT_OK;
	if (pages == nullptr || copies == nullptr || refs == nullptr)
		return gpuext::set_error(GPUEXT_INVALID, "invalid page gathering buffers");
	st = gpuext::check_cuda(cudaHostGetDevicePointer(&copies_view, const_cast<char *>(copies), 0),
							"cudaHostGetDevicePointer of the batch's copies");
	if (st == GPUEXT_OK)
		st = gpuext::check_cuda(cudaHostGetDevicePointer(&refs_view, const_cast<uint32_t *>(refs), 0),
								"cudaHostGetDevicePointer of the batch's buffer indexes");
	if (st != GPUEXT_OK)
		return st;
	gpuext::gather_pages_kernel<<<npages < gpuext::MAX_SCAN_BLOCKS ? npages : gpuext::MAX_SCAN_BLOCKS,
		gpuext::GATHER_THREADS, 0, gpuext::device_stream()>>>(reinterpret_cast<uint4 *>(pages),
															   static_cast<const uint4 *>(copies_view),
															   static_cast<const uint32_t *>(refs_view),
															   reinterpret_cast<const uint4 *>(pool), pool_blocks,
															   npages);
	return gpuext::check_launch("gather_pages_kernel");
}

/* Check the program, then enqueue the clearing of the counters and the scan. */
GpuextStatus gpuext_scan_heap(const GpuextScanProgram *program, const char *pages, const uint16_t *vis,
							  uint32_t npages, uint64_t *counts, char *outs, size_t outs_bytes)
{
	static_assert(sizeof(GpuextScanProgram) % 4 == 0, "the program is copied in words");
	static_assert(GPUEXT_SCAN_COUNTERS <= gpuext::SCAN_THREADS, "one thread clears each counter");
	GpuextStatus status = GPUEXT_OK;

	if (!gpuext::device_is_open())
		return gpuext::set_error(GPUEXT_NO_DEVICE, "the GPU device has not been opened");
	if (program == nullptr || counts == nullptr || (npages > 0 && (pages == nullptr || vis == nullptr)) ||
		!gpuext_scan_program_valid(program, outs_bytes) || (program->nouts > 0 && outs == nullptr))
		return gpuext::set_error(GPUEXT_INVALID, "invalid device scan program or buffers");
	gpuext::scan_clear_kernel<<<1, gpuext::SCAN_THREADS, 0, gpuext::device_stream()>>>(
		reinterpret_cast<unsigned long long *>(counts));
	if (program->nkeys > 0 && program->pass == GPUEXT_SCAN_PASS_KEYS && program->clear_table)
		status = gpuext::check_cuda(cudaMemsetAsync(outs + program->table_offset, 0,
													sizeof(uint32_t) * program->table_cap, gpuext::device_stream()),
									"cudaMemsetAsync of the table of groups");
	if (status == GPUEXT_OK && program->nkeys > 0 && program->pass == GPUEXT_SCAN_PASS_KEYS &&
		program->clear_table && program->number_groups)
		status = gpuext::check_cuda(cudaMemsetAsync(outs + program->map_offset, 0xFF,
													sizeof(uint32_t) * program->table_cap, gpuext::device_stream()),
									"cudaMemsetAsync of the groups' map");
	if (status == GPUEXT_OK && program->nkeys > 0 &&
		program->pass == (program->number_groups ? GPUEXT_SCAN_PASS_KEYS : GPUEXT_SCAN_PASS_VALUES) &&
		(program->clear_table || !program->number_groups))
		status = gpuext::check_cuda(cudaMemsetAsync(outs + program->counts_offset, 0,
													sizeof(uint64_t) * program->ncounters * program->table_cap,
													gpuext::device_stream()),
									"cudaMemsetAsync of the per-group counts");
	if (status != GPUEXT_OK)
		return status;
	if (npages == 0)
		return gpuext::check_launch("scan_clear_kernel");
	gpuext::scan_pages_kernel<<<npages < gpuext::MAX_SCAN_BLOCKS ? npages : gpuext::MAX_SCAN_BLOCKS,
		gpuext::SCAN_THREADS, 0, gpuext::device_stream()>>>(*program, pages, vis, npages,
															  reinterpret_cast<unsigned long long *>(counts),
															  outs);
	return gpuext::check_launch("scan_pages_kernel");
}
