#!/bin/bash
# The e2e suite with a timestamp on each line of its output: a test's
# start is its "running for over 60 seconds" line less 60 s, its end its
# "... ok" line.
cd /work/main
cargo test -p xtask --test e2e --locked 2>&1 | python3 -u -c '
import sys, time
t0 = time.time()
for line in sys.stdin:
    sys.stdout.write(f"{time.time()-t0:8.1f} {line}")
'
