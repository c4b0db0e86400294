/*
 * gpuagg_group.c
 *		GpuAgg's groups: each input's values, with the group numbers of their
 *		rows' keys (gpuagg_keys.c), reduced into per-group states
 *		(gpuext_groups_* of gpuext_cuda.h), and the groups' results.
 *
 * With a device the states live in device memory for the whole run; each
 * input fills one of two pinned batches of values and group numbers while
 * the other goes up and is added (event slots 2 and 3 mark the halves).
 * Without one the same states are kept in host memory and added to by the
 * same code on the CPU.  Sums are exact, so the results have the same bits
 * either way.  Under auto a device failure, or device memory found short,
 * stops the run: it starts again with every group on the CPU (nothing has
 * been returned yet).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "gpuagg.h"

/* The event slot of pinned half h is HALF_EVENT + h (0 and 1 are the staging halves'). */
#define HALF_EVENT 2

/* Values a batch holds on the CPU path. */
#define CPU_BATCH ((size_t) 1 << 16)

/* One input's per-group states, and the batch of values and group numbers on its way to them. */
typedef struct GpuAggSink
{
	GpuAggState *st;
	int			value_bytes;
	bool		is_float;
	size_t		capacity;		/* values a batch holds */
	size_t		nbatch;
	char	   *values;			/* the batch being filled */
	uint32	   *groups;
	/* device */
	GpuextBuffer *host[2];		/* pinned halves: values, then group numbers */
	int			cur;
	bool		inflight[2];	/* the half was sent and may still be read */
	GpuextBuffer *batch;		/* a batch in device memory */
	GpuextBuffer *states;
	GpuextBuffer *chunk;		/* room for chunk_cap groups' results (DeviceResults), kept from run to run */
	uint32		chunk_cap;
	/* CPU */
	char	   *host_states;
	uint32		nstates;		/* states allocated */
	uint32		ncleared;		/* states cleared in this run */
	size_t		added;			/* values since the digits were normalised */
	bool		took;			/* the device scan added values in this run */
	GpuextGroupResult *results; /* per group, once the run is reduced */
} GpuAggSink;

/* Bytes of n states. */
static inline size_t
StatesBytes(GpuAggSink *sink, size_t n)
{
	return n * GPUEXT_GROUP_STATE_BYTES(sink->is_float);
}

/* Where a batch's group numbers start, after capacity values. */
static inline size_t
GroupsOffset(GpuAggSink *sink)
{
	return TYPEALIGN(256, sink->capacity * sink->value_bytes);
}

/* Clear the states up to need (CPU): grow them in host memory. */
static void
CpuStatesCover(GpuAggSink *sink, uint32 need)
{
	uint32		cap;

	if (need <= sink->ncleared)
		return;
	cap = Max(need, Max(GPUAGG_GROUPS_START, sink->nstates * 2));
	if (cap > sink->nstates)
	{
		sink->host_states = sink->host_states
			? repalloc_huge(sink->host_states, StatesBytes(sink, cap))
			: MemoryContextAllocHuge(sink->st->runcxt, StatesBytes(sink, cap));
		sink->nstates = cap;
	}
	gpuext_groups_clear_cpu(sink->is_float, sink->host_states, sink->ncleared, sink->nstates - sink->ncleared);
	sink->ncleared = sink->nstates;
}

