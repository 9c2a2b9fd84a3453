#!/usr/bin/env python3
"""The GPU check of the CUDA backend, in two halves (not part of make test).

  utils/device_check.py prepare [OUT]   here, where Loom is built
                                        (make device-check-prepare)
  utils/device_check.py run [OUT]       on a machine with an NVIDIA GPU
                                        (OUT default: .devicecheck)

`prepare` builds everything the GPU machine cannot (it has nvcc, PyTorch,
cuBLAS and NCCL in its Python environment, but no LLVM/MLIR and no MPI):

* the test models of test/python/models (MLP, GPT, LLaMA-style) compiled by
  `loomc --target cuda` (nvcc, cuBLAS, NCCL) in f32 and, for GPT and LLaMA,
  with `--precision bf16`; their data; the losses of the CPU programs of
  the same models (f32 and bf16) trained here, and PyTorch's own
  autocast-vs-f32 loss gap (the bf16 tolerance of test_mixed_precision.py);
* a bench model (GPT-style, --bench-hidden etc.) compiled for CUDA in f32
  and bf16, without its weights: `run` makes them on the GPU machine from
  the same seeded PyTorch model (loom.from_torch keeps its parameter names);
* Open MPI's libraries and plugins that the programs load (a single rank
  starts as an isolated singleton: no mpirun there).

`run` trains each program on the GPU and checks its losses against the CPU
program's (f32: relative 1e-4; bf16: within twice PyTorch's autocast gap of
the CPU f32 losses), then times the bench programs ((2N - N steps) / N, so
start-up and uploads are left out) against PyTorch eager on the same GPU,
f32 and bf16 autocast, with the ratios. It prints one line per check and a
summary, writes results.json (to $OUT too, when set), and exits 1 when a
check fails, 2 when there is no GPU.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STEPS = 6
CASES = [("mlp_example", "f32"), ("gpt_example", "f32"), ("gpt_example", "bf16"),
         ("llama_example", "f32"), ("llama_example", "bf16")]
CLASSES = {"mlp_example": 10, "gpt_example": 50, "llama_example": 50}
OPTIONS = dict(optimizer="adamw", lr=1e-3, weight_decay=0.01)
# What the programs load beyond what a CUDA + PyTorch machine has: Open MPI
# and its dependencies, and the small system libraries a minimal image may
# lack (the GPU machine's glibc is newer than this one's, so they load).
CARRIED_LIBS = ("libmpi.so", "libopen-rte.so", "libopen-pal.so", "libhwloc.so",
                "libevent_core", "libevent_pthreads", "libudev.so", "libz.so",
                "libgomp.so")


def gap(a, b):
    return max(abs(x - y) / abs(y) for x, y in zip(a, b))


# ---------------------------------------------------------------------------
# prepare (here)
# ---------------------------------------------------------------------------

def copy_mpi(program, out):
    """The CARRIED_LIBS `program` loads, and Open MPI's plugins."""
    lib = out / "lib"
    lib.mkdir(parents=True, exist_ok=True)
    ldd = subprocess.run(["ldd", str(program)], capture_output=True, text=True,
                         check=True).stdout
    for line in ldd.splitlines():
        parts = line.split("=>")
        if len(parts) == 2 and any(parts[0].strip().startswith(m)
                                   for m in CARRIED_LIBS):
            path = parts[1].split("(")[0].strip()
            shutil.copy2(os.path.realpath(path), lib / parts[0].strip())
    info = subprocess.run(["ompi_info", "--path", "pkglibdir", "--parsable"],
                          capture_output=True, text=True).stdout
    plugins = next((line.split(":", 2)[-1] for line in info.splitlines()
                    if "pkglibdir" in line), "")
    if not plugins or not Path(plugins).is_dir():
        raise SystemExit(f"device_check: Open MPI's plugin directory not found ({info!r})")
    shutil.copytree(plugins, out / "mpi-plugins", dirs_exist_ok=True)


