#!/bin/bash
# The gpuext demo: build and install, start a throwaway PostgreSQL 15 (pg_virtualenv),
# create the extension, load sample data and compare gpu_sort(array_agg(x)) with
# array_agg(x ORDER BY x), with timings.  As root on Debian 12 it installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

. test/debian_setup.sh
make -s -j"$(nproc)"
$SUDO make -s install >/dev/null

pg_virtualenv -v 15 psql -X -v ON_ERROR_STOP=1 -f test/demo.sql
