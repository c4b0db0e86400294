#!/usr/bin/env python3
"""plot.py: the benchmark plots, drawn with matplotlib (Debian: python3-matplotlib).

    size_chart(path, series, title, ylabel, ...)     a measure against input size, log-scale x
    orderby_chart(path, rows, title)                 ORDER BY speed-up per query and configuration

series is a list of (label, [(n, y), ...], reference): reference series (PostgreSQL, a copy
bound) are drawn dashed.  Points with y None or <= 0 are left out.  bench/report.py calls these
for a bench/suite.sh run; `python3 bench/report.py doc/bench` redraws the committed figures.
Only the benchmarks need matplotlib: nothing in the build or the tests imports this file.
"""
import textwrap

import matplotlib

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator  # noqa: E402

WIDTH, HEIGHT, DPI = 8.0, 4.8, 100


def size_label(n):
    """1K, 64K, 1M, 256M for powers of two; the number otherwise."""
    for shift, unit in ((30, 'G'), (20, 'M'), (10, 'K')):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return '%d%s' % (n >> shift, unit)
    return '%d' % n


def size_chart(path, series, title, ylabel, xlabel='input size (elements, log scale)', ylog=True, note=None):
    """Lines of a measure against input size, x on a log2 scale with ticks at powers of two."""
    fig, ax = plt.subplots(figsize=(WIDTH, HEIGHT), dpi=DPI)
    xs = set()
    for label, pts, reference in series:
        pts = [(x, y) for x, y in pts if y is not None and y > 0]
        if not pts:
            continue
        xs.update(x for x, _ in pts)
        ax.plot([x for x, _ in pts], [y for _, y in pts], label=label, marker='o', markersize=3,
                linestyle='--' if reference else '-', linewidth=1.2 if reference else 1.6,
                color='0.35' if reference else None)
    ax.set_xscale('log', base=2)
    if ylog:
        ax.set_yscale('log')
    ticks = sorted(xs)
    while len(ticks) > 10:
        ticks = ticks[::2]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: size_label(int(round(v)))))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=11)
    ax.grid(True, which='major', alpha=0.3)
    ax.legend(fontsize=8, loc='best', ncol=2 if len(series) > 5 else 1)
    if note:
        fig.text(0.01, 0.01, note, fontsize=7, color='0.3')
    fig.tight_layout(rect=(0, 0.04 if note else 0, 1, 1))
    fig.savefig(path)
    plt.close(fig)


def orderby_chart(path, rows, title, note=None):
    """Speed-up of GpuSort over PostgreSQL's Sort (off_ms / on_ms), one bar per query and configuration.

    rows: dicts with 'case', 'config' (a legend label naming both sides' settings), 'speedup'.
    """
    configs = list(dict.fromkeys(r['config'] for r in rows))
    cases = list(dict.fromkeys(r['case'] for r in rows))
    by = {(r['case'], r['config']): float(r['speedup']) for r in rows if r['speedup'] not in ('', None)}
    fig, ax = plt.subplots(figsize=(WIDTH, HEIGHT), dpi=DPI)
    width = 0.8 / max(len(configs), 1)
    for i, config in enumerate(configs):
        xs = [c + (i - (len(configs) - 1) / 2) * width for c in range(len(cases))]
        ys = [by.get((case, config), 0) for case in cases]
        ax.bar(xs, ys, width * 0.95, label=config)
        for x, y in zip(xs, ys):
            if y:
                ax.annotate('%.2gx' % y, (x, y), ha='center', va='bottom', fontsize=7,
                            xytext=(0, 2), textcoords='offset points')
    ax.axhline(1.0, color='0.2', linewidth=1, linestyle='--')
    ax.text(-0.45, 1.0, 'same speed', va='bottom', ha='left', fontsize=7, color='0.2')
    top = max(by.values() or [1.0])
    ax.set_ylim(0, max(top * 1.3, 1.5))
    ax.set_xlim(-0.5, len(cases) - 0.5)
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels([c.replace('_', ' ') for c in cases], fontsize=8, rotation=15)
    ax.set_ylabel('speed-up: PostgreSQL Sort time / GpuSort time')
    ax.set_title(title, fontsize=11)
    ax.grid(True, axis='y', alpha=0.3)
    ax.legend(fontsize=8, loc='upper left')
    if note:
        fig.text(0.01, 0.01, note, fontsize=7, color='0.3')
    fig.tight_layout(rect=(0, 0.04 if note else 0, 1, 1))
    fig.savefig(path)
    plt.close(fig)


def tpch_chart(tsv_path, path):
    """bench/tpch.sh's lines from its TSV: PostgreSQL's time over GpuAgg's and over DuckDB's (16 threads), log scale,
    each line's bar marked; the header line (the run: PostgreSQL, GPU, commit, date) as the note."""
    with open(tsv_path) as f:
        lines = f.read().splitlines()
    header = lines[0].lstrip('# ')
    cols = lines[1].split('\t')
    rows = [dict(zip(cols, line.split('\t'))) for line in lines[2:] if line]
    labels = [textwrap.fill(r['query'].replace(' (lineitem_f8)', '').replace('double precision', 'float8'), 50)
              for r in rows]
    gpu = [float(r['ratio']) for r in rows]
    duck = [float(r['postgres_ms']) / float(r['duckdb_16t_ms']) if r['duckdb_16t_ms'] and r['workers'] == '0'
            else 0 for r in rows]
    fig, ax = plt.subplots(figsize=(WIDTH, HEIGHT * 1.3), dpi=DPI)
    ys = list(range(len(rows)))[::-1]
    ax.barh([y + 0.2 for y in ys], gpu, 0.4, label='GpuAgg')
    ax.barh([y - 0.2 for y in ys], duck, 0.4, label='DuckDB, 16 threads, the same rows', color='0.7')
    for y, r, g in zip(ys, rows, gpu):
        ax.annotate(('%.0fx' if g >= 100 else '%.2gx') % g, (g, y + 0.2), va='center', ha='left', fontsize=7, xytext=(2, 0),
                    textcoords='offset points')
        ax.plot([float(r['bar'])] * 2, [y - 0.05, y + 0.45], color='C3', linewidth=1.5)
    ax.plot([], [], color='C3', linewidth=1.5, label='the target for the line')
    ax.axvline(1.0, color='0.2', linewidth=1, linestyle='--')
    ax.set_xscale('log')
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_xlabel("PostgreSQL's time / GpuAgg's or DuckDB's (log scale; under 1: slower)")
    ax.set_title('TPC-H shapes, 10M rows: GpuAgg and DuckDB against PostgreSQL', fontsize=10)
    ax.grid(True, axis='x', alpha=0.3)
    ax.set_ylim(-0.8, len(rows) + 1.6)
    ax.legend(fontsize=7, loc='upper right')
    fig.text(0.01, 0.01, header, fontsize=6, color='0.3')
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path)
    plt.close(fig)


if __name__ == '__main__':
    import sys

    if len(sys.argv) != 4 or sys.argv[1] != 'tpch':
        sys.exit('usage: python3 bench/plot.py tpch TSV PNG   (the chart of a bench/tpch.sh run)')
    tpch_chart(sys.argv[2], sys.argv[3])
