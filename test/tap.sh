#!/bin/bash
# test/tap.sh [PROVE ARGS]: gpuext's TAP tests (test/t/*.pl) against the PostgreSQL installation
# of $PG_CONFIG (else pg_config on PATH), which must have gpuext installed.  Each test creates its
# own clusters with PostgreSQL::Test::Cluster, so it needs initdb, pg_ctl, postgres, psql and
# pgbench in that installation's bindir, pgxs's src/test/perl and pg_regress, and Perl's IPC::Run
# (Debian: libipc-run-perl; or put IPC/Run*.pm under .gpu/perl5).  initdb refuses root, so as root
# the tests run as $TAP_USER, else postgres, else pgtest, from a copy of test/t.
# GPUEXT_TEST_DEVICE (auto, gpu or cpu) is the clusters' gpuext.device; GPUEXT_TAP_DURATION the
# seconds of the concurrency run (60).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
PG_CONFIG=${PG_CONFIG:-pg_config}
bindir=$("$PG_CONFIG" --bindir)
pgxs=$(dirname "$(dirname "$(dirname "$("$PG_CONFIG" --pgxs)")")")
perl5lib="$pgxs/src/test/perl:$repo/test/t${PERL5LIB:+:$PERL5LIB}"
[ -d "$repo/.gpu/perl5" ] && perl5lib="$perl5lib:$repo/.gpu/perl5"
PERL5LIB=$perl5lib perl -MIPC::Run -e 1 2>/dev/null || {
	echo "tap.sh: Perl's IPC::Run is missing (apt-get install libipc-run-perl)" >&2
	exit 2
}
[ $# -gt 0 ] || set -- test/t/*.pl
testdir=$(mktemp -d /tmp/gpuext_tap.XXXXXX)
cmd=(env "PATH=$bindir:$PATH" "PERL5LIB=$perl5lib" "PG_REGRESS=$pgxs/src/test/regress/pg_regress"
	"TESTDIR=$testdir" "TESTDATADIR=$testdir/tmp_check" "TESTLOGDIR=$testdir/tmp_check/log" "GPUEXT_TEST_DEVICE=${GPUEXT_TEST_DEVICE:-auto}"
	"GPUEXT_TAP_DURATION=${GPUEXT_TAP_DURATION:-60}" ${LD_LIBRARY_PATH:+"LD_LIBRARY_PATH=$LD_LIBRARY_PATH"}
	prove --timer "$@")
rc=0
if [ "$(id -u)" = 0 ]; then
	user=${TAP_USER:-}
	[ -z "$user" ] && id postgres >/dev/null 2>&1 && user=postgres
	[ -z "$user" ] && id pgtest >/dev/null 2>&1 && user=pgtest
	[ -z "$user" ] && { echo "tap.sh: as root, set TAP_USER to an unprivileged user" >&2; exit 2; }
	# The tests run from a copy, so that a checkout the user cannot read (under /root, say) works.
	mkdir -p "$testdir/repo/test"
	cp -a test/t "$testdir/repo/test/"
	cmd=("${cmd[@]//$repo\/test\/t/$testdir/repo/test/t}")
	chown -R "$user" "$testdir"
	(cd "$testdir/repo" && runuser -u "$user" -- "${cmd[@]}") || rc=$?
else
	"${cmd[@]}" || rc=$?
fi
[ $rc = 0 ] && rm -rf "$testdir" || echo "tap.sh: logs kept in $testdir/tmp_check/log"
exit $rc
