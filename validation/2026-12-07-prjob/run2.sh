#!/bin/bash
# The x86_64 pull-request job with the tool of 1a3c9e4 (rwsem 50-ms windows, the model pinned,
# writer_fairness_cv shown): a head commit adding a comment to qspinlock.rs
# and linux_rwsem.rs (the model and Miri cold for the head).
cd /tmp/pr-new3
uptime > /work/rec-pr3/uptime
start=$(date +%s.%N)
CARGO_TARGET_DIR=/work/main/target cargo xtask matrix --no-install --targets x86_64 --against HEAD~1 --results /work/rec-pr3/results > /work/rec-pr3/job.log 2>&1
rc=$?
end=$(date +%s.%N)
echo "rc=$rc secs=$(echo "$end - $start" | bc)" >> /work/rec-pr3/times.txt
