#!/usr/bin/env python3
"""Benchmark: memory-balanced pipelines (not a test).

A GPT-2-style model (--layers 4, hidden --hidden 128, seq 64, vocabulary
512, AdamW) on pp=4 with 1F1B and --microbatches 8 micro-batches of
--batch rows, on 4 ranks of this machine. Stage 0 holds the most
micro-batches in flight; the budget is --fraction (default 0.8) of its
unconstrained device peak (memory.json), and the ways a user has to fit it
are compared with the unconstrained run:

  swap      --device-memory B --swap host, the host link rate-limited to
            --host-link bytes/s (a PCIe-like figure scaled to this
            machine's compute)
  swap timed  swap, with --cluster (this machine's spec, `loom-plan
            calibrate`, its host_link set to --host-link): each copy hides
            behind as many ops as the spec says it takes
  peer      --device-memory B --swap peer: activations of a stage over
            the budget go to a neighbouring stage with room, over the
            pipeline link (Mbapp's balance)
  balance   --device-memory B --swap balance: peer first, then what no
            neighbour can take to the host pool (rate-limited as swap)
  recompute --device-memory B --recompute auto
  auto      --device-memory B --swap auto on this machine's spec
            (`loom-plan calibrate`, its host_link set to --host-link):
            per stage, swap or recompute, whichever that spec prices
            cheaper (loomc's choice is printed)
  smaller   the same rows per step in twice as many micro-batches of half
            the rows (no budget needed if it fits; reported either way)

For each: per-stage device peaks from memory.json, balance = max/min of
the stage peaks, and the step time ((time of 2N steps - time of N steps) /
N, min of --repeat). Prints figures and ratios; never fails on a timing.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test" / "python"))
sys.path.insert(0, str(ROOT / "python"))


WAYS = ("swap", "peer", "balance", "recompute", "auto", "swap-timed", "smaller")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--batch", type=int, default=4, help="rows per micro-batch")
    parser.add_argument("--microbatches", type=int, default=8)
    parser.add_argument("--fraction", type=float, default=0.8)
    parser.add_argument("--host-link", default="2000000000",
                        help="bytes/s of the device-host link for swap copies")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--ways", default=",".join(WAYS),
                        help="the ways to compare (comma list of "
                             f"{', '.join(WAYS)}; default all)")
    args = parser.parse_args()
    ways = set(args.ways.split(","))
    if not ways <= set(WAYS):
        parser.error(f"--ways: unknown {', '.join(sorted(ways - set(WAYS)))}")

    import numpy as np
    import torch
    import loom
    from models.torch_models import GPT

    work = Path(tempfile.mkdtemp(prefix="loom-bench-membal-"))
    vocab, seq = 512, 64
    rows = args.batch * args.microbatches
    rng = np.random.default_rng(0)
    data = work / "data"
    data.mkdir()
    np.save(data / "ids.npy", rng.integers(0, vocab, (4 * rows, seq)).astype(np.int64))
    np.save(data / "labels.npy", rng.integers(0, vocab, (4 * rows, seq)).astype(np.int64))
    torch.manual_seed(0)
    model = GPT(vocab=vocab, seq=seq, hidden=args.hidden, heads=4, layers=args.layers)

    def module(batch):
        ids = torch.from_numpy(np.load(data / "ids.npy")[:batch])
        labels = torch.from_numpy(np.load(data / "labels.npy")[:batch])
        return loom.from_torch(model, (ids, labels), input_names=["ids", "labels"],
                               workdir=work / f"import-b{batch}")

    options = dict(optimizer="adamw", lr=1e-3, mesh="pp=4")
    micro = module(args.batch)

    def peaks(program):
        functions = json.loads((program.outdir / "memory.json").read_text())["functions"]
        return [f["device_peak_bytes"] for f in sorted(functions, key=lambda f: f["stage"])]

    def timed(program, steps, extra):
        log = program.outdir / f"loss-{steps}.csv"
        cmd = [*loom.mpirun_command(4), str(program.executable), "--data", str(data),
               "--steps", str(steps), "--log", str(log), "--quiet", *extra]
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True,
                       env=dict(os.environ, OMP_NUM_THREADS="1"))
        return time.perf_counter() - t

    def per_step(program, extra=()):
        n = args.steps
        short = min(timed(program, n, extra) for _ in range(args.repeat))
        long = min(timed(program, 2 * n, extra) for _ in range(args.repeat))
        return (long - short) / n

    def first_loss(program):
        return float((program.outdir / f"loss-{args.steps}.csv").read_text()
                     .splitlines()[1].split(",")[1])

    base = micro.compile(outdir=work / "unconstrained", microbatches=args.microbatches,
                         **options)
    base_peaks = peaks(base)
    budget = int(args.fraction * base_peaks[0])
    print(f"GPT-2-style model, {args.layers} layers, hidden {args.hidden}, seq {seq}, "
          f"pp=4 1F1B, {args.microbatches} micro-batches of {args.batch} rows, AdamW, "
          f"4 ranks, 1 thread each")
    print(f"  budget: {budget} bytes = {args.fraction:.0%} of stage 0's unconstrained peak")

    def report(name, program, extra=()):
        p = peaks(program)
        t = per_step(program, extra)
        fits = "fits" if max(p) <= budget else "over budget"
        print(f"  {name:>13}: stage peaks {', '.join(f'{x / 1e6:.2f}' for x in p)} MB, "
              f"balance {max(p) / min(p):.2f}, {fits}; {t * 1e3:.1f} ms/step, "
              f"first loss {first_loss(program):.6f}")
        return t

    t0 = report("unconstrained", base)
    results = {}
    host_link = ["--host-link", args.host_link]

    def way(name, compile_options, extra=(), plan_line=None):
        """Compiles `name` with the budget and `compile_options`, reports
        it (and `plan_line(plan.json)` when given), or prints loomc's
        error (loom-swap's line, if any)."""
        if name not in ways:
            return
        try:
            program = micro.compile(outdir=work / name, microbatches=args.microbatches,
                                    device_memory=budget, **compile_options, **options)
        except loom.LoomError as e:
            lines = str(e).strip().splitlines()
            print(f"  {name}: {next((l for l in lines if 'error: loom-swap' in l), lines[-1])}")
            return
        results[name] = report(name, program, extra)
        if plan_line:
            plan = json.loads((program.outdir / "plan.json").read_text())
            print(f"  {'':>13}  {plan_line(plan)}")

    way("swap", dict(swap="host"), host_link)
    way("peer", dict(swap="peer"))
    way("balance", dict(swap="balance"), host_link)
    way("recompute", dict(recompute="auto"),
        plan_line=lambda plan: f"per stage: {', '.join(plan['recompute_per_stage'])}")
    if ways & {"auto", "swap-timed"}:
        # --swap auto on this machine as a spec, with the bench's host link.
        spec = work / "here.json"
        subprocess.run([str(ROOT / "build" / "bin" / "loom-plan"), "calibrate", "-o", str(spec)],
                       check=True, capture_output=True)
        here = json.loads(spec.read_text())
        here["host_link"] = {"link": "rate-limited (--host-link)", "latency_us": 10,
                             "bandwidth_gbytes_per_s": float(args.host_link) / 1e9}
        spec.write_text(json.dumps(here))
        way("auto", dict(swap="auto", cluster=spec), host_link,
            plan_line=lambda plan: f"swap {plan['swap']}, recompute per stage: "
                                   f"{', '.join(plan.get('recompute_per_stage') or ['none'])}")
        way("swap-timed", dict(swap="host", cluster=spec), host_link)
    if "smaller" in ways and args.batch % 2 == 0:
        half = module(args.batch // 2)
        smaller = half.compile(outdir=work / "smaller", microbatches=2 * args.microbatches,
                               **options)
        results["smaller"] = report("smaller", smaller)
    for name, t in results.items():
        print(f"  {name} step time over unconstrained: {t / t0:.2f}x")


if __name__ == "__main__":
    main()
