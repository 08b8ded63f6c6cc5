#!/usr/bin/env python3
"""airtime over Slurm against Slurm's own scheduler, on the lab of scripts/slurm-lab.sh.

burst: the same burst of short GPU jobs (default 1,000; 1, 2, 4 or 8 GPUs; 1-2 s each),
submitted at the same pace, once to Slurm alone (sbatch, one call per job; Slurm's
sched/backfill with priority/multifactor and the lab's SchedulerParameters) and once to
`airtime server --backend slurm` (POST /v1/workloads, one call per job). For each run it
prints submit-to-start p50/p99 (submit: the client's clock just before its sbatch or POST;
start: the clock the job's own script reads when it starts on the node, so both runs are
measured the same way and below Slurm's 1-second resolution), the same from Slurm's own
records (jobcomp, whole seconds), the time from the first submission until every job has
started ("all placed"), and, for airtime, its overhead from the daemon's metrics: from the
engine's decision until Slurm accepted the start (airtime_backend_action_seconds) and from
the decision until the job's script ran. The table ends with the issue's targets.

  scripts/slurm-bench.py burst                      # both runs, twice each
  scripts/slurm-bench.py burst --runs slurm --repeat 1 --jobs 200
  scripts/slurm-bench.py burst --json out.json      # every figure, machine-readable
  scripts/slurm-bench.py burst --runs airtime --server-arg=--slurm-submitters=1

The lab is started with AIRTIME_SLURM_DIR (default /tmp/airtime-bench-lab),
AIRTIME_SLURM_PORT (default 8817) and AIRTIME_SLURM_NODES (default 16) unless it already
runs with them; --stop-lab stops it at the end. docs/slurm.md ("Side by side with Slurm")
describes the bench and the figures measured.
"""
import argparse
import http.client
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPU_MIX = [(1, 0.55), (2, 0.25), (4, 0.15), (8, 0.05)]  # GPUs per job, share of the jobs
# The figures for Slurm on this kind of lab, and the targets (issue 21, "Targets").
SLURM_QUOTED = "p50 0.76 s, p99 2.05 s, all done 21.3 s (issue 21, batch_sched_delay=0)"
TARGET_ACCEPT_P99_S = 0.050
TARGET_RUNNING_S = (0.08, 0.7)


def die(msg):
    print(f"slurm-bench: {msg}", file=sys.stderr)
    sys.exit(1)


def quantile(values, q):
    """The q-quantile (0..1) by the nearest rank; None for no values."""
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, max(0, int(round(q * len(v) + 0.5)) - 1))]


# ------------------------------------------------------------------ the lab

def lab_env(a):
    env = dict(os.environ, AIRTIME_SLURM_DIR=a.lab, AIRTIME_SLURM_PORT=str(a.port),
               AIRTIME_SLURM_NODES=str(a.nodes))
    return env


