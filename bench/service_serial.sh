#!/bin/bash
# Serial ORDER BY with GpuSort, for comparing a server that preloads gpuext (every device call through
# the GPU service) with one that does not (each backend opens the device): run it against each, on
# the same host and data, and compare the medians it prints.  Each session LOADs gpuext, as a server
# without preloading plans no GpuSort before the library is loaded.
#   bash bench/service_serial.sh [ROWS]        (ROWS default 10000000; RUNS=5; work_mem 4GB)
set -euo pipefail
rows=${1:-10000000}
runs=${RUNS:-5}
q() { psql -XAtq -v ON_ERROR_STOP=1 "$@"; }
q -c 'CREATE EXTENSION IF NOT EXISTS gpuext'
if [ "$(q -c "SELECT count(*) FROM pg_class WHERE relname = 'serial_t'")" = 0 ]; then
	q -c "CREATE TABLE serial_t AS SELECT i AS i8, (i % 1000003)::int AS i4, random() AS f8, md5(i::text) AS pad
	      FROM generate_series(1, $rows::int8) i" -c 'VACUUM ANALYZE serial_t'
fi
mode=$(q -c "SELECT CASE state WHEN 'off' THEN 'per-backend' ELSE 'service' END FROM gpuext_stat_service")
for sql in 'SELECT * FROM serial_t ORDER BY f8' 'SELECT i4 FROM serial_t ORDER BY i4' 'SELECT i8, f8 FROM serial_t ORDER BY i8, f8'; do
	t=()
	for i in $(seq 0 "$runs"); do
		ms=$(q -c "LOAD 'gpuext'" -c "SET work_mem = '4GB'" -c 'SET gpuext.device = gpu' -c "EXPLAIN (ANALYZE, FORMAT JSON) $sql" |
			python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["Execution Time"])')
		[ "$i" = 0 ] || t+=("$ms")
	done
	med=$(python3 -c "import statistics, sys; print(f'{statistics.median(map(float, sys.argv[1:])):.1f}')" "${t[@]}")
	echo "serial,$mode,$sql,$med ms"
done
q -c "LOAD 'gpuext'" -c "SET work_mem = '4GB'" -c 'SET gpuext.device = gpu' -c 'EXPLAIN ANALYZE SELECT * FROM serial_t ORDER BY f8'
