#!/bin/bash
# Two builds of gpuext on one server, phases alternating (A B A B ...), GpuAgg lines of bench/gpuagg.sh
# against PostgreSQL in each phase.  Usage:
#   bash bench/gpuagg_ab.sh A.so B.so
# The server comes from PGHOST/PGPORT/PGUSER/PGDATABASE and must preload gpuext; its gpuext.so is
# replaced by each build in turn and the server restarted with PGCTL_AS (a command prefix that runs
# pg_ctl as the server's owner, e.g. "su pgtest -s /bin/bash -c"; empty: run it directly).
# Environment: PHASES ("A B A B A B"), RUNS (5), SECS (5), ROWS (10000000), WORKERS (8), CLIENTS (128).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# = 2 ] && [ -f "$1" ] && [ -f "$2" ] || { echo "usage: bench/gpuagg_ab.sh A.so B.so" >&2; exit 2; }
so_a=$(realpath "$1") so_b=$(realpath "$2")
runs=${RUNS:-5} device=gpu workers=${WORKERS:-8} clients=${CLIENTS:-128} secs=${SECS:-5} rows=${ROWS:-10000000}
psql_=(psql -X -q -v ON_ERROR_STOP=1)
eval "$(sed -n '/^time_query() {/,/^}/p' bench/gpuagg.sh)"
eval "$(sed -n '/^clients_query() {/,/^}/p' bench/gpuagg.sh)"
eval "$(sed -n '/^make_tables() {/,/^}/p' bench/gpuagg.sh)"
make_tables
data=$(psql -Atc 'SHOW data_directory')
lib=$(pg_config --pkglibdir)
pgctl="$(command -v pg_ctl) -D $data -w -m fast restart -l $data.restart.log"
q5="SELECT sum(i4), sum(i8), avg(f8), min(i4), max(i8) FROM gpuext_bench.gagg"
for phase in ${PHASES:-A B A B A B}; do
	if [ "$phase" = A ]; then cp "$so_a" "$lib/gpuext.so"; else cp "$so_b" "$lib/gpuext.so"; fi
	if [ -n "${PGCTL_AS:-}" ]; then $PGCTL_AS "$pgctl" >/dev/null; else $pgctl >/dev/null; fi
	echo "=== $phase ($(md5sum < "$lib/gpuext.so" | cut -c1-8))"
	time_query "five aggregates, serial" 0 "$q5"
	time_query "sum(f8), serial" 0 "SELECT sum(f8) FROM gpuext_bench.gagg"
	time_query "GROUP BY 1,000 groups, serial" 0 "SELECT k1k, sum(f8), count(f8) FROM gpuext_bench.gagg GROUP BY 1"
	time_query "five aggregates, $workers workers" "$workers" "$q5"
	clients_query "five aggregates of 1,000,000 rows" "SELECT sum(i4), sum(i8), avg(f8), min(i4), max(i8) FROM gpuext_bench.gagg_1m"
done
