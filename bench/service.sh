#!/bin/bash
# GPU service benchmark: gpuext through the service against PostgreSQL in the same server and run.
# The server (PGHOST/PGPORT/PGUSER/PGDATABASE) must have gpuext in shared_preload_libraries.
#   bash bench/service.sh
# Cases, each side timed in the same run:
#   first    first GPU statement of a fresh backend against its second run (gpuext_info's open time)
#   connect  pgbench -C, 8 clients, a 50,000-element gpu_sort: device=gpu against device=cpu
#   clients  16, 64 and 128 clients, EXPLAIN ANALYZE SELECT * FROM t1m ORDER BY f8: GpuSort on against
#            off, both with work_mem = $CLIENT_WORK_MEM; the service's device memory peak for each
#   parallel PostgreSQL's defaults (work_mem 4MB), 2 and 8 workers per Gather: ORDER BY ... LIMIT on
#            t10m, GpuSort on against off; five gpu_* aggregates against PostgreSQL's five
# Environment: ROWS (10000000), SECS (pgbench seconds, 10), RUNS (5, median), CONNECT_RUNS (3), CLIENT_WORK_MEM (256MB),
# OUT (the CSV goes to $OUT/service.csv, else bench/results/service.csv).
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${ROWS:-10000000}
secs=${SECS:-10}
runs=${RUNS:-5}
connect_runs=${CONNECT_RUNS:-3}
client_mem=${CLIENT_WORK_MEM:-256MB}
outdir=${OUT:-$PWD/bench/results}
mkdir -p "$outdir"
csv=$outdir/service.csv
work=$(mktemp -d)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
q() { psql -XAtq -v ON_ERROR_STOP=1 "$@"; }

[ "$(q -c "SELECT setting FROM pg_settings WHERE name = 'shared_preload_libraries'")" = gpuext ] ||
	{ echo "service.sh: the server must preload gpuext (shared_preload_libraries = 'gpuext')" >&2; exit 2; }
