/*
 * device_faults.c
 *		Failure injection for the device layer (gpuext.debug_fail_device_calls):
 *		the setting's check and assign hooks, and the test every device-layer
 *		call made from src/ passes first (GPUEXT_FAULT_CALL in gpuext.h).
 */
#include "postgres.h"

#include "utils/guc.h"

#include "gpuext.h"
#include "pg_compat.h"

/* gpuext.debug_fail_device_calls, parsed: fail fault_count calls of fault_kind after fault_skip. */
typedef struct FaultPlan
{
	GpuextFaultKind kind;
	int			count;
	int			skip;
} FaultPlan;

static FaultPlan fault_plan;
bool		gpuext_fault_fired;		/* the last device-layer call was failed on purpose */
int64		gpuext_faults_injected;

static const char *const fault_kind_names[] = {"any", "open", "alloc", "copy", "kernel", "sync", "reset", "recheck"};

/* GUC check hook: '' (off) or KIND:COUNT[:SKIP], KIND one of fault_kind_names. */
bool
gpuext_fault_check_hook(char **newval, void **extra, GucSource source)
{
	FaultPlan	plan = {0};
	char		kind[16];
	int			count,
				skip = 0,
				consumed = 0;
	int			fields;
	bool		known = false;

	if (*newval != NULL && (*newval)[0] != '\0')
	{
		fields = sscanf(*newval, "%15[a-z]:%d%n:%d%n", kind, &count, &consumed, &skip, &consumed);
		if (fields < 2 || (*newval)[consumed] != '\0' || count < 0 || skip < 0)
		{
			GUC_check_errdetail("Expected KIND:COUNT or KIND:COUNT:SKIP, KIND one of any, open, alloc, copy, kernel, sync, reset, recheck.");
			return false;
		}
		for (int k = 0; k < lengthof(fault_kind_names) && !known; k++)
			if (strcmp(kind, fault_kind_names[k]) == 0)
			{
				plan.kind = (GpuextFaultKind) k;
				plan.count = count;
				plan.skip = skip;
				known = true;
			}
		if (!known)
		{
			GUC_check_errdetail("Unknown kind \"%s\": any, open, alloc, copy, kernel, sync, reset or recheck.", kind);
			return false;
		}
	}
	*extra = GpuextGucMalloc(sizeof(FaultPlan));
	if (*extra == NULL)
		return false;
	memcpy(*extra, &plan, sizeof(FaultPlan));
	return true;
}

/* GUC assign hook: setting the value (again) arms the plan afresh. */
void
gpuext_fault_assign_hook(const char *newval, void *extra)
{
	fault_plan = *(FaultPlan *) extra;
}

/* Whether the next device-layer call of this kind must fail (gpuext.debug_fail_device_calls). */
bool
GpuextFaultFires(GpuextFaultKind kind)
{
	gpuext_fault_fired = false;
	if (fault_plan.count == 0 ||
		(fault_plan.kind == GPUEXT_FAULT_RESET ? kind == GPUEXT_FAULT_OPEN :
		 fault_plan.kind != GPUEXT_FAULT_ANY && fault_plan.kind != kind) ||
		(kind == GPUEXT_FAULT_RECHECK && fault_plan.kind != kind))
		return false;
	if (fault_plan.skip > 0)
	{
		fault_plan.skip--;
		return false;
	}
	fault_plan.count--;
	gpuext_faults_injected++;
	gpuext_fault_fired = true;
	return true;
}

/* Status of an injected failure: the call's own, or a lost device for kind reset. */
GpuextStatus
GpuextFaultStatus(GpuextStatus status)
{
	return fault_plan.kind == GPUEXT_FAULT_RESET ? GPUEXT_DEVICE_LOST : status;
}
