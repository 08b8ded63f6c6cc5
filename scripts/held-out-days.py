#!/usr/bin/env python3
"""Replays the suite's Philly scenarios on training days that played no part in the design.

Every replay of the suite that imports a Philly day (the mixed day, node-failure and hetero:
virtual cluster 6c71a0 on 2017-10-26; training-heavy, overload-150 and training-saturated:
three virtual clusters on 2017-11-15) is run again with that trace swapped for another day
of the same virtual clusters, cut from the full trace (../shared/traces/philly/philly.csv)
the way the shipped excerpts were: the header and the matching rows, unchanged and in file
order. Services, batch work, clusters and everything else stay as shipped. The contended
scenarios (contended-week, launch-burst, inverted-priorities) are left out, and say so:
their excerpts span several days or start with the jobs in flight at 00:00.

Which days: those on which every one of the virtual clusters submitted jobs (the importer
refuses a cluster without any) and whose jobs, each job's GPUs x its traced duration cut at
24 h, add up to within --band (25% by default) of the shipped day's, so that the cluster is
about as loaded; the rule is fixed here, before any run. The shipped day is run too, as a
control: its figures must equal the suite's for the same seed. --keep DIR keeps the cut
traces, workloads and suite files and each day's JSON report, to replay one day alone.

Prints, per scenario and policy (each day's figures the mean over --seeds, 1 by default,
the draws of request arrivals and failures), the mean over the held-out days of the return per
installed GPU-hour and realtime SLO attainment; airtime's return as a multiple of fifo's
and of the best other policy's, per scenario; then the geometric mean return over every
(scenario, day) pair.

  scripts/held-out-days.py --policy fifo,lyra,bestfit,airtime,airtime:preemption=off
"""

import argparse
import collections
import contextlib
import csv
import json
import math
import os
import re
import subprocess
import sys
import tempfile

from seed_range import parse_seeds

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DAY = 86400.0


def mean(values):
    values = list(values)
    return sum(values) / len(values)


def replay_entries(suite_file):
    """(name, cluster path, [workloads paths], horizon) of each replay of the suite file (its
    entries are flat: `- name:`, then `cluster:`, `workloads: [A, B]`, `horizon:` or
    `protocol:` lines; a protocol entry is not a replay)."""
    base = os.path.dirname(os.path.abspath(suite_file))
    entries = []
    with open(suite_file, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].rstrip()
            m = re.match(r"\s*(?:- )?(\w+):\s*(.*)$", line)
            if not m or m.group(1) == "suite":
                continue
            key, value = m.groups()
            if re.match(r"\s*- ", line):
                entries.append({})
            entries[-1][key] = value.strip()
    out = []
    for e in entries:
        if "protocol" in e:
            continue
        workloads = [w.strip() for w in e["workloads"].strip("[]").split(",")]
        out.append((e["name"], os.path.join(base, e["cluster"]),
                    [os.path.join(base, w) for w in workloads], e.get("horizon", "24h")))
    return out


PHILLY_FILE = re.compile(r"^(\s*-?\s*format:\s*philly\s*\n\s*file:\s*)(\S+)", re.M)


def philly_trace(workloads_path):
    """(file path, virtual clusters) of the Philly trace a workloads file imports, or None."""
    with open(workloads_path, encoding="utf-8") as f:
        text = f.read()
    m = PHILLY_FILE.search(text)
    if not m:
        return None
    vcs = re.search(r"clusters:\s*\"?([^\"\n#]+)", text[m.end():])
    if not vcs:
        sys.exit(f"{workloads_path}: a Philly trace without 'clusters:'")
    path = os.path.join(os.path.dirname(workloads_path), m.group(2))
    return path, frozenset(v.strip() for v in vcs.group(1).split(","))


def shipped_day(path):
    """The date of the shipped excerpt when every row has the same one, else None."""
    with open(path, encoding="utf-8") as f:
        days = {row["timestamp"][:10] for row in csv.DictReader(f)}
    return days.pop() if len(days) == 1 else None


def day_loads(rows, vcs, path):
    """Per date on which every one of `vcs` submitted a job (the importer refuses a virtual
    cluster without jobs), the GPU-hours of that day's jobs of `vcs`, each cut at 24 h.
    `rows` are (line number, row) of the trace at `path`."""
    load = collections.defaultdict(float)
    seen = collections.defaultdict(set)
    for line, r in rows:
        if r["cluster"] in vcs:
            day = (r["timestamp"] or "")[:10]
            try:
                gpus, duration = float(r["num_gpus"]), float(r["duration"])
            except (TypeError, ValueError):
                sys.exit(f"held-out-days: {path}:{line}: num_gpus '{r['num_gpus']}' or duration "
                         f"'{r['duration']}' is not a number")
            load[day] += gpus * min(duration, DAY) / 3600
            seen[day].add(r["cluster"])
    return {d: g for d, g in load.items() if seen[d] == vcs}


