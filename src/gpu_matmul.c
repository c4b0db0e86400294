/*
 * gpu_matmul.c
 *		gpu_matmul(a, b, algorithm): the product of two two-dimensional real[]
 *		or double precision[] arrays, on the GPU or on the CPU with the same bits.
 *
 * Both places compute each element as +0 followed by fma(a[i][k], b[k][j], .)
 * for k in order (gpuext_cuda.h), so the answer never depends on where it ran
 * or by which algorithm; doc/matmul.md says what that choice costs.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "gpuext.h"

/* What the algorithm argument names; device kernels share the device layer's numbering. */
typedef enum MatmulChoice
{
	MATMUL_NAIVE = GPUEXT_MATMUL_NAIVE,
	MATMUL_TILED = GPUEXT_MATMUL_TILED,
	MATMUL_BLOCKED = GPUEXT_MATMUL_BLOCKED,
	MATMUL_CPU,
	MATMUL_AUTO
} MatmulChoice;

static const struct
{
	const char *name;
	MatmulChoice choice;
}			matmul_choices[] = {
	{"auto", MATMUL_AUTO},
	{"naive", MATMUL_NAIVE},
	{"tiled", MATMUL_TILED},
	{"blocked", MATMUL_BLOCKED},
	{"cpu", MATMUL_CPU},
};

/*
 * Under gpuext.device = auto, algorithm auto keeps products of fewer
 * multiply-adds (m * k * n) than these on the CPU: below them the CPU's
 * product takes less time than the device's, measured end to end from SQL
 * (bench/matmul.sql; doc/matmul.md, "The auto crossover").
 */
#define MATMUL_AUTO_MIN_FMAS_FLOAT4 ((uint64) 1 << 22)
#define MATMUL_AUTO_MIN_FMAS_FLOAT8 ((uint64) 1 << 21)

/* A matrix argument: its shape and row-major data (NULL when empty). */
typedef struct Matrix
{
	const char *data;
	int			rows;
	int			cols;
} Matrix;

/* Parse the algorithm argument, or ERROR listing the valid names. */
static MatmulChoice
ParseMatmulChoice(text *name)
{
	char	   *s = text_to_cstring(name);

	for (int i = 0; i < lengthof(matmul_choices); i++)
		if (pg_strcasecmp(s, matmul_choices[i].name) == 0)
			return matmul_choices[i].choice;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown gpu_matmul algorithm \"%s\"", s),
			 errhint("Valid algorithms are auto, naive, tiled, blocked and cpu.")));
	pg_unreachable();
}

/*
 * Read a matrix argument: two dimensions (as width_bucket and intarray do
 * for theirs, a wrong number of dimensions is array_subscript_error), no
 * NULLs.  The empty array, which has no dimensions, is an empty matrix.
 */
static Matrix
MatrixArgument(ArrayType *arr, const char *which)
{
	Matrix		m = {NULL, 0, 0};

	if (ARR_NDIM(arr) == 0)
		return m;
	if (ARR_NDIM(arr) != 2)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("gpu_matmul needs two-dimensional arrays, %s has %d dimension%s",
						which, ARR_NDIM(arr), ARR_NDIM(arr) == 1 ? "" : "s")));
	if (array_contains_nulls(arr))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("gpu_matmul does not accept NULL elements, %s has some", which)));
	m.rows = ARR_DIMS(arr)[0];
	m.cols = ARR_DIMS(arr)[1];
	m.data = ARR_DATA_PTR(arr);
	return m;
}

/* Upload piece: the next bytes of a matrix argument into staging. */
static void
CopyInPiece(void *arg, char *piece, size_t offset, size_t bytes)
{
	memcpy(piece, (const char *) arg + offset, bytes);
}

/* Download piece: the next bytes of the product from staging into the result. */
static void
CopyOutPiece(void *arg, char *piece, size_t offset, size_t bytes)
{
	memcpy((char *) arg + offset, piece, bytes);
}

/* One product on the device, as device work that may fall back (GpuextTryDevice). */
typedef struct MatmulCall
{
	GpuextMatmulAlgo algo;
	int			elem_bytes;
	const char *a;
	const char *b;
	char	   *out;
	size_t		m;
	size_t		k;
	size_t		n;
} MatmulCall;

/* Device work: A and B up through the staging halves, the kernel, C back; false if memory is short. */
static bool
MatmulOnDevice(MatmulCall *c)
{
	size_t		eb = c->elem_bytes;
	size_t		a_bytes = c->m * c->k * eb;
	size_t		b_bytes = c->k * c->n * eb;
	size_t		c_bytes = c->m * c->n * eb;
	size_t		b_off = TYPEALIGN(256, a_bytes);
	size_t		c_off = b_off + TYPEALIGN(256, b_bytes);
	GpuextBuffer *buf;
	char	   *staging;

	buf = GpuextDeviceAlloc(c_off + c_bytes, gpuext_device_mode == GPUEXT_DEVICE_AUTO);
	if (buf == NULL)
		return false;
	staging = GpuextStagingBegin();
	GpuextUpload(buf->ptr, a_bytes, eb, staging, CopyInPiece, unconstify(char *, c->a));
	GpuextUpload(buf->ptr + b_off, b_bytes, eb, staging, CopyInPiece, unconstify(char *, c->b));
	GpuextCheck(gpuext_matmul(c->algo, c->elem_bytes, buf->ptr, buf->ptr + b_off, buf->ptr + c_off,
							  c->m, c->k, c->n), "matrix product");
	GpuextDownload(buf->ptr + c_off, c_bytes, eb, staging, CopyOutPiece, c->out);
	GpuextStagingEnd();
	GpuextBufferFree(buf);
	return true;
}

