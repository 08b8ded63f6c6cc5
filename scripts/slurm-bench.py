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
the decision until the job's script ran; for Slurm alone, how long each sbatch call took
(Slurm accepting a submission as a user's client sees it: the part of airtime's decision ->
accepted that is Slurm's). The table ends with the issue's targets.

mixed: a mixed workload (default 300 jobs of seconds each, submitted over 150 s: the kinds,
values and deadlines of examples/suite/launch-burst with one suite hour as HOUR_S seconds)
and one realtime service (1 GPU per replica, 1-8 replicas, demand from
examples/live/load_curve.csv compressed to the run), once under Slurm alone (an sbatch per
job in partition low with --time; the replicas in partition high, added and cancelled by a
driver by airtime's rule, ceil(demand / capacity)) and once under airtime (POST
/v1/workloads, the demand posted as it moves). Each run lasts --horizon seconds. From the
runs' own marks: makespan, queueing delay p50/p99 per kind, the replicas' time to start
after a rise in demand, GPUs held; and the return per GPU-hour by airtime's ledger for both,
each run's observed schedule replayed through `airtime sim --policy replay:schedule=FILE`.
Beside them, the simulator's prediction (`airtime sim --policy slurm` and `--policy airtime`
on the same workload and the lab's nodes; and `slurm` set as the lab runs Slurm, from its
configuration: bf_interval, time limits in minutes, the scheduler's 1-s ticks, first fit,
its priority weights, and, after the Slurm run, the phase of its timers from slurmctld's
start), each kind's median wait predicted against measured, and the Return and Fidelity
targets.

  scripts/slurm-bench.py burst                      # both runs, twice each
  scripts/slurm-bench.py burst --runs slurm --repeat 1 --jobs 200
  scripts/slurm-bench.py burst --json out.json      # every figure, machine-readable
  scripts/slurm-bench.py burst --runs airtime --server-arg=--slurm-submitters=1
  scripts/slurm-bench.py mixed                      # Slurm alone, then airtime (~12 min)
  scripts/slurm-bench.py mixed --jobs 30 --span 20 --horizon 45   # a quick check

