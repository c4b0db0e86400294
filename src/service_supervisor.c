/*
 * service_supervisor.c
 *		The background worker that keeps the GPU service running.
 *
 * It forks the service, which detaches from PostgreSQL's shared memory and
 * so can die (by any signal) without the postmaster restarting the server.
 * The service answers each request in the slot and writes the slot's
 * number down a pipe; the supervisor sets that backend's latch.  When the
 * service dies the supervisor answers every request in flight with a lost
 * device, bumps the generation (so that no backend uses a buffer of the
 * dead one), and starts a new service after a short pause.  Once a second
 * it frees what processes that died left in the arena and the service.
 */
#include "postgres.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/bufmgr.h"
#include "storage/dsm.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/pg_shmem.h"
#include "storage/proc.h"
#include "utils/guc.h"
#include "utils/ps_status.h"
#include "utils/timestamp.h"

#include "service.h"

static pid_t service_pid = 0;
static int	notify_fd = -1;

/* What was read from the pipe and not yet taken: the start of a log message */
static char pipe_buf[2 * (sizeof(int32) + SERVICE_LOG_MAX + 3) + 1024];
static int	pipe_len = 0;
static TimestampTz next_start = 0;
static TimestampTz last_start = 0;
static int	backoff_ms = 0;
static bool start_on_reload = false;	/* no GPU could be used: start no service until a reload */

/* SIGCHLD: the service may have died; look at once. */
static void
ChildExited(SIGNAL_ARGS)
{
	int			save_errno = errno;

	SetLatch(MyLatch);
	errno = save_errno;
}

/*
 * A second mapping of shared buffers' pages, read-only, for the service to
 * keep when it leaves the rest of PostgreSQL's shared memory: its devices
 * read table pages there in place.  Rounded out to huge pages where the
 * segment has them, else to base pages; none where neither maps.
 */
static void
KeepBufferPool(void)
{
	const size_t aligns[2] = {2 * 1024 * 1024, (size_t) sysconf(_SC_PAGESIZE)};

	gpuext_service_pool = NULL;
	if (!gpuext_service_reads_buffers)
		return;
	for (int i = 0; i < 2; i++)
	{
		uintptr_t	lo = TYPEALIGN_DOWN(aligns[i], (uintptr_t) BufferBlocks);
		uintptr_t	hi = TYPEALIGN(aligns[i], (uintptr_t) BufferBlocks + (Size) NBuffers * BLCKSZ);
		void	   *view = mremap((void *) lo, 0, hi - lo, MREMAP_MAYMOVE);

		if (view == MAP_FAILED)
			continue;
		if (mprotect(view, hi - lo, PROT_READ) != 0)
		{
			munmap(view, hi - lo);
			return;
		}
		gpuext_service_pool = (const char *) view + ((uintptr_t) BufferBlocks - lo);
		gpuext_service_pool_blocks = (uint32) NBuffers;
		return;
	}
}

/* The child's first steps: PostgreSQL's signal handlers and shared memory left behind. */
static void
LeavePostgres(void)
{
	sigset_t	all;

	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	KeepBufferPool();
	dsm_detach_all();
	PGSharedMemoryDetach();
}

/* Fork a new service for the next generation. */
static void
StartService(void)
{
	int			fds[2];
	pid_t		pid;
	pid_t		me = getpid();
	uint32		generation = pg_atomic_read_u32(&gpuext_service->generation);

	if (pipe(fds) != 0)
	{
		elog(LOG, "gpuext: could not make the GPU service's pipe: %m");
		next_start = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), 1000);
		return;
	}
	pid = fork();
	if (pid == 0)
	{
		close(fds[0]);
		init_ps_display("gpuext service");
		LeavePostgres();
		if (getppid() != me)
			_exit(0);
		GpuextServiceProcessMain(gpuext_service, fds[1], generation);
	}
	close(fds[1]);
	if (pid < 0)
	{
		close(fds[0]);
		elog(LOG, "gpuext: could not fork the GPU service: %m");
		next_start = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), 1000);
		return;
	}
	if (fcntl(fds[0], F_SETFL, O_NONBLOCK) != 0)
		elog(LOG, "gpuext: could not make the GPU service's pipe non-blocking: %m");
	notify_fd = fds[0];
	pipe_len = 0;
	service_pid = pid;
	gpuext_service->service_pid = pid;
	last_start = GetCurrentTimestamp();
	gpuext_service->started_at = last_start;
	elog(DEBUG1, "gpuext: started the GPU service (pid %d, generation %u)", (int) pid, generation);
}

