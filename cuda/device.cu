/*
 * device.cu
 *		Device session: open, memory, copies, events and the polling wait.
 *
 * A backend opens device 0 once and enqueues everything on one non-blocking
 * stream; the GPU service opens every device once and gives each of its
 * threads a stream of its own on each device it uses.  Nothing here blocks
 * in a CUDA synchronize call: waits poll the stream or an event and give
 * the caller's callback a chance to abandon the wait.
 */
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <atomic>
#include <mutex>

#include "device_internal.cuh"

namespace
{

/*
 * The wait loop queries back to back for WAIT_SPIN_NS, then sleeps between
 * polls, from WAIT_SLEEP_NS doubling up to WAIT_SLEEP_MAX_NS, so that the
 * service's many waiting threads leave the CPUs to the backends.
 */
constexpr long WAIT_SPIN_NS = 100 * 1000;
constexpr long WAIT_SLEEP_NS = 20 * 1000;
constexpr long WAIT_SLEEP_MAX_NS = 200 * 1000;

/*
 * Per thread: the last error, the device it works on, and its stream and
 * events on each device it used (the GPU service runs one thread a client).
 * Per device: the context is made once, and the limits read once.
 */
thread_local char error_message[1024] = "no error";
thread_local int current_device = -1;
thread_local cudaStream_t streams[GPUEXT_MAX_DEVICES];
thread_local cudaEvent_t events[GPUEXT_MAX_DEVICES][GPUEXT_CUDA_EVENTS];
std::mutex open_lock;
bool		context_ready[GPUEXT_MAX_DEVICES];
size_t		smem_optin[GPUEXT_MAX_DEVICES];
bool		clusters[GPUEXT_MAX_DEVICES];
std::atomic<bool> pooled{false};

/* The standard complaint for calls made before a successful open. */
GpuextStatus not_open()
{
	return gpuext::set_error(GPUEXT_NO_DEVICE, "the GPU device has not been opened");
}

/* Drop the stream and events this thread made on dev (after a failed open, or a reset). */
void destroy_stream_and_events(int dev, bool destroy)
{
	for (int i = 0; i < GPUEXT_CUDA_EVENTS; i++)
	{
		if (events[dev][i] != nullptr && destroy)
			cudaEventDestroy(events[dev][i]);
		events[dev][i] = nullptr;
	}
	if (streams[dev] != nullptr && destroy)
		cudaStreamDestroy(streams[dev]);
	streams[dev] = nullptr;
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
GpuextStatus device_limits(int dev)
{
	int			optin = 0;
	int			cluster = 0;
	GpuextStatus st;

	st = gpuext::check_cuda(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev),
							"cudaDeviceGetAttribute(shared memory)");
	if (st == GPUEXT_OK)
		st = gpuext::check_cuda(cudaDeviceGetAttribute(&cluster, cudaDevAttrClusterLaunch, dev),
								"cudaDeviceGetAttribute(cluster launch)");
	smem_optin[dev] = (size_t) optin;
	clusters[dev] = cluster != 0;
	return st;
}

/* Poll an event (or the stream when ev is null) until done, error or interrupt. */
GpuextStatus wait_for(cudaEvent_t ev, GpuextPollFn poll, void *arg)
{
	const long long spin_until = monotonic_ns() + WAIT_SPIN_NS;
	long		sleep_ns = WAIT_SLEEP_NS;

	for (;;)
	{
		cudaError_t err = ev != nullptr ? cudaEventQuery(ev) : cudaStreamQuery(streams[current_device]);

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
			struct timespec ts = {0, sleep_ns};

			nanosleep(&ts, nullptr);
			sleep_ns = sleep_ns * 2 < WAIT_SLEEP_MAX_NS ? sleep_ns * 2 : WAIT_SLEEP_MAX_NS;
		}
	}
}

}								/* namespace */

