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
"${psql_[@]}" <<SQL
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS gpuext;
CREATE SCHEMA IF NOT EXISTS gpuext_bench;
DROP TABLE IF EXISTS gpuext_bench.gagg, gpuext_bench.gagg_1m;
CREATE TABLE gpuext_bench.gagg AS SELECT i AS id, (i % 100000)::int4 AS i4, i::int8 * 3 AS i8,
  (i % 1000) / 7.0::float8 AS f8, (i % 50) / 100.0::float8 AS disc, (i % 9) / 100.0::float8 AS tax,
  chr(65 + i % 3) AS rf, chr(70 + (i / 3) % 2) AS ls, DATE '1992-01-01' + (i::int8 * 7919 % 2500)::int AS ship,
  (i % 50 + 1)::float8 AS qty, (i * 7 % 1000)::int4 AS k1k, (i::int8 * 7 % 1000000)::int4 AS k1m
FROM generate_series(1, $rows) i;
CREATE TABLE gpuext_bench.gagg_1m AS SELECT * FROM gpuext_bench.gagg LIMIT 1000000;
VACUUM ANALYZE gpuext_bench.gagg, gpuext_bench.gagg_1m;
SQL
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