def prepare(out, args):
    sys.path.insert(0, str(ROOT / "test" / "python"))
    sys.path.insert(0, str(ROOT / "python"))
    import numpy as np
    import torch
    import loom
    from test_training import import_example, make_data, write_data
    from test_mixed_precision import gap as loss_gap, torch_losses

    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    work = out / ".work"
    manifest = {"steps": STEPS, "cases": [], "bench": []}
    imported = {}
    for example, precision in CASES:
        name = f"{example}-{precision}"
        print(f"device_check: preparing {name}", flush=True)
        if example not in imported:
            model, ex_args, names, m = import_example(example, work, workdir=example)
            data = make_data(names, ex_args, 3, CLASSES[example], seed=7)
            batch = ex_args[0].shape[0]
            f32 = torch_losses(model, names, data, batch, STEPS, bf16=False)
            bf16 = torch_losses(model, names, data, batch, STEPS, bf16=True)
            data_dir = write_data(work / example / "data", data)
            cpu32 = m.compile(outdir=work / example / "cpu-f32", **OPTIONS).train(
                data_dir, STEPS)
            imported[example] = (m, data_dir, cpu32, loss_gap(bf16, f32))
        m, data_dir, cpu32, torch_gap = imported[example]
        cpu = cpu32 if precision == "f32" else m.compile(
            outdir=work / example / "cpu-bf16", precision="bf16", **OPTIONS).train(
                data_dir, STEPS)
        built = work / name
        m.compile(outdir=built, target="cuda", precision=precision, **OPTIONS)
        case = out / "cases" / name
        case.mkdir(parents=True)
        shutil.copy2(built / "train", case / "train")
        shutil.copy2(built / "weights.safetensors", case / "weights.safetensors")
        shutil.copytree(data_dir, case / "data")
        manifest["cases"].append({"name": name, "precision": precision,
                                  "cpu_losses": list(map(float, cpu)),
                                  "cpu_f32_losses": list(map(float, cpu32)),
                                  "torch_bf16_gap": float(torch_gap)})
    copy_mpi(out / "cases" / f"{CASES[0][0]}-{CASES[0][1]}" / "train", out)

    from models.torch_models import GPT
    h = args.bench_hidden
    config = dict(vocab=args.bench_vocab, seq=args.bench_seq, hidden=h,
                  heads=args.bench_heads, layers=args.bench_layers)
    torch.manual_seed(0)
    model = GPT(**config)
    rng = np.random.default_rng(0)
    rows = 4 * args.bench_batch
    ids = rng.integers(0, args.bench_vocab, (rows, args.bench_seq)).astype(np.int64)
    labels = rng.integers(0, args.bench_vocab, (rows, args.bench_seq)).astype(np.int64)
    example = (torch.from_numpy(ids[:args.bench_batch]),
               torch.from_numpy(labels[:args.bench_batch]))
    m = loom.from_torch(model, example, input_names=["ids", "labels"],
                        workdir=work / "bench-import")
    data_dir = write_data(out / "bench-data", {"ids": ids, "labels": labels})
    for precision in ("f32", "bf16"):
        print(f"device_check: preparing bench-{precision} (GPT {config})", flush=True)
        built = work / f"bench-{precision}"
        m.compile(outdir=built, target="cuda", precision=precision, **OPTIONS)
        bench = out / "bench" / precision
        bench.mkdir(parents=True)
        shutil.copy2(built / "train", bench / "train")
    from safetensors.numpy import load_file
    shapes = {k: list(v.shape) for k, v in load_file(
        str(work / "bench-f32" / "weights.safetensors")).items()}
    # `run` makes the weights from the same seeded model: the program's
    # parameters must be its state_dict's tensors, by name and shape.
    state = {k: list(v.shape) for k, v in model.state_dict().items()}
    missing = {k: v for k, v in shapes.items() if state.get(k) != v}
    if missing:
        raise SystemExit(f"device_check: the bench program's parameters are not the "
                         f"model's state_dict entries: {missing}")
    manifest["bench"] = {"config": config, "batch": args.bench_batch,
                         "weights": shapes, "data": str(data_dir.relative_to(out))}
    shutil.rmtree(work)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    where = os.path.relpath(out, ROOT) if out.is_relative_to(ROOT) else out
    print(f"device_check: {where} ready ({size / 2**20:.1f} MiB); on the GPU machine, "
          f"in the repository's root: python3 utils/device_check.py run {where}")


