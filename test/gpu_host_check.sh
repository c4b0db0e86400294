#!/bin/bash
# The GPU-host check, in one call: kernel harness (full, then memcheck and racecheck),
# the regression suite with the GPU forced, the kernel and gpu_sort benchmarks.
# Expects .gpu/ prepared on the build machine (see README, Development):
#   .gpu/postgres.tar.xz + .gpu/with-postgres (pack-postgres), .gpu/stage (make install DESTDIR),
#   .gpu/kernel_harness (make CUDA_ARCH=90 harness).
# Writes logs under $OUT (or ./gpu-check) and prints a summary last.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/gpu-check}
mkdir -p "$out"
harness=.gpu/kernel_harness

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/summary.txt"
{
	echo "== harness (full)"; $harness --seed "${SEED:-$RANDOM}"
	echo "== memcheck --quick"; compute-sanitizer --tool memcheck $harness --quick
	echo "== racecheck --quick --max-n 4097 --pattern random"
	compute-sanitizer --tool racecheck $harness --quick --max-n 4097 --pattern random
} > "$out/harness.log" 2>&1
$harness --bench > "$out/kernel_bench.txt" 2>&1

bash .gpu/with-postgres --stage .gpu/stage --conf gpuext.device=gpu -- bash -c "
	make -s installcheck > '$out/installcheck.txt' 2>&1
	tar czf '$out/regress.tgz' results \$(ls regression.out regression.diffs 2>/dev/null)
	psql -X -f bench/gpu_sort_crossover.sql > '$out/crossover.txt' 2>&1
	psql -X -f test/demo.sql > '$out/demo.txt' 2>&1"

{
	echo "== harness"; grep -E "passed, .* failed|ERROR SUMMARY|RACECHECK SUMMARY|^==" "$out/harness.log"
	echo "== regression (gpuext.device = gpu)"; grep -E "^test|tests (passed|failed)|of .* tests" "$out/installcheck.txt"
	echo "== kernel bench"; tail -40 "$out/kernel_bench.txt"
	echo "== gpu_sort end to end"; cat "$out/crossover.txt"
	echo "== demo"; cat "$out/demo.txt"
} | tee -a "$out/summary.txt"
