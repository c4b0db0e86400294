#!/bin/bash
# The benchmark suite: one command on the GPU host that runs the benchmarks and writes CSV files,
# PNG plots and the Markdown block of doc/performance.md into RESULTS_DIR.  Usage, from any directory:
#   bash bench/suite.sh [--parts LIST] RESULTS_DIR
# Parts (comma-separated; default kernels,e2e,reduce, about 4 minutes on an H100):
#   kernels  bench/sort_bench: every algorithm x key width x n = 2^10 .. 2^28 (and 2^k + 1), CUB's
#            radix and merge sorts, the D2D copy bound, input patterns, transfers, one CPU core
#   e2e      gpu_sort on arrays end to end against array_agg(x ORDER BY x) (bench/gpu_sort_crossover.sql)
#   reduce   bench/reduce_bench: gpuext_reduce beside a D2D copy and CUB, and the reduction ladder
#   orderby  bench/orderby.sh (ORDER BY through GpuSort at PostgreSQL's default work_mem and at a
#            large one, both sides alike; many minutes: run it as a call of its own, or one
#            configuration a call with CONFIGS=defaults, then CONFIGS=large)
#   agg      bench/agg.sh (aggregates against PostgreSQL's; minutes)
# A later call with other parts and the same RESULTS_DIR adds to it; the report covers every CSV
# there, each part with the GPU, driver, commit and date it was measured on (RESULTS_DIR/meta.csv).
# Environment:
#   QUICK=1          fewer sizes and runs (a smoke test, not a measurement)
#   CUDA_ARCH=90     architecture for building bench/sort_bench or bench/reduce_bench when missing
#                    (with nvcc present; binaries already there are used as they are)
#   COMMIT=          the commit measured, where there is no .git (else git, else .gpu/commit)
#   ROWS=10000000    rows for orderby and agg;  RUNS=3  their timed runs per side
#   CONFIGS=defaults,large   orderby's configurations (bench/orderby.sh)
#   PYTHON=          python3 for the report: the first of python3, /usr/bin/python3 that has matplotlib
#                    (Debian: python3-matplotlib) draws the plots; without it the report has tables only
#   E2E_DEVICE=gpu   gpuext.device for e2e (auto lets a machine without a GPU test the script)
# PostgreSQL parts use .gpu/with-postgres --stage .gpu/stage (doc/development.md) when it is there,
# else the server that PGHOST/PGPORT/PGUSER point at.  Each part has a time limit (KERNELS_TIMEOUT=300,
# E2E_TIMEOUT=180, REDUCE_TIMEOUT=60, ORDERBY_TIMEOUT=1500, AGG_TIMEOUT=500 seconds): CSV rows are
# written as they are measured, so a part cut short still reports what it measured, marked so.
# Then: python3 bench/splice_doc.py RESULTS_DIR puts the figures into doc/performance.md.
set -uo pipefail

parts=kernels,e2e,reduce
while [[ $# -gt 1 ]]; do
	case $1 in
		--parts) parts=$2; shift 2 ;;
		*) break ;;
	esac
