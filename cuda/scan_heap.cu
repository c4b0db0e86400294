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

/* Zero the batch's counters. */
__global__ void scan_clear_kernel(unsigned long long *counts)
{
	if (threadIdx.x < GPUEXT_SCAN_COUNTERS)
		counts[threadIdx.x] = 0;
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

			if (i < n)
				r = gpuext_scan_decode(&p, page, all ? i + 1 : v[i + 1], &row);
			pass = r > 0 && gpuext_scan_cmps(&p, &row, 0, p.nquals);
			err = pass && p.nregs > 0 && gpuext_scan_compute(&p, &row);
			pass = pass && !err;
			warp_count(&counts[GPUEXT_SCAN_BAD], r < 0);
			warp_count(&counts[GPUEXT_SCAN_DECODED], r > 0);
			warp_count(&counts[GPUEXT_SCAN_ERRORS], err);
			warp_count(&counts[GPUEXT_SCAN_PASSED], pass);
			for (int o = 0; o < p.nouts; o++)
			{
				bool		takes = pass && gpuext_scan_out_takes(&p, &row, o);
				unsigned	mask = __ballot_sync(FULL_MASK, takes);
				unsigned long long first = 0;

				if (mask == 0)
					continue;
				if (lane == 0)
					first = atomicAdd(&counts[GPUEXT_SCAN_OUT_COUNT + o], (unsigned long long) __popc(mask));
				first = __shfl_sync(FULL_MASK, first, 0);
				if (takes)
				{
					uint64_t	at = first + __popc(mask & ((1u << lane) - 1));

					if (p.outs[o].value_bytes > 0 && at < p.out_cap)
						gpuext_scan_out_put(&p, &row, o, outs, at);
				}
			}
		}
	}
}

}								/* namespace */

}								/* namespace gpuext */

/* Check the program, then enqueue the clearing of the counters and the scan. */
GpuextStatus gpuext_scan_heap(const GpuextScanProgram *program, const char *pages, const uint16_t *vis,
							  uint32_t npages, uint64_t *counts, char *outs, size_t outs_bytes)
{
	static_assert(sizeof(GpuextScanProgram) % 4 == 0, "the program is copied in words");
	static_assert(GPUEXT_SCAN_COUNTERS <= gpuext::SCAN_THREADS, "one thread clears each counter");

	if (!gpuext::device_is_open())
		return gpuext::set_error(GPUEXT_NO_DEVICE, "the GPU device has not been opened");
	if (program == nullptr || counts == nullptr || (npages > 0 && (pages == nullptr || vis == nullptr)) ||
		!gpuext_scan_program_valid(program, outs_bytes) || (program->nouts > 0 && outs == nullptr))
		return gpuext::set_error(GPUEXT_INVALID, "invalid device scan program or buffers");
	gpuext::scan_clear_kernel<<<1, gpuext::SCAN_THREADS, 0, gpuext::device_stream()>>>(
		reinterpret_cast<unsigned long long *>(counts));
	if (npages == 0)
		return gpuext::check_launch("scan_clear_kernel");
	gpuext::scan_pages_kernel<<<npages < gpuext::MAX_SCAN_BLOCKS ? npages : gpuext::MAX_SCAN_BLOCKS,
		gpuext::SCAN_THREADS, 0, gpuext::device_stream()>>>(*program, pages, vis, npages,
															  reinterpret_cast<unsigned long long *>(counts),
															  outs);
	return gpuext::check_launch("scan_pages_kernel");
}
