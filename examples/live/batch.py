#!/usr/bin/env python3
"""A stand-in batch inference job for airtime's live demo (python3 standard library only).

It "scores" --items prompts, --item-seconds each (about 20 s by default), printing its
progress to stdout (DATA/runs/N/stdout.log), and exits 0 when all are done: airtime counts
that exit as the workload's completion. It keeps no checkpoint, so a preemption would cost
it its progress. It appends "utilization=U memory_mib=M" lines to $AIRTIME_TELEMETRY_FILE
and exits 0 on SIGTERM (airtime knows it stopped it).
"""

import argparse
import os
import signal
import sys
import time


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--items", type=int, default=40)
    p.add_argument("--item-seconds", type=float, default=0.5)
    args = p.parse_args()
    telemetry = os.environ.get("AIRTIME_TELEMETRY_FILE")
    stop = []
    signal.signal(signal.SIGTERM, lambda signum, _: stop.append(signum))

    print(f"batch: {args.items} items on GPUs {os.environ.get('CUDA_VISIBLE_DEVICES', '-')}",
          flush=True)
    for i in range(1, args.items + 1):
        if stop:
            print(f"SIGTERM after {i - 1} items: stopping (no checkpoint)", flush=True)
            return 0
        time.sleep(args.item_seconds)  # the "inference"
        if telemetry:
            with open(telemetry, "a") as f:
                f.write(f"utilization={0.55 + 0.1 * (i % 3):.2f} memory_mib=24576\n")
        if i % 10 == 0 or i == args.items:
            print(f"scored {i}/{args.items} items", flush=True)
    print("batch done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
