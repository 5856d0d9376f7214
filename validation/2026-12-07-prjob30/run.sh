#!/bin/bash
# The x86_64 pull-request job at 103aeb0 (spinlock's 30-ms window): a head
# commit adding a comment to qspinlock.rs and linux_rwsem.rs; run $1 (1: as
# the caches were; 2: a second comment, as a lock change finds them).
cd /tmp/pr-now
n=$1
echo "// pull request $n" >> suites/spinlock/src/locks/qspinlock.rs
echo "// pull request $n" >> suites/rwsem/src/locks/linux_rwsem.rs
git commit -qam "comment $n"
uptime > /work/rec-pr4/uptime$n
start=$(date +%s.%N)
CARGO_TARGET_DIR=/work/main/target cargo xtask matrix --no-install --targets x86_64 --against HEAD~1 --results /work/rec-pr4/results --json /work/rec-pr4/gate$n.json > /work/rec-pr4/job$n.log 2>&1
rc=$?
end=$(date +%s.%N)
echo "run=$n rc=$rc secs=$(echo "$end - $start" | bc)" >> /work/rec-pr4/times.txt