/* Clear the device states up to need, moving them to a larger buffer first; false if memory is short. */
static bool
DeviceStatesCover(GpuAggSink *sink, uint32 need)
{
	if (need <= sink->ncleared)
		return true;
	if (need > sink->nstates)
	{
		uint32		cap = Max(need, Max(GPUAGG_GROUPS_START, Min(sink->nstates, PG_UINT32_MAX / 2) * 2));
		MemoryContext old = MemoryContextSwitchTo(sink->st->nodecxt);
		/* a run again with a larger table of groups (GpuAggDevGroupsRegrow) goes to the CPU where memory is short */
		GpuextBuffer *buf = GpuextDeviceAlloc(StatesBytes(sink, cap),
											  gpuext_device_mode == GPUEXT_DEVICE_AUTO || sink->st->groups.grown);

		MemoryContextSwitchTo(old);
		if (buf == NULL)
			return false;
		if (sink->states != NULL)
		{
			if (sink->ncleared > 0)
				GpuextCheck(gpuext_cuda_copy_on_device(buf->ptr, sink->states->ptr, StatesBytes(sink, sink->ncleared)),
							"copy on device");
			GpuextCheck(gpuext_cuda_mark(HALF_EVENT), "event record");
			GpuextWait(HALF_EVENT);
			GpuextBufferFree(sink->states);
		}
		sink->states = buf;
		sink->nstates = cap;
	}
	GpuextCheck(gpuext_groups_clear(sink->is_float, sink->states->ptr, sink->ncleared, sink->nstates - sink->ncleared),
				"grouped reduction");
	sink->ncleared = sink->nstates;
	return true;
}

/* Download piece: copy bytes of the results into host memory. */
static void
CopyOut(void *arg, char *piece, size_t offset, size_t bytes)
{
	memcpy((char *) arg + offset, piece, bytes);
}

/*
 * The results of the device states of groups first .. first + n - 1 into
 * results (NULL: only normalise the states); false if device memory is short.
 */
static bool
DeviceResults(GpuAggSink *sink, uint32 first, uint32 n, GpuextGroupResult *results)
{
	GpuextBuffer *dev;
	char	   *staging;
	bool		chunk = n <= GPUAGG_DEVGROUPS_CHUNK;

	if (n == 0)
		return true;
	/* groups read back a chunk at a time reuse one buffer, not an allocation each; as large as a chunk asks */
	if (chunk && sink->chunk != NULL && sink->chunk_cap < n)
	{
		GpuextBufferFree(sink->chunk);
		sink->chunk = NULL;
	}
	if (chunk && sink->chunk == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(sink->st->nodecxt);

		sink->chunk = GpuextDeviceAlloc(sizeof(GpuextGroupResult) * n, gpuext_device_mode == GPUEXT_DEVICE_AUTO);
		sink->chunk_cap = n;
		MemoryContextSwitchTo(old);
	}
	dev = chunk ? sink->chunk :
		GpuextDeviceAlloc(sizeof(GpuextGroupResult) * (size_t) n, gpuext_device_mode == GPUEXT_DEVICE_AUTO);
	if (dev == NULL)
		return false;
	GpuextCheck(gpuext_groups_result(sink->value_bytes, sink->is_float, sink->states->ptr + StatesBytes(sink, first),
									 n, (GpuextGroupResult *) dev->ptr), "grouped reduction");
	if (results != NULL)
	{
		staging = GpuextStagingBegin();
		GpuextDownload(dev->ptr, sizeof(GpuextGroupResult) * (size_t) n, sizeof(GpuextGroupResult),
					   staging, CopyOut, results);
		GpuextStagingEnd();
	}
	else
	{
		GpuextCheck(gpuext_cuda_mark(HALF_EVENT), "event record");
		GpuextWait(HALF_EVENT);
	}
	if (!chunk)
		GpuextBufferFree(dev);
	return true;
}

/* The pinned halves and the device batch of a sink (kept from run to run); false if memory is short. */
static bool
SinkDeviceStart(GpuAggSink *sink)
{
	MemoryContext old;
	size_t		bytes;

	if (sink->batch != NULL)
		return true;
	sink->capacity = GpuextAggBatch();
	bytes = GroupsOffset(sink) + sink->capacity * sizeof(uint32);
	old = MemoryContextSwitchTo(sink->st->nodecxt);
	for (int h = 0; h < 2 && (h == 0 || sink->host[0] != NULL); h++)
		sink->host[h] = GpuextPinnedAllocShort(bytes);
	if (sink->host[0] != NULL && sink->host[1] != NULL)
		sink->batch = GpuextDeviceAlloc(bytes, gpuext_device_mode == GPUEXT_DEVICE_AUTO);
	MemoryContextSwitchTo(old);
	if (sink->batch != NULL)
		return true;
	for (int h = 0; h < 2; h++)
		if (sink->host[h] != NULL)
			GpuextBufferFree(sink->host[h]);
	sink->host[0] = sink->host[1] = NULL;
	return false;
}

