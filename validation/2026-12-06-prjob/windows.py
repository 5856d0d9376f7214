"""Per suite, the cases (100-ms windows for rwsem) each side ran in a
pull-request job, from its gate report: as run (the most pairs any of a
case's timing cells got) and as needed (the look at which the case's last
cell was decided). `python3 windows.py`"""
import collections, gzip, json

for side in ["old", "new"]:
    g = json.load(gzip.open(f"{side}-gate.json.gz"))
    for suite in ["spinlock", "rwsem"]:
        rows = [c for c in g["cells"] if c["suite"] == suite and c["family"]]
        ran, needed = collections.Counter(), collections.Counter()
        for c in rows:
            k = json.dumps(c["case"], sort_keys=True)
            ran[k] = max(ran[k], c["head"]["n"])
            needed[k] = max(needed[k], (c.get("look") or {}).get("pairs") or 10)
        print(f"{side} {suite}: {len(ran)} cases, {sum(ran.values())} case-pairs run a side, "
              f"{sum(needed.values())} needed")
