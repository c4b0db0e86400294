/*
 * gpuext.c
 *		Module load: GUC definitions and the planner hooks.  No device is touched here.
 */
#include "postgres.h"

#include <limits.h>

#include "fmgr.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"

#include "gpuagg.h"
#include "gpusort.h"
#include "service.h"

PG_MODULE_MAGIC;

int			gpuext_device_mode = GPUEXT_DEVICE_MODE_DEFAULT;
int			gpuext_min_gpu_elements = GPUEXT_MIN_GPU_ELEMENTS_DEFAULT;
int			gpuext_max_device_memory = GPUEXT_MAX_DEVICE_MEMORY_DEFAULT;
bool		gpuext_offload = GPUEXT_OFFLOAD_DEFAULT;
char	   *gpuext_debug_fail_device_calls = NULL;

static const struct config_enum_entry device_mode_options[] = {
	{"auto", GPUEXT_DEVICE_AUTO, false},
	{"gpu", GPUEXT_DEVICE_GPU, false},
	{"cpu", GPUEXT_DEVICE_CPU, false},
	{NULL, 0, false}
};

void		_PG_init(void);

/*
 * Where the value a placeholder of gpuext.offload resets to came from, before
 * the variable is defined (a library loaded after the session started).
 */
static GucSource
OffloadPlaceholderSource(void)
{
	struct config_generic *gconf = NULL;

#if PG_VERSION_NUM >= 160000
	gconf = find_option("gpuext.offload", false, true, DEBUG1);
#else
	struct config_generic **vars = get_guc_variables();

	for (int i = 0; i < GetNumConfigOptions() && gconf == NULL; i++)
		if (strcmp(vars[i]->name, "gpuext.offload") == 0)
			gconf = vars[i];
#endif
	return gconf != NULL ? gconf->reset_source : PGC_S_DEFAULT;
}

/*
 * Define gpuext.offload.  A value from a connection, a role or a database
 * replaced the configuration file's in a placeholder (the library was not
 * preloaded), and is refused as the variable is defined, which would leave
 * the default on: offload stays off in this session until the next reload.
 */
static void
DefineOffload(void)
{
	GucSource	source = OffloadPlaceholderSource();

	DefineCustomBoolVariable("gpuext.offload",
							 "Lets gpuext run work on a GPU at all; off keeps every session on the CPU.",
							 "Off: no GpuSort or GpuAgg is planned, no device is opened, the gpu_* functions "
							 "run on the CPU and gpuext.device = gpu raises an error. Only the configuration "
							 "file changes it.",
							 &gpuext_offload,
							 GPUEXT_OFFLOAD_DEFAULT,
							 PGC_SIGHUP,
							 0,
							 NULL, NULL, NULL);
	if (source <= PGC_S_ARGV)
		return;
	(void) set_config_option("gpuext.offload", "off", PGC_SIGHUP, PGC_S_FILE, GUC_ACTION_SET, true, 0, false);
	ereport(WARNING,
			(errcode(ERRCODE_CANT_CHANGE_RUNTIME_PARAM),
			 errmsg("gpuext.offload can only be set in the server's configuration"),
			 errdetail("A value given by the connection, a role or a database was ignored; "
					   "offload is off in this session until the configuration is reloaded.")));
}

