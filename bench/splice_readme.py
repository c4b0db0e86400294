#!/usr/bin/env python3
"""splice_readme.py RESULTS_DIR [README]: put a suite run's figures into the README.

Copies RESULTS_DIR's PNG plots and CSV files into doc/bench/ (next to the README, replacing what
was there), and replaces everything between the markers

    <!-- bench-suite:begin -->
    <!-- bench-suite:end -->

in the README (default README.md) with RESULTS_DIR/README-figures.md, its image links pointed at
doc/bench/.  So the README's numbers are those of one run of bench/suite.sh, never typed by hand.
"""
import glob
import os
import re
import shutil
import sys

BEGIN, END = '<!-- bench-suite:begin -->', '<!-- bench-suite:end -->'


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit('usage: splice_readme.py RESULTS_DIR [README]')
    results = sys.argv[1]
    readme = sys.argv[2] if len(sys.argv) == 3 else 'README.md'
    fragment = open(os.path.join(results, 'README-figures.md')).read()
    text = open(readme).read()
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        sys.exit('%s needs exactly one %s followed by one %s' % (readme, BEGIN, END))
    rel = 'doc/bench'
    dest = os.path.join(os.path.dirname(os.path.abspath(readme)), rel)
    os.makedirs(dest, exist_ok=True)
    for old in glob.glob(os.path.join(dest, '*.png')) + glob.glob(os.path.join(dest, '*.csv')):
        os.remove(old)
    for f in glob.glob(os.path.join(results, '*.png')) + glob.glob(os.path.join(results, '*.csv')):
        shutil.copy(f, dest)
    fragment = re.sub(r'\]\(([^)/]+\.(png|csv))\)', lambda m: '](%s/%s)' % (rel, m.group(1)), fragment)
    fragment += '\nThe CSV files of this run are in `%s/`.\n' % rel
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    with open(readme, 'w') as f:
        f.write(head + BEGIN + '\n' + fragment.strip('\n') + '\n' + END + tail)
    print('%s: figures from %s spliced in; plots and CSVs copied to %s/' % (readme, results, rel))


if __name__ == '__main__':
    main()
