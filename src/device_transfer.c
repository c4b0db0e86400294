/*
 * device_transfer.c
 *		Copies between host memory and the device through the backend's
 *		pinned staging buffer (lent by device.c): its two halves in turn, one
 *		filled or drained while the other's copy is in flight.
 */
#include "postgres.h"

#include "gpuext.h"

/* Bytes of one staged piece: a half of the staging buffer, in whole units. */
static size_t
PieceBytes(size_t unit)
{
	return GPUEXT_STAGING_HALF_BYTES / unit * unit;
}

/* Enqueue one staged piece's copy to the device, marking its half's event slot. */
void
GpuextPieceToDevice(char *dst, const char *half, size_t bytes, int slot)
{
	GpuextCheck(gpuext_cuda_copy_to_device(dst, half, bytes), "copy to device");
	GpuextCheck(gpuext_cuda_mark(slot), "event record");
}

/* Enqueue one piece's copy back into a staging half, marking its event slot. */
void
GpuextPieceToHost(char *half, const char *src, size_t bytes, int slot)
{
	GpuextCheck(gpuext_cuda_copy_to_host(half, src, bytes), "copy to host");
	GpuextCheck(gpuext_cuda_mark(slot), "event record");
}

/* Copy bytes to the device through the staging halves: fill one while the other is in flight. */
void
GpuextUpload(char *dst, size_t bytes, size_t unit, char *staging, GpuextStageFn fill, void *arg)
{
	size_t		piece = PieceBytes(unit);

	for (size_t off = 0, i = 0; off < bytes; off += piece, i++)
	{
		size_t		len = Min(piece, bytes - off);
		int			slot = i % 2;
		char	   *half = staging + slot * GPUEXT_STAGING_HALF_BYTES;

		GpuextWait(slot);
		fill(arg, half, off, len);
		GpuextPieceToDevice(dst + off, half, len, slot);
	}
}

/* Enqueue the copy of piece i of a download into staging half i % 2. */
static void
DownloadPiece(const char *src, size_t bytes, size_t piece, char *staging, size_t i)
{
	size_t		off = i * piece;
	int			slot = i % 2;

	GpuextPieceToHost(staging + slot * GPUEXT_STAGING_HALF_BYTES, src + off, Min(piece, bytes - off), slot);
}

/* Copy bytes back through the staging halves, two pieces in flight, drain reading each. */
void
GpuextDownload(const char *src, size_t bytes, size_t unit, char *staging, GpuextStageFn drain,
			   void *arg)
{
	size_t		piece = PieceBytes(unit);
	size_t		npieces = (bytes + piece - 1) / piece;

	for (size_t i = 0; i < Min(npieces, 2); i++)
	{
		GpuextWait(i % 2);
		DownloadPiece(src, bytes, piece, staging, i);
	}
	for (size_t i = 0; i < npieces; i++)
	{
		int			slot = i % 2;

		GpuextWait(slot);
		drain(arg, staging + slot * GPUEXT_STAGING_HALF_BYTES, i * piece,
			  Min(piece, bytes - i * piece));
		if (i + 2 < npieces)
			DownloadPiece(src, bytes, piece, staging, i + 2);
	}
}
