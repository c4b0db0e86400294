#!/usr/bin/env python3
"""Replays sqlsmith's queries on two servers, query by query, and compares the outcomes.

test/sqlsmith.sh calls it: side "plain" is PostgreSQL without gpuext, side "gpuext" the server
with gpuext preloaded and forced.  Each query runs on one side and then on the other as sqlsmith
runs it (BEGIN, the query, ROLLBACK, under its statement_timeout), its rows read and dropped one
at a time.  What would make the two runs differ by chance is fixed: TABLESAMPLE gets REPEATABLE
(0), random() is seeded before each query, and both databases are vacuumed at the same points
(autovacuum is off: it would change each side's plans at other times).

A query that times out on one side only runs there again with ten times the timeout.  A query
whose outcome differs runs again on both sides; an error that stays with gpuext only is looked
for in other plans of PostgreSQL without gpuext (hash or sort aggregation, each join method, with
and without workers), since which row raises which error first depends on the plan, and fails
the test only if none raises it.  Each query is also PREPAREd on the plain side, to count those
that PostgreSQL rejects before planning (where gpuext has no part), and EXPLAINed on both sides,
to count the plans with Sort and Aggregate without gpuext and with GpuSort and GpuAgg with it.
Talks to libpq through ctypes: no Python package is needed.
"""
import argparse
import collections
import ctypes
import ctypes.util
import os
import re
import sys
import threading
import time

CONNECTION_OK = 0
PGRES_FATAL_ERROR = 7
PGRES_SINGLE_TUPLE = 9
PG_DIAG_SQLSTATE = ord('C')
PG_DIAG_MESSAGE_PRIMARY = ord('M')
TIMEOUT = '57014:canceling statement due to statement timeout'
LOST = 'lost:connection lost'
# PostgreSQL's float sum raises this when its running sum passes the largest value, so whether it
# does depends on the order of the rows (NaN or an infinity first: no error); GpuAgg's exact sum
# does not depend on the order, and counts NaN and the infinities aside.
FLOAT_OVERFLOW = '22003:value out of range: overflow'


# Plans of PostgreSQL without gpuext that take the rows in other orders, as SET LOCAL lists.
PLAN_VARIANTS = [
    ['enable_hashagg = off'], ['enable_sort = off'], ['max_parallel_workers_per_gather = 0'],
    ['enable_hashagg = off', 'max_parallel_workers_per_gather = 0'],
    ['enable_sort = off', 'max_parallel_workers_per_gather = 0'],
    ['parallel_setup_cost = 0', 'parallel_tuple_cost = 0', 'min_parallel_table_scan_size = 0'],
    ['enable_nestloop = off'], ['enable_hashjoin = off'], ['enable_mergejoin = off'],
    ['enable_indexscan = off', 'enable_bitmapscan = off'],
]


def load_libpq(path):
    """libpq with the prototypes used here."""
    lib = ctypes.CDLL(path or ctypes.util.find_library('pq') or 'libpq.so.5')
    vp, cp, i = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
    for name, res, args in [
            ('PQconnectdb', vp, [cp]), ('PQstatus', i, [vp]), ('PQerrorMessage', cp, [vp]),
            ('PQfinish', None, [vp]), ('PQsendQuery', i, [vp, cp]), ('PQexec', vp, [vp, cp]),
            ('PQsetSingleRowMode', i, [vp]), ('PQgetResult', vp, [vp]),
            ('PQresultStatus', i, [vp]), ('PQresultErrorField', cp, [vp, i]),
            ('PQclear', None, [vp]), ('PQgetvalue', cp, [vp, i, i]),
            ('PQgetCancel', vp, [vp]), ('PQfreeCancel', None, [vp]),
            ('PQcancel', i, [vp, cp, i]), ('PQsetNoticeProcessor', vp, [vp, vp, vp])]:
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    return lib


NOTICE_PROC = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)
QUIET = NOTICE_PROC(lambda arg, msg: None)


