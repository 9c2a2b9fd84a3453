#!/usr/bin/env python3
"""Benchmark: the planner's predictions against published throughput, its
plans against Megatron's default recipe, and its search time.

1. Published results. (a) Table 1 of Narayanan et al., "Efficient Large-Scale
   Language Model Training on GPU Clusters Using Megatron-LM" (SC21,
   arXiv 2104.04473): GPT models of 1.7B to 1008B parameters (sequence
   2048, vocabulary 51,200, mixed precision, activation recomputation) on
   32 to 3072 A100 80GB GPUs of Selene (DGX A100 nodes: NVSwitch, 8 x 200
   Gb/s HDR InfiniBand), each row's tensor- and pipeline-parallel sizes,
   GPU count and batch. The paper reports achieved teraFLOP/s per GPU with
   its Eq. (3), F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) per iteration
   (recomputation counted); this bench turns loom-plan's predicted step
   time into the same figure (F / (step x GPUs)) and prints the error. The
   bundled dgx-a100 spec is used as is (its efficiencies are cuBLAS
   typicals, not fitted to these rows); loom-plan evaluates each row's
   mesh with full recomputation and 1F1B and searches only the
   micro-batch size (1, 2, 4, 8). Megatron ran the interleaved 1F1B
   schedule, which Loom does not have. (b) The MT-NLG 530B training
   runs of Smith et al. (arXiv 2201.11990, Sec. 2.4): seconds per
   iteration at 280, 350 and 420 DGX A100 servers (tp 8, pp 35, global
   batch 1920), against loom-plan's predicted step time on the same
   spec, mesh and options.
2. Plan quality: GPT h2048 L24 (16 heads, sequence 2048, vocabulary
   51,200, bf16) on 32 RTX 3090s over PCIe (rtx3090-pcie) and 32 RTX
   4090s (rtx4090), global batch 512: the searched plan against
   Megatron's default recipe (tp = GPUs per node, the smallest pp that
   fits, dp the rest, full recomputation; micro-batch searched for both).
   Goal: predicted >= 1.5x faster.
3. Speed: a full search for GPT-3 175B on 1024 A100s (global batch 1536,
   micro-batch sizes 1, 2, 4, 8). Goal: < 60 s and < 2 GiB.

Every figure printed is computed by this run (predictions of loom-plan,
errors against the published numbers copied below).

    python3 bench/planner_validation.py [--loom-plan PATH] [--rows 1,2,...]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from measure import run_measured

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))

from loom.models.gpt import generate  # noqa: E402

# Narayanan et al. 2021, Table 1: (params B, heads, hidden, layers, tp, pp,
# GPUs, batch, achieved teraFLOP/s per GPU).
MEGATRON_TABLE_1 = [
    (1.7, 24, 2304, 24, 1, 1, 32, 512, 137),
    (3.6, 32, 3072, 30, 2, 1, 64, 512, 138),
    (7.5, 32, 4096, 36, 4, 1, 128, 512, 142),
    (18.4, 48, 6144, 40, 8, 1, 256, 1024, 135),
    (39.1, 64, 8192, 48, 8, 2, 512, 1536, 138),
    (76.1, 80, 10240, 60, 8, 4, 1024, 1792, 140),
    (145.6, 96, 12288, 80, 8, 8, 1536, 2304, 148),
    (310.1, 128, 16384, 96, 8, 16, 1920, 2160, 155),
    (529.6, 128, 20480, 105, 8, 35, 2520, 2520, 163),
    (1008.0, 160, 25600, 128, 8, 64, 3072, 3072, 163),
]
SEQ, VOCAB = 2048, 51200
SIZES = "1,2,4,8"

# Smith et al., "Using DeepSpeed and Megatron to Train Megatron-Turing NLG
# 530B" (arXiv 2201.11990), Sec. 2.4: the 530B model (105 layers, hidden
# 20480, 128 heads, sequence 2048, vocabulary 50,272) with 8-way tensor
# and 35-way pipeline parallelism and a global batch of 1920, on 280, 350
# and 420 DGX A100 servers of Selene: seconds per iteration, and the
# teraFLOP/s per GPU the paper gives for them.
MT_NLG = dict(layers=105, hidden=20480, heads=128, vocab=50272, tp=8, pp=35,
              batch=1920)
MT_NLG_ROWS = [(280, 60.1, 126), (350, 50.2, 121), (420, 44.4, 113)]


def loom_plan(binary, *args):
    r = subprocess.run([binary, *map(str, args), "--json", "-q"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1]
    return json.loads(r.stdout), None


def gpt_file(directory, layers, hidden, heads, seq=SEQ, vocab=VOCAB):
    path = Path(directory) / f"gpt-l{layers}-h{hidden}.mlir"
    if not path.exists():
        path.write_text(generate(layers=layers, hidden=hidden, heads=heads,
                                 seq=seq, vocab=vocab, batch=1, dtype="bf16"))
    return path


def price_mesh(binary, model, dp, tp, pp, batch):
    """loom-plan's report for `model` on dgx-a100 with the published mesh,
    global batch, full recomputation and 1F1B (the micro-batch searched):
    (report or None, error, note). A row Loom's memory model puts over
    80 GB is priced anyway, and the note says so."""
    args = [model, "--cluster", "dgx-a100", "--mesh", f"dp={dp},tp={tp},pp={pp}",
            "--global-batch", batch, "--recompute", "full", "--schedule", "1f1b",
            "--overlap-split", 1, "--micro-batch-sizes", SIZES]
    report, error = loom_plan(binary, *args)
    if report is not None:
        return report, None, ""
    report, error = loom_plan(binary, *args, "--ignore-memory")
    return report, error, " (over memory in Loom's model)"


def print_errors(errors):
    """The summary line of relative errors against published figures."""
    if errors:
        within = sum(abs(e) <= 0.20 for e in errors)
        print(f"   mean |error| {100 * sum(map(abs, errors)) / len(errors):.1f} %, "
              f"max |error| {100 * max(map(abs, errors)):.1f} %, "
              f"{within}/{len(errors)} rows within 20 %")


def published_rows(binary, tmp, rows):
    print("1. Narayanan et al. SC21 Table 1 on dgx-a100 (full recompute, 1F1B; "
          "teraFLOP/s per GPU by the paper's Eq. 3)")
    print(f"{'params':>8} {'tp':>3} {'pp':>3} {'GPUs':>5} {'batch':>5}  "
          f"{'loom-plan plan':<36} {'step s':>8} {'mem GiB':>8} "
          f"{'predicted':>9} {'published':>9} {'error':>7}")
    errors = []
    for i in rows:
        params, heads, hidden, layers, tp, pp, gpus, batch, published = \
            MEGATRON_TABLE_1[i]
        model = gpt_file(tmp, layers, hidden, heads)
        report, error, note = price_mesh(binary, model, gpus // (tp * pp), tp, pp,
                                         batch)
        if report is None:
            print(f"{params:>7}B  error: {error}")
            continue
        step = report["step_time_s"]
        flops = 96 * batch * SEQ * layers * hidden ** 2 * (
            1 + SEQ / (6 * hidden) + VOCAB / (16 * layers * hidden))
        predicted = flops / step / gpus / 1e12
        err = (predicted - published) / published
        errors.append(err)
        print(f"{params:>7}B {tp:>3} {pp:>3} {gpus:>5} {batch:>5}  "
              f"{report['plan_summary']:<36} {step:>8.2f} "
              f"{report['memory_per_device_bytes'] / 2**30:>8.1f} {predicted:>9.1f} "
              f"{published:>9} {100 * err:>+6.1f}%{note}")
    print_errors(errors)


def mt_nlg_rows(binary, tmp):
    print("\n1b. MT-NLG 530B (Smith et al. 2022, Sec. 2.4) on dgx-a100: tp 8, "
          "pp 35, global batch 1920 (full recompute, 1F1B; micro-batch searched)")
    print(f"{'nodes':>6} {'GPUs':>5} {'dp':>3}  {'loom-plan plan':<36} "
          f"{'predicted s':>11} {'published s':>11} {'error':>7}")
    c = MT_NLG
    model = gpt_file(tmp, c["layers"], c["hidden"], c["heads"], vocab=c["vocab"])
    errors = []
    for nodes, published, _ in MT_NLG_ROWS:
        gpus = 8 * nodes
        dp = gpus // (c["tp"] * c["pp"])
        report, error, note = price_mesh(binary, model, dp, c["tp"], c["pp"],
                                         c["batch"])
        if report is None:
            print(f"{nodes:>6}  error: {error}")
            continue
        step = report["step_time_s"]
        err = (step - published) / published
        errors.append(err)
        print(f"{nodes:>6} {gpus:>5} {dp:>3}  {report['plan_summary']:<36} "
              f"{step:>11.1f} {published:>11.1f} {100 * err:>+6.1f}%{note}")
    print_errors(errors)


def plan_quality(binary, tmp):
    print("\n2. GPT h2048 L24 (bf16) on 32 GPUs, global batch 512: searched plan vs "
          "Megatron's default recipe")
    model = gpt_file(tmp, 24, 2048, 16)
    for cluster, per_node in (("rtx3090-pcie", 4), ("rtx4090", 8)):
        searched, error = loom_plan(binary, model, "--cluster", cluster, "--gpus", 32,
                                    "--global-batch", 512, "--micro-batch-sizes", SIZES)
        if searched is None:
            print(f"   {cluster}: search failed: {error}")
            continue
        recipe = None
        pp = 1
        while recipe is None and per_node * pp <= 32:
            recipe, error = loom_plan(
                binary, model, "--cluster", cluster,
                "--mesh", f"dp={32 // (per_node * pp)},tp={per_node},pp={pp}",
                "--global-batch", 512, "--recompute", "full", "--schedule", "1f1b",
                "--overlap-split", 1, "--micro-batch-sizes", SIZES)
            pp *= 2
        if recipe is None:
            print(f"   {cluster}: the recipe fits on no pp: {error}")
            continue
        ratio = recipe["step_time_s"] / searched["step_time_s"]
        print(f"   {cluster:<13} recipe   {recipe['plan_summary']:<46} "
              f"{recipe['step_time_s']:8.3f} s/step")
        print(f"   {'':<13} searched {searched['plan_summary']:<46} "
              f"{searched['step_time_s']:8.3f} s/step  -> {ratio:.2f}x "
              f"(goal >= 1.5x: {'met' if ratio >= 1.5 else 'NOT met'})")


def speed(binary, tmp):
    print("\n3. Search time: GPT-3 175B on 1024 dgx-a100 GPUs, global batch 1536")
    model = Path(tmp) / "gpt3-175b.mlir"
    model.write_text(generate(layers=96, hidden=12288, heads=96, seq=2048,
                              vocab=50257, batch=1, dtype="bf16"))
    wall, rss = run_measured([binary, str(model), "--cluster", "dgx-a100",
                              "--gpus", "1024", "--global-batch", "1536",
                              "--micro-batch-sizes", SIZES, "-q"])
    report, _ = loom_plan(binary, model, "--cluster", "dgx-a100", "--gpus", 1024,
                          "--global-batch", 1536, "--micro-batch-sizes", SIZES)
    print(f"   {wall:.2f} s (goal < 60 s: {wall / 60:.3f} of it), peak RSS "
          f"{rss / 2**20:.0f} MiB (goal < 2 GiB: {rss / 2**31:.3f} of it); "
          f"{report['plans_priced']} plans priced; best "
          f"{report['plan_summary']}, {report['tflops_per_gpu']:.0f} model "
          f"TFLOPS/GPU predicted")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--loom-plan", default=str(REPO / "build/bin/loom-plan"),
                   help="loom-plan binary (default: build/bin/loom-plan)")
    p.add_argument("--rows", default="",
                   help="Table 1 rows to run, 1-based comma list (default: all)")
    args = p.parse_args()
    if not os.access(args.loom_plan, os.X_OK):
        sys.exit(f"error: loom-plan not found at {args.loom_plan} (--loom-plan PATH)")
    rows = ([int(r) - 1 for r in args.rows.split(",")] if args.rows
            else range(len(MEGATRON_TABLE_1)))
    with tempfile.TemporaryDirectory() as tmp:
        published_rows(args.loom_plan, tmp, rows)
        mt_nlg_rows(args.loom_plan, tmp)
        plan_quality(args.loom_plan, tmp)
        speed(args.loom_plan, tmp)


if __name__ == "__main__":
    main()
