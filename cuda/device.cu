/*
 * device.cu
 *		Device session: open, memory, copies, events and the polling wait.
 *
 * One process opens device 0 once and enqueues everything on one
 * non-blocking stream.  Nothing here blocks in a CUDA synchronize call:
 * waits poll the stream or an event and give the caller's callback a chance
 * to abandon the wait.
 */
#include <cstdarg>
#include <cstdio>
#include <ctime>

#include "device_internal.cuh"

namespace
{

/* The wait loop queries back to back for WAIT_SPIN_NS, then sleeps WAIT_SLEEP_NS between polls. */
constexpr long WAIT_SPIN_NS = 100 * 1000;
constexpr long WAIT_SLEEP_NS = 30 * 1000;

char error_message[1024] = "no error";
bool device_open = false;
cudaStream_t stream = nullptr;
cudaEvent_t events[GPUEXT_CUDA_EVENTS];
size_t smem_optin = 48 * 1024;
bool clusters = false;

/* The standard complaint for calls made before a successful open. */
GpuextStatus not_open()
{
	return gpuext::set_error(GPUEXT_NO_DEVICE, "the GPU device has not been opened");
}

/* Drop whatever the failed open managed to create. */
void destroy_stream_and_events()
{
	for (int i = 0; i < GPUEXT_CUDA_EVENTS; i++)
	{
		if (events[i] != nullptr)
			cudaEventDestroy(events[i]);
		events[i] = nullptr;
	}
	if (stream != nullptr)
		cudaStreamDestroy(stream);
	stream = nullptr;
	cudaGetLastError();
}

/* Nanoseconds on the monotonic clock. */
long long monotonic_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long) ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Read the device limits the sorts choose their kernels by. */
GpuextStatus device_limits()
{
	int			optin = 0;
	int			cluster = 0;
	GpuextStatus st;

	st = gpuext::check_cuda(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0),
							"cudaDeviceGetAttribute(shared memory)");
	if (st == GPUEXT_OK)
		st = gpuext::check_cuda(cudaDeviceGetAttribute(&cluster, cudaDevAttrClusterLaunch, 0),
								"cudaDeviceGetAttribute(cluster launch)");
	smem_optin = (size_t) optin;
	clusters = cluster != 0;
	return st;
}

/* Poll an event (or the stream when ev is null) until done, error or interrupt. */
GpuextStatus wait_for(cudaEvent_t ev, GpuextPollFn poll, void *arg)
{
	const long long spin_until = monotonic_ns() + WAIT_SPIN_NS;

	for (;;)
	{
		cudaError_t err = ev != nullptr ? cudaEventQuery(ev) : cudaStreamQuery(stream);

		if (err == cudaSuccess)
			return GPUEXT_OK;
		if (err != cudaErrorNotReady)
			return gpuext::check_cuda(err, ev != nullptr ? "cudaEventQuery" : "cudaStreamQuery");
		if (cudaPeekAtLastError() == cudaErrorNotReady)
			cudaGetLastError();
		if (poll != nullptr && poll(arg) != 0)
			return gpuext::set_error(GPUEXT_INTERRUPTED, "wait for the GPU was interrupted");
		if (monotonic_ns() >= spin_until)
		{
			struct timespec ts = {0, WAIT_SLEEP_NS};

			nanosleep(&ts, nullptr);
		}
	}
}

}								/* namespace */

namespace gpuext
{

/* True once gpuext_cuda_open has succeeded. */
bool device_is_open()
{
	return device_open;
}

/* The process stream. */
cudaStream_t device_stream()
{
	return stream;
}

/* The open device's opt-in shared memory per block. */
size_t device_smem_optin()
{
	return smem_optin;
}

/* Whether the open device launches clusters. */
bool device_has_clusters()
{
	return clusters;
}

/* Record a formatted message and hand back the status. */
GpuextStatus set_error(GpuextStatus status, const char *fmt, ...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(error_message, sizeof(error_message), fmt, ap);
	va_end(ap);
	return status;
}

/* Status of a failed CUDA call: errors after which the context cannot be used again are a lost device. */
static GpuextStatus status_of(cudaError_t err)
{
	switch (err)
	{
		case cudaErrorMemoryAllocation:
			return GPUEXT_OUT_OF_MEMORY;
		case cudaErrorIllegalAddress:
		case cudaErrorLaunchFailure:
		case cudaErrorIllegalInstruction:
		case cudaErrorMisalignedAddress:
		case cudaErrorInvalidAddressSpace:
		case cudaErrorInvalidPc:
		case cudaErrorHardwareStackError:
		case cudaErrorECCUncorrectable:
		case cudaErrorContextIsDestroyed:
		case cudaErrorDevicesUnavailable:
			return GPUEXT_DEVICE_LOST;
		default:
			return GPUEXT_CUDA_ERROR;
	}
}

/* Turn a CUDA error into a status (status_of) with "what: <CUDA message>". */
GpuextStatus check_cuda(cudaError_t err, const char *what)
{
	if (err == cudaSuccess)
		return GPUEXT_OK;
	/* Clear the non-sticky last error so later launch checks do not see it. */
	cudaGetLastError();
	return set_error(status_of(err), "%s: %s", what, cudaGetErrorString(err));
}

/* Check the launch that just happened. */
GpuextStatus check_launch(const char *what)
{
	cudaError_t err = cudaGetLastError();

	if (err == cudaSuccess)
		return GPUEXT_OK;
	return set_error(status_of(err), "launch of %s: %s", what, cudaGetErrorString(err));
}

/* Wait for the whole stream, polling. */
GpuextStatus stream_wait(GpuextPollFn poll, void *arg)
{
	return wait_for(nullptr, poll, arg);
}

}								/* namespace gpuext */

