/*
 * service_process.c
 *		The GPU service process: the only CUDA contexts of the server.
 *
 * Forked by the supervisor, it leaves PostgreSQL's shared memory before it
 * touches a device and from then on calls nothing of PostgreSQL's: only
 * libc, pthreads and gpuext_cuda.h.  The main thread opens the devices,
 * pins the arena and starts one thread per client slot that asks; each
 * thread serves its slot's requests in order on its own streams.  Device
 * memory is admitted under one limit per device and placed on the least
 * busy device with room; every pointer a client passes is checked against
 * what it holds, so a bad request fails alone instead of the service.
 */
#include "postgres.h"

#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "scan_heap.h"
#include "service.h"

/* A device allocation a client holds. */
typedef struct ClientBuffer
{
	char	   *ptr;
	size_t		bytes;
} ClientBuffer;

/* The service's own view of one slot. */
typedef struct Client
{
	ServiceSlot *slot;
	int			index;
	int			device;			/* index into hdr->devices, -1 while it holds nothing */
	ClientBuffer *buffers;
	int			nbuffers;
	int			maxbuffers;
	size_t		held;
} Client;

const char *gpuext_service_pool = NULL;
uint32		gpuext_service_pool_blocks = 0;

static ServiceHeader *hdr;
static uint32 my_generation;
static const char *pool_view = NULL;	/* the devices' address of gpuext_service_pool, once registered */
static int	notify_fd;
static Client *clients;
static pthread_mutex_t admit_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t admit_cond;
static pthread_mutex_t notify_lock = PTHREAD_MUTEX_INITIALIZER;

/* Nanoseconds on the monotonic clock. */
static uint64
NowNs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * A message of the service's own for the server's log: it goes down the
 * pipe, and the supervisor reports it as its own messages are reported.
 */
static void
Log(const char *fmt,...) pg_attribute_printf(1, 2);

static void
Log(const char *fmt,...)
{
	int32		buf[1 + (SERVICE_LOG_MAX + 3) / 4];
	va_list		ap;
	int			len;

	va_start(ap, fmt);
	len = vsnprintf((char *) &buf[1], SERVICE_LOG_MAX + 1, fmt, ap);
	va_end(ap);
	len = Min(Max(len, 0), SERVICE_LOG_MAX);
	buf[0] = -len;
	pthread_mutex_lock(&notify_lock);
	if (write(notify_fd, buf, sizeof(int32) + TYPEALIGN(4, len)) < 0)
		_exit(0);				/* the supervisor is gone */
	pthread_mutex_unlock(&notify_lock);
}

/* The limit of device d (ServiceDeviceLimit). */
static uint64
DeviceLimit(int d)
{
	return ServiceDeviceLimit(hdr, d);
}

/* Least busy device with room for bytes and a client more (fewest clients, then least memory used), or -1. */
static int
PickDevice(size_t bytes)
{
	int			best = -1;

	for (int d = 0; d < hdr->ndevices; d++)
	{
		ServiceDevice *dev = &hdr->devices[d];
		uint64		used = pg_atomic_read_u64(&dev->used);

		if (used + bytes > DeviceLimit(d) ||
			pg_atomic_read_u32(&dev->sessions) >= (uint32) Max(hdr->device_clients, 1))
			continue;
		if (best < 0 ||
			pg_atomic_read_u32(&dev->sessions) < pg_atomic_read_u32(&hdr->devices[best].sessions) ||
			(pg_atomic_read_u32(&dev->sessions) == pg_atomic_read_u32(&hdr->devices[best].sessions) &&
			 used < pg_atomic_read_u64(&hdr->devices[best].used)))
			best = d;
	}
	return best;
}

/* Record a message for the client and hand back the status. */
static GpuextStatus
Fail(Client *c, GpuextStatus st, const char *fmt,...) pg_attribute_printf(3, 4);

static GpuextStatus
Fail(Client *c, GpuextStatus st, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(c->slot->message, SERVICE_MESSAGE, fmt, ap);
	va_end(ap);
	return st;
}