def start_lab(a):
    r = subprocess.run([os.path.join(ROOT, "scripts/slurm-lab.sh"), "start"], env=lab_env(a),
                       capture_output=True, text=True)
    if r.returncode != 0:
        die(f"the lab did not start:\n{r.stdout}{r.stderr}")
    env = dict(os.environ)
    with open(os.path.join(a.lab, "env.sh"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"export (\w+)=(.*)$", line.strip())
            if m:
                env[m.group(1)] = m.group(2)
    return env


def stop_lab(a, purge=True):
    subprocess.run([os.path.join(ROOT, "scripts/slurm-lab.sh"), "stop"] + (["--purge"] if purge
                                                                            else []),
                   env=lab_env(a), check=False, capture_output=True)


def fresh_lab(a):
    """The lab stopped and started again (slurmctld -c: no jobs), so that no run pays for
    the jobs of the one before (a job stays in Slurm's job list for MinJobAge, 300 s, and
    every poll of airtime's reads that list)."""
    stop_lab(a, purge=False)
    return start_lab(a)


def scheduler_parameters(env):
    out = subprocess.run(["scontrol", "show", "config"], env=env, capture_output=True,
                         text=True, check=True).stdout
    keep = {}
    for line in out.splitlines():
        k, _, v = line.partition("=")
        k = k.strip()
        if k in ("SchedulerType", "SchedulerParameters", "PriorityType", "SelectType"):
            keep[k] = v.strip()
    return keep


def wait_slurm_idle(env, timeout_s=120):
    """Until no job is pending, running or completing (the previous run's are gone)."""
    end = time.time() + timeout_s
    while time.time() < end:
        out = subprocess.run(["squeue", "-h", "-o", "%i"], env=env, capture_output=True,
                             text=True).stdout
        if not out.strip():
            return
        time.sleep(0.5)
    die("the lab still has jobs after 120 s; `scripts/slurm-lab.sh status` lists them")


def jobcomp(lab, names):
    """Slurm's own records of the jobs named in `names` (airtime's job of workload W,
    "airtime.W.rN", counts as W): name -> (submit, start, end), whole seconds
    (jobcomp/filetxt), the job's last run."""
    out = {}
    path = os.path.join(lab, "log", "jobcomp.txt")
    if not os.path.exists(path):
        return out

    def ts(s):
        return time.mktime(time.strptime(s, "%Y-%m-%dT%H:%M:%S"))

    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            fields = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
            name = re.sub(r"^airtime\.(.*)\.r[0-9]+$", r"\1", fields.get("Name", ""))
            if name in names and fields.get("StartTime", "Unknown") != "Unknown":
                out[name] = (ts(fields["SubmitTime"]), ts(fields["StartTime"]),
                             ts(fields["EndTime"]))
    return out


# ------------------------------------------------------------------ the burst

def burst_jobs(n, seed):
    rng = random.Random(seed)
    sizes = [g for g, _ in GPU_MIX]
    weights = [w for _, w in GPU_MIX]
    return [(rng.choices(sizes, weights)[0], round(rng.uniform(1.0, 2.0), 1)) for _ in range(n)]


def job_command(marks, name, seconds):
    """The job's script: it writes when it started (the node's clock, to the nanosecond), where
    and on which GPUs, sleeps, and writes when it ended."""
    return (f'echo "$(date +%s.%N) $SLURMD_NODENAME $CUDA_VISIBLE_DEVICES" > {marks}/{name}.start;'
            f" sleep {seconds}; date +%s.%N > {marks}/{name}.end")


def read_marks(marks, names):
    """name -> (start, node, gpus, end) for each job whose script has written both marks."""
    out = {}
    for name in names:
        try:
            with open(os.path.join(marks, name + ".start"), encoding="utf-8") as f:
                parts = f.read().split()
            with open(os.path.join(marks, name + ".end"), encoding="utf-8") as f:
                end = float(f.read().split()[0])
        except (OSError, IndexError, ValueError):
            continue
        if len(parts) >= 2:
            gpus = parts[2].split(",") if len(parts) > 2 else []
            out[name] = (float(parts[0]), parts[1], gpus, end)
    return out


def wait_all_ended(marks, names, timeout_s):
    end = time.time() + timeout_s
    while time.time() < end:
        done = sum(os.path.exists(os.path.join(marks, n + ".end")) for n in names)
        if done == len(names):
            return True
        time.sleep(0.5)
    return False


def gpu_overlaps(marks_by_name):
    """Pairs of jobs that ran on one GPU at the same time (there must be none)."""
    by_gpu = {}
    for name, (start, node, gpus, end) in marks_by_name.items():
        for g in gpus:
            by_gpu.setdefault((node, g), []).append((start, end, name))
    bad = 0
    for spans in by_gpu.values():
        spans.sort()
        for (s1, e1, _), (s2, _, _) in zip(spans, spans[1:]):
            if s2 < e1 - 0.05:  # the end mark is written before the job's last exit
                bad += 1
    return bad


def paced(jobs, rate, submit):
    """Calls submit(i, gpus, seconds) for each job, the i-th at i/rate s after the first (at
    once when behind, or when rate is 0); returns the submit time of each."""
    t0 = time.time()
    times = []
    for i, (gpus, seconds) in enumerate(jobs):
        if rate > 0:
            delay = t0 + i / rate - time.time()
            if delay > 0:
                time.sleep(delay)
        times.append(time.time())
        submit(i, gpus, seconds)
    return times


def summarize(label, names, submitted, marks, records, sizes, extra=None):
    delays = [marks[n][0] - submitted[n] for n in names if n in marks]
    by_size = {}
    for n in names:
        if n in marks:
            by_size.setdefault(sizes[n], []).append(marks[n][0] - submitted[n])
    rec = [records[n][1] - records[n][0] for n in names if n in records]
    first = min(submitted.values())
    r = {
        "run": label,
        "jobs": len(names),
        "started": len(delays),
        "submit_span_s": max(submitted.values()) - first,
        "p50_s": quantile(delays, 0.5),
        "p99_s": quantile(delays, 0.99),
        "max_s": max(delays) if delays else None,
        "all_placed_s": max(marks[n][0] for n in marks) - first if marks else None,
        "all_done_s": max(marks[n][3] for n in marks) - first if marks else None,
        "slurm_records": len(rec),
        "slurm_p50_s": quantile(rec, 0.5),
        "slurm_p99_s": quantile(rec, 0.99),
        "gpu_overlaps": gpu_overlaps(marks),
        "p99_by_gpus_s": {g: quantile(v, 0.99) for g, v in sorted(by_size.items())},
    }
    r.update(extra or {})
    return r


def prepare_run(a, env, jobs, tag):
    """The run's directory of start marks and its job names, once Slurm is idle."""
    marks = os.path.join(a.lab, "out", "bench", tag)
    os.makedirs(marks, exist_ok=True)
    wait_slurm_idle(env)
    return marks, [f"{tag}-{i}" for i in range(len(jobs))]


def run_slurm(a, env, jobs, tag):
    marks, names = prepare_run(a, env, jobs, tag)

    def submit(i, gpus, seconds):
        r = subprocess.run(
            ["sbatch", "--parsable", "-J", names[i], f"--gres=gpu:{gpus}", "-o", "/dev/null",
             "-D", marks, "--wrap", job_command(marks, names[i], seconds)],
            env=env, capture_output=True, text=True)
        if r.returncode != 0:
            die(f"sbatch of {names[i]} failed: {r.stderr.strip()}")

    times = paced(jobs, a.rate, submit)
    if not wait_all_ended(marks, names, a.timeout):
        print(f"slurm-bench: {tag}: not every job ended within {a.timeout} s", file=sys.stderr)
    submitted = dict(zip(names, times))
    time.sleep(1.5)  # jobcomp is written as each job completes
    return summarize("slurm", names, submitted, read_marks(marks, names),
                     jobcomp(a.lab, set(names)), dict(zip(names, (g for g, _ in jobs))))


class Airtime:
    """An `airtime server --backend slurm` on the lab, for one run."""

    def __init__(self, a, env, data):
        self.data = data
        shutil.rmtree(data, ignore_errors=True)
        os.makedirs(data)
        self.log = open(os.path.join(data, "..", os.path.basename(data) + ".log"), "w",
                        encoding="utf-8")
        cmd = [a.airtime, "server", "--data", data, "--backend", "slurm", "--listen",
               "127.0.0.1:0", "--slurm-poll-ms", str(a.poll_ms), "--policy", a.policy]
        cmd += a.server_arg
        self.proc = subprocess.Popen(cmd, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        end = time.time() + 30
        addr = os.path.join(data, "address")
        while not os.path.exists(addr) or not open(addr, encoding="utf-8").read().strip():
            if self.proc.poll() is not None or time.time() > end:
                die(f"airtime server did not start; see {self.log.name}")
            time.sleep(0.05)
        host, _, port = open(addr, encoding="utf-8").read().strip().rpartition(":")
        self.host, self.port = host, int(port)
        with open(os.path.join(data, "tokens"), encoding="utf-8") as f:
            self.token = next(line.split()[1] for line in f if line.startswith("admin "))
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)

    def call(self, method, path, body=None):
        headers = {"Authorization": f"Bearer {self.token}"}
        if body is not None:
            headers["Content-Type"] = "application/json"
            body = json.dumps(body)
        for attempt in range(2):
            try:
                self.conn.request(method, path, body=body, headers=headers)
                resp = self.conn.getresponse()
                text = resp.read().decode()
                break
            except (http.client.HTTPException, OSError):
                if attempt:
                    raise
                self.conn.close()
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        if resp.status >= 300:
            die(f"{method} {path}: {resp.status} {text.strip()}")
        return json.loads(text) if text.strip().startswith(("{", "[")) else text

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def prom_histogram(text, name, labels):
    """{le: count} and the sum of a histogram in Prometheus text, for one label set."""
    buckets, total = {}, None
    for line in text.splitlines():
        if not line.startswith(name) or all(f'{k}="{v}"' not in line for k, v in labels.items()):
            continue
        metric, _, value = line.rpartition(" ")
        if metric.startswith(name + "_bucket"):
            le = re.search(r'le="([^"]+)"', metric).group(1)
            buckets[float("inf") if le == "+Inf" else float(le)] = float(value)
        elif metric.startswith(name + "_sum"):
            total = float(value)
    return buckets, total


def histogram_quantile(buckets, q):
    """The upper bound of the bucket holding the q-quantile (an upper bound of it)."""
    if not buckets:
        return None
    n = max(buckets.values())
    for le in sorted(buckets):
        if buckets[le] >= q * n:
            return le
    return None


def run_airtime(a, env, jobs, tag):
    marks, names = prepare_run(a, env, jobs, tag)
    server = Airtime(a, env, os.path.join(a.lab, "out", "bench", tag + "-data"))
    try:
        def submit(i, gpus, seconds):
            server.call("POST", "/v1/workloads", {
                "name": names[i], "kind": "batch", "gpus": gpus, "duration": f"{seconds}s",
                "value": {"on_completion": 1},
                "command": ["/bin/sh", "-c", job_command(marks, names[i], seconds)]})

        times = paced(jobs, a.rate, submit)
        if not wait_all_ended(marks, names, a.timeout):
            print(f"slurm-bench: {tag}: not every job ended within {a.timeout} s",
                  file=sys.stderr)
        submitted = dict(zip(names, times))
        time.sleep(1.5)
        metrics = server.call("GET", "/metrics")
        marks_by_name = read_marks(marks, names)
        # The daemon's start of each run (its run's started_at: taken as it begins the start,
        # after the decision) to the job's own start.
        # And whether each ran on the node airtime chose (its run's GPUs: slurm:NODE:INDEX).
        to_running, on_chosen_node = [], 0
        for n in names:
            w = server.call("GET", "/v1/workloads/" + n)
            if w.get("runs") and n in marks_by_name:
                run = w["runs"][0]
                to_running.append(marks_by_name[n][0] - run["started_at"] / 1000.0)
                nodes = {g.split(":")[1] for g in run["gpus"] if g.count(":") == 2}
                on_chosen_node += nodes == {marks_by_name[n][1]}
    finally:
        server.stop()
    accept, accept_sum = prom_histogram(metrics, "airtime_backend_action_seconds",
                                        {"action": "start"})
    extra = {
        "accept_count": int(max(accept.values())) if accept else 0,
        "accept_p50_le_s": histogram_quantile(accept, 0.5),
        "accept_p99_le_s": histogram_quantile(accept, 0.99),
        "accept_mean_s": accept_sum / max(accept.values()) if accept else None,
        "running_p50_s": quantile(to_running, 0.5),
        "running_p99_s": quantile(to_running, 0.99),
        "on_chosen_node": on_chosen_node,
    }
    return summarize("airtime", names, submitted, marks_by_name, jobcomp(a.lab, set(names)),
                     dict(zip(names, (g for g, _ in jobs))), extra)


def fmt(v, unit="s"):
    if v is None:
        return "-"
    return f"{v:.3f} {unit}" if isinstance(v, float) else str(v)


def print_table(results):
    rows = [
        ("jobs started / submitted", lambda r: f"{r['started']} / {r['jobs']}"),
        ("submissions took", lambda r: fmt(r["submit_span_s"])),
        ("submit-to-start p50 (job's clock)", lambda r: fmt(r["p50_s"])),
        ("submit-to-start p99 (job's clock)", lambda r: fmt(r["p99_s"])),
        ("submit-to-start max", lambda r: fmt(r["max_s"])),
        ("p99 by GPUs per job: 1 / 2 / 4 / 8", lambda r: " / ".join(
            f"{v:.2f}" for v in r["p99_by_gpus_s"].values())),
        ("all placed (first submit to last start)", lambda r: fmt(r["all_placed_s"])),
        ("all done (first submit to last end)", lambda r: fmt(r["all_done_s"])),
        ("Slurm's records: submit-to-start p50/p99 (1 s)",
         lambda r: (f"{fmt(r['slurm_p50_s'])} / {fmt(r['slurm_p99_s'])}"
                    f" ({r['slurm_records']} jobs)")),
        ("GPU used by two jobs at once", lambda r: str(r["gpu_overlaps"])),
        ("ran on the node airtime chose",
         lambda r: str(r["on_chosen_node"]) if "on_chosen_node" in r else "-"),
        ("decision -> Slurm accepted: p50, p99 (bucket bound)",
         lambda r: (f"<= {fmt(r['accept_p50_le_s'])}, <= {fmt(r['accept_p99_le_s'])}"
                    if "accept_count" in r else "-")),
        ("decision -> Slurm accepted: mean",
         lambda r: fmt(r.get("accept_mean_s")) if "accept_count" in r else "-"),
        ("run started_at -> job running p50/p99",
         lambda r: (f"{fmt(r['running_p50_s'])} / {fmt(r['running_p99_s'])}"
                    if "accept_count" in r else "-")),
    ]
    heads = [f"{r['run']} #{r['repeat']}" for r in results]
    width = max(len(name) for name, _ in rows)
    cols = [max(len(h), *(len(f(r)) for _, f in rows)) for h, r in zip(heads, results)]
    print(" " * width + "  " + "  ".join(h.rjust(c) for h, c in zip(heads, cols)))
    for name, f in rows:
        print(name.ljust(width) + "  " + "  ".join(f(r).rjust(c) for r, c in zip(results, cols)))
    print()
    print("Targets (issue 21):")
    print(f"  burst: every job running, airtime's p99 no worse than Slurm's own on the same lab"
          f" (quoted for Slurm: {SLURM_QUOTED})")
    print(f"  overhead: decision -> Slurm accepted p99 <= {TARGET_ACCEPT_P99_S * 1000:.0f} ms;"
          f" decision -> running no slower than one job on an idle cluster"
          f" ({TARGET_RUNNING_S[0]}-{TARGET_RUNNING_S[1]} s)")
    slurm = [r["p99_s"] for r in results if r["run"] == "slurm" and r["p99_s"] is not None]
    for r in results:
        if r["run"] != "airtime":
            continue
        verdict = []
        if slurm and r["p99_s"] is not None:
            ok = r["p99_s"] <= max(slurm)
            theirs = ", ".join(f"{s:.2f}" for s in slurm)
            verdict.append(f"p99 {r['p99_s']:.2f} s vs Slurm's {theirs} s:"
                           f" {'met' if ok else 'NOT met'}")
        if r.get("accept_p99_le_s") is not None:
            ok = r["accept_p99_le_s"] <= TARGET_ACCEPT_P99_S
            verdict.append(f"accept p99 <= {r['accept_p99_le_s'] * 1000:.0f} ms:"
                           f" {'met' if ok else 'NOT met'}")
        if r.get("running_p99_s") is not None:
            ok = r["running_p99_s"] <= TARGET_RUNNING_S[1]
            verdict.append(f"to running p99 {r['running_p99_s']:.2f} s:"
                           f" {'met' if ok else 'NOT met'}")
        print(f"  airtime #{r['repeat']}: " + "; ".join(verdict))


def burst(a):
    if shutil.which("sbatch") is None and "slurm" in a.runs:
        print("slurm-bench: sbatch not found; the lab's start installs it", file=sys.stderr)
    if "airtime" in a.runs and not os.access(a.airtime, os.X_OK):
        die(f"no airtime binary at {a.airtime}: build it (scripts/build.sh) or pass --airtime")
    env = start_lab(a)
    params = scheduler_parameters(env)
    jobs = burst_jobs(a.jobs, a.seed)
    gpu_s = sum(g * s for g, s in jobs)
    gpus = a.nodes * 8
    print(f"lab: {a.nodes} nodes x 8 GPUs at {a.lab} (port {a.port}); "
          + ", ".join(f"{k}={v}" for k, v in params.items()))
    print(f"burst: {len(jobs)} jobs, GPUs " + ", ".join(
        f"{g}: {sum(1 for j in jobs if j[0] == g)}" for g, _ in GPU_MIX)
        + f"; 1.0-2.0 s each; {gpu_s:.0f} GPU-s; submitted at {a.rate:g}/s"
        + (f" (the lab's {gpus} GPUs {gpu_s * a.rate / len(jobs) / gpus:.0%} busy at that pace)"
           if a.rate > 0 else " (as fast as each client goes)"))
    if "airtime" in a.runs:
        print(f"airtime: {a.airtime} server --slurm-poll-ms {a.poll_ms} --policy {a.policy}"
              + "".join(" " + arg for arg in a.server_arg))
    results = []
    stamp = time.strftime("%H%M%S")
    for rep in range(1, a.repeat + 1):
        for which in a.runs:
            tag = f"b{stamp}-{which[0]}{rep}"
            env = fresh_lab(a)
            t = time.time()
            r = (run_slurm if which == "slurm" else run_airtime)(a, env, jobs, tag)
            r["repeat"] = rep
            print(f"  {which} #{rep}: {r['started']}/{r['jobs']} started, p50 {fmt(r['p50_s'])},"
                  f" p99 {fmt(r['p99_s'])}, all placed {fmt(r['all_placed_s'])}"
                  f" ({time.time() - t:.0f} s)", flush=True)
            results.append(r)
    print()
    print_table(results)
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"lab": params, "jobs": len(jobs), "rate": a.rate, "results": results}, f,
                      indent=1)
    if a.stop_lab:
        stop_lab(a)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    b = sub.add_parser("burst", help="a burst of short GPU jobs, Slurm alone and airtime")
    b.add_argument("--jobs", type=int, default=1000, help="jobs in the burst (default 1000)")
    b.add_argument("--rate", type=float, default=20,
                   help="submissions per second, the same for both runs (default 20; 0: as fast"
                        " as the client goes)")
    b.add_argument("--seed", type=int, default=1, help="the jobs' sizes and lengths (default 1)")
    b.add_argument("--runs", default="slurm,airtime", help="which runs, in order")
    b.add_argument("--repeat", type=int, default=2, help="times each run is made (default 2)")
    b.add_argument("--poll-ms", type=int, default=200, help="airtime's --slurm-poll-ms")
    b.add_argument("--policy", default="airtime", help="airtime's --policy")
    b.add_argument("--timeout", type=float, default=300, help="seconds a run may take to end")
    b.add_argument("--airtime", default=os.path.join(ROOT, "build/src/airtime/cli/airtime"))
    b.add_argument("--server-arg", action="append", default=[], metavar="ARG",
                   help="one more argument for airtime server (repeatable), e.g."
                        " --server-arg=--slurm-submitters=1")
    b.add_argument("--json", help="write every figure to this file")
    b.add_argument("--stop-lab", action="store_true", help="stop and purge the lab at the end")
    a = ap.parse_args()
    a.lab = os.environ.get("AIRTIME_SLURM_DIR", "/tmp/airtime-bench-lab")
    a.port = int(os.environ.get("AIRTIME_SLURM_PORT", "8817"))
    a.nodes = int(os.environ.get("AIRTIME_SLURM_NODES", "16"))
    a.runs = [r for r in a.runs.split(",") if r]
    for r in a.runs:
        if r not in ("slurm", "airtime"):
            die(f"--runs: '{r}' is neither slurm nor airtime")
    burst(a)


if __name__ == "__main__":
    main()
