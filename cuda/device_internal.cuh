/*
 * device_internal.cuh
 *		What the sort files share with device.cu: the process stream, error
 *		reporting into gpuext_cuda_error_message(), and the polling wait.
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

}								/* namespace gpuext */

#endif							/* GPUEXT_DEVICE_INTERNAL_CUH */