class Side:
    """One server: a connection that comes back after the server restarts."""

    def __init__(self, lib, name, conninfo, timeout_ms, hang_s):
        self.lib, self.name, self.conninfo = lib, name, conninfo.encode()
        self.timeout_ms, self.hang_s = timeout_ms, hang_s
        self.conn = None
        self.hangs = 0
        self.lost = 0

    def connect(self, wait_s=120):
        """Connects as sqlsmith does (its settings), waiting for a server that restarts."""
        deadline = time.time() + wait_s
        while True:
            conn = self.lib.PQconnectdb(self.conninfo)
            if self.lib.PQstatus(conn) == CONNECTION_OK:
                break
            err = self.lib.PQerrorMessage(conn).decode(errors='replace').strip()
            self.lib.PQfinish(conn)
            if time.time() > deadline:
                sys.exit(f'sqlsmith_replay: cannot connect to the {self.name} server: {err}')
            time.sleep(0.5)
        self.conn = conn
        self.lib.PQsetNoticeProcessor(conn, ctypes.cast(QUIET, ctypes.c_void_p), None)
        self.run(f"SET statement_timeout TO {self.timeout_ms}; SET client_min_messages TO 'ERROR'; "
                 "SET application_name TO 'sqlsmith::dut'")

    def recover(self):
        """A new connection where the last statement lost this one."""
        if self.lib.PQstatus(self.conn) != CONNECTION_OK:
            self.lost += 1
            self.lib.PQfinish(self.conn)
            self.connect()

    def run(self, sql, rows=None, watch=False):
        """Runs sql; returns 'ok', 'SQLSTATE:message' or LOST; appends the first columns to rows."""
        lib, conn = self.lib, self.conn
        if lib.PQstatus(conn) != CONNECTION_OK or not lib.PQsendQuery(conn, sql.encode()):
            return LOST
        lib.PQsetSingleRowMode(conn)
        # A statement that outlives its timeout by far is a hang: ask the server to cancel it.
        hung = []
        if watch:
            cancel = lib.PQgetCancel(conn)

            def watchdog():
                hung.append(1)
                lib.PQcancel(cancel, ctypes.create_string_buffer(256), 256)
            timer = threading.Timer(self.hang_s, watchdog)
            timer.start()
        outcome = 'ok'
        try:
            while True:
                res = lib.PQgetResult(conn)
                if not res:
                    break
                status = lib.PQresultStatus(res)
                if status == PGRES_FATAL_ERROR:
                    state = lib.PQresultErrorField(res, PG_DIAG_SQLSTATE)
                    msg = lib.PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) or b''
                    outcome = (state.decode() + ':' + msg.decode(errors='replace').replace('\n', ' ')
                               if state else LOST)
                elif status == PGRES_SINGLE_TUPLE and rows is not None:
                    rows.append(lib.PQgetvalue(res, 0, 0).decode(errors='replace'))
                lib.PQclear(res)
        finally:
            if watch:
                timer.cancel()
                lib.PQfreeCancel(cancel)
        if lib.PQstatus(conn) != CONNECTION_OK:
            outcome = LOST
        if hung:
            self.hangs += 1
            outcome = f'hang:statement ran past its statement_timeout + {self.hang_s} s'
        return outcome

    def attempt(self, query, settings=''):
        """The query as sqlsmith runs it, in a transaction rolled back, random() seeded; settings
        are SET LOCAL commands for this run."""
        self.run('BEGIN; SELECT setseed(0)' + settings)
        outcome = self.run(query, watch=True)
        self.run('ROLLBACK')
        self.recover()
        return outcome

    def vacuum(self, superuser):
        """VACUUM of the database, as its superuser (the tables are not the role smith's)."""
        conn = self.lib.PQconnectdb(self.conninfo + f' user={superuser}'.encode())
        if self.lib.PQstatus(conn) == CONNECTION_OK:
            self.lib.PQsetNoticeProcessor(conn, ctypes.cast(QUIET, ctypes.c_void_p), None)
            res = self.lib.PQexec(conn, b'VACUUM')
            self.lib.PQclear(res)
        self.lib.PQfinish(conn)

    def analyzes(self, query):
        """Whether PostgreSQL gets the query past parse analysis (PREPARE plans nothing)."""
        ok = self.run('PREPARE sqlsmith_query AS ' + query) == 'ok'
        if ok:
            self.run('DEALLOCATE sqlsmith_query')
        self.recover()
        return ok

    def plan(self, query):
        """EXPLAIN's text of the query, or '' where EXPLAIN fails."""
        rows = []
        self.run('BEGIN')
        outcome = self.run('EXPLAIN (COSTS OFF) ' + query, rows)
        self.run('ROLLBACK')
        self.recover()
        return '\n'.join(rows) if outcome == 'ok' else ''