The lab is started with AIRTIME_SLURM_DIR (default /tmp/airtime-bench-lab),
AIRTIME_SLURM_PORT (default 8817) and AIRTIME_SLURM_NODES (default 16) unless it already
runs with them; --stop-lab stops it at the end. docs/slurm.md ("Side by side with Slurm")
describes the bench and the figures measured.
"""
import argparse
import http.client
import json
import math
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
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
    conf = slurm_config(env)
    return {k: conf[k] for k in ("SchedulerType", "SchedulerParameters", "PriorityType",
                                 "SelectType") if k in conf}


def slurm_config(env):
    """`scontrol show config` as a dict."""
    out = subprocess.run(["scontrol", "show", "config"], env=env, capture_output=True,
                         text=True, check=True).stdout
    conf = {}
    for line in out.splitlines():
        k, sep, v = line.partition("=")
        if sep:
            conf[k.strip()] = v.strip()
    return conf


def lab_slurm_policy(env):
    """The simulator's `slurm` policy set as the lab runs Slurm, from its configuration:
    priority weights (the lab's age and fair-share weights; no QoS is asked for, so the
    workloads' priority fields weigh nothing; Slurm's job-size factor counts nodes and CPUs,
    which every job here asks alike, one of each, so size does not order them either: what
    is left is submission order), backfill every bf_interval (SchedulerParameters; Slurm's
    default 30 s), time limits as the bench asks them (--time = length + LIMIT_PAD_S, in
    whole minutes), work started on the scheduler's 1-s ticks, the replicas first (their
    partition's PriorityTier is above the jobs'), and the first node with room (equal node
    weights). Returns (spec, bf_interval_s)."""
    conf = slurm_config(env)
    params = dict(kv.split("=", 1) for kv in conf.get("SchedulerParameters", "").split(",")
                  if "=" in kv)
    bf_interval = int(params.get("bf_interval", 30))

    def weight(key):
        v = conf.get(key, "0")
        return int(v) if v.isdigit() else 0

    spec = ("slurm"
            f":w_age={weight('PriorityWeightAge')}:w_fairshare={weight('PriorityWeightFairshare')}"
            ":w_size=0:w_qos=0:services_first=1:placement=firstfit"
            f":bf_interval={bf_interval}s:sched_tick={SLURM_SCHED_TICK_S:g}s"
            f":limit_pad={LIMIT_PAD_S}s:limit_round=1m")
    return spec, bf_interval


def slurmctld_started(lab):
    """When the lab's slurmctld last started (epoch seconds), from its log; None if not found.
    Its backfill passes and scheduler ticks run from then."""
    started = None
    try:
        with open(os.path.join(lab, "log", "slurmctld.log"), encoding="utf-8",
                  errors="replace") as f:
            for line in f:
                m = re.match(r"\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?\] slurmctld version .*"
                             r" started", line)
                if m:
                    started = (time.mktime(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S"))
                               + float(m.group(2) or 0))
    except OSError:
        return None
    return started


# The lab's timers drift within a run (its scheduler ticks by about 0.4 s over 300 s), and
# the waits depend on where the ticks fall: the prediction is also made at the phase plus
# each of these offsets, and each kind's median taken over them.
PHASE_JITTER_S = [round(-0.5 + 0.1 * i, 1) for i in range(11)]


def phase_jitter(a, cluster, workload, lab_spec, phase, bf_interval, work):
    """The prediction of the lab's Slurm at phase + each PHASE_JITTER_S offset: per kind the
    median of the medians and their range; the median return."""
    preds = [airtime_sim(a, cluster, workload,
                         f"{lab_spec}:phase={(phase + d) % bf_interval:.3f}s", a.horizon,
                         os.path.join(work, "sim-slurm-jitter.json"))
             for d in PHASE_JITTER_S]
    kinds = set().union(*(p["q_p50"] for p in preds))
    q = {k: [p["q_p50"][k] for p in preds if p["q_p50"].get(k) is not None] for k in kinds}
    return {"return": statistics.median(p["return"] for p in preds),
            "q_p50": {k: statistics.median(v) for k, v in q.items() if v},
            "q_p50_range": {k: [min(v), max(v)] for k, v in q.items() if v},
            "q_p99": {k: statistics.median(p["q_p99"][k] for p in preds
                                           if p["q_p99"].get(k) is not None) for k in kinds},
            "q_mean": {k: statistics.median(p["q_mean"][k] for p in preds
                                            if p["q_mean"].get(k) is not None) for k in kinds},
            "slo": statistics.median(p["slo"] for p in preds if p["slo"] is not None),
            "offsets_s": PHASE_JITTER_S}


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
    took = []  # each sbatch call: Slurm accepting a submission, as a user's client sees it

    def submit(i, gpus, seconds):
        t = time.monotonic()
        r = subprocess.run(
            ["sbatch", "--parsable", "-J", names[i], f"--gres=gpu:{gpus}", "-o", "/dev/null",
             "-D", marks, "--wrap", job_command(marks, names[i], seconds)],
            env=env, capture_output=True, text=True)
        took.append(time.monotonic() - t)
        if r.returncode != 0:
            die(f"sbatch of {names[i]} failed: {r.stderr.strip()}")

    times = paced(jobs, a.rate, submit)
    if not wait_all_ended(marks, names, a.timeout):
        print(f"slurm-bench: {tag}: not every job ended within {a.timeout} s", file=sys.stderr)
    submitted = dict(zip(names, times))
    time.sleep(1.5)  # jobcomp is written as each job completes
    return summarize("slurm", names, submitted, read_marks(marks, names),
                     jobcomp(a.lab, set(names)), dict(zip(names, (g for g, _ in jobs))),
                     {"sbatch_p50_s": quantile(took, 0.5), "sbatch_p99_s": quantile(took, 0.99),
                      "sbatch_mean_s": sum(took) / len(took) if took else None})


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
        ("Slurm alone: an sbatch call, p50 / p99 / mean",
         lambda r: (f"{fmt(r['sbatch_p50_s'])} / {fmt(r['sbatch_p99_s'])} / "
                    f"{fmt(r['sbatch_mean_s'])}" if "sbatch_p99_s" in r else "-")),
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


# ------------------------------------------------------------------ the mixed workload

# The kinds of examples/suite/launch-burst, time-compressed: one hour of the suite is
# HOUR_S seconds of the run. Values are the suite's (on completion, US dollars); deadlines
# are the suite's deadline_after and decay, compressed the same way. Each row: name, kind,
# share of the jobs, GPU counts, work in suite hours (low, high), value (a number, or "gpu_h":
# $2.00 per GPU-hour of work, the suite's research training), deadline_after and
# decay_after_deadline in suite hours (None: none), priority, preemptible, gpu_type (None:
# any), memory_gb.
HOUR_S = 6.0
MIXED_KINDS = [
    # catalog-enrich / doc-extract: 1 GPU, 1.5-3 h, $3.6-5.4, due 4 h after, decay 4-5 h.
    ("enrich", "batch", 0.28, [1], (1.5, 3.0), 5.4, 4, 4, 50, True, None, 16),
    # summarize-tickets: 4 GPUs, 1.75-5.7 h, $39, due 6 h after (the nightly runs), decay 6 h.
    # Its 60 GB per GPU fit the lab's H100s only (its A100s are 40 GB): asked of Slurm as
    # gres type h100, so that both runs hold the workload to the same constraint.
    ("summarize", "batch", 0.08, [4], (1.75, 5.7), 39.0, 6, 6, 50, True, "H100", 60),
    # embed-docs / embed-index: 1 GPU (the suite's half GPUs are whole here, as in this
    # bench's first version, when Slurm's GRES did not split one; the lab's gres/shard now
    # could: docs/slurm.md, Fractions), 1-3 h, $3.9, due 8 h after, decay 4 h.
    ("embed", "embed", 0.20, [1], (1.0, 3.0), 3.9, 8, 4, 20, True, None, 20),
    # eval-launch-candidate: 4 GPUs, 2 h, $16, due 4 h after, decay 2 h; not preemptible;
    # 60 GB per GPU: H100 only, as summarize.
    ("eval", "eval", 0.05, [4], (2.0, 2.0), 16.0, 4, 2, 30, False, "H100", 60),
    # eval-launch-safety: 1 GPU, 1 h, $1.00, due 4 h after, decay 2 h.
    ("safety", "eval", 0.07, [1], (1.0, 1.0), 1.0, 4, 2, 30, False, None, 24),
    # ft-launch-lora: 2 GPUs, 3 h, $12, no deadline, preemptible.
    ("lora", "finetune", 0.06, [2], (3.0, 3.0), 12.0, None, None, 40, True, None, 40),
    # quantize-launch-sft-8b: 2 GPUs with 78 GB each (H100 only on the lab, whose A100s are
    # 40 GB), 45 min, $3.0, due 3 h after, decay 3 h.
    ("quantize", "quantize", 0.04, [2], (0.75, 0.75), 3.0, 3, 3, 40, False, "H100", 78),
    # Research training (Philly; the design's 4-8 GPUs): 3-10 h, $2.00 per GPU-hour of work,
    # preemptible, no deadline. No checkpoint: a sleeping job cannot resume, in either run.
    ("train", "training", 0.22, [4, 8], (3.0, 10.0), "gpu_h", None, None, 10, True, None, 40),
]
SVC = "svc"
SVC_CAPACITY_RPS = 2.0
SVC_MAX_REPLICAS = 8
# Priced so that one replica (1 GPU) at full load earns what launch-burst's chat assistant
# earns per GPU-hour ($1.20 per 1k requests at 5 rps on 4 H100: $5.40 an hour), with the
# suite's hours compressed to HOUR_S seconds: 5.40 * (3600 / HOUR_S) per GPU-hour of the run.
SVC_PER_1K = 5.40 * (3600 / HOUR_S) / (SVC_CAPACITY_RPS * 3.6)
LOAD_CURVE = os.path.join(ROOT, "examples/live/load_curve.csv")
# Slurm alone: each job's --time is its length plus this, which Slurm rounds up to whole
# minutes (the limit backfill plans with).
LIMIT_PAD_S = 5
# The lab's slurmctld starts work only on a 1-s grid that runs from its start (measured in
# its log: the main scheduler's allocations fall on 1-s ticks, never two within 0.9 s); not
# a slurm.conf key, so the bench cannot read it.
SLURM_SCHED_TICK_S = 1.0
KIND_ORDER = ["batch", "embed", "eval", "finetune", "quantize", "training", "realtime"]


def load_curve(span_s):
    """examples/live/load_curve.csv (rps every 30 s of a trace), compressed to span_s:
    [(at_s, rps)], piecewise constant."""
    rows = []
    with open(LOAD_CURVE, encoding="utf-8") as f:
        for line in f.read().splitlines()[1:]:
            t, _, rps = line.split(",")
            rows.append((float(t), float(rps)))
    if not rows:
        die(f"{LOAD_CURVE}: no rows")
    trace_span = rows[-1][0] + (rows[-1][0] - rows[-2][0] if len(rows) > 1 else 30)
    return [(round(t * span_s / trace_span, 3), rps) for t, rps in rows]


def replicas_for(rps):
    return max(1, min(SVC_MAX_REPLICAS, math.ceil(rps / SVC_CAPACITY_RPS - 1e-9)))


def mixed_jobs(n, span_s, seed):
    """n jobs: kind by the table's shares, sizes and lengths drawn from its ranges, arrivals
    over span_s: half spread evenly at random, half in three bursts of span_s/20 each."""
    rng = random.Random(seed)
    bursts = [span_s * f for f in (0.1, 0.45, 0.75)]
    jobs = []
    for i in range(n):
        k = rng.choices(MIXED_KINDS, [row[2] for row in MIXED_KINDS])[0]
        name, kind, _, sizes, (lo, hi), value, due, decay, prio, preempt, gtype, mem = k
        gpus = rng.choice(sizes)
        work_h = round(rng.uniform(lo, hi), 2)
        at = (rng.uniform(0, span_s) if rng.random() < 0.5 else
              rng.choice(bursts) + rng.uniform(0, span_s / 20))
        jobs.append({
            "name": f"{name}-{i}", "kind": kind, "gpus": gpus,
            "seconds": round(work_h * HOUR_S, 1), "submit_s": round(at, 2),
            "value": round(2.0 * gpus * work_h, 2) if value == "gpu_h" else value,
            "deadline_after_s": None if due is None else due * HOUR_S,
            "decay_s": None if decay is None else decay * HOUR_S,
            "priority": prio, "preemptible": preempt, "gpu_type": gtype, "memory_gb": mem})
    jobs.sort(key=lambda j: j["submit_s"])
    return jobs


def job_spec(j, marks, with_submit):
    """The workload as airtime reads it (YAML's keys; JSON is YAML): the same for the
    simulator's file and the daemon's POST. The same speed on every GPU type: the jobs sleep."""
    w = {"name": j["name"], "kind": j["kind"], "gpus": j["gpus"], "work": f"{j['seconds']}s",
         "priority": j["priority"], "preemptible": j["preemptible"],
         "memory_gb": j["memory_gb"], "speed": {"H100": 1, "A100": 1},
         "value": {"on_completion": j["value"]}}
    if j["gpu_type"]:
        w["gpu_type"] = j["gpu_type"]
    if j["deadline_after_s"] is not None:
        w["deadline_after"] = f"{j['deadline_after_s']:g}s"
        w["value"]["decay_after_deadline"] = f"{j['decay_s']:g}s"
    if with_submit:
        w["submit_at"] = f"{j['submit_s']}s"
    if marks:
        w["command"] = ["/bin/sh", "-c", run_script(marks, j["name"], j["seconds"])]
    return w


def svc_spec(curve, marks, with_demand):
    w = {"name": SVC, "kind": "realtime", "gpus": 1, "priority": 100,
         "slo": {"latency_ms": 500, "capacity_rps": SVC_CAPACITY_RPS, "min_replicas": 1,
                 "max_replicas": SVC_MAX_REPLICAS, "cold_start": "1s"},
         "value": {"per_1k_requests": round(SVC_PER_1K, 3)}}
    if with_demand:
        w["demand"] = [{"at": f"{t}s", "rps": rps} for t, rps in curve]
    if marks:
        w["command"] = ["/bin/sh", "-c", run_script(marks, SVC + ".$SLURM_JOB_ID", None)]
    return w


def run_script(marks, name, seconds):
    """A run's script: appends "start T NODE GPUS" when it starts, "end T" when its sleep is
    done and "stop T" when it is signalled (cancelled, requeued), to MARKS/NAME.runs. A
    replica (seconds None) runs until it is stopped."""
    f = f"{marks}/{name}.runs"
    length = seconds if seconds is not None else 100000
    return (f"trap 'echo \"stop $(date +%s.%N)\" >> {f}; exit 143' TERM;"
            f' echo "start $(date +%s.%N) $SLURMD_NODENAME $CUDA_VISIBLE_DEVICES" >> {f};'
            f" sleep {length} & wait $!; echo \"end $(date +%s.%N)\" >> {f}")


def read_runs(marks, t0):
    """name -> [(start_s, end_s or None, node, [gpu index], how)] from the .runs files,
    times from t0; how: "end" (its sleep finished), "stop" (signalled) or None (no end
    written). An end closes the oldest run still open (two runs of one job at once, which
    must not happen, show as interleaved lines). Replicas' files (svc.JOBID) are gathered
    under the service's name."""
    runs = {}
    for fn in sorted(os.listdir(marks)):
        if not fn.endswith(".runs"):
            continue
        name = fn[:-len(".runs")]
        if name.startswith(SVC + "."):
            name = SVC
        opened = []
        with open(os.path.join(marks, fn), encoding="utf-8") as f:
            for line in f:
                p = line.split()
                if not p:
                    continue
                if p[0] == "start" and len(p) >= 3:
                    gpus = [int(g) for g in p[3].split(",")] if len(p) > 3 else []
                    opened.append([float(p[1]) - t0, None, p[2], gpus, None])
                elif p[0] in ("end", "stop") and opened and len(p) >= 2:
                    cur = opened.pop(0)
                    cur[1], cur[4] = float(p[1]) - t0, p[0]
                    runs.setdefault(name, []).append(cur)
        runs.setdefault(name, []).extend(opened) if opened else None
    return {k: sorted((tuple(r) for r in v), key=lambda r: r[0]) for k, v in runs.items()}


def ran_twice(runs):
    """Jobs (not the service) with two runs at the same time, by their marks."""
    out = []
    for name, rs in runs.items():
        if name == SVC:
            continue
        for (s1, e1, *_), (s2, *_) in zip(rs, rs[1:]):
            if e1 is None or s2 < e1 - 0.05:
                out.append(name)
                break
    return out


def replay_missed(schedule, decisions, horizon_s):
    """The schedule's rows that began before the horizon and that the replay did not start
    at their time (within 2 ms) on their node: a replay counts what was observed only when
    this is empty."""
    starts = {}
    with open(decisions, encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if d.get("decision") == "start":
                node = d["gpus"][0].split("/")[0] if d.get("gpus") else None
                starts.setdefault(d["workload"], []).append((d["t_s"], node))
    missed = []
    with open(schedule, encoding="utf-8") as f:
        for line in f.read().splitlines()[1:]:
            job, start, _, node, _ = line.split(",")
            if float(start) >= horizon_s:
                continue
            if not any(abs(t - float(start)) < 0.002 and n == node
                       for t, n in starts.get(job, [])):
                missed.append(f"{job}@{start}s/{node}")
    return missed


def write_schedule(runs, path):
    with open(path, "w", encoding="utf-8") as f:
        f.write("job,start_s,end_s,node,gpus\n")
        for name, rs in sorted(runs.items()):
            for start, end, node, gpus, _ in rs:
                end_s = "none" if end is None else f"{max(end, start):.3f}"
                f.write(f"{name},{max(start, 0):.3f},{end_s},{node},"
                        f"{';'.join(str(g) for g in gpus)}\n")


def lab_cluster_yaml(env, path):
    """The lab's nodes as airtime's cluster file (name, GPU type and count, CPUs, memory), as
    `airtime server --backend slurm` reads them (ClusterFromSlurm)."""
    out = subprocess.run(["scontrol", "show", "node", "-o"], env=env, capture_output=True,
                         text=True, check=True).stdout
    nodes = []
    for line in out.splitlines():
        f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
        m = re.match(r"gpu:([^:(]+):(\d+)", f.get("Gres", ""))
        if not m:
            continue
        nodes.append(f"    - {{name: {f['NodeName']}, gpu: {m.group(1)}, gpus: {m.group(2)},"
                     f" cpu: {f.get('CPUTot', '0')},"
                     f" memory_gib: {int(f.get('RealMemory', '0')) // 1024}}}")
    with open(path, "w", encoding="utf-8") as f:
        f.write("cluster:\n  name: slurm-lab\n  nodes:\n" + "\n".join(nodes) + "\n")
    return len(nodes)


def write_workload(jobs, curve, path):
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"workloads": [svc_spec(curve, None, True)] +
                   [job_spec(j, None, True) for j in jobs]}, f, indent=1)


