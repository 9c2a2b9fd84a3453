#!/usr/bin/env python3
"""Benchmark: what `loomc --precision bf16` saves (not a test).

A GPT (loom.models.gpt: --layers, --hidden, --heads, --seq, --vocab,
--batch; shapes only) compiled by `loomc --emit-only` in f32 and in bf16
(loom-mixed-precision). Prints each program's activation peak and device
peak from the memory plan (memory.json), the ratios bf16/f32, and how many
of the step's GEMMs run on bf16 buffers. Memory only: CPU step times say
nothing about a GPU's (the device check measures those); the CPU step in
bf16 against PyTorch's autocast is bench/train_step_vs_pytorch.py
--precision bf16. Never fails on a figure.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("LOOM_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(ROOT / "python"))
from loom.models.gpt import generate  # noqa: E402


def compile_once(model, outdir, precision):
    subprocess.run([str(BUILD / "bin" / "loomc"), str(model), "-o", str(outdir),
                    "--emit-only", "--optimizer", "adamw", "--precision", precision],
                   check=True, capture_output=True, text=True)
    plan = json.loads((outdir / "memory.json").read_text())["functions"][0]
    step = (outdir / "step.cpp").read_text()
    bf16 = set(re.findall(r"^\s*bf16 \*(\w+) = ", step, re.M))
    calls = re.findall(r"cpu::gemm(?:Strided)?\(([^;]*)\);", step)
    on_bf16 = sum(any(re.search(rf"\b{b}\b", c) for b in bf16) for c in calls)
    return plan["activation_peak_bytes"], plan["device_peak_bytes"], on_bf16, len(calls)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--vocab", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model = tmp / "gpt.mlir"
        model.write_text(generate(args.layers, args.hidden, args.heads, args.seq,
                                  args.vocab, args.batch))
        print(f"GPT: {args.layers} layers, hidden {args.hidden}, {args.heads} heads, "
              f"seq {args.seq}, vocab {args.vocab}, batch {args.batch}")
        rows = {p: compile_once(model, tmp / p, p) for p in ("f32", "bf16")}
    mib = 1024 * 1024
    print(f"{'precision':10} {'activation peak':>16} {'device peak':>12} {'bf16 GEMMs':>11}")
    for p, (act, dev, on, total) in rows.items():
        print(f"{p:10} {act / mib:13.2f} MiB {dev / mib:8.2f} MiB {on:>5} of {total}")
    (a32, d32, _, _), (a16, d16, _, _) = rows["f32"], rows["bf16"]
    print(f"bf16/f32: activations {a16 / a32:.3f}, device peak {d16 / d32:.3f}")


if __name__ == "__main__":
    main()
