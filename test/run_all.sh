#!/bin/bash
# test/run_all.sh: every gpuext test on this machine, on PostgreSQL 15 (Debian's packages) and on 17
# and 18 built with assertions from Debian's source packages (test/pg_from_source.sh, cached).
# As root on Debian 12 it installs what is missing.  Each variant (CPU-only; the fake device, which
# takes every device path in host memory; the CUDA build where nvcc is present) is built in a private
# copy of the tree and installed into a private copy of the server, where the regression suite (the
# fake device's twice: in each backend, and preloaded, through the GPU service) and
# the TAP tests run as an unprivileged user: nothing is written into the checkout or the system's
# servers.  Last, as root, the Debian package is built, installed and tried (test/debian_package.sh),
# which leaves the system with the build a user wants.  GPUEXT_PG_VERSIONS picks the servers.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
versions=${GPUEXT_PG_VERSIONS:-15 17 18}

PACKAGES="postgresql-15 postgresql-server-dev-15 postgresql-common make gcc libipc-run-perl bison flex
	libreadline-dev zlib1g-dev sqlsmith python3"
. test/debian_setup.sh

user=$(id -un)
if [ "$(id -u)" = 0 ]; then
	user=${TAP_USER:-postgres}
	id "$user" >/dev/null 2>&1 || useradd -m "$user"
fi
# Run a command as the unprivileged test user, with this environment.
as_user() {
	if [ "$(id -u)" = 0 ]; then runuser -u "$user" -- "$@"; else "$@"; fi
}