def airtime_sim(a, cluster, workload, policy, horizon_s, out_json, decisions=None):
    r = subprocess.run([a.airtime, "sim", "--cluster", cluster, "--workload", workload,
                        "--policy", policy, "--horizon", f"{horizon_s:g}s", "--no-bound",
                        "--quiet", "--threads", "1", "--json", out_json]
                       + (["--decisions", decisions] if decisions else []),
                       capture_output=True, text=True)
    if r.returncode != 0:
        die(f"airtime sim --policy {policy}: {r.stderr.strip()}")
    with open(out_json, encoding="utf-8") as f:
        rep = json.load(f)["policies"][0]
    kinds = {k: v.get("queueing_delay_s", {}) for k, v in rep.get("kinds", {}).items()}
    return {"return": rep["return_per_gpu_hour"], "value": rep["value"],
            "q_p50": {k: v.get("p50") for k, v in kinds.items()},
            "q_p99": {k: v.get("p99") for k, v in kinds.items()},
            "q_mean": {k: v.get("mean") for k, v in kinds.items()},
            "preemptions": rep.get("preemptions"),
            "slo": rep.get("services", {}).get(SVC, {}).get("slo_attainment")}


class ReplicaDriver(threading.Thread):
    """Slurm alone: adds or cancels replica jobs (partition high) by the rule airtime uses,
    ceil(demand / capacity_rps) within [1, max], as the demand curve moves."""

    def __init__(self, env, marks, curve, t0, stop_at):
        super().__init__(daemon=True)
        self.env, self.marks, self.curve, self.t0, self.stop_at = env, marks, curve, t0, stop_at
        self.live = []  # Slurm job ids, oldest first
        self.error = None

    def run(self):
        try:
            while time.time() < self.t0 + self.stop_at:
                t = time.time() - self.t0
                want = replicas_for(demand_at(self.curve, t))
                while len(self.live) < want:
                    r = subprocess.run(
                        ["sbatch", "--parsable", "-J", SVC, "-p", "high", "--gres=gpu:1",
                         "-o", "/dev/null", "-D", self.marks,
                         "--wrap", run_script(self.marks, SVC + ".$SLURM_JOB_ID", None)],
                        env=self.env, capture_output=True, text=True)
                    if r.returncode != 0:
                        raise RuntimeError(f"sbatch of a replica: {r.stderr.strip()}")
                    self.live.append(r.stdout.strip().split(";")[0])
                while len(self.live) > want:
                    subprocess.run(["scancel", self.live.pop()], env=self.env, check=False)
                time.sleep(0.25)
        except Exception as e:  # reported by the run
            self.error = e


