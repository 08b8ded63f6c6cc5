#!/usr/bin/env python3
"""Issue 20's targets on the contended scenarios, over seeds.

For contended-week (168h), launch-burst (48h) and inverted-priorities (24h) this runs
`airtime sim --cluster ... --workload ... --policy P --horizon H --seed N --json` for each
seed (the LP bound with seed 1 only: it does not depend on the seed) and prints, per
scenario and policy: the geometric mean return per installed GPU-hour over the seeds, as a
multiple of the best peer's (the best policy whose name does not start with `airtime`) and
as a share of the bound (and of the bound on the schedules that meet the 99.9% SLO), the
lowest realtime SLO attainment over the seeds, and the mean share of installed GPU-hours
that was idle_held or reserved_headroom.

  scripts/contended-targets.py --seeds 1-5
  scripts/contended-targets.py --seeds 1-3 --policy kai,airtime,airtime:headroom=spare
"""
import argparse
import concurrent.futures
import json
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from seed_range import parse_seeds  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIOS = [("contended-week", "168h"), ("launch-burst", "48h"), ("inverted-priorities", "24h")]
POLICIES = "fifo,static,bestfit,fgd,slurm,tiresias,kai,lyra,airtime,airtime:preemption=off"


def run(binary, policy, scenario, horizon, seed, out_dir):
    d = os.path.join(ROOT, "examples", "suite", scenario)
    out = os.path.join(out_dir, f"{scenario}-{seed}.json")
    cmd = [binary, "sim", "--cluster", os.path.join(d, "cluster.yaml"), "--workload",
           os.path.join(d, "workloads.yaml"), "--policy", policy, "--horizon", horizon,
           "--seed", str(seed), "--json", out, "-q", "--threads", "1"]
    if seed != 1:
        cmd.append("--no-bound")
    subprocess.run(cmd, check=True)
    with open(out, encoding="utf-8") as f:
        return scenario, seed, json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1-5", help="seeds, e.g. 1-5 or 1,3,7 (default 1-5)")
    ap.add_argument("--policy", default=POLICIES, help="policies, comma-separated")
    ap.add_argument("--airtime", default=os.path.join(ROOT, "build/src/airtime/cli/airtime"),
                    help="the airtime binary")
    ap.add_argument("--jobs", type=int, default=2, help="replays run at once (default 2)")
    a = ap.parse_args()
    seeds = parse_seeds(a.seeds)
    figures = {}  # (scenario, policy) -> [(return, slo, idle+reserved share)]
    bound = {}
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        jobs = [ex.submit(run, a.airtime, a.policy, s, h, n, tmp)
                for s, h in SCENARIOS for n in seeds]
        for job in jobs:
            scenario, _, r = job.result()
            if r.get("bound") and r["bound"].get("per_gpu_hour"):
                at_slo = r["bound"].get("at_slo") or {}
                bound[scenario] = (r["bound"]["per_gpu_hour"], at_slo.get("per_gpu_hour"))
            for p in r["policies"]:
                led = p["ledger"]
                held = (led["idle_held"] + led["reserved_headroom"]) / led["installed_gpu_hours"]
                figures.setdefault((scenario, p["policy"]), []).append(
                    (p["return_per_gpu_hour"], p["slo_attainment"], held))
    policies = list(dict.fromkeys(k[1] for k in figures))
    for scenario, horizon in SCENARIOS:
        b, bs = bound.get(scenario, (None, None))
        head = f"{scenario} ({horizon}"
        if b:
            head += f"; bound {b:.3f}"
        if bs:
            head += f", at 99.9% SLO {bs:.3f}"
        print(head + ")")
        rows = []
        for p in policies:
            v = figures[(scenario, p)]
            g = math.exp(sum(math.log(max(x[0], 1e-12)) for x in v) / len(v))
            rows.append((p, g, min(x[1] for x in v), sum(x[2] for x in v) / len(v)))
        peers = [r for r in rows if not r[0].startswith("airtime")]
        best = max(peers, key=lambda r: r[1]) if peers else None
        for p, g, slo, held in rows:
            vs = f"x{g / best[1]:.3f} of {best[0]}" if best else ""
            of_bound = f"{100 * g / b:.1f}% of bound" if b else ""
            if bs:
                of_bound += f" ({100 * g / bs:.1f}% at SLO)"
            print(f"  {p:28s} {g:.3f}  {vs:22s} {of_bound:32s} min SLO {100 * slo:.2f}%  "
                  f"idle_held+reserved {100 * held:.1f}%")


if __name__ == "__main__":
    main()
