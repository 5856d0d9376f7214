# Per-cell power from `validate-gate --every-cell --json`: by suite and by
# whether the cell is contended (threads/readers+writers > 1), how many
# cells were detected every time at 25%, 50% and 2x, and the pooled rate.
import json, sys, collections, re
def group(name):
    """(suite, '1-thread' or 'contended') of a cell's name."""
    suite = name.split()[0].split('/')[1]
    m = re.search(r'threads=(\d+)', name)
    rw = re.search(r'readers=(\d+) writers=(\d+)', name)
    n = int(m.group(1)) if m else (int(rw.group(1)) + int(rw.group(2)) if rw else 1)
    return suite, 'contended' if n > 1 else '1-thread'

d = json.load(open(sys.argv[1]))['every_cell']
print('evaluations', d['evaluations'], 'false alarms', d['false_alarms'])
for k, v in d['power'].items():
    print('pooled power at', k, round(v, 3), d['details']['power'][k]['detected'], '/', d['details']['power'][k]['evaluations'])
groups = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, 0, 0, 0]))
for c in d['details']['power_per_cell']:
    suite, kind = group(c['cell'])
    for s in ('0.05', '0.10', '0.25', '0.50', '1.00'):
        inj, det = c[s]['injections'], c[s]['detected']
        if inj == 0:
            continue
        g = groups[(suite, kind)][s]
        g[0] += 1          # cells injected at s
        g[1] += det == inj # cells detected every time
        g[2] += inj
        g[3] += det
for (suite, kind), by in sorted(groups.items()):
    row = [f"{s}: {g[3]}/{g[2]} = {g[3]/g[2]:.2f} ({g[1]}/{g[0]} cells every time)" for s, g in sorted(by.items())]
    print(suite, kind, ' | '.join(row))

# Per cell: its power at the first slowdown every recording injected (at or
# above the threshold each recording chose), and at the next slowdown up.
S = ('0.05', '0.10', '0.25', '0.50', '1.00')
at, above = collections.defaultdict(lambda: [0, 0, 0]), collections.defaultdict(lambda: [0, 0, 0])
n_rec = d['evaluations']
for c in d['details']['power_per_cell']:
    suite, kind = group(c['cell'])
    full = [i for i, s in enumerate(S) if c[s]['injections'] == n_rec]
    if not full:
        continue
    i = full[0]
    for tab, j in ((at, i), (above, i + 1)):
        if j >= len(S):
            continue
        inj, det = c[S[j]]['injections'], c[S[j]]['detected']
        t = tab[(suite, kind)]
        t[0] += 1; t[1] += inj; t[2] += det
print('cells gated in every recording (all', n_rec, 'injected):')
for k in sorted(at):
    a, b = at[k], above.get(k, [0, 0, 0])
    print(' ', k, f'at its coarsest threshold {a[2]}/{a[1]} = {a[2]/max(a[1],1):.2f} ({a[0]} cells);',
          f'one rung above {b[2]}/{b[1]} = {b[2]/max(b[1],1):.2f} ({b[0]} cells)')