def demand_at(curve, t):
    rps = curve[0][1]
    for at, r in curve:
        if at <= t:
            rps = r
    return rps


def post_demand(server, curve, t0, stop_at):
    """airtime: the service's demand posted at each step of the curve."""
    for at, rps in curve:
        delay = t0 + at - time.time()
        if at >= stop_at:
            return
        if delay > 0:
            time.sleep(delay)
        server.call("POST", f"/v1/workloads/{SVC}/demand", {"rps": rps})


def submit_paced(jobs, t0, submit):
    submitted = {}
    for j in jobs:
        delay = t0 + j["submit_s"] - time.time()
        if delay > 0:
            time.sleep(delay)
        submitted[j["name"]] = time.time() - t0
        submit(j)
    return submitted


def wait_jobs_done(marks, jobs, t0, horizon_s):
    """Until every job's last run has ended, or the horizon."""
    while time.time() < t0 + horizon_s:
        done = 0
        for j in jobs:
            try:
                with open(os.path.join(marks, j["name"] + ".runs"), encoding="utf-8") as f:
                    done += f.read().rstrip().rsplit("\n", 1)[-1].startswith("end")
            except OSError:
                pass
        if done == len(jobs):
            return
        time.sleep(1)


def cancel_all(env):
    subprocess.run(["scancel", "--user", os.environ.get("USER", "root")], env=env,
                   check=False, capture_output=True)


