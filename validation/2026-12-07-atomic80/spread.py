"""Per-case A/A spread of the atomic suites' single_thread cells, one
invocation per round (as the gate's pairs), under three ways of running:
as the suite runs today, with 10x the iterations, and without ASLR
(setarch -R). Consecutive invocations of the same binary are paired;
spread = 1.4826 * MAD of the pairs' log ratios (stats::robust_spread).
python3 spread.py BIN N"""
import json, math, statistics, subprocess, sys, collections
binary, n = sys.argv[1], int(sys.argv[2])
configs = {
    "today": [binary, "--bench", "single_thread", "--rounds", "1"],
    "iters10x": [binary, "--bench", "single_thread", "--rounds", "1", "--iters", "200000"],
    "no-aslr": ["setarch", "-R", binary, "--bench", "single_thread", "--rounds", "1"],
}
vals = {c: collections.defaultdict(list) for c in configs}
for i in range(n):
    for c, cmd in configs.items():
        out = subprocess.run(cmd, capture_output=True, text=True).stdout
        for line in out.splitlines():
            r = json.loads(line)
            if r.get("type") == "sample" and r["metric"] == "ticks_per_op":
                vals[c][r["case"]["op"]].append(r["value"])
def spread(v):
    lr = [math.log(b / a) for a, b in zip(v[0::2], v[1::2]) if a > 0 and b > 0]
    med = statistics.median(lr)
    return 1.4826 * statistics.median(abs(x - med) for x in lr)
ops = sorted(vals["today"])
print(f"{'op':22} " + " ".join(f"{c:>10}" for c in configs) + "   (median ticks today)")
for op in ops:
    print(f"{op:22} " + " ".join(f"{100*spread(vals[c][op]):9.1f}%" for c in configs)
          + f"   {statistics.median(vals['today'][op]):.1f}")
