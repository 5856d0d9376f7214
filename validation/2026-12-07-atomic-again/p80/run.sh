#!/bin/bash
# The atomic suites' power at 80 pairs, the same VM boot as p160.
cd /work/main
r=/work/rec-atomic80b
start=$(date +%s)
cargo xtask validate-gate --runs 10 --rounds 80 --suites atomic,atomic-c \
    --alpha 0.025 --every-cell --keep-summaries $r/summaries --json $r/validate.json > $r/validate.txt 2> $r/stderr.txt
echo "rc=$? secs=$(( $(date +%s) - start ))" >> $r/times.txt
