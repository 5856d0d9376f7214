#!/bin/bash
# The x86_64 pull-request job, old tool (773232e) then new (b806625), each
# with a head commit adding a comment to qspinlock.rs and linux_rwsem.rs
# (Miri and the model cold for the head, warm for the base).
for side in old new; do
  cd /tmp/pr-$side
  uptime > /work/rec-pr/$side.uptime
  start=$(date +%s.%N)
  cargo xtask matrix --no-install --targets x86_64 --against HEAD~1 --results /work/rec-pr/$side-results --json /work/rec-pr/$side.json > /work/rec-pr/$side.log 2>&1
  rc=$?
  end=$(date +%s.%N)
  echo "$side rc=$rc secs=$(echo "$end - $start" | bc)" >> /work/rec-pr/times.txt
done
