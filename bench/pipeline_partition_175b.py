#!/usr/bin/env python3
"""Benchmark: loom-pipeline-partition, and the whole 3D parallelization
(tensor parallel + partition + schedule + data parallel), on the GPT-3 175B
forward graph.

Generates the gpt3-175b graph (loom.models.gpt, shapes only) into a
temporary directory, runs shape inference once, then runs, each --repeat
times, measuring wall seconds and the peak RSS of the loom-opt process:

  partition   loom-opt SI --loom-pipeline-partition=stages=P report=R
              -o /dev/null: the measured case (parse, verify, partition,
              report, print)
  3d          loom-opt SI --loom-tensor-parallel=tp=T
              --loom-vocab-parallel=tp=T --loom-pipeline-partition=stages=P
              --loom-pipeline-split
              --loom-pipeline-schedule=microbatches=M (1F1B) and, for each
              stage, --loom-data-parallel=dp=D: the per-rank gradient
              functions of the dp=D,tp=T,pp=P mesh (default 8, 8, 16; M 16)
  parse+print loom-opt SI -o /dev/null (peer: the same without the pass)

SI is the shape-inferred graph. Prints a table with the fastest time, the
largest peak RSS and their ratios to the goals (< 10 s, < 2 GiB), then the
partition from the report: per stage its ops, time (3 x forward flops),
parameters, activation and cut bytes, and the balance max / mean stage
time. Only measured numbers are printed.

    python3 bench/pipeline_partition_175b.py [--loom-opt PATH] [--stages P]
        [--repeat N] [--dp D] [--tp T] [--microbatches M]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from measure import run_measured

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

from loom.models.gpt import PRESETS, generate  # noqa: E402

GOAL_SECONDS = 10.0
GOAL_RSS_BYTES = 2 << 30  # 2 GiB
GIB = 1 << 30


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--loom-opt", default=str(REPO / "build/bin/loom-opt"),
                   help="loom-opt binary (default: build/bin/loom-opt in the "
                        "repository)")
    p.add_argument("--stages", type=int, default=16,
                   help="pipeline stages (default 16)")
    p.add_argument("--dp", type=int, default=8, help="data-parallel size (default 8)")
    p.add_argument("--tp", type=int, default=8, help="tensor-parallel size (default 8)")
    p.add_argument("--microbatches", type=int, default=16,
                   help="micro-batches per step (default 16)")
    p.add_argument("--repeat", type=int, default=3,
                   help="runs per case; the table shows the fastest "
                        "(default 3)")
    args = p.parse_args()
    loom_opt = args.loom_opt
    if not os.access(loom_opt, os.X_OK):
        sys.exit(f"error: loom-opt not found at {loom_opt} (--loom-opt PATH)")
    if args.repeat < 1 or args.stages < 1:
        sys.exit("error: --repeat and --stages must be >= 1")

    with tempfile.TemporaryDirectory(prefix="loom-pp-") as tmp:
        src = Path(tmp) / "gpt3-175b.mlir"
        shaped = Path(tmp) / "gpt3-175b.si.mlir"
        report_path = Path(tmp) / "partition.json"
        start = time.perf_counter()
        src.write_text(generate(**PRESETS["gpt3-175b"]))
        gen_seconds = time.perf_counter() - start
        subprocess.run([loom_opt, str(src), "--loom-shape-inference",
                        "-o", str(shaped)], check=True)
        cases = [
            ("partition", [f"--loom-pipeline-partition=stages={args.stages} "
                           f"report={report_path}"]),
            ("3d", [f"--loom-tensor-parallel=tp={args.tp}",
                    f"--loom-vocab-parallel=tp={args.tp}",
                    f"--loom-pipeline-partition=stages={args.stages}",
                    "--loom-pipeline-split",
                    f"--loom-pipeline-schedule=microbatches={args.microbatches}",
                    *[f"--loom-data-parallel=function=main_stage{k}_grad dp={args.dp}"
                      for k in range(args.stages)]]),
            ("parse+print", []),
        ]
        # What the 3D case produces (one extra run, not measured).
        out3d = Path(tmp) / "3d.mlir"
        subprocess.run([loom_opt, str(shaped), *cases[1][1], "-o", str(out3d)],
                       check=True)
        text3d = out3d.read_text()
        counts = {op: text3d.count(op) for op in
                  ("shard.send", "shard.recv", "shard.all_reduce", "loom.tp_copy")}
        functions3d = text3d.count("func.func @main_stage")
        del text3d
        rows = []
        for label, extra in cases:
            runs = [run_measured([loom_opt, str(shaped), *extra,
                                  "-o", os.devnull])
                    for _ in range(args.repeat)]
            rows.append((label, min(r[0] for r in runs),
                         max(r[1] for r in runs)))
        report = json.loads(report_path.read_text())

    cfg = PRESETS["gpt3-175b"]
    print("GPT-3 175B forward graph with loss: "
          + ", ".join(f"{k}={v}" for k, v in cfg.items()))
    print(f"loom-opt: {loom_opt}")
    print(f"generator: {gen_seconds:.3f} s; ops that can be separated: "
          f"{report['sequence_ops']} (+{report['replicated_ops']} "
          f"replicated); stages: {args.stages}; runs per case: "
          f"{args.repeat} (time: min, RSS: max)")
    print()
    header = (f"{'case':<12} {'seconds':>8} {'/ 10 s':>7} "
              f"{'peak RSS MiB':>13} {'/ 2 GiB':>8}")
    print(header)
    print("-" * len(header))
    for label, seconds, rss in rows:
        print(f"{label:<12} {seconds:>8.3f} {seconds / GOAL_SECONDS:>7.3f} "
              f"{rss / (1 << 20):>13.1f} {rss / GOAL_RSS_BYTES:>8.3f}")
    print()
    header = (f"{'stage':>5} {'ops':>5} {'first..last':>12} "
              f"{'time PFLOP':>11} {'params (B)':>11} {'param GiB':>10} "
              f"{'act GiB':>8} {'cut MiB':>8}")
    print(header)
    print("-" * len(header))
    for st in report["per_stage"]:
        span = f"{st['first']}..{st['last']}"
        print(f"{st['stage']:>5} {st['ops']:>5} {span:>12} "
              f"{st['time'] / 1e15:>11.3f} {st['params'] / 1e9:>11.3f} "
              f"{st['param_bytes'] / GIB:>10.2f} "
              f"{st['activation_bytes'] / GIB:>8.2f} "
              f"{st['cut_bytes'] / (1 << 20):>8.1f}")
    print()
    print(f"balance (max / mean stage time): {report['balance']:.4f}; "
          f"total cut bytes: {report['total_cut_bytes'] / (1 << 20):.1f} MiB")
    print(f"partition / parse+print time: {rows[0][1] / rows[2][1]:.2f}x; "
          f"3d / parse+print time: {rows[1][1] / rows[2][1]:.2f}x")
    print(f"3d (dp={args.dp}, tp={args.tp}, pp={args.stages}, "
          f"{args.microbatches} micro-batches, 1F1B): {functions3d} stage "
          f"functions; " + ", ".join(f"{k}: {v}" for k, v in counts.items()))
    for label, seconds, rss in rows[:2]:
        met = seconds < GOAL_SECONDS and rss < GOAL_RSS_BYTES
        print(f"goals (< {GOAL_SECONDS:g} s, < 2 GiB) for {label}: "
              f"{'met' if met else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
