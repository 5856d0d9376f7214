"""Every contended timing cell of ten A/A recordings: how strict its gate
was (the threshold the gate chose from each recording's pilot pairs, and
its spread), the spread over all the recordings' pairs, and its own power
(`validate-gate --every-cell`).

    python3 cells.py SUMMARIES_DIR GATES_DIR EVERY_JSON... > cells.md

SUMMARIES_DIR holds the recordings' summaries (`--keep-summaries`),
GATES_DIR one `cargo xtask gate <summary> --json` report per recording,
EVERY_JSON one or more `validate-gate --every-cell --json` reports (of
one recording each, or of all): their injections are summed per cell.
After the table, the same injections per suite and family of cells.
"""
import collections, glob, json, math, os, statistics, sys

summaries, gates = sys.argv[1:3]
validates = sys.argv[3:]


def value(v):
    return str(v).lower() if isinstance(v, bool) else str(v)


def name(c):
    case = ' '.join(f'{k}={value(v)}' for k, v in sorted(c['case'].items()))
    return f"{c['target']}/{c['suite']} {c['bench']} [{case}] {c['metric']}"


def threads(case):
    if 'threads' in case:
        return int(case['threads'])
    return int(case.get('readers', 0)) + int(case.get('writers', 0))


def pct(f):
    return f'{f * 100:.0f}%' if f < 1 else f'{f + 1:.1f}x'


def spread(logs):
    """1.4826 MAD of log ratios, as a percentage."""
    if len(logs) < 3:
        return None
    m = statistics.median(logs)
    return math.exp(1.4826 * statistics.median(abs(x - m) for x in logs)) - 1


# Every pair's log(head/base), per cell, over every recording.
pairs = collections.defaultdict(list)
for rec in sorted(glob.glob(os.path.join(summaries, '*'))):
    sides = [json.load(open(os.path.join(rec, p, 'run.json'))) for p in ('.', 'base')]
    values = [{}, {}]
    for side, run in zip(values, sides):
        for t in run['targets']:
            for s in t['suites']:
                for x in s['samples']:
                    if x.get('value') is None or x['value'] <= 0:
                        continue
                    c = dict(x, target=t['name'])
                    side.setdefault(name(c), {})[x['round']] = x['value']
    for cell, head in values[0].items():
        base = values[1].get(cell, {})
        pairs[cell] += [math.log(head[r] / base[r]) for r in head if r in base]

# Per cell, per recording: the gate's strictness.
per = collections.defaultdict(list)
files = sorted(glob.glob(os.path.join(gates, '*.json')))
for f in files:
    for c in json.load(open(f))['cells']:
        if c.get('strictness') and threads(c['case']) > 1:
            per[name(c)].append(c)

SLOW = ('0.05', '0.10', '0.25', '0.50', '1.00')
power = {}
for f in validates:
    for c in json.load(open(f))['every_cell']['details']['power_per_cell']:
        p = power.setdefault(c['cell'], {s: {'injections': 0, 'detected': 0} for s in SLOW})
        for s in SLOW:
            p[s]['injections'] += c[s]['injections']
            p[s]['detected'] += c[s]['detected']

print(f'| cell | gated (of {len(files)}) | threshold chosen | pilot spread, median | '
      'spread, all pairs | pairs at the verdict, median | caught at +25% | +50% | 2x |')
print('|---|---|---|---|---|---|---|---|---|')
totals = collections.Counter()
for cell in sorted(per):
    cs = per[cell]
    gated = [c for c in cs if c['strictness']['resolution']['is'] == 'resolved']
    chosen = collections.Counter(pct(c['strictness']['threshold']) for c in gated)
    why = collections.Counter(
        c['strictness']['resolution']['is'].replace('_', ' ') for c in cs if c not in gated)
    needs = [c['strictness']['resolution'].get('needs') for c in cs if c not in gated]
    needs = [n for n in needs if n]
    t = ', '.join(f'{k} x{n}' for k, n in sorted(chosen.items(), key=lambda kv: -kv[1]))
    if why:
        more = f' (needs ~{int(statistics.median(needs))} pairs)' if needs else ''
        t = '; '.join(filter(None, [t, ', '.join(f'{k} x{n}' for k, n in why.items()) + more]))
    pilot = [c['strictness']['spread'] for c in cs if c['strictness']['spread'] is not None]
    pilot = pct(math.exp(statistics.median(pilot)) - 1) if pilot else ''
    full = spread(pairs.get(cell, []))
    full = pct(full) if full is not None else ''
    at = [c['look']['pairs'] for c in gated if c.get('look')]
    at = f'{statistics.median(at):.0f}' if at else ''
    p = power.get(cell)
    cols = []
    for s in ('0.25', '0.50', '1.00'):
        if p and p[s]['injections']:
            cols.append(f"{p[s]['detected']}/{p[s]['injections']}")
            totals[s, 'n'] += p[s]['injections']
            totals[s, 'd'] += p[s]['detected']
        else:
            cols.append('')
    totals['cells'] += 1
    totals['gated'] += len(gated)
    totals['cell-recordings'] += len(cs)
    print(f"| {cell.split('/', 1)[1]} | {len(gated)} | {t} | {pilot} | {full} | {at} | {' | '.join(cols)} |")
print()
print(f"{totals['cells']} contended cells; {totals['gated']} of {totals['cell-recordings']} "
      "cell-recordings gated; caught " + ', '.join(
          f"at {pct(float(s))} {totals[s, 'd']}/{totals[s, 'n']} = {totals[s, 'd'] / max(totals[s, 'n'], 1):.2f}"
          for s in ('0.25', '0.50', '1.00')))

# Per suite and family: pooled detections, and cells caught every time.
print()
print('| suite, cells | ' + ' | '.join('+' + pct(float(s)) for s in SLOW) + ' |')
print('|---|' + '---|' * len(SLOW))
groups = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, 0, 0, 0]))
for cell, p in power.items():
    suite = cell.split()[0].split('/')[1]
    case = dict(kv.split('=', 1) for kv in cell.split('[', 1)[1].split(']', 1)[0].split())
    kind = 'contended' if threads(case) > 1 else '1-thread'
    for s in SLOW:
        n, d = p[s]['injections'], p[s]['detected']
        if n:
            g = groups[suite, kind][s]
            g[0] += 1
            g[1] += d == n
            g[2] += n
            g[3] += d
for (suite, kind), by in sorted(groups.items()):
    cols = []
    for s in SLOW:
        g = by.get(s)
        cols.append(f'{g[3]}/{g[2]} = {g[3] / g[2]:.2f} ({g[1]} of {g[0]} cells every time)' if g else '')
    print(f'| {suite}, {kind} | ' + ' | '.join(cols) + ' |')
