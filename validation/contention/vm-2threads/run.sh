#!/bin/bash
# The model beside real runs on this machine at 2 threads: lock_unlock of
# the five locks the model covers, real (the suite's release build, 20
# rounds of its quick window in each of 3 processes, median TSC ticks
# per acquisition) and
# modelled (the `x86` machine at 2 vCPUs, cycles per acquisition).
# Writes real.jsonl, model.jsonl and table.md here. Run it on a quiet
# machine: the real column is a fact about this one.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
locks=tas,ttas,ticket,mcs,qspinlock
cargo build --release --locked -p spinlock
RUSTFLAGS="--cfg lockmatrix_sim" CARGO_TARGET_DIR=target/sim \
    cargo build --release --locked -p spinlock --config 'profile.release.panic="unwind"'
{ echo "# $(date -u +%FT%TZ) $(uname -r) loadavg before: $(cut -d' ' -f1-3 /proc/loadavg)"; } > "$here/host.txt"
# Three processes of 20 rounds each: this VM's noise is mostly between
# processes.
for p in 1 2 3; do
    target/release/spinlock --bench lock_unlock --lock $locks --threads 2 --rounds 20 2>/dev/null |
        grep '"metric":"ticks_per_acquire"' | sed "s/^{/{\"process\":$p,/"
done > "$here/real.jsonl"
echo "loadavg after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$here/host.txt"
target/sim/release/spinlock --lock $locks --workload lock_unlock --cpus 2 2>/dev/null |
    grep '"type":"contention"' | sed -E 's/,"secs":[0-9.]+//' > "$here/model.jsonl"
python3 - "$here" <<'PY' | tee "$here/table.md"
import json, statistics, sys
here = sys.argv[1]
real, per_process = {}, {}
for line in open(f"{here}/real.jsonl"):
    r = json.loads(line)
    real.setdefault(r["case"]["lock"], []).append(r["value"])
    per_process.setdefault(r["case"]["lock"], {}).setdefault(r["process"], []).append(r["value"])
model = {}
for line in open(f"{here}/model.jsonl"):
    r = json.loads(line)
    model[r["lock"]] = r["metrics"]["cycles_per_acq"]
locks = sorted(real, key=lambda l: statistics.median(real[l]))
t_real, t_model = statistics.median(real["ticket"]), model["ticket"]
print("| lock | real median (min-max), ticks | each process's median | real / ticket | model, cycles | model / ticket |")
print("|---|---|---|---|---|---|")
for l in locks:
    v = real[l]
    each = ", ".join(f"{statistics.median(x):.0f}" for _, x in sorted(per_process[l].items()))
    print(f"| {l} | {statistics.median(v):.0f} ({min(v):.0f}-{max(v):.0f}) | {each} | {statistics.median(v) / t_real:.2f} "
          f"| {model[l]:.0f} | {model[l] / t_model:.2f} |")
def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0] * len(xs)
    for k, i in enumerate(order):
        r[i] = k + 1
    return r
a = ranks([statistics.median(real[l]) for l in locks])
b = ranks([model[l] for l in locks])
n = len(locks)
rho = 1 - 6 * sum((x - y) ** 2 for x, y in zip(a, b)) / (n * (n * n - 1))
print(f"\nSpearman's rho of the two orders: {rho:.2f} ({n} locks, {len(real['ticket'])} rounds each)")
PY
