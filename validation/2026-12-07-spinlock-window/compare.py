"""Per run of the spinlock A/A pull-request job: wall time, the spinlock
phase, each timing cell's threshold (how many at 10%, 25%, 50%, 2x, too
noisy), its verdict, and the pairs lock_unlock's contended cells got.
python3 compare.py"""
import collections, glob, gzip, json, re
times = {}
for l in open("times.txt"):
    w, run, rc, secs = l.split()
    times[f"{w}-{run[3:]}"] = (rc, secs.split("=")[1])
for g in sorted(glob.glob("w*-gate.json.gz")):
    tag = g[: -len("-gate.json.gz")]
    rep = json.load(gzip.open(g))
    cells = [c for c in rep["cells"] if c["suite"] == "spinlock" and c["family"]]
    tiers, verdicts, lu_pairs = collections.Counter(), collections.Counter(), []
    for c in cells:
        s = c.get("strictness") or {}
        t = "too noisy" if (s.get("resolution") or {}).get("is") == "too_noisy" else s.get("threshold")
        tiers[t] += 1
        verdicts[c["verdict"]] += 1
        if c["bench"] == "lock_unlock" and c["case"].get("threads", 1) > 1:
            lu_pairs.append(c["head"]["n"])
    log = open(tag + ".log").read()
    phase = re.search(r"x86_64/spinlock: ok in ([\d.]+)s", log)
    rc, secs = times.get(tag, ("?", "?"))
    print(f"{tag}: {rc} wall {float(secs):.1f} s, spinlock phase {phase.group(1) if phase else '?'} s; "
          f"thresholds {dict(sorted(tiers.items(), key=str))}; {dict(verdicts)}; "
          f"contended lock_unlock cells {len(lu_pairs)}, pairs {sorted(lu_pairs)}")
