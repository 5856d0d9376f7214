#!/bin/bash
# A/A pull-request jobs of the spinlock suite alone, with 60-ms
# lock_unlock windows (the suite as it is) and with 30-ms windows,
# alternating. Each: cargo xtask matrix --no-install --targets x86_64
# --suites spinlock --against HEAD
set -u
out=/work/rec-swindow
for i in 1 2; do
  for w in 60 30; do
    cd /tmp/s$w
    start=$(date +%s.%N)
    CARGO_TARGET_DIR=/work/main/target cargo xtask matrix --no-install --targets x86_64 --suites spinlock --against HEAD --results $out/results-w$w > $out/w$w-$i.log 2>&1
    rc=$?
    end=$(date +%s.%N)
    echo "w$w run$i rc=$rc secs=$(echo "$end - $start" | bc)" >> $out/times.txt
    d=$(ls -td $out/results-w$w/*/ | head -1)
    CARGO_TARGET_DIR=/work/main/target cargo xtask gate "$d" --json $out/w$w-$i-gate.json > /dev/null 2>&1
    gzip -f $out/w$w-$i-gate.json
  done
done