def read_queries(path):
    """sqlsmith --dry-run's output, statements each ended by ';' at the end of a line, one at a
    time, with a fixed seed for every TABLESAMPLE."""
    lines = []
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            lines.append(line)
            if line.endswith(';\n'):
                q = ''.join(lines)[:-2].strip()
                lines = []
                if q:
                    yield re.sub(r'(tablesample \w+ \([^()]*\))', r'\1 repeatable (0)', q)


def same(a, b):
    """Whether two outcomes are the same error, but for numbers in the message (a time, a size, a
    snapshot's name in hexadecimal)."""
    def mask(s):
        return re.sub(r'[0-9a-fA-F]*[0-9][0-9a-fA-F]*', '#', s)
    return mask(a) == mask(b)


def row_error(outcome):
    """An error that a value raises (a data exception, a NaN that cannot be converted), so that
    which of two such errors a query raises depends on which row its plan takes first."""
    return outcome.startswith('22') or outcome.startswith('0A000:cannot convert')


def internal(outcome):
    """An error that is a bug rather than the query's: elog's XX000 and kin."""
    return outcome.startswith('XX') or 'cache lookup failed' in outcome


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--queries', required=True)
    ap.add_argument('--plain', required=True, help='conninfo of the server without gpuext')
    ap.add_argument('--gpuext', required=True, help='conninfo of the server with gpuext')
    ap.add_argument('--timeout-ms', type=int, default=1000, help="statement_timeout (sqlsmith's: 1s)")
    ap.add_argument('--duration', type=float, default=0, help='seconds; 0: run every query')
    ap.add_argument('--hang', type=int, default=60, help='seconds past the timeout that make a hang')
    ap.add_argument('--libpq', default='')
    ap.add_argument('--superuser', required=True, help='the role that runs VACUUM')
    ap.add_argument('--vacuum-every', type=int, default=1000, help='queries between two VACUUMs')
    ap.add_argument('--out', required=True, help='folder for the per-query results and reports')
    args = ap.parse_args()

    lib = load_libpq(args.libpq)
    long_timeout = args.timeout_ms * 10
    hang_s = args.hang + long_timeout // 1000
    sides = {n: Side(lib, n, c, args.timeout_ms, hang_s)
             for n, c in (('plain', args.plain), ('gpuext', args.gpuext))}
    for s in sides.values():
        s.connect()
    queries = read_queries(args.queries)
    start = time.time()
    errors = {n: collections.Counter() for n in sides}
    timeouts = collections.Counter()
    plans = collections.Counter()
    found = collections.defaultdict(list)
    outcome = {}
    done = 0
    results = open(os.path.join(args.out, 'results.tsv'), 'w')
    for i, q in enumerate(queries):
        if args.duration and time.time() - start > args.duration:
            break
        listed = []
        if i and i % args.vacuum_every == 0:
            for s in sides.values():
                s.vacuum(args.superuser)
        plans['rejected'] += not sides['plain'].analyzes(q)
        pplan, gplan = sides['plain'].plan(q), sides['gpuext'].plan(q)
        has = {'Sort': bool(re.search(r'(^|->  )(Incremental )?Sort\b', pplan, re.M)),
               'Aggregate': bool(re.search(r'(^|->  )(Partial |Finalize )?\w*Aggregate\b', pplan, re.M)),
               'GpuSort': 'Custom Scan (GpuSort)' in gplan, 'GpuAgg': 'Custom Scan (GpuAgg)' in gplan}
        plans.update(k for k, v in has.items() if v)
        plans['explained'] += bool(pplan and gplan)
        out = {n: s.attempt(q) for n, s in sides.items()}
        # A timeout on one side only: that side again with ten times the time.
        tout = [n for n in sides if out[n] == TIMEOUT]
        if len(tout) == 2:
            timeouts['both'] += 1
        elif len(tout) == 1:
            timeouts['only ' + tout[0]] += 1
            out[tout[0]] = sides[tout[0]].attempt(q, f'; SET LOCAL statement_timeout TO {long_timeout}')
            if out[tout[0]] == TIMEOUT:
                timeouts[f'only {tout[0]}, again at {long_timeout} ms'] += 1
                if tout[0] == 'gpuext':
                    listed.append('timeouts only with gpuext, at ten times the timeout too')
        # A difference: both sides again, to leave out what happens once.
        if TIMEOUT not in out.values() and not same(out['plain'], out['gpuext']):
            again = {n: s.attempt(q) for n, s in sides.items()}
            if same(again['plain'], again['gpuext']) and TIMEOUT not in again.values():
                out = again
        done += 1
        for n in sides:
            if out[n] != 'ok':
                errors[n][out[n].split(':', 1)[0]] += 1
        p, g = out['plain'], out['gpuext']
        if internal(g):
            listed.append("PostgreSQL's own internal errors" if same(p, g) else 'internal errors with gpuext')
        if internal(p) and not same(p, g):
            listed.append('internal errors without gpuext')
        for n in sides:
            if out[n] == LOST or out[n].startswith('hang:'):
                listed.append(f'connections lost or hangs {"without" if n == "plain" else "with"} gpuext')
        if TIMEOUT in out.values() or same(p, g):
            pass
        elif p == FLOAT_OVERFLOW and has['GpuAgg']:
            listed.append('float overflows PostgreSQL raises in the order it adds')
        elif g == 'ok':
            listed.append('errors only without gpuext')
        else:
            variant = next((v for v in PLAN_VARIANTS if same(g, sides['plain'].attempt(
                q, ''.join(f'; SET LOCAL {setting}' for setting in v)))), None)
            if variant:
                listed.append('errors PostgreSQL raises too in another plan')
                g += f' (without gpuext too, with {", ".join(variant)})'
            elif row_error(p) and row_error(g):
                listed.append('different errors from values (which row comes first)')
            else:
                listed.append('errors only with gpuext' if p == 'ok' else 'different errors')
        for title in listed:
            found[title].append(i)
        if listed:
            # What the server with gpuext answers with its nodes off, for whoever reads the report.
            off = '' if same(p, g) else sides['gpuext'].attempt(
                q, '; SET LOCAL gpuext.enable_sort = off; SET LOCAL gpuext.enable_agg = off')
            outcome[i] = (p, g, off, q)
        results.write(f"{i}\t{p}\t{g}\t{','.join(k for k, v in has.items() if v)}\n")
        results.flush()
    results.close()
    elapsed = time.time() - start

    # report.txt: the queries that fail the test; notes.txt: the other differences.
    failing = ('internal errors with gpuext', 'errors only with gpuext', 'different errors',
               'connections lost or hangs with gpuext', 'connections lost or hangs without gpuext')
    with open(os.path.join(args.out, 'report.txt'), 'w') as rep, \
            open(os.path.join(args.out, 'notes.txt'), 'w') as notes:
        for title, idx in found.items():
            for i in idx:
                p, g, off, q = outcome[i]
                (rep if title in failing else notes).write(
                    f'-- {title}: query {i}: without gpuext: {p}; with gpuext: {g}' +
                    (f'; with gpuext, GpuSort and GpuAgg off: {off}' if off else '') +
                    f'\n{q};\n\n')

    def codes(c):
        return ', '.join(f'{k} {v}' for k, v in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))) or 'none'
    print(f'sqlsmith: {done} queries run in {elapsed:.0f} s '
          f'(statement_timeout {args.timeout_ms} ms); {plans["rejected"]} rejected by parse analysis, '
          f'{plans["explained"]} planned on both sides')
    print(f"  plans: without gpuext Sort in {plans['Sort']}, Aggregate in {plans['Aggregate']}; "
          f"with gpuext GpuSort in {plans['GpuSort']}, GpuAgg in {plans['GpuAgg']}")
    for n in sides:
        print(f'  errors {"without" if n == "plain" else "with"} gpuext: {sum(errors[n].values())} '
              f'({codes(errors[n])})')
    print(f'  timeouts: {codes(timeouts)}')
    print(f"  connections lost: without gpuext {sides['plain'].lost}, with gpuext {sides['gpuext'].lost}; "
          f"hangs (past the timeout + {hang_s} s): {sides['plain'].hangs}, {sides['gpuext'].hangs}")
    for title in ('internal errors with gpuext', 'internal errors without gpuext',
                  "PostgreSQL's own internal errors", 'errors only with gpuext', 'different errors',
                  'errors PostgreSQL raises too in another plan',
                  'different errors from values (which row comes first)', 'errors only without gpuext',
                  'float overflows PostgreSQL raises in the order it adds',
                  'timeouts only with gpuext, at ten times the timeout too'):
        print(f'  {title}: {len(found[title])}')
    failed = sum(len(found[t]) for t in failing[:3])
    print(f"result: replayed={done} failed={failed} hangs={sides['plain'].hangs + sides['gpuext'].hangs}")


if __name__ == '__main__':
    main()
