#!/usr/bin/env python3
"""Benchmark: the compiled training step against PyTorch's eager step (not a test).

A GPT-2-style model (test/python/models/torch_models.py GPT, by default 2
layers, hidden 128, 4 heads, sequence 64, vocabulary 512, batch 8) with
AdamW, on the same data, same thread count (--threads, default: all cores;
OMP_NUM_THREADS/OPENBLAS_NUM_THREADS for OUTDIR/train, torch.set_num_threads
for PyTorch):

* Loom: loomc builds OUTDIR/train; the per-step time is
  (time of 2N steps - time of N steps) / N, so process start-up, weight and
  data loading are left out;
* PyTorch: min over --repeat runs of N eager steps (zero_grad, forward,
  backward, optimizer.step) after warm-up steps, in a child process.

Prints steps/s of both and their ratio (goal >= 1.0), and checks that the
first losses agree (relative 1e-4). Never fails on a timing.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("LOOM_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(ROOT / "test" / "python"))
sys.path.insert(0, str(ROOT / "python"))

TORCH_STEPS = """
import sys, time
sys.path.insert(0, {tests!r})
import numpy as np, torch
from models.torch_models import GPT
torch.set_num_threads({threads})
torch.manual_seed(0)
model = GPT(vocab={vocab}, seq={seq}, hidden={hidden}, heads={heads}, layers={layers})
model.load_state_dict(torch.load({state!r}))
ids = torch.from_numpy(np.load({ids!r})); labels = torch.from_numpy(np.load({labels!r}))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
B = {batch}
def step(s):
    rows = [(s * B + i) % len(ids) for i in range(B)]
    opt.zero_grad(); loss = model(ids[rows], labels[rows]); loss.backward(); opt.step()
    return float(loss)
first = step(0)
for s in range(1, 4): step(s)
best = float("inf")
for r in range({repeat}):
    t = time.perf_counter()
    for s in range({steps}): step(s)
    best = min(best, time.perf_counter() - t)
print(first, best)
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--vocab", type=int, default=512)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    args = parser.parse_args()

    import numpy as np
    import torch
    import loom
    from models.torch_models import GPT

    work = Path(tempfile.mkdtemp(prefix="loom-bench-train-"))
    torch.manual_seed(0)
    model = GPT(vocab=args.vocab, seq=args.seq, hidden=args.hidden, heads=args.heads,
                layers=args.layers)
    torch.save(model.state_dict(), work / "state.pt")
    rng = np.random.default_rng(0)
    rows = 4 * args.batch
    ids = rng.integers(0, args.vocab, (rows, args.seq)).astype(np.int64)
    labels = rng.integers(0, args.vocab, (rows, args.seq)).astype(np.int64)
    data = work / "data"
    data.mkdir()
    np.save(data / "ids.npy", ids)
    np.save(data / "labels.npy", labels)
    example = (torch.from_numpy(ids[: args.batch]), torch.from_numpy(labels[: args.batch]))
    m = loom.from_torch(model, example, input_names=["ids", "labels"], workdir=work / "import")
    start = time.perf_counter()
    program = m.compile(optimizer="adamw", lr=1e-3, weight_decay=0.01, outdir=work / "out")
    compile_s = time.perf_counter() - start

    env = dict(os.environ, OMP_NUM_THREADS=str(args.threads),
               OPENBLAS_NUM_THREADS=str(args.threads))

    def run(steps):
        cmd = [str(program.executable), "--data", str(data), "--steps", str(steps),
               "--log", str(work / f"loss{steps}.csv"), "--quiet"]
        t = time.perf_counter()
        subprocess.run(cmd, check=True, env=env)
        return time.perf_counter() - t

    n = args.steps
    loom_step = min((run(2 * n) - run(n)) / n for _ in range(args.repeat))
    loom_first = float((work / f"loss{n}.csv").read_text().splitlines()[1].split(",")[1])

    code = TORCH_STEPS.format(tests=str(ROOT / "test" / "python"), threads=args.threads,
                              vocab=args.vocab, seq=args.seq, hidden=args.hidden,
                              heads=args.heads, layers=args.layers, state=str(work / "state.pt"),
                              ids=str(data / "ids.npy"), labels=str(data / "labels.npy"),
                              batch=args.batch, repeat=args.repeat, steps=n)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True, env=env).stdout.split()
    torch_first, torch_total = float(out[0]), float(out[1])
    torch_step = torch_total / n

    params = sum(p.numel() for p in model.parameters())
    print(f"GPT-2-style model: {args.layers} layers, hidden {args.hidden}, {args.heads} heads, "
          f"seq {args.seq}, vocab {args.vocab}, batch {args.batch}; {params:,} parameters; "
          f"AdamW; {args.threads} threads")
    print(f"loomc compile + build of train: {compile_s:.2f} s")
    print(f"loom OUTDIR/train: {1 / loom_step:8.2f} steps/s ({loom_step * 1e3:.2f} ms/step)")
    print(f"PyTorch eager:     {1 / torch_step:8.2f} steps/s ({torch_step * 1e3:.2f} ms/step)")
    print(f"ratio loom/PyTorch (steps/s): {torch_step / loom_step:.2f}x (goal >= 1.0)")
    print(f"first-step loss: loom {loom_first:.6f}, PyTorch {torch_first:.6f}")
    if abs(loom_first - torch_first) > 1e-4 * abs(torch_first):
        sys.exit("error: the first losses differ")


if __name__ == "__main__":
    main()
