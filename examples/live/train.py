#!/usr/bin/env python3
"""A stand-in training job with checkpoints, for airtime's live demo (standard library only).

It runs --steps steps of --step-seconds each (a sleep stands in for the GPU work) and
keeps the checkpoint contract airtime expects of a preemptible job:
  - every --checkpoint-every steps it saves its state to $AIRTIME_CHECKPOINT_DIR/state.json
    (written to a temporary file, then renamed: a crash never leaves half a checkpoint);
    airtime keeps that directory across restarts of the workload;
  - when it starts and finds a checkpoint it resumes from it ("resumed from step K");
  - on SIGTERM (airtime preempting it, or a cancel) it saves a checkpoint at once and exits
    0. Exiting 0 there is fine: airtime knows it asked the job to stop, so the exit is not
    taken as the job's completion. It must finish within the workload's preempt_grace, after
    which airtime sends SIGKILL.
It appends "utilization=U memory_mib=M" lines to $AIRTIME_TELEMETRY_FILE.
"""

import argparse
import json
import math
import os
import signal
import sys
import tempfile
import time


def save(path, state):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(state, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--step-seconds", type=float, default=0.1)
    p.add_argument("--checkpoint-every", type=int, default=50)
    args = p.parse_args()

    ckpt_dir = os.environ.get("AIRTIME_CHECKPOINT_DIR",
                              os.path.join(tempfile.gettempdir(), "airtime-demo-train"))
    os.makedirs(ckpt_dir, exist_ok=True)  # airtime names the directory; the job creates it
    ckpt = os.path.join(ckpt_dir, "state.json")
    telemetry = os.environ.get("AIRTIME_TELEMETRY_FILE")

    stop = []
    signal.signal(signal.SIGTERM, lambda signum, _: stop.append(signum))

    step, loss = 0, 4.0
    if os.path.exists(ckpt):
        with open(ckpt) as f:
            state = json.load(f)
        step, loss = state["step"], state["loss"]
        print(f"resumed from step {step}", flush=True)
    else:
        print("no checkpoint: starting from step 0", flush=True)
    print(f"run {os.environ.get('AIRTIME_RUN_ID', '-')} on GPUs "
          f"{os.environ.get('CUDA_VISIBLE_DEVICES', '-')}", flush=True)

    while step < args.steps:
        if stop:
            save(ckpt, {"step": step, "loss": loss})
            print(f"SIGTERM at step {step}: checkpoint saved, exiting", flush=True)
            return 0
        time.sleep(args.step_seconds)  # the "forward and backward pass"
        step += 1
        loss = 0.3 + 3.7 * math.exp(-step / 200.0)
        if telemetry and step % 10 == 1:
            with open(telemetry, "a") as f:
                f.write("utilization=0.93 memory_mib=61440\n")
        if step % args.checkpoint_every == 0:
            save(ckpt, {"step": step, "loss": loss})
            print(f"step {step}/{args.steps} loss {loss:.3f} (checkpoint saved)", flush=True)

    save(ckpt, {"step": step, "loss": loss})
    print(f"done: {step} steps, final loss {loss:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
