#!/usr/bin/env python3
"""Seed 001's table beside the contention model's `seed001` workload.

Reads the model's records (run.sh's records.jsonl) on standard input and
prints Markdown: per machine, cycles per acquisition of the ticket lock
and qspinlock, the seed's and the model's, the model's error, and the
ticket/qspinlock ratio.

The seed's numbers: Peter Zijlstra, reply to "[PATCH v5 3/8] qspinlock,
x86: Add x86 specific optimization for 2 contending tasks", Xen-devel and
linux-kernel, 2014: cycles spent in arch_spin_lock() + arch_spin_unlock().
Its ticket column came out differently with gcc 4.7.2 (the first set) and
gcc 4.7.3 (the second); both are given. qspinlock is "qspinlock + all".
"""
import json
import sys

# (machine, placement): {threads: (ticket gcc 4.7.2, ticket gcc 4.7.3, qspinlock)}
SEED = {
    ("amd", "Local"): {
        1: (324.425530, 324.071515, 324.102142),
        2: (17141.324050, 981.778516, 620.185930),
        3: (52212.232343, 24414.144262, 25242.574661),
        4: (93136.458314, 50868.376667, 47982.037866),
        6: (167967.455965, 99536.890504, 95345.011864),
        8: (245402.534869, 151616.395779, 142412.451438),
    },
    ("wsm-ep", "Local"): {
        1: (19.002249, 20.009974, 29.002844),
        2: (5093.275530, 1206.419074, 1282.209519),
        3: (22300.859761, 22071.535000, 22127.477388),
        4: (44929.922325, 44606.831373, 44493.881832),
        6: (86338.755247, 86498.760774, 86360.083940),
    },
    # The seed's "N - nodes" rows: the model's --spread, which puts vCPUs
    # round robin over min(N, the machine's nodes) nodes. amd has 8 nodes
    # (4 packages of 2), the seed's Interlagos 4 (2 of 2): its rows match
    # where the threads are as many as the nodes (2 and 4), and the first
    # nodes are one package's two, then two packages'.
    ("amd", "2 nodes"): {
        2: (12763.640956, 1875.637053, 1879.460823),
    },
    ("amd", "4 nodes"): {
        4: (82408.853603, 55409.896671, 49820.323075),
    },
    # Westmere-EP's: its two sockets. (Its ticket column has one set only.)
    ("wsm-ep", "2 nodes"): {
        2: (1527.466159, None, 1227.051993),
        4: (46004.232179, None, 46450.787234),
        6: (89226.472057, None, 90124.984324),
        8: (137225.472406, None, 137909.184358),
    },
}
NODES = {"amd": 8, "wsm-ep": 2}
SEED_NAME = {"amd": "AMD Interlagos", "wsm-ep": "Intel Westmere-EP"}


def err(model, seed):
    return f"{100 * (model / seed - 1):+.0f}%"


def main():
    model = {}
    for line in sys.stdin:
        r = json.loads(line)
        if r.get("type") != "contention" or r["workload"] != "seed001":
            continue
        nodes = min(r["cpus"], NODES[r["machine"]])
        placement = f"{nodes} nodes" if r.get("placement") == "spread" else "Local"
        model[(r["machine"], placement, r["cpus"], r["lock"])] = r["metrics"]["cycles_per_acq"]
    for (machine, placement), rows in SEED.items():
        print(f"**{SEED_NAME[machine]}, {placement}** (model `{machine}`"
              + (", `--spread`" if placement != "Local" else "") + ")\n")
        print("| threads | seed ticket 4.7.2 | seed ticket 4.7.3 | model ticket | error (4.7.3) "
              "| seed qspinlock | model qspinlock | error | ratio seed (4.7.2 / 4.7.3) | ratio model |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for n, (t2, t3, q) in rows.items():
            mt = model[(machine, placement, n, "ticket")]
            mq = model[(machine, placement, n, "qspinlock")]
            t_ref = t3 if t3 is not None else t2
            ratios = f"{t2 / q:.2f} / {t3 / q:.2f}" if t3 is not None else f"{t2 / q:.2f}"
            print(f"| {n} | {t2:.0f} | {'' if t3 is None else f'{t3:.0f}'} | {mt:.0f} "
                  f"| {err(mt, t_ref)}{'' if t3 is not None else ' (4.7.2)'} | {q:.0f} | {mq:.0f} "
                  f"| {err(mq, q)} | {ratios} | {mt / mq:.2f} |")
        print()


main()
