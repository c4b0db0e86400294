#!/bin/bash
# Serial ORDER BY with GpuSort through the GPU service against the same server with the service off
# (each backend opens the device), on the same data, the two modes alternating round by round.
#   RESTART='cmd' bash bench/service_serial.sh [ROWS]     (ROWS default 10000000)
# The server (PGHOST/PGPORT/PGUSER/PGDATABASE) must preload gpuext.  RESTART is a command that
# restarts it with the extra server option it is given ("-c gpuext.service=off" or "-c gpuext.service=on").
# Environment: ROUNDS (3: each mode this many times), RUNS (3 timed runs a query and round, after a
# warm-up), OUT (the CSV goes to $OUT/service_serial.csv, else bench/results/service_serial.csv).
# Prints, per query and mode, the medians of Execution Time and of each GpuSort stage (work_mem 4GB).
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-10000000}
rounds=${ROUNDS:-3}
runs=${RUNS:-3}
outdir=${OUT:-$PWD/bench/results}
mkdir -p "$outdir"
csv=$outdir/service_serial.csv
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
[ -n "${RESTART:-}" ] || { echo "service_serial.sh: RESTART must name a command that restarts the server" >&2; exit 2; }
q() { psql -XAtq -v ON_ERROR_STOP=1 "$@"; }
q -c 'CREATE EXTENSION IF NOT EXISTS gpuext'
if [ "$(q -c "SELECT count(*) FROM pg_class WHERE relname = 'serial_t'")" = 0 ]; then
	q -c "CREATE TABLE serial_t AS SELECT i AS i8, (i % 1000003)::int AS i4, random() AS f8, md5(i::text) AS pad
	      FROM generate_series(1, $rows::int8) i" -c 'VACUUM ANALYZE serial_t'
fi
queries=('SELECT * FROM serial_t ORDER BY f8' 'SELECT i4 FROM serial_t ORDER BY i4' 'SELECT i8, f8 FROM serial_t ORDER BY i8, f8')
for round in $(seq "$rounds"); do
	for mode in on off; do
		$RESTART "-c gpuext.service=$mode" >/dev/null
		for _ in $(seq 30); do q -c 'SELECT 1' >/dev/null 2>&1 && break; sleep 1; done
		label=$([ "$mode" = on ] && echo service || echo per-backend)
		for i in "${!queries[@]}"; do
			for r in $(seq 0 "$runs"); do
				json=$(q -c "SET work_mem = '4GB'" -c 'SET gpuext.device = gpu' -c "EXPLAIN (ANALYZE, FORMAT JSON) ${queries[$i]}")
				[ "$r" = 0 ] || python3 -c '
import json, sys
p = json.loads(sys.argv[1])[0]
node = p["Plan"]
stages = node.get("Stage Timing", {})
print(sys.argv[2], sys.argv[3], p["Execution Time"], *(stages.get(k, 0) for k in ("Read", "Keys", "Transfer", "Sort", "Emit")))
' "$json" "$label" "$i" >>"$raw"
			done
		done
	done
done
$RESTART "-c gpuext.service=on" >/dev/null
python3 - "$raw" "$csv" "${queries[@]}" <<'EOF'
import statistics, sys
raw, csv, queries = sys.argv[1], sys.argv[2], sys.argv[3:]
rows = {}
for line in open(raw):
    mode, i, *v = line.split()
    rows.setdefault((int(i), mode), []).append([float(x) for x in v])
names = ["execution", "read", "keys", "transfer", "sort", "emit"]
with open(csv, "w") as out:
    out.write("query,mode,runs," + ",".join(f"{n}_ms" for n in names) + "\n")
    for i, q in enumerate(queries):
        med = {}
        for mode in ("per-backend", "service"):
            r = rows.get((i, mode), [])
            med[mode] = [statistics.median(col) for col in zip(*r)] if r else [float("nan")] * 6
            out.write(f'"{q}",{mode},{len(r)},' + ",".join(f"{m:.1f}" for m in med[mode]) + "\n")
            print(f"{q:45} {mode:12} runs {len(r):2}  " + "  ".join(f"{n} {m:8.1f}" for n, m in zip(names, med[mode])))
        a, b = med["per-backend"][0], med["service"][0]
        print(f"{q:45} service over per-backend: execution {b / a:.3f}; device stages (transfer + sort) "
              f"{med['service'][3] + med['service'][4]:.1f} against {med['per-backend'][3] + med['per-backend'][4]:.1f} ms")
print("written", csv)
EOF
