"""Per run of the rwsem A/A pull-request job: wall time, the rwsem phase,
case-pairs a side, each timing cell's threshold (how many at 25%, 50%,
2x, too noisy), verdicts. python3 compare.py"""
import collections, glob, gzip, json, re
times = {l.split()[0] + "-" + l.split()[1][3:]: l.split() for l in open("times.txt")}
for g in sorted(glob.glob("w*-gate.json.gz")):
    tag = g[:-13]
    rep = json.load(gzip.open(g))
    cells = [c for c in rep["cells"] if c["suite"] == "rwsem" and c["family"]]
    ran = collections.Counter()
    for c in cells:
        k = json.dumps(c["case"], sort_keys=True)
        ran[k] = max(ran[k], c["head"]["n"])
    tiers = collections.Counter()
    for c in cells:
        s = c.get("strictness") or {}
        t = "too noisy" if (s.get("resolution") or {}).get("is") == "too_noisy" else s.get("threshold")
        tiers[t] += 1
    verdicts = collections.Counter(c["verdict"] for c in cells)
    log = open(tag + ".log").read()
    phase = re.search(r"x86_64/rwsem: ok in ([\d.]+)s", log)
    print(f"{tag}: wall {times.get(tag.replace('-', '-'), ['?','?','?','?'])[3]}, rwsem phase {phase.group(1) if phase else '?'} s, "
          f"{sum(ran.values())} case-pairs a side over {len(ran)} cases; thresholds {dict(sorted(tiers.items(), key=str))}; {dict(verdicts)}")