GPUEXT_DEVICE_WORK(SinkDeviceStart, GpuAggSink)

/* Point the batch at the pinned half to fill next, once the device is done reading it. */
static void
SinkUseHalf(GpuAggSink *sink)
{
	if (sink->inflight[sink->cur])
	{
		GpuextWait(HALF_EVENT + sink->cur);
		sink->inflight[sink->cur] = false;
	}
	sink->values = sink->host[sink->cur]->ptr;
	sink->groups = (uint32 *) (sink->host[sink->cur]->ptr + GroupsOffset(sink));
}

/*
 * Make the device states ready for n more values: every group covered, and
 * normalised where the additions since would pass GPUEXT_GROUP_ADD_MAX;
 * false if memory is short.
 */
static bool
StatesRoom(GpuAggSink *sink, size_t n)
{
	if (!DeviceStatesCover(sink, sink->st->groups.ngroups))
		return false;
	if (sink->added + n > GPUEXT_GROUP_ADD_MAX)
	{
		if (!DeviceResults(sink, 0, sink->ncleared, NULL))
			return false;
		sink->added = 0;
	}
	return true;
}

/* Add n values in device memory, each with its group number there, to the device states (StatesRoom first). */
static void
StatesAdd(GpuAggSink *sink, const char *values, const uint32 *groups, size_t n)
{
	GpuextCheck(gpuext_groups_add(sink->value_bytes, sink->is_float, values, groups, n, sink->states->ptr,
								  sink->ncleared), "grouped reduction");
	sink->added += n;
}

/* Send the batch up and add it to the states, then go on filling the other half; false if memory is short. */
static bool
SinkSend(GpuAggSink *sink)
{
	size_t		n = sink->nbatch;
	char	   *dev = sink->batch->ptr;

	if (!StatesRoom(sink, n))
		return false;
	GpuextCheck(gpuext_cuda_copy_to_device(dev, sink->values, n * sink->value_bytes), "copy to device");
	GpuextCheck(gpuext_cuda_copy_to_device(dev + GroupsOffset(sink), (const char *) sink->groups,
										   n * sizeof(uint32)), "copy to device");
	StatesAdd(sink, dev, (const uint32 *) (dev + GroupsOffset(sink)), n);
	GpuextCheck(gpuext_cuda_mark(HALF_EVENT + sink->cur), "event record");
	sink->inflight[sink->cur] = true;
	sink->nbatch = 0;
	sink->cur ^= 1;
	SinkUseHalf(sink);
	return true;
}

GPUEXT_DEVICE_WORK(SinkSend, GpuAggSink)

/* Every group's result from the device states. */
static bool
SinkDeviceResults(GpuAggSink *sink)
{
	return DeviceStatesCover(sink, sink->st->groups.ngroups) &&
		DeviceResults(sink, 0, sink->st->groups.ngroups, sink->results);
}

GPUEXT_DEVICE_WORK(SinkDeviceResults, GpuAggSink)

typedef struct RangeJob
{
	GpuAggSink *sink;
	uint32		first;
	uint32		n;
	GpuextGroupResult *results;
} RangeJob;

/* Some groups' results from the device states (every group's states cleared first). */
static bool
SinkRangeResults(RangeJob *job)
{
	return DeviceStatesCover(job->sink, job->sink->st->groups.ngroups) &&
		DeviceResults(job->sink, job->first, job->n, job->results);
}

GPUEXT_DEVICE_WORK(SinkRangeResults, RangeJob)

