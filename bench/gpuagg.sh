#!/bin/bash
# Custom Scan (GpuAgg) against PostgreSQL's own aggregate plans, same session, same data.  Usage:
#   bash bench/gpuagg.sh [ROWS]          (ROWS default 10000000)
# The server comes from PGHOST/PGPORT/PGUSER/PGDATABASE; gpuext must be installable there and its
# library loaded by the session (it is LOADed here).  Environment:
#   RUNS=5               timed runs per side, alternating (median of EXPLAIN ANALYZE's Planning plus Execution Time), after a warm-up pair
#   GPUEXT_DEVICE=gpu    gpuext.device for the run
#   WORKERS=8            max_parallel_workers_per_gather of the parallel lines
#   BIG_WORK_MEM=1GB     work_mem of the lines marked "work_mem <BIG_WORK_MEM>" (both sides); the
#                        others run at the server's settings (PostgreSQL's defaults on a fresh one)
#   CLIENTS=128          clients of the pgbench lines (the server's max_connections must allow them)
#   SECS=10              seconds of each pgbench side
# Each line: the query, the plan's top nodes on each side, the medians and PostgreSQL / GpuAgg.  The
# serial lines set max_parallel_workers_per_gather = 0 on both sides; the parallel lines let the
# planner choose with gpuext.enable_agg on (GpuAgg or PostgreSQL's parallel plan) against off.
# GROUP BY lines: 1,000 and 1,000,000 groups of an integer column, and a TPC-H Q1-shaped query (two
# one-letter text keys, a date WHERE, sums and averages of double precision columns), and the same
# over numeric(15,2) columns.  Clients lines: CLIENTS pgbench clients each running a GROUP BY over a
# 1,000,000-row table for SECS seconds, enable_agg on against off (transactions per second).
set -euo pipefail

rows=${1:-10000000}
runs=${RUNS:-5}
device=${GPUEXT_DEVICE:-gpu}
workers=${WORKERS:-8}
big_work_mem=${BIG_WORK_MEM:-1GB}
clients=${CLIENTS:-128}
secs=${SECS:-10}
case $rows in '' | *[!0-9]* | 0) echo "ROWS must be a positive integer, not '$rows'" >&2; exit 2 ;; esac
case $runs in '' | *[!0-9]* | 0) echo "RUNS must be a positive integer, not '$runs'" >&2; exit 2 ;; esac

psql_=(psql -X -q -v ON_ERROR_STOP=1)
echo "== server: $("${psql_[@]}" -Atc 'SELECT version()'); rows $rows, runs $runs, gpuext.device $device"
# make_tables: the tables of every line, ROWS rows (bench/gpuagg_ab.sh uses it too).
make_tables() {
"${psql_[@]}" <<EOF
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpuext;
CREATE SCHEMA IF NOT EXISTS gpuext_bench;
DROP TABLE IF EXISTS gpuext_bench.gagg, gpuext_bench.gagg_small;
CREATE TABLE gpuext_bench.gagg AS SELECT i AS id, (i % 100000)::int4 AS i4, i::int8 * 3 AS i8,
  (i % 1000) / 7.0::float8 AS f8, (i % 50) / 100.0::float8 AS disc, (i % 9) / 100.0::float8 AS tax,
  chr(65 + i % 3) AS rf, chr(70 + (i / 3) % 2) AS ls, DATE '1992-01-01' + (i::int8 * 7919 % 2500)::int AS ship,
  (i % 50 + 1)::float8 AS qty, (i * 7 % 1000)::int4 AS k1k, (i::int8 * 7 % 1000000)::int4 AS k1m
FROM generate_series(1, $rows) i;
CREATE TABLE gpuext_bench.gagg_small AS SELECT * FROM gpuext_bench.gagg LIMIT 1000;
DROP TABLE IF EXISTS gpuext_bench.gagg_num, gpuext_bench.gagg_1m;
CREATE TABLE gpuext_bench.gagg_num AS SELECT rf, ls, ship, qty::numeric(15,2) AS qty,
  round(f8::numeric, 2)::numeric(15,2) AS price, disc::numeric(15,2) AS disc, tax::numeric(15,2) AS tax
FROM gpuext_bench.gagg;
CREATE TABLE gpuext_bench.gagg_1m AS SELECT * FROM gpuext_bench.gagg LIMIT 1000000;
VACUUM ANALYZE gpuext_bench.gagg, gpuext_bench.gagg_small, gpuext_bench.gagg_num, gpuext_bench.gagg_1m;
EOF
}
make_tables

