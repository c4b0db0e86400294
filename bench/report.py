#!/usr/bin/env python3
"""report.py RESULTS_DIR: plots and the Markdown block of doc/performance.md from a bench/suite.sh run.

Reads what the suite left in RESULTS_DIR (meta.csv, sort_bench.csv, sort_meta.csv, auto_table.txt,
e2e.csv, reduce_bench.txt or reduce.csv, orderby.csv, agg.csv; any may be missing), writes
reduce.csv and reduce_ladder.csv (parsed from reduce_bench.txt, when there), the PNG plots
(bench/plot.py, matplotlib) and figures.md, whose image links are relative to RESULTS_DIR
(bench/splice_doc.py rewrites them).  Without matplotlib the plots are left out and said to be.
`python3 bench/report.py doc/bench && python3 bench/splice_doc.py doc/bench` redraws the committed
figures.
"""
import collections
import csv
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import plot  # noqa: E402
except ImportError as e:  # matplotlib missing: tables only
    plot = None
    PLOT_ERROR = str(e)

OWN = ['bitonic', 'quicksort', 'oddeven', 'radix']
KEY_SERIES = OWN + ['auto', 'cub_radix', 'cub_merge', 'd2d_copy']
PAIR_SERIES = ['bitonic', 'rows', 'cub_radix', 'cub_merge', 'd2d_copy']
TABLE_LOG2 = [10, 16, 20, 24, 26, 28]


def read_csv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline='') as f:
        return list(csv.DictReader(f))


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def pow2(n):
    """'2^k' for powers of two, '2^k+1' one past, else n."""
    k = n.bit_length() - 1
    if n == 1 << k:
        return '2^%d' % k
    if n - 1 == 1 << k:
        return '2^%d+1' % k
    return str(n)


def rate(v):
    """keys/s as G keys/s with three significant digits."""
    return '' if v is None else '%.3g' % (v / 1e9)


def parse_auto_table(path):
    """[(max_n, algo32, algo64)] from the auto_table lines of src/array_sort.c, or None."""
    if not os.path.exists(path):
        return None
    rows = re.findall(r'\{\s*(\w+)\s*,\s*GPUEXT_SORT_(\w+)\s*,\s*GPUEXT_SORT_(\w+)\s*\}', open(path).read())
    table = [(float('inf') if m == 'SIZE_MAX' else int(m), a.lower(), b.lower()) for m, a, b in rows]
    return table or None


class Kernels:
    """sort_bench.csv, indexed by (section, algo, type, n, pattern)."""

    def __init__(self, rows):
        self.rows = rows
        self.by = {(r['section'], r['algo'], r['type'], int(r['n']), r['pattern']): r for r in rows}

    def rate(self, algo, typ, n, section='sweep', pattern='random'):
        r = self.by.get((section, algo, typ, n, pattern))
        return num(r['keys_per_s']) if r and r['status'] == 'ok' else None

    def ms(self, algo, typ, n, section='sweep', pattern='random'):
        r = self.by.get((section, algo, typ, n, pattern))
        return num(r['median_ms']) if r and r['status'] == 'ok' else None

    def sizes(self, typ, section='sweep'):
        return sorted({int(r['n']) for r in self.rows if r['type'] == typ and r['section'] == section})

    def add_auto(self, table):
        """'auto' rows: at each n, the algorithm the table picks, as timed in this run."""
        for typ, col in (('u32', 1), ('u64', 2)):
            for n in self.sizes(typ):
                algo = next((row[col] for row in table if n <= row[0]), 'radix')
                r = self.by.get(('sweep', algo, typ, n, 'random'))
                if r:
                    a = dict(r, algo='auto', note='%s (src/array_sort.c table)' % algo)
                    self.by[('sweep', 'auto', typ, n, 'random')] = a


