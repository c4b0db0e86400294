#!/bin/bash
# The GPU-host checks, each part in one call:
#   check: kernel harness (full, then memcheck and racecheck), the reduction checks and benchmark
#          (test/gpu_host_reduce.sh), the regression suite with the GPU forced
#          (gpuext.device = gpu, gpuext.sort_min_rows = 0) and the TAP tests likewise
#          (test/tap.sh; IPC::Run carried as .gpu/perl5 where the host lacks it);
#   bench: kernel benchmark, gpu_sort end to end, the ORDER BY and aggregate benchmarks, the demo;
#   final: check, then the ORDER BY benchmark alone;
#   service: the GPU service (gpuext preloaded): memcheck of the harness, the regression suite with
#          the GPU forced in each backend and through the service, the TAP tests through the
#          service, and bench/service.sh.
#   suites: the regression suite with the GPU forced in each backend and through the service;
#   oracle: memcheck of the harness, and PostgreSQL's own regression suite plain and forced onto
#          gpuext (test/postgres_suite.sh, prepared into .gpu/pgsuite).
# Expects .gpu/ prepared on the build machine (see doc/development.md, the GPU host):
#   .gpu/postgres.tar.xz + .gpu/with-postgres (pack-postgres), .gpu/stage (make install DESTDIR),
#   .gpu/kernel_harness and .gpu/gather_harness (make CUDA_ARCH=90 harness); test/kernel_harness and bench/reduce_bench
#   (make CUDA_ARCH=90 harness bench-reduce) carried beside it for the reduction part.
# Writes logs under $OUT (or ./gpu-check) and prints a summary last.
set -uo pipefail
cd "$(dirname "$0")/.."
part=${1:-check}
out=${OUT:-$PWD/gpu-check}
mkdir -p "$out"
harness=.gpu/kernel_harness
pg() { bash .gpu/with-postgres --stage .gpu/stage "$@"; }

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/summary.txt"
if [ "$part" = check ] || [ "$part" = final ]; then
	{
		echo "== harness (full)"; $harness --seed "${SEED:-$RANDOM}"
		echo "== memcheck --quick"; compute-sanitizer --tool memcheck $harness --quick
		echo "== racecheck --quick --max-n 70001 --pattern random"
		compute-sanitizer --tool racecheck $harness --quick --max-n 70001 --pattern random
		if [ -x .gpu/gather_harness ]; then
			echo "== gather harness"; .gpu/gather_harness --seed "${SEED:-$RANDOM}"
		fi
	} > "$out/harness.log" 2>&1
	OUT="$out/reduce" bash test/gpu_host_reduce.sh > /dev/null 2>&1
	pg --conf gpuext.device=gpu --conf gpuext.sort_min_rows=0 -- bash -c "
		make -s installcheck > '$out/installcheck.txt' 2>&1
		tar czf '$out/regress.tgz' results \$(ls regression.out regression.diffs 2>/dev/null)"
	pg --conf gpuext.device=gpu -- env GPUEXT_TEST_DEVICE=gpu bash test/tap.sh > "$out/tap.txt" 2>&1
	{
		echo "== harness"; grep -E "passed, .* failed|ERROR SUMMARY|RACECHECK SUMMARY|^==" "$out/harness.log"
		grep -E "FAIL" "$out/harness.log" | head -20
		sed -n '/^== harness --only reduce/,/^== reduce_bench/p' "$out/reduce/summary.txt"
		grep -A14 "^bar" "$out/reduce/summary.txt"
		echo "== regression (gpuext.device = gpu, gpuext.sort_min_rows = 0)"
		grep -E "^test|tests (passed|failed)|of .* tests" "$out/installcheck.txt"
		echo "== TAP tests (gpuext.device = gpu)"
		grep -E "^\[|Failed test|cancel latency|concurrency|leak check|^Result" "$out/tap.txt"
	} | tee -a "$out/summary.txt"
fi
if [ "$part" = service ]; then
	preload=(--conf "shared_preload_libraries = 'gpuext'" --conf "gpuext.service_arena = '1GB'"
		--conf "max_connections = 200" --conf "max_worker_processes = 24" --conf "max_parallel_workers = 16")
	compute-sanitizer --tool memcheck $harness --quick > "$out/memcheck.log" 2>&1
	pg --conf gpuext.device=gpu --conf gpuext.sort_min_rows=0 -- bash -c "
		make -s installcheck > '$out/installcheck.txt' 2>&1"
	pg "${preload[@]}" --conf gpuext.device=gpu --conf gpuext.sort_min_rows=0 -- bash -c "
		make -s installcheck > '$out/installcheck_service.txt' 2>&1
		tar czf '$out/regress_service.tgz' results \$(ls regression.out regression.diffs 2>/dev/null)"
	pg -- env GPUEXT_TEST_DEVICE=gpu GPUEXT_TAP_DURATION=20 bash test/tap.sh > "$out/tap.txt" 2>&1
	pg "${preload[@]}" -- bash bench/service.sh > "$out/service_bench.txt" 2>&1
	cp bench/results/service.csv "$out/" 2>/dev/null
	{
		echo "== memcheck --quick"; grep -E "passed, .* failed|ERROR SUMMARY" "$out/memcheck.log"
		echo "== regression, GPU forced in each backend"; grep -E "tests (passed|failed)|of .* tests|FAILED" "$out/installcheck.txt"
		echo "== regression, GPU forced, through the service"; grep -E "tests (passed|failed)|of .* tests|FAILED" "$out/installcheck_service.txt"
		echo "== TAP tests (gpuext.device = gpu)"
		grep -E "^\[|Failed test|cancel latency|concurrency|leak check|GPU service pid|requests, peak|^Result" "$out/tap.txt"
		echo "== service benchmark"; grep -vE "^(DROP|CREATE|VACUUM|SELECT)" "$out/service_bench.txt" | tail -60
	} | tee -a "$out/summary.txt"
