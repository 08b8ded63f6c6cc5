#!/usr/bin/env python3
"""Demanded GPU-hours of a scenario inside a window (default 24 h), by kind.

    python3 examples/suite/demand.py CLUSTER.yaml WORKLOADS.yaml [MORE.yaml ...] [--hours 24]

How it counts (an estimate for the README, not part of the simulator):
  finite kinds   GPU share x work at relative speed 1.0 (A100-80GB), cut at the window's end:
                 share x min(work, window - submit_at). Held time, not computed time: a
                 job's `utilization` does not reduce it. On a faster type it takes less.
  realtime       replicas the demand curve asks for, clamp(ceil(rps / capacity_rps),
                 min_replicas, max_replicas), times the share of one replica (gpus, a
                 gpu_fraction, or a MIG slice as its compute slices / 7), over the window.
                 Azure demand traces are rebuilt as src/airtime/traces/azure.cc does.
  philly traces  num_gpus x duration x speed(reference_type), cut at the window's end
                 (`limit`: the earliest N jobs).
Installed GPU-hours are GPUs x window, whatever their type.
"""
import csv, math, os, sys, datetime
import yaml

SPEED = {"H200": 2.0, "H100": 1.8, "A100-80GB": 1.0, "A100-40GB": 0.95, "A100": 0.95,
         "L40S": 0.75, "L4": 0.3, "A10": 0.35, "T4": 0.15, "V100": 0.45, "V100-16GB": 0.42,
         "P100": 0.2, "K80": 0.08}

def dur(v):
    if v is None: return 0.0
    if isinstance(v, (int, float)): return float(v)
    s, total, num = str(v).strip(), 0.0, ""
    units = {"ms": 0.001, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hour": 3600, "d": 86400, "day": 86400}
    i = 0
    while i < len(s):
        j = i
        while j < len(s) and (s[j].isdigit() or s[j] == "."): j += 1
        k = j
        while k < len(s) and s[k].isalpha(): k += 1
        total += float(s[i:j]) * (units[s[j:k]] if s[j:k] else 1)
        i = k
    return total

def diurnal(h):
    h = h % 24
    phase = (h - 4) / 10 if 4 <= h < 14 else 1 - ((h - 14 + 24) % 24) / 14
    return 0.25 + 0.75 * (1 - math.cos(math.pi * phase)) / 2

def ts(s):
    s = s.strip().replace("T", " ")
    if "." in s:
        a, b = s.split(".")
        s = a + "." + b[:6]
        return datetime.datetime.strptime(s, "%Y-%m-%d %H:%M:%S.%f")
    return datetime.datetime.strptime(s, "%Y-%m-%d %H:%M:%S")

def azure_curve(path, opt):
    rows = list(csv.DictReader(open(path)))
    t = sorted(ts(r["TIMESTAMP"]) for r in rows)
    arr = [(x - t[0]).total_seconds() for x in t]
    b = dur(opt.get("bucket", "60s"))
    n = int(arr[-1] // b) + 1
    c = [0] * n
    for a in arr: c[int(a // b)] += 1
    rps = [x / b for x in c]
    full = int(arr[-1] // b) or n
    per_day = int(86400 // b)
    pts = [(j * b, rps[j % full] * diurnal((j * b + b / 2) / 3600)) for j in range(per_day)]
    if opt.get("peak_rps"):
        m = max(p[1] for p in pts)
        pts = [(a, r * float(opt["peak_rps"]) / m) for a, r in pts]
    return pts

def share(w):
    if "mig" in w:
        return int(str(w["mig"]).split("g.")[0]) / 7
    if "gpu_fraction" in w: return float(w["gpu_fraction"])
    return float(w.get("gpus", 1))

def main():
    args, window = [], 24 * 3600.0
    it = iter(sys.argv[1:])
    for a in it:
        if a == "--hours": window = float(next(it)) * 3600
        else: args.append(a)
    cluster = yaml.safe_load(open(args[0]))["cluster"]
    gpus = sum(n.get("gpus", 0) * n.get("count", 1) for n in cluster["nodes"])
    kinds, counts = {}, {}
    def add(kind, gh):
        kinds[kind] = kinds.get(kind, 0) + gh
        counts[kind] = counts.get(kind, 0) + 1
    for path in args[1:]:
        base = os.path.dirname(path)
        for doc in yaml.safe_load_all(open(path)):
            if doc is None: continue
            if isinstance(doc, dict) and "name" in doc: ws, trs = [doc], []
            elif isinstance(doc, list): ws, trs = doc, []
            else: ws, trs = doc.get("workloads") or [], doc.get("traces") or []
            for w in ws:
                kind = w.get("kind", "batch")
                sub = dur(w.get("submit_at", w.get("arrival", 0)))
                if sub >= window: continue
                if kind == "realtime":
                    slo = w["slo"]
                    lo, hi = slo.get("min_replicas", 0), slo.get("max_replicas", 10**9)
                    cap = float(slo["capacity_rps"])
                    if "demand_trace" in w:
                        dt = w["demand_trace"]
                        pts = [(a + sub, r) for a, r in azure_curve(os.path.join(base, dt["file"]), dt)]
                    else:
                        pts = [(dur(p["at"]), float(p["rps"])) for p in w.get("demand", [])]
                    pts.append((window, 0))
                    gh = 0.0
                    for (a, r), (a2, _) in zip(pts, pts[1:]):
                        a2 = min(a2, window)
                        if a2 > a:
                            gh += min(hi, max(lo, math.ceil(r / cap - 1e-9))) * share(w) * (a2 - a) / 3600
                    add(kind, gh)
                else:
                    work = dur(w.get("work", w.get("duration")))
                    add(kind, share(w) * min(work, window - sub) / 3600)
            for tr in trs:
                if tr["format"] != "philly": raise SystemExit("only philly traces are counted")
                ref = SPEED[str(tr.get("reference_type", "V100"))]
                keep = set(str(tr["clusters"]).split(",")) if "clusters" in tr else None
                rows = [r for r in csv.DictReader(open(os.path.join(base, tr["file"])))
                        if keep is None or r["cluster"] in keep]
                rows.sort(key=lambda r: ts(r["timestamp"]))
                if tr.get("limit"): rows = rows[:int(tr["limit"])]
                t0 = ts(rows[0]["timestamp"])
                for r in rows:
                    sub = (ts(r["timestamp"]) - t0).total_seconds()
                    if sub >= window: continue
                    work = float(r["duration"]) * ref
                    add("training", int(r["num_gpus"]) * min(work, window - sub) / 3600)
    total = sum(kinds.values())
    inst = gpus * window / 3600
    for k in sorted(kinds):
        print(f"{k:10s} {counts[k]:5d} workloads {kinds[k]:8.0f} GPU-h")
    print(f"demand {total:.0f} GPU-h, installed {inst:.0f} GPU-h ({gpus} GPUs): {100 * total / inst:.0f}%")

main()
