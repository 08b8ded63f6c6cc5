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
                 Azure demand traces are rebuilt as src/airtime/traces/azure.cc does
                 (`days` and `weekend_factor` included). A service with model variants
                 is counted as fixed-generalist runs it: its classes' curves summed on
                 the best-quality variant, at that variant's lowest throughput.
  philly traces  num_gpus x duration x speed(reference_type), cut at the window's end
                 (`limit`: the earliest N jobs).
Installed GPU-hours are GPUs x window, whatever their type. A last line counts in A100
time on both sides: installed capacity as GPUs x catalogue speed x window, less what the
services' replicas hold (their GPU-hours x the speed of their one allowed type, or 1.0), and
the finite kinds' demand as a share of what the services leave.

The module can be imported (backlog.py does): read_workloads() yields every workload.
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
    days = int(opt.get("days", 1))
    wf = float(opt.get("weekend_factor", 1))
    pts = [((d * per_day + j) * b,
            rps[(d * per_day + j) % full] * diurnal((j * b + b / 2) / 3600) * (wf if d % 7 >= 5 else 1))
           for d in range(days) for j in range(per_day)]
    if opt.get("peak_rps"):
        m = max(p[1] for p in pts)
        pts = [(a, r * float(opt["peak_rps"]) / m) for a, r in pts]
    return pts

def share(w):
    if "mig" in w:
        return int(str(w["mig"]).split("g.")[0]) / 7
    if "gpu_fraction" in w: return float(w["gpu_fraction"])
    return float(w.get("gpus", 1))

def types_of(w):
    t = w.get("gpu_type")
    return [] if t is None else [t] if isinstance(t, str) else list(t)

def curve(w, base, sub):
    """The demand curve of a service or a class, (s, rps)."""
    if "demand_trace" in w:
        dt = w["demand_trace"]
        return [(a + sub, r) for a, r in azure_curve(os.path.join(base, dt["file"]), dt)]
    return [(dur(p["at"]), float(p["rps"])) for p in w.get("demand", [])]

def rate_at(pts, t):
    r = 0.0
    for a, x in pts:
        if a > t: break
        r = x
    return r

def best_variant_demand(w, base, sub):
    """A service with model variants counted as fixed-generalist runs it: every class on the
    best-quality variant that serves it. That variant (one, else the service is refused
    here) gives the replica's GPUs, its one throughput type and its throughput (the lowest
    over its types, the planning throughput); the classes' curves are summed."""
    classes = w.get("classes") or [dict(w, name="all")]
    best = set()
    for c in classes:
        serving = [v for v in w["variants"] if c["name"] in v.get("classes", [c["name"]])]
        best.add(max(serving, key=lambda v: float(v.get("quality", 1)))["name"])
    if len(best) != 1:
        raise SystemExit(f"{w['name']}: classes served best by different variants ({sorted(best)})")
    v = next(v for v in w["variants"] if v["name"] in best)
    curves = [curve(c, base, sub) for c in classes]
    times = sorted({a for pts in curves for a, _ in pts})
    pts = [(t, sum(rate_at(p, t) for p in curves)) for t in times]
    slo = dict(w["slo"], capacity_rps=min(float(x) for x in v["throughput"].values()))
    if "max_replicas" in v: slo["max_replicas"] = v["max_replicas"]
    return {"points": pts, "slo_best": slo, "share": share(v), "types": list(v["throughput"])}

