#!/usr/bin/env python3
"""Training throughput of one model family, for measuring interference between co-located
workloads on a real GPU (scripts/device/interference-check.sh runs it, alone and in pairs
of MPS clients, and compares with airtime's table in src/airtime/model/interference_gavel.inc).

It trains one model on synthetic random data (made on the GPU, fresh each step) in a loop:
  resnet50        ResNet-50 (v1.5: bottleneck blocks [3, 4, 6, 3], stride on the 3x3 conv),
                  224x224 images, batch 64, 1000 classes; channels_last, bf16 autocast,
                  SGD with momentum. A sample is an image.
  transformer     nn.Transformer encoder-decoder as in Gavel's translation model: d_model 512,
                  6+6 layers, 8 heads, feed-forward 2048, source and target length 64,
                  batch 64, vocabulary 32000; bf16 autocast, Adam. A sample is a sentence pair.
  lm              2-layer LSTM language model as PyTorch's word_language_model "large":
                  embedding and hidden 1500, tied weights, dropout 0.65, vocabulary 33278,
                  bptt 35, batch 20; fp32 (TF32 matmuls), SGD lr 20 with gradients clipped
                  to 0.25. A sample is a sequence of 35 tokens.
  recommendation  NCF-style, embedding-heavy: user and item tables of 4M and 1M rows x 64
                  (dense gradients, so each step streams the tables through Adam: memory-bound),
                  an MLP 256-128-64-1 over the two embeddings side by side, batch 8192, BCE
                  loss; fp32. A sample is a (user, item) interaction.
Each needs a few GiB of GPU memory (well under 30 GiB). cuDNN autotuning and TF32 are on.

Timing: after building the model it runs one step (CUDA, cuDNN and allocator start-up), then
sleeps until --start-at (a wall-clock epoch; two processes given the same one measure the
same window), trains --warmup seconds, then counts the samples of the steps it runs in the
next --seconds, with torch.cuda.synchronize() at both ends of that window.

It prints one JSON line, and appends it to --out when given:
  {"model", "samples_per_s", "steps", "thread_pct" (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, or
   null), "device" (the GPU's name), "tag" (--tag, or null), "batch", "sm_count" (the SM count
   the device reports: under an MPS thread limit it may show the limit, or may not),
   "window" ([start, end], wall-clock epochs of the measure window), "init_s" (from the start
   of the process to the end of the first step), "late_s" (how late for --start-at it was
   ready; 0 when on time or not given)}

Usage: colocate.py --model resnet50 [--seconds 12] [--warmup 4] [--start-at EPOCH]
                   [--tag LABEL] [--out FILE]
"""

import argparse
import json
import math
import os
import sys
import time

STARTED = time.time()  # before importing torch, whose import is part of the start-up

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class Bottleneck(nn.Module):
    def __init__(self, cin, width, stride):
        super().__init__()
        cout = width * 4
        self.body = nn.Sequential(
            nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(inplace=True),
            nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width),
            nn.ReLU(inplace=True),
            nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.skip = nn.Identity()
        if stride != 1 or cin != cout:
            self.skip = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x):
        return F.relu(self.body(x) + self.skip(x))


def resnet50(classes=1000):
    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
              nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for stage, (width, blocks) in enumerate(zip((64, 128, 256, 512), (3, 4, 6, 3))):
        for block in range(blocks):
            layers.append(Bottleneck(cin, width, 2 if stage > 0 and block == 0 else 1))
            cin = width * 4
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]
    return nn.Sequential(*layers)


class Translator(nn.Module):
    def __init__(self, vocab=32000, d=512, length=64):
        super().__init__()
        self.scale = math.sqrt(d)
        self.src = nn.Embedding(vocab, d)
        self.tgt = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.randn(1, length, d) * 0.02)
        self.core = nn.Transformer(d, 8, 6, 6, 2048, dropout=0.1, batch_first=True)
        self.out = nn.Linear(d, vocab)

    def forward(self, src, tgt, causal):
        return self.out(self.core(self.src(src) * self.scale + self.pos,
                                  self.tgt(tgt) * self.scale + self.pos, tgt_mask=causal))


class LstmLm(nn.Module):
    def __init__(self, vocab=33278, size=1500, layers=2, dropout=0.65):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.emb = nn.Embedding(vocab, size)
        self.rnn = nn.LSTM(size, size, layers, dropout=dropout)
        self.out = nn.Linear(size, vocab)
        self.out.weight = self.emb.weight

    def forward(self, x, state):
        y, state = self.rnn(self.drop(self.emb(x)), state)
        return self.out(self.drop(y)), state


