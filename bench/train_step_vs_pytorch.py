#!/usr/bin/env python3
"""Benchmark: the compiled training step against PyTorch (not a test).

GPT-2-style (test/python/models/torch_models.py GPT) and LLaMA-style
(test/python/models/torch_models.py Llama: RMSNorm, rotary embeddings, SwiGLU) models at
each --hidden size (default 128, 256, 512 and 768; 4 layers, 4 heads, sequence 128,
vocabulary 1000, batch 8), with AdamW, on the same data and the same thread
count (--threads, default: all cores; OMP_NUM_THREADS/OPENBLAS_NUM_THREADS
for OUTDIR/train, torch.set_num_threads for PyTorch):

* Loom: loomc builds OUTDIR/train; the per-step time is the median step
  of a 2N-step run, as train measures it (its closing "loom-train: ...
  median step" line), so process start-up, weight and data loading are
  left out;
* PyTorch eager: the median of 2N timed steps (zero_grad, forward,
  backward, optimizer.step) after warm-up steps, in a child process;
* torch.compile (default inductor backend, model compiled, optimizer
  eager): the same, after warm-up steps that include the compilation.

With --precision bf16, Loom's program is compiled with `--precision bf16`
and PyTorch's forward runs under CPU bf16 autocast (torch.compile: the
compiled model under autocast), the arithmetic each calls bf16 mixed
precision.

Each figure is the minimum over --repeat runs (default one). Prints ms/step of
each and the ratios in steps/s (goals: >= 1.5x eager, >= 1.2x torch.compile), and
checks that the first losses agree (relative 1e-4; bf16: 1e-2, two different
roundings). Never fails on a timing.
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
BUILD = Path(os.environ.get("LOOM_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(ROOT / "test" / "python"))
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))
from measure import median_step  # noqa: E402

TORCH_STEPS = """
import statistics, sys, time
sys.path.insert(0, {tests!r})
import numpy as np, torch
from models.torch_models import GPT, Llama
torch.set_num_threads({threads})
ids = torch.from_numpy(np.load({ids!r})); labels = torch.from_numpy(np.load({labels!r}))
B = {batch}

def measure(compiled):
    torch.manual_seed(0)
    model = {cls}(vocab={vocab}, seq={seq}, hidden={hidden}, heads={heads}, layers={layers})
    model.load_state_dict(torch.load({state!r}))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    forward = torch.compile(model) if compiled else model
    def step(s):
        rows = [(s * B + i) % len(ids) for i in range(B)]
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled={bf16}):
            loss = forward(ids[rows], labels[rows])
        loss.backward(); opt.step()
        return float(loss)
    first = step(0)
    for s in range(1, 4): step(s)
    # The median step of 2 * steps, the minimum of the repeats: the same
    # statistic as Loom's (its train's closing line).
    best = float("inf")
    for r in range({repeat}):
        times = []
        for s in range(2 * {steps}):
            t = time.perf_counter()
            step(s)
            times.append(time.perf_counter() - t)
        best = min(best, statistics.median(times))
    return first, best

eager = measure(False)
comp = measure(True) if {compile} else (float("nan"), float("nan"))
gemm = profiled = float("nan")
if {profile}:
    # Eager's time in matrix products (self CPU time of aten's GEMMs) and
    # the profiled steps' wall time, after one warm-up step (the first
    # step's allocations and kernel choices are not a step's cost).
    torch.manual_seed(0)
    model = {cls}(vocab={vocab}, seq={seq}, hidden={hidden}, heads={heads}, layers={layers})
    model.load_state_dict(torch.load({state!r}))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
    def one_step():
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled={bf16}):
            loss = model(ids[:B], labels[:B])
        loss.backward(); opt.step()
    one_step()
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        start = time.perf_counter()
        for s in range({steps}):
            one_step()
        profiled = (time.perf_counter() - start) / {steps}
    names = {{"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm"}}
    gemm = sum(e.self_cpu_time_total for e in prof.key_averages()
               if e.key in names) / 1e6 / {steps}
