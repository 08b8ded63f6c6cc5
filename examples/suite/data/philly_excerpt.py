#!/usr/bin/env python3
"""Cuts a several-day Philly excerpt that starts with the work already in flight.

    python3 examples/suite/data/philly_excerpt.py ../shared/traces/philly/philly.csv \\
        "2017-11-13 00:00:00" 7 6c71a0,11cb48,103959 > examples/suite/data/philly_3vc_2017-11-13_week.csv

Writes the header of the trace, then one row for every job of the given virtual clusters
that was submitted before START and, by its recorded duration, still running at START (the
trace records submission times and durations, not start times, so each job is taken to
have started when it was submitted): its timestamp becomes START, its duration the time it
had left (to 0.1 s) and its gpu_time num_gpus x that duration; then the rows of the same
clusters submitted in [START, START + DAYS days), unchanged and in file order. Imported
without `rebase_to_first_job`, time 0 is START: the in-flight jobs arrive at 0 with the work
they had left, the others at their own offsets from START. On stderr: how many of each.
"""
import csv, datetime, sys

src, start, days, vcs = sys.argv[1], sys.argv[2], float(sys.argv[3]), set(sys.argv[4].split(","))
fmt = "%Y-%m-%d %H:%M:%S"
t0 = datetime.datetime.strptime(start, fmt)
t1 = t0 + datetime.timedelta(days=days)
rows = list(csv.reader(open(src)))
out = csv.writer(sys.stdout, lineterminator="\n")
out.writerow(rows[0])
carry, window = [], []
for r in rows[1:]:
    if len(r) != 5 or r[4] not in vcs:
        continue
    t = datetime.datetime.strptime(r[0], fmt)
    end = t + datetime.timedelta(seconds=float(r[1]))
    if t < t0 < end:
        left = (end - t0).total_seconds()
        carry.append([start, f"{left:.1f}", r[2], f"{int(r[2]) * left:.1f}", r[4]])
    elif t0 <= t < t1:
        window.append(r)
for r in carry + window:
    out.writerow(r)
print(f"{len(carry)} in flight, {len(window)} submitted", file=sys.stderr)
