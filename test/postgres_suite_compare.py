#!/usr/bin/env python3
"""Compare a forced run of PostgreSQL's regression suite with a plain one, test by test.

postgres_suite_compare.py PLAIN FORCED DIFFS: PLAIN and FORCED are output directories of
test/postgres_suite.sh run (results/*.out, log/), DIFFS the reviewed list of differences.

A test agrees when its two outputs are the same once EXPLAIN output is set aside: psql result
blocks headed QUERY PLAN, and one-column blocks headed by the name of a function the test defines
that runs EXPLAIN or is handed an EXPLAIN statement (explain_filter('explain ...') and the like),
are plan text.  Any other difference must be listed in DIFFS
as `TEST /REGEX/ WHY`: every differing line of both runs must match REGEX.  A crash (a backend
terminated by a signal, a lost connection) or an assertion failure (TRAP:) in either run fails too.
Prints the counts and the tests that planned GpuSort and GpuAgg, and the first
GPUEXT_SUITE_SHOW (80) lines of each difference not listed; exits 1 on any failure.
"""
import difflib
import os
import re
import sys

SEPARATOR = re.compile(r'^\+?-+(\+-+)*\+?$')
FOOTER = re.compile(r'^\(\d+ rows?\)$')
EXPANDED_PLAN = re.compile(r'^QUERY PLAN\s*\|')
FUNCTION = re.compile(r'create\s+(?:or\s+replace\s+)?function\s+(?:\w+\.)?(\w+)\s*\(.*?\$(\w*)\$(.*?)\$\2\$',
                      re.I | re.S)
GPU_NODE = re.compile(r'Custom Scan \((GpuSort|GpuAgg)\)|Custom.Plan.Provider\W+(GpuSort|GpuAgg)')
LOST = 'server closed the connection unexpectedly'
LIMIT = int(os.environ.get('GPUEXT_SUITE_SHOW', '80'))
PLAN = '<EXPLAIN output>'
STATEMENT = re.compile(r'^(select|with|values|table|insert|update|delete|merge|execute|fetch|explain|copy|call)\b', re.I)


def test_functions(text):
    """Functions the test defines (name -> bodies), and those whose body runs EXPLAIN, directly or
    through another of them."""
    bodies = {}
    for m in FUNCTION.finditer(text):
        bodies.setdefault(m.group(1).lower(), []).append(m.group(3))
    found = set()
    while True:
        words = ['explain'] + sorted(found)
        new = {name for name, texts in bodies.items() if name not in found and any(
            re.search(r'\b(' + '|'.join(words) + r')\b', t, re.I) for t in texts)}
        if not new:
            return set(bodies), found
        found |= new


def statement_before(lines, i):
    """The echoed statement that ends on line i-1 (the one whose result starts on line i)."""
    j = i - 1
    while j > 0 and lines[j - 1] != '' and not lines[j - 1].rstrip().endswith(';') \
            and not FOOTER.match(lines[j - 1]):
        j -= 1
    return '\n'.join(lines[j:i])


def is_plan_header(lines, i, functions):
    """Whether line i heads EXPLAIN output: QUERY PLAN, or one column named after a function of the
    test that runs EXPLAIN itself or is handed an EXPLAIN statement (explain_filter('explain ...'))."""
    header = lines[i].strip().strip('|').strip()
    if header == 'QUERY PLAN':
        return True
    defined, explaining = functions
    name = header.lower()
    if name in explaining:
        return True
    return name in defined and re.search(r'\b' + re.escape(name) + r"\s*\(\s*(E?'|\$\w*\$)\s*explain\b",
                                         statement_before(lines, i), re.I) is not None


def mask(lines, functions):
    """The lines with every EXPLAIN result block replaced by one marker line, and their line numbers."""
    out = []
    numbers = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if i + 1 < len(lines) and SEPARATOR.match(lines[i + 1]) and is_plan_header(lines, i, functions):
            j = i + 2
            while j < len(lines) and lines[j] != '' and not FOOTER.match(lines[j]):
                j += 1
            out.append(PLAN)
            numbers.append(i + 1)
            i = j + 1 if j < len(lines) and FOOTER.match(lines[j]) else j
            continue
        if EXPANDED_PLAN.match(line):
            j = i + 1
            while j < len(lines) and re.match(r'^\s+\|', lines[j]):
                j += 1
            out.append(PLAN)
            numbers.append(i + 1)
            i = j
            continue
        out.append(line)
        numbers.append(i + 1)
        i += 1
    return out, numbers


def read(path):
    """A file's text; stray bytes of other encodings do not stop the comparison."""
    with open(path, encoding='utf-8', errors='replace') as f:
        return f.read()


def load_diffs(path):
    """The reviewed list: test name -> (compiled pattern, reason)."""
    entries = {}
    entry = re.compile(r'^(\S+)\s+/((?:[^/\\]|\\.)*)/\s+(\S.*)$')
    for n, line in enumerate(read(path).splitlines(), 1):
        if not line.strip() or line.startswith('#'):
            continue
        m = entry.match(line)
        if not m:
            sys.exit(f'{path}:{n}: not TEST /REGEX/ WHY: {line}')
        if m.group(1) in entries:
            sys.exit(f'{path}:{n}: a second entry for {m.group(1)}')
        entries[m.group(1)] = (re.compile(m.group(2).replace('\\/', '/')), m.group(3))
    return entries