def mixed_run_slurm(a, env, jobs, curve, marks):
    t0 = time.time() + 1.0
    driver = ReplicaDriver(env, marks, curve, t0, a.horizon)

    def submit(j):
        gres = f"gpu:{j['gpu_type'].lower()}:{j['gpus']}" if j["gpu_type"] else f"gpu:{j['gpus']}"
        limit = max(1, math.ceil(j["seconds"] + LIMIT_PAD_S))
        r = subprocess.run(
            ["sbatch", "--parsable", "-J", j["name"], "-p", "low", f"--gres={gres}",
             f"--time=0:{limit}", "-o", "/dev/null", "-D", marks,
             "--wrap", run_script(marks, j["name"], j["seconds"])],
            env=env, capture_output=True, text=True)
        if r.returncode != 0:
            die(f"sbatch of {j['name']} failed: {r.stderr.strip()}")

    time.sleep(max(0, t0 - time.time()))
    driver.start()
    submitted = submit_paced(jobs, t0, submit)
    wait_jobs_done(marks, jobs, t0, a.horizon)
    time.sleep(max(0, t0 + a.horizon - time.time()))
    driver.join(5)
    if driver.error:
        die(str(driver.error))
    cancel_all(env)
    time.sleep(2)  # the stop marks of the cancelled replicas
    return t0, submitted, {}


def mixed_run_airtime(a, env, jobs, curve, marks, tag):
    server = Airtime(a, env, os.path.join(a.lab, "out", "bench", tag + "-data"))
    try:
        t0 = time.time() + 1.0
        server.call("POST", "/v1/workloads", svc_spec(curve, marks, False))
        server.call("POST", f"/v1/workloads/{SVC}/demand", {"rps": curve[0][1]})
        poster = threading.Thread(target=post_demand, args=(server, curve[1:], t0, a.horizon),
                                  daemon=True)
        # One connection per thread: http.client is not thread-safe.
        jobs_client = Airtime.__new__(Airtime)
        jobs_client.__dict__.update(server.__dict__)
        jobs_client.conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
        time.sleep(max(0, t0 - time.time()))
        poster.start()
        submitted = submit_paced(jobs, t0, lambda j: jobs_client.call(
            "POST", "/v1/workloads", job_spec(j, marks, False)))
        wait_jobs_done(marks, jobs, t0, a.horizon)
        time.sleep(max(0, t0 + a.horizon - time.time()))
        poster.join(5)
        ledger = server.call("GET", "/v1/ledger")
    finally:
        server.stop()
    cancel_all(env)
    time.sleep(2)
    return t0, submitted, {"daemon_value": ledger.get("value"),
                           "daemon_return": ledger.get("return_per_gpu_hour")}


