#!/bin/bash
# The atomic suites' power at 160 pairs: atomic80's recording at twice the pairs.
cd /work/main
r=/work/rec-atomic160
start=$(date +%s)
cargo xtask validate-gate --runs 10 --rounds 160 --suites atomic,atomic-c \
    --alpha 0.025 --every-cell --keep-summaries $r/summaries --json $r/validate.json > $r/validate.txt 2> $r/stderr.txt
echo "rc=$? secs=$(( $(date +%s) - start ))" >> $r/times.txt
