/*
 * arena_bw.cu
 *		Transfer rate through the GPU service's arena against pinned memory, in one run.
 *
 * The arena is shared anonymous memory that another process maps and the
 * service registers with cudaHostRegister; the baseline is cudaMallocHost.
 * Each side copies PIECE bytes to the device and back REPS times after a
 * warm-up, timed with CUDA events; medians in GB/s and their ratio.
 */
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#define CHECK(call) \
	do { \
		cudaError_t err_ = (call); \
		if (err_ != cudaSuccess) \
		{ \
			std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(err_)); \
			return 1; \
		} \
	} while (0)

constexpr size_t PIECE = (size_t) 64 << 20;
constexpr int REPS = 21;

/* Median GB/s of REPS copies of PIECE bytes (to the device when up, else back). */
static int median_rate(void *host, void *dev, bool up, cudaStream_t s, double *gbs)
{
	cudaEvent_t a, b;
	std::vector<float> ms;

	CHECK(cudaEventCreate(&a));
	CHECK(cudaEventCreate(&b));
	for (int i = 0; i <= REPS; i++)
	{
		float		t;

		CHECK(cudaEventRecord(a, s));
		if (up)
			CHECK(cudaMemcpyAsync(dev, host, PIECE, cudaMemcpyHostToDevice, s));
		else
			CHECK(cudaMemcpyAsync(host, dev, PIECE, cudaMemcpyDeviceToHost, s));
		CHECK(cudaEventRecord(b, s));
		CHECK(cudaEventSynchronize(b));
		CHECK(cudaEventElapsedTime(&t, a, b));
		if (i > 0)
			ms.push_back(t);
	}
	std::sort(ms.begin(), ms.end());
	*gbs = PIECE / (ms[ms.size() / 2] * 1e-3) / 1e9;
	return 0;
}

int main()
{
	void	   *arena = mmap(nullptr, PIECE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	void	   *pinned = nullptr;
	void	   *dev = nullptr;
	cudaStream_t s;
	double		r[4];
	cudaDeviceProp prop;

	if (arena == MAP_FAILED)
		return 1;
	std::memset(arena, 0x5a, PIECE);
	CHECK(cudaGetDeviceProperties(&prop, 0));
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaHostRegister(arena, PIECE, cudaHostRegisterPortable));
	CHECK(cudaMallocHost(&pinned, PIECE));
	std::memset(pinned, 0x5a, PIECE);
	CHECK(cudaMalloc(&dev, PIECE));
	if (median_rate(arena, dev, true, s, &r[0]) || median_rate(pinned, dev, true, s, &r[1]) ||
		median_rate(arena, dev, false, s, &r[2]) || median_rate(pinned, dev, false, s, &r[3]))
		return 1;
	std::printf("device: %s; %zu MB copies, median of %d\n", prop.name, PIECE >> 20, REPS);
	std::printf("direction,arena_gbs,pinned_gbs,ratio\n");
	std::printf("to device,%.2f,%.2f,%.3f\n", r[0], r[1], r[0] / r[1]);
	std::printf("to host,%.2f,%.2f,%.3f\n", r[2], r[3], r[2] / r[3]);
	return 0;
}