def kernel_plots(k, out, md, gpu):
    titles = {'u32': '32-bit keys', 'u64': '64-bit keys', 'pairs32': '(32-bit key, row index) pairs',
              'pairs64': '(64-bit key, row index) pairs'}
    labels = {'d2d_copy': 'copy of the same bytes (bound)', 'rows': 'rows (GpuSort\'s sort)',
              'radix': 'radix (CUB inside)', 'cub_radix': 'CUB radix sort', 'cub_merge': 'CUB merge sort',
              'auto': 'auto (gpu_sort\'s choice)'}
    for typ, names in (('u32', KEY_SERIES), ('u64', KEY_SERIES), ('pairs32', PAIR_SERIES),
                       ('pairs64', PAIR_SERIES)):
        sizes = [n for n in k.sizes(typ) if n & (n - 1) == 0]
        series = []
        for a in names:
            pts = [(n, k.rate(a, typ, n)) for n in sizes]
            if any(y for _, y in pts):
                series.append((labels.get(a, a), [(n, y / 1e9 if y else None) for n, y in pts], a == 'd2d_copy'))
        if not series or plot is None:
            continue
        name = 'sort_%s.png' % typ
        unit = 'pairs' if typ.startswith('pairs') else 'keys'
        plot.size_chart(os.path.join(out, name), series,
                        title='Sort of %s on the GPU\n%s, random keys already in device memory' % (titles[typ], gpu),
                        ylabel='sort rate (billion %s per second, log scale)' % unit,
                        xlabel='%s sorted (log scale)' % unit)
        md.append('![Sort rate of %s against n](%s)' % (titles[typ], name))
    md.append('')


def kernel_tables(k, md):
    md.append('G keys/s (median, random keys; blank: not run at that size, see the CSV):')
    md.append('')
    logs = [l for l in TABLE_LOG2 if any(k.sizes(t) and (1 << l) in k.sizes(t) for t in ('u32', 'u64'))]
    md.append('| type | algorithm | ' + ' | '.join('2^%d' % l for l in logs) + ' |')
    md.append('|---|---|' + '---|' * len(logs))
    for typ, names in (('u32', KEY_SERIES), ('u64', KEY_SERIES), ('pairs32', PAIR_SERIES),
                       ('pairs64', PAIR_SERIES)):
        for a in names:
            vals = [rate(k.rate(a, typ, 1 << l)) for l in logs]
            if any(vals):
                md.append('| %s | %s | %s |' % (typ, a, ' | '.join(vals)))
    md.append('')


def fastest(k, md):
    """Fastest own algorithm per size: what the auto table should say."""
    md.append('Fastest gpuext algorithm by size in this run (for the `auto` table in `src/array_sort.c`):')
    md.append('')
    md.append('| type | sizes | fastest | ms at the largest size |')
    md.append('|---|---|---|---|')
    for typ in ('u32', 'u64'):
        runs = []
        for n in [n for n in k.sizes(typ) if n & (n - 1) == 0]:
            times = [(k.ms(a, typ, n), a) for a in OWN if k.ms(a, typ, n) is not None]
            if not times:
                continue
            ms, a = min(times)
            if runs and runs[-1][2] == a:
                runs[-1][1], runs[-1][3] = n, ms
            else:
                runs.append([n, n, a, ms])
        for lo, hi, a, ms in runs:
            md.append('| %s | %s .. %s | %s | %.4f |' % (typ, pow2(lo), pow2(hi), a, ms))
    md.append('')


def shapes(k, md):
    """Bitonic's tile shapes per size (sort_bench --shapes): the fastest, and the one bitonic_sort picks."""
    rows = [r for r in k.rows if r['section'] == 'shapes' and r['median_ms']]
    if not rows:
        return
    md.append('Bitonic shapes (`sort_bench --shapes`; shape numbers as `network_shape` in '
              '`cuda/sort_bitonic.cu`: for keys 0 the large tiles, 1 .. 4 smaller ones, 5 1024 threads, '
              '6 .. 9 one cluster launch over the tiles of 1 .. 4; for pairs of 64-bit keys 0 .. 3 the pair '
              'tiles): the fastest at each n, and in brackets the one `bitonic_sort` (`bitonic_sort_pairs`) '
              'picks when another is faster, with both times in microseconds:')
    md.append('')
    md.append('| type | n: fastest shape (picked shape when different) |')
    md.append('|---|---|')
    for typ in ('u32', 'u64', 'pairs32', 'pairs64'):
        cells = []
        for n in sorted({int(r['n']) for r in rows if r['type'] == typ}):
            at = {r['algo']: r for r in rows if r['type'] == typ and int(r['n']) == n}
            best = min(at.values(), key=lambda r: float(r['median_ms']))
            pick = [r for r in at.values() if r['note'].startswith('picked')]
            cell = '%s: %s %.1f' % (pow2(n), best['algo'][len('bitonic_s'):], float(best['median_ms']) * 1e3)
            if pick and pick[0] is not best:
                cell += ' (%s %.1f)' % (pick[0]['algo'][len('bitonic_s'):], float(pick[0]['median_ms']) * 1e3)
            cells.append(cell)
        if cells:
            md.append('| %s | %s |' % (typ, '; '.join(cells)))
    md.append('')


