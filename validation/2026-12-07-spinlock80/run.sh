#!/bin/bash
# spinlock's power per cell at a pull request's 80 pairs with the 30-ms
# lock_unlock window, at its share of the four-suite job's level (0.05/4).
cd /work/main
r=/work/rec-spin80
start=$(date +%s)
cargo xtask validate-gate --runs 6 --rounds 80 --suites spinlock \
    --alpha 0.0125 --every-cell --keep-summaries $r/summaries --json $r/validate.json > $r/validate.txt 2> $r/stderr.txt
echo "rc=$? secs=$(( $(date +%s) - start ))" >> $r/times.txt
