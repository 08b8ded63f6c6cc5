#!/usr/bin/env python3
"""Whether deferrable work waited all the time in a replay: the queue of finite workloads over time.

    airtime sim --cluster C --workload W... --horizon H --policy fifo --decisions D.jsonl
    python3 examples/suite/backlog.py D.jsonl W... --horizon H [--after 1h]

A finite workload (every kind but realtime) waits from its submission to its first start
(`start` decisions of the log), and again from a `preempt` to its next start. Submission
times come from the workload files as demand.py reads them (Philly rows named
philly-<data row>, as the importer names them). Prints, for [after, horizon), the fewest
workloads and GPUs (shares and MIG slices as demand.py counts them) waiting at any moment,
when that was, how many wait at the end (the report's `waiting_at_end` counts the same
workloads), and every interval in which nothing waited: none means the queue never emptied.
"""
import json, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from demand import dur, read_workloads  # noqa: E402


def main():
    args, horizon, after = [], None, 3600.0
    it = iter(sys.argv[1:])
    for a in it:
        if a == "--horizon": horizon = dur(next(it))
        elif a == "--after": after = dur(next(it))
        else: args.append(a)
    if len(args) < 2 or horizon is None:
        sys.exit(__doc__)
    decisions, files = args[0], args[1:]
    jobs = {w["name"]: w for w in read_workloads(files, horizon) if w["kind"] != "realtime"}
    events = []  # (t, +1 waits / -1 starts, name)
    for w in jobs.values():
        if w["submit"] < horizon:
            events.append((w["submit"], 1, w["name"]))
    waiting = set()
    with open(decisions) as f:
        for line in f:
            d = json.loads(line)
            name = d.get("workload")
            if name not in jobs or "decision" not in d:
                continue
            if d["decision"] == "start":
                events.append((d["t_s"], -1, name))
            elif d["decision"] == "preempt":
                events.append((d["t_s"], 1, name))
    # At one instant, arrivals and preemptions before starts: what starts at t waited until t.
    events.sort(key=lambda e: (e[0], -e[1]))
    gpus = 0.0
    best = None          # (count, gpus, t) fewest waiting after `after`
    empty, empty_from = [], None
    i = 0
    while i < len(events):
        t = events[i][0]
        while i < len(events) and events[i][0] == t:
            _, kind, name = events[i]
            if kind > 0 and name not in waiting:
                waiting.add(name); gpus += jobs[name]["share"]
            elif kind < 0 and name in waiting:
                waiting.discard(name); gpus -= jobs[name]["share"]
            i += 1
        nxt = events[i][0] if i < len(events) else horizon
        # The state holds on [t, nxt); count it where that overlaps [after, horizon).
        if max(t, after) < min(nxt, horizon):
            at = max(t, after)
            if best is None or len(waiting) < best[0]:
                best = (len(waiting), gpus, at)
            if not waiting and empty_from is None:
                empty_from = at
            if waiting and empty_from is not None:
                empty.append((empty_from, at)); empty_from = None
    if empty_from is not None:
        empty.append((empty_from, horizon))
    h = lambda s: f"{s / 3600:.2f}h"
    print(f"{decisions}: from {h(after)} to {h(horizon)}, the fewest deferrable workloads waiting: "
          f"{best[0]} ({best[1]:.1f} GPUs) at {h(best[2])}")
    print(f"waiting at the end: {len(waiting)} workloads ({gpus:.1f} GPUs)")
    if empty:
        print("the queue was empty in: " + ", ".join(f"[{h(a)}, {h(b)})" for a, b in empty))
    else:
        print("the queue was never empty")


if __name__ == "__main__":
    main()
