#!/usr/bin/env python3
"""Benchmark: loom-opt on the GPT-3 175B forward graph.

Generates the gpt3-175b graph (loom.models.gpt) into a temporary directory,
then runs, each --repeat times, measuring wall seconds and the peak RSS of
the loom-opt process (from wait4's rusage of that one child):

  shape-inference  loom-opt FILE --loom-shape-inference -o /dev/null
                   (parse, verify, shape inference, print): the measured case
  parse+print      loom-opt FILE -o /dev/null
                   (peer: the same without the pass, so the gap is its cost)
  generic reparse  loom-opt GENERIC -o /dev/null, GENERIC being FILE printed
                   with --mlir-print-op-generic (peer: the generic form)

and prints a table with the minimum time, the largest peak RSS and their
ratios to the goals (< 2 s, < 1 GiB). Only measured numbers are printed.

    python3 bench/gpt3_compile_time.py [--loom-opt PATH] [--repeat N]
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

GOAL_SECONDS = 2.0
GOAL_RSS_BYTES = 1 << 30  # 1 GiB


def loom_op_count(loom_opt, path):
    out = subprocess.run([loom_opt, str(path), "--loom-report-cost",
                          "-o", os.devnull], capture_output=True, text=True,
                         check=True).stdout
    return sum(f["ops"] for f in json.loads(out)["functions"])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--loom-opt", default=str(REPO / "build/bin/loom-opt"),
                   help="loom-opt binary (default: build/bin/loom-opt in the "
                        "repository)")
    p.add_argument("--repeat", type=int, default=3,
                   help="runs per case; the table shows the fastest "
                        "(default 3)")
    args = p.parse_args()
    loom_opt = args.loom_opt
    if not os.access(loom_opt, os.X_OK):
        sys.exit(f"error: loom-opt not found at {loom_opt} (--loom-opt PATH)")
    if args.repeat < 1:
        sys.exit("error: --repeat must be >= 1")

    with tempfile.TemporaryDirectory(prefix="loom-gpt3-") as tmp:
        src = Path(tmp) / "gpt3-175b.mlir"
        generic = Path(tmp) / "gpt3-175b.generic.mlir"
        start = time.perf_counter()
        src.write_text(generate(**PRESETS["gpt3-175b"]))
        gen_seconds = time.perf_counter() - start
        subprocess.run([loom_opt, str(src), "--mlir-print-op-generic",
                        "-o", str(generic)], check=True)
        ops = loom_op_count(loom_opt, src)

        cases = [
            ("shape-inference", src, ["--loom-shape-inference"]),
            ("parse+print", src, []),
            ("generic reparse", generic, []),
        ]
        rows = []
        for label, path, extra in cases:
            runs = [run_measured([loom_opt, str(path), *extra,
                                  "-o", os.devnull])
                    for _ in range(args.repeat)]
            rows.append((label, path.stat().st_size,
                         min(r[0] for r in runs), max(r[1] for r in runs)))

    cfg = PRESETS["gpt3-175b"]
    print("GPT-3 175B forward graph with loss: "
          + ", ".join(f"{k}={v}" for k, v in cfg.items()))
    print(f"loom-opt: {loom_opt}")
    print(f"generator: {gen_seconds:.3f} s; loom ops: {ops}; "
          f"runs per case: {args.repeat} (time: min, RSS: max)")
    print()
    header = (f"{'case':<16} {'file KiB':>9} {'ops':>6} {'seconds':>8} "
              f"{'/ 2 s':>7} {'peak RSS MiB':>13} {'/ 1 GiB':>8}")
    print(header)
    print("-" * len(header))
    for label, size, seconds, rss in rows:
        print(f"{label:<16} {size / 1024:>9.1f} {ops:>6} {seconds:>8.3f} "
              f"{seconds / GOAL_SECONDS:>7.3f} {rss / (1 << 20):>13.1f} "
              f"{rss / GOAL_RSS_BYTES:>8.3f}")
    base = rows[1][2]
    print()
    print(f"shape inference / parse+print time: {rows[0][2] / base:.2f}x")
    met = rows[0][2] < GOAL_SECONDS and rows[0][3] < GOAL_RSS_BYTES
    print(f"goals (< {GOAL_SECONDS:g} s, < 1 GiB) for shape-inference: "
          f"{'met' if met else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
