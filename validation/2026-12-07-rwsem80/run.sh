#!/bin/bash
# rwsem's power per cell at a pull request's 80 pairs with the 50-ms
# rw_mix window, at its share of the four-suite job's level (0.05/4).
cd "$(dirname "$0")/../.."
r=validation/2026-12-07-rwsem80
start=$(date +%s)
cargo xtask validate-gate --runs 6 --rounds 80 --suites rwsem \
    --alpha 0.0125 --every-cell --keep-summaries $r/summaries --json $r/validate.json > $r/validate.txt 2> $r/stderr.txt
echo "rc=$? secs=$(( $(date +%s) - start ))" >> $r/times.txt
# The recordings' analysis was restarted from the kept summaries in a
# release build (the debug build's took over 7 min before it was stopped):
#   target/release/xtask validate-gate --from $r/summaries/* --alpha 0.0125 \
#       --every-cell --json $r/validate.json > $r/validate.txt 2> $r/analysis-stderr.txt