def replica_start_times(runs, curve, horizon_s):
    """For each rise of the replicas wanted (a step of the demand curve), the time until that
    many replicas were running by their own marks (None: not within the step)."""
    svc_runs = runs.get(SVC, [])
    out = []
    prev = replicas_for(curve[0][1])
    steps = curve + [(horizon_s, curve[-1][1])]
    for i, (at, rps) in enumerate(curve):
        want = replicas_for(rps)
        if i > 0 and want > prev:
            until = steps[i + 1][0]
            t = at
            found = None
            while t < until:
                live = sum(1 for s, e, *_ in svc_runs if s <= t and (e is None or e > t))
                if live >= want:
                    found = t - at
                    break
                t += 0.05
            out.append(found)
        prev = want
    return out


def allocated_series(runs, jobs_gpus, horizon_s):
    """GPUs held, by the marks, at each whole second."""
    series = []
    for t in range(int(horizon_s)):
        n = 0
        for name, rs in runs.items():
            g = jobs_gpus.get(name, 1)
            n += g * sum(1 for s, e, *_ in rs if s <= t and (e is None or e > t))
        series.append(n)
    return series


def mixed_figures(label, jobs, runs, submitted, horizon_s):
    by_kind = {}
    started = done = 0
    ends = []
    for j in jobs:
        rs = runs.get(j["name"], [])
        if rs:
            started += 1
            by_kind.setdefault(j["kind"], []).append(rs[0][0] - submitted[j["name"]])
            if rs[-1][4] == "end":
                done += 1
                ends.append(rs[-1][1])
        else:
            by_kind.setdefault(j["kind"], []).append(horizon_s - submitted[j["name"]])
    requeues = sum(max(0, len(runs.get(j["name"], [])) - 1) for j in jobs)
    gpus = {j["name"]: j["gpus"] for j in jobs}
    series = allocated_series(runs, gpus, horizon_s)
    return {
        "run": label, "jobs": len(jobs), "started": started, "completed": done,
        "requeued_runs": requeues,
        "ran_twice": ran_twice(runs),
        "makespan_s": max(ends) - min(submitted.values()) if ends else None,
        "q_p50": {k: quantile(v, 0.5) for k, v in by_kind.items()},
        "q_p99": {k: quantile(v, 0.99) for k, v in by_kind.items()},
        "q_mean": {k: statistics.mean(v) for k, v in by_kind.items()},
        "replica_start_s": replica_start_times(runs, MIXED_CURVE, horizon_s),
        "replica_runs": len(runs.get(SVC, [])),
        "gpus_mean": statistics.mean(series) if series else 0,
        "gpus_by_10s": [max(series[i:i + 10]) for i in range(0, len(series), 10)],
    }


MIXED_CURVE = []


def mixed(a):
    global MIXED_CURVE
    if not os.access(a.airtime, os.X_OK):
        die(f"no airtime binary at {a.airtime}: build it (scripts/build.sh) or pass --airtime")
    env = start_lab(a)
    params = scheduler_parameters(env)
    stamp = time.strftime("%H%M%S")
    work = os.path.join(a.lab, "out", "bench", f"m{stamp}")
    os.makedirs(work, exist_ok=True)
    cluster = os.path.join(work, "cluster.yaml")
    nodes = lab_cluster_yaml(env, cluster)
    jobs = mixed_jobs(a.jobs, a.span, a.seed)
    MIXED_CURVE = curve = load_curve(a.horizon)
    workload = os.path.join(work, "workload.yaml")
    write_workload(jobs, curve, workload)
    gpu_s = sum(j["gpus"] * j["seconds"] for j in jobs)
    print(f"lab: {nodes} nodes at {a.lab} (port {a.port}); "
          + ", ".join(f"{k}={v}" for k, v in params.items()))
    print(f"mixed: {len(jobs)} jobs over {a.span:g} s ("
          + ", ".join(f"{k}: {sum(1 for j in jobs if j['kind'] == k)}" for k in KIND_ORDER
                      if any(j["kind"] == k for j in jobs))
          + f"), {gpu_s:.0f} GPU-s of work; service {SVC}: 1 GPU per replica, "
          f"{SVC_CAPACITY_RPS:g} rps each, 1-{SVC_MAX_REPLICAS} replicas, demand "
          f"{min(r for _, r in curve):g}-{max(r for _, r in curve):g} rps; window {a.horizon:g} s"
          f"\n  files: {work}", flush=True)

    # The simulator's prediction, before either run: `slurm` with its defaults, `slurm` set as
    # the lab runs Slurm (its timers' phase unknown yet: 0), and `airtime`.
    lab_spec, bf_interval = lab_slurm_policy(env)
    print(f"  the lab's Slurm in the simulator: {lab_spec}", flush=True)
    specs = {"slurm": "slurm", "slurm-lab": lab_spec, "airtime": "airtime"}
    pred = {k: airtime_sim(a, cluster, workload, p, a.horizon, os.path.join(work, f"sim-{k}.json"))
            for k, p in specs.items()}
    results = {}
    for which in a.runs:
        env = fresh_lab(a)
        wait_slurm_idle(env)
        marks = os.path.join(work, which)
        os.makedirs(marks, exist_ok=True)
        t = time.time()
        if which == "slurm":
            t0, submitted, extra = mixed_run_slurm(a, env, jobs, curve, marks)
            # The same, with the phase of the lab's timers, which run from slurmctld's start
            # (known before the first submission; simulated after the run).
            started = slurmctld_started(a.lab)
            if started is not None:
                phase = (started - t0) % bf_interval
                pred["slurm-phase"] = airtime_sim(
                    a, cluster, workload, f"{lab_spec}:phase={phase:.3f}s", a.horizon,
                    os.path.join(work, "sim-slurm-phase.json"))
                pred["slurm-phase"]["phase_s"] = phase
                pred["slurm-jitter"] = phase_jitter(a, cluster, workload, lab_spec, phase,
                                                    bf_interval, work)
        else:
            t0, submitted, extra = mixed_run_airtime(a, env, jobs, curve, marks, f"m{stamp}-a")
        runs = read_runs(marks, t0)
        sched = os.path.join(work, f"schedule-{which}.csv")
        write_schedule(runs, sched)
        r = mixed_figures(which, jobs, runs, submitted, a.horizon)
        r.update(extra)
        r["t0"] = t0
        decisions = os.path.join(work, f"replay-{which}.decisions")
        r["replayed"] = airtime_sim(a, cluster, workload, "replay:schedule=" + sched, a.horizon,
                                    os.path.join(work, f"replay-{which}.json"), decisions)
        r["replay_missed"] = replay_missed(sched, decisions, a.horizon)
        if r["replay_missed"]:
            print(f"  {which}: {len(r['replay_missed'])} observed run(s) did not start in the"
                  f" replay at their time and place, e.g. {r['replay_missed'][:3]}: the"
                  " workload allows what the run did not (or the reverse)", file=sys.stderr)
        results[which] = r
        print(f"  {which}: {r['started']}/{r['jobs']} started, {r['completed']} completed,"
              f" return {r['replayed']['return']:.1f}/GPU-h ({time.time() - t:.0f} s)",
              flush=True)
    print()
    print_mixed(results, pred)
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump({"lab": params, "jobs": jobs, "curve": curve, "horizon_s": a.horizon,
                       "prediction": pred, "results": results}, f, indent=1)
    if a.stop_lab:
        stop_lab(a)