class Ncf(nn.Module):
    def __init__(self, users=4_000_000, items=1_000_000, dim=64):
        super().__init__()
        self.user = nn.Embedding(users, dim)
        self.item = nn.Embedding(items, dim)
        self.mlp = nn.Sequential(nn.Linear(2 * dim, 256), nn.ReLU(), nn.Linear(256, 128),
                                 nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, users, items):
        return self.mlp(torch.cat([self.user(users), self.item(items)], 1)).squeeze(1)


# Each builder returns (batch size, step): one training step on a fresh synthetic batch.

def build_resnet50(dev):
    batch = 64
    model = resnet50().to(dev, memory_format=torch.channels_last)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    x = torch.empty(batch, 3, 224, 224, device=dev).to(memory_format=torch.channels_last)
    y = torch.empty(batch, dtype=torch.long, device=dev)

    def step():
        x.normal_()
        y.random_(0, 1000)
        with torch.autocast(dev.type, dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return batch, step


def build_transformer(dev):
    batch, length, vocab = 64, 64, 32000
    model = Translator(vocab, 512, length).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    causal = torch.triu(torch.full((length, length), float("-inf"), device=dev), 1)
    src = torch.empty(batch, length, dtype=torch.long, device=dev)
    tgt = torch.empty(batch, length + 1, dtype=torch.long, device=dev)

    def step():
        src.random_(0, vocab)
        tgt.random_(0, vocab)
        with torch.autocast(dev.type, dtype=torch.bfloat16):
            logits = model(src, tgt[:, :-1], causal)
            loss = F.cross_entropy(logits.reshape(-1, vocab), tgt[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return batch, step


def build_lm(dev):
    batch, bptt, vocab, size, layers = 20, 35, 33278, 1500, 2
    model = LstmLm(vocab, size, layers).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=20)
    tokens = torch.empty(bptt + 1, batch, dtype=torch.long, device=dev)
    state = tuple(torch.zeros(layers, batch, size, device=dev) for _ in range(2))

    def step():
        nonlocal state
        tokens.random_(0, vocab)
        hidden = tuple(h.detach() for h in state)  # truncated backpropagation through time
        logits, state = model(tokens[:-1], hidden)
        loss = F.cross_entropy(logits.reshape(-1, vocab), tokens[1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        opt.step()
    return batch, step


def build_recommendation(dev):
    batch = 8192
    model = Ncf().to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    users = torch.empty(batch, dtype=torch.long, device=dev)
    items = torch.empty(batch, dtype=torch.long, device=dev)
    labels = torch.empty(batch, device=dev)

    def step():
        users.random_(0, model.user.num_embeddings)
        items.random_(0, model.item.num_embeddings)
        labels.bernoulli_(0.5)
        loss = F.binary_cross_entropy_with_logits(model(users, items), labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return batch, step


BUILDERS = {"resnet50": build_resnet50, "transformer": build_transformer, "lm": build_lm,
            "recommendation": build_recommendation}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", choices=sorted(BUILDERS), required=True)
    p.add_argument("--seconds", type=float, default=12, help="measure window (s)")
    p.add_argument("--warmup", type=float, default=4, help="training before the window (s)")
    p.add_argument("--start-at", type=float, help="wall-clock epoch to start the warm-up at")
    p.add_argument("--tag", help="a label copied into the JSON line")
    p.add_argument("--out", help="a file to append the JSON line to")
    args = p.parse_args()
    if not torch.cuda.is_available():
        sys.exit("no CUDA device visible")
    dev = torch.device("cuda:0")
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    batch, step = BUILDERS[args.model](dev)
    step()
    torch.cuda.synchronize()
    ready = time.time()
    late = 0.0
    if args.start_at is not None:
        late = max(0.0, ready - args.start_at)
        time.sleep(max(0.0, args.start_at - ready))
    window_start = time.time() + args.warmup
    while time.time() < window_start:
        step()
    torch.cuda.synchronize()
    t0 = time.time()
    steps = 0
    while time.time() < t0 + args.seconds:
        step()
        steps += 1
    torch.cuda.synchronize()
    t1 = time.time()

    result = {
        "model": args.model,
        "samples_per_s": round(steps * batch / (t1 - t0), 2),
        "steps": steps,
        "thread_pct": os.environ.get("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"),
        "device": torch.cuda.get_device_name(dev),
        "tag": args.tag,
        "batch": batch,
        "sm_count": torch.cuda.get_device_properties(dev).multi_processor_count,
        "window": [round(t0, 3), round(t1, 3)],
        "init_s": round(ready - STARTED, 2),
        "late_s": round(late, 2),
    }
    line = json.dumps(result)
    print(line, flush=True)
    if args.out:
        with open(args.out, "a") as f:
            f.write(line + "\n")


if __name__ == "__main__":
    main()
