# gpuext: GPU sort and aggregates for PostgreSQL (PGXS build)

EXTENSION = gpuext
EXTVERSION = 0.3

MODULE_big = gpuext
SRCS_C = $(wildcard src/*.c)
# cuda/matmul_cpu.c and cuda/reduce_groups_cpu.c are plain C in every build: the CPU's matrix product, in the
# kernels' order, and the grouped reduction on host memory, with the device's bits.
OBJS = $(SRCS_C:.c=.o) cuda/matmul_cpu.o cuda/reduce_groups_cpu.o
SHLIB_LINK += -lm

# sql/gpuext.sql is the current version's script; older versions' scripts and upgrade scripts are kept as they are.
DATA_built = sql/$(EXTENSION)--$(EXTVERSION).sql
DATA = $(filter-out sql/$(EXTENSION)--$(EXTVERSION).sql,$(wildcard sql/$(EXTENSION)--*.sql))
PG_CPPFLAGS = -I$(srcdir)/cuda
# PostgreSQL's own headers are not clean under -Wextra's sign-compare and unused-parameter.
PG_CFLAGS = -Wall -Wextra -Werror -Wno-unused-parameter -Wno-sign-compare -Wno-missing-field-initializers

REGRESS = device settings upgrade gpu_sort gpu_sort_large bad_input sort_node sort_node_random sort_stream gpu_agg gpu_agg_numeric gpu_query agg_device gpuagg gpuagg_group gpuagg_types gpuagg_parallel gpuagg_inplace gpuagg_pages gpuagg_spill gpuagg_many_groups gpuagg_system_columns gpuagg_rescan gpuagg_devscan gpuagg_devgroups gpuagg_having gpuagg_devnumeric gpuagg_devexprs gpuagg_devconditions gpusort_explain gpusort_bound reliability fuzz errors matmul sort_device_rows
REGRESS_OPTS = --load-extension=gpuext

EXTRA_CLEAN = sql/$(EXTENSION)--$(EXTVERSION).sql cuda/*.o test/kernel_harness test/matmul_harness test/gather_harness bench/reduce_bench bench/sort_bench bench/matmul_bench bench/arena_bw results regression.diffs regression.out

# CUDA: CUDA_HOME, else /usr/local/cuda, else nvcc on PATH; WITH_CUDA=no forces the CPU-only build,
# WITH_CUDA=fake the host-memory fake device (cuda/fakedev.c, its kernels cuda/fakedev_kernels.c) that runs the
# device paths without a GPU.
WITH_CUDA ?= auto
ifneq ($(filter no fake,$(WITH_CUDA)),)
CUDA_HOME :=
else ifneq ($(CUDA_HOME),)
else ifneq ($(wildcard /usr/local/cuda/bin/nvcc),)
CUDA_HOME := /usr/local/cuda
else ifneq ($(shell command -v nvcc 2>/dev/null),)
CUDA_HOME := $(patsubst %/bin/,%,$(dir $(shell command -v nvcc)))
endif

# Device code for every supported architecture plus PTX; CUDA_ARCH=90 builds one for quick work.
CUDA_ARCHS ?= 75 80 86 89 90
ifdef CUDA_ARCH
CUDA_ARCHS := $(CUDA_ARCH)
endif
CUDA_PTX_ARCH = $(lastword $(CUDA_ARCHS))
NVCC_GENCODE = $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
	-gencode arch=compute_$(CUDA_PTX_ARCH),code=compute_$(CUDA_PTX_ARCH)
NVCCFLAGS = -std=c++17 -O3 $(NVCC_GENCODE) -Werror all-warnings \
	-Xcompiler -fPIC,-Wall,-Wextra,-Werror,-fvisibility=hidden

CUDA_SRCS = $(wildcard cuda/*.cu)
CUDA_HDRS = $(wildcard cuda/*.h cuda/*.cuh)

ifneq ($(CUDA_HOME),)
NVCC = $(CUDA_HOME)/bin/nvcc
CUDA_LIBDIR = $(firstword $(wildcard $(CUDA_HOME)/lib64 $(CUDA_HOME)/targets/x86_64-linux/lib))
CUDA_OBJS = $(CUDA_SRCS:.cu=.o)
# Static CUDA runtime: the server needs only the NVIDIA driver.  PGXS links with gcc, so name libstdc++.
SHLIB_LINK += $(CUDA_OBJS) -L$(CUDA_LIBDIR) -Wl,--exclude-libs,ALL -lcudart_static -lstdc++ -lrt -ldl -lpthread
else ifeq ($(WITH_CUDA),fake)
OBJS += cuda/fakedev.o cuda/fakedev_kernels.o
else
OBJS += cuda/nocuda.o
endif

# JIT inlining of this module's C is of no use and needs clang: build no bitcode.
override with_llvm = no

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

$(shlib): $(CUDA_OBJS)

# PGXS tracks no header dependencies: rebuild the C objects when a project header changes.
$(OBJS): $(wildcard src/*.h) cuda/gpuext_cuda.h cuda/exact_sum.h cuda/reduce_groups.h $(wildcard cuda/scan_heap*.h) \
	cuda/fakedev.h

# The CPU product's loops over a row vectorise only with the dynamic cost model (GCC's -O2 is "very cheap").
cuda/matmul_cpu.o: CFLAGS += -ftree-loop-vectorize -fvect-cost-model=dynamic
cuda/matmul_cpu.o: cuda/gpuext_cuda.h

cuda/%.o: cuda/%.cu $(CUDA_HDRS)
	$(NVCC) $(NVCCFLAGS) -c -o $@ $<

sql/$(EXTENSION)--$(EXTVERSION).sql: sql/$(EXTENSION).sql
	cp $< $@

# Standalone kernel harnesses (need a GPU to run): check every kernel against a CPU reference.
harness: test/kernel_harness test/matmul_harness test/gather_harness
test/kernel_harness: test/kernel_harness.cu test/harness_report.cuh test/harness_sort_keys.cuh \
		test/harness_sort_pairs.cuh test/harness_sort_shapes.cuh test/harness_sort_rows.cuh \
		test/harness_sort_bench.cuh test/harness_reduce_inputs.cuh test/harness_reduce_check.cuh \
		test/harness_reduce_fixed.cuh test/harness_groups.cuh test/harness_scan_heap_tuples.cuh \
		test/harness_scan_heap_pages.cuh test/harness_scan_heap_programs.cuh test/harness_scan_heap_check.cuh \
		test/harness_scan_groups.cuh test/harness_scan_gather.cuh test/harness_scan_numeric.cuh \
		test/harness_scan_or.cuh test/harness_scan_ints.cuh test/harness_scan_units.cuh test/harness_scan_like.cuh \
		cuda/reduce_groups_cpu.o \
		$(CUDA_OBJS) $(CUDA_HDRS)
	$(NVCC) $(NVCCFLAGS) -Icuda -o $@ $< cuda/reduce_groups_cpu.o $(CUDA_OBJS) -cudart static

# The matrix product kernels against the CPU's product, bit for bit.
test/matmul_harness: test/matmul_harness.cu test/harness_report.cuh cuda/matmul_cpu.o $(CUDA_OBJS) $(CUDA_HDRS)
	$(NVCC) $(NVCCFLAGS) -Icuda -o $@ $< cuda/matmul_cpu.o $(CUDA_OBJS) -cudart static

# gpuext_gather_rows (GpuSort's rows kept in device memory) against the CPU, piece by piece.
test/gather_harness: test/gather_harness.cu test/harness_report.cuh $(CUDA_OBJS) $(CUDA_HDRS)
	$(NVCC) $(NVCCFLAGS) -Icuda -o $@ $< $(CUDA_OBJS) -cudart static

# Reduction benchmark (needs a GPU to run): gpuext_reduce beside CUB and a D2D copy, and the reduction ladder.
bench-reduce: bench/reduce_bench
bench/reduce_bench: bench/reduce_bench.cu bench/bench_common.cuh $(CUDA_OBJS) $(CUDA_HDRS)
	$(NVCC) $(NVCCFLAGS) -Icuda -o $@ $< $(CUDA_OBJS) -cudart static

# Sort benchmark (needs a GPU to run): every algorithm and key width against n, beside CUB's radix and
# merge sorts and a D2D copy; bench/suite.sh runs it with the other benchmarks and plots the results.
bench-sort: bench/sort_bench
bench/sort_bench: bench/sort_bench.cu bench/bench_common.cuh $(CUDA_OBJS) $(CUDA_HDRS)
	$(NVCC) $(NVCCFLAGS) -Icuda -o $@ $< $(CUDA_OBJS) -cudart static

# Matrix product benchmark (needs a GPU to run): the three kernels beside cuBLAS and the FMA peak, and the
# CPU's product for the crossover; cuBLAS is linked into this program only, never into gpuext.so.
bench-matmul: bench/matmul_bench
bench/matmul_bench: bench/matmul_bench.cu bench/bench_common.cuh cuda/matmul_cpu.o $(CUDA_OBJS) $(CUDA_HDRS)
	$(NVCC) $(NVCCFLAGS) -Icuda -o $@ $< cuda/matmul_cpu.o $(CUDA_OBJS) -cudart static \
		-L$(CUDA_LIBDIR) -lcublas -Xlinker -rpath=$(CUDA_LIBDIR)

# The GPU service's arena (shared memory it pins) against cudaMallocHost memory: transfer rates.
bench-arena: bench/arena_bw
bench/arena_bw: bench/arena_bw.cu
	$(NVCC) $(NVCCFLAGS) -o $@ $< -cudart static

.PHONY: harness bench-reduce bench-sort bench-matmul bench-arena
