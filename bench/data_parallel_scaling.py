#!/usr/bin/env python3
"""Benchmark: data parallelism on this machine's cores (not a test).

The GPT-2-style model of bench/train_step_vs_pytorch.py (2 layers, hidden
128, 4 heads, seq 64, vocabulary 512) with AdamW and the same global batch
(--global-batch, default 16) two ways, on the same cores:

* one rank: batch 16, OMP_NUM_THREADS = all cores;
* dp=2 on two ranks (mpirun -np 2): batch 8 each, one thread per rank
  (cores split between the ranks), gradients all-reduced over MPI.

Per-step time is (time of 2N steps - time of N steps) / N, min of --repeat.
Prints steps/s of both and the ratio; checks that the first losses agree.
This 2-core machine bounds the speed-up (at most 2x, minus the
all-reduce); never fails on a timing.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test" / "python"))
sys.path.insert(0, str(ROOT / "python"))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--global-batch", type=int, default=16)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import numpy as np
    import torch
    import loom
    from models.torch_models import GPT

    cores = os.cpu_count()
    work = Path(tempfile.mkdtemp(prefix="loom-bench-dp-"))
    vocab, seq = 512, 64
    rng = np.random.default_rng(0)
    rows = 4 * args.global_batch
    data = work / "data"
    data.mkdir()
    np.save(data / "ids.npy", rng.integers(0, vocab, (rows, seq)).astype(np.int64))
    np.save(data / "labels.npy", rng.integers(0, vocab, (rows, seq)).astype(np.int64))

    def build(batch, mesh, tag):
        torch.manual_seed(0)
        model = GPT(vocab=vocab, seq=seq, hidden=128, heads=4, layers=2)
        ids = torch.from_numpy(np.load(data / "ids.npy")[:batch])
        labels = torch.from_numpy(np.load(data / "labels.npy")[:batch])
        m = loom.from_torch(model, (ids, labels), input_names=["ids", "labels"],
                            workdir=work / f"import-{tag}")
        return m.compile(optimizer="adamw", lr=1e-3, mesh=mesh, outdir=work / tag)

    single = build(args.global_batch, "dp=1", "single")
    dp = build(args.global_batch // 2, "dp=2", "dp2")

    def timed(program, steps, ranks, threads):
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        cmd = [str(program.executable), "--data", str(data), "--steps", str(steps),
               "--log", str(work / f"{program.outdir.name}-{steps}.csv"), "--quiet"]
        if ranks > 1:
            cmd = loom.mpirun_command(ranks, "--bind-to", "none") + cmd
        t = time.perf_counter()
        subprocess.run(cmd, check=True, env=env)
        return time.perf_counter() - t

    n = args.steps

    def per_step(program, ranks, threads):
        short = min(timed(program, n, ranks, threads) for _ in range(args.repeat))
        long = min(timed(program, 2 * n, ranks, threads) for _ in range(args.repeat))
        return (long - short) / n

    t1 = per_step(single, 1, cores)
    t2 = per_step(dp, 2, max(1, cores // 2))
    first = lambda p: float((work / f"{p.outdir.name}-{n}.csv").read_text()
                            .splitlines()[1].split(",")[1])
    print(f"GPT-2-style model, global batch {args.global_batch}, AdamW, {cores} cores")
    print(f"1 rank  ({cores} threads):            {1 / t1:7.2f} steps/s ({t1 * 1e3:.1f} ms/step)")
    print(f"dp=2 on 2 ranks ({max(1, cores // 2)} thread each): {1 / t2:7.2f} steps/s "
          f"({t2 * 1e3:.1f} ms/step)")
    print(f"ratio dp=2 / 1 rank (steps/s): {t1 / t2:.2f}x")
    print(f"first-step loss: 1 rank {first(single):.6f}, dp=2 {first(dp):.6f}")
    if abs(first(single) - first(dp)) > 1e-4 * abs(first(single)):
        sys.exit("error: the first losses differ")


if __name__ == "__main__":
    main()
