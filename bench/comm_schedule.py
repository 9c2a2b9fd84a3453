#!/usr/bin/env python3
"""Benchmark: TriRace's communication scheduling on throttled links (not a
test; root, for vcluster).

A LLaMA-style model with an untied, wide vocabulary (--vocab, default
8000; hidden 128, seq 64, 4 layers; AdamW) compiled for dp=2 x pp=2 with
--microbatches micro-batches of --batch rows, one rank on each of four
virtual hosts (`python -m loom.vcluster`), every link throttled to --link.
For each configuration:

* `--comm-schedule off` (the pipeline schedule's order: a send after the
  compute the schedule placed before it, a receive right before its use);
* `--comm-schedule on` (loom-comm-schedule: one-way transfers posted as
  early as their data allows);
* on, plus `--sparse-embedding-grad on` (the token table's gradient
  exchanged by rows under dp);
* on, sparse, plus two weight versions (`--pipeline-weights 2`,
  PipeDream-2BW: each step's dp gradient all-reduce overlaps the next
  step's forward and backward; the weights follow W(t+1) = W(t) -
  lr grad f(W(t-1)), so only the first loss is the same).

it prints the step time (the median of a 2N-step run's step times,
min of --repeat), the data-parallel and pipeline bytes a rank sends in the first
step (`--comm-stats` of a one-step run; with two weight versions that
step exchanges the zero pending gradient, so its row-sparse table
exchange sends nothing), the first loss (all must agree), and writes one step's
timeline (`--trace`, Chrome/Perfetto JSON) per configuration. Ratios
against `off`. Prints figures only; never fails on a timing.
"""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test" / "python"))
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))
from measure import per_step, timed_run  # noqa: E402

HOSTS = 4


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vocab", type=int, default=8000)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=2, help="rows per micro-batch")
    parser.add_argument("--microbatches", type=int, default=4)
    parser.add_argument("--link", default="200mbit", help="link rate (tc syntax)")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()

    import numpy as np
    import torch
    import loom
    from loom import vcluster
    from models.torch_models import Llama

    reason = vcluster.check()
    if reason:
        sys.exit(f"comm_schedule: {reason}")
    work = Path(tempfile.mkdtemp(prefix="loom-bench-comm-schedule-"))
    rng = np.random.default_rng(0)
    data = work / "data"
    data.mkdir()
    rows = 4 * 2 * args.microbatches * args.batch
    for name in ("ids", "labels"):
        np.save(data / f"{name}.npy",
                rng.integers(0, args.vocab, (rows, args.seq)).astype(np.int64))
    torch.manual_seed(0)
    model = Llama(vocab=args.vocab, seq=args.seq, hidden=args.hidden, heads=4,
                  layers=args.layers)
    example = tuple(torch.from_numpy(np.load(data / f"{n}.npy")[:args.batch])
                    for n in ("ids", "labels"))
    m = loom.from_torch(model, example, input_names=["ids", "labels"], workdir=work / "import")
    print(f"LLaMA-style model, vocab {args.vocab}, hidden {args.hidden}, seq {args.seq}, "
          f"{args.layers} layers; dp=2 x pp=2, {args.microbatches} micro-batches of "
          f"{args.batch} rows; one rank on each of {HOSTS} virtual hosts, links {args.link}; "
          f"SGD with momentum (two weight versions need SGD)")

    configs = [("off", dict(comm_schedule="off")),
               ("on", dict(comm_schedule="on")),
               ("on + sparse embedding", dict(comm_schedule="on", sparse_embedding_grad="on")),
               ("on + sparse + 2BW", dict(comm_schedule="on", sparse_embedding_grad="on",
                                          pipeline_weights=2))]
    run = dict(hosts=HOSTS, rate=args.link)
    results = {}
    for label, options in configs:
        out = work / label.replace(" ", "").replace("+", "-")
        program = m.compile(outdir=out, mesh="dp=2,pp=2", microbatches=args.microbatches,
                            optimizer="sgd", lr=0.05, momentum=0.9, **options)
        step = per_step(program, data, args.steps, args.repeat, **run)
        stats, trace = out / "stats.json", out / "trace.json"
        timed_run(program, data, 1, extra=["--comm-stats", str(stats), "--trace", str(trace)],
                  **run)
        ranks = json.loads(stats.read_text())["ranks"]
        sent = {g: max(r["groups"].get(g, {}).get("bytes", 0) for r in ranks)
                for g in ("dp", "pp")}
        log = out / f"{args.link}-{2 * args.steps}.csv"
        loss = float(log.read_text().splitlines()[1].split(",")[1])
        results[label] = step
        print(f"  {label:>22}: {step * 1e3:8.1f} ms/step, dp {sent['dp'] / 1e6:6.2f} MB, "
              f"pp {sent['pp'] / 1e6:5.2f} MB per rank in step 1, first loss {loss:.6f}, "
              f"timeline {trace}")
    base = results["off"]
    for label in results:
        if label != "off":
            print(f"  {label} over off: {base / results[label]:.2f}x")


if __name__ == "__main__":
    main()
