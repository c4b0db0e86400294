/*
 * gpuext.c
 *		Module load: GUC definitions and the planner hook.  No device is touched here.
 */
#include "postgres.h"

#include <limits.h>

#include "fmgr.h"
#include "utils/guc.h"

#include "gpuext.h"
#include "gpusort.h"

PG_MODULE_MAGIC;

int			gpuext_device_mode = GPUEXT_DEVICE_AUTO;
/*
 * gpu_sort end to end on an H100 (bench/gpu_sort_crossover.sql, 2026-11-21):
 * the GPU overtakes gpuext's CPU sort between 16K and 64K elements (int4:
 * 16384 0.18 ms CPU / 0.20 ms GPU, 65536 0.72 / 0.32; float8: 16384 0.39 / 0.29).
 */
int			gpuext_min_gpu_elements = 32768;
int			gpuext_max_device_memory = -1;
char	   *gpuext_debug_fail_device_calls = NULL;

static const struct config_enum_entry device_mode_options[] = {
	{"auto", GPUEXT_DEVICE_AUTO, false},
	{"gpu", GPUEXT_DEVICE_GPU, false},
	{"cpu", GPUEXT_DEVICE_CPU, false},
	{NULL, 0, false}
};

void		_PG_init(void);

/* Define the GUCs; the device is opened lazily by the first backend call that needs it. */
void
_PG_init(void)
{
	DefineCustomEnumVariable("gpuext.device",
							 "Where gpuext runs its work: auto, gpu or cpu.",
							 "auto uses the GPU when one is present and the CPU otherwise; "
							 "gpu raises an error when no GPU can be used; cpu never opens a device.",
							 &gpuext_device_mode,
							 GPUEXT_DEVICE_AUTO,
							 device_mode_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("gpuext.min_gpu_elements",
							"Inputs with fewer elements stay on the CPU when gpuext.device is auto.",
							NULL,
							&gpuext_min_gpu_elements,
							32768,
							0, INT_MAX,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("gpuext.enable_sort",
							 "Lets GpuSort replace PostgreSQL's Sort nodes.",
							 NULL,
							 &gpuext_enable_sort,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("gpuext.sort_min_rows",
							"Sorts estimated to take fewer rows are left to PostgreSQL.",
							NULL,
							&gpuext_sort_min_rows,
							20000,
							0, INT_MAX,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpuext.sort_work_mem",
							"Memory a GpuSort may use for the rows it holds; -1 uses work_mem.",
							"Past it the rows go to PostgreSQL's tuplesort, which can spill to disk.",
							&gpuext_sort_work_mem,
							-1,
							-1, MAX_KILOBYTES,
							PGC_USERSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpuext.max_device_memory",
							"Device memory a backend may hold; -1 is half of the device's memory.",
							"Allocations past it fail as on a full device: auto runs the work on the CPU, "
							"gpu raises an error.",
							&gpuext_max_device_memory,
							-1,
							-1, MAX_KILOBYTES,
							PGC_USERSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomStringVariable("gpuext.debug_fail_device_calls",
							   "Testing: make the next device-layer calls fail, as KIND:COUNT[:SKIP].",
							   "KIND is any, open, alloc, copy, kernel or sync; the COUNT calls of that kind "
							   "after the first SKIP fail. Setting it arms it afresh; empty turns it off.",
							   &gpuext_debug_fail_device_calls,
							   "",
							   PGC_SUSET,
							   GUC_NOT_IN_SAMPLE,
							   gpuext_fault_check_hook, gpuext_fault_assign_hook, NULL);

	MarkGUCPrefixReserved("gpuext");
	GpuSortInit();
}