def oddeven_vs_cpu(k, meta, md):
    sms = meta.get('multiprocessors', '?')
    rows = []
    for t in ('u32', 'u64'):
        for n in k.sizes(t, 'cpu'):
            g, c = k.ms('oddeven', t, n), k.ms('cpu_oddeven', t, n, 'cpu')
            s = k.ms('cpu_std_sort', t, n, 'cpu')
            if g and c:
                rows.append('| %s | %s | %.3f | %.3f | %.1fx | %s |' % (
                    t, pow2(n), g, c, c / g, '%.3f' % s if s else ''))
    if rows:
        md.append('Odd-even transposition sort against the same sort on one CPU core (the classic claim '
                  'for it is a speed-up of about the number of multiprocessors, here %s; ms):' % sms)
        md.append('')
        md.append('| type | n | GPU oddeven | CPU oddeven, 1 core | speed-up | CPU std::sort |')
        md.append('|---|---|---|---|---|---|')
        md.extend(rows)
        md.append('')


def transfers(k, md):
    rows = []
    for t in ('u32', 'u64'):
        for l in TABLE_LOG2:
            n = 1 << l
            up, down = k.ms('h2d_pinned', t, n, 'transfer'), k.ms('d2h_pinned', t, n, 'transfer')
            srt = k.ms('auto', t, n)
            if up and down:
                rows.append('| %s | %s | %.4f | %s | %.4f |' % (t, pow2(n), up, '%.4f' % srt if srt else '', down))
    if rows:
        md.append('What a round trip costs around the kernel (pinned host memory, ms): upload, `auto` sort, download:')
        md.append('')
        md.append('| type | n | upload | sort (auto) | download |')
        md.append('|---|---|---|---|---|')
        md.extend(rows)
        md.append('')


def field(v):
    """A CSV field for a table: long float fields (ratios from SQL) to three decimals."""
    if re.fullmatch(r'-?\d+\.\d{5,}', v or ''):
        return '%.3f' % float(v)
    return v or ''


def table(rows, cols):
    lines = ['| ' + ' | '.join(cols) + ' |', '|' + '---|' * len(cols)]
    lines += ['| ' + ' | '.join(field(r.get(c, '')) for c in cols) + ' |' for r in rows]
    return '\n'.join(lines) + '\n'


def reduce_parse(path, out):
    """reduce.csv and reduce_ladder.csv from reduce_bench's text; returns both row lists."""
    main, ladder, in_ladder = [], [], False
    if not os.path.exists(path):  # a folder of CSVs only, as doc/bench
        out_dir = os.path.dirname(path)
        return read_csv(os.path.join(out_dir, 'reduce.csv')), read_csv(os.path.join(out_dir, 'reduce_ladder.csv'))
    for line in open(path):
        line = line.rstrip('\n')
        if line.startswith('ladder:'):
            in_ladder = True
            n = re.search(r'n = (\d+)', line)
            size = n.group(1) if n else ''
            continue
        m = re.match(r'^(\w+)\s+(\d+)\s+(\S.*?)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)%\s+([\d.]+)\s*(.*)$', line)
        if m and not in_ladder:
            main.append(dict(zip(['type', 'n', 'op', 'ms', 'gb_s', 'pct_d2d', 'x_cub', 'note'], m.groups())))
        elif in_ladder and len(line) > 34 and re.match(r'^\S', line) and not line.startswith(('kernel', 'bar')):
            f = line[34:].split()
            if f and num(f[0]) is not None:
                ladder.append({'n': size, 'kernel': line[:34].strip(), 'ms': f[0], 'gb_s': f[2] if len(f) > 2 else ''})
        elif line.startswith('bar'):
            in_ladder = False
    for name, rows in (('reduce.csv', main), ('reduce_ladder.csv', ladder)):
        if rows:
            with open(os.path.join(out, name), 'w', newline='') as f:
                w = csv.DictWriter(f, list(rows[0]))
                w.writeheader()
                w.writerows(rows)
    return main, ladder


