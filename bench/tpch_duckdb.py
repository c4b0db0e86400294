#!/usr/bin/env python3
"""bench/tpch_duckdb.py: the DuckDB side of bench/tpch.sh.

Loads CSV files exported from PostgreSQL into an in-memory DuckDB and times the same queries, for
each thread count: a warm-up run, then RUNS runs, median.  A query runs to its last row inside
DuckDB and one row is fetched, as EXPLAIN ANALYZE runs PostgreSQL's without sending rows.
Usage: tpch_duckdb.py TABLES QUERIES THREADS RUNS
  TABLES   lines of name<TAB>column definitions<TAB>CSV file
  QUERIES  lines of id<TAB>SQL
  THREADS  comma-separated thread counts (SET threads = N), e.g. 1,16
Prints tab-separated lines: "version" and DuckDB's version; "rows", table and rows loaded; "ms",
query id, threads and the median; "error", query id, threads and DuckDB's message.
"""
import statistics
import sys
import time

import duckdb


def main():
    tables, queries, threads, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    con = duckdb.connect(":memory:")
    print(f"version\t{duckdb.__version__}", flush=True)
    with open(tables) as f:
        for line in f.read().splitlines():
            name, columns, path = line.split("\t")
            con.execute(f"CREATE TABLE {name} ({columns})")
            con.execute(f"COPY {name} FROM '{path}' (FORMAT csv, HEADER false)")
            print(f"rows\t{name}\t{con.execute(f'SELECT count(*) FROM {name}').fetchone()[0]}", flush=True)
    with open(queries) as f:
        todo = [line.split("\t", 1) for line in f.read().splitlines()]
    for n in threads.split(","):
        con.execute(f"SET threads = {int(n)}")
        for qid, sql in todo:
            try:
                ms = []
                for i in range(runs + 1):
                    start = time.perf_counter()
                    con.execute(sql).fetchone()
                    if i > 0:
                        ms.append((time.perf_counter() - start) * 1000)
                print(f"ms\t{qid}\t{n}\t{statistics.median(ms):.2f}", flush=True)
            except duckdb.Error as e:
                print(f"error\t{qid}\t{n}\t{' '.join(str(e).split())}", flush=True)


if __name__ == "__main__":
    main()
