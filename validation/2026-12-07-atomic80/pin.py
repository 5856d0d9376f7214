"""The atomic suite's single_thread cells across invocations, floating (as
the suite runs them: a 1-thread bench is not pinned) and pinned to vCPU 0
or 1 with taskset: 30 invocations each, interleaved; consecutive ones
paired; spread = 1.4826 * MAD of the pairs' log ratios.
python3 pin.py BIN  (output: spread-pin.txt)"""
import json, math, statistics, subprocess, collections, sys
B = sys.argv[1]
cfg = {"float": [B], "cpu0": ["taskset", "-c", "0", B], "cpu1": ["taskset", "-c", "1", B]}
vals = {c: collections.defaultdict(list) for c in cfg}
for i in range(30):
    for c, pre in cfg.items():
        out = subprocess.run(pre + ["--bench", "single_thread", "--rounds", "1"], capture_output=True, text=True).stdout
        for l in out.splitlines():
            r = json.loads(l)
            if r.get("type") == "sample" and r["metric"] == "ticks_per_op":
                vals[c][r["case"]["op"]].append(r["value"])
def spread(v):
    lr = [math.log(b / a) for a, b in zip(v[0::2], v[1::2])]
    m = statistics.median(lr)
    return 1.4826 * statistics.median(abs(x - m) for x in lr)
print("op                     float    cpu0    cpu1   medians float/cpu0/cpu1")
for op in sorted(vals["float"]):
    print(f"{op:20} " + " ".join(f"{100*spread(vals[c][op]):6.1f}%" for c in cfg) + "   "
          + " ".join(f"{statistics.median(vals[c][op]):.2f}" for c in cfg))
