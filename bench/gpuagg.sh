#!/bin/bash
# Custom Scan (GpuAgg) against PostgreSQL's own aggregate plans, same session, same data.  Usage:
#   bash bench/gpuagg.sh [ROWS]          (ROWS default 10000000)
# The server comes from PGHOST/PGPORT/PGUSER/PGDATABASE; gpuext must be installable there and its
# library loaded by the session (it is LOADed here).  Environment:
#   RUNS=5               timed runs per side (median of EXPLAIN ANALYZE's Execution Time), after a warm-up
#   GPUEXT_DEVICE=gpu    gpuext.device for the run
#   WORKERS=8            max_parallel_workers_per_gather of the parallel lines
# Each line: the query, the plan's top node on each side, the medians and PostgreSQL / GpuAgg.  The
# serial lines set max_parallel_workers_per_gather = 0 on both sides; the parallel lines let the
# planner choose with gpuext.enable_agg on (GpuAgg or PostgreSQL's parallel plan) against off.
set -euo pipefail

rows=${1:-10000000}
runs=${RUNS:-5}
device=${GPUEXT_DEVICE:-gpu}
workers=${WORKERS:-8}
case $rows in '' | *[!0-9]* | 0) echo "ROWS must be a positive integer, not '$rows'" >&2; exit 2 ;; esac
case $runs in '' | *[!0-9]* | 0) echo "RUNS must be a positive integer, not '$runs'" >&2; exit 2 ;; esac

psql_=(psql -X -q -v ON_ERROR_STOP=1)
echo "== server: $("${psql_[@]}" -Atc 'SELECT version()'); rows $rows, runs $runs, gpuext.device $device"
"${psql_[@]}" <<EOF
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpuext;
CREATE SCHEMA IF NOT EXISTS gpuext_bench;
DROP TABLE IF EXISTS gpuext_bench.gagg, gpuext_bench.gagg_small;
CREATE TABLE gpuext_bench.gagg AS SELECT i AS id, (i % 100000)::int4 AS i4, i::int8 * 3 AS i8,
  (i % 1000) / 7.0::float8 AS f8, (i % 50) / 100.0::float8 AS disc, (i % 9) / 100.0::float8 AS tax
FROM generate_series(1, $rows) i;
CREATE TABLE gpuext_bench.gagg_small AS SELECT * FROM gpuext_bench.gagg LIMIT 1000;
VACUUM ANALYZE gpuext_bench.gagg, gpuext_bench.gagg_small;
EOF

# time NAME WORKERS QUERY: medians with gpuext.enable_agg on and off, and each side's top plan node.
time_query() {
	local name=$1 w=$2 q=$3 side out
	out=$name
	for side in on off; do
		out+=$("${psql_[@]}" -At <<EOF
LOAD 'gpuext';
SET gpuext.device = $device;
SET max_parallel_workers_per_gather = $w;
SET gpuext.enable_agg = $side;
CREATE TEMP TABLE t (ms float8, node text);
DO \$\$
DECLARE
  plan json;
BEGIN
  FOR i IN 0 .. $runs LOOP
    EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) $q' INTO plan;
    IF i > 0 THEN
      INSERT INTO t VALUES ((plan->0->>'Execution Time')::float8,
        coalesce(plan->0->'Plan'->>'Custom Plan Provider', plan->0->'Plan'->>'Node Type'));
    END IF;
  END LOOP;
END \$\$;
SELECT format(' | %s: %s %s ms', '$side', min(node),
  round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 1)) FROM t;
EOF
)
	done
	echo "$out"
}

q5="SELECT sum(i4), sum(i8), avg(f8), min(i4), max(i8) FROM gpuext_bench.gagg"
qf="SELECT sum(f8) FROM gpuext_bench.gagg"
qw="SELECT sum(f8), avg(f8 * (1 - disc)), sum(f8 * (1 - disc) * (1 + tax)), avg(disc), count(*) FROM gpuext_bench.gagg WHERE id % 10 < 9"
qs="SELECT sum(i4), sum(i8), avg(f8), min(i4), max(i8) FROM gpuext_bench.gagg_small"
time_query "five aggregates, serial" 0 "$q5"
time_query "sum(f8), serial" 0 "$qf"
time_query "WHERE and expressions, serial" 0 "$qw"
time_query "five aggregates, $workers workers" "$workers" "$q5"
time_query "WHERE and expressions, $workers workers" "$workers" "$qw"
time_query "1,000 rows" 0 "$qs"
