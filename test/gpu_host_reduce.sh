#!/bin/bash
# The reduction checks on the GPU host, in one call: kernel harness reduce cases (full),
# compute-sanitizer memcheck and racecheck over them (--quick), then bench/reduce_bench.
# Expects test/kernel_harness and bench/reduce_bench already built (make CUDA_ARCH=90 harness
# bench-reduce) and carried; builds nothing.  Writes logs under $OUT (or ./gpu-reduce) and
# prints a summary last.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$PWD/gpu-reduce}
mkdir -p "$out"
harness=test/kernel_harness
bench=bench/reduce_bench
seed=${SEED:-$RANDOM}

for bin in "$harness" "$bench"; do
	[ -x "$bin" ] || { echo "missing $bin: build it with make CUDA_ARCH=90 harness bench-reduce"; exit 2; }
done
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/summary.txt"
$harness --only reduce --seed "$seed" > "$out/harness_reduce.log" 2>&1
compute-sanitizer --tool memcheck $harness --only reduce --quick --seed "$seed" > "$out/memcheck.log" 2>&1
compute-sanitizer --tool racecheck $harness --only reduce --quick --max-n 70000 --pattern uniform --seed "$seed" \
	> "$out/racecheck.log" 2>&1
compute-sanitizer --tool racecheck $harness --only reduce --quick --max-n 70000 --pattern special-floats \
	--seed "$seed" >> "$out/racecheck.log" 2>&1
compute-sanitizer --tool racecheck $harness --only reduce --quick --max-n 70000 --pattern random-38-digits \
	--seed "$seed" >> "$out/racecheck.log" 2>&1
$bench > "$out/reduce_bench.txt" 2>&1
compute-sanitizer --tool racecheck $bench --quick --runs 1 > "$out/bench_racecheck.log" 2>&1
{
	echo "== harness --only reduce (seed $seed)"; tail -2 "$out/harness_reduce.log"; grep FAIL "$out/harness_reduce.log" | head -20
	echo "== memcheck --quick"; grep -E "passed, .* failed|ERROR SUMMARY" "$out/memcheck.log"
	echo "== racecheck --quick (uniform, special-floats, random-38-digits)"; grep -E "passed, .* failed|RACECHECK SUMMARY" "$out/racecheck.log"
	echo "== racecheck of the bench ladder (--quick)"; grep -E "RACECHECK SUMMARY|fatal" "$out/bench_racecheck.log"
	echo "== reduce_bench"; cat "$out/reduce_bench.txt"
} | tee -a "$out/summary.txt"
