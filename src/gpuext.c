/*
 * gpuext.c
 *		Module load: GUC definitions.  No device is touched here.
 */
#include "postgres.h"

#include <limits.h>

#include "fmgr.h"
#include "utils/guc.h"

#include "gpuext.h"

PG_MODULE_MAGIC;

int			gpuext_device_mode = GPUEXT_DEVICE_AUTO;
/*
 * gpu_sort end to end on an H100 (bench/gpu_sort_crossover.sql, 2026-11-21):
 * the GPU overtakes gpuext's CPU sort between 16K and 64K elements (int4:
 * 16384 0.18 ms CPU / 0.20 ms GPU, 65536 0.72 / 0.32; float8: 16384 0.39 / 0.29).
 */
int			gpuext_min_gpu_elements = 32768;

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

	MarkGUCPrefixReserved("gpuext");
}
