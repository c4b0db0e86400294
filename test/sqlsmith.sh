#!/bin/bash
# test/sqlsmith.sh: random queries from sqlsmith, run on PostgreSQL with gpuext (preloaded, created,
# every path forced: gpuext.device = gpu, the row thresholds at 0) and on PostgreSQL without gpuext
# (neither preloaded nor created), the same queries on both, and their outcomes compared.
#
# Two temporary servers from the PG_CONFIG given (one where gpuext is installed; a build with
# WITH_CUDA=fake takes every device path without a GPU), the same configuration but gpuext's lines
# (autovacuum off on both: the replay vacuums both at the same points), the same database
# (test/sqlsmith.sql).  Preloading is a server setting, so the two sides cannot share one server.
# sqlsmith reads the catalog to write its queries, and gpuext's functions would change them: the
# queries are written once, by sqlsmith --dry-run against the server without gpuext, and replayed on
# both by test/sqlsmith_replay.py as sqlsmith runs them (BEGIN, the query, ROLLBACK;
# statement_timeout 1s, which sqlsmith sets in each session), as the role smith, no superuser.
# A query that times out on one side only runs there again with ten times the timeout.
#
# It fails on a crash (a process killed by a signal, a PANIC or a failed assertion in either
# server's log), an internal error (SQLSTATE XX..., or "cache lookup failed") with gpuext that
# PostgreSQL does not raise as well without it, an error with gpuext that PostgreSQL without gpuext
# raises in no plan (SQLSTATE and message compared per query, twice, then against other plans), or
# a statement that outlives its timeout by a minute.  It prints the errors of each side by
# SQLSTATE, the timeouts, how many queries planned Sort and Aggregate without gpuext and GpuSort and
# GpuAgg with it (every query is EXPLAINed on both sides), and the differences that do not fail it:
# PostgreSQL's own internal errors, errors that differ only in which row raised them first, float
# sums that PostgreSQL's order of addition makes overflow (test/sqlsmith_replay.py says more).
#
# Run as an unprivileged user.  Knobs: SQLSMITH_QUERIES (2000), SQLSMITH_SEED (1),
# SQLSMITH_DURATION (seconds of replay at most; 0, the default: every query), SQLSMITH_TIMEOUT_MS
# (1000), SQLSMITH_PORT (5530; the server with gpuext takes the next), SQLSMITH_KEEP=1 keeps the
# folder with the queries, the per-query results, the reports and the server logs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pgc=${PG_CONFIG:-pg_config}
bindir=$("$pgc" --bindir)
queries=${SQLSMITH_QUERIES:-2000}
seed=${SQLSMITH_SEED:-1}
duration=${SQLSMITH_DURATION:-0}
timeout_ms=${SQLSMITH_TIMEOUT_MS:-1000}
port=${SQLSMITH_PORT:-5530}
work=$(mktemp -d /tmp/gpuext_sqlsmith.XXXXXX)
command -v sqlsmith >/dev/null || { echo "sqlsmith: not installed (Debian: apt-get install sqlsmith)"; exit 1; }
[ -f "$("$pgc" --sharedir)/extension/gpuext.control" ] || { echo "sqlsmith: gpuext is not installed for $pgc"; exit 1; }

# Stop the servers; keep or remove the folder.
finish() {
	for side in plain gpuext; do
		[ -f "$work/$side/postmaster.pid" ] && "$bindir/pg_ctl" -D "$work/$side" -m immediate stop >/dev/null 2>&1
	done
	if [ -n "${SQLSMITH_KEEP:-}" ]; then echo "sqlsmith: kept $work"; else rm -rf "$work"; fi
}
trap finish EXIT

# A server in $work/$1 on port $2 with the extra configuration lines $3, with the test database.
start_server() {
	local dir=$work/$1
	"$bindir/initdb" -D "$dir" -A trust -E UTF8 --no-locale >"$work/initdb-$1.log" 2>&1 ||
		{ cat "$work/initdb-$1.log"; exit 1; }
	cat >>"$dir/postgresql.conf" <<-EOF
		port = $2
		listen_addresses = ''
		unix_socket_directories = '$work'
		fsync = off
		synchronous_commit = off
		full_page_writes = off
		jit = off
		autovacuum = off
		max_connections = 20
		restart_after_crash = on
		log_line_prefix = '%m [%p] %e '
		log_min_messages = error
		log_min_error_statement = panic
		lc_messages = 'C'
		$3
	EOF
	"$bindir/pg_ctl" -D "$dir" -l "$work/$1.log" -w start >/dev/null
	"$bindir/createdb" -h "$work" -p "$2" smith
	"$bindir/psql" -X -q -h "$work" -p "$2" -d smith -v ON_ERROR_STOP=1 -f "$here/sqlsmith.sql" >/dev/null
}

start_server plain "$port" ""
start_server gpuext "$((port + 1))" "shared_preload_libraries = 'gpuext'
gpuext.device = gpu
gpuext.sort_min_rows = 0
gpuext.agg_min_rows = 0
gpuext.min_gpu_elements = 0
gpuext.debug_agg_without_gain = on"
"$bindir/psql" -X -q -h "$work" -p "$((port + 1))" -d smith -v ON_ERROR_STOP=1 -c 'CREATE EXTENSION gpuext'

plain="host=$work port=$port dbname=smith user=smith"
gpuext="host=$work port=$((port + 1)) dbname=smith user=smith"
echo "sqlsmith: $("$bindir/postgres" --version), seed $seed, at most $queries queries"
libpq=$("$pgc" --libdir)/libpq.so.5
[ -f "$libpq" ] || libpq=""
# The replay reads the queries while sqlsmith writes them; where it stops early (the duration),
# sqlsmith ends on a broken pipe.
set +e
sqlsmith --target="$plain" --exclude-catalog --dry-run --seed="$seed" --max-queries="$queries" \
	2>"$work/sqlsmith.log" | tee "$work/queries.sql" |
	python3 "$here/sqlsmith_replay.py" --queries /dev/stdin --plain "$plain" --gpuext "$gpuext" \
		--superuser "$(id -un)" --timeout-ms "$timeout_ms" --duration "$duration" --libpq "$libpq" \
		--out "$work" >"$work/summary.txt"
rc=("${PIPESTATUS[@]}")
set -e
cat "$work/summary.txt"
case "${rc[0]}:${rc[2]}" in
0:0 | 141:0) ;;
*) cat "$work/sqlsmith.log"; echo "sqlsmith: sqlsmith or the replay failed (exit status ${rc[*]})"; exit 1 ;;
esac

# Crashes: from the servers' logs, as a client cannot tell a crash from another lost connection.
crashes=0
for side in plain gpuext; do
	n=$(grep -cE 'terminated by signal|PANIC:|TRAP:' "$work/$side.log" || true)
	echo "  crashes ($side server log): $n"
	grep -E 'terminated by signal|PANIC:|TRAP:' "$work/$side.log" | head -5 | sed 's/^/    /' || true
	crashes=$((crashes + n))
done
[ -s "$work/report.txt" ] && { echo "  queries to look at:"; head -c 20000 "$work/report.txt"; }
read -r _ line < <(grep '^result: ' "$work/summary.txt")
eval "$line"
ok=yes
[ "$crashes" = 0 ] && [ "$failed" = 0 ] && [ "$hangs" = 0 ] && [ "$replayed" -gt 0 ] || ok=no
echo "sqlsmith: $replayed queries, crashes $crashes, hangs $hangs, failed comparisons $failed: $([ $ok = yes ] && echo ok || echo FAILED)"
[ $ok = yes ]
