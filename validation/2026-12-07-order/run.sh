#!/bin/bash
# The contention model's cold run phase in suite order (no durations
# hint) and longest first (the hint of the previous run), alternating.
cd /work/main
C=~/.cache/lockmatrix/contention-results
for rep in 1 2; do
  for mode in suite longest; do
    find $C -name '*.json' ! -name durations.json -delete
    [ $mode = suite ] && rm -f $C/durations.json
    echo "== rep $rep mode $mode load $(cut -d' ' -f1 /proc/loadavg)"
    cargo xtask matrix --no-install --targets x86_64 --suites spinlock,rwsem --rounds 1 --no-gate 2>&1 | grep -E "contention \((head)\)|^lockmatrix run"
    cp $C/durations.json /work/rec-order/durations-$rep-$mode.json
  done
done
