"""The contention model's run phase as the tool runs it: every covered
lock of spinlock and rwsem in a process of its own, on the default
machine and ladder, two workers taking the next lock in turn; once with
the workers' processes unpinned (as before), once with worker w's pinned
to CPU w (taskset). Prints each mode's wall time and checks that every
lock's records are the same bytes in both (host seconds aside).
python3 pool.py DIR (DIR/release/{spinlock,rwsem} built with --cfg lockmatrix_sim)"""
import json, re, subprocess, sys, threading, time
d = sys.argv[1] + "/release/"
jobs = [(s, l) for s in ["spinlock", "rwsem"]
        for l in subprocess.run([d + s, "--list"], capture_output=True, text=True).stdout.split()]
def mode(pinned):
    out, nxt, lock = {}, [0], threading.Lock()
    def worker(w):
        while True:
            with lock:
                i = nxt[0]; nxt[0] += 1
            if i >= len(jobs):
                return
            s, l = jobs[i]
            pre = ["taskset", "-c", str(w)] if pinned else []
            r = subprocess.run(pre + [d + s, "--machine", "x86", "--cpus", "1,2,4,8,16,32,64", "--lock", l],
                               capture_output=True, text=True)
            out[(s, l)] = re.sub(r'"secs":[0-9.e-]+', '"secs":_', r.stdout)
    t0 = time.time()
    ts = [threading.Thread(target=worker, args=(w,)) for w in range(2)]
    [t.start() for t in ts]; [t.join() for t in ts]
    return time.time() - t0, out
for rep in range(2):
    a, ra = mode(False)
    b, rb = mode(True)
    print(f"round {rep+1}: unpinned {a:.1f} s, pinned {b:.1f} s, ratio {b/a:.2f}; "
          f"{len(jobs)} locks, records identical: {ra == rb}", flush=True)
