#!/bin/bash
# test/postgres_suite.sh: PostgreSQL's own regression suite (src/test/regress, parallel schedule) as
# an oracle for gpuext.  It runs once plain (no gpuext at all) and once forced: gpuext preloaded,
# created in the test database, and every sort and aggregate it can take sent to the device.  The
# two runs' results must agree test by test, but for EXPLAIN output and the differences listed, with
# the reason, in test/postgres_suite_diffs.txt; no backend may crash or fail an assertion.
#
#   prepare MAJOR DIR       the tests of PostgreSQL MAJOR (source: test/pg_from_source.sh --source)
#                           into DIR, with regress.so, autoinc.so and refint.so built for PG_CONFIG
#   run DIR RESULTS MODE    pg_regress over DIR into RESULTS, MODE plain or forced, on a temporary
#                           instance of PG_CONFIG's server (forced: preloaded by its configuration)
#   run --existing DIR RESULTS MODE
#                           the same against the running server at PGHOST/PGPORT (forced: gpuext
#                           must be in its shared_preload_libraries; the settings go in PGOPTIONS)
#   compare PLAIN FORCED [DIFFS]
#                           the two runs' results (test/postgres_suite_compare.py)
#   all MAJOR WORKDIR       prepare, both runs on temporary instances, compare
#
# PG_CONFIG (default: pg_config on PATH) names the server; GPUEXT_SUITE_DEVICE the forced run's
# gpuext.device (default gpu); GPUEXT_SUITE_PORT a port for the temporary instance; a run stops
# after GPUEXT_SUITE_TIMEOUT seconds (default 2400).  A temporary instance needs a user other than
# root; the compare step reads the server log from RESULTS/log/ (temporary instance) or
# RESULTS/postgres.log (put there by whoever ran the server).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pgc=${PG_CONFIG:-pg_config}
forced_settings=(shared_preload_libraries=gpuext "gpuext.device=${GPUEXT_SUITE_DEVICE:-gpu}"
	gpuext.sort_min_rows=0 gpuext.agg_min_rows=0 gpuext.min_gpu_elements=0 gpuext.debug_agg_without_gain=on)

die() {
	echo "postgres_suite.sh: $*" >&2
	exit 2
}

# The major version of the server PG_CONFIG names.
server_major() {
	"$pgc" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/'
}

# Extract MAJOR's regression tests into DIR and build their C modules against PG_CONFIG.
prepare() {
	local major=$1 dir=$2 tarball src
	[ "$(server_major)" = "$major" ] || die "PG_CONFIG ($pgc) is not PostgreSQL $major"
	tarball=$(bash "$here/pg_from_source.sh" --source "$major")
	rm -rf "$dir"
	mkdir -p "$dir/src"
	tar -xf "$tarball" -C "$dir/src" --strip-components=1 --wildcards '*/src/test/regress/*' '*/contrib/spi/*'
	src=$dir/src/src/test/regress
	cp -a "$src/parallel_schedule" "$src/resultmap" "$src/sql" "$src/expected" "$src/data" "$dir/"
	for d in input output; do [ ! -d "$src/$d" ] || cp -a "$src/$d" "$dir/"; done
	mkdir "$dir/src/mod"
	cp "$src/regress.c" "$dir/src/contrib/spi/autoinc.c" "$dir/src/contrib/spi/refint.c" "$dir/src/mod/"
	printf 'MODULES = regress autoinc refint\nPGXS := $(shell $(PG_CONFIG) --pgxs)\ninclude $(PGXS)\n' >"$dir/src/mod/Makefile"
	make -s -C "$dir/src/mod" PG_CONFIG="$pgc" >/dev/null
	cp "$dir/src/mod/"*.so "$dir/"
	basename "$tarball" | sed -E 's/^postgresql-[0-9]+_([^.]+\.[^.]+)\.orig.*/\1/' >"$dir/VERSION"
	rm -rf "$dir/src"
	echo "prepared PostgreSQL $(cat "$dir/VERSION")'s regression suite in $dir ($(grep -c '^test:' "$dir/parallel_schedule") groups)"
}

