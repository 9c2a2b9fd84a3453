#!/usr/bin/env python3
"""Benchmark: dp=2 GPT-2-style training across two virtual hosts (not a test).

The model of bench/data_parallel_scaling.py (2 layers, hidden 128, 4
heads, seq 64, vocabulary 512; AdamW, global batch --global-batch, default
16) compiled for dp=2, run with one rank on each of two virtual hosts
(`python -m loom.vcluster`, root) over unlimited links and over links of
each --rates rate; its gradients (about 1.9 MB per step) cross the link.
Per-step time is the median of a 2N-step run's step times (the
program's own closing line), min of --repeat. Prints steps/s per link and the ratio to the unlimited link;
checks that the first losses agree. Never fails on a timing.
"""

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test" / "python"))
sys.path.insert(0, str(ROOT / "python"))
from measure import per_step  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--global-batch", type=int, default=16)
    parser.add_argument("--rates", default="1gbit")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()

    import numpy as np
    import torch
    import loom
    from loom import vcluster
    from models.torch_models import GPT

    reason = vcluster.check()
    if reason:
        sys.exit(f"multi_host_dp: {reason}")
    work = Path(tempfile.mkdtemp(prefix="loom-bench-mhdp-"))
    vocab, seq = 512, 64
    rng = np.random.default_rng(0)
    data = work / "data"
    data.mkdir()
    rows = 4 * args.global_batch
    np.save(data / "ids.npy", rng.integers(0, vocab, (rows, seq)).astype(np.int64))
    np.save(data / "labels.npy", rng.integers(0, vocab, (rows, seq)).astype(np.int64))
    torch.manual_seed(0)
    model = GPT(vocab=vocab, seq=seq, hidden=128, heads=4, layers=2)
    batch = args.global_batch // 2
    ids = torch.from_numpy(np.load(data / "ids.npy")[:batch])
    labels = torch.from_numpy(np.load(data / "labels.npy")[:batch])
    m = loom.from_torch(model, (ids, labels), input_names=["ids", "labels"],
                        workdir=work / "import")
    program = m.compile(optimizer="adamw", lr=1e-3, mesh="dp=2", outdir=work / "dp2")
    threads = max(1, (os.cpu_count() or 2) // 2)

    def step_time(rate):
        return per_step(program, data, args.steps, args.repeat, rate=rate, threads=threads)

    first = lambda rate: float((program.outdir / f"{rate or 'unlimited'}-{2 * args.steps}.csv")
                               .read_text().splitlines()[1].split(",")[1])
    base = step_time(None)
    print(f"GPT-2-style model, dp=2 on 2 virtual hosts, global batch {args.global_batch}, "
          f"AdamW, {threads} thread(s) per rank")
    print(f"  unlimited link: {1 / base:7.2f} steps/s ({base * 1e3:.1f} ms/step)")
    for rate in args.rates.split(","):
        t = step_time(rate)
        print(f"  {rate:>14}: {1 / t:7.2f} steps/s ({t * 1e3:.1f} ms/step), "
              f"ratio to unlimited {base / t:.2f}")
        if abs(first(rate) - first(None)) > 1e-5 * abs(first(None)):
            sys.exit("error: the first losses differ between links")


if __name__ == "__main__":
    main()
