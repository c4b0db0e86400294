#!/bin/bash
# Custom Scan (GpuAgg) on TPC-H shapes against PostgreSQL's own plans in the same session, with
# DuckDB beside them on the very same rows.  Usage:
#   bash bench/tpch.sh [ROWS]            (ROWS default 10000000)
# The server comes from PGHOST/PGPORT/PGUSER/PGDATABASE; gpuext must be installable there and its
# library loaded by the session (it is LOADed here).  Both sides run at the server's settings
# (PostgreSQL's defaults on a fresh one), except max_parallel_workers_per_gather: 0 on the serial
# lines, WORKERS on the parallel ones.  shared_buffers must hold the tables for the figures to be
# about the aggregates rather than the disk: the script warns when lineitem and lineitem_f8 are
# larger (4GB holds 10M rows of both), and loads them with pg_prewarm where it is installed.
# Environment:
#   RUNS=5            timed runs per side after a warm-up pair (gpuext.enable_agg on and off in
#                     turn); medians of EXPLAIN ANALYZE's Planning plus Execution Time.  DuckDB: a
#                     warm-up run, then RUNS runs
#   WORKERS=8         max_parallel_workers_per_gather of the parallel lines (both sides)
#   THREADS_MANY=16   DuckDB's threads for its second column (the first is 1 thread)
#   GPUEXT_DEVICE=gpu gpuext.device for the run
#   REBUILD=1         make the tables again even where they already have ROWS rows
#   QUERIES=          a comma-separated subset of the lines' ids (q1n q1f q6n q6f five g1k gtext
#                     gmonth g1m gcase q18sub q1n_par q1f_par q6n_par q6f_par small); default all
#   DUCKDB_PYTHONPATH a folder holding the duckdb Python module, where python3 has none
#   DUCKDB_WHEELS     a folder of duckdb wheels (default .gpu/duckdb beside bench/), installed into a
#                     temporary folder when neither of the above imports duckdb
#   OUT               where the TSV copy goes (else /tmp)
# Data (bench/tpch_data.sql, schema gpuext_tpch): lineitem with the specification's 16 columns and
# value distributions (l_orderkey bigint, quantity, price, discount and tax numeric(15,2)),
# lineitem_f8 with those four as double precision and l_key1m (0 .. 999,999) for the 1M-group line,
# and lineitem_small, 1,000 of its rows.  Queries: TPC-H Q1 (DELTA 90; the specification's
# "interval '90' day (3)" without its "(3)", which PostgreSQL does not parse) and Q6 (DATE
# 1994-01-01, DISCOUNT 0.06, QUANTITY 24) as the specification writes them, over each table; the
# other shapes over lineitem_f8.  Each line: GpuAgg's median and plan, PostgreSQL's, their ratio,
# DuckDB's medians (CSV exported with COPY and loaded into an in-memory DuckDB: DECIMAL(15,2),
# DOUBLE, DATE, VARCHAR; the same SQL text), GpuAgg / DuckDB, the table's bytes over GpuAgg's time
# (GB/s), and the line's bar (PostgreSQL / GpuAgg).  Under it, GpuAgg's Stage Timing and Device
# Scan lines from one EXPLAIN (ANALYZE, VERBOSE).  Also the pinned host-to-device bandwidth
# (bench/arena_bw.cu, built with nvcc where there is one) and each table's floor at that rate.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
rows=${1:-10000000}
runs=${RUNS:-5}
workers=${WORKERS:-8}
threads_many=${THREADS_MANY:-16}
device=${GPUEXT_DEVICE:-gpu}
py=${PYTHON:-python3}
for v in "rows=$rows" "RUNS=$runs" "WORKERS=$workers" "THREADS_MANY=$threads_many"; do
	case ${v#*=} in '' | *[!0-9]* | 0) echo "${v%%=*} must be a positive integer, not '${v#*=}'" >&2; exit 2 ;; esac
done

psql_=(psql -X -q -v ON_ERROR_STOP=1)
work=$(mktemp -d "${TMPDIR:-/tmp}/tpch.XXXXXX")
trap 'rm -rf "$work"' EXIT
# calc EXPR [ARGS...]: awk arithmetic on ARGS (a, b, c).
calc() { awk -v a="${2:-}" -v b="${3:-}" -v c="${4:-}" "BEGIN { print ($1) }"; }
# mb BYTES: in MB, one decimal.
mb() { calc 'sprintf("%.1f", a / 1e6)' "$1"; }

# ---- The lines: id, name, table, workers, query, bar (PostgreSQL / GpuAgg at least) ----
q1() {
	echo "select l_returnflag, l_linestatus, sum(l_quantity) as sum_qty," \
		"sum(l_extendedprice) as sum_base_price, sum(l_extendedprice * (1 - l_discount)) as sum_disc_price," \
		"sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge, avg(l_quantity) as avg_qty," \
		"avg(l_extendedprice) as avg_price, avg(l_discount) as avg_disc, count(*) as count_order" \
		"from $1 where l_shipdate <= date '1998-12-01' - interval '90' day" \
		"group by l_returnflag, l_linestatus order by l_returnflag, l_linestatus"
}
q6() {
	echo "select sum(l_extendedprice * l_discount) as revenue from $1" \
		"where l_shipdate >= date '1994-01-01' and l_shipdate < date '1994-01-01' + interval '1' year" \
		"and l_discount between 0.06 - 0.01 and 0.06 + 0.01 and l_quantity < 24"
}
declare -A sql
sql[q1n]=$(q1 lineitem)
sql[q1f]=$(q1 lineitem_f8)
sql[q6n]=$(q6 lineitem)
sql[q6f]=$(q6 lineitem_f8)
five="sum(l_partkey), sum(l_orderkey), avg(l_extendedprice), min(l_suppkey), max(l_orderkey)"
sql[five]="select $five from lineitem_f8"
# The GROUP BY lines: a key and these aggregates.
per_group="sum(l_extendedprice), avg(l_quantity), count(*)"
sql[g1k]="select l_partkey % 1000, $per_group from lineitem_f8 group by 1"
sql[gtext]="select l_shipmode, $per_group from lineitem_f8 group by l_shipmode"
sql[gmonth]="select date_trunc('month', l_shipdate), $per_group from lineitem_f8 group by 1"
sql[g1m]="select l_key1m, $per_group from lineitem_f8 group by l_key1m"
# TPC-H Q12's aggregates (counts by CASE over char(1) columns) on lineitem alone, with integer arithmetic.
sql[gcase]="select l_shipmode, sum(case when l_linestatus = 'O' then 1 else 0 end) as open_lines,\
 sum(case when l_returnflag = 'R' or l_returnflag = 'A' then 1 else 0 end) as closed_lines,\
 sum(l_linenumber * 2) as lines from lineitem where l_receiptdate >= date '1994-01-01' group by l_shipmode"
# TPC-H Q18's subquery as the specification writes it: an order's lines summed, ~1 group per 4 rows.
sql[q18sub]="select l_orderkey from lineitem group by l_orderkey having sum(l_quantity) > 300"
sql[small]="select $five from lineitem_small"

ids=()
declare -A name table nworkers query bar seen
line() {
	ids+=("$1")
	name[$1]=$2 table[$1]=$3 nworkers[$1]=$4 query[$1]=$5 bar[$1]=$6
}
line q1n "Q1, numeric(15,2), serial" lineitem 0 q1n 15
line q1f "Q1, double precision (lineitem_f8), serial" lineitem_f8 0 q1f 15
line q6n "Q6, numeric(15,2), serial" lineitem 0 q6n 8
line q6f "Q6, double precision (lineitem_f8), serial" lineitem_f8 0 q6f 8
line five "five aggregates, no WHERE (lineitem_f8), serial" lineitem_f8 0 five 8
line g1k "GROUP BY l_partkey % 1000, 1,000 keys (lineitem_f8), serial" lineitem_f8 0 g1k 10
line gtext "GROUP BY l_shipmode, char(10) key (lineitem_f8), serial" lineitem_f8 0 gtext 8
line gmonth "GROUP BY date_trunc('month', l_shipdate) (lineitem_f8), serial" lineitem_f8 0 gmonth 8
line g1m "GROUP BY l_key1m, 1M integer groups (lineitem_f8), serial" lineitem_f8 0 g1m 3
line gcase "GROUP BY l_shipmode, integer CASE counts (Q12's shape), serial" lineitem 0 gcase 1
line q18sub "Q18's subquery, GROUP BY l_orderkey (2.5M numeric(15,2) groups), serial" lineitem 0 q18sub 3
line q1n_par "Q1, numeric(15,2), $workers workers" lineitem "$workers" q1n 4
line q1f_par "Q1, double precision (lineitem_f8), $workers workers" lineitem_f8 "$workers" q1f 4
line q6n_par "Q6, numeric(15,2), $workers workers" lineitem "$workers" q6n 4
line q6f_par "Q6, double precision (lineitem_f8), $workers workers" lineitem_f8 "$workers" q6f 4
line small "five aggregates, 1,000-row table (lineitem_small), serial" lineitem_small 0 small 0.95
if [[ -n ${QUERIES:-} ]]; then
	wanted=()
	for id in ${QUERIES//,/ }; do
		[[ -n ${name[$id]:-} ]] || { echo "QUERIES: no line '$id' (lines: ${ids[*]})" >&2; exit 2; }
		wanted+=("$id")
	done
	ids=("${wanted[@]}")
fi

# ---- Header ----
"${psql_[@]}" -c 'SET client_min_messages = warning' -c 'CREATE EXTENSION IF NOT EXISTS gpuext'
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1) || true
commit=${COMMIT:-$(git -C "$here" rev-parse --short HEAD 2>/dev/null ||
	cat "$here/../.gpu/commit" 2>/dev/null || echo unknown)}
server=$("${psql_[@]}" -Atc 'SELECT version()')
server=${server%% on *}
when=$(date -u '+%Y-%m-%d %H:%M UTC')
gpuext_dev=$("${psql_[@]}" -At -c "LOAD 'gpuext'" -c "SET gpuext.device = $device" \
	-c "SELECT device_name || ' (' || device_state || coalesce(', ' || nullif(state_detail, ''), '') || ')'
		FROM gpuext_info()")
echo "== bench/tpch.sh: $server; GPU ${gpu:-none (no nvidia-smi)}; gpuext $commit; $when; rows $rows"
echo "   gpuext.device $device: $gpuext_dev; runs $runs; parallel lines $workers workers each side;" \
	"shared_buffers $("${psql_[@]}" -Atc 'SHOW shared_buffers'), work_mem $("${psql_[@]}" -Atc 'SHOW work_mem')"

# ---- Data ----
note=$("${psql_[@]}" -Atc "SELECT obj_description(to_regclass('gpuext_tpch.lineitem_f8'), 'pg_class')")
if [[ ${REBUILD:-0} == 1 || $note != "bench/tpch_data.sql, $rows rows" ]]; then
	start=$SECONDS
	"${psql_[@]}" -v rows="$rows" -f "$here/tpch_data.sql"
	note=$("${psql_[@]}" -Atc "SELECT obj_description(to_regclass('gpuext_tpch.lineitem_f8'), 'pg_class')")
	[[ $note == "bench/tpch_data.sql, $rows rows" ]] || { echo "bench/tpch_data.sql did not make $rows rows" >&2; exit 1; }
	echo "   tables made in $((SECONDS - start)) s (bench/tpch_data.sql)"
else
	echo "   tables of $rows rows already there (REBUILD=1 makes them again)"
fi
declare -A bytes
for t in lineitem lineitem_f8 lineitem_small; do
	bytes[$t]=$("${psql_[@]}" -Atc "SELECT pg_relation_size('gpuext_tpch.$t')")
done
buffers=$("${psql_[@]}" -Atc "SELECT pg_size_bytes(current_setting('shared_buffers'))")
if ((bytes[lineitem] + bytes[lineitem_f8] > buffers)); then
	echo "   WARNING: lineitem and lineitem_f8 ($(mb $((bytes[lineitem] + bytes[lineitem_f8]))) MB) do not fit" \
		"in shared_buffers ($(mb "$buffers") MB): the runs read the disk or the page cache"
fi
if [[ $("${psql_[@]}" -Atc "SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_prewarm'") == 1 ]]; then
	"${psql_[@]}" -c 'SET client_min_messages = warning' -c 'CREATE EXTENSION IF NOT EXISTS pg_prewarm' \
		-c "SELECT pg_prewarm('gpuext_tpch.' || t) FROM unnest('{lineitem,lineitem_f8,lineitem_small}'::text[]) t" \
		>/dev/null
fi

# ---- Host-to-device bandwidth: bench/arena_bw's cudaMallocHost memory to the device ----
h2d="" h2d_note=""
nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
[[ -x $nvcc ]] || nvcc=$(command -v nvcc || true)
bw=$here/arena_bw
if [[ ! -x $bw && -n $nvcc ]]; then
	cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d .) || true
	arch=${cap:+arch=compute_$cap,code=sm_$cap}
	bw=$work/arena_bw
	if ! "$nvcc" -std=c++17 -O2 -gencode "${arch:-arch=compute_75,code=compute_75}" -o "$bw" "$here/arena_bw.cu" \
		-cudart static >"$work/nvcc.log" 2>&1; then
		h2d_note="bench/arena_bw.cu did not build: $(tail -1 "$work/nvcc.log")"
		bw=""
	fi
fi
if [[ -z $h2d_note && ! -x $bw ]]; then
	h2d_note="no nvcc to build bench/arena_bw.cu"
elif [[ -z $h2d_note ]]; then
	if "$bw" >"$work/bw.txt" 2>&1; then
		h2d=$(awk -F, '$1 == "to device" { print $3 }' "$work/bw.txt")
	else
		h2d_note="bench/arena_bw failed: $(tail -1 "$work/bw.txt")"
	fi
fi
floors=""
for t in lineitem lineitem_f8; do
	floors+="${floors:+, }$t $(mb "${bytes[$t]}") MB"
	if [[ -n $h2d ]]; then
		floors+=" (floor $(calc 'sprintf("%.1f", a / b / 1e6)' "${bytes[$t]}" "$h2d") ms)"
	fi
done
if [[ -n $h2d ]]; then
	echo "   pinned host-to-device bandwidth (cudaMallocHost, bench/arena_bw): $h2d GB/s;" \
		"tables, and bytes / that bandwidth: $floors"
else
	echo "   pinned host-to-device bandwidth not measured ($h2d_note); tables: $floors"
fi

# ---- PostgreSQL: each line, GpuAgg allowed against not, in one session ----
declare -A on_ms on_plan off_ms off_plan notes
start=$SECONDS
for id in "${ids[@]}"; do
	pairs=$runs
	# Sub-millisecond queries: more pairs, so that the median is not one run's noise.
	[[ $id == small ]] && pairs=$((runs * 30))
	if out=$("${psql_[@]}" -At -F $'\x1f' -v q="${sql[${query[$id]}]}" -v workers="${nworkers[$id]}" \
		-v pairs="$pairs" -v device="$device" -f "$here/tpch_time.sql" 2>"$work/err"); then
		IFS=$'\x1f' read -r "on_plan[$id]" "on_ms[$id]" "off_plan[$id]" "off_ms[$id]" "notes[$id]" <<<"$out"
	else
		on_plan[$id]="error" on_ms[$id]="" off_plan[$id]="" off_ms[$id]=""
		notes[$id]="error: $(tr '\n' ' ' <"$work/err")"
	fi
	echo "   measured ${name[$id]}: GpuAgg ${on_ms[$id]} ms, PostgreSQL ${off_ms[$id]} ms" >&2
done
echo "   PostgreSQL's lines took $((SECONDS - start)) s"

# ---- DuckDB: the same rows and the same SQL, 1 and THREADS_MANY threads ----
declare -A duck
duck_errors=() duck_version=""
# with_duck COMMAND...: COMMAND with the folder that holds duckdb (if any) first in PYTHONPATH.
duck_path=${DUCKDB_PYTHONPATH:-}
with_duck() { PYTHONPATH="$duck_path${PYTHONPATH:+${duck_path:+:}$PYTHONPATH}" "$@"; }
duck_ok() { with_duck "$py" -c 'import duckdb' >/dev/null 2>&1; }
if ! duck_ok; then
	# From wheels: with pip, else unpacked (a wheel is a zip file) one at a time until one imports.
	wheels=${DUCKDB_WHEELS:-$here/../.gpu/duckdb}
	duck_path=$work/duckdb-py
	if [[ -d $wheels ]]; then
		"$py" -m pip install -q --no-index --no-deps --no-compile --find-links "$wheels" --target "$duck_path" duckdb \
			>"$work/pip.log" 2>&1 || true
		for w in "$wheels"/duckdb-*.whl; do
			duck_ok || { rm -rf "$duck_path" && "$py" -m zipfile -e "$w" "$duck_path" 2>/dev/null; } || true
		done
	fi
fi
if ! duck_ok; then
	echo "   DuckDB: no duckdb module for $py (nor in DUCKDB_PYTHONPATH, nor installable from DUCKDB_WHEELS" \
		"or .gpu/duckdb): the DuckDB columns are missing"
else
	start=$SECONDS
	: >"$work/tables.tsv"
	: >"$work/queries.tsv"
	for id in "${ids[@]}"; do
		t=${table[$id]} q=${query[$id]}
		if [[ -z ${seen[$t]:-} ]]; then
			seen[$t]=1
			# DuckDB's types for PostgreSQL's: numeric(15,2) as DECIMAL(15,2), the strings as VARCHAR.
			cols=$("${psql_[@]}" -Atc "SELECT string_agg(format('%I %s', attname, CASE atttypid
					WHEN 'numeric'::regtype THEN replace(format_type(atttypid, atttypmod), 'numeric', 'DECIMAL')
					WHEN 'float8'::regtype THEN 'DOUBLE' WHEN 'int8'::regtype THEN 'BIGINT'
					WHEN 'int4'::regtype THEN 'INTEGER' WHEN 'date'::regtype THEN 'DATE' ELSE 'VARCHAR' END), ', ' ORDER BY attnum)
				FROM pg_attribute WHERE attrelid = 'gpuext_tpch.$t'::regclass AND attnum > 0 AND NOT attisdropped")
			PGOPTIONS="${PGOPTIONS:-} -c datestyle=ISO,YMD" "${psql_[@]}" \
				-c "COPY gpuext_tpch.$t TO STDOUT (FORMAT csv)" >"$work/$t.csv"
			printf '%s\t%s\t%s\n' "$t" "$cols" "$work/$t.csv" >>"$work/tables.tsv"
		fi
		if [[ -z ${seen[q:$q]:-} ]]; then
			seen[q:$q]=1
			printf '%s\t%s\n' "$q" "${sql[$q]}" >>"$work/queries.tsv"
		fi
	done
	with_duck "$py" "$here/tpch_duckdb.py" "$work/tables.tsv" "$work/queries.tsv" "1,$threads_many" "$runs" \
		>"$work/duck.tsv" 2>"$work/duck.err" || duck_errors+=("tpch_duckdb.py failed: $(tail -1 "$work/duck.err")")
	rm -f "$work"/*.csv
	rows_loaded=""
	while IFS=$'\t' read -r kind a b c; do
		case $kind in
			version) duck_version=$a ;;
			rows) rows_loaded+="${rows_loaded:+, }$a $b" ;;
			ms) duck[$a:$b]=$c ;;
			error)
				duck[$a:$b]=error
				duck_errors+=("DuckDB, $a at $b threads: $c")
				;;
		esac
	done <"$work/duck.tsv"
	echo "   DuckDB $duck_version (in memory, from CSV: $rows_loaded rows; the same SQL text)," \
		"threads 1 and $threads_many, median of $runs after a warm-up; export, load and runs $((SECONDS - start)) s"
fi

# ---- The lines ----
tsv=${OUT:+$OUT/tpch.tsv}
tsv=${tsv:-/tmp/tpch-$(date -u +%Y%m%d-%H%M%S).tsv}
{
	echo "# bench/tpch.sh; $server; GPU ${gpu:-none}; gpuext $commit; $when; rows $rows; runs $runs; h2d_gbs ${h2d:-none}"
	printf '%s\t' line query table workers gpuagg_ms gpuagg_plan postgres_ms postgres_plan ratio \
		duckdb_1t_ms "duckdb_${threads_many}t_ms" gpuagg_over_duckdb table_bytes gpuagg_gbs floor_ms bar met
	echo gpuagg_notes
} >"$tsv"
echo
echo "query | GpuAgg ms (plan) | PostgreSQL ms (plan) | ratio | DuckDB 1t / ${threads_many}t ms" \
	"| GpuAgg/DuckDB$threads_many | GB/s | bar"
met_n=0 bars_n=0 below1=()
for id in "${ids[@]}"; do
	t=${table[$id]} q=${query[$id]}
	ratio="" met="not measured" over="" gbs="" floor=""
	d1=${duck[$q:1]:-} dn=${duck[$q:$threads_many]:-}
	if [[ -n ${on_ms[$id]} && -n ${off_ms[$id]} && $(calc 'a > 0' "${on_ms[$id]}") == 1 ]]; then
		ratio=$(calc 'sprintf("%.2f", b / a)' "${on_ms[$id]}" "${off_ms[$id]}")
		gbs=$(calc 'sprintf("%.2f", b / a / 1e6)' "${on_ms[$id]}" "${bytes[$t]}")
		bars_n=$((bars_n + 1))
		if [[ $(calc 'a >= b' "$ratio" "${bar[$id]}") == 1 ]]; then met=met met_n=$((met_n + 1)); else met="not met"; fi
		[[ ${on_plan[$id]} == *GpuAgg* ]] || met+=" (no GpuAgg in the plan)"
		[[ $id == small || $(calc 'a >= 1' "$ratio") == 1 ]] || below1+=("$id")
		[[ ! $dn =~ ^[0-9.]*[1-9][0-9.]*$ ]] || over=$(calc 'sprintf("%.2f", a / b)' "${on_ms[$id]}" "$dn")
	fi
	[[ -z $h2d ]] || floor=$(calc 'sprintf("%.1f", a / b / 1e6)' "${bytes[$t]}" "$h2d")
	echo "${name[$id]} | ${on_ms[$id]:-?} (${on_plan[$id]}) | ${off_ms[$id]:-?} (${off_plan[$id]}) | ${ratio:-?}" \
		"| ${d1:--} / ${dn:--} | ${over:--} | ${gbs:--} | >= ${bar[$id]}x $met"
	[[ -z ${notes[$id]} ]] || echo "    ${notes[$id]}"
	printf '%s\t' "$id" "${name[$id]}" "$t" "${nworkers[$id]}" "${on_ms[$id]}" "${on_plan[$id]}" "${off_ms[$id]}" \
		"${off_plan[$id]}" "$ratio" "$d1" "$dn" "$over" "${bytes[$t]}" "$gbs" "$floor" "${bar[$id]}" "$met" >>"$tsv"
	echo "${notes[$id]}" >>"$tsv"
done
echo "bars met: $met_n of $bars_n; lines under 1.0x (the 1,000-row table's bar is 0.95x): ${below1[*]:-none}"
for e in "${duck_errors[@]}"; do echo "$e"; done
echo "queries:"
for id in "${ids[@]}"; do
	q=${query[$id]}
	[[ -n ${seen[p:$q]:-} ]] && continue
	seen[p:$q]=1
	echo "  $q: ${sql[$q]}"
done
echo "TSV: $tsv; $SECONDS s in all"