# time NAME WORKERS QUERY [WORK_MEM [PAIRS]]: one session running QUERY with gpuext.enable_agg on and
# off in turn (a warm-up pair, then PAIRS pairs, RUNS by default), so that drift in the machine falls on both sides:
# each side's top plan nodes and median, and off / on; then, from one more run with timing,
# GpuAgg's own split of its time (Stage Timing: scanning rows on the CPU, and device calls).
time_query() {
	local name=$1 w=$2 q=$3 mem=${4:-} pairs=${5:-$runs}
	"${psql_[@]}" -At <<EOF
LOAD 'gpuext';
SET gpuext.device = $device;
SET max_parallel_workers_per_gather = $w;
${mem:+SET work_mem = '$mem';}
CREATE TEMP TABLE t (side text, ms float8, node text);
CREATE TEMP TABLE stage (scan_ms float8, device_ms float8);
DO \$\$
DECLARE
  plan json;
  side text;
  timing jsonb;
BEGIN
  FOR i IN 0 .. $pairs LOOP
    FOREACH side IN ARRAY ARRAY['on', 'off'] LOOP
      PERFORM set_config('gpuext.enable_agg', side, false);
      EXECUTE 'EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) $q' INTO plan;
      IF i > 0 THEN
        INSERT INTO t VALUES (side, (plan->0->>'Planning Time')::float8 + (plan->0->>'Execution Time')::float8,
          coalesce(plan->0->'Plan'->>'Custom Plan Provider', plan->0->'Plan'->>'Node Type') ||
          coalesce('/' || (SELECT coalesce(p->>'Custom Plan Provider', p->>'Node Type')
                           FROM json_array_elements(plan->0->'Plan'->'Plans') p LIMIT 1), ''));
      END IF;
    END LOOP;
  END LOOP;
  PERFORM set_config('gpuext.enable_agg', 'on', false);
  EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON) $q' INTO plan;
  timing := jsonb_path_query_first(plan::jsonb, 'strict \$.**."Stage Timing"');
  IF timing IS NOT NULL THEN
    INSERT INTO stage VALUES ((timing->>'Scan')::float8, (timing->>'Device')::float8);
  END IF;
END \$\$;
WITH m AS (SELECT side, min(node) AS node, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS ms FROM t GROUP BY side)
SELECT format('%s | on: %s %s ms | off: %s %s ms | ratio %s%s', '$name${mem:+, work_mem $mem}',
  a.node, round(a.ms::numeric, 1), b.node, round(b.ms::numeric, 1), round((b.ms / a.ms)::numeric, 2),
  (SELECT format(' | GpuAgg stages: scan %s ms, device %s ms', round(scan_ms::numeric), round(device_ms::numeric)) FROM stage))
FROM m a, m b WHERE a.side = 'on' AND b.side = 'off';
EOF
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
# Sub-millisecond queries: more pairs, so that the median is not one run's noise.
time_query "1,000 rows" 0 "$qs" "" $((runs * 30))

g1k="SELECT k1k, sum(f8), count(f8) FROM gpuext_bench.gagg GROUP BY 1"
g1m="SELECT k1m, sum(f8), count(*) FROM gpuext_bench.gagg GROUP BY 1"
q1="SELECT rf, ls, sum(qty), sum(f8), sum(f8 * (1 - disc)), sum(f8 * (1 - disc) * (1 + tax)), avg(qty), avg(f8), avg(disc), count(*) FROM gpuext_bench.gagg WHERE ship <= DATE ''1998-12-01'' - 90 GROUP BY rf, ls ORDER BY rf, ls"
gs="SELECT i4 % 10, sum(f8), count(*) FROM gpuext_bench.gagg_small GROUP BY 1"
time_query "GROUP BY 1,000 groups, serial" 0 "$g1k"
time_query "GROUP BY 1,000 groups, serial" 0 "$g1k" "$big_work_mem"
time_query "GROUP BY 1,000,000 groups, serial" 0 "$g1m"
time_query "GROUP BY 1,000,000 groups, serial" 0 "$g1m" "$big_work_mem"
time_query "Q1 shape (double precision), serial" 0 "$q1"
time_query "Q1 shape (double precision), serial" 0 "$q1" "$big_work_mem"
time_query "GROUP BY 1,000 groups, $workers workers" "$workers" "$g1k"
time_query "Q1 shape (double precision), $workers workers" "$workers" "$q1"
time_query "GROUP BY, 1,000 rows" 0 "$gs" "" $((runs * 30))
q1n="SELECT rf, ls, sum(qty), sum(price), sum(price * (1 - disc)), sum(price * (1 - disc) * (1 + tax)), avg(qty), avg(price), avg(disc), count(*) FROM gpuext_bench.gagg_num WHERE ship <= DATE ''1998-12-01'' - 90 GROUP BY rf, ls ORDER BY rf, ls"
time_query "Q1 shape (numeric(15,2)), serial" 0 "$q1n"
time_query "Q1 shape (numeric(15,2)), $workers workers" "$workers" "$q1n"

# clients NAME QUERY: CLIENTS pgbench clients running QUERY for SECS seconds with enable_agg on, then
# off: transactions per second of each, and on / off.
clients_query() {
	local name=$1 q=$2 f on off
	f=$(mktemp)
	echo "$q;" >"$f"
	chmod 644 "$f"
	on=$(PGOPTIONS="-c gpuext.device=$device -c gpuext.enable_agg=on" pgbench -n -c "$clients" -j 16 -T "$secs" -f "$f" 2>/dev/null | awk '/^tps/ {print $3; exit}')
	off=$(PGOPTIONS="-c gpuext.device=$device -c gpuext.enable_agg=off" pgbench -n -c "$clients" -j 16 -T "$secs" -f "$f" 2>/dev/null | awk '/^tps/ {print $3; exit}')
	rm -f "$f"
	echo "$name, $clients clients | on: $on tps | off: $off tps | ratio $(python3 -c "import sys; print(f'{float(sys.argv[1]) / float(sys.argv[2]):.2f}')" "$on" "$off")"
}
clients_query "GROUP BY 1,000 groups of 1,000,000 rows" "SELECT k1k, sum(f8), count(f8) FROM gpuext_bench.gagg_1m GROUP BY 1"
clients_query "five aggregates of 1,000,000 rows" "SELECT sum(i4), sum(i8), avg(f8), min(i4), max(i8) FROM gpuext_bench.gagg_1m"