def measured(meta, part):
    r = meta.get(part)
    if not r:
        return ''
    s = 'Measured on %s, driver %s, commit `%s`, %s' % (r['gpu'] or 'an unknown GPU', r['driver'] or '?',
                                                        r['commit'] or '?', r['date'])
    if r['quick'] == '1':
        s += ', **QUICK=1 (a smoke test, not a measurement)**'
    if r['rc'] not in ('0', ''):
        s += ', **ended with status %s%s: figures may be incomplete**' % (
            r['rc'], ' (time limit)' if r['rc'] == '124' else '')
    return s + '.'


def e2e(rows, out, md, gpu):
    cols = [c for c in rows[0] if c.endswith('_ms')]
    labels = {'pg_ms': 'PostgreSQL: array_agg(x ORDER BY x), work_mem %s' % (rows[0].get('work_mem') or '4MB'),
              'cpu_ms': 'gpu_sort on the CPU',
              'auto_ms': 'gpu_sort, auto'}
    for typ in sorted({r['elem'] for r in rows}, key=[r['elem'] for r in rows].index):
        if plot is None:
            break
        sel = [r for r in rows if r['elem'] == typ]
        series = [(labels.get(c, 'gpu_sort, %s' % c[:-3]), [(int(r['n']), num(r[c])) for r in sel], c == 'pg_ms')
                  for c in cols]
        name = 'e2e_%s.png' % typ
        plot.size_chart(os.path.join(out, name), series,
                        title='gpu_sort of a stored %s array, end to end\n%s, device already open' % (typ, gpu),
                        ylabel='time per call (ms, log scale)', xlabel='array elements (log scale)')
        md.append('![gpu_sort of %s arrays: time against size](%s)' % (typ, name))
    md.append('')
    md.append(table(rows, [c for c in rows[0] if c != 'work_mem']))


ORDERBY_LEGACY = 'unequal memory: GpuSort gpuext.sort_work_mem = 16GB, PostgreSQL work_mem = 4MB'


def orderby_config_label(r):
    """Both sides' memory settings for a row of orderby.csv (before the configurations: unequal)."""
    if 'config' not in r:
        return ORDERBY_LEGACY
    swm = r.get('sort_work_mem', '')
    gpusort = 'GpuSort follows it' if swm in ('-1', '') else 'gpuext.sort_work_mem = %s' % swm
    return '%s: work_mem = %s on both sides (%s)' % (r['config'], r['work_mem'], gpusort)