done
[[ $# -eq 1 ]] || { sed -n '2,9p' "$0" >&2; exit 2; }
mkdir -p "$1" || exit 2
out=$(cd "$1" && pwd)
cd "$(dirname "$0")/.."
quick=${QUICK:-0}
has_part() { [[ ,$parts, == *,$1,* ]]; }
log() { echo "== $(date -u +%H:%M:%S) $*"; }
for p in ${parts//,/ }; do
	case $p in kernels | e2e | reduce | orderby | agg) ;; *) echo "unknown part '$p'" >&2; exit 2 ;; esac
done

# Run the PostgreSQL parts inside the server that with-postgres started (see the end of this file).
if [[ ${SUITE_IN_POSTGRES:-} == 1 ]]; then
	rc=0
	if has_part e2e; then
		if [[ $quick == 1 ]]; then types='{int4,float8}' sizes='{1024,16384,262144}' reps=3
		else types='{int4,int8,float8}' sizes='{1024,4096,16384,65536,262144,1048576,4194304}' reps=5; fi
		log "e2e: gpu_sort against array_agg(x ORDER BY x), $types, $sizes, median of $reps"
		timeout "${E2E_TIMEOUT:-180}" psql -X -q --csv -v table_only=1 -v types="$types" -v sizes="$sizes" \
			-v reps="$reps" -v device="${E2E_DEVICE:-gpu}" -f bench/gpu_sort_crossover.sql -o "$out/e2e.csv" 2> "$out/e2e.log"
		echo "e2e,$?" >> "$out/.rc"
	fi
	if has_part orderby; then
		log "orderby: ${ROWS:-10000000} rows, RUNS=${RUNS:-3}, CONFIGS=${CONFIGS:-defaults,large}"
		OUT=$out RUNS=${RUNS:-3} CONFIGS=${CONFIGS:-defaults,large} timeout "${ORDERBY_TIMEOUT:-1500}" \
			bash bench/orderby.sh "${ROWS:-10000000}" > "$out/orderby.txt" 2>&1
		echo "orderby,$?" >> "$out/.rc"
	fi
	if has_part agg; then
		log "agg: ${ROWS:-10000000} rows, RUNS=${RUNS:-3}"
		OUT=$out RUNS=${RUNS:-3} timeout "${AGG_TIMEOUT:-500}" bash bench/agg.sh "${ROWS:-10000000}" \
			> "$out/agg.txt" 2>&1
		echo "agg,$?" >> "$out/.rc"
	fi
	exit $rc
fi

# What is measured where: GPU, driver, commit, date.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
commit=${COMMIT:-}
if [[ -z $commit ]] && commit=$(git rev-parse --short HEAD 2>/dev/null); then
	[[ -n $(git status --porcelain --untracked-files=no 2>/dev/null) ]] && commit+="-dirty"
fi
[[ -z $commit && -f .gpu/commit ]] && commit=$(head -c 40 .gpu/commit)
date=$(date -u +%Y-%m-%d)
log "parts $parts into $out; GPU ${gpu:-unknown}, driver ${driver:-unknown}, commit ${commit:-unknown}, QUICK=$quick"
[[ -f $out/meta.csv ]] || echo "part,gpu,driver,commit,date,quick,rc" > "$out/meta.csv"
rm -f "$out/.rc"

# Binaries: built here only when missing.
build() {
	[[ -x $1 ]] && return 0
	if [[ -x ${CUDA_HOME:-/usr/local/cuda}/bin/nvcc ]] || command -v nvcc > /dev/null; then
		log "building $1 (make CUDA_ARCH=${CUDA_ARCH:-90} $2)"
		make -s CUDA_ARCH="${CUDA_ARCH:-90}" "$2" > "$out/build.log" 2>&1 || { tail -20 "$out/build.log"; return 1; }
	else
		echo "missing $1 and no nvcc to build it: make CUDA_ARCH=90 $2 and carry it" >&2
		return 1
	fi
}

if has_part kernels; then
	sed -n '/auto_table\[\] = {/,/^};/p' src/array_sort.c > "$out/auto_table.txt"
	if build bench/sort_bench bench-sort; then
		log "kernels: bench/sort_bench$([[ $quick == 1 ]] && echo " --quick")"
		timeout "${KERNELS_TIMEOUT:-300}" bench/sort_bench $([[ $quick == 1 ]] && echo --quick) --shapes \
			--csv "$out/sort_bench.csv" --meta "$out/sort_meta.csv" > "$out/sort_bench.txt" 2>&1
		echo "kernels,$?" >> "$out/.rc"
	else
		echo "kernels,127" >> "$out/.rc"
	fi
fi
if has_part reduce; then
	if build bench/reduce_bench bench-reduce; then
		log "reduce: bench/reduce_bench"
		timeout "${REDUCE_TIMEOUT:-60}" bench/reduce_bench $([[ $quick == 1 ]] && echo --quick) \
			> "$out/reduce_bench.txt" 2>&1
		echo "reduce,$?" >> "$out/.rc"
	else
		echo "reduce,127" >> "$out/.rc"
	fi
fi
sql_parts=$(echo "$parts" | tr ',' '\n' | grep -xE 'e2e|orderby|agg' | paste -sd, -)
if [[ -n $sql_parts ]]; then
	if [[ -x .gpu/with-postgres || -f .gpu/with-postgres ]]; then
		SUITE_IN_POSTGRES=1 bash .gpu/with-postgres --stage .gpu/stage -- bash bench/suite.sh --parts "$sql_parts" "$out"
	else
		SUITE_IN_POSTGRES=1 bash bench/suite.sh --parts "$sql_parts" "$out"
	fi
	for p in ${sql_parts//,/ }; do grep -q "^$p," "$out/.rc" 2>/dev/null || echo "$p,2" >> "$out/.rc"; done
fi
while IFS=, read -r p rc; do
	echo "$p,\"$gpu\",$driver,$commit,$date,$quick,$rc" >> "$out/meta.csv"
	[[ $rc == 0 ]] || log "part $p ended with status $rc$([[ $rc == 124 ]] && echo ' (time limit)')"
done < "$out/.rc"
rm -f "$out/.rc"

python=${PYTHON:-}
if [[ -z $python ]]; then
	for p in "$(command -v python3)" /usr/bin/python3; do
		[[ -x $p ]] && "$p" -c 'import matplotlib' 2>/dev/null && { python=$p; break; }
	done
	python=${python:-python3}
fi
log "report: $python bench/report.py $out"
"$python" bench/report.py "$out" &&
	log "done: $out/figures.md; python3 bench/splice_doc.py $out puts it into doc/performance.md"
