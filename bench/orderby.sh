#!/bin/bash
# ORDER BY benchmark: the GpuSort plan node (gpuext.enable_sort = on) against PostgreSQL's own
# Sort (off), same session, same data.  Usage:
#   bash bench/orderby.sh [ROWS]        (ROWS default 10000000)
# The server comes from PGHOST/PGPORT/PGUSER/PGDATABASE; gpuext must be installable there
# (CREATE EXTENSION IF NOT EXISTS gpuext is run; without it both sides are PostgreSQL's Sort).
# Environment:
#   RUNS=5                timed runs per side (median reported), after one warm-up per side
#   GPUEXT_DEVICE=gpu     gpuext.device for the run (auto|gpu|cpu; gpu fails where no GPU can be used)
#   SORT_MIN_ROWS=        gpuext.sort_min_rows for the on-side (empty: the server's setting)
#   OUT=                  the CSV goes to $OUT/orderby.csv, else bench/results/orderby.csv
#   ONE_CONFIG=true       only PostgreSQL's default work_mem (4MB), not also 4GB
# Work and tables live in schema gpuext_bench (t with ROWS rows, small with 1,000; replaced each run).
# Timing is EXPLAIN ANALYZE's Execution Time: the whole plan runs and every row reaches the top
# node, but no row is sent to the client (bench/orderby.sql explains why).
set -euo pipefail
cd "$(dirname "$0")/.."

rows=${1:-10000000}
runs=${RUNS:-5}
device=${GPUEXT_DEVICE:-gpu}
min_rows=${SORT_MIN_ROWS:-}
outdir=${OUT:-$PWD/bench/results}
csv=$outdir/orderby.csv
case $rows in '' | *[!0-9]* | 0) echo "ROWS must be a positive integer, not '$rows'" >&2; exit 2 ;; esac
case $runs in '' | *[!0-9]* | 0) echo "RUNS must be a positive integer, not '$runs'" >&2; exit 2 ;; esac
case $device in auto | gpu | cpu) ;; *) echo "GPUEXT_DEVICE must be auto, gpu or cpu" >&2; exit 2 ;; esac
case $min_rows in *[!0-9]*) echo "SORT_MIN_ROWS must be a non-negative integer" >&2; exit 2 ;; esac
mkdir -p "$outdir"

psql_=(psql -X -v ON_ERROR_STOP=1)
echo "== server: $("${psql_[@]}" -Atc 'SELECT version()')"
if ! "${psql_[@]}" -q -c 'SET client_min_messages = warning' -c 'CREATE EXTENSION IF NOT EXISTS gpuext'; then
	echo "== WARNING: CREATE EXTENSION gpuext failed; timing PostgreSQL's Sort on both sides"
fi
echo "== gpuext $("${psql_[@]}" -Atc "SELECT coalesce((SELECT extversion FROM pg_extension WHERE extname = 'gpuext'), 'not installed')")," \
	"rows $rows, runs $runs, gpuext.device $device, gpuext.sort_min_rows ${min_rows:-(server setting)}"

"${psql_[@]}" -q -v rows="$rows" -v runs="$runs" -v device="$device" -v min_rows="$min_rows" \
	-v one_config="${ONE_CONFIG:-false}" \
	-f bench/orderby.sql

"${psql_[@]}" -Atc "COPY (SELECT work_mem, \"case\", rows, on_ms, off_ms, speedup, gpusort, query
                          FROM gpuext_bench.orderby_results ORDER BY work_mem DESC, ord) TO STDOUT WITH (FORMAT csv, HEADER)" > "$csv"
echo "== CSV: $csv"
