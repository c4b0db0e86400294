#!/usr/bin/env python3
"""report.py RESULTS_DIR: plots and the README fragment from a bench/suite.sh run.

Reads what the suite left in RESULTS_DIR (meta.csv, sort_bench.csv, sort_meta.csv, auto_table.txt,
e2e.csv, reduce_bench.txt, orderby.csv, agg.csv; any may be missing), writes reduce.csv and
reduce_ladder.csv (parsed from reduce_bench.txt), the PNG plots and README-figures.md, whose
image links are relative to RESULTS_DIR (bench/splice_readme.py rewrites them).  Standard library
only.
"""
import collections
import csv
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pngplot  # noqa: E402

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
    """[(max_n, algo32, algo64)] from the auto_table lines of src/gpu_sort.c, or None."""
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
                    a = dict(r, algo='auto', note='%s (src/gpu_sort.c table)' % algo)
                    self.by[('sweep', 'auto', typ, n, 'random')] = a


def kernel_plots(k, out, md):
    titles = {'u32': '32-bit keys', 'u64': '64-bit keys', 'pairs32': '(32-bit key, index) pairs',
              'pairs64': '(64-bit key, index) pairs'}
    for typ, names in (('u32', KEY_SERIES), ('u64', KEY_SERIES), ('pairs32', PAIR_SERIES),
                       ('pairs64', PAIR_SERIES)):
        sizes = [n for n in k.sizes(typ) if n & (n - 1) == 0]
        series = []
        for a in names:
            pts = [(n, k.rate(a, typ, n)) for n in sizes]
            if any(y for _, y in pts):
                label = {'d2d_copy': 'D2D copy bound', 'rows': 'gpuext rows'}.get(a, a)
                series.append((label, pts, a == 'd2d_copy'))
        if not series:
            continue
        name = 'sort_%s.png' % typ
        pngplot.line_chart(os.path.join(out, name), series, title='%s: sort rate, random keys' % titles[typ],
                           xlabel='log2 n', ylabel='keys/s')
        md.append('![%s](%s)' % (titles[typ], name))
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
    md.append('Fastest gpuext algorithm by size in this run (for the `auto` table in `src/gpu_sort.c`):')
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


def bars(k, md):
    """The bars of issue 5, evaluated on this run."""
    def line(case, v32, v64, bar32, bar64):
        def cell(v, b):
            if v is None:
                return 'not measured'
            return '%.3g (bar %s): %s' % (v, b[0], 'met' if b[1](v) else 'MISSED')
        md.append('| %s | %s | %s |' % (case, cell(v32, bar32), cell(v64, bar64)))

    md.append('Bars of issue 5 (kernel time, random keys unless named; G keys/s or ratios):')
    md.append('')
    md.append('| case | 32-bit keys | 64-bit keys |')
    md.append('|---|---|---|')
    g = lambda v: None if v is None else v / 1e9  # noqa: E731
    at = lambda b: ('>= %g' % b, lambda v: v >= b)  # noqa: E731
    for l, b32, b64 in ((24, 8, 4.5), (26, 7, 4)):
        line('bitonic, 2^%d' % l, g(k.rate('bitonic', 'u32', 1 << l)), g(k.rate('bitonic', 'u64', 1 << l)),
             at(b32), at(b64))

    def odd(t):
        a, b = k.rate('bitonic', t, (1 << 26) + 1), k.rate('bitonic', t, 1 << 26)
        return a / b if a and b else None
    line('bitonic, 2^26 + 1 over 2^26', odd('u32'), odd('u64'), at(0.85), at(0.85))
    pn = max(k.sizes('u32', 'pattern') or [0])
    line('quicksort, %s, random' % pow2(pn) if pn else 'quicksort, random',
         g(k.rate('quicksort', 'u32', pn, 'pattern', 'random')),
         g(k.rate('quicksort', 'u64', pn, 'pattern', 'random')), at(5), at(3))
    for p in ('sorted', 'reverse', '16-distinct', 'all-equal'):
        def rel(t):
            a, b = k.rate('quicksort', t, pn, 'pattern', p), k.rate('quicksort', t, pn, 'pattern', 'random')
            return a / b if a and b else None
        line('quicksort, %s, %s over random' % (pow2(pn) if pn else '?', p), rel('u32'), rel('u64'),
             at(0.5), at(0.5))
    line('(key, int32 index) pairs, bitonic, 2^24 (G pairs/s)', g(k.rate('bitonic', 'pairs32', 1 << 24)),
         g(k.rate('bitonic', 'pairs64', 1 << 24)), at(5), at(3))

    def small(t):
        worse = [n for n in k.sizes(t) if n <= 1 << 16
                 and k.ms('cub_radix', t, n) is not None
                 and min([k.ms(a, t, n) for a in ('bitonic', 'quicksort', 'oddeven')
                          if k.ms(a, t, n) is not None] or [float('inf')]) >= k.ms('cub_radix', t, n)]
        return worse
    def verdict(t):
        w, total = small(t), len([n for n in k.sizes(t) if n <= 1 << 16])
        if not total:
            return 'not measured'
        if not w:
            return 'met at all %d sizes' % total
        return 'MISSED at %d of %d sizes (%s%s)' % (len(w), total, ', '.join(pow2(n) for n in w[:4]),
                                                   ', ...' if len(w) > 4 else '')
    md.append('| best own kernel (bitonic, quicksort, oddeven), one call, faster than CUB radix at every '
              'n <= 2^16 | %s | %s |' % (verdict('u32'), verdict('u64')))
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
        md.append('Odd-even transposition sort against the same sort on one CPU core (seed 004 claims a '
                  'speed-up of about the number of multiprocessors, here %s; ms):' % sms)
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