fi
if [ "$part" = suites ]; then
	pg --conf gpuext.device=gpu --conf gpuext.sort_min_rows=0 -- bash -c "
		make -s installcheck > '$out/installcheck.txt' 2>&1; cp regression.diffs '$out/' 2>/dev/null"
	pg --conf gpuext.device=gpu --conf gpuext.sort_min_rows=0 --conf "shared_preload_libraries = 'gpuext'" \
		--conf "gpuext.service_arena = '1GB'" -- bash -c "
		make -s installcheck > '$out/installcheck_service.txt' 2>&1
		cp regression.diffs '$out/regression_service.diffs' 2>/dev/null"
	{
		echo "== regression (gpuext.device = gpu, gpuext.sort_min_rows = 0), in each backend"
		grep -E "tests (passed|failed)|of .* tests|FAILED" "$out/installcheck.txt"
		echo "== the same through the service"; grep -E "tests (passed|failed)|of .* tests|FAILED" "$out/installcheck_service.txt"
	} | tee -a "$out/summary.txt"
fi
if [ "$part" = oracle ]; then
	compute-sanitizer --tool memcheck $harness --quick > "$out/memcheck.log" 2>&1
	OUT=$out/plain pg -- bash test/postgres_suite.sh run --existing .gpu/pgsuite "$out/plain" plain \
		> "$out/pgsuite.txt" 2>&1
	OUT=$out/forced pg --conf shared_preload_libraries=gpuext -- \
		bash test/postgres_suite.sh run --existing .gpu/pgsuite "$out/forced" forced >> "$out/pgsuite.txt" 2>&1
	bash test/postgres_suite.sh compare "$out/plain" "$out/forced" >> "$out/pgsuite.txt" 2>&1
	tar czf "$out/pgsuite.tgz" -C "$out" plain forced && rm -rf "$out/plain" "$out/forced"
	{
		echo "== memcheck --quick"; grep -E "passed, .* failed|ERROR SUMMARY" "$out/memcheck.log"
		echo "== PostgreSQL's regression suite, plain and forced"; cat "$out/pgsuite.txt"
	} | tee -a "$out/summary.txt"
fi
if [ "$part" = final ]; then
	pg -- bash -c "
		RUNS=\${RUNS:-1} bash bench/orderby.sh \${ROWS:-10000000} > '$out/orderby.txt' 2>&1
		SORT_MIN_ROWS=0 RUNS=3 OUT=/tmp bash bench/orderby.sh 20000 > '$out/orderby_20k.txt' 2>&1"
	{
		echo "== ORDER BY, 10M rows"; sed -n "/== configuration/,\$p" "$out/orderby.txt"
		echo "== ORDER BY, 20k rows, sort_min_rows = 0"; grep -A10 "case  " "$out/orderby_20k.txt"
	} | tee -a "$out/summary.txt"
elif [ "$part" = bench ]; then
	$harness --bench > "$out/kernel_bench.txt" 2>&1
	pg -- bash -c "
		psql -X -f bench/gpu_sort_crossover.sql > '$out/crossover.txt' 2>&1
		psql -X -f test/demo.sql > '$out/demo.txt' 2>&1
		RUNS=\${RUNS:-3} bash bench/orderby.sh \${ROWS:-10000000} > '$out/orderby.txt' 2>&1
		RUNS=\${RUNS:-3} OUT='$out' bash bench/agg.sh \${ROWS:-10000000} > '$out/agg.txt' 2>&1
		SORT_MIN_ROWS=0 RUNS=5 OUT=/tmp bash bench/orderby.sh 20000 > '$out/orderby_20k.txt' 2>&1"
	{
		echo "== kernel bench"; tail -60 "$out/kernel_bench.txt"
		echo "== gpu_sort end to end"; cat "$out/crossover.txt"
		echo "== ORDER BY, 10M rows"; cat "$out/orderby.txt"
		echo "== aggregates, 10M rows"; sed -n '/== median/,$p' "$out/agg.txt"
		echo "== ORDER BY, 20k rows, sort_min_rows = 0"; grep -A10 "case  " "$out/orderby_20k.txt"
	} | tee -a "$out/summary.txt"
fi