/* This build has device code. */
int gpuext_cuda_built(void)
{
	return 1;
}

/* Message for the last failure. */
const char *gpuext_cuda_error_message(void)
{
	return error_message;
}

/* Open device 0: context, stream, events, and a description of the device. */
GpuextStatus gpuext_cuda_open(GpuextDeviceInfo *info)
{
	int			count = 0;
	cudaError_t err;
	cudaDeviceProp prop;
	GpuextStatus st;

	if (!device_open)
	{
		err = cudaGetDeviceCount(&count);
		if (err != cudaSuccess)
		{
			int			driver = 0;
			int			runtime = 0;

			cudaGetLastError();
			cudaDriverGetVersion(&driver);
			cudaRuntimeGetVersion(&runtime);
			if (driver == 0)
				return gpuext::set_error(GPUEXT_NO_DEVICE, "no NVIDIA driver is installed");
			if (err == cudaErrorInsufficientDriver)
				return gpuext::set_error(GPUEXT_NO_DEVICE,
										 "the NVIDIA driver supports CUDA %d.%d, this build needs %d.%d",
										 driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
			return gpuext::set_error(GPUEXT_NO_DEVICE, "cudaGetDeviceCount: %s", cudaGetErrorString(err));
		}
		if (count == 0)
			return gpuext::set_error(GPUEXT_NO_DEVICE, "cudaGetDeviceCount: no CUDA device found");
		err = cudaSetDevice(0);
		if (err == cudaSuccess)
			err = cudaFree(nullptr);
		if (err != cudaSuccess)
		{
			cudaGetLastError();
			return gpuext::set_error(GPUEXT_NO_DEVICE, "creating a context on device 0: %s",
									 cudaGetErrorString(err));
		}
		st = gpuext::check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
								"cudaStreamCreateWithFlags");
		for (int i = 0; i < GPUEXT_CUDA_EVENTS && st == GPUEXT_OK; i++)
			st = gpuext::check_cuda(cudaEventCreateWithFlags(&events[i], cudaEventDisableTiming),
									"cudaEventCreateWithFlags");
		if (st == GPUEXT_OK)
			st = device_limits();
		if (st != GPUEXT_OK)
		{
			destroy_stream_and_events();
			return st;
		}
		device_open = true;
	}

	if (info == nullptr)
		return GPUEXT_OK;
	*info = GpuextDeviceInfo();
	st = gpuext::check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
	if (st == GPUEXT_OK)
		st = gpuext::check_cuda(cudaMemGetInfo(&info->memory_free, &info->memory_total), "cudaMemGetInfo");
	if (st == GPUEXT_OK)
		st = gpuext::check_cuda(cudaDriverGetVersion(&info->driver_version), "cudaDriverGetVersion");
	if (st == GPUEXT_OK)
		st = gpuext::check_cuda(cudaRuntimeGetVersion(&info->runtime_version), "cudaRuntimeGetVersion");
	if (st != GPUEXT_OK)
		return st;
	snprintf(info->name, sizeof(info->name), "%s", prop.name);
	info->cc_major = prop.major;
	info->cc_minor = prop.minor;
	info->multiprocessors = prop.multiProcessorCount;
	return GPUEXT_OK;
}

/* Destroy the primary context with everything in it; the stream and events went with it. */
GpuextStatus gpuext_cuda_reset(void)
{
	if (!device_open)
		return GPUEXT_OK;
	device_open = false;
	stream = nullptr;
	for (int i = 0; i < GPUEXT_CUDA_EVENTS; i++)
		events[i] = nullptr;
	return gpuext::check_cuda(cudaDeviceReset(), "cudaDeviceReset");
}

