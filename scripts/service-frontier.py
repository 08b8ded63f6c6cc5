#!/usr/bin/env python3
"""What serving a service's demand within its SLO costs at least, in replica-hours.

Reads the demand curves that `airtime sim --demand-csv FILE` writes (each service's steps
as the replay sees them, with its capacity_rps, cold start and replica limits) and prints,
per service, over [0, horizon):

  requests      the requests that arrive (the first cold start included, as the
                simulator counts attainment)
  perfect       replica-hours if replicas were fluid: requests / capacity
  clairvoyant   whole replicas held minute by minute exactly as the demand needs them, no
                cold start, full foresight: for every request, then for each --slo target
                (the thinnest replica-minutes dropped first). No schedule holds less for
                that attainment.
  reactive      the least replica-hours among simple rules with no forecast that reach the
                target: replicas for `margin` x the highest demand of the last `window`
                minutes, a new replica ready a cold start later (rounded up to the minute),
                replicas given back only after `down` minutes below the target; the grid is
                window 0/5/15/30/60, margin 1.0/1.1/1.2/1.3, spare 0/1, down 5/15/30.

Time runs in one-minute steps (a step of the curve shorter than a minute counts at the rate
in force at the minute's start). The figures are the services' alone: what the GPUs they
free would earn is the simulator's to say.

  build/src/airtime/cli/airtime sim --cluster C --workload W --policy fifo --horizon 168h \\
      -q --no-bound --demand-csv /tmp/demand.csv
  scripts/service-frontier.py /tmp/demand.csv --horizon 168h
"""
import argparse
import collections
import csv
import itertools
import math
import re
import sys


def parse_hours(text):
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(h|d|m)", text)
    if not m:
        sys.exit(f"service-frontier.py: --horizon: expected e.g. 24h, 7d or 90m, got '{text}'")
    v = float(m.group(1))
    return v * {"h": 1, "d": 24, "m": 1 / 60}[m.group(2)]


def load(path):
    services = collections.OrderedDict()
    with open(path, encoding="utf-8") as f:
        for row in csv.DictReader(f):
            s = services.setdefault(row["service"], {
                "cap": float(row["capacity_rps"]),
                "cold": float(row["cold_start_s"]),
                "min": int(row["min_replicas"]),
                "max": int(row["max_replicas"]),
                "steps": []})
            s["steps"].append((float(row["from_s"]), float(row["rps"])))
    return services


def per_minute(steps, minutes):
    d = [0.0] * minutes
    for i, (t, rps) in enumerate(steps):
        end = steps[i + 1][0] if i + 1 < len(steps) else minutes * 60
        for m in range(int(math.ceil(t / 60)), min(minutes, int(math.ceil(end / 60)))):
            d[m] = rps
    return d


def clairvoyant(d, cap, lo, hi, slos, total):
    need = [min(hi, max(lo, math.ceil(x / cap - 1e-9))) for x in d]
    # Replica-minutes above the minimum, by the requests each serves: drop the thinnest.
    slices = sorted(min(cap, x - (k - 1) * cap) * 60
                    for x, n in zip(d, need) for k in range(max(1, lo + 1), n + 1))
    full = sum(need)
    served_all = sum(min(x, n * cap) * 60 for x, n in zip(d, need))
    out = {}
    for slo in slos:
        budget = served_all - slo * total
        dropped = 0
        for v in slices:
            if budget - v < 0:
                break
            budget -= v
            dropped += 1
        out[slo] = (full - dropped) / 60 if served_all >= slo * total else None
    return full / 60, served_all / total if total else 1, out


def reactive(d, cap, cold_min, lo, hi, window, margin, spare, down):
    ready_at = []  # minute each held replica is ready
    served = 0.0
    held = 0
    above_since = 0
    for m, x in enumerate(d):
        peak = max(d[max(0, m - window):m + 1])
        target = min(hi, max(lo, math.ceil(peak * margin / cap - 1e-9) + spare))
        if len(ready_at) < target:
            ready_at += [m + cold_min] * (target - len(ready_at))
            above_since = m
        elif len(ready_at) > target and m - above_since >= down:
            ready_at.sort()
            del ready_at[target:]
        elif len(ready_at) == target:
            above_since = m
        ready = sum(1 for r in ready_at if r <= m)
        served += min(x, ready * cap) * 60
        held += len(ready_at)
    return served, held / 60


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="the file `airtime sim --demand-csv` wrote")
    ap.add_argument("--horizon", required=True, help="e.g. 24h or 168h")
    ap.add_argument("--slo", default="0.999,0.99,0.95",
                    help="attainment targets, comma-separated (default 0.999,0.99,0.95)")
    a = ap.parse_args()
    minutes = int(round(parse_hours(a.horizon) * 60))
    slos = [float(x) for x in a.slo.split(",")]
    for name, s in load(a.csv).items():
        d = per_minute(s["steps"], minutes)
        cap = s["cap"]
        hi = s["max"] if s["max"] >= 0 else 1 << 20
        total = sum(x * 60 for x in d)
        if total <= 0 or cap <= 0:
            print(f"{name}: no demand")
            continue
        print(f"{name}: {total:,.0f} requests, {cap:g} req/s per replica, cold start "
              f"{s['cold']:g} s, replicas {s['min']}-{s['max'] if s['max'] >= 0 else 'any'}")
        print(f"  perfect (fluid replicas)         {total / cap / 3600:8.1f} replica-h")
        full, att, by_slo = clairvoyant(d, cap, s["min"], hi, slos, total)
        print(f"  clairvoyant, every request       {full:8.1f} replica-h  ({100 * att:.2f}%)")
        cold_min = int(math.ceil(s["cold"] / 60))
        rules = []
        for window, margin, spare, down in itertools.product(
                (0, 5, 15, 30, 60), (1.0, 1.1, 1.2, 1.3), (0, 1), (5, 15, 30)):
            served, hours = reactive(d, cap, cold_min, s["min"], hi, window, margin, spare, down)
            rules.append((served / total, hours, window, margin, spare, down))
        for slo in slos:
            c = by_slo[slo]
            cv = f"{c:8.1f} replica-h" if c is not None else "     unreachable"
            ok = [r for r in rules if r[0] >= slo]
            best = min(ok, key=lambda r: r[1]) if ok else None
            rv = (f"reactive {best[1]:7.1f} replica-h ({100 * best[0]:.2f}%: window {best[2]} "
                  f"min, margin {best[3]:.1f}, spare {best[4]}, down after {best[5]} min)"
                  if best else "reactive: no rule of the grid reaches it")
            print(f"  at {100 * slo:g}%: clairvoyant {cv};  {rv}")


if __name__ == "__main__":
    main()