def orderby(rows, out, md, gpu, when):
    legacy = 'config' not in rows[0]
    timing = ('Timing `explain`: `EXPLAIN (ANALYZE, TIMING OFF)` execution time, every row reaches the top of the '
              'plan but none is sent; `copy`: psql\'s `\\copy (query) to \'/dev/null\'` between two '
              '`clock_timestamp()` reads, every row converted to text and sent to the client.'
              if 'timing' in rows[0] else
              'Timing: `EXPLAIN (ANALYZE, TIMING OFF)` execution time, every row reaches the top of the plan but '
              'none is sent to a client.')
    md.append('**ORDER BY through GpuSort** (`bench/orderby.sh`): the same query with `gpuext.enable_sort` on '
              '(GpuSort) and off (PostgreSQL\'s Sort), in one session over the same tables (`t` of %s rows of '
              '`id int8, a int4, b int8, c float8, d int4, pad text`; `small` of 1,000), '
              '`max_parallel_workers_per_gather = 0` on both sides, median after a warm-up per side, sides '
              'alternating; `speedup` is off_ms / on_ms. %s %s' % (
                  '{:,}'.format(max(int(r['rows']) for r in rows)), timing, when))
    md.append('')
    if legacy:
        md.append('**Unequal memory.** This run predates the equal-memory configurations: GpuSort had '
                  '`gpuext.sort_work_mem = 16GB` and held every row in memory, while PostgreSQL had its default '
                  '`work_mem = 4MB` and sorted on disk. It shows GpuSort given ample memory against PostgreSQL '
                  'given little, not the two at the same settings.')
        md.append('')
    configs = list(dict.fromkeys(orderby_config_label(r) for r in rows))
    md.append('Settings: ' + '; '.join(configs) + '.')
    md.append('')
    if plot is not None:
        big = max(int(r['rows']) for r in rows)
        sel = [dict(r, config=orderby_config_label(r),
                    case=r['case'] + (' (copy)' if r.get('timing') == 'copy' and 'copy' not in r['case'] else ''))
               for r in rows if int(r['rows']) == big]
        plot.orderby_chart(os.path.join(out, 'orderby.png'), sel,
                           title='ORDER BY of %s rows: GpuSort against PostgreSQL\'s Sort\n%s' % (
                               '{:,}'.format(big), gpu),
                           note='bench/orderby.sh; bars above the dashed line: GpuSort faster')
        md.append('![ORDER BY speed-up per query and memory setting](orderby.png)')
        md.append('')
    cols = [c for c in ('config', 'work_mem', 'sort_work_mem', 'case', 'timing', 'rows', 'on_ms', 'off_ms',
                        'speedup', 'gpusort', 'query') if c in rows[0]]
    md.append(table(rows, cols))


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: report.py RESULTS_DIR')
    out = sys.argv[1]
    meta = {r['part']: r for r in read_csv(os.path.join(out, 'meta.csv'))}  # the latest run of each part
    dev = {r['key']: r['value'] for r in read_csv(os.path.join(out, 'sort_meta.csv'))}
    md = ['<!-- Generated by bench/report.py from a bench/suite.sh run; do not edit by hand. -->', '']
    if plot is None:
        md.append('(Plots not drawn: %s; install python3-matplotlib.)' % PLOT_ERROR)
        md.append('')

    def gpu(part):
        return (meta.get(part) or {}).get('gpu') or dev.get('device') or 'unknown GPU'

    rows = read_csv(os.path.join(out, 'orderby.csv'))
    if rows:
        orderby(rows, out, md, gpu('orderby'), measured(meta, 'orderby'))

    rows = read_csv(os.path.join(out, 'agg.csv'))
    if rows:
        md.append('**Aggregates end to end** (`bench/agg.sh`): each gpuext aggregate against PostgreSQL\'s own '
                  'over the same data in one session, `gpuext.device = gpu`, `gpuext.min_gpu_elements = 0`, '
                  '`max_parallel_workers_per_gather = 0` on both sides (no sort, so `work_mem` plays no part); '
                  '`array`: `gpu_sum(a)` against `sum(x)` over `unnest(a)`; `column`: `gpu_f(c)` against `f(c)` over '
                  'a table; `query`: `gpu_query_agg` against `count`, `sum`, `min`, `max`, `avg` in one query; '
                  'median after a warm-up per side; `ratio` is postgres_ms / gpuext_ms. %s' % measured(meta, 'agg'))
        md.append('')
        md.append(table(rows, [c for c in rows[0] if c not in ('bar', 'pass')]))

    rows = read_csv(os.path.join(out, 'e2e.csv'))
    if rows:
        wm = rows[0].get('work_mem')
        md.append('**gpu_sort end to end** (`bench/gpu_sort_crossover.sql`): an array stored in a table, the '
                  'sorted array returned, transfers and key encoding included, device already open; median '
                  'after a warm-up, ms. `pg` is `array_agg(x ORDER BY x)` over `unnest(a)` at %s; `cpu` is '
                  'gpuext\'s CPU path, the other columns the GPU with `gpuext.device = gpu` (gpu_sort holds the '
                  'whole array in memory whatever `work_mem` is). %s' % (
                      '`work_mem = %s`' % wm if wm else
                      'the server\'s `work_mem`, 4MB (not recorded in this CSV; PostgreSQL\'s sort of the larger '
                      'arrays spilled to disk, so `pg_over_auto` overstates the gain at equal memory)',
                      measured(meta, 'e2e')))
        md.append('')
        e2e(rows, out, md, gpu('e2e'))

    k = Kernels(read_csv(os.path.join(out, 'sort_bench.csv')))
    if k.rows:
        table_ = parse_auto_table(os.path.join(out, 'auto_table.txt'))
        if table_:
            k.add_auto(table_)
        md.append('**Sort kernels** (`bench/sort_bench`): keys already on the device, one call of the sort '
                  'timed with CUDA events, launches and host waits inside it included; warm-ups, then the '
                  'median of 5 to 15 runs; random keys; every output checked on the device. '
                  '`radix` is gpuext_sort_keys with CUB inside, `rows` gpuext_sort_rows (the sort GpuSort runs), '
                  '`cub_radix` and `cub_merge` CUB called directly, `auto` the algorithm the table in '
                  '`src/array_sort.c` picks at each size, `d2d_copy` one device-to-device copy of the same bytes '
                  '(a bound: any sort reads and writes them at least once). %s Device: %s, '
                  'compute capability %s, %s SMs, CUDA driver %s, runtime %s.' % (
                      measured(meta, 'kernels'), dev.get('device', '?'), dev.get('compute_capability', '?'),
                      dev.get('multiprocessors', '?'), dev.get('cuda_driver', '?'), dev.get('cuda_runtime', '?')))
        md.append('')
        kernel_plots(k, out, md, gpu('kernels'))
        kernel_tables(k, md)
        fastest(k, md)
        shapes(k, md)
        oddeven_vs_cpu(k, dev, md)
        transfers(k, md)
        skipped = collections.Counter('%s %s' % (r['algo'], re.sub(r', not \d+$', '', r['note']))
                                      for r in k.rows if r['status'] == 'skipped')
        skipped = ['%s (%d size%s)' % (s, c, '' if c == 1 else 's') for s, c in sorted(skipped.items())]
        bad = [r for r in k.rows if r['status'] not in ('ok', 'skipped')]
        if skipped:
            md.append('Not run: ' + '; '.join(skipped) + '.')
        if bad:
            md.append('**%d cases gave wrong output** (status not_sorted in `sort_bench.csv`): %s.' % (
                len(bad), ', '.join('%s %s %s' % (r['algo'], r['type'], r['n']) for r in bad[:10])))
        md.append('')

    main_rows, ladder = reduce_parse(os.path.join(out, 'reduce_bench.txt'), out)
    if main_rows:
        md.append('**Reductions on the device** (`bench/reduce_bench`): count, exact sum, min and max in one '
                  'pass (`gpuext_reduce`) beside CUB\'s `DeviceReduce` and a device-to-device copy; data on the '
                  'device, CUDA events, 2 warm-ups, median; GB/s counts input bytes read (the copy reads and '
                  'writes them, so a reduction at memory speed shows about 200%% of it); `x_cub` is the time over '
                  'CUB\'s `DeviceReduce::Sum`. %s' % measured(meta, 'reduce'))
        md.append('')
        md.append(table(main_rows, ['type', 'n', 'op', 'ms', 'gb_s', 'pct_d2d', 'x_cub']))
        if ladder:
            md.append('The classic six-step reduction ladder (Harris; as in Doroshenko & Zhereb 2009, Table 2), '
                      'int32 sum, median ms:')
            md.append('')
            md.append(table(ladder, ['n', 'kernel', 'ms', 'gb_s']))

    for part, r in meta.items():
        if r['rc'] not in ('0', ''):
            md.append('Part `%s` ended with status %s%s (see its log in the results folder).' % (
                part, r['rc'], ' (time limit)' if r['rc'] == '124' else ''))
    with open(os.path.join(out, 'figures.md'), 'w') as f:
        f.write('\n'.join(md).rstrip('\n') + '\n')


if __name__ == '__main__':
    main()
