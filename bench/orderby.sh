#!/bin/bash
# ORDER BY benchmark: the GpuSort plan node (gpuext.enable_sort = on) against PostgreSQL's own
# Sort (off), same session, same data, the same memory on both sides.  Usage:
#   bash bench/orderby.sh [ROWS]        (ROWS default 10000000)
# The server comes from PGHOST/PGPORT/PGUSER/PGDATABASE; gpuext must be installable there
# (CREATE EXTENSION IF NOT EXISTS gpuext is run; without it both sides are PostgreSQL's Sort).
# Configurations (both sides get the same work_mem; gpuext.sort_work_mem stays -1, which follows it):
#   defaults   work_mem = 4MB, PostgreSQL's default
#   large      work_mem = $LARGE_WORK_MEM (4GB), enough for either side to sort 10M rows in memory
# Environment:
#   CONFIGS=defaults,large   which configurations to run, in that order
#   LARGE_WORK_MEM=4GB       work_mem of the large configuration
#   RUNS=5                   timed runs per side (median reported), after one warm-up per side
#   GPUEXT_DEVICE=gpu        gpuext.device for the run (auto|gpu|cpu; gpu fails where no GPU can be used)
#   SORT_MIN_ROWS=           gpuext.sort_min_rows for the on-side (empty: the server's setting)
#   OUT=                     the CSV goes to $OUT/orderby.csv, else bench/results/orderby.csv
# Tables live in schema gpuext_bench (t with ROWS rows, small with 1,000); t is kept when it already
# has ROWS rows, so that configurations run in separate calls time the same data.  Results of a
# configuration replace that configuration's earlier ones, in the database and in the CSV, which
# keeps the other configuration's rows from an earlier call.
# Two timings (bench/orderby.sql says more): "explain", EXPLAIN ANALYZE's Execution Time (the whole
# plan runs, no row is sent to the client); "copy", psql's \copy (query) to '/dev/null' between
# two clock_timestamp() reads (every row converted to text and sent to psql: what a client sees).
set -euo pipefail
cd "$(dirname "$0")/.."

rows=${1:-10000000}
runs=${RUNS:-5}
device=${GPUEXT_DEVICE:-gpu}
min_rows=${SORT_MIN_ROWS:-}
configs=${CONFIGS:-defaults,large}
large_mem=${LARGE_WORK_MEM:-4GB}
outdir=${OUT:-$PWD/bench/results}
csv=$outdir/orderby.csv
case $rows in '' | *[!0-9]* | 0) echo "ROWS must be a positive integer, not '$rows'" >&2; exit 2 ;; esac
case $runs in '' | *[!0-9]* | 0) echo "RUNS must be a positive integer, not '$runs'" >&2; exit 2 ;; esac
case $device in auto | gpu | cpu) ;; *) echo "GPUEXT_DEVICE must be auto, gpu or cpu" >&2; exit 2 ;; esac
case $min_rows in *[!0-9]*) echo "SORT_MIN_ROWS must be a non-negative integer" >&2; exit 2 ;; esac
for c in ${configs//,/ }; do
	case $c in defaults | large) ;; *) echo "CONFIGS: unknown configuration '$c' (defaults, large)" >&2; exit 2 ;; esac
done
mkdir -p "$outdir"

psql_=(psql -X -v ON_ERROR_STOP=1)
echo "== server: $("${psql_[@]}" -Atc 'SELECT version()')"
if ! "${psql_[@]}" -q -c 'SET client_min_messages = warning' -c 'CREATE EXTENSION IF NOT EXISTS gpuext'; then
	echo "== WARNING: CREATE EXTENSION gpuext failed; timing PostgreSQL's Sort on both sides"
fi
echo "== gpuext $("${psql_[@]}" -Atc "SELECT coalesce((SELECT extversion FROM pg_extension WHERE extname = 'gpuext'), 'not installed')")," \
	"rows $rows, runs $runs, gpuext.device $device, gpuext.sort_min_rows ${min_rows:-(server setting)}," \
	"configurations $configs"

"${psql_[@]}" -q -v rows="$rows" -v runs="$runs" -v device="$device" -v min_rows="$min_rows" \
	-v run_defaults="$([[ ,$configs, == *,defaults,* ]] && echo true || echo false)" \
	-v run_large="$([[ ,$configs, == *,large,* ]] && echo true || echo false)" \
	-v large_mem="$large_mem" -f bench/orderby.sql

new=$(mktemp)
"${psql_[@]}" -Atc "COPY (SELECT config, work_mem, sort_work_mem, \"case\", timing, rows, on_ms, off_ms, speedup, gpusort, query
                          FROM gpuext_bench.orderby_results ORDER BY config_ord, ord) TO STDOUT WITH (FORMAT csv, HEADER)" > "$new"
# Rows of the configurations not run now are kept from an earlier CSV of the same columns (an
# earlier call may have run them on another server, as bench/suite.sh's calls each start one).
if [[ -f $csv && $(head -1 "$csv") == "$(head -1 "$new")" ]]; then
	{
		head -1 "$new"
		for c in defaults large; do
			if [[ ,$configs, == *,$c,* ]]; then grep "^$c," "$new" || true; else grep "^$c," "$csv" || true; fi
		done
	} > "$new.all"
	mv "$new.all" "$new"
fi
mv "$new" "$csv"
echo "== CSV: $csv"
