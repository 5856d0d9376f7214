#!/bin/bash
# A/A pull-request jobs of the rwsem suite alone, with 100-ms windows (the
# suite as it is) and with 50-ms windows (QUICK_MS = 50), alternating.
# Each: cargo xtask matrix --no-install --targets x86_64 --suites rwsem --against HEAD
set -u
out=/work/rec-window
for i in 1 2; do
  for w in 100 50; do
    cd /tmp/w$w
    start=$(date +%s.%N)
    CARGO_TARGET_DIR=/work/main/target cargo xtask matrix --no-install --targets x86_64 --suites rwsem --against HEAD --results $out/results-w$w > $out/w$w-$i.log 2>&1
    rc=$?
    end=$(date +%s.%N)
    echo "w$w run$i rc=$rc secs=$(echo "$end - $start" | bc)" >> $out/times.txt
    d=$(ls -td $out/results-w$w/*/ | head -1)
    CARGO_TARGET_DIR=/work/main/target cargo xtask gate "$d" --json $out/w$w-$i-gate.json > /dev/null 2>&1
  done
done
