/*
 * gpuext.h
 *		Declarations shared by gpuext's PostgreSQL-facing C files.
 */
#ifndef GPUEXT_H
#define GPUEXT_H

#include "gpuext_cuda.h"

/* gpuext.device */
typedef enum GpuextDeviceMode
{
	GPUEXT_DEVICE_AUTO,
	GPUEXT_DEVICE_GPU,
	GPUEXT_DEVICE_CPU
} GpuextDeviceMode;

extern int	gpuext_device_mode;
extern int	gpuext_min_gpu_elements;

/* device.c: the backend's device session */
extern bool GpuextUseDevice(void);
extern bool GpuextUseDeviceFor(size_t n);
extern void GpuextCheck(GpuextStatus status, const char *what);
extern void GpuextWait(int slot);
extern int	GpuextPollInterrupts(void *arg);

/* Device or pinned host memory owned by the memory context it was allocated in. */
typedef struct GpuextBuffer
{
	char	   *ptr;			/* NULL once freed */
	size_t		bytes;
	bool		pinned;			/* pinned host memory, else device memory */
} GpuextBuffer;

extern GpuextBuffer *GpuextDeviceAlloc(size_t bytes, bool missing_ok);
extern GpuextBuffer *GpuextPinnedAlloc(size_t bytes);
extern void GpuextBufferFree(GpuextBuffer *buf);

/* The backend's pinned staging buffer: two halves used in turn for transfers. */
#define GPUEXT_STAGING_HALF_BYTES ((size_t) 4 * 1024 * 1024)
extern char *GpuextStagingBegin(void);
extern void GpuextStagingEnd(void);

/* Fill (upload) or read (download) one staged piece: bytes at offset of the whole transfer. */
typedef void (*GpuextStageFn) (void *arg, char *piece, size_t offset, size_t bytes);
extern void GpuextUpload(char *dst, size_t bytes, size_t unit, char *staging,
						 GpuextStageFn fill, void *arg);
extern void GpuextDownload(const char *src, size_t bytes, size_t unit, char *staging,
						   GpuextStageFn drain, void *arg);
extern const char *GpuextDeviceUnavailableReason(void);

/* gpu_sort.c: values into sorted keys on the device (sort_keys.h's encoding) */
struct GpuextSortType;
extern bool GpuextSortKeysOnDevice(const struct GpuextSortType *type, const char *values, void *keys,
								   size_t n, bool descending);

#endif							/* GPUEXT_H */
