#!/bin/bash
# Seed 001's table beside the contention model: ticket and qspinlock on
# the model's amd and wsm-ep machines, with the `seed001` workload (22k
# cycles inside the lock and 22k outside: suites/spinlock/src/sim.rs),
# the seed's "Local" rows (vCPUs fill the first node) and its "N - nodes"
# rows where the model has the placement (--spread). Writes records.jsonl and table.md here.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
RUSTFLAGS="--cfg lockmatrix_sim" CARGO_TARGET_DIR=target/sim \
    cargo build --release -p spinlock --config 'profile.release.panic="unwind"'
sim=target/sim/release/spinlock
{
    $sim --machine amd,wsm-ep --lock ticket,qspinlock --workload seed001 --cpus 1,2,3,4,6,8
    $sim --machine wsm-ep --spread --lock ticket,qspinlock --workload seed001 --cpus 2,4,6,8
    $sim --machine amd --spread --lock ticket,qspinlock --workload seed001 --cpus 2,4
} | grep '"type":"contention"' | sed -E 's/,"secs":[0-9.]+//' > "$here/records.jsonl"
python3 "$here/table.py" < "$here/records.jsonl" > "$here/table.md"
cat "$here/table.md"