print(eager[0], eager[1], comp[0], comp[1], gemm, profiled)
"""

MODELS = {"gpt2": ("GPT", "GPT-2-style"), "llama": ("Llama", "LLaMA-style")}
# How far the first losses may be apart: the same f32 arithmetic, or two
# bf16 roundings of it (Loom's and autocast's round different ops).
TOLERANCE = {"f32": 1e-4, "bf16": 1e-2}


def bench_one(args, kind, hidden, threads):
    import numpy as np
    import torch
    import loom
    from models.torch_models import GPT, Llama

    cls_name, title = MODELS[kind]
    cls = {"GPT": GPT, "Llama": Llama}[cls_name]
    work = Path(tempfile.mkdtemp(prefix=f"loom-bench-train-{kind}{hidden}-"))
    torch.manual_seed(0)
    model = cls(vocab=args.vocab, seq=args.seq, hidden=hidden, heads=args.heads,
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
    program = m.compile(optimizer="adamw", lr=1e-3, weight_decay=0.01, outdir=work / "out",
                        precision=args.precision)
    compile_s = time.perf_counter() - start

    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))

    def run(steps, *extra):
        """The median step time of one run (train's closing line)."""
        cmd = [str(program.executable), "--data", str(data), "--steps", str(steps),
               "--log", str(work / f"loss{steps}.csv"), *extra]
        done = subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        return median_step(done.stderr)

    n = args.steps

    def per_step(*extra):
        # The median of 2n steps, the minimum of the repeats (the same
        # statistic as PyTorch's below). The difference of two runs' wall
        # times, used before, carried the start-up's variation.
        return min(run(2 * n, *extra) for _ in range(args.repeat))

    loom_step = per_step()
    loom_first = float((work / f"loss{2 * n}.csv").read_text().splitlines()[1]
                       .split(",")[1])
    # The same program without the runtime's critical-stride copies.
    direct_step = (per_step("--gemm-strides", "direct") if args.gemm_strides_peer
                   else float("nan"))
    loom_gemm = loom_traced = float("nan")
    if args.profile:
        # Loom's time in GEMMs: the gemm spans of a --trace timeline.
        trace = work / "trace.json"
        subprocess.run([str(program.executable), "--data", str(data), "--steps", str(n),
                        "--quiet", "--trace", str(trace)], check=True, env=env)
        events = json.loads(trace.read_text())
        events = events["traceEvents"] if isinstance(events, dict) else events
        # From step 1 on: the first step's GEMMs include oneDNN's JIT.
        start = min(e["ts"] for e in events if e.get("name") == "step 1")
        loom_gemm = sum(e["dur"] for e in events
                        if e.get("ph") == "X" and e["name"].startswith("gemm ")
                        and e["ts"] >= start) / 1e6 / (n - 1)
        # The traced steps' own time: the share is of the run measured.
        loom_traced = sum(e["dur"] for e in events
                          if e.get("ph") == "X" and e["name"].startswith("step ")
                          and e["ts"] >= start) / 1e6 / (n - 1)

    code = TORCH_STEPS.format(tests=str(ROOT / "test" / "python"),
                              threads=threads, cls=cls_name, vocab=args.vocab, seq=args.seq,
                              hidden=hidden, heads=args.heads, layers=args.layers,
                              state=str(work / "state.pt"), ids=str(data / "ids.npy"),
                              labels=str(data / "labels.npy"), batch=args.batch,
                              repeat=args.repeat, steps=n, compile=not args.no_compile,
                              profile=args.profile, bf16=args.precision == "bf16")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env)
    if done.returncode != 0:
        sys.exit(f"error: the PyTorch measurement failed:\n{done.stderr[-4000:]}")
    out = done.stdout.split()
    (eager_first, eager_step, _, compiled_step, eager_gemm,
     eager_profiled) = (float(v) for v in out[-6:])

    params = sum(p.numel() for p in model.parameters())
    print(f"{title} model: {args.layers} layers, hidden {hidden}, {args.heads} heads, "
          f"seq {args.seq}, vocab {args.vocab}, batch {args.batch}; {params:,} parameters; "
          f"AdamW; {threads} threads; {args.precision}" +
          (" (PyTorch: CPU autocast)" if args.precision == "bf16" else ""))
    print(f"  loomc compile + build of train: {compile_s:.2f} s")
    print(f"  loom OUTDIR/train: {loom_step * 1e3:8.2f} ms/step")
    print(f"  PyTorch eager:     {eager_step * 1e3:8.2f} ms/step   "
          f"ratio loom/eager (steps/s): {eager_step / loom_step:.2f}x")
    if args.gemm_strides_peer:
        print(f"  loom --gemm-strides direct: {direct_step * 1e3:8.2f} ms/step   "
              f"ratio tune/direct (steps/s): {direct_step / loom_step:.2f}x")
    if not args.no_compile:
        print(f"  torch.compile:     {compiled_step * 1e3:8.2f} ms/step   "
              f"ratio loom/compile (steps/s): {compiled_step / loom_step:.2f}x")
    if args.profile:
        # Each side's share of its own profiled run's step (tracing and
        # the profiler slow a step; PyTorch's profiler by more).
        def share(gemm, step):
            return (f"{gemm * 1e3:.2f} ms of a {step * 1e3:.2f} ms profiled step "
                    f"({gemm / step:.0%}; the rest {(step - gemm) * 1e3:.2f} ms)")
        print(f"  time in GEMMs: loom {share(loom_gemm, loom_traced)}, "
              f"PyTorch eager {share(eager_gemm, eager_profiled)}")
    print(f"  first-step loss: loom {loom_first:.6f}, PyTorch {eager_first:.6f}", flush=True)
    return abs(loom_first - eager_first) <= TOLERANCE[args.precision] * abs(eager_first)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="gpt2,llama",
                        help="comma-separated: gpt2, llama (default: both)")
    parser.add_argument("--hidden", default="128,256,512,768",
                        help="comma-separated hidden sizes (default: 128,256,512,768)")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--vocab", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--precision", choices=("f32", "bf16"), default="f32",
                        help="bf16: loomc --precision bf16 against PyTorch under CPU "
                             "bf16 autocast (both on AMX tiles where the CPU has them)")
    parser.add_argument("--no-compile", action="store_true",
                        help="leave out torch.compile (its compilation takes a while)")
    parser.add_argument("--gemm-strides-peer", action="store_true",
                        help="also time Loom's program with --gemm-strides direct (no "
                             "critical-stride copies) and print the ratio")
    parser.add_argument("--profile", action="store_true",
                        help="also print the time each side spends in GEMMs and its "
                             "share of that side's profiled step (Loom: the gemm spans "
                             "of train --trace; eager: torch.profiler's self time of "
                             "aten::mm/addmm/bmm/baddbmm, after a warm-up step; the "
                             "profiler slows PyTorch's step more than --trace Loom's)")
    args = parser.parse_args()
    kinds = [k for k in args.models.split(",") if k]
    for k in kinds:
        if k not in MODELS:
            parser.error(f"unknown model {k!r} (known: {', '.join(MODELS)})")
    agree = True
    for kind in kinds:
        for hidden in (int(h) for h in args.hidden.split(",") if h):
            agree &= bench_one(args, kind, hidden, args.threads)
    if not agree:
        sys.exit("error: the first losses differ")


if __name__ == "__main__":
    main()
