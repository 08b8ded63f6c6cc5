#!/usr/bin/env python3
"""Writes testdata/v0.0.40/ and testdata/v0.0.41/ from the answers recorded in testdata/v0.0.38/.

The lab runs Debian 12's Slurm 22.05, which serves v0.0.38 only, so the newer versions'
samples are the same lab's answers rewritten into the shapes that Slurm's own data_parser
writes for them (src/plugins/data_parser/v0.0.40/parsers.c at slurm-23-11-11-1 and
v0.0.41/parsers.c at slurm-24-05-8-1; api_v0_0_40.cc lists the differences). Only the fields
airtime reads are rewritten; the others keep their v0.0.38 form. Run from anywhere:

  python3 src/airtime/slurm/testdata/derive_v0_0_4x.py
"""

import copy
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
RELEASES = {"v0.0.40": ("23", "11", "10"), "v0.0.41": ("24", "05", "8")}
NO_VAL_FIELDS = ("priority", "submit_time", "start_time", "end_time", "eligible_time",
                 "accrue_time", "time_limit", "preempt_time", "suspend_time")


def no_val(v):
    if v is None:
        return {"set": False, "infinite": False, "number": 0}
    return {"set": True, "infinite": False, "number": v}


def meta(version):
    major, minor, micro = RELEASES[version]
    return {"plugin": {"type": "openapi/slurmctld", "name": "Slurm OpenAPI slurmctld",
                       "data_parser": "data_parser/" + version, "accounting_storage": ""},
            "client": {"source": "[localhost]:41234", "user": "root", "group": "root"},
            "command": [],
            "slurm": {"version": {"major": major, "minor": minor, "micro": micro},
                      "release": "%s.%s.%s" % (major, minor, micro), "cluster": "lab"}}


def job(j, version):
    out = copy.deepcopy(j)
    for key in NO_VAL_FIELDS:
        if key in out and not isinstance(out[key], dict):
            out[key] = no_val(out[key])
    out["job_state"] = [out["job_state"]]
    code = out.get("exit_code", 0)
    if code & 0x7f:
        out["exit_code"] = {"status": ["SIGNALED"], "return_code": no_val(None),
                            "signal": {"id": no_val(code & 0x7f), "name": ""}}
    else:
        rc = code >> 8
        out["exit_code"] = {"status": ["ERROR" if rc else "SUCCESS"], "return_code": no_val(rc),
                            "signal": {"id": no_val(None), "name": ""}}
    res = out.get("job_resources") or {}
    alloc = res.get("allocated_nodes", [])
    if version == "v0.0.40":
        out["job_resources"] = res
    elif res:
        out["job_resources"] = {
            "select_type": ["CPU"],
            "nodes": {"count": len(alloc), "select_type": ["AVAILABLE"], "list": res.get("nodes", ""),
                      "whole": False,
                      "allocation": [{"index": i, "name": n["nodename"],
                                      "cpus": {"count": 1, "used": 0},
                                      "memory": {"used": 0, "allocated": n.get("memory_allocated", 0)},
                                      "sockets": []} for i, n in enumerate(alloc)]},
            "cpus": res.get("allocated_cores", 0), "threads_per_core": no_val(1)}
    else:
        out.pop("job_resources", None)  # a pending job's: not written
    return out


def node(n):
    out = copy.deepcopy(n)
    out["state"] = [out["state"].upper()] + out.pop("state_flags", [])
    return out


def partition(p):
    return {"name": p["name"],
            "nodes": {"allowed_allocation": "", "configured": p["nodes"], "total": p["total_nodes"]},
            "priority": {"job_factor": p["priority_job_factor"], "tier": p["priority_tier"]},
            "partition": {"state": [p["state"]]},
            "cpus": {"task_binding": 0, "total": p["total_cpus"]}}


def convert(name, body, version):
    out = copy.deepcopy(body)
    out["meta"] = meta(version)
    out["warnings"] = []
    if "jobs" in out:
        out["jobs"] = [job(j, version) for j in out["jobs"]]
    if "nodes" in out:
        out["nodes"] = [node(n) for n in out["nodes"]]
    if "partitions" in out:
        out["partitions"] = [partition(p) for p in out["partitions"]]
    if "pings" in out:
        out["pings"] = [{"hostname": p["hostname"], "pinged": p["ping"], "responding": True,
                         "latency": 321, "mode": p["mode"], "primary": True}
                        for p in out["pings"]]
    if name == "submit_held.json":  # a notice, no longer an error
        out["warnings"] = [{"description": e["error"], "source": "slurm_submit_batch_job()"}
                           for e in out["errors"]]
        out["errors"] = []
        out["step_id"] = "batch"
    return out


def main():
    src = os.path.join(HERE, "v0.0.38")
    for version in RELEASES:
        dst = os.path.join(HERE, version)
        os.makedirs(dst, exist_ok=True)
        for name in sorted(os.listdir(src)):
            if not name.endswith(".json") or name in ("openapi_paths.json", "submit_bad_signal.json"):
                continue
            with open(os.path.join(src, name), encoding="utf-8") as f:
                body = json.load(f)
            with open(os.path.join(dst, name), "w", encoding="utf-8") as f:
                json.dump(convert(name, body, version), f, indent=1, sort_keys=True)
                f.write("\n")


if __name__ == "__main__":
    main()