/* Free and total device memory now. */
GpuextStatus gpuext_cuda_mem_info(size_t *free_bytes, size_t *total_bytes)
{
	size_t		f = 0,
				t = 0;
	GpuextStatus st;

	if (!device_open)
		return not_open();
	st = gpuext::check_cuda(cudaMemGetInfo(&f, &t), "cudaMemGetInfo");
	if (st != GPUEXT_OK)
		return st;
	if (free_bytes != nullptr)
		*free_bytes = f;
	if (total_bytes != nullptr)
		*total_bytes = t;
	return GPUEXT_OK;
}

/* Device allocation; zero bytes still yields a distinct non-null pointer. */
GpuextStatus gpuext_cuda_alloc(void **dptr, size_t bytes)
{
	cudaError_t err;

	if (dptr == nullptr)
		return gpuext::set_error(GPUEXT_INVALID, "gpuext_cuda_alloc: null result pointer");
	*dptr = nullptr;
	if (!device_open)
		return not_open();
	err = cudaMalloc(dptr, bytes > 0 ? bytes : 1);
	if (err == cudaSuccess)
		return GPUEXT_OK;
	*dptr = nullptr;
	cudaGetLastError();
	return gpuext::set_error(err == cudaErrorMemoryAllocation ? GPUEXT_OUT_OF_MEMORY : GPUEXT_CUDA_ERROR,
							 "cudaMalloc of %zu bytes: %s", bytes, cudaGetErrorString(err));
}

/* Release device memory; errors cannot be reported here and are cleared. */
void gpuext_cuda_free(void *dptr)
{
	if (!device_open || dptr == nullptr)
		return;
	if (cudaFree(dptr) != cudaSuccess)
		cudaGetLastError();
}

/* Page-locked host allocation, needed for asynchronous copies. */
GpuextStatus gpuext_cuda_alloc_pinned(void **hptr, size_t bytes)
{
	cudaError_t err;

	if (hptr == nullptr)
		return gpuext::set_error(GPUEXT_INVALID, "gpuext_cuda_alloc_pinned: null result pointer");
	*hptr = nullptr;
	if (!device_open)
		return not_open();
	err = cudaHostAlloc(hptr, bytes > 0 ? bytes : 1, cudaHostAllocDefault);
	if (err == cudaSuccess)
		return GPUEXT_OK;
	*hptr = nullptr;
	cudaGetLastError();
	return gpuext::set_error(err == cudaErrorMemoryAllocation ? GPUEXT_OUT_OF_MEMORY : GPUEXT_CUDA_ERROR,
							 "cudaHostAlloc of %zu bytes: %s", bytes, cudaGetErrorString(err));
}

/* Release page-locked host memory. */
void gpuext_cuda_free_pinned(void *hptr)
{
	if (!device_open || hptr == nullptr)
		return;
	if (cudaFreeHost(hptr) != cudaSuccess)
		cudaGetLastError();
}

/* Enqueue a copy on the stream after checking its arguments. */
static GpuextStatus copy_async(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
							   const char *what)
{
	char		label[96];

	if (!device_open)
		return not_open();
	if (bytes == 0)
		return GPUEXT_OK;
	if (dst == nullptr || src == nullptr)
		return gpuext::set_error(GPUEXT_INVALID, "%s: null pointer", what);
	snprintf(label, sizeof(label), "%s of %zu bytes", what, bytes);
	return gpuext::check_cuda(cudaMemcpyAsync(dst, src, bytes, kind, stream), label);
}

/* Host (pinned) to device, asynchronous. */
GpuextStatus gpuext_cuda_copy_to_device(void *dst, const void *src, size_t bytes)
{
	return copy_async(dst, src, bytes, cudaMemcpyHostToDevice, "copy to device");
}

/* Device to host (pinned), asynchronous. */
GpuextStatus gpuext_cuda_copy_to_host(void *dst, const void *src, size_t bytes)
{
	return copy_async(dst, src, bytes, cudaMemcpyDeviceToHost, "copy to host");
}

/* Record an event slot at the current end of the stream. */
GpuextStatus gpuext_cuda_mark(int slot)
{
	if (!device_open)
		return not_open();
	if (slot < 0 || slot >= GPUEXT_CUDA_EVENTS)
		return gpuext::set_error(GPUEXT_INVALID, "event slot %d is out of range 0..%d", slot,
								 GPUEXT_CUDA_EVENTS - 1);
	return gpuext::check_cuda(cudaEventRecord(events[slot], stream), "cudaEventRecord");
}

/* Wait for an event slot, or the whole stream when slot < 0, polling the callback. */
GpuextStatus gpuext_cuda_wait(int slot, GpuextPollFn poll, void *arg)
{
	if (!device_open)
		return not_open();
	if (slot >= GPUEXT_CUDA_EVENTS)
		return gpuext::set_error(GPUEXT_INVALID, "event slot %d is out of range 0..%d", slot,
								 GPUEXT_CUDA_EVENTS - 1);
	return wait_for(slot < 0 ? nullptr : events[slot], poll, arg);
}
