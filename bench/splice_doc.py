#!/usr/bin/env python3
"""splice_doc.py RESULTS_DIR [DOC]: put a suite run's figures into doc/performance.md.

Copies RESULTS_DIR's PNG plots, CSV files and auto_table.txt into doc/bench/ (beside DOC,
replacing what was there; nothing is copied when RESULTS_DIR is doc/bench itself), and replaces
everything between the markers

    <!-- bench-suite:begin -->
    <!-- bench-suite:end -->

in DOC (default doc/performance.md) with RESULTS_DIR/figures.md (written by bench/report.py),
its image links pointed at bench/.  So the figures are those of one run of bench/suite.sh, never
typed by hand.
"""
import glob
import os
import re
import shutil
import sys

BEGIN, END = '<!-- bench-suite:begin -->', '<!-- bench-suite:end -->'
KEPT = ('*.png', '*.csv', 'auto_table.txt')


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit('usage: splice_doc.py RESULTS_DIR [DOC]')
    results = os.path.abspath(sys.argv[1])
    doc = sys.argv[2] if len(sys.argv) == 3 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                               '..', 'doc', 'performance.md')
    fragment_path = os.path.join(results, 'figures.md')
    fragment = open(fragment_path).read()
    text = open(doc).read()
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        sys.exit('%s needs exactly one %s followed by one %s' % (doc, BEGIN, END))
    rel = 'bench'
    dest = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(doc)), rel))
    if dest == results:
        os.remove(fragment_path)  # redrawn in place: the fragment is not kept beside the figures
    else:
        os.makedirs(dest, exist_ok=True)
        for pattern in KEPT:
            for old in glob.glob(os.path.join(dest, pattern)):
                os.remove(old)
        for pattern in KEPT:
            for f in glob.glob(os.path.join(results, pattern)):
                shutil.copy(f, dest)
    fragment = re.sub(r'\]\(([^)/]+\.(png|csv))\)', lambda m: '](%s/%s)' % (rel, m.group(1)), fragment)
    fragment += '\nThe CSV files of this run are in [`doc/bench/`](%s/).\n' % rel
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    with open(doc, 'w') as f:
        f.write(head + BEGIN + '\n' + fragment.strip('\n') + '\n' + END + tail)
    print('%s: figures from %s spliced in%s' % (
        doc, results, '' if dest == results else '; plots and CSVs copied to %s/' % dest))


if __name__ == '__main__':
    main()
