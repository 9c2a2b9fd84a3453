#!/usr/bin/env python3
"""Benchmark: loom-plan's predicted step times against Loom's own measured
runs on this machine (not a test; root, for vcluster).

`loom-plan calibrate --vcluster` measures this machine into a cluster spec
for each link rate: the CPU backend's GEMM rate and size-dependent
efficiency, streaming bandwidth and per-kernel overhead (one thread per
rank, both ranks computing at once), and what the runtime's send and
all-reduce reach between two virtual hosts over that rate. Then, for each
plan below, a GPT-2-style model (hidden --hidden,
seq 128, 4 layers, 4 heads, vocabulary 512, micro-batch 4, AdamW) is
compiled with the plan loom-plan writes for it (`-o`, its stage cut
too) and run with one rank on each of two virtual hosts
(`python -m loom.vcluster`) over links throttled to the plan's rate; the
measured step time (the median of a 2N-step run's step times, min of
--repeat) is printed next to loom-plan's prediction for the same plan
(`--mesh ... --json`, with the calibrated spec at that rate) and the
error, and beside them the play of the compiled program itself on the same
spec (`loomc --play`: every op of each stage's loomrt step priced by the
cost model, transfers on their channels) and its error. Goal: within
15 %. Prints figures only; never fails on a timing.

    sudo python3 bench/planner_vs_vcluster.py [--hidden 256] [--plans 1,2,..]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test" / "python"))
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))
from measure import per_step  # noqa: E402

LOOM_PLAN = ROOT / "build" / "bin" / "loom-plan"
MICRO = 4

# (mesh, micro-batches, recompute, schedule, overlap split, link rate)
PLANS = [
    ("dp=2", 1, "none", "1f1b", 1, "1gbit"),
    ("dp=2", 2, "none", "1f1b", 1, "1gbit"),
    ("dp=2", 1, "none", "1f1b", 1, "200mbit"),
    ("tp=2", 1, "none", "1f1b", 1, "1gbit"),
    ("tp=2", 1, "full", "1f1b", 1, "1gbit"),
    ("tp=2", 1, "comm-free", "1f1b", 1, "1gbit"),
    ("tp=2", 1, "none", "1f1b", 2, "1gbit"),
    ("tp=2", 1, "none", "1f1b", 1, "200mbit"),
    ("pp=2", 4, "none", "1f1b", 1, "1gbit"),
    ("pp=2", 4, "none", "gpipe", 1, "1gbit"),
    ("pp=2", 2, "full", "1f1b", 1, "1gbit"),
    ("pp=2", 4, "none", "1f1b", 1, "200mbit"),
]


def full_mesh(mesh):
    axes = {"dp": 1, "tp": 1, "pp": 1}
    for part in mesh.split(","):
        k, v = part.split("=")
        axes[k] = int(v)
    return axes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--plans", default="",
                        help="1-based comma list of the plans to run (default: all)")
    args = parser.parse_args()

    import numpy as np
    import torch
    import loom
    from loom import vcluster
    from models.torch_models import GPT

    reason = vcluster.check()
    if reason:
        sys.exit(f"planner_vs_vcluster: {reason}")
    work = Path(tempfile.mkdtemp(prefix="loom-bench-planner-"))
    vocab, seq = 512, 128
    rng = np.random.default_rng(0)
    data = work / "data"
    data.mkdir()
    rows = 16 * MICRO
    np.save(data / "ids.npy", rng.integers(0, vocab, (rows, seq)).astype(np.int64))
    np.save(data / "labels.npy", rng.integers(0, vocab, (rows, seq)).astype(np.int64))
    torch.manual_seed(0)
    model = GPT(vocab=vocab, seq=seq, hidden=args.hidden, heads=4, layers=4)
    ids = torch.from_numpy(np.load(data / "ids.npy")[:MICRO])
    labels = torch.from_numpy(np.load(data / "labels.npy")[:MICRO])
    m = loom.from_torch(model, (ids, labels), input_names=["ids", "labels"],
                        workdir=work / "import")
    model_file = m.save(work / "model.mlir")

    chosen = ([int(p) - 1 for p in args.plans.split(",")] if args.plans
              else range(len(PLANS)))
    specs = {}
    for rate in sorted({PLANS[i][5] for i in chosen}):
        specs[rate] = work / f"this-machine-{rate}.json"
        subprocess.run([str(LOOM_PLAN), "calibrate", "--calibrate-threads", "1",
                        "--concurrent", "2", "--vcluster", "--network", rate, "-o",
                        str(specs[rate])], check=True)
        spec = json.loads(specs[rate].read_text())
        print(f"calibrated over {rate}: GEMM peak "
              f"{spec['gpu']['peak_tflops']['fp32'] * 1e3:.1f} GFLOP/s, half at "
              f"{spec['efficiency']['gemm_half_gflop'] * 1e3:.1f} MFLOP, stream "
              f"{spec['gpu']['memory_bandwidth_gbytes_per_s']:.1f} GB/s, elementwise "
              f"arithmetic {spec['efficiency']['vector']:.2f} of the GEMM rate, kernel "
              f"{spec['efficiency']['kernel_launch_us']:.2f} us; a send reaches "
              f"{spec['efficiency']['comm']:.2f} of the link, an all-reduce "
              f"{spec['efficiency']['all_reduce']:.2f}, latency "
              f"{spec['network']['latency_us']:.0f} us")
    print(f"GPT-2-style model, hidden {args.hidden}, seq {seq}, 4 layers, micro-batch "
          f"{MICRO}, AdamW; one rank on each of 2 virtual hosts, 1 thread each")
    print(f"{'#':>2} {'plan':<44} {'link':>8} {'predicted':>10} {'measured':>10} "
          f"{'error':>7} {'played':>10} {'error':>7}")

    errors, play_errors = [], []
    for i in chosen:
        mesh, micro, recompute, schedule, split, rate = PLANS[i]
        axes = full_mesh(mesh)
        spec_path = specs[rate]
        global_batch = axes["dp"] * micro * MICRO
        r = subprocess.run([str(LOOM_PLAN), str(model_file), "--cluster", str(spec_path),
                            "--mesh", f"dp={axes['dp']},tp={axes['tp']},pp={axes['pp']}",
                            "--global-batch", str(global_batch), "--microbatches",
                            str(micro), "--recompute", recompute, "--schedule", schedule,
                            "--overlap-split", str(split), "--optimizer", "adamw",
                            "--json", "-q", "--ignore-memory", "-o",
                            str(work / f"plan{i + 1}.json")],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"{i + 1:>2} {mesh}: loom-plan failed: {r.stderr.strip()}")
            continue
        report = json.loads(r.stdout)
        # The plan loom-plan priced (its stage cut too), as loomc --plan reads it.
        options = dict(plan=str(work / f"plan{i + 1}.json"), optimizer="adamw",
                       lr=1e-3)
        program = m.compile(outdir=work / f"plan{i + 1}", play=True,
                            cluster=str(spec_path), **options)
        measured = per_step(program, data, args.steps, args.repeat, rate=rate,
                            threads=1)
        predicted = report["step_time_s"]
        played = program.play()["step_time_s"]
        err = (predicted - measured) / measured
        play_err = (played - measured) / measured
        errors.append(err)
        play_errors.append(play_err)
        print(f"{i + 1:>2} {report['plan_summary']:<44} {rate:>8} "
              f"{predicted * 1e3:>8.1f}ms {measured * 1e3:>8.1f}ms {100 * err:>+6.1f}% "
              f"{played * 1e3:>8.1f}ms {100 * play_err:>+6.1f}%", flush=True)
    for name, errs in (("loom-plan", errors), ("loomc --play", play_errors)):
        if errs:
            within = sum(abs(e) <= 0.15 for e in errs)
            print(f"{name}: mean |error| {100 * sum(map(abs, errs)) / len(errs):.1f} %, "
                  f"max |error| {100 * max(map(abs, errs)):.1f} %, {within}/{len(errs)} "
                  f"plans within 15 %")


if __name__ == "__main__":
    main()
