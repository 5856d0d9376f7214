#!/bin/bash
# The x86_64 pull-request job with the tool of b83822f (rwsem 50-ms windows,
# writer_fairness_cv shown): a head commit adding a comment to qspinlock.rs
# and linux_rwsem.rs (the model and Miri cold for the head).
cd /tmp/pr-new2
uptime > /work/rec-pr2/uptime
start=$(date +%s.%N)
CARGO_TARGET_DIR=/work/main/target cargo xtask matrix --no-install --targets x86_64 --against HEAD~1 --results /work/rec-pr2/results > /work/rec-pr2/job.log 2>&1
rc=$?
end=$(date +%s.%N)
echo "rc=$rc secs=$(echo "$end - $start" | bc)" >> /work/rec-pr2/times.txt
