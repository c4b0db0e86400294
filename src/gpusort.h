/*
 * gpusort.h
 *		The GpuSort custom scan: planner side (gpusort_plan.c) and executor side
 *		(gpusort_*.c).
 *
 * custom_private of a GpuSort plan: sort column numbers (IntList), ordering
 * operators, collations (OidLists), NULLS FIRST flags (IntList), key base
 * types (OidList), DESC flags (IntList), and the LIMIT bound (Integer, -1 for
 * none).
 */
#ifndef GPUEXT_GPUSORT_H
#define GPUEXT_GPUSORT_H

#include "nodes/extensible.h"

extern bool gpuext_enable_sort;
extern int	gpuext_sort_min_rows;
extern int	gpuext_sort_work_mem;

extern void GpuSortInit(void);
extern Node *GpuSortCreateState(CustomScan *cscan);

#endif							/* GPUEXT_GPUSORT_H */
