#!/usr/bin/env python3
"""Slurm's GPUs for airtime's running jobs, beside the GPUs airtime records for each run.

For each job that Slurm lists as RUNNING and whose name is airtime's (airtime.WORKLOAD.rRUN),
prints the GPU indices Slurm gave it (`scontrol -o -d show job`: GRES=gpu:TYPE:N(IDX:...)
per node) and the GPUs that `airtime gpus` shows run RUN holding, and whether they are the
same. Then one line with the totals: the GPUs Slurm's running airtime jobs hold, the GPUs
airtime counts allocated, and any GPU or run that appears twice. Exits 0 when every job's
GPUs match, 1 when one differs (a job Slurm started less than a poll ago may: airtime adopts
Slurm's indices at its next poll), 2 when scontrol or airtime cannot be read.

Usage: scripts/slurm-job-gpus.py AIRTIME_BINARY
       (with SLURM_CONF set, and AIRTIME_ADDR and AIRTIME_TOKEN for the airtime CLI; used by
       scripts/live-demo.sh --slurm)
"""

import json
import re
import subprocess
import sys
from collections import Counter

JOB_NAME = re.compile(r"^airtime\..+\.r(\d+)$")


def expand_indices(text):
    """'0-1,4' -> [0, 1, 4]"""
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def expand_hosts(text):
    """'n1' -> ['n1']; 'n[1-2,4]' -> ['n1', 'n2', 'n4'] (scontrol -d groups the nodes of a
    job that got the same CPUs and GPUs); one bracket, as the lab's and most sites' names."""
    m = re.fullmatch(r"([^\[]*)\[([0-9,-]+)\](.*)", text)
    if not m:
        return text.split(",")
    return [f"{m.group(1)}{i}{m.group(3)}" for i in expand_indices(m.group(2))]


def slurm_jobs(scontrol_text):
    """The running airtime jobs: [(job id, name, run id, ['slurm:NODE:INDEX', ...])]."""
    jobs = []
    for line in scontrol_text.splitlines():
        # A job's comment is free text and comes after its GRES: read the fields before it.
        head = line.split(" Comment=", 1)[0]
        job = re.match(r"JobId=(\d+) JobName=(\S*)", head)
        state = re.search(r" JobState=(\S+)", head)
        if not job or not state or state.group(1) != "RUNNING":
            continue
        run = JOB_NAME.match(job.group(2))
        if not run:
            continue  # a foreign job: airtime lists it apart
        gpus = []
        for node, gres in re.findall(r" Nodes=(\S+) CPU_IDs=\S+ Mem=\S+ GRES=(\S*)", head):
            for idx in re.findall(r"\(IDX:([0-9,-]+)\)", gres):
                gpus.extend(f"slurm:{host}:{i}" for host in expand_hosts(node)
                            for i in expand_indices(idx))
        jobs.append((int(job.group(1)), job.group(2), int(run.group(1)), sorted(gpus)))
    return jobs


def airtime_runs(gpus_json):
    """{run id: ['slurm:NODE:INDEX', ...]} from `airtime gpus --json`."""
    runs = {}
    for gpu in gpus_json.get("gpus", []):
        for alloc in gpu.get("allocations", []):
            runs.setdefault(alloc.get("run"), []).append(gpu["uuid"])
    return {run: sorted(ids) for run, ids in runs.items()}


def short(ids):
    """['slurm:n1:0', 'slurm:n1:1'] -> 'n1:0,1'"""
    by_node = {}
    for gid in ids:
        _, node, index = gid.split(":")
        by_node.setdefault(node, []).append(index)
    return " ".join(f"{node}:{','.join(ix)}" for node, ix in by_node.items()) or "-"


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().split("\n\n")[-1], file=sys.stderr)
        return 2
    try:
        scontrol = subprocess.run(["scontrol", "-o", "-d", "show", "job"], check=True,
                                  capture_output=True, text=True, timeout=10).stdout
        gpus = json.loads(subprocess.run([sys.argv[1], "gpus", "--json"], check=True,
                                         capture_output=True, text=True, timeout=10).stdout)
    except (OSError, subprocess.SubprocessError, ValueError) as e:
        print(f"slurm-job-gpus: cannot read Slurm's jobs or airtime's GPUs: {e}", file=sys.stderr)
        return 2
    jobs = slurm_jobs(scontrol)
    runs = airtime_runs(gpus)
    rows = [("JOB", "NAME", "SLURM'S GPUS", "AIRTIME'S GPUS", "")]
    differ = 0
    for job_id, name, run, ids in jobs:
        ours = runs.get(run, [])
        same = ours == ids
        differ += not same
        rows.append((str(job_id), name, short(ids), short(ours), "same" if same else "DIFFERS"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    slurm_gpus = [g for *_, ids in jobs for g in ids]
    twice = sorted(g for g, n in Counter(slurm_gpus).items() if n > 1)
    runs_twice = sorted(r for r, n in Counter(run for _, _, run, _ in jobs).items() if n > 1)
    print(f"{len(jobs)} running airtime job(s) hold {len(slurm_gpus)} GPU(s) in Slurm; "
          f"airtime counts {sum(len(v) for v in runs.values())} allocated; "
          f"{differ} job(s) differ; GPUs held twice: {' '.join(twice) or 'none'}; "
          f"runs in two jobs: {' '.join(map(str, runs_twice)) or 'none'}")
    return 1 if differ or twice or runs_twice else 0


if __name__ == "__main__":
    sys.exit(main())