def write_excerpt(full_path, vcs, day, out_path):
    with open(full_path, encoding="utf-8") as src, open(out_path, "w", encoding="utf-8") as dst:
        header = src.readline()
        dst.write(header)
        for line in src:
            fields = line.rstrip("\n").split(",")
            if len(fields) >= 5 and fields[4] in vcs and fields[0].startswith(day + " "):
                dst.write(line)


def rewrite_workloads(path, philly_excerpt, out_path):
    """The workloads file with its relative trace paths made absolute and, if it imports a
    Philly day, that day replaced by `philly_excerpt`."""
    base = os.path.dirname(os.path.abspath(path))
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if philly_excerpt:
        text = PHILLY_FILE.sub(lambda m: m.group(1) + philly_excerpt, text)
    text = re.sub(r"(\bfile:\s*)(?!/)([^\s,}]+)",
                  lambda m: m.group(1) + os.path.join(base, m.group(2)), text)
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", default="fifo,lyra,bestfit,airtime,airtime:preemption=off")
    ap.add_argument("--seeds", default="1",
                    help="seeds of the replays' arrivals and failures, e.g. 1-3 or 1,4 (default 1); "
                         "each day's figures are their mean")
    ap.add_argument("--band", type=float, default=0.25,
                    help="held-out days: load within this share of the shipped day's")
    ap.add_argument("--philly", default=os.path.join(ROOT, "../shared/traces/philly/philly.csv"))
    ap.add_argument("--suite-file", default=os.path.join(ROOT, "examples/suite/suite.yaml"))
    ap.add_argument("--airtime", default=os.path.join(ROOT, "build/src/airtime/cli/airtime"))
    ap.add_argument("--keep", metavar="DIR",
                    help="write the excerpts, workloads, suite files and reports to DIR and keep "
                         "them (suite_DAY.yaml per day, suite_DAY_seedN.json per day and seed)")
    args = ap.parse_args()
    for flag, path, hint in (("--philly", args.philly, "the full Philly trace"),
                             ("--suite-file", args.suite_file, "the suite file"),
                             ("--airtime", args.airtime, "the airtime binary (scripts/build.sh)")):
        if not os.path.isfile(path):
            sys.exit(f"held-out-days: {flag} {path}: no such file ({hint})")

    with open(args.philly, encoding="utf-8") as f:
        reader = csv.DictReader(f)
        rows = [(reader.line_num, r) for r in reader]
    missing = {"timestamp", "duration", "num_gpus", "cluster"} - set(reader.fieldnames or [])
    if missing:
        sys.exit(f"held-out-days: {args.philly}: not a Philly trace (no column "
                 f"{', '.join(sorted(missing))})")

    # Scenario -> (its workloads files, the one with the Philly trace, VCs, shipped day).
    # Only a one-day excerpt cut the way write_excerpt cuts it (the header and that day's
    # rows, unchanged) can be swapped for another day and replayed as its own control. The
    # contended scenarios' excerpts (examples/suite/data/philly_excerpt.py) span several
    # days, or start with the jobs still running at 00:00, stamped 00:00:00: they are left
    # out. (Any other excerpt that --philly does not reproduce stops the script below.)
    scenarios = []
    left_out = []
    with tempfile.TemporaryDirectory() as cut_dir:
        for name, cluster, workloads, horizon in replay_entries(args.suite_file):
            for w in workloads:
                t = philly_trace(w)
                if not t:
                    continue
                day = shipped_day(t[0])
                if day is None:
                    left_out.append(f"{name} (several days)")
                    break
                cut = os.path.join(cut_dir, f"{name}.csv")
                write_excerpt(args.philly, t[1], day, cut)
                with open(t[0], encoding="utf-8") as f:
                    shipped = f.read()
                with open(cut, encoding="utf-8") as f:
                    same = f.read() == shipped
                first = (shipped.splitlines()[1:2] or [""])[0]
                if not same and first.startswith(day + " 00:00:00,"):
                    left_out.append(f"{name} (jobs in flight at 00:00)")
                else:
                    scenarios.append((name, cluster, workloads, horizon, w, t[1], day))
                break
    if left_out:
        print(f"left out, their Philly excerpts not being one day's rows: {', '.join(left_out)}")
    groups = sorted({(s[5], s[6]) for s in scenarios}, key=lambda g: (g[1], sorted(g[0])))
    days = {}  # (VCs, shipped day) -> [held-out days]
    for vcs, shipped in groups:
        load = day_loads(rows, vcs, args.philly)
        if shipped not in load:
            sys.exit(f"held-out-days: {args.philly}: no jobs of every virtual cluster of "
                     f"{','.join(sorted(vcs))} on the shipped day {shipped}: not the trace the "
                     f"suite's excerpts were cut from")
        ref = load[shipped]
        days[(vcs, shipped)] = [d for d in sorted(load) if d != shipped and
                                abs(load[d] - ref) <= args.band * ref]
        print(f"virtual clusters {','.join(sorted(vcs))}, shipped day {shipped} "
              f"({ref:.0f} GPU-hours cut at 24 h): held-out days "
              f"{', '.join(days[(vcs, shipped)]) or 'none'}")
    print()

    seeds = parse_seeds(args.seeds)
    runs = collections.defaultdict(lambda: collections.defaultdict(list))  # (scenario, day) ->
    # policy -> its entry per seed
    with (contextlib.nullcontext(args.keep) if args.keep else tempfile.TemporaryDirectory()) as tmp:
        os.makedirs(tmp, exist_ok=True)
        all_days = sorted({d for ds in days.values() for d in ds} | {g[1] for g in groups})
        for day in all_days:
            lines = ["suite:"]
            for name, cluster, workloads, horizon, philly_w, vcs, shipped in scenarios:
                if day != shipped and day not in days[(vcs, shipped)]:
                    continue
                excerpt = os.path.join(tmp, f"philly_{'_'.join(sorted(vcs))}_{day}.csv")
                if not os.path.exists(excerpt):
                    write_excerpt(args.philly, vcs, day, excerpt)
                ws = []
                for i, w in enumerate(workloads):
                    out = os.path.join(tmp, f"{name}_{day}_{i}.yaml")
                    rewrite_workloads(w, excerpt if w == philly_w else None, out)
                    ws.append(out)
                lines += [f"  - name: {name}", f"    cluster: {cluster}",
                          f"    workloads: [{', '.join(ws)}]", f"    horizon: {horizon}"]
            suite = os.path.join(tmp, f"suite_{day}.yaml")
            with open(suite, "w", encoding="utf-8") as f:
                f.write("\n".join(lines) + "\n")
            for seed in seeds:
                js = os.path.join(tmp, f"suite_{day}_seed{seed}.json")
                cmd = [args.airtime, "sim", "--suite", "--suite-file", suite, "--seed", str(seed),
                       "--policy", args.policy, "--json", js]
                r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   text=True)
                if r.returncode != 0:
                    sys.exit(f"day {day}: {' '.join(cmd)} failed:\n{r.stderr}")
                with open(js, encoding="utf-8") as f:
                    for e in json.load(f)["entries"]:
                        runs[(e["scenario"], day)][e["policy"]].append(e)

    # Each day's figures: the mean over the seeds.
    results = {key: {p: {"return_per_gpu_hour": mean(e["return_per_gpu_hour"] for e in es),
                         "slo_attainment": mean(e["slo_attainment"] for e in es),
                         "requests": sum(e.get("requests", 0) for e in es)}
                     for p, es in per_policy.items()}
               for key, per_policy in runs.items()}

    policies = args.policy.split(",")
    width = max(18, *(len(p) + 2 for p in policies))
    print(f"{'seed' if len(seeds) == 1 else 'seeds'} {args.seeds}; the shipped day (control), then the mean over the held-out days: "
          f"return per installed GPU-hour / realtime SLO attainment %")
    print("scenario".ljust(34) + "".join(p.rjust(width) for p in policies))
    logs = collections.defaultdict(list)
    for name, _, _, _, _, vcs, shipped in scenarios:
        held = days[(vcs, shipped)]
        for label, ds in ((f"{name} {shipped}", [shipped]), (f"{name} {len(held)} days", held)):
            if not ds:
                continue
            row = label.ljust(34)
            for p in policies:
                es = [results[(name, d)][p] for d in ds]
                ret = sum(e["return_per_gpu_hour"] for e in es) / len(es)
                slo = sum(e["slo_attainment"] for e in es) / len(es)
                row += (f"{ret:.3f} / {100 * slo:.2f}" if any(e.get("requests", 0) for e in es)
                        else f"{ret:.3f} / -").rjust(width)
            print(row)
        for d in held:
            for p in policies:
                logs[p].append(math.log(max(results[(name, d)][p]["return_per_gpu_hour"], 1e-9)))
        if held and "airtime" in policies and "fifo" in policies:
            at = [results[(name, d)]["airtime"]["return_per_gpu_hour"] for d in held]
            fi = [results[(name, d)]["fifo"]["return_per_gpu_hour"] for d in held]
            others = [p for p in policies if not p.startswith("airtime")]
            best = [max(results[(name, d)][p]["return_per_gpu_hour"] for p in others)
                    for d in held]
            wins = sum(1 for a, b in zip(at, best) if a >= b)
            print(" " * 4 + f"airtime / fifo {sum(at) / sum(fi):.3f}, / best other policy per day "
                  f"{sum(at) / sum(best):.3f}; at least the best other on {wins} of {len(held)} days")
    if logs:
        print("geomean over (scenario, held-out day)".ljust(34) + "".join(
            f"{math.exp(sum(logs[p]) / len(logs[p])):.4f}".rjust(width) for p in policies))


if __name__ == "__main__":
    main()
