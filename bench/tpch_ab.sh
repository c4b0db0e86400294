#!/bin/bash
# Builds of gpuext on one server, each in turn, on bench/tpch.sh's tables: per build and query the
# median of RUNS timed EXPLAIN ANALYZE executions after a warm-up, in one session per query, with
# the last run's Stage Timing; then PostgreSQL's own plans.  Usage:
#   bash bench/tpch_ab.sh ROWS NAME=BUILD.so[:SETTING=VALUE,...]...
# (settings after the build: SET in each of its sessions, e.g. gpuext.device_scan_whole_pages=off,
# so that one build can be measured against itself with a setting changed)
# The server comes from PGHOST/PGPORT/PGUSER/PGDATABASE and must preload gpuext; its gpuext.so is
# replaced by each build and the server restarted with PGCTL_AS (a command prefix that runs pg_ctl
# as the server's owner, e.g. "su pgtest -s /bin/bash -c"; empty: run it directly).  CPUS: CPUs to
# pin each session's backend to (taskset), each build once per CPU; empty: not pinned.  POSTGRES=0
# leaves out PostgreSQL's own plans (builds against each other only).  QUERIES: a comma-separated
# subset of q6f five q6n g1k q1f q1n q18sub (default all but q18sub).  A backend's
# per-page cost can move between processes on one host; pinning keeps builds comparable.
set -uo pipefail
cd "$(dirname "$0")/.."
rows=$1
shift
runs=${RUNS:-7}
QUERIES=${QUERIES:-q6f,five,q6n,g1k,q1f,q1n}
lib=$(pg_config --pkglibdir)
data=$(psql -X -Atc 'SHOW data_directory')
pgctl="$(command -v pg_ctl) -D $data -w -m fast restart -l $data.restart.log"
# Put build $1 in place and restart the server.
use() {
	cp "$1" "$lib/gpuext.so"
	if [ -n "${PGCTL_AS:-}" ]; then $PGCTL_AS "$pgctl" >/dev/null; else $pgctl >/dev/null; fi
	psql -X -q -c "SELECT pg_prewarm('gpuext_tpch.lineitem_f8'), pg_prewarm('gpuext_tpch.lineitem')" >/dev/null
}
# The queries as bench/tpch.sh writes them, over the schema-qualified tables.
eval "$(sed -n -e '/^q1() {/,/^}/p' -e '/^q6() {/,/^}/p' -e '/^five=/p' -e '/^per_group=/p' bench/tpch.sh)"
declare -A sql
sql[q6f]=$(q6 gpuext_tpch.lineitem_f8)
sql[q6n]=$(q6 gpuext_tpch.lineitem)
sql[five]="select $five from gpuext_tpch.lineitem_f8"
sql[g1k]="select l_partkey % 1000, $per_group from gpuext_tpch.lineitem_f8 group by 1"
sql[q1f]=$(q1 gpuext_tpch.lineitem_f8)
sql[q1n]=$(q1 gpuext_tpch.lineitem)
sql[q18sub]="select l_orderkey from gpuext_tpch.lineitem group by l_orderkey having sum(l_quantity) > 300"
# Each query in a session of its own (pinned to $cpu where set): label, gpuext.enable_agg, runs, settings.
time_all() {
	local out
	out=$(mktemp)
	for q in ${QUERIES//,/ }; do
		{
			echo "SELECT pg_backend_pid() AS bpid \\gset"
			echo "\\setenv BPID :bpid"
			[ -n "$cpu" ] && echo "\\! taskset -pc $cpu \$BPID >/dev/null"
			echo "SET max_parallel_workers_per_gather = 0; LOAD 'gpuext'; SET gpuext.device = gpu; SET gpuext.enable_agg = $2;"
			[ -n "${4:-}" ] && echo "SET ${4//,/; SET };"
			for _ in $(seq 0 "$3"); do echo "EXPLAIN (ANALYZE) ${sql[$q]};"; done
			echo "EXPLAIN (ANALYZE, VERBOSE) ${sql[$q]};"
		} | psql -X -q >"$out" 2>&1
		times=$(grep -o "Execution Time: [0-9.]*" "$out" | sed -n "2,$(($3 + 1))p" | awk '{print $3}')
		med=$(sort -n <<<"$times" | awk '{a[NR] = $1} END {print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)}')
		echo "$1 $q: median $med ms  [$(tr '\n' ' ' <<<"$times")] $(grep -o "Stage Timing.*" "$out" | tail -1)"
		grep -m1 ERROR "$out"
	done
	rm -f "$out"
}
psql -X -q -c "CREATE EXTENSION IF NOT EXISTS gpuext" -c "CREATE EXTENSION IF NOT EXISTS pg_prewarm"
start=$SECONDS
# the tables of bench/tpch.sh, made again only where they do not hold ROWS rows (or REBUILD=1)
note=$(psql -X -Atc "SELECT obj_description(to_regclass('gpuext_tpch.lineitem_f8'), 'pg_class')")
if [ "${REBUILD:-0}" = 1 ] || [ "$note" != "bench/tpch_data.sql, $rows rows" ]; then
	psql -X -q -v rows="$rows" -f bench/tpch_data.sql >/dev/null
fi
echo "== bench/tpch_ab.sh: $(psql -X -Atc 'SELECT version()' | sed 's/ on .*//'); $(date -u '+%Y-%m-%d %H:%M UTC'); rows $rows; tables made in $((SECONDS - start)) s"
for cpu in ${CPUS:-""}; do
	for build in "$@"; do
		spec=${build#*=}
		use "${spec%%:*}"
		time_all "${build%%=*}${cpu:+@cpu$cpu}" on "$runs" "$([ "$spec" = "${spec%%:*}" ] || echo "${spec#*:}")"
	done
done
cpu=${cpu:-}
[ "${POSTGRES:-1}" = 0 ] || time_all postgres off 3
