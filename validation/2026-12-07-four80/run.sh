#!/bin/bash
# Ten A/A recordings of all four x86_64 suites at a pull request's 80
# pairs and the job's own level (alpha 0.05 over the target), on one boot
# of the 2-vCPU VM, and their analysis. Recorded in two parts on
# 2026-12-07: three recordings 12:35-13:10 UTC, seven 14:04-15:30.
cd "$(dirname "$0")/../.."
v=validation/2026-12-07-four80
x=target/release/xtask   # the debug `cargo xtask` analyses about 9x slower
cargo build --release -p xtask
# The kept summaries (about 20 MB a recording unpacked).
[ -d $v/summaries ] || { mkdir -p $v/summaries && tar xzf $v/summaries.tar.gz -C $v/summaries; }
# 1. The recordings (each about 12 minutes); --evaluations 1 because the
#    analysis below is made once over all ten.
#      $x validate-gate --runs 3 --rounds 80 --keep-summaries $v/summaries
#      $x validate-gate --runs 7 --rounds 80 --evaluations 1 --keep-summaries $v/summaries
# 2. Resampled (100 A/A draws of 80 pairs) and end to end (the ten as made):
$x validate-gate --from $v/summaries/* --json $v/validate.json > $v/validate.txt
# 3. Each cell's own power, one recording at a time (they were analysed as
#    each recording finished, beside the next one, at idle priority; about
#    1.5-2 min of CPU each): every.tar.gz keeps those ten reports.
mkdir -p $v/every $v/gates
for d in $v/summaries/*; do
    id=$(basename "$d")
    $x validate-gate --from "$d" --evaluations 1 --every-cell --json $v/every/$id.json > /dev/null
    # 4. The gate's own report of the recording: each cell's strictness.
    $x gate "$d" --json $v/gates/$id.json > /dev/null
done
# 5. The table of every contended cell, and the power per suite and family.
python3 $v/cells.py $v/summaries $v/gates $v/every/*.json > $v/cells.md