namespace gpuext
{

/* True once gpuext_cuda_open has succeeded. */
bool device_is_open()
{
	return current_device >= 0 && streams[current_device] != nullptr;
}

/* The process stream. */
cudaStream_t device_stream()
{
	return streams[current_device];
}

/* The open device's opt-in shared memory per block. */
size_t device_smem_optin()
{
	return smem_optin[current_device];
}

/* Whether the open device launches clusters. */
bool device_has_clusters()
{
	return clusters[current_device];
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

/* Kernels read host memory only where it is registered. */
int gpuext_cuda_reads_host_in_place(void)
{
	return 0;
}

/* Message for the last failure. */
const char *gpuext_cuda_error_message(void)
{
	return error_message;
}

/* Why no device can be opened, when cudaGetDeviceCount fails. */
static GpuextStatus count_failure(cudaError_t err)
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

/* Visible devices (at most GPUEXT_MAX_DEVICES). */
GpuextStatus gpuext_cuda_device_count(int *count)
{
	cudaError_t err;

	*count = 0;
	err = cudaGetDeviceCount(count);
	if (err != cudaSuccess)
	{
		*count = 0;
		return count_failure(err);
	}
	if (*count == 0)
		return gpuext::set_error(GPUEXT_NO_DEVICE, "cudaGetDeviceCount: no CUDA device found");
	if (*count > GPUEXT_MAX_DEVICES)
		*count = GPUEXT_MAX_DEVICES;
	return GPUEXT_OK;
}

/* Make dev this thread's device: its context once per process, this thread's stream and events on it once. */
GpuextStatus gpuext_cuda_use_device(int dev)
{
	int			count = 0;
	cudaError_t err;
	GpuextStatus st;

	if (dev < 0 || dev >= GPUEXT_MAX_DEVICES)
		return gpuext::set_error(GPUEXT_INVALID, "device %d is out of range", dev);
	if (dev == current_device && streams[dev] != nullptr)
		return GPUEXT_OK;
	{
		std::lock_guard<std::mutex> guard(open_lock);

		if (!context_ready[dev])
		{
			if ((st = gpuext_cuda_device_count(&count)) != GPUEXT_OK)
				return st;
			if (dev >= count)
				return gpuext::set_error(GPUEXT_NO_DEVICE, "there is no CUDA device %d (%d visible)", dev, count);
			err = cudaSetDevice(dev);
			if (err == cudaSuccess)
				err = cudaFree(nullptr);
			if (err != cudaSuccess)
			{
				cudaGetLastError();
				return gpuext::set_error(GPUEXT_NO_DEVICE, "creating a context on device %d: %s", dev,
										 cudaGetErrorString(err));
			}
			if ((st = device_limits(dev)) != GPUEXT_OK)
				return st;
			context_ready[dev] = true;
		}
	}
	if ((st = gpuext::check_cuda(cudaSetDevice(dev), "cudaSetDevice")) != GPUEXT_OK)
		return st;
	if (streams[dev] == nullptr)
	{
		st = gpuext::check_cuda(cudaStreamCreateWithFlags(&streams[dev], cudaStreamNonBlocking),
								"cudaStreamCreateWithFlags");
		for (int i = 0; i < GPUEXT_CUDA_EVENTS && st == GPUEXT_OK; i++)
			st = gpuext::check_cuda(cudaEventCreateWithFlags(&events[dev][i], cudaEventDisableTiming),
									"cudaEventCreateWithFlags");
		if (st != GPUEXT_OK)
		{
			destroy_stream_and_events(dev, true);
			return st;
		}
	}
	current_device = dev;
	return GPUEXT_OK;
}

/* Describe device dev (opened by this process). */
GpuextStatus gpuext_cuda_device_info(int dev, GpuextDeviceInfo *info)
{
	cudaDeviceProp prop;
	GpuextStatus st;
	int			prev = current_device;

	*info = GpuextDeviceInfo();
	if ((st = gpuext_cuda_use_device(dev)) != GPUEXT_OK)
		return st;
	st = gpuext::check_cuda(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
	if (st == GPUEXT_OK)
		st = gpuext::check_cuda(cudaMemGetInfo(&info->memory_free, &info->memory_total), "cudaMemGetInfo");
	if (st == GPUEXT_OK)
		st = gpuext::check_cuda(cudaDriverGetVersion(&info->driver_version), "cudaDriverGetVersion");
	if (st == GPUEXT_OK)
		st = gpuext::check_cuda(cudaRuntimeGetVersion(&info->runtime_version), "cudaRuntimeGetVersion");
	if (prev >= 0 && prev != dev && st == GPUEXT_OK)
		st = gpuext_cuda_use_device(prev);
	if (st != GPUEXT_OK)
		return st;
	snprintf(info->name, sizeof(info->name), "%s", prop.name);
	info->cc_major = prop.major;
	info->cc_minor = prop.minor;
	info->multiprocessors = prop.multiProcessorCount;
	return GPUEXT_OK;
}

/* Open device 0 for this thread and describe it (info may be NULL). */
GpuextStatus gpuext_cuda_open(GpuextDeviceInfo *info)
{
	GpuextStatus st = gpuext_cuda_use_device(0);

	if (st != GPUEXT_OK || info == nullptr)
		return st;
	return gpuext_cuda_device_info(0, info);
}

/* Destroy the current device's primary context with everything in it; the stream and events went with it. */
GpuextStatus gpuext_cuda_reset(void)
{
	int			dev = current_device;

	if (dev < 0 || streams[dev] == nullptr)
		return GPUEXT_OK;
	destroy_stream_and_events(dev, false);
	current_device = -1;
	{
		std::lock_guard<std::mutex> guard(open_lock);

		context_ready[dev] = false;
	}
	return gpuext::check_cuda(cudaDeviceReset(), "cudaDeviceReset");
}

/* Keep up to bytes of freed device memory in each device's pool; allocations become stream-ordered. */
GpuextStatus gpuext_cuda_pool_keep(size_t bytes)
{
	cudaMemPool_t pool;
	uint64_t	threshold = bytes;
	GpuextStatus st;

	if (!gpuext::device_is_open())
		return not_open();
	st = gpuext::check_cuda(cudaDeviceGetDefaultMemPool(&pool, current_device), "cudaDeviceGetDefaultMemPool");
	if (st == GPUEXT_OK)
		st = gpuext::check_cuda(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold),
								"cudaMemPoolSetAttribute");
	if (st == GPUEXT_OK)
		pooled = true;
	return st;
}

/* Pin host memory another process mapped (the GPU service's arena) for every device. */
GpuextStatus gpuext_cuda_host_register(void *ptr, size_t bytes)
{
	return gpuext::check_cuda(cudaHostRegister(ptr, bytes, cudaHostRegisterPortable | cudaHostRegisterMapped),
							  "cudaHostRegister");
}

/* Register host memory read in place by kernels, never written: its address for the devices. */
GpuextStatus gpuext_cuda_host_register_read_only(const void *ptr, size_t bytes, const char **device_view)
{
	void	   *view = nullptr;
	GpuextStatus st;

	st = gpuext::check_cuda(cudaHostRegister(const_cast<void *>(ptr), bytes,
											 cudaHostRegisterPortable | cudaHostRegisterMapped |
											 cudaHostRegisterReadOnly),
							"cudaHostRegister of shared buffers");
	if (st == GPUEXT_OK)
		st = gpuext::check_cuda(cudaHostGetDevicePointer(&view, const_cast<void *>(ptr), 0),
								"cudaHostGetDevicePointer");
	*device_view = static_cast<const char *>(view);
	return st;
}

/* Free and total device memory now. */
GpuextStatus gpuext_cuda_mem_info(size_t *free_bytes, size_t *total_bytes)
{
	size_t		f = 0,
				t = 0;
	GpuextStatus st;

	if (!gpuext::device_is_open())
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
	if (!gpuext::device_is_open())
		return not_open();
	if (pooled)
		err = cudaMallocAsync(dptr, bytes > 0 ? bytes : 1, streams[current_device]);
	else
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
	if (!gpuext::device_is_open() || dptr == nullptr)
		return;
	if ((pooled ? cudaFreeAsync(dptr, streams[current_device]) : cudaFree(dptr)) != cudaSuccess)
		cudaGetLastError();
}

/* Page-locked host allocation, needed for asynchronous copies. */
GpuextStatus gpuext_cuda_alloc_pinned(void **hptr, size_t bytes)
{
	cudaError_t err;

	if (hptr == nullptr)
		return gpuext::set_error(GPUEXT_INVALID, "gpuext_cuda_alloc_pinned: null result pointer");
	*hptr = nullptr;
	if (!gpuext::device_is_open())
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
	if (!gpuext::device_is_open() || hptr == nullptr)
		return;
	if (cudaFreeHost(hptr) != cudaSuccess)
		cudaGetLastError();
}

/* Enqueue a copy on the stream after checking its arguments. */
static GpuextStatus copy_async(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
							   const char *what)
{
	char		label[96];

	if (!gpuext::device_is_open())
		return not_open();
	if (bytes == 0)
		return GPUEXT_OK;
	if (dst == nullptr || src == nullptr)
		return gpuext::set_error(GPUEXT_INVALID, "%s: null pointer", what);
	snprintf(label, sizeof(label), "%s of %zu bytes", what, bytes);
	return gpuext::check_cuda(cudaMemcpyAsync(dst, src, bytes, kind, streams[current_device]), label);
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

/* Device to device, asynchronous. */
GpuextStatus gpuext_cuda_copy_on_device(void *dst, const void *src, size_t bytes)
{
	return copy_async(dst, src, bytes, cudaMemcpyDeviceToDevice, "copy on device");
}

/* Record an event slot at the current end of the stream. */
GpuextStatus gpuext_cuda_mark(int slot)
{
	if (!gpuext::device_is_open())
		return not_open();
	if (slot < 0 || slot >= GPUEXT_CUDA_EVENTS)
		return gpuext::set_error(GPUEXT_INVALID, "event slot %d is out of range 0..%d", slot,
								 GPUEXT_CUDA_EVENTS - 1);
	return gpuext::check_cuda(cudaEventRecord(events[current_device][slot], streams[current_device]), "cudaEventRecord");
}

/* Wait for an event slot, or the whole stream when slot < 0, polling the callback. */
GpuextStatus gpuext_cuda_wait(int slot, GpuextPollFn poll, void *arg)
{
	if (!gpuext::device_is_open())
		return not_open();
	if (slot >= GPUEXT_CUDA_EVENTS)
		return gpuext::set_error(GPUEXT_INVALID, "event slot %d is out of range 0..%d", slot,
								 GPUEXT_CUDA_EVENTS - 1);
	return wait_for(slot < 0 ? nullptr : events[current_device][slot], poll, arg);
}
