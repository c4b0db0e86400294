/*
 * matmul.cu
 *		gpuext_matmul (gpuext_cuda.h): C = A B for float and double, by three
 *		kernels from one template each, explicitly instantiated per type.
 *
 * naive	one thread an element of C, its row of A and column of B read from
 *			global memory: two loads per multiply-add (the seeds' 1:1 ratio).
 * tiled	the seeds' TILE_WIDTH = 16 version: a block stages a 16 x 16 tile
 *			of A and of B in shared memory, each element read by 16 threads.
 * blocked	a block computes a 128 x 128 tile of C, 8 x 8 elements a thread in
 *			registers, from 8-deep slices of A and B staged in double-buffered
 *			shared memory with 16-byte loads.
 *
 * Every kernel computes an element as the CPU does (cuda/matmul_cpu.c): +0,
 * then fma(A[i][kk], B[kk][j], acc) for kk = 0 .. k-1 in turn, written as
 * explicit fmaf/fma so that no contraction or reordering decides the bits;
 * a k tail shorter than a tile is cut off by the loop bound, never padded
 * with zeros (fma(0, 0, -0) is +0).  A NaN is stored as the default NaN.
 */
#include <climits>
#include <cstdint>
#include <cstring>

#include "device_internal.cuh"

namespace gpuext
{

namespace
{

/* What the kernels need to know of an element type: its fma, its vector of 16 bytes, its default NaN. */
template <typename T>
struct MatmulType;

template <>
struct MatmulType<float>
{
	using Vec = float4;
	static constexpr int VEC = 4;
	__device__ static float fma(float a, float b, float c) { return fmaf(a, b, c); }
	__device__ static float qnan() { return __int_as_float(0x7fc00000); }
};

template <>
struct MatmulType<double>
{
	using Vec = double2;
	static constexpr int VEC = 2;
	__device__ static double fma(double a, double b, double c) { return ::fma(a, b, c); }
	__device__ static double qnan() { return __longlong_as_double(0x7ff8000000000000LL); }
};

/* The element as stored: a NaN becomes the default NaN, as on the CPU. */
template <typename T>
__device__ __forceinline__ T stored(T x)
{
	return isnan(x) ? MatmulType<T>::qnan() : x;
}

/* Side of the naive kernel's blocks and of the tiled kernel's tiles (the seeds' TILE_WIDTH). */
constexpr int TILE = 16;

/* One thread an element: the textbook kernel, operands straight from global memory. */
template <typename T>
__global__ void matmul_naive_kernel(const T *__restrict__ a, const T *__restrict__ b, T *__restrict__ c,
									int m, int k, int n, int tiles_n)
{
	const int	i = (blockIdx.x / tiles_n) * TILE + threadIdx.y;
	const int	j = (blockIdx.x % tiles_n) * TILE + threadIdx.x;
	T			acc = 0;

	if (i >= m || j >= n)
		return;
	for (int kk = 0; kk < k; kk++)
		acc = MatmulType<T>::fma(a[(size_t) i * k + kk], b[(size_t) kk * n + j], acc);
	c[(size_t) i * n + j] = stored(acc);
}

/* Seed 001's tiles: each thread loads one element of A's and of B's tile, then 16 multiply-adds from shared memory. */
template <typename T>
__global__ void matmul_tiled_kernel(const T *__restrict__ a, const T *__restrict__ b, T *__restrict__ c,
									int m, int k, int n, int tiles_n)
{
	__shared__ T as[TILE][TILE];
	__shared__ T bs[TILE][TILE];
	const int	ty = threadIdx.y;
	const int	tx = threadIdx.x;
	const int	i = (blockIdx.x / tiles_n) * TILE + ty;
	const int	j = (blockIdx.x % tiles_n) * TILE + tx;
	T			acc = 0;

	for (int k0 = 0; k0 < k; k0 += TILE)
	{
		as[ty][tx] = i < m && k0 + tx < k ? a[(size_t) i * k + k0 + tx] : T(0);
		bs[ty][tx] = k0 + ty < k && j < n ? b[(size_t) (k0 + ty) * n + j] : T(0);
		__syncthreads();
		if (k - k0 >= TILE)
		{
#pragma unroll
			for (int kk = 0; kk < TILE; kk++)
				acc = MatmulType<T>::fma(as[ty][kk], bs[kk][tx], acc);
		}
		else
		{
			for (int kk = 0; kk < k - k0; kk++)
				acc = MatmulType<T>::fma(as[ty][kk], bs[kk][tx], acc);
		}
		__syncthreads();
	}
	if (i < m && j < n)
		c[(size_t) i * n + j] = stored(acc);
}

/*
 * The register-blocked kernel's shape: a BM x BN tile of C a block, BK of k
 * a step, TM x TN elements a thread as four (TM/2) x (TN/2) quarters half a
 * tile apart, so that a warp's shared-memory reads of a step are 16-byte
 * loads without bank conflicts.
 */
constexpr int BM = 128;
constexpr int BN = 128;
constexpr int BK = 8;
constexpr int TM = 8;
constexpr int TN = 8;
constexpr int BLOCKED_THREADS = (BM / TM) * (BN / TN);
/* Tiles of C along m that consecutive blocks take before moving along n (L2 reuse of B). */
constexpr int GROUP_M = 8;

/* Shared memory of the blocked kernel: two buffers of A's slice (k-major, padded) and B's. */
template <typename T>
struct BlockedSmem
{
	static constexpr int APAD = MatmulType<T>::VEC;
	T			as[2][BK][BM + APAD];
	T			bs[2][BK][BN];
};

/* Load VEC elements of row r from column col of a rows x cols matrix, zeros past its edges. */
template <typename T>
__device__ __forceinline__ void load_vec(const T *__restrict__ p, int rows, int cols, int r, int col,
										 bool vec_ok, T (&v)[MatmulType<T>::VEC])
{
	constexpr int VEC = MatmulType<T>::VEC;

	if (vec_ok && r < rows && col + VEC <= cols)
	{
		typename MatmulType<T>::Vec x = *reinterpret_cast<const typename MatmulType<T>::Vec *>(
			p + (size_t) r * cols + col);

		memcpy(v, &x, sizeof(x));
		return;
	}
#pragma unroll
	for (int e = 0; e < VEC; e++)
		v[e] = r < rows && col + e < cols ? p[(size_t) r * cols + col + e] : T(0);
}

/*
 * BM x BN of C a block, TM x TN a thread.  Step s multiplies shared buffer
 * s % 2 while the next slices of A and B wait in registers, then stores them
 * in the other buffer: one barrier a step.  vec_a and vec_b say whether A's
 * and B's rows allow 16-byte loads (k, resp. n, a multiple of VEC).
 */
template <typename T>
__global__ void __launch_bounds__(BLOCKED_THREADS, sizeof(T) == 4 ? 2 : 1)
matmul_blocked_kernel(const T *__restrict__ a, const T *__restrict__ b, T *__restrict__ c,
					  int m, int k, int n, int tiles_m, int tiles_n, bool vec_a, bool vec_b)
{
	constexpr int VEC = MatmulType<T>::VEC;
	constexpr int A_LOADS = BM * BK / VEC / BLOCKED_THREADS;
	constexpr int B_LOADS = BK * BN / VEC / BLOCKED_THREADS;
	using Vec = typename MatmulType<T>::Vec;
	__shared__ BlockedSmem<T> sm;
	const int	tid = threadIdx.x;
	const int	tx = tid % (BN / TN);
	const int	ty = tid / (BN / TN);
	/* Grouped order of the tiles: GROUP_M tiles down, then the next column of tiles. */
	const int	in_group = GROUP_M * tiles_n;
	const int	first_m = (int) (blockIdx.x / in_group) * GROUP_M;
	const int	group_m = min(tiles_m - first_m, GROUP_M);
	const int	row0 = (first_m + (int) (blockIdx.x % in_group) % group_m) * BM;
	const int	col0 = ((int) (blockIdx.x % in_group) / group_m) * BN;
	T			acc[TM][TN];
	T			a_next[A_LOADS][VEC];
	T			b_next[B_LOADS][VEC];

#pragma unroll
	for (int r = 0; r < TM; r++)
#pragma unroll
		for (int s = 0; s < TN; s++)
			acc[r][s] = T(0);

	/* Slices of A (BM x BK) and B (BK x BN) at k0 into registers, zeros past the edges. */
	auto load_slices = [&](int k0) {
#pragma unroll
		for (int l = 0; l < A_LOADS; l++)
		{
			const int	v = tid + l * BLOCKED_THREADS;

			load_vec(a, m, k, row0 + v / (BK / VEC), k0 + v % (BK / VEC) * VEC, vec_a, a_next[l]);
		}
#pragma unroll
		for (int l = 0; l < B_LOADS; l++)
		{
			const int	v = tid + l * BLOCKED_THREADS;

			load_vec(b, k, n, k0 + v / (BN / VEC), col0 + v % (BN / VEC) * VEC, vec_b, b_next[l]);
		}
	};
	/* The slices in registers into shared buffer buf: A transposed to k-major. */
	auto store_slices = [&](int buf) {
#pragma unroll
		for (int l = 0; l < A_LOADS; l++)
		{
			const int	v = tid + l * BLOCKED_THREADS;

#pragma unroll
			for (int e = 0; e < VEC; e++)
				sm.as[buf][v % (BK / VEC) * VEC + e][v / (BK / VEC)] = a_next[l][e];
		}
#pragma unroll
		for (int l = 0; l < B_LOADS; l++)
		{
			const int	v = tid + l * BLOCKED_THREADS;
			Vec			x;

			memcpy(&x, b_next[l], sizeof(x));
			*reinterpret_cast<Vec *>(&sm.bs[buf][v / (BN / VEC)][v % (BN / VEC) * VEC]) = x;
		}
	};
	/* One kk of buffer buf: this thread's TM values of A and TN of B, then TM x TN multiply-adds. */
	auto step = [&](int buf, int kk) {
		T			af[TM];
		T			bf[TN];

#pragma unroll
		for (int h = 0; h < 2; h++)
#pragma unroll
			for (int q = 0; q < TM / 2; q += VEC)
			{
				Vec			x = *reinterpret_cast<const Vec *>(&sm.as[buf][kk][h * (BM / 2) + ty * (TM / 2) + q]);

				memcpy(&af[h * (TM / 2) + q], &x, sizeof(x));
			}
#pragma unroll
		for (int h = 0; h < 2; h++)
#pragma unroll
			for (int q = 0; q < TN / 2; q += VEC)
			{
				Vec			x = *reinterpret_cast<const Vec *>(&sm.bs[buf][kk][h * (BN / 2) + tx * (TN / 2) + q]);

				memcpy(&bf[h * (TN / 2) + q], &x, sizeof(x));
			}
#pragma unroll
		for (int r = 0; r < TM; r++)
#pragma unroll
			for (int s = 0; s < TN; s++)
				acc[r][s] = MatmulType<T>::fma(af[r], bf[s], acc[r][s]);
	};

	load_slices(0);
	store_slices(0);
	__syncthreads();
	for (int k0 = 0, buf = 0; k0 < k; k0 += BK, buf ^= 1)
	{
		const bool	more = k - k0 > BK;

		if (more)
			load_slices(k0 + BK);
		if (k - k0 >= BK)
		{
#pragma unroll
			for (int kk = 0; kk < BK; kk++)
				step(buf, kk);
		}
		else
		{
			for (int kk = 0; kk < k - k0; kk++)
				step(buf, kk);
		}
		if (more)
			store_slices(buf ^ 1);
		__syncthreads();
	}

	/* Store the four quarters, 16 bytes at a time where the row allows it. */
#pragma unroll
	for (int r = 0; r < TM; r++)
	{
		const int	i = row0 + (r / (TM / 2)) * (BM / 2) + ty * (TM / 2) + r % (TM / 2);

		if (i >= m)
			continue;
#pragma unroll
		for (int s = 0; s < TN; s += VEC)
		{
			const int	j = col0 + (s / (TN / 2)) * (BN / 2) + tx * (TN / 2) + s % (TN / 2);
			T			out[VEC];

#pragma unroll
			for (int e = 0; e < VEC; e++)
				out[e] = stored(acc[r][s + e]);
			if (vec_b && j + VEC <= n)
			{
				Vec			x;

				memcpy(&x, out, sizeof(x));
				*reinterpret_cast<Vec *>(&c[(size_t) i * n + j]) = x;
			}
			else
			{
#pragma unroll
				for (int e = 0; e < VEC; e++)
					if (j + e < n)
						c[(size_t) i * n + j + e] = out[e];
			}
		}
	}
}

/* Tiles of size t along a dimension of d elements. */
inline long long tiles_of(size_t d, int t)
{
	return (long long) ((d + t - 1) / t);
}

/* Launch one algorithm's kernel for element type T on the stream. */
template <typename T>
GpuextStatus matmul_typed(GpuextMatmulAlgo algo, const T *a, const T *b, T *c, int m, int k, int n)
{
	cudaStream_t stream = device_stream();
	const int	vec = MatmulType<T>::VEC;

	if (algo == GPUEXT_MATMUL_BLOCKED)
	{
		long long	tm = tiles_of(m, BM),
					tn = tiles_of(n, BN);

		if (tm * tn > INT_MAX)
			return set_error(GPUEXT_INVALID, "matrix product of %d x %d needs more than 2^31 blocks", m, n);
		matmul_blocked_kernel<T><<<(unsigned) (tm * tn), BLOCKED_THREADS, 0, stream>>>(
			a, b, c, m, k, n, (int) tm, (int) tn, k % vec == 0, n % vec == 0);
		return check_launch("matmul_blocked_kernel");
	}
	else
	{
		long long	tm = tiles_of(m, TILE),
					tn = tiles_of(n, TILE);
		dim3		block(TILE, TILE);

		if (tm * tn > INT_MAX)
			return set_error(GPUEXT_INVALID, "matrix product of %d x %d needs more than 2^31 blocks", m, n);
		if (algo == GPUEXT_MATMUL_TILED)
		{
			matmul_tiled_kernel<T><<<(unsigned) (tm * tn), block, 0, stream>>>(a, b, c, m, k, n, (int) tn);
			return check_launch("matmul_tiled_kernel");
		}
		matmul_naive_kernel<T><<<(unsigned) (tm * tn), block, 0, stream>>>(a, b, c, m, k, n, (int) tn);
		return check_launch("matmul_naive_kernel");
	}
}

template GpuextStatus matmul_typed<float>(GpuextMatmulAlgo, const float *, const float *, float *, int, int, int);
template GpuextStatus matmul_typed<double>(GpuextMatmulAlgo, const double *, const double *, double *, int, int,
										   int);

}								/* namespace */

}								/* namespace gpuext */