def read_workloads(paths, window):
    """Every workload of the files, as dicts: name, kind, submit (s), and for realtime
    `share`, `types`, `slo` and `points` (the demand curve, (s, rps)); for the finite kinds
    `share`, `types`, `work` (s at speed 1.0). Philly trace rows are named as the importer
    names them (philly-<data row>)."""
    for path in paths:
        base = os.path.dirname(path)
        for doc in yaml.safe_load_all(open(path)):
            if doc is None: continue
            if isinstance(doc, dict) and "name" in doc: ws, trs = [doc], []
            elif isinstance(doc, list): ws, trs = doc, []
            else: ws, trs = doc.get("workloads") or [], doc.get("traces") or []
            for w in ws:
                kind = w.get("kind", "batch")
                sub = dur(w.get("submit_at", w.get("arrival", 0)))
                out = {"name": w["name"], "kind": kind, "submit": sub, "share": share(w),
                       "types": types_of(w)}
                if kind == "realtime" and "variants" in w:
                    out.update(slo=w["slo"], **best_variant_demand(w, base, sub))
                elif kind == "realtime":
                    out.update(slo=w["slo"], points=curve(w, base, sub))
                else:
                    out["work"] = dur(w.get("work", w.get("duration")))
                yield out
            for tr in trs:
                if tr["format"] != "philly": raise SystemExit("only philly traces are counted")
                ref = SPEED[str(tr.get("reference_type", "V100"))]
                keep = set(str(tr["clusters"]).split(",")) if "clusters" in tr else None
                every = list(csv.DictReader(open(os.path.join(base, tr["file"]))))
                for i, r in enumerate(every): r["_row"] = i + 1
                rows = [r for r in every if keep is None or r["cluster"] in keep]
                rows.sort(key=lambda r: (ts(r["timestamp"]), r["_row"]))
                if tr.get("limit"): rows = rows[:int(tr["limit"])]
                t0 = ts(rows[0]["timestamp"]) if tr.get("rebase_to_first_job") else \
                    min(ts(r["timestamp"]) for r in every)
                for r in rows:
                    yield {"name": f"philly-{r['_row']}", "kind": "training",
                           "submit": (ts(r["timestamp"]) - t0).total_seconds(),
                           "share": float(r["num_gpus"]), "types": [],
                           "work": float(r["duration"]) * ref}

def main():
    args, window = [], 24 * 3600.0
    it = iter(sys.argv[1:])
    for a in it:
        if a == "--hours": window = float(next(it)) * 3600
        else: args.append(a)
    cluster = yaml.safe_load(open(args[0]))["cluster"]
    gpus = sum(n.get("gpus", 0) * n.get("count", 1) for n in cluster["nodes"])
    a100 = sum(n.get("gpus", 0) * n.get("count", 1) * SPEED[n["gpu"]] for n in cluster["nodes"]
               if n.get("gpus", 0))
    kinds, counts = {}, {}
    service_a100 = 0.0
    def add(kind, gh):
        kinds[kind] = kinds.get(kind, 0) + gh
        counts[kind] = counts.get(kind, 0) + 1
    for w in read_workloads(args[1:], window):
        sub = w["submit"]
        if sub >= window: continue
        if w["kind"] == "realtime":
            slo = w.get("slo_best", w["slo"])
            lo, hi = slo.get("min_replicas", 0), slo.get("max_replicas", 10**9)
            cap = float(slo["capacity_rps"])
            pts = w["points"] + [(window, 0)]
            gh = 0.0
            for (a, r), (a2, _) in zip(pts, pts[1:]):
                a2 = min(a2, window)
                if a2 > a:
                    gh += min(hi, max(lo, math.ceil(r / cap - 1e-9))) * w["share"] * (a2 - a) / 3600
            add("realtime", gh)
            service_a100 += gh * (SPEED[w["types"][0]] if len(w["types"]) == 1 else 1.0)
        else:
            add(w["kind"], w["share"] * min(w["work"], window - sub) / 3600)
    total = sum(kinds.values())
    inst = gpus * window / 3600
    for k in sorted(kinds):
        print(f"{k:10s} {counts[k]:5d} workloads {kinds[k]:8.0f} GPU-h")
    print(f"demand {total:.0f} GPU-h, installed {inst:.0f} GPU-h ({gpus} GPUs): {100 * total / inst:.0f}%")
    finite = total - kinds.get("realtime", 0)
    cap = a100 * window / 3600
    print(f"A100 time: installed {cap:.0f} ({a100:.1f} A100-equivalents), services hold {service_a100:.0f}, "
          f"leaving {cap - service_a100:.0f}; the finite kinds ask {finite:.0f} = "
          f"{100 * finite / (cap - service_a100):.0f}% of that")

if __name__ == "__main__":
    main()
