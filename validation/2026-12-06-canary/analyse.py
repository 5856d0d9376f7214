"""Each stored check in canaries.json: its canaries' shift from the baseline's, and
what the gate's two rules say of it (gate/canary.rs): the spread rule (moved by more
than 3x the baseline's robust spread, at least 10%) and the interval rule (the whole
95% Hodges-Lehmann interval of the ratio beyond 10%). `python3 analyse.py`"""
import json, math, statistics as st

def spread(v):
    logs = [math.log(x) for x in v]
    m = st.median(logs)
    return 1.4826 * st.median([abs(x - m) for x in logs])

def interval95(base, head):
    d = sorted(math.log(h) - math.log(b) for h in head for b in base)
    n, m = len(head), len(base)
    k = int(n * m / 2 + 0.5 - 1.959964 * math.sqrt(n * m * (n + m + 1) / 12))
    return math.exp(d[k - 1]), math.exp(d[len(d) - k])

data = json.load(open('canaries.json'))
for check in data['checks']:
    cells = []
    for t in ('1', '2'):
        base, head = data['baseline'][t], check['canary'][t]
        ratio = st.median(head) / st.median(base)
        lo, hi = interval95(base, head)
        by_spread = abs(math.log(ratio)) > max(3 * spread(base), math.log(1.1))
        by_interval = lo > 1.1 or hi < 1 / 1.1
        rules = [r for r, on in (('spread', by_spread), ('interval', by_interval)) if on]
        cells.append('canary[%s] x%.2f (95%% x%.2f-x%.2f, %d rounds) %s'
                     % (t, ratio, lo, hi, len(head), 'moved by ' + '+'.join(rules) if rules else 'held'))
    print('%-8s %-9s %-40s %s' % (check['name'], check['result_as_run'], check['counts_as_run'], ' | '.join(cells)))