/* Define the GUCs; the device is opened lazily by the first backend call that needs it. */
void
_PG_init(void)
{
	DefineCustomEnumVariable("gpuext.device",
							 "Where gpuext runs its work: auto, gpu or cpu.",
							 "auto uses the GPU when one is present and the CPU otherwise; "
							 "gpu raises an error when no GPU can be used; cpu never opens a device.",
							 &gpuext_device_mode,
							 GPUEXT_DEVICE_MODE_DEFAULT,
							 device_mode_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	/* The administrator's switch: only the configuration file and a reload change it */
	DefineOffload();

	DefineCustomIntVariable("gpuext.min_gpu_elements",
							"Inputs with fewer elements stay on the CPU when gpuext.device is auto.",
							NULL,
							&gpuext_min_gpu_elements,
							GPUEXT_MIN_GPU_ELEMENTS_DEFAULT,
							0, INT_MAX,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("gpuext.enable_sort",
							 "Lets GpuSort replace PostgreSQL's Sort nodes.",
							 NULL,
							 &gpuext_enable_sort,
							 GPUEXT_ENABLE_SORT_DEFAULT,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("gpuext.sort_min_rows",
							"Sorts estimated to take fewer rows are left to PostgreSQL.",
							NULL,
							&gpuext_sort_min_rows,
							GPUEXT_SORT_MIN_ROWS_DEFAULT,
							0, INT_MAX,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("gpuext.enable_agg",
							 "Lets GpuAgg compute aggregates over one table, with or without GROUP BY.",
							 NULL,
							 &gpuext_enable_agg,
							 GPUEXT_ENABLE_AGG_DEFAULT,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuext.enable_device_scan",
							 "Lets GpuAgg send the table's pages to the device, which decodes, filters and gathers their rows.",
							 "Off reads the rows on the CPU and sends only their values.",
							 &gpuext_enable_device_scan,
							 GPUEXT_ENABLE_DEVICE_SCAN_DEFAULT,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuext.device_scan_in_place",
							 "Lets the device scan read pages that are in shared buffers in place, over the bus.",
							 "Off copies each page into the GPU's transfer memory first.",
							 &gpuext_device_scan_in_place,
							 GPUEXT_DEVICE_SCAN_IN_PLACE_DEFAULT,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuext.device_scan_whole_pages",
							 "Lets the device scan take pages the visibility map calls all-visible whole, the CPU reading none of their rows.",
							 "Off copies each such page's header and line pointers, as for other pages.",
							 &gpuext_device_scan_whole_pages,
							 GPUEXT_DEVICE_SCAN_WHOLE_PAGES_DEFAULT,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	/* Superuser-only: it reads the table's files outside the buffer manager (doc/design.md) */
	DefineCustomBoolVariable("gpuext.read_table_files",
							 "Lets GpuAgg read all-visible pages that are not in shared buffers straight from the table's files.",
							 "Off reads every page through shared buffers, as a sequential scan does.",
							 &gpuext_read_table_files,
							 GPUEXT_READ_TABLE_FILES_DEFAULT,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("gpuext.agg_min_rows",
							"Aggregates over tables estimated to give fewer rows are left to PostgreSQL.",
							NULL,
							&gpuext_agg_min_rows,
							GPUEXT_AGG_MIN_ROWS_DEFAULT,
							0, INT_MAX,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("gpuext.sort_work_mem",
							"Memory a GpuSort may use for the rows it holds; -1 uses work_mem.",
							"Past it the rows go to PostgreSQL's tuplesort, which can spill to disk.",
							&gpuext_sort_work_mem,
							GPUEXT_SORT_WORK_MEM_DEFAULT,
							-1, MAX_KILOBYTES,
							PGC_USERSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("gpuext.sort_rows_on_device",
							 "Keeps a GpuSort's rows in device memory once they pass gpuext.sort_work_mem.",
							 "Off: past the budget the rows go to PostgreSQL's tuplesort, which can spill to disk.",
							 &gpuext_sort_rows_on_device,
							 GPUEXT_SORT_ROWS_ON_DEVICE_DEFAULT,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	/* Superuser-only: each piece is pinned host memory, two of them per sort */
	DefineCustomIntVariable("gpuext.debug_sort_piece_size",
							"Testing: the size of the pieces in which rows kept in device memory travel.",
							NULL,
							&gpuext_debug_sort_piece_size,
							GPUEXT_DEBUG_SORT_PIECE_SIZE_DEFAULT,
							16, 1024 * 1024,
							PGC_SUSET,
							GUC_UNIT_KB | GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("gpuext.debug_agg_without_gain",
							 "Testing: offer GpuAgg also where it gains nothing over PostgreSQL's plan.",
							 "For the suites that force every aggregate onto gpuext.",
							 &gpuext_debug_agg_without_gain,
							 false,
							 PGC_SUSET,
							 GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);

	/* Superuser-only, as temp_file_limit: a role may not raise its own share of a shared device. */
	DefineCustomIntVariable("gpuext.max_device_memory",
							"Device memory a backend may hold; -1 is half of the device's memory, or with the GPU service "
							"the pool's limit divided by gpuext.device_clients.",
							"Allocations past it fail as on a full device: auto runs the work on the CPU, "
							"gpu raises an error.",
							&gpuext_max_device_memory,
							GPUEXT_MAX_DEVICE_MEMORY_DEFAULT,
							-1, MAX_KILOBYTES,
							PGC_SUSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomStringVariable("gpuext.debug_fail_device_calls",
							   "Testing: make the next device-layer calls fail, as KIND:COUNT[:SKIP].",
							   "KIND is any, open, alloc, copy, kernel, sync, reset or recheck (a page the device read whole "
							   "found changed after); the COUNT calls of that kind "
							   "after the first SKIP fail. Setting it arms it afresh; empty turns it off.",
							   &gpuext_debug_fail_device_calls,
							   GPUEXT_DEBUG_FAIL_DEVICE_CALLS_DEFAULT,
							   PGC_SUSET,
							   GUC_NOT_IN_SAMPLE,
							   gpuext_fault_check_hook, gpuext_fault_assign_hook, NULL);

	GpuextServiceInit();
	MarkGUCPrefixReserved("gpuext");
	GpuSortInit();
	GpuAggInit();
}