/*
 * The device failed or is short (auto): its buffers go (after the halves in
 * flight, where it did not fail), and the run starts again on the CPU.
 */
static void
DeviceLost(GpuAggState *st, GpuextDeviceOutcome outcome)
{
	GpuAggNoteFallback(st, outcome == GPUEXT_DEVICE_SHORT ? "device memory is short" : "the device failed");
	st->device_lost = true;
	for (int i = 0; i < st->ninputs; i++)
	{
		GpuAggSink *sink = st->inputs[i].sink;

		if (sink == NULL)
			continue;
		for (int h = 0; h < 2; h++)
		{
			if (sink->inflight[h] && outcome == GPUEXT_DEVICE_SHORT)
				GpuextWait(HALF_EVENT + h);
			sink->inflight[h] = false;
			if (sink->host[h] != NULL)
				GpuextBufferFree(sink->host[h]);
			sink->host[h] = NULL;
		}
		if (sink->batch != NULL)
			GpuextBufferFree(sink->batch);
		if (sink->states != NULL)
			GpuextBufferFree(sink->states);
		if (sink->chunk != NULL)
			GpuextBufferFree(sink->chunk);
		sink->batch = sink->states = sink->chunk = NULL;
		sink->nstates = sink->ncleared = 0;
	}
}

/*
 * The results of an input's groups first .. first + n - 1 from its device
 * states, where the device numbered the groups (gpuagg_devgroups_out.c).
 */
GpuextDeviceOutcome
GpuAggGroupResults(GpuAggState *st, GpuAggInput *in, uint32 first, uint32 n, GpuextGroupResult *results)
{
	RangeJob	job = {in->sink, first, n, results};

	Assert(st->groups.numbered && in->sink->nbatch == 0);
	return TrySinkRangeResults(&job, "grouped reduction");
}

/* Add the batch to the states: on the device, or on the CPU. */
static void
SinkFlush(GpuAggState *st, GpuAggSink *sink)
{
	instr_time	start;
	GpuextDeviceOutcome outcome;

	if (sink->nbatch == 0 || st->device_lost)
	{
		sink->nbatch = 0;
		return;
	}
	if (st->timing)
		INSTR_TIME_SET_CURRENT(start);
	if (!st->groups.use_device)
	{
		CpuStatesCover(sink, st->groups.ngroups);
		gpuext_groups_add_cpu(sink->value_bytes, sink->is_float, sink->values, sink->groups, sink->nbatch,
							  sink->host_states, sink->ncleared);
		sink->nbatch = 0;
		st->stats.cpu_batches++;
	}
	else if ((outcome = TrySinkSend(sink, "grouped reduction")) == GPUEXT_DEVICE_DONE)
		st->stats.device_batches++;
	else
		DeviceLost(st, outcome);
	if (st->timing)
		st->stats.device_ms += GpuAggElapsedMs(start);
}

/* The device failed or is short (auto) outside the sinks' own calls: the run starts again on the CPU. */
void
GpuAggGroupsDeviceLost(GpuAggState *st, GpuextDeviceOutcome outcome)
{
	if (!st->device_lost)
		DeviceLost(st, outcome);
}

typedef struct DeviceAddJob
{
	GpuAggSink *sink;
	const char *values;
	const uint32 *groups;
	size_t		n;
} DeviceAddJob;

/* The device scan's values and group numbers (device memory) added to the sink's device states. */
static bool
DeviceAdd(DeviceAddJob *job)
{
	if (!StatesRoom(job->sink, job->n))
		return false;
	StatesAdd(job->sink, job->values, job->groups, job->n);
	return true;
}

GPUEXT_DEVICE_WORK(DeviceAdd, DeviceAddJob)

