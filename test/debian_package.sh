#!/bin/bash
# Builds the Debian packages (debian/) from a copy of this tree, installs postgresql-$PG-gpuext and
# checks it in a throwaway cluster (pg_virtualenv): as root on Debian 12.  The package stays
# installed.  WITH_CUDA=no or CUDA_ARCH=90 pass through to the build for quicker trials; by default
# it is the user's build (CUDA when nvcc is found, else CPU-only).  DEB_OUT=dir keeps the .deb files.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
PG=${PG:-15}
pass=0
fail=0

# One check: its name, then a command that must succeed.
check() {
	local name=$1
	shift
	if "$@"; then
		echo "ok: $name"
		pass=$((pass + 1))
	else
		echo "FAILED: $name"
		fail=$((fail + 1))
	fi
}

# The SQL checks, run inside pg_virtualenv (this script again: --inside COUNTS_FILE KERNELS).
if [ "${1:-}" = "--inside" ]; then
	counts=$2
	expect_kernels=$3
	q() { psql -XAtq -v ON_ERROR_STOP=1 "$@"; }
	# shellcheck disable=SC2317 # called through check
	not_fake() { ! grep -qi fake <<<"$1"; }
	check "CREATE EXTENSION gpuext (0.3)" \
		test "$(q -c 'CREATE EXTENSION gpuext' -c "SELECT extversion FROM pg_extension WHERE extname = 'gpuext'")" = 0.3
	check "gpu_sort('{3,1,2}'::int[])" test "$(q -c "SELECT gpu_sort('{3,1,2}'::int[])")" = '{1,2,3}'
	info=$(q -F ' | ' -c 'SELECT gpu_kernels, device_state, state_detail, device_name FROM gpuext_info()' || true)
	echo "gpuext_info(): $info"
	check "gpuext_info() is not the fake device" not_fake "$info"
	check "gpu_kernels is $expect_kernels (CUDA build: $expect_kernels)" test "${info%% *}" = "$expect_kernels"
	check "CREATE EXTENSION gpuext VERSION '0.1'" \
		test "$(q -c 'DROP EXTENSION gpuext' -c "CREATE EXTENSION gpuext VERSION '0.1'" \
			-c "SELECT extversion FROM pg_extension WHERE extname = 'gpuext'")" = 0.1
	check "ALTER EXTENSION gpuext UPDATE (0.1 -> 0.3)" \
		test "$(q -c 'ALTER EXTENSION gpuext UPDATE' -c "SELECT extversion FROM pg_extension WHERE extname = 'gpuext'")" = 0.3
	check "gpu_sum after the update" test "$(q -c 'SELECT gpu_sum(i) FROM generate_series(1, 100) i')" = 5050
	echo "$pass $fail" >"$counts"
	exit 0
fi

[ "$(id -u)" = 0 ] || { echo "debian_package.sh: run as root (it installs packages)" >&2; exit 1; }
[ "${WITH_CUDA:-}" != fake ] || { echo "debian_package.sh: WITH_CUDA=fake is not for packages" >&2; exit 1; }

need="debhelper dpkg-dev postgresql-common postgresql-server-dev-all postgresql-$PG"
missing=$(for p in $need; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$missing" ]; then
	# shellcheck disable=SC2086 # one package a word
	echo "== installing:" $missing
	apt-get -o DPkg::Lock::Timeout=300 update -qq
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq $missing >/dev/null
fi

# Whether the build will have GPU kernels, as the Makefile decides.
expect_kernels=f
if [ "${WITH_CUDA:-auto}" != no ] &&
	{ [ -n "${CUDA_HOME:-}" ] || [ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc >/dev/null; }; then
	expect_kernels=t
fi

tmp=$(mktemp -d /tmp/gpuext-deb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
src=$tmp/gpuext

# The working tree as it is (tracked and untracked files, not ignored ones), without .git or .gpu.
mkdir "$src"
if git -C "$root" -c safe.directory="$root" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$root" -c safe.directory="$root" ls-files -z -co --exclude-standard |
		while IFS= read -r -d '' f; do
			case $f in .gpu/* | .git/*) continue ;; esac
			[ -e "$root/$f" ] && printf '%s\0' "$f"
		done | tar -C "$root" --null -T - -cf - | tar -C "$src" -xf -
else
	tar -C "$root" --exclude=.git --exclude=.gpu --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
		--exclude=results --exclude=tmp_check -cf - . | tar -C "$src" -xf -
fi

echo "== building in $src (gpu kernels expected: $expect_kernels${WITH_CUDA:+, WITH_CUDA=$WITH_CUDA}${CUDA_ARCH:+, CUDA_ARCH=$CUDA_ARCH})"
start=$(date +%s)
cd "$src"
# debian/control for the PostgreSQL versions this system supports.
pg_buildext updatecontrol
if dpkg-buildpackage -us -uc -b >"$tmp/build.log" 2>&1; then
	check "dpkg-buildpackage -us -uc -b ($(($(date +%s) - start)) s)" true
else
	tail -n 60 "$tmp/build.log"
	check "dpkg-buildpackage -us -uc -b" false
	echo "package: $pass passed, $fail failed"
	exit 1
fi
ls "$tmp"/*.deb

deb=$(ls "$tmp"/postgresql-"$PG"-gpuext_*.deb 2>/dev/null || true)
check "postgresql-$PG-gpuext was built" test -n "$deb"
if [ -n "$deb" ]; then
	check "dpkg -i $(basename "$deb")" dpkg -i "$deb"
	files=$(dpkg -L "postgresql-$PG-gpuext" 2>/dev/null || true)
	for f in "/usr/lib/postgresql/$PG/lib/gpuext.so" \
		"/usr/share/postgresql/$PG/extension/gpuext.control" \
		"/usr/share/postgresql/$PG/extension/gpuext--0.3.sql" \
		"/usr/share/postgresql/$PG/extension/gpuext--0.2.sql" \
		"/usr/share/postgresql/$PG/extension/gpuext--0.1.sql" \
		"/usr/share/postgresql/$PG/extension/gpuext--0.1--0.2.sql" \
		"/usr/share/postgresql/$PG/extension/gpuext--0.2--0.3.sql"; do
		check "dpkg -L lists $f" grep -qx "$f" <<<"$files"
	done
	if pg_virtualenv -v "$PG" "$root/test/debian_package.sh" --inside "$tmp/counts" "$expect_kernels" &&
		[ -s "$tmp/counts" ]; then
		read -r p f <"$tmp/counts"
		pass=$((pass + p))
		fail=$((fail + f))
	else
		check "pg_virtualenv -v $PG: the SQL checks ran" false
	fi
fi

if [ -n "${DEB_OUT:-}" ]; then
	mkdir -p "$DEB_OUT"
	cp "$tmp"/*.deb "$DEB_OUT"/
fi
echo "package: $pass passed, $fail failed"
[ "$fail" = 0 ]
