#!/bin/sh
# Each Miri client of one lock on SEEDS seeds (default 32), as the tool runs
# it but with more seeds, to measure how often a client finds a bug:
#   validation/miri/clients.sh TREE SUITE LOCK [SEEDS]
# TREE is a checkout (the shipped locks) or a --crate tree the tool made
# (~/.cache/lockmatrix/crate-trees/<hash>); prints, per client, the seeds
# that failed and the time. Needs `cargo +nightly miri` (docs/ordering.md).
set -eu
tree=$1 suite=$2 lock=$3 seeds=${4:-32}
target=${CARGO_TARGET_DIR:-${TMPDIR:-/tmp}/lockmatrix-miri-clients}
cd "$tree"
CARGO_TARGET_DIR=$target cargo +nightly miri run -q -p "$suite" -- --list 2>/dev/null |
    grep "\"lock\":\"$lock\"" |
    sed 's/.*"client":"\([^"]*\)".*"preemption_rate":\([0-9.]*\).*/\2 \1/' |
    while read -r rate client; do
        start=$(date +%s)
        failed=$(MIRIFLAGS="-Zmiri-many-seeds=0..$seeds -Zmiri-many-seeds-keep-going -Zmiri-preemption-rate=$rate -Zmiri-ignore-leaks" \
            CARGO_TARGET_DIR=$target timeout 600 cargo +nightly miri run -q -p "$suite" -- --lock "$lock" --client "$client" 2>&1 |
            sed -n 's/^FAILING SEED: //p' | sort -n | tr '\n' ' ') || true
        n=$(echo "$failed" | wc -w)
        echo "$lock | $client | rate $rate | $n/$seeds seeds failed: ${failed:-none} | $(( $(date +%s) - start )) s"
    done