/* The device scan's values of an input with their group numbers (device memory), added on the device. */
void
GpuAggGroupAddDevice(GpuAggState *st, GpuAggInput *in, const char *values, const uint32 *groups, size_t n)
{
	DeviceAddJob job = {in->sink, values, groups, n};
	GpuextDeviceOutcome outcome;

	Assert(st->groups.use_device && in->sink != NULL);
	if (n == 0 || st->device_lost)
		return;
	in->sink->took = true;
	if ((outcome = TryDeviceAdd(&job, "grouped reduction")) != GPUEXT_DEVICE_DONE)
		DeviceLost(st, outcome);
}

/* Add one non-NULL value of a group to an input. */
void
GpuAggGroupAdd(GpuAggState *st, GpuAggInput *in, uint32 group, Datum value)
{
	GpuAggSink *sink = in->sink;

	/* Once the device is lost the run starts again on the CPU, and the sinks' halves are gone */
	if (unlikely(st->device_lost))
		return;
	if (in->type == NULL)
	{
		in->group_counts[group]++;
		return;
	}
	if (in->group_accs)
	{
		GpuextAccumAdd(&in->group_accs[group], value);
		return;
	}
	if (unlikely(sink->nbatch == sink->capacity))
		SinkFlush(st, sink);
	GpuextStoreDatum(in->type, value, sink->values + sink->nbatch * sink->value_bytes);
	sink->groups[sink->nbatch++] = group;
}

/*
 * Add n values of a plain column (one at each of ptrs) to their groups, as
 * GpuAggGroupAdd adds one: the values gathered into the sink's batch and the
 * group numbers copied beside them (a spilled row's, GPUAGG_SPILL, is past
 * every state, so the reduction leaves its value out).
 */
void
GpuAggGroupAddColumn(GpuAggState *st, GpuAggInput *in, const uint32 *groups, const char *const *ptrs, int n)
{
	GpuAggSink *sink = in->sink;
	int			j = 0;

	if (in->type == NULL)
	{
		for (j = 0; j < n; j++)
			if (groups[j] != GPUAGG_SPILL)
				in->group_counts[groups[j]]++;
		return;
	}
	if (in->group_accs)
	{
		for (j = 0; j < n; j++)
			GpuextAccumAdd(&in->group_accs[groups[j]], fetch_att(ptrs[j], true, in->fixed_len));
		return;
	}
	while (j < n && !st->device_lost)
	{
		size_t		m;

		if (sink->nbatch == sink->capacity)
		{
			SinkFlush(st, sink);
			continue;
		}
		m = Min((size_t) (n - j), sink->capacity - sink->nbatch);
		GpuAggGatherColumn(sink->values + sink->nbatch * sink->value_bytes, ptrs + j, (int) m, sink->value_bytes);
		memcpy(sink->groups + sink->nbatch, groups + j, m * sizeof(uint32));
		sink->nbatch += m;
		j += (int) m;
	}
}

/* Whether a numeric input's values come from the device scan as bigints, to its groups' device states. */
static inline bool
DeviceNumeric(GpuAggState *st, GpuAggInput *in)
{
	return in->dev_scale >= 0 && st->dev.program != NULL;
}

/* An input's sink, made on first use in the node's memory (kept from run to run). */
static GpuAggSink *
InputSink(GpuAggState *st, GpuAggInput *in)
{
	if (in->sink == NULL)
	{
		in->sink = MemoryContextAllocZero(st->nodecxt, sizeof(GpuAggSink));
		in->sink->st = st;
		/* a numeric input the device scan reads: its values bigints at a scale */
		in->sink->value_bytes = in->dev_scale >= 0 ? sizeof(int64) : in->type->value_bytes;
		in->sink->is_float = GpuAggInputIsFloat(in);
	}
	return in->sink;
}

/*
 * Start a run's groups empty: on the device (its pinned halves and batch
 * kept from run to run) where device is true and every input gets them,
 * else on the CPU.
 */