/* Set the latch of the backend behind slot index. */
static void
WakeSlot(int index)
{
	ServiceSlot *slot;
	PGPROC	   *proc;

	if (index < 0 || index >= gpuext_service->nslots)
		return;
	slot = &gpuext_service->slots[index];
	proc = GetPGProcByNumber(slot->procno);
	if (slot->pid != 0 && proc->pid == slot->pid)
		SetLatch(&proc->procLatch);
}

/* Take the whole items read from the pipe: wake the slots answered, report the service's messages. */
static void
TakeNotifications(void)
{
	int			pos = 0;

	while (pipe_len - pos >= (int) sizeof(int32))
	{
		int32		item;

		memcpy(&item, pipe_buf + pos, sizeof(int32));
		if (item >= 0)
			WakeSlot(item);
		else if (pipe_len - pos < (int) sizeof(int32) + TYPEALIGN(4, -item))
			break;
		else
			ereport(LOG,
					(errmsg("gpuext service: %.*s", Min(-item, SERVICE_LOG_MAX), pipe_buf + pos + sizeof(int32))));
		pos += sizeof(int32) + (item >= 0 ? 0 : TYPEALIGN(4, -item));
	}
	memmove(pipe_buf, pipe_buf + pos, pipe_len - pos);
	pipe_len -= pos;
}

/* Read what the service wrote down the pipe and take it; false at end of file (it died). */
static bool
DrainNotifications(void)
{
	for (;;)
	{
		ssize_t		got = read(notify_fd, pipe_buf + pipe_len, sizeof(pipe_buf) - pipe_len);

		if (got == 0)
			return false;
		if (got < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
		pipe_len += got;
		TakeNotifications();
	}
}

/* The service exited: answer what it left, forget its buffers, schedule the next one. */
static void
ServiceDied(int status)
{
	ServiceHeader *hdr = gpuext_service;
	char		why[128];

	if (WIFSIGNALED(status))
		snprintf(why, sizeof(why), "killed by signal %d", WTERMSIG(status));
	else if (hdr->start_error[0] != '\0')
		snprintf(why, sizeof(why), "exit code %d: %s", WEXITSTATUS(status), hdr->start_error);
	else
		snprintf(why, sizeof(why), "exit code %d", WEXITSTATUS(status));
	strlcpy(hdr->last_exit, why, sizeof(hdr->last_exit));

	pg_atomic_write_u32(&hdr->ready, 0);
	pg_atomic_fetch_add_u32(&hdr->generation, 1);
	pg_memory_barrier();
	for (int i = 0; i < hdr->nslots; i++)
	{
		ServiceSlot *slot = &hdr->slots[i];
		uint32		state = pg_atomic_read_u32(&slot->state);

		slot->device = -1;
		slot->device_bytes = 0;
		if (state != SLOT_REQUEST && state != SLOT_RUNNING)
			continue;
		slot->status = GPUEXT_DEVICE_LOST;
		snprintf(slot->message, SERVICE_MESSAGE, "the GPU service stopped (%s)", why);
		pg_write_barrier();
		if (pg_atomic_compare_exchange_u32(&slot->state, &state, SLOT_DONE))
			WakeSlot(i);
	}
	for (int d = 0; d < GPUEXT_MAX_DEVICES; d++)
	{
		pg_atomic_write_u64(&hdr->devices[d].used, 0);
		pg_atomic_write_u32(&hdr->devices[d].sessions, 0);
	}
	pg_atomic_write_u32(&hdr->queued, 0);
	pg_atomic_fetch_add_u64(&hdr->restarts, 1);
	hdr->service_pid = 0;
	if (notify_fd >= 0)
	{
		(void) DrainNotifications();
		close(notify_fd);
	}
	notify_fd = -1;
	service_pid = 0;

	/* No GPU can be used: say so once, and try again only when the configuration is reloaded */
	if (WIFEXITED(status) && WEXITSTATUS(status) == SERVICE_EXIT_NO_DEVICE)
	{
		if (pg_atomic_exchange_u32(&hdr->no_device, 1) == 0)
			ereport(LOG,
					(errmsg("gpuext: no GPU can be used: %s", hdr->start_error),
					 errdetail("GpuSort and GpuAgg are not planned under gpuext.device = auto; "
							   "the GPU service is started again when the configuration is reloaded.")));
		start_on_reload = true;
		return;
	}
	pg_atomic_write_u32(&hdr->no_device, 0);

	/* Again at once after a long life, else after 0.5 s doubling to 30 s */
	if (TimestampDifferenceExceeds(last_start, GetCurrentTimestamp(), 60000))
		backoff_ms = 0;
	backoff_ms = backoff_ms == 0 ? 500 : Min(backoff_ms * 2, 30000);
	next_start = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), backoff_ms);
	ereport(!ShutdownRequestPending && (WIFSIGNALED(status) || WEXITSTATUS(status) != 0) ? LOG : DEBUG1,
			(errmsg("gpuext: the GPU service stopped (%s); it starts again in %d ms", why, backoff_ms)));
}

