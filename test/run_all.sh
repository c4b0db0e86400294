#!/bin/bash
# Run every gpuext test on this machine: installs what is missing (as root, Debian 12),
# then builds, installs and runs the regression suite against a throwaway cluster,
# once for the CPU-only build, once for the fake device build (host memory, every device path
# taken with gpuext.device = gpu) and once with the CUDA kernels when nvcc is present; the TAP
# tests (test/tap.sh) after the first two.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES="postgresql-15 postgresql-server-dev-15 postgresql-common make gcc libipc-run-perl"
. test/debian_setup.sh

passed=0 failed=0
log=$(mktemp)
# Build and install one variant, then run pg_regress on a throwaway cluster (with $SUITE_PGOPTIONS).
suite() {
	echo "== build $*"
	make -s clean >/dev/null
	make -s -j"$(nproc)" "$@"
	$SUDO make -s install "$@" >/dev/null
	echo "== regression suite ($*)"
	if PGOPTIONS="${SUITE_PGOPTIONS:-}" pg_virtualenv -v 15 make -s installcheck "$@" 2>&1 | tee "$log"; then :; else
		[ -f regression.diffs ] && cat regression.diffs
	fi
	local ok bad
	ok=$(grep -cE '^(ok|test) .* \.\.\. ok|^ok ' "$log" || true)
	bad=$(grep -cE 'FAILED|failed \(ignored\)' "$log" || true)
	# A suite that ran no test at all (the cluster could not be made, say) counts as a failure.
	[ "$ok" = 0 ] && bad=$((bad + 1))
	passed=$((passed + ok))
	failed=$((failed + bad))
}

# The TAP tests (test/t, through test/tap.sh) against the variant just installed, with gpuext.device = $1.
tap() {
	echo "== TAP tests (gpuext.device = $1)"
	local rc=0
	GPUEXT_TEST_DEVICE=$1 bash test/tap.sh 2>&1 | tee "$log" || rc=$?
	local ok bad
	ok=$(grep -cE 'test/t/[^ ]+ \.+ ok' "$log" || true)
	bad=$(grep -cE '^test/t/[^ ]+ +\(Wstat' "$log" || true)
	# A failure that prove could not attribute to a test file, or no test run at all, counts as one.
	if { [ "$rc" != 0 ] && [ "$bad" = 0 ]; } || [ "$ok" = 0 ]; then bad=$((bad + 1)); fi
	passed=$((passed + ok))
	failed=$((failed + bad))
}

suite WITH_CUDA=no
tap auto
SUITE_PGOPTIONS="-c gpuext.device=gpu -c gpuext.sort_min_rows=0" suite WITH_CUDA=fake
tap gpu
if [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ] || command -v nvcc >/dev/null; then
	suite
	echo "== kernel harness (compiled here; it runs on a GPU host)"
	make -s harness
fi
rm -f "$log"
echo "regression: $passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