void
GpuAggGroupsStart(GpuAggState *st, bool device)
{
	GpuAggKeysReset(st);
	st->device_lost = false;
	st->groups.numbered = false;
	for (int i = 0; i < st->ninputs && device; i++)
	{
		GpuAggInput *in = &st->inputs[i];
		GpuextDeviceOutcome outcome;

		if (in->type == NULL || (GpuAggInputIsNumeric(in) && !DeviceNumeric(st, in)))
			continue;
		if ((outcome = TrySinkDeviceStart(InputSink(st, in), "grouped reduction")) != GPUEXT_DEVICE_DONE)
		{
			GpuAggNoteFallback(st, outcome == GPUEXT_DEVICE_SHORT ? "device memory is short" : "the device failed");
			device = false;
		}
	}
	st->groups.use_device = device;
	st->groups.max_groups = GpuAggSpillBudget(st);
	for (int i = 0; i < st->ninputs; i++)
	{
		GpuAggInput *in = &st->inputs[i];
		GpuAggSink *sink;

		in->group_counts = NULL;
		in->group_accs = NULL;
		if (in->type == NULL || in->numeric_scale >= 0)
			in->group_counts = MemoryContextAllocHuge(st->runcxt, sizeof(int64) * st->groups.groups_cap);
		if (in->type == NULL)
			continue;
		if (GpuAggInputIsNumeric(in))
		{
			GpuAggAccsStart(st, in);
			if (!device || !DeviceNumeric(st, in))
				continue;
		}
		sink = InputSink(st, in);
		sink->nbatch = 0;
		sink->ncleared = 0;
		sink->added = 0;
		sink->took = false;
		sink->results = NULL;
		sink->host_states = NULL;
		if (device)
		{
			/* the states' device buffer goes where a run's states went to host memory */
			if (sink->states == NULL)
				sink->nstates = 0;
			sink->inflight[0] = sink->inflight[1] = false;
			sink->cur = 0;
			SinkUseHalf(sink);
		}
		else
		{
			sink->nstates = 0;
			sink->capacity = CPU_BATCH;
			sink->values = MemoryContextAllocHuge(st->runcxt, CPU_BATCH * sink->value_bytes);
			sink->groups = MemoryContextAllocHuge(st->runcxt, CPU_BATCH * sizeof(uint32));
		}
	}
}

/*
 * Add what is left in an input's batch and read every group's result; a
 * numeric input's device values join the values its groups' accumulators
 * took on the CPU.
 */
static void
InputResults(GpuAggState *st, GpuAggInput *in)
{
	GpuAggSink *sink = in->sink;
	GpuextDeviceOutcome outcome;
	instr_time	start;

	SinkFlush(st, sink);
	if (st->device_lost)
		return;
	sink->results = MemoryContextAllocHuge(st->runcxt, sizeof(GpuextGroupResult) * Max(st->groups.ngroups, 1));
	if (st->timing)
		INSTR_TIME_SET_CURRENT(start);
	if (!st->groups.use_device)
	{
		CpuStatesCover(sink, st->groups.ngroups);
		gpuext_groups_result_cpu(sink->value_bytes, sink->is_float, sink->host_states, st->groups.ngroups,
								 sink->results);
	}
	else if ((outcome = TrySinkDeviceResults(sink, "grouped reduction")) != GPUEXT_DEVICE_DONE)
		DeviceLost(st, outcome);
	if (st->timing)
		st->stats.device_ms += GpuAggElapsedMs(start);
	for (uint32 g = 0; g < st->groups.ngroups && in->group_accs && !st->device_lost; g++)
		if (sink->results[g].count > 0)
			GpuAggDevScanMergeNumeric(in, &in->group_accs[g], sink->results[g].count,
									  sink->results[g].isum_lo, sink->results[g].isum_hi,
									  sink->results[g].min_key, sink->results[g].max_key);
}

/* Whether a numeric input's device states took values in this run (they join its accumulators at the end). */
static inline bool
NumericTook(GpuAggState *st, GpuAggInput *in)
{
	return st->groups.use_device && DeviceNumeric(st, in) && in->sink->took;
}