/*
 * Admission: reserve bytes on the client's device (placing it first if it
 * holds nothing, once fewer than gpuext.device_clients hold memory there),
 * waiting up to wait_ms (-1: until cancelled) for others to free memory or
 * leave, a cancel ending the wait.
 */
static GpuextStatus
Admit(Client *c, size_t bytes, int wait_ms)
{
	uint64		deadline = NowNs() + (uint64) Max(wait_ms, 0) * 1000000;
	bool		waited = false;
	GpuextStatus st = GPUEXT_OK;

	pthread_mutex_lock(&admit_lock);
	for (;;)
	{
		int			d = c->device >= 0 ? c->device : PickDevice(bytes);
		struct timespec ts;

		if (d >= 0 && pg_atomic_read_u64(&hdr->devices[d].used) + bytes <= DeviceLimit(d))
		{
			uint64		used = pg_atomic_add_fetch_u64(&hdr->devices[d].used, bytes);

			if (used > pg_atomic_read_u64(&hdr->devices[d].peak))
				pg_atomic_write_u64(&hdr->devices[d].peak, used);
			if (c->device < 0)
			{
				c->device = d;
				pg_atomic_fetch_add_u32(&hdr->devices[d].sessions, 1);
			}
			break;
		}
		if (pg_atomic_read_u32(&c->slot->cancel))
		{
			st = Fail(c, GPUEXT_INTERRUPTED, "waiting for device memory was cancelled");
			break;
		}
		if (bytes > (c->device >= 0 ? DeviceLimit(c->device) : DeviceLimit(0)) ||
			(wait_ms >= 0 && NowNs() >= deadline))
		{
			pg_atomic_fetch_add_u64(&hdr->devices[c->device >= 0 ? c->device : 0].refusals, 1);
			st = Fail(c, GPUEXT_OUT_OF_MEMORY,
					  "no device had room for %zu bytes (gpuext.device_memory_limit) or a client more "
					  "(gpuext.device_clients) within gpuext.service_wait", bytes);
			break;
		}
		if (!waited)
		{
			pg_atomic_fetch_add_u64(&hdr->devices[c->device >= 0 ? c->device : 0].waits, 1);
			pg_atomic_fetch_add_u32(&hdr->queued, 1);
			waited = true;
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += 10 * 1000000;
		if (ts.tv_nsec >= 1000000000)
		{
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&admit_cond, &admit_lock, &ts);
	}
	if (waited)
		pg_atomic_fetch_sub_u32(&hdr->queued, 1);
	pthread_mutex_unlock(&admit_lock);
	return st;
}

/* Give back bytes of the client's reservation; with nothing left it leaves its device. */
static void
Release(Client *c, size_t bytes)
{
	pthread_mutex_lock(&admit_lock);
	pg_atomic_fetch_sub_u64(&hdr->devices[c->device].used, bytes);
	if (c->nbuffers == 0)
	{
		pg_atomic_fetch_sub_u32(&hdr->devices[c->device].sessions, 1);
		c->device = -1;
	}
	pthread_cond_broadcast(&admit_cond);
	pthread_mutex_unlock(&admit_lock);
	c->slot->device = c->device;
	c->slot->device_bytes = c->held;
}

/* Whether [ptr, ptr + bytes) lies in one of the client's buffers (nothing to check for 0 bytes). */
static bool
Holds(Client *c, uint64 ptr, uint64 bytes)
{
	if (bytes == 0)
		return true;
	for (int i = 0; i < c->nbuffers; i++)
	{
		uint64		p = (uint64) (uintptr_t) c->buffers[i].ptr;

		if (ptr >= p && bytes <= c->buffers[i].bytes && ptr - p <= c->buffers[i].bytes - bytes)
			return true;
	}
	return false;
}

/* a * b, or UINT64_MAX when it overflows (then no buffer holds it). */
static uint64
Mul(uint64 a, uint64 b)
{
	uint64		r;

	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* Poll callback of the device waits: the client asked to cancel. */
static int
CancelPoll(void *arg)
{
	return pg_atomic_read_u32(&((Client *) arg)->slot->cancel) != 0;
}

/* Allocate device memory for the client: admitted, placed, recorded. */
static GpuextStatus
DoAlloc(Client *c, size_t bytes, int wait_ms)
{
	void	   *ptr = NULL;
	GpuextStatus st;

	bytes = Max(bytes, 1);
	if ((st = Admit(c, bytes, wait_ms)) != GPUEXT_OK)
		return st;
	st = gpuext_cuda_use_device(hdr->devices[c->device].ordinal);
	if (st == GPUEXT_OK)
		st = gpuext_cuda_alloc(&ptr, bytes);
	if (st == GPUEXT_OK && c->nbuffers == c->maxbuffers)
	{
		int			n = Max(c->maxbuffers * 2, 16);
		ClientBuffer *grown = realloc(c->buffers, sizeof(ClientBuffer) * n);

		if (grown == NULL)
		{
			gpuext_cuda_free(ptr);
			st = Fail(c, GPUEXT_OUT_OF_MEMORY, "out of host memory in the GPU service");
		}
		else
		{
			c->buffers = grown;
			c->maxbuffers = n;
		}
	}
	if (st != GPUEXT_OK)
	{
		Release(c, bytes);
		return st;
	}
	c->buffers[c->nbuffers].ptr = ptr;
	c->buffers[c->nbuffers].bytes = bytes;
	c->nbuffers++;
	c->held += bytes;
	c->slot->device = c->device;
	c->slot->device_bytes = c->held;
	c->slot->out[0] = (uint64) (uintptr_t) ptr;
	return GPUEXT_OK;
}

/* Free buffer i of the client. */
static void
FreeBuffer(Client *c, int i)
{
	size_t		bytes = c->buffers[i].bytes;

	gpuext_cuda_use_device(hdr->devices[c->device].ordinal);
	gpuext_cuda_free(c->buffers[i].ptr);
	c->buffers[i] = c->buffers[--c->nbuffers];
	c->held -= bytes;
	Release(c, bytes);
}

/* Free everything the client holds, once its stream is idle (reset, close, or its backend died). */
static void
FreeAll(Client *c)
{
	if (c->nbuffers == 0)
		return;
	gpuext_cuda_use_device(hdr->devices[c->device].ordinal);
	gpuext_cuda_wait(-1, NULL, NULL);
	while (c->nbuffers > 0)
		FreeBuffer(c, c->nbuffers - 1);
}

static GpuextStatus ExecuteList(Client *c);

/* Run one request of the client's: op with arguments a. */
static GpuextStatus
Execute(Client *c, int op, const uint64 *a)
{
	ServiceSlot *s = c->slot;
	int			d = c->device >= 0 ? c->device : 0;
	GpuextStatus st;

	switch ((ServiceOp) op)
	{
		case SOP_OPEN:
			s->info = hdr->devices[0].info;
			s->out[0] = hdr->ndevices;
			return GPUEXT_OK;
		case SOP_RESET:
		case SOP_CLOSE:
			FreeAll(c);
			return GPUEXT_OK;
		case SOP_ALLOC:
			return DoAlloc(c, a[0], (int) (int64) a[1]);
		case SOP_FREE:
			for (int i = 0; i < c->nbuffers; i++)
				if ((uint64) (uintptr_t) c->buffers[i].ptr == a[0])
				{
					FreeBuffer(c, i);
					return GPUEXT_OK;
				}
			return Fail(c, GPUEXT_INVALID, "free of a pointer this client does not hold");
		case SOP_DRAIN:
			if (c->device < 0)
				return GPUEXT_OK;
			if ((st = gpuext_cuda_use_device(hdr->devices[c->device].ordinal)) != GPUEXT_OK)
				return st;
			return gpuext_cuda_wait(-1, NULL, NULL);
		case SOP_MEM_INFO:
			s->out[1] = DeviceLimit(d);
			s->out[0] = s->out[1] - Min(s->out[1], pg_atomic_read_u64(&hdr->devices[d].used));
			return GPUEXT_OK;
		case SOP_LIST:
			return ExecuteList(c);
		default:
			break;
	}

	/* Everything else runs on the client's device (device 0 until it holds memory). */
	if ((st = gpuext_cuda_use_device(hdr->devices[d].ordinal)) != GPUEXT_OK)
		return st;
	switch ((ServiceOp) op)
	{
		case SOP_COPY_TO_DEVICE:
			if (!Holds(c, a[0], a[2]) || !GpuextInArena((void *) (uintptr_t) a[1], a[2]))
				return Fail(c, GPUEXT_INVALID, "copy to device outside the client's buffers or the arena");
			pg_atomic_fetch_add_u64(&hdr->devices[d].bytes_to_device, a[2]);
			return gpuext_cuda_copy_to_device((void *) (uintptr_t) a[0], (void *) (uintptr_t) a[1], a[2]);
		case SOP_COPY_TO_HOST:
			if (!Holds(c, a[1], a[2]) || !GpuextInArena((void *) (uintptr_t) a[0], a[2]))
				return Fail(c, GPUEXT_INVALID, "copy to host outside the client's buffers or the arena");
			pg_atomic_fetch_add_u64(&hdr->devices[d].bytes_to_host, a[2]);
			return gpuext_cuda_copy_to_host((void *) (uintptr_t) a[0], (void *) (uintptr_t) a[1], a[2]);
		case SOP_COPY_ON_DEVICE:
			if (!Holds(c, a[0], a[2]) || !Holds(c, a[1], a[2]))
				return Fail(c, GPUEXT_INVALID, "copy on device outside the client's buffers");
			return gpuext_cuda_copy_on_device((void *) (uintptr_t) a[0], (void *) (uintptr_t) a[1], a[2]);
		case SOP_MARK:
			return gpuext_cuda_mark((int) a[0]);
		case SOP_WAIT:
			return gpuext_cuda_wait((int) (int64) a[0], CancelPoll, c);
		case SOP_SORT_SCRATCH:
			{
				size_t		bytes = 0,
							host_bytes = 0;

				st = gpuext_sort_scratch_bytes((GpuextSortAlgo) a[0], (int) a[1], a[2], &bytes, &host_bytes);
				s->out[0] = bytes;
				s->out[1] = host_bytes;
				return st;
			}
		case SOP_SORT_KEYS:
			if (!Holds(c, a[2], Mul(a[3], a[1])) || !Holds(c, a[4], a[5]) ||
				(a[7] > 0 && !GpuextInArena((void *) (uintptr_t) a[6], a[7])))
				return Fail(c, GPUEXT_INVALID, "sort of keys outside the client's buffers");
			return gpuext_sort_keys((GpuextSortAlgo) a[0], (int) a[1], (void *) (uintptr_t) a[2], a[3],
									(void *) (uintptr_t) a[4], a[5], (void *) (uintptr_t) a[6], a[7],
									CancelPoll, c);
		case SOP_SORT_ROWS_SCRATCH:
			{
				size_t		bytes = 0;

				st = gpuext_sort_rows_scratch_bytes((int) a[0], a[1], &bytes);
				s->out[0] = bytes;
				return st;
			}
		case SOP_SORT_ROWS:
			if (!Holds(c, a[2], Mul(Mul(a[5], a[0]), 8)) || !Holds(c, a[3], Mul(a[5], 4)) ||
				(a[4] != 0 && !Holds(c, a[4], Mul(Mul(a[5], a[0]), 8))) || !Holds(c, a[6], a[7]))
				return Fail(c, GPUEXT_INVALID, "sort of rows outside the client's buffers");
			return gpuext_sort_rows((int) a[0], (int) a[1], (const uint64_t *) (uintptr_t) a[2],
									(uint32_t *) (uintptr_t) a[3], (uint64_t *) (uintptr_t) a[4], a[5],
									(void *) (uintptr_t) a[6], a[7], CancelPoll, c);
		case SOP_GATHER_ROWS_SCRATCH:
			{
				size_t		bytes = 0;

				st = gpuext_gather_rows_scratch_bytes(a[0], &bytes);
				s->out[0] = bytes;
				return st;
			}
		case SOP_GATHER_ROWS:
			/* The device checks each row's offsets against rows_bytes: the buffers named are all it touches */
			if (a[5] > a[4] || !Holds(c, a[0], a[1]) || !Holds(c, a[2], Mul(a[4] + 1, 8)) ||
				!Holds(c, a[3], Mul(a[4], 4)) || !Holds(c, a[7], a[8]) || !Holds(c, a[9], a[10]))
				return Fail(c, GPUEXT_INVALID, "gather of rows outside the client's buffers");
			return gpuext_gather_rows((const char *) (uintptr_t) a[0], a[1], (const uint64_t *) (uintptr_t) a[2],
									  (const uint32_t *) (uintptr_t) a[3], a[4], a[5], (int) a[6],
									  (char *) (uintptr_t) a[7], a[8], (void *) (uintptr_t) a[9], a[10]);
		case SOP_REDUCE_SCRATCH:
			{
				size_t		bytes = 0;

				st = gpuext_reduce_scratch_bytes((int) a[0], (int) a[1], a[2], &bytes);
				s->out[0] = bytes;
				return st;
			}
		case SOP_REDUCE:
			if (!Holds(c, a[2], Mul(a[3], a[0])) || !Holds(c, a[4], a[5]) ||
				!GpuextInArena((void *) (uintptr_t) a[6], sizeof(GpuextReduceResult)))
				return Fail(c, GPUEXT_INVALID, "reduction outside the client's buffers");
			return gpuext_reduce((int) a[0], (int) a[1], (const void *) (uintptr_t) a[2], a[3],
								 (void *) (uintptr_t) a[4], a[5], (GpuextReduceResult *) (uintptr_t) a[6]);
		case SOP_GROUPS_CLEAR:
			if (a[2] > UINT32_MAX || a[3] > UINT32_MAX ||
				!Holds(c, a[1], Mul(a[2] + a[3], GPUEXT_GROUP_STATE_BYTES(a[0] != 0))))
				return Fail(c, GPUEXT_INVALID, "clear of group states outside the client's buffers");
			return gpuext_groups_clear((int) a[0], (void *) (uintptr_t) a[1], (uint32_t) a[2], (uint32_t) a[3]);
		case SOP_GROUPS_ADD:
			if (a[6] > UINT32_MAX || !Holds(c, a[2], Mul(a[4], a[0])) || !Holds(c, a[3], Mul(a[4], 4)) ||
				(a[4] > 0 && !Holds(c, a[5], Mul(a[6], GPUEXT_GROUP_STATE_BYTES(a[1] != 0)))))
				return Fail(c, GPUEXT_INVALID, "grouped reduction outside the client's buffers");
			return gpuext_groups_add((int) a[0], (int) a[1], (const void *) (uintptr_t) a[2],
									 (const uint32_t *) (uintptr_t) a[3], a[4], (void *) (uintptr_t) a[5],
									 (uint32_t) a[6]);
		case SOP_SCAN_HEAP:
			{
				/* a copy, so that the client cannot change the program between the check and the launch */
				GpuextScanProgram program;

				if (!GpuextInArena((void *) (uintptr_t) a[0], sizeof(GpuextScanProgram)) || a[3] > UINT32_MAX ||
					!Holds(c, a[1], Mul(a[3], GPUEXT_SCAN_PAGE_BYTES)) ||
					!Holds(c, a[2], Mul(a[3], GPUEXT_SCAN_VIS_SLOTS * sizeof(uint16_t))) ||
					!Holds(c, a[4], GPUEXT_SCAN_COUNTERS * sizeof(uint64_t)) || !Holds(c, a[5], a[6]))
					return Fail(c, GPUEXT_INVALID, "device scan outside the client's buffers");
				memcpy(&program, (const void *) (uintptr_t) a[0], sizeof(program));
				return gpuext_scan_heap(&program, (const char *) (uintptr_t) a[1], (const uint16_t *) (uintptr_t) a[2],
										(uint32_t) a[3], (uint64_t *) (uintptr_t) a[4], (char *) (uintptr_t) a[5], a[6]);
			}
		case SOP_GATHER_PAGES:
			/* the device checks each buffer index against the pool */
			if (a[3] > UINT32_MAX || !Holds(c, a[0], Mul(a[3], GPUEXT_SCAN_PAGE_BYTES)) ||
				!GpuextInArena((const void *) (uintptr_t) a[1], Mul(a[3], GPUEXT_SCAN_PAGE_BYTES)) ||
				!GpuextInArena((const void *) (uintptr_t) a[2], Mul(a[3], sizeof(uint32_t))))
				return Fail(c, GPUEXT_INVALID, "page gathering outside the client's buffers");
			if (pool_view == NULL)
				return Fail(c, GPUEXT_INVALID, "the GPU service does not read shared buffers");
			return gpuext_scan_gather_pages((char *) (uintptr_t) a[0], (const char *) (uintptr_t) a[1],
											(const uint32_t *) (uintptr_t) a[2], pool_view,
											gpuext_service_pool_blocks, (uint32_t) a[3]);
		case SOP_GROUPS_RESULT:
			if (a[3] > UINT32_MAX || !Holds(c, a[2], Mul(a[3], GPUEXT_GROUP_STATE_BYTES(a[1] != 0))) ||
				!Holds(c, a[4], Mul(a[3], sizeof(GpuextGroupResult))))
				return Fail(c, GPUEXT_INVALID, "group results outside the client's buffers");
			return gpuext_groups_result((int) a[0], (int) a[1], (void *) (uintptr_t) a[2], (uint32_t) a[3],
										(GpuextGroupResult *) (uintptr_t) a[4]);
		case SOP_MATMUL:
			if (!Holds(c, a[2], Mul(Mul(a[5], a[6]), a[1])) || !Holds(c, a[3], Mul(Mul(a[6], a[7]), a[1])) ||
				!Holds(c, a[4], Mul(Mul(a[5], a[7]), a[1])))
				return Fail(c, GPUEXT_INVALID, "matrix product outside the client's buffers");
			return gpuext_matmul((GpuextMatmulAlgo) a[0], (int) a[1], (const void *) (uintptr_t) a[2],
								 (const void *) (uintptr_t) a[3], (void *) (uintptr_t) a[4], a[5], a[6], a[7]);
		default:
			return Fail(c, GPUEXT_INVALID, "unknown request %d", op);
	}
}

/*
 * Run the slot's list in order, as its requests would have run one by one:
 * after a failure only frees and closes still run, and the first failure,
 * with its message, is the list's answer.
 */
static GpuextStatus
ExecuteList(Client *c)
{
	ServiceSlot *s = c->slot;
	int			n = s->nlist;
	GpuextStatus st = GPUEXT_OK;

	if (n < 1 || n > SERVICE_LIST_MAX)
		return Fail(c, GPUEXT_INVALID, "a list of %d requests", n);
	for (int i = 0; i < n; i++)
	{
		const ServiceEntry *e = &s->list[i];
		GpuextStatus one;

		if (st != GPUEXT_OK && !ServiceRunsAfterFailure(e->op))
			continue;
		one = e->op == SOP_LIST ? Fail(c, GPUEXT_INVALID, "a list inside a list") : Execute(c, e->op, e->arg);
		if (one != GPUEXT_OK && st == GPUEXT_OK)
		{
			st = one;
			if (s->message[0] == '\0')
				strlcpy(s->message, gpuext_cuda_error_message(), SERVICE_MESSAGE);
		}
	}
	return st;
}

/* Tell the supervisor that slot index has its answer (it sets the backend's latch). */
static void
Notify(int index)
{
	int32		msg = index;

	pthread_mutex_lock(&notify_lock);
	if (write(notify_fd, &msg, sizeof(msg)) != sizeof(msg))
		_exit(0);				/* the supervisor is gone */
	pthread_mutex_unlock(&notify_lock);
}

/* One client's thread: take its requests in order, answer each. */
static void *
ClientThread(void *arg)
{
	Client	   *c = arg;
	ServiceSlot *s = c->slot;

	for (;;)
	{
		uint32		seq = pg_atomic_read_u32(&s->seq);
		uint32		expected = SLOT_REQUEST;
		GpuextStatus st;
		uint64		start;

		if (pg_atomic_read_u32(&s->state) != SLOT_REQUEST &&
			!GpuextSpinFor(&s->state, SLOT_REQUEST, SERVICE_REQUEST_SPIN_US))
		{
			GpuextFutexWait(&s->seq, seq, 1000);
			continue;
		}
		if (!pg_atomic_compare_exchange_u32(&s->state, &expected, SLOT_RUNNING))
			continue;
		pg_read_barrier();
		start = NowNs();
		s->message[0] = '\0';
		if (s->generation != my_generation)
			st = Fail(c, GPUEXT_DEVICE_LOST, "the GPU service restarted");
		else
			st = Execute(c, s->op, s->arg);
		if (st != GPUEXT_OK && s->message[0] == '\0')
			strlcpy(s->message, gpuext_cuda_error_message(), SERVICE_MESSAGE);
		if (st == GPUEXT_DEVICE_LOST && s->generation == my_generation)
		{
			Log("device lost: %s; restarting", s->message);
			_exit(3);
		}
		if (c->device >= 0 || s->op > SOP_MEM_INFO)
		{
			int			d = c->device >= 0 ? c->device : 0;

			pg_atomic_fetch_add_u64(&hdr->devices[d].requests, s->op == SOP_LIST ? Max(s->nlist, 1) : 1);
			pg_atomic_fetch_add_u64(&hdr->devices[d].busy_ns, NowNs() - start);
		}
		s->status = st;
		pg_write_barrier();
		pg_atomic_write_u32(&s->state, SLOT_DONE);
		/* a backend still spinning sees the answer: only one asleep needs the supervisor to wake it */
		pg_memory_barrier();
		if (pg_atomic_read_u32(&s->sleeping))
			Notify(c->index);
	}
	return NULL;
}

/*
 * Open the devices gpuext.devices names (all when empty) and describe them
 * in the header; where none can be used, start_error says why.
 */
static bool
OpenDevices(void)
{
	int			count = 0;
	GpuextStatus st = gpuext_cuda_device_count(&count);

	hdr->ndevices = 0;
	if (st != GPUEXT_OK)
	{
		strlcpy(hdr->start_error, gpuext_cuda_error_message(), SERVICE_MESSAGE);
		return false;
	}
	snprintf(hdr->start_error, SERVICE_MESSAGE, "no device is visible");
	for (int i = 0; i < (hdr->ndevices_wanted > 0 ? hdr->ndevices_wanted : count); i++)
	{
		int			ordinal = hdr->ndevices_wanted > 0 ? hdr->devices_wanted[i] : i;
		ServiceDevice *dev = &hdr->devices[hdr->ndevices];

		if (ordinal < 0 || ordinal >= count)
		{
			snprintf(hdr->start_error, SERVICE_MESSAGE, "gpuext.devices names device %d, but %d are visible",
					 ordinal, count);
			Log("%s", hdr->start_error);
			continue;
		}
		if (gpuext_cuda_device_info(ordinal, &dev->info) != GPUEXT_OK ||
			gpuext_cuda_use_device(ordinal) != GPUEXT_OK)
		{
			snprintf(hdr->start_error, SERVICE_MESSAGE, "device %d: %s", ordinal, gpuext_cuda_error_message());
			Log("%s", hdr->start_error);
			continue;
		}
		dev->ordinal = ordinal;
		hdr->ndevices++;
		if (gpuext_cuda_pool_keep(DeviceLimit(hdr->ndevices - 1)) != GPUEXT_OK)
			Log("device %d keeps no memory pool: %s", ordinal, gpuext_cuda_error_message());
	}
	return hdr->ndevices > 0;
}

/*
 * Pin shared buffers (the read-only mapping the supervisor's child kept) for
 * the devices to read pages in place; backends copy pages while this runs,
 * and for good where it fails.
 */
static void
RegisterBufferPool(void)
{
	uint64		start = NowNs();
	size_t		bytes = (size_t) gpuext_service_pool_blocks * GPUEXT_SCAN_PAGE_BYTES;
	const char *view = NULL;

	if (gpuext_service_pool == NULL)
		return;
	if (gpuext_cuda_host_register_read_only(gpuext_service_pool, bytes, &view) != GPUEXT_OK)
	{
		Log("the devices do not read shared buffers in place: %s", gpuext_cuda_error_message());
		return;
	}
	pool_view = view;
	pg_write_barrier();
	pg_atomic_write_u32(&hdr->pool_generation, my_generation + 1);
	Log("shared buffers (%zu MB) pinned for the devices to read in %.0f ms", bytes >> 20,
		(NowNs() - start) / 1e6);
}

/*
 * The service's main thread: open the devices, pin the arena, then start a
 * thread for each slot that asks and refresh the devices' free memory,
 * until the supervisor goes.  Called in the forked child, detached from
 * PostgreSQL's shared memory; never returns.
 */
void
GpuextServiceProcessMain(ServiceHeader *h, int fd, uint32 generation)
{
	pthread_condattr_t attr;
	uint64		refreshed = 0;
	pid_t		supervisor = getppid();

	hdr = h;
	notify_fd = fd;
	my_generation = generation;
	prctl(PR_SET_NAME, "gpuext service");
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&admit_cond, &attr);
	for (int d = 0; d < GPUEXT_MAX_DEVICES; d++)
		memset(&hdr->devices[d], 0, sizeof(ServiceDevice));

	/* The supervisor reports why, and starts no other service until a reload */
	if (!OpenDevices())
		_exit(SERVICE_EXIT_NO_DEVICE);
	if (gpuext_cuda_use_device(hdr->devices[0].ordinal) != GPUEXT_OK ||
		gpuext_cuda_host_register(GpuextServiceArena(), hdr->arena_bytes) != GPUEXT_OK)
	{
		snprintf(hdr->start_error, SERVICE_MESSAGE, "pinning the arena: %s", gpuext_cuda_error_message());
		_exit(2);
	}
	clients = calloc(hdr->nslots, sizeof(Client));
	if (clients == NULL)
		_exit(2);
	hdr->start_error[0] = '\0';
	pg_write_barrier();
	pg_atomic_write_u32(&hdr->ready, 1);
	RegisterBufferPool();

	for (;;)
	{
		uint32		bell = pg_atomic_read_u32(&hdr->doorbell);

		for (int i = 0; i < hdr->nslots; i++)
		{
			ServiceSlot *s = &hdr->slots[i];
			pthread_t	thread;

			if (pg_atomic_read_u32(&s->state) != SLOT_REQUEST || pg_atomic_read_u32(&s->worker) == generation)
				continue;
			clients[i].slot = s;
			clients[i].index = i;
			clients[i].device = -1;
			if (pthread_create(&thread, NULL, ClientThread, &clients[i]) != 0)
			{
				Log("could not start a thread for client slot %d", i);
				continue;
			}
			pthread_detach(thread);
			pg_atomic_write_u32(&s->worker, generation);
		}
		if (getppid() != supervisor)
			_exit(0);
		if (NowNs() - refreshed > 1000000000)
		{
			for (int d = 0; d < hdr->ndevices; d++)
			{
				size_t		free_bytes = 0,
							total = 0;

				if (gpuext_cuda_use_device(hdr->devices[d].ordinal) == GPUEXT_OK &&
					gpuext_cuda_mem_info(&free_bytes, &total) == GPUEXT_OK)
					hdr->devices[d].info.memory_free = free_bytes;
			}
			refreshed = NowNs();
		}
		GpuextFutexWait(&hdr->doorbell, bell, 1000);
	}
}
