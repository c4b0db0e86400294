#!/bin/bash
# The gpuext demo: build and install, start a throwaway PostgreSQL 15 (pg_virtualenv),
# create the extension, load sample data and compare gpu_sort(array_agg(x)) with
# array_agg(x ORDER BY x), with timings.  As root on Debian 12 it installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES="postgresql-15 postgresql-server-dev-15 postgresql-common make gcc"
SUDO=""
if [ "$(id -u)" = 0 ]; then
	missing=$(for p in $PACKAGES; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
	if [ -n "$missing" ]; then
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
	fi
else
	SUDO=sudo
fi
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
make -s -j"$(nproc)"
$SUDO make -s install >/dev/null

pg_virtualenv -v 15 psql -X -v ON_ERROR_STOP=1 <<'SQL'
\pset footer off
CREATE EXTENSION gpuext;
\echo '== where gpuext runs'
SELECT gpu_kernels, device_state, coalesce(device_name, state_detail) AS device,
       round(open_time_ms::numeric, 1) AS open_ms
FROM gpuext_info();

\echo '== sample data: 2 million float8 readings, 1% NULL, a few NaN and infinities'
CREATE TABLE readings AS
SELECT CASE WHEN random() < 0.01 THEN NULL
            WHEN random() < 0.001 THEN 'NaN'::float8
            WHEN random() < 0.001 THEN '-Infinity'::float8
            ELSE (random() - 0.5) * 1e6 END AS x
FROM generate_series(1, 2000000);

\timing on
\echo '== PostgreSQL: array_agg(x ORDER BY x)'
CREATE TEMP TABLE by_postgres AS SELECT array_agg(x ORDER BY x) AS a FROM readings;
\echo '== gpuext: gpu_sort(array_agg(x))'
CREATE TEMP TABLE by_gpuext AS SELECT gpu_sort(array_agg(x)) AS a FROM readings;
\timing off

\echo '== same answer, element for element (NULLs last, NaN above every number)'
SELECT p.a = g.a AS identical, cardinality(g.a) AS elements,
       g.a[1] AS first, g.a[cardinality(g.a) - 20000] AS near_end
FROM by_postgres p, by_gpuext g;
SELECT gpu_sort('{3,NaN,-Infinity,-0,NULL,1}'::float8[]) AS ascending,
       gpu_sort('{3,NaN,-Infinity,-0,NULL,1}'::float8[], true) AS descending;
SQL
