#!/usr/bin/env python3
"""PyTorch workloads for airtime on a real GPU (the H200 check, scripts/device/h200-check.sh).

One script, several kinds (--kind):
  train     matmul steps in a loop; a checkpoint (step count and a tensor) in
            $AIRTIME_CHECKPOINT_DIR every --checkpoint-every steps, resumed on restart
            ("resumed from step K"); on SIGTERM it checkpoints and exits 0.
  embed     a short batch of matmuls on a small share of the GPU (run it with gpu_fraction:
            under airtime it is an MPS client with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE set).
  quantize  allocates --memory-gib of GPU memory for a few seconds (a quantization burst).
  serve     a realtime replica: keeps the GPU lightly busy and serves GET /metrics on $PORT
            with a gauge demo_requests_in_flight of --in-flight.
It prints what CUDA device it sees (CUDA_VISIBLE_DEVICES names the GPU by UUID).
"""

import argparse
import http.server
import os
import signal
import sys
import threading
import time

import torch

stop = False


def on_term(signum, frame):
    global stop
    stop = True


def checkpoint_path():
    d = os.environ.get("AIRTIME_CHECKPOINT_DIR", ".")
    os.makedirs(d, exist_ok=True)
    return os.path.join(d, "train.pt")


def train(args, dev):
    path = checkpoint_path()
    step = 0
    w = torch.randn(8192, 8192, device=dev)
    if os.path.exists(path):
        state = torch.load(path, map_location=dev)
        step, w = state["step"], state["w"]
        print(f"resumed from step {step}", flush=True)
    x = torch.randn(8192, 8192, device=dev)
    while step < args.steps and not stop:
        for _ in range(10):
            x = torch.tanh(x @ w)
        torch.cuda.synchronize()
        step += 1
        if step % args.checkpoint_every == 0:
            torch.save({"step": step, "w": w}, path + ".tmp")
            os.replace(path + ".tmp", path)
    torch.save({"step": step, "w": w}, path + ".tmp")
    os.replace(path + ".tmp", path)
    print(("stopped at step " if stop else "finished at step ") + str(step), flush=True)


def embed(args, dev):
    x = torch.randn(4096, 1024, device=dev)
    w = torch.randn(1024, 1024, device=dev)
    t0 = time.time()
    n = 0
    while time.time() - t0 < args.seconds and not stop:
        x = torch.nn.functional.normalize(x @ w)
        torch.cuda.synchronize()
        n += 1
    print(f"embedded {n} batches; MPS thread share "
          f"{os.environ.get('CUDA_MPS_ACTIVE_THREAD_PERCENTAGE', 'none')}", flush=True)


def quantize(args, dev):
    n = int(args.memory_gib * (1 << 30) / 2)
    buf = torch.empty(n, dtype=torch.float16, device=dev)
    buf.uniform_()
    q = (buf * 127).to(torch.int8)
    torch.cuda.synchronize()
    time.sleep(args.seconds)
    print(f"quantized {n} values ({args.memory_gib} GiB fp16) -> {q.numel()} int8", flush=True)


def serve(args, dev):
    class Metrics(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = (f"# TYPE demo_requests_in_flight gauge\n"
                    f"demo_requests_in_flight {args.in_flight}\n").encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    srv = http.server.HTTPServer(("127.0.0.1", int(os.environ.get("PORT", "0"))), Metrics)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    x = torch.randn(2048, 2048, device=dev)
    while not stop:
        x = torch.tanh(x @ x.T / 2048)
        torch.cuda.synchronize()
        time.sleep(0.05)
    srv.shutdown()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kind", choices=["train", "embed", "quantize", "serve"], required=True)
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--checkpoint-every", type=int, default=50)
    p.add_argument("--seconds", type=float, default=20)
    p.add_argument("--memory-gib", type=float, default=60)
    p.add_argument("--in-flight", type=float, default=4)
    args = p.parse_args()
    signal.signal(signal.SIGTERM, on_term)
    print(f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')} "
          f"devices={torch.cuda.device_count()} "
          f"name={torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'none'}",
          flush=True)
    if not torch.cuda.is_available():
        sys.exit("no CUDA device visible")
    dev = torch.device("cuda:0")
    {"train": train, "embed": embed, "quantize": quantize, "serve": serve}[args.kind](args, dev)


if __name__ == "__main__":
    main()
