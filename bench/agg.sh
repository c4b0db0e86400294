#!/bin/bash
# Aggregate benchmark: gpu_sum/avg/min/max/count over arrays and columns and gpu_query_agg against
# PostgreSQL's own, same session, same data.  Usage:
#   bash bench/agg.sh [ROWS]            (ROWS default 10000000)
# The server comes from PGHOST/PGPORT/PGUSER/PGDATABASE; gpuext must be installable there.
# Environment:
#   RUNS=5                timed runs per side (median reported), after one warm-up per side
#   GPUEXT_DEVICE=gpu     gpuext.device for the run (auto|gpu|cpu; gpu fails where no GPU can be used)
#   OUT=                  the CSV goes to $OUT/agg.csv, else bench/results/agg.csv
# Tables live in schema gpuext_bench (agg_t with ROWS rows, agg_arr with four ROWS-element arrays;
# replaced each run).  bench/agg.sql says how queries are timed and what the bars are.
set -euo pipefail
cd "$(dirname "$0")/.."

rows=${1:-10000000}
runs=${RUNS:-5}
device=${GPUEXT_DEVICE:-gpu}
outdir=${OUT:-$PWD/bench/results}
csv=$outdir/agg.csv
case $rows in '' | *[!0-9]* | 0) echo "ROWS must be a positive integer, not '$rows'" >&2; exit 2 ;; esac
case $runs in '' | *[!0-9]* | 0) echo "RUNS must be a positive integer, not '$runs'" >&2; exit 2 ;; esac
case $device in auto | gpu | cpu) ;; *) echo "GPUEXT_DEVICE must be auto, gpu or cpu" >&2; exit 2 ;; esac
mkdir -p "$outdir"

psql_=(psql -X -v ON_ERROR_STOP=1)
echo "== server: $("${psql_[@]}" -Atc 'SELECT version()')"
"${psql_[@]}" -q -c 'SET client_min_messages = warning' -c 'CREATE EXTENSION IF NOT EXISTS gpuext'
echo "== gpuext $("${psql_[@]}" -Atc "SELECT extversion FROM pg_extension WHERE extname = 'gpuext'")," \
	"rows $rows, runs $runs, gpuext.device $device"

"${psql_[@]}" -q -v rows="$rows" -v runs="$runs" -v device="$device" -f bench/agg.sql

"${psql_[@]}" -Atc "COPY (SELECT kind, name, rows, gpuext_ms, postgres_ms, ratio, bar, pass
                          FROM gpuext_bench.agg_results ORDER BY ord) TO STDOUT WITH (FORMAT csv, HEADER)" > "$csv"
echo "== CSV: $csv"