q -c 'CREATE EXTENSION IF NOT EXISTS gpuext'
echo "case,load,gpuext,baseline,ratio,unit,note" >"$csv"
# One CSV line and its echo: case, load, gpuext's figure, the baseline's (PostgreSQL, or the second run), ratio (higher is better for gpuext), unit, note.
row() {
	echo "$1,$2,$3,$4,$5,$6,$7" >>"$csv"
	printf '%-9s %-44s gpuext %10s  baseline %10s  ratio %6s %s %s\n' "$1" "$2" "$3" "$4" "$5" "$6" "$7"
}
ratio() { python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print(f'{a / b:.3f}' if b else 'nan')" "$1" "$2"; }
median() { python3 -c "import statistics, sys; print(f'{statistics.median(map(float, sys.argv[1:])):.3f}')" "$@"; }

echo "== tables: t1m (1,000,000 rows), t10m ($rows rows)"
q -c "DROP TABLE IF EXISTS t1m, t10m, arr50k" -c "
CREATE TABLE t10m AS SELECT i AS i8, (i % 1000003)::int AS i4, random() AS f8, md5(i::text) AS pad
FROM generate_series(1, $rows::int8) i;
CREATE TABLE t1m AS SELECT * FROM t10m WHERE i8 <= 1000000;
CREATE TABLE arr50k AS SELECT array_agg((random() * 1e9)::int) AS a FROM generate_series(1, 50000);" \
	-c 'VACUUM ANALYZE t10m' -c 'VACUUM ANALYZE t1m' -c 'VACUUM ANALYZE arr50k'
gpu=$(q -c 'SELECT name FROM gpuext_devices ORDER BY device LIMIT 1')
echo "== devices: $(q -c 'SELECT count(*) FROM gpuext_devices') ($gpu); service: $(q -c 'SELECT state FROM gpuext_stat_service')"

echo "== first GPU statement of a fresh backend (gpu_sort of 50,000 ints, device=gpu), $runs backends"
first=() second=() opens=()
for _ in $(seq "$runs"); do
	out=$(PGOPTIONS='-c gpuext.device=gpu' q -c '\timing on' -c 'SELECT count(gpu_sort(a)) FROM arr50k' \
		-c 'SELECT count(gpu_sort(a)) FROM arr50k' -c 'SELECT open_time_ms FROM gpuext_info()' | grep -E '^Time|^[0-9.]+$')
	mapfile -t t < <(grep '^Time' <<<"$out" | awk '{print $2}')
	first+=("${t[0]}")
	second+=("${t[1]}")
	opens+=("$(grep -E '^[0-9.]+$' <<<"$out" | grep -v '^1$' | tail -1)")
done
f=$(median "${first[@]}")
s=$(median "${second[@]}")
row first "fresh backend: first run against second" "$f" "$s" "$(ratio "$s" "$f")" ms \
	"open_time_ms $(median "${opens[@]}"); first minus second $(python3 -c "print(f'{$f - $s:.2f}')") ms"

echo "== pgbench -C, 8 clients, $secs s a run: gpu_sort of 50,000 ints, $connect_runs runs of each side alternating, median"
echo 'SELECT count(gpu_sort(a)) FROM arr50k;' >"$work/small.sql"
tps() { pgbench -n "$@" 2>/dev/null | awk '/^tps/ {print $3; exit}'; }
gs=() cs=()
for _ in $(seq "$connect_runs"); do
	gs+=("$(PGOPTIONS='-c gpuext.device=gpu' tps -C -c 8 -j 8 -T "$secs" -f "$work/small.sql")")
	cs+=("$(PGOPTIONS='-c gpuext.device=cpu' tps -C -c 8 -j 8 -T "$secs" -f "$work/small.sql")")
done
g=$(median "${gs[@]}")
c=$(median "${cs[@]}")
row connect "pgbench -C 8 clients, gpu_sort 50k ints" "$g" "$c" "$(ratio "$g" "$c")" tps \
	"device=gpu against device=cpu; runs gpu ${gs[*]}; cpu ${cs[*]}"

echo "== clients sorting 1,000,000 rows (work_mem = $client_mem on both sides), $secs s each"
echo 'EXPLAIN ANALYZE SELECT * FROM t1m ORDER BY f8;' >"$work/sort1m.sql"
for n in 16 64 128; do
	q -c 'SELECT gpuext_stat_service_reset()' >/dev/null
	g=$(PGOPTIONS="-c work_mem=$client_mem -c gpuext.device=gpu -c gpuext.enable_sort=on" tps -c "$n" -j 16 -T "$secs" -f "$work/sort1m.sql")
	peak=$(q -c 'SELECT (sum(memory_peak) / 1048576)::int8 FROM gpuext_devices')
	fb=$(q -c 'SELECT fallbacks FROM gpuext_stat_service')
	p=$(PGOPTIONS="-c work_mem=$client_mem -c gpuext.enable_sort=off" tps -c "$n" -j 16 -T "$secs" -f "$work/sort1m.sql")
	row clients "$n clients, EXPLAIN ANALYZE ORDER BY f8, 1M rows" "$g" "$p" "$(ratio "$g" "$p")" tps \
		"device memory peak ${peak} MB; fallbacks $fb"
done

echo "== parallel plans at PostgreSQL's defaults, median of $runs, the two sides alternating"
# Execution Time of EXPLAIN ANALYZE in ms.
exec_ms() {
	q -c "$1" -c "EXPLAIN (ANALYZE, FORMAT JSON) $2" |
		python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["Execution Time"])'
}
# Both sides of a case, one warm-up each, then runs alternating; a CSV row of their medians.
pair() {
	local label=$1 gset=$2 gsql=$3 pset=$4 psql=$5 note=$6 gt=() pt=()
	exec_ms "$gset" "$gsql" >/dev/null
	exec_ms "$pset" "$psql" >/dev/null
	for _ in $(seq "$runs"); do
		gt+=("$(exec_ms "$gset" "$gsql")")
		pt+=("$(exec_ms "$pset" "$psql")")
	done
	local g p
	g=$(median "${gt[@]}")
	p=$(median "${pt[@]}")
	row parallel "$label" "$g" "$p" "$(ratio "$p" "$g")" ms "$note"
}
for w in 2 8; do
	base="SET max_parallel_workers_per_gather = $w; SET max_parallel_workers = 16"
	for sql in 'SELECT * FROM t10m ORDER BY f8 LIMIT 100' 'SELECT * FROM t10m ORDER BY i8 LIMIT 10000'; do
		pair "$w workers: $sql" "$base; SET gpuext.enable_sort = on" "$sql" "$base; SET gpuext.enable_sort = off" "$sql" \
			"ratio: PostgreSQL time over gpuext time"
	done
	pair "$w workers: five aggregates over t10m" "$base" 'SELECT gpu_sum(i8), gpu_avg(f8), gpu_min(i4), gpu_max(f8), gpu_count(i8) FROM t10m' \
		"$base" 'SELECT sum(i8), avg(f8), min(i4), max(f8), count(i8) FROM t10m' "gpu_* against PostgreSQL's"
done
q -x -c 'SELECT * FROM gpuext_stat_service' -c 'SELECT * FROM gpuext_devices'
echo "== written $csv"
