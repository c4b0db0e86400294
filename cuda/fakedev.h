/*
 * fakedev.h
 *		What the fake device (fakedev.c) and its "kernels" (fakedev_kernels.c)
 *		share: the last error of the calling thread.  Plain C.
 */
#ifndef GPUEXT_FAKEDEV_H
#define GPUEXT_FAKEDEV_H

#include "gpuext_cuda.h"

extern GpuextStatus gpuext_fake_fail(GpuextStatus status, const char *what);

#endif							/* GPUEXT_FAKEDEV_H */
