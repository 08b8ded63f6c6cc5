#!/usr/bin/env python3
"""Writes a service's demand curve out as YAML: an Azure LLM trace tiled over days under the
diurnal curve, as `demand_trace: {format: azure, diurnal_day: true, ...}` builds it
(src/airtime/traces/azure.cc: the hour's full buckets tiled end to end, each bucket times
D(hour of its midpoint), days 5 and 6 of each week times the weekend factor, then scaled so
that the largest rate is --peak), times a factor over time given as knots, linear between
them and constant outside (evaluated at each bucket's midpoint). The factor is how a
scenario writes demand that its own history does not predict, e.g. a launch-day spike.

    python3 examples/suite/curves.py --trace examples/mixed-day/data/AzureLLMInferenceTrace_conv.csv \\
        --bucket 5m --days 2 --peak 14 --factor "26h:1, 26h10m:5, 28h:5, 30h:1.5" [--weekend-factor F]

Prints `demand: [...]`, a flow sequence of {at, rps} points (rps to 2 decimals), to paste
under a realtime workload in place of its demand_trace.
"""
import argparse, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from demand import azure_curve, dur  # noqa: E402


def knots(text):
    out = []
    for part in text.split(","):
        if part.strip():
            t, f = part.split(":")
            out.append((dur(t.strip()), float(f)))
    return sorted(out)


def factor(ks, t):
    if not ks or t <= ks[0][0]:
        return ks[0][1] if ks else 1.0
    for (a, fa), (b, fb) in zip(ks, ks[1:]):
        if t <= b:
            return fa + (fb - fa) * (t - a) / (b - a) if b > a else fb
    return ks[-1][1]


def at(s):
    h, m = int(s // 3600), int(s % 3600 // 60)
    return f"{h}h{m}m" if m else f"{h}h"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace", required=True)
    ap.add_argument("--bucket", default="60s")
    ap.add_argument("--days", type=int, default=1)
    ap.add_argument("--weekend-factor", type=float, default=1.0)
    ap.add_argument("--peak", type=float, required=True, help="largest rate before the factor")
    ap.add_argument("--factor", default="", help="knots TIME:FACTOR, comma-separated")
    ap.add_argument("--per-line", type=int, default=4)
    ap.add_argument("--indent", type=int, default=4)
    a = ap.parse_args()
    pts = azure_curve(a.trace, {"bucket": a.bucket, "days": a.days, "weekend_factor": a.weekend_factor,
                                "peak_rps": a.peak})
    b = dur(a.bucket)
    ks = knots(a.factor)
    items = [f"{{at: {at(t)}, rps: {r * factor(ks, t + b / 2):.2f}}}" for t, r in pts]
    items.append(f"{{at: {at(a.days * 86400)}, rps: 0}}")
    pad = " " * a.indent
    lines = [pad + "demand: ["]
    for i in range(0, len(items), a.per_line):
        lines.append(pad + "  " + ", ".join(items[i:i + a.per_line]) + ("," if i + a.per_line < len(items) else "]"))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