/* Check the arguments, then enqueue the product on the stream; no wait. */
GpuextStatus gpuext_matmul(GpuextMatmulAlgo algo, int elem_bytes, const void *a, const void *b, void *c, size_t m,
						   size_t k, size_t n)
{
	if (!gpuext::device_is_open())
		return gpuext::set_error(GPUEXT_NO_DEVICE, "the GPU device has not been opened");
	if (elem_bytes != 4 && elem_bytes != 8)
		return gpuext::set_error(GPUEXT_INVALID, "matrix elements must be 4 or 8 bytes wide, got %d", elem_bytes);
	if (algo != GPUEXT_MATMUL_NAIVE && algo != GPUEXT_MATMUL_TILED && algo != GPUEXT_MATMUL_BLOCKED)
		return gpuext::set_error(GPUEXT_INVALID, "unknown matrix product algorithm %d", (int) algo);
	if (m > INT_MAX || k > INT_MAX || n > INT_MAX)
		return gpuext::set_error(GPUEXT_INVALID, "matrix dimensions %zu x %zu x %zu pass 2^31 - 1", m, k, n);
	if (m == 0 || n == 0)
		return GPUEXT_OK;
	if ((k > 0 && (a == nullptr || b == nullptr)) || c == nullptr ||
		(reinterpret_cast<uintptr_t>(a) | reinterpret_cast<uintptr_t>(b) | reinterpret_cast<uintptr_t>(c)) % 16 != 0)
		return gpuext::set_error(GPUEXT_INVALID, "matrix product: operands must be 16-byte aligned device pointers");
	if (elem_bytes == 4)
		return gpuext::matmul_typed(algo, static_cast<const float *>(a), static_cast<const float *>(b),
									static_cast<float *>(c), (int) m, (int) k, (int) n);
	return gpuext::matmul_typed(algo, static_cast<const double *>(a), static_cast<const double *>(b),
								static_cast<double *>(c), (int) m, (int) k, (int) n);
}