/* Whether the service exited; handles its death. */
static void
ReapService(void)
{
	int			status;

	if (service_pid == 0)
		return;
	if (waitpid(service_pid, &status, WNOHANG) == service_pid)
		ServiceDied(status);
}

/* Close a slot whose backend died without closing it: the service frees what it held. */
static void
ReclaimSlot(int index)
{
	ServiceSlot *slot = &gpuext_service->slots[index];
	uint32		state = pg_atomic_read_u32(&slot->state);

	if ((state != SLOT_IDLE && state != SLOT_DONE) ||
		!pg_atomic_compare_exchange_u32(&slot->state, &state, SLOT_FILLING))
		return;
	slot->op = SOP_CLOSE;
	slot->generation = pg_atomic_read_u32(&gpuext_service->generation);
	pg_atomic_write_u32(&slot->cancel, 0);
	pg_write_barrier();
	pg_atomic_write_u32(&slot->state, SLOT_REQUEST);
	pg_atomic_fetch_add_u32(&slot->seq, 1);
	GpuextFutexWake(&slot->seq);
	pg_atomic_fetch_add_u32(&gpuext_service->doorbell, 1);
	GpuextFutexWake(&gpuext_service->doorbell);
}

/* Free what dead processes left: arena pages, and device memory the service still holds for them. */
static void
ReclaimDead(void)
{
	GpuextArenaReclaimDead();
	for (int i = 0; i < gpuext_service->nslots; i++)
	{
		ServiceSlot *slot = &gpuext_service->slots[i];

		if (slot->pid != 0 && slot->device_bytes > 0 && kill(slot->pid, 0) < 0 && errno == ESRCH)
			ReclaimSlot(i);
	}
}

/*
 * Stop the service at shutdown: SIGTERM, then SIGKILL after 5 s; then answer
 * the requests it left, as after its death, or their backends (a statement
 * being ended, a session closing) would wait for it and hold up the shutdown.
 */
static void
StopService(void)
{
	int			status;
	bool		exited = false;

	if (service_pid == 0)
		return;
	kill(service_pid, SIGTERM);
	for (int i = 0; i < 500 && !exited; i++)
	{
		exited = waitpid(service_pid, &status, WNOHANG) == service_pid;
		if (!exited)
			pg_usleep(10000);
	}
	if (!exited)
	{
		kill(service_pid, SIGKILL);
		waitpid(service_pid, &status, 0);
	}
	ServiceDied(status);
}

/* Background worker entry point: keep the service running and relay its answers. */
void
GpuextServiceSupervisorMain(Datum arg)
{
	TimestampTz last_sweep = 0;

	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGCHLD, ChildExited);
	BackgroundWorkerUnblockSignals();
	gpuext_service->supervisor_pid = MyProcPid;
	GpuextServicePublishSettings();

	for (;;)
	{
		TimestampTz now;
		long		timeout = 1000;
		int			events = WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH;

		ResetLatch(MyLatch);
		if (ShutdownRequestPending)
			break;
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			GpuextServicePublishSettings();
			/* A GPU may be usable now (a driver installed, gpuext.devices changed) */
			if (start_on_reload)
			{
				start_on_reload = false;
				next_start = 0;
			}
		}
		if (notify_fd >= 0 && !DrainNotifications())
		{
			close(notify_fd);
			notify_fd = -1;
		}
		ReapService();
		now = GetCurrentTimestamp();
		if (service_pid == 0 && !start_on_reload && now >= next_start)
			StartService();
		if (TimestampDifferenceExceeds(last_sweep, now, 1000))
		{
			ReclaimDead();
			last_sweep = now;
		}
		if (service_pid == 0 && !start_on_reload)
			timeout = Max(Min(TimestampDifferenceMilliseconds(now, next_start), 1000), 1);
		if (notify_fd >= 0)
			events |= WL_SOCKET_READABLE;
		(void) WaitLatchOrSocket(MyLatch, events, notify_fd, timeout, PG_WAIT_EXTENSION);
	}
	StopService();
	proc_exit(0);
}