def server_problems(run):
    """Crashes and assertion failures in a run's server logs and outputs, as text lines."""
    problems = []
    logdir = os.path.join(run, 'log')
    logs = [os.path.join(logdir, f) for f in sorted(os.listdir(logdir))] if os.path.isdir(logdir) else []
    logs += [p for p in [os.path.join(run, 'postgres.log')] if os.path.exists(p)]
    for log in logs:
        for line in read(log).splitlines():
            if 'terminated by signal' in line or 'TRAP:' in line:
                problems.append(f'{os.path.basename(log)}: {line.strip()}')
    results = os.path.join(run, 'results')
    for name in sorted(os.listdir(results)):
        if name.endswith('.out') and LOST in read(os.path.join(results, name)):
            problems.append(f'{name[:-4]}: {LOST}')
    return problems, bool(logs)


def tests(run):
    """The tests a run has an output for."""
    return sorted(f[:-4] for f in os.listdir(os.path.join(run, 'results')) if f.endswith('.out'))


def main():
    """Compare, print the counts and the differences not listed, exit 1 on any failure."""
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    plain, forced, diffs_path = sys.argv[1:]
    listed = load_diffs(diffs_path)
    same, plan_only, listed_seen, unlisted = [], [], [], []
    gpu_nodes = {'GpuSort': {}, 'GpuAgg': {}}
    names = sorted(set(tests(plain)) | set(tests(forced)))
    for name in names:
        paths = [os.path.join(run, 'results', name + '.out') for run in (plain, forced)]
        missing = [p for p in paths if not os.path.exists(p)]
        if missing:
            unlisted.append((name, [f'no output: {p}' for p in missing]))
            continue
        texts = [read(p) for p in paths]
        for line in texts[1].splitlines():
            for m in GPU_NODE.finditer(line):
                kind = m.group(1) or m.group(2)
                gpu_nodes[kind][name] = gpu_nodes[kind].get(name, 0) + 1
        if texts[0] == texts[1]:
            same.append(name)
            continue
        functions = test_functions(texts[0])
        (a, anum), (b, bnum) = (mask(t.splitlines(), functions) for t in texts)
        if a == b:
            plan_only.append(name)
            continue
        pattern = listed[name][0] if name in listed else None
        differing = []
        shown = []
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
            if tag == 'equal':
                continue
            differing += a[i1:i2] + b[j1:j2]
            lines = [('-', l) for l in a[i1:i2]] + [('+', l) for l in b[j1:j2]]
            if pattern:
                lines = [(c, l) for c, l in lines if not pattern.search(l)]
            if lines:
                where = [str(n[k]) if k < len(n) else 'end' for n, k in ((anum, i1), (bnum, j1))]
                near = next((l for l in reversed(a[:i1]) if STATEMENT.match(l)), '')
                shown.append(f'@@ plain line {where[0]}, forced line {where[1]}, after: {near[:90]}')
                shown += [c + l for c, l in lines]
        if pattern and all(pattern.search(line) for line in differing):
            listed_seen.append(name)
            continue
        if pattern:
            shown.insert(0, f'(listed, but these lines do not match /{pattern.pattern}/:)')
        unlisted.append((name, shown))

    problems = []
    for label, run in (('plain', plain), ('forced', forced)):
        found, had_log = server_problems(run)
        problems += [f'{label}: {p}' for p in found]
        if not had_log:
            print(f'note: no server log in {run} (log/ or postgres.log): only lost connections can be seen')
    print(f'tests run: {len(tests(plain))} plain, {len(tests(forced))} forced')
    print(f'identical: {len(same)}; plan-only differences: {len(plan_only)}; '
          f'listed differences: {len(listed_seen)}; unlisted: {len(unlisted)}')
    print(f'crashes and assertion failures: {len(problems)}')
    for p in problems[:40]:
        print('  ' + p)
    for kind, where in gpu_nodes.items():
        print(f'{kind} planned in {len(where)} tests ({sum(where.values())} nodes): '
              + ' '.join(f'{t}({c})' for t, c in sorted(where.items())))
    print('plan-only: ' + ' '.join(plan_only))
    for name in listed_seen:
        print(f'listed: {name}: {listed[name][1]}')
    unused = sorted(set(listed) - set(listed_seen))
    if unused:
        print('listed, no difference in this run: ' + ' '.join(unused))
    for name, shown in unlisted:
        print(f'UNLISTED DIFFERENCE: {name}')
        for line in shown[:LIMIT]:
            print('    ' + line)
        if len(shown) > LIMIT:
            print(f'    ... {len(shown) - LIMIT} more lines')
    bad = len(unlisted) + (1 if problems else 0)
    print(f'postgres suite: {len(names) - len(unlisted)} passed, {bad} failed')
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