/* Add what is left in the batches and read every group's results (unless the device was lost). */
void
GpuAggGroupsFinish(GpuAggState *st)
{
	/* groups numbered on the device are read a chunk at a time: the first now, under auto the CPU's if it fails */
	if (st->groups.numbered && !st->device_lost)
	{
		GpuAggDevGroupsFirstChunk(st);
		return;
	}
	for (int i = 0; i < st->ninputs && !st->device_lost; i++)
	{
		GpuAggInput *in = &st->inputs[i];

		if (in->type == NULL || (in->group_accs && !NumericTook(st, in)))
			continue;
		InputResults(st, in);
	}
}

/*
 * The device states of groups 0 .. ngroups - 1, normalised, into host memory
 * as the CPU's states; the device's buffer for them goes (the next run makes
 * another).
 */
static bool
SinkStatesToHost(GpuAggSink *sink)
{
	uint32		n = sink->st->groups.ngroups;
	uint32		cap = Max(n, GPUAGG_GROUPS_START);
	char	   *staging;

	if (!DeviceStatesCover(sink, n) || !DeviceResults(sink, 0, n, NULL))
		return false;
	sink->host_states = MemoryContextAllocHuge(sink->st->runcxt, StatesBytes(sink, cap));
	if (n > 0)
	{
		staging = GpuextStagingBegin();
		GpuextDownload(sink->states->ptr, StatesBytes(sink, n), StatesBytes(sink, 1), staging, CopyOut,
					   sink->host_states);
		GpuextStagingEnd();
	}
	if (sink->states != NULL)
		GpuextBufferFree(sink->states);
	sink->states = NULL;
	gpuext_groups_clear_cpu(sink->is_float, sink->host_states, n, cap - n);
	sink->nstates = sink->ncleared = cap;
	return true;
}

GPUEXT_DEVICE_WORK(SinkStatesToHost, GpuAggSink)

/*
 * A run's groups from the device to host memory, as if the run had kept
 * them on the CPU: a parallel worker sends them, the leader merges its
 * workers' into them.  Numeric inputs' device values join their groups'
 * accumulators.  Under auto the device may be lost on the way.
 */
void
GpuAggGroupsToHost(GpuAggState *st)
{
	if (!st->groups.use_device)
		return;
	for (int i = 0; i < st->ninputs && !st->device_lost; i++)
	{
		GpuAggInput *in = &st->inputs[i];
		GpuextDeviceOutcome outcome;
		instr_time	start;

		if (in->type == NULL || (in->group_accs && !NumericTook(st, in)))
			continue;
		if (in->group_accs)
		{
			InputResults(st, in);
			continue;
		}
		SinkFlush(st, in->sink);
		if (st->device_lost)
			break;
		if (st->timing)
			INSTR_TIME_SET_CURRENT(start);
		if ((outcome = TrySinkStatesToHost(in->sink, "grouped reduction")) != GPUEXT_DEVICE_DONE)
			DeviceLost(st, outcome);
		if (st->timing)
			st->stats.device_ms += GpuAggElapsedMs(start);
	}
	if (!st->device_lost)
		st->groups.use_device = false;
}

/* A group's aggregate a (-1: its rows) as HAVING's tests read it (arg: the group's number). */
static int
GroupFixed(GpuAggState *st, const void *arg, int a, int128 *v)
{
	uint32		g = *(const uint32 *) arg;
	GpuAggInput *in = a >= 0 && st->agg_input[a] >= 0 ? &st->inputs[st->agg_input[a]] : NULL;

	if (in == NULL)
		*v = st->groups.group_rows[g];
	else if (in->type == NULL)
		*v = in->group_counts[g];
	else if (in->group_accs == NULL && GpuAggHavingReads(in))
		return GpuAggHavingFixed(in, st->kinds[a], &in->sink->results[g],
								 in->numeric_scale >= 0 ? in->group_counts[g] : 0, v);
	else
		return GPUAGG_HAVING_UNKNOWN;
	return GPUAGG_HAVING_VALUE;
}

