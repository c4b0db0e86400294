#!/bin/bash
# The gpuext demo, on Debian 12: build and install gpuext, start a throwaway PostgreSQL 15 with
# gpuext in shared_preload_libraries (pg_virtualenv), and run test/demo.sql there: which GPU runs
# the work (or why the CPU does), EXPLAIN of an ORDER BY, the same ORDER BY timed with GpuSort on
# and off and its answers compared, an exact float sum beside PostgreSQL's, and gpu_sort.
# As root it installs the Debian packages it needs (test/debian_setup.sh).  The build is the one
# `make` makes: with the GPU code when nvcc is found (CUDA_HOME, /usr/local/cuda or PATH; a few
# minutes for every GPU architecture), else CPU-only.
set -euo pipefail
cd "$(dirname "$0")/.."

. test/debian_setup.sh
if [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ] || command -v nvcc >/dev/null; then
	echo "== building gpuext with its GPU code (nvcc found)"
else
	echo "== building gpuext CPU-only (no nvcc: install the CUDA toolkit for the GPU code)"
fi
make -s -j"$(nproc)"
echo "== installing into $("$PG_CONFIG" --pkglibdir)"
$SUDO make -s install PG_CONFIG="$PG_CONFIG" >/dev/null

echo "== a throwaway PostgreSQL 15 with shared_preload_libraries = gpuext"
pg_virtualenv -v 15 -o 'shared_preload_libraries=gpuext' psql -X -f test/demo.sql
