/*
 * device_internal.cuh
 *		What the device files share with device.cu: the process stream, error
 *		reporting into gpuext_cuda_error_message(), and the polling wait; and
 *		the 128-bit reduction reduce.cu hands 16-byte values to.
 */
#ifndef GPUEXT_DEVICE_INTERNAL_CUH
#define GPUEXT_DEVICE_INTERNAL_CUH

#include <cuda_runtime.h>

#include "gpuext_cuda.h"

namespace gpuext
{

/* True once gpuext_cuda_open has succeeded in this process. */
bool device_is_open();

/* The process-wide non-blocking stream every call enqueues on. */
cudaStream_t device_stream();

/* Shared memory one block may opt in to on the open device, in bytes. */
size_t device_smem_optin();

/* True when the open device launches thread block clusters (compute capability 9.0 and up). */
bool device_has_clusters();

/* Store a printf-style message for gpuext_cuda_error_message() and return status. */
GpuextStatus set_error(GpuextStatus status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* GPUEXT_OK for cudaSuccess, else record "what: <CUDA message>" and return GPUEXT_CUDA_ERROR
 * (GPUEXT_OUT_OF_MEMORY, or GPUEXT_DEVICE_LOST for errors that leave the context unusable). */
GpuextStatus check_cuda(cudaError_t err, const char *what);

/* Check cudaGetLastError() after a kernel launch named what. */
GpuextStatus check_launch(const char *what);

/* Wait for everything enqueued on the stream so far, polling poll between queries. */
GpuextStatus stream_wait(GpuextPollFn poll, void *arg);

/* gpuext_reduce of 16-byte (128-bit fixed-point) values: cuda/reduce_fixed.cu. */
GpuextStatus reduce_i128_scratch_bytes(size_t n, size_t *bytes);
GpuextStatus reduce_i128(const void *values, size_t n, void *scratch, size_t scratch_bytes,
						 GpuextReduceResult *result);

}								/* namespace gpuext */

#endif							/* GPUEXT_DEVICE_INTERNAL_CUH */