# ---------------------------------------------------------------------------
# run (on the GPU machine)
# ---------------------------------------------------------------------------

def library_dirs():
    """Where this machine's Python environment keeps cuBLAS and NCCL."""
    dirs = []
    try:
        import nvidia
        for base in nvidia.__path__:
            for lib in ("libcublas.so.13", "libcublasLt.so.13", "libnccl.so.2",
                        "libcudart.so.13"):
                for found in Path(base).rglob(lib):
                    if str(found.parent) not in dirs:
                        dirs.append(str(found.parent))
    except ImportError:
        pass
    return dirs


def environment(out):
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = ":".join([str(out / "lib"), *library_dirs(),
                                       env.get("LD_LIBRARY_PATH", "")])
    env["OMPI_MCA_mca_base_component_path"] = str(out / "mpi-plugins")
    env["OMPI_MCA_ess_singleton_isolated"] = "1"
    env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    env["OMPI_MCA_btl"] = "self"
    return env


def train(program, data, steps, env, log, weights=None):
    command = [str(program), "--data", str(data), "--steps", str(steps),
               "--log", str(log), "--quiet"]
    if weights:
        command += ["--weights", str(weights)]
    start = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, env=env,
                          timeout=600)
    seconds = time.perf_counter() - start
    losses = []
    if proc.returncode == 0:
        losses = [float(line.split(",")[1]) for line in
                  log.read_text().splitlines()[1:]]
    return proc, losses, seconds


TORCH_BENCH = """
import json, sys, time
sys.path.insert(0, {tests!r})
import numpy as np, torch
from models.torch_models import GPT
torch.manual_seed(0)
model = GPT(**{config!r})
ids = torch.from_numpy(np.load({ids!r})); labels = torch.from_numpy(np.load({labels!r}))
B = {batch}
if {save!r}:
    from safetensors.torch import save_file
    state = model.state_dict()
    save_file({{k: state[k].contiguous() for k in {keys!r}}}, {save!r})
model = model.cuda()
ids, labels = ids.cuda(), labels.cuda()
out = {{}}
for precision in ("f32", "bf16"):
    torch.manual_seed(0)
    m = GPT(**{config!r}).cuda()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3, weight_decay=0.01)
    def step(s):
        rows = [(s * B + i) % len(ids) for i in range(B)]
        opt.zero_grad()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "bf16"):
            loss = m(ids[rows], labels[rows])
        loss.float().backward(); opt.step()
        return loss
    first = float(step(0))
    for s in range(1, 5): step(s)
    torch.cuda.synchronize()
    t = time.perf_counter()
    for s in range({steps}): step(s)
    torch.cuda.synchronize()
    out[precision] = {{"ms": (time.perf_counter() - t) / {steps} * 1e3, "first_loss": first}}
print(json.dumps(out))
"""


def missing_libraries(program, env):
    """The shared libraries `program` cannot load here (ldd's 'not found'
    lines), for the first failure's report."""
    ldd = subprocess.run(["ldd", str(program)], capture_output=True, text=True, env=env)
    return [line.strip() for line in ldd.stdout.splitlines() if "not found" in line]