def pct(v, ref):
    return None if v is None or not ref else 100.0 * (v - ref) / ref


def print_slurm_medians(r, pred, kinds):
    """Per kind: the Slurm run's median queueing delay against each prediction's, with the
    ratio predicted / measured; then the means, which move less from run to run."""
    cols = [("sim `slurm`", pred["slurm"]), ("sim: the lab's Slurm", pred["slurm-lab"])]
    if "slurm-phase" in pred:
        cols.append((f"... its timers (phase {pred['slurm-phase']['phase_s']:.1f} s)",
                     pred["slurm-phase"]))
    if "slurm-jitter" in pred:
        cols.append(("... phase +-0.5 s: median [range]", pred["slurm-jitter"]))
    for key, what in (("q_p50", "median"), ("q_mean", "mean")):
        print_kind_table(f"{what} queueing delay, Slurm run", key, r, cols, kinds)


def print_kind_table(title, key, r, cols, kinds):
    heads = [title, "measured"] + [c[0] for c in cols]
    table = []
    for k in kinds:
        m = r.get(key, {}).get(k)
        line = [k, "-" if m is None else f"{m:.2f} s"]
        for _, p in cols:
            v = p.get(key, {}).get(k)
            ratio = f" (x{v / m:.2f})" if v is not None and m else ""
            span = p.get("q_p50_range", {}).get(k) if key == "q_p50" else None
            span = f" [{span[0]:.1f}-{span[1]:.1f}]" if span else ""
            line.append("-" if v is None else f"{v:.2f} s{ratio}{span}")
        table.append(line)
    widths = [max(len(str(x[i])) for x in [heads] + table) for i in range(len(heads))]
    print()
    for line in [heads] + table:
        print("  ".join(str(x).ljust(w) if i == 0 else str(x).rjust(w)
                        for i, (x, w) in enumerate(zip(line, widths))))