/* The next group's aggregates and keys in the scan tuple; false after the last. */
bool
GpuAggGroupNext(GpuAggState *st)
{
	TupleTableSlot *scanslot = st->css.ss.ss_ScanTupleSlot;
	uint32		g;

	if (st->groups.numbered)
		return GpuAggDevGroupsNext(st);
	do
	{
		if (st->groups.next_group >= st->groups.ngroups)
			return false;
		g = st->groups.next_group++;
	} while (st->groups.nhaving > 0 && GpuAggHavingFails(st, GroupFixed, &g));
	ExecClearTuple(scanslot);
	for (int i = 0; i < scanslot->tts_tupleDescriptor->natts; i++)
		scanslot->tts_isnull[i] = true;
	for (int i = 0; i < st->naggs; i++)
	{
		GpuAggInput *in = st->agg_input[i] >= 0 ? &st->inputs[st->agg_input[i]] : NULL;

		scanslot->tts_isnull[i] = false;
		if (in == NULL)
			scanslot->tts_values[i] = Int64GetDatum(st->groups.group_rows[g]);
		else if (in->type == NULL)
			scanslot->tts_values[i] = Int64GetDatum(in->group_counts[g]);
		else if (in->group_accs)
			scanslot->tts_values[i] = GpuextAccumResult(&in->group_accs[g], st->kinds[i], &scanslot->tts_isnull[i]);
		else if (in->numeric_scale >= 0)
			scanslot->tts_values[i] = GpuAggNumericGroupResult(in, &in->sink->results[g], in->group_counts[g], st->kinds[i],
																  &scanslot->tts_isnull[i]);
		else
			scanslot->tts_values[i] = GpuextGroupResultDatum(&in->sink->results[g], in->type, st->kinds[i],
															 &scanslot->tts_isnull[i]);
	}
	ExecStoreMinimalTuple(st->groups.group_keys[g], st->groups.groupslot, false);
	slot_getallattrs(st->groups.groupslot);
	for (int k = 0; k < st->groups.nkeys; k++)
	{
		scanslot->tts_values[st->naggs + k] = st->groups.groupslot->tts_values[k];
		scanslot->tts_isnull[st->naggs + k] = st->groups.groupslot->tts_isnull[k];
	}
	ExecStoreVirtualTuple(scanslot);
	return true;
}

/* A worker's states ready to be sent: its batches added, each state settled (CPU states). */
void
GpuAggGroupsSettle(GpuAggState *st)
{
	for (int i = 0; i < st->ninputs; i++)
	{
		GpuAggSink *sink = st->inputs[i].sink;

		if (st->inputs[i].type == NULL || st->inputs[i].group_accs)
			continue;
		SinkFlush(st, sink);
		CpuStatesCover(sink, st->groups.ngroups);
		for (uint32 g = 0; g < st->groups.ngroups; g++)
			gpuext_groups_settle_cpu(sink->is_float, (GpuextGroupState *) (sink->host_states + StatesBytes(sink, g)));
	}
}

/* An input's state of a group (CPU states), and its bytes. */
const GpuextGroupState *
GpuAggGroupState(GpuAggInput *in, uint32 group, size_t *bytes)
{
	*bytes = StatesBytes(in->sink, 1);
	return (const GpuextGroupState *) (in->sink->host_states + StatesBytes(in->sink, group));
}

/* Fold a worker's settled state of a group into the leader's (CPU states); the bytes it took. */
size_t
GpuAggGroupMerge(GpuAggState *st, GpuAggInput *in, uint32 group, const GpuextGroupState *src)
{
	CpuStatesCover(in->sink, st->groups.ngroups);
	gpuext_groups_merge_cpu(in->sink->is_float, in->sink->host_states, group, src);
	return StatesBytes(in->sink, 1);
}
