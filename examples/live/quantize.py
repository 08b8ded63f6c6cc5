#!/usr/bin/env python3
"""A stand-in quantization job for airtime's live demo (python3 standard library only).

A short burst (--layers x --layer-seconds, about 8 s by default) that reports a large GPU
memory footprint in $AIRTIME_TELEMETRY_FILE, as loading a full-precision model to quantize
it does: airtime shows it in `airtime gpus` (MEM USED) and in /metrics
(airtime_gpu_memory_used_bytes). Exits 0 when done, and on SIGTERM.
"""

import argparse
import os
import signal
import sys
import time


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layers", type=int, default=32)
    p.add_argument("--layer-seconds", type=float, default=0.25)
    p.add_argument("--memory-mib", type=int, default=71680, help="reported GPU memory (70 GiB)")
    args = p.parse_args()
    telemetry = os.environ.get("AIRTIME_TELEMETRY_FILE")
    stop = []
    signal.signal(signal.SIGTERM, lambda signum, _: stop.append(signum))

    for layer in range(1, args.layers + 1):
        if stop:
            print(f"SIGTERM at layer {layer}: stopping", flush=True)
            return 0
        if telemetry:  # the weights fill the GPU while the layers are quantized
            with open(telemetry, "a") as f:
                f.write(f"utilization=1.0 memory_mib={args.memory_mib}\n")
        time.sleep(args.layer_seconds)
        if layer % 8 == 0:
            print(f"quantized layer {layer}/{args.layers} to int4", flush=True)
    if telemetry:  # memory freed at the end
        with open(telemetry, "a") as f:
            f.write("utilization=0.0 memory_mib=0\n")
    print("quantize done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
