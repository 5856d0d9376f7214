"""Per-test durations from log.txt: start = the "running for over 60
seconds" line less 60 s (tests under 60 s: unknown, shown as <60), end
= the "... ok"/"FAILED" line."""
import re, sys
start, end = {}, {}
for line in open(sys.argv[1] if len(sys.argv) > 1 else "log.txt"):
    m = re.match(r"\s*([\d.]+) test (\S+) has been running for over 60 seconds", line)
    if m:
        start[m.group(2)] = float(m.group(1)) - 60
    m = re.match(r"\s*([\d.]+) test (\S+) \.\.\. (ok|FAILED)", line)
    if m:
        end[m.group(2)] = float(m.group(1))
rows = sorted(((end[t] - start[t], t) for t in end if t in start), reverse=True)
for d, t in rows:
    print(f"{d:7.0f} s  {t}")
print(f"{len(rows)} tests over 60 s: {sum(d for d, _ in rows):.0f} s; "
      f"{len(end) - len(rows)} under; last end {max(end.values()):.0f} s")
