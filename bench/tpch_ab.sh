#!/bin/bash
# Builds of gpuext on one server, each in turn, on bench/tpch.sh's tables: per build and query the
# median of RUNS timed EXPLAIN ANALYZE executions after a warm-up, in one session per query, with
# the last run's Stage Timing; then PostgreSQL's own plans.  Usage:
#   bash bench/tpch_ab.sh ROWS NAME=BUILD.so...
# The server comes from PGHOST/PGPORT/PGUSER/PGDATABASE and must preload gpuext; its gpuext.so is
# replaced by each build and the server restarted with PGCTL_AS (a command prefix that runs pg_ctl
# as the server's owner, e.g. "su pgtest -s /bin/bash -c"; empty: run it directly).  CPUS: CPUs to
# pin each session's backend to (taskset), each build once per CPU; empty: not pinned.  A backend's
# per-page cost can move between processes on one host; pinning keeps builds comparable.
set -uo pipefail
cd "$(dirname "$0")/.."
rows=$1
shift
runs=${RUNS:-7}
lib=$(pg_config --pkglibdir)
data=$(psql -X -Atc 'SHOW data_directory')
pgctl="$(command -v pg_ctl) -D $data -w -m fast restart -l $data.restart.log"
# Put build $1 in place and restart the server.
use() {
	cp "$1" "$lib/gpuext.so"
	if [ -n "${PGCTL_AS:-}" ]; then $PGCTL_AS "$pgctl" >/dev/null; else $pgctl >/dev/null; fi
	psql -X -q -c "SELECT pg_prewarm('gpuext_tpch.lineitem_f8'), pg_prewarm('gpuext_tpch.lineitem')" >/dev/null
}
declare -A sql
q6() {
	echo "select sum(l_extendedprice * l_discount) as revenue from $1 where l_shipdate >= date '1994-01-01'" \
		"and l_shipdate < date '1994-01-01' + interval '1' year and l_discount between 0.06 - 0.01 and 0.06 + 0.01" \
		"and l_quantity < 24"
}
sql[q6f]=$(q6 gpuext_tpch.lineitem_f8)
sql[q6n]=$(q6 gpuext_tpch.lineitem)
sql[five]="select sum(l_partkey), sum(l_orderkey), avg(l_extendedprice), min(l_suppkey), max(l_orderkey) from gpuext_tpch.lineitem_f8"
sql[g1k]="select l_partkey % 1000, sum(l_extendedprice), avg(l_quantity), count(*) from gpuext_tpch.lineitem_f8 group by 1"
sql[q1f]="select l_returnflag, l_linestatus, sum(l_quantity) as sum_qty, sum(l_extendedprice) as sum_base_price,\
 sum(l_extendedprice * (1 - l_discount)) as sum_disc_price, sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge,\
 avg(l_quantity) as avg_qty, avg(l_extendedprice) as avg_price, avg(l_discount) as avg_disc, count(*) as count_order\
 from gpuext_tpch.lineitem_f8 where l_shipdate <= date '1998-12-01' - interval '90' day\
 group by l_returnflag, l_linestatus order by l_returnflag, l_linestatus"
# Each query in a session of its own (pinned to $cpu where set): label, gpuext.enable_agg, runs.
time_all() {
	local out
	out=$(mktemp)
	for q in q6f five q6n g1k q1f; do
		{
			echo "SELECT pg_backend_pid() AS bpid \\gset"
			echo "\\setenv BPID :bpid"
			[ -n "$cpu" ] && echo "\\! taskset -pc $cpu \$BPID >/dev/null"
			echo "SET max_parallel_workers_per_gather = 0; LOAD 'gpuext'; SET gpuext.device = gpu; SET gpuext.enable_agg = $2;"
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
psql -X -q -v rows="$rows" -f bench/tpch_data.sql >/dev/null
echo "== bench/tpch_ab.sh: $(psql -X -Atc 'SELECT version()' | sed 's/ on .*//'); $(date -u '+%Y-%m-%d %H:%M UTC'); rows $rows; tables made in $((SECONDS - start)) s"
for cpu in ${CPUS:-""}; do
	for build in "$@"; do
		use "${build#*=}"
		time_all "${build%%=*}${cpu:+@cpu$cpu}" on "$runs"
	done
done
cpu=${cpu:-}
time_all postgres off 3