work=$(mktemp -d /tmp/gpuext_test.XXXXXX)
chmod 755 "$work"
chown "$user" "$work"
# GPUEXT_TEST_KEEP=1 keeps the builds, results and logs for a look afterwards.
[ -n "${GPUEXT_TEST_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
log=$work/log
have_nvcc=no
if [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ] || command -v nvcc >/dev/null; then have_nvcc=yes; fi
# As root the Debian package step compiles the device code for every architecture; the test builds
# then compile it for one (GPUEXT_TEST_CUDA_ARCH, 90 as on the GPU host), minutes less on 2 cores.
cuda_arch=${GPUEXT_TEST_CUDA_ARCH:-}
[ "$(id -u)" != 0 ] || cuda_arch=${cuda_arch:-90}
cuda_arch=${cuda_arch:+CUDA_ARCH=$cuda_arch}
# The concurrency TAP test's pgbench run: 20 s per run here (it runs 6 times); 60 s on a GPU host.
export GPUEXT_TAP_DURATION=${GPUEXT_TAP_DURATION:-20}
passed=0 failed=0
start=$SECONDS

# The tracked and new files of the checkout, copied to $1 (owned by the test user).
copy_tree() {
	mkdir -p "$1"
	git -c safe.directory='*' ls-files -coz --exclude-standard --deduplicate |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done | xargs -0 cp -a --parents -t "$1"
	chown -R "$user" "$1"
}

# A private copy of the server whose pg_config is $1, in $2; prints the copy's pg_config.
copy_server() {
	local pgc=$1 dest=$2
	mkdir -p "$dest"
	tar -C / -cf - "$("$pgc" --bindir | cut -c2-)" "$("$pgc" --pkglibdir | cut -c2-)" \
		"$("$pgc" --sharedir | cut -c2-)" | tar -C "$dest" -xf -
	chown -R "$user" "$dest"
	echo "$dest$("$pgc" --bindir)/pg_config"
}

# A step's title; count prints how long the step took.
step() {
	echo "== $*"
	step_start=$SECONDS
}

# Count a pg_regress or prove log into passed/failed; a run that passed nothing counts as a failure.
count() {
	local ok bad
	ok=$(grep -cE "$1" "$log" || true)
	bad=$(grep -cE "$2" "$log" || true)
	if { [ "$3" != 0 ] && [ "$bad" = 0 ]; } || [ "$ok" = 0 ]; then bad=$((bad + 1)); fi
	passed=$((passed + ok))
	failed=$((failed + bad))
	echo "-- $((SECONDS - step_start)) s"
}

# Build variant $3 (WITH_CUDA value, empty for the CUDA build) against $1, install it into the
# private server $2, and run the regression suite there on a temporary instance.
suite() {
	local pgc=$1 priv=$2 variant=$3 build=$work/build-${3:-cuda} stage=$work/stage
	step "PostgreSQL $major, ${variant:-cuda} build: regression suite${SUITE_PGOPTIONS:+ ($SUITE_PGOPTIONS)}${SUITE_SERVICE:+, through the GPU service}"
	if [ -z "${SUITE_SERVICE:-}" ]; then
		[ -d "$build" ] || copy_tree "$build"
		# The device objects do not depend on the server: only the C side is rebuilt for each.
		rm -f "$build"/src/*.o "$build"/cuda/nocuda.o "$build"/cuda/fakedev.o "$build"/cuda/fakedev_kernels.o "$build"/*.so
		as_user make -s -C "$build" -j"$(nproc)" PG_CONFIG="$pgc" ${variant:+WITH_CUDA=$variant} $cuda_arch
		rm -rf "$stage"
		as_user make -s -C "$build" install PG_CONFIG="$pgc" ${variant:+WITH_CUDA=$variant} $cuda_arch DESTDIR="$stage" >/dev/null
		rm -f "$priv$("$pgc" --pkglibdir)"/gpuext.so "$priv$("$pgc" --sharedir)"/extension/gpuext*
		as_user cp -a "$stage/." "$priv/"
	fi
	# SUITE_SERVICE: the build just installed, preloaded, so that every device call goes to the service.
	local rc=0 conf=""
	if [ -n "${SUITE_SERVICE:-}" ]; then
		conf=$work/service.conf
		printf "shared_preload_libraries = 'gpuext'\ngpuext.service_arena = '256MB'\n" >"$conf"
		chown "$user" "$conf"
	fi
	# SUITE_SKIP: tests left out of this run
	local regress
	regress=$(for t in $(sed -n 's/^REGRESS = //p' "$build/Makefile"); do
		case " ${SUITE_SKIP:-} " in *" $t "*) ;; *) printf '%s ' "$t" ;; esac
	done)
	as_user env PGOPTIONS="${SUITE_PGOPTIONS:-}" make -s -C "$build" installcheck PG_CONFIG="$ppgc" REGRESS="$regress" \
		EXTRA_REGRESS_OPTS="--temp-instance=$work/tmp_check --no-locale${conf:+ --temp-config=$conf}" >"$log" 2>&1 || rc=$?
	cat "$log"
	[ $rc = 0 ] || { [ -f "$build/regression.diffs" ] && cat "$build/regression.diffs"; }
	count '^(ok|test) .* \.\.\. ok|^ok ' '^not ok|FAILED|failed \(ignored\)' $rc
}

# The TAP tests (test/t) against the variant just installed, with gpuext.device = $1.
tap() {
	step "PostgreSQL $major: TAP tests (gpuext.device = $1)"
	local rc=0
	as_user env PG_CONFIG="$ppgc" GPUEXT_TEST_DEVICE="$1" bash "$work/build-$2/test/tap.sh" >"$log" 2>&1 || rc=$?
	cat "$log"
	count 'test/t/[^ ]+ \.+ ok' '^test/t/[^ ]+ +\(Wstat' $rc
}

# PostgreSQL's own regression suite, plain and forced onto the fake build just installed, each
# test's two results compared (test/postgres_suite.sh); every test that agrees counts as passed.
postgres_suite() {
	step "PostgreSQL $major, fake build: PostgreSQL's regression suite, plain and forced onto gpuext"
	local dir=$work/postgres-suite-$major script=$work/build-fake/test/postgres_suite.sh rc=0
	{
		PG_CONFIG=$pgc bash "$script" prepare "$major" "$dir/tests" && chown -R "$user" "$dir" &&
			as_user env PG_CONFIG="$ppgc" bash "$script" run "$dir/tests" "$dir/plain" plain &&
			as_user env PG_CONFIG="$ppgc" bash "$script" run "$dir/tests" "$dir/forced" forced &&
			bash "$script" compare "$dir/plain" "$dir/forced"
	} >"$log" 2>&1 || rc=$?
	cat "$log"
	local ok=0 bad=0
	read -r ok bad < <(sed -n 's/^postgres suite: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log") || true
	if { [ $rc != 0 ] && [ "$bad" = 0 ]; } || [ "$ok" = 0 ]; then bad=$((bad + 1)); fi
	passed=$((passed + ok))
	failed=$((failed + bad))
	echo "-- $((SECONDS - step_start)) s"
}

# sqlsmith's random queries with gpuext forced (the fake build just installed) against PostgreSQL
# without it (test/sqlsmith.sh); SQLSMITH_QUERIES per server.
sqlsmith_run() {
	step "PostgreSQL $major, fake build: sqlsmith"
	local rc=0
	as_user env PG_CONFIG="$ppgc" SQLSMITH_QUERIES="${SQLSMITH_QUERIES:-3000}" \
		bash "$work/build-fake/test/sqlsmith.sh" >"$log" 2>&1 || rc=$?
	cat "$log"
	count '^sqlsmith: .*: ok$' '^sqlsmith: .*: FAILED$' $rc
}

# Tests of GpuSort's and GpuAgg's device paths that take minutes on 2 cores: where neither is
# planned (no device code, or no GPU), they would only run PostgreSQL's own plans.
device_only="gpuagg_many_groups sort_stream sort_device_rows"

for major in $versions; do
	if [ "$major" = 15 ]; then
		pgc=/usr/lib/postgresql/15/bin/pg_config
	else
		pgc=$(bash test/pg_from_source.sh "$major" | tail -1)
	fi
	priv=$work/pg$major
	ppgc=$(copy_server "$pgc" "$priv")
	"$pgc" --version
	SUITE_SKIP=$device_only suite "$pgc" "$priv" no
	tap auto no
	SUITE_PGOPTIONS="-c gpuext.device=gpu -c gpuext.sort_min_rows=0" suite "$pgc" "$priv" fake
	SUITE_SERVICE=1 SUITE_PGOPTIONS="-c gpuext.device=gpu -c gpuext.sort_min_rows=0" suite "$pgc" "$priv" fake
	postgres_suite
	tap gpu fake
	sqlsmith_run
	if [ $have_nvcc = yes ]; then
		# Without a GPU here the CUDA build's suite takes the no-device paths; its kernels run on a GPU host.
		if [ "$major" = 15 ]; then
			SUITE_SKIP=$device_only suite "$pgc" "$priv" ""
		else
			step "PostgreSQL $major, cuda build: compiled"
			[ -d "$work/build-cuda" ] || copy_tree "$work/build-cuda"
			rm -f "$work"/build-cuda/src/*.o "$work"/build-cuda/*.so
			as_user make -s -C "$work/build-cuda" -j"$(nproc)" PG_CONFIG="$pgc" $cuda_arch
			echo "-- $((SECONDS - step_start)) s"
		fi
	fi
	rm -rf "$priv"
done
if [ $have_nvcc = yes ]; then
	step "kernel harness (compiled here; it runs on a GPU host)"
	as_user make -s -C "$work/build-cuda" harness $cuda_arch
	echo "-- $((SECONDS - step_start)) s"
fi

step "PGXN META.json"
rc=0
python3 test/validate_meta.py >"$log" 2>&1 || rc=$?
cat "$log"
count '^META.json: valid' '^$^' $rc

if [ "$(id -u)" = 0 ]; then
	step "Debian package: build, install, try"
	rc=0
	bash test/debian_package.sh >"$log" 2>&1 || rc=$?
	cat "$log"
	count '^ok: ' '^FAILED: ' $rc
else
	echo "== Debian package: skipped (needs root)"
fi
echo "== $(((SECONDS - start) / 60)) min"
echo "regression: $passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
