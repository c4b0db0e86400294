#!/bin/bash
# test/valgrind.sh [TEST...]: builds and installs the CPU-only variant (VALGRIND_CUDA=fake: the fake
# device, so that with PGOPTIONS="-c gpuext.device=gpu" the device paths' host code runs under
# memcheck too), starts a throwaway server
# under valgrind memcheck (every backend traced, test/valgrind.supp), runs the given regression
# tests against it (default: a set that took 45 minutes on 2 busy cores; gpu_sort_large,
# agg_device, reliability and fuzz take 15 to 35 minutes each more), stops it and reports the
# memcheck errors found, with the stacks of those in gpuext.
# Exit status 1 when memcheck found any.  As root the server runs as the postgres user.  It builds
# in this tree: run no make here while it runs.  VALGRIND_TRACK_ORIGINS=no runs about twice as fast
# (errors are still found; their origins are not traced); VALGRIND_PGPORT picks the port (5497);
# VALGRIND_PG_SUPP names PostgreSQL's own src/tools/valgrind.supp (from a source tree) to add.
set -euo pipefail
cd "$(dirname "$0")/.."
PG_CONFIG=${PG_CONFIG:-pg_config}
bindir=$("$PG_CONFIG" --bindir)
tests=${*:-device gpu_sort bad_input sort_node sort_node_random gpu_agg gpu_query}
port=${VALGRIND_PGPORT:-5497}
run_as=()
[ "$(id -u)" = 0 ] && run_as=(runuser -u postgres --)

make -s clean
variant=${VALGRIND_CUDA:-no}
case $variant in no | fake) ;; *) echo "VALGRIND_CUDA must be no or fake" >&2; exit 2 ;; esac
make -s -j"$(nproc)" WITH_CUDA="$variant" PG_CONFIG="$PG_CONFIG"
make -s install WITH_CUDA="$variant" PG_CONFIG="$PG_CONFIG" >/dev/null
work=$(mktemp -d /tmp/gpuext_valgrind.XXXXXX)
chmod 777 "$work"
"${run_as[@]}" "$bindir/initdb" -D "$work/data" --no-locale -E UTF8 -A trust -U postgres >/dev/null
"${run_as[@]}" valgrind --quiet --trace-children=yes --track-origins="${VALGRIND_TRACK_ORIGINS:-yes}" --read-var-info=no \
	--num-callers=40 --leak-check=no --suppressions="$PWD/test/valgrind.supp" ${VALGRIND_PG_SUPP:+--suppressions="$VALGRIND_PG_SUPP"} \
	--error-markers=VALGRINDERROR-BEGIN,VALGRINDERROR-END --log-file="$work/valgrind.%p.log" \
	"$bindir/postgres" -D "$work/data" -k "$work" -p "$port" -c listen_addresses= -c max_parallel_workers_per_gather=0 \
	>"$work/server.log" 2>&1 &
for _ in $(seq 1 300); do
	"$bindir/pg_isready" -h "$work" -p "$port" -q && break
	sleep 1
done
start=$(date +%s)
rc=0
PGHOST=$work PGPORT=$port PGUSER=postgres make -s installcheck WITH_CUDA="$variant" PG_CONFIG="$PG_CONFIG" \
	REGRESS="$tests" || rc=$?
"${run_as[@]}" "$bindir/pg_ctl" -D "$work/data" -m fast -w -t 600 stop >/dev/null
errors=$(cat "$work"/valgrind.*.log | grep -c VALGRINDERROR-BEGIN || true)
ours=$(awk '/VALGRINDERROR-BEGIN/{e=""} {e=e"\n"$0} /VALGRINDERROR-END/{if (e ~ /gpuext/) print e}' \
	"$work"/valgrind.*.log)
echo "valgrind: tests: $tests"
echo "valgrind: regression exit status $rc, $(( $(date +%s) - start )) s under valgrind," \
	"$(ls "$work"/valgrind.*.log | wc -l) processes traced, $errors memcheck errors"
[ -n "$ours" ] && echo "valgrind: errors with gpuext in the stack:$ours"
[ "$errors" = 0 ] || { echo "valgrind: logs in $work"; exit 1; }
rm -rf "$work"
[ "$rc" = 0 ]
