#!/usr/bin/env python3
"""Runs the suite's replays over several seeds and prints each policy's mean figures.

The suite's table (airtime sim --suite) is one seed; the replays draw request arrivals and
failures from the seed, so a comparison between policies or parameters is the mean over
seeds. This runs `airtime sim --suite --suite-file F --seed N --json` for each seed (the
suite file's FGD protocol entries are left out: they average their own seeds) and prints,
per scenario and policy, the mean return per installed GPU-hour, realtime SLO attainment
and batch deadline hit rate; then the geometric mean return over the scenarios and the
mean SLO attainment over the scenarios that have services; then the mean allocation rate.

  scripts/suite-seeds.py --seeds 1-5 --policy fifo,lyra,airtime,airtime:preemption=off
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile

from seed_range import parse_seeds

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def replays_only(suite_file):
    """The suite file without protocol entries, paths made absolute, as a temporary file."""
    base = os.path.dirname(os.path.abspath(suite_file))
    with open(suite_file, encoding="utf-8") as f:
        lines = f.read().splitlines()
    out = []      # the lines kept
    entry = None  # the lines of the entry being read (None before the first)
    keep = True   # whether that entry is a replay

    def flush():
        if entry and keep:
            out.extend(entry)

    for line in lines:
        if re.match(r"\s*- name:", line):
            flush()
            entry, keep = [], True
        if entry is None:
            out.append(line)
            continue
        if re.match(r"\s*protocol:", line):
            keep = False
        line = re.sub(r"(cluster: |workloads: \[|, )(?=[^\s\]])",
                      lambda m: m.group(1) + base + "/", line)
        entry.append(line)
    flush()
    tmp = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
    tmp.write("\n".join(out) + "\n")
    tmp.close()
    return tmp.name


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="1-5", help="seeds, e.g. 1-5 or 1,3,7 (default 1-5)")
    ap.add_argument("--policy", default="fifo,lyra,airtime,airtime:preemption=off")
    ap.add_argument("--suite-file", default=os.path.join(ROOT, "examples/suite/suite.yaml"))
    ap.add_argument("--airtime", default=os.path.join(ROOT, "build/src/airtime/cli/airtime"))
    args = ap.parse_args()

    suite = replays_only(args.suite_file)
    sums = {}  # (scenario, policy) -> [return, SLO, deadlines, runs, requests, allocation]
    order = []
    try:
        for seed in parse_seeds(args.seeds):
            with tempfile.NamedTemporaryFile(suffix=".json") as js:
                cmd = [args.airtime, "sim", "--suite", "--suite-file", suite, "--seed",
                       str(seed), "--policy", args.policy, "--json", js.name]
                r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   text=True)
                if r.returncode != 0:
                    sys.exit(f"seed {seed}: {' '.join(cmd)} failed:\n{r.stderr}")
                for e in json.load(open(js.name))["entries"]:
                    key = (e["scenario"], e["policy"])
                    if key not in sums:
                        sums[key] = [0.0, 0.0, 0.0, 0, 0.0, 0.0]
                        order.append(key)
                    s = sums[key]
                    s[0] += e["return_per_gpu_hour"]
                    s[1] += e["slo_attainment"]
                    s[2] += e["deadline_hit_rate"]
                    s[3] += 1
                    s[4] += e.get("requests", 0)
                    s[5] += e["allocation_rate"]
    finally:
        os.unlink(suite)

    policies = list(dict.fromkeys(p for _, p in order))
    scenarios = list(dict.fromkeys(s for s, _ in order))
    width = max(24, *(len(p) + 2 for p in policies))
    print(f"mean of seeds {args.seeds}: return per installed GPU-hour / realtime SLO "
          f"attainment % / batch deadlines met %")
    print("scenario".ljust(20) + "".join(p.rjust(width) for p in policies))
    for sc in scenarios:
        row = sc.ljust(20)
        for p in policies:
            s = sums[(sc, p)]
            n = s[3]
            row += f"{s[0] / n:.3f} / {100 * s[1] / n:.2f} / {100 * s[2] / n:.1f}".rjust(width)
        print(row)
    geo = "geomean return".ljust(20)
    slo = "mean SLO %".ljust(20)  # over the scenarios that have services
    for p in policies:
        rets = [sums[(sc, p)][0] / sums[(sc, p)][3] for sc in scenarios]
        geo += f"{math.exp(sum(math.log(max(r, 1e-9)) for r in rets) / len(rets)):.4f}".rjust(width)
        slos = [sums[(sc, p)][1] / sums[(sc, p)][3] for sc in scenarios if sums[(sc, p)][4] > 0]
        slo += (f"{100 * sum(slos) / len(slos):.3f}" if slos else "-").rjust(width)
    print(geo)
    print(slo)
    print()
    print(f"mean of seeds {args.seeds}: allocation rate %")
    for sc in scenarios:
        print(sc.ljust(20) + "".join(
            f"{100 * sums[(sc, p)][5] / sums[(sc, p)][3]:.1f}".rjust(width) for p in policies))


if __name__ == "__main__":
    main()