def e2e(rows, out, md):
    if not rows:
        return
    cols = [c for c in rows[0] if c.endswith('_ms')]
    for typ in sorted({r['elem'] for r in rows}, key=[r['elem'] for r in rows].index):
        sel = [r for r in rows if r['elem'] == typ]
        series = [(c[:-3] if c != 'pg_ms' else 'postgres', [(int(r['n']), num(r[c])) for r in sel], c == 'pg_ms')
                  for c in cols]
        name = 'e2e_%s.png' % typ
        pngplot.line_chart(os.path.join(out, name), series, title='gpu_sort of %s arrays, end to end' % typ,
                           xlabel='log2 n', ylabel='ms')
        md.append('![gpu_sort end to end, %s](%s)' % (typ, name))
    md.append('')
    md.append(table(rows, list(rows[0])))


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
    if not os.path.exists(path):
        return main, ladder
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


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: report.py RESULTS_DIR')
    out = sys.argv[1]
    meta = {r['part']: r for r in read_csv(os.path.join(out, 'meta.csv'))}  # the latest run of each part
    dev = {r['key']: r['value'] for r in read_csv(os.path.join(out, 'sort_meta.csv'))}
    md = ['<!-- Generated by bench/report.py from a bench/suite.sh run; do not edit by hand. -->', '']

    k = Kernels(read_csv(os.path.join(out, 'sort_bench.csv')))
    if k.rows:
        table_ = parse_auto_table(os.path.join(out, 'auto_table.txt'))
        if table_:
            k.add_auto(table_)
        md.append('**Sort kernels** (`bench/sort_bench`: keys already on the device, one call of the sort '
                  'timed with CUDA events, launches and host waits inside it included; warm-ups, then the '
                  'median of 5 to 15 runs; random keys; every output checked on the device). '
                  '`radix` is gpuext_sort_keys with CUB inside, `cub_radix` and `cub_merge` CUB called '
                  'directly, `auto` the algorithm the table in `src/gpu_sort.c` picks at each size, '
                  '`D2D copy bound` one device-to-device copy of the same bytes. %s Device: %s, '
                  'compute capability %s, %s SMs, CUDA driver %s, runtime %s.' % (
                      measured(meta, 'kernels'), dev.get('device', '?'), dev.get('compute_capability', '?'),
                      dev.get('multiprocessors', '?'), dev.get('cuda_driver', '?'), dev.get('cuda_runtime', '?')))
        md.append('')
        kernel_plots(k, out, md)
        kernel_tables(k, md)
        bars(k, md)
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

    rows = read_csv(os.path.join(out, 'e2e.csv'))
    if rows:
        md.append('**gpu_sort end to end** (`bench/gpu_sort_crossover.sql`: an array stored in a table, the '
                  'sorted array returned, transfers and key encoding included, device already open; median '
                  'after a warm-up, ms; `pg` is `array_agg(x ORDER BY x)` over `unnest(a)`, `cpu` gpuext\'s '
                  'CPU path, the other columns the GPU with `gpuext.device = gpu`). %s' % measured(meta, 'e2e'))
        md.append('')
        e2e(rows, out, md)

    main_rows, ladder = reduce_parse(os.path.join(out, 'reduce_bench.txt'), out)
    if main_rows:
        md.append('**Reductions on the device** (`bench/reduce_bench`: CUDA events, 2 warm-ups, median; data '
                  'on the device; GB/s counts input bytes read; `x CUB` is the time over CUB\'s '
                  '`DeviceReduce::Sum`). %s' % measured(meta, 'reduce'))
        md.append('')
        md.append(table(main_rows, ['type', 'n', 'op', 'ms', 'gb_s', 'pct_d2d', 'x_cub']))
        if ladder:
            md.append('The reduction ladder of seed 003 (int32 sum, median ms):')
            md.append('')
            md.append(table(ladder, ['n', 'kernel', 'ms', 'gb_s']))

    for part, name, what in (('orderby', 'orderby.csv', '**ORDER BY through GpuSort** (`bench/orderby.sh`, '
                              '`EXPLAIN (ANALYZE, TIMING OFF)` execution time, median, GpuSort on against off)'),
                             ('agg', 'agg.csv', '**Aggregates end to end** (`bench/agg.sh`, median, gpuext '
                              'against PostgreSQL\'s own)')):
        rows = read_csv(os.path.join(out, name))
        if rows:
            md.append('%s. %s' % (what, measured(meta, part)))
            md.append('')
            md.append(table(rows, list(rows[0])))

    for part, r in meta.items():
        if r['rc'] not in ('0', ''):
            md.append('Part `%s` ended with status %s%s (see its log in the results folder).' % (
                part, r['rc'], ' (time limit)' if r['rc'] == '124' else ''))
    with open(os.path.join(out, 'README-figures.md'), 'w') as f:
        f.write('\n'.join(md).rstrip('\n') + '\n')


if __name__ == '__main__':
    main()
