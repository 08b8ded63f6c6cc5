#!/usr/bin/env python3
"""A stand-in "model server" replica for airtime's live demo (python3 standard library only).

It serves on $PORT (airtime gives every replica of a realtime workload its own port):
  GET /metrics   Prometheus text with the gauge demo_requests_in_flight (this replica's
                 requests in flight), which airtime scrapes to learn the service's demand
  GET /          a one-line JSON "answer", so that curl has something to call
The load follows a replayed request curve, load_curve.csv beside this file: requests per
30 s of the Azure LLM inference trace 2023 (code service), derived from the excerpt the
project ships in tests/data/traces/azure-llm-2023/azure_code_10min.csv. Source:
Azure/AzurePublicDataset (AzureLLMInferenceTrace_code.csv), licensed CC-BY-4.0.

Time is compressed: by default one trace minute passes every 10 s (--speedup 6), starting
at trace second 170, just before the excerpt's first burst, and the curve loops.

Several replicas run at once. A load balancer would spread the requests over them; here
each replica counts the live replicas (heartbeat files in $AIRTIME_CHECKPOINT_DIR, which
all replicas of a workload share) and reports its share, so that the sum airtime scrapes
over the replicas is the whole service's load. By Little's law the requests in flight are
rate x latency; airtime divides by the workload's slo.latency_ms to get the rate back, so
--latency-ms must match it.

It appends "utilization=U memory_mib=M" lines to $AIRTIME_TELEMETRY_FILE (on fake GPUs that
is the GPU's telemetry) and exits 0 on SIGTERM.
"""

import argparse
import csv
import http.server
import json
import os
import signal
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def load_curve(path):
    """[(trace_offset_s, rps)] from load_curve.csv."""
    with open(path, newline="") as f:
        return [(float(r["trace_offset_s"]), float(r["rps"])) for r in csv.DictReader(f)]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--curve", default=os.path.join(HERE, "load_curve.csv"))
    p.add_argument("--speedup", type=float, default=6.0, help="trace seconds per wall second")
    p.add_argument("--start", type=float, default=170.0, help="trace second to start at")
    p.add_argument("--latency-ms", type=float, default=500.0, help="the workload's slo.latency_ms")
    p.add_argument("--capacity-rps", type=float, default=3.0, help="the workload's slo.capacity_rps")
    args = p.parse_args()

    port = int(os.environ.get("PORT", "8000"))
    run_id = os.environ.get("AIRTIME_RUN_ID", str(os.getpid()))
    telemetry = os.environ.get("AIRTIME_TELEMETRY_FILE")
    # Run by hand (no airtime): a scratch directory stands in for the checkpoint directory.
    shared = os.environ.get("AIRTIME_CHECKPOINT_DIR",
                            os.path.join(tempfile.gettempdir(), "airtime-demo-service"))
    replicas_dir = os.path.join(shared, "replicas")
    os.makedirs(replicas_dir, exist_ok=True)  # airtime does not create the directory itself
    heartbeat = os.path.join(replicas_dir, run_id)

    curve = load_curve(args.curve)
    step = curve[1][0] - curve[0][0]
    length = curve[-1][0] + step

    # The replay clock starts when the first replica of the service starts (kept in the
    # shared directory), so that every replica reads the same point of the curve.
    epoch_file = os.path.join(shared, "replay_epoch")
    try:
        with open(epoch_file, "x") as f:
            f.write(f"{time.time()}\n")
    except FileExistsError:
        pass
    with open(epoch_file) as f:
        epoch = float(f.read())

    def service_rps():
        t = (args.start + (time.time() - epoch) * args.speedup) % length
        return curve[min(int(t // step), len(curve) - 1)][1]

    def live_replicas():
        now = time.time()
        n = 0
        for name in os.listdir(replicas_dir):
            try:
                n += now - os.path.getmtime(os.path.join(replicas_dir, name)) < 3.0
            except FileNotFoundError:
                pass
        return max(n, 1)

    def my_in_flight():
        return service_rps() * args.latency_ms / 1000.0 / live_replicas()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/metrics":
                body = (
                    "# HELP demo_requests_in_flight Requests this replica is serving now.\n"
                    "# TYPE demo_requests_in_flight gauge\n"
                    f"demo_requests_in_flight {my_in_flight():.4f}\n"
                ).encode()
                ctype = "text/plain; version=0.0.4"
            else:
                body = (json.dumps({"replica": run_id, "completion": "def hello(): ..."}) + "\n").encode()
                ctype = "application/json"
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, fmt, *a):  # keep stderr.log quiet
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"replica {run_id} serving on 127.0.0.1:{port} "
          f"(GPUs {os.environ.get('CUDA_VISIBLE_DEVICES', '-')})", flush=True)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    last_print = 0.0
    while not stop.is_set():
        with open(heartbeat, "w") as f:  # "I am alive", for the other replicas
            f.write(f"{port}\n")
        rps = service_rps() / live_replicas()
        util = min(1.0, rps / args.capacity_rps)
        if telemetry:
            with open(telemetry, "a") as f:
                f.write(f"utilization={util:.2f} memory_mib={18000 + int(4000 * util)}\n")
        if time.time() - last_print >= 5:
            print(f"service load {service_rps():.2f} rps over {live_replicas()} replica(s)", flush=True)
            last_print = time.time()
        stop.wait(1.0)

    # SIGTERM: airtime stopped this replica (scale-down, cancel). Leave cleanly.
    server.shutdown()
    try:
        os.remove(heartbeat)
    except FileNotFoundError:
        pass
    print(f"replica {run_id}: SIGTERM, stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