# Run DIR's parallel schedule into RESULTS as MODE (plain or forced); --existing uses the running server.
run() {
	local existing=no
	if [ "$1" = --existing ]; then existing=yes; shift; fi
	local dir out mode=$3 rc=0 start tmp
	dir=$(cd "$1" && pwd)
	[ "$mode" = plain ] || [ "$mode" = forced ] || die "mode must be plain or forced, not $mode"
	rm -rf "$2"
	mkdir -p "$2"
	out=$(cd "$2" && pwd)
	tmp=$out
	local regress
	regress=$(dirname "$("$pgc" --pgxs)")/../test/regress/pg_regress
	local opts=(--bindir="$("$pgc" --bindir)" --max-concurrent-tests=20 --no-locale --encoding=UTF8)
	[ "$mode" = plain ] || opts+=(--load-extension=gpuext)
	if [ $existing = yes ]; then
		local preload
		preload=$("$("$pgc" --bindir)/psql" -XAtc 'SHOW shared_preload_libraries' postgres)
		if [ "$mode" = forced ]; then
			[[ ",${preload// /}," == *,gpuext,* ]] || die "the server does not preload gpuext (shared_preload_libraries = '$preload')"
			local s
			for s in "${forced_settings[@]:1}"; do PGOPTIONS="${PGOPTIONS:-} -c $s"; done
			export PGOPTIONS
		elif [[ ",${preload// /}," == *,gpuext,* ]]; then
			die "a plain run needs a server without gpuext preloaded"
		fi
		# The server, as its own user, loads regress.so, reads data/ and writes into results/
		# (COPY, lo_export): all of them go where any user reaches them while the tests run.
		tmp=$(mktemp -d /tmp/postgres_suite.XXXXXX)
		chmod 755 "$tmp"
		cp -a "$dir" "$tmp/tests"
		dir=$tmp/tests
		mkdir -m 1777 "$tmp/out" "$tmp/out/results"
		tmp=$tmp/out
	else
		[ "$(id -u)" != 0 ] || die "run it as an unprivileged user (initdb refuses root)"
		printf '%s\n' "${forced_settings[@]}" | sed -E "s/=(.*)/ = '\1'/" >"$out/forced.conf"
		[ "$mode" = forced ] || : >"$out/forced.conf"
		opts+=(--temp-instance="$out/tmp_check" --temp-config="$out/forced.conf" ${GPUEXT_SUITE_PORT:+--port=$GPUEXT_SUITE_PORT})
	fi
	opts+=(--inputdir="$dir" --outputdir="$tmp" --dlpath="$dir" --schedule="$dir/parallel_schedule")
	echo "$mode run of PostgreSQL $(cat "$dir/VERSION")'s regression suite on $("$pgc" --version)${PGHOST:+ (existing server, $PGHOST:${PGPORT:-})}" >"$out/run.txt"
	start=$SECONDS
	timeout "${GPUEXT_SUITE_TIMEOUT:-2400}" "$regress" "${opts[@]}" >"$out/pg_regress.log" 2>&1 || rc=$?
	echo "seconds: $((SECONDS - start))" >>"$out/run.txt"
	if [ -d "$out/tmp_check/data" ]; then
		# A run stopped by the timeout leaves its temporary server running.
		"$("$pgc" --bindir)/pg_ctl" -D "$out/tmp_check/data" -m immediate stop >/dev/null 2>&1 || true
	fi
	rm -rf "$out/tmp_check"
	if [ "$tmp" != "$out" ]; then
		cp -a "$tmp/." "$out/"
		chmod 755 "$out" "$out/results"
		rm -rf "${tmp%/out}"
	fi
	# pg_regress exits 1 when tests differ from expected/ (compare judges those), 2 when it cannot run.
	[ $rc -le 1 ] || { tail -20 "$out/pg_regress.log" >&2; die "pg_regress failed (exit $rc), see $out/pg_regress.log"; }
	echo "$mode: $(ls "$out/results" | grep -c "\.out$") tests in $((SECONDS - start)) s, $(grep -cE '^not ok|\.\.\. FAILED' "$out/pg_regress.log" || true) differ from expected/"
}

compare() {
	python3 "$here/postgres_suite_compare.py" "$1" "$2" "${3:-$here/postgres_suite_diffs.txt}"
}

case ${1:-} in
prepare) prepare "$2" "$3" ;;
run) shift && run "$@" ;;
compare) compare "$2" "$3" "${4:-}" ;;
all)
	[ "$(id -u)" != 0 ] || die "run it as an unprivileged user (initdb refuses root)"
	prepare "$2" "$3/tests"
	run "$3/tests" "$3/plain" plain
	run "$3/tests" "$3/forced" forced
	compare "$3/plain" "$3/forced"
	;;
*) sed -n '2,24p' "$0" >&2 && exit 2 ;;
esac