GPUEXT_DEVICE_WORK(MatmulOnDevice, MatmulCall)

/*
 * CPU product's poll: serve a cancel at once.  The ERROR unwinds only plain
 * C frames of matmul_cpu.c that hold nothing, so the longjmp is safe.
 */
static int
MatmulCpuPoll(void *arg)
{
	CHECK_FOR_INTERRUPTS();
	return 0;
}

PG_FUNCTION_INFO_V1(gpu_matmul);

/* SQL: gpu_matmul(a, b, algorithm text) for real[] and double precision[]. */
Datum
gpu_matmul(PG_FUNCTION_ARGS)
{
	ArrayType  *a_arr = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *b_arr = PG_GETARG_ARRAYTYPE_P(1);
	MatmulChoice choice = ParseMatmulChoice(PG_GETARG_TEXT_PP(2));
	Oid			elemtype = ARR_ELEMTYPE(a_arr);
	int			elem_bytes;
	Matrix		a,
				b;
	uint64		nitems;
	Size		nbytes;
	bool		use_device;
	ArrayType  *result;
	GpuextStatus status;

	if (elemtype != ARR_ELEMTYPE(b_arr) || (elemtype != FLOAT4OID && elemtype != FLOAT8OID))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("gpu_matmul multiplies two real[] or two double precision[] arrays, not %s and %s",
						format_type_be(get_array_type(elemtype)),
						format_type_be(get_array_type(ARR_ELEMTYPE(b_arr))))));
	elem_bytes = elemtype == FLOAT4OID ? 4 : 8;
	a = MatrixArgument(a_arr, "the first matrix");
	b = MatrixArgument(b_arr, "the second matrix");

	if (a.data != NULL && b.data != NULL && a.cols != b.rows)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("matrix shapes %dx%d and %dx%d do not match", a.rows, a.cols, b.rows, b.cols),
				 errdetail("The first matrix must have as many columns as the second has rows.")));
	nitems = (uint64) a.rows * (uint64) b.cols;
	if (nitems > MaxArraySize ||
		ARR_OVERHEAD_NONULLS(2) + nitems * elem_bytes > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the product of %dx%d and %dx%d matrices would have " UINT64_FORMAT " elements, more than an array can hold",
						a.rows, a.cols, b.rows, b.cols, nitems)));

	/* Placement: gpuext.device decides first; auto keeps small products on the CPU. */
	use_device = choice != MATMUL_CPU && GpuextUseDevice();
	if (use_device && gpuext_device_mode == GPUEXT_DEVICE_AUTO && choice == MATMUL_AUTO &&
		nitems * (uint64) a.cols < (elem_bytes == 4 ? MATMUL_AUTO_MIN_FMAS_FLOAT4 : MATMUL_AUTO_MIN_FMAS_FLOAT8))
		use_device = false;

	/* The empty array stands for the empty matrix of whichever shape fits (0 x k or k x 0). */
	if (a.data == NULL || b.data == NULL)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(elemtype));

	/* The result: two dimensions from 1, no NULLs. */
	nbytes = ARR_OVERHEAD_NONULLS(2) + nitems * elem_bytes;
	result = palloc(nbytes);
	memset(result, 0, ARR_OVERHEAD_NONULLS(2));
	SET_VARSIZE(result, nbytes);
	result->ndim = 2;
	result->dataoffset = 0;
	result->elemtype = elemtype;
	ARR_DIMS(result)[0] = a.rows;
	ARR_DIMS(result)[1] = b.cols;
	ARR_LBOUND(result)[0] = 1;
	ARR_LBOUND(result)[1] = 1;

	if (use_device)
	{
		MatmulCall	call = {choice == MATMUL_AUTO ? GPUEXT_MATMUL_BLOCKED : (GpuextMatmulAlgo) choice,
		elem_bytes, a.data, b.data, ARR_DATA_PTR(result), a.rows, a.cols, b.cols};

		if (TryMatmulOnDevice(&call, "matrix product") == GPUEXT_DEVICE_DONE)
			PG_RETURN_ARRAYTYPE_P(result);
		elog(DEBUG1, "gpu_matmul: device memory short or failing for %dx%d by %dx%d, using the CPU",
			 a.rows, a.cols, b.rows, b.cols);
	}
	status = gpuext_matmul_cpu(elem_bytes, a.data, b.data, ARR_DATA_PTR(result), 0, a.rows, a.cols, b.cols,
							   MatmulCpuPoll, NULL);
	if (status != GPUEXT_OK)
		elog(ERROR, "gpu_matmul: CPU product failed with status %d", (int) status);
	PG_RETURN_ARRAYTYPE_P(result);
}