def print_mixed(results, pred):
    kinds = [k for k in KIND_ORDER if k != "realtime" and any(
        k in r["q_p50"] for r in results.values())]
    cols = []
    for which in ("slurm", "airtime"):
        if which in results:
            cols.append((f"{which} (measured)", results[which], None))
        cols.append((f"{which} (sim predicts)", None, pred[which]))
        if which == "slurm":
            cols.append(("sim: the lab's Slurm", None, pred["slurm-lab"]))
            if "slurm-phase" in pred:
                cols.append(("sim: ... its timers", None, pred["slurm-phase"]))

    def cell(r, p, key, k=None):
        if r is not None:
            if key == "return":
                return f"{r['replayed']['return']:.1f}"
            v = r[key] if k is None else r[key].get(k)
        else:
            if key == "return":
                return f"{p['return']:.1f}"
            if key not in ("q_p50", "q_p99"):
                return ""
            v = p[key].get(k)
        if v is None:
            return "-"
        return f"{v:.2f}" if isinstance(v, float) else str(v)

    rows = [("return per GPU-hour (airtime's ledger)", "return", None),
            ("jobs started / completed", None, None),
            ("makespan, s", "makespan_s", None)]
    rows += [(f"queueing delay p50 / p99, {k}, s", "q", k) for k in kinds]
    rows += [("service: requests served in its SLO", "slo", None),
             ("replicas' time to start after a rise, s", "rep", None),
             ("GPUs held, mean (of 128)", "gpus_mean", None),
             ("runs requeued", "requeued_runs", None),
             ("jobs that ran twice at once (marks)", "twice", None),
             ("observed runs the replay could not place", "missed", None)]
    table = []
    for label, key, k in rows:
        line = [label]
        for _, r, p in cols:
            if key == "q":
                line.append(f"{cell(r, p, 'q_p50', k)} / {cell(r, p, 'q_p99', k)}")
            elif key is None:
                line.append(f"{r['started']} / {r['completed']}" if r else "")
            elif key == "slo":
                v = (r["replayed"] if r else p)["slo"]
                line.append("-" if v is None else f"{100 * v:.1f}%")
            elif key == "twice":
                line.append(str(len(r["ran_twice"])) if r else "")
            elif key == "missed":
                line.append(str(len(r["replay_missed"])) if r else "")
            elif key == "rep":
                line.append(", ".join("-" if v is None else f"{v:.2f}"
                                      for v in r["replica_start_s"]) if r else "")
            else:
                line.append(cell(r, p, key))
        table.append(line)
    heads = ["", *(c[0] for c in cols)]
    widths = [max(len(str(x[i])) for x in [heads] + table) for i in range(len(heads))]
    for line in [heads] + table:
        print("  ".join(str(x).ljust(w) if i == 0 else str(x).rjust(w)
                        for i, (x, w) in enumerate(zip(line, widths))))
    if "airtime" in results and results["airtime"].get("daemon_value") is not None:
        ra = results["airtime"]
        print(f"\nairtime's daemon, its own ledger: value {ra['daemon_value']:.1f}, "
              f"{ra['daemon_return']:.1f}/GPU-h over its own span (from its start); the replay of "
              f"its marks: value {ra['replayed']['value']:.1f}")
    if "slurm" in results:
        print_slurm_medians(results["slurm"], pred, kinds)
    print("\nTargets (issue 21):")
    if "slurm" in results and "airtime" in results:
        s, t = results["slurm"]["replayed"]["return"], results["airtime"]["replayed"]["return"]
        margin = pct(t, s)
        pmargin = pct(pred["airtime"]["return"], pred["slurm"]["return"])
        ok = t >= s and margin >= pmargin - 5
        print(f"  return: airtime {t:.1f} vs Slurm {s:.1f} per GPU-hour, margin {margin:+.1f}%;"
              f" the simulator predicts {pmargin:+.1f}%: {'met' if ok else 'NOT met'}"
              f" (airtime >= Slurm, and margin >= prediction - 5 points)")
    checks = [("slurm", "slurm", "`slurm`"), ("slurm", "slurm-lab", "the lab's Slurm"),
              ("slurm", "slurm-phase", "the lab's Slurm and its timers"),
              ("slurm", "slurm-jitter", "the lab's Slurm, its timers +-0.5 s"),
              ("airtime", "airtime", "`airtime`")]
    for which, key, label in checks:
        if which not in results or key not in pred:
            continue
        r, p = results[which], pred[key]
        errs = [("return", pct(p["return"], r["replayed"]["return"]))]
        for k in kinds:
            errs.append((f"{k} p50", pct(p["q_p50"].get(k), r["q_p50"].get(k))))
        bad = [f"{n} {e:+.0f}%" for n, e in errs if e is None or abs(e) > 10]
        print(f"  fidelity ({which} run, sim {label}): the prediction's error: "
              + ", ".join(f"{n} {'-' if e is None else f'{e:+.0f}%'}" for n, e in errs)
              + f": {'met' if not bad else 'NOT met'} (each within 10%)")


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
    server_arg_help = ("one more argument for airtime server (repeatable), e.g."
                       " --server-arg=--slurm-submitters=1")
    b.add_argument("--server-arg", action="append", default=[], metavar="ARG",
                   help=server_arg_help)
    b.add_argument("--json", help="write every figure to this file")
    b.add_argument("--stop-lab", action="store_true", help="stop and purge the lab at the end")
    m = sub.add_parser("mixed", help="the mixed workload with a realtime service, Slurm alone"
                       " and airtime, with the simulator's prediction")
    m.add_argument("--jobs", type=int, default=300, help="jobs (default 300)")
    m.add_argument("--span", type=float, default=150,
                   help="seconds over which the jobs are submitted (default 150)")
    m.add_argument("--horizon", type=float, default=300,
                   help="seconds each run lasts and is counted over (default 300)")
    m.add_argument("--seed", type=int, default=1, help="the jobs (default 1)")
    m.add_argument("--runs", default="slurm,airtime", help="which runs, in order")
    m.add_argument("--poll-ms", type=int, default=200, help="airtime's --slurm-poll-ms")
    m.add_argument("--policy", default="airtime", help="airtime's --policy")
    m.add_argument("--airtime", default=os.path.join(ROOT, "build/src/airtime/cli/airtime"))
    m.add_argument("--server-arg", action="append", default=[], metavar="ARG",
                   help=server_arg_help)
    m.add_argument("--json", help="write every figure to this file")
    m.add_argument("--stop-lab", action="store_true", help="stop and purge the lab at the end")
    a = ap.parse_args()
    a.lab = os.environ.get("AIRTIME_SLURM_DIR", "/tmp/airtime-bench-lab")
    a.port = int(os.environ.get("AIRTIME_SLURM_PORT", "8817"))
    a.nodes = int(os.environ.get("AIRTIME_SLURM_NODES", "16"))
    a.runs = [r for r in a.runs.split(",") if r]
    for r in a.runs:
        if r not in ("slurm", "airtime"):
            die(f"--runs: '{r}' is neither slurm nor airtime")
    if a.what == "burst":
        burst(a)
    else:
        mixed(a)


if __name__ == "__main__":
    main()