def run(out, args):
    manifest = json.loads((out / "manifest.json").read_text())
    smi = shutil.which("nvidia-smi")
    gpu = subprocess.run([smi, "-L"], capture_output=True, text=True).stdout.strip() \
        if smi else ""
    print(f"device_check: GPU: {gpu or 'none'}")
    env = environment(out)
    results = {"gpu": gpu, "cases": [], "bench": {}}
    failed = False
    for case in manifest["cases"]:
        d = out / "cases" / case["name"]
        proc, losses, _ = train(d / "train", d / "data", manifest["steps"], env,
                                d / "losses.csv", d / "weights.safetensors")
        if proc.returncode != 0:
            if "no CUDA device found" in proc.stderr:
                print("device_check: no CUDA device here; nothing to check")
                sys.exit(2)
            ok, detail = False, proc.stderr.strip()[-400:]
            missing = missing_libraries(d / "train", env)
            if missing:
                detail += f" | libraries not found: {missing}; LD_LIBRARY_PATH=" \
                          f"{env['LD_LIBRARY_PATH']}"
        elif case["precision"] == "f32":
            g = gap(losses, case["cpu_losses"])
            ok, detail = g <= 1e-4, f"max relative difference to the CPU {g:.2e} (<= 1e-4)"
        else:
            g = gap(losses, case["cpu_f32_losses"])
            bound = 2 * case["torch_bf16_gap"]
            ok = 0 < g <= bound
            detail = (f"gap to the CPU f32 losses {g:.2e} (PyTorch's autocast gap x2 = "
                      f"{bound:.2e}); to the CPU bf16 {gap(losses, case['cpu_losses']):.2e}")
        failed |= not ok
        print(f"device_check: {'PASS' if ok else 'FAIL'} {case['name']}: {detail}")
        results["cases"].append({"name": case["name"], "ok": ok, "losses": losses,
                                 "detail": detail})

    bench = manifest["bench"]
    weights = out / "bench" / "weights.safetensors"
    tests = str(Path(__file__).resolve().parents[1] / "test" / "python")
    data = out / bench["data"]
    script = TORCH_BENCH.format(tests=tests, config=bench["config"], batch=bench["batch"],
                                keys=sorted(bench["weights"]),
                                ids=str(data / "ids.npy"), labels=str(data / "labels.npy"),
                                save=str(weights), steps=args.steps)
    torch_run = subprocess.run([sys.executable, "-c", script], capture_output=True,
                               text=True, timeout=600)
    if torch_run.returncode != 0:
        print(f"device_check: FAIL PyTorch bench: {torch_run.stderr[-400:]}")
        sys.exit(1)
    reference = json.loads(torch_run.stdout.strip().splitlines()[-1])
    print(f"device_check: bench GPT {bench['config']}, batch {bench['batch']}, AdamW")
    for precision in ("f32", "bf16"):
        program = out / "bench" / precision / "train"
        times, first = [], None
        for steps in (args.steps, 2 * args.steps):
            proc, losses, seconds = train(program, data, steps, env,
                                          out / "bench" / precision / "losses.csv", weights)
            if proc.returncode != 0:
                print(f"device_check: FAIL bench {precision}: {proc.stderr[-400:]}")
                failed = True
                break
            times.append(seconds)
            first = losses[0]
        if len(times) != 2:
            continue
        loom_ms = (times[1] - times[0]) / args.steps * 1e3
        torch_ms = reference[precision]["ms"]
        results["bench"][precision] = {"loom_ms": loom_ms, "torch_eager_ms": torch_ms,
                                       "loom_first_loss": first,
                                       "torch_first_loss": reference[precision]["first_loss"]}
        print(f"device_check: bench {precision}: Loom {loom_ms:.2f} ms/step, PyTorch eager "
              f"{torch_ms:.2f} ms/step ({torch_ms / loom_ms:.2f}x); first loss Loom "
              f"{first:.5f}, PyTorch {reference[precision]['first_loss']:.5f}")
    text = json.dumps(results, indent=1)
    (out / "results.json").write_text(text)
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "device_check_results.json").write_text(text)
    print(f"device_check: {'FAILED' if failed else 'all checks passed'}")
    sys.exit(1 if failed else 0)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["prepare", "run"])
    parser.add_argument("out", nargs="?", default=str(ROOT / ".devicecheck"))
    parser.add_argument("--bench-hidden", type=int, default=768)
    parser.add_argument("--bench-layers", type=int, default=4)
    parser.add_argument("--bench-heads", type=int, default=12)
    parser.add_argument("--bench-seq", type=int, default=512)
    parser.add_argument("--bench-vocab", type=int, default=8192)
    parser.add_argument("--bench-batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=20,
                        help="run: timed steps of each bench measurement")
    args = parser.parse_args()
    out = Path(args.out).resolve()
    if args.command == "prepare":
        prepare(out, args)
    else:
        run(out, args)


if __name__ == "__main__":
    main()
